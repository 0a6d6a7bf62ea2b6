package memory

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestSDPAMaskBytes holds SDPAMaskBytes to a hand count from the sources'
// definitions (sdpamask.go): transformers' boolean mask is (b, 1, s, s),
// one byte an element; SDPA's additive copy is (b, 1, s, s) in bf16 with
// its last dimension padded to a multiple of 8 (pad_bias), so s = 4100
// pads to 4104 and s = 8192 does not pad.
func TestSDPAMaskBytes(t *testing.T) {
	for _, c := range []struct {
		b, s           int64
		boolMask, bias int64
	}{
		{1, 8192, 67108864, 134217728},        // 8192² = 67,108,864; ×2
		{2, 8192, 134217728, 268435456},       // ×2 sequences
		{1, 4096, 16777216, 33554432},         // 4096² = 16,777,216
		{1, 4100, 16810000, 33652800},         // 4100², 2·4100·4104
		{3, 4097, 50356227, 100884528},        // 3·4097², 2·3·4097·4104
		{1, 131072, 17179869184, 34359738368}, // 128 Ki tokens: 16 GiB, 32 GiB
	} {
		m, bias, err := SDPAMaskBytes(c.b, c.s)
		if err != nil || m != c.boolMask || bias != c.bias {
			t.Errorf("b %d, s %d: mask %d B, bias %d B (%v); want %d, %d", c.b, c.s, m, bias, err, c.boolMask, c.bias)
		}
	}
	// b·s² past int64 (s = 2³², b = 1: 2⁶⁴) and the bias's doubling
	// past it (b·s² = 2⁶², ×2 = 2⁶³) are errors, not wrapped figures.
	for _, c := range []struct{ b, s int64 }{{1, 1 << 32}, {1, 1 << 31}, {0, 8192}, {1, 0}} {
		if m, bias, err := SDPAMaskBytes(c.b, c.s); err == nil {
			t.Errorf("b %d, s %d: %d, %d B and no error", c.b, c.s, m, bias)
		}
	}
}

// TestSDPAMaskMistral: Mistral 7B v0.1 (scenarios/testdata/hf/
// mistral-7b-v0.1: 32 blocks, sliding_window 4096) on 8 H100s at ZeRO-3,
// against the same config with sliding_window null (no window, so no
// mask: the full-attention path skips it). Under sdpa at seq_len 8192 every
// block keeps its additive bias, 2·b·8192² bytes, with no checkpointing,
// and rebuilds it in its backward under full recompute; the boolean mask,
// b·8192², lives through the forward (none) or until block.0's backward
// (full). The peak, in lm_head's backward in both configs, rises by
// exactly what is alive there: the 32 biases (none) or the boolean mask
// (full). At seq_len = window the mask exists (kv_length < window is what
// lets transformers skip it), at 4095 it does not; flash keeps no mask.
func TestSDPAMaskMistral(t *testing.T) {
	src, err := os.ReadFile("../scenarios/testdata/hf/mistral-7b-v0.1/config.json")
	if err != nil {
		t.Fatal(err)
	}
	noWin := bytes.Replace(src, []byte(`"sliding_window": 4096`), []byte(`"sliding_window": null`), 1)
	if bytes.Equal(noWin, src) {
		t.Fatal("config.json has no sliding_window 4096")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.json"), noWin, 0o644); err != nil {
		t.Fatal(err)
	}
	win, _ := filepath.Abs("../scenarios/testdata/hf/mistral-7b-v0.1/config.json")
	load := func(config string, mb int, recompute, attention string, seq int64) *Report {
		t.Helper()
		y := fmt.Sprintf("version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\n"+
			"model: {hf_config: %s, seq_len: %d}\nparallelism: {dp: 8, zero_stage: 3}\n"+
			"training: {micro_batch: %d, attention: %s, recompute: %s}\n", config, seq, mb, attention, recompute)
		s, err := scenarios.Load(filepath.Join(dir, "s.yaml"), []byte(y), nil)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Analyze(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	const gib = 1 << 30
	for _, c := range []struct {
		mb                   int
		recompute, attention string
		seq                  int64
		stored, recomputed   int64 // per block, windowed − unwindowed
		mask                 int64 // the attention masks component's peak
		peak                 int64 // the step's peak, windowed − unwindowed
	}{
		{1, "none", "sdpa", 8192, 134217728, 0, 67108864, 32 * 134217728},  // 4 GiB
		{2, "none", "sdpa", 8192, 268435456, 0, 134217728, 32 * 268435456}, // 8 GiB
		{1, "full", "sdpa", 8192, 0, 134217728, 67108864, 67108864},
		{2, "full", "sdpa", 8192, 0, 268435456, 134217728, 134217728},
		{1, "none", "sdpa", 4096, 33554432, 0, 16777216, 32 * 33554432}, // window = seq_len: 1 GiB
		{1, "none", "sdpa", 4095, 0, 0, 0, 0},                           // window > seq_len: no mask
		{1, "none", "flash", 8192, 0, 0, 0, 0},
		{1, "full", "flash", 8192, 0, 0, 0, 0},
	} {
		name := fmt.Sprintf("micro_batch %d, recompute %s, %s, seq_len %d", c.mb, c.recompute, c.attention, c.seq)
		rw := load(win, c.mb, c.recompute, c.attention, c.seq)
		rn := load(filepath.Join(dir, "config.json"), c.mb, c.recompute, c.attention, c.seq)
		if len(rw.Units) != len(rn.Units) {
			t.Fatalf("%s: %d units against %d", name, len(rw.Units), len(rn.Units))
		}
		blocks := 0
		for u := range rw.Units {
			w, n := rw.Units[u], rn.Units[u]
			ds, dr := w.Activation-n.Activation, w.Recompute-n.Recompute
			if len(w.Name) > 6 && w.Name[:6] == "block." {
				blocks++
				if ds != c.stored || dr != c.recomputed {
					t.Errorf("%s: %s keeps %+d B and rebuilds %+d B; want %+d, %+d", name, w.Name, ds, dr, c.stored, c.recomputed)
				}
			} else if ds != 0 || dr != 0 {
				t.Errorf("%s: %s keeps %+d B and rebuilds %+d B; want 0", name, w.Name, ds, dr)
			}
		}
		if blocks != 32 {
			t.Fatalf("%s: %d blocks", name, blocks)
		}
		if got := rw.Component(CompMask).Peak; got != c.mask {
			t.Errorf("%s: attention masks peak %d B, want %d", name, got, c.mask)
		}
		if rw.PeakUnit != rn.PeakUnit || rw.PeakPhase != rn.PeakPhase || rw.Units[rw.PeakUnit].Name != "lm_head" {
			t.Errorf("%s: peaks at unit %d (%s) against %d (%s); want both at lm_head", name, rw.PeakUnit, rw.PeakPhase, rn.PeakUnit, rn.PeakPhase)
		}
		if d := rw.Peak - rn.Peak; d != c.peak {
			t.Errorf("%s: peak %d − %d = %+d B (%.3f GiB), want %+d", name, rw.Peak, rn.Peak, d, float64(d)/gib, c.peak)
		}
	}
}

// TestSDPAMaskLifetime: which unit makes the boolean mask and which frees
// it (unitMasks). Mistral 7B at seq_len 8192, micro-batch 1: block.0
// makes it; with no checkpointing block.31's forward is its last use,
// under full recompute block.0's backward, and with recompute_every 2
// (blocks 1, 3, … checkpointed: EveryNth) block.1's backward. A layer list with a
// window and a chunk makes two masks, which without checkpointing die with
// the decoder's forward after its last block, a full-attention one.
func TestSDPAMaskLifetime(t *testing.T) {
	const mask = 67108864
	for _, c := range []struct {
		recompute        string
		every            int
		freeFwd, freeBwd string
	}{
		{"none", 1, "block.31", ""},
		{"full", 1, "", "block.0"},
		{"selective", 1, "", "block.0"},
		{"full", 2, "", "block.1"},
	} {
		y := fmt.Sprintf("version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\n"+
			"model: {hf_config: mistral-7b-v0.1/config.json, seq_len: 8192}\nparallelism: {dp: 8, zero_stage: 3}\n"+
			"training: {micro_batch: 1, attention: sdpa, recompute: %s, recompute_every: %d}\n", c.recompute, c.every)
		s, err := scenarios.Load("../scenarios/testdata/hf/s.yaml", []byte(y), nil)
		if err != nil {
			t.Fatal(err)
		}
		a, f, b, err := unitMasks(s)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("%s every %d", c.recompute, c.every)
		for u, l := range s.Model.LayerList {
			wantA, wantF, wantB := int64(0), int64(0), int64(0)
			if l.Name == "block.0" {
				wantA = mask
			}
			if l.Name == c.freeFwd {
				wantF = mask
			}
			if l.Name == c.freeBwd {
				wantB = mask
			}
			if a[u] != wantA || f[u] != wantF || b[u] != wantB {
				t.Errorf("%s: %s makes %d, frees %d after forward, %d after backward; want %d, %d, %d", name, l.Name, a[u], f[u], b[u], wantA, wantF, wantB)
			}
		}
	}
	y := "version: 1\ncluster: {nodes: 1, gpus_per_node: 2, gpu: H100-80GB}\nmodel:\n  kind: transformer\n  arch: llama\n  hidden: 64\n" +
		"  layers: 3\n  heads: 4\n  ffn: 128\n  vocab: 256\n  seq_len: 64\n  layer_list:\n  - {name: embedding, params: 16384}\n" +
		"  - {name: block.0, params: 40960, dims: {hidden: 64, heads: 4, head_dim: 16, window: 16}}\n" +
		"  - {name: block.1, params: 40960, dims: {hidden: 64, heads: 4, head_dim: 16, attention_chunk: 24}}\n" +
		"  - {name: block.2, params: 40960, dims: {hidden: 64, heads: 4, head_dim: 16}}\n" +
		"  - {name: lm_head, params: 16384}\nparallelism: {dp: 2, zero_stage: 3}\ntraining: {micro_batch: 2, attention: sdpa}\n"
	s, err := scenarios.Load("testdata/x.yaml", []byte(y), nil)
	if err != nil {
		t.Fatal(err)
	}
	a, f, _, err := unitMasks(s)
	if err != nil {
		t.Fatal(err)
	}
	const m = 2 * 64 * 64 // b·s²
	// Both live until the decoder's forward returns, after block.2, which
	// uses neither (causal_mask_mapping is the forward's local).
	for u, want := range []struct{ a, f int64 }{{0, 0}, {m, 0}, {m, 0}, {0, 2 * m}, {0, 0}} {
		if a[u] != want.a || f[u] != want.f {
			t.Errorf("%s: makes %d, frees %d; want %d, %d", s.Model.LayerList[u].Name, a[u], f[u], want.a, want.f)
		}
	}
}

// TestSDPAMaskPolicies: the bias row under every policy, on Mistral 7B's
// block dims at 8192 tokens (bias 2·8192² = 134,217,728 B): kept with no
// checkpointing; rebuilt in backward under selective (core attention),
// op (torchtitan keeps SDPA's outputs, not the where that makes its
// input) and full; only under sdpa.
func TestSDPAMaskPolicies(t *testing.T) {
	const bias = 134217728
	base := BlockDims{Arch: "llama", Seq: 8192, Batch: 1, Hidden: 4096, Heads: 32, KVHeads: 8, FFN: 14336, Vocab: 32000}
	for _, c := range []struct {
		attention, policy string
		stored, transient int64
	}{
		{AttentionSDPA, PolicyNone, bias, 0},
		{AttentionSDPA, PolicySelective, 0, bias},
		{AttentionSDPA, PolicyOp, 0, bias},
		{AttentionSDPA, PolicyFull, 0, bias},
		{AttentionFlash, PolicyNone, 0, 0},
		{AttentionEager, PolicyNone, 0, 0},
	} {
		d := base
		d.Attention = c.attention
		s0, t0, err := BlockActivation(d, c.policy)
		if err != nil {
			t.Fatal(err)
		}
		d.SDPAMask = true
		s1, t1, err := BlockActivation(d, c.policy)
		if err != nil {
			t.Fatal(err)
		}
		if s1-s0 != c.stored || t1-t0 != c.transient {
			t.Errorf("%s, %s: mask adds %d kept, %d rebuilt; want %d, %d", c.attention, c.policy, s1-s0, t1-t0, c.stored, c.transient)
		}
	}
}
