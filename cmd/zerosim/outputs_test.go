package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/spf13/cobra"
	"github.com/zerosim/zerosim/internal/byhand"
	"github.com/zerosim/zerosim/reports"
)

// commandArgs are valid arguments for each command, so a test reaches the
// flag checks (cobra checks the arguments first).
var commandArgs = map[string][]string{
	"sweep":             {"seed000-k4", "--grid", "parallelism.k=1,2"},
	"merge":             {"shard.csv"},
	"fit":               {"seed000-k4"},
	"compare":           {"seed000-k4", "--vary", "parallelism.k=1,2"},
	"plan":              {"seed000-k4"},
	"calibrate":         {"log.txt"},
	"validate":          {"-"},
	"scenarios show":    {"default"},
	"import hf":         {"config.json"},
	"import torchtitan": {"llama3_8b.toml"},

	"import llm-foundry": {"mpt-7b.yaml"},
	"import megatron":    {"train_llama3_8b_h100_fp8.sh", "--tokenizer-vocab-size", "128256"},
}

// commandByKey finds a command by its path below the root.
func commandByKey(key string) *cobra.Command {
	for _, c := range allCommands(newRoot(&app{})) {
		if commandKey(c) == key {
			return c
		}
	}
	return nil
}

// allCommands walks the command tree below root.
func allCommands(c *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	for _, s := range c.Commands() {
		out = append(out, s)
		out = append(out, allCommands(s)...)
	}
	return out
}

// Every command says what it does with --format, -o and --set, and every
// entry names a command: a new command cannot silently ignore a global flag.
func TestEveryCommandDeclaresItsOutputs(t *testing.T) {
	root := newRoot(&app{})
	seen := map[string]bool{}
	for _, c := range allCommands(root) {
		key := commandKey(c)
		if exempt(key) || !c.Runnable() || c.Annotations[groupOnly] != "" {
			continue // cobra's own, and groups such as "import" that only list their commands
		}
		seen[key] = true
		if _, ok := commandOutputs[key]; !ok {
			t.Errorf("command %q has no entry in commandOutputs (outputs.go): say which --format values it prints, whether -o writes files and whether --set reaches it", key)
		}
	}
	for key := range commandOutputs {
		if !seen[key] {
			t.Errorf("commandOutputs has %q, which is no command", key)
		}
	}
}

// oneLine checks the shape of an input error: exit 2, nothing on stdout, one
// line on stderr naming the flag and its value, and no package or temporary
// file names.
func oneLine(t *testing.T, args []string, code int, out, errOut string, mention ...string) {
	t.Helper()
	if code != exitInput || out != "" {
		t.Errorf("%q: exit %d, stdout %d bytes; want exit 2 and no stdout", args, code, len(out))
	}
	if !strings.HasPrefix(errOut, "zerosim: ") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("%q: stderr %q: want one line starting with \"zerosim: \"", args, errOut)
	}
	for _, m := range mention {
		if !strings.Contains(errOut, m) {
			t.Errorf("%q: stderr %q does not name %q", args, errOut, m)
		}
	}
	for _, bad := range []string{"reports:", ".tmp", "probe", "zerosim-probe"} {
		if strings.Contains(errOut, bad) {
			t.Errorf("%q: stderr %q names an internal %q", args, errOut, bad)
		}
	}
}

// A bad output target is an input error before anything is simulated or
// printed: exit 2, one line naming the flag and the path, no file left.
func TestOutputTargetsCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "afile")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	under := filepath.Join(file, "out")
	cases := []struct {
		args    []string
		mention []string
	}{
		{[]string{"run", "seed002-tiny", "-o", under}, []string{"-o", under, "not a directory"}},
		{[]string{"run", "seed002-tiny", "-o", file}, []string{"-o", file, "not a directory"}},
		{[]string{"run", "seed002-tiny", "--trace", filepath.Join(under, "t.json")}, []string{"--trace", under}},
		{[]string{"run", "seed002-tiny", "--trace", dir}, []string{"--trace", dir, "is a directory"}},
		{[]string{"run", "seed002-tiny", "--trace", filepath.Join(dir, "no", "t.json")}, []string{"--trace", "does not exist"}},
		{[]string{"compare", "seed002-tiny", "--vary", "parallelism.zero_stage=1,3", "-o", under}, []string{"-o", under}},
		{[]string{"merge", "x.csv", "--out", filepath.Join(under, "m.csv")}, []string{"--out", under}},
	}
	if runtime.GOOS == "linux" {
		// Exists as a directory, but nobody can create files in it (not
		// even root, whom permission bits do not stop).
		cases = append(cases, struct {
			args    []string
			mention []string
		}{[]string{"run", "seed002-tiny", "-o", "/proc/self"}, []string{"-o", "/proc/self", "cannot write"}})
	}
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	if probe(ro) != nil { // not root: permission bits hold
		cases = append(cases, struct {
			args    []string
			mention []string
		}{[]string{"run", "seed002-tiny", "-o", ro}, []string{"-o", ro, "permission denied"}})
	}
	for _, c := range cases {
		code, out, errOut := runMain(t, "", c.args...)
		oneLine(t, c.args, code, out, errOut, c.mention...)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*"))
	if want := []string{file, ro}; !slices.Equal(left, want) {
		t.Errorf("files left in %s: %q, want %q", dir, left, want)
	}
}

// Every command honours every global flag it accepts or rejects it with
// exit 2 before doing anything: -o on a command that writes no files,
// --format values it does not print (sweep --format table printed CSV),
// --set on a command that reads no scenario.
func TestUnhonouredFlagsRejected(t *testing.T) {
	dir := t.TempDir()
	for key, o := range commandOutputs {
		base := append(strings.Fields(key), commandArgs[key]...)
		if c := commandByKey(key); c != nil && c.Annotations[writesFiles] == "" {
			target := filepath.Join(dir, strings.ReplaceAll(key, " ", "-"))
			args := append(slices.Clone(base), "-o", target)
			code, out, errOut := runMain(t, "", args...)
			oneLine(t, args, code, out, errOut, "-o "+target)
			if _, err := os.Stat(target); err == nil {
				t.Errorf("%q created %s", args, target)
			}
		}
		for _, f := range []string{"table", "json", "csv"} {
			if slices.Contains(o.formats, f) {
				continue
			}
			args := append(slices.Clone(base), "--format", f)
			code, out, errOut := runMain(t, "", args...)
			oneLine(t, args, code, out, errOut, "--format "+f)
		}
		if !o.wide {
			args := append(slices.Clone(base), "--wide")
			code, out, errOut := runMain(t, "", args...)
			oneLine(t, args, code, out, errOut, "--wide")
		}
		// --wide and --units change tables (and run's -o files: --units
		// its plots and report.html); JSON, CSV and nccl-tests output give
		// exact bytes, so each refuses them (qa21 LOW 1: memory, compare
		// and collective ignored them there, fit refused --units).
		for _, f := range o.formats {
			if f == "table" {
				continue
			}
			for _, flag := range [][]string{{"--wide"}, {"--units", "gb"}} {
				if flag[0] == "--wide" && !o.wide || flag[0] == "--units" && !o.units {
					continue
				}
				args := append(append(slices.Clone(base), "--format", f), flag...)
				code, out, errOut := runMain(t, "", args...)
				oneLine(t, args, code, out, errOut, strings.Join(flag, " ")+": --format "+f+" gives exact bytes")
			}
		}
		if !o.sets {
			args := append(slices.Clone(base), "--set", "parallelism.k=2")
			code, out, errOut := runMain(t, "", args...)
			oneLine(t, args, code, out, errOut, "--set parallelism.k=2")
		}
	}
}

// The formats a command declares are the ones it prints: --format json is
// JSON (version and validate ignored it).
func TestFormatJSONHonoured(t *testing.T) {
	for _, args := range [][]string{
		{"version", "--format", "json"},
		{"validate", "--format", "json", "-"},
		{"scenarios", "--format", "json"},
	} {
		stdin := ""
		if slices.Contains(args, "-") {
			b, _ := os.ReadFile("../../scenarios/examples/seed000-k4.yaml")
			stdin = string(b)
		}
		code, out, errOut := runMain(t, stdin, args...)
		if code != 0 || !json.Valid([]byte(out)) {
			t.Errorf("%q: exit %d, stderr %q, stdout is not JSON: %q", args, code, errOut, out)
		}
	}
	_, out, _ := runMain(t, "version: 1\n", "validate", "--format", "json", "../../scenarios/examples/seed000-k4.yaml")
	var v validateJSON
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.Zerosim != reports.ReadBuild() || len(v.Files) != 1 ||
		v.Files[0] != (validFile{File: "../../scenarios/examples/seed000-k4.yaml", N: 8, Stage: 1, K: 4, Params: 1342382080}) {
		t.Errorf("validate --format json: %v %+v", err, v)
	}
}

// zerosim --version and zerosim version print the same line; the JSON form
// names the Go toolchain and the scenario format.
func TestVersion(t *testing.T) {
	code, flag, _ := runMain(t, "", "--version")
	_, cmd, _ := runMain(t, "", "version")
	if code != 0 || flag != cmd || !strings.HasPrefix(flag, "zerosim ") || !strings.HasSuffix(flag, "(scenario format version 1)\n") {
		t.Errorf("--version: exit %d %q; version: %q", code, flag, cmd)
	}
	_, js, _ := runMain(t, "", "version", "--format", "json")
	var v struct {
		Version        string `json:"version"`
		Go             string `json:"go"`
		ScenarioFormat int    `json:"scenario_format"`
	}
	if err := json.Unmarshal([]byte(js), &v); err != nil || v.Version == "" || v.Go != runtime.Version() || v.ScenarioFormat != 1 {
		t.Errorf("version --format json: %v %+v", err, v)
	}
	b := reports.Build{Version: "devel", Revision: "0123456789abcdef0123", Time: "2026-11-23T15:03:15Z", Modified: true}
	if got, want := versionLine(b), "zerosim devel (git 0123456789ab, 2026-11-23T15:03:15Z, modified) (scenario format version 1)"; got != want {
		t.Errorf("versionLine = %q, want %q", got, want)
	}
}

// --require-fit makes a step that does not fit exit 1 after its report; the
// verdict is in the report's header either way. The peaks are worked by
// hand (byhand): at ZeRO-0 20P = 125.51 GiB, over the 79.11 GiB CUDA
// exposes on the H100 (byhand.H100Memory) by 46.40 GiB; at ZeRO-1 54.15
// GiB, 68.4 % of it.
func TestRequireFit(t *testing.T) {
	const gib, capB = 1 << 30, byhand.H100Memory
	p0, p1 := byhand.DefaultStage0Peak(), byhand.DefaultPeak()
	code, out, errOut := runMain(t, "", "run", "--require-fit", "--set", "parallelism.zero_stage=0")
	head, _, _ := strings.Cut(out, "\n\n") // the headline, before the first table
	want := fmt.Sprintf("fits in GPU memory:  NO: allocated peak %.2f GiB on rank 0 exceeds the GPU's %.2f GiB by %.2f GiB", float64(p0)/gib, float64(capB)/gib, float64(p0-capB)/gib)
	if code != exitFailure || !strings.Contains(head, want) ||
		!strings.Contains(errOut, "--require-fit: the step does not fit") {
		t.Errorf("stage 0: exit %d, stderr %q, header:\n%s\nwant %q", code, errOut, head, want)
	}
	code, out, errOut = runMain(t, "", "run", "--require-fit")
	// The device figure leads (qauser33 M4), the allocated peak by hand
	// after it.
	want = fmt.Sprintf("; allocated peak %.2f GiB (%.1f %%)", float64(p1)/gib, 100*float64(p1)/capB)
	if code != 0 || !strings.Contains(out, want) || !strings.Contains(out, "fits in GPU memory:  yes: device ") {
		t.Errorf("stage 1: exit %d, stderr %q; want %q", code, errOut, want)
	}
	var buf bytes.Buffer
	if Main([]string{"run", "--set", "parallelism.zero_stage=0"}, strings.NewReader(""), &buf, &buf) != 0 {
		t.Errorf("without --require-fit a step that does not fit exits 0")
	}
}

// Every report carries the zerosim build and the resolved scenario: the
// scenario in result.json replays the same step from the file alone, the
// page holds it too, and the terminal names it by digest.
func TestReportsCarryVersionAndScenario(t *testing.T) {
	dir := t.TempDir()
	args := []string{"run", "seed002-tiny", "--set", "parallelism.zero_stage=2", "--set", "communication.bucket_size=97B"}
	code, js, errOut := runMain(t, "", append(args, "--format", "json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var first struct {
		Zerosim  reports.Build   `json:"zerosim"`
		StepPS   int64           `json:"step_time_ps"`
		Stage    int             `json:"stage"`
		Resolved json.RawMessage `json:"resolved_scenario"`
	}
	if err := json.Unmarshal([]byte(js), &first); err != nil || first.Zerosim.Version == "" || first.Stage != 2 {
		t.Fatalf("result.json: %v %+v", err, first)
	}
	file := filepath.Join(dir, "resolved.json")
	if err := os.WriteFile(file, first.Resolved, 0o644); err != nil {
		t.Fatal(err)
	}
	code, again, errOut := runMain(t, "", "run", file, "--format", "json")
	var second struct {
		StepPS   int64           `json:"step_time_ps"`
		Resolved json.RawMessage `json:"resolved_scenario"`
	}
	if err := json.Unmarshal([]byte(again), &second); code != 0 || err != nil || second.StepPS != first.StepPS || !bytes.Equal(second.Resolved, first.Resolved) {
		t.Errorf("replaying result.json's resolved_scenario: exit %d %s, step %d ps, want %d ps and the same scenario", code, errOut, second.StepPS, first.StepPS)
	}
	_, table, _ := runMain(t, "", args...)
	if !strings.Contains(table, "\nzerosim:             "+reports.ReadBuild().String()+"\n") || !strings.Contains(table, "(resolved: sha256 ") {
		t.Errorf("the terminal report names no zerosim version or scenario digest:\n%s", table[:min(len(table), 1200)])
	}
	out := filepath.Join(dir, "out")
	if code, _, errOut := runMain(t, "", append(args, "-o", out, "--only", "html")...); code != 0 {
		t.Fatalf("-o: exit %d: %s", code, errOut)
	}
	page, err := os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil || !bytes.Contains(page, []byte(`id="resolved-scenario"`)) || !bytes.Contains(page, []byte("zero_stage: 2")) ||
		!bytes.Contains(page, []byte("bucket_size: 97B")) || !bytes.Contains(page, []byte("Generated by zerosim "+reports.ReadBuild().String())) {
		t.Errorf("report.html lacks the resolved scenario or the version (%v)", err)
	}
}

// Usage mistakes name the command and where its usage is: an unknown flag
// names the command and its --help; a command group (import) run without
// one of its commands, or with one it lacks, is an input error naming its
// commands, not its help with exit 0. --help itself still prints help.
func TestUsageErrorsNameTheCommand(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		mention []string
	}{
		{[]string{"--bogus"}, []string{"unknown flag: --bogus", "see zerosim --help"}},
		{[]string{"verify", "--stage", "9"}, []string{"verify: unknown flag: --stage", "see zerosim verify --help"}},
		{[]string{"import", "hf", "--bogus", "x.json"}, []string{"import hf: unknown flag: --bogus", "see zerosim import hf --help"}},
		{[]string{"import"}, []string{"import: name one of its commands: accelerate, deepspeed, hf, llm-foundry, megatron, torchtitan", "see zerosim import --help"}},
		{[]string{"import", "safetensors"}, []string{`import: unknown command "safetensors"`, "use accelerate, deepspeed, hf, llm-foundry, megatron, torchtitan"}},
	} {
		code, out, errOut := runMain(t, "", tc.args...)
		oneLine(t, tc.args, code, out, errOut, tc.mention...)
	}
	if code, out, _ := runMain(t, "", "import", "--help"); code != exitOK || !strings.Contains(out, "hf ") {
		t.Errorf("import --help: exit %d, stdout %q: want its help listing hf", code, out)
	}
}

// Every command that takes one scenario runs the default example without
// FILE, exactly as when it is named ("default").
func TestDefaultScenarioWithoutFile(t *testing.T) {
	for _, args := range [][]string{
		{"run"},
		{"memory", "--stage", "1"},
		{"fit"},
		{"plan", "--stages", "1", "--recompute", "none", "--top", "3"},
		{"sweep", "--grid", "parallelism.k=1,2"},
	} {
		code, out, errOut := runMain(t, "", args...)
		named := append(append([]string{args[0]}, "default"), args[1:]...)
		codeN, outN, errN := runMain(t, "", named...)
		if code != exitOK || codeN != exitOK {
			t.Fatalf("%q: exit %d (%s); %q: exit %d (%s)", args, code, errOut, named, codeN, errN)
		}
		if out != outN {
			t.Errorf("%q prints other than %q:\n%s\n---\n%s", args, named, out, outN)
		}
	}
}

// Piped, the replay's progress is off: no callback, nothing written.
func TestReplayProgressQuietWhenPiped(t *testing.T) {
	var buf bytes.Buffer
	progress, done := replayProgress(&buf, "replay")
	done()
	if progress != nil || buf.Len() != 0 {
		t.Errorf("progress on a pipe: callback %v, wrote %q", progress != nil, buf.String())
	}
}

// An output file the file system refuses once the run is done (here a
// directory of the file's name inside -o DIR, which the checks before the
// run cannot know is in the way) exits 2 like other input the user can
// fix, not 1, which --require-fit gives "does not fit": one line on stderr
// naming the file and the fix, no temporary file's name, no manifest.
func TestOutputWriteFailure(t *testing.T) {
	for _, c := range []struct {
		args    []string
		blocked string // the file a directory stands in for
	}{
		{[]string{"run", "seed002-tiny"}, "timeline.png"},
		{[]string{"run", "seed002-tiny", "--require-fit"}, "report.html"},
		{[]string{"plan", "seed002-tiny", "--stages", "3", "--recompute", "none"}, "plan.csv"},
		{[]string{"compare", "seed002-tiny", "--vary", "parallelism.zero_stage=1,3"}, "compare.png"},
	} {
		dir := t.TempDir()
		blocked := filepath.Join(dir, c.blocked)
		if err := os.MkdirAll(filepath.Join(blocked, "x"), 0o755); err != nil {
			t.Fatal(err)
		}
		args := append(c.args, "-o", dir)
		code, _, errOut := runMain(t, "", args...)
		if code != exitInput {
			t.Errorf("%q: exit %d, want 2; stderr %q", args, code, errOut)
		}
		if !strings.HasPrefix(errOut, "zerosim: ") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%q: stderr %q: want one line starting with \"zerosim: \"", args, errOut)
		}
		for _, m := range []string{"cannot write " + blocked, "directory", "remove or rename it"} {
			if !strings.Contains(errOut, m) {
				t.Errorf("%q: stderr %q does not say %q", args, errOut, m)
			}
		}
		for _, bad := range []string{"reports:", ".tmp", "rename /"} {
			if strings.Contains(errOut, bad) {
				t.Errorf("%q: stderr %q names an internal %q", args, errOut, bad)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, reports.ManifestName)); err == nil {
			t.Errorf("%q: a manifest was written though %s was not", args, c.blocked)
		}
	}
}

// TestTraceNotOneOfOutputDirFiles (QA19 L10): run -o DIR --trace
// DIR/result.json wrote the trace, said "wrote DIR/result.json", and -o
// replaced it with result.json. Now an input error before anything is
// written or printed; --trace DIR/trace.json, the bytes -o writes there
// too, still runs.
func TestTraceNotOneOfOutputDirFiles(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"result.json", "report.html", "manifest.json", "timeline.svg"} {
		tr := filepath.Join(dir, name)
		code, out, errOut := runMain(t, "", "run", "seed002-tiny", "-o", dir, "--trace", tr)
		want := "zerosim: --trace " + tr + ": -o " + dir + " writes " + name + " there too, over the trace (give the trace another name, or drop --trace: -o writes trace.json)\n"
		if code != exitInput || out != "" || errOut != want {
			t.Errorf("--trace %s: exit %d, stdout %d bytes, stderr %q; want exit 2 and %q", name, code, len(out), errOut, want)
		}
		if ents, _ := os.ReadDir(dir); len(ents) > 0 {
			t.Errorf("--trace %s: %d files written", name, len(ents))
		}
	}
	if code, _, errOut := runMain(t, "", "run", "seed002-tiny", "-o", dir, "--trace", filepath.Join(dir, "trace.json")); code != exitOK {
		t.Errorf("--trace DIR/trace.json: exit %d, %s", code, errOut)
	}
}

// fullStdout is standard output on a full disk (/dev/full).
type fullStdout struct{}

func (fullStdout) Write([]byte) (int, error) {
	return 0, &fs.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.ENOSPC}
}

// TestStdoutWriteErrorExits1 (QA19 L7): "zerosim version > /dev/full"
// and --help exited 0 with nothing written (fmt.Fprintln's error
// unchecked); now exit 1 with the error, as every other command.
func TestStdoutWriteErrorExits1(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--help"}, {"run", "--help"}, {"version", "--format", "json"}, {"scenarios"}} {
		var e bytes.Buffer
		code := Main(args, strings.NewReader(""), fullStdout{}, &e)
		if want := "zerosim: write /dev/stdout: no space left on device\n"; code != exitFailure || e.String() != want {
			t.Errorf("%v > /dev/full: exit %d, stderr %q; want exit 1 and %q", args, code, e.String(), want)
		}
	}
}
