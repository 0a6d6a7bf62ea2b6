package sweep

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestMetaCoversReadFiles: a sweep's meta names the scenario it replays,
// config.json and calibration file included, so resuming after either
// file changed is refused even though the scenario file's bytes did not
// change (QA9 #1: an 80-layer and a 40-layer row under one header). It is
// run's resolved digest of the same file and sets.
func TestMetaCoversReadFiles(t *testing.T) {
	dir := t.TempDir()
	cfg, err := os.ReadFile("../scenarios/testdata/hf/llama-2-7b/config.json")
	if err != nil {
		t.Fatal(err)
	}
	cal, err := os.ReadFile("../docs/examples/calibration-h100-ndr.yaml")
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("config.json", cfg)
	write("cal.yaml", cal)
	file := filepath.Join(dir, "s.yaml")
	data := []byte("version: 1\ncluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}\nparallelism: {dp: 16}\n" +
		"model: {hf_config: config.json, seq_len: 4096}\ncommunication: {calibration: cal.yaml}\n")
	write("s.yaml", data)
	src := Source{File: file, Data: data, Sets: []string{"parallelism.zero_stage=3"}}
	sp, err := NewSpace([]Grid{{Key: "parallelism.k", Values: []string{"1", "2"}}})
	if err != nil {
		t.Fatal(err)
	}
	before := metaOf(src, sp)
	s, err := src.Load()
	if err != nil {
		t.Fatal(err)
	}
	if d, err := scenarios.Digest(s); err != nil || d != before.Scenario {
		t.Fatalf("meta scenario %s, run's resolved digest %s (%v)", before.Scenario, d, err)
	}

	write("config.json", []byte(strings.Replace(string(cfg), `"num_hidden_layers": 32`, `"num_hidden_layers": 16`, 1)))
	edited := metaOf(src, sp)
	if edited.Equal(before) {
		t.Errorf("config.json 32 → 16 layers: meta unchanged (%s)", before.Scenario)
	}
	// QA11 #8: the refusal names the file that changed.
	if why := edited.differs(before); !strings.HasSuffix(why, ": config.json (model.hf_config) differs") {
		t.Errorf("config.json edited: %q, want it named", why)
	}
	write("config.json", cfg)
	if again := metaOf(src, sp); !again.Equal(before) {
		t.Errorf("config.json restored: meta %s, was %s", again.Scenario, before.Scenario)
	}
	write("cal.yaml", []byte(strings.Replace(string(cal), "fixed_cost_us: -2.1", "fixed_cost_us: -1.1", 1)))
	recal := metaOf(src, sp)
	if recal.Equal(before) {
		t.Errorf("calibration's fixed cost -2.1 → -1.1 µs: meta unchanged")
	}
	if why := recal.differs(before); !strings.HasSuffix(why, ": cal.yaml (communication.calibration) differs") {
		t.Errorf("cal.yaml edited: %q, want it named", why)
	}
	write("config.json", []byte(strings.Replace(string(cfg), `"num_hidden_layers": 32`, `"num_hidden_layers": 16`, 1)))
	if why := metaOf(src, sp).differs(before); !strings.HasSuffix(why, ": config.json (model.hf_config) and cal.yaml (communication.calibration) differ") {
		t.Errorf("both edited: %q, want both named", why)
	}
}

// TestMetaNamesNoFileItCannot: a scenario edit with the files it reads
// unchanged is said to be the scenario file's or zerosim's; a meta without
// files (written before zerosim recorded them) keeps the three causes; a
// meta round-trips its files through its line.
func TestMetaNamesNoFileItCannot(t *testing.T) {
	dir := t.TempDir()
	cfg, err := os.ReadFile("../scenarios/testdata/hf/llama-2-7b/config.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	data := "version: 1\ncluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}\nparallelism: {dp: 16, zero_stage: 3}\nmodel: {hf_config: config.json, seq_len: 4096}\n"
	src := Source{File: filepath.Join(dir, "s.yaml"), Data: []byte(data)}
	sp, err := NewSpace([]Grid{{Key: "parallelism.k", Values: []string{"1", "2"}}})
	if err != nil {
		t.Fatal(err)
	}
	before := metaOf(src, sp)
	sum := sha256.Sum256(cfg)
	if want := []scenarios.ReadFile{{Key: "model.hf_config", Path: "config.json", SHA256: hex.EncodeToString(sum[:])}}; !slices.Equal(before.Files, want) {
		t.Fatalf("files %+v, want %+v", before.Files, want)
	}
	line := strings.TrimSuffix(before.Line(CSV), "\n")
	back, _, ok := parseMeta([]byte(line))
	if !ok || !slices.Equal(back.Files, before.Files) {
		t.Fatalf("%s: read back %+v", line, back)
	}
	src.Data = []byte(strings.Replace(data, "seq_len: 4096", "seq_len: 2048", 1))
	after := metaOf(src, sp)
	if why := after.differs(before); !strings.HasSuffix(why, ": the scenario file or zerosim's presets and defaults differ (the files it reads do not)") {
		t.Errorf("seq_len edited: %q", why)
	}
	old := before
	old.Files = nil
	if why := after.differs(old); !strings.HasSuffix(why, ": the scenario file, a file it reads or zerosim's presets and defaults differ") {
		t.Errorf("meta without files: %q", why)
	}
	if !old.Equal(before) {
		t.Error("a meta without files is another sweep: resuming an output written before zerosim recorded them is refused")
	}
}

// TestCSVRatesKeepTheirDecimals: sweep's CSV writes tokens/s per GPU with
// 3 decimals, trailing zeros kept, as plan.csv and compare's CSV do, so
// the same configuration's rate is the same text in each (QA9 #9: sweep
// wrote 10747.83 where plan.csv wrote 10747.830).
func TestCSVRatesKeepTheirDecimals(t *testing.T) {
	var b strings.Builder
	enc := NewEncoder(&b, CSV, []string{"parallelism.k"})
	if err := enc.Write(Row{Index: 0, Values: []string{"1"}, TokensPerSecPerGPU: 10747.8300004, MFU: 0.4565}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), ",10747.830,0.45650,") {
		t.Errorf("row %q, want 10747.830 and 0.45650", b.String())
	}
}

// metaOf is the meta of the sweep of sp over src, its scenario resolved as
// the CLI resolves it (Resolve).
func metaOf(src Source, sp *Space) Meta { return NewMeta(src, sp, Resolve(src, sp)) }

// TestWhyScenarioFileOrder: two metas that read the same two files with
// the same bytes but in the other order do not say "the files it reads do
// not" differ: reading them in another order is a change the files
// themselves do not show (review s20 A F7, M44b). One changed digest
// names that file whatever the order.
func TestWhyScenarioFileOrder(t *testing.T) {
	cfg := scenarios.ReadFile{Key: "model.hf_config", Path: "config.json", SHA256: "aa"}
	ds := scenarios.ReadFile{Key: "deepspeed_config", Path: "ds.json", SHA256: "bb"}
	ds2 := ds
	ds2.SHA256 = "cc"
	for _, c := range []struct {
		name string
		a, b []scenarios.ReadFile
		want string
	}{
		{"same order", []scenarios.ReadFile{cfg, ds}, []scenarios.ReadFile{cfg, ds}, "the scenario file or zerosim's presets and defaults differ (the files it reads do not)"},
		{"swapped", []scenarios.ReadFile{cfg, ds}, []scenarios.ReadFile{ds, cfg}, "the scenario file, a file it reads or zerosim's presets and defaults differ"},
		{"swapped, one changed", []scenarios.ReadFile{cfg, ds}, []scenarios.ReadFile{ds2, cfg}, "ds.json (deepspeed_config) differs"},
	} {
		if got := (Meta{Files: c.a}).whyScenario(Meta{Files: c.b}); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestResumeFixNamesChangedFiles: the fix for a resume whose scenario's
// files changed names them as whyScenario does, "a, b and c", where it
// wrote "a and b and c" before they shared prose.And.
func TestResumeFixNamesChangedFiles(t *testing.T) {
	var was, now []scenarios.ReadFile
	for _, k := range []string{"model.hf_config", "deepspeed_config", "communication.calibration"} {
		f := scenarios.ReadFile{Key: k, Path: k + ".file", SHA256: "aa"}
		was = append(was, f)
		f.SHA256 = "bb"
		now = append(now, f)
	}
	const files = "model.hf_config.file (model.hf_config), deepspeed_config.file (deepspeed_config) and communication.calibration.file (communication.calibration)"
	m, o := Meta{Files: now, Sets: []string{}, Grids: []string{}}, Meta{Files: was, Sets: []string{}, Grids: []string{}}
	if got, want := m.resumeFix(o), "restore "+files+" as the output read it, or write to a new --out file"; got != want {
		t.Errorf("resumeFix:\n got %q\nwant %q", got, want)
	}
	if got, want := m.whyScenario(o), files+" differ"; got != want {
		t.Errorf("whyScenario:\n got %q\nwant %q", got, want)
	}
}

// TestBuildDiffers: which builds --resume and merge take for one. A
// clean revision or a release version names the code (Identified); a
// development build without VCS information or a modified work tree does
// not, and is told apart by its executable's digest; a build whose
// executable could not be read matches none, itself included; an output
// written before the build was recorded (nil) matches only another such.
func TestBuildDiffers(t *testing.T) {
	const rev, rev2 = "0123456789abcdef0123456789abcdef01234567", "fedcba9876543210fedcba9876543210fedcba98"
	binA, binB := strings.Repeat("a1", 32), strings.Repeat("b2", 32)
	dev := func(bin string) *Build { return &Build{Version: "devel", Binary: bin} }
	for _, tc := range []struct {
		name       string
		a, b       *Build
		identified bool // a's
		differ     bool
	}{
		{"one clean revision", &Build{Version: "devel", Revision: rev}, &Build{Version: "devel", Revision: rev}, true, false},
		{"two clean revisions", &Build{Version: "devel", Revision: rev}, &Build{Version: "devel", Revision: rev2}, true, true},
		{"one release", &Build{Version: "v0.9.0"}, &Build{Version: "v0.9.0"}, true, false},
		{"two releases", &Build{Version: "v0.9.0"}, &Build{Version: "v0.9.1"}, true, true},
		{"one development binary", dev(binA), dev(binA), false, false},
		{"two development binaries", dev(binA), dev(binB), false, true},
		{"one modified tree, one binary", &Build{Version: "devel", Revision: rev, Modified: true, Binary: binA}, &Build{Version: "devel", Revision: rev, Modified: true, Binary: binA}, false, false},
		{"one modified tree, two binaries", &Build{Version: "devel", Revision: rev, Modified: true, Binary: binA}, &Build{Version: "devel", Revision: rev, Modified: true, Binary: binB}, false, true},
		{"a development build before binaries were recorded", dev(""), dev(binA), false, true},
		{"unreadable executables", dev(BinaryUnknown), dev(BinaryUnknown), false, true},
		{"nothing recorded", nil, nil, false, false},
		{"nothing recorded and a release", nil, &Build{Version: "v0.9.0"}, false, true},
	} {
		if tc.a != nil && tc.a.Identified() != tc.identified {
			t.Errorf("%s: Identified() = %v, want %v", tc.name, tc.a.Identified(), tc.identified)
		}
		for _, ab := range [][2]*Build{{tc.a, tc.b}, {tc.b, tc.a}} {
			if got := (Meta{Zerosim: ab[0]}).BuildDiffers(Meta{Zerosim: ab[1]}); got != tc.differ {
				t.Errorf("%s: %v vs %v: BuildDiffers = %v, want %v", tc.name, ab[0], ab[1], got, tc.differ)
			}
		}
	}
}
