package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/reports"
	"github.com/zerosim/zerosim/scenarios"
)

// TestPlanOneScreen: on Llama-2-13B over 4 × 8 A100-40GB with one 100 GbE
// NIC per node, plan answers on one screen (≤ 40 lines of ≤ 120 columns):
// stage, K, micro-batch, checkpointing, tokens/s and how it fits (the
// device figure "free" is taken from, then the allocated peak: qauser33 M4),
// without raw picoseconds; -o writes the files, plan.csv holding every row
// of plan.json. Llama-2-70B on 64 × 8 H100 and torchao's float8 Llama-3-8B
// (a stack: line, a three-line why) keep to the screen too, with the pick
// at the published fits on the gives line (both ran to 41 lines).
func TestPlanOneScreen(t *testing.T) {
	for _, args := range [][]string{
		{"plan", "default", "--set", "model.preset=llama2-70b", "--set", "cluster.nodes=64", "--set", "parallelism.dp=512", "--global-batch", "2048", "--tokens", "2T"},
		{"plan", "../../testdata/validation/torchao-float8-llama3-8b-h100.yaml", "--global-batch", "64", "--tokens", "1T"},
	} {
		out, errOut, code := sweepCLI(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		checkOneScreen(t, out)
	}
	dir := t.TempDir()
	out, errOut, code := sweepCLI(t, "plan", "llama2-13b-a100-eth", "--tokens", "1T", "-o", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	checkOneScreen(t, out)
	for _, want := range []string{"run:   ZeRO stage 3", "micro-batch", "checkpointing", "tokens/s per GPU", "fits: device", "GPU-hours", "front: "} {
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

// checkOneScreen fails t unless out is at most 40 lines of at most 120
// columns, the picked configuration at the published fits on them.
func checkOneScreen(t *testing.T, out string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) > 40 {
		t.Errorf("%d lines, want ≤ 40:\n%s", len(lines), out)
	}
	for i, l := range lines {
		if n := utf8.RuneCountInString(l); n > 120 {
			t.Errorf("line %d has %d columns: %s", i+1, n, l)
		}
	}
	if !strings.Contains(out, "published bf16 runs;") {
		t.Errorf("gives no published fits:\n%s", out)
	}
}

// TestPlanNothingFits: Llama 2 70B on 8 × 24 GiB fits in no
// configuration; plan says so and what to change, and exits 1.
func TestPlanNothingFits(t *testing.T) {
	out, errOut, code := sweepCLI(t, "plan", "seed002-7b", "--set", "model={preset: llama2-70b}", "--recompute", "full", "--algorithms", "ring")
	// Exit 1 after the report, as run --require-fit (QA7 F8: exit 0 let
	// "plan … && sbatch" go ahead).
	if code != 1 || errOut != "zerosim: plan: no configuration fits in GPU memory (the report says what to change)\n" {
		t.Fatalf("exit %d, stderr %q; want 1 and one line", code, errOut)
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
		{[]string{"plan", "default", "--global-batch", "100000tokens"}, "not a whole number of dp=16 × 4096-token sequences (use 65536 or 131072 tokens)"},
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
		{[]string{"plan", "default", "--global-batch", "2Mtokens"}, "use 1966080 or 2031616 tokens"},
		// --cp: a degree below 1, not a number, or none that runs on the
		// 16 GPUs with the global batch of 16.
		{[]string{"plan", "default", "--cp", "0"}, `--cp: "0": use context-parallel degrees of 1 or more`},
		{[]string{"plan", "default", "--cp", "x"}, "--cp"},
		{[]string{"plan", "default", "--cp", ""}, `--cp "": want a whole number`},
		{[]string{"plan", "default", "--cp", "3,32"}, "--cp: no context-parallel degree can run: cp=3: the 16 GPUs do not split into rings of 3; cp=32:"},
		{[]string{"plan", "default", "--cp", "2", "--global-batch", "4"}, "--cp: no context-parallel degree can run: cp=2: global batch 4 sequences is not a multiple of dp=8 (use 8 or 16)"},
		// A --set of a searched key pins it; its search flag beside it is
		// refused (QA7 F4), as are --k and --micro-batches out of range.
		{[]string{"plan", "default", "--set", "parallelism.k=1", "--k", "1,2"}, "plan: --set parallelism.k=1 pins parallelism.k, and --k searches it: drop one of them"},
		{[]string{"plan", "default", "--set", "communication.prefetch_depth=1", "--prefetch", "2"}, "--set communication.prefetch_depth=1 pins"},
		{[]string{"plan", "default", "--k", "0"}, "--k: 0: use K of 1 or more"},
		{[]string{"plan", "default", "--k", "3"}, "--k 3 does not divide N = dp·cp = 16"},
		{[]string{"plan", "default", "--micro-batches", "0"}, "--micro-batches: 0: use micro-batches from 1 to"},
		{[]string{"plan", "default", "--micro-batches", "2"}, "--micro-batches 2 does not split the 1 sequence per data-parallel rank"},
		// QA7 F12: duplicates, and flags no searched stage reads.
		{[]string{"plan", "default", "--stages", "1,1"}, "--stages: 1 is given twice (list each value once)"},
		{[]string{"plan", "default", "--k", "2", "--stages", "0"}, "plan: no configuration to search: no K searched (2) runs at the stages searched (0): stage 0, ZeRO++ and ep > 1 run K = 1 only"},
		{[]string{"plan", "default", "--set", "stack=deepspeed", "--set", "parallelism.k=2"}, "no K searched (2) runs at the stages searched (0, 1, 2, 3): stage 0, ZeRO++ and ep > 1 run K = 1 only; stack deepspeed runs stage 0 at K = 1"},
		{[]string{"plan", "default", "--format", "json", "--top", "3"}, "--top 3 applies to the table: --format json lists every configuration (drop --top)"},
		{[]string{"plan", "default", "--k", "2,2"}, "--k: 2 is given twice"},
		{[]string{"plan", "default", "--stages", "1", "--prefetch", "2"}, "--prefetch: no stage searched (1) prefetches: the prefetch depth is ZeRO-3's (add 3 to --stages, or drop --prefetch)"},
		{[]string{"plan", "default", "--stages", "3", "--bucket-sizes", "25MB"}, "--bucket-sizes: ZeRO-3 reduces one bucket per unit, and only stage 3 is searched"},
		{[]string{"plan", "default", "--set", "stack=megatron", "--prefetch", "2"}, "--prefetch: no stage searched (0, 1) prefetches"},
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

// TestPlanCPOutput: Llama 2 7B at 131,072 tokens on 2 × 8 H100 fits nothing
// at cp = 1 (ZeRO-3, full checkpointing) and plan suggests --cp, the
// activations being 94 % of the peak; with --cp the answer runs cp = 2,
// the table, CSV and JSON rows carry cp (and dp), and the degree that does
// not divide the 16 GPUs is named. Without --cp no row carries them.
func TestPlanCPOutput(t *testing.T) {
	base := []string{"plan", "default", "--set", "model.seq_len=131072", "--stages", "3", "--recompute", "full", "--prefetch", "1", "--algorithms", "ring"}
	for _, tc := range []struct {
		name     string
		args     []string
		want     []string
		not      []string
		rowKeys  bool // JSON rows and the CSV header have cp and dp
		skipJSON bool
	}{
		{"no cp searched", base, []string{"fits:  no", "context parallelism (the activations are 94 % of that peak by the memory model",
			"search it: --cp 1,2,4,8)"}, []string{"│ cp │"}, false, true},
		{"cp searched", append(slices.Clone(base), "--cp", "1,2,3,4,8"), []string{
			"(context parallelism 1, 2, 3, 4, 8 on the 16 GPUs)",
			"note:  context-parallel degrees without a configuration to run: cp=3: the 16 GPUs do not split into rings of 3",
			"run:   ZeRO stage 3 with hybrid shard (HSDP: 2 replicas of 8-GPU shards), context parallelism 2 (ring attention, dp",
			"│ cp │", "cp: context parallelism: ring attention over cp GPUs"}, []string{"search it: --cp"}, true, false},
		{"a short sequence, no cp", []string{"plan", "default", "--stages", "1", "--recompute", "none", "--algorithms", "ring"}, nil,
			[]string{"│ cp │", "context parallelism"}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := sweepCLI(t, tc.args...)
			if want := map[bool]int{false: 0, true: 1}[strings.Contains(out, "fits:  no")]; code != want {
				t.Fatalf("exit %d, want %d: %s", code, want, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(out, w) {
					t.Errorf("output has %q:\n%s", w, out)
				}
			}
			if tc.skipJSON {
				return
			}
			js, _, _ := sweepCLI(t, append(slices.Clone(tc.args), "--format", "json")...)
			var plan struct {
				Rows []map[string]any `json:"rows"`
			}
			if err := json.Unmarshal([]byte(js), &plan); err != nil || len(plan.Rows) == 0 {
				t.Fatalf("plan JSON: %v, %d rows", err, len(plan.Rows))
			}
			csvOut, _, _ := sweepCLI(t, append(slices.Clone(tc.args), "--format", "csv")...)
			header, _, _ := strings.Cut(csvOut, "\n")
			for _, r := range plan.Rows {
				_, cp := r["cp"]
				_, dp := r["dp"]
				if cp != tc.rowKeys || dp != tc.rowKeys || strings.HasPrefix(header, "rank,cp,dp,") != tc.rowKeys {
					t.Fatalf("row %v, CSV header %q: want cp and dp %v", r, header, tc.rowKeys)
				}
			}
		})
	}
	help, _, _ := sweepCLI(t, "plan", "--help")
	if !strings.Contains(help, "--cp ints") || !strings.Contains(help, "context-parallel degrees searched") {
		t.Errorf("plan --help does not document --cp:\n%s", help)
	}
}

// TestPlanWidth: on 16,384 GPUs, where the busiest GPU's network bytes
// reach 126 GiB and the search counts run to six digits, the plan's lines
// stay within 120 columns with and without --cp (its cp column takes the
// place of "free"; the network column drops its decimals from 100 GiB on;
// the summary wraps).
func TestPlanWidth(t *testing.T) {
	for _, extra := range [][]string{nil, {"--cp", "1,2"}} {
		args := append([]string{"plan", "gpt3-175b-16k", "--stages", "1,3", "--recompute", "full"}, extra...)
		out, errOut, code := sweepCLI(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, code, errOut)
		}
		for i, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
			if n := utf8.RuneCountInString(l); n > 120 {
				t.Errorf("%v: line %d has %d columns: %s", extra, i+1, n, l)
			}
		}
		if !strings.Contains(out, "126 GiB") {
			t.Errorf("%v: no 126 GiB network figure:\n%s", extra, out)
		}
	}
}

// TestPlanDevicePeak: plan's winner carries the device peak zerosim run
// reports for the same configuration (plan.json device_peak_bytes equals
// run --format json's device_peak_bytes). The rows whose device peak fits
// the GPU rank first; the summary names the fastest that does not, when
// it is faster than the winner (llama2-13b-a100-eth: HSDP K=4, 34.3 GiB
// allocated, 40.5 GiB on the device of 40), not when there is none
// (default: H100-80GB).
func TestPlanDevicePeak(t *testing.T) {
	for _, tc := range []struct {
		scenario string
		warns    bool
	}{
		{"llama2-13b-a100-eth", true},
		{"default", false},
	} {
		dir := t.TempDir()
		out, errOut, code := sweepCLI(t, "plan", tc.scenario, "-o", dir)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.scenario, code, errOut)
		}
		data, err := os.ReadFile(filepath.Join(dir, "plan.json"))
		if err != nil {
			t.Fatal(err)
		}
		// Numbers as json.Number, as planSets reads them (exact bytes).
		var plan struct {
			GPUMemory json.Number      `json:"gpu_memory_bytes"`
			Rows      []map[string]any `json:"rows"`
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(&plan); err != nil {
			t.Fatal(err)
		}
		rows := plan.Rows
		if len(rows) == 0 {
			t.Fatalf("%s: no rows", tc.scenario)
		}
		// The winner as run's --set flags.
		args := []string{"run", tc.scenario, "--format", "json"}
		for _, set := range planSets(t, rows[0]) {
			args = append(args, "--set", set)
		}
		runOut, errOut, code := sweepCLI(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		var run struct {
			DevicePeak int64 `json:"device_peak_bytes"`
		}
		if err := json.Unmarshal([]byte(runOut), &run); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(rows[0]["device_peak_bytes"]); run.DevicePeak == 0 || got != strconv.FormatInt(run.DevicePeak, 10) {
			t.Errorf("%s: plan's winner device peak %s B, run's %d B (%v)", tc.scenario, got, run.DevicePeak, args)
		}
		num := func(v any) float64 {
			if v == nil {
				return 0
			}
			f, err := strconv.ParseFloat(fmt.Sprint(v), 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
		gib := func(v any) string { return fmt.Sprintf("%.1f", num(v)/(1<<30)) }
		// A row has room when its device peak fits the GPU and the
		// simulated allocator does not retry.
		room := func(r map[string]any) bool {
			return num(r["device_peak_bytes"]) <= num(plan.GPUMemory) && num(r["allocator_retries"]) == 0
		}
		// QA34 M2: the rows with room rank first, so the winner (and its
		// reproduce line) has room; the others follow, fastest first.
		for i := 1; i < len(rows); i++ {
			if room(rows[i]) && !room(rows[i-1]) {
				t.Errorf("%s: row #%d has room and ranks after #%d, which has none", tc.scenario, i+1, i)
			}
		}
		want := ""
		for i, r := range rows {
			if !room(r) && num(r["tokens_per_s_per_gpu"]) > num(rows[0]["tokens_per_s_per_gpu"]) {
				// The gives line names the fastest row without room and
				// how much faster it is; docs/sweeps.md quotes it with its
				// two peaks.
				faster := fmt.Sprintf("#%d is %.1f %% faster", i+1, 100*(num(r["tokens_per_s_per_gpu"])/num(rows[0]["tokens_per_s_per_gpu"])-1))
				want = "; " + faster + " but needs allocator retries"
				golden.CheckQuotes(t, "../../docs/sweeps.md", "plan "+tc.scenario,
					fmt.Sprintf("its %s: it needs %s GiB allocated of 40 and %s GiB on the device", faster, gib(r["peak_memory_bytes"]), gib(r["device_peak_bytes"])))
				break
			}
		}
		if (want != "") != tc.warns {
			t.Errorf("%s: a faster row without room %q, want one %t", tc.scenario, want, tc.warns)
		}
		if got := strings.Join(strings.Fields(out), " "); !strings.Contains(got, want) || strings.Contains(got, "expect retries") {
			t.Errorf("%s: want the gives line to end %q, and no \"expect retries\" (the winner has room):\n%s", tc.scenario, want, out)
		}
	}
}

// TestPlanGC: plan raises the collector's target to planGCPercent while it
// searches and restores the former one after; a GOGC in the environment
// is left as it is. It sets the soft memory limit to planMemoryLimit the
// same way, unless GOMEMLIMIT is set or GOGC turns the collector off (QA
// s28 M2: 1.6 GB of RSS at GA 256).
func TestPlanGC(t *testing.T) {
	gcPercent := func() int {
		p := debug.SetGCPercent(100)
		debug.SetGCPercent(p)
		return p
	}
	memLimit := func() int64 { return debug.SetMemoryLimit(-1) } // -1 reads it
	defer debug.SetGCPercent(debug.SetGCPercent(77))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(3 << 30))
	for _, tc := range []struct {
		name, gogc, gomemlimit string
		during                 int
		limit                  int64
	}{
		{"no GOGC", "", "", planGCPercent, planMemoryLimit},
		{"GOGC=50", "50", "", 77, planMemoryLimit},
		{"GOMEMLIMIT=2GiB", "", "2GiB", planGCPercent, 3 << 30},
		// The collector off: a memory limit would collect all the same.
		{"GOGC=off", "off", "", 77, 3 << 30},
		{"GOGC=-1", "-1", "", 77, 3 << 30},
	} {
		t.Setenv("GOGC", tc.gogc)
		t.Setenv("GOMEMLIMIT", tc.gomemlimit)
		restore := planGC()
		if got := gcPercent(); got != tc.during {
			t.Errorf("%s: GC percent %d while planning, want %d", tc.name, got, tc.during)
		}
		if got := memLimit(); got != tc.limit {
			t.Errorf("%s: memory limit %d while planning, want %d", tc.name, got, tc.limit)
		}
		restore()
		if got := gcPercent(); got != 77 {
			t.Errorf("%s: GC percent %d after, want the former 77", tc.name, got)
		}
		if got := memLimit(); got != 3<<30 {
			t.Errorf("%s: memory limit %d after, want the former 3 GiB", tc.name, got)
		}
	}
}

// TestPlanBoundRows: plan searches auto alone by default (what a run does);
// asked for, ring rows are marked ‡ as alpha–beta bounds with a legend
// line, and a ring winner gets a bound: line naming the fastest auto row.
// On the README's llama2-13b-a100-eth at stage 3 with full checkpointing,
// prefetch 2 and HSDP K=4, ring's first row with room (micro-batch 2 × 2)
// beats the same row under auto, which ranks 2nd; the table's tokens/s and
// the bound line's gap are worked from the two rows' steps (micro-batch ×
// accumulation × dp 32 × 4,096 tokens over 32 GPUs).
func TestPlanBoundRows(t *testing.T) {
	out, errOut, code := sweepCLI(t, "plan", "llama2-13b-a100-eth", "--stages", "3", "--recompute", "full", "--prefetch", "2", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var p struct {
		Rows []struct {
			Algorithm string `json:"algorithm"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	for _, r := range p.Rows {
		if r.Algorithm != "auto" {
			t.Errorf("default search: a row with algorithm %q", r.Algorithm)
		}
	}
	if len(p.Rows) == 0 {
		t.Fatal("default search: no rows")
	}
	args := []string{"plan", "llama2-13b-a100-eth", "--stages", "3", "--recompute", "full", "--prefetch", "2", "--k", "4", "--algorithms", "auto,ring"}
	out, errOut, code = sweepCLI(t, append(args, "--format", "json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var both struct {
		Rows []struct {
			Algorithm string  `json:"algorithm"`
			K         int     `json:"k"`
			Micro     int     `json:"micro_batch"`
			Accum     int     `json:"grad_accum"`
			Step      int64   `json:"step_time_ps"`
			TPS       float64 `json:"tokens_per_s_per_gpu"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &both); err != nil {
		t.Fatal(err)
	}
	if len(both.Rows) < 2 {
		t.Fatalf("%d rows", len(both.Rows))
	}
	tps := make([]string, 2)
	for i, r := range both.Rows[:2] {
		want := float64(r.Micro*r.Accum*32*4096) / (float64(r.Step) / 1e12) / 32
		if r.K != 4 || r.Micro != 2 || r.Accum != 2 || math.Abs(r.TPS-want) > 1e-9*want {
			t.Errorf("row %d: K %d, micro-batch %d × %d, %.6f tokens/s per GPU; want K 4, micro-batch 2 × 2, %.6f from its step", i+1, r.K, r.Micro, r.Accum, r.TPS, want)
		}
		tps[i] = reports.Commas(int64(math.Round(r.TPS)))
	}
	if a, b := both.Rows[0], both.Rows[1]; a.Algorithm != "ring" || b.Algorithm != "auto" || a.Step >= b.Step {
		t.Fatalf("rows 1, 2: %s at %d ps, %s at %d ps; want ring ahead of auto", a.Algorithm, a.Step, b.Algorithm, b.Step)
	}
	slower := fmt.Sprintf("%.1f", 100*(1-both.Rows[1].TPS/both.Rows[0].TPS))
	out, errOut, code = sweepCLI(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{
		"bound: alphabeta-ring collectives are timed by zerosim's alpha–beta lowering at the links' full speed, a bound that no NCCL setting reproduces for reduce-scatter and all-gather; auto is what a run does; the fastest auto row is #2, " + tps[1] + " tokens/s per GPU (" + slower + " % slower)",
		"│ 1*‡ │ 3 │ 4 HSDP │ 2×2 │ full │ pf 2 │ " + tps[0] + " │",
		"│ 2 │ 3 │ 4 HSDP │ 2×2 │ full │ pf 2 │ " + tps[1] + " │",
		"‡: the row's algorithm (alphabeta-ring) is timed by zerosim's alpha–beta lowering",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
}

// TestPlanDeviceDagger: the table's free column, the GPU's memory less the
// device peak, carries † on exactly the
// rows whose device peak (the caching allocator's reserve on top, run's
// "expect allocator retries") exceeds the GPU, with the legend saying
// what it means, and those rows rank after the others (QA34 M2). On
// llama2-13b-a100-eth (A100-40GB) the fastest row, HSDP K=4, needs 40.5
// GiB on the device: marked, and listed after K=1's rows (--top 30).
func TestPlanDeviceDagger(t *testing.T) {
	dir := t.TempDir()
	out, errOut, code := sweepCLI(t, "plan", "llama2-13b-a100-eth", "--top", "30", "-o", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	data, err := os.ReadFile(filepath.Join(dir, "plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		GPUMemory int64 `json:"gpu_memory_bytes"`
		Rows      []struct {
			DevicePeak int64 `json:"device_peak_bytes"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`^│ *(\d+)\*? *│.*│ *(-?[0-9.]+) GiB(†?) *│[^│]*│[^│]*│$`)
	marked, seen := 0, 0
	for _, l := range strings.Split(out, "\n") {
		m := row.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		seen++
		i, _ := strconv.Atoi(m[1])
		over := p.Rows[i-1].DevicePeak > p.GPUMemory
		// qauser29 #8: free is the GPU's memory less the device peak
		// (nvidia-smi's view, run's "device" figure), negative on † rows.
		free, _ := strconv.ParseFloat(m[2], 64)
		if want := float64(p.GPUMemory-p.Rows[i-1].DevicePeak) / (1 << 30); math.Abs(free-want) > 0.051 {
			t.Errorf("#%d: free %s GiB, want GPU − device peak = %.2f GiB", i, m[2], want)
		}
		if over != (m[3] == "†") {
			t.Errorf("#%d: device peak %d of %d, free %q%s", i, p.Rows[i-1].DevicePeak, p.GPUMemory, m[2], m[3])
		}
		if over {
			marked++
		} else if marked > 0 {
			t.Errorf("#%d has room and is listed after a row marked †", i)
		}
	}
	if seen < 11 || marked == 0 || marked == seen {
		t.Errorf("%d rows read, %d marked: want more than 10 with some marked and some not:\n%s", seen, marked, out)
	}
	if !strings.Contains(strings.Join(strings.Fields(out), " "), "free: GPU memory less the device peak (nvidia-smi's, with the reserve); †: the reserve does not fit: retries (ranked after the rows with room).") {
		t.Errorf("no † legend:\n%s", out)
	}
}

// TestPlanRecomputeOp: --recompute takes op (torchtitan's selective AC
// with selective_ac_option "op"), a training.recompute value plan refused.
func TestPlanRecomputeOp(t *testing.T) {
	out, errOut, code := sweepCLI(t, "plan", "default", "--stages", "3", "--recompute", "op,full", "--prefetch", "1", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var p struct {
		Rows []struct {
			Recompute string `json:"recompute"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(p.Rows, func(r struct {
		Recompute string `json:"recompute"`
	}) bool {
		return r.Recompute == "op"
	}) {
		t.Errorf("no op row in %d rows", len(p.Rows))
	}
}

// TestPlanReproduce: plan prints the command that replays its winner, and
// that command's --set overrides, run through zerosim run, give the
// winner's step time to the picosecond and its device peak to the byte; plan.json
// and manifest.json carry the same command with the version, the
// scenario's SHA-256, the --set overrides and the lists searched (QA7 F5).
// On llama2-13b-a100-eth under --set stack=torchtitan, whose winner sets
// seven keys the file does not have.
func TestPlanReproduce(t *testing.T) {
	dir := t.TempDir()
	out, errOut, code := sweepCLI(t, "plan", "llama2-13b-a100-eth", "--set", "stack=torchtitan", "-o", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// The reproduce: lines, continued with " \".
	var cmdline string
	in := false
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "reproduce: "):
			in, cmdline = true, strings.TrimPrefix(l, "reproduce: ")
		case in && strings.HasPrefix(l, "           "):
			cmdline += " " + strings.TrimSpace(l)
		default:
			in = false
		}
	}
	cmdline = strings.ReplaceAll(cmdline, " \\ ", " ")
	words := strings.Fields(cmdline)
	if len(words) < 5 || words[0] != "zerosim" || words[1] != "run" || words[2] != "llama2-13b-a100-eth.yaml" || words[3] != "--set" || words[4] != "stack=torchtitan" {
		t.Fatalf("reproduce: %q in:\n%s", cmdline, out)
	}
	data, err := os.ReadFile(filepath.Join(dir, "plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Zerosim struct {
			Version string `json:"version"`
		} `json:"zerosim"`
		SHA256        string   `json:"scenario_sha256"`
		Sets          []string `json:"sets"`
		Reproduce     string   `json:"reproduce"`
		ReproduceSets []string `json:"reproduce_sets"`
		SearchedK     []int    `json:"searched_k"`
		Algorithms    []string `json:"searched_algorithms"`
		Rows          []struct {
			StepTime   int64 `json:"step_time_ps"`
			DevicePeak int64 `json:"device_peak_bytes"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	if p.Reproduce != strings.Join(words, " ") || p.Zerosim.Version == "" || len(p.SHA256) != 64 || !slices.Equal(p.Sets, []string{"stack=torchtitan"}) ||
		!slices.Equal(p.SearchedK, []int{1, 2, 4, 8, 16, 32}) || !slices.Equal(p.Algorithms, []string{"auto"}) {
		t.Errorf("plan.json: reproduce %q (printed %q), zerosim %q, sha256 %q, sets %q, K %v, algorithms %q",
			p.Reproduce, strings.Join(words, " "), p.Zerosim.Version, p.SHA256, p.Sets, p.SearchedK, p.Algorithms)
	}
	var sets []string
	for i := 3; i+1 < len(words); i += 2 {
		if words[i] != "--set" {
			t.Fatalf("word %d of %q is not --set", i, cmdline)
		}
		sets = append(sets, words[i+1])
	}
	if !slices.Equal(sets, p.ReproduceSets) || len(sets) < 5 {
		t.Errorf("printed sets %q, plan.json's %q", sets, p.ReproduceSets)
	}
	runOut, errOut, code := sweepCLI(t, append(append([]string{}, words[1:]...), "--format", "json")...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", words, code, errOut)
	}
	var run struct {
		StepTime   int64 `json:"step_time_ps"`
		DevicePeak int64 `json:"device_peak_bytes"`
	}
	if err := json.Unmarshal([]byte(runOut), &run); err != nil {
		t.Fatal(err)
	}
	if run.StepTime == 0 || run.StepTime != p.Rows[0].StepTime || run.DevicePeak != p.Rows[0].DevicePeak {
		t.Errorf("run %v: step %d ps, device peak %d B; plan's winner %d ps, %d B", words, run.StepTime, run.DevicePeak, p.Rows[0].StepTime, p.Rows[0].DevicePeak)
	}
	var m struct {
		SHA256    string         `json:"scenario_sha256"`
		Sets      []string       `json:"sets"`
		Reproduce string         `json:"reproduce"`
		Searched  map[string]any `json:"searched"`
		Files     []any          `json:"files"`
	}
	data, err = os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err == nil {
		err = json.Unmarshal(data, &m)
	}
	if err != nil || m.SHA256 != p.SHA256 || m.Reproduce != p.Reproduce || !slices.Equal(m.Sets, p.Sets) || m.Searched["k"] == nil || len(m.Files) == 0 {
		t.Errorf("manifest.json (%v): %s", err, data)
	}
}

// TestPlanNodesToFitBatch: when the least node count that fits has a dp
// that does not split the plan's global batch, the suggestion says so and
// names a global batch that splits (QA7 F8: "37 nodes" for a global batch
// of 8, which plan then refused at 37 nodes). Llama 2 70B on one node of 8
// H100 with a global batch of 8 fits at 3 nodes, dp 24, 1 × 1 per GPU: 24
// sequences; that plan runs.
func TestPlanNodesToFitBatch(t *testing.T) {
	args := []string{"plan", "default", "--set", "model.preset=llama2-70b", "--set", "cluster.nodes=1", "--set", "parallelism.dp=8", "--stages", "3", "--recompute", "full", "--prefetch", "1"}
	out, _, code := sweepCLI(t, args...)
	want := "to fit: 3 nodes (the least that fit, 2 more) with a global batch that is a multiple of their dp 24, such as 24 sequences (1 × 1 per GPU: the plan's 8 does not split over them)"
	if code != 1 || !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
		t.Fatalf("exit %d, want 1 and %q in:\n%s", code, want, out)
	}
	args = append(args[:4:4], "--set", "cluster.nodes=3", "--set", "parallelism.dp=24", "--global-batch", "24", "--stages", "3", "--recompute", "full", "--prefetch", "1")
	if out, errOut, code := sweepCLI(t, args...); code != 0 || !strings.Contains(out, "fits: device ") { // 62.2 of 79.1 GiB: the device peak fits (884f0f88)
		t.Errorf("%v: exit %d: %s%s", args, code, errOut, out)
	}
}

// TestPlanRemovesStaleFiles: -o DIR holds one plan: a plan without
// --network removes the network plots an earlier plan with it wrote there,
// and says so (QA7 F12: they stayed beside the new files, unlisted).
func TestPlanRemovesStaleFiles(t *testing.T) {
	dir := t.TempDir()
	args := []string{"plan", "default", "--stages", "3", "--recompute", "full", "--prefetch", "1", "-o", dir}
	if _, errOut, code := sweepCLI(t, append(slices.Clone(args), "--network")...); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries { // every file plan writes is one it knows to remove
		if e.Name() != reports.ManifestName && !slices.Contains(reports.PlanFileNames, e.Name()) {
			t.Errorf("plan wrote %s, which reports.PlanFileNames lacks", e.Name())
		}
	}
	if len(entries) != len(reports.PlanFileNames)+1 {
		t.Errorf("%d files with --network, want all %d and the manifest", len(entries), len(reports.PlanFileNames))
	}
	other := filepath.Join(dir, "notes.txt") // not plan's: left alone
	if err := os.WriteFile(other, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := sweepCLI(t, args...)
	if code != 0 || !strings.Contains(errOut, "(removed an earlier plan's network.png, network.svg)") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, n := range []string{"network.png", "network.svg"} {
		if _, err := os.Stat(filepath.Join(dir, n)); !os.IsNotExist(err) {
			t.Errorf("%s: %v, want removed", n, err)
		}
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("a file plan does not write was removed: %v", err)
	}
	if err := reports.CheckManifest(dir); err != nil {
		t.Error(err)
	}
	// A network.png no plan wrote (no manifest lists it) stays (review
	// s18 B13: any file of that name went).
	mine := t.TempDir()
	if err := os.WriteFile(filepath.Join(mine, "network.png"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := sweepCLI(t, append(slices.Clone(args[:len(args)-1]), mine)...); code != 0 || strings.Contains(errOut, "removed") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if b, err := os.ReadFile(filepath.Join(mine, "network.png")); err != nil || string(b) != "mine" {
		t.Errorf("a network.png plan did not write: %q, %v; want it kept", b, err)
	}
}

// TestPlanCommColumn: the table's comm column tells apart rows that differ
// only in prefetch depth or bucket size (QA7 F9: #1 and #3 of a plan read
// the same in every column but peak and free). On llama2-13b-a100-eth #1
// and #2 are K=1, 4×1, full, at prefetch 2 and 1 (plan.json's
// prefetch_depth), and a stage-2 row names its bucket.
func TestPlanCommColumn(t *testing.T) {
	out, errOut, code := sweepCLI(t, "plan", "llama2-13b-a100-eth")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{"│ 1* │ 3 │ 1 │ 4×1 │ full │ pf 2 │", "│ 2* │ 3 │ 1 │ 4×1 │ full │ pf 1 │", "│ 9 │ 2 │ 1 │ 1×4 │ full │ 200MB │",
		"comm: bucket size, or pf: prefetch."} {
		if !strings.Contains(flat, want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
}

// TestPlanNetworkStackStages: --network times only the stages plan
// searched: under stack megatron ZeRO 0 and 1, not 2 and 3 (it timed the
// file's layout at those, which Megatron does not run).
func TestPlanNetworkStackStages(t *testing.T) {
	out, errOut, code := sweepCLI(t, "plan", "default", "--set", "stack=megatron", "--recompute", "full", "--network", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var p struct {
		Network struct {
			Stages []struct {
				Stage int `json:"stage"`
			} `json:"stages"`
		} `json:"network"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, s := range p.Network.Stages {
		got = append(got, s.Stage)
	}
	if !slices.Equal(got, []int{0, 1}) {
		t.Errorf("--network stages %v, want 0, 1", got)
	}
}

// TestPlanRequireDeviceFit: --require-device-fit ranks only the rows whose
// device peak fits the GPU (QA7 F3's --require-device-fit): the default
// ranking less its † rows, which it ranks last (QA34 M2), in the same
// order. On llama2-13b-a100-eth both pick K=1 at the same tokens/s, and
// the default lists the faster HSDP K=4 rows (a device peak of 40.5 GiB
// on the A100-40GB's 39.39 GiB usable) after it.
func TestPlanRequireDeviceFit(t *testing.T) {
	type rowT struct {
		K          int     `json:"k"`
		Micro      int     `json:"micro_batch"`
		Accum      int     `json:"grad_accum"`
		Prefetch   int     `json:"prefetch_depth"`
		Bucket     int64   `json:"bucket_size_bytes"`
		Stage      int     `json:"zero_stage"`
		Recompute  string  `json:"recompute"`
		Step       int64   `json:"step_time_ps"`
		DevicePeak int64   `json:"device_peak_bytes"`
		TPS        float64 `json:"tokens_per_s_per_gpu"`
	}
	type plan struct {
		GPUMemory int64  `json:"gpu_memory_bytes"`
		Require   bool   `json:"require_device_fit"`
		Rows      []rowT `json:"rows"`
	}
	var all, room plan
	for _, c := range []struct {
		p    *plan
		args []string
	}{{&all, nil}, {&room, []string{"--require-device-fit"}}} {
		out, errOut, code := sweepCLI(t, append([]string{"plan", "llama2-13b-a100-eth", "--format", "json"}, c.args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errOut)
		}
		if err := json.Unmarshal([]byte(out), c.p); err != nil {
			t.Fatal(err)
		}
	}
	if !room.Require || all.Require || len(room.Rows) == 0 || len(room.Rows) >= len(all.Rows) {
		t.Fatalf("require_device_fit %v/%v; %d rows of %d", all.Require, room.Require, len(room.Rows), len(all.Rows))
	}
	for _, r := range room.Rows {
		if r.DevicePeak > room.GPUMemory {
			t.Errorf("a row over the device: %d of %d", r.DevicePeak, room.GPUMemory)
		}
	}
	if head, tail := all.Rows[:len(room.Rows)], all.Rows[len(room.Rows):]; !slices.Equal(head, room.Rows) ||
		slices.ContainsFunc(tail, func(r rowT) bool { return r.DevicePeak <= all.GPUMemory }) {
		t.Errorf("the default ranking does not start with --require-device-fit's %d rows and end with those over the device", len(room.Rows))
	}
	if w, fast := room.Rows[0], all.Rows[len(room.Rows)]; w.K != 1 || fast.K != 4 || fast.TPS <= w.TPS {
		t.Errorf("winner K=%d at %.3f tokens/s; the first row over the device K=%d at %.3f: want K=1, then a faster K=4", w.K, w.TPS, fast.K, fast.TPS)
	}
	// Its tokens/s from its step: micro-batch × accumulation × dp 32 ×
	// 4,096 tokens over 32 GPUs.
	if w := room.Rows[0]; w.Step <= 0 || math.Abs(w.TPS-float64(w.Micro*w.Accum*32*4096)/(float64(w.Step)/1e12)/32) > 1e-9*w.TPS {
		t.Errorf("winner: %.6f tokens/s per GPU from a %d ps step of micro-batch %d × %d", w.TPS, w.Step, w.Micro, w.Accum)
	}
	tps := commas(int64(math.Round(room.Rows[0].TPS)))
	golden.CheckQuotes(t, "../../docs/sweeps.md", "TestPlanRequireDeviceFit (plan llama2-13b-a100-eth --format json)",
		"picks K=1 at "+tps+" tokens/s per GPU",
		"the winner is the same K=1 row at "+tps+" tokens/s per GPU (`TestPlanRequireDeviceFit`).")
}

// TestPlanNoFitStagesTheStackRuns: plan's no-fit advice names only ZeRO
// stages the scenario's stack runs, and the --stages it gives runs (exit 1,
// nothing fits, not exit 2). Before, under stack megatron it advised
// "--stages 0,1,2,3", which plan refuses ("--stages 2: stack megatron does
// not run ZeRO stage 2", QA17 M4).
func TestPlanNoFitStagesTheStackRuns(t *testing.T) {
	base := []string{"plan", "../../docs/examples/llama-3.1-70b.yaml", "--set", "cluster.nodes=8", "--set", "parallelism.dp=64", "--global-batch", "512"}
	for _, c := range []struct {
		args         []string
		want, stages string
	}{
		{[]string{"--set", "stack=megatron"}, "ZeRO stage 3, which stack megatron does not run (it runs stages 0 and 1) and deepspeed, fms-fsdp, llm-foundry and torchtitan do (--set stack=deepspeed)", ""},
		{[]string{"--set", "stack=megatron", "--stages", "0"}, "ZeRO stage 1 (search it: --stages 0,1); or ZeRO stage 3, which stack megatron does not run", "0,1"},
		{[]string{"--set", "stack=torchtitan", "--stages", "0"}, "ZeRO stage 3 (search it: --stages 0,2,3)", "0,2,3"},
		{[]string{"--set", "stack=deepspeed", "--stages", "0,1"}, "ZeRO stage 3 (search it: --stages 0,1,2,3)", "0,1,2,3"},
		{[]string{"--stages", "0,1"}, "ZeRO stage 3 (search it: --stages 0,1,2,3)", "0,1,2,3"},
	} {
		args := append(append(slices.Clone(base), c.args...), "--micro-batches", "1", "--recompute", "full")
		out, errOut, code := sweepCLI(t, args...)
		flat := strings.Join(strings.Fields(out), " ")
		if code != 1 || !strings.Contains(flat, "to fit: "+c.want) {
			t.Errorf("%v: exit %d (%s), want to fit: %q in:\n%s", c.args, code, errOut, c.want, out)
			continue
		}
		if c.stages == "" {
			if strings.Contains(flat, "--stages") {
				t.Errorf("%v: advises --stages:\n%s", c.args, out)
			}
			continue
		}
		// The advice runs.
		again := slices.DeleteFunc(slices.Clone(args), func(a string) bool { return a == "--stages" || a == "0" || a == "0,1" })
		if _, errOut, code := sweepCLI(t, append(again, "--stages", c.stages)...); code == 2 {
			t.Errorf("%v: the advised --stages %s exits 2: %s", c.args, c.stages, errOut)
		}
	}
}

// TestPlanAllInvalidIsInputError (QA18 M1): when every configuration the
// memory model lets through fails as input (NCCL_ALGO=NVLS on A100s,
// which have no NVLS), plan says so with the first error and exits 2,
// instead of "no configuration fits" with a smallest peak under the GPU.
// The pin is now refused at load, at the --set, before any search (final
// read R2 F1: zero.CheckPins).
func TestPlanAllInvalidIsInputError(t *testing.T) {
	code, out, errOut := runMain(t, "", "plan", "--set", "communication.nccl_algo=NVLS", "--set", "cluster.gpu=A100-80GB", "--set", "cluster.intra.preset=NVLink3")
	if code != 2 || out != "" || !strings.HasPrefix(errOut, "zerosim: default.yaml: --set communication.nccl_algo=NVLS: communication.nccl_algo: the step's reduce-scatters: ") || !strings.Contains(errOut, "NCCL_ALGO was set to NVLS") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestPlanStackBucketWritten: a row whose gradient buckets the stack sets
// (torchtitan's stage 0 is DDP: replicate(bucket_cap_mb=100),
// parallelize.py:372 at 238fa99, 100 MiB = 104,857,600 B) writes the
// size it replayed in plan.csv and plan.json, not an empty cell; a scenario
// that sets its own size (default.yaml's 40 MB) replays and writes that.
func TestPlanStackBucketWritten(t *testing.T) {
	raw, ok := scenarios.Example("default")
	def := string(raw)
	if !ok || !strings.Contains(def, "  bucket_size: 40MB\n") {
		t.Fatal("default.yaml no longer sets bucket_size: 40MB")
	}
	write := fileWriter(t, t.TempDir())
	for _, c := range []struct {
		name, yaml string
		want       string
	}{
		{"stack.yaml", strings.Replace(def, "  bucket_size: 40MB\n", "", 1), "104857600"},
		{"file.yaml", def, "40000000"},
	} {
		dir := t.TempDir()
		_, errOut, code := sweepCLI(t, "plan", write(c.name, c.yaml), "--set", "stack=torchtitan", "--set", "model.preset=gpt3-1.3b", "--stages", "0", "-o", dir)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.name, code, errOut)
		}
		data, err := os.ReadFile(filepath.Join(dir, "plan.csv"))
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		b := slices.Index(recs[0], "bucket_size_bytes")
		if b < 0 || len(recs) < 2 {
			t.Fatalf("%s: plan.csv %q", c.name, recs)
		}
		for _, r := range recs[1:] {
			if r[b] != c.want {
				t.Errorf("%s: plan.csv bucket_size_bytes %q, want %s", c.name, r[b], c.want)
			}
		}
		var pj struct {
			Rows []struct {
				Bucket json.Number `json:"bucket_size_bytes"`
			} `json:"rows"`
		}
		if data, err = os.ReadFile(filepath.Join(dir, "plan.json")); err == nil {
			err = json.Unmarshal(data, &pj)
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range pj.Rows {
			if r.Bucket.String() != c.want {
				t.Errorf("%s: plan.json bucket_size_bytes %q, want %s", c.name, r.Bucket, c.want)
			}
		}
	}
}

// TestPlanOneStepUnderFMSFSDP: under stack fms-fsdp, whose train loop
// steps the optimizer after every batch (fms_fsdp/utils/train_utils.py
// at 078c29e), plan says on its stack: line that it searched one
// micro-step, and when nothing fits its advice starts from that: the
// default scenario's 2 nodes × 8 GPUs at a global batch of 2,048 give each
// GPU 2,048 / 16 = 128 sequences as one micro-batch.
func TestPlanOneStepUnderFMSFSDP(t *testing.T) {
	out, errOut, code := sweepCLI(t, "plan", "default", "--set", "stack=fms-fsdp", "--set", "model.preset=gpt3-1.3b", "--global-batch", "2048")
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{
		"hsdp); one micro-step per optimizer step (no gradient accumulation: fms_fsdp/utils/train_utils.py train at fms-fsdp 078c29e)",
		"to fit: fewer sequences per GPU: stack fms-fsdp has no gradient accumulation, so each GPU's 128 sequences are one micro-batch",
	} {
		if code != 1 || !strings.Contains(flat, want) {
			t.Errorf("exit %d (%s), want %q in:\n%s", code, errOut, want, out)
		}
	}
	// Context parallelism cannot help without accumulation: not advised.
	if strings.Contains(flat, "search it: --cp") {
		t.Errorf("advises --cp under fms-fsdp:\n%s", out)
	}
	// Under deepspeed, which accumulates, neither is said.
	out, _, _ = sweepCLI(t, "plan", "default", "--set", "stack=deepspeed", "--set", "model.preset=gpt3-1.3b", "--global-batch", "2048")
	if strings.Contains(out, "no gradient accumulation") {
		t.Errorf("deepspeed plan says no gradient accumulation:\n%s", out)
	}
}
