package memory

import (
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestTorchtitanATenNormBlock: torchtitan's blocks with their
// nn.RMSNorms on aten::_fused_rms_norm (BlockDims.NormATen without
// MegatronLocal) against the composite rms_norm, t tokens. The composite
// keeps of a norm over w the fp32 upcast 4·t·w, rstd 4·t and the 16-bit
// normalized tensor 2·t·w; the fused kernel its 16-bit input 2·t·w and
// rstd 4·t. The hidden norms differ by 8·th a block (the attention norm's
// input is the block input, kept anyway: 6·th; the FFN norm's is the
// residual sum: 4·th, less the 2·th the composite's pair does not
// keep), Qwen3's q_norm and k_norm by 4·t·qw + 4·t·kv (the
// per-head rstd is kept either way), DeepSeek-V3's q_a_layernorm and
// kv_a_layernorm by 4·t·r_q + 4·t·r_kv, the final norm by 4·th. A
// compiled block keeps the fused kernel's tensors either way.
func TestTorchtitanATenNormBlock(t *testing.T) {
	const tok = teTok
	// DeepSeek-V3's MLA (h 7168, 128 heads, q·k 192 = 128 + 64 RoPE, v
	// 128, q_lora_rank 1536, kv_lora_rank 512; TestSharedExpertAndMLAActivations).
	mla := BlockDims{Arch: "llama", Seq: 4096, Batch: 1, Hidden: 7168, Heads: 128, KVHeads: 128, HeadDim: 192, ValueHeadDim: 128, RopeHeadDim: 64, QLoRARank: 1536, KVLoRARank: 512, FFN: 18432, Attention: AttentionFlash}
	qwen := teFP8Dims
	qwen.QKNorm, qwen.HeadDim = scenarios.QKNormRMSHead, 128
	compiled := teFP8Dims
	compiled.Compiled = true
	for _, c := range []struct {
		name string
		d    BlockDims
		less int64
	}{
		{"Llama 3.1 8B block", teFP8Dims, 8 * teTH},
		{"Qwen3 block (q_norm, k_norm)", qwen, 8*teTH + 4*tok*32*128 + 4*tok*8*128},
		{"DeepSeek-V3 MLA block (q_a_layernorm, kv_a_layernorm)", mla, 8*tok*7168 + 4*tok*1536 + 4*tok*512},
		{"compiled Llama 3.1 8B block", compiled, 0},
	} {
		d := c.d
		comp, _, err := BlockActivation(d, PolicyNone)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		d.NormATen = true
		aten, _, err := BlockActivation(d, PolicyNone)
		if err != nil {
			t.Fatalf("%s, NormATen: %v", c.name, err)
		}
		if comp-aten != c.less {
			t.Errorf("%s: composite %d − aten %d = %d, want %d", c.name, comp, aten, comp-aten, c.less)
		}
	}
	head := teFP8Dims
	head.Vocab = 128256
	comp, _, _, err := headParts(head)
	if err != nil {
		t.Fatal(err)
	}
	head.NormATen = true
	aten, _, _, err := headParts(head)
	if err != nil || comp-aten != 4*teTH {
		t.Errorf("final norm: composite %d − aten %d (%v), want 4·th = %d", comp, aten, err, int64(4*teTH))
	}
	for _, bad := range []func(*BlockDims){
		func(b *BlockDims) { b.Norms = scenarios.NormsGemma },
		func(b *BlockDims) { b.Autocast, b.InputFP32 = true, true },
		func(b *BlockDims) { b.Arch, b.KVHeads = "gpt", 32 },
	} {
		b := teFP8Dims
		b.NormATen = true
		bad(&b)
		if _, _, err := BlockActivation(b, PolicyNone); err == nil {
			t.Errorf("NormATen block %+v: no error", b)
		}
	}
}

// ttATenYAML is Llama 3.1 8B under torchtitan's stack preset, one node
// of 8 H100, a micro-batch of one 8,192-token sequence, no recompute.
const ttATenYAML = `version: 1
name: tt-aten
stack: torchtitan
cluster:
  nodes: 1
  gpus_per_node: 8
  gpu: H100-80GB
model:
  preset: llama3.1-8b
  seq_len: 8192
parallelism:
  dp: 8
  zero_stage: 3
training:
  micro_batch: 1
  recompute: none
`

// TestTorchtitanATenNormScenario: training.norm_impl aten_fused under
// stack: torchtitan. Eager, the 32 blocks keep 32 × 8·th less and the
// final norm 4·th less (t·h = 8,192 × 4,096: 260·th = 8,724,152,320 B in
// all, the peak being the end of the forward, where every block's
// tensors are held); compiled (training.compile blocks,
// torchtitan's apply_compile leaves model.norm eager) only the final
// norm's 4·th. The key is refused, with its file:line:column, off
// torchtitan and Megatron's local block, on GPT blocks, under
// torch.autocast, over fp32 parameters and on blocks with norms of their
// own (Gemma's).
func TestTorchtitanATenNormScenario(t *testing.T) {
	const th = int64(8192 * 4096)
	acts := func(yaml string, set ...string) (int64, *scenarios.Scenario) {
		t.Helper()
		s, err := scenarios.Load("tt.yaml", []byte(yaml), set)
		if err != nil {
			t.Fatal(err)
		}
		return mustAnalyze(t, s, Options{}).Component(CompActivations).Peak, s
	}
	for _, c := range []struct {
		name string
		set  []string
		less int64
	}{
		{"eager", nil, 32*8*th + 4*th},
		{"compiled blocks", []string{"training.compile=blocks"}, 4 * th},
	} {
		comp, s := acts(ttATenYAML, c.set...)
		if scenarios.ATenRMSNorm(s) || baseDims(s).NormATen {
			t.Errorf("%s: the preset's default is the composite (torchtitan 9dec370's own RMSNorm)", c.name)
		}
		aten, s := acts(ttATenYAML, append(c.set, "training.norm_impl=aten_fused")...)
		if !scenarios.ATenRMSNorm(s) || !baseDims(s).NormATen {
			t.Errorf("%s: norm_impl aten_fused not applied", c.name)
		}
		if comp-aten != c.less {
			t.Errorf("%s: activations composite %d − aten %d = %d, want %d", c.name, comp, aten, comp-aten, c.less)
		}
	}
	line := "17" // the key goes after training's last line, recompute
	for _, c := range []struct{ name, edit, key, want string }{
		{"deepspeed", "stack: torchtitan", "stack: deepspeed", "tt.yaml:" + line + ":3: norm_impl=aten_fused (torch.nn.RMSNorm on aten::_fused_rms_norm, PyTorch 2.9 or later) is derived for Megatron-core's local block and torchtitan's blocks only (set stack: torchtitan, or stack: megatron with training.transformer_impl: local, or delete training.norm_impl)"},
		{"gpt", "preset: llama3.1-8b", "preset: gpt3-1.3b", "tt.yaml:" + line + ":3: norm_impl=aten_fused is torch.nn.RMSNorm's fused kernel, the norm of torchtitan's Llama-style blocks, and this model's blocks are GPT's, with LayerNorm (model.arch gpt) (delete training.norm_impl)"},
		{"autocast", "  micro_batch: 1\n", "  micro_batch: 1\n  param_dtype: fp32\n  autocast: bf16\n", "norm_impl=aten_fused does not go with training.autocast=bf16: the norm's fp32 weight differs from its 16-bit input, and PyTorch runs the composite rms_norm then (delete training.norm_impl)"},
		{"fp32 parameters", "  micro_batch: 1\n", "  micro_batch: 1\n  param_dtype: fp32\n", "norm_impl=aten_fused is derived for 16-bit parameters (FSDP2's param_dtype bf16), and training.param_dtype is fp32 (delete training.norm_impl)"},
		{"gemma", "preset: llama3.1-8b", "preset: gemma2-9b", "tt.yaml:" + line + ":3: norm_impl=aten_fused is derived for blocks whose norms are torch.nn.RMSNorm, and layer 1 (block.0) has norms=gemma, an fp32 RMSNorm of its own (delete training.norm_impl)"},
	} {
		y := strings.Replace(ttATenYAML, c.edit, c.key, 1) + "  norm_impl: aten_fused\n"
		if c.edit == "  micro_batch: 1\n" {
			line := "19"
			if c.name == "fp32 parameters" {
				line = "18"
			}
			c.want = "tt.yaml:" + line + ":3: " + c.want
		}
		_, err := scenarios.Load("tt.yaml", []byte(y), nil)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}
