package memory

import (
	"slices"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestOpPolicyMMParity holds the op policy's kept list (keep, in the
// order the allocator replay allocates it) to hand counts written from
// each model's forward order, one block kind per row. torchtitan's
// _custom_policy (torchtitan/distributed/activation_checkpoint.py at
// 238fa9953e4aec2a62582121564273d7cbb1e9f1) saves the outputs of the
// odd-numbered aten.mm calls of a checkpointed block, counted from 1 in
// forward order, and of the attention kernel; the kept mm outputs are
// listed where they run. The router gate of a MoE block, and any mm with
// its rhs shape (h, E), is recomputed and not counted: torchtitan's
// default per_op_sac_force_recompute_mm_shapes_by_fqns ["moe.router.gate"]
// (torchtitan/config/job_config.py lines 661-663 at that commit) and
// _custom_policy's early PREFER_RECOMPUTE before meta[mm_count_key] += 1
// (activation_checkpoint.py lines 110-113); it is "(gate)" below.
// t = 4,096 tokens (s = 4,096, b = 1) in every row.
//
// The rebuilt list is every other tensor of BlockTensors: its sum is the
// block's bytes without checkpointing less the kept tensors that are
// among them (the rows' onList) and less the views of kept outputs.
func TestOpPolicyMMParity(t *testing.T) {
	const tk = 4096
	// DeepSeek-V3 (config.json: hidden 7168, 128 heads, qk_nope 128 +
	// qk_rope 64, v_head_dim 128, q_lora_rank 1536, kv_lora_rank 512,
	// intermediate_size 18432, moe_intermediate_size 2048, one shared
	// expert, 256 routed experts).
	v3 := BlockDims{Arch: "llama", Seq: tk, Batch: 1, Hidden: 7168, Heads: 128, KVHeads: 128, HeadDim: 192, ValueHeadDim: 128,
		RopeHeadDim: 64, QLoRARank: 1536, KVLoRARank: 512, FFN: 18432, Attention: AttentionSDPA}
	v3moe := v3
	v3moe.FFN, v3moe.NoFFN, v3moe.SharedFFN, v3moe.RouterExperts = 0, true, 2048, 256
	v3c := v3
	v3c.Compiled = true
	// DeepSeek-V2-Lite (hidden 2048, 16 heads, no q_lora, kv_lora_rank
	// 512, the same head dims, intermediate_size 10944, 64 routed experts
	// of 1408 and two shared: 2816).
	lite := BlockDims{Arch: "llama", Seq: tk, Batch: 1, Hidden: 2048, Heads: 16, KVHeads: 16, HeadDim: 192, ValueHeadDim: 128,
		RopeHeadDim: 64, KVLoRARank: 512, FFN: 10944, Attention: AttentionSDPA}
	liteFlash := lite
	liteFlash.Attention = AttentionFlash
	liteMoE := lite
	liteMoE.FFN, liteMoE.NoFFN, liteMoE.SharedFFN, liteMoE.RouterExperts = 0, true, 2816, 64
	// Llama 3 8B (hidden 4096, 32 heads, 8 kv heads, ffn 14336).
	llama := BlockDims{Arch: "llama", Seq: tk, Batch: 1, Hidden: 4096, Heads: 32, KVHeads: 8, FFN: 14336, Attention: AttentionSDPA}
	// GPT (hidden 1024, 16 heads, ffn 4096): the gpt preset's block has
	// a bias on every matrix (scenarios' buildLayers); gptNoBias is the
	// same block without (Falcon's bias: false).
	gpt := BlockDims{Seq: tk, Batch: 1, Hidden: 1024, Heads: 16, FFN: 4096, Attention: AttentionFlash, QKVBias: true, OBias: true, MLPBias: true}
	gptNoBias := gpt
	gptNoBias.QKVBias, gptNoBias.OBias, gptNoBias.MLPBias = false, false, false
	// Qwen2-style: Llama 3 8B's block with biases on q, k and v only.
	qwen2 := BlockDims{Arch: "llama", Seq: tk, Batch: 1, Hidden: 4096, Heads: 32, KVHeads: 8, FFN: 14336, Attention: AttentionSDPA, QKVBias: true}
	// Qwen3-Next-80B-A3B's Gated DeltaNet block (hidden 2048, 16 key
	// heads and 32 value heads of 128; 512 routed experts, a gated shared
	// expert of 512).
	gdn := BlockDims{Arch: "llama", Seq: tk, Batch: 1, Hidden: 2048, Heads: 16, KVHeads: 2, Attention: AttentionFlash, NoFFN: true,
		SharedFFN: 512, SharedGate: true, RouterExperts: 512, LinearAttention: scenarios.LinearGatedDeltaNet,
		LinearKeyHeads: 16, LinearValueHeads: 32, LinearKeyHeadDim: 128, LinearValueHeadDim: 128}

	// Qwen3-Next-80B-A3B's gated-attention block (hidden 2048, 16 heads
	// of 256, 2 kv heads, q_proj twice as wide for the output gate,
	// Gemma-style q/k norms; 512 routed experts, a gated shared expert
	// of 512).
	gated := BlockDims{Arch: "llama", Seq: tk, Batch: 1, Hidden: 2048, Heads: 16, KVHeads: 2, HeadDim: 256, OutputGate: true,
		QKNorm: scenarios.QKNormGemma, Attention: AttentionFlash, NoFFN: true, SharedFFN: 512, SharedGate: true, RouterExperts: 512}
	// gpt-oss-20b (hidden 2880, 64 heads of 64, 8 kv heads, 32 routed
	// experts; a gpt-style block here): every linear has a bias.
	oss := BlockDims{Seq: tk, Batch: 1, Hidden: 2880, Heads: 64, KVHeads: 8, HeadDim: 64, NoFFN: true, RouterExperts: 32,
		QKVBias: true, OBias: true, MLPBias: true, Attention: AttentionFlash}

	const (
		// DeepSeek-V3
		v3In   = 2 * tk * 7168       // block input, wo's output
		v3Qa   = 2 * tk * 1536       // wq_a's output
		v3KVa  = 2 * tk * (512 + 64) // wkv_a's output
		v3Attn = 2 * tk * 128 * 128  // SDPA's output (o_proj's input)
		v3LSE  = 4 * 128 * tk        // its log-sum-exp
		v3W3   = 2 * tk * 18432      // w3's output
		v3SW3  = 2 * tk * 2048       // the shared expert's w3 output
		lIn    = 2 * tk * 2048       // V2-Lite block input, wo's and w2's outputs
		lQ     = 2 * tk * 16 * 192   // wq's output
		lKVb   = 2 * tk * 16 * 256   // wkv_b's output (k_nope and v)
		lAttn  = 2 * tk * 16 * 128   // SDPA's output
		lPad   = 2 * tk * 16 * 192   // flash's output padded to d_qk
		lLSE   = 4 * 16 * tk         // log-sum-exp
		lW1    = 2 * tk * 10944      // w1's output
		lSW1   = 2 * tk * 2816       // the shared experts' w1 output
		llIn   = 2 * tk * 4096       // Llama
		llKV   = 2 * tk * 1024       // wv's output
		llLSE  = 4 * 32 * tk         // log-sum-exp
		llW1   = 2 * tk * 14336      // w1's output
		gIn    = 2 * tk * 1024       // GPT
		gQKV   = 2 * tk * 3 * 1024   // the fused qkv output
		gLSE   = 4 * 16 * tk         // log-sum-exp
		gFC1   = 2 * tk * 4096       // fc1's output
		dIn    = 2 * tk * 2048       // GDN block input, out_proj's and the shared down_proj's outputs
		dQKVZ  = 2 * tk * (2*2048 + 2*4096)
		oIn    = 2 * tk * 2880 // gpt-oss block input
		oAttn  = 2 * tk * 64 * 64
		oLSE   = 4 * 64 * tk
		v3Sum  = v3In + v3Qa + v3KVa + v3Attn + v3LSE + v3In + v3W3
		v3Prev = 2*tk*128*192 + 2*tk*128*192 + 2*tk*7168 // Llama's wq, wv, w2 numbering on this block
	)
	if v3Qa+v3KVa+v3In != 76_021_760 || v3Prev != 461_373_440 {
		t.Fatalf("hand count: mm outputs kept beside the list %d, Llama numbering %d", v3Qa+v3KVa+v3In, v3Prev)
	}
	// The DeepSeek-V3 MoE block keeps 287,834,112 B (the gate counted,
	// it kept the shared w1 and w2 outputs instead of w3's: 346,554,368).
	if v := v3In + v3Qa + v3KVa + v3Attn + v3LSE + v3In + v3SW3; v != 287_834_112 {
		t.Fatalf("hand count: DeepSeek-V3 MoE block %d", v)
	}
	for _, c := range []struct {
		name string
		d    BlockDims
		// keep: the kept list in forward order; onList: those of them
		// that are tensors of BlockTensors (the rest are mm outputs
		// autograd does not keep); views: bytes of BlockTensors' views
		// of kept outputs (neither kept nor rebuilt).
		keep          []int64
		onList, views int64
	}{
		// wq_a 1*, wq_b 2, wkv_a 3*, wkv_b 4, wo 5*, w1 6, w3 7*, w2 8.
		{"DeepSeek-V3 dense", v3, []int64{v3In, v3Qa, v3KVa, v3Attn, v3LSE, v3In, v3W3}, v3Attn + v3LSE + v3W3, 0},
		// ... wo 5*, (gate), shared w1 6, w3 7*, w2 8 (only the sum
		// with the routed experts' output reads it).
		{"DeepSeek-V3 MoE", v3moe, []int64{v3In, v3Qa, v3KVa, v3Attn, v3LSE, v3In, v3SW3}, v3Attn + v3LSE + v3SW3, 0},
		// Compiled (the block input is kept without checkpointing too):
		// wq_a's output is the q_a norm's kept 16-bit input,
		// kv_a's first r_kv columns a view of wkv_a's; wo's output, read
		// by the residual add only, is dropped by the partitioner.
		{"DeepSeek-V3 dense compiled", v3c, []int64{v3In, v3Qa, v3KVa, v3Attn, v3LSE, v3W3}, v3In + v3Qa + v3Attn + v3LSE + v3W3, 2 * tk * 512},
		// wq 1*, wkv_a 2, wkv_b 3* (SDPA's v is a view that keeps all
		// of it), wo 4, w1 5*, w3 6, w2 7*.
		{"DeepSeek-V2-Lite dense sdpa", lite, []int64{lIn, lQ, lKVb, lAttn, lLSE, lW1, lIn}, lKVb + lAttn + lLSE + lW1, 0},
		// flash pads v: wkv_b's output is no kept tensor.
		{"DeepSeek-V2-Lite dense flash", liteFlash, []int64{lIn, lQ, lKVb, lPad, lLSE, lW1, lIn}, lPad + lLSE + lW1, 0},
		// wq 1*, wkv_a 2, wkv_b 3*, wo 4, (gate), shared w1 5*, w3 6,
		// w2 7* (only the sum reads it: kept beside the list).
		{"DeepSeek-V2-Lite MoE", liteMoE, []int64{lIn, lQ, lKVb, lAttn, lLSE, lSW1, lIn}, lKVb + lAttn + lLSE + lSW1, 0},
		// wq 1*, wk 2, wv 3*, wo 4, w1 5*, w3 6, w2 7*.
		{"Llama 3 8B", llama, []int64{llIn, llIn, llKV, llIn, llLSE, llW1, llIn}, llIn + llLSE + llW1, 0},
		// [qkv proj fc1 fc2]: each has a bias and runs aten.addmm
		// (pytorch aten/src/ATen/native/Linear.cpp at 81735ee), which
		// the policy neither counts nor keeps: the block input (which
		// LayerNorm keeps without checkpointing too), the attention
		// output and log-sum-exp; q, k, v and fc1's output are rebuilt.
		{"GPT", gpt, []int64{gIn, gIn, gLSE}, gIn + gIn + gLSE, 0},
		// Without biases: qkv 1* (q, k, v views of it), proj 2, fc1 3*,
		// fc2 4.
		{"GPT without biases", gptNoBias, []int64{gIn, gQKV, gIn, gLSE, gFC1}, gIn + gIn + gLSE + gFC1, 3 * gIn},
		// Qwen2: [wq wk wv] addmm, wo 1* (only the residual reads it:
		// kept beside the list), w1 2, w3 3*, w2 4.
		{"Qwen2 (q, k, v biases)", qwen2, []int64{llIn, llIn, llLSE, llIn, llW1}, llIn + llLSE + llW1, 0},
		// Qwen3-Next's 512 experts at h 2048 give the gate the rhs
		// shape (2048, 512) of its k_proj and v_proj (2 kv heads of 256)
		// and of its shared expert's gate_proj and up_proj (512 wide):
		// all of them are forced. wq 1* (query and gate, 2·t·2·a·d),
		// (wk), (wv) (flash's v, a view of it, is rebuilt), wo 2,
		// (gate), (shared w1), (w3), w2 3* (the gate's product keeps
		// it), shared gate 4.
		{"Qwen3-Next gated attention MoE", gated, []int64{dIn, 2 * tk * 2 * 4096, 2 * tk * 4096, 4 * 16 * tk, dIn},
			2*tk*4096 + 4*16*tk + dIn, 0},
		// in_proj_qkvz 1*, in_proj_ba 2, out_proj 3*, (gate), (shared
		// w1), (w3), w2 4, shared gate 5* (2·t, only the sigmoid reads it).
		{"Qwen3-Next GDN MoE", gdn, []int64{dIn, dQKVZ, dIn, 2 * tk}, 0, 0},
		// q, k, v, o and the router gate run addmm, the experts
		// _grouped_mm: no mm, nothing kept but the input and the
		// attention kernel's outputs; q, k and v are rebuilt.
		{"gpt-oss", oss, []int64{oIn, oAttn, oLSE}, oIn + oAttn + oLSE, 0},
	} {
		checkOpKeep(t, c.name, c.d, c.keep, c.onList, c.views)
	}
}

// TestOpPolicyRoutedExperts: under the op policy a unit of routed experts
// keeps nothing at ep 1 (torchtitan's MoE past the router gate runs no op
// of the save list: torch._grouped_mm is not aten.mm) and rebuilds what
// full recompute rebuilds; at ep > 1 it keeps the two all_to_all_single
// outputs, 2·h bytes per (token, expert) row each. Qwen3-30B-A3B's MoE
// (h 2048, 128 experts, top-8, expert ffn 768, softmax top-k router with
// norm_topk_prob) at s = 4096, b = 1: the experts' rows keep
// 4096·8·(4·2048 + 6·768) = 419,430,400 B; the router's tensors
// (RouterTensors) 4·t·E + 8·t·k + 4·t·k + 4·t + 16·t·k + 2·t·k =
// 4096·756 = 3,096,576 B. torchtitan's qwen3 save list
// (torchtitan/models/qwen3/infra/parallelize.py lines 39-53 at
// 238fa9953e4aec2a62582121564273d7cbb1e9f1) has no all_to_all_single:
// under it (saveA2A false) ep 16 keeps nothing either.
func TestOpPolicyRoutedExperts(t *testing.T) {
	d := &scenarios.BlockDims{Hidden: 2048, Experts: 128, TopK: 8, ExpertFFN: 768, Router: scenarios.RouterSoftmaxTopK, RouterNorm: true}
	const rows, router = 419_430_400, 3_096_576
	const a2a = 4096 * 8 * 4 * 2048 // 268,435,456
	for _, c := range []struct {
		policy            scenarios.Recompute
		ep                int
		saveA2A           bool
		stored, transient int64
	}{
		{scenarios.RecomputeNone, 1, true, rows + router, 0},
		{scenarios.RecomputeFull, 1, true, 0, rows + router},
		{scenarios.RecomputeOp, 1, true, 0, rows + router},
		{scenarios.RecomputeOp, 16, true, a2a, rows + router - a2a},
		{scenarios.RecomputeOp, 16, false, 0, rows + router},
		{scenarios.RecomputeSelective, 16, true, rows + router, 0},
	} {
		st, tr, err := moeActivation(4096, 1, d, c.policy, false, c.ep, c.saveA2A)
		if err != nil {
			t.Fatal(err)
		}
		if st != c.stored || tr != c.transient {
			t.Errorf("%s, ep %d: stored %d, rebuilt %d; want %d, %d", c.policy, c.ep, st, tr, c.stored, c.transient)
		}
	}
}

// TestOpPolicyRouterGateWired: a scenario's MoE block runs its router
// gate (routerGateExperts: the routed experts are the next unit), which
// torchtitan's op policy recomputes without counting it
// (per_op_sac_force_recompute_mm_shapes_by_fqns's default
// ["moe.router.gate"], torchtitan/config/job_config.py lines 661-663 and
// torchtitan/distributed/activation_checkpoint.py lines 110-113 at
// 238fa9953e4aec2a62582121564273d7cbb1e9f1): it keeps nothing of it and
// reruns it. s = 4096, b = 1:
//
//   - Qwen3-30B-A3B (no shared expert, 128 experts, GQA 32/4 heads of
//     128, hidden 2048), sdpa: wq 1*, wk 2, wv 3*, wo 4, (gate), so
//     block.0 keeps, in forward order, its input 2·t·h, wq's output
//     2·t·4096, wv's 2·t·512, the attention output 2·t·4096 and
//     log-sum-exp 4·32·t (counted, the gate would have been 5* and kept
//     2·t·128 = 1,048,576 B more); it reruns wk, wo and the gate,
//     2·t·2048·(512 + 4096 + 128) = 79,456,894,976 FLOPs.
//   - Mixtral-8x7B (h 4096, 32/8 heads of 128, 8 experts) at ep 8, flash:
//     block.0 keeps 2·t·4096 + 2·t·4096 + 2·t·1024 (flash's v is a view of
//     wv's output) + 2·t·4096 + 4·32·t = 109,576,192 B (not 109,641,728
//     with the gate's 2·t·8), and reruns 2·t·4096·(1024 + 4096 + 8) =
//     172,067,127,296 FLOPs.
//   - gpt-oss-20b, whose linears all have biases, keeps no mm output.
func TestOpPolicyRouterGateWired(t *testing.T) {
	const tk = 4096
	for _, c := range []struct {
		config, par, attention string
		keep                   []int64
		flops                  int64
	}{
		{"hf-extra/qwen3-30b-a3b.json", "dp: 8", "sdpa", []int64{2 * tk * 2048, 2 * tk * 4096, 2 * tk * 512, 2 * tk * 4096, 4 * 32 * tk}, 79_456_894_976},
		{"hf/mixtral-8x7b/config.json", "dp: 8, ep: 8", "flash", []int64{2 * tk * 4096, 2 * tk * 4096, 2 * tk * 1024, 2 * tk * 4096, 4 * 32 * tk}, 172_067_127_296},
		{"hf-extra/gpt-oss-20b.json", "dp: 8", "flash", []int64{2 * tk * 2880, 2 * tk * 4096, 4 * 64 * tk}, -1},
	} {
		doc := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {hf_config: " + c.config + ", layers: 2, seq_len: 4096}\n" +
			"parallelism: {" + c.par + ", zero_stage: 3}\ntraining: {micro_batch: 1, recompute: op, attention: " + c.attention + "}\n"
		s, err := scenarios.Load("../scenarios/testdata/s.yaml", []byte(doc), nil)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Analyze(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for u, ui := range r.Units {
			if ui.Name != "block.0" {
				continue
			}
			found = true
			if !slices.Equal(ui.ActivationTensors, c.keep) {
				t.Errorf("%s: block.0 keeps %v, want %v", c.config, ui.ActivationTensors, c.keep)
			}
			if c.flops < 0 {
				continue
			}
			if f, err := UnitOpRecomputedMMFLOPs(s, u); err != nil || f != c.flops {
				t.Errorf("%s: block.0 reruns %d FLOPs (%v), want %d", c.config, f, err, c.flops)
			}
		}
		if !found {
			t.Fatalf("%s: no block.0", c.config)
		}
	}
}

// TestOpBiasesFromScenario: the blocks' biases reach the op policy from
// the scenario (UnitBlockDims), per matrix. The gpt preset's block has a
// bias on every matrix (scenarios' buildLayers: "attention (q, k, v, o
// with biases) … MLP (ffn with biases)"): at h 1024, f 4096, t 4096 its
// four addmm linears all rerun, 2·t·(4·h² + 2·h·f) = 103,079,215,104.
// Qwen2.5-72B (config.json: hidden 8192, 64 heads, 8 kv heads, ffn
// 29568; Qwen2Attention's q_proj, k_proj, v_proj with bias=True, o_proj
// and the MLP without) reruns wq, wk, wv, w1 and w2 ([wq wk wv] wo* w1
// w3* w2): 2·t·(h·h + 2·h·1024 + 2·h·f) = 4,655,744,548,864. Falcon-7B
// (bias: false) has none.
func TestOpBiasesFromScenario(t *testing.T) {
	for _, c := range []struct {
		name, model string
		qkv, o, mlp bool
		flops       int64
	}{
		{"gpt preset", "{kind: transformer, hidden: 1024, heads: 16, layers: 2, seq_len: 4096, vocab: 50257}", true, true, true, 103_079_215_104},
		{"qwen2.5-72b", "{hf_config: hf-extra/qwen2.5-72b.json, layers: 2, seq_len: 4096}", true, false, false, 4_655_744_548_864},
		{"falcon-7b", "{hf_config: hf-extra/falcon-7b.json, layers: 2, seq_len: 4096}", false, false, false, -1},
	} {
		doc := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: " + c.model +
			"\nparallelism: {dp: 8, zero_stage: 3}\ntraining: {micro_batch: 1, recompute: op}\n"
		s, err := scenarios.Load("../scenarios/testdata/s.yaml", []byte(doc), nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		u := -1
		for i, l := range s.Model.LayerList {
			if l.Name == "block.0" {
				u = i
			}
		}
		d := UnitBlockDims(s, u)
		if d.QKVBias != c.qkv || d.OBias != c.o || d.MLPBias != c.mlp {
			t.Errorf("%s: biases q/k/v %v, o %v, mlp %v; want %v, %v, %v", c.name, d.QKVBias, d.OBias, d.MLPBias, c.qkv, c.o, c.mlp)
		}
		if c.flops < 0 {
			continue
		}
		if f, err := UnitOpRecomputedMMFLOPs(s, u); err != nil || f != c.flops {
			t.Errorf("%s: op reruns %d FLOPs (%v), want %d", c.name, f, err, c.flops)
		}
	}
}

// checkOpKeep checks d's op-policy lists: keep as listed, and the rebuilt
// bytes BlockTensors' other tensors, none − onList − views (onList: the
// kept tensors of the list; views: tensors that are views of a kept mm
// output, neither kept again nor rebuilt).
func checkOpKeep(t *testing.T, name string, d BlockDims, want []int64, onList, views int64) {
	t.Helper()
	keep, rebuild, err := BlockActivationTensors(d, PolicyOp)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if !slices.Equal(keep, want) {
		t.Errorf("%s: keep %v, want %v", name, keep, want)
	}
	none, _, err := BlockActivation(d, PolicyNone)
	if err != nil {
		t.Fatal(err)
	}
	var rb int64
	for _, x := range rebuild {
		rb += x
	}
	if w := none - onList - views; rb != w {
		t.Errorf("%s: rebuilt %d B, want %d", name, rb, w)
	}
}
