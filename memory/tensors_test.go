package memory

import (
	"slices"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestBlockActivationKorthikanti checks the tensor list against Korthikanti
// et al. 2022, §4.1 (Eq. 1): a GPT block with dropout and explicit
// attention keeps 34·s·b·h + 5·a·s²·b bytes; the paper leaves out the
// LayerNorms' fp32 mean and rstd (2 × 8·t). Selective recomputation (§5)
// drops the 5·a·s²·b; full recomputation keeps 2·s·b·h.
func TestBlockActivationKorthikanti(t *testing.T) {
	for i, c := range []struct{ s, b, h, a int64 }{
		{2048, 1, 12288, 96}, // GPT-3 175B
		{2048, 4, 4096, 32},
		{8192, 2, 5120, 40},
	} {
		d := BlockDims{Arch: "gpt", Seq: c.s, Batch: c.b, Hidden: c.h, Heads: c.a, Dropout: true, Attention: AttentionEager}
		stats := 2 * 8 * c.s * c.b
		sbh, attn := c.s*c.b*c.h, 5*c.a*c.s*c.s*c.b
		for _, p := range []struct {
			policy string
			want   int64
		}{
			{PolicyNone, 34*sbh + attn + stats},
			{PolicySelective, 34*sbh + stats},
			{PolicyFull, 2 * sbh},
		} {
			got, tr, err := BlockActivation(d, p.policy)
			if err != nil {
				t.Fatal(err)
			}
			if got != p.want {
				t.Errorf("%d %s: stored %d, want %d", i, p.policy, got, p.want)
			}
			if got+tr != 34*sbh+attn+stats {
				t.Errorf("%d %s: stored+transient %d, want the whole block %d", i, p.policy, got+tr, 34*sbh+attn+stats)
			}
		}
		// The legacy formula agrees with the tensor list.
		old, _, err := TransformerActivation(c.s, c.b, c.h, c.a, "none")
		if err != nil || old != 34*sbh+attn {
			t.Errorf("%d: TransformerActivation %d, %v", i, old, err)
		}
	}
}

// TestBlockActivationLlama checks Llama 3.1 8B (h 4096, a 32, kv 8, f 14336)
// at s 8192, b 2 against sums worked by hand from the tensor list in
// docs/memory-model.md, t = 16384.
func TestBlockActivationLlama(t *testing.T) {
	const tk, h, kv, f, a, s, b int64 = 16384, 4096, 1024, 14336, 32, 8192, 2
	d := BlockDims{Arch: "llama", Seq: s, Batch: b, Hidden: h, Heads: a, KVHeads: 8, FFN: f, Attention: AttentionSDPA, Vocab: 128256, LossFP32: true}
	norm := 4*tk*h + 4*tk + 2*tk*h
	lse := 4 * a * s * b
	// sdpa: repeat_kv keeps k and v at full width; the kernel's output is
	// wo's input (its transpose(1, 2).contiguous() is a view).
	none := 2*norm + 2*tk*h /*norm out*/ + 3*2*tk*h /*q k v*/ + 2*tk*h + lse /*o*/ + 2*tk*h /*ffn in*/ + 4*2*tk*f
	op := 2*tk*h /*input*/ + 2*tk*h /*wq*/ + 2*tk*kv /*wv*/ + 2*tk*h + lse /*sdpa*/ + 2*tk*f /*w1*/ + 2*tk*h /*w2*/
	for _, c := range []struct {
		policy string
		attn   string
		stored int64
		recalc int64
	}{
		{PolicyNone, AttentionSDPA, none, 0},
		// The op policy's backward rebuilds every tensor but the
		// attention kernel's outputs and w1's: RoPE's new q and k and
		// repeat_kv's copies of k and v too, though wq's and wv's
		// outputs are kept (torchtitan's apply_rotary_emb and
		// repeat_kv); w2's kept output stands for no listed tensor.
		{PolicyOp, AttentionSDPA, op, none - 2*tk*h - lse - 2*tk*f},
		{PolicyFull, AttentionSDPA, 2 * tk * h, none},
		// Selective rebuilds the core attention only (the log-sum-exp),
		// not the block input, which it does not keep.
		{PolicySelective, AttentionSDPA, none - lse, lse},
		// flash keeps k, v at kv width.
		{PolicyNone, AttentionFlash, none - 2*(2*tk*h-2*tk*kv), 0},
		// ... and its v is wv's kept output: not rebuilt under op.
		{PolicyOp, AttentionFlash, op, none - 2*(2*tk*h-2*tk*kv) - 2*tk*h - lse - 2*tk*f - 2*tk*kv},
	} {
		d.Attention = c.attn
		got, tr, err := BlockActivation(d, c.policy)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.stored || tr != c.recalc {
			t.Errorf("%s/%s: stored %d transient %d, want %d %d", c.policy, c.attn, got, tr, c.stored, c.recalc)
		}
	}
	hs, ht, err := HeadActivation(d)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(norm + 2*tk*h + 4*tk*128256); hs != want || ht != 8*tk*128256 {
		t.Errorf("head: %d %d, want %d %d", hs, ht, want, 8*tk*128256)
	}
}

func TestEveryNth(t *testing.T) {
	var got []int
	for i := range 8 {
		if EveryNth(i, 3) {
			got = append(got, i)
		}
	}
	if len(got) != 2 || got[0] != 2 || got[1] != 5 {
		t.Errorf("every 3rd of 8 blocks: %v, want [2 5]", got)
	}
	if !EveryNth(0, 1) || !EveryNth(0, 0) {
		t.Error("n ≤ 1 checkpoints every block")
	}
}

// TestUnitActivations checks every-Nth-block checkpointing and the head on
// a resolved Llama scenario: with recompute full every 2nd block, blocks
// 1 and 3 (0-based) keep only their input, blocks 0 and 2 everything, and
// lm_head carries the fp32 loss.
func TestUnitActivations(t *testing.T) {
	s := resolved(&scenarios.Scenario{
		Cluster:     scenarios.Cluster{Nodes: 1, GPUsPerNode: 2, GPU: "H100-80GB"},
		Model:       scenarios.Model{Kind: "transformer", Arch: "llama", Hidden: 1024, Layers: 4, Heads: 8, KVHeads: 2, FFN: 2816, Vocab: 32000, SeqLen: 2048},
		Parallelism: scenarios.Parallelism{DP: 2, Stage: 3},
		Training:    scenarios.Training{MicroBatch: 2, Recompute: "full", RecomputeEvery: 2},
	})
	st, tr, err := unitActivations(s)
	if err != nil {
		t.Fatal(err)
	}
	d := BlockDims{Arch: "llama", Seq: 2048, Batch: 2, Hidden: 1024, Heads: 8, KVHeads: 2, FFN: 2816, Vocab: 32000, LossFP32: true, Attention: AttentionFlash}
	none, _, _ := BlockActivation(d, PolicyNone)
	full, fullT, _ := BlockActivation(d, PolicyFull)
	hs, ht, _ := HeadActivation(d)
	// Units: embedding, block.0 … block.3, final_norm, lm_head.
	want := []int64{0, none, full, none, full, 0, hs}
	wantT := []int64{0, 0, fullT, 0, fullT, 0, ht}
	for u := range want {
		if st[u] != want[u] || tr[u] != wantT[u] {
			t.Errorf("unit %d %s: %d/%d, want %d/%d", u, s.Model.LayerList[u].Name, st[u], tr[u], want[u], wantT[u])
		}
	}
}

// TestBlockActivationLlamaCompiled checks a compiled Llama 3.1 8B block
// (s 8192, b 2, t = 16384; the table of docs/memory-model.md) against sums
// worked by hand: compiled, the block keeps its 16-bit input and the
// residual sum instead of RMSNorm's fp32 upcast and normalized tensor, does
// not keep silu(w1), and under the op policy does not keep w2's output.
func TestBlockActivationLlamaCompiled(t *testing.T) {
	const tk, h, kv, f, a, s, b int64 = 16384, 4096, 1024, 14336, 32, 8192, 2
	d := BlockDims{Arch: "llama", Seq: s, Batch: b, Hidden: h, Heads: a, KVHeads: 8, FFN: f, Attention: AttentionSDPA, Vocab: 128256, LossFP32: true, Compiled: true}
	lse := 4 * a * s * b
	none := 2*tk*h /*input*/ + 4*tk /*rstd*/ + 2*tk*h /*norm out*/ + 3*2*tk*h /*q k v*/ + 2*tk*h + lse /*o*/ +
		2*tk*h /*h*/ + 4*tk /*rstd*/ + 2*tk*h /*ffn in*/ + 3*2*tk*f /*w1, w3, w2 input*/
	op := 2*tk*h /*input*/ + 2*tk*h /*wq*/ + 2*tk*kv /*wv*/ + 2*tk*h + lse /*sdpa*/ + 2*tk*f /*w1*/
	for _, c := range []struct {
		policy string
		attn   string
		stored int64
		recalc int64
	}{
		{PolicyNone, AttentionSDPA, none, 0},
		// Rebuilt: all but the input, the kernel's outputs and w1's
		// (RoPE's q and k, repeat_kv's k and v: see above).
		{PolicyOp, AttentionSDPA, op, none - 2*tk*h - 2*tk*h - lse - 2*tk*f},
		{PolicyFull, AttentionSDPA, 2 * tk * h, none - 2*tk*h},
		{PolicySelective, AttentionSDPA, none - lse, lse},
		{PolicyNone, AttentionFlash, none - 2*(2*tk*h-2*tk*kv), 0},
	} {
		d.Attention = c.attn
		got, tr, err := BlockActivation(d, c.policy)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.stored || tr != c.recalc {
			t.Errorf("%s/%s: stored %d transient %d, want %d %d", c.policy, c.attn, got, tr, c.stored, c.recalc)
		}
	}
	// Against eager: 8·t·h + 2·t·f less without checkpointing (two norms'
	// 4·t·h + 2·t·h − 2·t·h, and silu), 2·t·h (w2's output) less under op.
	eager := d
	eager.Compiled, eager.Attention = false, AttentionSDPA
	d.Attention = AttentionSDPA
	for _, c := range []struct {
		policy string
		less   int64
	}{{PolicyNone, 8*tk*h + 2*tk*f}, {PolicyOp, 2 * tk * h}, {PolicyFull, 0}} {
		e, _, _ := BlockActivation(eager, c.policy)
		g, _, _ := BlockActivation(d, c.policy)
		if e-g != c.less {
			t.Errorf("%s: compiled keeps %d B less than eager, want %d", c.policy, e-g, c.less)
		}
	}
	// A compiled loss keeps the bf16 logits and writes a bf16 gradient.
	d.LossCompiled = true
	hs, ht, err := HeadActivation(d)
	if err != nil {
		t.Fatal(err)
	}
	norm := 4*tk*h + 4*tk + 2*tk*h // the final norm stays eager
	if want := norm + 2*tk*h + 2*tk*128256; hs != want || ht != 2*tk*128256 {
		t.Errorf("compiled head: %d %d, want %d %d", hs, ht, want, 2*tk*128256)
	}
}

// TestBlockActivationGPTCompiled: a GPT block keeps the same tensors
// compiled as eager (LayerNorm saves its input and statistics either way;
// GeLU's input and output are an mm output and an mm input).
func TestBlockActivationGPTCompiled(t *testing.T) {
	for _, attn := range []string{AttentionFlash, AttentionSDPA, AttentionEager} {
		for _, p := range []string{PolicyNone, PolicySelective, PolicyOp, PolicyFull} {
			d := BlockDims{Arch: "gpt", Seq: 2048, Batch: 4, Hidden: 4096, Heads: 32, Dropout: true, Attention: attn}
			es, et, err := BlockActivation(d, p)
			if err != nil {
				t.Fatal(err)
			}
			d.Compiled = true
			cs, ct, err := BlockActivation(d, p)
			if err != nil {
				t.Fatal(err)
			}
			if cs != es || ct != et {
				t.Errorf("%s/%s: compiled %d/%d, eager %d/%d", attn, p, cs, ct, es, et)
			}
		}
	}
}

// TestUnitActivationsCompile: training.compile reaches the blocks and the
// head of a resolved scenario, and leaves the embedding and final norm.
func TestUnitActivationsCompile(t *testing.T) {
	for _, c := range []scenarios.Compile{scenarios.CompileBlocks, scenarios.CompileLoss, scenarios.CompileBlocksLoss} {
		s := resolved(&scenarios.Scenario{
			Cluster:     scenarios.Cluster{Nodes: 1, GPUsPerNode: 2, GPU: "H100-80GB"},
			Model:       scenarios.Model{Kind: "transformer", Arch: "llama", Hidden: 1024, Layers: 2, Heads: 8, KVHeads: 2, FFN: 2816, Vocab: 32000, SeqLen: 2048},
			Parallelism: scenarios.Parallelism{DP: 2, Stage: 3},
			Training:    scenarios.Training{MicroBatch: 2, Recompute: "op", Compile: c},
		})
		st, tr, err := unitActivations(s)
		if err != nil {
			t.Fatal(err)
		}
		d := BlockDims{Arch: "llama", Seq: 2048, Batch: 2, Hidden: 1024, Heads: 8, KVHeads: 2, FFN: 2816, Vocab: 32000, LossFP32: true, Attention: AttentionFlash,
			Compiled: c.Blocks(), LossCompiled: c.Loss()}
		bs, bt, _ := BlockActivation(d, PolicyOp)
		hs, ht, _ := HeadActivation(d)
		want := []int64{0, bs, bs, 0, hs}
		wantT := []int64{0, bt, bt, 0, ht}
		for u := range want {
			if st[u] != want[u] || tr[u] != wantT[u] {
				t.Errorf("%s unit %d %s: %d/%d, want %d/%d", c, u, s.Model.LayerList[u].Name, st[u], tr[u], want[u], wantT[u])
			}
		}
	}
}

// TestHeadLossGradTensors: the head's rebuilt tensors are the loss
// backward's gradients as the losses write them (headParts), Llama 2 7B at
// t = 4,096, V = 32,000: the eager fp32 loss's nll_loss gradient and
// log_softmax's input gradient, 4·t·V each; a compiled loss's
// (torchtitan's build_cross_entropy_loss, Inductor's fused backward) and
// flash-attn's fused loss's (at::empty_like(logits)) one 16-bit logits
// gradient, 2·t·V.
func TestHeadLossGradTensors(t *testing.T) {
	const tV = 4096 * 32000
	for _, c := range []struct {
		set  string
		want []int64
	}{
		{"training.compile=none", []int64{4 * tV, 4 * tV}},
		{"training.compile=loss", []int64{2 * tV}},
		{"training.cross_entropy=fused", []int64{2 * tV}},
	} {
		r, err := Analyze(loadFSDP(t, c.set), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Units[len(r.Units)-1].RecomputeTensors; !slices.Equal(got, c.want) {
			t.Errorf("%s: head rebuilds %v, want %v", c.set, got, c.want)
		}
	}
}
