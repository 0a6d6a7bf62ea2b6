package zero

import (
	"fmt"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
)

// TestRecomputeRerunsExpertAllToAll: full checkpointing reruns a MoE
// layer's forward in backward, token dispatcher included, so each
// checkpointed MoE layer sends its dispatch and combine all-to-alls once
// more (Megatron-LM d98e8a64ddf34856e74b24714e3bedb2f5a39553
// megatron/core/recompute.py:21 checkpointed_forward reruns the layers,
// whose MoEAlltoAllTokenDispatcher calls all_to_all at
// megatron/core/transformer/moe/token_dispatcher.py:705 and :864;
// torchtitan b5bcd76c66d0acb1a08b176d9639425bc55e0b2a FullAC wraps the
// block, torchtitan/distributed/activation_checkpoint.py:166-182), while
// torchtitan's op-level policy from c4e2291155a4 (2025-09-06) saves
// all_to_all_single's output (the same file :60-63; training.
// op_save_all_to_all) and selective reruns attention only. Under op the experts
// rerun their forward all the same (their grouped GEMMs are not aten.mm,
// in no save list): 3× the forward's FLOPs, keeping only the two
// all-to-all outputs, 2·64 MiB, and rebuilding the rest. recompute_every 2
// checkpoints blocks 1, 3, …: the experts of block 0 keep their
// activations and rerun nothing. Mixtral-8x7B, 32 MoE layers, ep 8: each
// all-to-all moves b·s·k·h·2 = 4096·2·4096·2 = 64 MiB; an experts unit
// keeps s·b·k·(4h+6f) = 838,860,800 B plus its router's 393,216 B
// (TestExpertActivations), and its backward is 2× its forward's FLOPs,
// 3× when its forward reruns.
func TestRecomputeRerunsExpertAllToAll(t *testing.T) {
	const layers, a2a, kept = 32, 64 << 20, 838_860_800 + 393_216
	for _, stage := range []int{1, 3} {
		for _, c := range []struct {
			policy string
			every  int
			// rerun[i]: whether experts.i (i = 0, 1) reruns its forward.
			rerun   [2]bool
			bwdA2As int
		}{
			{"none", 1, [2]bool{false, false}, 2 * layers},
			{"selective", 1, [2]bool{false, false}, 2 * layers},
			{"op, op_save_all_to_all: true", 1, [2]bool{true, true}, 2 * layers},
			{"full", 1, [2]bool{true, true}, 4 * layers},
			{"full", 2, [2]bool{false, true}, 3 * layers},
		} {
			policy := strings.TrimSuffix(strings.Fields(c.policy)[0], ",")
			t.Run(fmt.Sprintf("stage%d/%s/every%d", stage, policy, c.every), func(t *testing.T) {
				doc := fmt.Sprintf("version: 1\ncluster: {nodes: 8, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {preset: mixtral-8x7b}\n"+
					"parallelism: {dp: 64, zero_stage: %d, ep: 8}\ntraining: {recompute: %s, recompute_every: %d}\n", stage, c.policy, c.every)
				s, err := scenarios.Load("mixtral.yaml", []byte(doc), nil)
				if err != nil {
					t.Fatal(err)
				}
				r, err := Replay(s, Options{})
				if err != nil {
					t.Fatal(err)
				}
				m, err := memory.Analyze(s, memory.Options{})
				if err != nil {
					t.Fatal(err)
				}
				checkAllToAlls(t, "", r, 2*layers, c.bwdA2As, a2a)
				costs := r.Schedule.Costs
				for i, rerun := range c.rerun {
					u := unitNamed(t, s, fmt.Sprintf("experts.%d", i))
					ratio, act, re := int64(2), int64(kept), int64(0)
					switch {
					case rerun && policy == "op":
						ratio, act, re = 3, 2*a2a, kept-2*a2a
					case rerun:
						ratio, act, re = 3, 0, kept
					}
					if got := costs[u].BwdFLOPs; got != ratio*costs[u].FwdFLOPs {
						t.Errorf("experts.%d: backward %d FLOPs, want %d× the forward's %d", i, got, ratio, costs[u].FwdFLOPs)
					}
					if mu := m.Units[u]; mu.Activation != act || mu.Recompute != re {
						t.Errorf("experts.%d: keeps %d B, rebuilds %d B; want %d, %d", i, mu.Activation, mu.Recompute, act, re)
					}
					// The unit's backward all-to-alls of the first micro-step:
					// the rerun dispatch and combine (when it reruns) and
					// the combine's gradient precede its backward compute,
					// the dispatch's gradient follows it.
					bwd, before, after := int32(-1), 0, 0
					var a2as []int32
					for j, tk := range r.Schedule.Tasks {
						if tk.Unit != u || tk.Micro != 0 {
							continue
						}
						switch {
						case tk.Kind == Backward:
							bwd = int32(j)
						case tk.Kind == AllToAll && tk.Phase == PhaseBackwardA2A:
							a2as = append(a2as, int32(j))
						}
					}
					anc := ancestors(r.Schedule, bwd)
					for _, a := range a2as {
						if anc[a] {
							before++
						} else if ancestors(r.Schedule, a)[bwd] {
							after++
						}
					}
					wantBefore := 1
					if rerun && policy != "op" { // op reruns no all-to-all
						wantBefore = 3
					}
					if before != wantBefore || after != 1 || len(a2as) != wantBefore+1 {
						t.Errorf("experts.%d: %d backward all-to-alls, %d before its backward compute and %d after; want %d and 1", i, len(a2as), before, after, wantBefore)
					}
				}
			})
		}
	}
}

// unitNamed is the index of s's unit name.
func unitNamed(t *testing.T, s *scenarios.Scenario, name string) int {
	t.Helper()
	for u, l := range s.Model.LayerList {
		if l.Name == name {
			return u
		}
	}
	t.Fatalf("no unit %q", name)
	return -1
}

// ancestors marks the tasks task t waits for, directly or through others.
func ancestors(sc *Schedule, t int32) map[int32]bool {
	seen := map[int32]bool{}
	stack := []int32{t}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, p := range append(append([]int32(nil), sc.Tasks[x].After...), sc.Tasks[x].AfterStart...) {
			if !seen[p] {
				seen[p] = true
				stack = append(stack, p)
			}
		}
	}
	return seen
}

// checkAllToAlls fails unless the replay has a forward and a backward
// all-to-all phase, of fwd and bwd all-to-alls of each bytes.
func checkAllToAlls(t *testing.T, label string, r *Result, fwd, bwd int, each int64) {
	t.Helper()
	want := map[Phase]int{PhaseForwardA2A: fwd, PhaseBackwardA2A: bwd}
	seen := map[Phase]bool{}
	for _, ph := range r.Phases {
		n, ok := want[ph.Phase]
		if !ok {
			continue
		}
		seen[ph.Phase] = true
		if ph.Collectives != n || ph.Logical != int64(n)*each {
			t.Errorf("%s%s: %d all-to-alls of %d B, want %d of %d B", label, ph.Phase, ph.Collectives, ph.Logical, n, int64(n)*each)
		}
	}
	for ph := range want {
		if !seen[ph] {
			t.Errorf("%sno %s phase", label, ph)
		}
	}
}
