package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/collectives"
	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/reports"
	"github.com/zerosim/zerosim/units"
)

// p4dArgs is the cluster of the published p4d log taken with
// NCCL_ALGO=RING (collectives/testdata/nccl-tests/
// a100_2node_allreduce_aws_p4d_efa_ring.log: 2 × 8 A100 SXM4 40GB, 4 ×
// 100 Gb/s EFA per node).
var p4dArgs = []string{"--set", "cluster.gpu=A100-40GB", "--set", "cluster.intra.preset=NVLink3", "--set", "cluster.inter.preset=EFA-p4d",
	"--nodes", "2", "--gpus-per-node", "8", "--nics", "per_node", "--nics-per-node", "4"}

// TestCollectiveAlgoRingIsNCCLs (QA17 M6): --algo ring is NCCL_ALGO=Ring,
// NCCL's ring with its channels over every NIC and its protocol chosen by
// NCCL's tuner, so the published log taken with NCCL_ALGO=RING is
// reproduced as well as the model reproduces it (TestPublishedAccuracy's
// known miss of that log: median 50.6 %, max 70.3 %, 1 MiB–1 GiB, on its
// own description of the cluster, the nominal model). On these flags the
// EFA-p4d preset runs at its published efficiency, 0.69 (scenarios.
// LinkPreset Efficiency, of which this log is one of three sources): median
// 29.94 %, max 63.91 % (the small sizes' fixed cost, 167 µs for 8 B, is what
// is left), where the nominal model gave 50.56 % and 69.86 % (lead
// 4d5a9bff); held at 30.0 % and 64.0 %, rounded up to the next 0.1 point.
// The
// alpha–beta ring that --algo ring ran before is 2.6× the log at 1 GiB
// (161.6 ms against 61.6 ms), auto picks the tree (−71 % at 1 MiB).
func TestCollectiveAlgoRingIsNCCLs(t *testing.T) {
	out, errOut, code := runCollectiveCLI(t, append(p4dArgs, "--algo", "ring", "--size", "1MiB:1GiB", "--format", "nccl-tests")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	got, err := collectives.ParseLogs("zerosim", strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join("..", "..", "collectives", "testdata", "nccl-tests", "a100_2node_allreduce_aws_p4d_efa_ring.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	logs, err := collectives.ParseLogs("p4d", f)
	if err != nil {
		t.Fatal(err)
	}
	measured := map[int64]float64{}
	for _, r := range logs[0].Rows {
		measured[int64(r.Size)] = min(r.Time, r.InTime)
	}
	var errs []float64
	for _, r := range got[0].Rows {
		us, ok := measured[int64(r.Size)]
		if !ok {
			t.Fatalf("size %d not in the log", r.Size)
		}
		errs = append(errs, (r.Time-us)/us)
	}
	if len(errs) != 11 {
		t.Fatalf("%d rows, want 11 (1 MiB–1 GiB)", len(errs))
	}
	md, mx := collectives.Summary(errs)
	t.Logf("--algo ring against the NCCL_ALGO=RING log: median %.3f %%, max %.3f %%", 100*md, 100*mx)
	if md > 0.300 || mx > 0.640 {
		t.Errorf("median %.1f %%, max %.1f %%; want ≤ 30.0 %% and ≤ 64.0 %% (the model's miss of this log at EFA-p4d's efficiency)", 100*md, 100*mx)
	}
	if !strings.Contains(out, "(ring: NCCL's cost model, NCCL_ALGO=Ring, network at EFA-p4d's published efficiency 0.69)") {
		t.Errorf("header does not say NCCL_ALGO=Ring:\n%s", out)
	}
	// Every row runs NCCL's ring: the JSON's algo column.
	js, _, _ := runCollectiveCLI(t, append(p4dArgs, "--algo", "ring", "--size", "8B:1GiB", "--format", "json")...)
	var rep reports.CollectiveReport
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Rows {
		if !strings.HasPrefix(r.Algorithm, "ring/") {
			t.Errorf("%d B: %s, want NCCL's ring", r.Size, r.Algorithm)
		}
	}
}

// TestCollectiveProtoPins: NCCL_PROTO as --proto or --algo A/P restricts
// the protocols NCCL's tuner ranks (tuning.cc ncclTopoTuneModel's
// protoEnable at 5067397c), and NCCL's refusals are errors naming what
// was set.
func TestCollectiveProtoPins(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // every row's algo column has this prefix
	}{
		{[]string{"--proto", "simple"}, ""},
		{[]string{"--algo", "ring/simple"}, "ring/Simple"},
		{[]string{"--algo", "Ring", "--proto", "LL"}, "ring/LL"},
		{[]string{"--algo", "tree/ll128"}, "tree/LL128"},
		{[]string{"--algo", "^nvls,nvlstree", "--proto", "^ll,ll128"}, ""},
	} {
		js, errOut, code := runCollectiveCLI(t, append(c.args, "--size", "8B:1GiB", "--format", "json")...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errOut)
		}
		var rep reports.CollectiveReport
		if err := json.Unmarshal([]byte(js), &rep); err != nil {
			t.Fatal(err)
		}
		for _, r := range rep.Rows {
			if !strings.HasSuffix(r.Algorithm, "/Simple") && (c.want == "" || strings.HasSuffix(c.want, "Simple")) ||
				c.want != "" && r.Algorithm != c.want || strings.HasPrefix(r.Algorithm, "nvls") && c.args[1] == "^nvls,nvlstree" {
				t.Errorf("%v: %d B ran %s, want %q", c.args, r.Size, r.Algorithm, c.want)
			}
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--algo", "tree", "--op", "allgather"}, "--algo tree: no algorithm/protocol available for allgather over 16 ranks on 2 nodes on this hardware: NCCL_ALGO was set to Tree. (NCCL's tree runs all-reduce only)"},
		{[]string{"--algo", "ring/ll", "--proto", "simple"}, "both set NCCL_PROTO"},
		{[]string{"--algo", "alphabeta-ring", "--proto", "simple"}, "zerosim's alpha–beta lowering, which has no NCCL protocol"},
		{[]string{"--algo", "ring", "--op", "alltoall"}, "NCCL_ALGO and NCCL_PROTO do not choose"},
		{[]string{"--algo", "collnetdirect"}, "leaves only CollNet, which needs SHARP switches"},
		{[]string{"--proto", "ll", "--op", "alltoall"}, "zerosim: --proto ll: NCCL's all-to-all is grouped point-to-point sends"},
		{[]string{"--algo", "ring/"}, "zerosim: --algo ring/: no protocol after / (give one of NCCL_PROTO's, e.g. ring/simple, or drop the /)"},
		{[]string{"--algo", "allreduce:ring"}, "per-function list"},
		{[]string{"--proto", "^ll,ll128,simple"}, "disables every one"},
		{[]string{"--scenario", "testdata/nogpu.yaml", "--algo", "ring"}, "--algo alphabeta-ring"},
	} {
		out, errOut, code := runCollectiveCLI(t, append(c.args, "--size", "1MiB")...)
		if code != 2 || out != "" || !strings.Contains(errOut, c.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", c.args, code, out, errOut, c.want)
		}
	}
}

// TestCollectiveCalibrationPins: a calibration's hardware.algos and
// protos (the NCCL_ALGO and NCCL_PROTO of the run measured) are taken,
// with the measured curves, when --algo and --proto pin the same (QA17
// M6: they were ignored in silence). When this run's differ, collective
// does what run does (final read R2 F3): it warns, naming the --algo and
// --proto that match, and times NCCL's own choice with the fitted
// parameters (here the nominal ones: tree/LL128 in 67.83 µs, as without
// the file) instead of the curves timed under ring/Simple (500 µs).
func TestCollectiveCalibrationPins(t *testing.T) {
	dir := t.TempDir()
	cal := filepath.Join(dir, "c.yaml")
	data := "version: 1\nhardware: {arch: Hopper, nvls: true, intra_gbytes_per_s: 450, nic_gbytes_per_s: 50, nics_per_node: 8, inter_latency_us: 0, intra_latency_us: 0, algos: [Ring], protos: [Simple]}\n" +
		"params: {intra_efficiency: 1, inter_efficiency: 1, intra_hop_latency_us: 0, inter_hop_latency_us: 0, fixed_cost_us: 0}\n" +
		"curves:\n  - {op: allreduce, ranks: 16, nodes: 2, sizes: [1048576, 2097152], times_us: [500, 600]}\n"
	if err := os.WriteFile(cal, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	js, errOut, code := runCollectiveCLI(t, "--calibration", cal, "--size", "1MiB", "--format", "json")
	if code != 0 || errOut != "zerosim: warning: --calibration "+cal+": measured with NCCL_ALGO Ring, NCCL_PROTO Simple (hardware.algos, hardware.protos), this run has NCCL_ALGO NCCL's default, NCCL_PROTO NCCL's default: "+
		"its efficiencies and latencies are applied, its measured curves, timed under the algorithms those settings chose, are not used (pin them as measured with --algo ring --proto simple to use them, or calibrate on logs taken with this run's)\n" {
		t.Errorf("unpinned: exit %d, %s", code, errOut)
	}
	var unpinned reports.CollectiveReport
	if err := json.Unmarshal([]byte(js), &unpinned); err != nil {
		t.Fatal(err)
	}
	// The file's parameters are the nominal ones, so the time is the
	// default's without it (67.83 µs by tree/LL128), not its curves'.
	js, errOut, code = runCollectiveCLI(t, "--size", "1MiB", "--format", "json")
	var nominal reports.CollectiveReport
	if err := json.Unmarshal([]byte(js), &nominal); err != nil || code != 0 {
		t.Fatalf("without the file: exit %d, %v: %s", code, err, errOut)
	}
	if r, n := unpinned.Rows[0], nominal.Rows[0]; r.TimePS != n.TimePS || r.Algorithm != n.Algorithm || r.Algorithm != "tree/LL128" || r.TimePS == 500e6 {
		t.Errorf("unpinned: %s in %d ps, want tree/LL128 in %d ps as without the file (%s)", r.Algorithm, r.TimePS, n.TimePS, n.Algorithm)
	}
	js, errOut, code = runCollectiveCLI(t, "--calibration", cal, "--algo", "ring", "--proto", "simple", "--size", "1MiB", "--format", "json")
	if code != 0 {
		t.Fatalf("pinned: exit %d: %s", code, errOut)
	}
	var rep reports.CollectiveReport
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		t.Fatal(err)
	}
	if r := rep.Rows[0]; r.TimePS != 500e6 || r.Algorithm != "ring/Simple" {
		t.Errorf("pinned: %s in %d ps, want ring/Simple in the measured 500 µs", r.Algorithm, r.TimePS)
	}
}

// TestCollectiveNothingRuns (QA17 L5): a 1-rank group and a 0-byte
// buffer run no algorithm: the algo column is "-", not tree/LL.
func TestCollectiveNothingRuns(t *testing.T) {
	for _, args := range [][]string{{"--group", "0", "--size", "8B"}, {"--size", "0B"}, {"--group", "0", "--algo", "alphabeta-ring", "--size", "1MiB"}} {
		js, errOut, code := runCollectiveCLI(t, append(args, "--format", "json")...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		var rep reports.CollectiveReport
		if err := json.Unmarshal([]byte(js), &rep); err != nil {
			t.Fatal(err)
		}
		if r := rep.Rows[0]; r.Algorithm != "-" || r.TimePS != 0 {
			t.Errorf("%v: %s in %d ps, want - in 0", args, r.Algorithm, r.TimePS)
		}
	}
}

// TestCollectiveNCCLTestsNamesChoice (QA17 L2, QA18 L9): --format
// nccl-tests puts NCCL's TUNING line (enqueue.cc line 822 at 5067397c:
// "%s: %ld Bytes -> Algo %s proto %s channel{Lo..Hi}={%d..%d}") before
// each row, which calibrate skips as a comment; a training or model
// --set, which changes nothing here, is refused. The channels on the
// default 2 × 8 H100 (collectives.TestChannelRange's derivation; the
// communicator's 16 channels, the ring graph's 8 on 8 NDR NICs
// duplicated): a 1 MiB tree LL128 all-reduce's 64 cells of 16 KiB over
// all 16 channels, a 1 GiB NVLS-tree's the 16 NVLS channels, a 1 GiB
// all-gather's (64 MiB a rank) 16; RCCL's tuner (MI300X) logs no channels
// here.
func TestCollectiveNCCLTestsNamesChoice(t *testing.T) {
	out, errOut, code := runCollectiveCLI(t, "--size", "1MiB:1GiB", "--format", "nccl-tests")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"# NCCL INFO AllReduce: 1048576 Bytes -> Algo TREE proto LL128 channel{Lo..Hi}={0..15}\n     1048576 ",
		"# NCCL INFO AllReduce: 1073741824 Bytes -> Algo NVLS_TREE proto SIMPLE channel{Lo..Hi}={0..15}\n  1073741824 "} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if logs, err := collectives.ParseLogs("zerosim", strings.NewReader(out)); err != nil || len(logs) != 1 || len(logs[0].Rows) != 11 {
		t.Errorf("read back: %v", err)
	}
	ag, _, _ := runCollectiveCLI(t, "--op", "allgather", "--size", "1GiB", "--format", "nccl-tests")
	if !strings.Contains(ag, "# NCCL INFO AllGather: 67108864 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..15}\n") {
		t.Errorf("all-gather: NCCL's bytes are the count passed (a rank's 64 MiB):\n%s", ag)
	}
	amd, _, _ := runCollectiveCLI(t, "--set", "cluster.gpu=MI300X", "--size", "1GiB", "--format", "nccl-tests")
	if !strings.Contains(amd, "# NCCL INFO AllReduce: 1073741824 Bytes -> Algo RING proto SIMPLE\n") {
		t.Errorf("RCCL: no channels:\n%s", amd)
	}
	_, errOut, code = runCollectiveCLI(t, "--set", "training.param_dtype=fp32", "--size", "1MiB")
	if code != 2 || !strings.HasPrefix(errOut, "zerosim: --set training.param_dtype=fp32: collective times one --op of --size bytes in bfloat16 elements") {
		t.Errorf("param_dtype: exit %d, %s", code, errOut)
	}
}

// rowTime is the time (µs) column of collective's table row of size bytes
// run by algo.
func rowTime(t *testing.T, table, size, algo string) float64 {
	t.Helper()
	for _, l := range strings.Split(table, "\n") {
		if c := strings.Split(l, "│"); len(c) > 4 && strings.TrimSpace(c[1]) == size && strings.TrimSpace(c[3]) == algo {
			if v, err := strconv.ParseFloat(strings.TrimSpace(c[4]), 64); err == nil {
				return v
			}
		}
	}
	t.Fatalf("no %s row of %s B:\n%s", algo, size, table)
	return 0
}

// TestCollectiveSlowChoiceNote (QA17 L4): over 8 × 8 H100 auto runs
// NCCL's tree/Simple at 256 and 512 MiB (3,858.57 µs at 512 MiB), where
// --algo nvlstree is faster; the table's note says so and why, once for
// both sizes, at the worst (256 MiB: there the ring's LL128, capped at its
// 8 channels × 36.7 GB/s, no longer wins), with the times of the table's
// row and of the --algo nvlstree run and their ratio
// (collectives.TestFasterThanChoiceSays holds the model's times). On
// 2 × 8 auto runs the fastest at every size: no note.
func TestCollectiveSlowChoiceNote(t *testing.T) {
	out, errOut, code := runCollectiveCLI(t, "--nodes", "8", "--size", "128MiB:1GiB")
	nv, _, _ := runCollectiveCLI(t, "--nodes", "8", "--size", "256MiB:512MiB", "--algo", "nvlstree")
	tree, nvls := rowTime(t, out, "268435456", "tree/Simple"), rowTime(t, nv, "268435456", "nvlstree/Simple")
	tree512, nvls512 := rowTime(t, out, "536870912", "tree/Simple"), rowTime(t, nv, "536870912", "nvlstree/Simple")
	want := fmt.Sprintf("note: 268435456–536870912 B: NCCL's tuner picks tree/Simple, up to %.1f %% above nvlstree/Simple's time (268435456 B: %.2f µs against %.2f): it ranks the Simple tree by its cost, without the pipeline fill its time holds",
		100*(tree/nvls-1), tree, nvls)
	if code != 0 || !strings.Contains(out, want) || strings.Count(out, "note:") != 1 || tree <= nvls || tree512 <= nvls512 || tree/nvls < tree512/nvls512 {
		t.Errorf("exit %d (%s), want one note %q:\n%s", code, errOut, want, out)
	}
	if out, _, _ := runCollectiveCLI(t, "--size", "8B:4GiB"); strings.Contains(out, "note:") {
		t.Errorf("2 × 8 H100: a note:\n%s", out)
	}
}

// TestScenarioNCCLPins: communication.nccl_algo and nccl_proto pin NCCL's
// tuner for a run as --algo and --proto do for one collective: under
// NCCL_PROTO=LL the default example's step is longer (LL's half bandwidth
// on every bucket), and docs/collectives.md quotes both steps as the
// replay gives them (the default's is the README's console figure, held as
// real output by TestREADMEExamples); NCCL_ALGO=Tree cannot
// reduce-scatter and is refused as NCCL refuses it, at the key (QA18 M5); collective takes the
// scenario's pin (ring/Simple at 1 GiB, as --algo ring) and --algo
// replaces it; a bad list or an alpha–beta algorithm is a load error.
func TestScenarioNCCLPins(t *testing.T) {
	def, ll := replayDefault(t).StepTime, replayDefault(t, "communication.nccl_proto=LL").StepTime
	if ll <= def {
		t.Errorf("nccl_proto LL: step %v, not above the default's %v", ll, def)
	}
	ms := func(d units.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/1e9) }
	golden.CheckQuotes(t, "../../docs/collectives.md", "replayDefault with and without communication.nccl_proto=LL",
		"makes the step "+ms(ll)+" instead of "+ms(def)+";")
	_, errOut, code := runCLI("run", "--set", "communication.nccl_algo=Tree")
	if code != 2 || !strings.Contains(errOut, `--set communication.nccl_algo=Tree: nccl_algo "Tree" leaves only NCCL's all-reduce algorithms (Tree, NVLSTree), and ZeRO stage 1 reduce-scatters and all-gathers, which NCCL then refuses`) {
		t.Errorf("nccl_algo Tree: exit %d, %s", code, errOut)
	}
	// What the loader cannot judge (NVLS on two nodes) collectives'
	// model refuses before the replay, at the key (QA18 M5, final read
	// R2 F1: zero.CheckPins).
	_, errOut, code = runCLI("run", "--set", "communication.nccl_algo=NVLS")
	if code != 2 || !strings.Contains(errOut, `zerosim: default.yaml: --set communication.nccl_algo=NVLS: communication.nccl_algo: the step's reduce-scatters: no algorithm/protocol available for reducescatter over 16 ranks on 2 nodes on this hardware: NCCL_ALGO was set to NVLS.`) {
		t.Errorf("nccl_algo NVLS: exit %d, %s", code, errOut)
	}
	// The scenario's pin times the collective as --algo ring does
	// (5,613.76 µs), and --algo nvlstree over it as --algo nvlstree alone
	// (4,138.94 µs): each row against the same run pinned by the flag.
	row := func(out string) string {
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "│ ") && strings.Contains(l, "/Simple") {
				return l
			}
		}
		return ""
	}
	for _, c := range []struct {
		args   []string
		header string
		flag   string
	}{
		{[]string{"--set", "communication.nccl_algo=ring"}, "NCCL_ALGO=Ring)", "ring"},
		{[]string{"--set", "communication.nccl_algo=ring", "--algo", "nvlstree"}, "NCCL_ALGO=NVLSTree)", "nvlstree"},
	} {
		out, _, _ := runCollectiveCLI(t, append(c.args, "--size", "1GiB")...)
		flag, _, _ := runCollectiveCLI(t, "--algo", c.flag, "--size", "1GiB")
		if r := row(out); !strings.Contains(out, c.header) || r == "" || r != row(flag) || !strings.Contains(r, c.flag+"/Simple") {
			t.Errorf("%v: row %q, want %q as --algo %s alone gives it:\n%s", c.args, r, row(flag), c.flag, out)
		}
	}
	for _, c := range []struct{ set, want string }{
		{"communication.nccl_algo=Rign", `nccl_algo: NCCL_ALGO "Rign": "Rign" is not one of NCCL's`},
		{"communication.nccl_proto=^LL,LL128,Simple", "disables every one"},
	} {
		_, errOut, code := runCLI("run", "--set", c.set)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: exit %d, %s", c.set, code, errOut)
		}
	}
	_, errOut, code = runCLI("run", "--set", "communication.algorithm=ring", "--set", "communication.nccl_proto=Simple")
	if code != 2 || !strings.Contains(errOut, "nccl_proto sets NCCL's tuner, which algorithm ring (zerosim's alpha–beta lowering) does not use") {
		t.Errorf("ring + nccl_proto: exit %d, %s", code, errOut)
	}
}
