package main

import (
	"strings"
	"testing"
)

// TestFormatErrorNamesTheCommandsFormats: an unknown --format names the
// formats of the command given, not every command's (run --format xml
// suggested csv, which run then refused: QA9 #5), and run --format csv
// says where CSV rows come from.
func TestFormatErrorNamesTheCommandsFormats(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--format", "xml"}, "zerosim: --format xml: zerosim run prints table or json\n"},
		{[]string{"sweep", "default", "--format", "xml"}, "zerosim: --format xml: zerosim sweep prints csv or json\n"},
		{[]string{"run", "--format", "csv"}, "zerosim: --format csv: zerosim run prints table or json: for CSV rows, zerosim sweep FILE --grid KEY=V1,V2 (a one-value grid is one run)\n"},
	} {
		out, errOut, code := runCLI(tc.args...)
		if code != 2 || out != "" || errOut != tc.want {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and %q", tc.args, code, out, errOut, tc.want)
		}
	}
}

// TestHelpListsTheGlobalFlagsTaken: a command's help lists only the
// global flags it takes and its own formats (compare's help offered
// --units, which compare refuses, and every help "table, json or csv"),
// and the flags are put back: the root's help on the same command tree,
// asked after, lists them all with the root's usage.
func TestHelpListsTheGlobalFlagsTaken(t *testing.T) {
	for _, tc := range []struct {
		cmd           string
		want, notWant []string
	}{
		{"compare", []string{"--format string     output format: table, json or csv (default \"table\")", "--wide"}, []string{"--units"}},
		{"run", []string{"output format: table or json (default \"table\")", "--units", "--wide", "--set"}, nil},
		{"sweep", []string{"output format: csv or json (default \"csv\")", "--set"}, []string{"--units", "--wide", "--output"}},
		{"version", []string{"output format: table or json"}, []string{"--set", "--units", "--wide", "--output"}},
	} {
		out, _, code := runCLI(tc.cmd, "--help")
		_, global, _ := strings.Cut(out, "Global Flags:")
		if code != 0 || global == "" {
			t.Fatalf("%s --help: exit %d, no global flags:\n%s", tc.cmd, code, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(global, w) {
				t.Errorf("%s --help: no %q in\n%s", tc.cmd, w, global)
			}
		}
		for _, w := range tc.notWant {
			if strings.Contains(global, w) {
				t.Errorf("%s --help lists %s, which it refuses:\n%s", tc.cmd, w, global)
			}
		}
	}
	var b strings.Builder
	root := newRoot(&app{in: strings.NewReader(""), out: &b, err: &b})
	sweepCmd, _, err := root.Find([]string{"sweep"})
	if err != nil {
		t.Fatal(err)
	}
	root.HelpFunc()(sweepCmd, nil)
	b.Reset()
	root.HelpFunc()(root, nil)
	out := b.String()
	for _, w := range []string{"--units", "--wide", "--set", "--output", "table, json or csv (collective: also nccl-tests) (default \"table\")"} {
		if !strings.Contains(out, w) {
			t.Errorf("zerosim --help: no %q", w)
		}
	}
}

// TestCollectiveNamesGPUAndTuner: collective's header (table and
// nccl-tests) and JSON name the GPU and, under auto, the cost model that
// timed it, so a prediction put beside an rccl-tests log says it is
// RCCL's (QA11 #4: "… on 1 node × 8 GPUs", nothing about the tuner).
func TestCollectiveNamesGPUAndTuner(t *testing.T) {
	args := []string{"collective", "--set", "cluster.gpu=MI300X", "--set", "cluster.intra.preset=xGMI", "--nodes", "1", "--gpus-per-node", "8", "--size", "1MiB"}
	for _, f := range []string{"table", "nccl-tests"} {
		out, errOut, code := runCLI(append(args, "--format", f)...)
		if code != 0 || !strings.Contains(out, "(auto: RCCL's cost model, gfx942) over 8 ranks on 1 node × 8 MI300X,") {
			t.Errorf("%s: exit %d (%s), header not naming MI300X and RCCL:\n%s", f, code, errOut, out)
		}
	}
	js, _, _ := runCLI(append(args, "--format", "json")...)
	if !strings.Contains(js, `"timing": "RCCL's cost model, gfx942"`) {
		t.Errorf("json without the timing:\n%s", js)
	}
	out, _, _ := runCLI("collective", "--size", "1MiB", "--algo", "alphabeta-ring")
	if !strings.Contains(out, "(alphabeta-ring: zerosim's alpha–beta lowering) over 16 ranks on 2 nodes × 8 H100-80GB,") {
		t.Errorf("explicit ring: %s", out)
	}
}
