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
// the forward, and frees it in its post-backward; DeepSpeed's ZeRO-2 and
// the seeds' conventions keep whole 16-bit parameters. The figures, by
// hand from fsdpStage2MLP (P = 100M parameters, S = 4 ranks, the rank's
// shard R = P/S = 25M, no padding: 100M and every 20M bucket divide by 4):
//
//	params       shard R·2             =  50,000,000 B (DeepSpeed: P·2 = 200,000,000)
//	grads        shard R·2             =  50,000,000
//	fp32 master  4R                    = 100,000,000
//	adam m, v    4R each               = 200,000,000
//	grad buckets 2 in flight · 20M · 2 =  80,000,000
//	at rest                            = 480,000,000 B (DeepSpeed: 630,000,000)
//
// The units gathered in forward are 10M·2, 20M·2, 30M·2, 40M·2 = 20, 40,
// 60, 80 MB, in order, and freed in reverse in backward; the forward
// peaks at the last unit with every unit gathered, 480M + P·2 =
// 680,000,000 B (DeepSpeed: nothing gathered, its step peak the
// optimizer's 630M + 4R fp32 grad copy = 730,000,000). Under no_sync
// (grad_accum 2, grad_sync last) every rank also holds the unsharded
// gradients, P·2 = 200,000,000 B (bf16: FSDP1's .grad, FSDP2's
// reduce_dtype = param_dtype here), from the walk's forward start. FSDP1
// kept every unit gathered from the earlier micro-step
// (_should_free_in_backward is false while not syncing): all 200 MB at the
// forward's start, and the four post-backward frees are the reducing
// micro-step's only; FSDP2 reshards after every backward and gathers
// unit by unit again. Both peak at 480M + 200M + 200M = 880,000,000 B.
// Seed 002's convention (model states only, no buckets) keeps params P·2
// for FSDP1 too: 200 + 50 + 100 + 200 = 550,000,000 B at rest, its peak
// the optimizer's 550M + 4R = 650,000,000 B.
func TestFSDPStage2ParamLifetime(t *testing.T) {
	const mb = 1_000_000
	const each = "F0+20 F1+40 F2+60 F3+80 B3-80 B2-60 B1-40 B0-20" // MB, each unit on its own
	for _, c := range []struct {
		name      string
		boundary  string
		sets      []string
		conv      Convention
		params    int64  // at rest
		atRest    int64  // total
		peak      int64  // the step's
		peakPhase Phase  // where it is
		gathered  string // the gathered-params events: phase (F, B), unit, MB
		keptFrees int    // post-backward frees the earlier micro-steps lack
	}{
		{"fsdp1 SHARD_GRAD_OP", "fsdp1", nil, ConventionZerosim, 50 * mb, 480 * mb, 680 * mb, PhaseForward, each, 0},
		{"fsdp2 reshard_after_forward=False", "fsdp2", nil, ConventionZerosim, 50 * mb, 480 * mb, 680 * mb, PhaseForward, each, 0},
		{"fsdp1 no_sync", "fsdp1", []string{"training.grad_accum=2", "training.grad_sync=last"}, ConventionZerosim, 50 * mb, 480 * mb, 880 * mb, PhaseForward,
			"F0+200 B3-80 B2-60 B1-40 B0-20", 4},
		{"fsdp2 no_sync", "fsdp2", []string{"training.grad_accum=2", "training.grad_sync=last"}, ConventionZerosim, 50 * mb, 480 * mb, 880 * mb, PhaseForward, each, 0},
		{"deepspeed ZeRO-2", "deepspeed", nil, ConventionZerosim, 200 * mb, 630 * mb, 730 * mb, PhaseOptimizer, "", 0},
		{"fsdp1 seed 002", "fsdp1", nil, ConventionSeed002, 200 * mb, 550 * mb, 650 * mb, PhaseOptimizer, "", 0},
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
			if r.AtRest != c.atRest || r.Peak != c.peak || r.PeakPhase != c.peakPhase {
				t.Errorf("at rest %d B, peak %d B in %s; want %d, %d in %s", r.AtRest, r.Peak, r.PeakPhase, c.atRest, c.peak, c.peakPhase)
			}
			var got []string
			kept := 0
			for _, e := range r.Timeline() {
				if e.Component != CompGathered || e.Delta == 0 {
					continue
				}
				got = append(got, fmt.Sprintf("%s%d%+d", map[Phase]string{PhaseForward: "F", PhaseBackward: "B"}[e.Phase], e.Unit, e.Delta/mb))
				if e.Op == OpRelease && r.OnlyInReducingMicroStep(e) {
					kept++
				}
			}
			if g := strings.Join(got, " "); g != c.gathered {
				t.Errorf("gathered params %q, want %q", g, c.gathered)
			}
			if kept != c.keptFrees {
				t.Errorf("%d post-backward frees only in the reducing micro-step, want %d", kept, c.keptFrees)
			}
		})
	}
}
