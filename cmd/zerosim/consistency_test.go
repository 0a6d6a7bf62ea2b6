package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/sweep"
)

// Cross-command consistency: plan, sweep, compare, fit and memory all end in
// zero.Replay or the memory model, and a user who takes one of their rows
// and re-runs it with `zerosim run --set …` must see the same figures. Every
// check here takes the configuration from the other command's JSON output
// (never typed by hand), re-runs it through `run --format json
// --require-fit` in process, and compares exact integers.
//
// Which memory figure is which. run, plan, sweep and compare replay the
// step and report its peak as run judges "fits in GPU memory" and
// --require-fit by: the largest per-rank peak of the replay
// (zero.Result.Peak: the memory model's events applied at simulated times,
// zero/memory.go memoryTimeline; run's memory.peak_bytes and
// ranks[].peak_memory_bytes). memory does not replay: it reports the
// memory model's peak (memory.EstimateStages), which run reports as
// memory_model.peak, so its are compared with that. fit replays every
// layout the model does not reject (sweep.FitSearch), so its peaks are run's
// replayed ones there and the model's where the model rejects the layout. The two differ when the replay's timing keeps
// more or fewer buffers alive at once than the model's sequential walk
// (seed000-k4 at ZeRO-3, K=1, whose reduce-scatters queue behind the
// all-gathers on the slow network: the replay peaks at 3,691,550,720 B, the
// model at 3,456,633,856 B; llama2-13b-a100-eth at ZeRO-3 with gradient
// accumulation: the replay lower by up to 1.2 GB). plan prunes with the
// model (a configuration it rejects is not replayed) and lists what fits by
// the replay, so its rows fit by both; when nothing fits, its suggestions
// (nodes_to_fit, offload_sets) are replayed too, as fit's least nodes and
// largest model are (TestFitAnswersRun).

// consistencyCases are the default scenario (`zerosim run` with no file)
// and three embedded examples: seed000-k4 (K=4, cp=2, a slow network),
// seed002-7b (ZeRO-3, a bare parameter count on 24 GiB GPUs) and
// llama2-13b-a100-eth (gradient accumulation 4, does not fit at its own
// ZeRO-1 on 39.39 GiB usable). Plans are narrowed by their flags and the grids are
// small so that the whole test stays fast.
var consistencyCases = []struct {
	name string
	// file is run's and memory's argument ("" runs the default scenario,
	// as `zerosim run` with no file); the other commands take name.
	file    string
	plan    []string
	grids   []string
	compare []string
}{
	{
		name: "default", file: "",
		// --global-batch 32 = dp 16 × 2 sequences: micro-batch 1 × accumulation 2 and 2 × 1.
		plan:    []string{"--global-batch", "32", "--stages", "1,3", "--recompute", "none", "--algorithms", "hierarchical", "--bucket-sizes", "25MB", "--prefetch", "2"},
		grids:   []string{"--grid", "parallelism.zero_stage=1,3", "--grid", "training.micro_batch=1,2"},
		compare: []string{"--vary", "parallelism.zero_stage=1,3"},
	},
	{
		name: "seed000-k4", file: "seed000-k4",
		// --network adds each stage's best configuration at other NIC
		// bandwidths (step-time curves).
		plan:  []string{"--global-batch", "8", "--stages", "1,3", "--recompute", "none", "--algorithms", "ring,hierarchical", "--bucket-sizes", "25MB", "--prefetch", "1", "--network"},
		grids: []string{"--grid", "parallelism.zero_stage=2,3", "--grid", "parallelism.k=1,4"},
		// K varies: the comparison adds the slow-link rows (ring and
		// hierarchical for each K).
		compare: []string{"--vary", "parallelism.k=1,4"},
	},
	{
		name: "seed002-7b", file: "seed002-7b",
		// No plan: plan refuses a bare parameter count, which counts no
		// activations (TestBareParamsSaysWhatItLeavesOut).
		grids:   []string{"--grid", "parallelism.k=1,8", "--grid", "communication.prefetch_depth=0,2"},
		compare: []string{"--zeropp"},
	},
	{
		name: "llama2-13b-a100-eth", file: "llama2-13b-a100-eth",
		plan:    []string{"--stages", "3", "--recompute", "full", "--algorithms", "ring", "--prefetch", "2"},
		grids:   []string{"--grid", "parallelism.zero_stage=1,3", "--grid", "training.grad_accum=1,4"},
		compare: []string{"--vary", "training.grad_accum=1,4", "--set", "parallelism.zero_stage=3"},
	},
}

// runFigures is what the checks read from `zerosim run --format json`
// (reports/json.go runJSON), and run's verdict.
type runFigures struct {
	Stage              int     `json:"stage"`
	N                  int     `json:"n"`
	K                  int     `json:"k"`
	StepTimePS         int64   `json:"step_time_ps"`
	ComputePS          int64   `json:"compute_ps"`
	TokensPerSecPerGPU float64 `json:"tokens_per_s_per_gpu"`
	MFU                float64 `json:"mfu"`
	Symmetric          bool    `json:"symmetric"`
	DeviceNeed         int64   `json:"device_need_bytes"`
	Ranks              []struct {
		ExposedCommPS int64 `json:"exposed_comm_ps"`
		PeakMemory    int64 `json:"peak_memory_bytes"`
	} `json:"ranks"`
	Phases []struct {
		Phase       string `json:"phase"`
		Collectives int    `json:"collectives"`
		Logical     int64  `json:"logical_bytes_per_rank"`
		Sent        int64  `json:"sent_bytes_per_rank"`
		Wire        []struct {
			Class   string `json:"class"`
			Total   int64  `json:"total_bytes"`
			Busiest int64  `json:"busiest_rank_bytes"`
		} `json:"wire"`
	} `json:"phases"`
	Totals struct {
		Wire []struct {
			Class string `json:"class"`
			Total int64  `json:"total_bytes"`
		} `json:"wire"`
	} `json:"totals"`
	Memory struct {
		Peak int64 `json:"peak_bytes"`
	} `json:"memory"`
	MemoryModel struct {
		Stage     int   `json:"stage"`
		K         int   `json:"k"`
		AtRest    int64 `json:"at_rest"`
		Peak      int64 `json:"peak"`
		GPUMemory int64 `json:"gpu_memory"`
		Fits      bool  `json:"fits"`
	} `json:"memory_model"`
	Resolved struct {
		Cluster struct {
			Inter struct {
				Bandwidth string `json:"bandwidth"`
			} `json:"inter"`
		} `json:"cluster"`
	} `json:"resolved_scenario"`
	// fits is run's verdict: --require-fit exits 0.
	fits bool
}

// replayPeak is the replay's peak as run's verdict reads it
// (zero.Result.Peak): the largest of the timeline's and every rank's.
func (r *runFigures) replayPeak() int64 {
	m := r.Memory.Peak
	for _, rk := range r.Ranks {
		m = max(m, rk.PeakMemory)
	}
	return m
}

// exposed is the busiest rank's exposed communication, as plan, sweep and
// compare report it.
func (r *runFigures) exposed() int64 {
	var m int64
	for _, rk := range r.Ranks {
		m = max(m, rk.ExposedCommPS)
	}
	return m
}

// wire is the step's wire bytes over every link of class (all ranks).
func (r *runFigures) wire(class string) int64 {
	for _, w := range r.Totals.Wire {
		if w.Class == class {
			return w.Total
		}
	}
	return -1
}

// busiest is the busiest rank's wire bytes of class summed over the phases
// (sweep.BusiestWire).
func (r *runFigures) busiest(class string) int64 {
	var t int64
	for _, p := range r.Phases {
		for _, w := range p.Wire {
			if w.Class == class {
				t += w.Busiest
			}
		}
	}
	return t
}

// reruns re-runs one scenario under --set overrides, each configuration
// once.
type reruns struct {
	file  string
	cache map[string]*runFigures
}

func (rr *reruns) args(sets []string) []string {
	args := []string{"run"}
	if rr.file != "" {
		args = append(args, rr.file)
	}
	args = append(args, "--format", "json", "--require-fit")
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	return args
}

// run is `zerosim run FILE --format json --require-fit --set …`: its
// figures, and its verdict from the exit code (1: does not fit).
func (rr *reruns) run(t *testing.T, sets ...string) *runFigures {
	t.Helper()
	key := strings.Join(sets, " ")
	if f, ok := rr.cache[key]; ok {
		return f
	}
	code, out, errOut := runMain(t, "", rr.args(sets)...)
	if code != 0 && (code != exitFailure || !strings.Contains(errOut, "--require-fit")) {
		t.Fatalf("run %s --set %v: exit %d: %s", rr.file, sets, code, errOut)
	}
	f := &runFigures{fits: code == 0}
	if err := json.Unmarshal([]byte(out), f); err != nil {
		t.Fatalf("run %s --set %v: %v", rr.file, sets, err)
	}
	rr.cache[key] = f
	return f
}

// cli runs a command that must succeed and returns its standard output.
func cli(t *testing.T, args ...string) []byte {
	t.Helper()
	code, out, errOut := runMain(t, "", args...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errOut)
	}
	return []byte(out)
}

// cliPlan runs zerosim plan --format json as cli does, where exit 1 is
// allowed for a plan with nothing that fits (and then only for it).
func cliPlan(t *testing.T, args ...string) []byte {
	t.Helper()
	code, out, errOut := runMain(t, "", args...)
	none := strings.Contains(out, `"rows": [],`)
	if code != 0 && !(code == 1 && none) || code == 0 && none {
		t.Fatalf("%v: exit %d (nothing fits: %v): %s", args, code, none, errOut)
	}
	return []byte(out)
}

// decode unmarshals a command's JSON output, numbers as json.Number.
func decode(t *testing.T, what string, data []byte, v any) {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		t.Fatalf("%s: %v\n%.2000s", what, err, data)
	}
}

// round3 rounds a rate to the 3 decimals result.json keeps (reports/json.go
// toJSON) and sweep rows too (sweep/format.go tokensPerSec); plan's rows
// keep the whole float.
func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// TestConsistency re-runs, for each scenario, every configuration that
// plan, sweep, fit, memory and compare report, through zerosim run.
func TestConsistency(t *testing.T) {
	for _, tc := range consistencyCases {
		t.Run(tc.name, func(t *testing.T) {
			rr := &reruns{file: tc.file, cache: map[string]*runFigures{}}
			if tc.plan != nil {
				t.Run("plan", func(t *testing.T) { checkPlan(t, rr, tc.name, tc.plan) })
			}
			t.Run("sweep", func(t *testing.T) { checkSweep(t, rr, tc.name, tc.grids) })
			t.Run("fit", func(t *testing.T) { checkFit(t, rr, tc.name) })
			t.Run("memory", func(t *testing.T) { checkMemory(t, rr) })
			t.Run("compare", func(t *testing.T) { checkCompare(t, rr, tc.name, tc.compare) })
		})
	}
}

// planRow is one row of `zerosim plan --format json` (reports/plan_json.go
// planRowJSON).
type planRow struct {
	Stage          int     `json:"zero_stage"`
	K              int     `json:"k"`
	StepTime       int64   `json:"step_time_ps"`
	Compute        int64   `json:"compute_ps"`
	ExposedComm    int64   `json:"exposed_comm_ps"`
	NetworkBytes   int64   `json:"network_bytes"`
	NVLinkBytes    int64   `json:"nvlink_bytes"`
	NetworkBusiest int64   `json:"network_busiest_bytes"`
	PeakMemory     int64   `json:"peak_memory_bytes"`
	Headroom       int64   `json:"headroom_bytes"`
	TokensPerSec   float64 `json:"tokens_per_s_per_gpu"`
	MFU            float64 `json:"mfu"`
}

// planSets turns one row of plan's JSON into run's --set overrides: the
// keys plan varies (sweep.PlanKeys) are spelt in a row by their last path
// element; a key the row leaves out (bucket_size_bytes at ZeRO-3, where buckets
// are per unit) or marks unused (prefetch_depth -1 at stages 0–2, see
// sweep.Candidate) is not set. cp and dp come first when the plan searched
// cp (sweep.PlanCPKeys), and only then.
func planSets(t *testing.T, row map[string]any) []string {
	t.Helper()
	var sets []string
	for _, key := range sweep.PlanCPKeys {
		if v, ok := row[key[strings.LastIndex(key, ".")+1:]]; ok {
			sets = append(sets, key+"="+fmt.Sprint(v))
		}
	}
	for _, key := range sweep.PlanKeys {
		field := key[strings.LastIndex(key, ".")+1:]
		unit := ""
		if field == "bucket_size" {
			field, unit = "bucket_size_bytes", "B" // bytes, as plan.csv
		}
		v, ok := row[field]
		if !ok {
			if field != "bucket_size_bytes" || fmt.Sprint(row["zero_stage"]) != "3" {
				t.Errorf("plan row %v has no %s", row, field)
			}
			continue
		}
		s := fmt.Sprint(v) + unit
		if n, isNum := v.(json.Number); isNum && strings.HasPrefix(n.String(), "-") {
			continue
		}
		sets = append(sets, key+"="+s)
	}
	return sets
}

// checkPlan: every row plan lists (the winner first) re-run gives the same
// step time, compute, exposed communication, wire bytes and peak, and fits.
func checkPlan(t *testing.T, rr *reruns, name string, flags []string) {
	out := cli(t, append([]string{"plan", name, "--format", "json"}, flags...)...)
	var plan struct {
		GPUMemory int64     `json:"gpu_memory_bytes"`
		Rows      []planRow `json:"rows"`
	}
	var raw struct {
		Rows         []map[string]any `json:"rows"`
		Smallest     map[string]any   `json:"smallest"`
		SmallestPeak int64            `json:"smallest_peak_bytes"`
		Network      *planNetwork     `json:"network"`
	}
	decode(t, "plan", out, &plan)
	decode(t, "plan", out, &raw)
	if len(plan.Rows) < 2 || len(raw.Rows) != len(plan.Rows) {
		t.Fatalf("plan %s %v: %d rows; want a winner and alternatives", name, flags, len(plan.Rows))
	}
	for i, p := range plan.Rows {
		sets := planSets(t, raw.Rows[i])
		r := rr.run(t, sets...)
		what := fmt.Sprintf("plan row %d %v", i, sets)
		if r.Stage != p.Stage || r.K != p.K {
			t.Errorf("%s: run replayed stage %d K=%d", what, r.Stage, r.K)
		}
		for _, c := range []struct {
			field     string
			plan, run int64
		}{
			{"step_time_ps", p.StepTime, r.StepTimePS},
			{"compute_ps", p.Compute, r.ComputePS},
			{"exposed_comm_ps", p.ExposedComm, r.exposed()},
			{"network_bytes", p.NetworkBytes, r.wire("network")},
			{"nvlink_bytes", p.NVLinkBytes, r.wire("nvlink")},
			{"network_busiest_bytes", p.NetworkBusiest, r.busiest("network")},
			{"peak_memory_bytes (the replay's)", p.PeakMemory, r.replayPeak()},
			{"headroom_bytes (gpu_memory - device need)", p.Headroom, r.MemoryModel.GPUMemory - r.DeviceNeed},
		} {
			if c.plan != c.run {
				t.Errorf("%s: plan %s %d, run %d", what, c.field, c.plan, c.run)
			}
		}
		if round3(p.TokensPerSec) != r.TokensPerSecPerGPU {
			t.Errorf("%s: plan tokens/s per GPU %v, run %v", what, p.TokensPerSec, r.TokensPerSecPerGPU)
		}
		// MFU: run's (zero.Utilization), also for models without
		// transformer dimensions (3× the forward FLOPs executed).
		if p.MFU != r.MFU {
			t.Errorf("%s: plan MFU %v, run %v", what, p.MFU, r.MFU)
		}
		// plan lists only what fits; run's two verdicts agree.
		if !r.MemoryModel.Fits || !r.fits {
			t.Errorf("%s: plan lists it as fitting; run: memory model fits %v, run --require-fit fits %v", what, r.MemoryModel.Fits, r.fits)
		}
	}
	// The configuration needing the least memory (what plan names when
	// nothing fits) peaks where run's memory model says, at its own
	// accumulation.
	sets := planSets(t, raw.Smallest)
	if r := rr.run(t, sets...); raw.SmallestPeak != r.MemoryModel.Peak {
		t.Errorf("plan smallest %v: smallest_peak_bytes %d, run's memory_model.peak %d", sets, raw.SmallestPeak, r.MemoryModel.Peak)
	}
	if slices.Contains(flags, "--network") != (raw.Network != nil) {
		t.Fatalf("plan %v: network section %v", flags, raw.Network != nil)
	}
	if raw.Network != nil {
		checkPlanNetwork(t, rr, raw.Rows, raw.Network)
	}
}

// planNetwork is plan --network's section (reports/plan_json.go
// networkPlanJSON).
type planNetwork struct {
	NominalPerGPU float64 `json:"nominal_per_gpu_bandwidth"`
	Stages        []struct {
		Stage        int            `json:"stage"`
		K            int            `json:"k"`
		Config       map[string]any `json:"config"`
		ComputeBound int64          `json:"compute_bound_ps"`
		Target       int64          `json:"target_ps"`
		NICBandwidth int64          `json:"nic_bandwidth"`
		Step         int64          `json:"step_ps"`
		NominalStep  int64          `json:"nominal_step_ps"`
		Curve        []struct {
			PerGPU float64 `json:"per_gpu_bandwidth"`
			Step   int64   `json:"step_ps"`
		} `json:"curve"`
	} `json:"stages"`
}

// checkPlanNetwork: each stage's configuration is the plan's fastest row of
// that stage; re-run at the scenario's bandwidth it takes the nominal step
// and its compute is the compute bound; at the NIC bandwidth found, and at
// the first, middle and last points of the curve (cluster.inter.bandwidth =
// the per-GPU bandwidth times the GPUs per NIC, the nominal ratio), it
// takes the step plan says.
func checkPlanNetwork(t *testing.T, rr *reruns, rows []map[string]any, n *planNetwork) {
	if len(n.Stages) == 0 {
		t.Fatal("plan --network: no stages")
	}
	for _, st := range n.Stages {
		sets := planSets(t, st.Config)
		best := slices.IndexFunc(rows, func(r map[string]any) bool { return fmt.Sprint(r["zero_stage"]) == strconv.Itoa(st.Stage) })
		if best < 0 || !slices.Equal(sets, planSets(t, rows[best])) {
			t.Errorf("plan --network stage %d: configuration %v is not the plan's fastest row of the stage", st.Stage, sets)
		}
		what := fmt.Sprintf("plan --network stage %d %v", st.Stage, sets)
		r := rr.run(t, sets...)
		if st.NominalStep != r.StepTimePS || st.ComputeBound != r.ComputePS || st.K != r.K {
			t.Errorf("%s: nominal step %d, compute bound %d, K=%d; run %d, %d, K=%d", what, st.NominalStep, st.ComputeBound, st.K, r.StepTimePS, r.ComputePS, r.K)
		}
		nominal, err := strconv.ParseInt(strings.TrimSuffix(r.Resolved.Cluster.Inter.Bandwidth, "B/s"), 10, 64)
		if err != nil || n.NominalPerGPU <= 0 {
			t.Fatalf("%s: nominal NIC bandwidth %q: %v", what, r.Resolved.Cluster.Inter.Bandwidth, err)
		}
		share := float64(nominal) / n.NominalPerGPU // GPUs per NIC
		at := func(nic int64) *runFigures {
			return rr.run(t, append(slices.Clone(sets), "cluster.inter.bandwidth="+strconv.FormatInt(nic, 10)+"B/s")...)
		}
		if st.NICBandwidth > 0 {
			if got := at(st.NICBandwidth).StepTimePS; got != st.Step || got > st.Target {
				t.Errorf("%s: at %d B/s per NIC plan says step %d (target %d), run %d", what, st.NICBandwidth, st.Step, st.Target, got)
			}
		}
		if len(st.Curve) < 2 {
			t.Errorf("%s: curve of %d points", what, len(st.Curve))
		}
		for _, i := range []int{0, len(st.Curve) / 2, len(st.Curve) - 1} {
			pt := st.Curve[i]
			nic := int64(math.Round(pt.PerGPU * share))
			if got := at(nic).StepTimePS; got != pt.Step {
				t.Errorf("%s: at %d B/s per NIC (%v per GPU) the curve says step %d, run %d", what, nic, pt.PerGPU, pt.Step, got)
			}
		}
	}
}

// checkSweep: every JSON Lines row of a small sweep equals run of its point.
func checkSweep(t *testing.T, rr *reruns, name string, grids []string) {
	out := cli(t, append([]string{"sweep", name, "--format", "json"}, grids...)...)
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	var meta struct {
		Sweep struct {
			Grids []string `json:"grids"`
		} `json:"zerosim_sweep"`
	}
	decode(t, "sweep meta line", []byte(lines[0]), &meta)
	// The point's keys in grid order, as the sweep applies them.
	var keys []string
	for _, g := range meta.Sweep.Grids {
		k, _, _ := strings.Cut(g, "=")
		keys = append(keys, k)
	}
	if len(keys) != len(grids)/2 || len(lines) < 3 {
		t.Fatalf("sweep %s %v: grids %v, %d lines", name, grids, meta.Sweep.Grids, len(lines))
	}
	for _, line := range lines[1:] {
		var row struct {
			Point        map[string]string `json:"point"`
			StepTime     int64             `json:"step_time_ps"`
			ExposedComm  int64             `json:"exposed_comm_ps"`
			NetworkBytes int64             `json:"network_bytes"`
			NVLinkBytes  int64             `json:"nvlink_bytes"`
			PeakMemory   int64             `json:"peak_memory_bytes"`
			TokensPerSec float64           `json:"tokens_per_s_per_gpu"`
			Fits         bool              `json:"fits"`
			Error        string            `json:"error"`
		}
		decode(t, "sweep row", []byte(line), &row)
		var sets []string
		for _, k := range keys {
			v, ok := row.Point[k]
			if !ok {
				t.Fatalf("sweep row %s lacks %s", line, k)
			}
			sets = append(sets, k+"="+v)
		}
		if row.Error != "" {
			t.Errorf("sweep %v: error row %q (the grids are meant to be valid)", sets, row.Error)
			continue
		}
		r := rr.run(t, sets...)
		what := fmt.Sprintf("sweep point %v", sets)
		for _, c := range []struct {
			field      string
			sweep, run int64
		}{
			{"step_time_ps", row.StepTime, r.StepTimePS},
			{"exposed_comm_ps", row.ExposedComm, r.exposed()},
			{"network_bytes", row.NetworkBytes, r.wire("network")},
			{"nvlink_bytes", row.NVLinkBytes, r.wire("nvlink")},
			{"peak_memory_bytes (the replay's)", row.PeakMemory, r.replayPeak()},
		} {
			if c.sweep != c.run {
				t.Errorf("%s: sweep %s %d, run %d", what, c.field, c.sweep, c.run)
			}
		}
		if row.TokensPerSec != r.TokensPerSecPerGPU {
			t.Errorf("%s: sweep tokens/s per GPU %v, run %v", what, row.TokensPerSec, r.TokensPerSecPerGPU)
		}
		if row.Fits != r.fits {
			t.Errorf("%s: sweep fits %v; run --require-fit %v", what, row.Fits, r.fits)
		}
	}
}

// memoryReport is one report of `zerosim memory --format json`'s reports
// (reports/memory_json.go memoryJSON).
type memoryReport struct {
	Stage     int   `json:"stage"`
	K         int   `json:"k"`
	AtRest    int64 `json:"at_rest"`
	Peak      int64 `json:"peak"`
	GPUMemory int64 `json:"gpu_memory"`
	Fits      bool  `json:"fits"`
}

// memoryReports runs `zerosim memory FILE --format json` with sets: the
// reports of stages 0–3, by stage.
func memoryReports(t *testing.T, file string, sets ...string) map[int]memoryReport {
	t.Helper()
	args := []string{"memory"}
	if file != "" {
		args = append(args, file)
	}
	args = append(args, "--format", "json")
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	var doc struct {
		Reports []memoryReport `json:"reports"`
	}
	decode(t, "memory", cli(t, args...), &doc)
	reps := doc.Reports
	out := map[int]memoryReport{}
	for _, m := range reps {
		out[m.Stage] = m
	}
	if len(out) != 4 || len(reps) != 4 {
		t.Fatalf("memory %v: stages %v, want 0–3 once each", sets, reps)
	}
	return out
}

// checkMemory: memory's report of each stage (the scenario's K) is run's
// memory model at that stage, and the scenario's own stage is run's
// without --set.
func checkMemory(t *testing.T, rr *reruns) {
	base := rr.run(t)
	reps := memoryReports(t, rr.file)
	for stage := range 4 {
		m := reps[stage]
		r := rr.run(t, "parallelism.zero_stage="+strconv.Itoa(stage), "parallelism.k="+strconv.Itoa(base.K))
		if m.K != r.MemoryModel.K || m.Peak != r.MemoryModel.Peak || m.AtRest != r.MemoryModel.AtRest || m.GPUMemory != r.MemoryModel.GPUMemory || m.Fits != r.MemoryModel.Fits {
			t.Errorf("memory stage %d: K=%d peak %d at rest %d of %d fits %v; run: K=%d %d %d of %d %v", stage, m.K, m.Peak, m.AtRest, m.GPUMemory, m.Fits,
				r.MemoryModel.K, r.MemoryModel.Peak, r.MemoryModel.AtRest, r.MemoryModel.GPUMemory, r.MemoryModel.Fits)
		}
		if m.Fits != r.fits {
			t.Errorf("memory stage %d: fits %v; run --require-fit %v", stage, m.Fits, r.fits)
		}
		if stage == base.Stage && (m.Peak != base.MemoryModel.Peak || m.Fits != base.fits) {
			t.Errorf("memory stage %d (the scenario's): peak %d fits %v; run without --set: %d, --require-fit %v", stage, m.Peak, m.Fits, base.MemoryModel.Peak, base.fits)
		}
	}
}

// checkFit: fit's row for every stage and K has memory's at-rest bytes at
// that K (the same model), and, where the model rejects the layout (not
// replayed), memory's peak and "no". The rows of K=1 and of the scenario's K
// are re-run: a replayed row's peak is run's replayed peak and its fits is
// run --require-fit's verdict; a row the model rejects has run's model peak
// and run rejects it too (re-running every K dividing N would repeat
// memory's check at the cost of a replay each).
func checkFit(t *testing.T, rr *reruns, name string) {
	var fit struct {
		GPUMemory int64 `json:"gpu_memory_bytes"`
		Replayed  bool  `json:"replayed"`
		Rows      []struct {
			Stage        int   `json:"stage"`
			K            int   `json:"k"`
			Peak         int64 `json:"peak_bytes"`
			AtRest       int64 `json:"at_rest_bytes"`
			Fits         bool  `json:"fits"`
			PeakReplayed bool  `json:"peak_replayed"`
		} `json:"rows"`
	}
	decode(t, "fit", cli(t, "fit", name, "--format", "json"), &fit)
	if !fit.Replayed {
		t.Errorf("fit %s: not replayed under zerosim's convention", name)
	}
	base := rr.run(t)
	mem := map[int]map[int]memoryReport{} // K → stage → report
	var own, rerun int
	for _, f := range fit.Rows {
		what := fmt.Sprintf("fit stage %d K=%d", f.Stage, f.K)
		if f.Fits != (f.Peak <= fit.GPUMemory) {
			t.Errorf("%s: fits %v with peak %d of %d B", what, f.Fits, f.Peak, fit.GPUMemory)
		}
		if mem[f.K] == nil {
			mem[f.K] = memoryReports(t, rr.file, "parallelism.k="+strconv.Itoa(f.K))
		}
		m := mem[f.K][f.Stage]
		// A layout the model fits is replayed unless its ranks differ
		// (checked against run's symmetric flag below); one not replayed
		// has the model's peak and verdict.
		if f.AtRest != m.AtRest || fit.GPUMemory != m.GPUMemory || f.PeakReplayed && !m.Fits || !f.PeakReplayed && (f.Peak != m.Peak || f.Fits != m.Fits) {
			t.Errorf("%s: fit peak %d (replayed %v) at rest %d fits %v of %d B; memory --set parallelism.k=%d: %d, %d, %v of %d B", what, f.Peak, f.PeakReplayed,
				f.AtRest, f.Fits, fit.GPUMemory, f.K, m.Peak, m.AtRest, m.Fits, m.GPUMemory)
		}
		if f.K != 1 && f.K != base.K {
			continue
		}
		rerun++
		r := rr.run(t, "parallelism.zero_stage="+strconv.Itoa(f.Stage), "parallelism.k="+strconv.Itoa(f.K))
		if f.PeakReplayed != (m.Fits && r.Symmetric) {
			t.Errorf("%s: fit replayed %v; the model fits %v, run's layout symmetric %v", what, f.PeakReplayed, m.Fits, r.Symmetric)
		}
		want := r.MemoryModel.Peak
		if f.PeakReplayed {
			want = r.replayPeak()
		}
		if f.Peak != want || f.AtRest != r.MemoryModel.AtRest || fit.GPUMemory != r.MemoryModel.GPUMemory {
			t.Errorf("%s: fit peak %d (replayed %v) at rest %d of %d B; run: replayed peak %d, memory model %d, %d of %d B", what, f.Peak, f.PeakReplayed,
				f.AtRest, fit.GPUMemory, r.replayPeak(), r.MemoryModel.Peak, r.MemoryModel.AtRest, r.MemoryModel.GPUMemory)
		}
		if (f.PeakReplayed || !m.Fits) && f.Fits != r.fits {
			t.Errorf("%s: fit says fits %v; run --require-fit %v", what, f.Fits, r.fits)
		}
		if f.Stage == base.Stage && f.K == base.K {
			own++
			if f.Fits != base.fits || f.PeakReplayed && f.Peak != base.replayPeak() {
				t.Errorf("%s (the scenario's own): fit peak %d fits %v; run without --set %d fits %v", what, f.Peak, f.Fits, base.replayPeak(), base.fits)
			}
		}
	}
	if own != 1 || rerun < 4 {
		t.Errorf("fit: %d rows of the scenario's stage %d and K=%d (want 1), %d re-run", own, base.Stage, base.K, rerun)
	}
}

// checkCompare: each variant of compare --format json (its --set list from
// the JSON, after compare's own --set flags) equals run of that variant,
// phase by phase; each slow-link row equals run of its K's variant with its
// algorithm. A variant's file names an embedded example NAME.yaml, which
// run does not read as a path (scenarios.ReadInput), so the re-runs take the
// scenario compare was given.
func checkCompare(t *testing.T, rr *reruns, name string, flags []string) {
	var global []string // compare's own --set flags apply to every variant
	for i := 0; i+1 < len(flags); i++ {
		if flags[i] == "--set" {
			global = append(global, flags[i+1])
		}
	}
	var c struct {
		Variants []struct {
			Label         string   `json:"label"`
			File          string   `json:"file"`
			Sets          []string `json:"sets"`
			Stage         int      `json:"stage"`
			N             int      `json:"n"`
			K             int      `json:"k"`
			StepTimePS    int64    `json:"step_time_ps"`
			ComputePS     int64    `json:"compute_ps"`
			ExposedCommPS int64    `json:"exposed_comm_ps"`
			Phases        []struct {
				Phase   string `json:"phase"`
				Logical int64  `json:"logical_bytes"`
				Sent    int64  `json:"sent_bytes"`
				Classes []struct {
					Class   string `json:"class"`
					Total   int64  `json:"total_bytes"`
					Busiest int64  `json:"busiest_rank_bytes"`
				} `json:"classes"`
			} `json:"phases"`
			PeakMemory   int64   `json:"peak_memory_bytes"`
			AtRestMemory int64   `json:"at_rest_memory_bytes"`
			GPUMemory    int64   `json:"gpu_memory_bytes"`
			Fits         bool    `json:"fits"`
			TokensPerSec float64 `json:"tokens_per_s_per_gpu"`
		} `json:"variants"`
		SlowLink *struct {
			Rows []struct {
				K              int    `json:"k"`
				Algorithm      string `json:"algorithm"`
				NetworkBusiest int64  `json:"network_busiest_bytes"`
				NetworkTotal   int64  `json:"network_total_bytes"`
				NVLinkTotal    int64  `json:"nvlink_total_bytes"`
				StepTimePS     int64  `json:"step_time_ps"`
				PeakMemory     int64  `json:"peak_memory_bytes"`
				Fits           bool   `json:"fits"`
			} `json:"rows"`
		} `json:"slow_link"`
	}
	decode(t, "compare", cli(t, append([]string{"compare", name, "--format", "json"}, flags...)...), &c)
	if len(c.Variants) < 2 {
		t.Fatalf("compare %s %v: %d variants", name, flags, len(c.Variants))
	}
	setsOfK := map[int][]string{}
	for _, v := range c.Variants {
		sets := append(slices.Clone(global), v.Sets...)
		setsOfK[v.K] = sets
		r := rr.run(t, sets...)
		what := fmt.Sprintf("compare variant %s %v", v.Label, sets)
		if v.File != name+".yaml" {
			t.Errorf("%s: file %q, want %s.yaml", what, v.File, name)
		}
		if v.Stage != r.Stage || v.N != r.N || v.K != r.K {
			t.Errorf("%s: stage %d N=%d K=%d; run %d %d %d", what, v.Stage, v.N, v.K, r.Stage, r.N, r.K)
		}
		for _, x := range []struct {
			field        string
			compare, run int64
		}{
			{"step_time_ps", v.StepTimePS, r.StepTimePS},
			{"compute_ps", v.ComputePS, r.ComputePS},
			{"exposed_comm_ps", v.ExposedCommPS, r.exposed()},
			{"peak_memory_bytes (the replay's)", v.PeakMemory, r.replayPeak()},
			{"at_rest_memory_bytes (memory_model.at_rest)", v.AtRestMemory, r.MemoryModel.AtRest},
			{"gpu_memory_bytes", v.GPUMemory, r.MemoryModel.GPUMemory},
		} {
			if x.compare != x.run {
				t.Errorf("%s: compare %s %d, run %d", what, x.field, x.compare, x.run)
			}
		}
		// Both with 3 decimals (compare rounded to a whole token).
		if v.TokensPerSec != r.TokensPerSecPerGPU {
			t.Errorf("%s: compare tokens_per_s_per_gpu %v, run %v", what, v.TokensPerSec, r.TokensPerSecPerGPU)
		}
		if v.Fits != r.fits {
			t.Errorf("%s: compare fits %v; run --require-fit %v", what, v.Fits, r.fits)
		}
		if len(v.Phases) != len(r.Phases) {
			t.Errorf("%s: compare has %d phases, run %d", what, len(v.Phases), len(r.Phases))
			continue
		}
		for i, p := range v.Phases {
			q := r.Phases[i]
			ok := p.Phase == q.Phase && p.Logical == q.Logical && p.Sent == q.Sent && len(p.Classes) == len(q.Wire)
			for j := 0; ok && j < len(p.Classes); j++ {
				a, b := p.Classes[j], q.Wire[j]
				ok = a.Class == b.Class && a.Total == b.Total && a.Busiest == b.Busiest
			}
			if !ok {
				t.Errorf("%s: compare phase %+v, run %+v", what, p, q)
			}
		}
	}
	if c.SlowLink == nil {
		return
	}
	if len(c.SlowLink.Rows) != 3*len(c.Variants) { // auto, ring, hierarchical
		t.Errorf("compare slow link: %d rows for %d variants", len(c.SlowLink.Rows), len(c.Variants))
	}
	for _, s := range c.SlowLink.Rows {
		sets := append(slices.Clone(setsOfK[s.K]), "communication.algorithm="+s.Algorithm)
		r := rr.run(t, sets...)
		what := fmt.Sprintf("compare slow-link row %v", sets)
		got := []int64{r.StepTimePS, r.wire("network"), r.wire("nvlink"), r.busiest("network"), r.replayPeak()}
		want := []int64{s.StepTimePS, s.NetworkTotal, s.NVLinkTotal, s.NetworkBusiest, s.PeakMemory}
		if !slices.Equal(got, want) || s.Fits != r.fits {
			t.Errorf("%s: compare step, network, nvlink, network busiest, peak %v fits %v; run %v, --require-fit %v", what, want, s.Fits, got, r.fits)
		}
	}
}

// TestPlanListsOnlyWhatRunFits: with the GPU's memory between a
// configuration's model peak and its replayed peak, plan replays it (the
// model lets it through) and leaves it out, as run --require-fit rejects
// it; every row plan lists passes run --require-fit. The case: seed000-k4
// at ZeRO-3, K=1, under FSDP1 with fp32 reductions (reduce-scatters of
// twice the all-gathers' bytes) and two backward gathers prefetched: the
// reduce-scatters wait on the shard group's one communicator behind both
// gathers, so two units' gradients stay unreduced while the next backward
// computes, and FSDP1 does not bound them (memory/inflight.go):
// 4,194,944,000 B walked, 4,899,694,592 B replayed, against
// 5,371,088,640 B. (The stacks that bound their reduce-scatters, the
// default among them, walk what they replay. With one backward gather
// prefetched the queue holds one unit's gradients, as the walk does.)
func TestPlanListsOnlyWhatRunFits(t *testing.T) {
	const mem = "cluster.gpu_memory=5371088640B"
	fsdp1 := []string{"communication.boundary=fsdp1", "training.reduce_dtype=fp32", "communication.backward_prefetch_depth=2"}
	flags := []string{"plan", "seed000-k4", "--format", "json", "--set", mem, "--set", fsdp1[0], "--set", fsdp1[1], "--set", fsdp1[2], "--global-batch", "8", "--stages", "3",
		"--recompute", "none", "--algorithms", "ring", "--prefetch", "1"}
	var raw struct {
		Rows     []map[string]any `json:"rows"`
		Replayed int              `json:"replayed"`
	}
	out := cliPlan(t, flags...)
	decode(t, "plan", out, &raw)
	if len(raw.Rows) == 0 && !strings.Contains(string(out), `"rows": [],`) {
		t.Errorf("plan JSON with nothing fitting: want \"rows\": [], not null")
	}
	rr := &reruns{file: "seed000-k4", cache: map[string]*runFigures{}}
	k1 := rr.run(t, append([]string{mem}, append(fsdp1, "parallelism.zero_stage=3", "parallelism.k=1", "training.micro_batch=2", "training.grad_accum=1",
		"training.recompute=none", "communication.prefetch_depth=1", "communication.algorithm=ring")...)...)
	if !k1.MemoryModel.Fits || k1.fits {
		t.Fatalf("ZeRO-3 K=1: the model fits %v (peak %d), run --require-fit %v (replayed peak %d): the case no longer sits between the two peaks; pick another GPU memory",
			k1.MemoryModel.Fits, k1.MemoryModel.Peak, k1.fits, k1.replayPeak())
	}
	if raw.Replayed <= len(raw.Rows) {
		t.Errorf("plan replayed %d and lists %d: the configuration the replay rejects should be replayed and left out", raw.Replayed, len(raw.Rows))
	}
	for _, row := range raw.Rows {
		sets := append(append([]string{mem}, fsdp1...), planSets(t, row)...)
		if r := rr.run(t, sets...); !r.fits {
			t.Errorf("plan lists %v; run --require-fit rejects it (replayed peak %d)", sets, r.replayPeak())
		}
		if fmt.Sprint(row["k"]) == "1" && fmt.Sprint(row["micro_batch"]) == "2" {
			t.Errorf("plan lists ZeRO-3 K=1 micro-batch 2, whose replayed peak %d exceeds the GPU's 5,371,088,640 B", k1.replayPeak())
		}
	}
}

// TestPlanCPRowsRun: with cp searched, every row plan lists re-runs through
// zerosim run with its --set (cp and dp among them) to the same figures
// (checkPlan): Llama 2 7B at 32,768 tokens on 2 × 8 H100, cp 1 and 4.
func TestPlanCPRowsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("re-runs every row")
	}
	def, _ := scenarios.Example("default")
	file := filepath.Join(t.TempDir(), "long.yaml")
	long := strings.Replace(string(def), "  preset: llama2-7b\n", "  preset: llama2-7b\n  seq_len: 32768\n", 1)
	if err := os.WriteFile(file, []byte(long), 0o644); err != nil || long == string(def) {
		t.Fatalf("writing the 32,768-token scenario: %v", err)
	}
	rr := &reruns{file: file, cache: map[string]*runFigures{}}
	checkPlan(t, rr, file, []string{"--cp", "1,4", "--stages", "3", "--recompute", "none,full", "--algorithms", "ring", "--prefetch", "1"})
}

// TestPlanNothingFitsSuggestionsRun: when nothing fits, what plan says to
// change is what run --require-fit accepts: on nodes_to_fit nodes run
// fits, on one fewer it does not, and under offload_sets run fits at
// offload_peak_bytes. Two cases (ZeRO-3, full checkpointing, ring,
// prefetch 1):
//
//   - Llama 2 13B on 8 GiB GPUs (llama2-13b-a100-eth, micro-batch 1 × 4):
//     its stack (reshard: DeepSpeed's bound on reduce-scatters in flight,
//     memory/inflight.go) walks what it replays, so the memory model
//     rejects one node fewer too (8.25 GiB on 7 nodes, 7.82 on 8).
//   - seed000-k4 on 5,371,088,640-byte GPUs under FSDP1 with fp32
//     reductions and two backward gathers prefetched, whose reduce-scatters
//     queue behind them (FSDP1 bounds none, TestPlanListsOnlyWhatRunFits):
//     the model fits one node fewer than plan names,
//     where the replayed step does not fit, so the node count must be the
//     replay's. Plan suggests no offload there: DeepSpeed's offload beside
//     an FSDP boundary is refused (scenarios.FSDPOffloadNotModelled).
func TestPlanNothingFitsSuggestionsRun(t *testing.T) {
	for _, tc := range []struct {
		file string
		sets []string
		cp   int
		// replayDecides: on nodes_to_fit − 1 the memory model fits and
		// the replay does not; otherwise both reject it.
		replayDecides bool
		doc           bool // docs/sweeps.md quotes the case
		offload       bool // plan suggests an offload (not beside FSDP)
	}{
		{"llama2-13b-a100-eth", []string{"cluster.gpu_memory=8GiB"}, 1, false, true, true},
		{"seed000-k4", []string{"cluster.gpu_memory=5371088640B", "communication.boundary=fsdp1", "training.reduce_dtype=fp32", "communication.backward_prefetch_depth=2"}, 2, true, false, false},
	} {
		t.Run(tc.file, func(t *testing.T) {
			var raw struct {
				Rows        []map[string]any `json:"rows"`
				Smallest    map[string]any   `json:"smallest"`
				GPUsPerNode int              `json:"gpus_per_node"`
				NodesToFit  int              `json:"nodes_to_fit"`
				OffloadSets []string         `json:"offload_sets"`
				OffloadPeak int64            `json:"offload_peak_bytes"`
			}
			args := []string{"plan", tc.file, "--format", "json"}
			for _, s := range tc.sets {
				args = append(args, "--set", s)
			}
			decode(t, "plan", cliPlan(t, append(args, "--stages", "3", "--recompute", "full", "--algorithms", "ring", "--prefetch", "1")...), &raw)
			if len(raw.Rows) != 0 || raw.NodesToFit < 2 || (len(raw.OffloadSets) > 0) != tc.offload || raw.GPUsPerNode < 1 {
				t.Fatalf("plan: %d rows, nodes_to_fit %d, offload %v, %d GPUs per node; want nothing to fit, nodes to fit, offload suggested %v",
					len(raw.Rows), raw.NodesToFit, raw.OffloadSets, raw.GPUsPerNode, tc.offload)
			}
			smallest := append(slices.Clone(tc.sets), planSets(t, raw.Smallest)...)
			rr := &reruns{file: tc.file, cache: map[string]*runFigures{}}
			on := func(nodes int) *runFigures {
				return rr.run(t, append(slices.Clone(smallest), "parallelism.k=1", "cluster.nodes="+strconv.Itoa(nodes),
					"parallelism.dp="+strconv.Itoa(nodes*raw.GPUsPerNode/tc.cp))...)
			}
			if r := on(raw.NodesToFit); !r.fits {
				t.Errorf("plan: %d nodes fit %v; run --require-fit rejects it (replayed peak %d)", raw.NodesToFit, smallest, r.replayPeak())
			}
			fewer := on(raw.NodesToFit - 1)
			if fewer.fits {
				t.Errorf("plan: %d nodes are the least that fit %v; run --require-fit accepts %d", raw.NodesToFit, smallest, raw.NodesToFit-1)
			}
			if fewer.MemoryModel.Fits != tc.replayDecides {
				t.Errorf("on %d nodes the memory model fits %v %v (peak %d, replayed %d); want %v", raw.NodesToFit-1, fewer.MemoryModel.Fits, smallest,
					fewer.MemoryModel.Peak, fewer.replayPeak(), tc.replayDecides)
			}
			gib := func(b int64) string { return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30)) }
			if tc.doc {
				golden.CheckQuotes(t, "../../docs/sweeps.md", "TestPlanNothingFitsSuggestionsRun (plan and run of llama2-13b-a100-eth on 8 GiB)",
					fmt.Sprintf("fits %d nodes by the model and by the replay (peak %s on %d, which the CUDA context and NCCL's buffers take past the GPU;",
						raw.NodesToFit, gib(fewer.MemoryModel.Peak), raw.NodesToFit-1))
			}
			if !tc.offload {
				return
			}
			if r := rr.run(t, append(slices.Clone(smallest), raw.OffloadSets...)...); !r.fits || r.replayPeak() != raw.OffloadPeak {
				t.Errorf("plan: offload %v fits at %d B; run --require-fit %v, replayed peak %d B", raw.OffloadSets, raw.OffloadPeak, r.fits, r.replayPeak())
			}
		})
	}
}

// TestFitAnswersRun: fit's answers are what run --require-fit accepts, near
// capacity. For each case, fit's least nodes at ZeRO-3, K=1 is accepted by
// run and one node fewer is rejected, and its largest model (layers) is
// accepted and one layer more rejected. llama2-13b-a100-eth on 8 GiB GPUs
// with full checkpointing: 8 nodes and 24 layers, and the memory model
// rejects 7 nodes and 25 layers too (its stack, reshard, bounds the
// reduce-scatters in flight and the model walks what the replay holds,
// memory/inflight.go). seed000-k4 on 5,371,088,640-byte GPUs under FSDP1
// with fp32 reductions and two backward gathers prefetched, whose
// reduce-scatters queue behind them with nothing in FSDP1 bounding them
// (TestPlanListsOnlyWhatRunFits): the model alone fits 4 nodes and 10
// layers, the replay neither, so the replay decides.
func TestFitAnswersRun(t *testing.T) {
	for _, tc := range []struct {
		file string
		sets []string
		// The memory model's own answers, which run rejects; 0: the model
		// gives fit's answers (it rejects one node fewer and one layer more).
		modelNodes  int
		modelLayers int64
		// doc: docs/sweeps.md quotes the case's answers.
		doc bool
	}{
		{"llama2-13b-a100-eth", []string{"cluster.gpu_memory=8GiB", "training.recompute=full"}, 0, 0, false},
		{"seed000-k4", []string{"cluster.gpu_memory=5371088640B", "communication.boundary=fsdp1", "training.reduce_dtype=fp32", "communication.backward_prefetch_depth=2"}, 4, 10, true},
	} {
		t.Run(tc.file, func(t *testing.T) {
			args := []string{"fit", tc.file, "--format", "json"}
			for _, s := range tc.sets {
				args = append(args, "--set", s)
			}
			var fit struct {
				GPUsPerNode int `json:"gpus_per_node"`
				CP          int `json:"cp"`
				Rows        []struct {
					Stage     int   `json:"stage"`
					K         int   `json:"k"`
					MinNodes  int   `json:"min_nodes"`
					MinDP     int   `json:"min_dp"`
					MinPeak   int64 `json:"min_peak_bytes"`
					MaxLayers int64 `json:"max_layers"`
					MaxParams int64 `json:"max_params"`
					MaxPeak   int64 `json:"max_peak_bytes"`
				} `json:"rows"`
			}
			decode(t, "fit", cli(t, args...), &fit)
			rr := &reruns{file: tc.file, cache: map[string]*runFigures{}}
			stage3 := append(slices.Clone(tc.sets), "parallelism.zero_stage=3", "parallelism.k=1")
			for _, row := range fit.Rows {
				if row.Stage != 3 || row.K != 1 {
					continue
				}
				if row.MinNodes < 2 || row.MaxLayers < 1 {
					t.Fatalf("fit: least nodes %d, largest %d layers; want both answers", row.MinNodes, row.MaxLayers)
				}
				on := func(nodes int) *runFigures {
					return rr.run(t, append(slices.Clone(stage3), "cluster.nodes="+strconv.Itoa(nodes),
						"parallelism.dp="+strconv.Itoa(nodes*fit.GPUsPerNode/fit.CP))...)
				}
				if r := on(row.MinNodes); !r.fits || r.replayPeak() != row.MinPeak {
					t.Errorf("fit: least nodes %d (peak %d); run --require-fit %v, replayed peak %d", row.MinNodes, row.MinPeak, r.fits, r.replayPeak())
				}
				if r := on(row.MinNodes - 1); r.fits {
					t.Errorf("fit: least nodes %d; run --require-fit accepts %d", row.MinNodes, row.MinNodes-1)
				}
				layers := func(l int64) *runFigures {
					return rr.run(t, append(slices.Clone(stage3), "model.layers="+strconv.FormatInt(l, 10))...)
				}
				if r := layers(row.MaxLayers); !r.fits || r.replayPeak() != row.MaxPeak {
					t.Errorf("fit: largest model %d layers (peak %d); run --require-fit %v, replayed peak %d", row.MaxLayers, row.MaxPeak, r.fits, r.replayPeak())
				}
				if r := layers(row.MaxLayers + 1); r.fits {
					t.Errorf("fit: largest model %d layers; run --require-fit accepts %d", row.MaxLayers, row.MaxLayers+1)
				}
				if tc.modelNodes == 0 {
					// The model answers as the replay does.
					if r := on(row.MinNodes - 1); r.MemoryModel.Fits {
						t.Errorf("%d nodes: the memory model fits (peak %d), run --require-fit rejects it (replayed peak %d): want both to reject", row.MinNodes-1, r.MemoryModel.Peak, r.replayPeak())
					}
					if r := layers(row.MaxLayers + 1); r.MemoryModel.Fits {
						t.Errorf("%d layers: the memory model fits (peak %d), run --require-fit rejects it (replayed peak %d): want both to reject", row.MaxLayers+1, r.MemoryModel.Peak, r.replayPeak())
					}
					return
				}
				// The case shows the replay deciding: the model's own
				// answers are run's NO.
				if row.MinNodes == tc.modelNodes || row.MaxLayers == tc.modelLayers {
					t.Errorf("fit gives the model's answers (%d nodes, %d layers): the case no longer shows the replay deciding", row.MinNodes, row.MaxLayers)
				}
				if r := on(tc.modelNodes); r.fits || !r.MemoryModel.Fits {
					t.Errorf("%d nodes: run --require-fit %v, memory model fits %v; want the model's answer rejected by run", tc.modelNodes, r.fits, r.MemoryModel.Fits)
				}
				if r := layers(tc.modelLayers); r.fits || !r.MemoryModel.Fits {
					t.Errorf("%d layers: run --require-fit %v, memory model fits %v; want the model's answer rejected by run", tc.modelLayers, r.fits, r.MemoryModel.Fits)
				}
				if tc.doc {
					golden.CheckQuotes(t, "../../docs/sweeps.md", "TestFitAnswersRun (fit and run of "+tc.file+" "+strings.Join(tc.sets, " ")+")",
						fmt.Sprintf("fit answers %d nodes and %d layers where the model alone says %d nodes and %d layers, both of which run rejects",
							row.MinNodes, row.MaxLayers, tc.modelNodes, tc.modelLayers))
				}
				return
			}
			t.Fatal("fit: no ZeRO-3, K=1 row")
		})
	}
}
