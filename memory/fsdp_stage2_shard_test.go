package memory

import (
	"fmt"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestFSDPStage2ShardPadding: FSDP's ZeRO-2 holds the rank's padded shard
// of the flat buffer at rest, its real elements as params and the rest as
// padding (FSDPStage2). By hand for one bf16 layer of 10 parameters on 4
// ranks (communication.padding toy: the bucket is padded up to a multiple
// of the shard count, 12, so each rank owns S = 3 elements; ranks 0–2 hold
// 3 real ones, rank 3 holds element 9 alone, R = 1):
//
//	rank 0: params 3·2 = 6 B, padding 0
//	rank 3: params 1·2 = 2 B, padding (3−1)·(2 params + 4 master + 4 + 4
//	        Adam) = 28 B
//
// and both at rest 3·(2+4+4+4) = 42 B: FSDP's ZeRO-2 keeps no gradients
// and no staging bucket between steps, as its ZeRO-3 (unitGrads). Dropping
// the parameter shard's padding would put rank 3 at 26 B of padding, 40 B
// at rest.
func TestFSDPStage2ShardPadding(t *testing.T) {
	y := "version: 1\ncluster: {nodes: 1, gpus_per_node: 4, gpu: A100-80GB}\n" +
		"model:\n  kind: mlp\n  hidden: 64\n  groups: [{name: dense, precision: bf16}]\n  layer_list:\n    - {name: l0, params: 10, fwd: 1ms, bwd: 2ms}\n" +
		"parallelism: {dp: 4, zero_stage: 2}\ncommunication: {boundary: fsdp1, bucket_size: 40MB}\n"
	s, err := scenarios.Load("pad.yaml", []byte(y), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		rank            int
		params, padding int64
	}{{0, 6, 0}, {3, 2, 28}} {
		r := mustAnalyze(t, s, Options{Rank: c.rank})
		if p, pad := r.Component(CompParams).AtRest, r.Component(CompPadding).AtRest; p != c.params || pad != c.padding || r.AtRest != 42 {
			t.Errorf("rank %d: params %d B, padding %d B, at rest %d B; want %d, %d, 42", c.rank, p, pad, r.AtRest, c.params, c.padding)
		}
	}
}

// TestFSDPStage2OneRank: a group sharded over one rank holds its
// parameters whole, so FSDP's ZeRO-2 gathers nothing (timeline.go's
// unitInfos: Spec.Shards > 1). By hand for two bf16 layers of 1M and 2M
// parameters on one GPU: no gathered-params event, UnitGather 0, and at
// rest params 3M·2 = 6 MB, fp32 master 12 MB, Adam 24 MB = 42,000,000 B
// (no gradients and no staging bucket between steps, as at ZeRO-3).
func TestFSDPStage2OneRank(t *testing.T) {
	y := "version: 1\ncluster: {nodes: 1, gpus_per_node: 1, gpu: H100-80GB}\n" +
		"model:\n  kind: mlp\n  hidden: 64\n  groups: [{name: dense, precision: bf16}]\n  layer_list:\n" +
		"    - {name: l0, params: 1000000, fwd: 1ms, bwd: 2ms}\n    - {name: l1, params: 2000000, fwd: 1ms, bwd: 2ms}\n" +
		"parallelism: {dp: 1, zero_stage: 2}\ncommunication: {boundary: fsdp2, bucket_size: 40MB}\n"
	s, err := scenarios.Load("one.yaml", []byte(y), nil)
	if err != nil {
		t.Fatal(err)
	}
	r := mustAnalyze(t, s, Options{})
	if r.AtRest != 42_000_000 {
		t.Errorf("at rest %d B, want 42000000", r.AtRest)
	}
	// Two units, one per layer of layer_list (l0, l1): the checks below
	// run over them, so an empty list would pass them vacuously.
	if len(r.Units) != 2 {
		t.Fatalf("%d units, want 2 (l0, l1)", len(r.Units))
	}
	for u := range r.Units {
		if g := r.UnitGather(u); g != 0 {
			t.Errorf("unit %d gathers %d B on one rank, want 0", u, g)
		}
	}
	tl := r.Timeline()
	if len(tl) == 0 {
		t.Fatal("empty timeline: no event to check")
	}
	for _, e := range tl {
		if e.Component == CompGathered && e.Delta != 0 {
			t.Errorf("gathered-params event %+v on one rank", e)
		}
	}
}

// TestFSDPStage2FP8Gather: FSDP's ZeRO-2 under torchao's float8 all-gather
// (training.fp8 torchao, fp8_all_gather default true) gathers a block's
// weights at one byte per parameter, as stage 3 does; the root group
// (embedding, final norm, lm_head: FSDP2's root, gathered at the
// embedding's forward) stays bf16. By hand for a Llama block of hidden 64,
// 4 heads of 16, ffn 128: q, k, v, o 4·64² = 16,384, the MLP 3·64·128 =
// 24,576, two norms 128: 41,088 parameters, 41,088 B in fp8 (82,176 B in
// bf16 with fp8_all_gather false); the root group 1000·64 + 64 + 64·1000
// = 128,064 parameters, 256,128 B.
func TestFSDPStage2FP8Gather(t *testing.T) {
	for _, c := range []struct {
		training string
		block    int64
	}{{"{fp8: torchao}", 41_088}, {"{fp8: torchao, fp8_all_gather: false}", 82_176}} {
		y := "version: 1\ncluster: {nodes: 1, gpus_per_node: 4, gpu: H100-80GB}\n" +
			"model: {kind: transformer, arch: llama, hidden: 64, layers: 1, heads: 4, kv_heads: 4, ffn: 128, vocab: 1000, seq_len: 16}\n" +
			"parallelism: {dp: 4, zero_stage: 2}\ncommunication: {boundary: fsdp2}\ntraining: " + c.training + "\n"
		s, err := scenarios.Load("fp8.yaml", []byte(y), nil)
		if err != nil {
			t.Fatal(err)
		}
		r := mustAnalyze(t, s, Options{})
		var got []string
		for _, e := range r.Timeline() {
			if (e.Component == CompGathered || e.Component == CompFP8) && e.Delta != 0 {
				got = append(got, fmt.Sprintf("%s%d%+d", map[Phase]string{PhaseForward: "F", PhaseBackward: "B"}[e.Phase], e.Unit, e.Delta))
			}
		}
		want := fmt.Sprintf("F0+256128 F1+%d B1-%d B0-256128", c.block, c.block)
		if g := strings.Join(got, " "); g != want {
			t.Errorf("%s: gathered params %q, want %q", c.training, g, want)
		}
	}
}

// TestForwardGatherUnit: at FSDP's ZeRO-2 unit v is gathered in the
// forward step of unit v − prefetch_depth (1 by default), at least 0;
// out of range, and at DeepSpeed's stage 2 (nothing gathered in forward),
// v itself (fsdpStage2MLP's four units).
func TestForwardGatherUnit(t *testing.T) {
	for _, c := range []struct {
		boundary string
		want     string // v = -1 … 4
	}{{"fsdp1", "-1 0 0 1 2 4"}, {"fsdp2", "-1 0 0 1 2 4"}, {"deepspeed", "-1 0 1 2 3 4"}} {
		s, err := scenarios.Load("fsdp-stage2.yaml", []byte(fsdpStage2MLP(c.boundary)), nil)
		if err != nil {
			t.Fatal(err)
		}
		r := mustAnalyze(t, s, Options{})
		var got []string
		for v := -1; v <= 4; v++ {
			got = append(got, fmt.Sprint(r.ForwardGatherUnit(v)))
		}
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("%s: ForwardGatherUnit(-1…4) = %s, want %s", c.boundary, g, c.want)
		}
	}
}

// TestOnlyInReducingMicroStepGathered: under FSDP1's no_sync the units
// gathered from the micro-step before are held in every micro-step (the
// forward's +ΣGather at unit 0 is the earlier micro-steps' too); only
// the post-backward's four frees are the reducing micro-step's
// (_should_free_in_backward is false while not syncing). FSDP2 reshards
// after every backward: none of its gathered-params events is.
func TestOnlyInReducingMicroStepGathered(t *testing.T) {
	for _, c := range []struct {
		boundary string
		want     string
	}{{"fsdp1", "F0+200:false B3-80:true B2-60:true B1-40:true B0-20:true"},
		{"fsdp2", "F0+20:false F1+40:false F2+60:false F3+80:false B3-80:false B2-60:false B1-40:false B0-20:false"}} {
		s, err := scenarios.Load("fsdp-stage2.yaml", []byte(fsdpStage2MLP(c.boundary)), []string{"training.grad_accum=2", "training.grad_sync=last"})
		if err != nil {
			t.Fatal(err)
		}
		r := mustAnalyze(t, s, Options{})
		var got []string
		for _, e := range r.Timeline() {
			if e.Component == CompGathered && e.Delta != 0 {
				got = append(got, fmt.Sprintf("%s%d%+d:%v", map[Phase]string{PhaseForward: "F", PhaseBackward: "B"}[e.Phase], e.Unit, e.Delta/1_000_000, r.OnlyInReducingMicroStep(e)))
			}
		}
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("%s: %q, want %q", c.boundary, g, c.want)
		}
	}
}

// TestFSDPStage2GatherZerosimOnly: the seeds' conventions keep stage 2's
// whole 16-bit parameters (model.fsdpStage2), so no unit of theirs
// gathers (UnitGather 0) even under an FSDP boundary; convention zerosim
// gathers each unit in bf16. By hand for two Llama blocks of hidden 64, 4
// heads, ffn 128 (41,088 parameters each, 82,176 B) and FSDP2's root
// group of embedding and lm_head (1000·64 each, 128,000 B) and the final
// norm (64, 128 B), listed per unit.
func TestFSDPStage2GatherZerosimOnly(t *testing.T) {
	y := "version: 1\ncluster: {nodes: 1, gpus_per_node: 4, gpu: H100-80GB}\n" +
		"model: {kind: transformer, arch: llama, hidden: 64, layers: 2, heads: 4, kv_heads: 4, ffn: 128, vocab: 1000, seq_len: 16}\n" +
		"parallelism: {dp: 4, zero_stage: 2}\ncommunication: {boundary: fsdp2}\n"
	s, err := scenarios.Load("conv.yaml", []byte(y), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		conv Convention
		want string
	}{{ConventionZerosim, "128000 82176 82176 128 128000"}, {ConventionSeed000, "0 0 0 0 0"}, {ConventionSeed002, "0 0 0 0 0"}} {
		r := mustAnalyze(t, s, Options{Convention: c.conv})
		var got []string
		for u := range r.Units {
			got = append(got, fmt.Sprint(r.UnitGather(u)))
		}
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("%s: UnitGather per unit %s, want %s", c.conv, g, c.want)
		}
	}
}
