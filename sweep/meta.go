package sweep

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/zerosim/zerosim/scenarios"
)

// Meta identifies the sweep an output belongs to: the scenario it
// replays (scenarios.Digest), the --set overrides applied to every point
// and the grids. It is the first line of every output (CSV and JSON Lines), so
// --resume and merge refuse rows of another scenario, other --sets or other
// grids instead of mixing them into one file.
type Meta struct {
	// Zerosim is the build that wrote the rows: --resume and merge refuse
	// rows of another (BuildDiffers). Nil in an output written before
	// zerosim recorded it.
	Zerosim  *Build   `json:"zerosim,omitempty"`
	Scenario string   `json:"scenario_sha256"`
	Sets     []string `json:"sets"`
	Grids    []string `json:"grids"`
	// Files are the files the scenario read (scenarios.Scenario.ReadFiles)
	// with their SHA-256, so a refusal names the one that changed. They do
	// not decide whether two outputs are one sweep (Equal: Scenario
	// covers what they hold); a meta written before zerosim recorded them
	// has none, and a scenario that reads no file writes none (the line
	// is as before).
	Files []scenarios.ReadFile `json:"files,omitempty"`
}

// NewMeta describes the sweep of sp over src. Its scenario is
// scenarios.Digest of resolved, the scenario the sweep replays (Resolve:
// src resolved with its sets, run's "resolved: sha256" of the same file and
// sets, else its first point), which covers the config.json and
// calibration files it reads, not only its bytes; when resolved is nil
// (neither loads), the SHA-256 of src's bytes. The caller passes the
// scenario it already loaded, so the files are not read again. A grid over
// the files themselves (model.hf_config=a.json,b.json) has only the first
// point's in the digest.
func NewMeta(src Source, sp *Space, resolved *scenarios.Scenario) Meta {
	m := Meta{Scenario: sourceDigest(src, resolved), Sets: slices.Clone(src.Sets), Grids: []string{}}
	if resolved != nil {
		m.Files = slices.Clone(resolved.ReadFiles)
		for i := range m.Files {
			// Not in the line: a meta read back equals the one written.
			m.Files[i].Opened = ""
		}
	}
	if m.Sets == nil {
		m.Sets = []string{}
	}
	for _, g := range sp.Grids {
		m.Grids = append(m.Grids, g.Key+"="+strings.Join(g.Values, ","))
	}
	return m
}

// Resolve is the scenario NewMeta describes a sweep of sp over src by: src
// loaded by itself, else (a grid supplies what it lacks) its first point;
// nil when neither loads.
func Resolve(src Source, sp *Space) *scenarios.Scenario {
	s, err := src.Load()
	if err != nil && len(sp.Grids) > 0 {
		s, err = src.Load(sp.Point(0).Sets(sp)...)
	}
	if err != nil {
		return nil
	}
	return s
}

func sourceDigest(src Source, s *scenarios.Scenario) string {
	if s != nil {
		if d, err := scenarios.Digest(s); err == nil {
			return d
		}
	}
	sum := sha256.Sum256(src.Data)
	return hex.EncodeToString(sum[:])
}

// csvMetaPrefix starts the first line of a CSV output (a comment line, as
// pandas' read_csv(comment="#") and most CSV tools skip it); jsonMetaKey is
// the only key of the first line of a JSON Lines output.
const (
	csvMetaPrefix = "# zerosim sweep "
	jsonMetaKey   = "zerosim_sweep"
)

func (m Meta) json() []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(m) // a struct of strings always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// Line is the first line of an output in format f, newline included.
func (m Meta) Line(f Format) string {
	if f == JSONL {
		return `{"` + jsonMetaKey + `":` + string(m.json()) + "}\n"
	}
	return csvMetaPrefix + string(m.json()) + "\n"
}

// Prelude is what an output of the sweep starts with: the meta line and, for
// CSV, the column header.
func Prelude(f Format, m Meta, keys []string) string { return m.Line(f) + Header(f, keys) }

// IsOutput reports whether head, the start of a file, is the start of a
// sweep's output (its meta line), in either format: --out and merge --out
// replace only a file of their own kind.
func IsOutput(head []byte) bool {
	line, _, _ := bytes.Cut(head, []byte("\n"))
	_, _, ok := parseMeta(line)
	return ok
}

// OtherOutput says how out, the start of an existing sweep output, is not
// an output of the sweep whose output in starts: "is JSON Lines, the
// inputs are CSV", "is the output of another sweep (…)"; "" when it is
// one (merge --out replaces only a merge of the same sweep, QA25 L8).
func OtherOutput(out, in []byte) string {
	line := func(b []byte) []byte { l, _, _ := bytes.Cut(b, []byte("\n")); return bytes.TrimRight(l, "\r") }
	om, of, ok := parseMeta(line(out))
	im, inf, iok := parseMeta(line(in))
	switch {
	case !ok || !iok:
		return ""
	case of != inf:
		return fmt.Sprintf("is %s, the inputs are %s", of.Name(), inf.Name())
	case !om.Equal(im):
		return fmt.Sprintf("is the output of another sweep (%s)", im.differs(om))
	}
	return ""
}

// parseMeta reads the meta line of an output (without its newline).
func parseMeta(line []byte) (Meta, Format, bool) {
	var m Meta
	if rest, ok := bytes.CutPrefix(line, []byte(csvMetaPrefix)); ok {
		if json.Unmarshal(rest, &m) != nil || m.Scenario == "" {
			return Meta{}, CSV, false
		}
		return m, CSV, true
	}
	var v map[string]json.RawMessage
	if json.Unmarshal(line, &v) != nil || len(v) != 1 || v[jsonMetaKey] == nil {
		return Meta{}, JSONL, false
	}
	if json.Unmarshal(v[jsonMetaKey], &m) != nil || m.Scenario == "" {
		return Meta{}, JSONL, false
	}
	return m, JSONL, true
}

// Space rebuilds the sweep's grids from the meta line.
func (m Meta) Space() (*Space, error) {
	var gs []Grid
	for _, s := range m.Grids {
		g, err := ParseGrid(s)
		if err != nil {
			return nil, err
		}
		gs = append(gs, g)
	}
	return NewSpace(gs)
}

// Build is the zerosim build that wrote an output: reports.Build.s
// version, revision and modified flag (reports imports sweep, so
// reports.Build.Sweep converts one to the other), and Binary when those
// do not identify the code.
type Build struct {
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	// Binary is the hex SHA-256 of the zerosim executable, or
	// BinaryUnknown when it could not be read, for a build whose version
	// and revision do not say which code it is: a development build
	// without VCS information (version "devel" and no revision: go build
	// -buildvcs=false, go run outside a checkout, a source tarball),
	// whose meta lines were all alike, or one from a modified work tree
	// (two edits of one commit). Empty for a build they identify.
	Binary string `json:"binary_sha256,omitempty"`
}

// BinaryUnknown is Build.Binary of a build that needed its executable's
// digest but could not read it: no output of it matches another's
// (BuildDiffers), as nothing shows the code is the same.
const BinaryUnknown = "unknown"

// Identified reports whether version and revision name the code of a
// build: a revision from a clean work tree, or a version other than
// "devel" without a revision (go install module@version, -ldflags -X).
func (b Build) Identified() bool {
	if b.Revision != "" {
		return !b.Modified
	}
	return b.Version != "" && b.Version != "devel"
}

// String names the build in messages: "zerosim devel (binary
// 0123456789ab)", "zerosim v0.9.0 (git 0123456789ab, modified, binary
// …)"; nil is an output written before zerosim recorded its build.
func (b *Build) String() string {
	if b == nil {
		return "a zerosim that did not record its version"
	}
	var extra []string
	if b.Revision != "" {
		extra = append(extra, "git "+b.Revision[:min(len(b.Revision), 12)])
	}
	if b.Modified {
		extra = append(extra, "modified")
	}
	switch b.Binary {
	case "":
	case BinaryUnknown:
		extra = append(extra, "its executable unreadable")
	default:
		extra = append(extra, "binary "+b.Binary[:min(len(b.Binary), 12)])
	}
	if len(extra) == 0 {
		return "zerosim " + b.Version
	}
	return "zerosim " + b.Version + " (" + strings.Join(extra, ", ") + ")"
}

// BuildDiffers reports whether m and o were written by different zerosim
// builds, whose rows may differ for one point (QA25 M6): builds differ in
// any field, so two development builds differ when their executables do;
// one whose executable could not be read (BinaryUnknown) differs from
// every build, itself included.
func (m Meta) BuildDiffers(o Meta) bool {
	if m.Zerosim == nil || o.Zerosim == nil {
		return m.Zerosim != o.Zerosim
	}
	return *m.Zerosim != *o.Zerosim || m.Zerosim.Binary == BinaryUnknown
}

// trimpathHint is the fix of a refusal between two builds told apart by
// their executables' digests: binaries of one commit built in two
// checkouts differ by the paths go build embeds (with -buildvcs=false, or
// without .git), and are byte-identical when built with -trimpath.
const trimpathHint = "go build -trimpath makes one commit's binaries alike across checkouts"

// byDigest reports whether both m and o name their builds by the
// executable's digest, where trimpathHint applies.
func (m Meta) byDigest(o Meta) bool {
	digest := func(b *Build) bool { return b != nil && b.Binary != "" && b.Binary != BinaryUnknown }
	return digest(m.Zerosim) && digest(o.Zerosim)
}

// mergeBuildFix is the fix of merge's refusal of shards of two builds.
func (m Meta) mergeBuildFix(o Meta) string {
	if m.byDigest(o) {
		return "build zerosim with go build -trimpath, which makes one commit's binaries alike across checkouts, or run every shard with one binary"
	}
	return "run the shards again with one zerosim"
}

// resumeBuildFix is the fix of --resume's refusal of another build's file.
func (m Meta) resumeBuildFix(o Meta) string {
	if m.byDigest(o) {
		return "resume with that binary, or write to a new --out file; " + trimpathHint
	}
	return "resume with that zerosim, or write to a new --out file"
}

// Equal reports whether m and o describe the same sweep.
func (m Meta) Equal(o Meta) bool {
	return m.Scenario == o.Scenario && slices.Equal(m.Sets, o.Sets) && slices.Equal(m.Grids, o.Grids)
}

// whyScenario says what changed between o's scenario and m's: the files
// both read whose bytes differ, by name; the scenario file or zerosim when
// both read the same files unchanged; all three when a meta does not say
// (written before zerosim recorded the files, or one reads other files).
func (m Meta) whyScenario(o Meta) string {
	changed, same := m.changedFiles(o)
	switch {
	case len(changed) == 1:
		return changed[0] + " differs"
	case len(changed) > 1:
		return scenarios.ListAnd(changed) + " differ"
	case same:
		return "the scenario file or zerosim's presets and defaults differ (the files it reads do not)"
	}
	return "the scenario file, a file it reads or zerosim's presets and defaults differ"
}

// changedFiles are the files both m and o read whose bytes differ, as
// "path (key)", and same whether both read the same files in the same
// order.
func (m Meta) changedFiles(o Meta) (changed []string, same bool) {
	same = len(m.Files) == len(o.Files) && len(m.Files) > 0
	for i, f := range m.Files {
		j := slices.IndexFunc(o.Files, func(g scenarios.ReadFile) bool { return g.Key == f.Key && g.Path == f.Path })
		if j != i { // not read, or read in another order (j < 0 included)
			same = false
		}
		if j >= 0 && o.Files[j].SHA256 != f.SHA256 {
			changed = append(changed, fmt.Sprintf("%s (%s)", oneLine(f.Path), f.Key))
		}
	}
	return changed, same
}

// resumeFix is the fix for a resume of o's output by sweep m: the same
// --set and --grid flags when they differ; when only the scenario does,
// passing the same flags again cannot help (QA14 finding 10): restore the
// file that changed (by name when the meta says which), or write to a new
// --out file.
func (m Meta) resumeFix(o Meta) string {
	if !slices.Equal(m.Sets, o.Sets) || !slices.Equal(m.Grids, o.Grids) {
		return "resume with the same scenario, --set and --grid flags"
	}
	what := "the scenario file (or the zerosim version) the output was written with"
	if changed, _ := m.changedFiles(o); len(changed) > 0 {
		what = scenarios.ListAnd(changed) + " as the output read it"
	}
	return "restore " + what + ", or write to a new --out file"
}

// differs says how o differs from m, for messages.
func (m Meta) differs(o Meta) string {
	var d []string
	// Other --sets resolve to another scenario too: the sets say why.
	if m.Scenario != o.Scenario && slices.Equal(m.Sets, o.Sets) {
		d = append(d, fmt.Sprintf("scenario sha256 %.12s… vs %.12s…: %s", o.Scenario, m.Scenario, m.whyScenario(o)))
	}
	if !slices.Equal(m.Sets, o.Sets) {
		d = append(d, fmt.Sprintf("--set %q vs %q", o.Sets, m.Sets))
	}
	if !slices.Equal(m.Grids, o.Grids) {
		d = append(d, fmt.Sprintf("--grid %q vs %q", o.Grids, m.Grids))
	}
	return strings.Join(d, ", ")
}
