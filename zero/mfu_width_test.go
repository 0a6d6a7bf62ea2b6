package zero

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// TestModelFLOPsTorchtitan holds the model FLOPs per token behind MFU to
// torchtitan's count, transcribed from torchtitan/models/utils.py at
// b5bcd76c66d0acb1a08b176d9639425bc55e0b2a (get_moe_model_nparams_and_flops:
// 6·N + 6·num_full_attn·n_heads·head_dims·seq_len) with each model's
// head_dims as its get_nparams_and_flops passes it (qwen3 and gpt_oss
// 2·head_dim, deepseek_v3 qk_nope + qk_rope + v_head_dim), read here from
// the config.json itself, and N the active parameters zerosim reports less
// the input embedding (vocab_size·hidden_size from the config) where the
// output layer is not tied to it (nparams_for_matmul). A
// multi-token-prediction module (num_nextn_predict_layers: DeepSeek-V3,
// Qwen3-Next; mtp_num_hidden_layers: Qwen3.5 and 3.6) is built only with
// model.mtp_layers (transformers builds none); built, it runs one more
// attention block over the sequence, which zerosim counts (torchtitan's
// models have none): the mtp cases add it to the formula.
// Before attention was counted per block at its own width, Qwen3-30B-A3B's
// heads (32 × 128 = 4,096 over a hidden size of 2,048) were counted at the
// hidden size, and under full recompute HFU/MFU passed 4/3 (1.348): the
// recompute adds at most the forward's third of the model FLOPs.
func TestModelFLOPsTorchtitan(t *testing.T) {
	const layers, seq = 4, 4096
	for _, c := range []struct {
		cfg      string
		headDims func(map[string]int64) int64
		full     int64 // layers of the first four with softmax attention
		// tied: tie_word_embeddings, the config's or, absent, its
		// class's default (Gemma2Config and Gemma3TextConfig: true).
		tied bool
		mtp  int64 // model.mtp_layers
	}{
		{"qwen3-30b-a3b.json", func(c map[string]int64) int64 { return 2 * c["head_dim"] }, 4, false, 0},
		{"gemma-2-27b.json", func(c map[string]int64) int64 { return 2 * c["head_dim"] }, 4, true, 0},
		{"deepseek-v3.json", func(c map[string]int64) int64 {
			return c["qk_nope_head_dim"] + c["qk_rope_head_dim"] + c["v_head_dim"]
		}, 4, false, 0},
		{"deepseek-v3.json", func(c map[string]int64) int64 {
			return c["qk_nope_head_dim"] + c["qk_rope_head_dim"] + c["v_head_dim"]
		}, 4, false, 1},
		// full_attention_interval 4: block.3 is the only softmax attention
		// of the first four (Qwen3NextConfig's layer_types).
		{"qwen3-next-80b-a3b-instruct.json", func(c map[string]int64) int64 { return 2 * c["head_dim"] }, 1, false, 0},
		{"qwen3-next-80b-a3b-instruct.json", func(c map[string]int64) int64 { return 2 * c["head_dim"] }, 1, false, 1},
		// Gemma 3's text_config: heads 8 × 256 over a hidden size of 2,560.
		{"gemma-3-4b-it.json", func(c map[string]int64) int64 { return 2 * c["head_dim"] }, 4, true, 0},
		// Qwen3.6's text_config: Qwen3-Next's layout, block.3 the only
		// softmax attention of the first four (16 or 24 heads of 256), and
		// an MTP module (mtp_num_hidden_layers).
		{"qwen3.6-35b-a3b.json", func(c map[string]int64) int64 { return 2 * c["head_dim"] }, 1, false, 1},
		{"qwen3.6-27b.json", func(c map[string]int64) int64 { return 2 * c["head_dim"] }, 1, false, 0},
	} {
		t.Run(fmt.Sprintf("%s mtp %d", c.cfg, c.mtp), func(t *testing.T) {
			raw, err := os.ReadFile("../scenarios/testdata/hf-extra/" + c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			var top struct {
				Text map[string]any `json:"text_config"`
			}
			var flat map[string]any
			if err := json.Unmarshal(raw, &flat); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(raw, &top); err != nil {
				t.Fatal(err)
			}
			if top.Text != nil {
				flat = top.Text
			}
			ints := map[string]int64{}
			for k, v := range flat {
				if f, ok := v.(float64); ok {
					ints[k] = int64(f)
				}
			}
			y := fmt.Sprintf("version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\n"+
				"model: {hf_config: %s, layers: %d, seq_len: %d, mtp_layers: %d}\nparallelism: {dp: 8, zero_stage: 3}\n"+
				"training: {micro_batch: 1, recompute: full}\n", c.cfg, layers, seq, c.mtp)
			s, err := scenarios.Load("../scenarios/testdata/hf-extra/s.yaml", []byte(y), nil)
			if err != nil {
				t.Fatal(err)
			}
			got, ok, err := modelFLOPsPerToken(s)
			if err != nil || !ok {
				t.Fatalf("modelFLOPsPerToken: %v, %v", ok, err)
			}
			full := c.full + c.mtp
			if tied, ok := flat["tie_word_embeddings"].(bool); ok && tied != c.tied {
				t.Fatalf("tie_word_embeddings %v in the config, the case says %v", tied, c.tied)
			}
			n := s.Model.ActiveParams()
			if !c.tied {
				n -= ints["vocab_size"] * ints["hidden_size"]
			}
			want := 6*n + 6*full*ints["num_attention_heads"]*c.headDims(ints)*seq
			if got != want {
				t.Errorf("%d model FLOPs per token, torchtitan's count %d (%+d)", got, want, got-want)
			}
			costs, err := Costs(s)
			if err != nil {
				t.Fatal(err)
			}
			u, err := utilization(s, units.Second, costs)
			if err != nil {
				t.Fatal(err)
			}
			if r := u.HFU / u.MFU; r <= 1 || r > 4.0/3 {
				t.Errorf("full recompute: HFU/MFU %.4f, want in (1, 4/3]", r)
			}
		})
	}
}

// TestModelFLOPsHiddenWidthDoc holds compute-model.md's figure for the count
// before attention was counted per block at its own width: Qwen3-30B-A3B
// (48 blocks, seq 4096, full recompute) counted at 12·L·hidden·s (PaLM's,
// heads spanning the hidden size) read HFU/MFU 1.348, past the 4/3 that
// rerunning the forward can add; the same recompute over the count at the
// heads' own width stays within it (TestModelFLOPsTorchtitan).
func TestModelFLOPsHiddenWidthDoc(t *testing.T) {
	y := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\n" +
		"model: {hf_config: qwen3-30b-a3b.json, seq_len: 4096}\nparallelism: {dp: 8, zero_stage: 3}\n" +
		"training: {micro_batch: 1, recompute: full}\n"
	s, err := scenarios.Load("../scenarios/testdata/hf-extra/s.yaml", []byte(y), nil)
	if err != nil {
		t.Fatal(err)
	}
	var blocks int64
	for _, l := range s.Model.LayerList {
		if l.Block {
			blocks++
		}
	}
	hidden, err := ModelFLOPsPerToken(s.Model.ActiveParams(), blocks*2*s.Model.Hidden, s.Model.SeqLen)
	if err != nil {
		t.Fatal(err)
	}
	re, err := recomputedModelFLOPs(s)
	if err != nil {
		t.Fatal(err)
	}
	model := float64(hidden) * float64(tokensPerGPU(s))
	ratio := (model + float64(re)) / model
	if ratio <= 4.0/3 {
		t.Errorf("counted at the hidden size, HFU/MFU %.4f: no longer past 4/3", ratio)
	}
	golden.CheckQuotes(t, "../docs/compute-model.md", "TestModelFLOPsHiddenWidthDoc (qwen3-30b-a3b.json, seq 4096, recompute full, attention counted at 2·hidden per block)",
		fmt.Sprintf("Qwen3-30B-A3B's HFU under full recompute read %.3f × its MFU", ratio))
}
