package memory

import (
	"fmt"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// fsdpStage2MLP is four bf16 MLP layers of 10M, 20M, 30M and 40M
// parameters on one node of 4 GPUs at ZeRO stage 2, reduced in buckets of
// 40 MB (20M bf16 gradient elements), under communication.boundary
// boundary.
func fsdpStage2MLP(boundary string) string {
	layers := ""
	for i := range 4 {
		layers += fmt.Sprintf("    - {name: l%d, params: %d, fwd: 1ms, bwd: 2ms}\n", i, (i+1)*10_000_000)
	}
	return "version: 1\ncluster: {nodes: 1, gpus_per_node: 4, gpu: A100-80GB}\n" +
		"model:\n  kind: mlp\n  hidden: 64\n  groups: [{name: dense, precision: bf16}]\n  layer_list:\n" + layers +
		"parallelism: {dp: 4, zero_stage: 2}\ncommunication: {boundary: " + boundary + ", bucket_size: 40MB}\n"
}

// TestFSDPStage2ParamLifetime: FSDP's ZeRO-2 (FSDP1 SHARD_GRAD_OP, FSDP2
// fully_shard(reshard_after_forward=False); FSDPStage2 cites both) holds
// only the parameter shard at rest, gathers each unit in its forward
// (one unit ahead of the GPU, prefetch_depth 1, as at stage 3: zero's
// TestFSDPStage2ReplayParamLifetime checks the times), keeps it through
// the forward, and frees it in its post-backward; its gradients are its
// stage 3's (shardsPerUnit): each unit's unsharded gradient from its
// backward to its reduce-scatter, the sharded gradients from there to the
// optimizer step, none at rest. DeepSpeed's ZeRO-2 and the seeds'
// conventions keep whole 16-bit parameters and a persistent gradient
// shard. The figures, by hand from fsdpStage2MLP (P = 100M parameters,
// S = 4 ranks, the rank's shard R = P/S = 25M, no padding: 100M and every
// 20M bucket divide by 4):
//
//	params       shard R·2             =  50,000,000 B (DeepSpeed: P·2 = 200,000,000)
//	grads        none at rest          =           0   (DeepSpeed: shard R·2 = 50,000,000)
//	fp32 master  4R                    = 100,000,000
//	adam m, v    4R each               = 200,000,000
//	grad buckets none                  =           0   (DeepSpeed: 2 in flight · 20M · 2 = 80,000,000)
//	at rest                            = 350,000,000 B (DeepSpeed: 630,000,000)
//
// The units gathered in forward are 10M·2, 20M·2, 30M·2, 40M·2 = 20, 40,
// 60, 80 MB, in order, and freed in reverse in backward; the forward ends
// with every unit gathered, 350M + P·2 = 550,000,000 B. Unit 3's backward
// then makes its bf16 gradient, 40M·2 = 80 MB, beside them: the step's
// peak, 630,000,000 B. Its post-backward reshards it (−80 MB), and, as at
// stage 3, one reduce-scatter is in flight beside the next backward
// (walkLags): unit 3's starts as unit 2's backward does, making its bf16
// shard, 10M·2 = 20 MB (B3+20), and frees its unsharded gradient when it
// ends, as unit 1's starts (B3-80 after B2+60). Unit 2's backward so
// reaches 350 + 120 (units 0–2 gathered) + 80 + 20 + 60 = 630 MB again,
// not more. The optimizer frees the four shards, R·2 = 50 MB (O-50), and
// adds its fp32 copy of them (grad.float()), 4R = 100 MB, to 350M + 50M:
// 500 MB. (DeepSpeed: nothing gathered, its step peak the optimizer's
// 630M + 4R = 730,000,000.)
//
// Under no_sync (grad_accum 2, grad_sync last) every rank also holds the
// unsharded gradients, P·2 = 200,000,000 B (bf16: FSDP1's .grad, FSDP2's
// reduce_dtype = param_dtype here), from the walk's forward start (F0+200);
// each unit's new gradient is added into them as its backward ends
// (B3+80 B3-80), and its reduce-scatter frees the unit's held one (B3-80
// after the next unit's gradient). FSDP1 kept every unit gathered from the
// earlier micro-step (_should_free_in_backward is false while not
// syncing): all 200 MB at the forward's start, and the four post-backward
// frees are the reducing micro-step's only; FSDP2 reshards after every
// backward and gathers unit by unit again. Both peak at unit 3's new
// gradient, 350M + 200M + 200M + 80M = 830,000,000 B.
//
// training.shard_dtype fp32 (FSDP's MixedPrecision: the shard is the fp32
// parameter the optimizer steps, fp32Shard) makes the params R·4 =
// 100,000,000 B and drops the master: at rest 100 + 200 = 300,000,000 B,
// the forward 500 MB, unit 3's gradient 580 MB. The reduce-scattered
// shards are fp32, 10M·4 = 40 MB for unit 3 (B3+40): unit 2's backward
// peaks the step at 300 + 120 + 80 + 40 + 60 = 600,000,000 B. R·4 = 100
// MB of shards at the optimizer (O-100), which casts nothing: its
// temporaries are exp_avg_sq.sqrt() and its quotient of the largest
// unit's shard, 2 · 10M · 4 = 80 MB (300 + 100 + 80 = 480 MB). With
// reduce_dtype fp32 too (torchtitan's MixedPrecisionPolicy), unit 3's
// reduce-scatter first copies its bf16 gradient into an fp32 input,
// 40M·4 = 160 MB (the grad buckets' peak), and frees the bf16 one
// (B3+80 B3-80 B3+40); unit 2's backward peaks the step at 300 + 120 +
// 160 + 40 + 60 = 680,000,000 B.
//
// Outside FSDP (DeepSpeed) and under the seeds' conventions shard_dtype is
// not read at stage 2: their figures stay. Seed 002's convention (model
// states only, no buckets) keeps params P·2 for FSDP1 too: 200 + 50 + 100 +
// 200 = 550,000,000 B at rest, its peak the optimizer's 550M + 4R =
// 650,000,000 B.
func TestFSDPStage2ParamLifetime(t *testing.T) {
	const mb = 1_000_000
	const each = "F0+20 F1+40 F2+60 F3+80 B3-80 B2-60 B1-40 B0-20" // MB, each unit on its own
	const grads = "B3+80 B3+20 B2+60 B3-80 B2+15 B1+40 B2-60 B1+10 B0+20 B1-40 B0+5 B0-20 O-50"
	const heldGrads = "F0+200 B3+80 B3-80 B3+20 B2+60 B2-60 B3-80 B2+15 B1+40 B1-40 B2-60 B1+10 B0+20 B0-20 B1-40 B0+5 B0-20 O-50"
	const fp32Grads = "B3+80 B3+40 B2+60 B3-80 B2+30 B1+40 B2-60 B1+20 B0+20 B1-40 B0+10 B0-20 O-100"
	noSync := []string{"training.grad_accum=2", "training.grad_sync=last"}
	fp32 := []string{"training.shard_dtype=fp32"}
	fp32Reduce := []string{"training.shard_dtype=fp32", "training.reduce_dtype=fp32"}
	for _, c := range []struct {
		name      string
		boundary  string
		sets      []string
		conv      Convention
		params    int64  // at rest
		atRest    int64  // total
		peak      int64  // the step's
		peakPhase Phase  // where it is
		peakUnit  int    // and at which unit (-1: the optimizer)
		gathered  string // the gathered-params events: phase (F, B), unit, MB
		grads     string // the gradient events: phase (F, B, O), unit, MB
		buckets   int64  // the grad buckets' peak
		stepTemp  int64  // the optimizer's temporaries
		keptFrees int    // post-backward frees the earlier micro-steps lack
	}{
		{"fsdp1 SHARD_GRAD_OP", "fsdp1", nil, ConventionZerosim, 50 * mb, 350 * mb, 630 * mb, PhaseBackward, 3, each, grads, 0, 100 * mb, 0},
		{"fsdp2 reshard_after_forward=False", "fsdp2", nil, ConventionZerosim, 50 * mb, 350 * mb, 630 * mb, PhaseBackward, 3, each, grads, 0, 100 * mb, 0},
		{"fsdp1 no_sync", "fsdp1", noSync, ConventionZerosim, 50 * mb, 350 * mb, 830 * mb, PhaseBackward, 3,
			"F0+200 B3-80 B2-60 B1-40 B0-20", heldGrads, 0, 100 * mb, 4},
		{"fsdp2 no_sync", "fsdp2", noSync, ConventionZerosim, 50 * mb, 350 * mb, 830 * mb, PhaseBackward, 3, each, heldGrads, 0, 100 * mb, 0},
		{"fsdp2 shard_dtype fp32", "fsdp2", fp32, ConventionZerosim, 100 * mb, 300 * mb, 600 * mb, PhaseBackward, 2, each, fp32Grads, 0, 80 * mb, 0},
		{"fsdp1 shard_dtype fp32", "fsdp1", fp32, ConventionZerosim, 100 * mb, 300 * mb, 600 * mb, PhaseBackward, 2, each, fp32Grads, 0, 80 * mb, 0},
		{"fsdp2 shard_dtype fp32 reduce_dtype fp32", "fsdp2", fp32Reduce, ConventionZerosim, 100 * mb, 300 * mb, 680 * mb, PhaseBackward, 2, each,
			"B3+80 B3-80 B3+40 B2+60 B2-60 B2+30 B1+40 B1-40 B1+20 B0+20 B0-20 B0+10 O-100", 160 * mb, 80 * mb, 0},
		{"deepspeed ZeRO-2", "deepspeed", nil, ConventionZerosim, 200 * mb, 630 * mb, 730 * mb, PhaseOptimizer, -1, "", "", 80 * mb, 100 * mb, 0},
		{"deepspeed ZeRO-2 shard_dtype fp32 unread", "deepspeed", fp32, ConventionZerosim, 200 * mb, 630 * mb, 730 * mb, PhaseOptimizer, -1, "", "", 80 * mb, 100 * mb, 0},
		{"fsdp1 seed 002", "fsdp1", nil, ConventionSeed002, 200 * mb, 550 * mb, 650 * mb, PhaseOptimizer, -1, "", "", 0, 100 * mb, 0},
		{"fsdp1 seed 002 shard_dtype fp32 unread", "fsdp1", fp32, ConventionSeed002, 200 * mb, 550 * mb, 650 * mb, PhaseOptimizer, -1, "", "", 0, 100 * mb, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := scenarios.Load("fsdp-stage2.yaml", []byte(fsdpStage2MLP(c.boundary)), c.sets)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Analyze(s, Options{Convention: c.conv})
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Component(CompParams).AtRest; got != c.params {
				t.Errorf("params at rest %d B, want %d", got, c.params)
			}
			if r.AtRest != c.atRest || r.Peak != c.peak || r.PeakPhase != c.peakPhase || r.PeakUnit != c.peakUnit {
				t.Errorf("at rest %d B, peak %d B in %s at unit %d; want %d, %d in %s at unit %d", r.AtRest, r.Peak, r.PeakPhase, r.PeakUnit, c.atRest, c.peak, c.peakPhase, c.peakUnit)
			}
			if got := r.Component(CompGradBuckets).Peak; got != c.buckets {
				t.Errorf("grad buckets' peak %d B, want %d", got, c.buckets)
			}
			if got := r.Component(CompStepTemp).Peak; got != c.stepTemp {
				t.Errorf("optimizer temporaries %d B, want %d", got, c.stepTemp)
			}
			var gathered, gradEvs []string
			kept := 0
			phase := map[Phase]string{PhaseForward: "F", PhaseBackward: "B", PhaseOptimizer: "O"}
			for _, e := range r.Timeline() {
				if e.Delta == 0 {
					continue
				}
				switch e.Component {
				case CompGathered:
					gathered = append(gathered, fmt.Sprintf("%s%d%+d", phase[e.Phase], e.Unit, e.Delta/mb))
					if e.Op == OpRelease && r.OnlyInReducingMicroStep(e) {
						kept++
					}
				case CompGrads:
					u := fmt.Sprint(e.Unit)
					if e.Phase == PhaseOptimizer {
						u = ""
					}
					gradEvs = append(gradEvs, fmt.Sprintf("%s%s%+d", phase[e.Phase], u, e.Delta/mb))
				}
			}
			if g := strings.Join(gathered, " "); g != c.gathered {
				t.Errorf("gathered params %q, want %q", g, c.gathered)
			}
			if g := strings.Join(gradEvs, " "); g != c.grads {
				t.Errorf("gradients %q, want %q", g, c.grads)
			}
			if kept != c.keptFrees {
				t.Errorf("%d post-backward frees only in the reducing micro-step, want %d", kept, c.keptFrees)
			}
		})
	}
}
