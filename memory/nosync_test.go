package memory

import (
	"fmt"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestNoSyncHeldGradients: under FSDP's no_sync (training.grad_sync: last
// at stages 2 and 3 with grad_accum > 1) every rank keeps its whole
// unsharded gradient from one micro-step to the next: four layers of
// 100M parameters each, over 2 GPUs, hold 4 × 100M × bytes, in param_dtype
// (bf16, 2 bytes) under FSDP1, whose .grad is the unsharded flat
// parameter's, and in reduce_dtype under FSDP2, which upcasts the
// gradient it keeps (fp32, 4 bytes). The walk puts them on as the
// micro-step's forward starts and frees them at the optimizer step. Where
// every micro-step reduces, the step is one micro-step, or DeepSpeed's
// engine has no no_sync, nothing is held.
func TestNoSyncHeldGradients(t *testing.T) {
	const params = 100000000
	layers := ""
	for i := range 4 {
		layers += fmt.Sprintf("    - {name: l%d, params: %d, fwd: 1ms, bwd: 2ms}\n", i, params)
	}
	yaml := "version: 1\ncluster: {nodes: 1, gpus_per_node: 2, gpu: A100-80GB}\n" +
		"model:\n  kind: mlp\n  hidden: 64\n  groups: [{name: dense, precision: bf16}]\n  layer_list:\n" + layers +
		"parallelism: {dp: 2, zero_stage: 3}\n"
	for _, c := range []struct {
		sets []string
		held int64
	}{
		{[]string{"communication.boundary=fsdp1", "training.grad_sync=last", "training.grad_accum=4"}, 4 * params * 2},
		{[]string{"communication.boundary=fsdp1", "training.grad_sync=last", "training.grad_accum=4", "training.reduce_dtype=fp32"}, 4 * params * 2},
		{[]string{"communication.boundary=fsdp2", "training.grad_sync=last", "training.grad_accum=4", "training.reduce_dtype=fp32"}, 4 * params * 4},
		{[]string{"communication.boundary=fsdp2", "training.grad_sync=last", "training.grad_accum=2"}, 4 * params * 2},
		{[]string{"parallelism.zero_stage=2", "communication.boundary=fsdp1", "training.grad_sync=last", "training.grad_accum=4"}, 4 * params * 2},
		{[]string{"parallelism.zero_stage=2", "training.grad_sync=last", "training.grad_accum=4"}, 4 * params * 2},
		{[]string{"communication.boundary=fsdp1", "training.grad_sync=every", "training.grad_accum=4"}, 0},
		{[]string{"communication.boundary=fsdp1", "training.grad_sync=last", "training.grad_accum=1"}, 0},
		{[]string{"communication.boundary=deepspeed", "training.grad_sync=last", "training.grad_accum=4"}, 0},
		{[]string{"parallelism.zero_stage=1", "training.grad_sync=last", "training.grad_accum=4"}, 0},
	} {
		t.Run(fmt.Sprint(c.sets), func(t *testing.T) {
			s, err := scenarios.Load("four-layers.yaml", []byte(yaml), c.sets)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Analyze(s, Options{})
			if err != nil {
				t.Fatal(err)
			}
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
			var start, freed int64
			for _, e := range r.Timeline() {
				switch {
				case e.Component == CompGrads && e.Phase == PhaseForward && e.Unit == 0 && e.Op == OpCompute:
					start += e.Delta
				case e.Component == CompGrads && e.Phase == PhaseOptimizer:
					freed -= e.Delta
				}
			}
			if start != c.held {
				t.Errorf("forward start puts on %d B of gradients, want the %d held", start, c.held)
			}
			if freed < c.held {
				t.Errorf("the optimizer frees %d B of gradients, less than the %d held", freed, c.held)
			}
		})
	}
}
