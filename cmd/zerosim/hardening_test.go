package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestBadInputOneLine holds the input mistakes a hardening pass over the
// CLI found answered wrongly (accepted silently, exit 0 or 1, a message
// naming no flag, the wrong fix): each is now exit 2, nothing on stdout and
// one line on stderr naming the flag or file and what to give. The comment
// of each row says what happened before.
func TestBadInputOneLine(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.csv")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	noLine := filepath.Join(dir, "noline.csv")
	if err := os.WriteFile(noLine, []byte("\x00\x01binary"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The shipped PyTorch 1.13 Adam file relabelled as torch 2.4 (QA15 F1):
	// refused, not failed on 1-ulp lerp_ differences.
	ref, err := os.ReadFile(filepath.Join("..", "..", "numerics", "testdata", "reference", "adam-basic.json"))
	if err != nil {
		t.Fatal(err)
	}
	torch24 := filepath.Join(dir, "adam-torch24.json")
	if err := os.WriteFile(torch24, []byte(strings.Replace(string(ref), "torch 1.13.0a0", "torch 2.4.0", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	jsonOut := filepath.Join(dir, "sweep.jsonl")
	if code, _, errOut := runMain(t, "", "sweep", "seed002-tiny", "--grid", "parallelism.k=1,2", "--format", "json", "--out", jsonOut); code != 0 {
		t.Fatal(errOut)
	}
	long := filepath.Join(dir, strings.Repeat("x", 300))
	notCal := filepath.Join(dir, "notcal.yaml")
	if err := os.WriteFile(notCal, []byte("version: 1\nfoo: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tiny, _ := scenarios.Example("seed002-tiny")
	log := filepath.Join("..", "..", "collectives", "testdata", "nccl-tests", "h100_2node_allreduce_default_xe9680_nccltests309.log") // 16 ranks, no "# Using devices"
	for _, tc := range []struct {
		args    []string
		stdin   string
		mention []string
	}{
		// A value the replay refuses named the package ("zero: …"), not
		// the file.
		{[]string{"run", "--set", "communication.bucket_size=1B"}, "", []string{"zerosim: default.yaml: --set communication.bucket_size=1B: communication.bucket_size 1 B cuts", "use a bucket_size of at least"}},
		{[]string{"run", "seed000-mlp", "--set", "training.mfu=0.4"}, "", []string{"zerosim: seed000-mlp.yaml: training.mfu 0.4 cannot be reached", "use a lower training.mfu"}},
		{[]string{"compare", "default", "--vary", "communication.bucket_size=1B,25MB"}, "", []string{"zerosim: communication.bucket_size=1B: communication.bucket_size 1 B cuts"}},
		{[]string{"calibrate", "--step-time", "1s", "default", "--set", "communication.bucket_size=1B"}, "", []string{"zerosim: communication.bucket_size 1 B cuts"}},
		// Empty values fell back to the flag's default.
		{[]string{"memory", "--units", ""}, "", []string{"--units: empty value", "gib"}},
		{[]string{"compare", "seed000-k4", "--vary", ""}, "", []string{"--vary: empty value", "key.path=v1,v2"}},
		{[]string{"verify", "--reference", ""}, "", []string{"--reference: empty value"}},
		{[]string{"collective", "--group", ""}, "", []string{"--group: empty value", "intra"}},
		// Read the scenario as an nccl-tests log: "no nccl-tests rows".
		{[]string{"calibrate", "--step-time", "", "default"}, "", []string{"--step-time: empty value", "2.84s"}},
		// The second "-" read an empty stdin: "<stdin>: empty file".
		{[]string{"compare", "-", "-"}, string(tiny), []string{`"-" (standard input) is given more than once`}},
		// "collectives: group[1]: rank 99 is not in 0..15", no flag.
		{[]string{"collective", "--group", "0,99"}, "", []string{"--group 0,99: rank 99", "0–15"}},
		{[]string{"collective", "--group", "3,3"}, "", []string{"--group 3,3: rank 3 is listed twice"}},
		// --k was ignored unless --group intra or inter; -1 too.
		{[]string{"collective", "--k", "2"}, "", []string{"--k 2", "--group intra or inter"}},
		{[]string{"collective", "--group", "intra", "--k", "-1"}, "", []string{"--k -1: need at least 1"}},
		// 0 meant "unset" and was replaced by the default.
		{[]string{"collective", "--nics", "per_node", "--nics-per-node", "0"}, "", []string{"--nics-per-node 0: need at least 1"}},
		// Named the default scenario's cluster.nics_per_node, not the flag
		// (FuzzCLI, seed bddeb5cd6c5c1688).
		{[]string{"collective", "--nics-per-node=1"}, "", []string{"--nics-per-node 1: the cluster has one NIC per GPU", "--nics per_node"}},
		{[]string{"collective", "--nics", "per_node", "--nics-per-node", "9"}, "", []string{"--nics-per-node 9: more NICs than the node's 8 GPUs"}},
		{[]string{"collective", "--intra-bw", "0GB/s"}, "", []string{"--intra-bw 0GB/s: a bandwidth must be above 0"}},
		{[]string{"collective", "--inter-bw", "0Gbps"}, "", []string{"--inter-bw 0Gbps: a bandwidth must be above 0"}},
		// Accepted up to 2^20 (and said "need at least 1" above it).
		{[]string{"collective", "--gpus-per-thread", "9"}, "", []string{"--gpus-per-thread 9: use 1 to 8"}},
		// Ignored (the other flag or the log decided the shape).
		{[]string{"calibrate", log, "--nodes", "-1", "--gpus-per-node", "8"}, "", []string{"--nodes -1"}},
		{[]string{"calibrate", log, "--nodes", "2", "--gpus-per-node", "0"}, "", []string{"--gpus-per-node 0"}},
		// Said the log does not tell its shape and to pass the flags given.
		{[]string{"calibrate", log, "--nodes", "3", "--gpus-per-node", "8"}, "", []string{"nccltests309.log:32: the row's busbw/algbw allows at most 16 ranks, not --nodes 3 × --gpus-per-node 8 = 24"}},
		{[]string{"calibrate", log, "--gpus-per-node", "3"}, "", []string{"the log ran 16 ranks, which --gpus-per-node 3 does not divide"}},
		// Ignored: it shapes result.json, which a table run does not print.
		{[]string{"run", "seed002-tiny", "--all-ranks"}, "", []string{"--all-ranks", "--format json or -o DIR"}},
		{[]string{"verify", "--json", "--format", "table"}, "", []string{"--json and --format table"}},
		// "collectives: traffic: value does not fit in 64 bits", no flag.
		{[]string{"collective", "--size", "9223372036854775807B"}, "", []string{"--size 9223372036854775807B", "64 bits", "smaller size"}},
		// Five lines: cobra's "\n\nDid you mean this?\n\trun\n".
		{[]string{"rnu"}, "", []string{`unknown command "rnu" for "zerosim" (did you mean run? see zerosim --help)`}},
		{[]string{"scenarios", "shwo"}, "", []string{`unknown command "shwo" for "zerosim scenarios"`, "see zerosim scenarios --help"}},
		// "open -: no such file or directory" where only files are read.
		{[]string{"calibrate", "-"}, "x", []string{"calibrate LOG -: standard input is not read here"}},
		{[]string{"merge", "-"}, "x", []string{"merge FILE -: standard input"}},
		{[]string{"import", "hf", "-"}, "{}", []string{"import hf -: standard input"}},
		{[]string{"calibrate", "--trace", "-", "default"}, "{}", []string{"--trace -: standard input"}},
		{[]string{"collective", "--calibration", "-"}, "x", []string{"--calibration -: standard input"}},
		// Each created a file or directory named "-".
		{[]string{"run", "seed002-tiny", "--trace", "-"}, "", []string{`--trace -: "-" is not standard output here`}},
		// Written in place over the report (review s16 B F3), or refused as a
		// directory zerosim could not write into (F4).
		{[]string{"run", "seed002-tiny", "--trace", "/dev/stdout"}, "", []string{"--trace /dev/stdout: is standard output, where the report goes"}},
		{[]string{"run", "seed002-tiny", "-o", "-"}, "", []string{`-o -: "-" would be a directory named "-"`}},
		{[]string{"sweep", "seed002-tiny", "--grid", "parallelism.k=1,2", "--out", "-"}, "", []string{"--out -:", "leave --out out"}},
		{[]string{"merge", empty, "--out", "-"}, "", []string{"--out -:"}},
		// pflag's `invalid argument "1.5" for "--top" flag: strconv.ParseInt:
		// parsing "1.5": invalid syntax`.
		{[]string{"plan", "--top", "1.5"}, "", []string{`plan: --top "1.5": want a whole number`, "see zerosim plan --help"}},
		{[]string{"plan", "-j", "x"}, "", []string{`--jobs "x": want a whole number`}},
		{[]string{"compare", "seed002-tiny", "--vary", "parallelism.k=1,2", "-j", "0"}, "", []string{"--jobs 0: use 1 to 1024"}},
		{[]string{"plan", "--tolerance", "1e400"}, "", []string{`--tolerance "1e400": out of range`}},
		{[]string{"run", "--full=maybe"}, "", []string{`--full "maybe": want true or false`}},
		// FuzzCLI: pflag named the rest of a shorthand group after the
		// flags it took, "unknown shorthand flag: '-' in --1", which was
		// not typed.
		{[]string{"-v-1"}, "", []string{`unknown shorthand flag "-" in "-v-1"`, "see zerosim --help"}},
		{[]string{"run", "-hx"}, "", []string{`run: unknown shorthand flag "x" in "-hx"`}},
		{[]string{"plan", "-j"}, "", []string{`plan: -j (--jobs) needs a value (see zerosim plan --help)`}},
		// FuzzCLI: the value was printed as given, a newline in it made
		// two lines; a terminal escape reached the terminal.
		{[]string{"calibrate", "--step-time=a\nb"}, "", []string{`--step-time needs the scenario of the measured run: zerosim calibrate --step-time a\nb scenario.yaml`}},
		{[]string{"calibrate", "--step-time", "\x1b[31m"}, "", []string{`--step-time \x1b[31m scenario.yaml`}},
		// An empty argument ran the default example (run, plan, fit,
		// memory) or named no file: "zerosim:  : cannot read the file"
		// (FuzzCLI: compare "" " ").
		{[]string{"run", ""}, "", []string{`run: argument 1 is empty ("";`, "usage: zerosim run [FILE]"}},
		{[]string{"memory", " "}, "", []string{`memory: argument 1 is empty (" ";`}},
		{[]string{"compare", "seed002-tiny", "\t"}, "", []string{`compare: argument 2 is empty ("\t";`}},
		{[]string{"merge", ""}, "", []string{`merge: argument 1 is empty`}},
		// "numerics: " inside the line (FuzzCLI's package-prefix check):
		// "verify …: numerics: corrupt index 99999: …",
		// "--reference FILE: numerics: reference: invalid character …".
		{[]string{"verify", "--corrupt-shard", "0:99999"}, "", []string{"--corrupt-shard 0:99999: verify tiny-transformer N16 stage 1 K 1 bucket one exact: corrupt index 99999: rank 0's master shard has 17 elements (use an index in 0–16)"}},
		// Said "verify tiny-transformer N16 stage 0 K 1 bucket one exact:
		// steps 100000: must be in [1, 1000]", naming a configuration, not
		// the key, with no fix (QA15).
		{[]string{"verify", "--set", "training.steps=100000"}, "", []string{"training.steps 100000: verify runs 1 to 1000 steps (use --set training.steps=1000)"}},
		{[]string{"verify", "--reference", noLine}, "", []string{"--reference " + noLine + ":1:1: not valid JSON: invalid character"}},
		{[]string{"verify", "--reference", torch24}, "", []string{"--reference " + torch24 + `: reference adam: generator "torch 2.4.0 Adam(foreach=False)": PyTorch 2.4's Adam updates exp_avg with lerp_`, "write the file with torch 1.13 or 2.0"}},
		// Printed "seed002-tiny.yaml: ok (…)" on stdout before the error
		// (FuzzCLI: exit 2 with stdout).
		// Exit 1, "stage 1, K=1: seed002-tiny: sizes overflow int64"
		// (FuzzCLI: exit 1 for an error that is not a failed check).
		{[]string{"fit", "seed002-tiny", "--max-gpus", "9223372036854775807"}, "", []string{"--max-gpus 9223372036854775807: use 1 to 4194304"}},
		// Ran for hours: the search tried every micro-batch up to the
		// rank's 5e11 sequences (FuzzCLI: a hang).
		{[]string{"plan", "seed002-tiny", "--global-batch", "1T"}, "", []string{"--global-batch: global batch 1000000000000 sequences is 500000000000 per data-parallel rank (dp=2): more than 4096 micro-steps (training.grad_accum)"}},
		// yaml.v3's "unmarshal errors:\n  line 2: field foo not found in
		// type scenarios.Calibration": two lines and a Go type.
		{[]string{"collective", "--calibration", notCal}, "", []string{"--calibration " + notCal + ":2:1: unknown key \"foo\" (the top level takes version, hardware, params, curves, compute, memory) (a calibration file is written by zerosim calibrate)"}},
		// The output targets were stat'ed for existence only: a name the
		// file system refuses passed, the run printed its report and
		// failed writing (exit 2 with stdout, FuzzCLI: compare … -o NUL;
		// exit 1 for a name too long).
		{[]string{"compare", "seed000-k4", "--vary", "parallelism.k=1,4", "-o\x00"}, "", []string{`-o \x00: a file name cannot hold a NUL byte`}},
		{[]string{"run", "seed002-tiny", "-o", long}, "", []string{"-o " + long + ": file name too long"}},
		{[]string{"run", "seed002-tiny", "--trace", long}, "", []string{"--trace " + long + ": file name too long"}},
		{[]string{"run", "seed002-tiny", "--trace", "a\x00b"}, "", []string{`--trace a\x00b: a file name cannot hold a NUL byte`}},
		// Suggested "use 9223372036854775806 or -9223372036854775808".
		{[]string{"plan", "seed002-tiny", "--global-batch", "9223372036854775807"}, "", []string{"not a multiple of dp=2 (use 9223372036854775806)"}},
		// "--resume FILE: sweep: the existing output is jsonl, not csv".
		{[]string{"sweep", "seed002-tiny", "--grid", "parallelism.k=1,2", "--out", jsonOut, "--resume"}, "", []string{"--resume " + jsonOut + ": the existing output is jsonl, not csv"}},
		// "drift: numerics: drift K 1: numerics: qwZ/qgZ are ZeRO++, stage
		// 3 with K 1 (got stage 1, K 1)" for a scenario at stage 3.
		{[]string{"verify", "--set", "cluster.nodes=1", "--set", "parallelism.dp=8", "--set", "parallelism.zero_stage=3", "--set", "communication.zero_quantized_gradients=true", "--drift"}, "", []string{"--drift compares K = 1 with K > 1 at stage 1, which ZeRO++", "drop --drift"}},
		// Ignored: --count printed the whole grid's count, wrote no file.
		{[]string{"sweep", "--grid", "parallelism.k=1,2", "--count", "--out", filepath.Join(dir, "count.csv")}, "", []string{"--count", "drop --out"}},
		{[]string{"sweep", "--grid", "parallelism.k=1,2", "--count", "--shard", "1/2"}, "", []string{"--count", "drop --shard"}},
		// "collectives: tree supports allreduce only, not alltoall", no flag.
		{[]string{"collective", "--algo", "alphabeta-tree", "--op", "alltoall"}, "", []string{"--algo alphabeta-tree: tree supports allreduce only, not alltoall"}},
		{[]string{"collective", "--algo", "tree", "--op", "alltoall"}, "", []string{"--algo tree: NCCL's all-to-all is grouped point-to-point sends"}},
		// "--convention: memory: convention …": the package's name.
		{[]string{"fit", "--convention", "x"}, "", []string{`--convention: convention "x": use zerosim, seed000 or seed002`}},
		{[]string{"memory", "--estimator", "x"}, "", []string{`--estimator: estimator "x": use`}},
		// Merged nothing with exit 0.
		// ("sweep: FILE is empty …" named the package, FuzzCLI found.)
		{[]string{"merge", empty}, "", []string{"zerosim: merge: " + empty + " is empty, not a zerosim sweep output"}},
		{[]string{"merge", noLine}, "", []string{"zerosim: merge: " + noLine + " is not a zerosim sweep output"}},
		// "sweep: reading DIR: read DIR: is a directory".
		{[]string{"merge", dir}, "", []string{"merge: " + dir + " is a directory"}},
	} {
		code, out, errOut := runMain(t, tc.stdin, tc.args...)
		oneLine(t, tc.args, code, out, errOut, tc.mention...)
	}
	// Printed "seed002-tiny.yaml: ok (…)" on stdout before the error
	// (FuzzCLI: exit 2 with stdout). validate reports every file: the
	// missing one's line, then how many passed; nothing on stdout.
	code, out, errOut := runMain(t, "", "validate", "seed002-tiny", "missing.yaml")
	want := "zerosim: missing.yaml: cannot read the file: no such file or directory (check the path, or name an embedded example: zerosim scenarios)\n" +
		"zerosim: validate: 1 of 2 files passed, 1 failed (each failed file's first error is above)\n"
	if code != exitInput || out != "" || errOut != want {
		t.Errorf("validate seed002-tiny missing.yaml: exit %d, stdout %q, stderr %q; want exit 2, no stdout, %q", code, out, errOut, want)
	}
	if _, ok := validateReport(errOut); !ok {
		t.Errorf("validate's report %q does not pass FuzzCLI's check (validateReport)", errOut)
	}
}

// collective --gpus-per-node 4 on the default example (8 GPUs and, one per
// GPU, 8 NICs per node) failed with "default: cluster.nics_per_node:
// nics_per_node=8 conflicts with nics: per_gpu", a key the user never
// gave: the NICs follow the new node size. A shared-NIC count given with
// the flag is still checked.
func TestCollectiveReshapeKeepsOneNICPerGPU(t *testing.T) {
	args := []string{"collective", "--nodes", "2", "--gpus-per-node", "4", "--size", "1MiB"}
	code, out, errOut := runMain(t, "", args...)
	if want := "over 8 ranks on 2 nodes × 4 H100-80GB"; code != 0 || !strings.Contains(out, want) || !strings.Contains(out, "nics per_gpu") {
		t.Errorf("%q: exit %d, stderr %q, stdout %q; want %q with nics per_gpu", args, code, errOut, out, want)
	}
	args = []string{"collective", "--gpus-per-node", "4", "--nics", "per_node", "--nics-per-node", "8"}
	code, out, errOut = runMain(t, "", args...)
	oneLine(t, args, code, out, errOut, "--nics-per-node 8: more NICs than the node's 4 GPUs")
}
