package sweep

import (
	"fmt"
	"sort"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/zero"
)

// The searches of fit (least nodes, largest model) and of plan's
// nothing-fits suggestion (nodes_to_fit) share one path: the memory model
// (cheap, no replay) finds where its verdict turns by a binary search, and
// the judge's verdicts (the model screening, the replay deciding as zerosim
// run --require-fit does) start there and walk to where theirs turns
// (leastFrom). Near capacity the replayed peak differs from the model's
// either way (docs/memory-model.md, model against replay), so the answer
// can be on either side of the model's.

// leastTrue is the least j in [lo, hi] with f(j), for f false below some
// point and true from it on, given f(hi) (sort.Search over [lo, hi)).
// zerosim builds for 64-bit platforms, where int holds every range searched
// (at most 2^50, maxModelParams).
func leastTrue[T int | int64](lo, hi T, f func(T) bool) T {
	return lo + T(sort.Search(int(hi-lo), func(i int) bool { return f(lo + T(i)) }))
}

// leastFrom is the least j in [lo, hi] with f(j), for f false below some
// point and true from it on, starting from guess (the memory model's answer
// when f is a replay's verdict); false when f(hi) is false. It probes guess,
// then away from it by steps that double (guess±1, ±2, ±4, …, clamped to
// [lo, hi]) until f turns, then bisects between the last two probes
// (leastTrue): about 2·log2 of the distance between guess and the answer
// probes, two when the guess is right.
func leastFrom[T int | int64](lo, hi, guess T, f func(T) bool) (T, bool) {
	guess = min(max(guess, lo), hi)
	if f(guess) {
		top := guess // least j known true
		for d := T(1); top > lo; d *= 2 {
			j := max(lo, guess-d)
			if !f(j) {
				return leastTrue(j+1, top, f), true
			}
			top = j
		}
		return lo, true
	}
	below := guess // greatest j known false
	for d := T(1); below < hi; d *= 2 {
		j := min(hi, guess+d)
		if f(j) {
			return leastTrue(below+1, j, f), true
		}
		below = j
	}
	return 0, false
}

// judge decides whether a layout fits its GPUs. Under zerosim's convention
// a layout fits when the memory model and the replayed step both fit it:
// the model screens, as plan's does (a layout it rejects is not replayed),
// and the replay, zerosim run --require-fit's verdict, decides the rest;
// every layout said to fit is then one run accepts. A layout whose ranks do
// not all behave alike (zero.Symmetric: shard groups straddling nodes,
// per-GPU or per-link overrides) is not replayed either: run replays it
// rank by rank (llama2-13b-a100-eth at ZeRO-3, K=8 on 91 nodes: 10 s on a
// 2-core machine on 2026-11-28, against 67 ms for the symmetric 88), too
// slow for a search, so the model decides it and its peak is marked as the
// model's; skipping it instead would answer a node count that is not the
// least. Under a seed's
// convention (memory.ConventionSeed000, ConventionSeed002: model states
// only, as that seed's tables count them) a replay has nothing to match,
// so the model decides, as it always has for those tables.
type judge struct{ conv memory.Convention }

// replays reports whether replays decide (zerosim's convention).
func (jd judge) replays() bool { return jd.conv == memory.ConventionZerosim }

// model is the memory model's report of s under the judge's convention.
func (jd judge) model(s *scenarios.Scenario) (*memory.Report, error) {
	return memory.Analyze(s, memory.Options{Convention: jd.conv})
}

// verdict is a judge's decision on one layout.
type verdict struct {
	// Peak is the replayed step's peak, as zerosim run prints it, when
	// Replayed; else the memory model's (which rejects the layout, or under
	// a seed's convention).
	Peak     int64
	Fits     bool
	Replayed bool
}

// decide screens s with the memory model and replays what it fits.
func (jd judge) decide(s *scenarios.Scenario) (verdict, error) {
	r, err := jd.model(s)
	if err != nil {
		return verdict{}, err
	}
	if !jd.replays() || !r.Fits || !zero.Symmetric(s) {
		return verdict{Peak: r.Peak, Fits: r.Fits}, nil
	}
	res, err := zero.Replay(s, zero.Options{NoCollectives: true})
	if err != nil {
		return verdict{}, fmt.Errorf("replay: %w", err)
	}
	peak, _ := res.Peak()
	return verdict{Peak: peak, Fits: res.Fits(int64(s.Cluster.GPUMemory)), Replayed: true}, nil
}

// nodeStep is the least number of nodes that whole-node layouts of s at K
// step by, as zerosim accepts a cluster: same GPUs per node, dp·cp = nodes ·
// GPUs per node, cp and K·ep dividing it (ep ranks in every shard group of
// N/K).
func nodeStep(s *scenarios.Scenario, k int) int {
	cp, gpn := max(s.Parallelism.CP, 1), max(s.Cluster.GPUsPerNode, 1)
	kep := k * max(s.Parallelism.EP, 1)
	l := cp / gcd(cp, kep) * kep // lcm(cp, K·ep) divides nodes·gpn
	return l / gcd(l, gpn)
}

// nodeSets are the overrides that put s's layout on nodes whole nodes, dp
// grown with them (cp kept).
func nodeSets(s *scenarios.Scenario, nodes int) []string {
	cp, gpn := max(s.Parallelism.CP, 1), max(s.Cluster.GPUsPerNode, 1)
	return []string{fmt.Sprintf("cluster.nodes=%d", nodes), fmt.Sprintf("parallelism.dp=%d", nodes*gpn/cp)}
}

// nodeSearch is the outcome of leastNodes.
type nodeSearch struct {
	// J is the least candidate that fits (0: none), Peak the judge's peak
	// there.
	J        int
	Peak     int64
	Replayed bool // Peak is the replayed step's
	// TopPeak is the peak at the largest candidate when none fits: the
	// model's when it rejects it (TopReplayed false), else the replay's.
	TopPeak     int64
	TopReplayed bool
}

// leastNodes is the least j of js (ascending) for which load(j) fits as jd
// judges it. The memory model screens (nothing fits when it rejects the
// last) and finds its own least j, taking the peak not to grow with j;
// under zerosim's convention replays go from there (leastFrom). An error of
// load, the model or a replay ends the search.
func leastNodes(js []int, load func(j int) (*scenarios.Scenario, error), jd judge) (nodeSearch, error) {
	var out nodeSearch
	if len(js) == 0 {
		return out, nil
	}
	var failed error
	model := func(i int) *memory.Report {
		s, err := load(js[i])
		if err == nil {
			var r *memory.Report
			if r, err = jd.model(s); err == nil {
				return r
			}
		}
		failed = firstErr(failed, err)
		return nil
	}
	last := len(js) - 1
	top := model(last)
	if top == nil {
		return out, failed
	}
	if !top.Fits {
		out.TopPeak = top.Peak
		return out, nil
	}
	start := leastTrue(0, last, func(i int) bool { r := model(i); return r != nil && r.Fits })
	if failed != nil {
		return out, failed
	}
	if !jd.replays() {
		out.J, out.Peak = js[start], model(start).Peak
		return out, failed
	}
	peaks, replayed := map[int]int64{}, map[int]bool{}
	fits := func(i int) bool {
		s, err := load(js[i])
		if err != nil {
			failed = firstErr(failed, err)
			return false
		}
		v, err := jd.decide(s)
		failed = firstErr(failed, err)
		peaks[i], replayed[i] = v.Peak, v.Replayed
		return v.Fits
	}
	i, ok := leastFrom(0, last, start, fits)
	if failed != nil {
		return nodeSearch{}, failed
	}
	if !ok {
		// The model fits the last; the replay does not.
		out.TopPeak, out.TopReplayed = peaks[last], true
		return out, nil
	}
	out.J, out.Peak, out.Replayed = js[i], peaks[i], replayed[i]
	return out, nil
}

// nodeCandidates lists the multiples j of the node step (j·step nodes, j
// from 1 to jmax) that the least-nodes search of s at K tries: all of them.
func nodeCandidates(jmax int) []int {
	js := make([]int, 0, max(jmax, 0))
	for j := 1; j <= jmax; j++ {
		js = append(js, j)
	}
	return js
}

// firstErr keeps the first error.
func firstErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}
