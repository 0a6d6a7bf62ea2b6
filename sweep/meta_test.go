package sweep

import (
	"os"
	"path/filepath"
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
	write("config.json", cfg)
	if again := metaOf(src, sp); !again.Equal(before) {
		t.Errorf("config.json restored: meta %s, was %s", again.Scenario, before.Scenario)
	}
	write("cal.yaml", []byte(strings.Replace(string(cal), "fixed_cost_us: -2.1", "fixed_cost_us: -1.1", 1)))
	if recal := metaOf(src, sp); recal.Equal(before) {
		t.Errorf("calibration's fixed cost -2.1 → -1.1 µs: meta unchanged")
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
