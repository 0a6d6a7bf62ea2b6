package sweep

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/zero"
)

// TestFitAgainstNaive checks every row of FitSearch against direct loads
// and verdicts (replays under zerosim's convention, the model under seed
// 002's): the layout it proposes loads (zerosim accepts it) and fits, no
// smaller node count it searches fits, and the largest model fits while one
// more layer (layers rule, seed000-k4's residual MLP) or one more parameter
// (params rule, seed002-7b) does not.
func TestFitAgainstNaive(t *testing.T) {
	for _, tc := range []struct {
		example string
		conv    memory.Convention
		scaling string
		rows    int
	}{
		{"seed000-k4", memory.ConventionZerosim, ScaleLayers, 13},
		{"seed002-7b", memory.ConventionZerosim, ScaleParams, 13},
		{"seed002-7b", memory.ConventionSeed002, ScaleParams, 13},
		{"seed002-tiny", memory.ConventionZerosim, ScaleNone, 7},
	} {
		data, _ := scenarios.Example(tc.example)
		src := Source{File: tc.example + ".yaml", Data: data}
		f, err := FitSearch(src, FitOptions{Convention: tc.conv})
		if err != nil {
			t.Fatal(err)
		}
		if f.Scaling != tc.scaling || len(f.Rows) != tc.rows || f.Replayed != (tc.conv == memory.ConventionZerosim) {
			t.Fatalf("%s: scaling %s, %d rows, replayed %v; want %s, %d", tc.example, f.Scaling, len(f.Rows), f.Replayed, tc.scaling, tc.rows)
		}
		s, _ := src.Load()
		jd := judge{tc.conv}
		verdict := func(r FitRow, sets ...string) (int64, bool, *scenarios.Scenario) {
			t.Helper()
			ls, err := src.Load(append(layoutSets(r.Stage, r.K), sets...)...)
			if err != nil {
				t.Fatalf("%s stage %d K=%d %v: %v", tc.example, r.Stage, r.K, sets, err)
			}
			v, err := jd.decide(ls)
			if err != nil {
				t.Fatal(err)
			}
			return v.Peak, v.Fits, ls
		}
		for _, r := range f.Rows {
			name := fmt.Sprintf("%s %s stage %d K=%d", tc.example, tc.conv, r.Stage, r.K)
			if r.PeakReplayed {
				if p, ok, _ := verdict(r); p != r.Peak || ok != r.Fits {
					t.Errorf("%s: peak %d fits %v; replayed %d, %v", name, r.Peak, r.Fits, p, ok)
				}
			}
			if r.MinNodes > 0 {
				checkLeastNodes(t, src, f, r, jd)
			}
			if r.MaxParams == 0 {
				if tc.scaling != ScaleNone {
					t.Errorf("%s: no largest model", name)
				}
				continue
			}
			var fit, more []string
			switch tc.scaling {
			case ScaleLayers:
				fit = []string{"model.layers=" + itoa(r.MaxLayers)}
				more = []string{"model.layers=" + itoa(r.MaxLayers+1)}
			case ScaleParams:
				ll := int64(s.Model.LargestLayer)
				scale := func(x int64) []string {
					return []string{"model.params=" + itoa(x), "model.largest_layer=" + itoa(roundScale(ll, x, f.Params))}
				}
				fit, more = scale(r.MaxParams), scale(r.MaxParams+1)
			}
			if p, ok, ms := verdict(r, fit...); !ok || ms.Model.TotalParams() != r.MaxParams || p != r.MaxPeak {
				t.Errorf("%s: the largest model %d does not fit (peak %d, reported %d)", name, r.MaxParams, p, r.MaxPeak)
			}
			if r.MaxLayers == scenarios.MaxLayers {
				continue // no larger model to try
			}
			if _, ok, _ := verdict(r, more...); ok {
				t.Errorf("%s: a larger model than %d fits", name, r.MaxParams)
			}
		}
	}
}

// Issue 13: gpt3-125m on 64 H100 at ZeRO-3 (model states only, 4.8 GiB
// at 1024 layers) fits at every layer count the
// scenario allows; fit used its own limit (4096) and took the loader's
// rejection of 1025+ layers for "does not fit", reporting 1024 as the
// largest model without saying it is the limit.
func TestFitLayerLimitIsTheScenarios(t *testing.T) {
	src := Source{File: "gpt3.yaml", Data: []byte(`version: 1
cluster: {nodes: 8, gpus_per_node: 8, gpu: H100-80GB}
model: {preset: gpt3-125m}
parallelism: {dp: 64, zero_stage: 3}
memory: {activations: false}
`)}
	f, err := FitSearch(src, FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if f.MaxGPUs != 65536 {
		t.Errorf("the search's bound is %d GPUs, want FitOptions' default of 65,536", f.MaxGPUs)
	}
	for _, r := range f.Rows {
		if r.Stage != 3 || r.K != 1 {
			continue
		}
		want := fmt.Sprintf("fits even at the scenario limit of %d layers", scenarios.MaxLayers)
		if r.MaxLayers != scenarios.MaxLayers || !strings.Contains(r.Note(), want) {
			t.Errorf("stage 3 K=1: largest %d layers, note %q; want %d and %q", r.MaxLayers, r.Note(), scenarios.MaxLayers, want)
		}
		return
	}
	t.Fatal("no stage 3, K=1 row")
}

// A scaled model the loader rejects is an error, not a memory verdict.
func TestFitLoaderRejectionIsAnError(t *testing.T) {
	src := Source{File: "bad.yaml", Data: []byte(`version: 1
cluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}
model: {preset: gpt3-125m}
parallelism: {dp: 8, zero_stage: 3}
`)}
	if _, err := scaledModel(src, layoutSets(3, 1), fmt.Sprintf("model.layers=%d", scenarios.MaxLayers+1)); err == nil {
		t.Error("layers beyond the limit: no error")
	}
}

// TestLeastFrom holds the searches from a guess against a scan: every
// boundary in [lo, hi] (none: false) from every guess, and largestFrom's
// greatest true from every guess.
func TestLeastFrom(t *testing.T) {
	const lo, hi = 3, 40
	for b := lo; b <= hi+1; b++ { // f(j) = j >= b
		for g := lo - 2; g <= hi+2; g++ {
			probes := 0
			f := func(j int) bool {
				if j < lo || j > hi {
					t.Fatalf("probe %d outside [%d, %d]", j, lo, hi)
				}
				probes++
				return j >= b
			}
			got, ok := leastFrom(lo, hi, g, f)
			if ok != (b <= hi) || ok && got != b {
				t.Errorf("boundary %d, guess %d: %d, %v", b, g, got, ok)
			}
			if g == b && b > lo && b <= hi && probes != 2 {
				t.Errorf("boundary %d, right guess: %d probes, want 2", b, probes)
			}
			// fits(x) = x < b: the greatest that fits is b-1 (none when b = lo).
			x, ok := largestFrom(lo, hi, g, func(x int) bool { return x < b })
			if ok != (b > lo) || ok && x != min(b-1, hi) {
				t.Errorf("largest below %d, guess %d: %d, %v", b, g, x, ok)
			}
		}
	}
}

// checkLeastNodes loads the proposed layout through the loader (so zerosim
// accepts it: whole nodes, dp·cp = nodes · GPUs per node, K dividing it),
// checks it fits with the reported peak as jd judges it, and scans every
// smaller multiple of the node step: none fits.
func checkLeastNodes(t *testing.T, src Source, f *Fit, r FitRow, jd judge) {
	t.Helper()
	s, _ := src.Load()
	load := func(nodes int) (int64, bool, error) {
		ls, err := src.Load(append(layoutSets(r.Stage, r.K), nodeSets(s, nodes)...)...)
		if err != nil {
			return 0, false, err
		}
		v, err := jd.decide(ls)
		return v.Peak, v.Fits, err
	}
	if r.MinGPUs != r.MinNodes*f.GPUsPerNode || r.MinDP*f.CP != r.MinGPUs {
		t.Errorf("stage %d K=%d: %d nodes, %d GPUs, dp %d: not a whole-node layout", r.Stage, r.K, r.MinNodes, r.MinGPUs, r.MinDP)
	}
	peak, ok, err := load(r.MinNodes)
	if err != nil || !ok || peak != r.MinPeak {
		t.Errorf("stage %d K=%d: %d nodes: %d, %v, %v; want a layout zerosim accepts that fits with peak %d", r.Stage, r.K, r.MinNodes, peak, ok, err, r.MinPeak)
	}
	step := nodeStep(s, r.K)
	for j := 1; j < r.MinNodes/step; j++ {
		if _, ok, err := load(j * step); err == nil && ok {
			t.Errorf("stage %d K=%d: %d nodes fit too, least is not %d", r.Stage, r.K, j*step, r.MinNodes)
		}
	}
}

// TestFitProgress: FitOptions.Progress hears every row once, counting up
// to the number of rows, one call at a time.
func TestFitProgress(t *testing.T) {
	src := Source{File: "gpt3.yaml", Data: []byte(`version: 1
cluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}
model: {preset: gpt3-125m}
parallelism: {dp: 16, zero_stage: 3}
`)}
	var seen []int
	total := 0
	f, err := FitSearch(src, FitOptions{Jobs: 2, Progress: func(done, n int) { seen = append(seen, done); total = n }})
	if err != nil {
		t.Fatal(err)
	}
	want := make([]int, len(f.Rows))
	for i := range want {
		want[i] = i + 1
	}
	if total != len(f.Rows) || !slices.Equal(seen, want) {
		t.Errorf("progress %v of %d, want 1..%d", seen, total, len(f.Rows))
	}
}

// TestFitDeviceNodes: fit answered "least nodes: 2" for Llama 3.1 70B at
// ZeRO-3 under torchtitan (seq 8192, full recompute) by the allocated peak
// (78.99 GiB of 80), where zerosim run on 2 nodes warns that the device
// needs 91.84 GiB with the caching allocator's reserve, the CUDA context
// and NCCL's buffers. The row now carries the device peak there, as run's
// replay gives it, and the least nodes on which that fits too: 3, the
// first whose replayed device peak is within the GPU (2's is not). The
// case was found on 80 GiB; since FSDP2's root group holds the output
// projection's parameters and gradient through the backward
// (memory/rootgroup.go) 2 nodes allocate 82.16 GiB at their peak, so it
// runs on an 84 GiB GPU (gpu_memory), where the gap this test is about
// still shows (on the preset's 81,559 MiB fit's least nodes is 3 and the
// gap closes). It keeps the reserve it was found with too,
// memory.allocator_overhead 0.15: the simulated reserve of FSDP
// (memory.SimulatesReserve) puts 3 nodes past the GPU as well; and the
// fused optimizer: torchtitan's foreach one takes a temporary of the whole
// shard at the step, which puts 2 nodes' allocated peak past the GPU.
func TestFitDeviceNodes(t *testing.T) {
	src := Source{File: "llama70b.yaml", Data: []byte(`version: 1
stack: torchtitan
cluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB, gpu_memory: 84GiB}
model: {preset: llama3.1-70b, seq_len: 8192}
parallelism: {dp: 16, zero_stage: 3}
training: {recompute: full, optimizer_impl: fused}
memory: {allocator_overhead: 0.15}
`)}
	f, err := FitSearch(src, FitOptions{Convention: memory.ConventionZerosim, MaxGPUs: 128})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(f.Rows, func(r FitRow) bool { return r.Stage == 3 && r.K == 1 })
	if i < 0 {
		t.Fatal("no stage 3, K=1 row")
	}
	r := f.Rows[i]
	device := func(nodes int) (alloc, dev int64) {
		s, err := src.Load(append(layoutSets(3, 1), fmt.Sprintf("cluster.nodes=%d", nodes), fmt.Sprintf("parallelism.dp=%d", 8*nodes))...)
		if err != nil {
			t.Fatal(err)
		}
		res, err := zero.Replay(s, zero.Options{})
		if err != nil {
			t.Fatal(err)
		}
		p, _ := res.Peak()
		return p, res.DevicePeak
	}
	a2, d2 := device(2)
	a3, d3 := device(3)
	if a2 > f.GPUMemory || d2 <= f.GPUMemory || d3 > f.GPUMemory || a3 > f.GPUMemory {
		t.Fatalf("replays: 2 nodes %d/%d, 3 nodes %d/%d of %d: the case no longer shows the gap", a2, d2, a3, d3, f.GPUMemory)
	}
	if r.MinNodes != 2 || r.MinDevice != d2 || r.DeviceNodes != 3 || r.DevicePeak != d3 {
		t.Errorf("least nodes %d device %d, device nodes %d device %d; want 2 %d, 3 %d", r.MinNodes, r.MinDevice, r.DeviceNodes, r.DevicePeak, d2, d3)
	}
}

// TestFitStackKNodes: fms-fsdp's hsdp runs K = the node count, so fit
// does not search fewer or more nodes at the K of this cluster (review
// s18 B5: llama2-13b-a100-eth's K=4 row fitted 'from 453 nodes', a
// layout the stack runs at K = 453). Its K = 1 row is searched.
func TestFitStackKNodes(t *testing.T) {
	f, err := FitSearch(exampleSource(t, "llama2-13b-a100-eth", "stack=fms-fsdp"), FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var k1, k4 *FitRow
	for i := range f.Rows {
		switch r := &f.Rows[i]; {
		case r.Stage == 3 && r.K == 1:
			k1 = r
		case r.Stage == 3 && r.K == 4:
			k4 = r
		}
	}
	if k1 == nil || k4 == nil {
		t.Fatalf("rows %+v: want stage 3 at K 1 and 4", f.Rows)
	}
	if k4.MinNodes != 0 || len(k4.Notes) == 0 || !strings.Contains(k4.Notes[0].Text, "fewest nodes not searched: at K=4 fms-fsdp runs only on 4 nodes") {
		t.Errorf("K=4: %d nodes, notes %+v", k4.MinNodes, k4.Notes)
	}
	if k1.MinNodes == 0 {
		t.Errorf("K=1: no fewest nodes, notes %+v", k1.Notes)
	}
}

// TestFitZeroPPK: under ZeRO++ fit lists K = 1 alone (scenarios.KOne);
// it listed every K at stage 3, each "zerosim does not run this layout:
// … k=N must be 1" (review s18 C6).
func TestFitZeroPPK(t *testing.T) {
	f, err := FitSearch(exampleSource(t, "default", "parallelism.zero_stage=3", "communication.zero_hpz_partition_size=8"), FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range f.Rows {
		if r.K != 1 {
			t.Errorf("stage %d lists K=%d under ZeRO++", r.Stage, r.K)
		}
	}
}

// A scaled model over a replay's limits ends the largest-model search with
// a note instead of failing fit (qa19 M5: fit of Llama 3.1 405B with a 4 MB
// bucket_size exited 1 at 1,024 layers, where the bucket size cut 1.64 T
// parameters into more than memory.MaxBuckets buckets). gpt3-125m has
// 7,087,872 parameters a layer: with 40 KB buckets (20,000 elements at
// stage 2) the dense group passes 262,144 buckets at 735 layers, (735 ·
// 7,087,872 + the embedding) / 20,000 > 2^18.
func TestFitStopsAtReplayLimits(t *testing.T) {
	src := Source{File: "gpt3.yaml", Data: []byte(`version: 1
cluster: {nodes: 8, gpus_per_node: 8, gpu: H100-80GB}
model: {preset: gpt3-125m}
parallelism: {dp: 64, zero_stage: 3}
memory: {activations: false}
communication: {bucket_size: 40KB}
`)}
	f, err := FitSearch(src, FitOptions{Convention: memory.ConventionSeed000})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range f.Rows {
		if r.Stage != 2 || r.K != 1 {
			continue
		}
		if r.MaxLayers != 734 || !strings.Contains(r.Note(), "largest within zerosim's replay limits: at 735 layers, communication.bucket_size 40000 B cuts group") {
			t.Errorf("stage 2 K=1: largest %d layers, note %q; want 734 and the bucket limit at 735", r.MaxLayers, r.Note())
		}
		return
	}
	t.Fatal("no stage 2, K=1 row")
}
