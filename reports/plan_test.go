package reports

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/sweep"
	"github.com/zerosim/zerosim/units"
)

// PlanReason is computed from the rows: the costs the winner avoids
// against the best alternative that differs in stage, K, micro-batch or
// checkpointing (rows that differ only in communication settings are
// skipped), and what it pays.
func TestPlanReason(t *testing.T) {
	ms := int64(units.Millisecond)
	c := func(stage, k int, rc string) sweep.Candidate {
		return sweep.Candidate{Stage: stage, K: k, MicroBatch: 1, GradAccum: 1, Recompute: rc, Prefetch: 1, Algorithm: "ring"}
	}
	row := func(cd sweep.Candidate, step, compute, exposed, peak int64) sweep.PlanRow {
		return sweep.PlanRow{Candidate: cd, StepTime: step * ms, Compute: compute * ms, ExposedComm: exposed * ms, PeakMemory: peak * int64(units.GiB)}
	}
	for _, tc := range []struct {
		name string
		rows []sweep.PlanRow
		want []string
		not  []string
	}{
		{"less exposed communication, more memory", []sweep.PlanRow{
			row(c(3, 1, "selective"), 400, 390, 10, 30),
			row(c(3, 1, "selective"), 401, 390, 11, 29), // same choice, other prefetch: skipped
			row(c(1, 1, "selective"), 440, 390, 50, 50),
		}, []string{"10.0 % faster than the best alternative (#3: ZeRO stage 1", "40.0 ms less exposed communication (10.0 ms vs 50.0 ms)",
			"20.0 GiB less memory"}, []string{"near tie", "pays"}},
		{"recomputation avoided, a near tie", []sweep.PlanRow{
			row(c(3, 1, "selective"), 400, 395, 5, 40),
			row(c(3, 1, "full"), 403, 398, 5, 30),
		}, []string{"a near tie, 0.75 % faster", "3.0 ms less compute at full speed (395 ms vs 398 ms: selective vs full checkpointing)", "it pays 10.0 GiB more memory per GPU"},
			[]string{"exposed communication"}},
		// Searched cp: Llama 2 7B at 32,768 tokens (sweep's TestPlanCP),
		// cp 4 without checkpointing against cp 1 with full, rounded.
		{"context parallelism against checkpointing", []sweep.PlanRow{
			row(sweep.Candidate{CP: 4, DP: 4, Stage: 3, K: 2, MicroBatch: 1, GradAccum: 4, Recompute: "none", Prefetch: 1, Algorithm: "ring"}, 6092, 6001, 24, 62),
			row(sweep.Candidate{CP: 1, DP: 16, Stage: 3, K: 2, MicroBatch: 1, GradAccum: 1, Recompute: "full", Prefetch: 1, Algorithm: "ring"}, 6830, 6800, 6, 32),
		}, []string{"12.1 % faster than the best alternative (#2: ZeRO stage 3 with hybrid shard (HSDP: 2 replicas of 8-GPU shards), no context parallelism (dp 16), micro-batch 1, full",
			"799 ms less compute at full speed (6.00 s vs 6.80 s: none vs full checkpointing)", "it pays 18.0 ms more exposed communication and 30.0 GiB more memory per GPU"}, []string{"near tie"}},
		{"only cp differs", []sweep.PlanRow{
			row(sweep.Candidate{CP: 2, DP: 8, Stage: 3, K: 1, MicroBatch: 1, GradAccum: 2, Recompute: "full", Prefetch: 1, Algorithm: "ring"}, 400, 390, 10, 50),
			row(sweep.Candidate{CP: 4, DP: 4, Stage: 3, K: 1, MicroBatch: 1, GradAccum: 4, Recompute: "full", Prefetch: 1, Algorithm: "ring"}, 420, 405, 15, 40),
		}, []string{"context parallelism 4 (ring attention, dp 4), micro-batch 1 × 4", "15.0 ms less compute at full speed (390 ms vs 405 ms: context parallelism 2 vs 4)"}, nil},
		// The figures are the compute totals, the note why they differ:
		// "30.5 ms less compute at full speed, the optimizer updating 1/32 vs 1/16 of
		// the model (3.33 s vs 3.37 s)" read as the optimizer's time.
		{"only K differs", []sweep.PlanRow{
			row(c(3, 1, "full"), 7000, 3334, 3230, 53),
			row(c(3, 2, "full"), 8180, 3365, 4380, 70),
		}, []string{"31.0 ms less compute at full speed (3.33 s vs 3.37 s: the optimizer updating 1/16 vs 1/8 of the model)"}, []string{"model (3.33 s"}},
		{"only communication settings differ", []sweep.PlanRow{
			row(c(3, 1, "selective"), 400, 395, 5, 40),
			row(c(3, 1, "selective"), 410, 395, 15, 40),
		}, []string{"only its communication settings vary"}, nil},
	} {
		got := PlanReason(&sweep.Plan{N: 16, Rows: tc.rows})
		checkContains(t, tc.name, got, tc.want, tc.not)
	}
}

// A winner with room for the allocator's reserve is set against the next
// row with room, not against the faster rows that need retries, which rank
// after it (QA34 M2) and which the gives line names.
func TestPlanReasonSkipsRetryRows(t *testing.T) {
	ms := int64(units.Millisecond)
	row := func(stage, k int, step int64, room bool) sweep.PlanRow {
		return sweep.PlanRow{Candidate: sweep.Candidate{Stage: stage, K: k, MicroBatch: 1, GradAccum: 1, Recompute: "full", Prefetch: 1, Algorithm: "auto"},
			StepTime: step * ms, Compute: step * ms, PeakMemory: int64(units.GiB), DeviceFit: room, TokensPerSecPerGPU: 1e6 / float64(step)}
	}
	p := &sweep.Plan{N: 32, Rows: []sweep.PlanRow{row(3, 1, 400, true), row(3, 2, 420, true), row(3, 4, 380, false)}}
	checkContains(t, "reason", PlanReason(p), []string{"5.0 % faster than the best alternative (#2: ZeRO stage 3 with"}, []string{"#3"})
	if got, want := fasterWithRetries(p), "; #3 is 5.3 % faster but needs allocator retries"; got != want {
		t.Errorf("fasterWithRetries %q, want %q", got, want)
	}
	// A row faster by less than the table shows is named with the
	// decimals that tell it apart, not as "0.0 % faster".
	for _, tc := range []struct {
		tokens float64
		want   string
	}{{2500.5, "; #3 is 0.02 % faster but needs allocator retries"}, {2500.01, "; #3 is under 0.01 % faster but needs allocator retries"}} {
		near := slices.Clone(p.Rows)
		near[2].StepTime, near[2].TokensPerSecPerGPU = near[0].StepTime-1, tc.tokens
		if got := fasterWithRetries(&sweep.Plan{N: 32, Rows: near}); got != tc.want {
			t.Errorf("fasterWithRetries %q, want %q", got, tc.want)
		}
	}
	p.Rows = p.Rows[:2]
	checkContains(t, "reason", PlanReason(p), []string{"#2"}, nil)
	if got := fasterWithRetries(p); got != "" {
		t.Errorf("without a row that needs retries: %q", got)
	}
	p.Rows = []sweep.PlanRow{row(3, 1, 400, true), row(3, 1, 401, true), row(3, 4, 380, false)}
	checkContains(t, "only comm", PlanReason(p), []string{"only its communication settings vary among the configurations with room for the allocator's reserve"}, nil)
}

// QA s15 finding 5: the "why" called the step less compute and exposed
// communication "waiting" ("7.8 ms less waiting (485 ms vs 493 ms)" on
// gpt3-175b-16k) where run shows no rank waiting: the 485 ms are the
// winner's compute slowed by its collectives (run's step line: compute
// 4.539s, 4.053s at full speed). The reason names the rows' Slowed and
// Wait, and no residual.
func TestPlanReasonNamesSlowdownNotWaiting(t *testing.T) {
	ms := int64(units.Millisecond)
	c := func(k int) sweep.Candidate {
		return sweep.Candidate{Stage: 3, K: k, MicroBatch: 1, GradAccum: 1, Recompute: "full", Prefetch: 1, Algorithm: "auto"}
	}
	for _, tc := range []struct {
		name      string
		w, r      sweep.PlanRow
		want, not []string
	}{
		// gpt3-175b-16k's winner (K 128) against #3 (K 64), in ms:
		// step − compute − exposed is 485 and 493, no rank waits.
		{"slowed, no rank waits", sweep.PlanRow{Candidate: c(128), StepTime: 4571 * ms, Compute: 4054 * ms, ExposedComm: 32 * ms, Slowed: 485 * ms},
			sweep.PlanRow{Candidate: c(64), StepTime: 4573 * ms, Compute: 4046 * ms, ExposedComm: 34 * ms, Slowed: 493 * ms},
			[]string{"8.0 ms less compute slowdown from collectives beside it (485 ms vs 493 ms)"}, []string{"waiting"}},
		// Waiting named only when ranks wait: 3 ms against 10 ms.
		{"ranks wait", sweep.PlanRow{Candidate: c(2), StepTime: 400 * ms, Compute: 380 * ms, ExposedComm: 17 * ms, Wait: 3 * ms},
			sweep.PlanRow{Candidate: c(4), StepTime: 410 * ms, Compute: 380 * ms, ExposedComm: 20 * ms, Wait: 10 * ms},
			[]string{"7.0 ms less waiting for peers (3.0 ms vs 10.0 ms)"}, []string{"slowdown"}},
	} {
		got := PlanReason(&sweep.Plan{N: 16384, Rows: []sweep.PlanRow{tc.w, tc.r}})
		checkContains(t, tc.name, got, tc.want, tc.not)
	}
}

// QA7 F10: the why line gave reasons whose two sides are equal: "the
// optimizer updating 1/8 vs 1/8 of the model" (stage 3 K=4 against stage 1
// K=4 on 32 GPUs), "0.0 GiB more memory per GPU", "0.00 % faster". A
// clause that prints as no difference is left out, the compute note names
// the stages where the shards are equal, and a tie under 0.01 % says so.
func TestPlanReasonNoEqualSides(t *testing.T) {
	ms := int64(units.Millisecond)
	c := func(stage, k int, rc string) sweep.Candidate {
		return sweep.Candidate{Stage: stage, K: k, MicroBatch: 2, GradAccum: 2, Recompute: rc, Prefetch: 1, Algorithm: "auto"}
	}
	for _, tc := range []struct {
		name      string
		w, r      sweep.PlanRow
		want, not []string
	}{
		{"equal shards", sweep.PlanRow{Candidate: c(3, 4, "full"), StepTime: 4600 * ms, Compute: 4340 * ms, ExposedComm: 211 * ms, PeakMemory: 60 << 30},
			sweep.PlanRow{Candidate: c(1, 4, "full"), StepTime: 4628 * ms, Compute: 4347 * ms, ExposedComm: 242 * ms, PeakMemory: 58 << 30},
			[]string{"7.0 ms less compute at full speed (4.34 s vs 4.35 s: ZeRO stage 3 vs 1)"}, []string{"1/8 vs 1/8", "of the model"}},
		{"no memory difference", sweep.PlanRow{Candidate: c(3, 1, "none"), StepTime: 670_000 * ms / 1000, Compute: 461 * ms, ExposedComm: 125 * ms, PeakMemory: 47<<30 + 1<<20},
			sweep.PlanRow{Candidate: c(3, 1, "selective"), StepTime: 670_010 * ms / 1000, Compute: 474 * ms, ExposedComm: 110 * ms, PeakMemory: 47 << 30},
			[]string{"a near tie, under 0.01 % faster", "it pays 15.0 ms more exposed communication"}, []string{"GiB more memory", "0.00 %"}},
	} {
		got := PlanReason(&sweep.Plan{N: 32, Rows: []sweep.PlanRow{tc.w, tc.r}})
		checkContains(t, tc.name, got, tc.want, tc.not)
	}
}

func TestMoreLess(t *testing.T) {
	for _, tc := range []struct {
		d    int64
		want string
	}{{5 << 30, "5.00 GiB more"}, {-5_560_000_000_000, "5.06 TiB less"}, {0, "the same"}} {
		if got := moreLess(tc.d, siBytes); got != tc.want {
			t.Errorf("moreLess(%d) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

// commWords says what auto does from what timed the row: NCCL's cost model
// (algorithm and protocol per collective) or the alpha–beta lowerings.
func TestCommWordsAuto(t *testing.T) {
	for _, tc := range []struct {
		algo, timing, want, not string
	}{
		{"auto", "NCCL's cost model", "auto collectives (NCCL's cost model)", "alpha"},
		{"auto", "NCCL's cost model calibrated by cal.yaml", "auto collectives (NCCL's cost model calibrated by cal.yaml)", "alpha"},
		{"auto", "RCCL's cost model, gfx942", "auto collectives (RCCL's cost model, gfx942)", "alpha"}, // QA11 #2
		{"auto", "alpha–beta", "alpha–beta: hierarchical when the group spans nodes evenly, else ring", "NCCL"},
		{"ring", "alpha–beta", "ring collectives", "auto"},
	} {
		r := sweep.PlanRow{Candidate: sweep.Candidate{Stage: 3, Prefetch: 2, Algorithm: tc.algo}, Timing: tc.timing}
		got := commWords(r)
		if !strings.Contains(got, tc.want) || strings.Contains(got, tc.not) {
			t.Errorf("%s timed by %s: %q, want %q and no %q", tc.algo, tc.timing, got, tc.want, tc.not)
		}
	}
}

// TestCommWordsPrefetch: plan's run line named "the next 1 layers" for
// prefetch depth 1 (zerosim plan docs/examples/llama-3.1-70b.yaml --set
// cluster.gpu=A100-40GB --set cluster.nodes=9 --set parallelism.dp=72).
func TestCommWordsPrefetch(t *testing.T) {
	for _, tc := range []struct {
		prefetch int
		want     string
	}{
		{1, "prefetch depth 1 (the next layer gathered ahead), alphabeta-ring collectives"},
		{2, "prefetch depth 2 (the next 2 layers gathered ahead), alphabeta-ring collectives"},
	} {
		r := sweep.PlanRow{Candidate: sweep.Candidate{Stage: 3, Prefetch: tc.prefetch, Algorithm: "ring"}, Timing: "alpha–beta"}
		if got := commWords(r); got != tc.want {
			t.Errorf("prefetch %d: %q, want %q", tc.prefetch, got, tc.want)
		}
	}
}

// TestCommWordsBucket: the file's bucket size came out as the --set form,
// "40000000B gradient buckets" (zerosim plan default --stages 1).
func TestCommWordsBucket(t *testing.T) {
	for _, tc := range []struct{ size, want string }{
		{"40000000B", "40 MB gradient buckets, alphabeta-ring collectives"},
		{"25MB", "25 MB gradient buckets, alphabeta-ring collectives"},
		{"12345678B", "12.35 MB gradient buckets, alphabeta-ring collectives"},
	} {
		r := sweep.PlanRow{Candidate: sweep.Candidate{Stage: 1, BucketSize: tc.size, Algorithm: "ring"}, Timing: "alpha–beta"}
		if got := commWords(r); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.size, got, tc.want)
		}
	}
}

// TestPlanMFULegend: the legend says how the plan's MFU counts FLOPs, as
// run does: per token for a transformer, 3× the forward FLOPs executed for
// a model without a per-token count.
func TestPlanMFULegend(t *testing.T) {
	for _, c := range []struct {
		fromForward bool
		want        string
	}{
		{false, "6N + 12·L·H·Q·s per token"},
		{true, "3× the forward FLOPs executed"},
	} {
		p := &sweep.Plan{Rows: []sweep.PlanRow{{MFUFromForward: c.fromForward}}}
		if got := strings.Join((&PlanReport{Plan: p}).planLegend(), "\n"); !strings.Contains(got, c.want) || strings.Count(got, "MFU: ") != 1 {
			t.Errorf("from forward %v: legend\n%s\nwant one MFU line saying %q", c.fromForward, got, c.want)
		}
	}
}

// TestNoFitNumbersTellApart: a peak just over the GPU's memory is printed
// with the decimals that tell the two apart, and a small excess in MiB.
func TestNoFitNumbersTellApart(t *testing.T) {
	for _, c := range []struct {
		a, b         int64
		wantA, wantB string
	}{
		{40 * units.GiB, 50 * units.GiB, "40.0 GiB", "50.0 GiB"},
		{3_500_000_000, 3_523_752_960, "3.26 GiB", "3.28 GiB"},
		{units.GiB, units.GiB + 1, "1.000 GiB", "1.000 GiB"}, // at most 3 decimals
	} {
		if a, b := gibApart(c.a, c.b); a != c.wantA || b != c.wantB {
			t.Errorf("gibApart(%d, %d) = %q, %q; want %q, %q", c.a, c.b, a, b, c.wantA, c.wantB)
		}
	}
	for b, want := range map[int64]string{23_752_960: "22.7 MiB", units.GiB / 10: "0.1 GiB", 3 * units.GiB: "3.0 GiB"} {
		if got := overBy(b); got != want {
			t.Errorf("overBy(%d) = %q, want %q", b, got, want)
		}
	}
}

// checkContains reports each of want that got lacks and each of not that
// it has.
func checkContains(t *testing.T, name, got string, want, not []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("%s: %q lacks %q", name, got, w)
		}
	}
	for _, w := range not {
		if strings.Contains(got, w) {
			t.Errorf("%s: %q has %q", name, got, w)
		}
	}
}

// TestPlanRankLegend: when the table skips a rank (a row tying the one
// above in step and peak, differing only in bucket, prefetch or
// algorithm) the # legend says so (QA7 F9: #2 and #4 vanished unsaid).
func TestPlanRankLegend(t *testing.T) {
	row := func(algo string, step int64) sweep.PlanRow {
		return sweep.PlanRow{Candidate: sweep.Candidate{Stage: 3, K: 1, MicroBatch: 1, GradAccum: 1, Recompute: "full", Prefetch: 1, Algorithm: algo},
			StepTime: step, PeakMemory: 10 << 30}
	}
	const skip = "a rank not listed ties the one above in step and peak"
	for _, c := range []struct {
		rows []sweep.PlanRow
		want bool
	}{
		{[]sweep.PlanRow{row("ring", 100), row("hierarchical", 100), row("auto", 120)}, true},
		{[]sweep.PlanRow{row("ring", 100), row("auto", 120)}, false},
	} {
		got := strings.Join((&PlanReport{Plan: &sweep.Plan{Rows: c.rows, SearchedAlgorithms: []string{"auto", "ring", "hierarchical"}}}).planLegend(), "\n")
		if strings.Contains(got, skip) != c.want {
			t.Errorf("%d rows: legend\n%s\nwant %q: %v", len(c.rows), got, skip, c.want)
		}
	}
}

// The rejected-configurations note agrees in number with its count (qa21
// M2: "1 configurations are rejected").
func TestPlanSummaryRejectedCountAgrees(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{{1, "1 configuration is rejected as input"}, {2, "2 configurations are rejected as input"}} {
		var b strings.Builder
		p := &sweep.Plan{Nodes: 1, GPUsPerNode: 8, Invalid: c.n, FirstInvalid: "parallelism.ep=16: x"}
		if err := writePlanSummary(&b, &PlanReport{Plan: p}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), c.want) {
			t.Errorf("%d rejected: want %q in\n%s", c.n, c.want, b.String())
		}
	}
}

// plan -o's manifest lists every list plan.json says was searched, under
// the same name without "searched_" (qa21 LOW 7: searched_ep was in
// plan.json only).
func TestPlanManifestListsEverySearched(t *testing.T) {
	p := &sweep.Plan{Nodes: 1, GPUsPerNode: 8, SearchedStages: []int{1, 3}, SearchedRecompute: []string{"full"},
		SearchedCP: []int{1, 2}, SearchedEP: []int{1, 2, 4, 8}}
	data, err := json.Marshal(newPlanJSON(p, nil))
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		t.Fatal(err)
	}
	m := PlanManifest(&PlanReport{Plan: p})
	for k, v := range top {
		name, ok := strings.CutPrefix(k, "searched_")
		if !ok {
			continue
		}
		got, err := json.Marshal(m.Searched[name])
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(v) {
			t.Errorf("manifest searched.%s = %s, plan.json %s = %s", name, got, k, v)
		}
	}
}

// A bucket size reads in the unit its --set takes: the searched 25MiB
// (PyTorch DDP's default) is "25 MiB", not "26.21 MB".
func TestBucketWords(t *testing.T) {
	for in, want := range map[string]string{"25MiB": "25 MiB", "26214400B": "25 MiB", "40000000B": "40 MB", "200MB": "200 MB", "40000001B": "40 MB", "junk": "junk"} {
		if got := bucketWords(in); got != want {
			t.Errorf("bucketWords(%q) = %q, want %q", in, got, want)
		}
	}
	if got := commCell(sweep.PlanRow{Candidate: sweep.Candidate{Stage: 1, BucketSize: "25MiB"}}); got != "25MiB" {
		t.Errorf("commCell of 25MiB: %q", got)
	}
}

// Two points of the memory-vs-throughput front never read as the same
// memory (30.1 GiB → 10,812 then 30.1 GiB → 11,058 made the slower look
// dominated): their peaks get the decimals that tell them apart, the
// others keep one.
func TestParetoTextTellsTiesApart(t *testing.T) {
	gb := func(g float64) int64 { return int64(g * float64(units.GiB)) }
	row := func(peak int64, tokens float64) sweep.PlanRow {
		return sweep.PlanRow{PeakMemory: peak, TokensPerSecPerGPU: tokens, StepTime: int64(1e15 / tokens), Pareto: true}
	}
	p := &sweep.Plan{Rows: []sweep.PlanRow{row(gb(30.5), 11101), row(gb(30.09), 11058), row(gb(30.08), 10812), row(gb(8.7), 8525)}}
	got := paretoText(p)
	want := "8.7 GiB → 8,525 (#4), 30.08 GiB → 10,812 (#3), 30.09 GiB → 11,058 (#2), 30.5 GiB → 11,101 (#1)"
	if got != want {
		t.Errorf("paretoText:\n got %s\nwant %s", got, want)
	}
	// Three points that read 30.1 GiB take one precision: the third does
	// not fall back to "30.1" after "30.12", reading as less memory.
	p = &sweep.Plan{Rows: []sweep.PlanRow{row(gb(30.14), 11101), row(gb(30.12), 11058), row(gb(30.10), 10812)}}
	got = paretoText(p)
	want = "30.10 GiB → 10,812 (#3), 30.12 GiB → 11,058 (#2), 30.14 GiB → 11,101 (#1)"
	if got != want {
		t.Errorf("paretoText of three points at 30.1 GiB:\n got %s\nwant %s", got, want)
	}
}

// The plan table's title says the figures are at the default efficiency
// when the gives line quotes the published fits beside it, and that rows
// needing allocator retries come last (the README's plan example, README.md
// "# the fastest of the 27 configurations that fit, by tokens/s per GPU at
// the default 0.8; rows with retries (†) last"); without published fits or
// retry rows it says neither.
func TestPlanTableTitle(t *testing.T) {
	ms := int64(units.Millisecond)
	row := func(k int, step int64, room bool) sweep.PlanRow {
		return sweep.PlanRow{Candidate: sweep.Candidate{Stage: 3, K: k, MicroBatch: 1, GradAccum: 1, Recompute: "full", Prefetch: 1, Algorithm: "auto"},
			StepTime: step * ms, Compute: step * ms, PeakMemory: int64(units.GiB), DeviceFit: room, TokensPerSecPerGPU: 1e6 / float64(step)}
	}
	fits := &sweep.PublishedFits{Runs: 2, GPU: "H100-80GB", OnGPU: true, Default: 0.8}
	for _, c := range []struct {
		rows []sweep.PlanRow
		fits *sweep.PublishedFits
		want string
	}{
		{[]sweep.PlanRow{row(1, 400, true), row(2, 420, true), row(4, 380, false)}, fits, "the fastest of the 3 configurations that fit, by tokens/s per GPU at the default 0.8; rows with retries (†) last"},
		{[]sweep.PlanRow{row(1, 400, true), row(2, 420, true), row(4, 380, false)}, nil, "the fastest of the 3 configurations that fit, by tokens/s per GPU; rows with retries (†) last"},
		{[]sweep.PlanRow{row(1, 400, true), row(2, 420, true)}, fits, "the fastest of the 2 configurations that fit, by tokens/s per GPU at the default 0.8"},
	} {
		pr := &PlanReport{Plan: &sweep.Plan{N: 32, Rows: c.rows, PickAtFits: c.fits}}
		if got := pr.planTable().Title; got != c.want {
			t.Errorf("title %q, want %q", got, c.want)
		}
	}
}

// TestPlanHeaderUsableCapacity: on a GPU whose preset gives the capacity
// CUDA exposes (an A100-40GB: 39.39 GiB, scenarios' cudaCapacity), the
// plan's header says "usable"; on one given its datasheet size it does not.
func TestPlanHeaderUsableCapacity(t *testing.T) {
	for _, c := range []struct {
		usable bool
		mem    int64
		want   string
	}{
		{true, 3939 * int64(units.GiB) / 100, "(39.4 GiB usable each)"},
		{false, 80 * int64(units.GiB), "(80.0 GiB each)"},
	} {
		pr := &PlanReport{Plan: &sweep.Plan{Model: "m", Params: 1e9, Nodes: 1, GPUsPerNode: 8, GPU: "A100-40GB", N: 8,
			GPUMemory: c.mem, GPUMemoryUsable: c.usable}}
		var b strings.Builder
		if err := writePlanSummary(&b, pr); err != nil {
			t.Fatal(err)
		}
		first, _, _ := strings.Cut(b.String(), "\n")
		if !strings.HasSuffix(first, c.want) {
			t.Errorf("usable %v: header %q, want it to end %q", c.usable, first, c.want)
		}
	}
}

// TestToFitAccumulationLimit (qauser32 L1): when the global batch leaves a
// rank more sequences than zerosim's accumulation steps (4,096), the least
// micro-batch is the batch's doing, not the memory's, and "to fit:" says
// so first: --global-batch 1M on 16 GPUs ran micro-batch 20 × 3,125 and
// was told to search cp or buy 419 GiB GPUs, where micro-batch 1 fits.
func TestToFitAccumulationLimit(t *testing.T) {
	const advice = "a global batch of at most 65,536 sequences (4,096 per GPU): zerosim models at most 4,096 accumulation steps (training.grad_accum), so the 62,500 sequences per GPU of 1,000,000 need micro-batches of 20 or more; or "
	for _, tc := range []struct {
		name       string
		global     int64
		mb, ga     int64
		oneStep    bool
		wantAdvice bool
	}{
		{"1M sequences on 16 GPUs", 1_000_000, 20, 3125, false, true},
		{"4,096 per GPU: micro-batch 1 is searched", 65_536, 1, 4096, false, false},
		{"no accumulation in the stack", 1_000_000, 62_500, 1, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &sweep.Plan{GlobalBatch: tc.global, GPUMemory: 80 << 30, SmallestPeak: 100 << 30, OneStep: tc.oneStep,
				Smallest: sweep.Candidate{Stage: 3, K: 1, MicroBatch: tc.mb, GradAccum: tc.ga, Recompute: "full", Prefetch: 1}}
			got := ToFit(p)
			if strings.HasPrefix(got, advice) != tc.wantAdvice || !tc.wantAdvice && strings.Contains(got, "accumulation steps (training.grad_accum)") {
				t.Errorf("ToFit: %s\nwant the accumulation limit first: %v", got, tc.wantAdvice)
			}
		})
	}
}

// TestPlanGatherPoolFree (qauser32 L5): under DeepSpeed ZeRO-3 the
// gather pool fills what the peak leaves of the GPU, so every row reads
// 0.0 GiB free; the headline and the legend say why, where a row's
// reserve holds the pool, and not elsewhere.
func TestPlanGatherPoolFree(t *testing.T) {
	for _, tc := range []struct {
		mode string
		want bool
	}{
		{"overhead 0.15 (default)" + memory.GatherPoolMode, true},
		{"simulated-default" + memory.FSDP1GatherPoolMode, true},
		{"simulated-default", false},
	} {
		gpu := int64(80 << 30)
		row := sweep.PlanRow{Candidate: sweep.Candidate{Stage: 3, K: 1, MicroBatch: 1, GradAccum: 1, Recompute: "full", Prefetch: 1, Algorithm: "ring"},
			StepTime: 1e12, PeakMemory: 50 << 30, DevicePeak: gpu, DeviceFit: true, Fits: true, ReservedMode: tc.mode}
		pr := &PlanReport{Plan: &sweep.Plan{Model: "m", Params: 1e9, Nodes: 1, GPUsPerNode: 8, GPU: "H100-80GB", N: 8, DP: 8,
			GPUMemory: gpu, GlobalBatch: 8, Rows: []sweep.PlanRow{row}}}
		var b strings.Builder
		if err := writePlanSummary(&b, pr); err != nil {
			t.Fatal(err)
		}
		legend := strings.Join(pr.planLegend(), "\n")
		head := strings.Join(strings.Fields(b.String()), " ")
		if got := strings.Contains(head, "(0.0 free: DeepSpeed ZeRO-3's gather pool holds the rest, up to its size), 50.0 allocated"); got != tc.want {
			t.Errorf("%s: headline says the pool: %v, want %v:\n%s", tc.mode, got, tc.want, b.String())
		}
		if got := strings.Contains(legend, "gather pool holds the rest"); got != tc.want {
			t.Errorf("%s: legend says the pool: %v, want %v:\n%s", tc.mode, got, tc.want, legend)
		}
	}
}

// TestToFitNodesCandidate (qauser32 M3): when another stage's
// configuration fits on fewer nodes than the least-memory one, "to fit:"
// names it with the node count; when it is the least-memory one, the line
// is as before.
func TestToFitNodesCandidate(t *testing.T) {
	small := sweep.Candidate{EP: 16, Stage: 2, K: 1, MicroBatch: 1, GradAccum: 8, Recompute: "full", Prefetch: -1, Algorithm: "ring"}
	three := sweep.Candidate{EP: 2, Stage: 3, K: 1, MicroBatch: 1, GradAccum: 8, Recompute: "full", Prefetch: 1, Algorithm: "ring"}
	for _, tc := range []struct {
		name string
		nc   sweep.Candidate
		want string
	}{
		{"another stage", three, "4 nodes with ZeRO stage 3, expert parallelism 2, micro-batch 1 × 8 accumulation steps, full activation checkpointing (the least that fit, 2 more)"},
		{"the least-memory one", small, "4 nodes (the least that fit, 2 more)"},
	} {
		p := &sweep.Plan{Nodes: 2, GPUsPerNode: 8, N: 16, DP: 16, GlobalBatch: 128, GPUMemory: 80 << 30, SmallestPeak: 136 << 30,
			Smallest: small, NodesToFit: 4, NodesToRoom: 4, NodesCandidate: tc.nc, SearchedEP: []int{1, 2, 4, 8, 16}}
		if got := ToFit(p); !strings.HasPrefix(got, tc.want+";") {
			t.Errorf("%s: %s\nwant it to start %q", tc.name, got, tc.want)
		}
	}
}

// TestNoFitTextDeviceNeed: when the least-memory configuration's allocated
// peak is within the GPU but the device's need there (the peak with the
// CUDA context and NCCL's buffers) is not, plan says by how much the need
// is over, not a negative excess of the peak (ux32: gpt-oss-20b on 32 GiB
// read "peaks at 31.6 GiB, -411.1 MiB over").
func TestNoFitTextDeviceNeed(t *testing.T) {
	small := sweep.Candidate{Stage: 3, MicroBatch: 1, GradAccum: 8, Recompute: "full"}
	for _, tc := range []struct {
		name       string
		peak, need int64
		want       string
	}{
		{"need over, peak under", 31<<30 + 600<<20, 32<<30 + 300<<20, "peaks at 31.6 GiB, and with the CUDA context and NCCL's buffers the device needs 32.3 GiB, 0.3 GiB over."},
		{"peak over", 33 << 30, 33 << 30, "peaks at 33.0 GiB, 1.0 GiB over."},
	} {
		p := &sweep.Plan{Nodes: 2, GPUsPerNode: 8, N: 16, DP: 16, GlobalBatch: 128, GPUMemory: 32 << 30,
			Smallest: small, SmallestPeak: tc.peak, SmallestNeed: tc.need}
		got := strings.Join(strings.Fields(NoFitText(p)), " ")
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s: %s\nwant it to contain %q", tc.name, got, tc.want)
		}
	}
	// Peak and need within the GPU, the simulated caching allocator out
	// of memory there (fragmentation, memory.AllocSim.OOM): the reason,
	// not "the device needs 31.9 GiB, -102.4 MiB over".
	p := &sweep.Plan{Nodes: 2, GPUsPerNode: 8, N: 16, DP: 16, GlobalBatch: 128, GPUMemory: 32 << 30,
		Smallest: small, SmallestPeak: 31<<30 + 600<<20, SmallestNeed: 31<<30 + 900<<20, SmallestAllocOOM: true}
	got := strings.Join(strings.Fields(NoFitText(p)), " ")
	if want := "peaks at 31.6 GiB, within the GPU with the CUDA context and NCCL's buffers, but the simulated caching allocator runs out of memory there"; !strings.Contains(got, want) || strings.Contains(got, "-") && strings.Contains(got, "MiB over") {
		t.Errorf("allocator out of memory: %s\nwant it to contain %q and no negative excess", got, want)
	}
	// "to fit:" asks for more than the GPU has, not 31.6 GiB of 32.
	if want := "GPUs with more than 32.0 GiB"; !strings.Contains(got, want) {
		t.Errorf("allocator out of memory: %s\nwant it to contain %q", got, want)
	}
	// Need over, peak under: GPUs with what the device needs.
	p.SmallestNeed, p.SmallestAllocOOM = 32<<30+300<<20, false
	if got, want := strings.Join(strings.Fields(NoFitText(p)), " "), "GPUs with at least 32.3 GiB"; !strings.Contains(got, want) {
		t.Errorf("need over: %s\nwant it to contain %q", got, want)
	}
}
