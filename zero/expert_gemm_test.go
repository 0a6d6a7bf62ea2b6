package zero

import (
	"fmt"
	"math"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// TestExpertGEMMRoofline holds ExpertGEMMSeconds to hand counts on an H100
// (989 TFLOP/s bf16 at 0.8, 3.35 TB/s HBM at 0.88, 132 SMs, 256×128
// tiles), seq 4096, micro-batch 1 (t = 4096):
//   - DeepSeek-V3 (h 7168, f 2048, 256 experts, top-8) at ep 1: m = 4096·8/256
//     = 128 rows per expert. Each of the three projections moves
//     2·(128·7168 + 7168·2048 + 128·2048) = 31,719,424 B per expert, the
//     same for the input and weight gradients; its 3.76 GFLOP take 4.9 µs
//     against 10.76 µs of bytes, so all nine are memory-bound: forward
//     256·3·31,719,424 B / (3.35e12·0.88), backward twice that.
//   - Mixtral-8x7B (h 4096, f 14336, 8 experts, top-2) at ep 8: one local
//     expert of m = 4096·2·8/8 = 8192 rows, compute-bound; gate and up make
//     32·112 = 3,584 tiles (28 waves of 132: q = 3584/3696 = 32/33), down
//     32·32 = 1,024 (8 waves: q = 32/33): forward 6·8192·4096·14336 FLOPs at
//     989e12·0.8·32/33. The weight gradient's tiles (h×f, f×h) make the
//     same waves, so backward is twice the forward.
func TestExpertGEMMRoofline(t *testing.T) {
	g := GPUShape{Peak: 989e12, HBM: 3350e9, SMs: 132}
	e := Efficiency{GEMM: 0.8, HBM: 0.88}
	dsv3Bytes := 256 * 3 * 31_719_424.0 / (g.HBM * e.HBM)
	mixtral := 6 * 8192 * 4096 * 14336.0 / (989e12 * 0.8 * 32 / 33)
	for _, c := range []struct {
		name                    string
		experts, topK, ep, h, f int64
		fwd, bwd                float64
	}{
		{"deepseek-v3 ep 1", 256, 8, 1, 7168, 2048, dsv3Bytes, 2 * dsv3Bytes},
		{"mixtral-8x7b ep 8", 8, 2, 8, 4096, 14336, mixtral, 2 * mixtral},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, b, err := ExpertGEMMSeconds(4096, c.experts, c.topK, c.ep, c.h, c.f, g, e)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(f/c.fwd-1) > 1e-12 || math.Abs(b/c.bwd-1) > 1e-12 {
				t.Errorf("forward %.9g s, backward %.9g s; want %.9g, %.9g", f, b, c.fwd, c.bwd)
			}
		})
	}
	// DeepSeek-V3's gate projection over its 256 experts: 2.27× its
	// FLOPs' time at ep 1 (bytes 10.76 µs per expert against 4.75 µs
	// without the wave factor, QA5 F2), and at ep 64 (4 local experts of
	// m = 8192) its FLOPs at peak·E over the wave factor 2048/2112.
	for _, c := range []struct{ groups, m, want float64 }{{256, 128, 2.265}, {4, 8192, 2112.0 / 2048}} {
		x, err := groupedGEMMSeconds(c.groups, c.m, 2048, 7168, false, g, e)
		if err != nil {
			t.Fatal(err)
		}
		if r := x / (c.groups * 2 * c.m * 2048 * 7168 / (989e12 * 0.8)); math.Abs(r-c.want) > 0.0005 {
			t.Errorf("deepseek-v3 gate, %g experts of m %g: %.4f× its FLOPs at peak·E, want %.4f", c.groups, c.m, r, c.want)
		}
	}
}

// TestExpertUnitsUseRoofline: Costs times an experts.i unit by
// ExpertGEMMSeconds at the scenario's ep, so ep changes the experts'
// compute (QA5 F2: it was 2·active·t at peak·E whatever ep): Qwen3-30B-A3B
// (h 2048, f 768, 128 experts, top-8) on 16 H100s, seq 4096, ZeRO-1,
// recompute none; the unit's FLOPs stay 2·active·t.
func TestExpertUnitsUseRoofline(t *testing.T) {
	const h, f, experts, topK, tok = 2048, 768, 128, 8, 4096
	g := GPUShape{Peak: 989e12, HBM: 3350e9, SMs: 132}
	e := Efficiency{GEMM: scenarios.DefaultComputeEfficiency, HBM: DefaultHBMEfficiency}
	for _, ep := range []int64{1, 4, 16} {
		t.Run(fmt.Sprintf("ep%d", ep), func(t *testing.T) {
			doc := fmt.Sprintf("version: 1\ncluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {hf_config: hf-extra/qwen3-30b-a3b.json, seq_len: 4096, layers: 2}\n"+
				"parallelism: {dp: 16, zero_stage: 1, ep: %d}\n", ep)
			costs, u := expertUnitCosts(t, doc)
			fw, bw, err := ExpertGEMMSeconds(tok, experts, topK, ep, h, f, g, e)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range []struct {
				name string
				got  units.Duration
				want float64
			}{{"forward", costs[u].Fwd, fw}, {"backward", costs[u].Bwd, bw}} {
				if want := units.Duration(math.Ceil(x.want * float64(units.Second))); x.got != want {
					t.Errorf("%s %v, want %v", x.name, x.got, want)
				}
			}
			if want := int64(2 * topK * 3 * h * f * tok); costs[u].FwdFLOPs != want {
				t.Errorf("forward FLOPs %d, want 2·active·t = %d", costs[u].FwdFLOPs, want)
			}
			// At 8·ep/128 ·4096 rows per expert: 256 at ep 1 (memory-bound,
			// 1.53× the FLOPs' time per QA5), compute-bound from ep 4 on.
			atPeak := float64(2*topK*3*h*f*tok) / (989e12 * scenarios.DefaultComputeEfficiency)
			if r := fw / atPeak; (ep == 1) != (r > 1.3) {
				t.Errorf("forward %.3f× the FLOPs at peak·E", r)
			}
		})
	}
}

// TestExpertUnitsScaleAndRecompute: two terms of the experts' timing no
// other test reaches (review s17 A4). gpt-oss's experts carry biases, so
// their unit's FLOPs, 2·active·t with active = top-4 × (3·h·f + 2·f + h)
// (gate_up_proj h×2f and its 2f bias, down_proj f×h and its h bias;
// GptOssExperts at transformers' modeling_gpt_oss.py), exceed the SwiGLU
// shapes' 6·t·k·h·f: the roofline time is scaled by their ratio. Under
// full recompute the backward adds the forward's time once more.
func TestExpertUnitsScaleAndRecompute(t *testing.T) {
	const h, f, experts, topK, tok, ep = 2880, 2880, 32, 4, 4096, 8
	g := GPUShape{Peak: 989e12, HBM: 3350e9, SMs: 132}
	e := Efficiency{GEMM: scenarios.DefaultComputeEfficiency, HBM: DefaultHBMEfficiency}
	fw, bw, err := ExpertGEMMSeconds(tok, experts, topK, ep, h, f, g, e)
	if err != nil {
		t.Fatal(err)
	}
	scale := float64(3*h*f+2*f+h) / float64(3*h*f)
	for _, c := range []struct {
		recompute string
		fwd, bwd  float64
	}{
		{"none", fw * scale, bw * scale},
		{"full", fw * scale, (bw + fw) * scale},
	} {
		doc := fmt.Sprintf("version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {hf_config: hf-extra/gpt-oss-20b.json, seq_len: 4096, layers: 2}\n"+
			"parallelism: {dp: 8, zero_stage: 1, ep: %d}\ntraining: {recompute: %s}\n", ep, c.recompute)
		costs, u := expertUnitCosts(t, doc)
		if want := int64(2 * topK * (3*h*f + 2*f + h) * tok); costs[u].FwdFLOPs != want {
			t.Errorf("%s: forward FLOPs %d, want 2·active·t = %d", c.recompute, costs[u].FwdFLOPs, want)
		}
		for _, x := range []struct {
			name string
			got  units.Duration
			want float64
		}{{"forward", costs[u].Fwd, c.fwd}, {"backward", costs[u].Bwd, c.bwd}} {
			if want := units.Duration(math.Ceil(x.want * float64(units.Second))); x.got < want-1 || x.got > want+1 {
				t.Errorf("%s: %s %v, want %v", c.recompute, x.name, x.got, want)
			}
		}
	}
}

// expertUnitCosts loads the scenario doc (paths from scenarios/testdata)
// and returns its Costs and the index of its unit experts.0.
func expertUnitCosts(t *testing.T, doc string) ([]LayerCost, int) {
	t.Helper()
	s, err := scenarios.Load("../scenarios/testdata/s.yaml", []byte(doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	costs, err := Costs(s)
	if err != nil {
		t.Fatal(err)
	}
	return costs, unitNamed(t, s, "experts.0")
}

// TestExpertElementwiseBytes holds the routed experts' memory-bound
// traffic under stack: megatron (ExpertElementwiseBytes, Megatron-LM
// 4415119's permute, weighted SwiGLU and unpermute) to a hand count for
// Qwen3-30B-A3B at t = 4,096 tokens a rank (k = 8, h = 2,048, f = 768;
// r = 32,768 rows): forward 32,768·(6·2,048 + 6·768 + 4) + 2·2,048·4,096
// = 553,779,200 + 16,777,216 = 570,556,416 B; backward
// 32,768·(6·2,048 + 10·768 + 8) + 16,777,216 = 654,573,568 + 16,777,216
// = 671,350,784 B. On an H100 (3.35 TB/s at 0.88) that is 193.54 µs and
// 227.73 µs, added to the grouped GEMMs' roofline time of the unit at
// ep 16 (and twice the forward's under full recompute); without the stack
// the unit keeps its GEMM time and, as with it, the casts of its fp8
// recipe (te, delayed scaling on an H100: FP8CastRuleOf): the fc1 and fc2
// inputs cast row- and column-wise, 4·32,768·(2,048 + 768) =
// 369,098,752 B forward; their output gradients 4·32,768·(1,536 + 2,048) =
// 469,762,048 B backward, plus the 8 local experts' weights,
// 4·8·(1,536·2,048 + 2,048·768) = 150,994,944 B: once a step under
// Megatron (charged to the backward at 1/grad_accum, here 1), every
// forward without it.
func TestExpertElementwiseBytes(t *testing.T) {
	fwd, bwd, err := ExpertElementwiseBytes(4096, 8, 2048, 768)
	if err != nil {
		t.Fatal(err)
	}
	if fwd != 570556416 || bwd != 671350784 {
		t.Errorf("Qwen3-30B-A3B at 4,096 tokens: %d and %d B, want 570,556,416 and 671,350,784", fwd, bwd)
	}
	if _, _, err := ExpertElementwiseBytes(1<<40, 1<<10, 1<<20, 1<<20); err == nil {
		t.Error("an overflowing size was accepted")
	}
	const h, f, experts, topK, tok, ep = 2048, 768, 128, 8, 4096, 16
	// fp8 GEMMs at the H100's peak_fp8 × fp8_gemm_ratio (fp8GEMMPeak).
	ratio, _, _ := scenarios.DefaultFP8GEMMRatio("H100-80GB")
	g := GPUShape{Peak: 989e12, GEMMPeak: 1979e12 * ratio, HBM: 3350e9, SMs: 132}
	e := Efficiency{GEMM: scenarios.DefaultComputeEfficiency, HBM: DefaultHBMEfficiency}
	fw, bw, err := ExpertGEMMSeconds(tok, experts, topK, ep, h, f, g, e)
	if err != nil {
		t.Fatal(err)
	}
	hbm := g.HBM * e.HBM // 3.35 TB/s at 0.88
	ef, eb := 570556416/hbm, 671350784/hbm
	cf, cb, cw := 369098752/hbm, 469762048/hbm, 150994944/hbm
	for _, c := range []struct {
		stack, recompute string
		fwd, bwd         float64
	}{
		{"megatron", "none", fw + ef + cf, bw + eb + cb + cw},
		{"megatron", "full", fw + ef + cf, bw + eb + cb + cw + fw + ef + cf},
		{"", "none", fw + cf + cw, bw + cb},
	} {
		stack := ""
		if c.stack != "" {
			stack = "stack: " + c.stack + "\n"
		}
		doc := fmt.Sprintf("version: 1\n%scluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {hf_config: hf-extra/qwen3-30b-a3b.json, seq_len: 4096, layers: 2}\n"+
			"parallelism: {dp: 16, zero_stage: 1, ep: %d}\ntraining: {micro_batch: 1, recompute: %s, fp8: te}\n", stack, ep, c.recompute)
		costs, u := expertUnitCosts(t, doc)
		for _, x := range []struct {
			name string
			got  units.Duration
			want float64
		}{{"forward", costs[u].Fwd, c.fwd}, {"backward", costs[u].Bwd, c.bwd}} {
			if want := units.Duration(math.Ceil(x.want * float64(units.Second))); x.got < want-1 || x.got > want+1 {
				t.Errorf("stack %q, recompute %s: %s %v, want %v", c.stack, c.recompute, x.name, x.got, want)
			}
		}
	}
}

// TestExpertMeanRowsNotPadded: a routed expert's rows are a mean under
// balanced routing, so the forward and input-gradient GEMMs charge their
// true FLOPs at the wave fill of ⌈m/256⌉ row tiles, not a whole tile per
// expert at the mean's edge; the weight gradient's m (a weight dimension)
// is padded. Qwen1.5-MoE-A2.7B at ep 1 (h 2048, expert f 1408, 60
// experts, top-4) at 4,096 tokens: m = 4096·4/60 = 273.07 rows, 2 row
// tiles of 256 each, on an A100 (312 TFLOP/s, 2,039 GB/s, 108 SMs), where
// 273 rows are compute-bound.
func TestExpertMeanRowsNotPadded(t *testing.T) {
	g := GPUShape{Peak: 312e12, HBM: 2039e9, SMs: 108}
	e := Efficiency{GEMM: 0.8, HBM: DefaultHBMEfficiency}
	const groups, n, k = 60.0, 1408.0, 2048.0
	m := 4096.0 * 4 / 60
	got, err := groupedGEMMSeconds(groups, m, n, k, false, g, e)
	if err != nil {
		t.Fatal(err)
	}
	tiles := 2.0 * 11 * groups // ⌈273.07/256⌉ · 1408/128 · 60
	waves := math.Ceil(tiles / 108)
	want := 2 * m * n * k * groups / (312e12 * 0.8 * tiles / (waves * 108))
	if math.Abs(got/want-1) > 1e-12 {
		t.Errorf("60 experts of %.2f rows: %.9g s, want %.9g s (true FLOPs at the wave fill)", m, got, want)
	}
	padded, err := groupedGEMMSeconds(groups, m, n, k, true, g, e)
	if err != nil {
		t.Fatal(err)
	}
	if r := padded / got; math.Abs(r-512/m) > 1e-9 {
		t.Errorf("padded to whole 256-row tiles: %.4f× the mean's time, want 512/%.2f = %.4f", r, m, 512/m)
	}
}

// TestExpertGEMMTileFlags: ExpertGEMMSeconds rounds to whole tiles only
// the dimensions that are real sizes (groupedGEMMSeconds' tileRows). Its
// forward and input-gradient matmuls have the experts' mean rows as m,
// m = t·k·ep/E = 4096·4/60 = 273.07 (Qwen1.5-MoE-A2.7B's 60 experts, top
// 4, h 2,048, f 1,408, ep 1), counted as they are; its weight-gradient
// matmuls have a weight's rows as m (f or h), a real size, rounded up to
// 256-row tiles: 1,408 → 1,536, 2,048 itself. Every n here is a multiple
// of 128. Each matmul is the larger of its compute, 2·tm·tn·k·60 FLOPs
// at the GEMM efficiency scaled by the wave fill of ⌈m/256⌉·⌈n/128⌉·60
// tiles over 108 SMs, and its bytes 2(mk + kn + mn)·60 at the HBM
// efficiency (A100: 312 TFLOP/s, 2,039 GB/s).
func TestExpertGEMMTileFlags(t *testing.T) {
	g := GPUShape{Peak: 312e12, HBM: 2039e9, SMs: 108}
	e := Efficiency{GEMM: 0.8, HBM: DefaultHBMEfficiency}
	const groups, h, f = 60.0, 2048.0, 1408.0
	m := 4096.0 * 4 / 60
	roof := func(m, n, k, tm float64) float64 {
		tiles := math.Ceil(m/256) * math.Ceil(n/128) * groups
		waves := math.Ceil(tiles / 108)
		compute := 2 * tm * n * k * groups / (312e12 * 0.8 * tiles / (waves * 108))
		bytes := 2 * (m*k + k*n + m*n) * groups / (2039e9 * DefaultHBMEfficiency)
		return max(compute, bytes)
	}
	// gate and up: h → f; down: f → h.
	wantFwd := 2*roof(m, f, h, m) + roof(m, h, f, m)
	wantBwd := 2*roof(m, h, f, m) + roof(m, f, h, m) + // input gradients
		2*roof(h, f, m, h) + roof(f, h, m, 1536) // weight gradients
	fwd, bwd, err := ExpertGEMMSeconds(4096, 60, 4, 1, 2048, 1408, g, e)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(fwd/wantFwd-1) > 1e-12 || math.Abs(bwd/wantBwd-1) > 1e-12 {
		t.Errorf("experts: forward %.9g s, backward %.9g s; want %.9g, %.9g", fwd, bwd, wantFwd, wantBwd)
	}
}

// TestGEMMSecondsNarrowN: an output narrower than one 128-column tile
// counts as it is (groupedGEMMSeconds: cuBLAS picks a narrower tile for
// such a shape), not as a whole tile: m 4,096, n 100, k 4,096 on an A100
// (108 SMs) at GEMM efficiency 0.3 is compute-bound: 16·1 tiles, one wave,
// 2·4096·100·4096 FLOPs over 312 TFLOP/s · 0.3 · 16/108, against
// 2(4096² + 2·4096·100) bytes at 2,039 GB/s · 0.9.
func TestGEMMSecondsNarrowN(t *testing.T) {
	g := GPUShape{Peak: 312e12, HBM: 2039e9, SMs: 108}
	e := Efficiency{GEMM: 0.3, HBM: 0.9}
	got, err := GEMMSeconds(4096, 100, 4096, g, e)
	if err != nil {
		t.Fatal(err)
	}
	compute := 2.0 * 4096 * 100 * 4096 / (312e12 * 0.3 * 16 / 108)
	bytes := 2.0 * (4096*4096 + 2*4096*100) / (2039e9 * 0.9)
	if compute <= bytes {
		t.Fatalf("the case is meant to be compute-bound: %g ≤ %g", compute, bytes)
	}
	if math.Abs(got/compute-1) > 1e-12 {
		t.Errorf("GEMM 4096×100×4096: %.9g s, want %.9g s (n counted as 100, not a 128-wide tile)", got, compute)
	}
}
