package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestPlanOneScreen: on Llama-2-13B over 4 × 8 A100-40GB with one 100 GbE
// NIC per node, plan answers on one screen (≤ 40 lines of ≤ 120 columns):
// stage, K, micro-batch, checkpointing, tokens/s and whether it fits,
// without raw picoseconds; -o writes the files, plan.csv holding every row
// of plan.json.
func TestPlanOneScreen(t *testing.T) {
	dir := t.TempDir()
	out, errOut, code := sweepCLI(t, "plan", "llama2-13b-a100-eth", "--tokens", "1T", "-o", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) > 40 {
		t.Errorf("%d lines, want ≤ 40:\n%s", len(lines), out)
	}
	for i, l := range lines {
		if n := utf8.RuneCountInString(l); n > 120 {
			t.Errorf("line %d has %d columns: %s", i+1, n, l)
		}
	}
	for _, want := range []string{"run:   ZeRO stage 3", "micro-batch", "checkpointing", "tokens/s per GPU", "fits: yes", "GPU-hours", "front: "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if m := regexp.MustCompile(`\d{7,}|\dps\b`).FindString(out); m != "" {
		t.Errorf("raw figure %q in the screen output:\n%s", m, out)
	}
	var plan struct {
		Rows []struct {
			Stage int     `json:"zero_stage"`
			TPS   float64 `json:"tokens_per_s_per_gpu"`
		} `json:"rows"`
		Reason string `json:"reason"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "plan.json"))
	if err == nil {
		err = json.Unmarshal(data, &plan)
	}
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "plan.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Rows) == 0 || len(recs) != len(plan.Rows)+1 || !strings.Contains(out, plan.Reason[:40]) {
		t.Errorf("plan.json %d rows, plan.csv %d records; reason %q", len(plan.Rows), len(recs), plan.Reason)
	}
	for _, name := range []string{"plan.html", "pareto.png", "pareto.svg"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestPlanNothingFits: a 30B model on 8 × 24 GiB fits in no configuration;
// plan says so and what to change, and exits 0 (the answer is valid).
func TestPlanNothingFits(t *testing.T) {
	out, errOut, code := sweepCLI(t, "plan", "seed002-7b", "--set", "model.params=30B", "--recompute", "full", "--algorithms", "ring")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"fits:  no", "to fit: ", " nodes (the least that fit", "GPUs with at least", "offload"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// Bad flags are one line naming the flag, exit 2, nothing on stdout.
func TestPlanBadInput(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", "default", "--global-batch", "7"}, "--global-batch"},
		{[]string{"plan", "default", "--global-batch", "100000tokens"}, "not a whole number of 4096-token sequences"},
		{[]string{"plan", "default", "--global-batch", "x"}, "--global-batch"},
		{[]string{"plan", "default", "--tokens", "lots"}, "--tokens"},
		{[]string{"plan", "default", "--tolerance", "0"}, "--tolerance"},
		{[]string{"plan", "default", "--stages", "4"}, "--stages"},
		{[]string{"plan", "default", "--recompute", "some"}, "recompute"},
		{[]string{"plan", "default", "-o", file}, "-o"},
		// Each was accepted: NaN passed the range check, --top ≤ 0 listed
		// 10, an empty value fell back to the default, -j sized nothing
		// but was unbounded.
		{[]string{"plan", "default", "--tolerance", "NaN"}, "--tolerance NaN: use a percentage above 0"},
		{[]string{"plan", "default", "--top", "0"}, "--top 0: use 1 or more"},
		{[]string{"plan", "default", "--top", "-1"}, "--top -1: use 1 or more"},
		{[]string{"plan", "default", "--global-batch", ""}, "--global-batch: empty value"},
		{[]string{"plan", "default", "--tokens", ""}, "--tokens: empty value"},
		{[]string{"plan", "default", "--recompute", ""}, "--recompute: empty value"},
		{[]string{"plan", "default", "-j", "5000"}, "--jobs 5000: use 1 to 1024"},
		// The global batch of 2Mtokens (10^6) is no whole number of 4096-token
		// sequences: plan --help's example now says 2097152tokens.
		{[]string{"plan", "default", "--global-batch", "2Mtokens"}, "use 1998848 or 2002944 tokens"},
	} {
		out, e, code := sweepCLI(t, tc.args...)
		if code != 2 || !strings.Contains(e, tc.want) || strings.Count(e, "\n") != 1 || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2, one line with %q", tc.args, code, out, e, tc.want)
		}
	}
}

// TestPlanSamplesWithoutSeqLen: a model without a sequence length (seed
// 000's residual MLP) plans a global batch of samples, not "sequences × 1
// tokens", and its MFU legend says how that model's FLOPs are counted.
func TestPlanSamplesWithoutSeqLen(t *testing.T) {
	code, out, errOut := runMain(t, "", "plan", "seed000-k4", "--global-batch", "8", "--stages", "1", "--recompute", "none", "--top", "1")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"global batch 8 samples per step (no sequence length: a sample counts as one token)", "3× the forward FLOPs executed"} {
		if !strings.Contains(out, want) {
			t.Errorf("plan of seed000-k4 does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "× 1 tokens") {
		t.Errorf("plan of seed000-k4 counts sequences of 1 token:\n%s", out)
	}
}
