package scenarios

import (
	"fmt"
	"strings"
	"testing"
)

// TestMegatronShellReread (QA s31 finding 6): a command built in a string
// and run by bash -c, sh -c, eval or as an unquoted $NAME is followed: the
// string's words as the shell reads them when it runs it, each at the line
// and column where it is written and with its own unknown substitution
// (shown as word?). The last command the script runs is shown.
func TestMegatronShellReread(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"bash -c of a string with arrays", "A=(--x 1\n  --y 2)\nP=\"numactl -m 0\"\nCMD=\"torchrun ${A[@]} p.py \\\n  --z 3\"\nsrun -l bash -c \"$P $CMD\" ignored", "numactl@3:4 -m@3:12 0@3:15 torchrun@4:6 --x@1:4 1@1:8 --y@2:3 2@2:7 p.py@4:23 --z@5:3 3@5:7"},
		{"sh -lc single-quoted", "sh -lc 'run --a \"b c\" --d'", "run@1:9 --a@1:13 b c@1:17 --d@1:23"},
		{"eval", "C=\"run --a 1\"\neval \"$C\"", "run@1:4 --a@1:8 1@1:12"},
		{"unquoted", "C=\"run --a $(hostname) --b 2\"\nsrun $C", "srun@2:1 run@1:4 --a@1:8 $(hostname)?@1:12 --b@1:24 2@1:28"},
		{"separator in the string", "C=\"cd /x && run --a 1\"\nbash -c \"$C\"", "run@1:13 --a@1:17 1@1:21"},
		{"escaped quotes", "C=\"run --n \\\"a b\\\"\"\nbash -c \"$C\"", "run@1:4 --n@1:8 a b@1:13"},
		{"one word is where it is used", "N=$(nproc)\nC=\"run --n $N\"\nbash -c \"$C\"", "run@2:4 --n@2:8 $(nproc)?@2:12"},
		{"append in an undecided if", "C=\"run --a\"\nif [ -n \"$KEY\" ]; then\n  C=\"$C --b\"\nfi\nbash -c \"$C\"", "run@1:4 --a@1:8"},
		{"append decided", "K=1\nC=\"run --a\"\nif [ -n \"$K\" ]; then\n  C=\"$C --b\"\nfi\nbash -c \"$C\"", "run@2:4 --a@2:8 --b@4:9"},
		{"not a -c string", "bash run.sh \"--a b\"", "bash@1:1 run.sh@1:6 --a b@1:13"},
	} {
		cmds, _ := mgScript(c.src, nil)
		if len(cmds) == 0 {
			t.Errorf("%s: no command", c.name)
			continue
		}
		var got []string
		for _, w := range cmds[len(cmds)-1].words {
			u := ""
			if w.unresolved != "" {
				u = "?"
			}
			got = append(got, fmt.Sprintf("%s%s@%d:%d", w.text, u, w.line, w.col))
		}
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("%s: %s\nwant %s", c.name, g, c.want)
		}
	}
}

// TestImportMegatronStringPositions: an unknown value in a command built in
// a string is named where it is written, and a $(hostname) elsewhere in
// the string does not make the other flags unknown.
func TestImportMegatronStringPositions(t *testing.T) {
	base := "--num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 128 --max-position-embeddings 128 --micro-batch-size 2 --global-batch-size 64 --tokenizer-type NullTokenizer --vocab-size 1000"
	src := "H=$(hostname)\nCMD=\"torchrun --nnodes 2 --nproc-per-node 4 --rdzv_endpoint $H:1 $DIR/pretrain_gpt.py \\\n  " + base + "\"\nsrun bash -c \"$CMD\"\n"
	m, err := ImportMegatron("s.sh", []byte(src), MegatronOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Nodes != 2 || m.GPUsPerNode != 4 || m.Model.Layers != 2 {
		t.Errorf("nodes %d gpus %d layers %d, want 2 4 2", m.Nodes, m.GPUsPerNode, m.Model.Layers)
	}
	bad := strings.Replace(src, "--num-layers 2", "--num-layers $L", 1)
	_, err = ImportMegatron("s.sh", []byte(bad), MegatronOptions{})
	if want := "s.sh:3:16: --num-layers $L: $L is not known here"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %v, want %q", err, want)
	}
}
