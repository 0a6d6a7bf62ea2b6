package memory

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// noSyncLayerParams is each of noSyncMLP's four layers' parameters.
const noSyncLayerParams = 100000000

// noSyncMLP is the no_sync tests' model: four MLP layers of 100M bf16
// parameters over 2 GPUs of one node, with the parallelism's other keys
// (extra, such as "zero_stage: 3") after dp.
func noSyncMLP(extra string) string {
	layers := ""
	for i := range 4 {
		layers += fmt.Sprintf("    - {name: l%d, params: %d, fwd: 1ms, bwd: 2ms}\n", i, noSyncLayerParams)
	}
	par := "dp: 2"
	if extra != "" {
		par += ", " + extra
	}
	return "version: 1\ncluster: {nodes: 1, gpus_per_node: 2, gpu: A100-80GB}\n" +
		"model:\n  kind: mlp\n  hidden: 64\n  groups: [{name: dense, precision: bf16}]\n  layer_list:\n" + layers +
		"parallelism: {" + par + "}\n"
}

// TestNoSyncHeldGradients: under FSDP's no_sync (training.grad_sync: last
// at stages 2 and 3 with grad_accum > 1) every rank keeps its whole
// unsharded gradient from one micro-step to the next: four layers of
// 100M parameters each, over 2 GPUs, hold 4 × 100M × bytes, in param_dtype
// (bf16, 2 bytes) under FSDP1, whose .grad is the unsharded flat
// parameter's, and in reduce_dtype under FSDP2, which upcasts the
// gradient it keeps (fp32, 4 bytes). The walk puts them on as the last
// micro-step's forward starts; that micro-step's backward reduces each
// unit's held gradient and frees it with its reduce-scatter (FSDP1's
// _post_backward_hook sets flat_param.grad = None and reduce-scatters it,
// FSDP2's post_backward hands unsharded_accumulated_grad to foreach_reduce
// and sets it to None), so the optimizer step holds only the sharded
// gradients: 4 × 100M / 2 × 2 B = 400,000,000 B at stage 3 and at FSDP's
// stage 2 (shardsPerUnit), none beyond the shard at rest at stage 2
// outside FSDP, and its phase peaks where grad_sync every does. At stage 3,
// and FSDP's stage 2, that peak is hand-derived: at rest the bf16 shard
// (200M × 2) and the fp32 master, exp_avg and exp_avg_sq (3 × 200M × 4),
// 2,800,000,000 B, plus the 400,000,000 B of sharded gradients and the
// optimizer's fp32 copy of them (200M × 4), 4,000,000,000 B. Where every
// micro-step reduces, the step is one micro-step, or DeepSpeed's engine has
// no no_sync, nothing is held.
func TestNoSyncHeldGradients(t *testing.T) {
	const params = noSyncLayerParams
	yaml := noSyncMLP("zero_stage: 3")
	analyze := func(t *testing.T, sets []string) *Report {
		t.Helper()
		s, err := scenarios.Load("four-layers.yaml", []byte(yaml), sets)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Analyze(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	const stage3Shards, stage3OptPeak = 4 * params / 2 * 2, 4000000000
	for _, c := range []struct {
		sets    []string
		held    int64
		shards  int64 // the sharded gradients the optimizer frees
		optPeak int64 // hand-derived optimizer-phase peak (0: compared with every only)
	}{
		{[]string{"communication.boundary=fsdp1", "training.grad_sync=last", "training.grad_accum=4"}, 4 * params * 2, stage3Shards, stage3OptPeak},
		{[]string{"communication.boundary=fsdp1", "training.grad_sync=last", "training.grad_accum=4", "training.reduce_dtype=fp32"}, 4 * params * 2, stage3Shards, stage3OptPeak},
		{[]string{"communication.boundary=fsdp2", "training.grad_sync=last", "training.grad_accum=4", "training.reduce_dtype=fp32"}, 4 * params * 4, stage3Shards, stage3OptPeak},
		{[]string{"communication.boundary=fsdp2", "training.grad_sync=last", "training.grad_accum=2"}, 4 * params * 2, stage3Shards, stage3OptPeak},
		{[]string{"parallelism.zero_stage=2", "communication.boundary=fsdp1", "training.grad_sync=last", "training.grad_accum=4"}, 4 * params * 2, stage3Shards, stage3OptPeak},
		{[]string{"parallelism.zero_stage=2", "training.grad_sync=last", "training.grad_accum=4"}, 4 * params * 2, 0, 0},
		{[]string{"communication.boundary=fsdp1", "training.grad_sync=every", "training.grad_accum=4"}, 0, 0, 0},
		{[]string{"communication.boundary=fsdp1", "training.grad_sync=last", "training.grad_accum=1"}, 0, 0, 0},
		{[]string{"communication.boundary=deepspeed", "training.grad_sync=last", "training.grad_accum=4"}, 0, 0, 0},
		{[]string{"parallelism.zero_stage=1", "training.grad_sync=last", "training.grad_accum=4"}, 0, 0, 0},
	} {
		t.Run(fmt.Sprint(c.sets), func(t *testing.T) {
			r := analyze(t, c.sets)
			var held int64
			for _, u := range r.Units {
				held += u.HeldGrad
			}
			if held != c.held {
				t.Errorf("held gradients %d B, want %d", held, c.held)
			}
			if c.held == 0 {
				return
			}
			var start, optFreed int64
			reduced := make([]int64, len(r.Units))
			for _, e := range r.Timeline() {
				switch {
				case e.Component == CompGrads && e.Phase == PhaseForward && e.Unit == 0 && e.Op == OpCompute:
					start += e.Delta
				case e.Component == CompGrads && e.Phase == PhaseOptimizer:
					optFreed -= e.Delta
				case e.Component == CompGrads && e.Phase == PhaseBackward && e.Delta < 0 &&
					(e.Op == OpReduceScatter || e.Op == OpReduceCopyIn):
					reduced[e.Unit] -= e.Delta
				}
			}
			if start != c.held {
				t.Errorf("forward start puts on %d B of gradients, want the %d held", start, c.held)
			}
			for u, b := range reduced {
				if want := c.held / 4; b != want {
					t.Errorf("unit %d's reduction frees %d B of gradients, want its held %d", u, b, want)
				}
			}
			if optFreed != c.shards {
				t.Errorf("the optimizer frees %d B of gradients, want the %d B of sharded gradients only", optFreed, c.shards)
			}
			every := analyze(t, append(slices.Clone(c.sets), "training.grad_sync=every"))
			got, want := r.PhasePeaks[PhaseOptimizer].Bytes, every.PhasePeaks[PhaseOptimizer].Bytes
			if got != want || c.optPeak != 0 && got != c.optPeak {
				t.Errorf("optimizer-step peak %d B, want grad_sync every's %d (hand-derived %d)", got, want, c.optPeak)
			}
		})
	}
	// The micro-steps before the last hold every unit's gradient through
	// their backward. With a first layer of 400M parameters (FSDP1, bf16)
	// they peak in its backward: at rest the bf16 shard (350M × 2) and the
	// fp32 master, exp_avg and exp_avg_sq (3 × 350M × 4), 4,900,000,000 B,
	// plus the held gradients (700M × 2), l0's gathered parameters (400M
	// × 2) and its new gradient (400M × 2): 7,900,000,000 B. The last
	// micro-step has freed l1-l3's held gradients by then (their sharded
	// ones, 150M, in their place) and stays below; a walk of it alone would
	// under-read the step.
	t.Run("earlier micro-steps", func(t *testing.T) {
		big := strings.Replace(yaml, fmt.Sprintf("l0, params: %d", params), fmt.Sprintf("l0, params: %d", 4*params), 1)
		s, err := scenarios.Load("big-first.yaml", []byte(big), []string{"communication.boundary=fsdp1", "training.grad_sync=last", "training.grad_accum=4"})
		if err != nil {
			t.Fatal(err)
		}
		r, err := Analyze(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r.AtRest != 4900000000 {
			t.Fatalf("at rest %d B, want 4,900,000,000", r.AtRest)
		}
		if got := r.PhasePeaks[PhaseBackward].Bytes; got != 7900000000 || r.Peak != got || r.PeakPhase != PhaseBackward || r.PeakUnit != 0 {
			t.Errorf("backward peak %d B (step peak %d in %s, unit %d), want 7,900,000,000 in l0's backward", got, r.Peak, r.PeakPhase, r.PeakUnit)
		}
	})
}
