package sweep

import (
	"errors"
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

// model is the memory model's report of s under the judge's convention,
// with the reserve worked out only where it fits (its verdict is then
// whole: memory.ReserveWhereFits), which is where decideWith replays it
// and the replay takes the report.
func (jd judge) model(s *scenarios.Scenario) (*memory.Report, error) {
	r, err := memory.Analyze(s, memory.Options{Convention: jd.conv, Reserve: memory.ReserveWhereFits})
	return r, zero.AdviseBucket(s, err)
}

// verdict is a judge's decision on one layout.
type verdict struct {
	// Peak is the replayed step's peak, as zerosim run prints it, when
	// Replayed; else the memory model's (which rejects the layout, or under
	// a seed's convention).
	Peak     int64
	Fits     bool
	Replayed bool
	// Device is the replayed busiest rank's peak as nvidia-smi sees it
	// (zero.Result.DevicePeak: the caching allocator's reserve, the CUDA
	// context and NCCL's buffers added), 0 when not Replayed.
	Device int64
	// DeviceFit is the replay's zero.Result.DeviceFits on the scenario's
	// GPU: the device peak within it, with no allocator retries and no
	// simulated out-of-memory.
	DeviceFit bool
}

// deviceFits reports whether the layout fits with the device's overheads
// too (DeviceFit): no replay (the model decides) is taken to fit.
func (v verdict) deviceFits() bool { return v.Fits && v.DeviceFit }

// decide screens s with the memory model and replays what it fits.
func (jd judge) decide(s *scenarios.Scenario) (verdict, error) {
	r, err := jd.model(s)
	if err != nil {
		return verdict{}, err
	}
	return jd.decideWith(s, r)
}

// decideWith is decide given s's memory-model report r.
func (jd judge) decideWith(s *scenarios.Scenario, r *memory.Report) (verdict, error) {
	if !jd.replays() || !r.Fits || !zero.Symmetric(s) {
		return verdict{Peak: r.Peak, Fits: r.Fits}, nil
	}
	res, err := zero.Replay(s, zero.Options{NoCollectives: true, Memory: r})
	if err != nil {
		return verdict{}, fmt.Errorf("replay: %w", err)
	}
	peak, _ := res.Peak()
	gpu := int64(s.Cluster.GPUMemory)
	return verdict{Peak: peak, Fits: res.Fits(gpu), Replayed: true, Device: res.DevicePeak, DeviceFit: res.DeviceFits(gpu)}, nil
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
	// Device is the device peak at J (verdict.Device); DeviceJ the least
	// candidate from J on whose device peak fits too (0: none up to jmax),
	// DevicePeak its device peak.
	Device     int64
	DeviceJ    int
	DevicePeak int64
	// TopPeak is the peak at the largest candidate when none fits: the
	// model's when it rejects it (TopReplayed false), else the replay's.
	TopPeak     int64
	TopReplayed bool
}

// probes loads and analyzes the layout at each size x once, and judges it
// once: the searches ask the model's verdict and then the judge's at the
// same sizes, and leastNodes' search for room on the device asks the
// judge again at sizes its first search replayed.
type probes[T int | int64] struct {
	jd     judge
	load   func(x T) (*scenarios.Scenario, error)
	failed error // the first error, which ends the search
	// limited holds each x found over a replay's limits, with the error
	// (zero.LimitError: a scaled model cut into more buckets or tasks than
	// zerosim replays): such an x does not fit, and ends no search.
	limited  map[T]error
	at       map[T]probe
	verdicts map[T]verdict
	judged   int // the judge's decisions taken (each a replay when it replays)
}

type probe struct {
	s *scenarios.Scenario
	r *memory.Report
}

// get is x's scenario and report, nil on an error (kept in failed).
func (p *probes[T]) get(x T) *probe {
	if q, ok := p.at[x]; ok {
		return &q
	}
	if _, ok := p.limited[x]; ok {
		return nil
	}
	s, err := p.load(x)
	if err != nil {
		p.failed = firstErr(p.failed, err)
		return nil
	}
	r, err := p.jd.model(s)
	if p.overLimit(x, err) {
		return nil
	}
	if err != nil {
		p.failed = firstErr(p.failed, err)
		return nil
	}
	if p.at == nil {
		p.at = map[T]probe{}
	}
	p.at[x] = probe{s, r}
	return &probe{s, r}
}

// overLimit reports whether err is x's model over a replay's limits,
// kept in limited.
func (p *probes[T]) overLimit(x T, err error) bool {
	var le *zero.LimitError
	if !errors.As(err, &le) {
		return false
	}
	if p.limited == nil {
		p.limited = map[T]error{}
	}
	p.limited[x] = err
	return true
}

// limitAbove is the limit's error at x+1 when x is the most that fits
// because x+1 is over a replay's limits, else nil.
func (p *probes[T]) limitAbove(x T) error { return p.limited[x+1] }

// model is the memory model's verdict at x (false on an error).
func (p *probes[T]) model(x T) bool {
	q := p.get(x)
	return q != nil && q.r.Fits
}

// decide is the judge's verdict at x (the zero verdict on an error).
func (p *probes[T]) decide(x T) verdict {
	if v, ok := p.verdicts[x]; ok {
		return v
	}
	if _, ok := p.limited[x]; ok {
		return verdict{}
	}
	q := p.get(x)
	if q == nil {
		return verdict{}
	}
	v, err := p.jd.decideWith(q.s, q.r)
	p.judged++
	if p.overLimit(x, err) {
		return verdict{}
	}
	if p.failed = firstErr(p.failed, err); err == nil {
		if p.verdicts == nil {
			p.verdicts = map[T]verdict{}
		}
		p.verdicts[x] = v
	}
	return v
}

// leastNodes is the least j in 1..jmax for which load(j) fits as jd judges
// it. The memory model screens (nothing fits when it rejects jmax) and
// finds its own least j, taking the peak not to grow with j; under
// zerosim's convention replays go from there (leastFrom). An error of load,
// the model or a replay ends the search.
func leastNodes(jmax int, load func(j int) (*scenarios.Scenario, error), jd judge) (nodeSearch, error) {
	var out nodeSearch
	if jmax < 1 {
		return out, nil
	}
	p := &probes[int]{jd: jd, load: load}
	top := p.get(jmax)
	if top == nil {
		return out, p.failed
	}
	if !top.r.Fits {
		out.TopPeak = top.r.Peak
		return out, nil
	}
	start := leastTrue(1, jmax, p.model)
	if p.failed != nil {
		return out, p.failed
	}
	if !jd.replays() {
		// Nothing is replayed: the model's verdict is the device's too
		// (verdict.deviceFits), so room is where it fits.
		out.J, out.Peak, out.DeviceJ = start, p.get(start).r.Peak, start
		return out, nil
	}
	j, ok := leastFrom(1, jmax, start, func(j int) bool { return p.decide(j).Fits })
	if p.failed != nil {
		return nodeSearch{}, p.failed
	}
	if !ok {
		// The model fits the last; the replay does not.
		top := p.decide(jmax)
		out.TopPeak, out.TopReplayed = top.Peak, top.Replayed
		return out, nil
	}
	v := p.decide(j)
	out.J, out.Peak, out.Replayed, out.Device = j, v.Peak, v.Replayed, v.Device
	// The allocated peak fits at j; where the device's does not (zerosim
	// run then warns of allocator retries), the least j from there on
	// where it does, the device peak taken not to grow with j.
	if !v.Replayed || v.deviceFits() {
		out.DeviceJ, out.DevicePeak = j, v.Device
		return out, nil
	}
	if j == jmax {
		return out, nil
	}
	dj, ok := leastFrom(j+1, jmax, j+1, func(j int) bool { return p.decide(j).deviceFits() })
	if p.failed != nil {
		return nodeSearch{}, p.failed
	}
	if ok {
		out.DeviceJ, out.DevicePeak = dj, p.decide(dj).Device
	}
	return out, nil
}

// firstErr keeps the first error.
func firstErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}
