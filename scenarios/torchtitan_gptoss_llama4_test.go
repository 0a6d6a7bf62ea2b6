package scenarios

import (
	"strings"
	"testing"
)

// TestImportTorchtitanGptOssLlama4: torchtitan's gpt_oss and llama4 job
// configs (testdata/torchtitan/README.md cites each file's commit) import
// with the published parameter counts of the models whose dimensions the
// flavors carry, the sliding-window and chunked blocks torchtitan's masks
// give, and training.attention flash where FlexAttention skips masked
// blocks:
//
//	gpt-oss-20b 20,914,757,184 and gpt-oss-120b 116,829,156,672: llama.cpp's GGUF
//	  general.parameter_count of the bf16 models, as TestHFGptOss; torchtitan's
//	  model holds the same tensors (gate bias, sinks, expert biases), its
//	  expert_bias and tokens_per_expert are buffers
//	Llama 4 Scout 108,641,793,536 and Maverick 401,583,781,376 (the Hub's counts,
//	  as TestHFLlama4) less their vision model and projector, 871,932,416:
//	  107,769,861,120 (17bx16e) and 400,711,848,960 (17bx128e); torchtitan's
//	  llama4 is the text decoder only
//	gpt_oss debugmodel 183,397,920 (147,912,224 active), by hand from torchtitan's
//	  modules: embedding and output 201088·256 each, norm 256, 4 blocks of wq
//	  256·4096+4096, wk and wv 256·512+512, wo 4096·256+256, sinks 64, two norms
//	  256, gate 256·8+8 and 8 experts of 256·5760+5760 + 2880·256+256 (4 active)
//	llama4 debugmodel 15,017,216 (6,759,680 active): embedding and output 2048·256
//	  each, norm 256, 6 blocks of 4·256² attention and two norms 256; blocks 0, 2, 4
//	  a FeedForward of 768 (int(2·1024/3) = 682 rounded up to 256), blocks 1, 3, 5
//	  a gate 256·8, a shared expert and 8 experts of 3·256·512 (682/2 = 341 rounded
//	  up), top-1
func TestImportTorchtitanGptOssLlama4(t *testing.T) {
	noTP := []string{"tensor_parallel_degree = 8", "tensor_parallel_degree = 1", "expert_tensor_parallel_degree = 8", "expert_tensor_parallel_degree = 1"}
	for _, c := range []struct {
		name, file    string
		edits         []string
		total, active int64
		ep            int
		// windowed blocks and their size (dims.window, or
		// dims.attention_chunk when chunked); first the index of the
		// first windowed block.
		windowed, size, first int64
		chunked               bool
		attention             Attention
		hf                    string // the same model's config.json: the same layers and parameters
	}{
		{"gpt_oss debugmodel", "gpt_oss_debug.toml", nil, 183_397_920, 147_912_224, 1, 2, 128, 0, false, AttentionFlash, ""},
		{"gpt_oss 20b ep 8", "gpt_oss_debug.toml", []string{`flavor = "debugmodel"`, `flavor = "20b"`, "expert_parallel_degree = 1", "expert_parallel_degree = 8"},
			20_914_757_184, -1, 8, 12, 128, 0, false, AttentionFlash, "testdata/hf-extra/gpt-oss-20b.json"},
		{"gpt_oss 120b ep 32", "gpt_oss_debug.toml", []string{`flavor = "debugmodel"`, `flavor = "120b"`, "expert_parallel_degree = 1", "expert_parallel_degree = 32"},
			116_829_156_672, -1, 32, 18, 128, 0, false, AttentionFlash, ""},
		{"llama4 debugmodel", "llama4_debug.toml", nil, 15_017_216, 6_759_680, 1, 0, 0, 0, false, "", ""},
		// every_n_layers_nope 4: blocks 0 and 4 are NoPE (transformers'
		// default would make block 3 the NoPE one).
		{"llama4 debugmodel_irope", "llama4_debug.toml", []string{`flavor = "debugmodel"`, `flavor = "debugmodel_irope"`}, 15_017_216, 6_759_680, 1, 4, 256, 1, true, AttentionFlash, ""},
		{"llama4 17bx16e", "llama4_17bx16e.toml", noTP, 107_769_861_120, -1, 1, 0, 0, 0, false, "", "testdata/hf-extra/llama-4-scout-17b-16e.json"},
		{"llama4 17bx16e_irope ep 16", "llama4_17bx16e.toml", append([]string{`flavor = "17bx16e"`, `flavor = "17bx16e_irope"`, "expert_parallel_degree = 1", "expert_parallel_degree = 16"}, noTP...),
			107_769_861_120, -1, 16, 36, 8192, 1, true, AttentionFlash, "testdata/hf-extra/llama-4-scout-17b-16e.json"},
		{"llama4 17bx128e", "llama4_17bx128e.toml", append([]string{"pipeline_parallel_degree = 4", "pipeline_parallel_degree = 1"}, noTP...),
			400_711_848_960, -1, 1, 0, 0, 0, false, "", ""},
	} {
		tt, err := ImportTorchtitan(c.file, ttFile(t, c.file, c.edits...), ttH100x16)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		out := tt.Scenario()
		s, err := Load(c.name+".yaml", out, nil)
		if err != nil {
			t.Fatalf("%s: the imported scenario does not load: %v\n%s", c.name, err, out)
		}
		if got := int64(s.Model.Params); got != c.total || tt.Params != c.total {
			t.Errorf("%s: %d parameters (header %d), want %d (off by %d)", c.name, got, tt.Params, c.total, got-c.total)
		}
		if got := s.Model.ActiveParams(); c.active > 0 && got != c.active {
			t.Errorf("%s: %d active parameters, want %d", c.name, got, c.active)
		}
		if p := s.Parallelism; p.EP != c.ep || p.DP != 128 || p.K != 1 || p.Stage != 3 {
			t.Errorf("%s: ep %d dp %d k %d stage %d, want ep %d dp 128 k 1 stage 3", c.name, p.EP, p.DP, p.K, p.Stage, c.ep)
		}
		// Every flavor attends with enable_gqa at 238fa99: flash (the SDPA
		// flavors with attention_kernel cudnn, gqaAttention; the
		// FlexAttention ones with flex, Torchtitan.flexKernel).
		wantK := KernelFlex
		if c.attention == "" {
			wantK = KernelCuDNN
		}
		if s.Training.Attention != AttentionFlash || tt.AttentionKernel != wantK {
			t.Errorf("%s: training.attention %s, kernel %q; want flash, %q", c.name, s.Training.Attention, tt.AttentionKernel, wantK)
		}
		// The loaded layer list carries the windows zero counts.
		var n, first, block int64 = 0, -1, -1
		for _, l := range s.Model.LayerList {
			if !strings.HasPrefix(l.Name, "block.") {
				continue
			}
			block++
			w, ch := l.Dims.Window, l.Dims.AttentionChunk
			if w == 0 && ch == 0 {
				continue
			}
			if n++; first < 0 {
				first = block
			}
			if got := max(w, ch); got != c.size || (ch > 0) != c.chunked {
				t.Errorf("%s: %s window %d chunk %d, want %d (chunked %v)", c.name, l.Name, w, ch, c.size, c.chunked)
			}
		}
		if n != c.windowed || (n > 0 && first != c.first) {
			t.Errorf("%s: %d windowed blocks from block.%d, want %d from block.%d", c.name, n, first, c.windowed, c.first)
		}
		// torchtitan's router, not transformers' (TokenChoiceTopKRouter).
		for _, l := range s.Model.LayerList {
			if l.Group != GroupExpert {
				continue
			}
			want := map[string]string{"gpt_oss": RouterSoftmaxTopK, "llama4": RouterDeepseekV3}[tt.ModelName]
			if l.Dims.Router != want || l.Dims.RouterNorm != (tt.ModelName == "gpt_oss") {
				t.Errorf("%s: %s router %s (norm %v), want %s", c.name, l.Name, l.Dims.Router, l.Dims.RouterNorm, want)
			}
		}
		if c.hf == "" {
			continue
		}
		hm, err := ReadHFConfig(c.hf)
		if err != nil {
			t.Fatal(err)
		}
		// The Hub's Scout is the multimodal checkpoint: its decoder is
		// language_model, the same layers.
		if hm.Total != tt.HF.Total || len(hm.LayerList) != len(tt.HF.LayerList) {
			t.Fatalf("%s: %d parameters in %d layers, %s imports %d in %d", c.name, tt.HF.Total, len(tt.HF.LayerList), c.hf, hm.Total, len(hm.LayerList))
		}
		for i, l := range hm.LayerList {
			if g := tt.HF.LayerList[i]; g.Name != l.Name || g.Params != l.Params || g.ActiveParams != l.ActiveParams {
				t.Errorf("%s: layer %s %d (%d active), %s has %s %d (%d active)", c.name, g.Name, g.Params, g.ActiveParams, c.hf, l.Name, l.Params, l.ActiveParams)
			}
		}
	}
}

// TestImportTorchtitanGptOssLlama4Errors: what torchtitan refuses of these
// models, and expert parallelism zerosim cannot model, is refused in one
// line naming the key.
func TestImportTorchtitanGptOssLlama4Errors(t *testing.T) {
	for _, c := range []struct {
		name, file string
		edits      []string
		want       string
	}{
		{"gpt_oss cp", "gpt_oss_debug.toml", []string{"[parallelism]", "[parallelism]\ncontext_parallel_degree = 2"},
			`gpt_oss_debug.toml:46:1: parallelism.context_parallel_degree = 2: gpt_oss flavor debugmodel does not run with context parallelism at torchtitan 238fa99 (GptOssModelArgs.update_from_config raises NotImplementedError`},
		{"llama4 irope cp", "llama4_debug.toml", []string{`flavor = "debugmodel"`, `flavor = "debugmodel_irope"`, "context_parallel_degree = 1", "context_parallel_degree = 2"},
			`llama4_debug.toml:53:1: parallelism.context_parallel_degree = 2: llama4 flavor debugmodel_irope does not run with context parallelism at torchtitan 238fa99 (TransformerModelArgs.update_from_config raises NotImplementedError("Context Parallel only supports SDPA attention.")`},
		{"gpt_oss ep with HSDP", "gpt_oss_debug.toml", []string{"data_parallel_replicate_degree = 1", "data_parallel_replicate_degree = 2", "expert_parallel_degree = 1", "expert_parallel_degree = 4"},
			"gpt_oss_debug.toml:51:1: parallelism.expert_parallel_degree = 4 with data_parallel_replicate_degree 2 (HSDP) is not modelled"},
		{"llama4 ep over experts", "llama4_debug.toml", []string{"expert_parallel_degree = 1", "expert_parallel_degree = 16"},
			"llama4_debug.toml:54:1: parallelism.expert_parallel_degree = 16 does not divide the 8 routed experts of llama4 flavor debugmodel"},
		{"llama4 etp", "llama4_17bx16e.toml", []string{"tensor_parallel_degree = 8", "tensor_parallel_degree = 1"},
			"llama4_17bx16e.toml:47:1: parallelism.expert_tensor_parallel_degree = 8: expert tensor parallelism is not modelled"},
		{"llama4 flavor", "llama4_debug.toml", []string{`flavor = "debugmodel"`, `flavor = "17bx16e_irop"`},
			`llama4_debug.toml:22:1: model.flavor = "17bx16e_irop" is not a llama4 flavor zerosim imports (use one of 17bx128e, 17bx128e_irope, 17bx16e, 17bx16e_irope, debugmodel, debugmodel_irope: torchtitan/models/llama4/__init__.py at 238fa99)`},
		{"gpt_oss flavor", "gpt_oss_debug.toml", []string{`flavor = "debugmodel"`, `flavor = "20B"`},
			`gpt_oss_debug.toml:22:1: model.flavor = "20B" is not a gpt_oss flavor zerosim imports (use one of 120b, 20b, debugmodel: torchtitan/models/gpt_oss/__init__.py at 238fa99)`},
	} {
		_, err := ImportTorchtitan(c.file, ttFile(t, c.file, c.edits...), ttH100x16)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.ContainsAny(err.Error(), "\n\r") {
			t.Errorf("%s: %v\nwant one line starting %q", c.name, err, c.want)
		}
	}
}
