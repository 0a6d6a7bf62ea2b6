package memory

import (
	"fmt"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

func actOffScenario(t *testing.T, n int, extra string) *scenarios.Scenario {
	t.Helper()
	s, err := scenarios.Load("actoff.yaml", []byte(fmt.Sprintf(`version: 1
stack: megatron
cluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}
model: {preset: llama3.2-1b, seq_len: 4096}
parallelism: {dp: 8, zero_stage: 1}
training: {micro_batch: 2, param_dtype: bf16, recompute: none, activation_offload_layers: %d}
%s`, n, extra)), nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestActivationOffloadMemory: Transformer Engine's default synchronizer
// keeps at most L − N blocks' saved tensors on the GPU (cpu_offload.py's
// "(num_layers - num_offloaded_layers) * T"): the activations' peak drops
// by N blocks' bytes, each derived from the block's shapes
// (BlockActivation), the host holds those N blocks per rank, and the
// walked timeline frees each offloaded block at the forward of block
// L − N + i and reallocates it at the backward of block L − 1 − N + i.
func TestActivationOffloadMemory(t *testing.T) {
	base, err := Analyze(actOffScenario(t, 0, ""), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if base.Host != nil || base.HostActivations() != 0 {
		t.Fatalf("no offload: host %+v", base.Host)
	}
	for _, n := range []int{1, 4, 8, 15} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			s := actOffScenario(t, n, "")
			r, err := Analyze(s, Options{})
			if err != nil {
				t.Fatal(err)
			}
			offs := ActivationOffloads(s)
			if len(offs) != n {
				t.Fatalf("%d offloaded blocks, want %d", len(offs), n)
			}
			var blocks []int
			for u, l := range s.Model.LayerList {
				if l.Block {
					blocks = append(blocks, u)
				}
			}
			L := len(blocks)
			pol := UnitPolicies(s)
			var T int64
			for i, o := range offs {
				want := ActOffload{Unit: blocks[i], Release: blocks[L-n+i], Reload: blocks[L-1-n+i]}
				if o != want {
					t.Fatalf("block %d: %+v, want %+v", i, o, want)
				}
				st, _, err := BlockActivation(UnitBlockDims(s, o.Unit), pol[o.Unit])
				if err != nil {
					t.Fatal(err)
				}
				if st <= 0 || r.Units[o.Unit].Activation != st {
					t.Fatalf("block %d keeps %d B, its shapes give %d", i, r.Units[o.Unit].Activation, st)
				}
				T += st
			}
			act, act0 := r.Component(CompActivations).Peak, base.Component(CompActivations).Peak
			if act0-act != T {
				t.Errorf("activations' peak %d, without offload %d: %d less, want the %d offloaded blocks' %d", act, act0, act0-act, n, T)
			}
			if r.Peak != base.Peak-T {
				t.Errorf("peak %d, want %d − %d", r.Peak, base.Peak, T)
			}
			if h := r.Host; h == nil || r.HostActivations() != T || h.PerRank != T || h.PerNode != 8*T || !h.Fits {
				t.Errorf("host %+v, want %d B per rank, 8× per node", h, T)
			}
			// The walk: each offloaded block leaves once in forward
			// and comes back once in backward, before its own free;
			// the activations never exceed the lowered peak.
			var cur, hi int64
			off, back := map[int]int{}, map[int]int{}
			for i, e := range r.Timeline() {
				if e.Component != CompActivations {
					continue
				}
				cur += e.Delta
				hi = max(hi, cur)
				switch e.Op {
				case OpActOffload:
					off[e.Unit]++
					if e.Phase != PhaseForward || e.Delta != -r.Units[e.Unit].Activation {
						t.Errorf("event %d %+v", i, e)
					}
				case OpActReload:
					back[e.Unit]++
					if e.Phase != PhaseBackward || e.Delta != r.Units[e.Unit].Activation || off[e.Unit] != 1 {
						t.Errorf("event %d %+v", i, e)
					}
				case OpCompute:
					if e.Delta < 0 && e.Phase == PhaseBackward && off[e.Unit] > 0 && back[e.Unit] != 1 {
						t.Errorf("block %d freed in backward before its reload", e.Unit)
					}
				}
			}
			if len(off) != n || len(back) != n || hi != act {
				t.Errorf("%d offloads, %d reloads, walked peak %d (component %d)", len(off), len(back), hi, act)
			}
		})
	}
}
