package zero

import (
	"fmt"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/scenarios"
)

// TestPackedAttentionFLOPs holds the packed count to values derived by hand
// from the kernels' rules (Llama 3 8B's 32 heads of 128, micro-batch 1):
//
//   - flash (varlen, THD): each document of d tokens is a causal
//     sequence of its own, d²/2 pairs per head, so s/d documents give
//     s·d/2 and the FLOPs are b·a·(s·d)·(d_qk + d_v); 4,096 tokens in
//     documents of 256: 32·4096·256·256 = 8,589,934,592, 1/16 of the
//     unpacked 32·4096²·256 = 137,438,953,472.
//   - a remainder: 4 documents of 1,000 and one of 96: 2·pairs =
//     4·1000² + 96² = 4,009,216.
//   - a window of 256 inside documents of 1,024: 4 · 256·(2·1024 − 256)
//     = 1,835,008 = 2·pairs.
//   - FlexAttention, 128×128 tiles: documents of 256 touch 1 then 2 key
//     tiles in alternate query tiles, 48 tiles of 32 query tiles, against
//     Σ 1…32 = 528 causal tiles, so 2·pairs = 4096²·48/528 =
//     1,525,201 (rounded down); documents of 64 touch one tile per query
//     tile, 32: 4096²·32/528 = 1,016,800, 3.9× the exact 64·64² = 262,144
//     the kernel would do at one-token granularity.
//   - document_len = seq_len: the unpacked causal count, whichever kernel.
func TestPackedAttentionFLOPs(t *testing.T) {
	const heads, dim = 32, 128
	for _, c := range []struct {
		name                         string
		seq, window, chunk, doc, blk int64
		pairs2                       int64
	}{
		{"flash 256", 4096, 0, 0, 256, 0, 4096 * 256},
		{"flash 1000, remainder 96", 4096, 0, 0, 1000, 0, 4*1000*1000 + 96*96},
		{"flash window 256 in 1024", 4096, 256, 0, 1024, 0, 4 * 256 * (2*1024 - 256)},
		{"flash chunk 512 in 1024", 4096, 0, 512, 1024, 0, 8 * 512 * 512},
		{"flash chunk 2048 over 1024", 4096, 0, 2048, 1024, 0, 4 * 1024 * 1024},
		{"flex 256", 4096, 0, 0, 256, 128, 4096 * 4096 * 48 / 528},
		{"flex 64", 4096, 0, 0, 64, 128, 4096 * 4096 * 32 / 528},
		{"flex whole sequence", 4096, 0, 0, 4096, 128, 4096 * 4096},
		// A window of 129 keys: row q's keys start at q − 128 (the window
		// holds q itself), so query tile k ≥ 1 reaches key tiles k − 1 and
		// k: with documents of 512, 14 tiles of 1,024/128 = 8 query tiles
		// (the first tile of each document reaches only itself), 15
		// without; the unpacked count w·(2s − w) scaled by 14/15.
		{"flex window 129 in 512", 1024, 129, 0, 512, 128, 129 * (2*1024 - 129) * 14 / 15},
		// Chunks of 384 restart at each document (positions restart
		// there): document 0's rows 384–511 and document 1's rows
		// 896–1,023 begin a chunk, so the query tiles reach 1, 2, 3, 1 |
		// 1, 2, 3, 1 key tiles, 14; unpacked, chunks at 0, 384 and 768
		// give 1, 2, 3, 1, 2, 3, 1, 2 = 15; the unpacked 2·384² + 256²
		// scaled by 14/15.
		{"flex chunk 384 in 512", 1024, 0, 384, 512, 128, (2*384*384 + 256*256) * 14 / 15},
		{"flash whole sequence", 4096, 0, 0, 4096, 0, 4096 * 4096},
	} {
		got, err := PackedAttentionFLOPs(1, heads, c.seq, dim, dim, c.window, c.chunk, c.doc, c.blk)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if want := heads * c.pairs2 * 2 * dim; got != want {
			t.Errorf("%s: %d FLOPs, want %d (2·pairs %d)", c.name, got, want, c.pairs2)
		}
	}
	full, err := AttentionFLOPs(1, heads, 4096, 4096, dim, dim, true, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if full != 137438953472 {
		t.Errorf("unpacked causal %d FLOPs, want 137,438,953,472", full)
	}
	if got, _ := PackedAttentionFLOPs(1, heads, 4096, dim, dim, 0, 0, 256, 0); got != 8589934592 || got*16 != full {
		t.Errorf("packed 256: %d FLOPs, want 8,589,934,592 (1/16 of %d)", got, full)
	}
	if _, err := PackedAttentionFLOPs(1, heads, 4096, dim, dim, 0, 0, 5000, 0); err == nil {
		t.Error("document longer than the sequence: no error")
	}
	// docs/compute-model.md's worked numbers, from the counts above.
	flash := func(doc, blk int64) float64 {
		t.Helper()
		f, err := PackedAttentionFLOPs(1, heads, 4096, dim, dim, 0, 0, doc, blk)
		if err != nil {
			t.Fatal(err)
		}
		return float64(f)
	}
	f256, x256, x64 := flash(256, 0), flash(256, 128), flash(64, 128)
	golden.CheckQuotes(t, "../docs/compute-model.md", "TestPackedAttentionFLOPs (32 heads of 128, s = 4,096)",
		fmt.Sprintf("32·4096·256·256 = %.2f GFLOP of forward attention a sequence, 1/%.0f of the unpacked %.1f GFLOP;", f256/1e9, float64(full)/f256, float64(full)/1e9),
		fmt.Sprintf("48 of the 528 causal tiles are touched (alternately 1 and 2 key tiles per query tile), 1/%.0f of the unpacked count, %.2f× the exact count;", float64(full)/x256, x256/f256),
		fmt.Sprintf("documents of 64 touch one tile per query tile, %.1f× the exact count.", x64/flash(64, 0)))
}

// packedScenario is Llama 3 8B's shape on one H100 node at seq_len 4096.
func packedScenario(t *testing.T, sets ...string) *scenarios.Scenario {
	t.Helper()
	y := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\n" +
		"model: {kind: transformer, arch: llama, hidden: 4096, layers: 4, heads: 32, kv_heads: 8, ffn: 14336, vocab: 128256, seq_len: 4096}\n" +
		"parallelism: {dp: 8, zero_stage: 1}\ntraining: {micro_batch: 1}\n"
	sc, err := scenarios.Load("s.yaml", []byte(y), sets)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// TestPackedBlocks checks that model.document_len reaches every block's
// forward FLOPs by the kernel's rule: under flash each block loses the
// unpacked causal attention less the packed one (derived above), under
// FlexAttention the tile count's, under eager nothing (every score is
// computed and masked); the GEMMs and MFU's per-token count do not move.
func TestPackedBlocks(t *testing.T) {
	const full, flash256 = 137438953472, 8589934592
	flex256 := int64(32 * (4096 * 4096 * 48 / 528) * 256)
	for _, c := range []struct {
		name string
		sets []string
		drop int64
	}{
		{"flash", []string{"training.attention=flash"}, full - flash256},
		{"flex", []string{"training.attention=flash", "training.attention_kernel=flex"}, full - flex256},
		{"eager", []string{"training.attention=eager"}, 0},
		{"whole sequence", []string{"training.attention=flash"}, 0},
	} {
		doc := "model.document_len=256"
		if c.name == "whole sequence" {
			doc = "model.document_len=4096"
		}
		base, err := Costs(packedScenario(t, c.sets...))
		if err != nil {
			t.Fatal(err)
		}
		sc := packedScenario(t, append(c.sets, doc)...)
		packed, err := Costs(sc)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range sc.Model.LayerList {
			want := int64(0)
			if l.Block {
				want = c.drop
			}
			if got := base[i].FwdFLOPs - packed[i].FwdFLOPs; got != want {
				t.Errorf("%s: %s forward FLOPs drop %d, want %d", c.name, l.Name, got, want)
			}
		}
	}
}

// TestDocumentLenRefused holds model.document_len's validation: one line
// naming the key's place and the fix.
func TestDocumentLenRefused(t *testing.T) {
	y := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\n" +
		"model:\n  preset: llama2-7b\n  document_len: %s\nparallelism: {dp: %s, cp: %s, zero_stage: 1}\ntraining: {micro_batch: 1, attention: %s}\n"
	for _, c := range []struct{ doc, dp, cp, att, want string }{
		{"9000", "8", "1", "flash", "s.yaml:5:3: document_len=9000 is above seq_len=4096: a packed document is at most one sequence (use 4096 or less"},
		{"-1", "8", "1", "flash", "s.yaml:5:3: document_len=-1 is out of range (use 0 to 16777216)"},
		{"256", "4", "2", "flash", "s.yaml:5:3: document_len with parallelism.cp=2 is not modelled"},
		{"256", "8", "1", "sdpa", "s.yaml:5:3: document_len with training.attention sdpa is not modelled"},
		{"x", "8", "1", "flash", "s.yaml:5:17: "},
	} {
		_, err := scenarios.Load("s.yaml", []byte(fmt.Sprintf(y, c.doc, c.dp, c.cp, c.att)), nil)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("document_len %s, dp %s, cp %s, %s: %v, want %q…", c.doc, c.dp, c.cp, c.att, err, c.want)
		}
	}
	// Only kind transformer counts attention by document
	// (PackedAttentionFLOPs): seed 002's tiny-transformer, with a sequence
	// of its own, is refused too.
	tiny := "version: 1\ncluster: {nodes: 1, gpus_per_node: 2, gpu: H100-80GB}\n" +
		"model:\n  preset: tiny-transformer\n  document_len: 4\nparallelism: {dp: 2, zero_stage: 1}\ntraining: {micro_batch: 1}\n"
	if _, err := scenarios.Load("s.yaml", []byte(tiny), nil); err == nil || !strings.Contains(err.Error(), "document_len needs a transformer with seq_len") {
		t.Errorf("tiny-transformer with document_len: %v, want it refused (needs a transformer)", err)
	}
}
