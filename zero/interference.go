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

// interference is the per-rank state of the compute task under a varying
// rate: its nominal work left (ps at full speed), when that was last
// brought up to date, the number of collectives in flight and when its
// task is due (the clock cannot cancel a superseded completion event).
type interference struct {
	slow   float64 // compute slowdown while communicating (0: off)
	left   []float64
	since  []units.Duration
	active []int32
	// due is when rank r's compute task ends at the current rate, −1 when
	// none is pending; fire[r] is the rank's one completion callback, which
	// ignores superseded events (they fire at another time, or after the
	// task ended) so no closure is allocated per re-timing.
	due  []units.Duration
	fire []func()
}

func newInterference(e *executor, reps int, slow float64) *interference {
	in := &interference{slow: slow, left: make([]float64, reps), since: make([]units.Duration, reps),
		active: make([]int32, reps), due: make([]units.Duration, reps), fire: make([]func(), reps)}
	for r := range reps {
		in.due[r] = unset
		in.fire[r] = func() {
			if in.due[r] != e.clk.Now() {
				return // superseded by a re-timing
			}
			in.due[r] = unset
			e.done[r]()
		}
	}
	return in
}

// factor is the time per unit of nominal work on rank r now.
func (in *interference) factor(r int) float64 {
	if in.active[r] > 0 {
		return 1 + in.slow
	}
	return 1
}

// startCompute begins rank r's compute task of nominal duration d under
// interference and schedules its end.
func (e *executor) startCompute(r int, d units.Duration) {
	in := e.inter
	in.left[r] = float64(d)
	in.since[r] = e.clk.Now()
	e.scheduleCompute(r)
}

func (e *executor) scheduleCompute(r int) {
	in := e.inter
	now := e.clk.Now()
	// Saturate at the end of int64 picoseconds as the engine does; the
	// replay reports a step that reaches it as an error.
	d := units.Duration(math.MaxInt64) - now
	if f := math.Ceil(in.left[r] * in.factor(r)); f < float64(d) {
		d = units.Duration(f)
	}
	in.due[r] = now + d
	e.clk.After(d, in.fire[r])
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
	before := in.factor(r)
	in.active[r] += delta
	after := in.factor(r)
	if e.computing[r] < 0 || before == after {
		return
	}
	now := e.clk.Now()
	in.left[r] = max(in.left[r]-float64(now-in.since[r])/before, 0)
	in.since[r] = now
	e.scheduleCompute(r)
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
		if e.computing[r] >= 0 {
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
