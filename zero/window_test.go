package zero

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestAttentionFLOPsLocal holds AttentionFLOPs' sliding-window and chunked
// counts to MaxText's (src/maxtext/utils/maxtext_utils.py,
// AI-Hypercomputer/maxtext @ e591f30cbbf217ed67ef71263ec0538239f9c3b8),
// an independent implementation, per layer and forward (MaxText multiplies
// by 3 for training after): global causal 2·B·T²·H·D; local sliding window
// 4·B·(T·W − 0.5·W²)·H·D with W = min(window, T)
// (calculate_mixed_attention_model_tflops_training_per_device); chunked
// 4·B·(n·C² + r²)·H·D / 2 with n = T // C, r = T % C
// (_calculate_chunked_attention_flops_per_layer, halved for causality in
// calculate_llama4_attention_tflops). Shapes: Gemma 3 27B (32 heads of
// 128, window 1024) at 32,768 tokens, gpt-oss (64 heads of 64, window
// 128), Llama 4 (40 heads of 128, chunk 8192) at 20,000 tokens, so the last
// chunk is partial.
func TestAttentionFLOPsLocal(t *testing.T) {
	maxTextLocal := func(b, h, d, s, w int64) int64 {
		w = min(w, s)
		return 4 * b * (s*w - w*w/2) * h * d
	}
	maxTextChunked := func(b, h, d, s, c int64) int64 {
		n, r := s/c, s%c
		return 4 * b * (n*c*c + r*r) * h * d / 2
	}
	for _, c := range []struct {
		name               string
		b, heads, dim, seq int64
		causal             bool
		window, chunk      int64
		want               int64
	}{
		{"gemma-3-27b global", 1, 32, 128, 32768, true, 0, 0, 2 * 1 * 32768 * 32768 * 32 * 128},
		{"gemma-3-27b local", 1, 32, 128, 32768, true, 1024, 0, maxTextLocal(1, 32, 128, 32768, 1024)},
		{"gpt-oss local, micro-batch 2", 2, 64, 64, 8192, true, 128, 0, maxTextLocal(2, 64, 64, 8192, 128)},
		{"window = seq: causal", 1, 32, 128, 4096, true, 4096, 0, maxTextLocal(1, 32, 128, 4096, 4096)},
		{"window > seq: causal", 1, 32, 128, 4096, true, 8192, 0, 2 * 4096 * 4096 * 32 * 128},
		{"llama-4 chunked, partial chunk", 1, 40, 128, 20000, true, 0, 8192, maxTextChunked(1, 40, 128, 20000, 8192)},
		{"llama-4 chunked, whole chunks", 1, 40, 128, 16384, true, 0, 8192, maxTextChunked(1, 40, 128, 16384, 8192)},
		{"chunk > seq: causal", 1, 40, 128, 8000, true, 0, 8192, 2 * 8000 * 8000 * 40 * 128},
		// A kernel that computes every score ignores the mask's shape.
		{"eager window", 1, 32, 128, 32768, false, 1024, 0, 4 * 32768 * 32768 * 32 * 128},
	} {
		got, err := AttentionFLOPs(c.b, c.heads, c.seq, c.seq, c.dim, c.dim, c.causal, c.window, c.chunk)
		if err != nil || got != c.want {
			t.Errorf("%s: %d FLOPs (%v), want %d", c.name, got, err, c.want)
		}
	}
	// The mask itself (HF's sliding_window_causal_mask_function: kv ≤ q
	// and q − kv < w) holds w·s − w(w−1)/2 pairs, w/2 more than the
	// continuous count: enumerate it for a small case.
	const s, w = 100, 10
	var pairs int64
	for q := int64(0); q < s; q++ {
		for kv := int64(0); kv <= q; kv++ {
			if q-kv < w {
				pairs++
			}
		}
	}
	got, _ := AttentionFLOPs(1, 1, s, s, 1, 1, true, w, 0) // 2·pairs·2 FLOPs per pair (d_qk + d_v = 2)
	if exact := 2 * 2 * pairs; exact-got != 2*w {
		t.Errorf("window %d over %d: %d pairs in the mask (%d FLOPs), counted %d FLOPs: want w/2 pairs fewer", w, s, pairs, exact, got)
	}
}

// TestWindowedBlocks: an imported model's windowed blocks cost less than
// its global ones by exactly the attention the window removes, on both
// of Costs' paths: the per-operation model (Gemma 3 4B, dense: block.0
// slides over 1,024 tokens, block.5 attends globally, 8 heads of 256) and
// the FLOP count of MoE blocks (gpt-oss-20b: block.0 over 128 tokens,
// block.1 globally, 64 heads of 64), at 32,768 tokens under flash.
// Under sdpa the same windowed block costs more than the global one: SDPA
// gets the mask and computes every score, the global block half of them.
// gpt-oss has no SDPA path in transformers (the load refuses it), so the
// MoE path's sdpa case is Qwen1.5-MoE-A2.7B's config with
// use_sliding_window true, sliding_window 128 and max_window_layers 3
// (Qwen2MoeForCausalLM windows the layers from max_window_layers on:
// block.3, list index 7, against block.0, index 1; 16 heads of 128).
func TestWindowedBlocks(t *testing.T) {
	const s = 32768
	raw, err := os.ReadFile("../scenarios/testdata/hf-extra/qwen1.5-moe-a2.7b.json")
	if err != nil {
		t.Fatal(err)
	}
	var qm map[string]any
	if err := json.Unmarshal(raw, &qm); err != nil {
		t.Fatal(err)
	}
	qm["use_sliding_window"], qm["sliding_window"], qm["max_window_layers"] = true, 128, 3
	qwin := filepath.Join(t.TempDir(), "qwen1.5-moe-window.json")
	if raw, err = json.Marshal(qm); err != nil || os.WriteFile(qwin, raw, 0o644) != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		config             string
		windowed, global   int
		heads, dim, window int64
		attention          []string
	}{
		{"gemma-3-4b-it.json", 1, 6, 8, 256, 1024, []string{"flash", "sdpa"}},
		{"gpt-oss-20b.json", 1, 3, 64, 64, 128, []string{"flash"}},
		{qwin, 7, 1, 16, 128, 128, []string{"flash", "sdpa"}},
	} {
		for _, att := range c.attention {
			y := fmt.Sprintf("version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\n"+
				"model: {hf_config: %s, layers: 6, seq_len: %d}\nparallelism: {dp: 8, zero_stage: 3}\n"+
				"training: {micro_batch: 1, attention: %s}\n", c.config, s, att)
			sc, err := scenarios.Load("../scenarios/testdata/hf-extra/s.yaml", []byte(y), nil)
			if err != nil {
				t.Fatal(err)
			}
			costs, err := Costs(sc)
			if err != nil {
				t.Fatal(err)
			}
			wl, gl := sc.Model.LayerList[c.windowed], sc.Model.LayerList[c.global]
			if wl.Dims.Window != c.window || gl.Dims.Window != 0 || wl.Params != gl.Params {
				t.Fatalf("%s: %s window %d, %s window %d", c.config, wl.Name, wl.Dims.Window, gl.Name, gl.Dims.Window)
			}
			full := 4 * c.heads * c.dim * s * s // every score, d_qk + d_v = 2·dim
			want := full/2 - 2*c.heads*c.dim*(2*s*c.window-c.window*c.window)
			if att == "sdpa" {
				want = full/2 - full
			}
			if got := costs[c.global].FwdFLOPs - costs[c.windowed].FwdFLOPs; got != want {
				t.Errorf("%s, %s: %s − %s = %d forward FLOPs, want %d", c.config, att, gl.Name, wl.Name, got, want)
			}
		}
	}
}

// TestAttentionFLOPsLocalOverflow: the windowed count's 2·s − w is checked
// like every other term. At s = 2⁶² + 8 with a window of 1 and d_qk + d_v
// = 1 the true count, 2⁶³ + 15 FLOPs, does not fit an int64, as the full
// causal count at the same s does not; an unchecked 2·s wraps negative
// and the product came back as a negative FLOP count with no error.
func TestAttentionFLOPsLocalOverflow(t *testing.T) {
	s := int64(1)<<62 + 8
	for _, c := range []struct {
		name          string
		window, chunk int64
	}{{"full causal", 0, 0}, {"window 1", 1, 0}} {
		if v, err := AttentionFLOPs(1, 1, s, s, 1, 0, true, c.window, c.chunk); err == nil {
			t.Errorf("%s: %d FLOPs and no overflow error", c.name, v)
		}
	}
}
