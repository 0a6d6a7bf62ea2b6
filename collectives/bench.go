package collectives

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/zerosim/zerosim/sim"
	"github.com/zerosim/zerosim/topology"
	"github.com/zerosim/zerosim/units"
)

// Bench is nccl-tests' benchmark on a simulated cluster: one collective per
// size over Groups[0], or over every group at once (they contend for shared
// links), timed by Model (nil: the alpha–beta lowering).
type Bench struct {
	Op     Op
	Algo   Algo
	Groups [][]int
	Model  *Model
}

// BenchRow is one size of a Bench, in nccl-tests' conventions.
type BenchRow struct {
	Size units.Bytes
	// Count is nccl-tests' count column: its paramcount, the elements
	// each rank passes to the NCCL call (BenchCount).
	Count int64
	// Algo is the algorithm that ran, with its protocol when the model
	// timed it ("nvlstree/Simple"); "-" when nothing ran (one rank, or 0
	// bytes).
	Algo string
	// Time is from the start to the last group's end; Alone is one group's
	// time with nothing else on the links (the closed form, or the model's
	// time as the engine rounds it).
	Time, Alone units.Duration
	// AlgBW = Size/Time and BusBW = AlgBW·BusFactor, GB/s (1e9 B/s).
	AlgBW, BusBW float64
	// Traffic is the wire bytes of every group.
	Traffic Traffic
	// Channels is NCCL's channel{Lo..Hi} of the first group's collective
	// (Model.ChannelRange), nil where the model does not know it.
	Channels []int
}

// bf16 is the element size nccl-tests' count is taken in here.
const bf16 = 2

// BusFactor is nccl-tests' busbw/algbw: 2(n−1)/n for all-reduce, (n−1)/n
// for reduce-scatter and all-gather (NVIDIA/nccl-tests at
// a0b82b2260cf5152b9f8c061bbf7eaf0ba096432: AllReduceGetBw,
// src/all_reduce.cu lines 59–65; AllGatherGetBw, src/all_gather.cu lines
// 38–44; ReduceScatterGetBw, src/reduce_scatter.cu lines 37–43; derived in
// doc/PERFORMANCE.md lines 54–97).
func BusFactor(op Op, n int) float64 {
	if n < 1 {
		return 0
	}
	f := float64(n-1) / float64(n)
	if op == AllReduce {
		f *= 2
	}
	return f
}

// BenchCount is the count nccl-tests prints for a buffer of size bytes of
// bf16 over n ranks: the paramcount its GetCollByteCount gives each op,
// the elements one rank passes to the NCCL call (setupArgs, args->nbytes =
// paramCount·wordSize; the count column is nbytes/wordSize): an
// all-reduce's whole buffer, an all-gather's or reduce-scatter's per-rank
// chunk, an all-to-all's per-peer block, each rounded down to a multiple
// of 16 bytes ((count/nranks) & ~(16/eltSize − 1); src/common.cu,
// src/all_reduce.cu, src/all_gather.cu, src/reduce_scatter.cu and
// src/alltoall.cu at NVIDIA/nccl-tests
// a0b82b2260cf5152b9f8c061bbf7eaf0ba096432).
func BenchCount(op Op, size units.Bytes, n int) int64 {
	count := int64(size) / bf16
	if op == AllReduce || n < 1 {
		return count
	}
	return (count / int64(n)) &^ (16/bf16 - 1)
}

// BenchSize is the buffer nccl-tests runs for size bytes of op over n
// ranks (Run's size column): BenchCount's elements, times n but for an
// all-reduce.
func BenchSize(op Op, size units.Bytes, n int) units.Bytes {
	s := units.Bytes(BenchCount(op, size, n) * bf16)
	if op != AllReduce {
		s *= units.Bytes(n)
	}
	return s
}

// BenchUnit is the least buffer op runs exactly over n ranks, in bytes:
// every size BenchCount keeps whole is a multiple of it (a bf16 element
// for an all-reduce; 16 bytes per rank's chunk for the others).
func BenchUnit(op Op, n int) int64 {
	if op == AllReduce || n < 1 {
		return bf16
	}
	return 16 * int64(n)
}

// Run runs the benchmark at one size: as nccl-tests does, at the buffer its
// count makes (setupArgs, src/common.cu:900, and the size column
// max(sendBytes, expectedBytes), :938, at a0b82b22 as above,
// n·paramcount elements for all-gather, reduce-scatter and all-to-all), so
// a size that is no multiple of 16·n bytes runs and prints as the largest
// that is.
func (b *Bench) Run(t *topology.Topology, size units.Bytes) (BenchRow, error) {
	if len(b.Groups) == 0 {
		return BenchRow{}, fmt.Errorf("collectives: bench: no group")
	}
	eng := sim.New()
	fab := NewFabricOptions(eng, t, FabricOptions{Model: b.Model})
	n := len(b.Groups[0])
	row := BenchRow{Count: BenchCount(b.Op, size, n)}
	size = BenchSize(b.Op, size, n)
	row.Size = size
	var hs []*Handle
	var specs []Spec
	for _, g := range b.Groups {
		spec := Spec{Op: b.Op, Algo: b.Algo, Group: g, Bytes: size}
		h, err := fab.Start(spec, nil)
		if err != nil {
			return BenchRow{}, err
		}
		hs, specs = append(hs, h), append(specs, spec)
	}
	eng.Run()
	var solo soloRunner
	for i, h := range hs {
		// A lone group timed by the engine ran alone on the links already.
		alone := units.Duration(h.End() - h.Start())
		if len(hs) > 1 || !h.Plan.Timed {
			var err error
			if alone, err = solo.alone(t, b.Model, h.Plan, specs[i]); err != nil {
				return BenchRow{}, err
			}
		}
		row.Alone = max(row.Alone, alone)
	}
	var end sim.Time
	for _, h := range hs {
		end = max(end, h.End())
	}
	p := hs[0].Plan
	row.Algo = p.Algo.String()
	if p.Timed {
		row.Algo += "/" + p.Proto.String()
	}
	if n < 2 || size == 0 {
		// Nothing crosses a link: no algorithm runs (NCCL copies a
		// 1-rank collective locally: updateCollCostTable, src/enqueue.cc
		// lines 1993–1996 at NVIDIA/nccl 5067397c; nccl-tests' 0-byte row
		// launches nothing).
		row.Algo = "-"
	}
	if p.Timed && b.Model != nil && n >= 2 && size > 0 {
		if lo, hi, ok := b.Model.ChannelRange(b.Op, ShapeOf(t, b.Groups[0]), p.Choice, row.Count, bf16); ok {
			row.Channels = []int{lo, hi}
		}
	}
	row.Time = units.Duration(end - hs[0].Start())
	if row.Time > 0 {
		row.AlgBW = float64(size) * 1e3 / float64(row.Time) // B/ps·1e12 / 1e9
		row.BusBW = row.AlgBW * BusFactor(b.Op, n)
	}
	row.Traffic = fab.Traffic()
	return row, nil
}

// soloRunner times collectives one at a time on an engine of their own,
// each with nothing else on the links: one engine and fabric serve every
// group of a Run (a fabric per group would lower each over scratch sized to
// the whole topology: 4,096 concurrent groups took 11.7 s). A flow's time
// does not depend on when it starts, and the engine is idle between them.
type soloRunner struct {
	eng *sim.Engine
	fab *Fabric
}

// alone is spec's time with nothing else on the links.
func (s *soloRunner) alone(t *topology.Topology, m *Model, p *Plan, spec Spec) (units.Duration, error) {
	if !p.Timed {
		return ClosedForm(t, spec)
	}
	if s.fab == nil {
		s.eng = sim.New()
		s.fab = NewFabricOptions(s.eng, t, FabricOptions{Model: m, NoTraffic: true})
	}
	h, err := s.fab.Start(spec, nil)
	if err != nil {
		return 0, err
	}
	s.eng.Run()
	return units.Duration(h.End() - h.Start()), nil
}

// BenchGroups resolves a group selector: "all" (every rank), "intra" (the
// first of the K intra groups of N/K contiguous ranks), "inter" (the first
// of the N/K inter groups of K ranks), or explicit ranks
// ("0,2,4,6"; the ring visits them node by node, as NCCL's does). With concurrent, every intra (or inter) group. k ≤ 0 is one
// group per node (K = nodes).
func BenchGroups(t *topology.Topology, sel string, k int, concurrent bool) ([][]int, error) {
	if k <= 0 {
		k = 1
		if t.Ranks()%t.Nodes() == 0 {
			k = t.Nodes()
		}
	}
	if concurrent && sel != "intra" && sel != "inter" {
		return nil, fmt.Errorf("concurrent groups need the intra or inter group")
	}
	switch sel {
	case "all", "":
		return [][]int{t.All()}, nil
	case "intra", "inter":
		var gs [][]int
		var err error
		if sel == "intra" {
			gs, err = t.IntraGroups(k)
		} else {
			gs, err = t.InterGroups(k)
		}
		if err != nil {
			return nil, fmt.Errorf("group %s: %w", sel, err)
		}
		if concurrent {
			return gs, nil
		}
		return gs[:1], nil
	}
	var g []int
	for _, f := range strings.Split(sel, ",") {
		r, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("group %q: use all, intra, inter or ranks such as 0,2,4,6", sel)
		}
		g = append(g, r)
	}
	return [][]int{g}, nil
}

// BenchSizes parses a size or a range LO:HI, doubling from LO (at most 64
// sizes), as nccl-tests' -b LO -e HI -f 2.
func BenchSizes(v string) ([]units.Bytes, error) {
	lo, hi, isRange := strings.Cut(v, ":")
	a, err := units.ParseBytes(lo)
	if err != nil {
		return nil, err
	}
	if !isRange {
		return []units.Bytes{a}, nil
	}
	if _, step, ok := strings.Cut(hi, ":"); ok {
		// nccl-tests' -f FACTOR: zerosim's ranges double.
		return nil, fmt.Errorf("%q: a range is LO:HI, one row per power of two from LO (nccl-tests' -f 2); a step such as :%s is not taken (drop it)", v, step)
	}
	b, err := units.ParseBytes(hi)
	if err != nil {
		return nil, err
	}
	if a <= 0 || b < a {
		return nil, fmt.Errorf("%q: a range needs 0 < LO ≤ HI", v)
	}
	var out []units.Bytes
	for s := a; s <= b && len(out) < 64; s *= 2 {
		out = append(out, s)
		if s > b/2 {
			break
		}
	}
	return out, nil
}
