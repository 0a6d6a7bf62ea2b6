package scenarios

import (
	"reflect"
	"strings"
	"testing"
)

// TestImportTorchtitanMoE: torchtitan's qwen3 and deepseek_v3 job configs
// (testdata/torchtitan/README.md cites each file's commit) import with the
// published parameter counts of the models whose dimensions the flavors
// carry, and expert_parallel_degree comes through as parallelism.ep:
//
//	Qwen3-0.6B  596,049,920: sum of model.parameters() of Qwen/Qwen3-0.6B
//	Qwen3-8B    8,190,735,360: testdata/hf/counts.json (Keras Hub preset metadata)
//	Qwen3-32B   32,762,123,264: Keras Hub qwen3_32b_en metadata and hub-API BF16 safetensors counts
//	Qwen3-30B-A3B 30,532,122,624 total, 3,353,032,704 active: as TestHFOtherConfigs
//	DeepSeek-V2-Lite 15,706,484,224 (flavor 16B), DeepSeek-V2 235,741,434,880 (flavor 236B): as TestHFOtherConfigs
//	DeepSeek-V3 671,026,419,200 main-model parameters (TestHFDeepseekV3), less the
//	  58 MoE layers × 256 e_score_correction_bias numbers torchtitan keeps as a buffer: 671,026,404,352
//	debugmodel_moe 315,758,848, counted by hand from torchtitan's modules: embedding and untied
//	  output 2048·256 each, final norm 256, 8 blocks of wq 256·2048, wk and wv 256·1024, wo
//	  2048·256, q_norm and k_norm 128, two norms 256, gate 256·64 and 64 experts of 3·256·768.
func TestImportTorchtitanMoE(t *testing.T) {
	for _, c := range []struct {
		name, file    string
		edits         []string
		total, active int64
		ep, dp        int
		hf            string // the same model's config.json: the same layer list
	}{
		{"qwen3 0.6B", "qwen3_0.6b.toml", nil, 596_049_920, 596_049_920, 1, 128, ""},
		{"qwen3 32B", "qwen3_32b.toml", nil, 32_762_123_264, 32_762_123_264, 1, 128, ""},
		{"qwen3 8B", "qwen3_32b.toml", []string{`flavor = "32B"`, `flavor = "8B"`}, 8_190_735_360, 8_190_735_360, 1, 128, "testdata/hf/qwen3-8b/config.json"},
		{"qwen3 debugmodel_moe", "qwen3_moe_debug.toml", nil, 315_758_848, 51_517_696, 1, 128, ""},
		{"qwen3 30B-A3B ep 8", "qwen3_moe_debug.toml", []string{`flavor = "debugmodel_moe"`, `flavor = "30B-A3B"`, "expert_parallel_degree = 1", "expert_parallel_degree = 8"},
			30_532_122_624, 3_353_032_704, 8, 128, "testdata/hf-extra/qwen3-30b-a3b.json"},
		{"deepseek_v3 16B ep 8", "deepseek_v3_16b.toml", nil, 15_706_484_224, -1, 8, 128, "testdata/hf-extra/deepseek-v2-lite.json"},
		{"deepseek_v3 236B", "deepseek_v3_16b.toml", []string{`flavor = "16B"`, `flavor = "236B"`, "expert_parallel_degree = 8", "expert_parallel_degree = 32"},
			235_741_434_880, -1, 32, 128, "testdata/hf-extra/deepseek-v2.json"},
		{"deepseek_v3 671B ep 32", "deepseek_v3_671b.toml", []string{"expert_parallel_degree = 1", "expert_parallel_degree = 32"}, 671_026_404_352, -1, 32, 128, ""},
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
		if p := s.Parallelism; p.EP != c.ep || p.DP != c.dp || p.K != 1 || p.Stage != 3 {
			t.Errorf("%s: ep %d dp %d k %d stage %d, want ep %d dp %d k 1 stage 3", c.name, p.EP, p.DP, p.K, p.Stage, c.ep, c.dp)
		}
		if c.hf == "" {
			continue
		}
		hm, err := ReadHFConfig(c.hf)
		if err != nil {
			t.Fatal(err)
		}
		if hm.Total != tt.HF.Total || !reflect.DeepEqual(hm.LayerList, tt.HF.LayerList) {
			t.Errorf("%s: %d parameters, %s imports %d; the layer lists differ: %v", c.name, tt.HF.Total, c.hf, hm.Total, !reflect.DeepEqual(hm.LayerList, tt.HF.LayerList))
		}
	}
}

// TestImportTorchtitanMoEErrors: what zerosim cannot model of expert
// parallelism is refused in one line naming the key.
func TestImportTorchtitanMoEErrors(t *testing.T) {
	for _, c := range []struct {
		name, file string
		edits      []string
		cl         TorchtitanCluster
		want       string
	}{
		{"ep on a dense model", "qwen3_32b.toml", []string{"[parallelism]", "[parallelism]\nexpert_parallel_degree = 2"}, ttH100x16,
			"qwen3_32b.toml:39:1: parallelism.expert_parallel_degree = 2: expert parallelism needs routed experts, and qwen3 flavor 32B has none"},
		{"ep with HSDP", "deepseek_v3_16b.toml", []string{"data_parallel_replicate_degree = 1", "data_parallel_replicate_degree = 2"}, ttH100x16,
			"deepseek_v3_16b.toml:52:1: parallelism.expert_parallel_degree = 8 with data_parallel_replicate_degree 2 (HSDP) is not modelled"},
		{"ep over experts", "deepseek_v3_16b.toml", []string{"expert_parallel_degree = 8", "expert_parallel_degree = 128"}, ttH100x16,
			"deepseek_v3_16b.toml:52:1: parallelism.expert_parallel_degree = 128 does not divide the 64 routed experts of deepseek_v3 flavor 16B"},
		{"ep over dp_shard", "deepseek_v3_16b.toml", []string{"expert_parallel_degree = 8", "expert_parallel_degree = 16"}, TorchtitanCluster{Nodes: 3, GPUsPerNode: 8, GPU: "H100-80GB"},
			"deepseek_v3_16b.toml:52:1: parallelism.expert_parallel_degree = 16 does not divide data_parallel_shard_degree 24 × context_parallel_degree 1 = 24"},
		{"etp", "deepseek_v3_16b.toml", []string{"expert_tensor_parallel_degree = 1", "expert_tensor_parallel_degree = 2"}, ttH100x16,
			"deepseek_v3_16b.toml:53:1: parallelism.expert_tensor_parallel_degree = 2: expert tensor parallelism is not modelled"},
		{"qwen3 flavor", "qwen3_32b.toml", []string{`flavor = "32B"`, `flavor = "72B"`}, ttH100x16,
			`qwen3_32b.toml:19:1: model.flavor = "72B" is not a qwen3 flavor zerosim imports (use one of 0.6B, 1.7B, 14B, 235B-A22B, 30B-A3B, 32B, 4B, 8B, debugmodel, debugmodel_moe: torchtitan/models/qwen3/__init__.py at 238fa99)`},
		{"deepseek flavor", "deepseek_v3_16b.toml", []string{`flavor = "16B"`, `flavor = "16b"`}, ttH100x16,
			`deepseek_v3_16b.toml:22:1: model.flavor = "16b" is not a deepseek_v3 flavor`},
	} {
		_, err := ImportTorchtitan(c.file, ttFile(t, c.file, c.edits...), c.cl)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.ContainsAny(err.Error(), "\n\r") {
			t.Errorf("%s: %v\nwant one line starting %q", c.name, err, c.want)
		}
	}
}

// TestImportTorchtitanDSV3SDPA: deepseek_v3's 16B, 236B and 671B flavors
// ran SDPA with a causal mask until torchtitan f738a03bf (2025-08-22,
// "Switch DeepSeekV3 to Use FlexAttention by Default"), so a job config
// its keys date before that commit is written as training.attention
// sdpa, not as FlexAttention (testdata/torchtitan/deepseek_v3_16b-b5b7ffb.toml:
// training.compile, renamed by 08b8b244f, 2025-08-20); 238fa99's own file,
// which no key dates, runs FlexAttention and says when it did not;
// debugmodel_flex_attn ran FlexAttention from its first commit.
func TestImportTorchtitanDSV3SDPA(t *testing.T) {
	for _, c := range []struct {
		name, file string
		edits      []string
		attention  Attention
		note       string
	}{
		{"16B before f738a03bf", "deepseek_v3_16b-b5b7ffb.toml", nil, AttentionSDPA,
			"model.flavor 16B ran SDPA with a causal mask until torchtitan f738a03bf (2025-08-22) gave it flex attention with a block-causal mask, and training.compile, removed from torchtitan's config by 08b8b244f (2025-08-20), dates the file before it: written as training.attention: sdpa"},
		{"671B before f738a03bf", "deepseek_v3_16b-b5b7ffb.toml", []string{`flavor = "16B"`, `flavor = "671B"`}, AttentionSDPA,
			"model.flavor 671B ran SDPA with a causal mask until torchtitan f738a03bf"},
		{"16B at 238fa99, lr_min", "deepseek_v3_16b.toml", []string{"min_lr_factor = 0.1", "lr_min = 0.1"}, AttentionSDPA,
			"and lr_scheduler.lr_min, removed from torchtitan's config by 881f0ca46 (2025-07-31), dates the file before it"},
		// Its MLA has as many kv heads as heads: FlexAttention's k and v
		// are the heads' width before ff0829c too, written as flash
		// (qauser29 F3: nothing was written, and the preset's sdpa ran).
		{"debugmodel_flex_attn before f738a03bf", "deepseek_v3_16b-b5b7ffb.toml", []string{`flavor = "16B"`, `flavor = "debugmodel_flex_attn"`}, AttentionFlash,
			"model.flavor debugmodel_flex_attn runs flex attention with a block-causal mask (attn_type = \"flex\"); modelled as causal attention over the whole sequence"},
		{"671B with job.print_args", "deepseek_v3_671b.toml", []string{"print_config", "print_args"}, AttentionFlash,
			"model.flavor 671B runs FlexAttention, and job.print_args dates the file before b39377f (2025-12-01), so before ff0829c (2026-01-27, enable_gqa in place of repeat_kv); its kv heads are as many as its heads (128), so nothing was repeated either way: written as training.attention: flash"},
		{"16B at 238fa99", "deepseek_v3_16b.toml", nil, AttentionFlash,
			"model.flavor 16B runs flex attention with a block-causal mask (attn_type = \"flex\"); modelled as causal attention over the whole sequence; before torchtitan f738a03bf (2025-08-22) it ran SDPA with a causal mask (if yours is older, set training.attention: sdpa)"},
	} {
		// On B200, where a torchtitan of then asked SDPA for cuDNN's
		// attention first (readCuDNNEra), which refused these heads.
		tt, err := ImportTorchtitan(c.file, ttFile(t, c.file, c.edits...), TorchtitanCluster{Nodes: 2, GPUsPerNode: 8, GPU: "B200"})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if _, err := Load(c.name+".yaml", tt.Scenario(), nil); err != nil {
			t.Fatalf("%s: the imported scenario does not load: %v", c.name, err)
		}
		notes := strings.Join(tt.Notes, "\n")
		if tt.Attention != c.attention || !strings.Contains(notes, c.note) {
			t.Errorf("%s: attention %q, notes\n%s\nwant %q and a note with %q", c.name, tt.Attention, notes, c.attention, c.note)
		}
		if c.attention == AttentionSDPA && tt.AttentionKernel != "" {
			t.Errorf("%s: attention_kernel %q, want the default (SDPA ran the memory-efficient kernel, not cuDNN's)", c.name, tt.AttentionKernel)
		}
	}
}
