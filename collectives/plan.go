package collectives

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/zerosim/zerosim/topology"
	"github.com/zerosim/zerosim/units"
)

// Op is a collective operation.
type Op int

const (
	ReduceScatter Op = iota
	AllGather
	AllReduce
	// AllToAll is the expert-parallel token exchange: every rank sends
	// ⌈S/n⌉ of its S-byte buffer to each other rank, all pairs at once.
	AllToAll
)

// String is the op's nccl-tests name.
func (o Op) String() string {
	switch o {
	case ReduceScatter:
		return "reducescatter"
	case AllGather:
		return "allgather"
	case AllReduce:
		return "allreduce"
	case AllToAll:
		return "alltoall"
	}
	return fmt.Sprintf("op(%d)", int(o))
}

// ParseOp reads "allreduce", "reducescatter" or "allgather" (dashes and
// underscores are ignored, so "reduce-scatter" works too).
func ParseOp(s string) (Op, error) {
	switch strings.NewReplacer("-", "", "_", "").Replace(strings.ToLower(strings.TrimSpace(s))) {
	case "reducescatter", "rs":
		return ReduceScatter, nil
	case "allgather", "ag":
		return AllGather, nil
	case "allreduce", "ar":
		return AllReduce, nil
	case "alltoall", "a2a":
		return AllToAll, nil
	}
	return 0, fmt.Errorf("collective %q: use allreduce, reducescatter, allgather or alltoall", s)
}

// Algo is a collective algorithm.
type Algo int

const (
	// Auto is NCCL's choice when a Model times the collective (the
	// algorithm and protocol of least time, Model.Choose); in the
	// alpha–beta lowerings it is Hierarchical when the group spans more
	// than one node with the same number (> 1) of ranks on each, else Ring.
	Auto Algo = iota
	// Ring is a flat ring in the group's order.
	Ring
	// Hierarchical is two-level: intra-node ring, g parallel inter-node
	// rings (one per local index), intra-node ring.
	Hierarchical
	// Tree is NCCL's double binary tree (all-reduce only).
	Tree
	// NVLS is NVLink SHARP: the NVSwitch reduces (one node, Hopper+).
	NVLS
	// NVLSTree is NVLS inside nodes and a tree between them (all-reduce).
	NVLSTree
	// PointToPoint is how an all-to-all runs whatever algorithm was asked
	// for: NCCL's grouped sends to every peer (Lower), which no algorithm
	// applies to. A plan's, never a Spec's.
	PointToPoint
	// PAT is NCCL's Parallel Aggregated Trees for all-gather and
	// reduce-scatter over one GPU per node (Model.Choose picks it under
	// Auto; tuning.cc ncclPatEnable). A choice's, never a Spec's: its
	// traffic is lowered as the ring in group order that one rank per node
	// runs (modelPattern).
	PAT
)

// String is the algorithm's name.
func (a Algo) String() string {
	switch a {
	case Auto:
		return "auto"
	case Ring:
		return "ring"
	case Hierarchical:
		return "hierarchical"
	case Tree:
		return "tree"
	case NVLS:
		return "nvls"
	case NVLSTree:
		return "nvlstree"
	case PointToPoint:
		return "point-to-point"
	case PAT:
		return "pat"
	}
	return fmt.Sprintf("algo(%d)", int(a))
}

// ParseAlgo reads "auto", "ring" (or "alphabeta-ring", the label compare
// and plan print for it), "hierarchical", "tree", "nvls" or "nvlstree"; ""
// is auto.
func ParseAlgo(s string) (Algo, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "auto":
		return Auto, nil
	case "ring", "alphabeta-ring":
		return Ring, nil
	case "hierarchical", "hier":
		return Hierarchical, nil
	case "tree":
		return Tree, nil
	case "nvls":
		return NVLS, nil
	case "nvlstree", "nvls-tree", "nvls_tree":
		return NVLSTree, nil
	}
	return 0, fmt.Errorf("algorithm %q: use auto, ring, hierarchical, tree, nvls or nvlstree", s)
}

// Spec is one collective: an op over a group of ranks on a buffer of Bytes
// bytes (the full buffer: all-gather output, reduce-scatter input,
// all-reduce buffer). The ring visits the ranks' GPUs node by node
// (gpuOrder), whatever the group's order.
type Spec struct {
	Op    Op
	Algo  Algo
	Group []int
	Bytes units.Bytes
}

// Transfer is one point-to-point stream of a phase, from rank Src to Dst.
type Transfer struct{ Src, Dst int }

// Phase is one pipelined step of a collective: every transfer moves Bytes
// bytes in lockstep (a coupled flow group), after Steps·α of latency, where
// α is the largest latency of the links the phase crosses.
type Phase struct {
	Name      string // ring-rs, ring-ag, intra-rs, inter-rs, inter-ag, intra-ag, tree
	Steps     int
	Latency   units.Duration // Steps·α
	Bytes     units.Bytes    // per transfer
	Transfers []Transfer
	paths     []topology.Path
	// dur is the phase's share of the model's bandwidth time when a Model
	// times the plan (timePlan), at its bottleneck's rate: perByte, the
	// busiest link's transfers and bandwidth, alone on the links.
	dur     units.Duration
	perByte bottleneck
	// runs is how a timed phase's transfers over each link class run
	// (timePlan), each class's as a flow group of its own.
	runs [topology.NumClasses]classRun
	// count is the collective's transfers per link class in this phase,
	// every one of them even when Transfers holds only a restriction's.
	count [topology.NumClasses]int64
	// How Bytes follows from the spec's size S (see bytesFor): a ring of
	// ringK ranks on S, or on ⌈S/div⌉ when div > 0; the tree on ⌈S/2⌉;
	// an all-to-all of a2a ranks on ⌈S/a2a⌉; NCCL's trees over div
	// channels (railTrees) on ⌈S/(2·div)⌉.
	ringK, div, a2a int
	// rail: a phase of NCCL's ring channels (railRings), which splits the
	// ring's hop bytes exactly over its div channels: every transfer
	// carries Bytes, and channel 0's (the first of Transfers, count0 of
	// them per class in all) extra bytes more.
	rail   bool
	first  int
	count0 [topology.NumClasses]int64
	extra  units.Bytes
}

// bytesFor is the phase's Bytes for a collective of S bytes (same group).
func (ph *Phase) bytesFor(S units.Bytes) units.Bytes {
	if ph.a2a > 0 {
		return chunk(S, ph.a2a)
	}
	if ph.ringK == 0 {
		// A tree's half of the buffer, over div channels if set
		// (railTrees).
		return ceilDiv(S, 2*max(ph.div, 1))
	}
	if ph.rail {
		// The flat ring's hop bytes over div channels: ⌊B/div⌋ each, and
		// the rest on channel 0 (extraFor).
		return units.Bytes(ph.ringK-1) * chunk(S, ph.ringK) / units.Bytes(ph.div)
	}
	buf := S
	if ph.div > 0 {
		buf = chunk(S, ph.div)
	}
	return units.Bytes(ph.ringK-1) * chunk(buf, ph.ringK)
}

// extraFor is the bytes channel 0 of a rail phase carries beyond Bytes
// per transfer for a collective of S bytes (0 for other phases).
func (ph *Phase) extraFor(S units.Bytes) units.Bytes {
	if !ph.rail {
		return 0
	}
	b := units.Bytes(ph.ringK-1) * chunk(S, ph.ringK)
	return b - units.Bytes(ph.div)*(b/units.Bytes(ph.div))
}

// transferBytes is the bytes of ph's j-th transfer.
func (ph *Phase) transferBytes(j int) units.Bytes {
	if j < ph.first {
		return ph.Bytes + ph.extra
	}
	return ph.Bytes
}

// Plan is a collective lowered onto a topology: its phases run one after
// the other, or, timed by a Model, all at once (Fabric.runTimed).
type Plan struct {
	Spec   Spec
	Algo   Algo // resolved (never Auto)
	Phases []Phase
	// Timed: a Model gave the plan NCCL's time (Choice); Phases then carry
	// its traffic, run at once and end together alone at that time, and
	// Proto is the protocol.
	Timed  bool
	Proto  Proto
	Choice Choice
}

// lowering is the scratch of lowerings, reused across them: a Fabric
// keeps one for every collective it lowers, the package functions make a
// fresh one. A lowering costs O(transfers) time and, but for the plan's
// own slices, allocates nothing once its scratch has grown.
type lowering struct {
	t *topology.Topology
	// seen[r]: rank r is in the group being validated (cleared after).
	seen []bool
	// nodeBlocks: blockOf[node] is the node's block index + 1 (0: none,
	// cleared after); backing holds the blocks' ranks, sizes their
	// lengths.
	blockOf []int32
	backing []int
	sizes   []int
	blocks  [][]int
	// A Fabric lowers its own copies of the groups, which never change:
	// valid is the last group validated, split the group whose blocks
	// (and evenness) the scratch holds, known by identity.
	valid, split []int
	even         bool
	// The phase being lowered: load[id] is the number of its transfers on
	// link id, touched the links with a load (cleared after each phase),
	// alpha the largest latency of its paths, perByte its bottleneck.
	load    []uint32
	touched []int32
	alpha   units.Duration
	perByte bottleneck
	// keep, if not nil, is the restriction: a phase stores only the
	// transfers whose source or destination is kept (Fabric.Prepare).
	keep []bool
	// rings holds the ring phases lowered so far, which a collective of
	// another op over the same group repeats (a reduce-scatter's rings
	// are the all-gather's and the all-reduce's); looked up, never
	// iterated.
	rings map[ringKey]*ringMemo
}

// ringKind is which rings of a group a phase runs.
type ringKind int8

const (
	flatRing  ringKind = iota // the group in its order
	intraRing                 // hierarchical: each node's block
	interRing                 // hierarchical: the j-th rank of every block
	railRing                  // NCCL's ring channels over even blocks (railRings)
)

type ringKey struct {
	kind ringKind
	n    int
	hash uint64
}

// ringMemo is a ring phase's transfers and what they load, for a group
// under a restriction.
type ringMemo struct {
	group     []int
	keep      []bool
	transfers []Transfer
	paths     []topology.Path
	count     [topology.NumClasses]int64
	alpha     units.Duration
	perByte   bottleneck
	// A rail phase's channel 0: its kept transfers and all per class.
	first  int
	count0 [topology.NumClasses]int64
}

// classRun is how a timed phase's transfers over one link class run:
// paced, moving their wire bytes (their bytes with their protocol's and
// link's overhead) over pace and no faster, or, when pace is 0, filling
// the class's busiest link for the phase's dur.
type classRun struct {
	pace units.Duration
	wire units.Bytes
}

// bottleneck is a phase's busiest link: load of its transfers on a link
// of bandwidth bw, so one transfer alone on the phase's links moves a byte
// in load·10¹²/bw picoseconds (ps) and w bytes in ⌈w·load·10¹²/bw⌉, as
// the engine times it (sim.TransferTime).
type bottleneck struct {
	busy
	// byClass is the busiest link of each class the phase crosses (zero
	// for a class it does not); nominal is its load at the class's
	// bandwidth before any override (topology.ClassParams), the link a
	// timed plan's cost model assumes.
	byClass, nominal [topology.NumClasses]busy
	// lag is, per class, the most one of the phase's paths' latency
	// exceeds its class's (a latency override): what each of its hops over
	// that class waits beyond what a timed plan's cost model assumes.
	lag [topology.NumClasses]units.Duration
}

// nominalPS is the picoseconds per byte of the phase's busiest link were
// every link at its class's bandwidth.
func (b bottleneck) nominalPS() float64 {
	var ps float64
	for _, l := range b.nominal {
		ps = max(ps, l.ps())
	}
	return ps
}

// busy is load transfers on a link of bandwidth bw.
type busy struct {
	load uint32
	bw   units.Bandwidth
}

// ps is b's picoseconds per byte (0 for no link).
func (b busy) ps() float64 {
	if b.bw <= 0 {
		return 0
	}
	return float64(b.load) * 1e12 / float64(b.bw)
}

func newLowering(t *topology.Topology) *lowering { return &lowering{t: t} }

// sameGroup reports whether a and b hold the same ranks in the same order
// (at once when they are the same slice).
func sameGroup(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	return len(a) == 0 || &a[0] == &b[0] || slices.Equal(a, b)
}

// grow is s with length n, reallocated only when its capacity is short
// (the contents are not kept).
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

func (lw *lowering) validate(s Spec) error {
	if len(s.Group) == 0 {
		return errors.New("collectives: empty group")
	}
	if s.Bytes < 0 {
		return fmt.Errorf("collectives: size %d bytes is negative", int64(s.Bytes))
	}
	switch s.Op {
	case ReduceScatter, AllGather, AllReduce, AllToAll:
	default:
		return fmt.Errorf("collectives: unknown op %d", int(s.Op))
	}
	switch s.Algo {
	case Auto, Ring, Hierarchical:
	case Tree, NVLSTree:
		if s.Op != AllReduce {
			return fmt.Errorf("collectives: %v supports allreduce only, not %v", s.Algo, s.Op)
		}
	case NVLS:
	default:
		return fmt.Errorf("collectives: unknown algorithm %d", int(s.Algo))
	}
	if same(lw.valid, s.Group) {
		return nil
	}
	n := lw.t.Ranks()
	if lw.seen == nil {
		lw.seen = make([]bool, n)
	}
	seen := lw.seen
	defer func() {
		for _, r := range s.Group {
			if r >= 0 && r < n {
				seen[r] = false
			}
		}
	}()
	for i, r := range s.Group {
		if r < 0 || r >= n {
			return fmt.Errorf("collectives: group[%d]: rank %d is not in 0..%d", i, r, n-1)
		}
		if seen[r] {
			return fmt.Errorf("collectives: group[%d]: rank %d appears twice", i, r)
		}
		seen[r] = true
	}
	lw.valid = s.Group
	return nil
}

// same reports whether a and b are the same non-empty slice.
func same(a, b []int) bool { return len(a) > 0 && len(a) == len(b) && &a[0] == &b[0] }

func ceilDiv(a units.Bytes, n int) units.Bytes {
	return (a + units.Bytes(n) - 1) / units.Bytes(n)
}

// chunk is ceil(S/n), the bytes each rank owns in a ring over n ranks.
func chunk(s units.Bytes, n int) units.Bytes { return ceilDiv(s, n) }

// Volume is the logical bytes one rank sends, as the seeds count them for a
// ring: (n−1)·⌈S/n⌉ for reduce-scatter and all-gather, 2·(n−1)·⌈S/n⌉ for
// all-reduce (exactly (n−1)/n·S and 2(n−1)/n·S when n divides S). It does not
// depend on the algorithm.
func Volume(spec Spec) (units.Bytes, error) {
	return RankVolume(spec.Op, spec.Bytes, len(spec.Group))
}

// RankVolume is Volume for op on s bytes over n ranks: the one rounding of
// the bytes a rank sends (the zero/ replay's per-phase bytes use it too).
func RankVolume(op Op, s units.Bytes, n int) (units.Bytes, error) {
	if n <= 0 {
		return 0, errors.New("collectives: empty group")
	}
	if s < 0 {
		return 0, fmt.Errorf("collectives: size %d bytes is negative", int64(s))
	}
	v := units.Bytes(n-1) * chunk(s, n) // ≤ S + n, no overflow below 2^62
	if op == AllReduce {
		v2, err := units.Mul(int64(v), 2)
		if err != nil {
			return 0, fmt.Errorf("collectives: volume of %d bytes: %w", int64(s), err)
		}
		v = units.Bytes(v2)
	}
	return v, nil
}

// nodeBlocks splits the group by node in order of first appearance and
// reports whether every node holds the same number of ranks.
func nodeBlocks(t *topology.Topology, group []int) ([][]int, bool) {
	return newLowering(t).nodeBlocks(group)
}

// nodeBlocks is the package function on lw's scratch: the blocks are valid
// until lw's next nodeBlocks.
func (lw *lowering) nodeBlocks(group []int) ([][]int, bool) {
	// Two passes (the blocks and their sizes, then their ranks in one
	// backing array); groups are mostly runs of ranks on one node, so the
	// node → block index is only consulted when the node changes.
	if same(lw.split, group) {
		return lw.blocks[:len(lw.sizes)], lw.even
	}
	t := lw.t
	if lw.blockOf == nil {
		lw.blockOf = make([]int32, t.Nodes())
	}
	idx := lw.blockOf
	sizes := lw.sizes[:0]
	last := -1
	for _, r := range group {
		n := t.Node(r)
		if n != last {
			if idx[n] == 0 {
				sizes = append(sizes, 0)
				idx[n] = int32(len(sizes))
			}
			last = n
		}
		sizes[idx[n]-1]++
	}
	lw.sizes = sizes
	lw.backing = grow(lw.backing, len(group))
	backing := lw.backing
	lw.blocks = grow(lw.blocks, len(sizes))
	blocks := lw.blocks
	off := 0
	for b, n := range sizes {
		blocks[b] = backing[off : off : off+n]
		off += n
	}
	last, lastB := -1, int32(0)
	for _, r := range group {
		if n := t.Node(r); n != last {
			last, lastB = n, idx[n]-1
		}
		blocks[lastB] = append(blocks[lastB], r)
	}
	for _, b := range blocks {
		idx[t.Node(b[0])] = 0
	}
	lw.split, lw.even = group, true
	for _, b := range blocks {
		if len(b) != len(blocks[0]) {
			lw.even = false
			break
		}
	}
	return blocks, lw.even
}

// Resolve returns the algorithm Auto picks for spec on t (or spec.Algo).
func Resolve(t *topology.Topology, spec Spec) Algo {
	if spec.Algo != Auto {
		return spec.Algo
	}
	blocks, even := nodeBlocks(t, spec.Group)
	return resolve(blocks, even)
}

func resolve(blocks [][]int, even bool) Algo {
	if even && len(blocks) > 1 && len(blocks[0]) > 1 {
		return Hierarchical
	}
	return Ring
}

// LayoutError is an explicit algorithm refused on its group's layout
// (hierarchical over nodes that hold different numbers of the group's
// ranks): the scenario is fine with another algorithm, so a comparison of
// algorithms leaves that one out instead of failing.
type LayoutError struct{ Msg string }

func (e *LayoutError) Error() string { return e.Msg }

// Lower turns spec into phases on t. Ring: reduce-scatter is one phase of
// n−1 steps in which every rank sends (n−1)·c bytes to the next (c =
// ⌈S/n⌉); all-gather the same; all-reduce is both. Hierarchical over m nodes
// of g ranks: reduce-scatter = intra RS of S (c₁ = ⌈S/g⌉) then inter RS of c₁
// over the g parallel rings of m ranks (c₂ = ⌈c₁/m⌉); all-gather = inter AG
// then intra AG; all-reduce = intra RS, inter RS, inter AG, intra AG. Tree:
// one phase, see lowerTree. A group of one rank or an empty buffer has no
// phases.
func Lower(t *topology.Topology, spec Spec) (*Plan, error) {
	return newLowering(t).lower(spec)
}

// lower is Lower on lw's scratch, restricted to lw.keep if set.
func (lw *lowering) lower(spec Spec) (*Plan, error) {
	if err := lw.validate(spec); err != nil {
		return nil, err
	}
	if spec.Algo == NVLS || spec.Algo == NVLSTree {
		return nil, fmt.Errorf("collectives: %v is NCCL's: it needs NCCL's cost model (a cluster.gpu preset or a calibration)", spec.Algo)
	}
	var blocks [][]int
	var even bool
	if spec.Algo == Auto || spec.Algo == Hierarchical {
		blocks, even = lw.nodeBlocks(spec.Group)
	}
	return lw.phases(spec, blocks, even)
}

// phases lowers a valid spec whose group's node blocks are blocks (when
// its algorithm is Auto or Hierarchical). Each phase's transfers are made
// in order; every one counts towards the phase's latency, link loads and
// class counts, and only those a restriction keeps are stored.
func (lw *lowering) phases(spec Spec, blocks [][]int, even bool) (*Plan, error) {
	p := &Plan{Spec: spec, Algo: spec.Algo}
	if spec.Algo == Auto {
		p.Algo = resolve(blocks, even)
	}
	n := len(spec.Group)
	if n == 1 || spec.Bytes == 0 {
		return p, nil
	}
	S := spec.Bytes
	hash, hashed := uint64(0), false
	// ring adds a phase of `rings` rings of k ranks each, member i of ring
	// j at ranks[j·sj + i·si]: every member sends to the next. The same
	// rings of the same group were lowered before if the memo holds them.
	ring := func(name string, kind ringKind, ranks []int, rings, k, sj, si, div int) error {
		if k < 2 {
			return nil
		}
		ph := Phase{Name: name, Steps: k - 1, ringK: k, div: div}
		ph.Bytes = ph.bytesFor(S)
		if !hashed {
			hash, hashed = groupHash(spec.Group), true
		}
		key := ringKey{kind, n, hash}
		if m := lw.rings[key]; m != nil && sameKeep(m.keep, lw.keep) && sameGroup(m.group, spec.Group) {
			ph.Transfers, ph.paths, ph.count = m.transfers, m.paths, m.count
			lw.alpha, lw.perByte = m.alpha, m.perByte
			return lw.end(p, ph)
		}
		if err := lw.begin(&ph, rings*k); err != nil {
			return err
		}
		for j := range rings {
			r := ranks[j*sj:]
			for i := range k - 1 {
				if err := lw.add(&ph, r[i*si], r[(i+1)*si]); err != nil {
					return err
				}
			}
			if err := lw.add(&ph, r[(k-1)*si], r[0]); err != nil {
				return err
			}
		}
		lw.finish()
		if lw.rings == nil {
			lw.rings = map[ringKey]*ringMemo{}
		}
		lw.rings[key] = &ringMemo{group: spec.Group, keep: lw.keep, transfers: ph.Transfers, paths: ph.paths, count: ph.count,
			alpha: lw.alpha, perByte: lw.perByte}
		return lw.end(p, ph)
	}
	var err error
	switch {
	case spec.Op == AllToAll:
		// NCCL's all-to-all is grouped point-to-point: ncclSend/ncclRecv
		// to every peer inside ncclGroupStart/End, all pairs at once
		// (nccl-tests src/alltoall.cu
		// @ 07ac716c1ac5999964bd583806ec37e928251119; the send to itself is a
		// local copy and crosses no link). One phase, one step of
		// latency, ⌈S/n⌉ per ordered pair; the algorithm does not apply.
		p.Algo = PointToPoint
		if n > MaxAllToAllRanks {
			return nil, fmt.Errorf("collectives: alltoall: %d ranks send to %d ordered pairs, more than the %d of %d ranks zerosim lowers in 2 s and 0.5 GB (use at most %d ranks)",
				n, int64(n)*int64(n-1), int64(MaxAllToAllRanks)*(MaxAllToAllRanks-1), MaxAllToAllRanks, MaxAllToAllRanks)
		}
		ph := Phase{Name: "alltoall", Steps: 1, a2a: n}
		ph.Bytes = ph.bytesFor(S)
		if err := lw.begin(&ph, n*(n-1)); err != nil {
			return nil, err
		}
		for _, a := range spec.Group {
			for _, b := range spec.Group {
				if a != b {
					if err := lw.add(&ph, a, b); err != nil {
						return nil, err
					}
				}
			}
		}
		lw.finish()
		err = lw.end(p, ph)
	case p.Algo == Ring:
		ranks := lw.gpuOrder(spec.Group)
		if spec.Op != AllGather {
			err = ring("ring-rs", flatRing, ranks, 1, n, 0, 1, 0)
		}
		if err == nil && spec.Op != ReduceScatter {
			err = ring("ring-ag", flatRing, ranks, 1, n, 0, 1, 0)
		}
	case p.Algo == Hierarchical:
		if !even {
			return nil, &LayoutError{fmt.Sprintf("collectives: hierarchical needs the same number of ranks on every node of the group (node sizes %v): set communication.algorithm to auto or ring for this layout", blockSizes(blocks))}
		}
		// Intra ring j is node block j; inter ring j holds the j-th rank
		// of every block. The inter rings run on c₁ = ⌈S/g⌉. The blocks
		// (from lw.nodeBlocks) lie one after the other in lw.backing.
		g, m := len(blocks[0]), len(blocks)
		ranks := lw.backing[:g*m]
		if spec.Op != AllGather {
			if err = ring("intra-rs", intraRing, ranks, m, g, g, 1, 0); err == nil {
				err = ring("inter-rs", interRing, ranks, g, m, 1, g, g)
			}
		}
		if err == nil && spec.Op != ReduceScatter {
			if err = ring("inter-ag", interRing, ranks, g, m, 1, g, g); err == nil {
				err = ring("intra-ag", intraRing, ranks, m, g, g, 1, 0)
			}
		}
	case p.Algo == Tree:
		err = lw.tree(p, lw.gpuOrder(spec.Group), S)
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// gpuOrder is group's ranks in the order of their GPUs, node by node, the
// order NCCL's rings and trees visit them whatever the ranks' order: NCCL
// builds them from the topology it detects (src/graph/search.cc
// ncclTopoCompute searches the GPUs' graph; src/graph/connect.cc
// connectRings joins each node's ring to the next node's, connectTrees
// each node's chain to a tree over the nodes; NVIDIA/nccl at
// 5067397c2676d5aed50042fc39e5c8ee96eb0027). Under placement [dp, cp] a
// group over dp·cp alternates nodes rank by rank: taken in rank order the
// flat ring crossed the network at every hop (QA s16 pass 4: 188.27
// against 23.53 GiB of network wire per phase on the default example with
// cp 2; TestRingVisitsNodesInTurn) and the binary trees' edges did too.
// The hierarchical pattern and NCCL's model's lowerings group by node
// already (nodeBlocks). A group already in GPU order is returned as it is.
func (lw *lowering) gpuOrder(group []int) []int {
	byGPU := func(a, b int) int { return cmp.Compare(lw.t.GPU(a), lw.t.GPU(b)) }
	if slices.IsSortedFunc(group, byGPU) {
		return group
	}
	out := slices.Clone(group)
	slices.SortStableFunc(out, byGPU)
	return out
}

// An all-to-all is lowered pair by pair (a path and a flow per ordered
// pair), so its cost grows with the square of its ranks: `zerosim
// collective --op alltoall --gpus-per-node 8 --size 64MiB` took 1.3 s and
// 483 MB at 256 nodes (2,048 ranks, 4,192,256 pairs), 4.9 s and 1.87 GB at
// 512, and ran out of memory at 1,024 (QA, 2026-11-29). Expert-parallel
// groups and ZeRO++ qgZ's rail groups (one rank per node: 2,048 at
// 16,384 GPUs) stay within it.
const MaxAllToAllRanks = 2048

// begin starts lowering phase ph of n transfers.
func (lw *lowering) begin(ph *Phase, n int) error {
	if n > math.MaxUint32 {
		// The link loads count to 2³²−1.
		return fmt.Errorf("collectives: %s: %d transfers in one phase (at most %d)", ph.Name, n, uint32(math.MaxUint32))
	}
	links := lw.t.NumLinks()
	if lw.load == nil {
		lw.load = make([]uint32, links)
	}
	if m := min(2*n, links); cap(lw.touched) < m {
		lw.touched = make([]int32, 0, m)
	}
	lw.alpha, lw.perByte = 0, bottleneck{}
	if lw.keep == nil {
		ph.Transfers = make([]Transfer, 0, n)
		ph.paths = make([]topology.Path, 0, n)
	}
	return nil
}

// add lowers ph's transfer from src to dst: its path's latency, links and
// class count, and the transfer itself unless the restriction drops it.
func (lw *lowering) add(ph *Phase, src, dst int) error {
	path, err := lw.addLoad(ph, src, dst, 1)
	if err != nil {
		return err
	}
	if lw.keep == nil || lw.keep[src] || lw.keep[dst] {
		ph.Transfers = append(ph.Transfers, Transfer{src, dst})
		ph.paths = append(ph.paths, path)
	}
	return nil
}

// addLoad counts w of ph's transfers from src to dst: their path's
// latency, links and class count, not the transfers themselves.
func (lw *lowering) addLoad(ph *Phase, src, dst int, w uint32) (topology.Path, error) {
	path, err := lw.t.Path(src, dst)
	if err != nil {
		return topology.Path{}, fmt.Errorf("collectives: %s: %w", ph.Name, err)
	}
	lw.alpha = max(lw.alpha, path.Latency)
	lw.perByte.lag[path.Class] = max(lw.perByte.lag[path.Class], path.Latency-lw.t.ClassParams(path.Class).Latency)
	ph.count[path.Class] += int64(w)
	for _, l := range path.Links {
		if lw.load[l] == 0 {
			lw.touched = append(lw.touched, int32(l))
		}
		lw.load[l] += w
	}
	return path, nil
}

// keepTransfer adds ph's transfer from src to dst, counted already
// (addLoad), unless the restriction drops it.
func (lw *lowering) keepTransfer(ph *Phase, src, dst int) error {
	if lw.keep != nil && !lw.keep[src] && !lw.keep[dst] {
		return nil
	}
	path, err := lw.t.Path(src, dst)
	if err != nil {
		return fmt.Errorf("collectives: %s: %w", ph.Name, err)
	}
	ph.Transfers = append(ph.Transfers, Transfer{src, dst})
	ph.paths = append(ph.paths, path)
	return nil
}

// finish sets the bottleneck of the phase whose transfers were added: the
// largest ps per byte of one transfer over the links it loads.
func (lw *lowering) finish() {
	// Most links of a phase carry the same load at the same bandwidth:
	// the last quotient serves the next link alike.
	var w uint32
	var bw units.Bandwidth
	var c topology.Class
	for _, id := range lw.touched {
		k := lw.t.LinkClass(topology.LinkID(id))
		if b := lw.t.Params(topology.LinkID(id)).Bandwidth; lw.load[id] != w || b != bw || k != c {
			w, bw, c = lw.load[id], b, k
			l := busy{w, bw}
			if l.ps() > lw.perByte.ps() {
				lw.perByte.busy = l
			}
			if l.ps() > lw.perByte.byClass[k].ps() {
				lw.perByte.byClass[k] = l
			}
			if n := (busy{w, lw.t.ClassParams(k).Bandwidth}); n.ps() > lw.perByte.nominal[k].ps() {
				lw.perByte.nominal[k] = n
			}
		}
		lw.load[id] = 0
	}
	lw.touched = lw.touched[:0]
}

// end finishes ph from the lowering's latency and bottleneck and appends
// it to p.
func (lw *lowering) end(p *Plan, ph Phase) error {
	if ph.Bytes > 0 {
		ph.perByte = lw.perByte
	}
	lat, err := units.Mul(int64(ph.Steps), int64(lw.alpha))
	if err != nil {
		return fmt.Errorf("collectives: %s latency: %w", ph.Name, err)
	}
	ph.Latency = units.Duration(lat)
	p.Phases = append(p.Phases, ph)
	return nil
}

func blockSizes(b [][]int) []int {
	out := make([]int, len(b))
	for i := range b {
		out[i] = len(b[i])
	}
	return out
}

// btreeParent is the parent of position r in NCCL's binary tree over n
// positions (ncclGetBtree): position 0 is the root; r's parent clears its
// lowest set bit and sets the next one, or only clears it when that falls
// outside the tree.
func btreeParent(r, n int) int {
	bit := r & -r
	up := (r ^ bit) | (bit << 1)
	if up >= n {
		up = r ^ bit
	}
	return up
}

// tree adds NCCL's double binary tree over the group's positions
// (ncclGetDtree) to p: tree 1 is the binary tree of btreeParent, tree 2 its
// mirror (position p ↦ n−1−p) when n is even, or tree 1 shifted by one
// position when n is odd, so most ranks are a leaf in one tree and interior
// in the other. Each tree carries half the buffer: ⌈S/2⌉ goes up every edge
// (reduce) and down every edge (broadcast), pipelined, so the whole
// all-reduce is one coupled group of 4·(n−1) transfers of ⌈S/2⌉ after 2·d
// steps of latency (d = the deeper tree's depth in edges).
func (lw *lowering) tree(pl *Plan, group []int, S units.Bytes) error {
	n := len(group)
	ph := Phase{Name: "tree", Bytes: ceilDiv(S, 2)}
	depth := 0
	for p := 1; p < n; p++ {
		d := 0
		for q := p; q != 0; q = btreeParent(q, n) {
			d++
		}
		depth = max(depth, d)
	}
	ph.Steps = 2 * depth
	if err := lw.begin(&ph, 4*(n-1)); err != nil {
		return err
	}
	for _, parent := range dtreeParents(n) {
		for p, up := range parent {
			if up < 0 {
				continue
			}
			c, par := group[p], group[up]
			if err := lw.add(&ph, c, par); err != nil {
				return err
			}
			if err := lw.add(&ph, par, c); err != nil {
				return err
			}
		}
	}
	lw.finish()
	return lw.end(pl, ph)
}

// dtreeParents is NCCL's double binary tree over n positions
// (ncclGetDtree, src/graph/trees.cc lines 32–113 at
// 5067397c2676d5aed50042fc39e5c8ee96eb0027): parent[t][p] is position p's
// parent in tree t, −1 at the root. Tree 0 is the binary tree of
// btreeParent; tree 1 its mirror (position p ↦ n−1−p) when n is even, or
// tree 0 shifted by one position (p ↦ p+1 mod n) when n is odd.
func dtreeParents(n int) [2][]int {
	var parent [2][]int
	for t := range parent {
		parent[t] = make([]int, n)
		pos := func(q int) int { return q }
		switch {
		case t == 1 && n%2 == 0:
			pos = func(q int) int { return n - 1 - q }
		case t == 1:
			pos = func(q int) int { return (q + 1) % n }
		}
		parent[t][pos(0)] = -1
		for q := 1; q < n; q++ {
			parent[t][pos(q)] = pos(btreeParent(q, n))
		}
	}
	return parent
}

// linkLoad is the number of a phase's transfers crossing each link.
func linkLoad(t *topology.Topology, ph *Phase, counts []int64) []int64 {
	if cap(counts) < t.NumLinks() {
		counts = make([]int64, t.NumLinks())
	}
	counts = counts[:t.NumLinks()]
	clear(counts)
	for _, p := range ph.paths {
		for _, l := range p.Links {
			counts[l]++
		}
	}
	return counts
}

// PhaseTime is the uncontended time of one phase: its latency plus, over
// every link it crosses, the largest TransferTime(w·Bytes, bandwidth) where
// w is the number of its transfers on that link (the bottleneck of the
// lockstep group).
func PhaseTime(t *topology.Topology, ph *Phase) (units.Duration, error) {
	counts := linkLoad(t, ph, nil)
	var worst units.Duration
	for id, w := range counts {
		if w == 0 {
			continue
		}
		b, err := units.Mul(w, int64(ph.Bytes))
		if err != nil {
			return 0, fmt.Errorf("collectives: %s: %w", ph.Name, err)
		}
		bw := t.Params(topology.LinkID(id)).Bandwidth
		tt, err := units.CheckedTransferTime(units.Bytes(b), bw)
		if err != nil {
			return 0, timeErr{fmt.Errorf("collectives: %s: %d B at %d B/s take longer than %v, the range of int64 picoseconds (check the bandwidths)", ph.Name, b, int64(bw), units.Duration(math.MaxInt64))}
		}
		worst = max(worst, tt)
	}
	d, err := units.Add(int64(ph.Latency), int64(worst))
	if err != nil {
		return 0, timeErr{fmt.Errorf("collectives: %s: latency plus transfer take longer than %v, the range of int64 picoseconds (check the latencies)", ph.Name, units.Duration(math.MaxInt64))}
	}
	return units.Duration(d), nil
}

// timeErr is an error of a time that does not fit in int64 picoseconds:
// errors.Is reads it as ErrTimeOverflow, and as what it wraps.
type timeErr struct{ error }

func (e timeErr) Unwrap() error      { return e.error }
func (timeErr) Is(target error) bool { return target == ErrTimeOverflow }

// ClosedForm is the alpha–beta time of spec on t with nothing else on the
// links: the sum over its phases of Steps·α + the bottleneck transfer time
// (see PhaseTime). For a ring of n ranks on uniform links of bandwidth B
// and latency α, reduce-scatter and all-gather take
// (n−1)·α + TransferTime((n−1)·⌈S/n⌉, B) and all-reduce twice that. The
// engine (Fabric) reproduces it to the picosecond when every link's load is
// a divisor of 720720 (any load up to 16).
func ClosedForm(t *topology.Topology, spec Spec) (units.Duration, error) {
	p, err := Lower(t, spec)
	if err != nil {
		return 0, err
	}
	var total int64
	for i := range p.Phases {
		d, err := PhaseTime(t, &p.Phases[i])
		if err != nil {
			return 0, err
		}
		if total, err = units.Add(total, int64(d)); err != nil {
			return 0, timeErr{fmt.Errorf("collectives: time: %w", err)}
		}
	}
	return units.Duration(total), nil
}

// EachTransfer calls fn for every transfer of every phase, in phase order:
// its source and destination ranks, link class and bytes. The sums are the
// plan's wire bytes (what Wire and Fabric.Traffic count), but for a
// restricted plan (Prepared.Plan), which holds only the kept transfers.
func (p *Plan) EachTransfer(fn func(src, dst int, c topology.Class, b units.Bytes)) {
	for i := range p.Phases {
		ph := &p.Phases[i]
		for j, x := range ph.Transfers {
			fn(x.Src, x.Dst, ph.paths[j].Class, ph.transferBytes(j))
		}
	}
}
