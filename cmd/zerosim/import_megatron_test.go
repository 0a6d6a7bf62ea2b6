package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportMegatronCLI: Megatron-LM's Llama 3 8B launch script imported
// with its 128,256-token tokenizer runs as printed ("import > s.yaml && run
// s.yaml"): 8,030,261,248 parameters (Meta's Llama 3 8B), the script's
// torchrun --nnodes 1 --nproc_per_node 8, micro-batch 1 and global batch
// 128 (16 micro-steps); argument lists read from stdin; the GPT-3 script
// with its tensor parallel size 8 and a bad flag of the import are one
// line on stderr, exit code 2.
func TestImportMegatronCLI(t *testing.T) {
	const dir = "../../scenarios/testdata/megatron/"
	out, stderr, code := runValidateCLI(t, nil, "import", "megatron", dir+"train_llama3_8b_h100_fp8.sh", "--gpu", "H100-80GB", "--tokenizer-vocab-size", "128256")
	if code != 0 || stderr != "" || !strings.HasPrefix(out, "# Imported by zerosim import megatron from "+dir+"train_llama3_8b_h100_fp8.sh\n") {
		t.Fatalf("import: code %d: %s\n%s", code, stderr, out)
	}
	s := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(s, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	run, stderr, code := runValidateCLI(t, nil, "run", s)
	for _, want := range []string{"model:               transformer, 8,030,261,248 params",
		"cluster:             1 node × 8 H100-80GB", "ZeRO stage:          1\n",
		"micro-batch 1 × 16 accumulation × dp 8 × 8,192 tokens"} {
		if code != 0 || !strings.Contains(run, want) {
			t.Errorf("run: code %d, no %q: %s\n%s", code, want, stderr, run)
		}
	}
	args := "--num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 128 --max-position-embeddings 128 --micro-batch-size 2 --tokenizer-type NullTokenizer --vocab-size 1000 --use-distributed-optimizer --num-distributed-optimizer-instances 4\n"
	out, stderr, code = runValidateCLI(t, []byte(args), "import", "megatron", "-", "--nodes", "2")
	if code != 0 || !strings.Contains(out, "  k: 4  # --num-distributed-optimizer-instances 4") || !strings.Contains(out, "  dp: 16  # 2 × 8 GPUs") {
		t.Errorf("stdin: code %d: %s\n%s", code, stderr, out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{dir + "train_gpt3_175b_distributed.sh", "--tokenizer-vocab-size", "50257"}, "zerosim: " + dir + "train_gpt3_175b_distributed.sh:56:2: --tensor-model-parallel-size 8: tensor parallelism is not modelled"},
		{[]string{dir + "train_gpt3_175b_distributed-tp1pp1.sh"}, "zerosim: " + dir + "train_gpt3_175b_distributed-tp1pp1.sh: the tokenizer reads its vocabulary from a file: give its size with zerosim's --tokenizer-vocab-size N"},
		{[]string{dir + "train_llama3_8b_h100_fp8.sh", "--gpu", "X100"}, "zerosim: --gpu \"X100\" is not a GPU preset"},
		{[]string{dir + "train_llama3_8b_h100_fp8.sh", "--nodes", "0"}, "zerosim: --nodes 0 is out of range"},
	} {
		_, stderr, code = runValidateCLI(t, nil, append([]string{"import", "megatron"}, c.args...)...)
		if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, c.want) {
			t.Errorf("%s: code %d, %q; want %q…", c.args, code, stderr, c.want)
		}
	}
}
