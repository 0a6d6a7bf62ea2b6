package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/reports"
)

func runVerifyCLI(t *testing.T, stdin []byte, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(append([]string{"verify"}, args...), bytes.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), code
}

const refDir = "../../numerics/testdata/reference"

// TestVerifyCLI runs zerosim verify in-process: the default scenario
// (tiny transformer, N = 16: 3 stages × 5 K × 2 buckets + 5 stage-3 rows +
// the same-data row = 36 configurations) passes; a corrupted master shard
// fails with exit code 1 naming rank, step, parameter and element; bad
// flags exit 2. seed002-tiny (N = 2, AdamW): 3 × 2 K × 2 buckets + 2 + 1 = 15.
func TestVerifyCLI(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		stdout   []string
		stderr   string
		noStdout bool
	}{
		{"default", nil, 0, []string{"PASS: 36 of 36 configurations bit-exact", "same-data"}, "", false},
		{"seed002 tiny N2", []string{"seed002-tiny"}, 0, []string{"PASS: 15 of 15 configurations bit-exact"}, "", false},
		// Rank 3 of 16 owns [51, 68) of the 272-element padded buffer; its
		// element 5 is flat 56, the first element of w_o (flat 56–71).
		{"corrupt", []string{"--corrupt-shard", "3:5"}, 1, []string{"step 2 rank 3 fp32 master w_o[0]", "FAIL: 0 of 1"},
			"first: tiny-transformer N16 stage 1 K 1 bucket one exact: step 2 rank 3 fp32 master w_o[0]", false},
		{"corrupt step 4 K 4 stage 3", []string{"--corrupt-shard", "6:0", "--corrupt-step", "4", "--set", "parallelism.k=4", "--set", "parallelism.zero_stage=3"}, 1,
			[]string{"step 4 rank 6 fp32 master"}, "", false},
		{"zero++ qwZ qgZ", []string{"--set", "parallelism.zero_stage=3", "--set", "communication.zero_quantized_weights=true", "--set", "communication.zero_quantized_gradients=true"}, 0,
			[]string{"ZeRO++ drift", "qwZ qgZ(8/node)", "PASS: 1 of 1 configuration bit-exact"}, "", false},
		{"zero++ corrupt", []string{"--corrupt-shard", "3:0", "--set", "parallelism.zero_stage=3", "--set", "communication.zero_quantized_weights=true", "--set", "communication.zero_quantized_gradients=true"}, 1,
			[]string{"step 2 rank 3 fp32 master", "FAIL: 0 of 1"}, "qwZ qgZ(8/node): step 2 rank 3", false},
		{"corrupt bad syntax", []string{"--corrupt-shard", "x"}, 2, nil, `--corrupt-shard "x"`, true},
		{"corrupt rank out of range", []string{"--corrupt-shard", "16:0"}, 2, nil, "--corrupt-shard 16:0: rank 16 is not one of the scenario's ranks 0–15", true},
		{"corrupt index out of range", []string{"--corrupt-shard", "3:17"}, 2, nil, "rank 3's master shard has 17 elements", true},
		// The numerics' own errors (index, padding) name the flag too.
		{"corrupt index names the flag", []string{"--corrupt-shard", "3:17"}, 2, nil, "zerosim: --corrupt-shard 3:17: ", true},
		// Above numerics.MaxSteps the error named "steps 99999", no flag.
		{"corrupt step too large", []string{"--corrupt-shard", "1:1", "--corrupt-step", "99999"}, 2, nil, "--corrupt-step 99999: use 1 to 1000", true},
		// verify --help's example: the default example's 2 nodes made dp=8 fail.
		{"help example dp 8", []string{"--set", "cluster.nodes=1", "--set", "parallelism.dp=8", "default"}, 0, []string{"PASS: 29 of 29 configurations bit-exact"}, "", false},
		{"corrupt padding", []string{"--corrupt-shard", "15:16"}, 2, nil, "padding", true},
		{"corrupt step 0", []string{"--corrupt-shard", "1:1", "--corrupt-step", "0"}, 2, nil, "--corrupt-step 0", true},
		{"corrupt step alone", []string{"--corrupt-step", "3"}, 2, nil, "--corrupt-step needs --corrupt-shard", true},
		{"csv", []string{"--format", "csv"}, 2, nil, "--format csv", true},
		// The hint named parallelism.dp alone, which the cluster's size
		// then refused (dp·cp must be nodes·gpus_per_node): it names both.
		{"N too large", []string{"gpt3-175b-16k"}, 2, nil, "N = dp·cp = 16384 must be in [1, 256] (use a cluster of at most 256 GPUs: --set cluster.nodes=… --set parallelism.dp=auto)", true},
		{"N too large, the hint followed", []string{"gpt3-175b-16k", "--set", "cluster.nodes=2", "--set", "parallelism.dp=auto"}, 0, []string{"N = 16 ranks", "PASS: 36 of 36 configurations bit-exact"}, "", false},
		{"reference", []string{"--reference", filepath.Join(refDir, "adamw-wd.json")}, 0, []string{"PASS: 36 of 36 checks pass"}, "", false},
		{"reference missing", []string{"--reference", "nope.json"}, 2, nil, "--reference", true},
		{"reference with scenario", []string{"--reference", "x.json", "default"}, 2, nil, "--reference checks one file", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runVerifyCLI(t, nil, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errOut)
			}
			for _, s := range tc.stdout {
				if !strings.Contains(out, s) {
					t.Errorf("stdout lacks %q:\n%s", s, out)
				}
			}
			if !strings.Contains(errOut, tc.stderr) {
				t.Errorf("stderr %q lacks %q", errOut, tc.stderr)
			}
			if tc.noStdout && out != "" {
				t.Errorf("stdout not empty on input error:\n%s", out)
			}
		})
	}
}

// TestVerifyJSON decodes --json output (and --format json) into the report
// type and checks the rows and the collective bytes of the first row
// (stage 0, K 1: one world all-reduce of 272 bf16 elements = 2·544 B,
// 1020 B sent per rank = 15/16·1088).
func TestVerifyJSON(t *testing.T) {
	for _, args := range [][]string{{"--json"}, {"--format", "json"}} {
		out, errOut, code := runVerifyCLI(t, nil, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		var rep reports.VerifyReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if !rep.Pass || rep.N != 16 || len(rep.Rows) != 36 {
			t.Fatalf("%v: pass %v N %d rows %d", args, rep.Pass, rep.N, len(rep.Rows))
		}
		const S = 2 * 272 // the 272 bf16 gradient elements, B
		c := rep.Rows[0].Collectives
		if len(c) != 1 || c[0].Op != "all-reduce" || c[0].Group != "world" || c[0].Bytes != 2*S || c[0].PerRank != strconv.Itoa(15*2*S/16) {
			t.Errorf("%v: row 0 collectives %+v", args, c)
		}
	}
}

// TestVerifyReferenceMismatch feeds a bf16-round file with one output
// changed through stdin: exit 1 and the element named.
func TestVerifyReferenceMismatch(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(refDir, "bf16-round.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]any
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	outs := f["output_bf16"].([]any)
	outs[2] = outs[2].(float64) + 1
	bad, _ := json.Marshal(f)
	out, errOut, code := runVerifyCLI(t, bad, "--reference", "-")
	if code != 1 || !strings.Contains(out, "element 2:") || !strings.Contains(errOut, "1 of 1 checks fail") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// TestVerifyNotModelled: verify says in its header and JSON which of the
// scenario's settings it does not follow (QA3 s16 finding 10), with the
// corruption path too; a plain verify says nothing. The header's first
// line after the title is the Adam setting verify ran, and the JSON's
// adam the same (QA15: a --set of weight decay could not be seen to take
// effect).
func TestVerifyNotModelled(t *testing.T) {
	const adam = "# adam: lr 0.001, betas (0.9, 0.999), eps 1e-08, weight decay 0"
	for _, tc := range []struct {
		args  []string
		lines []string // header lines after the first
		keys  []string
		code  int
		wd    float64 // the JSON's adam.weight_decay
	}{
		{nil, []string{adam}, nil, 0, 0},
		{[]string{"--set", "training.lr=3e-4", "--set", "training.optimizer=adamw", "--set", "training.weight_decay=0.1"},
			[]string{"# adamw: lr 0.0003, betas (0.9, 0.999), eps 1e-08, weight decay 0.1 (decoupled)"}, nil, 0, 0.1},
		{[]string{"--set", "training.grad_accum=4", "--set", "training.reduce_dtype=fp32"}, []string{adam,
			"# not modelled here (the pass says nothing about them):",
			"#   training.grad_accum 4: verify runs one micro-step per step",
			"#   training.reduce_dtype fp32: verify runs an exact sum rounded once to bf16",
		}, []string{"training.grad_accum", "training.reduce_dtype"}, 0, 0},
		// QA23 H1: torchtitan's grad_clip norm and foreach kernel, fp8
		// and offload printed a clean PASS with no caveat.
		{[]string{"--set", "training.fp8=te", "--set", "offload.optimizer=cpu"}, []string{adam,
			"# not modelled here (the pass says nothing about them):",
			"#   training.fp8 te: verify runs bf16 GEMMs",
			"#   offload.optimizer cpu: verify runs Adam on the GPU in torch.optim.Adam(foreach=False)'s order",
		}, []string{"training.fp8", "offload.optimizer"}, 0, 0},
		{[]string{"--set", "training.grad_clip=norm", "--set", "training.max_grad_norm=0.5"}, []string{adam,
			"# clipping: global gradient 2-norm at most 0.5 (clip_grad_norm_; each rank's sum of squares over its shard, all-reduced)",
		}, nil, 0, 0},
		{[]string{"--set", "training.micro_batch=4", "--corrupt-shard", "3:5"}, []string{adam,
			"# not modelled here (the pass says nothing about them):",
			"#   training.micro_batch 4: verify runs the toy model's 2 sequences of 4 tokens per rank",
		}, []string{"training.micro_batch"}, 1, 0},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, errOut, code := runVerifyCLI(t, nil, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s", code, tc.code, errOut)
			}
			lines := strings.Split(out, "\n")
			var got []string
			for _, l := range lines[1:] {
				if !strings.HasPrefix(l, "#") {
					break
				}
				got = append(got, l)
			}
			if strings.Join(got, "\n") != strings.Join(tc.lines, "\n") {
				t.Errorf("header lines\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.lines, "\n"))
			}
			js, _, _ := runVerifyCLI(t, nil, append(tc.args, "--json")...)
			var rep reports.VerifyReport
			if err := json.Unmarshal([]byte(js), &rep); err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, u := range rep.NotModelled {
				keys = append(keys, u.Key)
			}
			if strings.Join(keys, ",") != strings.Join(tc.keys, ",") {
				t.Errorf("JSON not_modelled %v, want %v", keys, tc.keys)
			}
			if rep.Adam == nil || rep.Adam.WeightDecay != tc.wd || rep.Adam.Decoupled != (tc.wd != 0) || rep.Adam.Eps != 1e-8 {
				t.Errorf("JSON adam %+v, want weight decay %g", rep.Adam, tc.wd)
			}
		})
	}
}

// TestVerifyDriftNone: --drift where no K from 2 to 4 divides N says so in
// one line instead of a table of K 1 vs K 1 zeros (QA23 L8); the JSON
// says it in drift_none.
func TestVerifyDriftNone(t *testing.T) {
	args := []string{"--drift", "--set", "parallelism.dp=1", "--set", "cluster.nodes=1", "--set", "cluster.gpus_per_node=1"}
	out, errOut, code := runVerifyCLI(t, nil, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	const line = "# native reduction drift: no K from 2 to 4 divides N = 1, so there is no second K to drift from\n"
	if !strings.Contains(out, line) || strings.Contains(out, "between two K") {
		t.Errorf("output\n%s\nwant the line %q and no drift table", out, line)
	}
	js, _, _ := runVerifyCLI(t, nil, append(args, "--json")...)
	var rep reports.VerifyReport
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Drift) != 0 || !strings.HasPrefix(rep.DriftNone, "no K from 2 to 4 divides N = 1") {
		t.Errorf("JSON drift %d rows, drift_none %q", len(rep.Drift), rep.DriftNone)
	}
}
