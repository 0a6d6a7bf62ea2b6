package main

import (
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestImportSeqLenSource: model.seq_len, the one key import hf and
// import deepspeed --hf wrote without a source (QA2 finding 13), names it:
// zerosim's DefaultHFSeqLen (4096), and config.json's
// max_position_embeddings where that differs (Llama 3.1 8B: 131072; OPT
// 1.3B: 2048, which caps it); import deepspeed takes --seq-len as import
// accelerate does, and refuses it without --hf, whose model it sets.
func TestImportSeqLenSource(t *testing.T) {
	const ds = "../../docs/examples/deepspeed/flagperf-llama2-7b.json"
	hf := func(m string) string { return "../../scenarios/testdata/hf/" + m + "/config.json" }
	for _, tc := range []struct {
		args []string
		want string // the comment line and the key, or the error
		code int
	}{
		{[]string{"import", "hf", hf("llama-3.1-8b")},
			"  # zerosim's default for an imported model, DefaultHFSeqLen 4096: config.json states the longest context, not the training length (max_position_embeddings 131072); set it to the run's sequence length\n  seq_len: 4096\n", 0},
		{[]string{"import", "hf", hf("llama-2-7b")},
			"  # zerosim's default for an imported model, DefaultHFSeqLen 4096: config.json states the longest context, not the training length; set it to the run's sequence length\n  seq_len: 4096\n", 0},
		{[]string{"import", "hf", hf("opt-1.3b")},
			"  # zerosim's default for an imported model, DefaultHFSeqLen 4096, capped at config.json's max_position_embeddings 2048; set it to the run's sequence length\n  seq_len: 2048\n", 0},
		{[]string{"import", "deepspeed", ds, "--hf", hf("llama-3.1-8b")},
			"  # zerosim's default for an imported model, DefaultHFSeqLen 4096: config.json states the longest context, not the training length (max_position_embeddings 131072); set it to the run's sequence length\n  seq_len: 4096\n", 0},
		{[]string{"import", "deepspeed", ds, "--hf", hf("llama-3.1-8b"), "--seq-len", "8192"},
			"  # --seq-len (the training script's sequence length; not in the DeepSpeed config)\n  seq_len: 8192\n", 0},
		{[]string{"import", "deepspeed", ds, "--seq-len", "8192"}, "--seq-len sets model.seq_len, which needs the model: pass --hf config.json too", 2},
		{[]string{"import", "deepspeed", ds, "--hf", hf("llama-3.1-8b"), "--seq-len", "0"}, "--seq-len 0 is out of range (use 1 to 16777216)", 2},
	} {
		out, errOut, code := sweepCLI(t, tc.args...)
		got := out
		if tc.code != 0 {
			got = errOut
		}
		if code != tc.code || !strings.Contains(got, tc.want) {
			t.Errorf("%v: exit %d, %q; want %d and %q", tc.args, code, got, tc.code, tc.want)
		}
	}
	if scenarios.DefaultHFSeqLen != 4096 {
		t.Errorf("DefaultHFSeqLen %d: the rows above say 4096", scenarios.DefaultHFSeqLen)
	}
}
