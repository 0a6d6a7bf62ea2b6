package memory

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

func ptr[T any](v T) *T { return &v }

func tensor(name string, shape ...int64) scenarios.Tensor {
	return scenarios.Tensor{Name: name, Shape: shape}
}

func pgroup(name, precision string) scenarios.ParamGroup {
	return scenarios.ParamGroup{Name: name, Precision: scenarios.DType(precision)}
}

// seed002Scenario is seed 002's 260-parameter tiny transformer on N = 2:
// LN1 8, attention 64, LN2 8, FFN 148, output 32.
func seed002Scenario(stage, prefetch int) *scenarios.Scenario {
	s := &scenarios.Scenario{
		Version: 1, Name: "seed002",
		Cluster:     scenarios.Cluster{Nodes: 1, GPUsPerNode: 2},
		Parallelism: scenarios.Parallelism{DP: 2, Stage: stage},
		Model: scenarios.Model{Kind: "tiny-transformer", LayerList: []scenarios.Layer{
			{Name: "LN1", Params: 8, Tensors: []scenarios.Tensor{tensor("gamma", 4), tensor("beta", 4)}},
			{Name: "attention", Params: 64, Tensors: []scenarios.Tensor{tensor("wq", 4, 4), tensor("wk", 4, 4), tensor("wv", 4, 4), tensor("wo", 4, 4)}},
			{Name: "LN2", Params: 8, Tensors: []scenarios.Tensor{tensor("gamma", 4), tensor("beta", 4)}},
			{Name: "FFN", Params: 148, Tensors: []scenarios.Tensor{tensor("w1", 4, 16), tensor("b1", 16), tensor("w2", 16, 4), tensor("b2", 4)}},
			{Name: "output", Params: 32, Tensors: []scenarios.Tensor{tensor("w_vocab", 4, 8)}},
		}},
		Communication: scenarios.Communication{PrefetchDepth: &prefetch},
	}
	return resolved(s)
}

// seed000Scenario is seed 000's 10-layer residual MLP, H = 4096, on N = 4:
// 1,342,382,080 parameters.
func seed000Scenario(stage int) *scenarios.Scenario {
	const h = 4096
	s := &scenarios.Scenario{
		Version: 1, Name: "seed000",
		Cluster:     scenarios.Cluster{Nodes: 1, GPUsPerNode: 4, GPUMemory: 80 * units.GiB},
		Parallelism: scenarios.Parallelism{DP: 4, Stage: stage},
		Model:       scenarios.Model{Kind: "mlp", Hidden: h, Layers: 10},
		Training:    scenarios.Training{MicroBatch: 8},
		Memory:      scenarios.MemoryConfig{Activations: ptr(true)},
	}
	for i := range 10 {
		s.Model.LayerList = append(s.Model.LayerList, scenarios.Layer{
			Name: fmt.Sprintf("layers.%d", i), Params: 8*h*h + 5*h,
			Tensors: []scenarios.Tensor{
				tensor("fc1.weight", 4*h, h), tensor("fc1.bias", 4*h),
				tensor("fc2.weight", h, 4*h), tensor("fc2.bias", h),
			},
		})
	}
	return resolved(s)
}

func bigModel(params int64, dp, nodes, gpn, stage int) *scenarios.Scenario {
	return resolved(&scenarios.Scenario{
		Version: 1, Name: fmt.Sprintf("%d-params", params),
		Cluster:     scenarios.Cluster{Nodes: nodes, GPUsPerNode: gpn},
		Parallelism: scenarios.Parallelism{DP: dp, Stage: stage},
		Model:       scenarios.Model{Kind: "generic", Params: units.Count(params), LayerList: []scenarios.Layer{{Name: "model", Params: units.Count(params)}}},
	})
}

func mustAnalyze(t *testing.T, s *scenarios.Scenario, opt Options) *Report {
	t.Helper()
	r, err := Analyze(s, opt)
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, s.Name, r)
	return r
}

// TestSeed002Table reproduces seed 002's "Memory per GPU (bytes) — 260
// Parameters, 2 GPUs" table with the seed-002 convention.
func TestSeed002Table(t *testing.T) {
	var totals []string
	for _, tc := range []struct {
		stage                       int
		params, grads, optim, total int64
	}{
		{0, 520, 520, 3120, 4160},
		{1, 520, 520, 1560, 2600},
		{2, 520, 260, 1560, 2340},
		{3, 260, 260, 1560, 2080},
	} {
		r := mustAnalyze(t, seed002Scenario(tc.stage, 1), Options{Convention: ConventionSeed002})
		got := [4]int64{r.Component(CompParams).AtRest, r.Component(CompGrads).AtRest, r.Optimizer(), r.AtRest}
		if want := [4]int64{tc.params, tc.grads, tc.optim, tc.total}; got != want {
			t.Errorf("stage %d: params/grads/optimizer/total %v, want %v", tc.stage, got, want)
		}
		if r.Component(CompPadding).AtRest != 0 {
			t.Errorf("stage %d: padding %d, want 0 (260 divides by 2)", tc.stage, r.Component(CompPadding).AtRest)
		}
		totals = append(totals, thousands(r.AtRest))
	}
	golden.CheckQuotes(t, "../README.md", "memory's seed 002 table (TestSeed002Table)",
		"No ZeRO / ZeRO-1 / ZeRO-2 / ZeRO-3 give "+strings.Join(totals, " / ")+" B, as the seed")
}

// TestSeed002ZeRO3 checks seed 002's ZeRO-3 walkthrough. The seed draws the
// flat vector "split at index 130" (GPU-0 owns LN1 … half of W₁); zerosim
// shards every FSDP unit separately (each unit's flat parameter split in
// two: LN1 4+4, attention 32+32, …), as FSDP does. Both give each GPU 130
// parameters, so the per-GPU totals agree: at rest 260 + 3·520 = 1,820 B.
func TestSeed002ZeRO3(t *testing.T) {
	r := mustAnalyze(t, seed002Scenario(3, 0), Options{})
	if r.AtRest != 1820 {
		t.Errorf("ZeRO-3 at rest %d B, want 1820", r.AtRest)
	}
	if g := r.Groups[0]; g.RankNumel != 130 || g.ShardElems != 130 {
		t.Errorf("rank 0 owns %d real of %d shard elements, want 130 130", g.RankNumel, g.ShardElems)
	}
	wantGather := []int64{16, 128, 16, 296, 64}
	for u, w := range wantGather {
		if got := r.UnitGather(u); got != w {
			t.Errorf("unit %d (%s) gather %d B, want %d", u, r.Units[u].Name, got, w)
		}
	}
	if g := r.Component(CompGathered); g.Peak != 296 || g.PeakPhase != PhaseForward {
		t.Errorf("gathered peak %d in %v, want 296 (FFN) in forward", g.Peak, g.PeakPhase)
	}
	// With prefetch depth 1 the FFN and output are gathered together.
	r1 := mustAnalyze(t, seed002Scenario(3, 1), Options{})
	if g := r1.Component(CompGathered); g.Peak != 296+64 {
		t.Errorf("prefetch 1: gathered peak %d, want 360", g.Peak)
	}
	// Forward all-gather volume = sum of the gathers = 520 B.
	var sum int64
	for u := range r.Units {
		sum += r.UnitGather(u)
	}
	if sum != 520 {
		t.Errorf("sum of unit gathers %d, want 520", sum)
	}
}

// TestSeed000 reproduces seed 000's "Baseline (1 GPU)" vs "ZeRO-1 (4 GPUs)"
// table. The seed prints "17.50 GB" and "8.75 GB": the figures are GiB,
// rounded (18,793,349,120 B = 17.5027 GiB); likewise "15.00 GB → 3.75 GB"
// for the optimizer state (15.0023 → 3.7506 GiB).
func TestSeed000(t *testing.T) {
	const P = 1_342_382_080
	base := mustAnalyze(t, seed000Scenario(0), Options{Convention: ConventionSeed000})
	z1 := mustAnalyze(t, seed000Scenario(1), Options{Convention: ConventionSeed000})
	if base.Params != P {
		t.Fatalf("params %d, want %d", base.Params, P)
	}
	for _, tc := range []struct {
		name string
		got  int64
		want int64
		gib  string
	}{
		{"baseline total", base.AtRest, 18_793_349_120, "17.50 GiB"},
		{"zero1 total", z1.AtRest, 9_396_674_560, "8.75 GiB"},
		{"baseline optimizer", base.Optimizer(), 12 * P, "15.00 GiB"},
		{"zero1 optimizer", z1.Optimizer(), 3 * P, "3.75 GiB"},
		{"bf16 params", z1.Component(CompParams).AtRest, 2 * P, "2.50 GiB"},
		{"zero1 grad_buffer", z1.Component(CompGrads).AtRest, 2 * P, "2.50 GiB"},
		{"baseline grads", base.Component(CompGrads).AtRest, 0, "0 B"},
		{"zero1 master", z1.Component(CompMaster).AtRest, P, "1.25 GiB"},
	} {
		if tc.got != tc.want || units.Bytes(tc.got).IEC() != tc.gib {
			t.Errorf("%s: %d B (%s), want %d B (%s)", tc.name, tc.got, units.Bytes(tc.got).IEC(), tc.want, tc.gib)
		}
	}
	// ZeRO-1's peak is in the optimizer step: the fp32 copy of the grad
	// shard (shard_main_param.grad = grad_shard.float(), 4P/N) comes on top
	// of the 7P at rest: 8P = 10,739,056,640 B (10.00 GiB).
	if z1.Peak != 8*P || z1.PeakPhase != PhaseOptimizer || z1.Component(CompStepTemp).AtTotalPeak != P {
		t.Errorf("zero1 peak %d in %v (temp %d), want %d in optimizer step (temp %d)",
			z1.Peak, z1.PeakPhase, z1.Component(CompStepTemp).AtTotalPeak, int64(8*P), int64(P))
	}
	// The saving a profile measures compares the baseline's 17.50 GiB with
	// ZeRO-1's peak, not its at-rest 8.75 GiB:
	//   (17.50 − (8.75 + 1.25)) / 17.50 = (14P − 8P) / 14P = 3/7 = 42.86 %,
	// the seed's "net saving ~42.7 %" (to 0.2 points) instead of the
	// theoretical 50 % = (14P − 7P) / 14P.
	if (base.AtRest-z1.Peak)*7 != base.AtRest*3 {
		t.Errorf("peak-based saving (%d−%d)/%d is not 3/7", base.AtRest, z1.Peak, base.AtRest)
	}
	if (base.AtRest-z1.AtRest)*2 != base.AtRest {
		t.Errorf("at-rest saving is not 50%%")
	}
	// The baseline's own peak: param.grad (2P) and the fp32 grad copy (4P)
	// during the step: 20P.
	if base.Peak != 20*P || base.PeakPhase != PhaseOptimizer {
		t.Errorf("baseline peak %d in %v, want %d in optimizer step", base.Peak, base.PeakPhase, int64(20*P))
	}
	// README and docs/memory-model.md quote these figures.
	saving := 100 * float64(base.AtRest-z1.Peak) / float64(base.AtRest)
	gib := func(b int64) float64 { return float64(b) / float64(units.GiB) }
	golden.CheckQuotes(t, "../README.md", "memory's seed 000 model (TestSeed000)",
		fmt.Sprintf("seed 000's 1.34 B-parameter MLP gives %s B vs %s B", thousands(base.AtRest), thousands(z1.AtRest)),
		fmt.Sprintf("a profile shows a %.1f %% saving rather than 50 %%", saving),
		fmt.Sprintf("| %s B vs %s B (%s / %s **GiB**, rounded) |", thousands(base.AtRest), thousands(z1.AtRest),
			strings.TrimSuffix(units.Bytes(base.AtRest).IEC(), " GiB"), strings.TrimSuffix(units.Bytes(z1.AtRest).IEC(), " GiB")),
		fmt.Sprintf("| 3/7 = %.2f %%: ZeRO-1 peaks at 8P", saving))
	golden.CheckQuotes(t, "../docs/memory-model.md", "memory's seed 000 model (TestSeed000)",
		fmt.Sprintf("baseline `2P + 12P = 14P` = **%s B**", thousands(base.AtRest)),
		fmt.Sprintf("ZeRO-1 `2P + 2P + 12P/4 = 7P` = **%s B**", thousands(z1.AtRest)),
		fmt.Sprintf("they are **GiB**, rounded (%.4f GiB and %.4f GiB); likewise the optimizer state \"15.00 → 3.75 GB\" is %.4f → %.4f GiB",
			gib(base.AtRest), gib(z1.AtRest), gib(base.Optimizer()), gib(z1.Optimizer())),
		fmt.Sprintf("`8P` = %s B = %s", thousands(z1.Peak), units.Bytes(z1.Peak).IEC()),
		fmt.Sprintf("3/7 = %.2f %%", saving))
}

// thousands writes n with thousands separators, as the docs do.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// TestSeed000Activations checks the MLP activation rule b·(H+4H+4H)·2 per
// layer with the zerosim convention: 10 layers × 8 rows × 9·4096 × 2 B.
func TestSeed000Activations(t *testing.T) {
	r := mustAnalyze(t, seed000Scenario(1), Options{})
	want := int64(10 * 8 * 9 * 4096 * 2)
	if a := r.Component(CompActivations); a.Peak != want || a.AtRest != 0 || a.PeakPhase != PhaseForward {
		t.Errorf("activations peak %d at rest %d in %v, want %d, 0, forward", a.Peak, a.AtRest, a.PeakPhase, want)
	}
	s := seed000Scenario(1)
	s.Memory.Activations = ptr(false)
	if a := mustAnalyze(t, s, Options{}).Component(CompActivations); a.Peak != 0 {
		t.Errorf("activations disabled: peak %d", a.Peak)
	}
}

// TestSeed002SevenB reproduces seed 002's "7B on 8 GPUs" row: 112 / 38.5 /
// 26.25 / 14 GB (1e9 bytes) with the seed-002 convention.
func TestStage2BucketWarning(t *testing.T) {
	s := seed002Scenario(2, 1)
	r := mustAnalyze(t, s, Options{})
	if len(r.Warnings) != 0 || r.Component(CompGradBuckets).AtRest != 520 {
		t.Errorf("default 40 MB buckets: warnings %q, buckets %d B, want none and one 520 B bucket", r.Warnings, r.Component(CompGradBuckets).AtRest)
	}
	s.Communication.BucketSize = 100 // 50 elements: buckets of 50 → 2 × 100 B staged
	r = mustAnalyze(t, s, Options{})
	if len(r.Warnings) != 0 || r.Component(CompGradBuckets).AtRest != 200 {
		t.Errorf("bucket 100 B: warnings %q, buckets %d B, want none and 200 B", r.Warnings, r.Component(CompGradBuckets).AtRest)
	}
}

func TestSeed002SevenB(t *testing.T) {
	want := []int64{112e9, 38_500_000_000, 26_250_000_000, 14e9}
	var gb []string
	for st, w := range want {
		r := mustAnalyze(t, bigModel(7e9, 8, 1, 8, st), Options{Convention: ConventionSeed002})
		if r.AtRest != w {
			t.Errorf("stage %d: %d B, want %d", st, r.AtRest, w)
		}
		gb = append(gb, strconv.FormatFloat(float64(r.AtRest)/1e9, 'f', -1, 64))
	}
	golden.CheckQuotes(t, "../docs/memory-model.md", "memory's seed 002 7B (TestSeed002SevenB)", "7B on 8 GPUs: **"+strings.Join(gb, " / ")+" GB** (1e9 B)")
	golden.CheckQuotes(t, "../README.md", "memory's seed 002 7B (TestSeed002SevenB)", "| 002: 7B on 8 GPUs "+strings.Join(gb, " / ")+" GB | same, exact |")
}

func TestEstimators(t *testing.T) {
	ds2, err := Estimate(bigModel(7e9, 8, 1, 8, 2), EstimatorDeepSpeed, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s3 := bigModel(7e9, 8, 1, 8, 3)
	s3.Model.LargestLayer = 131_072_000
	ds3, err := Estimate(s3, EstimatorDeepSpeed, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mg0, err := Estimate(bigModel(175e9, 64, 8, 8, 0), EstimatorMegatron, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mg1, err := Estimate(bigModel(175e9, 64, 8, 8, 1), EstimatorMegatron, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		got, want int64
	}{
		{"deepspeed zero2 7B 1x8", ds2.AtRest, 29_750_000_000},
		{"deepspeed zero3 7B largest 131,072,000", ds3.AtRest, 16_274_288_000},
		{"megatron 175B dp64 no distopt", mg0.AtRest, 3_150_000_000_000},
		{"megatron 175B dp64 distopt", mg1.AtRest, 1_082_812_500_000},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, tc.got, tc.want)
		}
	}
	for _, tc := range []struct {
		name      string
		got, want int64
	}{
		{"DeepSpeedZero2", must(DeepSpeedZero2(7e9, 8)), 29_750_000_000},
		{"DeepSpeedZero3", must(DeepSpeedZero3(7e9, 131_072_000, 8)), 16_274_288_000},
		{"Megatron", must(Megatron(175e9, 64, false)), 3_150_000_000_000},
		{"Megatron distopt", must(Megatron(175e9, 64, true)), 1_082_812_500_000},
		{"Megatron distopt rounds up", must(Megatron(1, 64, true)), 7},
		{"DeepSpeedZero2 floors", must(DeepSpeedZero2(1, 4)), 6},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, tc.got, tc.want)
		}
	}
	na, err := Estimate(bigModel(7e9, 8, 1, 8, 0), EstimatorDeepSpeed, Options{})
	if err != nil || na.NotApplicable == "" || na.AtRest != 0 {
		t.Errorf("deepspeed stage 0: %+v %v, want not applicable", na, err)
	}
	if _, err := DeepSpeedZero2(1<<62, 1); err == nil {
		t.Error("DeepSpeedZero2 overflow: no error")
	}
}

func must(v int64, err error) int64 {
	if err != nil {
		panic(err)
	}
	return v
}

func TestTransformerActivation(t *testing.T) {
	// Korthikanti et al. 2022, GPT-3 175B: s=2048, b=1, h=12288, a=96.
	for _, tc := range []struct {
		recompute         scenarios.Recompute
		stored, transient int64
	}{
		{"none", 2_868_903_936, 0},
		{"selective", 34 * 2048 * 12288, 5 * 96 * 2048 * 2048},
		{"full", 2 * 2048 * 12288, 2_868_903_936 - 2*2048*12288},
	} {
		st, tr, err := TransformerActivation(2048, 1, 12288, 96, tc.recompute)
		if err != nil || st != tc.stored || tr != tc.transient {
			t.Errorf("%s: %d %d %v, want %d %d", tc.recompute, st, tr, err, tc.stored, tc.transient)
		}
	}
	if _, _, err := TransformerActivation(2048, 1, 12288, 96, "some"); err == nil {
		t.Error("unknown recompute: no error")
	}
	// In a scenario: embedding + 2 blocks + head; only the blocks get the
	// tensor model's activations (flash attention by default, no vocabulary
	// so no loss).
	s := &scenarios.Scenario{
		Name: "gpt", Parallelism: scenarios.Parallelism{DP: 2, Stage: 1},
		Model: scenarios.Model{Kind: "transformer", Hidden: 64, Heads: 4, SeqLen: 32, Layers: 2, LayerList: []scenarios.Layer{
			{Name: "embedding", Params: 1000}, {Name: "block.0", Params: 4096}, {Name: "block.1", Params: 4096}, {Name: "head", Params: 1000},
		}},
		Training: scenarios.Training{MicroBatch: 2, Recompute: "full"},
	}
	r := mustAnalyze(t, resolved(s), Options{})
	per, tr, _ := BlockActivation(BlockDims{Seq: 32, Batch: 2, Hidden: 64, Heads: 4}, PolicyFull)
	if r.Units[0].Activation != 0 || r.Units[1].Activation != per || r.Units[2].Activation != per || r.Units[3].Activation != 0 {
		t.Errorf("unit activations %+v, want 0, %d, %d, 0", r.Units, per, per)
	}
	// Context parallelism cp=2 halves the sequence per rank (on one node of
	// dp·cp = 4 GPUs).
	s.Parallelism.CP, s.Cluster.GPUsPerNode = 2, 4
	half, _, _ := BlockActivation(BlockDims{Seq: 16, Batch: 2, Hidden: 64, Heads: 4}, PolicyFull)
	if got := mustAnalyze(t, s, Options{}).Units[1].Activation; got != half {
		t.Errorf("cp=2: block activation %d, want %d", got, half)
	}
	s.Parallelism.CP, s.Cluster.GPUsPerNode = 0, 2
	// Backward of block.1 rebuilds its activations on top of both stored ones.
	if a := r.Component(CompActivations); a.Peak != 2*per+tr || a.PeakPhase != PhaseBackward {
		t.Errorf("activation peak %d in %v, want %d in backward", a.Peak, a.PeakPhase, 2*per+tr)
	}
}

// TestRedundancyK: the optimizer state is sharded over the N/K intra group.
func TestRedundancyK(t *testing.T) {
	for _, n := range []int{2, 4, 8} {
		s0 := bigModel(1_000_003, n, 1, n, 0)
		base := mustAnalyze(t, s0, Options{}).Optimizer()
		for st := 1; st <= 3; st++ {
			full := bigModel(1_000_003, n, 1, n, st)
			full.Parallelism.K = n
			if got := mustAnalyze(t, full, Options{}).Optimizer(); got != base {
				t.Errorf("n=%d stage %d K=N: optimizer %d, want stage 0's %d", n, st, got, base)
			}
			k1 := bigModel(1_000_003, n, 1, n, st)
			k1.Parallelism.K = 1
			plain := bigModel(1_000_003, n, 1, n, st)
			a, b := mustAnalyze(t, k1, Options{}), mustAnalyze(t, plain, Options{})
			if a.AtRest != b.AtRest || a.Peak != b.Peak || a.Shards != n {
				t.Errorf("n=%d stage %d: K=1 %d/%d (shards %d), plain %d/%d", n, st, a.AtRest, a.Peak, a.Shards, b.AtRest, b.Peak)
			}
		}
	}
	// Hybrid sharding: stage 3, N=8, K=2 shards params over 4 ranks.
	h := bigModel(8000, 8, 1, 8, 3)
	h.Parallelism.K = 2
	if r := mustAnalyze(t, h, Options{}); r.Shards != 4 || r.Component(CompParams).AtRest != 8000*2/4 {
		t.Errorf("hybrid: shards %d params %d, want 4, 4000", r.Shards, r.Component(CompParams).AtRest)
	}
}

func TestGroups(t *testing.T) {
	// dense bf16, MoE bf16, fp32 router, fp8 weights: each group its own
	// buffer, padded separately (N = 4: 10 → 12, 6 → 8, 3 → 4, 7 → 8).
	s := &scenarios.Scenario{
		Name: "groups", Parallelism: scenarios.Parallelism{DP: 4, Stage: 1},
		Model: scenarios.Model{Kind: "generic",
			Groups: []scenarios.ParamGroup{pgroup("moe", "bf16"), pgroup("router", "fp32"), pgroup("fp8", "fp8")},
			LayerList: []scenarios.Layer{
				{Name: "dense", Params: 10}, {Name: "experts", Params: 6, Group: "moe"},
				{Name: "router", Params: 3, Group: "router"}, {Name: "fp8-linear", Params: 7, Group: "fp8"},
			}},
		Memory: scenarios.MemoryConfig{Activations: ptr(false)},
	}
	r := mustAnalyze(t, resolved(s), Options{})
	if len(r.Groups) != 4 {
		t.Fatalf("%d groups, want 4", len(r.Groups))
	}
	wantSize := map[string]int64{"dense": 12, "moe": 8, "router": 4, "fp8": 8}
	for _, g := range r.Groups {
		if g.Size != wantSize[g.Name] {
			t.Errorf("group %s size %d, want %d", g.Name, g.Size, wantSize[g.Name])
		}
	}
	// params: 10·2 + 6·2 + 3·4 + 7·1 = 51 B.
	if p := r.Component(CompParams).AtRest; p != 51 {
		t.Errorf("params %d, want 51", p)
	}
	// master: fp32 router has none; rank 0 real elems: dense 3, moe 2, fp8 2 → 7·4.
	if m := r.Component(CompMaster).AtRest; m != 28 {
		t.Errorf("master %d, want 28", m)
	}
	if f := r.Component(CompFP8); f.Peak != 2 || f.AtRest != 0 {
		t.Errorf("fp8 copies peak %d rest %d, want 2 0", f.Peak, f.AtRest)
	}
	s.Model.LayerList[0].Group = "nope"
	if _, err := Analyze(s, Options{}); err == nil {
		t.Error("unknown group: no error")
	}
}

func TestAnalyzeErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(s *scenarios.Scenario)
	}{
		{"stage", func(s *scenarios.Scenario) { s.Parallelism.Stage = 4 }},
		{"k", func(s *scenarios.Scenario) { s.Parallelism.K = 3 }},
		{"dp", func(s *scenarios.Scenario) { s.Parallelism.DP = 0 }},
		{"padding", func(s *scenarios.Scenario) { s.Communication.Padding = "weird" }},
		{"no-layers", func(s *scenarios.Scenario) { s.Model.LayerList = nil }},
		{"tensors", func(s *scenarios.Scenario) { s.Model.LayerList[0].Tensors[0].Shape = []int64{5} }},
		{"precision", func(s *scenarios.Scenario) { s.Model.Groups = []scenarios.ParamGroup{pgroup("dense", "int4")} }},
		{"overflow", func(s *scenarios.Scenario) {
			s.Model.LayerList[4].Params, s.Model.LayerList[4].Tensors = 1<<62, nil
			s.Communication.BucketSize = 1 << 62
		}},
		{"overflow-gathers", func(s *scenarios.Scenario) {
			// Each unit's gather fits, two gathered together do not.
			s.Parallelism.Stage, s.Parallelism.DP = 3, 8
			s.Model.LayerList[3].Params, s.Model.LayerList[4].Params = 1<<61, 1<<61
			s.Model.LayerList[3].Tensors, s.Model.LayerList[4].Tensors = nil, nil
		}},
		{"recompute", func(s *scenarios.Scenario) {
			s.Model.Kind, s.Model.Hidden, s.Model.Heads, s.Model.SeqLen, s.Training.Recompute = "transformer", 4, 2, 3, "x"
		}},
	} {
		// Bad input is the scenario's to reject (memory trusts a resolved
		// scenario); sizes that overflow are Analyze's.
		s := seed002Scenario(1, 1)
		tc.mod(s)
		if !strings.HasPrefix(tc.name, "overflow") {
			if err := scenarios.Validate(s); err == nil {
				t.Errorf("%s: scenarios.Validate: no error", tc.name)
			}
			continue
		}
		_, err := Analyze(s, Options{})
		if err == nil {
			t.Errorf("%s: no error", tc.name)
		} else if strings.HasPrefix(tc.name, "overflow") && !strings.Contains(err.Error(), "overflow") {
			t.Errorf("%s: %v, want an overflow error", tc.name, err)
		}
	}
	if _, err := Analyze(nil, Options{}); err == nil {
		t.Error("nil scenario: no error")
	}
}

// sum is the sum of xs.
func sum(xs []int64) int64 {
	var v int64
	for _, x := range xs {
		v += x
	}
	return v
}

// checkReport verifies the report invariants: components add up to the
// totals at rest and at the total peak, nothing is negative, peaks bound
// the at-rest values, and replaying the timeline reproduces the peak.
func checkReport(t *testing.T, name string, r *Report) {
	t.Helper()
	var rest, atPeak int64
	for _, c := range r.Components {
		if c.AtRest < 0 || c.Peak < c.AtRest || c.AtTotalPeak < 0 || c.AtTotalPeak > c.Peak {
			t.Errorf("%s stage %d: component %+v inconsistent", name, r.Stage, c)
		}
		rest += c.AtRest
		atPeak += c.AtTotalPeak
	}
	if rest != r.AtRest || atPeak != r.Peak || r.Peak < r.AtRest {
		t.Errorf("%s stage %d: components add to %d/%d, report %d/%d", name, r.Stage, rest, atPeak, r.AtRest, r.Peak)
	}
	// The tensors the allocator replay allocates are the activation
	// model's bytes, tensor by tensor.
	for u, ui := range r.Units {
		if slices.ContainsFunc(ui.ActivationTensors, func(b int64) bool { return b <= 0 }) || slices.ContainsFunc(ui.RecomputeTensors, func(b int64) bool { return b <= 0 }) ||
			sum(ui.ActivationTensors) != ui.Activation-ui.AfterLogits || sum(ui.RecomputeTensors) != ui.Recompute {
			t.Errorf("%s stage %d unit %d: tensors %v + %d after the logits, %v rebuilt, for %d kept and %d rebuilt", name, r.Stage, u,
				ui.ActivationTensors, ui.AfterLogits, ui.RecomputeTensors, ui.Activation, ui.Recompute)
		}
	}
	cur := map[Comp]int64{}
	for _, c := range r.Components {
		cur[Comp(c.Name)] = c.AtRest
	}
	total, peak := rest, rest
	for _, e := range r.Timeline() {
		cur[e.Component] += e.Delta
		total += e.Delta
		if cur[e.Component] < 0 {
			t.Fatalf("%s: %s negative at %+v", name, e.Component, e)
		}
		peak = max(peak, total)
	}
	if total != rest || peak != r.Peak {
		t.Errorf("%s stage %d: timeline ends at %d (rest %d), peaks at %d (report %d)", name, r.Stage, total, rest, peak, r.Peak)
	}
	for i, pp := range r.PhasePeaks {
		if pp.Phase != Phases[i] || pp.Bytes > r.Peak || pp.Bytes < r.AtRest {
			t.Errorf("%s stage %d: phase peak %+v outside [%d, %d]", name, r.Stage, pp, r.AtRest, r.Peak)
		}
	}
	if r.PhasePeaks[r.PeakPhase].Bytes != r.Peak {
		t.Errorf("%s stage %d: phase peak %d != peak %d", name, r.Stage, r.PhasePeaks[r.PeakPhase].Bytes, r.Peak)
	}
	// Only stages 1 and 2 all-gather after the step (stage 0 listed a
	// "param all-gather" peak: QA9 #8).
	if gather, want := len(r.PhasePeaks) == len(Phases), r.Stage == 1 || r.Stage == 2; gather != want {
		t.Errorf("%s stage %d: phase peaks %v: a param all-gather phase %v, want %v", name, r.Stage, r.PhasePeaks, gather, want)
	}
}

// TestProperties: random models, N, K, stage, convention and padding; every
// report satisfies checkReport and, for the seed-002 convention on exactly
// divisible toy layouts, the closed forms (padding aside) 16P, (4+12/S)P, (2+14/S)P, 16P/S.
func TestProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for c := range 300 {
		n := 1 << rng.IntN(4)
		k := 1 << rng.IntN(4)
		if k > n {
			k = n
		}
		s := &scenarios.Scenario{
			Name:        fmt.Sprintf("case%d", c),
			Cluster:     scenarios.Cluster{Nodes: 1, GPUsPerNode: n, GPUMemory: units.Bytes(rng.Int64N(1 << 20))},
			Parallelism: scenarios.Parallelism{DP: n, K: k, Stage: rng.IntN(4)},
			Model:       scenarios.Model{Kind: "mlp", Hidden: 1 + rng.Int64N(64)},
			Training:    scenarios.Training{MicroBatch: 1 + rng.Int64N(4)},
			Communication: scenarios.Communication{
				BucketSize:    units.Bytes(rng.Int64N(3) * rng.Int64N(2000)),
				PrefetchDepth: ptr(rng.IntN(3)),
				Padding:       []scenarios.Padding{"toy", "megatron"}[rng.IntN(2)],
			},
			Memory: scenarios.MemoryConfig{RuntimeContext: units.Bytes(rng.Int64N(100)), NCCLBuffers: units.Bytes(rng.Int64N(100))},
		}
		divisible := rng.IntN(2) == 0
		for u := range 1 + rng.IntN(6) {
			p := 1 + rng.Int64N(5000)
			if divisible {
				p = 64 * (1 + rng.Int64N(50))
			}
			s.Model.LayerList = append(s.Model.LayerList, scenarios.Layer{Name: fmt.Sprintf("u%d", u), Params: units.Count(p)})
		}
		conv := Conventions[rng.IntN(len(Conventions))]
		r, err := Analyze(resolved(s), Options{Convention: conv, Rank: rng.IntN(n)})
		if err != nil {
			t.Fatalf("case %d: %v", c, err)
		}
		checkReport(t, s.Name, r)
		if conv == ConventionZerosim {
			// The zerosim convention adds the allocator's overhead, the
			// CUDA context and NCCL's buffers (ProfilerPeaks).
			if r.Reserved < r.Peak-int64(s.Memory.RuntimeContext+s.Memory.NCCLBuffers) || r.Device < r.Reserved {
				t.Errorf("case %d: reserved %d, device %d below the peak %d", c, r.Reserved, r.Device, r.Peak)
			}
		}
		// Fits is the peak and, under the zerosim convention, the device's
		// need (the peak with the context and NCCL's buffers, no reserve)
		// within the GPU.
		need := r.Peak
		if conv == ConventionZerosim {
			need = r.Need
			if r.Need < r.Peak || r.Need > r.Device {
				t.Errorf("case %d: need %d outside [peak %d, device %d]", c, r.Need, r.Peak, r.Device)
			}
		}
		if r.Fits != (r.Peak <= r.GPUMemory && need <= r.GPUMemory && r.GPUMemory > 0) {
			t.Errorf("case %d: fits %v with peak %d, need %d, memory %d", c, r.Fits, r.Peak, need, r.GPUMemory)
		}
		if conv == ConventionSeed002 && divisible && s.Communication.Padding == "toy" {
			// Ranks of one group may split real and padding elements
			// differently; their sum is exact: Σ_rank = S · closed form.
			P, S := r.Params, int64(r.Shards)
			want := []int64{16 * P, 4*P + 12*P/S, 2*P + 14*P/S, 16 * P / S}[r.Stage]
			var sum int64
			for rank := range r.Shards {
				rr, err := Analyze(s, Options{Convention: conv, Rank: rank})
				if err != nil {
					t.Fatal(err)
				}
				sum += rr.AtRest - int64(s.Memory.RuntimeContext+s.Memory.NCCLBuffers) - rr.Component(CompPadding).AtRest
			}
			if sum != S*want {
				t.Errorf("case %d stage %d N=%d K=%d: model states summed over ranks %d, want %d·%d", c, r.Stage, n, k, sum, S, want)
			}
		}
	}
}

// TestBufferLayouts: the layouts handed to zero/ and numerics are the ones
// Analyze uses.
func TestBufferLayouts(t *testing.T) {
	for st := range 4 {
		s := seed002Scenario(st, 1)
		s.Communication.BucketSize = 100 // 50 bf16 elements
		gs, err := BufferLayouts(s)
		if err != nil {
			t.Fatal(err)
		}
		r := mustAnalyze(t, s, Options{})
		if len(gs) != 1 || len(r.Groups) != 1 {
			t.Fatalf("stage %d: %d / %d groups, want 1", st, len(gs), len(r.Groups))
		}
		a, b := gs[0].Layout, r.Groups[0].Layout
		if fmt.Sprint(a.Buckets) != fmt.Sprint(b.Buckets) || fmt.Sprint(a.Params) != fmt.Sprint(b.Params) {
			t.Errorf("stage %d: BufferLayouts %v differs from Analyze %v", st, a.Buckets, b.Buckets)
		}
		wantBuckets := []int{6, 6, 6, 5}[st] // 260/50 → 6 buckets; per unit at stage 3
		if len(a.Buckets) != wantBuckets || a.Spec.Shards != []int{1, 2, 2, 2}[st] {
			t.Errorf("stage %d: %d buckets over %d shards, want %d over %d", st, len(a.Buckets), a.Spec.Shards, wantBuckets, []int{1, 2, 2, 2}[st])
		}
		if len(a.Params) != 13 {
			t.Errorf("stage %d: %d params, want the 13 tensors", st, len(a.Params))
		}
	}
	if _, err := BufferLayouts(nil); err == nil {
		t.Error("nil scenario: no error")
	}
}
