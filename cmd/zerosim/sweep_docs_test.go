package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
)

// binaryDigest is sweep.Build.Binary in a meta line.
var binaryDigest = regexp.MustCompile(`"binary_sha256":"[0-9a-f]{64}"`)

// TestSweepsDoc runs every ```console block of docs/sweeps.md ("$ zerosim
// …" then its stdout) and compares the output, so the page cannot drift
// from the code.
func TestSweepsDoc(t *testing.T) {
	data, err := os.ReadFile("../../docs/sweeps.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(data), "```console\n")[1:]
	if len(blocks) < 3 {
		t.Fatalf("%d console blocks, want the compare, sweep and fit examples", len(blocks))
	}
	for _, b := range blocks {
		b = b[:strings.Index(b, "```")]
		cmdLine, want, _ := strings.Cut(b, "\n")
		args := strings.Fields(strings.TrimPrefix(cmdLine, "$ zerosim "))
		out, errOut, code := sweepCLI(t, args...)
		if code != 0 {
			t.Errorf("%s: exit %d: %s", cmdLine, code, errOut)
			continue
		}
		// A development build's meta line carries its executable's
		// digest, which every build changes: the page shows it as "…".
		out = binaryDigest.ReplaceAllString(out, `"binary_sha256":"…"`)
		// The page shows a terminal's view, as TestREADMEExamples reads
		// it: the load's warnings on stderr come before the report
		// (fit seed002-7b's bare parameter count, qauser s28 H1).
		out = errOut + out
		if out != want {
			t.Errorf("%s: output differs from docs/sweeps.md:\n%s", cmdLine, out)
		}
	}
}

// TestFitDocFigures holds the figures docs/sweeps.md's fit section quotes
// in decimal GB, seed 002's unit, equal to what zerosim fit seed002-7b
// prints as exact bytes (--format json): ZeRO-3's at-rest bytes under
// --convention seed002 and its peak, and no ZeRO's at-rest bytes and peak.
func TestFitDocFigures(t *testing.T) {
	type row struct {
		Stage, K     int
		Peak, AtRest int64
		Fits         bool
	}
	rows := func(args ...string) map[int]row {
		out, errOut, code := sweepCLI(t, append([]string{"fit", "seed002-7b", "--format", "json"}, args...)...)
		if code != 0 {
			t.Fatalf("zerosim fit seed002-7b --format json %s: exit %d: %s", strings.Join(args, " "), code, errOut)
		}
		var rep struct {
			Rows []struct {
				Stage, K int
				Peak     int64 `json:"peak_bytes"`
				AtRest   int64 `json:"at_rest_bytes"`
				Fits     bool
			}
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		m := map[int]row{} // K=1 row of each stage
		for _, r := range rep.Rows {
			if r.K == 1 {
				m[r.Stage] = row{r.Stage, r.K, r.Peak, r.AtRest, r.Fits}
			}
		}
		return m
	}
	// gb is bytes in decimal GB to 0.1 GB, trailing zeros dropped, as the
	// page writes them.
	gb := func(b int64) string {
		return strconv.FormatFloat(math.Round(float64(b)/1e8)/10, 'f', -1, 64)
	}
	z, seed := rows(), rows("--convention", "seed002")
	if !z[3].Fits || z[0].Fits {
		t.Fatalf("fit seed002-7b: ZeRO-3 fits %v, no ZeRO fits %v; the page says yes and no", z[3].Fits, z[0].Fits)
	}
	want := fmt.Sprintf("ZeRO-3 fits (seed 002: %s GB at rest, `--convention seed002`; zerosim's peak with the gathered units and gradients in flight: %s GB), no ZeRO does not (%s GB at rest, %s GB peak)",
		gb(seed[3].AtRest), gb(z[3].Peak), gb(z[0].AtRest), gb(z[0].Peak))
	golden.CheckQuotes(t, "../../docs/sweeps.md", "zerosim fit seed002-7b --format json [--convention seed002], in decimal GB", want)
}

// TestSlowLinkProse holds the figures README.md and docs/sweeps.md repeat
// in prose after their zerosim compare seed000-k4 --vary parallelism.k=1,4
// examples equal to that compare's slow-link table (--format json): the
// seed's logical −62.5 %, the flat ring's 1.75·S at K=1, K=4's saving, and
// the 0.75·S of K=4 and of a hierarchical K=1.
func TestSlowLinkProse(t *testing.T) {
	args := []string{"compare", "seed000-k4", "--vary", "parallelism.k=1,4", "--format", "json"}
	out, errOut, code := sweepCLI(t, args...)
	if code != 0 {
		t.Fatalf("zerosim %s: exit %d: %s", strings.Join(args, " "), code, errOut)
	}
	var rep struct {
		SlowLink struct {
			Rows []struct {
				K         int
				Algorithm string
				SeedDelta *float64 `json:"seed_delta_pct"`
				BusiestS  float64  `json:"network_busiest_x_S"`
				NetDelta  *float64 `json:"network_delta_pct"`
				SeedS     float64  `json:"seed_x_S"`
				Total     int64    `json:"network_total_bytes"`
			}
			S int64 `json:"s_bytes"`
		} `json:"slow_link"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	type key struct {
		k    int
		algo string
	}
	rows := map[key]int{}
	for i, r := range rep.SlowLink.Rows {
		rows[key{r.K, r.Algorithm}] = i
	}
	// s writes a multiple of S as the pages do.
	s := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) + "·S" }
	row := func(k int, algo string) int {
		i, ok := rows[key{k, algo}]
		if !ok {
			t.Fatalf("zerosim %s: no slow-link row for K=%d %s", strings.Join(args, " "), k, algo)
		}
		return i
	}
	get := func(k int, algo string) (busiest string, seedDelta, netDelta float64) {
		r := rep.SlowLink.Rows[row(k, algo)]
		if k != 1 && (r.SeedDelta == nil || r.NetDelta == nil) {
			t.Fatalf("K=%d %s: no deltas against K=1", k, algo)
		}
		if k != 1 {
			seedDelta, netDelta = *r.SeedDelta, *r.NetDelta
		}
		return s(r.BusiestS), seedDelta, netDelta
	}
	ring1, _, _ := get(1, "ring")
	hier1, _, _ := get(1, "hierarchical")
	ring4, seed4, net4 := get(4, "ring")
	auto1, _, _ := get(1, "auto")
	_, _, autoNet4 := get(4, "auto")
	// The pages write a minus sign (U+2212) and a saving as a positive %.
	pct := func(v float64) string { return strings.Replace(fmt.Sprintf("%.1f %%", v), "-", "−", 1) }
	from := "zerosim " + strings.Join(args, " ") + " (slow_link)"
	r1, r4 := rep.SlowLink.Rows[row(1, "ring")], rep.SlowLink.Rows[row(4, "ring")]
	golden.CheckQuotes(t, "../../README.md", from,
		fmt.Sprintf("| logical %s vs %s (%s); wire: busiest rank %s (flat ring K = 1) → %s, %s → %s in all |", s(r4.SeedS), s(r1.SeedS), pct(seed4), ring1, ring4,
			s(float64(r1.Total)/float64(rep.SlowLink.S)), s(float64(r4.Total)/float64(rep.SlowLink.S))),
		fmt.Sprintf("The seed's \"~2P vs ~6P/8, %s\" is the logical count; on the wire the busiest rank of a flat ring sends %s", pct(seed4), ring1),
		fmt.Sprintf("so K = 4 saves %s, and a hierarchical K = 1 already sends %s.", pct(-net4), hier1),
		fmt.Sprintf("puts %s on each NIC at K = 1, which K = 4 cuts by only %s:", auto1, pct(-autoNet4)))
	golden.CheckQuotes(t, "../../docs/sweeps.md", from,
		fmt.Sprintf("The seed's %s is the logical count. On the wire, the flat ring at K=1 puts 7/8·2S = %s on the", pct(seed4), ring1),
		fmt.Sprintf("and K=4 cuts that to %s (%s); but zerosim's two-level hierarchical collectives give K=1 the same %s", ring4, pct(net4), hier1),
		fmt.Sprintf("so at K=1 each NIC carries 7/8·S/2 per collective, %s for the reduce-scatter and the all-gather, and K=4 cuts that by %s", auto1, pct(-autoNet4)))
}

// TestReadmeSweepCount holds the number of points README's Performance
// section gives its timed sweep equal to what zerosim sweep --count says
// for the command the README shows (without -j and --out).
func TestReadmeSweepCount(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const start = "```sh\nzerosim sweep default -j 2 --out sweep.csv"
	_, block, ok := strings.Cut(string(data), start)
	if !ok {
		t.Fatalf("README.md has no %q block", start)
	}
	block, _, _ = strings.Cut(block, "```")
	args := []string{"sweep", "default", "--count"}
	args = append(args, strings.Fields(strings.ReplaceAll(block, "\\\n", " "))...)
	out, errOut, code := sweepCLI(t, args...)
	if code != 0 {
		t.Fatalf("zerosim %s: exit %d: %s", strings.Join(args, " "), code, errOut)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(out), 10, 64)
	if err != nil {
		t.Fatalf("zerosim sweep --count printed %q", out)
	}
	golden.CheckQuotes(t, "../../README.md", "zerosim "+strings.Join(args, " "),
		"A sweep of "+commas(n)+" points of the default scenario")
}

// commas writes n with thousands separators, as the docs do.
func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// TestCompareCSVSlowLinkColumns: compare's slow-link columns that count
// in multiples of S end in _x_S, never _s (zerosim's suffix for seconds;
// QA23 L1: seed_s read as seconds), and docs/sweeps.md names every
// slow-link column.
func TestCompareCSVSlowLinkColumns(t *testing.T) {
	args := []string{"compare", "seed000-k4", "--vary", "parallelism.k=1,4", "--format", "csv"}
	out, errOut, code := sweepCLI(t, args...)
	if code != 0 {
		t.Fatalf("zerosim %s: exit %d: %s", strings.Join(args, " "), code, errOut)
	}
	header, _, _ := strings.Cut(out, "\n")
	cols := strings.Split(header, ",")
	_, slow, ok := strings.Cut(header, ",k,")
	if !ok {
		t.Fatalf("no slow-link columns in %q", header)
	}
	doc, err := os.ReadFile("../../docs/sweeps.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cols {
		if strings.HasSuffix(c, "_s") {
			t.Errorf("column %q ends in _s (seconds) but is not in seconds", c)
		}
	}
	for _, want := range []string{"seed_x_S", "network_busiest_x_S"} {
		if !slices.Contains(cols, want) {
			t.Errorf("no column %q in %q", want, header)
		}
	}
	for _, c := range append([]string{"k"}, strings.Split(slow, ",")...) {
		if !strings.Contains(string(doc), "`"+c+"`") {
			t.Errorf("docs/sweeps.md does not name the slow-link column %q", c)
		}
	}
}
