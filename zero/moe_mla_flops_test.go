package zero

import (
	"fmt"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/scenarios"
)

// TestSharedExpertAndMLAFLOPs counts from the modeling code the forward
// FLOPs of one Mixtral-8x7B block, one DeepSeek-V3 block and one
// Qwen1.5-MoE block (s = 4096, b = 1: t = 4096 tokens) and checks Costs
// equals them. The FLOP count these blocks take (Costs, past the
// per-operation model) charges 2·t FLOPs per parameter of the unit (the
// Linear weights' multiply-adds, and the norm weights and router bias,
// which it counts alike) and the core attention by the per-operation
// model's rule: QKᵀ and P·V, 2·b·a·s²·(d_qk + d_v) with d_v the width the
// kernel computes P·V at, halved under flash and sdpa, whose kernels skip
// the masked key blocks (FlashAttention-2's compute_attn_1rowblock,
// csrc/flash_attn/src/flash_fwd_kernel.h @
// Dao-AILab/flash-attention 0142ff05acc56c45755638857e77e35f1c350098:
// n_block_max stops at the diagonal when Is_causal), whole under eager.
// Backward is 2× the matmuls and 2.5× the attention under flash and sdpa
// (FlashAttention-2's five matmuls to two), 2× under eager (math attention
// keeps P: dV, dP, dQ, dK, four matmuls to two). Sources: transformers
// models/mixtral/modeling_mixtral.py @
// af3efdd71ee5b568dfdb71bb41d316df830147af (MixtralAttention: q_proj
// h→a·d, k_proj and v_proj h→kv·d, o_proj a·d→h, d = h/a, is_causal;
// MixtralSparseMoeBlock: gate Linear(h, num_local_experts, bias=False),
// the experts a unit of their own), models/deepseek_v3/
// modeling_deepseek_v3.py @ f5a9ec512fa9fe69e51ea0c6388c68d50de567b3
// (DeepseekV3Attention: q_a_proj, q_b_proj, kv_a_proj_with_mqa, kv_b_proj,
// o_proj; DeepseekV3MoE: shared_experts = DeepseekV3MLP(2048 × 1); the
// flash_attention_2 path pads v to q·k's width) and models/qwen2_moe/
// modeling_qwen2_moe.py @ 1c351314a42ac9aef3510fc536c18130d52be2ef
// (shared_expert Qwen2MoeMLP(5632), shared_expert_gate Linear(h, 1)).
// Every token goes through the shared expert: its GEMMs are in the
// block's count at all t tokens.
func TestSharedExpertAndMLAFLOPs(t *testing.T) {
	const tk, s = int64(4096), int64(4096)
	// DeepSeek-V3: h 7168, 128 heads, d_qk 192 (128 nope + 64 rope),
	// d_v 128, q_lora 1536, kv_lora 512, ffn 18432, 256 routed experts.
	const h, a, dqk, dv, rq, rkv int64 = 7168, 128, 192, 128, 1536, 512
	attnW := h*rq + rq*a*dqk + h*(rkv+64) + rkv*a*(128+dv) + a*dv*h // Linear weights
	norms := 2*h + rq + rkv                                         // input/post norms, q_a/kv_a norms
	mlp := func(f int64) int64 { return 3 * h * f }
	router := 256*h + 256 // weight and e_score_correction_bias
	// core is QKᵀ at d_qk plus P·V at vk, 2·b·a·s²·(d_qk + vk); causal
	// kernels (flash, sdpa) compute half.
	core := func(vk int64) int64 { return 2 * s * s * a * (dqk + vk) }
	// Qwen1.5-MoE: h 2048, 16 heads of 128, qkv biases, 60 experts.
	const qh int64 = 2048
	qwen := 3*(qh*qh+qh) + qh*qh + 2*qh + 60*qh + 3*qh*5632 + qh // attention, norms, router, shared MLP, shared gate
	// Mixtral-8x7B: h 4096, 32 heads of 128, 8 kv heads, 8 experts; the
	// block unit holds attention, both norms and the router.
	const mh, ma, mkv, md int64 = 4096, 32, 8, 128
	mixtral := mh*ma*md + 2*mh*mkv*md + ma*md*mh + 2*mh + mh*8
	mixtralCore := 2 * s * s * ma * (md + md) // 4·b·a·s²·d
	for _, c := range []struct {
		cfg, attention string
		layers         int
		unit           string
		gemm, core     int64
	}{
		{"../../../docs/examples/hf/mixtral-8x7b/config.json", "flash", 2, "block.0", 2 * tk * mixtral, mixtralCore / 2},
		{"../../../docs/examples/hf/mixtral-8x7b/config.json", "sdpa", 2, "block.0", 2 * tk * mixtral, mixtralCore / 2},
		{"../../../docs/examples/hf/mixtral-8x7b/config.json", "eager", 2, "block.0", 2 * tk * mixtral, mixtralCore},
		{"deepseek-v3.json", "flash", 4, "block.0", 2 * tk * (attnW + norms + mlp(18432)), core(dqk) / 2},
		{"deepseek-v3.json", "flash", 4, "block.3", 2 * tk * (attnW + norms + router + mlp(2048)), core(dqk) / 2},
		{"deepseek-v3.json", "sdpa", 4, "block.3", 2 * tk * (attnW + norms + router + mlp(2048)), core(dv) / 2},
		{"deepseek-v3.json", "eager", 4, "block.3", 2 * tk * (attnW + norms + router + mlp(2048)), core(dv)},
		{"deepseek-v3.json", "sdpa", 4, "experts.3", 2 * tk * 8 * mlp(2048), 0},
		{"qwen1.5-moe-a2.7b.json", "flash", 2, "block.0", 2 * tk * qwen, 4 * s * s * qh / 2},
	} {
		want := c.gemm + c.core
		t.Run(c.cfg+"/"+c.attention+"/"+c.unit, func(t *testing.T) {
			y := fmt.Sprintf("version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\n"+
				"model: {hf_config: %s, layers: %d, seq_len: 4096}\nparallelism: {dp: 8, zero_stage: 3}\n"+
				"training: {micro_batch: 1, attention: %s}\n", c.cfg, c.layers, c.attention)
			sc, err := scenarios.Load("../scenarios/testdata/hf-extra/s.yaml", []byte(y), nil)
			if err != nil {
				t.Fatal(err)
			}
			cs, err := Costs(sc)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range cs {
				if l.Name == c.unit {
					if l.FwdFLOPs != want {
						t.Errorf("%s forward %d FLOPs, want %d (hand count, %+d)", c.unit, l.FwdFLOPs, want, l.FwdFLOPs-want)
					}
					attBwd, factor := c.core*5/2, "2.5"
					if c.attention == "eager" {
						attBwd, factor = 2*c.core, "2"
					}
					if bwd := 2*c.gemm + attBwd; l.BwdFLOPs != bwd {
						t.Errorf("%s backward %d FLOPs, want 2 × %d + %s × %d = %d", c.unit, l.BwdFLOPs, c.gemm, factor, c.core, bwd)
					}
					return
				}
			}
			t.Fatalf("no unit %s", c.unit)
		})
	}
}

// TestSharedExpertAndMLAFLOPsDoc holds the DeepSeek-V3 dense block's
// forward FLOPs docs/compute-model.md quotes: as the per-operation model
// counted it with the MLA dims cleared (heads·head_dim projections), and
// now (the hand count is TestSharedExpertAndMLAFLOPs').
func TestSharedExpertAndMLAFLOPsDoc(t *testing.T) {
	fwd := func(strip bool) int64 {
		y := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\n" +
			"model: {hf_config: deepseek-v3.json, layers: 4, seq_len: 4096}\nparallelism: {dp: 8, zero_stage: 3}\ntraining: {micro_batch: 1}\n"
		sc, err := scenarios.Load("../scenarios/testdata/hf-extra/s.yaml", []byte(y), nil)
		if err != nil {
			t.Fatal(err)
		}
		if strip {
			for i, l := range sc.Model.LayerList {
				if l.Dims != nil {
					d := *l.Dims
					d.ValueHeadDim, d.RopeHeadDim, d.QLoRARank, d.KVLoRARank = 0, 0, 0, 0
					sc.Model.LayerList[i].Dims = &d
				}
			}
		}
		cs, err := Costs(sc)
		if err != nil {
			t.Fatal(err)
		}
		return cs[1].FwdFLOPs // block.0
	}
	golden.CheckQuotes(t, "../docs/compute-model.md", "TestSharedExpertAndMLAFLOPsDoc (Costs of deepseek-v3.json's block.0, s 4096, b 1)",
		fmt.Sprintf("A DeepSeek-V3 dense block at s = 4096 counted %s forward FLOPs as heads·head_dim projections and counts %s.", commas(fwd(true)), commas(fwd(false))))
}

// TestMLAValuePadByKernel: under training.attention flash, multi-head
// latent attention's value (v_head_dim 128 against a q·k width of 192 in
// DeepSeek-V2-Lite, 16 heads) is padded to 192 for FlashAttention-2, which
// takes one head size (transformers' F.pad), and computed at 128 by cuDNN's
// fused attention: block.0's forward differs by P·V's extra 64 columns,
// 2·b·a·s²·64 / 2 FLOPs (causal) at s = 4096, b = 1.
func TestMLAValuePadByKernel(t *testing.T) {
	var fwd [2]int64
	for i, kernel := range []string{"fa2", "cudnn"} {
		y := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\n" +
			"model: {hf_config: deepseek-v2-lite.json, layers: 2, seq_len: 4096}\nparallelism: {dp: 8, zero_stage: 3}\n" +
			"training: {micro_batch: 1, attention: flash, attention_kernel: " + kernel + "}\n"
		s, err := scenarios.Load("../scenarios/testdata/hf-extra/s.yaml", []byte(y), nil)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := Costs(s)
		if err != nil {
			t.Fatal(err)
		}
		if x := s.Model.LayerList[1].Dims; x == nil || x.HeadDim != 192 || x.ValueHeadDim != 128 || x.Heads != 16 {
			t.Fatalf("block.0 dims %+v, want MLA with head_dim 192, value_head_dim 128, 16 heads", x)
		}
		fwd[i] = cs[1].FwdFLOPs
	}
	const s, heads = 4096, 16
	if got, want := fwd[0]-fwd[1], int64(2*heads*s*s*64/2); got != want {
		t.Errorf("fa2 − cudnn forward FLOPs of block.0 = %d, want %d", got, want)
	}
}
