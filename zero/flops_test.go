package zero

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// TestBlockForwardFLOPs checks the GPT block against Narayanan et al. 2021
// (Megatron-LM, §5.1): 24·b·s·h² + 4·b·s²·h forward FLOPs per layer, and
// the llama block's SwiGLU and GQA terms by hand.
func TestBlockForwardFLOPs(t *testing.T) {
	const b, s, h, a = 4, 2048, 4096, 32
	f, err := BlockForwardFLOPs(FLOPDims{Arch: "gpt", Seq: s, Batch: b, Hidden: h, Heads: a})
	if err != nil {
		t.Fatal(err)
	}
	if f.GEMM != 24*b*s*h*h || f.Attention != 4*b*s*s*h {
		t.Errorf("gpt: %+v, want GEMM %d attention %d", f, 24*b*s*h*h, 4*b*s*s*h)
	}
	// Llama 3.1 8B: kv 1024, f 14336; causal halves the attention.
	const kv, ffn = 1024, 14336
	g, err := BlockForwardFLOPs(FLOPDims{Arch: "llama", Seq: s, Batch: b, Hidden: h, Heads: a, KVHeads: 8, FFN: ffn, Causal: true})
	if err != nil {
		t.Fatal(err)
	}
	tk := int64(b * s)
	if want := 2 * tk * (2*h*h + 2*h*kv + 3*h*ffn); g.GEMM != want || g.Attention != 2*b*s*s*h {
		t.Errorf("llama: %+v, want GEMM %d attention %d", g, want, 2*b*s*s*h)
	}
	op, err := RecomputeFLOPs(FLOPDims{Arch: "llama", Seq: s, Batch: b, Hidden: h, Heads: a, KVHeads: 8, FFN: ffn, Causal: true}, "op")
	if err != nil || op != 2*tk*(h*kv+h*h+h*ffn) {
		t.Errorf("op recompute %d, %v", op, err)
	}
}

// TestModelFLOPsPerToken reproduces published MFU columns from their
// throughput and the parameter count each source passed: llm-foundry's
// MPT-7B on 8 A100-40GB (3679 tokens/s/GPU, MFU 0.5092; its embedding is
// tied, the output layer, so every parameter counts) and torchtitan's
// Llama 3 8B on 64 A100 (2973 tokens/s/GPU, MFU 58.2 %, docs/performance.md
// at 0413364; its train.py then counted every parameter, 8,030,261,248,
// before 0c6ca903ff60ee1555ef236b2a83f611aafdab94 excluded the embedding:
// TestMFUTorchtitanH100).
func TestModelFLOPsPerToken(t *testing.T) {
	for _, c := range []struct {
		name                      string
		params, layers, h, s      int64
		tokensPerGPU, peak, wantM float64
	}{
		{"mpt-7b", 6658859008, 32, 4096, 2048, 3679, 312e12, 0.5092},
		{"llama3-8b", 8030261248, 32, 4096, 8192, 2973, 312e12, 0.582},
	} {
		f, err := ModelFLOPsPerToken(c.params, 2*c.layers*c.h, c.s)
		if err != nil {
			t.Fatal(err)
		}
		mfu := c.tokensPerGPU * float64(f) / c.peak
		if math.Abs(mfu-c.wantM) > 0.0006 {
			t.Errorf("%s: MFU %.4f, published %.4f", c.name, mfu, c.wantM)
		}
	}
}

// TestMFUTorchtitanH100 reproduces the MFU torchtitan published for its
// Llama 3.1 8B rows without Float8 (docs/performance.md at
// eaea6f6a2fa940f03a10906be1df3489cf30af85: "on 8 or 128 H100 GPUs without
// Float8 achieves 33% to 39% MFU", Tables 1 and 3: 5,762 and 6,667
// tokens/s per GPU on 8, 5,605 and 6,514 on 128, seq 8192; footnote 2: at
// the H100 SXM peak, 989 TFLOP/s, utils.get_peak_flops at
// 9dec370ad26b5f8e9a7333a0e36165018262644b) from
// zerosim's count of the model FLOPs per token: train.py at
// 9dec370ad26b5f8e9a7333a0e36165018262644b passes
// get_num_params(model, exclude_embedding=True), so the untied input
// embedding is no matmul. Counted with every parameter, as zerosim did, the
// rows read 35 % to 41 %.
func TestMFUTorchtitanH100(t *testing.T) {
	s, err := scenarios.Load("s.yaml", []byte("version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\n"+
		"model: {preset: llama3.1-8b, seq_len: 8192}\nparallelism: {dp: 8, zero_stage: 3}\ntraining: {micro_batch: 2}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	per, ok, err := modelFLOPsPerToken(s)
	if err != nil || !ok {
		t.Fatalf("modelFLOPsPerToken: %v, %v", ok, err)
	}
	span := func(per int64) (lo, hi float64) {
		lo = math.Inf(1)
		for _, tps := range []float64{5762, 6667, 5605, 6514} {
			mfu := tps * float64(per) / 989e12
			lo, hi = min(lo, mfu), max(hi, mfu)
		}
		return math.Round(100 * lo), math.Round(100 * hi)
	}
	lo, hi := span(per)
	if lo != 33 || hi != 39 {
		t.Errorf("MFU %.0f %% to %.0f %% (%d FLOPs per token), torchtitan published 33%% to 39%%", lo, hi, per)
	}
	// The same rows counted with every parameter, as zerosim did.
	base, _ := flopDims(s)
	width, err := modelAttentionWidth(s, base)
	if err != nil {
		t.Fatal(err)
	}
	all, err := ModelFLOPsPerToken(s.Model.ActiveParams(), width, s.Model.SeqLen)
	if err != nil {
		t.Fatal(err)
	}
	allLo, allHi := span(all)
	golden.CheckQuotes(t, "../docs/compute-model.md", "TestMFUTorchtitanH100",
		fmt.Sprintf("reproduces the %.0f %% to %.0f %% torchtitan", lo, hi),
		fmt.Sprintf("counted with every parameter, as zerosim did before, the same rows read %.0f %% to %.0f %%.", allLo, allHi))
}

// TestPlanCompute checks the unit layout: blocks get the block cost (every
// second one recomputing under Placement{Every: 2}), the head unit the LM head once,
// and the embedding nothing.
func TestPlanCompute(t *testing.T) {
	d := FLOPDims{Arch: "llama", Seq: 4096, Batch: 1, Hidden: 4096, Heads: 32, KVHeads: 32, FFN: 11008, Vocab: 32000, Causal: true}
	spec := ComputeSpec{Dims: d, GPU: GPUShape{Peak: 989e12, HBM: 3350e9, SMs: 132},
		Eff: Efficiency{GEMM: 0.8, Attention: 0.6, HBM: 0.88}, Policy: "full", Placement: memory.Placement{Every: 2},
		Blocks: []bool{false, true, true, false, false}, Head: 4}
	u, err := PlanCompute(spec)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := BlockForwardFLOPs(d)
	if u[0] != (UnitCompute{}) || u[3] != (UnitCompute{}) {
		t.Errorf("embedding/final norm: %+v %+v, want nothing", u[0], u[3])
	}
	if u[1].BwdFLOPs != 2*f.GEMM+f.Attention*5/2 || u[2].BwdFLOPs != u[1].BwdFLOPs+f.Total() {
		t.Errorf("blocks: bwd %d, %d; want %d and one more forward", u[1].BwdFLOPs, u[2].BwdFLOPs, 2*f.GEMM+f.Attention*5/2)
	}
	if want := int64(2 * 4096 * 4096 * 32000); u[4].FwdFLOPs != want || u[4].BwdFLOPs != 2*want {
		t.Errorf("head: %+v, want forward %d once", u[4], want)
	}
	got := Utilize(units.Second, 5762, 16*5762, 6*8030261248+12*32*4096*8192, 0, 989e12)
	if math.Abs(got.MFU-5762*float64(6*8030261248+12*32*4096*8192)/989e12) > 1e-12 || got.TokensPerGPU != 5762 {
		t.Errorf("Utilize: %+v", got)
	}
}

// TestPlanComputeEarlyStop checks PyTorch's early stop by hand: a fully
// checkpointed Llama 2 7B block (t = 4096) recomputes its forward less the
// w2 matmul, 2·4096·11008·4096 FLOPs, and its backward takes that share
// of the forward's time less; without early stop it reruns the whole
// forward, and other policies are unchanged.
func TestPlanComputeEarlyStop(t *testing.T) {
	d := FLOPDims{Arch: "llama", Seq: 4096, Batch: 1, Hidden: 4096, Heads: 32, KVHeads: 32, FFN: 11008, Causal: true}
	spec, whole, early := earlyStopPair(t, d, "full")
	f, _ := BlockForwardFLOPs(d)
	down := int64(2 * 4096 * 11008 * 4096)
	if got := whole[0].BwdFLOPs - early[0].BwdFLOPs; got != down {
		t.Errorf("early stop saves %d FLOPs, want the w2 matmul's %d", got, down)
	}
	if want := whole[0].Fwd * float64(down) / float64(f.Total()); math.Abs((whole[0].Bwd-early[0].Bwd)/want-1) > 1e-9 {
		t.Errorf("early stop saves %g s, want %g", whole[0].Bwd-early[0].Bwd, want)
	}
	spec.Policy = "selective"
	sel, _ := PlanCompute(spec)
	spec.EarlyStop = false
	if sel0, _ := PlanCompute(spec); sel[0] != sel0[0] {
		t.Errorf("selective changed under early stop: %+v vs %+v", sel[0], sel0[0])
	}
}

// earlyStopPair plans one checkpointed block of d under policy on an
// A100 (312 TFLOPS, 2,039 GB/s) without and with PyTorch's early stop; it
// returns the spec, left with EarlyStop set.
func earlyStopPair(t *testing.T, d FLOPDims, policy string) (ComputeSpec, []UnitCompute, []UnitCompute) {
	t.Helper()
	spec := ComputeSpec{Dims: d, GPU: GPUShape{Peak: 312e12, HBM: 2039e9, SMs: 108},
		Eff: Efficiency{GEMM: 0.7, Attention: 0.6, HBM: 0.88}, Policy: policy, Blocks: []bool{true}, Head: -1}
	whole, err := PlanCompute(spec)
	if err != nil {
		t.Fatal(err)
	}
	spec.EarlyStop = true
	early, err := PlanCompute(spec)
	if err != nil {
		t.Fatal(err)
	}
	return spec, whole, early
}

// TestPlanComputeOpEarlyStop: under the op policy the same early stop
// leaves out the last mm when the policy recomputes it and only the
// residual add reads it (memory.OpEarlyStopMMFLOPs). A GPT block with a
// bias on every matrix (h 1024, f 4096, t 4096) reruns all four addmm
// linears, 2·4096·(3·1024² + 1024² + 2·1024·4096) = 103,079,215,104
// FLOPs, 68,719,476,736 of them under early stop (less fc2's
// 2·4096·4096·1024 = 34,359,738,368). Llama keeps w2's output (the 7th
// mm, odd): no change.
func TestPlanComputeOpEarlyStop(t *testing.T) {
	for _, c := range []struct {
		name string
		d    FLOPDims
		save int64
	}{
		{"gpt", FLOPDims{Arch: "gpt", Seq: 4096, Batch: 1, Hidden: 1024, Heads: 16, FFN: 4096, Causal: true, QKVBias: true, OBias: true, MLPBias: true}, 34_359_738_368},
		{"llama", FLOPDims{Arch: "llama", Seq: 4096, Batch: 1, Hidden: 4096, Heads: 32, KVHeads: 32, FFN: 11008, Causal: true}, 0},
	} {
		_, whole, early := earlyStopPair(t, c.d, "op")
		if got := whole[0].BwdFLOPs - early[0].BwdFLOPs; got != c.save {
			t.Errorf("%s: early stop saves %d FLOPs under op, want %d", c.name, got, c.save)
		}
	}
	re, err := RecomputeFLOPs(FLOPDims{Arch: "gpt", Seq: 4096, Batch: 1, Hidden: 1024, Heads: 16, FFN: 4096, QKVBias: true, OBias: true, MLPBias: true}, "op")
	if err != nil || re != 103_079_215_104 {
		t.Errorf("biased gpt op recompute %d (%v), want 103,079,215,104", re, err)
	}
}

// TestAttentionBackwardByKernel checks the attention backward's FLOPs and
// time by kernel, by hand. flash and sdpa recompute the scores in backward
// (FlashAttention-2: S = QKᵀ, dV, dP, dQ, dK, five matmuls to the
// forward's two, 2.5×); eager keeps the softmax probabilities (math
// attention's autograd: dV = Pᵀ·dO, dP = dO·Vᵀ, dQ = dS·K, dK = dSᵀ·Q,
// four matmuls, 2×). The GPT-3 175B block (h = 12288, s = 2048, b = 1) has
// GEMMs 24·s·h² = 7,421,703,487,488 and, eager, the whole 4·s²·h =
// 206,158,430,208 of attention (flash: half, 103,079,215,104): eager
// backward 2·7,421,703,487,488 + 2·206,158,430,208 = 15,255,723,835,392,
// flash 2·7,421,703,487,488 + 2.5·103,079,215,104 = 15,101,105,012,736.
// The block's attention time moves with the FLOPs: backward over forward is
// exactly 2 (eager) or 2.5 (flash, sdpa) in blockClasses.
func TestAttentionBackwardByKernel(t *testing.T) {
	for _, c := range []struct {
		fwd        int64
		keepsProbs bool
		want       int64
	}{
		{206_158_430_208, true, 412_316_860_416},
		{206_158_430_208, false, 515_396_075_520},
		{7, true, 14},
		{7, false, 17}, // 17.5 rounded down
		{0, false, 0},
	} {
		got, err := AttentionBackwardFLOPs(c.fwd, c.keepsProbs)
		if err != nil || got != c.want {
			t.Errorf("AttentionBackwardFLOPs(%d, keepsProbs %v) = %d, %v; want %d", c.fwd, c.keepsProbs, got, err, c.want)
		}
	}
	if _, err := AttentionBackwardFLOPs(math.MaxInt64/2+2, true); err == nil {
		t.Error("eager backward of MaxInt64/2+2 FLOPs: no overflow error")
	}
	for _, c := range []struct {
		attention          scenarios.Attention
		kernel             scenarios.AttentionKernel
		fwd, bwd           int64
		attentionBwdFactor float64
	}{
		{scenarios.AttentionEager, scenarios.KernelEager, 7_421_703_487_488 + 206_158_430_208, 15_255_723_835_392, 2},
		{scenarios.AttentionFlash, scenarios.KernelFA2, 7_421_703_487_488 + 103_079_215_104, 15_101_105_012_736, 2.5},
		{scenarios.AttentionSDPA, scenarios.KernelFA2, 7_421_703_487_488 + 103_079_215_104, 15_101_105_012_736, 2.5},
	} {
		t.Run(string(c.attention), func(t *testing.T) {
			s := gpt3(1)
			s.Training.Attention, s.Training.AttentionKernel = c.attention, c.kernel
			costs, err := Costs(s)
			if err != nil {
				t.Fatal(err)
			}
			if b := costs[1]; b.FwdFLOPs != c.fwd || b.BwdFLOPs != c.bwd {
				t.Errorf("block: fwd %d, bwd %d FLOPs; want %d, %d", b.FwdFLOPs, b.BwdFLOPs, c.fwd, c.bwd)
			}
			d, ok := flopDims(s)
			if !ok {
				t.Fatal("no FLOP dims")
			}
			bt, err := blockClasses(d, GPUShape{Peak: 989e12, HBM: 3350e9, SMs: 132}, Efficiency{GEMM: 0.5, Attention: 0.6, HBM: 0.8}, 1, 2)
			if err != nil {
				t.Fatal(err)
			}
			if r := bt.bwd.Attention / bt.fwd.Attention; r != c.attentionBwdFactor {
				t.Errorf("attention backward/forward time = %g, want %g", r, c.attentionBwdFactor)
			}
		})
	}
}

// TestMFUTorchtitanA100Doc: docs/compute-model.md's example of
// torchtitan's count before 0c6ca903f. Its 157a12c56 table
// (testdata/validation/torchtitan-llama-a100-157a12c.json) publishes
// 58.2 % MFU for Llama 3 8B at 2,973 WPS on A100 (312 TFLOPS dense bf16),
// seq 8192. By hand, with P = 8,030,261,248, V = 128,256, h = 4,096 and
// 32 layers of 32 heads of 128: every parameter, 6·P + 12·L·H·Q·s, gives
// the published figure; zerosim's count, 6·(P − V·h) + 12·L·H·Q·s (the
// untied input embedding a lookup), gives 55.2 %. The code's count
// (modelFLOPsPerToken) is the latter.
func TestMFUTorchtitanA100Doc(t *testing.T) {
	const (
		P, V, h, L, H, Q, seq = 8030261248, 128256, 4096, 32, 32, 128, 8192
		attn                  = 12 * L * H * Q * seq
		every, matmul         = 6*P + attn, 6*(P-V*h) + attn
		wps, peak             = 2973, 312e12
	)
	// Every 8B row of the table: its published MFU is its WPS counted
	// with every parameter.
	src, _ := loadValidation(t, "../testdata/validation/torchtitan-llama-a100-157a12c")
	rows := 0
	for _, r := range src.Rows {
		if !strings.HasPrefix(r.Row, "| 8B |") {
			continue
		}
		rows++
		if mfu := fmt.Sprintf("| %.1f%% |", 100*r.TokensPerGPU*every/peak); !strings.HasSuffix(r.Row, mfu) {
			t.Errorf("row %q: %g WPS counted with every parameter gives %s", r.Row, r.TokensPerGPU, mfu)
		}
		if r.TokensPerGPU == wps && !strings.HasSuffix(r.Row, "| 58.2% |") {
			t.Errorf("row %q: the document's row publishes 58.2 %%", r.Row)
		}
	}
	if rows < 2 {
		t.Errorf("%d 8B rows", rows)
	}
	// llama3.1-8b's preset has Llama 3 8B's shapes (vocab 128,256).
	s, err := scenarios.Load("s.yaml", []byte("version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: A100-80GB}\n"+
		"model: {preset: llama3.1-8b, seq_len: 8192}\nparallelism: {dp: 8, zero_stage: 3}\ntraining: {micro_batch: 1}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if per, ok, err := modelFLOPsPerToken(s); err != nil || !ok || per != matmul {
		t.Errorf("modelFLOPsPerToken %d (%v, %v), by hand %d", per, ok, err, int64(matmul))
	}
	golden.CheckQuotes(t, "../docs/compute-model.md", "TestMFUTorchtitanA100Doc (by hand)",
		fmt.Sprintf("(Llama 3 8B: %.1f %% published for 2,973 WPS on A100, %.1f %% as zerosim counts it)", 100*wps*every/peak, 100*wps*matmul/peak))
}
