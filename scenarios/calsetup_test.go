package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCalibrationSetup (qa20 M2): a compute or memory part records the
// stack, fp8 recipe, attention kernel (step-time) and segment mode it was
// fitted with, and a scenario that runs another is warned once per part,
// naming the keys; a file without the record (written before it) is
// loaded without a warning.
func TestCalibrationSetup(t *testing.T) {
	dir := t.TempDir()
	const cal = `version: 1
compute: {compute_efficiency: 0.5, method: step-time, measured_ms: 2840, scenario: s, gpu: A100-80GB, stack: none, fp8: none, attention_kernel: fa2, compile: none}
memory: {allocator_overhead: 0.1, method: reserved, measured_bytes: 88476326298, scenario: s, gpu: A100-80GB, stack: none, expandable_segments: true}
`
	old := strings.NewReplacer(", stack: none", "", ", fp8: none", "", ", attention_kernel: fa2", "", ", compile: none", "", ", expandable_segments: true", "").Replace(cal)
	for name, text := range map[string]string{"cal.yaml": cal, "old.yaml": old} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(dir, "s.yaml")
	warnings := func(calFile string, sets ...string) []string {
		t.Helper()
		s, err := Load(file, []byte(baseYAML+"communication:\n  calibration: "+calFile+"\n"), sets)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, w := range s.Warnings {
			if strings.Contains(w, "was fitted with") {
				got = append(got, strings.TrimPrefix(w, file+":12:3: "))
			}
		}
		return got
	}
	if w := warnings("cal.yaml", "memory.expandable_segments=true"); len(w) != 0 {
		t.Errorf("the fitted setup: warnings %q", w)
	}
	w := warnings("cal.yaml", "training.fp8=te", "cluster.gpu=H100-80GB", "training.attention_kernel=cudnn")
	want := "the compute efficiency was fitted with training.fp8 none, training.attention_kernel fa2; this scenario runs te, cudnn: GEMMs in another precision reach another fraction of the peak; the fitted step held that kernel's attention time, so it may not carry over (calibrate with this scenario's settings)"
	if len(w) != 2 || w[0] != want || !strings.HasPrefix(w[1], "the allocator overhead was fitted with memory.expandable_segments true; this scenario runs false: ") {
		t.Errorf("fp8, kernel and segments: warnings %q, want %q and the allocator's", w, want)
	}
	// qa31 M2: an efficiency fitted on an eager step, taken by a compiled
	// row.
	w = warnings("cal.yaml", "training.compile=blocks", "memory.expandable_segments=true")
	want = "the compute efficiency was fitted with training.compile none; this scenario runs blocks: the fitted efficiency holds the part of torch.compile's speed-up the model does not charge, so it may not carry over (calibrate with this scenario's settings)"
	if len(w) != 1 || w[0] != want {
		t.Errorf("compile: warnings %q, want %q", w, want)
	}
	w = warnings("cal.yaml", "stack=megatron", "memory.expandable_segments=true")
	if len(w) != 2 || !strings.HasPrefix(w[0], "the compute efficiency was fitted with stack none") || !strings.Contains(w[0], "this scenario runs megatron") ||
		!strings.HasPrefix(w[1], "the allocator overhead was fitted with stack none; this scenario runs megatron: its allocations differ") {
		t.Errorf("another stack: warnings %q", w)
	}
	if w := warnings("old.yaml", "training.fp8=te", "cluster.gpu=H100-80GB", "stack=megatron"); len(w) != 0 {
		t.Errorf("a file without the record: warnings %q", w)
	}
	// A part the scenario overrides is not warned of.
	if w := warnings("cal.yaml", "training.fp8=te", "cluster.gpu=H100-80GB", "training.compute_efficiency=0.4", "memory.allocator_overhead=0.1", "memory.expandable_segments=false"); len(w) != 0 {
		t.Errorf("overridden parts: warnings %q", w)
	}
}
