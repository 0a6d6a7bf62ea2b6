package zero

import (
	"math"

	"github.com/zerosim/zerosim/collectives"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// Overlap interference: while a collective runs on a GPU its NCCL kernels
// take streaming multiprocessors and HBM bandwidth from the compute kernels
// beside it, so compute runs slower for exactly as long as it overlaps
// communication. Lee et al. 2025, "Characterizing Compute-Communication
// Overlap in GPU-Accelerated Distributed Deep Learning" (arXiv 2507.03114,
// 4 A100/H100/MI250/MI210, GPT and Llama layers) measure "an average
// computational slowdown of 18.9%, with a maximum of 40.0%" against the
// same compute with no communication beside it.
//
// Because the slowdown lasts only while communication runs, the exposed
// time grows smoothly as links slow down: a longer collective first steals
// more from the compute it overlaps, then is exposed, never all at once.

// interference is the compute slowdown and, per simulated rank, the state
// of its compute task under a varying rate (computeRate, one cache line
// for two ranks) and its one completion callback: fire[r] ignores
// superseded events (they fire at another time, or after the task ended),
// so no closure is allocated per re-timing.
type interference struct {
	slow  float64 // compute slowdown while communicating (0: off)
	rates []computeRate
	fire  []func()
}

// computeRate is one rank's compute task under interference: its nominal
// work left (ps at full speed), when that was last brought up to date, the
// number of collectives in flight and when the task is due at the current
// rate (−1 when none is pending: the clock cannot cancel a superseded
// completion event).
type computeRate struct {
	left       float64
	since, due units.Duration
	active     int32
}

func newInterference(e *executor, reps int, slow float64) *interference {
	in := &interference{slow: slow, rates: make([]computeRate, reps), fire: make([]func(), reps)}
	for r := range reps {
		in.rates[r].due = unset
		in.fire[r] = func() {
			c := &in.rates[r]
			if c.due != e.clk.Now() {
				return // superseded by a re-timing
			}
			c.due = unset
			e.done[r]()
		}
	}
	return in
}

// factor is the time per unit of nominal work of a rank with active
// collectives in flight.
func (in *interference) factor(active int32) float64 {
	if active > 0 {
		return 1 + in.slow
	}
	return 1
}

// startCompute begins rank r's compute task of nominal duration d under
// interference and schedules its end.
func (e *executor) startCompute(r int, d units.Duration) {
	c := &e.inter.rates[r]
	c.left = float64(d)
	c.since = e.clk.Now()
	e.scheduleCompute(r, c)
}

// scheduleCompute schedules the end of rank r's compute task (c) at its
// current rate.
func (e *executor) scheduleCompute(r int, c *computeRate) {
	now := e.clk.Now()
	// Saturate at the end of int64 picoseconds as the engine does; the
	// replay reports a step that reaches it as an error.
	d := units.Duration(math.MaxInt64) - now
	if f := math.Ceil(c.left * e.inter.factor(c.active)); f < float64(d) {
		d = units.Duration(f)
	}
	c.due = now + d
	e.clk.After(d, e.inter.fire[r])
}

// commDelta records that a collective started (+1) or ended (−1) on rank r
// and, if r is computing and the rate changes, re-times its compute task.
func (e *executor) commDelta(r int, delta int32) {
	in := e.inter
	if in == nil {
		return
	}
	if r >= e.reps {
		return
	}
	c := &in.rates[r]
	before := in.factor(c.active)
	c.active += delta
	after := in.factor(c.active)
	if e.lanes[r].computing < 0 || before == after {
		return
	}
	now := e.clk.Now()
	c.left = max(c.left-float64(now-c.since)/before, 0)
	c.since = now
	e.scheduleCompute(r, c)
}

// computeInterference is the scenario's compute slowdown while
// communicating (communication.compute_interference).
func computeInterference(s *scenarios.Scenario) float64 {
	return interferenceOf(s, s.Communication.ComputeInterference, scenarios.DefaultComputeInterference)
}

// interferenceOf is an interference key's value v (def when unset), or 0 when
// communication.overlap is false: nothing runs beside compute.
func interferenceOf(s *scenarios.Scenario, v *float64, def float64) float64 {
	if o := s.Communication.Overlap; o != nil && !*o {
		return 0
	}
	if v != nil {
		return *v
	}
	return def
}

// The other half: while compute kernels run on a GPU, the NCCL kernels
// beside them get fewer SMs and less HBM bandwidth, so the collective moves
// its data slower (NVIDIA/nccl#1428, a maintainer: "Very likely, they're
// competing for memory bandwidth"; a collective's data crosses HBM two or
// three times, #1428 again). A collective is one coupled flow group per
// phase whose members progress in lockstep at the pace of the slowest (a
// ring pipeline, collectives/fabric.go), so it is slowed by
// communication.collective_interference while any rank of its group
// computes: its transfers are stretched by 1 + the slowdown when the first
// of its ranks starts computing and back when the last one stops
// (collectives.Handle.SetStretch, sim.Flow.Stretch). Like the compute half
// it lasts exactly as long as the overlap, so the step stays continuous in
// every link's bandwidth. Its default is 0 (off): no published
// characterization gives a figure (scenarios.DefaultCollectiveInterference).

// stretchDen is the denominator of the stretch: slowdowns are applied to a
// millionth.
const stretchDen = 1_000_000

// contention is the executor's state for the collective half: the stretch
// num/stretchDen and, per simulated rank, the collectives of its groups in
// flight.
type contention struct {
	num    uint64
	onRank [][]*collRun
	free   []*collRun // finished, for reuse (a 16k-rank step runs ~50k)
}

// collRun is one collective instance in flight: the simulated ranks of its
// group, how many of them compute now, and its handle once the network has
// started it (it may wait behind another on its communicator's stream).
type collRun struct {
	ranks []int
	busy  int32
	h     *collectives.Handle
	num   uint64
}

func newContention(reps int, slow float64) *contention {
	c := &contention{num: stretchDen + uint64(math.Round(slow*stretchDen)), onRank: make([][]*collRun, reps)}
	// A rank has a few collectives in flight (one per stream, and the
	// queued ones): room for four each in one allocation.
	const room = 4
	backing := make([]*collRun, reps*room)
	for r := range c.onRank {
		c.onRank[r] = backing[r*room : r*room : (r+1)*room]
	}
	return c
}

// openColl records a collective started over the simulated ranks sim,
// counting those that compute now.
func (e *executor) openColl(sim []int) *collRun {
	var c *collRun
	if n := len(e.cont.free); n > 0 {
		c = e.cont.free[n-1]
		e.cont.free = e.cont.free[:n-1]
		*c = collRun{ranks: sim, num: e.cont.num}
	} else {
		c = &collRun{ranks: sim, num: e.cont.num}
	}
	for _, r := range sim {
		if e.lanes[r].computing >= 0 {
			c.busy++
		}
		e.cont.onRank[r] = append(e.cont.onRank[r], c)
	}
	return c
}

// attach gives c its handle when the network starts it.
func (c *collRun) attach(h *collectives.Handle) {
	c.h = h
	if c.busy > 0 {
		h.SetStretch(c.num, stretchDen)
	}
}

// closeColl forgets a finished collective and keeps its record for reuse.
func (e *executor) closeColl(c *collRun) {
	for _, r := range c.ranks {
		l := e.cont.onRank[r]
		for i, x := range l {
			if x == c {
				copy(l[i:], l[i+1:])
				l[len(l)-1] = nil
				e.cont.onRank[r] = l[:len(l)-1]
				break
			}
		}
	}
	*c = collRun{}
	e.cont.free = append(e.cont.free, c)
}

// computeDelta records that rank r started (+1) or ended (−1) a compute
// task and stretches the collectives of its groups whose first computing
// rank this is, or unstretches those whose last it was.
func (e *executor) computeDelta(r int, delta int32) {
	if e.cont == nil || r >= e.reps {
		return
	}
	for _, c := range e.cont.onRank[r] {
		before := c.busy > 0
		c.busy += delta
		if after := c.busy > 0; after != before && c.h != nil {
			if after {
				c.h.SetStretch(c.num, stretchDen)
			} else {
				c.h.SetStretch(stretchDen, stretchDen)
			}
		}
	}
}

// collectiveInterference is the scenario's collective slowdown while
// compute runs beside it (communication.collective_interference).
func collectiveInterference(s *scenarios.Scenario) float64 {
	return interferenceOf(s, s.Communication.CollectiveInterference, scenarios.DefaultCollectiveInterference)
}
