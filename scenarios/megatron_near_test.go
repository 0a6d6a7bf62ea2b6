package scenarios

import (
	"strings"
	"testing"
)

// TestMegatronMissingNearMiss: a required flag misspelled on the command
// line is reported at the misspelling with the right name; before, the
// error was "--num-attention-heads is missing (…: add it)", with no
// position, for a flag the user had typed.
func TestMegatronMissingNearMiss(t *testing.T) {
	const rest = " --hidden-size 64 --num-attention-heads 8 --max-position-embeddings 128 --seq-length 128 --micro-batch-size 1 --vocab-size 1000\n"
	for _, c := range []struct{ args, want string }{
		{"--num-layer 2" + rest, "a.txt:1:1: --num-layer is not a Megatron-LM argument (did you mean --num-layers? pretrain_gpt.py requires it)"},
		{"--num-layers 2 --hiden-size 64 --num-attention-heads 8 --max-position-embeddings 128 --seq-length 128\n", "a.txt:1:16: --hiden-size is not a Megatron-LM argument (did you mean --hidden-size?"},
		{"--num-layers 2 --hidden_size 64 --num-attention-heads 8 --max-position-embeddings 128 --seq-length 128\n", "a.txt:1:16: --hidden_size is not a Megatron-LM argument (did you mean --hidden-size?"},
		{"--num-layers 2 --hidden-size 64 --num-attention-heads 8 --max-position-embeddings 128 --seq-lenght 128\n", "--seq-lenght is not a Megatron-LM argument (did you mean --seq-length?"},
		// Unchanged: nothing near it.
		{"--num-layers 2 --num-attention-heads 8 --max-position-embeddings 128 --seq-length 128\n", "a.txt: --hidden-size is missing (pretrain_gpt.py requires it: add it)"},
	} {
		_, err := ImportMegatron("a.txt", []byte(c.args), MegatronOptions{TokenizerVocab: 1000})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.args, err, c.want)
		}
	}
}
