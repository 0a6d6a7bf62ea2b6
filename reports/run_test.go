package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	_ "image/png"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/collectives"
	goldenfile "github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/sweep"
	"github.com/zerosim/zerosim/units"
	"github.com/zerosim/zerosim/zero"
)

// exampleRun loads an embedded example and replays it with spans.
func exampleRun(t testing.TB, name string, sets ...string) *Run {
	t.Helper()
	data, ok := scenarios.Example(name)
	if !ok {
		t.Fatalf("no example %q", name)
	}
	return yamlRun(t, name+".yaml", data, sets...)
}

func yamlRun(t testing.TB, file string, data []byte, sets ...string) *Run {
	t.Helper()
	return optsRun(t, zero.Options{KeepSpans: true}, file, data, sets...)
}

// optsRun is yamlRun replayed with opt.
func optsRun(t testing.TB, opt zero.Options, file string, data []byte, sets ...string) *Run {
	t.Helper()
	s, err := scenarios.Load(file, data, sets)
	if err != nil {
		t.Fatal(err)
	}
	r, err := zero.Replay(s, opt)
	if err != nil {
		t.Fatal(err)
	}
	run, err := NewRun(s, r, nil)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// tinyYAML is seed 002's 260-parameter tiny transformer with ZeRO-3 on 2
// GPUs, spelled out here so the golden files do not follow edits of the
// embedded examples.
const tinyYAML = `version: 1
name: tiny-zero3
cluster:
  nodes: 1
  gpus_per_node: 2
  gpu: A100-80GB
model:
  preset: tiny-transformer
parallelism:
  dp: 2
  zero_stage: 3
training:
  optimizer: adamw
`

func tinyRun(t testing.TB) *Run {
	t.Helper()
	return yamlRun(t, "tiny.yaml", []byte(tinyYAML))
}

// TestRunTableTiny is the whole terminal report of the tiny scenario.
func TestRunTableTiny(t *testing.T) {
	var b bytes.Buffer
	if err := WriteRunTable(&b, tinyRun(t)); err != nil {
		t.Fatal(err)
	}
	golden(t, "run_tiny.table.golden", b.Bytes())
}

// TestRunPhaseBytesTiny checks the phase table against seed 002's byte
// accounting for the 260-parameter model on N = 2 (bf16, 520 B of
// parameters): ZeRO-3 all-gathers the parameters in forward and again in
// backward and reduce-scatters the gradients, S = 520 B each (logical
// bytes), of which a ring rank sends (N−1)/N·S = 260 B. --wide shows exact
// bytes and the busiest rank; the default human units within 120 columns.
func TestRunPhaseBytesTiny(t *testing.T) {
	run := tinyRun(t)
	if got := fmt.Sprint(run.phaseTable().Rows[0]); got != "[forward all-gather 5 ring 520 B 260 B 520 B 0 B]" {
		t.Errorf("default phase row %s", got)
	}
	run.Style.Wide = true
	tab := run.phaseTable()
	want := [][]string{
		{"forward all-gather", "5", "ring", "520", "260", "520", "0", "260", "0"},
		{"backward all-gather", "5", "ring", "520", "260", "520", "0", "260", "0"},
		{"backward reduce-scatter", "5", "ring", "520", "260", "520", "0", "260", "0"},
	}
	if fmt.Sprint(tab.Rows) != fmt.Sprint(want) {
		t.Errorf("phase rows\n got %v\nwant %v", tab.Rows, want)
	}
	if got := strings.Join(tab.Footer[:5], " "); got != "total 15 ring 1,560 780" {
		t.Errorf("footer %q", got)
	}
}

// TestAlgoNames: the phase table's algorithm cell names what ran, the
// context-parallel ring's point-to-point sends left to its note; two names
// past 13 runes wrap, and the total names one only when every phase ran it.
func TestAlgoNames(t *testing.T) {
	p2p, ring, tree, nvlstree := collectives.PointToPoint, collectives.Ring, collectives.Tree, collectives.NVLSTree
	for _, c := range []struct {
		list []zero.AlgoCount
		want string
	}{
		{nil, "-"},
		{[]zero.AlgoCount{{Algo: ring, Count: 337}}, "ring"},
		{[]zero.AlgoCount{{Algo: ring, Count: 300}, {Algo: tree, Count: 37}}, "ring, tree"},
		{[]zero.AlgoCount{{Algo: ring, Count: 96}, {Algo: p2p, Count: 128}}, "ring"},
		{[]zero.AlgoCount{{Algo: p2p, Count: 64}}, "point-to-point"},
	} {
		if got := algoNames(c.list); got != c.want {
			t.Errorf("%v: %q, want %q", c.list, got, c.want)
		}
	}
	run := tinyRun(t)
	res := *run.Result
	res.Phases = slices.Clone(res.Phases)
	res.Phases[0].Algos = []zero.AlgoCount{{Algo: ring, Count: 3}, {Algo: nvlstree, Count: 2}}
	run.Result = &res
	tab := run.phaseTable()
	var out strings.Builder
	if err := tab.render(&out); err != nil {
		t.Fatal(err)
	}
	// The total names one only when every phase's cell is that one:
	// the default's reduce-scatters and all-gathers all ring; Mixtral's
	// all-to-alls are point-to-point beside ring gathers.
	if f := exampleRun(t, "default").phaseTable().Footer[2]; f != "ring" {
		t.Errorf("default's total algorithm %q, want ring", f)
	}
	mix, err := os.ReadFile("../docs/examples/mixtral-8x7b.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if f := optsRun(t, zero.Options{NoCollectives: true}, "../docs/examples/mixtral-8x7b.yaml", mix).phaseTable().Footer[2]; f != "" {
		t.Errorf("Mixtral's total algorithm %q, want none", f)
	}
	if !strings.Contains(out.String(), "│ forward all-gather      │           5 │ ring,     │") ||
		!strings.Contains(out.String(), "│                         │             │ nvlstree  │") || tab.Footer[2] != "" {
		t.Errorf("two algorithms in a phase:\n%s", out.String())
	}
}

// TestRunTimeTableSummary checks that above 16 ranks the time table shows
// min / median / max rows instead of one row per rank, and that ranks all
// alike (the symmetric fast path's) take one row.
func TestRunTimeTableSummary(t *testing.T) {
	slow := "cluster.gpu_overrides=[{rank: 3, speed: 0.8}]"
	for _, tc := range []struct {
		name  string
		sets  []string
		rows  int
		first string
	}{
		{"N=16 alike", nil, 1, "all 16"},
		{"N=32 alike", []string{"cluster.nodes=4", "parallelism.dp=32"}, 1, "all 32"},
		{"N=16 per rank", []string{slow}, 16, "0"},
		{"N=32 summary", []string{"cluster.nodes=4", "parallelism.dp=32", slow}, 3, "min of 32"},
	} {
		run := exampleRun(t, "default", tc.sets...)
		tab := run.timeTable()
		if len(tab.Rows) != tc.rows || tab.Rows[0][0] != tc.first {
			t.Errorf("%s: %d rows, first %q; want %d, %q", tc.name, len(tab.Rows), tab.Rows[0][0], tc.rows, tc.first)
		}
		// The summary rows are per-column statistics, and say so (QA28 L2).
		said := slices.Contains(tab.Notes, "min, median and max: each column over the 32 ranks separately (a row is not one rank's)")
		if said != strings.HasPrefix(tc.first, "min of") {
			t.Errorf("%s: notes %q", tc.name, tab.Notes)
		}
	}
}

func TestTaskNames(t *testing.T) {
	run := tinyRun(t)
	sc := run.Result.Schedule
	seen := map[string]bool{}
	for i := range sc.Tasks {
		seen[taskName(sc, int32(i))] = true
	}
	for _, want := range []string{"all-gather ln1", "all-gather out", "reduce-scatter ffn", "optimizer"} {
		if !seen[want] {
			t.Errorf("no task named %q", want)
		}
	}
	def := exampleRun(t, "default")
	dsc := def.Result.Schedule
	seen = map[string]bool{}
	for i := range dsc.Tasks {
		seen[taskName(dsc, int32(i))] = true
	}
	for _, want := range []string{"forward block.0", "backward block.31", "reduce-scatter bucket 0", "all-gather bucket 2"} {
		if !seen[want] {
			t.Errorf("default: no task named %q", want)
		}
	}
	if got := taskName(sc, -1); got != "task -1" {
		t.Errorf("TaskName(-1) = %q", got)
	}
}

func TestPercent(t *testing.T) {
	for _, tc := range []struct {
		num, den int64
		want     string
	}{{1, 3, "33.3"}, {2, 3, "66.7"}, {0, 5, "0.0"}, {5, 0, "0.0"}, {75, 100, "75.0"}, {1, 2000, "0.1"}, {1, 2001, "0.0"}} {
		if got := percent(tc.num, tc.den); got != tc.want {
			t.Errorf("percent(%d, %d) = %s, want %s", tc.num, tc.den, got, tc.want)
		}
	}
}

// TestFindings checks the sentences computed from the result on the seed
// 000 K=4 example (N=8 on 4 nodes × 2 GPUs): the inter-group all-reduce is
// the only network traffic: a ring rank sends 2·(K−1)/K·S/2 = 0.75·S with
// S = 2P = 2,684,764,160 B, × 8 ranks = 16,108,584,960 B = 15.00 GiB of
// 37,586,698,240 B = 35.01 GiB on the wire (NVLink carries RS + AG:
// 8·(1/2)·S each).
func TestFindings(t *testing.T) {
	run := exampleRun(t, "seed000-k4")
	f := strings.Join(run.findings(), "\n")
	for _, want := range []string{
		"The slow network carries 42.9 % of the wire bytes (15.00 GiB of 35.01 GiB per step).",
		// The A100-80GB's usable 79.18 GiB (scenarios.GPUPreset.Usable).
		"Peak memory 15.00 GiB of 79.18 GiB usable at optimizer",
	} {
		if !strings.Contains(f, want) {
			t.Errorf("findings lack %q:\n%s", want, f)
		}
	}
	// With an NVLink port degraded the network is not called the slow
	// link (QA4 s16 F12g).
	slowNV := strings.Join(exampleRun(t, "seed000-k4", "cluster.link_overrides=[{node: 1, gpu: 0, class: intra, bandwidth: 1GB/s}]").findings(), "\n")
	if !strings.Contains(slowNV, "The network (inter-node links) carries 42.9 % of the wire bytes") || strings.Contains(slowNV, "slow network") {
		t.Errorf("findings with a degraded NVLink port:\n%s", slowNV)
	}
	tiny := strings.Join(tinyRun(t).findings(), "\n")
	if !strings.Contains(tiny, "ZeRO-3 exposes 100.0 % of its all-gather time") || !strings.Contains(tiny, "All 1.52 KiB of wire traffic stays on the fast intra-node links.") {
		t.Errorf("tiny findings:\n%s", tiny)
	}
}

// TestRunJSONTiny is result.json of the tiny scenario.
func TestRunJSONTiny(t *testing.T) {
	var b bytes.Buffer
	if err := WriteRunJSON(&b, tinyRun(t)); err != nil {
		t.Fatal(err)
	}
	golden(t, "run_tiny.json.golden", b.Bytes())
	var j struct {
		StepTimePS int64 `json:"step_time_ps"`
		Totals     struct {
			Logical int64 `json:"logical_bytes_per_rank"`
			Sent    int64 `json:"sent_bytes_per_rank"`
		} `json:"totals"`
		Phases []struct {
			Phase string `json:"phase"`
		} `json:"phases"`
		Spans       [][]any `json:"spans"`
		MemoryModel struct {
			Params int64 `json:"params"`
		} `json:"memory_model"`
	}
	if err := json.Unmarshal(b.Bytes(), &j); err != nil {
		t.Fatal(err)
	}
	if j.Totals.Logical != 1560 || j.Totals.Sent != 780 || len(j.Phases) != 3 || j.Phases[0].Phase != "forward all-gather" ||
		len(j.Spans) != 2 || j.MemoryModel.Params != 260 || j.StepTimePS <= 0 {
		t.Errorf("result.json: %+v", j)
	}
}

// TestRunJSONLarge leaves the spans out above the size limit. The memory
// peaks in the loss's backward on lm_head (fp32 logits and their gradients).
func TestRunJSONLarge(t *testing.T) {
	run := exampleRun(t, "default")
	j := run.toJSON()
	if j.Spans != nil || j.CollCount == 0 || j.Memory.PeakTaskName != "backward lm_head" {
		t.Errorf("spans %d, collectives %d, peak task %q", len(j.Spans), j.CollCount, j.Memory.PeakTaskName)
	}
	// The symmetric fast path: the 16 identical ranks once, standing for
	// ranks 0–15; with AllRanks every rank.
	if len(j.Ranks) != 1 || j.Ranks[0].Rank != 0 || !slices.Equal(j.Ranks[0].StandsFor, []rankRange{{0, 15}}) {
		t.Errorf("ranks %+v, want one record standing for ranks 0–15", j.Ranks)
	}
	run.AllRanks = true
	if j := run.toJSON(); len(j.Ranks) != 16 || j.Ranks[15].Rank != 15 || j.Ranks[15].StandsFor != nil ||
		j.Ranks[15].PeakMemory != j.Ranks[0].PeakMemory {
		t.Errorf("--all-ranks: %d ranks", len(j.Ranks))
	}
}

// TestRunPlotsDataTiny is the data of every plot of the tiny scenario.
func TestRunPlotsDataTiny(t *testing.T) {
	p := tinyRun(t).plots()
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "plot_tiny.json.golden", append(b, '\n'))
	// Seed 002's table: 16P/N = 2,080 B of model states per GPU at
	// stage 3 plus what the step allocates; 16P = 4,160 B at stage 0.
	if p.MemoryStages.Categories[3] != "stage 3 (this run)" || p.MemoryStages.Capacity != 7918<<30/100 { // the A100-80GB's usable 79.18 GiB
		t.Errorf("memory stages: %v, capacity %d", p.MemoryStages.Categories, p.MemoryStages.Capacity)
	}
	if len(p.Timeline.Rows) != 2*3 || p.Timeline.Rows[0].Label != "rank 0 compute" {
		t.Errorf("timeline rows %d, first %q", len(p.Timeline.Rows), p.Timeline.Rows[0].Label)
	}
}

// TestRunPlotsGanttCap shows 8 of 16 ranks and says so.
func TestRunPlotsGanttCap(t *testing.T) {
	g := exampleRun(t, "default").plots().Timeline
	if !strings.Contains(g.Title, "first 8 of 16 ranks") || g.Rows[len(g.Rows)-1].Label != "rank 7 param-comm" {
		t.Errorf("title %q, last row %q", g.Title, g.Rows[len(g.Rows)-1].Label)
	}
	exposed := 0
	for _, r := range g.Rows {
		for _, b := range r.Bars {
			if b.Kind == exposedKind {
				exposed++
				if !strings.HasSuffix(r.Label, "compute") {
					t.Errorf("exposed bar on row %q", r.Label)
				}
			}
		}
	}
	if exposed == 0 {
		t.Error("no exposed-communication bars")
	}
}

// TestRunPlotImages renders every plot as PNG and SVG and checks the files
// decode and name the title and every series.
func TestRunPlotImages(t *testing.T) {
	for _, name := range []string{"tiny", "seed000-k4"} {
		var run *Run
		if name == "tiny" {
			run = tinyRun(t)
		} else {
			run = exampleRun(t, name)
		}
		plots := run.plots()
		series := map[string][]string{
			"memory_stages":   names(plots.MemoryStages.Series),
			"comm":            names(plots.Comm.Panels[0].Series),
			"timeline":        plots.Timeline.Kinds,
			"memory_timeline": plots.MemoryTimeline.Components,
		}
		for _, im := range plots.images() {
			var png, svg bytes.Buffer
			if err := im.writePNG(&png); err != nil {
				t.Fatal(err)
			}
			cfg, format, err := image.DecodeConfig(&png)
			if err != nil || format != "png" || cfg.Width < 600 || cfg.Height < 300 {
				t.Errorf("%s/%s.png: %v %s %dx%d", name, im.Name, err, format, cfg.Width, cfg.Height)
			}
			if err := im.writeSVG(&svg); err != nil {
				t.Fatal(err)
			}
			checkSVG(t, name+"/"+im.Name+".svg", svg.Bytes(), append([]string{im.Title}, series[im.Name]...))
		}
	}
}

func names(ss []intSeries) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Name)
	}
	return out
}

// checkSVG parses doc as XML and checks it holds every text.
func checkSVG(t *testing.T, name string, doc []byte, texts []string) {
	t.Helper()
	dec := xmlDecoder(doc)
	var chars strings.Builder
	for {
		tok, err := dec.Token()
		if err != nil {
			if err.Error() != "EOF" {
				t.Errorf("%s: not valid XML: %v", name, err)
				return
			}
			break
		}
		if cd, ok := tok.(xmlCharData); ok {
			chars.Write(cd)
		}
	}
	all := chars.String()
	for _, want := range texts {
		if !strings.Contains(all, want) {
			t.Errorf("%s lacks the text %q", name, want)
		}
	}
}

// TestRunOutputsDeterministic renders result.json, report.html and the
// plots' SVG twice from two replays: byte for byte the same.
func TestRunOutputsDeterministic(t *testing.T) {
	render := func() [][]byte {
		run := exampleRun(t, "seed000-k4")
		var j, h bytes.Buffer
		if err := WriteRunJSON(&j, run); err != nil {
			t.Fatal(err)
		}
		if err := writeRunHTML(&h, run, nil); err != nil {
			t.Fatal(err)
		}
		return [][]byte{j.Bytes(), h.Bytes()}
	}
	a, b := render(), render()
	for i, name := range []string{"result.json", "report.html"} {
		if !bytes.Equal(a[i], b[i]) {
			t.Errorf("%s differs between two runs", name)
		}
	}
}

// Issue 13: the straggler was printed twice (time-table note and warning)
// and, with two ranks, its "median" was the straggler's own compute time.
func TestStragglerOnceAgainstTheOthers(t *testing.T) {
	run := yamlRun(t, "slow.yaml", []byte(tinyYAML), "cluster.gpu_overrides=[{rank: 1, speed: 0.5}]")
	st := run.Result.Straggler
	if st == nil || st.Rank != 1 {
		t.Fatalf("straggler %+v, want rank 1", st)
	}
	// The figures it is chosen by: compute at each GPU's speed with
	// nothing beside it (RankStats.Alone), the median rank 0's.
	var fast, slow units.Duration
	for _, r := range run.Result.Ranks {
		switch r.Rank {
		case 0:
			fast = r.Alone
		case 1:
			slow = r.Alone
		}
	}
	if st.MedianCompute != fast || st.Compute != slow || slow != 2*fast {
		t.Errorf("straggler compute %v vs median %v; want rank 1's %v against rank 0's %v (half speed: twice)", st.Compute, st.MedianCompute, slow, fast)
	}
	var b bytes.Buffer
	if err := WriteRunTable(&b, run); err != nil {
		t.Fatal(err)
	}
	// The table and the warnings cmd prints on stderr (QA22 M5: no
	// longer the table's last lines).
	all := b.String() + strings.Join(run.Warnings(), "\n")
	if n := strings.Count(all, "straggler: rank 1"); n != 1 {
		t.Errorf("the straggler is named %d times, want once:\n%s", n, all)
	}
}

// TestAttentionHeadline: the run's headline names the attention kernel, the
// fraction of the peak it runs at and where that comes from, the figure a
// long-sequence step rests on (FlashAttention-2 runs at 0.35 of an H100 but
// 0.1409 of a B200, NVIDIA's measurement); an explicit efficiency says so, an
// eager kernel says what runs instead, and a model without attention
// dimensions has no such row.
func TestAttentionHeadline(t *testing.T) {
	for _, c := range []struct {
		name, example string
		sets          []string
		want          string
	}{
		{"H100 default", "default", nil, "fa2 at 0.35 of the dense peak (the kernel's published rate on H100-80GB, docs/compute-model.md)"},
		{"B200 default", "default", []string{"cluster.gpu=B200"}, "fa2 at 0.1409 of the dense peak (the kernel's published rate on B200, docs/compute-model.md)"},
		// QA13 F10: each rate names the part it was measured on, FlashAttention-2's
		// 0.1409 the B200's (3.5/(1/373.392 + 2.5/298.867) = 316.97 TFLOPS of
		// 2,250), cuDNN's 0.5573 the GB200's (1,393 of 2,500), cuDNN's 0.5732
		// on Hopper the H200's (567 of 989).
		{"B200 cudnn", "default", []string{"cluster.gpu=B200", "training.attention_kernel=cudnn"}, "cudnn at 0.5573 of the dense peak (the kernel's published rate on the GB200, taken for B200 of the same family; docs/compute-model.md)"},
		{"GB200 default", "default", []string{"cluster.gpu=GB200"}, "fa2 at 0.1409 of the dense peak (the kernel's published rate on the B200, taken for GB200 of the same family; docs/compute-model.md)"},
		{"GB200 cudnn", "default", []string{"cluster.gpu=GB200", "training.attention_kernel=cudnn"}, "cudnn at 0.5573 of the dense peak (the kernel's published rate on GB200, docs/compute-model.md)"},
		{"B300 te", "default", []string{"cluster.gpu=B300", "training.attention_kernel=te"}, "te at 0.6138 of the dense peak (the kernel's published rate on the GB300, taken for B300 of the same family; docs/compute-model.md)"},
		{"GB300 triton", "default", []string{"cluster.gpu=GB300", "training.attention_kernel=triton"}, "triton at 0.2655 of the dense peak (the kernel's published rate on the B200, taken for GB300 of the same family; docs/compute-model.md)"},
		// GPUs without a figure of their own take the A100's, and say so:
		// "published rate on V100-16GB" named a rate nobody published.
		// On Volta FlashAttention-2 and cuDNN's attention do not run at
		// all: the line says what runs there and what to set.
		{"V100", "seed001-azure", nil, "fa2 at 0.6 of the dense peak (fa2 does not run on V100-16GB, where PyTorch's SDPA runs its memory-efficient kernel: the A100's rate, taken for want of one; set training.attention_efficiency, or attention: eager for unfused attention; docs/compute-model.md)"},
		{"V100 cudnn", "seed001-azure", []string{"training.attention_kernel=cudnn"}, "cudnn at 0.6 of the dense peak (cudnn does not run on V100-16GB, where PyTorch's SDPA runs its memory-efficient kernel: the A100's rate, taken for want of one; set training.attention_efficiency, or attention: eager for unfused attention; docs/compute-model.md)"},
		{"V100 triton", "seed001-azure", []string{"training.attention_kernel=triton"}, "triton at 0.325 of the dense peak (the kernel's published rate on the A100, taken for V100-16GB, which has none; docs/compute-model.md)"},
		{"MI300X", "default", []string{"cluster.gpu=MI300X", "cluster.intra.preset=xGMI"}, "fa2 at 0.1706 of the dense peak (the kernel's published rate on MI300X, docs/compute-model.md)"},
		{"A100", "llama2-13b-a100-eth", nil, "fa2 at 0.6 of the dense peak (the kernel's published rate on A100-40GB, docs/compute-model.md)"},
		{"explicit", "default", []string{"training.attention_efficiency=0.42"}, "fa2 at 0.42 of the dense peak (training.attention_efficiency)"},
		// Under sdpa the line names the attention and the kernel whose
		// rate times it (QA12 F6: "fa2 at 0.35" read as the attention).
		{"sdpa", "default", []string{"training.attention=sdpa"}, "sdpa, timed as fa2 (training.attention_kernel) at 0.35 of the dense peak (the kernel's published rate on H100-80GB, docs/compute-model.md)"},
		// Under stack torchtitan the preset's fa2 is 9dec370's; the line
		// says which torchtitan that is and when later ones changed it
		// (qa21 LOW 12), in few words (qauser s28 L4: it was 500
		// characters), cuDNN from 3b85aa3 on Blackwell.
		{"torchtitan fa2", "default", []string{"stack=torchtitan", "parallelism.zero_stage=3"}, "sdpa, timed as fa2 (training.attention_kernel) at 0.35 of the dense peak (the kernel's published rate on H100-80GB, docs/compute-model.md); " + torchtitanFA2},
		// flash with fa2 under stack torchtitan is how zerosim import
		// torchtitan wrote FlexAttention (qauser29 F3) before flex had a
		// rate; it now writes flex.
		{"torchtitan flash fa2", "default", []string{"stack=torchtitan", "parallelism.zero_stage=3", "training.attention=flash"}, "fa2 at 0.35 of the dense peak (the kernel's published rate on H100-80GB, docs/compute-model.md); torchtitan's FlexAttention is timed as attention_kernel: flex"},
		{"torchtitan flex", "default", []string{"stack=torchtitan", "parallelism.zero_stage=3", "training.attention=flash", "training.attention_kernel=flex"}, "flex at 0.3796 of the dense peak (the kernel's published rate on H100-80GB, docs/compute-model.md)"},
		{"torchtitan fa2 on B200", "default", []string{"stack=torchtitan", "parallelism.zero_stage=3", "cluster.gpu=B200"}, "sdpa, timed as fa2 (training.attention_kernel) at 0.1409 of the dense peak (the kernel's published rate on B200, docs/compute-model.md); " + strings.Replace(torchtitanFA2, "6a3a9da", "3b85aa3", 1)},
		// On AMD there is no cuDNN attention to advise (QA24 M1: PyTorch's
		// ROCm build refuses it, sdp_utils.cpp at pytorch 001f694a).
		{"torchtitan fa2 on MI300X", "default", []string{"stack=torchtitan", "parallelism.zero_stage=3", "cluster.gpu=MI300X", "cluster.intra.preset=xGMI"}, "sdpa, timed as fa2 (training.attention_kernel) at 0.1706 of the dense peak (the kernel's published rate on MI300X, docs/compute-model.md)"},
		{"MI325X", "default", []string{"cluster.gpu=MI325X", "cluster.intra.preset=xGMI"}, "fa2 at 0.1706 of the dense peak (the kernel's published rate on the MI300X, taken for MI325X of the same family; docs/compute-model.md)"},
		{"MI300X triton", "default", []string{"cluster.gpu=MI300X", "cluster.intra.preset=xGMI", "training.attention_kernel=triton"}, "triton at 0.325 of the dense peak (the kernel's published rate on the A100, taken for MI300X, which has none; docs/compute-model.md)"},
		{"flex on MI300X", "default", []string{"cluster.gpu=MI300X", "cluster.intra.preset=xGMI", "training.attention_kernel=flex"}, "flex at 0.1474 of the dense peak (FlashAttention-2's published rate on the MI300X × 0.8637, FlexAttention's fraction of FlashAttention-2 on the A100; docs/compute-model.md)"},
		{"flex on H100", "default", []string{"training.attention_kernel=flex"}, "flex at 0.3796 of the dense peak (the kernel's published rate on H100-80GB, docs/compute-model.md)"},
		{"torchtitan cudnn", "default", []string{"stack=torchtitan", "parallelism.zero_stage=3", "training.attention_kernel=cudnn"}, "sdpa, timed as cudnn (training.attention_kernel) at 0.5732 of the dense peak (the kernel's published rate on the H200, taken for H100-80GB of the same family; docs/compute-model.md)"},
		{"sdpa cudnn", "default", []string{"training.attention=sdpa", "training.attention_kernel=cudnn"}, "sdpa, timed as cudnn (training.attention_kernel) at 0.5732 of the dense peak (the kernel's published rate on the H200, taken for H100-80GB of the same family; docs/compute-model.md)"},
		{"eager", "default", []string{"training.attention=eager"}, "eager: QKᵀ and PV at the GEMM efficiency, the s² softmax on HBM"},
		{"no attention", "seed000-mlp", nil, ""},
		// Head dimension (qatput31 F1): the rate at head_dim 128 times the
		// kernel's published ratio: FlashAttention-2 on H100 forward +
		// backward 273/308 at 64 (0.35 × 0.8864 = 0.3102); cuDNN on H100
		// (te on a GH200) 0.7972 of 0.5732, 0.4569; at 96 halfway between
		// 64 and 128; a set rate is the model's own and is not scaled.
		{"head_dim 64", "default", []string{"model.heads=64"},
			"fa2 at 0.3102 of the dense peak (the kernel's published rate on H100-80GB, docs/compute-model.md; ×0.8864 at head_dim 64: its published rate there over its rate at 128, on the H100)"},
		{"head_dim 64 te", "default", []string{"model.heads=64", "training.attention_kernel=te", "cluster.gpu=GH200-96GB"},
			"te at 0.4569 of the dense peak (the kernel's published rate on the H200, taken for GH200-96GB of the same family; docs/compute-model.md; ×0.7972 at head_dim 64: its published rate there over its rate at 128, on the H100)"},
		{"head_dim 96", "default", []string{"model.heads=32", "model.hidden=3072", "training.attention_kernel=cudnn"},
			"cudnn at 0.5151 of the dense peak (the kernel's published rate on the H200, taken for H100-80GB of the same family; docs/compute-model.md; ×0.8986 at head_dim 96: between its published rates at head_dim 64 and 128, linear, on the H100)"},
		{"head_dim 64, set", "default", []string{"model.heads=64", "training.attention_efficiency=0.5"}, "fa2 at 0.5 of the dense peak (training.attention_efficiency)"},
		{"head_dim 64 triton", "default", []string{"model.heads=64", "training.attention_kernel=triton"},
			"triton at 0.175 of the dense peak (the kernel's published rate on H100-80GB, docs/compute-model.md)"},
		// Mistral 7B's 32 blocks slide over 4,096 tokens (MistralConfig).
		{"window, flash", "default", []string{"model.preset=mistral-7b", "model.seq_len=8192"},
			"fa2 at 0.35 of the dense peak (the kernel's published rate on H100-80GB, docs/compute-model.md); 32 of 32 blocks attend over a 4,096-token sliding window, counted over the window"},
		{"window, sdpa", "default", []string{"model.preset=mistral-7b", "model.seq_len=8192", "training.attention=sdpa"},
			"sdpa, timed as fa2 (training.attention_kernel) at 0.35 of the dense peak (the kernel's published rate on H100-80GB, docs/compute-model.md); 32 of 32 blocks attend over a 4,096-token sliding window, every score computed under sdpa"},
		{"window, eager", "default", []string{"model.preset=mistral-7b", "model.seq_len=8192", "training.attention=eager"},
			"eager: QKᵀ and PV at the GEMM efficiency, the s² softmax on HBM; 32 of 32 blocks attend over a 4,096-token sliding window, every score computed under eager"},
		{"window, cp", "default", []string{"model.preset=mistral-7b", "model.seq_len=8192", "parallelism.cp=2", "parallelism.dp=8"},
			"fa2 at 0.35 of the dense peak (the kernel's published rate on H100-80GB, docs/compute-model.md); 32 of 32 blocks attend over a 4,096-token sliding window, counted over all keys under context parallelism"},
		{"window = seq_len", "default", []string{"model.preset=mistral-7b", "model.seq_len=4096"},
			"fa2 at 0.35 of the dense peak (the kernel's published rate on H100-80GB, docs/compute-model.md)"},
		// model.document_len: packed documents, by kernel
		// (zero.PackedAttentionFLOPs); at seq_len the line says nothing.
		{"documents, flash", "default", []string{"model.document_len=512"},
			"fa2 at 0.35 of the dense peak (the kernel's published rate on H100-80GB, docs/compute-model.md); packed documents of 512 tokens, attention confined to each: each document its own causal sequence (flash varlen, Transformer Engine's THD)"},
		{"documents, flex", "default", []string{"model.document_len=512", "training.attention_kernel=flex"},
			"flex at 0.3796 of the dense peak (the kernel's published rate on H100-80GB, docs/compute-model.md); packed documents of 512 tokens, attention confined to each: FlexAttention's non-empty 128×128 tiles computed whole"},
		{"documents, eager", "default", []string{"model.document_len=512", "training.attention=eager"},
			"eager: QKᵀ and PV at the GEMM efficiency, the s² softmax on HBM; packed documents of 512 tokens, attention confined to each: every score computed under eager"},
		{"one-token documents", "default", []string{"model.document_len=1"},
			"fa2 at 0.35 of the dense peak (the kernel's published rate on H100-80GB, docs/compute-model.md); packed documents of 1 token, attention confined to each: each document its own causal sequence (flash varlen, Transformer Engine's THD)"},
		{"documents = seq_len", "default", []string{"model.document_len=4096"},
			"fa2 at 0.35 of the dense peak (the kernel's published rate on H100-80GB, docs/compute-model.md)"},
		// At seq_len = window transformers still hands SDPA the mask
		// (_ignore_causal_mask_sdpa skips it only while kv_length < the
		// window), so zero's blockMask counts every score: the row says so.
		{"window = seq_len, sdpa", "default", []string{"model.preset=mistral-7b", "model.seq_len=4096", "training.attention=sdpa"},
			"sdpa, timed as fa2 (training.attention_kernel) at 0.35 of the dense peak (the kernel's published rate on H100-80GB, docs/compute-model.md); 32 of 32 blocks attend over a 4,096-token sliding window, every score computed under sdpa"},
	} {
		run := exampleRun(t, c.example, c.sets...)
		got := headlineValue(run, "attention")
		if got != c.want {
			t.Errorf("%s: attention row %q, want %q", c.name, got, c.want)
		}
	}
	// Qwen3-Next cut to 8 layers: 6 Gated DeltaNet, every fourth full
	// attention (layer_types); the multi-token-prediction module, which
	// transformers does not build, is left out (no model.mtp_layers).
	// Under eager too: Costs times the delta rule at the GEMM efficiency
	// whatever the softmax kernel.
	linear := "; 6 of 8 blocks are linear attention (gated_delta_net), their delta rule at the GEMM efficiency"
	for _, c := range []struct{ training, want string }{
		// Its full-attention blocks have head_dim 256: FlashAttention-2's
		// forward on H100, 297/333 (FlashAttention-3 paper Fig. 5).
		{"", "fa2 at 0.3122 of the dense peak (the kernel's published rate on H100-80GB, docs/compute-model.md; ×0.8919 at head_dim 256: its published rate there over its rate at 128, on the H100)" + linear},
		{"training: {attention: eager}\n", "eager: QKᵀ and PV at the GEMM efficiency, the s² softmax on HBM" + linear},
	} {
		y := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\n" +
			"model: {hf_config: qwen3-next-80b-a3b-instruct.json, layers: 8, seq_len: 4096}\nparallelism: {dp: 8, zero_stage: 3}\n" + c.training
		got := headlineValue(yamlRun(t, "../scenarios/testdata/hf-extra/s.yaml", []byte(y)), "attention")
		if got != c.want {
			t.Errorf("Qwen3-Next %q: attention row %q, want %q", c.training, got, c.want)
		}
	}
}

// TestAttentionFinding: where attention is a tenth or more of the compute
// and another kernel that runs on the GPU reaches a quarter more of the
// peak, the findings name it and the compute it saves, which is what a run
// with that kernel gives: the nominal compute (Result.Compute) falls by
// exactly that much. FlashAttention-2 on an A100 is already the best
// default there, and an explicit efficiency is the user's own: no finding.
func TestAttentionFinding(t *testing.T) {
	find := func(run *Run) string {
		for _, f := range run.findings() {
			if strings.HasPrefix(f, "Attention is ") {
				return f
			}
		}
		return ""
	}
	for _, c := range []struct {
		name   string
		sets   []string
		kernel string // "" : no finding
		// also: words the finding holds ("" none to check).
		also string
	}{
		{"H100", nil, "fa3", ""},
		{"B200 at 8,192", []string{"cluster.gpu=B200", "model.seq_len=8192"}, "cudnn", ""},
		{"A100", []string{"cluster.gpu=A100-80GB"}, "", ""},
		{"explicit", []string{"training.attention_efficiency=0.3"}, "", ""},
		// Under SDPA the kernel to switch to is one SDPA runs, cuDNN's;
		// FlashAttention-3 is named beside it as called directly
		// (qauser29 F10: the finding named fa3 while the attention line
		// named cudnn).
		{"sdpa H100", []string{"training.attention=sdpa"}, "cudnn", " fa3 reaches 0.6125 where a model calls FlashAttention-3 directly, not through SDPA."},
		// Under stack torchtitan's preset fa2 the finding says which
		// torchtitan that is and which ran cuDNN's attention.
		{"torchtitan H100", []string{"stack=torchtitan", "parallelism.zero_stage=3"}, "cudnn",
			"at fa2's 0.35 of the dense peak on H100-80GB, stack torchtitan's kernel (torchtitan 9dec370, Dec 2024). A torchtitan from 6a3a9da (2025-10-09; on Blackwell from 3b85aa3) to 1695457 (2026-06-09) runs SDPA with cuDNN's attention first: cudnn reaches 0.5732 there"},
		// Megatron's transformer_impl: local runs fa2 (or eager) only:
		// the H100 row's fa3 is refused beside it, so nothing is named.
		{"megatron local H100", []string{"stack=megatron", "training.transformer_impl=local", "training.attention=flash"}, "", ""},
		{"torchtitan B200", []string{"stack=torchtitan", "parallelism.zero_stage=3", "cluster.gpu=B200", "model.seq_len=8192"}, "cudnn", "From 1695457 its language models run FlexAttention (training.attention_kernel: flex, 0.2655 there)."},
	} {
		run := exampleRun(t, "default", c.sets...)
		f := find(run)
		if c.kernel == "" {
			if f != "" {
				t.Errorf("%s: unexpected finding %q", c.name, f)
			}
			continue
		}
		m := regexp.MustCompile(`[;:] (\w+) reaches \S+ there \(training\.attention_kernel: \w+, docs/compute-model\.md\)[:,] (\S+) less compute a step\.`).FindStringSubmatch(f)
		if m == nil || m[1] != c.kernel || !strings.Contains(f, c.also) {
			t.Errorf("%s: finding %q, want %s suggested and %q", c.name, f, c.kernel, c.also)
			continue
		}
		other := exampleRun(t, "default", append(c.sets, "training.attention_kernel="+c.kernel)...)
		if got := (run.Result.Compute - other.Result.Compute).String(); got != m[2] {
			t.Errorf("%s: the finding saves %s, the run with %s %s", c.name, m[2], c.kernel, got)
		}
	}
}

// TestPublishedEfficiencyText: the efficiency is set beside what the
// published runs fitted, on the same GPU or, when none ran there, on the
// others; above them the line says to expect a slower step, below them a
// faster one; plan's one-line form says the same.
func TestPublishedEfficiencyText(t *testing.T) {
	defer func(f func(string, scenarios.FP8Recipe) (float64, float64, int, bool)) { publishedFits = f }(publishedFits)
	defer func(f func(string, scenarios.FP8Recipe) string) { publishedWhere = f }(publishedWhere)
	publishedWhere = func(gpu string, _ scenarios.FP8Recipe) string { return "on " + gpu }
	const bf16, torchao, te = scenarios.FP8None, scenarios.FP8TorchAO, scenarios.FP8TE
	for _, tc := range []struct {
		name        string
		eff         float64
		def         bool
		fp8         scenarios.FP8Recipe
		gpu         string
		lo, hi      float64
		n           int
		onGPU       bool
		want, brief string
	}{
		{"default above, on the GPU", 0.8, true, bf16, "H100-80GB", 0.4213, 0.6201, 5, true,
			"0.8 of the dense peak for large GEMMs (zerosim's default): above the 0.42–0.62 that 5 published bf16 runs on H100-80GB fitted (docs/validation.md), so expect a slower step; calibrate: zerosim calibrate --train-log or --step-time",
			"GEMMs at 0.8 of peak (zerosim's default); 5 published bf16 runs on H100-80GB fitted 0.42–0.62 (expect slower)"},
		{"within", 0.7, false, bf16, "A100-80GB", 0.63, 0.78, 3, true,
			"0.7 of the dense peak for large GEMMs (training.compute_efficiency): 3 published bf16 runs on A100-80GB fitted 0.63–0.78 (docs/validation.md); calibrate: zerosim calibrate --train-log or --step-time",
			"GEMMs at 0.7 of peak (training.compute_efficiency); 3 published bf16 runs on A100-80GB fitted 0.63–0.78"},
		{"below", 0.3, false, bf16, "H100-80GB", 0.4213, 0.6201, 5, true,
			"0.3 of the dense peak for large GEMMs (training.compute_efficiency): below the 0.42–0.62 that 5 published bf16 runs on H100-80GB fitted (docs/validation.md), so expect a faster step; calibrate: zerosim calibrate --train-log or --step-time",
			"GEMMs at 0.3 of peak (training.compute_efficiency); 5 published bf16 runs on H100-80GB fitted 0.42–0.62 (expect faster)"},
		{"0.8 given", 0.8, false, bf16, "H100-80GB", 0.4213, 0.6201, 5, true,
			"0.8 of the dense peak for large GEMMs (training.compute_efficiency): above the 0.42–0.62 that 5 published bf16 runs on H100-80GB fitted (docs/validation.md), so expect a slower step; calibrate: zerosim calibrate --train-log or --step-time",
			"GEMMs at 0.8 of peak (training.compute_efficiency); 5 published bf16 runs on H100-80GB fitted 0.42–0.62 (expect slower)"},
		{"one run", 0.8, true, torchao, "H200", 0.5108, 0.5108, 1, true,
			"0.8 of the dense peak for large GEMMs (zerosim's default for H200: the H100 SXM row's 0.8: its note says \"H200 is the same\"; stas00/ml-engineering compute/accelerator/README.md at 744d01e, MAMF table): above the 0.51 that the one published fp8 run on H200 fitted (docs/validation.md), so expect a slower step; calibrate: zerosim calibrate --train-log or --step-time",
			"GEMMs at 0.8 of peak (zerosim's default from H200's measured matmul maximum); the one published fp8 run on H200 fitted 0.51 (expect slower)"},
		{"other GPUs", 0.8, true, bf16, "B200", 0.42, 0.79, 14, false,
			"0.8 of the dense peak for large GEMMs (zerosim's default for B200: 0.8 × its measured bf16 matmul maximum over the H100's: 1745 of 2250 TFLOPS (0.7756) against 794.5 of 989 (0.8033); stas00/ml-engineering compute/accelerator/README.md at 744d01e, MAMF table): above the 0.42–0.79 that 14 published bf16 runs on other GPUs (carried to B200) fitted (docs/validation.md), so expect a slower step; calibrate: zerosim calibrate --train-log or --step-time",
			"GEMMs at 0.8 of peak (zerosim's default from B200's measured matmul maximum); 14 published bf16 runs on other GPUs (carried to B200) fitted 0.42–0.79 (expect slower)"},
		{"none", 0.8, true, torchao, "B200", 0, 0, 0, false,
			"0.8 of the dense peak for large GEMMs (zerosim's default for B200: 0.8 × its measured bf16 matmul maximum over the H100's: 1745 of 2250 TFLOPS (0.7756) against 794.5 of 989 (0.8033); stas00/ml-engineering compute/accelerator/README.md at 744d01e, MAMF table); no published fp8 run with training.fp8 torchao in docs/validation.md to set it beside; calibrate: zerosim calibrate --train-log or --step-time",
			"GEMMs at 0.8 of peak (zerosim's default from B200's measured matmul maximum); no published fp8 run with training.fp8 torchao to compare (docs/validation.md)"},
		// Transformer Engine's fp8 on H100, whose published fp8 runs are
		// torchao's: not set beside them (qatput30 finding 7b).
		{"another recipe", 0.55, false, te, "H100-80GB", 0, 0, 0, false,
			"0.55 of the dense peak for large GEMMs (training.compute_efficiency); no published fp8 run with training.fp8 te in docs/validation.md to set it beside; calibrate: zerosim calibrate --train-log or --step-time",
			"GEMMs at 0.55 of peak (training.compute_efficiency); no published fp8 run with training.fp8 te to compare (docs/validation.md)"},
		// No row in the MAMF table: the H100's 0.8, said so (QA s29).
		{"no row", 0.8, true, bf16, "L40S", 0.42, 0.79, 14, false,
			"0.8 of the dense peak for large GEMMs (zerosim's default: the H100's 0.8, kept: stas00/ml-engineering compute/accelerator/README.md at 744d01e, MAMF table has no row for L40S): above the 0.42–0.79 that 14 published bf16 runs on other GPUs (carried to L40S) fitted (docs/validation.md), so expect a slower step; calibrate: zerosim calibrate --train-log or --step-time",
			"GEMMs at 0.8 of peak (zerosim's default, the H100's: no measured matmul maximum for L40S); 14 published bf16 runs on other GPUs (carried to L40S) fitted 0.42–0.79 (expect slower)"},
	} {
		publishedFits = func(gpu string, fp8 scenarios.FP8Recipe) (float64, float64, int, bool) {
			if gpu != tc.gpu || fp8 != tc.fp8 {
				t.Errorf("%s: asked for %q, fp8 %q", tc.name, gpu, fp8)
			}
			return tc.lo, tc.hi, tc.n, tc.onGPU
		}
		if got := efficiencyLine(tc.eff, "", tc.def, false, tc.fp8, tc.gpu, false); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
		if got := efficiencyBrief(tc.eff, "", tc.def, false, tc.fp8, tc.gpu); got != tc.brief {
			t.Errorf("%s, plan:\n got %q\nwant %q", tc.name, got, tc.brief)
		}
		if got := efficiencyBrief(tc.eff, "", tc.def, true, tc.fp8, tc.gpu) + efficiencyLine(tc.eff, "", tc.def, true, tc.fp8, tc.gpu, true); got != "" {
			t.Errorf("%s under training.mfu: %q, want nothing", tc.name, got)
		}
	}
}

// TestEfficiencyLineDoc: docs/compute-model.md quotes the line of the
// default efficiency on an H100 (up to its calibrate hint), as run prints
// it: with the step at the published fits on the lines below.
func TestEfficiencyLineDoc(t *testing.T) {
	line := publishedEfficiencyText(scenarios.DefaultComputeEfficiency, true, scenarios.FP8None, "H100-80GB", true)
	quote, _, ok := strings.Cut(line, "; calibrate:")
	if !ok {
		t.Fatalf("line %q has no calibrate hint", line)
	}
	goldenfile.CheckQuotes(t, "../docs/compute-model.md", "publishedEfficiencyText(0.8, bf16, H100-80GB)", quote)
}

// fitsWhoDefault is the published bf16 runs on the default example's
// H100 and the range they fitted, as run's lines quote them.
func fitsWhoDefault(t *testing.T) string {
	lo, hi, n, onGPU := zero.PublishedRange("H100-80GB", scenarios.FP8None)
	if !onGPU {
		t.Fatal("no published bf16 run on H100-80GB")
	}
	return "the " + zero.FittedRange(lo, hi) + " that " + zero.PublishedRuns(n, false, "on H100-80GB") + " fitted"
}

// TestEfficiencyLine: the headline's compute efficiency line sets the
// default, or the scenario's own efficiency, beside the range the published
// runs fitted on that GPU; an efficiency fitted to training.mfu has none.
func TestEfficiencyLine(t *testing.T) {
	for _, tc := range []struct {
		sets []string
		want string
	}{
		// At the default the step is replayed at the published fits too,
		// and the line points at them (not "so expect a slower step").
		{nil, "compute efficiency:  0.8 of the dense peak for large GEMMs (zerosim's default): above " + fitsWhoDefault(t) +
			" (docs/validation.md): the lines below give the step at those fits; calibrate: zerosim calibrate --train-log or --step-time\n"},
		{[]string{"training.compute_efficiency=0.5"}, "compute efficiency:  " + publishedEfficiencyText(0.5, false, scenarios.FP8None, "H100-80GB", false) + "\n"},
		// 0.8 given is the scenario's, not the default (it said "zerosim's
		// default", QA17 L9).
		{[]string{"training.compute_efficiency=0.8"}, "compute efficiency:  " + publishedEfficiencyText(0.8, false, scenarios.FP8None, "H100-80GB", false) + "\n"},
		{[]string{"training.mfu=0.4"}, ""},
	} {
		data, _ := scenarios.Example("default")
		s, err := scenarios.Load("default.yaml", data, tc.sets)
		if err != nil {
			t.Fatal(err)
		}
		res, err := zero.Replay(s, zero.Options{})
		if err != nil {
			t.Fatal(err)
		}
		fits, err := sweep.AtPublishedFits(s, res)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := WriteRunTable(&b, &Run{Scenario: s, Result: res, AtFits: fits}); err != nil {
			t.Fatal(err)
		}
		has := strings.Contains(b.String(), "compute efficiency:")
		switch {
		case tc.want == "" && has:
			t.Errorf("%v: a compute efficiency line, want none", tc.sets)
		case tc.want != "" && !strings.Contains(b.String(), tc.want):
			t.Errorf("%v: no line %q", tc.sets, tc.want)
		}
	}
}

// TestCPText: a step with context parallelism is set beside the published
// runs with it; the row nearest in cp (the worse of two as near) decides
// whether to expect a slower step (more than 10 % predicted over measured),
// and plan's line names the fastest configuration at a cp the runs do not
// put in doubt.
func TestCPText(t *testing.T) {
	defer func(f func() []zero.PublishedCP) { publishedCPRuns = f }(publishedCPRuns)
	runs := []zero.PublishedCP{{Source: "a", CP: 2, Error: 0.032}, {Source: "a", CP: 4, Error: 0.501}, {Source: "b", CP: 8, Error: -0.12}}
	publishedCPRuns = func() []zero.PublishedCP { return runs }
	const list = "published runs with it (a, b): predicted tokens/s +3.2 % at cp 2, +50.1 % at cp 4, -12.0 % at cp 8 against measured"
	for _, tc := range []struct {
		cp   int
		slow bool
	}{
		{2, false}, // its own row: within 10 %
		{3, true},  // cp 2 and cp 4 as near: the worse, cp 4
		{4, true},
		{6, true},   // cp 4 and cp 8 as near: cp 4, +50.1 %
		{16, false}, // cp 8 nearest: predicted slower than it ran
	} {
		want := fmt.Sprintf("cp %d (ring attention over %d GPUs); %s (docs/validation.md, docs/compute-model.md)", tc.cp, tc.cp, list)
		if tc.slow {
			want += ", so expect a slower step"
		}
		if got := cpText(tc.cp); got != want {
			t.Errorf("cp %d:\n got %q\nwant %q", tc.cp, got, want)
		}
		if got := cpBrief(tc.cp); got != list {
			t.Errorf("cp %d, plan:\n got %q\nwant %q", tc.cp, got, list)
		}
	}
	if got := cpText(1) + cpBrief(1); got != "" {
		t.Errorf("cp 1: %q, want nothing", got)
	}

	// plan: the winner at cp 4 is weighed against the fastest row at cp 1
	// or 2 (cp 8's row does not put cp 8 in doubt either: predicted slower).
	row := func(cp int, tps float64) sweep.PlanRow {
		return sweep.PlanRow{Candidate: sweep.Candidate{CP: cp, DP: 16 / cp}, TokensPerSecPerGPU: tps}
	}
	p := &sweep.Plan{CP: 1, Rows: []sweep.PlanRow{row(4, 5422), row(4, 5400), row(2, 5100), row(1, 4805)}}
	if got, want := cpAlternative(p, 4), "; expect cp 4 slower: the fastest at cp 2 ranks 3, 5,100 tokens/s per GPU (--top 3 lists it)"; got != want {
		t.Errorf("plan at cp 4:\n got %q\nwant %q", got, want)
	}
	if got := cpAlternative(p, 2); got != "" {
		t.Errorf("plan at cp 2: %q, want nothing", got)
	}
	p.Rows = p.Rows[:2]
	if got, want := cpAlternative(p, 4), "; expect cp 4 slower"; got != want {
		t.Errorf("plan with only cp 4 rows: %q, want %q", got, want)
	}
	publishedCPRuns = func() []zero.PublishedCP { return nil }
	if got, want := cpText(4), "cp 4 (ring attention over 4 GPUs); no published run with context parallelism in docs/validation.md to set it beside"; got != want {
		t.Errorf("no runs:\n got %q\nwant %q", got, want)
	}
	if got := cpBrief(4) + cpAlternative(p, 4); got != "" {
		t.Errorf("no runs, plan: %q, want nothing", got)
	}
}

// TestCPRunsPublished: the published rows with context parallelism that
// zerosim run quotes are docs/validation.md's (generated from
// testdata/validation/ by TestValidation): torchtitan's Table 2, cp 2, 4
// and 8, the last two more than 10 % predicted over measured, and NeMo
// 24.07's LLAMA3-8B at cp 2 in each of the table's three snapshots.
func TestCPRunsPublished(t *testing.T) {
	runs := zero.PublishedCPRuns()
	var cps []int
	for _, r := range runs {
		cps = append(cps, r.CP)
		doc := fmt.Sprintf("| %+.1f %% |", 100*r.Error)
		goldenfile.CheckQuotes(t, "../docs/validation.md", fmt.Sprintf("published cp %d row", r.CP), doc)
	}
	slices.Sort(cps)
	if !slices.Equal(cps, []int{2, 2, 2, 2, 4, 8}) {
		t.Fatalf("published cp rows %v, want torchtitan Table 2's 2, 4, 8 and NeMo 24.07's three cp 2 rows", cps)
	}
	if !strings.Contains(cpText(4), "expect a slower step") || strings.Contains(cpText(2), "expect a slower step") {
		t.Errorf("cp 4 (+50.1 %% in docs/validation.md) must say to expect a slower step and cp 2 (+3.2 %%) not: %q, %q", cpText(4), cpText(2))
	}
}

// TestCPLine: run's headline carries the context-parallel line for a
// transformer with cp > 1, not at cp 1 and not for seed 000's MLP, whose cp
// only shards (it has no attention to split).
func TestCPLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		sets []string
		want bool
	}{
		{"default", nil, false},
		{"default", []string{"parallelism.cp=2", "parallelism.dp=8"}, true},
		{"seed000-k4", nil, false},
	} {
		var b strings.Builder
		if err := WriteRunTable(&b, exampleRun(t, tc.name, tc.sets...)); err != nil {
			t.Fatal(err)
		}
		line := "context parallel:    " + cpText(2) + "\n"
		if got := strings.Contains(b.String(), line); got != tc.want {
			t.Errorf("%s %v: the line %q present %t, want %t", tc.name, tc.sets, line, got, tc.want)
		}
	}
}

// TestRunHeadlineGroup: the headline's "N (dp·cp)" line gave N alone, so a
// run with context or expert parallelism did not say it was one (Mixtral
// 8x7B at ep 8 read "64", like plain data parallelism). It now names cp and
// ep when they are above 1, and stays N alone otherwise.
func TestRunHeadlineGroup(t *testing.T) {
	const moe = "version: 1\ncluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {preset: deepseek-v2-lite, seq_len: 2048}\n" +
		"parallelism: {dp: 16, zero_stage: 3, ep: 8}\n"
	for _, c := range []struct {
		run  *Run
		want string
	}{
		{exampleRun(t, "seed002-tiny"), "2"},
		{exampleRun(t, "seed000-k4"), "8 (dp 4 × cp 2)"},
		{yamlRun(t, "moe.yaml", []byte(moe)), "16 (routed experts split over ep 8, each expert sharded over 2)"},
	} {
		got := headlineValue(c.run, "N (dp·cp)")
		if got != c.want {
			t.Errorf("%s: N (dp·cp) %q, want %q", c.run.Scenario.Name, got, c.want)
		}
	}
}

// TestRunHeadlineK: at stage 0 the headline said "K: 2 (shard groups of
// 8)" while the memory table of the same run said "K=2 (sharded over 1)"
// and every byte and peak equalled K=1's; stage 0 now says it shards
// nothing, and that a K above 1 has no effect.
func TestRunHeadlineK(t *testing.T) {
	for _, c := range []struct {
		sets []string
		want string
	}{
		{nil, "1 (shard groups of 16)"},
		{[]string{"parallelism.k=2"}, "2 (shard groups of 8)"},
		{[]string{"parallelism.zero_stage=0"}, "1 (stage 0 shards nothing)"},
		{[]string{"parallelism.zero_stage=0", "parallelism.k=2"}, "2 (no effect: stage 0 shards nothing)"},
	} {
		got := headlineValue(exampleRun(t, "default", c.sets...), "K")
		if got != c.want {
			t.Errorf("%v: K %q, want %q", c.sets, got, c.want)
		}
	}
}

// TestRunHeadlineSharedNICs: with nics: per_node the inter-node bandwidth
// is one NIC's, shared by the node's GPUs; the cluster line gave it like a
// per-GPU link ("inter 5.00 GB/s 10µs" for seed 001's Azure nodes, one
// 40 Gb/s NIC per 4 V100s). With nics: per_gpu it says one NIC per GPU
// (qauser s28 M5: "inter 12.50 GB/s 2µs" read alike for both, 8× apart).
func TestRunHeadlineSharedNICs(t *testing.T) {
	for _, c := range []struct {
		run  *Run
		want string
	}{
		{exampleRun(t, "seed001-azure"), "8 nodes × 4 V100-16GB (15.77 GiB usable), intra 150.00 GB/s 500ns, inter 5.00 GB/s 10µs per NIC, 1 NIC per node shared by its 4 GPUs, intel host CPU (the GPU's system)"},
		{exampleRun(t, "default"), "2 nodes × 8 H100-80GB (79.11 GiB usable), intra 450.00 GB/s 500ns, inter 50.00 GB/s 2µs per NIC, 1 NIC per GPU (8 per node), intel host CPU (the GPU's system)"},
		// The host CPU, which NCCL's tuner reads across nodes (QA11 #5).
		{exampleRun(t, "default", "cluster.gpu=A100-80GB"), "2 nodes × 8 A100-80GB (79.18 GiB usable), intra 450.00 GB/s 500ns, inter 50.00 GB/s 2µs per NIC, 1 NIC per GPU (8 per node), amd host CPU (the GPU's system)"},
		{exampleRun(t, "default", "cluster.host.cpu=arm"), "2 nodes × 8 H100-80GB (79.11 GiB usable), intra 450.00 GB/s 500ns, inter 50.00 GB/s 2µs per NIC, 1 NIC per GPU (8 per node), arm host CPU (cluster.host.cpu)"},
	} {
		got := headlineValue(c.run, "cluster")
		if got != c.want {
			t.Errorf("%s: cluster %q, want %q", c.run.Scenario.Name, got, c.want)
		}
	}
}

// TestWindowUtilization: for Mistral 7B at 32,768 tokens (32 blocks over a
// 4,096-token window) MFU and HFU count full attention, which no kernel
// runs, and HFU passes 100 %; the utilization line adds what the kernels
// execute: the cost model's FLOPs of the step (zero.Costs, recompute
// included) over its time and the peak, below 100 %. At 4,096 tokens the
// window covers the sequence and the line has no such note.
func TestWindowUtilization(t *testing.T) {
	for _, tc := range []struct {
		seq  string
		note bool
	}{{"32768", true}, {"4096", false}} {
		run := exampleRun(t, "default", "model.preset=mistral-7b", "model.seq_len="+tc.seq)
		u := run.Result.Utilization
		costs, err := zero.Costs(run.Scenario)
		if err != nil {
			t.Fatal(err)
		}
		var flops float64
		for _, c := range costs {
			flops += float64(c.FwdFLOPs + c.BwdFLOPs)
		}
		want := flops * float64(max(run.Scenario.Training.GradAccum, 1)) / run.Result.StepTime.Seconds() / float64(run.Scenario.Cluster.PeakBF16)
		if math.Abs(u.Executed-want) > 1e-12*want || u.Executed >= 1 {
			t.Errorf("seq %s: executed %.6f of the peak, want %.6f (< 1)", tc.seq, u.Executed, want)
		}
		if tc.note && (u.HFU <= 1 || u.Executed >= u.MFU) {
			t.Errorf("seq %s: MFU %.3f, HFU %.3f, executed %.3f: want HFU above 1 and executed below MFU (full attention counted)", tc.seq, u.MFU, u.HFU, u.Executed)
		}
		if tc.note { // docs/compute-model.md quotes the three figures
			goldenfile.CheckQuotes(t, "../docs/compute-model.md", "Mistral 7B at 32,768 tokens",
				fmt.Sprintf("MFU %.1f %%, HFU %.1f %%).", 100*u.MFU, 100*u.HFU), fmt.Sprintf("included, over the step and the peak): %.1f %% there", 100*u.Executed))
		}
		line := headlineValue(run, "utilization")
		note := fmt.Sprintf("; counting attention as the kernels run it (the causal half, over the windows), the GPU executes %.1f %% of its peak", 100*u.Executed)
		if got := strings.HasSuffix(line, note); got != tc.note {
			t.Errorf("seq %s: utilization %q, note present %t, want %t", tc.seq, line, got, tc.note)
		}
	}
}

// headlineValue is the value of run's headline row label ("" when the
// headline has none).
func headlineValue(run *Run, label string) string {
	for _, kv := range run.headline() {
		if kv[0] == label {
			return kv[1]
		}
	}
	return ""
}

// TestStepTextSameRank (QA F26): with one GPU at half speed the headline
// said "compute 719.055ms …; 355.598ms at full speed", the slow rank's
// compute beside a full-speed rank's. The parenthesis now holds one rank:
// the slow rank's compute and the same rank's with nothing beside it,
// which at speed 1/k is k times the nominal compute exactly (every task
// scales by 1e6/(1e6/k)); compare's row under "compute (busiest rank)" is
// the same rank's too.
func TestStepTextSameRank(t *testing.T) {
	for _, c := range []struct {
		speed string
		k     int64
		sets  []string
	}{
		{"0.5", 2, nil},
		{"0.25", 4, nil},
		{"0.5", 2, []string{"communication.compute_interference=0"}},
	} {
		sets := append([]string{"cluster.gpu_overrides=[{rank: 1, speed: " + c.speed + "}]"}, c.sets...)
		run := yamlRun(t, "slow.yaml", []byte(tinyYAML), sets...)
		r := run.Result
		want := units.Duration(c.k) * r.Compute
		var slow zero.RankStats
		for _, st := range r.Ranks {
			if st.Rank == 1 {
				slow = st
			}
		}
		if b := r.Busiest(); b.Rank != 1 || slow.Alone != want {
			t.Errorf("speed %s %v: busiest rank %d, rank 1 alone %v; want rank 1, %d × %v = %v", c.speed, c.sets, b.Rank, slow.Alone, c.k, r.Compute, want)
		}
		got := headlineValue(run, "step time")
		wantText := fmt.Sprintf("rank 1's compute %v at its cluster.gpu_overrides speed", slow.Compute)
		if slow.Compute > want {
			wantText += fmt.Sprintf(", %s %% of the step; %v without collectives beside it)", percent(int64(slow.Compute), int64(r.StepTime)), want)
		}
		if !strings.Contains(got, wantText) || strings.Contains(got, "full speed") {
			t.Errorf("speed %s %v: step time %q; want it to hold %q", c.speed, c.sets, got, wantText)
		}
	}
	src := sweep.Source{File: "slow.yaml", Data: []byte(tinyYAML)}
	runs, err := sweep.Compare(sweep.Vary(src, "cluster.gpu_overrides", []string{"[]", "[{rank: 1, speed: 0.5}]"}), sweep.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cmp := NewComparison("slow.yaml", runs, false)
	nominal := cmp.Variants[0].ComputePS
	i := slices.IndexFunc(cmp.Rows, func(r compareRow) bool { return r.Metric == "compute (busiest rank)" })
	if i < 0 || i+1 >= len(cmp.Rows) {
		t.Fatalf("compare has no row after \"compute (busiest rank)\"")
	}
	{
		next := cmp.Rows[i+1]
		if next.Metric != "compute (busiest rank) without comm beside it" || next.Values[0] != nominal || next.Values[1] != 2*nominal {
			t.Errorf("compare row %q %v; want the busiest rank's without comm, %d and %d", next.Metric, next.Values, nominal, 2*nominal)
		}
	}
}

// QA s15 finding 4: the critical path's "by kind" shares added up to
// 156.9 % of the step on 4,096 ranks at ZeRO-3 (a prefetched all-gather
// starts with the forward before it, and both counted whole). The kinds'
// percentages of the note add up to 100 %, less than 0.05 points off per
// kind for the rounding.
func TestCriticalPathKindsAddUpToTheStep(t *testing.T) {
	for _, sets := range [][]string{
		{"cluster.nodes=512", "parallelism.dp=4096", "parallelism.zero_stage=3"},
		{"parallelism.zero_stage=3"},
		nil,
	} {
		run := exampleRun(t, "default", sets...)
		var note string
		for _, n := range run.pathTable().Notes {
			if _, after, ok := strings.Cut(n, "by kind: "); ok {
				note = after
			}
		}
		var sum float64
		kinds := 0
		for _, part := range strings.Split(note, ", ") {
			_, pct, ok := strings.Cut(part, " (")
			if !ok {
				t.Fatalf("%v: cannot read %q in %q", sets, part, note)
			}
			v, err := strconv.ParseFloat(strings.TrimSuffix(pct, " %)"), 64)
			if err != nil {
				t.Fatalf("%v: %q: %v", sets, part, err)
			}
			sum += v
			kinds++
		}
		if kinds == 0 || math.Abs(sum-100) > 0.05*float64(kinds) {
			t.Errorf("%v: the critical path's kinds add up to %.1f %% of the step: %s", sets, sum, note)
		}
	}
}

// QA s15 finding 7: gpt3-175b-16k at ZeRO-1 (382.256s, 98.8 % exposed,
// 17,462 collectives of 40 MB over 16,384-rank rings) got no word on
// latency. The finding says NCCL's latency term dominates and names both
// levers with the step each gives: 5× the bucket (200MB) and 8× K, each
// the step of a replay of the example with that --set added.
func TestLatencyBoundFinding(t *testing.T) {
	data, _ := scenarios.Example("gpt3-175b-16k")
	base := []string{"parallelism.zero_stage=1"}
	// Without spans: 16,384 ranks' timelines of 17,462 collectives each
	// are not needed here.
	replay := func(sets ...string) *Run {
		return optsRun(t, zero.Options{NoCollectives: true}, "gpt3-175b-16k.yaml", data, sets...)
	}
	run := replay(base...)
	if !run.Result.LatencyBound() {
		t.Fatal("gpt3-175b-16k at ZeRO-1 is not latency-bound")
	}
	run.Levers = sweep.LatencyLevers(sweep.Source{File: "gpt3-175b-16k.yaml", Data: data, Sets: base}, run.Scenario)
	var sets []string
	for _, l := range run.Levers {
		sets = append(sets, l.Set)
	}
	if want := []string{"communication.bucket_size=200MB", "parallelism.k=8"}; !slices.Equal(sets, want) {
		t.Fatalf("levers %v, want %v", sets, want)
	}
	var text string
	for _, f := range run.findings() {
		if strings.HasPrefix(f, "Per-collective latency") {
			text = f
		}
	}
	lt := run.Result.Latency
	for _, want := range []string{
		fmt.Sprintf("rank 0's 17,462 collectives %v of latency", lt.Latency),
		fmt.Sprintf("%v alone on the links, over groups of up to 16,384 ranks", lt.Modelled),
		"Fewer, larger collectives or smaller groups cut it",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("finding %q lacks %q", text, want)
		}
	}
	for _, set := range sets {
		r := replay(append(slices.Clone(base), set)...)
		if want := fmt.Sprintf("--set %s gives a step of %v (", set, r.Result.StepTime); !strings.Contains(text, want) {
			t.Errorf("finding %q lacks %q", text, want)
		}
	}
	// The default example is compute-bound: no such finding.
	for _, f := range exampleRun(t, "default").findings() {
		if strings.Contains(f, "latency") {
			t.Errorf("default: %q", f)
		}
	}
}

// TestFP8Utilization: under an fp8 recipe run says its MFU and HFU are
// over the bf16 peak (as torchtitan reports MFU) and gives both over
// peak_fp8 too: the default's H100 is 989 and 1,979 TFLOPS dense, an
// MI300X 1,307.4 and 2,614.9 (QA24 L6: its HFU of 113.9 % over the bf16
// peak was unexplained); without fp8, nothing.
func TestFP8Utilization(t *testing.T) {
	for _, c := range []struct {
		sets      []string
		bf16, fp8 float64
	}{
		{[]string{"training.fp8=te"}, 989e12, 1979e12},
		{[]string{"training.fp8=te", "cluster.gpu=MI300X", "cluster.intra.preset=xGMI"}, 1307.4e12, 2614.9e12},
	} {
		run := exampleRun(t, "default", c.sets...)
		u := run.Result.Utilization
		want := fmt.Sprintf("; with fp8 GEMMs MFU and HFU are over the bf16 peak, as torchtitan reports MFU; over peak_fp8 they are %.1f %% and %.1f %%", 100*u.MFU*c.bf16/c.fp8, 100*u.HFU*c.bf16/c.fp8)
		if line := headlineValue(run, "utilization"); !strings.HasSuffix(line, want) || u.HFU <= u.MFU {
			t.Errorf("%v: utilization %q, want it to end %q", c.sets, line, want)
		}
	}
	if line := headlineValue(exampleRun(t, "default"), "utilization"); strings.Contains(line, "peak_fp8") {
		t.Errorf("utilization without fp8: %q", line)
	}
}

// QA4 s16 F4: without a straggler the time table's note said "no rank kept
// another waiting at a collective" while the ranks waited seconds: for a
// degraded link it now says the waiting is for the collectives over that
// link, for a GPU faster than the rest that no rank's compute alone is slower,
// for groups over unequal nodes that theirs finish at different times;
// an even run keeps the old line. The waiting total is the table's
// column summed.
func TestNoStragglerNote(t *testing.T) {
	for _, tc := range []struct {
		name string
		sets []string
		want string // with %v for the waiting total
	}{
		{"even", nil, "no straggler: no rank kept another waiting at a collective"},
		{"rank 3 twice as fast", []string{"cluster.gpu_overrides=[{rank: 3, speed: 2}]"},
			"no straggler: no rank's compute alone is slower than the others' (the ranks wait %v in total at collectives)"},
		{"node 1 gpu 7's nic at 5 GB/s", []string{"cluster.link_overrides=[{node: 1, gpu: 7, class: inter, bandwidth: 5GB/s}]", "parallelism.k=2"},
			"no straggler: no rank's compute alone is slower than the others'; the %v of waiting in total is for collectives over the degraded inter link at node 1 gpu 7 (see the warnings)"},
		// QA17 M2: 3 shard groups of 8 over 4 nodes of 6 GPUs (6 + 2,
		// 4 + 4, 2 + 6) finish at different times.
		{"k 3 over nodes of 6", []string{"cluster.nodes=4", "cluster.gpus_per_node=6", "parallelism.dp=24", "parallelism.zero_stage=3", "parallelism.k=3"},
			"no straggler: no rank's compute alone is slower than the others'; the %v of waiting in total is for collectives of groups that spread over nodes unevenly (parallelism.k; see the warnings), which finish at different times"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := exampleRun(t, "default", tc.sets...)
			var wait units.Duration
			for _, r := range run.Result.Ranks {
				wait += r.Wait
			}
			want := tc.want
			if strings.Contains(want, "%v") {
				if wait == 0 {
					t.Fatal("no rank waited: the case tests nothing")
				}
				want = fmt.Sprintf(want, wait)
			}
			var b bytes.Buffer
			if err := WriteRunTable(&b, run); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), "\n"+want+"\n") || strings.Contains(b.String(), "warning: straggler") {
				t.Errorf("want the note %q and no straggler warning:\n%s", want, b.String())
			}
		})
	}
}

// TestRunOverheadLineOnce: a set memory.allocator_overhead is named once in
// run's report, beside the replay's profiler line, not again under the
// memory model's table (whose profiler lines the replay replaces).
func TestRunOverheadLineOnce(t *testing.T) {
	run := exampleRun(t, "default", "memory.allocator_overhead=0.2")
	var b bytes.Buffer
	if err := WriteRunTable(&b, run); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "allocator overhead 0.2, from memory.allocator_overhead"); n != 1 {
		t.Errorf("the overhead line %d times, want once:\n%s", n, b.String())
	}
}

// TestRunNamesNCCLPins (QA18 M2): a protocol or algorithm pinned by
// communication.nccl_proto / nccl_algo is named in run's header and
// result.json, as NCCL_PROTO and NCCL_ALGO (a pinned LL nearly doubles
// the default step, and nothing said why).
func TestRunNamesNCCLPins(t *testing.T) {
	run := exampleRun(t, "default", "communication.nccl_proto=LL", "communication.nccl_algo=Ring")
	var b bytes.Buffer
	if err := WriteRunTable(&b, run); err != nil {
		t.Fatal(err)
	}
	if want := "algorithm:           auto (NCCL's cost model), pinned: NCCL_ALGO=Ring (communication.nccl_algo), NCCL_PROTO=LL (communication.nccl_proto)\n"; !strings.Contains(b.String(), want) {
		t.Errorf("no %q in:\n%s", want, b.String())
	}
	j := run.toJSON()
	if j.NCCLAlgo != "Ring" || j.NCCLProto != "LL" {
		t.Errorf("result.json nccl_algo %q, nccl_proto %q", j.NCCLAlgo, j.NCCLProto)
	}
	if j := exampleRun(t, "default").toJSON(); j.NCCLAlgo != "" || j.NCCLProto != "" {
		t.Errorf("unpinned: nccl_algo %q, nccl_proto %q", j.NCCLAlgo, j.NCCLProto)
	}
}

// The headline says why the fast path simulated every rank, the check that
// failed (qa21 M2: run printed "no (every rank simulated)" and nothing
// else when ep=16 expert groups straddled 72-GPU nodes).
func TestHeadlineNamesAsymmetry(t *testing.T) {
	run := yamlRun(t, "tree.yaml", []byte(tinyYAML), "communication.algorithm=tree")
	want := "no (every rank simulated: communication.algorithm: tree (a double binary tree is not the same seen from every node))"
	if got := headlineValue(run, "symmetric fast path"); got != want {
		t.Errorf("symmetric fast path %q, want %q", got, want)
	}
}

// torchtitanFA2 is the attention line's note under stack torchtitan with
// its preset's fa2.
const torchtitanFA2 = "stack torchtitan is torchtitan 9dec370 (Dec 2024), whose SDPA ran fa2: cudnn from 6a3a9da, FlexAttention from 1695457 (docs/stacks.md)"

// TestFP8RatioText: under an fp8 recipe run's efficiency line says what
// fp8 GEMMs reach of the efficiency and where the figure comes from (the
// GPU's published GEMM figures, the file, or none published: 1, said).
func TestFP8RatioText(t *testing.T) {
	const doc = "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: %s%s}\nmodel: {kind: transformer, hidden: 4096, layers: 4, heads: 32, seq_len: 2048, vocab: 32000}\nparallelism: {dp: 8, zero_stage: 3}\ntraining: {micro_batch: 1, fp8: %s}\n"
	for _, c := range []struct{ gpu, extra, fp8, want string }{
		{"H100-80GB", "", "torchao", "; fp8 GEMMs reach 0.88 of that efficiency (cluster.fp8_gemm_ratio, from ml-engineering's bf16 and fp8 matmul maxima, compute/accelerator/README.md at stas00/ml-engineering 744d01e)"},
		{"MI300X", "", "torchao", "; fp8 GEMMs reach 0.9 of that efficiency (cluster.fp8_gemm_ratio, from AMD's bf16 and fp8 max-achievable FLOPs, measuring-max-achievable-flops-part2/README.md at ROCm/rocm-blogs 8e01195)"},
		{"MI355X", "", "torchao", "; fp8 GEMMs are taken to reach all of that efficiency (cluster.fp8_gemm_ratio 1: no published bf16 and fp8 GEMM throughput for MI355X; set it if you measured yours)"},
		{"MI300X", ", fp8_gemm_ratio: 0.7", "te", "; fp8 GEMMs reach 0.7 of that efficiency (cluster.fp8_gemm_ratio)"},
		{"H100-80GB", "", "none", ""},
	} {
		s, err := scenarios.Load("w.yaml", []byte(fmt.Sprintf(doc, c.gpu, c.extra, c.fp8)), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := fp8RatioText(s); got != c.want {
			t.Errorf("%s%s fp8 %s: %q, want %q", c.gpu, c.extra, c.fp8, got, c.want)
		}
		if line := efficiencyText(s, false); !strings.HasSuffix(line, c.want) {
			t.Errorf("%s%s fp8 %s: efficiency line %q does not end with it", c.gpu, c.extra, c.fp8, line)
		}
	}
}

// TestDocumentUtilization: with packed documents MFU and HFU keep the
// whole sequence's attention (PaLM's convention, which torchtitan and
// NeMo keep for packed runs: docs/compute-model.md), so they do not
// move, and the line adds what the kernels execute within each document,
// which is below the unpacked run's.
func TestDocumentUtilization(t *testing.T) {
	plain := headlineValue(exampleRun(t, "default"), "utilization")
	packed := headlineValue(exampleRun(t, "default", "model.document_len=512"), "utilization")
	if strings.Contains(plain, "within each document") || !strings.Contains(packed, "counting attention as the kernels run it (the causal half, within each document), the GPU executes ") {
		t.Errorf("utilization lines\n%s\n%s\nwant the packed one to say what the kernels execute within each document", plain, packed)
	}
}
