package zero

import (
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestPositionEmbeddingBytes holds the learned position embedding's
// traffic (positionBytes) to counts by hand at MPT-7B's width (h 4096,
// vocab 50368, 2048 positions), s = 2048, bf16.
//
// Tokens alone (embeddingBytes before positions), t = s·b: forward 4·t·h;
// backward 2·v·h + 2·t·h + 10·t·h. At b = 4 (t = 8192): 134,217,728 and
// 412,614,656 + 67,108,864 + 335,544,320 = 815,267,840.
//
// One position index per token (MPT, Megatron, OPT): forward + the
// lookup 4·t·h + the add 6·t·h = 335,544,320; backward + 2·P·h
// (16,777,216) + 2·t·h (67,108,864) + 8·s·⌈b/10⌉·h (67,108,864) + 2·s·h
// (16,777,216) = 167,772,160. At b = 12 two partial sums per position:
// 8·s·2·h.
//
// Broadcast (transformers' GPT-2, (1, s) positions): forward + 4·s·h +
// (2·t·h + 2·s·h read, 2·t·h written) = 33,554,432 + 134,217,728 +
// 16,777,216; backward + the batch sum of the add's gradient (2·t·h +
// 2·s·h) + 2·P·h + 2·s·h + 8·s·h + 2·s·h.
func TestPositionEmbeddingBytes(t *testing.T) {
	const h, v, s, p = 4096, 50368, 2048, 2048
	for _, c := range []struct {
		b, pos    int64
		broadcast bool
		fwd, bwd  int64
	}{
		{4, 0, false, 134_217_728, 815_267_840},
		{4, p, false, 469_762_048, 983_040_000},
		{4, p, true, 318_767_104, 1_016_594_432},
		{12, p, false, 1_409_286_144, 1_989_672_960},
		{12, p, true, 855_638_016, 1_956_118_528},
	} {
		f, b, err := embeddingBytes(s, c.b, h, v, c.pos, c.broadcast)
		if err != nil || f != c.fwd || b != c.bwd {
			t.Errorf("b %d, %d positions, broadcast %v: %d, %d B (%v); want %d, %d", c.b, c.pos, c.broadcast, f, b, err, c.fwd, c.bwd)
		}
	}
}

// TestLearnedPositionRows: the position rows reach the embedding's
// traffic from the model: the gpt preset's seq_len rows (its embedding
// unit holds (vocab + seq_len)·h), an MPT imported with layer_list its
// model.max_seq_len rows, none for a llama preset, GPT-2's n_positions
// (1024); OPT-350m's are joined by project_in (word_embed_proj_dim 512,
// hidden 1024), so its count gives none (scenarios' learnedPositions).
func TestLearnedPositionRows(t *testing.T) {
	for _, c := range []struct {
		model string
		rows  int64
	}{
		{"{kind: transformer, hidden: 1024, heads: 16, layers: 2, seq_len: 4096, vocab: 50257}", 4096},
		{"{preset: llama2-7b}", 0},
		{"{kind: transformer, arch: gpt, hidden: 1024, heads: 16, layers: 1, seq_len: 2048, vocab: 50368, params: 66272256, " +
			"layer_list: [{name: embedding, params: 53673984}, {name: block.0, params: 12596224}, {name: final_norm, params: 2048}]}", 2048},
		{"{hf_config: hf-extra/gpt2-medium.json, seq_len: 1024}", 1024},
		{"{hf_config: hf-extra/opt-350m.json, seq_len: 2048}", 0},
	} {
		doc := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: " + c.model +
			"\nparallelism: {dp: 8, zero_stage: 3}\ntraining: {micro_batch: 1}\n"
		s, err := scenarios.Load("../scenarios/testdata/s.yaml", []byte(doc), nil)
		if err != nil {
			t.Errorf("%s: %v", c.model, err)
			continue
		}
		if r := s.Model.LearnedPositionRows(); r != c.rows {
			t.Errorf("%s: %d position rows, want %d", c.model, r, c.rows)
		}
	}
}
