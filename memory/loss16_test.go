package memory

import (
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestLoss16 holds training.cross_entropy: bf16 (F.cross_entropy on the
// bf16 logits, no upcast: log_softmax in the logits' dtype, LossNLL.cpp
// cross_entropy_loss_symint) to its bytes, by hand on t = 2·16 = 32 tokens
// and V = 1000 (t·V = 32,000): log_softmax saves 2·t·V (fp32: 4·t·V), the
// loss's backward writes two 2·t·V gradients (fp32: two 4·t·V), and no
// fp32 upcast exists beside the 16-bit logits (fp32: 4·t·V).
func TestLoss16(t *testing.T) {
	const yaml = `version: 1
cluster: {nodes: 1, gpus_per_node: 1, gpu: A100-80GB}
model: {kind: transformer, arch: llama, hidden: 64, layers: 1, heads: 4, kv_heads: 4, ffn: 128, vocab: 1000, seq_len: 16}
parallelism: {dp: 1, zero_stage: 0}
training: {micro_batch: 2}
`
	const tv = 32 * 1000
	type got struct{ stored, transient, logits, upcast int64 }
	measure := func(ce string) got {
		s, err := scenarios.Load("s.yaml", []byte(yaml), []string{"training.cross_entropy=" + ce})
		if err != nil {
			t.Fatal(err)
		}
		d := baseDims(s)
		st, tr, err := HeadActivation(d)
		if err != nil {
			t.Fatal(err)
		}
		lg, up, err := HeadLossTemps(d)
		if err != nil {
			t.Fatal(err)
		}
		return got{st, tr, lg, up}
	}
	f, b := measure("fp32"), measure("bf16")
	if d := f.stored - b.stored; d != 4*tv-2*tv {
		t.Errorf("saved: fp32 %d B, bf16 %d B: %d apart, want 2·t·V = %d", f.stored, b.stored, d, 2*tv)
	}
	if f.transient != 2*4*tv || b.transient != 2*2*tv {
		t.Errorf("loss backward: fp32 %d B, bf16 %d B, want %d and %d", f.transient, b.transient, 2*4*tv, 2*2*tv)
	}
	if f.logits != 2*tv || b.logits != 2*tv || f.upcast != 4*tv || b.upcast != 0 {
		t.Errorf("loss temporaries: fp32 %d + %d B, bf16 %d + %d B, want %d + %d and %d + 0", f.logits, f.upcast, b.logits, b.upcast, 2*tv, 4*tv, 2*tv)
	}
	// The names follow param_dtype: fp16's loss is fp16, and fp32 params
	// have no 16-bit loss.
	for _, c := range []struct {
		sets []string
		ok   bool
	}{
		{[]string{"training.param_dtype=fp16", "training.cross_entropy=fp16"}, true},
		{[]string{"training.param_dtype=fp16", "training.cross_entropy=bf16"}, false},
		{[]string{"training.param_dtype=fp32", "training.cross_entropy=fp32"}, true},
		{[]string{"training.param_dtype=fp32", "training.cross_entropy=bf16"}, false},
		{[]string{"training.cross_entropy=bf16", "training.keep_logits=fp32"}, false},
	} {
		_, err := scenarios.Load("s.yaml", []byte(yaml), c.sets)
		if (err == nil) != c.ok {
			t.Errorf("%v: error %v, want loads %t", c.sets, err, c.ok)
		}
	}
}
