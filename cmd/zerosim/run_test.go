package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/internal/byhand"
	"github.com/zerosim/zerosim/reports"
	"github.com/zerosim/zerosim/scenarios"
)

// fileWriter returns write(name, text), which writes text to dir/name
// and returns its path, failing t when it cannot.
func fileWriter(t *testing.T, dir string) func(name, text string) string {
	t.Helper()
	return func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
}

func runMain(t testing.TB, stdin string, args ...string) (code int, out, errOut string) {
	t.Helper()
	var o, e bytes.Buffer
	code = Main(args, strings.NewReader(stdin), &o, &e)
	return code, o.String(), e.String()
}

// TestRunDefault runs the default example and checks the report's sections
// and the figures the scenario fixes (Llama 2 7B, N=16, ZeRO-1): the step,
// critical path and reserve as the replay gives them (the README's console
// block holds them as real output, TestREADMEExamples; zero's
// TestDefaultComputeByHand works the compute by hand, memory's
// TestDefaultMemoryByHand the reserve), the peak worked by hand
// (byhand.DefaultPeak), and the throughput and MFU worked from the step by
// hand.
func TestRunDefault(t *testing.T) {
	code, out, errOut := runMain(t, "", "run")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	r := replayDefault(t)
	// 65,536 tokens a step (micro-batch 1 × dp 16 × s 4,096) over 16 GPUs;
	// model FLOPs a token 6·N' + 12·L·H·Q·s, N' without the untied input
	// embedding (V·h): Llama 2 7B has P = 6,738,415,616, V 32,000, h 4,096,
	// L 32, H 32 heads of Q 128; H100's dense bf16 peak 989 TFLOPS.
	const (
		P, V, h, L, H, Q, seq = 6738415616, 32000, 4096, 32, 32, 128, 4096
		flopsPerToken         = 6*(P-V*h) + 12*L*H*Q*seq // 46,086,512,640
	)
	tps := 65536.0 / 16 / r.StepTime.Seconds()
	mfu := tps * flopsPerToken / 989e12
	for _, want := range []string{
		"# zerosim run: default",
		"llama2-7b, 6,738,415,616 params",
		"symmetric fast path: yes",
		"# step time " + r.StepTime.String(),
		"tokens/s per GPU:    " + reports.Commas(int64(math.Round(tps))) + " at the default 0.8 (65,536 tokens per step",
		fmt.Sprintf("utilization:         MFU %.1f %%", 100*mfu),
		"logical/rank",
		"backward reduce-scatter",
		"# default: ZeRO stage 1, N=16 K=1",
		fmt.Sprintf("replay peak on rank 0: %.2f GiB (%s B)", float64(byhand.DefaultPeak())/(1<<30), reports.Commas(byhand.DefaultPeak())),
		fmt.Sprintf("busiest rank as a profiler sees it: reserved %.2f GiB", float64(r.MemoryModel.Reserved)/(1<<30)),
		"# the 8 longest of the " + reports.Commas(int64(len(r.CriticalPath))) + " tasks on the critical path",
		"# findings",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

// TestRunJSONStdin reads the scenario from stdin and prints result.json;
// --set applies.
func TestRunJSONStdin(t *testing.T) {
	data, _ := scenarios.Example("seed002-tiny")
	code, out, errOut := runMain(t, string(data), "run", "-", "--format", "json", "--set", "parallelism.zero_stage=2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var j struct {
		Stage  int `json:"stage"`
		Totals struct {
			Logical int64 `json:"logical_bytes_per_rank"`
		} `json:"totals"`
	}
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// ZeRO-2 of seed 002's 260 params: reduce-scatter S + all-gather S,
	// S = 520 B (bf16).
	if j.Stage != 2 || j.Totals.Logical != 1040 {
		t.Errorf("stage %d, logical %d; want 2, 1040", j.Stage, j.Totals.Logical)
	}
}

// TestRunOutputDir writes every file into an existing directory and leaves
// the user's other files alone.
func TestRunOutputDir(t *testing.T) {
	dir := t.TempDir()
	mine := filepath.Join(dir, "keep.txt")
	if err := os.WriteFile(mine, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(t.TempDir(), "step.json")
	code, out, errOut := runMain(t, "", "run", "seed002-tiny", "-o", dir, "--trace", trace)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "# zerosim run: seed002-tiny") {
		t.Errorf("no terminal report with -o")
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	want := []string{"comm.png", "comm.svg", "keep.txt", "manifest.json", "memory_stages.png", "memory_stages.svg", "memory_timeline.png",
		"memory_timeline.svg", "report.html", "result.json", "timeline.png", "timeline.svg", "trace.json"}
	if !slices.Equal(names, want) {
		t.Errorf("files %v\nwant %v", names, want)
	}
	if err := reports.CheckManifest(dir); err != nil {
		t.Errorf("manifest: %v", err)
	}
	if b, _ := os.ReadFile(mine); string(b) != "keep" {
		t.Errorf("keep.txt changed: %q", b)
	}
	a, _ := os.ReadFile(trace)
	b, _ := os.ReadFile(filepath.Join(dir, "trace.json"))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("--trace and -o trace.json differ (%d, %d bytes)", len(a), len(b))
	}
}

// TestRunInputErrors: bad input exits 2 with one line and creates no file.
func TestRunInputErrors(t *testing.T) {
	base := t.TempDir()
	notDir := filepath.Join(base, "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		msg  string
	}{
		{"missing file", []string{"run", filepath.Join(base, "nope.yaml")}, "nope.yaml"},
		{"bad --set", []string{"run", "--set", "parallelism.k=3"}, "k"},
		{"bad format", []string{"run", "--format", "csv"}, "--format"},
		{"bad rank", []string{"run", "--rank", "99"}, "--rank 99"},
		{"-o is a file", []string{"run", "-o", notDir}, "not a directory"},
		{"trace dir missing", []string{"run", "--trace", filepath.Join(base, "no", "t.json")}, "--trace"},
	} {
		out := filepath.Join(base, strings.ReplaceAll(tc.name, " ", "_"))
		args := tc.args
		if tc.name != "-o is a file" {
			args = append(slices.Clone(args), "-o", out)
		}
		code, stdout, errOut := runMain(t, "", args...)
		if code != exitInput {
			t.Errorf("%s: exit %d, want 2 (%s)", tc.name, code, errOut)
		}
		if strings.Count(strings.TrimSpace(errOut), "\n") != 0 || !strings.Contains(errOut, tc.msg) {
			t.Errorf("%s: stderr %q, want one line with %q", tc.name, errOut, tc.msg)
		}
		if stdout != "" {
			t.Errorf("%s: stdout %q", tc.name, stdout)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: created %s", tc.name, out)
		}
	}
	ents, _ := os.ReadDir(base)
	if len(ents) != 1 {
		t.Errorf("the failed runs left files in %s: %d entries", base, len(ents))
	}
}

// TestRunOnlyPlots writes only the plot images (how docs/images is made).
func TestRunOnlyPlots(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new")
	code, _, errOut := runMain(t, "", "run", "seed002-tiny", "-o", dir, "--only", "plots")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 9 {
		t.Errorf("%d files, want 8 plot files and the manifest", len(ents))
	}
	for _, e := range ents {
		if ext := filepath.Ext(e.Name()); ext != ".png" && ext != ".svg" && e.Name() != reports.ManifestName {
			t.Errorf("unexpected file %s", e.Name())
		}
	}
	if code, _, errOut := runMain(t, "", "run", "--only", "pdf", "-o", dir); code != exitInput || !strings.Contains(errOut, "--only") {
		t.Errorf("--only pdf: exit %d %q", code, errOut)
	}
}

// TestRunVariants runs the default example under settings that change the
// schedule's shape and checks each report names the phases it must have.
func TestRunVariants(t *testing.T) {
	for _, tc := range []struct {
		name string
		sets []string
		want []string
	}{
		{"N=1", []string{"cluster.nodes=1", "cluster.gpus_per_node=1", "parallelism.dp=1"}, []string{"N (dp·cp):           1", "no communication: one rank has nothing to reduce or gather (N = 1)"}},
		{"no overlap", []string{"communication.overlap=false"}, []string{"overlap:             no", "backward reduce-scatter"}},
		{"stage 0", []string{"parallelism.zero_stage=0"}, []string{"backward all-reduce"}},
		{"stage 3 no prefetch", []string{"parallelism.zero_stage=3", "communication.prefetch_depth=0"}, []string{"forward all-gather", "backward all-gather", "ZeRO-3 exposes"}},
		{"K=2 hierarchical", []string{"parallelism.zero_stage=2", "parallelism.k=2", "communication.algorithm=hierarchical"}, []string{"inter-group all-reduce", "algorithm:           hierarchical"}},
		{"overlapped param gather", []string{"communication.overlap_param_gather=true"}, []string{"post-optimizer all-gather"}},
	} {
		args := []string{"run"}
		for _, s := range tc.sets {
			args = append(args, "--set", s)
		}
		code, out, errOut := runMain(t, "", args...)
		if code != 0 {
			t.Errorf("%s: exit %d: %s", tc.name, code, errOut)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %q", tc.name, w)
			}
		}
	}
}

// TestOutputFlagsRefused: -o on a command that writes no files and --rank out
// of range are input errors (exit 2), not silently ignored.
func TestOutputFlagsRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"validate", "-", "-o", dir}, "zerosim validate writes no files"},
		{[]string{"memory", "-o", dir}, "zerosim memory writes no files"},
		{[]string{"sweep", "seed002-tiny", "--grid", "parallelism.k=1", "-o", dir}, "zerosim sweep writes no files"},
		{[]string{"memory", "--rank", "16"}, "--rank 16: the scenario has ranks 0–15"},
		// fit's table is all memory: "fit prints no memory table" was false.
		{[]string{"fit", "--units", "gb"}, "--units gb: zerosim fit does not take --units (only run's and memory's tables switch to GB; JSON and CSV give exact bytes)"},
		{[]string{"collective", "--units", "gb"}, "--units gb: zerosim collective does not take --units (only run's and memory's tables switch to GB"},
	} {
		def, _ := scenarios.Example("default")
		code, out, errOut := runMain(t, string(def), tc.args...)
		if code != exitInput || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and %q", tc.args, code, out, errOut, tc.want)
		}
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("created %s", dir)
	}
}

// TestTerminalEscapesScenarioStrings: a scenario name and layer name holding
// terminal escape sequences and line breaks reach the report escaped.
func TestTerminalEscapesScenarioStrings(t *testing.T) {
	tiny, _ := scenarios.Example("seed002-tiny")
	code, out, errOut := runMain(t, string(tiny), "run", "-", "--set", `name="evil\e[2J\nforged line"`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Contains(out, "\x1b") || strings.Contains(out, "\nforged line") {
		t.Errorf("raw control characters in the report:\n%s", out)
	}
	if !strings.Contains(out, `# zerosim run: evil\x1b[2J\nforged line`) {
		t.Errorf("escaped name missing:\n%s", out)
	}
}

// TestLoadWarningsEveryCommand: every command that reads a scenario prints
// its load warnings, not only run, memory, validate, collective and
// calibrate. "gpu_memory 40GB" on an A100-40GB is 37.25 GiB, a warning
// whose whole point is that the fit verdict flips: fit and plan, which
// answer "does it fit", dropped it, as did compare and sweep (they load
// the file once per point or variant and kept the warnings of none).
func TestLoadWarningsEveryCommand(t *testing.T) {
	sets := []string{"--set", "cluster.gpu=A100-40GB", "--set", "cluster.gpu_memory=40GB"}
	const want = "zerosim: warning: default.yaml: --set cluster.gpu_memory=40GB: gpu_memory 40GB is 37.25 GiB, but A100-40GB has 40.00 GiB (40GiB"
	for _, args := range [][]string{
		{"run", "default"},
		{"memory", "default"},
		{"fit", "default", "--format", "csv"},
		{"plan", "default", "--stages", "3", "--recompute", "full", "--prefetch", "1", "--algorithms", "ring"},
		{"compare", "default", "--vary", "parallelism.k=1,2"},
		{"sweep", "default", "--grid", "parallelism.k=1,2"},
	} {
		_, errOut, code := runCLI(append(args, sets...)...)
		if code != 0 {
			t.Errorf("%v: exit %d: %s", args, code, errOut)
			continue
		}
		if n := strings.Count(errOut, want); n != 1 {
			t.Errorf("%v: the gpu_memory warning %d times on stderr, want once:\n%s", args, n, errOut)
		}
	}
}

// TestRunWroteFiles: -o's last line counts the files in the right number
// and names the manifest it also wrote (QA3 s16 finding 11g: "--only html"
// said "wrote 1 files into oh" beside manifest.json).
func TestRunWroteFiles(t *testing.T) {
	for _, tc := range []struct {
		only string
		want string
	}{
		{"html", "zerosim: wrote 1 file and manifest.json into "},
		{"html,json", "zerosim: wrote 2 files and manifest.json into "},
	} {
		dir := filepath.Join(t.TempDir(), "o")
		code, _, errOut := runMain(t, "", "run", "seed002-tiny", "-o", dir, "--only", tc.only)
		if code != 0 {
			t.Fatalf("--only %s: exit %d: %s", tc.only, code, errOut)
		}
		if !strings.Contains(errOut, tc.want+dir+"\n") {
			t.Errorf("--only %s: stderr %q, want %q", tc.only, errOut, tc.want+dir)
		}
		ents, _ := os.ReadDir(dir)
		if want := strings.Count(tc.only, ",") + 2; len(ents) != want {
			t.Errorf("--only %s: %d files in %s, want %d", tc.only, len(ents), dir, want)
		}
	}
}

// QA4 s16 F8: the run report's findings never tied the step to the
// degraded link (node 1 gpu 7's NIC at 1 GB/s: 3.66 s, "the slow network
// carries 11.1 %"). A finding now weighs the step against the same
// scenario without cluster.link_overrides, replayed: here the default
// example's own step, as the README's run block shows it, and a link no
// collective crosses (an inter link on one node, the same step with and
// without) costs nothing. Both steps, the share of the step the link adds
// and their ratio are worked from replays of the scenarios as the file and
// --set give them.
func TestRunLinkFinding(t *testing.T) {
	for _, tc := range []struct {
		name string
		sets []string
		want string // %v: the step, the step without the overrides, their difference; the difference's share of the step, their ratio
	}{
		{"node 1 gpu 7's nic at 1 GB/s", []string{"cluster.link_overrides=[{node: 1, gpu: 7, class: inter, bandwidth: 1GB/s}]"},
			"- The degraded inter link at node 1 gpu 7 (1.00 GB/s instead of 50.00 GB/s) adds %[3]v to the step (%[4]s %% of it): %[1]v against %[2]v without cluster.link_overrides (%[5]s×), through the collectives crossing it.\n"},
		{"one node's inter link", []string{"cluster.nodes=1", "parallelism.dp=8", "cluster.link_overrides=[{node: 0, class: inter, bandwidth: 1GB/s}]"},
			"- The degraded inter link at node 0 (1.00 GB/s instead of 50.00 GB/s) costs nothing here: the step is %[2]v without cluster.link_overrides too.\n"},
		{"no override", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"run", "default"}
			for _, s := range tc.sets {
				args = append(args, "--set", s)
			}
			out, errOut, code := runCLI(args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			step := replayDefault(t, tc.sets...).StepTime
			var free []string
			for _, s := range tc.sets {
				if !strings.HasPrefix(s, "cluster.link_overrides=") {
					free = append(free, s)
				}
			}
			without := replayDefault(t, free...).StepTime
			if tc.want == "" {
				if strings.Contains(out, "link_overrides") {
					t.Errorf("a finding on link overrides without any:\n%s", out)
				}
				return
			}
			if readme := readmeStep(t); len(tc.sets) == 1 && without.String() != readme {
				t.Fatalf("the default example's step %v, the README's %s", without, readme)
			}
			share, ratio := fmt.Sprintf("%.1f", 100*float64(step-without)/float64(step)), fmt.Sprintf("%.2f", float64(step)/float64(without))
			if want := fmt.Sprintf(tc.want, step, without, step-without, share, ratio); !strings.Contains(out, want) {
				t.Errorf("findings lack %q:\n%s", want, out)
			}
		})
	}
}

// readmeStep is the step of the README's `zerosim run` console block (the
// default example; TestREADMEExamples holds the block as real output).
func readmeStep(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok1 := strings.Cut(string(data), "\n$ zerosim run\n")
	_, rest, ok2 := strings.Cut(block, "\nstep time:")
	step, _, _ := strings.Cut(strings.TrimSpace(rest), " ")
	if !ok1 || !ok2 || step == "" {
		t.Fatal("README.md has no \"$ zerosim run\" block with a \"step time:\" line")
	}
	return step
}

// A ZeRO-3 step whose bucket size stages 0–2 cannot lay out (30 KB cuts
// the default model's 6,738,415,616-parameter group into 449,228 buckets
// of 15,000 bf16 elements, more than 262,144) validates and replays, as
// stage 3 lays out a bucket per unit: run reports it, its memory plot
// without those stages' bars (it exited 2 after the replay, "default:
// communication.bucket_size 30000 B …", naming neither file nor --set).
func TestRunStage3BucketOtherStagesRefuse(t *testing.T) {
	dir := t.TempDir()
	sets := []string{"--set", "parallelism.zero_stage=3", "--set", "communication.bucket_size=30KB"}
	for _, args := range [][]string{{"validate", exampleFile(t, "default")}, {"run", "-o", dir}} {
		if out, errOut, code := runCLI(append(args, sets...)...); code != 0 || out == "" {
			t.Fatalf("%v: exit %d, %s", args, code, errOut)
		}
	}
	svg, err := os.ReadFile(filepath.Join(dir, "memory_stages.svg"))
	if err != nil || !strings.Contains(string(svg), "stage 3 (this run)") || strings.Contains(string(svg), "stage 0") || strings.Contains(string(svg), "stage 2") {
		t.Errorf("memory_stages.svg: %v; want stage 3's bar alone", err)
	}
}
