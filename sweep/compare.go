package sweep

import (
	"cmp"
	"fmt"
	"github.com/zerosim/zerosim/topology"
	"slices"
	"strconv"
	"strings"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/zero"
)

// Variant is one side of a comparison: a source and its own overrides.
type Variant struct {
	Label string
	Src   Source
	Sets  []string
}

// Outcome is a replayed variant.
type Outcome struct {
	Variant
	Scenario *scenarios.Scenario
	Result   *zero.Result
}

// Vary returns one variant per value of key on src, labelled "key=value".
func Vary(src Source, key string, values []string) []Variant {
	out := make([]Variant, len(values))
	for i, v := range values {
		out[i] = Variant{Label: key + "=" + v, Src: src, Sets: []string{key + "=" + v}}
	}
	return out
}

// RunVariant loads and replays one variant with extra overrides after its
// own. Errors name the variant.
func RunVariant(v Variant, extra ...string) (*Outcome, error) {
	sets := append(append([]string(nil), v.Sets...), extra...)
	s, err := v.Src.Load(sets...)
	if err != nil {
		return nil, err
	}
	res, err := zero.Replay(s, zero.Options{})
	if err != nil {
		return nil, fmt.Errorf("%s: %s", v.Label, replayRefusal(err))
	}
	o := &Outcome{Variant: v, Scenario: s, Result: res}
	o.Sets = sets
	return o, nil
}

// RunVariants replays every variant in order.
func RunVariants(vs []Variant, extra ...string) ([]*Outcome, error) {
	var out []*Outcome
	for _, v := range vs {
		o, err := RunVariant(v, extra...)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// Divisors returns the divisors of n in ascending order (n ≥ 1).
func Divisors(n int) []int {
	var d []int
	for k := 1; k <= n; k++ {
		if n%k == 0 {
			d = append(d, k)
		}
	}
	return d
}

// SeedSlowLink is the per-rank slow-link volume of res as seed 000 counts
// it ("Slow-link total": ~2P for K=1, ~6P/8 for N=8, K=4): every phase whose
// collectives put bytes on the network counts its logical volume per rank
// (S for an all-gather or reduce-scatter of S bytes, 2S for an all-reduce),
// except the inter-group all-reduce of K > 1, which counts its ring cost
// 2(K−1)/K·S/(N/K). Phases that stay on NVLink count nothing.
func SeedSlowLink(res *zero.Result) int64 {
	var t int64
	for _, p := range res.Phases {
		if p.Wire[topology.Inter] == 0 {
			continue
		}
		if p.Phase == zero.PhaseInterAR {
			t += p.Sent
		} else {
			t += p.Logical
		}
	}
	return t
}

// BufferBytes is S, the bytes of the full bf16 gradient (or parameter)
// buffer of res's model: 2 bytes per parameter.
func BufferBytes(s *scenarios.Scenario) int64 { return 2 * s.Model.TotalParams() }

// BusiestWire returns the busiest rank's bytes over a link class summed
// over the phases (an upper bound when different ranks are busiest in
// different phases), and the total over every rank.
func BusiestWire(res *zero.Result, class topology.Class) (busiest, total int64) {
	for _, p := range res.Phases {
		busiest += p.MaxRankWire[class]
		total += p.Wire[class]
	}
	return busiest, total
}

// Label returns a short label for a file-based variant: the file's base
// name without .yaml.
func Label(file string) string {
	if i := strings.LastIndexAny(file, "/\\"); i >= 0 {
		file = file[i+1:]
	}
	return strings.TrimSuffix(strings.TrimSuffix(file, ".yaml"), ".yml")
}

// Runs are the replays behind a comparison.
type Runs struct {
	Variants []*Outcome
	// SlowLink holds, when the variants differ in K, every variant (K
	// ascending) run with the flat ring and with hierarchical collectives.
	SlowLink []*Outcome
	// AllK holds, when asked, runs for every K dividing the first
	// variant's N with both algorithms; Skipped says which K could not run.
	AllK    []*Outcome
	Skipped []string
}

// Algorithms are the collective algorithms the slow-link runs compare.
var Algorithms = []string{"ring", "hierarchical"}

// Compare replays the variants, then the slow-link runs when they differ
// in K, then every K dividing N when allK is set (varying parallelism.k).
func Compare(vs []Variant, allK bool) (*Runs, error) {
	outs, err := RunVariants(vs)
	if err != nil {
		return nil, err
	}
	runs := &Runs{Variants: outs}
	ks := map[int]bool{}
	order := make([]int, len(outs))
	for i, o := range outs {
		ks[o.Result.K] = true
		order[i] = i
	}
	if len(ks) > 1 {
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(outs[a].Result.K, outs[b].Result.K) })
		for _, i := range order {
			for _, al := range Algorithms {
				r, err := RunVariant(vs[i], "communication.algorithm="+al)
				if err != nil {
					return nil, err
				}
				runs.SlowLink = append(runs.SlowLink, r)
			}
		}
	}
	if allK && len(outs) > 0 {
		for _, k := range Divisors(outs[0].Result.N) {
			v := Variant{Label: fmt.Sprintf("K=%d", k), Src: vs[0].Src, Sets: []string{"parallelism.k=" + strconv.Itoa(k)}}
			for _, al := range Algorithms {
				r, err := RunVariant(v, "communication.algorithm="+al)
				if err != nil {
					runs.Skipped = append(runs.Skipped, fmt.Sprintf("K=%d %s: %v", k, al, err))
					continue
				}
				runs.AllK = append(runs.AllK, r)
			}
		}
	}
	return runs, nil
}
