package reports

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/sweep"
	"github.com/zerosim/zerosim/zero"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// seedK4Comparison is `zerosim compare seed000-k4 --vary parallelism.k=1,4`.
func seedK4Comparison(t *testing.T, sets ...string) *Comparison {
	t.Helper()
	data, ok := scenarios.Example("seed000-k4")
	if !ok {
		t.Fatal("no seed000-k4 example")
	}
	src := sweep.Source{File: "seed000-k4.yaml", Data: data, Sets: sets}
	runs, err := sweep.Compare(sweep.Vary(src, "parallelism.k", []string{"1", "4"}), sweep.CompareOptions{AllK: true})
	if err != nil {
		t.Fatal(err)
	}
	return NewComparison("seed000-k4.yaml, varying parallelism.k", runs, true)
}

// TestCompareSeed000K4 checks seed 000's redundancy example (N=8, dp 4
// across nodes, cp 2 on NVLink, K=4): slow-link data ~2P for K=1 (RS S +
// AG S) and ~6P/8 for K=4 (inter all-reduce 2·3/4·S/2), −62.5 %, beside the
// wire bytes: the flat ring at K=1 puts 7/8·2S = 1.75·S on the busiest
// rank's NIC, hierarchical collectives 2·3/8·S = 0.75·S, the same as K=4,
// and auto, NCCL's ring on the A100 preset (2 ranks a node: 2 channels,
// each leaving every node once on its own NIC), 7/8·S/2 per collective on
// each NIC, 7/8·S for the reduce-scatter and the all-gather: −14.3 % at K=4.
func TestCompareSeed000K4(t *testing.T) {
	c := seedK4Comparison(t)
	const S = 2 * 1_342_382_080
	sl := c.SlowLink
	if sl == nil || sl.S != S || len(sl.Rows) != 6 {
		t.Fatalf("slow-link section %+v", sl)
	}
	for i, want := range []struct {
		k              int
		algo           string
		seed, busiest  int64
		seedDelta, net float64
	}{
		{1, "auto", 2 * S, 7 * S / 8, 0, 0},
		{1, "ring", 2 * S, 7 * S / 4, 0, 0},
		{1, "hierarchical", 2 * S, 3 * S / 4, 0, 0},
		{4, "auto", 3 * S / 4, 3 * S / 4, -62.5, -14.3},
		{4, "ring", 3 * S / 4, 3 * S / 4, -62.5, -57.1},
		{4, "hierarchical", 3 * S / 4, 3 * S / 4, -62.5, 0},
	} {
		r := sl.Rows[i]
		if r.K != want.k || r.Algorithm != want.algo || r.Seed != want.seed || r.NetworkBusiest != want.busiest {
			t.Errorf("row %d: K=%d %s seed %d busiest %d; want K=%d %s %d %d", i, r.K, r.Algorithm, r.Seed, r.NetworkBusiest, want.k, want.algo, want.seed, want.busiest)
		}
		if want.k > 1 && (r.SeedDeltaPct == nil || *r.SeedDeltaPct != want.seedDelta || r.NetworkDeltaPct == nil || *r.NetworkDeltaPct != want.net) {
			t.Errorf("row %d: deltas %v %v, want %v %v", i, pct(r.SeedDeltaPct), pct(r.NetworkDeltaPct), want.seedDelta, want.net)
		}
	}
	// The note gives auto's figures, what a run does, beside the ring's:
	// busiest NIC 7/8·S = 2.19 GiB at K=1 to 3/4·S = 1.88 GiB (−14.3 %), and
	// NVLink in all 35.01 GiB at K=1 (2 channels of 7/8·S/2 per rank and PXN
	// hop) to 20.00 GiB at K=4, where the ring's rises from 17.50 GiB; and it
	// does not call the two-level lowering NCCL's (NCCL's ring is flat).
	for _, want := range []string{
		"hierarchical collectives already give K=1 1.88 GiB (0.750·S)",
		"with auto (what a run does), from 2.19 GiB to 1.88 GiB (-14.3 %)",
		"K=4 moves 2.50 GiB more than alphabeta-ring at K=1 and 15.00 GiB less than auto at K=1",
	} {
		if !strings.Contains(sl.Note, want) {
			t.Errorf("note lacks %q: %s", want, sl.Note)
		}
	}
	if strings.Contains(sl.Note, "NCCL-style") {
		t.Errorf("note calls the two-level collectives NCCL's: %s", sl.Note)
	}
	// The plot covers every K dividing N = 8.
	if got := strings.Join(c.Plot.Categories, " "); got != "K=1 K=2 K=4 K=8" {
		t.Errorf("plot categories %q", got)
	}
	var table, js bytes.Buffer
	if err := WriteCompareTable(&table, c); err != nil {
		t.Fatal(err)
	}
	if err := WriteCompareJSON(&js, c); err != nil {
		t.Fatal(err)
	}
	golden(t, "compare_seed000_k4.table.golden", table.Bytes())
	// --wide keeps the single table with "Δ vs" columns and exact bytes.
	var wide bytes.Buffer
	c.Wide = true
	if err := WriteCompareTable(&wide, c); err != nil {
		t.Fatal(err)
	}
	c.Wide = false
	golden(t, "compare_seed000_k4_wide.table.golden", wide.Bytes())
	golden(t, "compare_seed000_k4.json.golden", js.Bytes())
	var csvOut bytes.Buffer
	if err := WriteCompareCSV(&csvOut, c); err != nil {
		t.Fatal(err)
	}
	golden(t, "compare_seed000_k4.csv.golden", csvOut.Bytes())
}

// TestComparePlots draws both plot kinds to PNG and SVG.
func TestComparePlots(t *testing.T) {
	c := seedK4Comparison(t)
	general := generalPlot("general", c.Variants)
	if len(general.Categories) != 2 || general.Panels[0].Series[0].Values[0] != float64(c.Variants[0].StepTimePS)/1e9 {
		t.Errorf("general plot %+v", general)
	}
	for _, p := range []*comparePlot{&c.Plot, &general} {
		files, err := p.files()
		if err != nil {
			t.Fatal(err)
		}
		if len(files) != 2 || files[0].Name != "compare.png" || files[1].Name != "compare.svg" {
			t.Fatalf("files %v", files)
		}
		png, svg := files[0].Data, files[1].Data
		if !bytes.HasPrefix(png, []byte("\x89PNG")) || !bytes.Contains(svg, []byte("<svg")) {
			t.Errorf("%s: not a PNG and an SVG", p.Title)
		}
		if p == &c.Plot && !bytes.Contains(svg, []byte("K=8")) {
			t.Errorf("slow-link SVG has no K=8 label")
		}
	}
}

// The stage comparison puts wire bytes and memory on separate panels (~350
// GiB of NVLink bytes against ~26–126 GiB of memory), with the GPU's
// capacity and a fit marker on the memory panel, and every axis labelled.
func TestCompareStagePlot(t *testing.T) {
	data, _ := scenarios.Example("default")
	runs, err := sweep.Compare(sweep.Vary(sweep.Source{File: "default.yaml", Data: data}, "parallelism.zero_stage", []string{"0", "1", "2", "3"}), sweep.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := NewComparison("default.yaml, varying parallelism.zero_stage", runs, false).Plot
	if len(p.Panels) != 3 || p.Panels[1].Title != "wire bytes per step, all ranks" || p.Panels[2].Title != "peak memory per GPU" {
		t.Fatalf("panels %+v", p.Panels)
	}
	mem := p.Panels[2]
	if mem.Capacity != float64(7911<<30/100)/(1<<30) || mem.CapacityLabel != "GPU memory 79.11 GiB" || fmt.Sprint(mem.Fits) != "[false true true true]" ||
		len(mem.Series) != 1 || mem.Series[0].Values[1] != float64(58143247360)/(1<<30) {
		t.Errorf("memory panel %+v", mem)
	}
	files, err := p.files()
	if err != nil {
		t.Fatal(err)
	}
	svg := string(files[1].Data)
	for _, want := range []string{"does not fit", "GPU memory 79.11 GiB", ">100<", ">50<", ">400<", ">200<"} {
		if !strings.Contains(svg, want) {
			t.Errorf("compare.svg lacks %q", want)
		}
	}
}

// TestCompareTokensUnrounded: compare's JSON rounded tokens/s to a whole
// token (5 and 5 for seed000-k4's K=1 and K=4, a 0.0 % change). It now
// gives run's 3 decimals: 4 tokens over 109,515,828,955 ps and
// 110,924,594,701 ps on 8 GPUs are 4.5656 and 4.5076 tokens/s, what
// `zerosim run seed000-k4 --set parallelism.k=1|4 --set
// cluster.host.cpu=intel --format json` print (4.566, 4.508), -1.3 %. The
// table keeps whole tokens. The host is pinned to Intel: on the A100
// preset's own host (DGX A100's AMD EPYC) NCCL's ring posts cost twice as
// much and K=1 takes 110.910 ms, 0.0 % from K=4, which would not tell the
// rounded delta from the unrounded one.
func TestCompareTokensUnrounded(t *testing.T) {
	c := seedK4Comparison(t, "cluster.host.cpu=intel")
	if a, b := c.Variants[0].TokensPerSecPerGPU, c.Variants[1].TokensPerSecPerGPU; a != 4.566 || b != 4.508 {
		t.Errorf("variants' tokens/s %v, %v; want 4.566, 4.508", a, b)
	}
	var js, csvOut, table bytes.Buffer
	if err := WriteCompareJSON(&js, c); err != nil {
		t.Fatal(err)
	}
	if err := WriteCompareCSV(&csvOut, c); err != nil {
		t.Fatal(err)
	}
	if err := WriteCompareTable(&table, c); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Rows []struct {
			Metric   string     `json:"metric"`
			Values   []float64  `json:"values"`
			DeltaPct []*float64 `json:"delta_pct"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(got.Rows, func(r struct {
		Metric   string     `json:"metric"`
		Values   []float64  `json:"values"`
		DeltaPct []*float64 `json:"delta_pct"`
	}) bool {
		return r.Metric == "tokens/s per GPU"
	})
	if i < 0 || !slices.Equal(got.Rows[i].Values, []float64{4.566, 4.508}) || got.Rows[i].DeltaPct[1] == nil || *got.Rows[i].DeltaPct[1] != -1.3 {
		t.Errorf("JSON tokens/s row %+v; want values 4.566, 4.508 and -1.3 %%", got.Rows)
	}
	if !strings.Contains(csvOut.String(), "\nmetrics,tokens/s per GPU,tokens/s,4.566,4.508,pct,-1.3,") {
		t.Errorf("CSV:\n%s", csvOut.String())
	}
	if !regexp.MustCompile(`│ tokens/s per GPU +│ +5 │ +5 │ +-1\.3 % │`).MatchString(table.String()) {
		t.Errorf("table:\n%s", table.String())
	}
}

// TestCompareMFU: compare printed tokens/s but no MFU, so comparing GPUs
// (`compare FILE --vary cluster.gpu=H100-80GB,B200`) hid that B200's
// 1.86× the tokens use less of its peak. The MFU row is run's: tokens/s
// per GPU × (6N + 12·L·H·Q·s) / peak, for the default example's Llama 2 7B
// (N = 6,738,415,616 parameters less the untied input embedding's
// 32,000·4,096 = 6,607,343,616, 32 layers, 32 heads of 128, s = 4,096:
// 46,086,512,640 FLOPs a token) on the H100's 989 and the B200's 2,250
// dense bf16 TFLOPS.
func TestCompareMFU(t *testing.T) {
	data, ok := scenarios.Example("default")
	if !ok {
		t.Fatal("no default example")
	}
	runs, err := sweep.Compare(sweep.Vary(sweep.Source{File: "default.yaml", Data: data}, "cluster.gpu", []string{"H100-80GB", "B200"}), sweep.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := NewComparison("default.yaml, varying cluster.gpu", runs, false)
	const flopsPerToken = 6*(6_738_415_616-32_000*4096) + 12*32*32*128*4096
	var want []float64
	for i, peak := range []float64{989e12, 2250e12} {
		v := c.Variants[i]
		tps := float64(4096*16) / (float64(v.StepTimePS) / 1e12) / 16
		mfu := tps * flopsPerToken / peak
		if math.Abs(v.MFU-mfu) > 1e-9 {
			t.Errorf("%s: MFU %v, want %v", v.Label, v.MFU, mfu)
		}
		want = append(want, mfu)
	}
	var table, csvOut bytes.Buffer
	if err := WriteCompareTable(&table, c); err != nil {
		t.Fatal(err)
	}
	if err := WriteCompareCSV(&csvOut, c); err != nil {
		t.Fatal(err)
	}
	delta := math.Round((want[1]-want[0])/want[0]*1000) / 10
	// The table's Δ of a percentage is in points, from the values shown
	// (QA s28 L12: 48.5 % → 54.7 % read "+12.8 %"), and the CSV's too,
	// labelled pts (qauser30 L6: it gave the relative change, 1.3 beside
	// the table's +0.7 pts).
	points := float64(math.Round(want[1]*1000)-math.Round(want[0]*1000)) / 10
	row := fmt.Sprintf("│ MFU +│ +%.1f %% │ +%.1f %% │ +%+.1f pts │", want[0]*100, want[1]*100, points)
	if !regexp.MustCompile(row).MatchString(table.String()) {
		t.Errorf("no row %q in\n%s", row, table.String())
	}
	if line := fmt.Sprintf("\nmetrics,MFU,fraction,%.5f,%.5f,pts,%.1f\n", want[0], want[1], points); !strings.Contains(csvOut.String(), line) || points == delta {
		t.Errorf("no %q in CSV:\n%s", line, csvOut.String())
	}
}

// TestCompareDeviceOverflow: compare's fits row and verdict judged by the
// allocated peak only, so a variant zerosim run warns about ("the device
// needs 92.46 GiB of 79.65 GiB: expect allocator retries or
// out-of-memory", Llama 3.1 70B at HSDP K=4 on 64 H100) read as fitting.
// (that warning's words when the H100 counted 79.65 GiB, before usable
// capacity). The default example with the caching allocator's reserve at
// 0.6 instead of 0.15 keeps its allocated peak (54.15 GiB) and needs 87.64
// GiB of device with the reserve, over the H100's 79.11 GiB usable; the
// verdict says so for that variant only, with run's figure.
func TestCompareDeviceOverflow(t *testing.T) {
	data, _ := scenarios.Example("default")
	src := sweep.Source{File: "default.yaml", Data: data}
	runs, err := sweep.Compare(sweep.Vary(src, "memory.allocator_overhead", []string{"0.15", "0.6"}), sweep.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := NewComparison("default.yaml, varying memory.allocator_overhead", runs, false)
	for i, o := range []string{"0.15", "0.6"} {
		s, err := src.Load("memory.allocator_overhead=" + o)
		if err != nil {
			t.Fatal(err)
		}
		r, err := zero.Replay(s, zero.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if v := c.Variants[i]; v.DevicePeak != r.DevicePeak || !v.Fits {
			t.Errorf("%s: device %d fits %v; run's device %d, fits", v.Label, v.DevicePeak, v.Fits, r.DevicePeak)
		}
	}
	if c.Variants[0].DevicePeak > c.Variants[0].GPUMemory || c.Variants[1].DevicePeak <= c.Variants[1].GPUMemory {
		t.Fatalf("device peaks %d, %d of %d: the case no longer shows the overflow", c.Variants[0].DevicePeak, c.Variants[1].DevicePeak, c.Variants[1].GPUMemory)
	}
	want := fmt.Sprintf("memory.allocator_overhead=0.6 fits (with the CUDA context and NCCL's buffers the device needs %s), but with the caching allocator's usual reserve %s of 79.11 GiB: expect allocator retries, as zerosim run warns.",
		siBytes(c.Variants[1].DeviceNeed), siBytes(c.Variants[1].DevicePeak))
	if !strings.Contains(c.Verdict, want) || strings.Contains(c.Verdict, "allocator_overhead=0.15 fits (") {
		t.Errorf("verdict %q\nwant it to say %q", c.Verdict, want)
	}
	// The allocated peaks are the same, the reserves are not (qa16 M2):
	// the table has the reserved and device rows, and the verdict says
	// what only they show, with the two modes.
	v0, v1 := c.Variants[0], c.Variants[1]
	if v0.PeakMemory != v1.PeakMemory || v0.ReservedPeak >= v1.ReservedPeak {
		t.Fatalf("peaks %d, %d, reserved %d, %d: the case lost its point", v0.PeakMemory, v1.PeakMemory, v0.ReservedPeak, v1.ReservedPeak)
	}
	rows := map[string][]int64{}
	for _, r := range c.Rows {
		rows[r.Metric] = r.Values
	}
	if got := rows["reserved peak (profiler)"]; !slices.Equal(got, []int64{v0.ReservedPeak, v1.ReservedPeak}) {
		t.Errorf("reserved row %v, want %d, %d", got, v0.ReservedPeak, v1.ReservedPeak)
	}
	if got := rows["device peak (nvidia-smi)"]; !slices.Equal(got, []int64{v0.DevicePeak, v1.DevicePeak}) {
		t.Errorf("device row %v, want %d, %d", got, v0.DevicePeak, v1.DevicePeak)
	}
	want = fmt.Sprintf(" As a profiler sees it, memory.allocator_overhead=0.15's caching allocator reserves %s less (%s vs %s: overhead 0.15 (memory.allocator_overhead) vs overhead 0.6 (memory.allocator_overhead)), and the device holds %s less as nvidia-smi shows it (%s vs %s).",
		siBytes(v1.ReservedPeak-v0.ReservedPeak), siBytes(v0.ReservedPeak), siBytes(v1.ReservedPeak), siBytes(v1.DevicePeak-v0.DevicePeak), siBytes(v0.DevicePeak), siBytes(v1.DevicePeak))
	if !strings.Contains(c.Verdict, want) {
		t.Errorf("verdict %q\nwant it to say %q", c.Verdict, want)
	}
}

// TestKNoteTiming: the K note says when the rows it compares are timed by
// another model than auto's (zero.Result.Timing: the explicit ring and
// hierarchical are alpha–beta lowerings, auto NCCL's cost model on a
// cluster with a GPU preset), and says nothing when every row is timed
// alike (a cluster without a GPU preset).
func TestKNoteTiming(t *testing.T) {
	const ab, nccl = "alpha–beta", "NCCL's cost model"
	row := func(k int, algo, timing string, ms int64) slowLinkRow {
		return slowLinkRow{K: k, Algorithm: algo, StepTimePS: ms * 1e9, timing: timing, Fits: true}
	}
	for _, tc := range []struct {
		name string
		rows []slowLinkRow
		want string // "" for no timing sentence
	}{
		{"alpha–beta rows fastest, auto NCCL's",
			[]slowLinkRow{row(1, "auto", nccl, 418), row(1, "ring", ab, 671), row(1, "hierarchical", ab, 409),
				row(2, "auto", nccl, 413), row(2, "ring", ab, 395), row(2, "hierarchical", ab, 395)},
			"Those two rows are timed by zerosim's alpha–beta lowering at the links' full speed, auto's (what a run does) by NCCL's cost model"},
		{"auto K=1 against ring K>1",
			[]slowLinkRow{row(1, "auto", nccl, 400), row(1, "ring", ab, 671), row(1, "hierarchical", ab, 409),
				row(2, "auto", nccl, 413), row(2, "ring", ab, 395), row(2, "hierarchical", ab, 395)},
			"The two are timed apart: auto by NCCL's cost model, ring by zerosim's alpha–beta lowering"},
		{"auto fastest on both sides",
			[]slowLinkRow{row(1, "auto", nccl, 400), row(1, "ring", ab, 671), row(1, "hierarchical", ab, 409),
				row(2, "auto", nccl, 390), row(2, "ring", ab, 395), row(2, "hierarchical", ab, 395)},
			""},
		{"no GPU preset: every row alpha–beta",
			[]slowLinkRow{row(1, "auto", ab, 409), row(1, "ring", ab, 671), row(1, "hierarchical", ab, 409),
				row(2, "auto", ab, 395), row(2, "ring", ab, 395), row(2, "hierarchical", ab, 395)},
			""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			note := kNote(&slowLinks{Rows: tc.rows})
			if tc.want == "" {
				if strings.Contains(note, "timed") {
					t.Errorf("note speaks of timing with every compared row timed alike: %s", note)
				}
				return
			}
			if !strings.Contains(note, tc.want) {
				t.Errorf("note lacks %q: %s", tc.want, note)
			}
		})
	}
}

// QA s15 finding 14: compare's JSON printed "delta_pct": 51.400000000000006
// (`compare default --set cluster.nodes=64 --set parallelism.dp=512 --vary
// parallelism.k=1,2,8`): round(v, 0.1) multiplied the rounded count by 0.1,
// which is not the double nearest 51.4. Every delta of the step-time row is
// the one-decimal number the step times give, spelled in JSON with at most
// one decimal.
func TestCompareDeltaPctOneDecimal(t *testing.T) {
	data, ok := scenarios.Example("default")
	if !ok {
		t.Fatal("no default example")
	}
	src := sweep.Source{File: "default.yaml", Data: data, Sets: []string{"cluster.nodes=64", "parallelism.dp=512"}}
	runs, err := sweep.Compare(sweep.Vary(src, "parallelism.k", []string{"1", "2", "8"}), sweep.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := NewComparison("default.yaml, varying parallelism.k", runs, true)
	var js bytes.Buffer
	if err := WriteCompareJSON(&js, c); err != nil {
		t.Fatal(err)
	}
	// Each number after "delta_pct" in the text has at most one decimal.
	for _, m := range regexp.MustCompile(`"(?:\w+_)?delta_pct": (\[[^\]]*\]|[-0-9.e]+|null)`).FindAllStringSubmatch(js.String(), -1) {
		for _, num := range regexp.MustCompile(`-?[0-9][0-9.e-]*`).FindAllString(m[1], -1) {
			if _, frac, ok := strings.Cut(num, "."); ok && len(frac) > 1 || strings.Contains(num, "e") {
				t.Errorf("delta_pct %s in %s", num, m[0])
			}
		}
	}
	var got struct {
		Variants []struct {
			StepTimePS int64 `json:"step_time_ps"`
		} `json:"variants"`
		Rows []struct {
			Metric   string     `json:"metric"`
			DeltaPct []*float64 `json:"delta_pct"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Variants) != 3 {
		t.Fatalf("%d variants", len(got.Variants))
	}
	found := false
	for _, r := range got.Rows {
		if r.Metric != "step time" {
			continue
		}
		found = true
		base := got.Variants[0].StepTimePS
		for i, v := range got.Variants {
			want, _ := strconv.ParseFloat(strconv.FormatFloat(float64(v.StepTimePS-base)/float64(base)*100, 'f', 1, 64), 64)
			if i > 0 && (r.DeltaPct[i] == nil || *r.DeltaPct[i] != want) {
				t.Errorf("step time of variant %d: delta %v, want %v", i, r.DeltaPct[i], want)
			}
		}
	}
	if !found {
		t.Errorf("no step time row: %s", js.String())
	}
}

// TestComparePlotUnits: compare's plots give bytes in GiB, as the tables
// beside them, and every axis a quantity with its unit (QA3 s16 finding
// 11a: the slow-link panel was in decimal GB, K=1's seed bar ≈27 "GB"
// where the table says 2.000·S = 25.10 GiB, 26,953,662,464 B for
// default.yaml; its axis read "GB").
func TestComparePlotUnits(t *testing.T) {
	data, _ := scenarios.Example("default")
	runs, err := sweep.Compare(sweep.Vary(sweep.Source{File: "default.yaml", Data: data}, "parallelism.k", []string{"1", "2"}), sweep.CompareOptions{AllK: true})
	if err != nil {
		t.Fatal(err)
	}
	c := NewComparison("default", runs, false)
	general := generalPlot("general", c.Variants)
	for _, tc := range []struct {
		plot   *comparePlot
		panel  int
		series int
		value  float64
	}{
		{&c.Plot, 0, 3, 26_953_662_464.0 / (1 << 30)}, // K=1 seed 000 logical (after auto, ring, hierarchical): 2S
		{&general, 2, 0, float64(c.Variants[0].PeakMemory) / (1 << 30)},
	} {
		p := tc.plot.Panels[tc.panel]
		if got := p.Series[tc.series].Values[0]; math.Abs(got-tc.value) > 1e-9 {
			t.Errorf("%s %q: %g, want %g GiB", tc.plot.Title, p.Title, got, tc.value)
		}
	}
	for _, p := range []*comparePlot{&c.Plot, &general} {
		for _, pn := range p.Panels {
			if !strings.HasSuffix(pn.YLabel, "(GiB)") && !strings.HasSuffix(pn.YLabel, "(ms)") || strings.HasPrefix(pn.YLabel, "(") {
				t.Errorf("%s %q: axis %q, want a quantity in (GiB) or (ms)", p.Title, pn.Title, pn.YLabel)
			}
		}
	}
}

// TestCompareCSVRectangular: compare's CSV is one table any csv reader
// takes whole (Python's csv and pandas read a blank line and rows of
// another length as a ragged file): no blank line, every record as long as
// the header, the first column naming the table. Varying K on seed000-k4
// gives the metrics rows and the slow-link table's 6 rows (K 1 and 4 ×
// auto, ring, hierarchical), whose seed bytes are the section's (2·S and
// 6/8·S, S = 2,684,764,160 B).
func TestCompareCSVRectangular(t *testing.T) {
	c := seedK4Comparison(t)
	var b bytes.Buffer
	if err := WriteCompareCSV(&b, c); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "\n\n") {
		t.Errorf("blank line in the CSV:\n%s", b.String())
	}
	r := csv.NewReader(&b) // FieldsPerRecord 0: every record as long as the first
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatalf("CSV is not one rectangular table: %v", err)
	}
	head := recs[0]
	col := func(name string) int { return slices.Index(head, name) }
	if head[0] != "table" || col("metric") < 0 || col("k") < 0 || col("seed_bytes") < 0 {
		t.Fatalf("header %q", head)
	}
	count := map[string]int{}
	var seeds []string
	for _, rec := range recs[1:] {
		count[rec[0]]++
		if rec[0] == "slow_link" {
			if rec[col("metric")] != "" {
				t.Errorf("slow-link row with a metric: %q", rec)
			}
			seeds = append(seeds, rec[col("k")]+":"+rec[col("seed_bytes")])
		} else if rec[col("k")] != "" {
			t.Errorf("metrics row with a K: %q", rec)
		}
	}
	const S = 2 * 1_342_382_080
	want := []string{}
	for _, k := range []struct {
		k    string
		seed int64
	}{{"1", 2 * S}, {"4", 6 * S / 8}} {
		for range 3 {
			want = append(want, k.k+":"+strconv.FormatInt(k.seed, 10))
		}
	}
	if count["metrics"] != len(c.Rows) || count["slow_link"] != 6 || len(count) != 2 || !slices.Equal(seeds, want) {
		t.Errorf("rows by table %v, slow-link seeds %q; want %d metrics, 6 slow_link with %q", count, seeds, len(c.Rows), want)
	}
}

// TestCompareKPlotFits: varying K, compare.png draws every K dividing N,
// the ones not asked for too, so its step-time panel marks which fit (QA3
// s16 finding 11r: default.yaml asked for K=1,2,4 drew K=16's bars, whose
// peak, 125.51 GiB, `zerosim run --set parallelism.k=16` says does not
// fit, unmarked) and the JSON plot carries the flags: each K's flag is the
// verdict of a replay of that K loaded on its own.
func TestCompareKPlotFits(t *testing.T) {
	data, _ := scenarios.Example("default")
	src := sweep.Source{File: "default.yaml", Data: data}
	runs, err := sweep.Compare(sweep.Vary(src, "parallelism.k", []string{"1", "2", "4"}), sweep.CompareOptions{AllK: true})
	if err != nil {
		t.Fatal(err)
	}
	c := NewComparison("default", runs, false)
	p := c.Plot
	if len(p.Panels) != 2 || !slices.Equal(p.Categories, []string{"K=1", "K=2", "K=4", "K=8", "K=16"}) {
		t.Fatalf("plot categories %q, %d panels", p.Categories, len(p.Panels))
	}
	fits := p.Panels[1].Fits
	if len(fits) != len(p.Categories) {
		t.Fatalf("step-time panel fit flags %v for %d categories", fits, len(p.Categories))
	}
	for i, k := range []string{"1", "2", "4", "8", "16"} {
		s, err := src.Load("parallelism.k=" + k)
		if err != nil {
			t.Fatal(err)
		}
		res, err := zero.Replay(s, zero.Options{NoCollectives: true})
		if err != nil {
			t.Fatal(err)
		}
		if want := res.Fits(int64(s.Cluster.GPUMemory)); fits[i] != want {
			peak, _ := res.Peak()
			t.Errorf("K=%s: plot says fits %v; a replay of K=%s peaks at %d B: fits %v", k, fits[i], k, peak, want)
		}
	}
	if fits[0] != true || fits[4] != false {
		t.Errorf("fit flags %v: want K=1 to fit and K=16 not", fits)
	}
	var js bytes.Buffer
	if err := WriteCompareJSON(&js, c); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"fits": [`) {
		t.Errorf("compare JSON's plot has no fit flags")
	}
}

// TestSlowLinkInS: the slow-link rows count in the section's one S (the
// model's buffer bytes, 2 × 1,342,382,080 B for seed000-k4, the same for
// every K; B F11: each row recomputed its own): seed bytes 2·S at K=1 and
// 6/8·S at K=4, each row's busiest-rank bytes over that S.
func TestSlowLinkInS(t *testing.T) {
	sl := seedK4Comparison(t).SlowLink
	const S = 2 * 1_342_382_080
	if sl == nil || sl.S != S {
		t.Fatalf("slow-link section %+v: want S = %d", sl, S)
	}
	for _, r := range sl.Rows {
		want := map[int]float64{1: 2, 4: 0.75}[r.K]
		if r.SeedS != want || r.NetworkBusiestS != math.Round(float64(r.NetworkBusiest)/S*1000)/1000 {
			t.Errorf("K=%d %s: seed %v·S, busiest %v·S (%d B); want %v·S and %d B / S", r.K, r.Algorithm, r.SeedS, r.NetworkBusiestS, r.NetworkBusiest, want, r.NetworkBusiest)
		}
	}
}

// TestSlowLinkPlotSeriesAligned: in the every-K plot a series has one value
// per K, so a K an algorithm cannot run (hierarchical at K=2 on 3 nodes
// of 8: groups of 12 over 8+4) does not shift the later bars onto the
// wrong K, and an algorithm has the same position, so the same colour, in
// both panels (QA9 #6: ring was green above and orange below).
func TestSlowLinkPlotSeriesAligned(t *testing.T) {
	data, _ := scenarios.Example("default")
	src := sweep.Source{File: "default.yaml", Data: data, Sets: []string{"cluster.nodes=3", "parallelism.dp=24"}}
	runs, err := sweep.Compare(sweep.Vary(src, "parallelism.k", []string{"1", "2"}), sweep.CompareOptions{AllK: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs.Skipped) == 0 {
		t.Fatal("no every-K run skipped: the case no longer tests a gap")
	}
	c := NewComparison("default", runs, false)
	bytesP, timeP := c.Plot.Panels[0], c.Plot.Panels[1]
	for _, pn := range c.Plot.Panels {
		for _, s := range pn.Series {
			if len(s.Values) != len(c.Plot.Categories) {
				t.Errorf("%q %q: %d values for %d K", pn.Title, s.Name, len(s.Values), len(c.Plot.Categories))
			}
		}
	}
	for i, s := range timeP.Series {
		if bytesP.Series[i].Name != s.Name+" wire" {
			t.Errorf("series %d: %q above, %q below", i, bytesP.Series[i].Name, s.Name)
		}
	}
	// K=2 hierarchical did not run: 0 there; K=3 hierarchical did.
	k2, k3 := slices.Index(c.Plot.Categories, "K=2"), slices.Index(c.Plot.Categories, "K=3")
	h := slices.IndexFunc(timeP.Series, func(s plotSeries) bool { return s.Name == "hierarchical" })
	if k2 < 0 || k3 < 0 || h < 0 || timeP.Series[h].Values[k2] != 0 || timeP.Series[h].Values[k3] == 0 {
		t.Errorf("categories %v, hierarchical step times %v", c.Plot.Categories, timeP.Series[h].Values)
	}
	// The 0 is marked not run in both panels (drawn as a label, not read
	// as no traffic); the series that ran everywhere carry no marks.
	for _, s := range []plotSeries{bytesP.Series[h], timeP.Series[h]} {
		if len(s.NotRun) != len(c.Plot.Categories) || !s.NotRun[k2] || s.NotRun[k3] {
			t.Errorf("%q not_run %v over %v, want K=2 only", s.Name, s.NotRun, c.Plot.Categories)
		}
	}
	for _, pn := range c.Plot.Panels {
		for i, s := range pn.Series {
			if i != h && s.NotRun != nil {
				t.Errorf("%q: not_run %v, but it ran at every K", s.Name, s.NotRun)
			}
		}
	}
	l, err := notRunMarks(timeP.Series[h], 7)
	if err != nil || l == nil {
		t.Fatalf("no not-run labels: %v", err)
	}
	if len(l.XYs) != len(runs.Skipped) || l.XYs[0] != (plotter.XY{X: float64(k2), Y: 0}) || l.Labels[0] != "not run" || l.Offset.X != 7 {
		t.Errorf("labels at %v %q offset %v; want one per skipped run, the first at K=2 (%d), y 0, at the bar's offset", l.XYs, l.Labels, l.Offset, k2)
	}
	if l, _ := notRunMarks(timeP.Series[0], 0); l != nil {
		t.Errorf("auto ran everywhere, labels %q", l.Labels)
	}
	// 8 K of 4 series: each group keeps clear of the next K's (the bars
	// covered the neighbouring K and its not-run label).
	if w := barWidth(len(c.Plot.Categories), 4); 4*w > 0.8*570/vg.Length(len(c.Plot.Categories))+1e-9 || barWidth(2, 3) != vg.Points(30) {
		t.Errorf("bar width %v for %d K, %v for 2 (want 30)", w, len(c.Plot.Categories), barWidth(2, 3))
	}
}

// TestCompareSplitKeepsAVariantBesideTheBaseline (QA16 L5): a first
// variant too wide to sit beside the baseline within compareColumns stays
// beside it (a table of the baseline alone was repeated whole in the
// next); more variants than fit go to further tables, each repeating the
// baseline's column and holding at least one variant.
func TestCompareSplitKeepsAVariantBesideTheBaseline(t *testing.T) {
	long := strings.Repeat("x", 45)
	for _, n := range []int{2, 3, 5} {
		c := &Comparison{}
		for i := range n {
			c.Variants = append(c.Variants, compareVariant{Label: fmt.Sprintf("%s=%d", long, i)})
		}
		row := compareRow{Metric: strings.Repeat("m", 40), Unit: "B"}
		for i := range n {
			row.Values = append(row.Values, int64(1000*(i+1)))
			var d *float64
			if i > 0 {
				v := 100 * float64(i)
				d = &v
			}
			row.DeltaPct = append(row.DeltaPct, d)
		}
		c.Rows = []compareRow{row}
		var b strings.Builder
		if err := writeCompareRows(&b, c); err != nil {
			t.Fatal(err)
		}
		tables := strings.Split(b.String(), "┌")[1:]
		if want := n - 1; len(tables) != want {
			t.Errorf("%d variants: %d tables, want %d:\n%s", n, len(tables), want, b.String())
		}
		for k, tab := range tables {
			if !strings.Contains(tab, long+"=0") || !strings.Contains(tab, fmt.Sprintf("%s=%d", long, k+1)) {
				t.Errorf("%d variants: table %d lacks the baseline or variant %d:\n%s", n, k, k+1, tab)
			}
		}
		// The legend says how to get one table when there are several
		// (QA29 #11), and says nothing of it for one.
		hint := fmt.Sprintf("; %d tables to keep within 120 columns, --wide prints one\n", n-1)
		if got := strings.HasSuffix(b.String(), hint); got != (n > 2) {
			t.Errorf("%d variants: legend ends with %q: %v, want %v:\n%s", n, hint, got, n > 2, b.String())
		}
	}
}

// TestCompareSaysUnlikeReserves (QA18 L8): variants whose reserved peaks
// come from different estimates (a simulated caching allocator, a
// fraction of the allocated peak) get a line saying so under the table;
// variants alike get none.
func TestCompareSaysUnlikeReserves(t *testing.T) {
	c := &Comparison{Variants: []compareVariant{{Label: "a", ReservedMode: "overhead 0.15 (default)"}, {Label: "b", ReservedMode: "simulated-expandable"}}}
	var b strings.Builder
	if err := writeReserveModes(&b, c); err != nil {
		t.Fatal(err)
	}
	if want := "reserved peak: the variants' reserves are estimated differently (a: overhead 0.15 (default); b: simulated-expandable), so that row compares unlike estimates\n"; b.String() != want {
		t.Errorf("%q, want %q", b.String(), want)
	}
	c.Variants[1].ReservedMode = c.Variants[0].ReservedMode
	b.Reset()
	if err := writeReserveModes(&b, c); err != nil || b.String() != "" {
		t.Errorf("alike: %q (%v)", b.String(), err)
	}
}

// TestRingLabel: compare's and plan's tables, plot and prose label the
// explicit ring "alphabeta-ring", as zerosim collective --algo spells
// zerosim's alpha–beta flat ring, so that it is not read as NCCL's Ring
// (collective --algo ring; QA23 L10); the JSON keeps the scenario
// key's value, ring.
func TestRingLabel(t *testing.T) {
	c := seedK4Comparison(t)
	var table, js bytes.Buffer
	if err := WriteCompareTable(&table, c); err != nil {
		t.Fatal(err)
	}
	if err := WriteCompareJSON(&js, c); err != nil {
		t.Fatal(err)
	}
	out := table.String()
	for _, want := range []string{"│ 1 │ alphabeta-ring │", "│ 4 │ alphabeta-ring │", "(alphabeta-ring, K=1)", "more than alphabeta-ring at K=1"} {
		if !strings.Contains(out, want) {
			t.Errorf("compare's table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "│ ring ") || strings.Contains(out, "(ring,") || strings.Contains(out, "the ring at") {
		t.Errorf("compare's table still says a bare ring:\n%s", out)
	}
	var names []string
	for _, s := range c.Plot.Panels[0].Series {
		names = append(names, s.Name)
	}
	if !slices.Contains(names, "alphabeta-ring wire") {
		t.Errorf("plot series %q, want alphabeta-ring wire", names)
	}
	if !strings.Contains(js.String(), `"algorithm": "ring"`) {
		t.Errorf("compare's JSON lost the scenario value ring")
	}
	r := sweep.PlanRow{Candidate: sweep.Candidate{Stage: 1, BucketSize: "25MB", Algorithm: "ring"}, Timing: "alpha–beta"}
	if got := commWords(r); !strings.Contains(got, "alphabeta-ring collectives") {
		t.Errorf("plan's words %q, want alphabeta-ring collectives", got)
	}
}
