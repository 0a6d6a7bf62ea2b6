package scenarios

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const goodCalibration = `version: 1
hardware: {arch: Hopper, nvls: true, intra_gbytes_per_s: 450, nic_gbytes_per_s: 50, nics_per_node: 8, inter_latency_us: 0, intra_latency_us: 0}
params: {intra_efficiency: 0.9, inter_efficiency: 1, intra_hop_latency_us: 0.4, inter_hop_latency_us: 0.5, fixed_cost_us: -4}
curves:
  - {op: allreduce, ranks: 16, nodes: 2, sizes: [1048576, 2097152], times_us: [71.5, 76.2]}
`

// TestCalibrationKey: communication.calibration is read relative to the
// scenario file, and every bad file or value is one line naming the key.
func TestCalibrationKey(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	loadFile := func(path string) (*Scenario, error) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return Load(path, data, nil)
	}
	write("cal.yaml", goodCalibration)
	scen := filepath.Join(dir, "s.yaml")
	write("s.yaml", baseYAML+"communication:\n  calibration: cal.yaml\n")
	s, err := loadFile(scen)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Communication.CalibrationData
	if c == nil || c.Params.IntraEff != 0.9 || len(c.Curves) != 1 || c.Curves[0].TimesUS[1] != 76.2 {
		t.Fatalf("calibration %+v", c)
	}
	// Resolve on the loaded value keeps the data (no re-read from the cwd).
	if err := Resolve(s); err != nil {
		t.Fatalf("Resolve of a loaded scenario with a calibration: %v", err)
	}
	for _, tc := range []struct{ name, cal, want string }{
		{"missing file", "", "s.yaml:12:3: cannot read " + filepath.Join(dir, "nope.yaml") + " (the path is relative to the scenario file)"},
		{"version 2", strings.Replace(goodCalibration, "version: 1", "version: 2", 1), "bad.yaml:1:10: version: 2 is not supported (want version: 1)"},
		{"unknown key", goodCalibration + "extra: 1\n", `bad.yaml:6:1: unknown key "extra" (the top level takes version, hardware, params, curves, compute, memory)`},
		{"bad arch", strings.Replace(goodCalibration, "Hopper", "Pascal", 1), "hardware.arch: \"Pascal\": use Volta, Ampere, Hopper or Blackwell"},
		{"host cpu", strings.Replace(goodCalibration, "intra_latency_us: 0}", "intra_latency_us: 0, host_cpu: epyc}", 1), `hardware.host_cpu: "epyc": use intel, amd or arm`},
		{"nccl version", strings.Replace(goodCalibration, "intra_latency_us: 0}", "intra_latency_us: 0, nccl_version: 2.26.2}", 1), `hardware.nccl_version: "2.26.2": use one of 2.19, 2.20`},
		{"compute capability on Hopper", strings.Replace(goodCalibration, "intra_latency_us: 0}", "intra_latency_us: 0, compute_capability: 103}", 1), "hardware.compute_capability: 103: zerosim calibrate writes only 103 (B300, GB300) under arch Blackwell"},
		{"nccl version on amd", strings.Replace(strings.Replace(goodCalibration, "arch: Hopper, nvls: true", "gfx: gfx942, nvls: false", 1), "intra_latency_us: 0}", "intra_latency_us: 0, nccl_version: 2.26}", 1), `hardware.nccl_version: nccl_version sets NCCL's tuner, but this gfx942 cluster runs RCCL, whose releases zerosim does not model (one RCCL cost model): drop nccl_version`},
		{"buffsize too small", strings.Replace(goodCalibration, "intra_latency_us: 0}", "intra_latency_us: 0, nccl_buffsize: 100}", 1), "hardware.nccl_buffsize: 100 is out of range"},
		{"efficiency 0", strings.Replace(goodCalibration, "intra_efficiency: 0.9", "intra_efficiency: 0", 1), "params.intra_efficiency: 0 is out of range"},
		{"sizes decrease", strings.Replace(goodCalibration, "[1048576, 2097152]", "[2097152, 1048576]", 1), "curves[0].sizes[1]: sizes must be positive and increase"},
		{"times mismatch", strings.Replace(goodCalibration, "[71.5, 76.2]", "[71.5]", 1), "curves[0]: 2 sizes and 1 times_us"},
		{"gpus per thread negative", strings.Replace(goodCalibration, "times_us: [71.5, 76.2]}", "times_us: [71.5, 76.2], gpus_per_thread: -1}", 1), "curves[0].gpus_per_thread: -1: want 1 to ranks (16)"},
		{"gpus per thread above ranks", strings.Replace(goodCalibration, "times_us: [71.5, 76.2]}", "times_us: [71.5, 76.2], gpus_per_thread: 17}", 1), "curves[0].gpus_per_thread: 17"},
		{"min nics negative", strings.Replace(goodCalibration, "times_us: [71.5, 76.2]}", "times_us: [71.5, 76.2], min_nics: -1}", 1), "curves[0].min_nics: -1: want 1 to ranks per node (8)"},
		{"min nics above ranks per node", strings.Replace(goodCalibration, "times_us: [71.5, 76.2]}", "times_us: [71.5, 76.2], min_nics: 9}", 1), "curves[0].min_nics: 9: want 1 to ranks per node (8), or omit it"},
		{"ranks not a multiple", strings.Replace(goodCalibration, "nodes: 2", "nodes: 3", 1), "curves[0]: ranks 16 over nodes 3"},
		{"not yaml", "\x00\x01binary", "calibration"},
	} {
		file := "nope.yaml"
		if tc.name != "missing file" {
			file = "bad.yaml"
			write(file, tc.cal)
		}
		write("s.yaml", baseYAML+"communication:\n  calibration: "+file+"\n")
		_, err := loadFile(scen)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line containing %q", tc.name, err, tc.want)
		}
		// qa20 M6: an error about the calibration's content is placed in
		// it, at line:column, and names the scenario's key too.
		want := scen + ":12:3: "
		if tc.name != "missing file" && tc.name != "not yaml" {
			want = filepath.Join(dir, "bad.yaml") + ":"
			if err != nil && !strings.Contains(err.Error(), " (in the calibration that "+scen+":12:3 names; ") {
				t.Errorf("%s: error %v does not name the scenario's communication.calibration line", tc.name, err)
			}
		}
		if err != nil && !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: error %v does not start with %q", tc.name, err, want)
		}
	}
}

// FuzzParseCalibration: no input panics; what parses marshals and parses
// back the same.
func FuzzParseCalibration(f *testing.F) {
	f.Add([]byte(goodCalibration))
	f.Add([]byte("version: 1\n"))
	f.Add([]byte(computeCalibration))
	f.Add([]byte(memoryCalibration))
	f.Add([]byte(goodCalibration + strings.TrimPrefix(computeCalibration, "version: 1\n") + strings.TrimPrefix(memoryCalibration, "version: 1\n")))
	f.Add([]byte(strings.Replace(memoryCalibration, "reserved", "device", 1)))
	f.Add([]byte(strings.Replace(memoryCalibration, "0.1838", "10.5", 1)))
	f.Add([]byte(strings.Replace(memoryCalibration, "88476326298", "-1", 1)))
	f.Add([]byte("version: 1\nmemory: {allocator_overhead: .nan, method: reserved, measured_bytes: 1}\n"))
	f.Add([]byte("version: 1\nfoo: 1\nbar: 2\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseCalibration("f.yaml", data)
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "f.yaml") || strings.ContainsAny(msg, "\n\r") || strings.Contains(msg, "scenarios.") {
				t.Fatalf("error %q: want one line starting with the file, naming no Go type", msg)
			}
			return
		}
		out, err := MarshalCalibration(c)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseCalibration("g.yaml", out); err != nil {
			t.Fatalf("a parsed calibration does not parse back: %v\n%s", err, out)
		}
	})
}

const computeCalibration = `version: 1
compute: {compute_efficiency: 0.6123, method: step-time, measured_ms: 2840, scenario: s, gpu: A100-80GB, peak_tflops: 312}
`

// TestCalibrationCompute: a calibration file's compute part sets the
// efficiency of a scenario that sets neither training.compute_efficiency
// nor training.mfu, and says so; a scenario's own key wins, with a
// warning; a file holds a network part, a compute part or both.
func TestCalibrationCompute(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("compute.yaml", computeCalibration)
	write("both.yaml", goodCalibration+strings.TrimPrefix(computeCalibration, "version: 1\n"))
	write("network.yaml", goodCalibration)
	for _, tc := range []struct {
		name, file, extra string
		eff               float64
		from, warn        string
		network           bool
	}{
		{"compute only", "compute.yaml", "", 0.6123, "calibration compute.yaml (fitted to a 2.84s step of s)", "", false},
		{"both parts", "both.yaml", "", 0.6123, "calibration both.yaml (fitted to a 2.84s step of s)", "", true},
		{"network only", "network.yaml", "", DefaultComputeEfficiency, "", "", true},
		{"explicit key wins", "compute.yaml", "training:\n  compute_efficiency: 0.7\n", 0.7, "",
			"training.compute_efficiency 0.7 overrides the calibration's 0.6123 (remove the key to use the calibrated efficiency)", false},
		{"mfu wins", "compute.yaml", "training:\n  mfu: 0.4\n", 0, "", "training.mfu 0.4 overrides the calibration's compute_efficiency 0.6123", false},
		{"other GPU", "compute.yaml", "", 0.6123, "calibration compute.yaml (fitted to a 2.84s step of s)", "the compute efficiency was fitted on A100-80GB, this cluster runs H100-80GB", false},
	} {
		text := baseYAML + tc.extra + "communication:\n  calibration: " + tc.file + "\n"
		if tc.name == "other GPU" {
			text = strings.Replace(text, "A100-80GB", "H100-80GB", 1)
		}
		path := write("s.yaml", text)
		s, err := Load(path, []byte(text), nil)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if s.Training.ComputeEfficiency != tc.eff || s.Training.ComputeEfficiencyFrom != tc.from {
			t.Errorf("%s: efficiency %g from %q, want %g from %q", tc.name, s.Training.ComputeEfficiency, s.Training.ComputeEfficiencyFrom, tc.eff, tc.from)
		}
		if got := strings.Join(s.Warnings, "\n"); (tc.warn == "") != (got == "") || !strings.Contains(got, tc.warn) {
			t.Errorf("%s: warnings %q, want %q", tc.name, got, tc.warn)
		}
		if got := s.Communication.CalibrationData.HasNetwork(); got != tc.network {
			t.Errorf("%s: HasNetwork %v, want %v", tc.name, got, tc.network)
		}
		// Resolving the loaded value keeps the efficiency and where it came from.
		if err := Resolve(s); err != nil || s.Training.ComputeEfficiency != tc.eff || s.Training.ComputeEfficiencyFrom != tc.from {
			t.Errorf("%s: after Resolve: %v, %g from %q", tc.name, err, s.Training.ComputeEfficiency, s.Training.ComputeEfficiencyFrom)
		}
	}
	for _, tc := range []struct{ name, cal, want string }{
		{"empty", "version: 1\n", "neither a network part (hardware, params, curves) nor a compute or memory part"},
		{"efficiency 1.5", strings.Replace(computeCalibration, "0.6123", "1.5", 1), "compute.compute_efficiency: 1.5 is out of range"},
		{"method", strings.Replace(computeCalibration, "step-time", "guess", 1), `compute.method: "guess": use step-time or trace`},
		{"measured 0", strings.Replace(computeCalibration, "2840", "0", 1), "compute.measured_ms: 0 is out of range"},
	} {
		_, err := ParseCalibration("c.yaml", []byte(tc.cal))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "c.yaml:") {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

const traceCalibration = `version: 1
compute: {compute_efficiency: 0.6123, method: trace, measured_ms: 410, source: step.json, scenario: s, gpu: A100-80GB, peak_tflops: 312,
  attention_efficiency: 0.2512, attention_kernel: fa2, gemm_ms: 300, attention_ms: 60, other_ms: 50}
`

// TestCalibrationAttention: a trace calibration's attention efficiency
// applies like its compute efficiency: to a scenario without
// training.attention_efficiency; the scenario's own key wins with a
// warning; another attention kernel takes it with a warning.
func TestCalibrationAttention(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "trace.yaml"), []byte(traceCalibration), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, extra string
		att, gemm   float64
		warn        string
	}{
		{"from the file", "", 0.2512, 0.6123, ""},
		{"explicit key wins", "training:\n  attention_efficiency: 0.3\n", 0.3, 0.6123,
			"training.attention_efficiency 0.3 overrides the calibration's 0.2512 (remove the key to use the calibrated efficiency)"},
		{"same value, no warning", "training:\n  attention_efficiency: 0.2512\n", 0.2512, 0.6123, ""},
		{"GEMM key alone", "training:\n  compute_efficiency: 0.7\n", 0.2512, 0.7, "training.compute_efficiency 0.7 overrides the calibration's 0.6123"},
		{"other kernel", "training:\n  attention_kernel: triton\n", 0.2512, 0.6123,
			"the attention efficiency was fitted with attention_kernel fa2, this scenario runs triton: it may not carry over (calibrate with this kernel)"},
	} {
		text := baseYAML + tc.extra + "communication:\n  calibration: trace.yaml\n"
		path := filepath.Join(dir, "s.yaml")
		s, err := Load(path, []byte(text), nil)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if s.Training.AttentionEfficiency != tc.att || s.Training.ComputeEfficiency != tc.gemm {
			t.Errorf("%s: attention %g, GEMM %g; want %g, %g", tc.name, s.Training.AttentionEfficiency, s.Training.ComputeEfficiency, tc.att, tc.gemm)
		}
		if got := strings.Join(s.Warnings, "\n"); (tc.warn == "") != (got == "") || !strings.Contains(got, tc.warn) {
			t.Errorf("%s: warnings %q, want %q", tc.name, got, tc.warn)
		}
		if err := Resolve(s); err != nil || s.Training.AttentionEfficiency != tc.att {
			t.Errorf("%s: after Resolve: %v, attention %g", tc.name, err, s.Training.AttentionEfficiency)
		}
	}
	for _, tc := range []struct{ name, cal, want string }{
		{"attention 1.5", strings.Replace(traceCalibration, "0.2512", "1.5", 1), "compute.attention_efficiency: 1.5 is out of range"},
		{"gemm_ms -1", strings.Replace(traceCalibration, "gemm_ms: 300", "gemm_ms: -1", 1), "compute.gemm_ms: -1 is out of range"},
	} {
		_, err := ParseCalibration("c.yaml", []byte(tc.cal))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "c.yaml:") {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

const memoryCalibration = `version: 1
memory: {allocator_overhead: 0.1838, method: reserved, measured_bytes: 88476326298, scenario: s, gpu: H100-80GB}
`

// TestCalibrationMemory: a calibration file's memory part sets
// memory.allocator_overhead of a scenario that does not set it; the
// scenario's own key wins, with a warning unless it is the same value;
// the part shares a file with the others; bad values name their field.
func TestCalibrationMemory(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("memory.yaml", memoryCalibration)
	write("all.yaml", goodCalibration+strings.TrimPrefix(computeCalibration, "version: 1\n")+strings.TrimPrefix(memoryCalibration, "version: 1\n"))
	write("compute.yaml", computeCalibration)
	base, err := Load(filepath.Join(dir, "s.yaml"), []byte(baseYAML), nil)
	if err != nil {
		t.Fatal(err)
	}
	baseModel := &base.Model
	write("model.yaml", strings.Replace(memoryCalibration, "gpu: H100-80GB}", fmt.Sprintf("gpu: H100-80GB, model: %s, params: %d}", baseModel.Label(), baseModel.TotalParams()), 1))
	write("other.yaml", strings.Replace(memoryCalibration, "gpu: H100-80GB}", "gpu: H100-80GB, model: transformer (LlamaForCausalLM), params: 8030261248}", 1))
	// The same model named otherwise: a file naming an imported config's
	// class (as calibrating with --set model.hf_config does) read by a
	// scenario naming the preset, with the same parameters (zerosim's
	// llama2-7b preset and testdata/hf/llama-2-7b/config.json both have
	// 6,738,415,616): no warning, the name alone is no other model.
	write("renamed.yaml", strings.Replace(memoryCalibration, "gpu: H100-80GB}", fmt.Sprintf("gpu: H100-80GB, model: transformer (LlamaForCausalLM), params: %d}", baseModel.TotalParams()), 1))
	for _, tc := range []struct {
		name, file, extra string
		overhead, eff     float64
		warn, from        string
	}{
		{"memory only", "memory.yaml", "", 0.1838, DefaultComputeEfficiency, "", "calibration memory.yaml (fitted to a reserved peak of 82.40 GiB of s)"},
		{"every part", "all.yaml", "", 0.1838, 0.6123, "", "calibration all.yaml (fitted to a reserved peak of 82.40 GiB of s)"},
		// No memory part: the overhead stays unset (nil, written 0 here),
		// so that FSDP at stage 3 simulates its reserved peak.
		{"no memory part", "compute.yaml", "", 0, 0.6123, "", ""},
		{"explicit key wins", "memory.yaml", "memory:\n  allocator_overhead: 0.2\n", 0.2, DefaultComputeEfficiency,
			"memory.allocator_overhead 0.2 overrides the calibration's 0.1838 (remove the key to use the calibrated overhead)", ""},
		{"same value, no warning", "memory.yaml", "memory:\n  allocator_overhead: 0.1838\n", 0.1838, DefaultComputeEfficiency, "", ""},
		// A file that records the model it was fitted on names it, and
		// warns a scenario running another model (baseYAML's: its
		// TotalParams, which the "model" case's file records).
		{"fitted on this model", "model.yaml", "", 0.1838, DefaultComputeEfficiency, "",
			"calibration model.yaml (fitted to a reserved peak of 82.40 GiB of " + baseModel.Label() + ", " + commas(baseModel.TotalParams()) + " params, in scenario s)"},
		{"fitted on this model, named otherwise", "renamed.yaml", "", 0.1838, DefaultComputeEfficiency, "",
			"calibration renamed.yaml (fitted to a reserved peak of 82.40 GiB of transformer (LlamaForCausalLM), " + commas(baseModel.TotalParams()) + " params, in scenario s)"},
		{"fitted on another model", "other.yaml", "", 0.1838, DefaultComputeEfficiency,
			"the allocator overhead was fitted on transformer (LlamaForCausalLM), 8,030,261,248 params; this scenario runs " + baseModel.Label() + ", " + commas(baseModel.TotalParams()) + " params: it may not carry over (calibrate on this model)",
			"calibration other.yaml (fitted to a reserved peak of 82.40 GiB of transformer (LlamaForCausalLM), 8,030,261,248 params, in scenario s)"},
	} {
		text := baseYAML + tc.extra + "communication:\n  calibration: " + tc.file + "\n"
		s, err := Load(filepath.Join(dir, "s.yaml"), []byte(text), nil)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		overhead := func() float64 {
			if s.Memory.AllocatorOverhead == nil {
				return 0
			}
			if *s.Memory.AllocatorOverhead == 0 {
				return -1 // set to 0: not the unset case
			}
			return *s.Memory.AllocatorOverhead
		}
		if overhead() != tc.overhead || s.Training.ComputeEfficiency != tc.eff || s.Memory.AllocatorOverheadFrom != tc.from {
			t.Errorf("%s: allocator overhead %v from %q, efficiency %g; want %g from %q, %g", tc.name, s.Memory.AllocatorOverhead, s.Memory.AllocatorOverheadFrom, s.Training.ComputeEfficiency, tc.overhead, tc.from, tc.eff)
		}
		if got := strings.Join(s.Warnings, "\n"); (tc.warn == "") != (got == "") || !strings.Contains(got, tc.warn) {
			t.Errorf("%s: warnings %q, want %q", tc.name, got, tc.warn)
		}
		// Resolving the loaded value keeps the overhead and where it came from.
		if err := Resolve(s); err != nil || overhead() != tc.overhead || s.Memory.AllocatorOverheadFrom != tc.from {
			t.Errorf("%s: after Resolve: %v, %g from %q", tc.name, err, overhead(), s.Memory.AllocatorOverheadFrom)
		}
	}
	for _, tc := range []struct{ name, cal, want string }{
		{"overhead 10.5", strings.Replace(memoryCalibration, "0.1838", "10.5", 1), "memory.allocator_overhead: 10.5 is out of range (a fraction in [0, 10])"},
		{"overhead -0.1", strings.Replace(memoryCalibration, "0.1838", "-0.1", 1), "memory.allocator_overhead: -0.1 is out of range"},
		{"method", strings.Replace(memoryCalibration, "reserved", "allocated", 1), `memory.method: "allocated": use reserved or device`},
		{"measured 0", strings.Replace(memoryCalibration, "88476326298", "0", 1), "memory.measured_bytes: 0 is out of range"},
		{"unknown key", strings.Replace(memoryCalibration, "gpu: H100-80GB", "gpu: H100-80GB, pool: 1", 1), `c.yaml:2:114: unknown key "memory.pool" (memory takes allocator_overhead, method, measured_bytes, scenario, gpu, model, params, stack, fp8, expandable_segments)`},
		{"params -1", strings.Replace(memoryCalibration, "gpu: H100-80GB", "gpu: H100-80GB, params: -1", 1), "memory.params: -1 is out of range"},
	} {
		_, err := ParseCalibration("c.yaml", []byte(tc.cal))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "c.yaml:") {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestCalibrationDecodeErrors: yaml.v3's decoding errors come back as one
// line naming the file and line, without Go types; they were "unmarshal
// errors:\n  line 2: field foo not found in type scenarios.Calibration",
// two lines (found by FuzzCLI with zerosim collective --calibration).
func TestCalibrationDecodeErrors(t *testing.T) {
	for _, tc := range []struct{ data, want string }{
		{"version: 1\nfoo: 1\n", `c.yaml:2:1: unknown key "foo" (the top level takes version, hardware, params, curves, compute, memory) (a calibration file is written by zerosim calibrate)`},
		{"version: 1\nfoo: 1\nbar: 2\n", `c.yaml:2:1: unknown key "foo" (the top level takes version, hardware, params, curves, compute, memory) (and 1 more) (a calibration file is written by zerosim calibrate)`},
		{"# x\n\n  1024  256 float\n", `c.yaml:3: a str value of the wrong type (a calibration file is written by zerosim calibrate)`},
		{"version: 1\ncompute: {compute_efficiency: abc}\n", `c.yaml:2:31: compute.compute_efficiency: "abc" is not a number (a calibration file is written by zerosim calibrate)`},
		{"version: 1\ncompute:\n  compute_efficiency: 33.7%\n", `c.yaml:3:23: compute.compute_efficiency: "33.7%" is not a number (write the fraction, 0.337, not a percentage) (a calibration file is written by zerosim calibrate)`},
		{"version: 1\ncurves:\n  - {op: allreduce, ranks: 2, nodes: 1, sizes: [1, x], times_us: [1, 2]}\n", `c.yaml:3:52: curves[0].sizes[1]: "x" is not an integer (a calibration file is written by zerosim calibrate)`},
		{"version: 1\ncompute:\n  compute_efficiency: 2\n  method: trace\n  measured_ms: 1\n", `c.yaml:3:23: compute.compute_efficiency: 2 is out of range (a fraction of the peak in (0, 1])`},
		{"compute:\n  compute_efficiency: 0.3\n", `c.yaml:1:1: version is missing (add version: 1 as the first line)`},
		// A key left out is missing, not 0 or "" (final read R2).
		{"version: 1\ncompute:\n  method: trace\n  measured_ms: 1\n", `c.yaml:2:1: compute.compute_efficiency is missing (a fraction of the peak in (0, 1])`},
		{"version: 1\ncompute:\n  compute_efficiency: 0.5\n  measured_ms: 1\n", `c.yaml:2:1: compute.method is missing: use step-time or trace`},
		// What the fit ran with names a stack, recipe and kernel (final read R3).
		{"version: 1\ncompute:\n  compute_efficiency: 0.5\n  method: trace\n  measured_ms: 1\n  stack: 5\n", `c.yaml:6:10: compute.stack: "5" is not a stack (torchtitan, llm-foundry, fms-fsdp, deepspeed, megatron, none, or absent)`},
		{"version: 1\nmemory:\n  allocator_overhead: 0.1\n  method: reserved\n  measured_bytes: 1\n  fp8: bogus\n", `c.yaml:6:8: memory.fp8: "bogus" is not an fp8 recipe (training.fp8's: none, te, te_current, torchao, or absent)`},
		{"version: 1\ncompute:\n  compute_efficiency: 0.5\n  method: step-time\n  measured_ms: 1\n  attention_kernel: fa9\n", `c.yaml:6:21: compute.attention_kernel: "fa9" is not an attention kernel (training.attention_kernel's: fa2, fa1, fa3, cudnn, te, triton, flex, eager, or absent)`},
		// The head_dim the attention rate was fitted at (zero.CalibratedHeadDimScale).
		{"version: 1\ncompute:\n  compute_efficiency: 0.5\n  method: trace\n  measured_ms: 1\n  attention_efficiency: 0.3\n  head_dim: -64\n", `c.yaml:7:13: compute.head_dim: -64 is out of range (the head_dim of the model attention_efficiency was fitted on, > 0, or absent)`},
		{"version: 1\ncompute:\n\tcompute_efficiency: 0.3\n", `c.yaml:3:1: not valid YAML: a tab in the indentation (YAML indents with spaces only: replace the tab with spaces)`},
		{"version: [\n", `c.yaml:1:10: not valid YAML: did not find expected node content (fix the YAML syntax; a calibration file is written by zerosim calibrate)`},
		// A local tag whose %0C decodes to a control character (FuzzParseCalibration):
		// "cannot unmarshal !\f `` into scenarios.Calibration" named the Go type.
		{"!%0C", `c.yaml:1: a value of the wrong type (a calibration file is written by zerosim calibrate)`},
		{"version: !x 1\n", `c.yaml:1:10: version: 1 tagged !x: want an integer without a tag (a calibration file is written by zerosim calibrate)`},
	} {
		_, err := ParseCalibration("c.yaml", []byte(tc.data))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q: %v, want %q", tc.data, err, tc.want)
		}
	}
}

// TestCalParamNames: the table of the fitted parameters' names and keys
// follows CalParams' fields and their yaml tags, so renaming a key in one
// place cannot leave calibrate's text or JSON naming another (or "").
func TestCalParamNames(t *testing.T) {
	ty := reflect.TypeOf(CalParams{})
	if ty.NumField() != len(CalParamNames) {
		t.Fatalf("CalParams has %d fields, CalParamNames %d", ty.NumField(), len(CalParamNames))
	}
	names := map[string]bool{}
	for i, n := range CalParamNames {
		if tag := ty.Field(i).Tag.Get("yaml"); n.Key != tag || n.Name == "" || names[n.Name] {
			t.Errorf("CalParamNames[%d] = %+v; CalParams.%s's yaml key is %q (names must be set and distinct)", i, n, ty.Field(i).Name, tag)
		}
		names[n.Name] = true
	}
}

// TestCalibrationGFX: a calibration file's hardware.gfx is checked as
// cluster.gfx is (final read MED-2: "gfx: banana", gfx beside arch: Hopper
// and gfx beside nvls: true were read and described as fitted on them),
// at the key, while the AMD files written before (no arch, or arch: Ampere
// beside gfx) still read.
func TestCalibrationGFX(t *testing.T) {
	file := func(hw string) string {
		return "version: 1\nhardware:\n" + hw + "  intra_gbytes_per_s: 448\n  nic_gbytes_per_s: 50\n  nics_per_node: 8\n  inter_latency_us: 0\n  intra_latency_us: 0\n" +
			"params: {intra_efficiency: 1, inter_efficiency: 1, intra_hop_latency_us: 0, inter_hop_latency_us: 0, fixed_cost_us: 0}\n"
	}
	for _, c := range []struct{ hw, want string }{
		{"  nvls: false\n  gfx: gfx942\n", ""},
		{"  nvls: false\n  gfx: gfx950\n", ""},
		{"  arch: Ampere\n  nvls: false\n  gfx: gfx942\n", ""},
		{"  nvls: false\n  gfx: banana\n", `c.yaml:4:8: hardware.gfx: "banana" is not an AMD target zerosim models (use gfx942 for CDNA 3, MI300X-like, or gfx950 for CDNA 4, MI355X-like, or delete gfx for an NVIDIA GPU)`},
		{"  nvls: false\n  gfx: GFX942\n", `c.yaml:4:8: hardware.gfx: "GFX942" is not an AMD target zerosim models (use gfx942 for CDNA 3, MI300X-like, or gfx950 for CDNA 4, MI355X-like, or delete gfx for an NVIDIA GPU)`},
		{"  arch: Hopper\n  nvls: false\n  gfx: gfx950\n", `c.yaml:5:8: hardware.gfx: gfx950 beside arch: Hopper: gfx names an AMD GPU and arch an NVIDIA generation (delete arch for an AMD file, or gfx for an NVIDIA one)`},
		{"  nvls: true\n  gfx: gfx950\n", `c.yaml:3:9: hardware.nvls: true beside gfx: gfx950: RCCL has no NVLS (set nvls: false for an AMD file, or delete gfx for an NVIDIA one)`},
	} {
		cal, err := ParseCalibration("c.yaml", []byte(file(c.hw)))
		switch {
		case c.want == "" && (err != nil || cal.Hardware.GFX == ""):
			t.Errorf("%q: %v, want it read with its gfx", c.hw, err)
		case c.want != "" && (err == nil || err.Error() != c.want):
			t.Errorf("%q: %v, want %q", c.hw, err, c.want)
		}
	}
}
