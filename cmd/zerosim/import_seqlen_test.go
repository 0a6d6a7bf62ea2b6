package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestImportSeqLenSource: model.seq_len, the one key import hf and
// import deepspeed --hf wrote without a source (QA2 finding 13), names it:
// zerosim's default (DefaultHFSeqLen, 4,096 tokens), and config.json's
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
			"  # zerosim's default 4,096 tokens for an imported model: config.json states the longest context, not the training length (max_position_embeddings 131072); set it to the run's sequence length\n  seq_len: 4096\n", 0},
		{[]string{"import", "hf", hf("llama-2-7b")},
			"  # zerosim's default 4,096 tokens for an imported model: config.json states the longest context, not the training length; set it to the run's sequence length\n  seq_len: 4096\n", 0},
		{[]string{"import", "hf", hf("opt-1.3b")},
			"  # zerosim's default 4,096 tokens for an imported model, capped at config.json's max_position_embeddings 2048; set it to the run's sequence length\n  seq_len: 2048\n", 0},
		{[]string{"import", "deepspeed", ds, "--hf", hf("llama-3.1-8b")},
			"  # zerosim's default 4,096 tokens for an imported model: config.json states the longest context, not the training length (max_position_embeddings 131072); set it to the run's sequence length\n  seq_len: 4096\n", 0},
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

// TestSeqLenNoteSetByEveryPoint: the warning that model.seq_len is not
// given is left out when every sweep point (--grid model.seq_len=…) or
// compare variant (--vary model.seq_len=…) sets it, and kept when they do
// not (QA14 finding 4): no point trains at the default then.
func TestSeqLenNoteSetByEveryPoint(t *testing.T) {
	s := filepath.Join(t.TempDir(), "s.yaml")
	cfg, err := filepath.Abs("../../scenarios/testdata/hf/llama-2-7b/config.json")
	if err != nil {
		t.Fatal(err)
	}
	doc := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {hf_config: " + cfg + "}\nparallelism: {dp: 8, zero_stage: 1}\n"
	if err := os.WriteFile(s, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	const note = "model.seq_len is not given"
	for _, tc := range []struct {
		args []string
		warn bool
	}{
		{[]string{"sweep", s, "--grid", "model.seq_len=1024,2048"}, false},
		{[]string{"sweep", s, "--grid", "model.seq_len=1024,2048", "--grid", "parallelism.k=1,2"}, false},
		{[]string{"sweep", s, "--grid", "parallelism.k=1,2"}, true},
		{[]string{"compare", s, "--vary", "model.seq_len=1024,4096"}, false},
		{[]string{"compare", s, "--vary", "parallelism.k=1,2"}, true},
		{[]string{"run", s}, true},
	} {
		_, errOut, code := sweepCLI(t, tc.args...)
		if code != 0 || strings.Contains(errOut, note) != tc.warn || strings.Count(errOut, note) > 1 {
			t.Errorf("%v: exit %d, stderr %q; want the seq_len warning %v (once)", tc.args[:4], code, errOut, tc.warn)
		}
	}
}
