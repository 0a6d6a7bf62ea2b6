package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnreadableFileOneLine holds the messages for a file an argument or a
// flag names that cannot be read, or an output that cannot be written: one
// line naming the flag and the path, the reason without Go's "open PATH:"
// and the fix. The comment of each row says what it printed before.
func TestUnreadableFileOneLine(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	afile := filepath.Join(dir, "afile")
	if err := os.WriteFile(afile, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args    []string
		mention []string
	}{
		// "merge: open DIR/missing: no such file or directory".
		{[]string{"merge", missing}, []string{"merge: " + missing + ": cannot read the file: no such file or directory (check the path)"}},
		// "DIR/missing: cannot read: open DIR/missing: no such file or directory".
		{[]string{"calibrate", missing}, []string{"zerosim: " + missing + ": cannot read the file: no such file or directory (check the path)"}},
		// "DIR: cannot read: read DIR: is a directory".
		{[]string{"calibrate", dir}, []string{"zerosim: " + dir + ": cannot read the file: is a directory (give a file, not a directory)"}},
		// "--calibration: open DIR/missing: no such file or directory".
		{[]string{"collective", "--calibration", missing}, []string{"--calibration " + missing + ": cannot read the file: no such file or directory (check the path)"}},
		// "--reference: open DIR/missing: no such file or directory".
		{[]string{"verify", "--reference", missing}, []string{"--reference " + missing + ": cannot read the file: no such file or directory (check the path)"}},
		// "--trace DIR/missing: cannot read: no such file or directory".
		{[]string{"calibrate", "--trace", missing, "seed002-tiny"}, []string{"--trace " + missing + ": cannot read the file: no such file or directory (check the path)"}},
		// "--train-log DIR: cannot read: read DIR: is a directory".
		{[]string{"calibrate", "--train-log", dir, "seed002-tiny"}, []string{"--train-log " + dir + ": cannot read the file: is a directory (give a file, not a directory)"}},
		// "--trace DIR/missing/t.json: directory DIR/missing does not exist".
		{[]string{"run", "seed002-tiny", "--trace", filepath.Join(missing, "t.json")}, []string{"directory " + missing + " does not exist (create it first"}},
		// "--out: open DIR/missing/s.csv: no such file or directory".
		{[]string{"sweep", "seed002-tiny", "--grid", "parallelism.k=1,2", "--out", filepath.Join(missing, "s.csv")}, []string{"--out " + filepath.Join(missing, "s.csv") + ": directory " + missing + " does not exist (create it first"}},
		// "--trace DIR: is a directory", "--file DIR: is a directory".
		{[]string{"run", "seed002-tiny", "--trace", dir}, []string{"--trace " + dir + ": is a directory (name a file, not a directory)"}},
		{[]string{"calibrate", "--step-time", "1s", "seed002-tiny", "--file", dir}, []string{"--file " + dir + ": is a directory (name a file, not a directory)"}},
		// "-o DIR/afile: exists and is not a directory".
		{[]string{"run", "seed002-tiny", "-o", afile}, []string{"-o " + afile + ": exists and is not a directory (name a directory"}},
		// "-o DIR/missing/out": the output directory is created, a
		// missing parent is refused as --trace refuses it (it created
		// DIR/missing and DIR/missing/out, QA33 L2).
		{[]string{"run", "seed002-tiny", "-o", filepath.Join(missing, "out")}, []string{"directory " + missing + " does not exist (create it first"}},
		{[]string{"plan", "seed002-tiny", "-o", filepath.Join(missing, "out")}, []string{"directory " + missing + " does not exist (create it first"}},
	} {
		code, out, errOut := runMain(t, "", tc.args...)
		oneLine(t, tc.args, code, out, errOut, tc.mention...)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("%s was created", missing)
	}
}

// TestCalibrateMeasurementWhy: a measured figure calibrate cannot read says
// why: negative and too large are not "is not a size" (they are sizes),
// and a step time in minutes or hours, which zerosim's durations do not
// take, is converted for the user. Before, every row but the last said
// "is not a duration" or "is not a size".
func TestCalibrateMeasurementWhy(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		mention string
	}{
		{[]string{"--step-time", "-3s"}, `--step-time "-3s" is negative: use the measured time of one optimizer step with its unit, e.g. --step-time 2.84s or 950ms (units: ps, ns, us, ms, s)`},
		{[]string{"--step-time", "99999999999999999s"}, `--step-time "99999999999999999s" is too large (it does not fit in 64 bits)`},
		{[]string{"--step-time", "2m"}, `--step-time "2m": durations are in ps, ns, us, ms or s: write --step-time 120s`},
		{[]string{"--step-time", "1.5min"}, `write --step-time 90s`},
		{[]string{"--step-time", "1h"}, `write --step-time 3600s`},
		{[]string{"--step-time", "2562h"}, `write --step-time 9223200s`},
		// 360000000s would be refused as too large (QA19 L4): no advice
		// that fails when followed.
		{[]string{"--step-time", "100000h"}, `--step-time "100000h": durations are in ps, ns, us, ms or s, and 360000000s is more than the largest, 9223372s: use the measured time of one optimizer step, e.g. --step-time 2.84s`},
		{[]string{"--device", "-83GiB"}, `--device "-83GiB" is negative: use the device memory nvidia-smi showed`},
		{[]string{"--reserved", "9999999999999999999GiB"}, `--reserved "9999999999999999999GiB" is too large (it does not fit in 64 bits)`},
		// Unchanged: not a figure at all.
		{[]string{"--step-time", "xyz"}, `--step-time "xyz" is not a duration: use the measured time of one optimizer step with its unit, e.g. --step-time 2.84s or 950ms (units: ps, ns, us, ms, s)`},
	} {
		args := append(append([]string{"calibrate"}, tc.args...), "seed002-tiny", "--file", filepath.Join(t.TempDir(), "c.yaml"))
		code, out, errOut := runMain(t, "", args...)
		oneLine(t, args, code, out, errOut, tc.mention)
	}
}

// TestIgnoredFlagsRefused: a flag that only acts with another one, or a
// value the command took as "unset", was accepted and changed nothing
// (exit 0); now it is exit 2 naming the flag and what to do.
func TestIgnoredFlagsRefused(t *testing.T) {
	tt := filepath.Join("..", "..", "scenarios", "testdata", "torchtitan", "llama3_8b-e7c0cae.toml")
	for _, tc := range []struct {
		args    []string
		mention string
	}{
		// Ran the plan without the bandwidth search.
		{[]string{"plan", "seed002-tiny", "--tolerance", "5"}, "--tolerance 5 applies to the bandwidth search: add --network, or drop --tolerance"},
		// Printed zerosim's table, as without --detail.
		{[]string{"memory", "seed002-tiny", "--detail"}, "--detail adds every table to the summary of --estimator all (--estimator zerosim prints its table in full): add --estimator all, or drop --detail"},
		{[]string{"memory", "seed002-tiny", "--detail", "--estimator", "deepspeed"}, "(--estimator deepspeed prints its table in full)"},
		// Printed the SET_NODES placeholder, as without --nodes.
		{[]string{"import", "torchtitan", tt, "--nodes", "0"}, "--nodes 0 is out of range (use 1 to 65536)"},
		// Printed 8 GPUs per node, as without the flag.
		{[]string{"import", "torchtitan", tt, "--gpus-per-node", "0"}, "--gpus-per-node 0 is out of range (use 1 to 1024)"},
	} {
		code, out, errOut := runMain(t, "", tc.args...)
		oneLine(t, tc.args, code, out, errOut, tc.mention)
	}
}

// TestCompareVaryNamed: a value of --vary the scenario refuses is named as
// --vary's, before anything runs (it said "--set parallelism.k=x", a flag
// never given), and a second --vary, which replaced the first and ran
// (exit 0), is refused.
func TestCompareVaryNamed(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		mention string
	}{
		{[]string{"compare", "seed002-tiny", "--vary", "parallelism.kk=1,2"}, `zerosim: seed002-tiny.yaml: --vary parallelism.kk=1,2: unknown key "kk" in parallelism (did you mean "k"?)`},
		{[]string{"compare", "seed002-tiny", "--vary", "parallelism.k=1,x"}, `zerosim: seed002-tiny.yaml: --vary parallelism.k=1,x: k: "x" is not an integer (use a whole number)`},
		{[]string{"compare", "seed002-tiny", "--vary", "parallelism.zero_stage=1,7"}, `zerosim: seed002-tiny.yaml: --vary parallelism.zero_stage=1,7: zero_stage=7 is out of range (use 0, 1, 2 or 3)`},
		{[]string{"compare", "seed002-tiny", "--vary", "parallelism.k=1,2", "--vary", "parallelism.zero_stage=1,2"}, "--vary given 2 times (parallelism.k=1,2, parallelism.zero_stage=1,2): compare varies one key; fix the others with --set, or replay a grid with zerosim sweep --grid"},
		// Unchanged: a --set of the user's is still named as --set.
		{[]string{"compare", "seed002-tiny", "--vary", "parallelism.k=1,2", "--set", "parallelism.zero_stage=7"}, "--set parallelism.zero_stage=7: zero_stage=7 is out of range"},
	} {
		code, out, errOut := runMain(t, "", tc.args...)
		oneLine(t, tc.args, code, out, errOut, tc.mention)
	}
}

// TestCollectiveFlagsNamed: collective's cluster flags are checked as
// flags; before, a bad value reached the default example's scenario check,
// which named its key ("default: cluster.nics: nics \"per-gpu\" is
// unknown", "default: cluster.nodes: nodes=100000 is out of range") or
// gave no bound ("--nodes 2 × --gpus-per-node 2000 is too large").
func TestCollectiveFlagsNamed(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		mention string
	}{
		{[]string{"collective", "--nics", "per-gpu"}, `zerosim: --nics "per-gpu": use per_gpu (one NIC per GPU) or per_node (NICs shared by a node's GPUs)`},
		{[]string{"collective", "--nodes", "100000"}, "zerosim: --nodes 100000: use 1 to 65536"},
		{[]string{"collective", "--gpus-per-node", "2000"}, "zerosim: --gpus-per-node 2000: use 1 to 1024"},
		{[]string{"collective", "--nodes", "65536", "--gpus-per-node", "1024"}, "zerosim: --nodes 65536 × --gpus-per-node 1024 = 67108864 GPUs is too many (use at most 4194304 GPUs)"},
	} {
		code, out, errOut := runMain(t, "", tc.args...)
		oneLine(t, tc.args, code, out, errOut, tc.mention)
	}
}

// TestScenariosShowSuggests: "scenarios show defualt" listed all nine
// examples; it names the one meant.
func TestScenariosShowSuggests(t *testing.T) {
	for _, tc := range []struct{ arg, mention string }{
		{"defualt", `unknown scenario "defualt" (did you mean default?)`},
		{"seed002", `unknown scenario "seed002" (did you mean seed002-7b or seed002-tiny?)`},
		{"xyz", `unknown scenario "xyz" (use default, `},
	} {
		args := []string{"scenarios", "show", tc.arg}
		code, out, errOut := runMain(t, "", args...)
		oneLine(t, args, code, out, errOut, tc.mention)
	}
}

// TestVerifyReferenceJSON: verify --reference of a file that is not JSON
// is reported at its line and column with the fix; before, "--reference
// F: reference: unexpected EOF", "…: reference: EOF" and, for JSON of
// another kind, "format \"\": want \"zerosim-reference/v1\"" with no
// pointer to such a file.
func TestVerifyReferenceJSON(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cut := write("cut.json", "{\n  \"format\": \"zerosim-reference/v1\",\n  \"kind\": \"ad")
	comma := write("comma.json", "{\"format\": \"zerosim-reference/v1\",}")
	empty := write("empty.json", "\n")
	other := write("other.json", `{"train_batch_size": 8}`)
	const give = "give a zerosim-reference/v1 file, such as numerics/testdata/reference/adam-basic.json"
	for _, tc := range []struct {
		args    []string
		stdin   string
		mention string
	}{
		{[]string{"verify", "--reference", cut}, "", "--reference " + cut + ":3:14: not valid JSON: the file ends inside a value"},
		{[]string{"verify", "--reference", comma}, "", "--reference " + comma + ":1:34: not valid JSON: a comma before '}'"},
		{[]string{"verify", "--reference", empty}, "", "--reference " + empty + ": empty file (" + give + ")"},
		{[]string{"verify", "--reference", other}, "", `--reference ` + other + `: reference: format "": want "zerosim-reference/v1" (` + give + `)`},
		{[]string{"verify", "--reference", "-"}, "{", "--reference <stdin>:1:2: not valid JSON: the file ends inside a value"},
	} {
		code, out, errOut := runMain(t, tc.stdin, tc.args...)
		oneLine(t, tc.args, code, out, errOut, tc.mention)
	}
}

// TestFLOPsOverflowNamesKeys: a micro-batch within its range whose FLOPs
// overflow int64 said "FLOPs per micro-step overflow: value does not fit
// in 64 bits", naming nothing to change.
func TestFLOPsOverflowNamesKeys(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		mention string
	}{
		{[]string{"run", "--set", "training.micro_batch=1048576"}, "zerosim: default.yaml: --set training.micro_batch=1048576: micro_batch 1048576 × seq_len 4096: FLOPs per micro-step overflow: value does not fit in 64 bits (the step's FLOPs or bytes do not fit in int64 at this size: lower training.micro_batch or model.seq_len, or raise parallelism.cp)"},
		{[]string{"run", "--set", "training.micro_batch=524288", "--set", "model.seq_len=1048576"}, "zerosim: default.yaml: --set training.micro_batch=524288: micro_batch 524288 × seq_len 1048576: block matmul FLOPs overflow: value does not fit in 64 bits (the step's FLOPs or bytes do not fit in int64 at this size: lower training.micro_batch or model.seq_len, or raise parallelism.cp)"},
	} {
		code, out, errOut := runMain(t, "", tc.args...)
		oneLine(t, tc.args, code, out, errOut, tc.mention)
	}
}

// TestPlanScenarioErrorStartsWithFile: plan's scenario errors start with
// FILE:LINE:COL as every other command's do; before, "plan: s.yaml:3:3: …",
// which an editor's error parser does not read as a position.
func TestPlanScenarioErrorStartsWithFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(bad, []byte("version: 1\ncluster:\n  nodez: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args    []string
		mention string
	}{
		{[]string{"plan", bad}, "zerosim: " + bad + `:3:3: unknown key "nodez" in cluster (did you mean "nodes"?)`},
		{[]string{"plan", "seed002-tiny", "--set", "parallelism.k=3"}, "zerosim: seed002-tiny.yaml: --set parallelism.k=3: k=3 does not divide"},
	} {
		code, out, errOut := runMain(t, "", tc.args...)
		oneLine(t, tc.args, code, out, errOut, tc.mention)
	}
}

// TestAllocatorFitTooLargeSaysWhy: a measured peak thousands of times what
// the scenario allocates (the log of another run) said "the measured peak
// is 2.051e+07 times what the model allocates" and stopped; it says what
// to check. 70 GiB: below the A100-80GB's usable 79.18 GiB, above which
// calibrate refuses the figure as not measured on that GPU.
func TestAllocatorFitTooLargeSaysWhy(t *testing.T) {
	args := []string{"calibrate", "--reserved", "70GiB", "seed002-tiny", "--file", filepath.Join(t.TempDir(), "c.yaml")}
	code, out, errOut := runMain(t, "", args...)
	oneLine(t, args, code, out, errOut, "times what the model allocates (check that the measurement is of this scenario's run: its model, micro_batch and recompute)")
}

// TestPercentFlag: "--tolerance 5%" said only "want a number".
func TestPercentFlag(t *testing.T) {
	args := []string{"plan", "seed002-tiny", "--network", "--tolerance", "5%"}
	code, out, errOut := runMain(t, "", args...)
	oneLine(t, args, code, out, errOut, `--tolerance "5%": want a number (the flag is in percent: --tolerance 5)`)
}

// TestHelpAndCompletionGroups: cobra's own commands, added only when it
// executes, escaped the checks the others have: "help nope" printed
// "Unknown help topic" and the usage with exit 0, "completion tcsh" the
// group's help with exit 0.
func TestHelpAndCompletionGroups(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		mention string
	}{
		{[]string{"help", "nope"}, `zerosim: help: no command "nope" (see zerosim --help)`},
		{[]string{"help", "import", "nope"}, `help: no command "import nope"`},
		{[]string{"completion", "tcsh"}, `zerosim: completion: unknown command "tcsh" (use bash, fish, powershell, zsh; see zerosim completion --help)`},
		{[]string{"completion"}, "completion: name one of its commands: bash, fish, powershell, zsh"},
	} {
		code, out, errOut := runMain(t, "", tc.args...)
		oneLine(t, tc.args, code, out, errOut, tc.mention)
	}
	for _, args := range [][]string{{"help", "run"}, {"help", "import", "hf"}, {"completion", "bash"}} {
		if code, out, errOut := runMain(t, "", args...); code != 0 || out == "" {
			t.Errorf("%q: exit %d, %d bytes, stderr %q; want its help or script", args, code, len(out), errOut)
		}
	}
}

// TestCalibrationWithoutNetworkParts: collective --calibration of a file
// with only a memory part said "(only compute)".
func TestCalibrationWithoutNetworkParts(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ body, mention string }{
		{"version: 1\nmemory:\n  allocator_overhead: 0.4\n  method: reserved\n  measured_bytes: 82400000000\n", "the file has no network part (only memory)"},
		{"version: 1\ncompute:\n  compute_efficiency: 0.5\n  method: step-time\n  measured_ms: 100\n", "the file has no network part (only compute)"},
	} {
		p := filepath.Join(dir, "c.yaml")
		if err := os.WriteFile(p, []byte(tc.body), 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"collective", "--calibration", p}
		code, out, errOut := runMain(t, "", args...)
		oneLine(t, args, code, out, errOut, tc.mention)
	}
}

// TestSweepValueTypeChecked: a --grid or --set value that cannot be of its
// key's type wrote an error row for every point with it and exited 0; it
// stops the sweep before the first row. A value of the right type that
// the scenario refuses at a point is still that point's error row.
func TestSweepValueTypeChecked(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		mention string
	}{
		{[]string{"sweep", "seed002-tiny", "--grid", "parallelism.k=1,x"}, `zerosim: --grid parallelism.k=1,x: k: "x" is not an integer (use a whole number)`},
		{[]string{"sweep", "seed002-tiny", "--grid", "communication.bucket_size=25,100MB"}, `--grid communication.bucket_size=25,100MB: bucket_size: 25 what? use 25MB or 25MiB`},
		{[]string{"sweep", "seed002-tiny", "--grid", "communication.overlap=true,maybe", "--count"}, `--grid communication.overlap=true,maybe: overlap: "maybe" is not a boolean`},
		{[]string{"sweep", "seed002-tiny", "--grid", "parallelism.k=1,2", "--set", "training.micro_batch=x"}, `zerosim: --set training.micro_batch=x: micro_batch: "x" is not an integer`},
	} {
		code, out, errOut := runMain(t, "", tc.args...)
		oneLine(t, tc.args, code, out, errOut, tc.mention)
	}
}

// TestSweepValueRangeChecked: a --grid value out of its key's own range or
// names, whatever the other keys hold, wrote a column of error rows with
// exit 0; it stops the sweep before any point, naming the flag and the
// value, with no --out file left. A value that only does not fit the rest
// of its point (k=3 with dp 2, dp 1 on 2 GPUs, a rank the cluster does not
// have) is still that point's error row.
func TestSweepValueRangeChecked(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		grid, mention string
	}{
		{"parallelism.zero_stage=1,7", "zerosim: --grid parallelism.zero_stage=1,7: zero_stage=7 is out of range (use 0, 1, 2 or 3)"},
		{"training.micro_batch=0,2", "zerosim: --grid training.micro_batch=0,2: micro_batch=0 is out of range (use 1 to 1048576)"},
		{"communication.algorithm=ring,foo", `zerosim: --grid communication.algorithm=ring,foo: algorithm "foo" is unknown (use ring, hierarchical, tree, nvls, nvlstree or auto)`},
		{"training.compute_efficiency=0.5,1.5", "zerosim: --grid training.compute_efficiency=0.5,1.5: compute_efficiency=1.5 is out of range (use a fraction in [0.0001, 1] such as 0.8)"},
		{"cluster.gpu_overrides=[{rank: 0, speed: 0}]", "zerosim: --grid cluster.gpu_overrides=[{rank: 0, speed: 0}]: speed=0 is out of range (use a factor from 0.000001 to 1000, e.g. 0.8 for 20% slower)"},
	} {
		outFile := filepath.Join(dir, "s.csv")
		args := []string{"sweep", "seed002-tiny", "--grid", tc.grid, "--out", outFile}
		code, out, errOut := runMain(t, "", args...)
		oneLine(t, args, code, out, errOut, tc.mention)
		if _, err := os.Stat(outFile); err == nil {
			t.Errorf("%q: left %s", args, outFile)
		}
	}
	for _, tc := range []struct {
		grid, row string
	}{
		{"parallelism.k=1,3", "k=3 does not divide dp·cp=2"},
		{"parallelism.dp=1,2", "dp·cp=1 does not equal nodes·gpus_per_node=2"},
		{"cluster.gpu_overrides=[{rank: 5, speed: 1}]", "rank=5 is out of range (ranks are 0 to 1)"},
	} {
		code, out, errOut := runMain(t, "", "sweep", "seed002-tiny", "--grid", tc.grid)
		if code != 0 || !strings.Contains(out, tc.row) {
			t.Errorf("--grid %s: exit %d, stderr %q, stdout %q; want an error row %q", tc.grid, code, errOut, out, tc.row)
		}
	}
}

// TestTrainLogEmpty: an empty --train-log (a pipe that gave nothing)
// said "no training step found: want torchtitan's metrics lines …", 800
// characters about log formats, for no input at all.
func TestTrainLogEmpty(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "train.log")
	if err := os.WriteFile(empty, []byte("\n \n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args    []string
		mention string
	}{
		{[]string{"calibrate", "--train-log", "-", "seed002-tiny"}, "--train-log <stdin>: empty (give the training log of the measured run)"},
		{[]string{"calibrate", "--train-log", empty, "seed002-tiny"}, "--train-log " + empty + ": empty (give the training log of the measured run)"},
	} {
		code, out, errOut := runMain(t, "", tc.args...)
		oneLine(t, tc.args, code, out, errOut, tc.mention)
	}
}

// TestAllToAllTooLarge: an all-to-all is lowered pair by pair, so one over
// more than collectives.MaxAllToAllRanks ranks is refused in one line that
// names the flag or key and the fix; before, `collective --op alltoall`
// over 1,024 nodes of 8 ran out of memory after 16.7 s (a Go runtime
// crash), and qgZ over 4,096 nodes took the same path.
func TestAllToAllTooLarge(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		mention []string
	}{
		{[]string{"collective", "--nodes", "1024", "--gpus-per-node", "8", "--op", "alltoall"},
			[]string{"--op alltoall over 8192 ranks", "at most 2048 ranks", "use fewer --nodes or --gpus-per-node"}},
		{[]string{"collective", "--nodes", "2049", "--gpus-per-node", "1", "--op", "alltoall"}, []string{"--op alltoall over 2049 ranks"}},
		{[]string{"run", "gpt3-175b-16k", "--set", "cluster.nodes=4096", "--set", "parallelism.dp=32768", "--set", "communication.zero_quantized_gradients=true"},
			[]string{"communication.zero_quantized_gradients", "one rank per node, 4096 here", "use at most 2048 nodes, or drop qgZ"}},
		{[]string{"validate", "gpt3-175b-16k", "--set", "cluster.nodes=4096", "--set", "parallelism.dp=32768", "--set", "communication.zero_quantized_gradients=true"},
			[]string{"one rank per node, 4096 here"}},
	} {
		code, out, errOut := runMain(t, "", tc.args...)
		oneLine(t, tc.args, code, out, errOut, tc.mention...)
	}
}

// TestConventionNeedsZerosimsModel: --convention counts zerosim's model as
// a seed's tables do; with --estimator deepspeed or megatron alone it was
// silently ignored (QA s15b finding 17), now refused in one line.
func TestConventionNeedsZerosimsModel(t *testing.T) {
	for _, est := range []string{"deepspeed", "megatron"} {
		args := []string{"memory", "--estimator", est, "--convention", "seed000"}
		code, out, errOut := runMain(t, "", args...)
		oneLine(t, args, code, out, errOut, "--convention seed000", "--estimator "+est, "add --estimator all (or zerosim), or drop --convention")
	}
	if code, _, errOut := runMain(t, "", "memory", "--estimator", "all", "--convention", "seed000"); code != 0 {
		t.Errorf("--estimator all --convention seed000: exit %d: %s", code, errOut)
	}
}
