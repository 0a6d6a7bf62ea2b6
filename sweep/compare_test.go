package sweep

import (
	"slices"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestSeedSlowLink checks seed 000's slow-link accounting on its N=8
// example (dp 4 across nodes, cp 2 in a node) for every K, with S = 2P
// bytes: K=1 counts RS S + AG S = 2S; K=2 (intra groups of 4 span two
// nodes) adds the inter all-reduce 2·1/2·S/4 = S/4 → 2.25S; K=4 (intra
// groups inside a node) counts only 2·3/4·S/2 = 0.75S (seed: 6P/8); K=8
// (no intra group) 2·7/8·S = 1.75S.
func TestSeedSlowLink(t *testing.T) {
	data, _ := scenarios.Example("seed000-k4")
	src := Source{File: "seed000-k4.yaml", Data: data}
	const S = 2 * 1_342_382_080
	for _, tc := range []struct {
		k    string
		want int64
	}{{"1", 2 * S}, {"2", 9 * S / 4}, {"4", 3 * S / 4}, {"8", 7 * S / 4}} {
		for _, algo := range Algorithms {
			o, err := RunVariant(Variant{Label: "k=" + tc.k, Src: src, Sets: []string{"parallelism.k=" + tc.k}}, "communication.algorithm="+algo)
			if err != nil {
				t.Fatal(err)
			}
			if BufferBytes(o.Scenario) != S {
				t.Fatalf("S = %d, want %d", BufferBytes(o.Scenario), S)
			}
			if got := SeedSlowLink(o.Result); got != tc.want {
				t.Errorf("K=%s %s: seed slow-link %d B, want %d", tc.k, algo, got, tc.want)
			}
		}
	}
}

func TestDivisorsLabel(t *testing.T) {
	if got := Divisors(12); !slices.Equal(got, []int{1, 2, 3, 4, 6, 12}) {
		t.Errorf("Divisors(12) = %v", got)
	}
	for in, want := range map[string]string{"a/b/c.yaml": "c", `x\y.yml`: "y", "seed000-k4": "seed000-k4"} {
		if got := Label(in); got != want {
			t.Errorf("Label(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCompareJobs: Compare gives the same runs, in the same order, with one
// replay at a time and with four, and its progress counts every replay:
// the two K variants of seed 000's N=8 example, then the slow-link runs
// (2 variants × 2 algorithms), then every K dividing 8 (4 × 2).
func TestCompareJobs(t *testing.T) {
	data, _ := scenarios.Example("seed000-k4")
	vs := Vary(Source{File: "seed000-k4.yaml", Data: data}, "parallelism.k", []string{"4", "1"})
	const total = 2 + 2*3 + 4*3
	var runs [2]*Runs
	for i, jobs := range []int{1, 4} {
		var calls, last, lastTotal int
		r, err := Compare(vs, CompareOptions{AllK: true, Jobs: jobs, Progress: func(done, n int) {
			calls++
			if done != last+1 || n < lastTotal || done > n {
				t.Errorf("jobs %d: progress (%d, %d) after (%d, %d)", jobs, done, n, last, lastTotal)
			}
			last, lastTotal = done, n
		}})
		if err != nil {
			t.Fatal(err)
		}
		if calls != total || lastTotal != total {
			t.Errorf("jobs %d: %d progress calls ending at total %d, want %d", jobs, calls, lastTotal, total)
		}
		runs[i] = r
	}
	label := func(os []*Outcome) (s []string) {
		for _, o := range os {
			s = append(s, o.Label+" "+strings.Join(o.Sets, ","))
		}
		return s
	}
	a, b := runs[0], runs[1]
	for _, pair := range [][2][]*Outcome{{a.Variants, b.Variants}, {a.SlowLink, b.SlowLink}, {a.AllK, b.AllK}} {
		if !slices.Equal(label(pair[0]), label(pair[1])) {
			t.Errorf("order differs: %q vs %q", label(pair[0]), label(pair[1]))
		}
		for i := range pair[0] {
			if pair[0][i].Result.StepTime != pair[1][i].Result.StepTime {
				t.Errorf("%s: step %v with one job, %v with four", pair[0][i].Label, pair[0][i].Result.StepTime, pair[1][i].Result.StepTime)
			}
		}
	}
	// The slow-link runs are the variants K ascending, auto, ring, hierarchical.
	want := []string{"parallelism.k=1 parallelism.k=1,communication.algorithm=auto", "parallelism.k=1 parallelism.k=1,communication.algorithm=ring",
		"parallelism.k=1 parallelism.k=1,communication.algorithm=hierarchical", "parallelism.k=4 parallelism.k=4,communication.algorithm=auto",
		"parallelism.k=4 parallelism.k=4,communication.algorithm=ring", "parallelism.k=4 parallelism.k=4,communication.algorithm=hierarchical"}
	if got := label(b.SlowLink); !slices.Equal(got, want) {
		t.Errorf("slow-link runs %q, want %q", got, want)
	}
	if len(b.AllK) != 12 || len(b.Skipped) != 0 {
		t.Errorf("%d all-K runs and %q skipped, want 12 and none", len(b.AllK), b.Skipped)
	}
}

// TestRunVariantsFirstError: with several variants failing, the error is
// the first failing variant's in order, whatever finishes first.
func TestRunVariantsFirstError(t *testing.T) {
	data, _ := scenarios.Example("seed000-k4")
	vs := Vary(Source{File: "seed000-k4.yaml", Data: data}, "parallelism.k", []string{"1", "3", "4", "5"})
	for _, jobs := range []int{1, 4} {
		_, err := RunVariants(vs, CompareOptions{Jobs: jobs})
		if err == nil || !strings.Contains(err.Error(), "k=3") || strings.Contains(err.Error(), "k=5") {
			t.Errorf("jobs %d: error %v, want k=3's", jobs, err)
		}
	}
}
