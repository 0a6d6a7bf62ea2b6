package scenarios

import (
	"reflect"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/units"
)

// TestExamples loads every embedded example and checks its key figures.
func TestExamples(t *testing.T) {
	type fig struct {
		n, stage, k int
		params      int64
		gpu         string
		inter       units.Bandwidth
		nics        string
		nicsPerNode int
	}
	want := map[string]fig{
		"default":             {16, 1, 1, 6_738_415_616, "H100-80GB", 50e9, "per_gpu", 8},
		"gpt3-175b-16k":       {16384, 3, 1, 174_604_259_328, "H100-80GB", 50e9, "per_gpu", 8},
		"llama2-13b-a100-eth": {32, 1, 1, 13_015_864_320, "A100-40GB", 12_500_000_000, "per_node", 1}, // Llama 2 13B: 13,015,864,320 in its HF checkpoint; 100 Gb/s
		"seed000-k4":          {8, 1, 4, 1_342_382_080, "A100-80GB", 25e9, "per_gpu", 2},
		"seed000-mlp":         {4, 1, 1, 1_342_382_080, "A100-80GB", 25e9, "per_gpu", 4},
		"seed001-azure":       {32, 1, 1, 1_315_723_264, "V100-16GB", 5e9, "per_node", 1},
		"seed001-dgx2h":       {128, 1, 1, 2_651_553_280, "V100-32GB", 12_500_000_000, "per_node", 8},
		"seed002-7b":          {8, 3, 1, 7_000_000_000, "RTX4090", 12_500_000_000, "per_gpu", 8},
		"seed002-tiny":        {2, 3, 1, 260, "A100-80GB", 25e9, "per_gpu", 2},
	}
	names := ExampleNames()
	if len(names) != len(want) {
		t.Errorf("ExampleNames() = %v, want the %d examples", names, len(want))
	}
	if !strings.Contains(strings.Join(names, " "), DefaultExample) {
		t.Errorf("no %q example in %v", DefaultExample, names)
	}
	for _, name := range names {
		b, ok := Example(name)
		if !ok {
			t.Fatalf("Example(%q) missing", name)
		}
		s, err := Load(name+".yaml", b, nil)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		got := fig{s.N(), s.Parallelism.Stage, s.Parallelism.K, int64(s.Model.Params), s.Cluster.GPU, s.Cluster.Inter.Bandwidth,
			string(s.Cluster.NICs), s.Cluster.NICsPerNode}
		if got != want[name] {
			t.Errorf("%s: got %+v, want %+v", name, got, want[name])
		}
		if s.Name != name || s.Description == "" || strings.Contains(s.Description, "\n") {
			t.Errorf("%s: name %q description %q", name, s.Name, s.Description)
		}
		again, err := Load(name+".yaml", b, nil)
		if err != nil || !reflect.DeepEqual(s, again) {
			t.Errorf("%s: a second Load differs (%v)", name, err)
		}
	}
	// gpt3-175b-16k needs prefetch depth 2; the seed 001 V100 examples use fp16.
	if b, _ := Example("gpt3-175b-16k"); true {
		s, _ := Load("x", b, nil)
		if *s.Communication.PrefetchDepth != 2 {
			t.Errorf("gpt3-175b-16k prefetch %d", *s.Communication.PrefetchDepth)
		}
	}
	for _, n := range []string{"seed001-azure", "seed001-dgx2h"} {
		b, _ := Example(n)
		if s, _ := Load(n, b, nil); s.Training.ParamDType != "fp16" {
			t.Errorf("%s: param dtype %s", n, s.Training.ParamDType)
		}
	}
	for _, bad := range []string{"", "nope", "../load", "default.yaml", "examples/default"} {
		if _, ok := Example(bad); ok {
			t.Errorf("Example(%q) found", bad)
		}
	}
}

// TestSets checks --set overrides: success, created mappings, and errors
// that name the flag.
func TestSets(t *testing.T) {
	s, err := Load("s.yaml", []byte(baseYAML), []string{
		"parallelism.k=4", "training.mfu=0.4", "cluster.placement=[dp, cp]", "communication.overlap=false",
		"model.layers=2", "cluster.inter.bandwidth=10GB/s", "training.mfu=0.3",
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.Parallelism.K != 4 || s.Training.MFU != 0.3 || !reflect.DeepEqual(s.Cluster.Placement, []Axis{"dp", "cp"}) ||
		*s.Communication.Overlap || s.Model.Layers != 2 || s.Cluster.Inter != (Link{"HDR", 10e9, 2 * units.Microsecond}) {
		t.Errorf("sets not applied: %+v", s)
	}
	// A --set of training.mfu replaces the file's compute_efficiency, and
	// the other way round; both by --set stays an error.
	withEff, withMFU := baseYAML+"training:\n  compute_efficiency: 0.6\n", baseYAML+"training:\n  mfu: 0.4\n"
	if s, err := Load("s.yaml", []byte(withEff), []string{"training.mfu=0.45"}); err != nil || s.Training.MFU != 0.45 || s.Training.ComputeEfficiency != 0 {
		t.Errorf("mfu over the file's compute_efficiency: %v, %+v", err, s)
	}
	if s, err := Load("s.yaml", []byte(withMFU), []string{"training.compute_efficiency=0.7"}); err != nil || s.Training.MFU != 0 || s.Training.ComputeEfficiency != 0.7 {
		t.Errorf("compute_efficiency over the file's mfu: %v, %+v", err, s)
	}
	if _, err := Load("s.yaml", []byte(withMFU), []string{"training.compute_efficiency=0.7", "training.mfu=0.3"}); err == nil || !strings.Contains(err.Error(), "not both") {
		t.Errorf("both by --set: %v", err)
	}
	withList := rep("gpu: A100-80GB", "gpu: A100-80GB\n  gpu_overrides: [{rank: 1, speed: 0.5}]")
	s, err = Load("s.yaml", []byte(withList), []string{"cluster.gpu_overrides[0].speed=0.25"})
	if err != nil || s.Cluster.GPUOverrides[0].Speed != 0.25 {
		t.Errorf("indexed set: %v", err)
	}
	for _, tc := range []struct {
		in   string
		sets []string
		want string
	}{
		{baseYAML, []string{"parallelism.k=3"}, "s.yaml: --set parallelism.k=3: k=3 does not divide dp·cp=8 (use a divisor of 8: 1, 2, 4, 8)"},
		{baseYAML, []string{"training.grad_accum=0"}, "s.yaml: --set training.grad_accum=0: grad_accum=0 is out of range (use 1 to 4096)"},
		{baseYAML, []string{"parallelism.kk=2"}, `s.yaml: --set parallelism.kk=2: unknown key "kk" in parallelism (did you mean "k"?)`},
		{baseYAML, []string{"trainig.mfu=0.5"}, `s.yaml: --set trainig.mfu=0.5: unknown key "trainig" at the top level (did you mean "training"?)`},
		{baseYAML, []string{"parallelism.k"}, `s.yaml: --set parallelism.k: missing "=" (use --set key.path=value, e.g. --set parallelism.k=2)`},
		{baseYAML, []string{"=3"}, `s.yaml: --set =3: empty key path (use --set key.path=value)`},
		{baseYAML, []string{"parallelism.k="}, `s.yaml: --set parallelism.k=: no value after "=" (use --set parallelism.k=VALUE)`},
		{baseYAML, []string{"parallelism.k=two"}, `s.yaml: --set parallelism.k=two: k: "two" is not an integer (use a whole number)`},
		{baseYAML, []string{"version.x=1"}, `s.yaml: --set version.x=1: version is 1, not a mapping (set a key that exists in the format)`},
		{baseYAML, []string{"cluster.gpu_memory=1XB"}, `s.yaml: --set cluster.gpu_memory=1XB: gpu_memory: "1XB" is not a size (use a size such as 80GiB, 2GB, 512MiB or 4096B)`},
		{baseYAML, []string{"training.mfu=[1"}, `s.yaml: --set training.mfu=[1: the value is not valid YAML: line 1: did not find expected ',' or ']' (quote it or fix it)`},
		{baseYAML, []string{"cluster.placement[0]=dp"}, `s.yaml: --set cluster.placement[0]=dp: placement is not in the file, so placement[0] has no item to set (set the whole list instead)`},
		{withList, []string{"cluster.gpu_overrides[3].speed=1"}, `s.yaml: --set cluster.gpu_overrides[3].speed=1: gpu_overrides has 1 item, so [3] is out of range (use 0 to 0)`},
		{baseYAML, []string{"cluster.nodes=4"}, `s.yaml: --set cluster.nodes=4: dp·cp=8 does not equal nodes·gpus_per_node=16 (use dp·cp = 16, or --set parallelism.dp=auto to fill the cluster)`},
		// A file's cp with a --set of dp: the --set is named.
		{rep("dp: 8", "dp: 4\n  cp: 2"), []string{"parallelism.dp=3"}, `s.yaml: --set parallelism.dp=3: dp·cp=6 does not equal nodes·gpus_per_node=8 (use dp·cp = 8, or --set parallelism.dp=auto to fill the cluster)`},
		// Both set: the dp the user gave is what to change.
		{baseYAML, []string{"parallelism.dp=6", "cluster.nodes=2"}, `s.yaml: --set parallelism.dp=6: dp·cp=6 does not equal nodes·gpus_per_node=8 (use dp·cp = 8, or --set parallelism.dp=auto to fill the cluster)`},
		{baseYAML, []string{"parallelism.dp=auto", "parallelism.cp=3"}, `s.yaml: --set parallelism.cp=3: cp=3 does not divide the cluster's 8 GPUs, which dp: auto fills (use a divisor of 8)`},
		{baseYAML, []string{"parallelism.dp=Auto"}, `s.yaml: --set parallelism.dp=Auto: dp: "Auto" is not an integer (use a whole number)`},
	} {
		_, err := Load("s.yaml", []byte(tc.in), tc.sets)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%v:\n got %v\nwant %s", tc.sets, err, tc.want)
		}
	}
}

// TestDPAuto: dp: auto is the cluster's GPUs over cp, in the file or by
// --set, so a --set of the cluster's size (compare --vary cluster.nodes=…)
// scales dp with it: 2 nodes × 4 GPUs hold dp 8, or 4 at cp 2; 4 nodes 16.
func TestDPAuto(t *testing.T) {
	for _, tc := range []struct {
		in     string
		sets   []string
		dp, cp int
	}{
		{rep("dp: 8", "dp: auto"), nil, 8, 1},
		{rep("dp: 8", "dp: auto\n  cp: 2"), nil, 4, 2},
		{baseYAML, []string{"parallelism.dp=auto", "cluster.nodes=4"}, 16, 1},
		{baseYAML, []string{"cluster.nodes=4", "parallelism.dp=auto", "parallelism.cp=4"}, 4, 4},
	} {
		s, err := Load("s.yaml", []byte(tc.in), tc.sets)
		if err != nil {
			t.Errorf("%v: %v", tc.sets, err)
			continue
		}
		if s.Parallelism.DP != tc.dp || s.Parallelism.CP != tc.cp {
			t.Errorf("%v: dp %d cp %d, want %d %d", tc.sets, s.Parallelism.DP, s.Parallelism.CP, tc.dp, tc.cp)
		}
	}
}
