package zero

import (
	"fmt"
	"maps"
	"slices"

	"github.com/zerosim/zerosim/collectives"
	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/sim"
	"github.com/zerosim/zerosim/topology"
	"github.com/zerosim/zerosim/units"
)

// This file is the cost of context parallelism's attention as PyTorch runs
// it (torch.distributed.tensor.experimental.context_parallel, the API
// torchtitan 9dec370ad26b5f8e9a7333a0e36165018262644b enables for parallelism.cp > 1: train.py
// create_context_parallel_ctx, utils.py get_train_context). Sources:
//
//   - torch/distributed/tensor/experimental/_attention.py at pytorch/pytorch
//     0123248 (a 2025 version, later than torch 1963fc8, 2024-12-23, which
//     torchtitan's Table 2 ran and of which no copy is stored; the functions
//     named here read the same in a December 2024 copy; it has the rotater API of
//     pytorch/pytorch#142093, December 2024, that torchtitan 9dec370ad26b5f8e9a7333a0e36165018262644b's
//     set_rotate_method imports): _templated_ring_attention,
//     _templated_ring_attention_backward, _SDPAMerger, _AllGatherRotater,
//     _AllToAllRotater, _ContextParallelOptions (convert_to_f32 = True,
//     enable_load_balance = True, rotate_method = ALL_GATHER).
//   - torchtitan 9dec370ad26b5f8e9a7333a0e36165018262644b: config_manager.py (context_parallel_rotate_method
//     default "allgather"), utils.py (sdpa_kernel([FLASH_ATTENTION,
//     EFFICIENT_ATTENTION]) under CP: the flash backend, FlashAttention-2,
//     as at cp = 1, where torch 1963fc8's default priority puts flash first:
//     cuDNN attention was made opt-in by pytorch/pytorch#138522 after 2.5),
//     models/llama/model.py (repeat_kv before SDPA: under training.attention
//     sdpa K and V reach the ring at the full query width heads·head_dim;
//     under flash, SDPA with enable_gqa as torchtitan runs it since
//     ff0829c10fbf, at kv_heads·head_dim: memory.RingKVHeads, which the memory
//     model's RingBuffers uses too, cites both),
//     parallelize_llama.py apply_compile (torch.compile(block,
//     fullgraph=True): the ring loop is traced into each block's graph, so
//     its elementwise work is fused by Inductor).
//
// What a rank does per block and pass, with n = cp, the load-balanced
// layout (each rank holds chunks r and 2n−1−r of 2n) and X = b·(s/n)·W
// elements (its queries, keys, values or output; W = heads·head_dim, and
// for k, v, dk and dv RingSpec.KVHeads·head_dim: RingAttentionCost counts
// each term below at the width of the tensor it moves, so the exchanges,
// the k/v copies and the dk/dv traffic shrink with grouped k and v; for
// multi-head latent attention, whose q and k are heads·(qk_nope + qk_rope)
// wide and v and output heads·v_head_dim, RingAttentionCost splits each
// count below by the tensor it moves: xk for q, k, dq, dk, xv for v, the
// output and dv, with the 64X of eager backward casts spread over dq, dk
// and dv):
//
//   - Forward: n SDPA calls. Round 0 is the local block with is_causal;
//     rounds 1..n−1 are half blocks without a mask (all queries against the
//     first key chunk when i ≤ rank, the second query chunk against all keys
//     otherwise). Their FLOPs add up to the causal s²/(2n) per rank that
//     BlockForwardFLOPs already counts; what CP adds is the merge and the
//     exchange. _SDPAMerger keeps the output in fp32 (convert_to_f32) and
//     rescales it every round: out − sigmoid(lse_b − lse)·(out − out_b).
//     Fused, a round reads the fp32 output (4X) and the block's bf16 output
//     (2X) and writes the fp32 output (4X): 10X bytes (the rank that merges
//     full-query rounds only, rank n−1, sets the pace). Eager, each op is a
//     kernel: the fp32 cast 6X, out − out_b 12X, the product 8X, the
//     subtraction 12X, and a partial round's torch.cat 8X; plus key/value
//     .contiguous() 8X, the per-round torch.cat of k and v 8X and the
//     final cast 6X.
//   - The KV exchange: rotate_method allgather all-gathers the local k and v
//     (bf16, 4X bytes) once, issued before round 0 and waited for before
//     round 1: (n−1)·4X bytes arrive at each rank beside round 0.
//   - Backward: n flash backward calls of the same shapes. dq, dk and dv
//     accumulate in fp32; dk and dv travel around the ring in fp32 (8X
//     bytes per round, _AllToAllRotater, permute_tensor) beside the next
//     round's kernel, and the last one is waited for after the loop
//     (exposed). Fused traffic: round 0 casts dq, dk, dv to fp32 (18X);
//     each later round adds the half-size dk, dv into the received fp32
//     buffer (9X each) and dq (10X); the received dk, dv are cast back to
//     bf16 at the end (12X). Eager: the zeros (12X), contiguous (8X), the
//     k/v cat (8X a round), the fp32 adds with _partial_update's cat (13X
//     each of dk, dv), the dk/dv cat (16X), the dq add (10X) and the casts.
//   - Full activation checkpointing reruns the forward, ring included.
//
// Eager, the ring's collectives return AsyncCollectiveTensors that wait at
// first use, so they run beside the next kernel: what exceeds it is
// exposed, and the overlapped part slows the kernel by the compute
// interference (communication.compute_interference, Lee et al. 2025) as
// the engine does for FSDP's collectives. Compiled, they do not overlap:
// while tracing, functional collectives call wait_tensor at once
// (torch/distributed/_functional_collectives.py _maybe_wrap_tensor at
// pytorch/pytorch fff02e67db38: "if _are_we_tracing(): return
// wait_tensor(self)"), and Inductor moves a wait later only with
// reorder_for_compute_comm_overlap, off by default
// (torch/_inductor/config.py at a112bb81b880), which torchtitan 9dec370ad26b5f8e9a7333a0e36165018262644b does not
// set: every byte of the exchange is exposed.

// RingSpec describes context parallelism's attention for RingAttentionCost.
type RingSpec struct {
	// CP is the context-parallel degree (1: no ring, no cost).
	CP int
	// Compiled is set when the block runs under torch.compile (the ring's
	// elementwise work fused); else every op is an eager kernel.
	Compiled bool
	// Net times the ring's exchanges on the cluster (RingNet): the k/v
	// all-gather as the replay times an all-gather over the cp groups,
	// the dk/dv send as a point-to-point transfer.
	Net *RingNet
	// Interference is the compute slowdown while communication runs beside
	// it (communication.compute_interference).
	Interference float64
	// KVHeads is the heads of the k and v the ring receives
	// (memory.RingKVHeads: kv_heads for flash, heads after sdpa's
	// repeat_kv); 0: the queries' heads. Set per block (blockRing).
	KVHeads int64
	// ValueHeadDim is the block's value (and output) width per head when
	// it differs from its q·k width (RingAttentionCost's d.HeadDim):
	// multi-head latent attention's v_head_dim against qk_nope_head_dim +
	// qk_rope_head_dim; 0: d.HeadDim. Set per block (blockRing).
	ValueHeadDim int64
}

// RingCost is what context parallelism adds to one block: the HBM traffic
// of the merge and the fp32 gradient accumulation, the time of the ring's
// collectives and the part of it that is exposed, and the seconds added to
// the block's forward and backward (each rerun of the forward adds Fwd
// again).
type RingCost struct {
	FwdBytes, BwdBytes     int64
	FwdComm, BwdComm       float64
	FwdExposed, BwdExposed float64
	Fwd, Bwd               float64
	// KV is the bytes of the rank's k and v (bf16, 4X) that each
	// all-gather of the exchange collects from every rank of the ring (its
	// buffer is CP·KV), DKV the bytes of dk and dv (fp32, 8X) that each
	// backward round sends to the next rank: what FwdComm and BwdComm time
	// (RingTraffic counts them over a step).
	KV, DKV int64
}

// RingAttentionCost is the per-block cost of PyTorch's load-balanced ring
// attention (see the sources above) over d, whose Seq is the rank's s/cp
// rows; zero for CP ≤ 1.
func RingAttentionCost(d FLOPDims, r RingSpec, g GPUShape, e Efficiency) (RingCost, error) {
	if r.CP <= 1 {
		return RingCost{}, nil
	}
	if err := d.fill(); err != nil {
		return RingCost{}, err
	}
	if g.Peak <= 0 || g.HBM <= 0 || e.Attention <= 0 || e.HBM <= 0 || r.Net == nil {
		return RingCost{}, fmt.Errorf("zero: ring attention needs a peak, an HBM, efficiencies > 0 and the ring's links")
	}
	n := int64(r.CP)
	vd := r.ValueHeadDim
	if vd <= 0 {
		vd = d.HeadDim
	}
	kvh := r.KVHeads
	if kvh <= 0 {
		kvh = d.Heads
	}
	var c flopCalc
	// Elements of the rank's tensors: xq of q (and dq), xo of the output,
	// at the queries' heads; xk of k (and dk), xv of v (and dv), at the
	// heads the ring receives. q·k wide: q, k; v wide: v and the output
	// (one width for every block but MLA's).
	xq := c.Mul(d.Batch, d.Seq, d.Heads, d.HeadDim)
	xo := c.Mul(d.Batch, d.Seq, d.Heads, vd)
	xk := c.Mul(d.Batch, d.Seq, kvh, d.HeadDim)
	xv := c.Mul(d.Batch, d.Seq, kvh, vd)
	// Round 0's causal local block and each later round's half block
	// execute the same FLOPs: 2·b·a·(dqk + dv)·(s/n)²/2.
	round := float64(c.Mul(c.Add(xq, xo), d.Seq)) / (g.Peak * e.Attention)
	var fwd, bwd int64
	if r.Compiled {
		// Forward: the merge, on the output (10X a round). Backward: round
		// 0's fp32 casts of dq, dk and dv, 6X each, and the final bf16
		// casts of the received dk, dv (6X each); a later round adds dk,
		// dv (9X each) and dq (10X).
		fwd = c.Mul(10, n-1, xo)
		bwd = c.Add(c.Mul(6, xq), c.Mul(12, xk), c.Mul(12, xv), c.Mul(n-1, c.Add(c.Mul(10, xq), c.Mul(9, xk), c.Mul(9, xv))))
	} else {
		// Forward: k and v made contiguous (4X each), the output's fp32
		// cast and the final cast (6X each); a later round, for rank n−1
		// (full-query rounds only: no partial cat), the k/v cat (4X each)
		// and 38X of merge ops on the output. Backward: the fp32 zeros of
		// dq, dk, dv (4X each), k and v made contiguous (4X each) and 64X
		// of casts over the three gradients, a third at each one's width
		// (64·(xq + xk + xv)/3, exact when the widths agree); a later
		// round the k/v cat (4X each), the dk and dv adds with
		// _partial_update's cat (13X each), the dk/dv cat (8X each, fp32)
		// and the dq add (10X).
		fwd = c.Add(c.Mul(4, xk), c.Mul(4, xv), c.Mul(12, xo), c.Mul(n-1, c.Add(c.Mul(4, xk), c.Mul(4, xv), c.Mul(38, xo))))
		bwd = c.Add(c.Mul(4, xq), c.Mul(8, xk), c.Mul(8, xv), c.MulDivFloor(64, c.Add(xq, xk, xv), 3),
			c.Mul(n-1, c.Add(c.Mul(10, xq), c.Mul(25, xk), c.Mul(25, xv))))
	}
	// k and v in bf16; dk and dv in fp32.
	kv, dkvBytes := c.Add(c.Mul(2, xk), c.Mul(2, xv)), c.Add(c.Mul(4, xk), c.Mul(4, xv))
	if c.Err != nil {
		return RingCost{}, fmt.Errorf("zero: ring attention bytes overflow: %w", c.Err)
	}
	// The exchange's times on the cluster (RingNet): the all-gather of
	// the cp·kv-byte buffer, each dk/dv send of dkvBytes.
	gd, err := r.Net.Gather(kv)
	if err != nil {
		return RingCost{}, err
	}
	sd, err := r.Net.Send(dkvBytes)
	if err != nil {
		return RingCost{}, err
	}
	gather, dkv := gd.Seconds(), sd.Seconds()
	hbm := g.HBM * e.HBM
	out := RingCost{FwdBytes: fwd, BwdBytes: bwd, FwdComm: gather, BwdComm: gather + float64(float64(n)*dkv), KV: kv, DKV: dkvBytes}
	if r.Compiled {
		// Waited for where issued: nothing overlaps.
		out.FwdExposed, out.BwdExposed = out.FwdComm, out.BwdComm
		out.Fwd = float64(fwd)/hbm + out.FwdExposed
		out.Bwd = float64(bwd)/hbm + out.BwdExposed
		return out, nil
	}
	// Forward: the all-gather beside round 0.
	out.FwdExposed = max(0, gather-round)
	out.Fwd = float64(fwd)/hbm + out.FwdExposed + float64(r.Interference*min(gather, round))
	// Backward: the all-gather beside round 0's backward (2.5× its
	// forward, FlashAttention-2's five matmuls to two: the ring runs only
	// under flash and sdpa, archspec.go), each dk/dv exchange beside the
	// next round's backward, the last one exposed.
	rb := float64(attentionBackwardFactor(false) * round)
	out.BwdExposed = max(0, gather-rb) + float64(float64(n-1)*max(0, dkv-rb)) + dkv
	out.Bwd = float64(bwd)/hbm + out.BwdExposed + float64(r.Interference*(min(gather, rb)+float64(float64(n-1)*min(dkv, rb))))
	return out, nil
}

// ringSpec is a scenario's RingSpec, its exchanges timed by net (nil: a
// RingNet built from s when a block first times its ring, so a Costs call
// whose blocks have no ring, eager attention, builds no topology; the
// replay passes the one on its own fabric): on the cp groups (the cp ranks
// of one dp coordinate, topology.Rank(dp, 0…cp−1), the ranks of one cp
// submesh of torchtitan's mesh [pp, dp_replicate, dp_shard, cp, tp],
// parallelisms/parallel_dims.py at 9dec370ad26b5f8e9a7333a0e36165018262644b, placed by cluster.placement)
// by the scenario's NCCL model (Model) and algorithm. What it gives is the
// reference on the class links (RingNet's Gather and Send), before any
// cluster.link_overrides: Costs and every analytic caller take that; the
// replay (Replay, so also plan, sweep and compare, which replay each row)
// adds each rank's own cp group on its overridden links (ringRows).
func ringSpec(s *scenarios.Scenario, net *RingNet) RingSpec {
	r := RingSpec{CP: s.Parallelism.CP, Compiled: s.Training.Compile.Blocks(),
		Interference: computeInterference(s)}
	if r.CP > 1 {
		if net == nil {
			net = NewRingNet(s, nil, nil, algoOf[s.Communication.Algorithm])
		}
		r.Net = net
	}
	return r
}

// RingNet times the ring's exchanges on a cluster as the replay times its
// communication. The k/v exchange is an NCCL all-gather over the cp group
// (RingTraffic), so it takes what the replay's fabric gives an all-gather
// of the same buffer over the same group (collectives.Fabric.Prepare with
// the scenario's NCCL model and kindAlgo's algorithm, as fabricNet.start
// lowers every collective): NCCL's cost model (collectives.Model.Time on
// the group's collectives.ShapeOf: latency, protocol, the link share NCCL
// reaches) when the model times the algorithm (auto, nvls, nvlstree), else
// the alpha–beta time of the lowering alone (the sum of its phases'
// collectives.PhaseTime, what collectives.ClosedForm gives). The dk/dv
// exchange is ft_c.permute_tensor, NCCL send/receive pairs that NCCL's
// tuner does not model (its cost tables span NCCL_NUM_FUNCTIONS, "5 //
// Send/Recv not included for now", src/include/nccl_common.h, and
// src/enqueue.cc schedules p2p tasks, scheduleP2pTasksToPlan, without
// ncclGetAlgoInfo; NVIDIA/nccl at 5067397c2676d5aed50042fc39e5c8ee96eb0027,
// the commit collectives' model follows): it keeps the alpha–beta rule the lowering gives
// NCCL's other point-to-point collective, all-to-all (collectives.Lower:
// one phase, one step of the largest path latency, plus the busiest
// link's load at its bandwidth, PhaseTime), over the cp sends of a group
// at once, each rank to the next.
//
// Gather and Send are the reference every rank's blocks take (LayerCost):
// the slowest over the cp groups on the cluster's class links, before any
// cluster.link_overrides (one group per pattern of its ranks on nodes:
// the groups of one pattern then cross links of the same classes). Under
// link overrides each cp group is also timed on its own links (at): a
// timed all-gather run alone on a fabric of the overridden topology, where
// its work is taken at the class's bandwidth and a slower link slows it
// (collectives.Fabric, fabric.go startPhase and timePlan's slowHops, as
// the replay's collectives), an alpha–beta one and the sends at their
// links' own bandwidths and latencies; a rank's blocks take the slower of
// the reference and its own group's (ringRows). A RingNet memoizes its
// times; it is not safe for concurrent use.
type RingNet struct {
	*ringState
	// group is the cp group whose times Gather and Send give: 0 the
	// reference, d+1 dp coordinate d's own (at).
	group int
}

// ringState is what the views of one RingNet share.
type ringState struct {
	// s, when set and f is not, is the scenario whose topology and NCCL
	// model init builds f on; under link overrides, the scenario whose
	// topology without them init builds the reference's fabric on.
	s    *scenarios.Scenario
	f    *collectives.Fabric // the reference's; nil until init when s is set
	m    *collectives.Model  // the NCCL model (nil: alpha–beta)
	algo collectives.Algo
	// live is the fabric of the cluster with its link overrides, nil
	// without any (every group's times are the reference's).
	live   *collectives.Fabric
	groups [][]int // nil until init
	gather map[int64]units.Duration
	send   map[int64]units.Duration
	// own holds a group's times on live: [dp coordinate, bytes, 0 gather
	// or 1 send].
	own map[[3]int64]units.Duration
}

// NewRingNet is the RingNet of the cp groups of f's topology, lowered and
// timed on f (whose NCCL cost model, nil for alpha–beta, is m) under the
// scenario's communication.algorithm algo. The replay passes its own
// fabric, so the ring's all-gathers share its lowerings and model. When
// f's topology has link overrides, the reference is timed on s's
// topology without them and f times each group on its own links.
func NewRingNet(s *scenarios.Scenario, f *collectives.Fabric, m *collectives.Model, algo collectives.Algo) *RingNet {
	return &RingNet{ringState: &ringState{s: s, f: f, m: m, algo: kindAlgo(algo, AllGather)}}
}

// overridden reports whether a link of t differs from its class
// (cluster.link_overrides).
func overridden(t *topology.Topology) bool {
	for id := range t.NumLinks() {
		l := topology.LinkID(id)
		if t.Overridden(l) {
			return true
		}
	}
	return false
}

// init builds what the times need on first use.
func (r *ringState) init() error {
	if r.groups != nil {
		return nil
	}
	if r.f != nil && overridden(r.f.Topology()) {
		// The reference on the class links; f times the groups on theirs.
		if r.s == nil {
			return fmt.Errorf("zero: context-parallel ring: link overrides without the scenario's class links")
		}
		r.live, r.f = r.f, nil
	}
	if r.f == nil {
		if r.s == nil {
			return fmt.Errorf("zero: context-parallel ring: no topology")
		}
		nominal := *r.s
		nominal.Cluster.LinkOverrides = nil
		t, err := topology.Build(&nominal)
		if err != nil {
			return fmt.Errorf("zero: context-parallel ring: %w", err)
		}
		if r.live == nil {
			if r.m, err = Model(r.s); err != nil {
				return fmt.Errorf("zero: context-parallel ring: %w", err)
			}
		}
		r.f = collectives.NewFabricOptions(sim.New(), t, collectives.FabricOptions{NoTraffic: true, Model: r.m})
	}
	r.groups, r.gather, r.send = ringGroups(r.f.Topology()), map[int64]units.Duration{}, map[int64]units.Duration{}
	r.own = map[[3]int64]units.Duration{}
	return nil
}

// at is the view of r whose Gather and Send time dp coordinate d's cp
// group on its own links, at least the reference: the reference itself
// without link overrides, or when no path between the group's ranks
// crosses an overridden link (the group's times are then its pattern's
// on the class links, which the reference's are the slowest of).
func (r *RingNet) at(d int) (*RingNet, error) {
	if err := r.init(); err != nil {
		return nil, err
	}
	if r.live == nil {
		return &RingNet{ringState: r.ringState}, nil
	}
	t := r.live.Topology()
	g := cpGroup(t, d)
	for _, a := range g {
		for _, b := range g {
			if a == b {
				continue
			}
			p, err := t.Path(a, b)
			if err != nil {
				return nil, fmt.Errorf("zero: context-parallel ring: %w", err)
			}
			for _, l := range p.Links {
				if t.Overridden(l) {
					return &RingNet{ringState: r.ringState, group: d + 1}, nil
				}
			}
		}
	}
	return &RingNet{ringState: r.ringState}, nil
}

// ringGroups is one cp group of t (the cp ranks of one dp coordinate,
// topology.Rank(dp, 0…cp−1)) per pattern of its ranks on nodes.
func ringGroups(t *topology.Topology) [][]int {
	var out [][]int
	seen := map[string]bool{}
	var p groupPattern
	for d := range t.DP() {
		g := make([]int, t.CP())
		if key := p.of(t, d, g); !seen[key] {
			seen[key] = true
			out = append(out, g)
		}
	}
	return out
}

// cpGroup is the cp group of dp coordinate d of t.
func cpGroup(t *topology.Topology, d int) []int {
	g := make([]int, t.CP())
	for i := range g {
		g[i] = t.Rank(d, i)
	}
	return g
}

// groupPattern keys a cp group by how its ranks fall on nodes (each
// rank's node numbered by first appearance in the group): groups of one
// key cross links of the same classes in the same order.
type groupPattern struct {
	nodes map[int]int
	key   []byte
}

// of fills group with the cp group of dp coordinate d of t and returns
// its key.
func (p *groupPattern) of(t *topology.Topology, d int, group []int) string {
	if p.nodes == nil {
		p.nodes = map[int]int{}
	}
	p.key = p.key[:0]
	clear(p.nodes)
	for i := range group {
		group[i] = t.Rank(d, i)
		n := t.Node(group[i])
		if _, ok := p.nodes[n]; !ok {
			p.nodes[n] = len(p.nodes)
		}
		p.key = fmt.Appendf(p.key, "%d,", p.nodes[n])
	}
	return string(p.key)
}

// Gather is the time of one all-gather of the k/v exchange, each rank
// contributing kv bytes (a CP·kv-byte buffer).
func (r *RingNet) Gather(kv int64) (units.Duration, error) {
	return r.timed(&r.gather, kv, 0, func(live bool, g []int) (units.Duration, error) {
		if live {
			return gatherTime(r.live, r.m, r.algo, g, kv, true)
		}
		return gatherTime(r.f, r.m, r.algo, g, kv, false)
	})
}

// timed is an exchange's time of b bytes (kind 0 the all-gather, 1 the
// send), memoized: (*ref)[b] is the reference (ref points at the map init
// makes), the slowest cp group on the class links (time(false, g) over
// r.groups); for a ring of its own (r.group > 0), its group's time on the
// overridden links (time(true, g)), never below the reference.
func (r *RingNet) timed(ref *map[int64]units.Duration, b, kind int64, time func(live bool, g []int) (units.Duration, error)) (units.Duration, error) {
	if err := r.init(); err != nil {
		return 0, err
	}
	d, ok := (*ref)[b]
	if !ok {
		for _, g := range r.groups {
			x, err := time(false, g)
			if err != nil {
				return 0, err
			}
			d = max(d, x)
		}
		(*ref)[b] = d
	}
	if r.group == 0 {
		return d, nil
	}
	key := [3]int64{int64(r.group - 1), b, kind}
	own, ok := r.own[key]
	if !ok {
		x, err := time(true, cpGroup(r.live.Topology(), r.group-1))
		if err != nil {
			return 0, err
		}
		own = max(x, d)
		r.own[key] = own
	}
	return own, nil
}

// gatherTime is the time of an all-gather of kv bytes from each rank of
// group g on f (whose NCCL model is m) under algo, alone: a plan NCCL's model times takes the
// model's time, or with run set, runs on a fabric of f's topology and
// model of its own (so that the links' overrides slow it as they slow the
// replay's collectives); an alpha–beta plan the sum of its phases' times.
func gatherTime(f *collectives.Fabric, m *collectives.Model, algo collectives.Algo, g []int, kv int64, run bool) (units.Duration, error) {
	size, err := units.Mul(int64(len(g)), kv)
	if err != nil {
		return 0, fmt.Errorf("zero: context-parallel ring all-gather of %d × %d B: %w", len(g), kv, err)
	}
	spec := collectives.Spec{Op: collectives.AllGather, Algo: algo, Group: g, Bytes: units.Bytes(size)}
	pr, err := f.Prepare(spec, nil)
	if err != nil {
		return 0, fmt.Errorf("zero: context-parallel ring all-gather: %w", err)
	}
	p := pr.Plan()
	if p.Timed && !run {
		return p.Choice.Time, nil
	}
	if p.Timed {
		eng := sim.New()
		alone := collectives.NewFabricOptions(eng, f.Topology(), collectives.FabricOptions{NoTraffic: true, Model: m})
		if _, err := alone.Start(spec, func() {}); err != nil {
			return 0, fmt.Errorf("zero: context-parallel ring all-gather: %w", err)
		}
		eng.Run()
		if eng.Now() >= sim.MaxTime {
			return 0, fmt.Errorf("zero: context-parallel ring all-gather of %d B runs past %v (check the link bandwidths and latencies)", size, units.Duration(sim.MaxTime))
		}
		return units.Duration(eng.Now()), nil
	}
	var d units.Duration
	for i := range p.Phases {
		pt, err := collectives.PhaseTime(f.Topology(), &p.Phases[i])
		if err == nil {
			var sum int64
			sum, err = units.Add(int64(d), int64(pt))
			d = units.Duration(sum)
		}
		if err != nil {
			return 0, fmt.Errorf("zero: context-parallel ring all-gather: %w", err)
		}
	}
	return d, nil
}

// Send is the time of one dk/dv exchange: every rank of a group sends b
// bytes to the next at once.
func (r *RingNet) Send(b int64) (units.Duration, error) {
	return r.timed(&r.send, b, 1, func(live bool, g []int) (units.Duration, error) {
		if live {
			return sendTime(r.live.Topology(), g, b)
		}
		return sendTime(r.f.Topology(), g, b)
	})
}

// sendTime is the time of every rank of group g sending b bytes to the
// next at once on t: the largest path latency plus the busiest link's
// load at its bandwidth.
func sendTime(t *topology.Topology, g []int, b int64) (units.Duration, error) {
	load := map[topology.LinkID]int64{}
	var alpha units.Duration
	for i, src := range g {
		p, err := t.Path(src, g[(i+1)%len(g)])
		if err != nil {
			return 0, fmt.Errorf("zero: context-parallel ring send: %w", err)
		}
		alpha = max(alpha, p.Latency)
		for _, l := range p.Links {
			load[l]++
		}
	}
	var beta units.Duration
	for l, w := range load {
		x, err := units.Mul(w, b)
		if err != nil {
			return 0, fmt.Errorf("zero: context-parallel ring send: %w", err)
		}
		tt, err := units.CheckedTransferTime(units.Bytes(x), t.Params(l).Bandwidth)
		if err != nil {
			return 0, fmt.Errorf("zero: context-parallel ring send of %d B: %w (check the link bandwidths and latencies)", x, err)
		}
		beta = max(beta, tt)
	}
	d, err := units.Add(int64(alpha), int64(beta))
	if err != nil {
		return 0, fmt.Errorf("zero: context-parallel ring send: %w", err)
	}
	return units.Duration(d), nil
}

// RingTraffic is what one unit's context-parallel ring exchanges per rank
// and micro-step: Gathers all-gathers of k and v, each collecting KV bytes
// from each of the CP ranks of the ring (a CP·KV-byte buffer), and
// Permutes sends of DKV bytes of dk and dv to the next rank
// (RingCost.KV, DKV). In _attention.py at pytorch/pytorch 0123248:
//
//   - forward, _templated_ring_attention: "next_kv =
//     torch.cat([key.flatten(), value.flatten()])" and
//     "rotater.exchange_buffers(next_kv)" for i < size − 1, with
//     rotate_method ALL_GATHER (_ContextParallelOptions) the rotater is
//     _AllGatherRotater, whose exchange_buffers calls
//     ft_c.all_gather_tensor only "if self._aggregated_buffer is None":
//     one all-gather of the bf16 k and v (4X bytes) per pass;
//   - backward, _templated_ring_attention_backward: the same kv_rotater
//     ("kv_rotater = _create_rotater(group, 2)"), one more all-gather, and
//     "dkv_rotater = _create_rotater(group, 2,
//     method=_RotateMethod.ALL_TO_ALL)", whose exchange_buffers
//     ("dkv_rotater.exchange_buffers(next_grad_kv)", every i in
//     range(size)) sends the cat of the fp32 grad_key and grad_value
//     (accum_dtype float32 under convert_to_f32: 8X bytes) to the next rank
//     with ft_c.permute_tensor (dsts = list(range(1, size)) + [0]): cp
//     sends per backward;
//   - a checkpointing policy that reruns the attention (ringReruns) reruns
//     the forward's all-gather.
//
// A ring all-gather of CP·KV bytes has each rank send (CP − 1)·KV
// (collectives.RankVolume).
type RingTraffic struct {
	CP                int64
	KV, DKV           int64
	Gathers, Permutes int64
}

// ringTraffic is the ring's traffic of a block whose ring costs rc under
// policy: an all-gather in forward, one in backward and cp dk/dv sends,
// plus the forward's all-gather again when the policy reruns it.
func ringTraffic(cp int, rc RingCost, policy string) RingTraffic {
	t := RingTraffic{CP: int64(cp), KV: rc.KV, DKV: rc.DKV, Gathers: 2, Permutes: int64(cp)}
	if ringReruns(policy) {
		t.Gathers++
	}
	return t
}

// ringPhase is the context-parallel ring's traffic over the step of sc on
// the topology of f, the replay's fabric (PhaseCPRing): every unit's RingTraffic for each micro-step. Its wire
// bytes per link class follow the cp groups' placement: each all-gather
// is lowered as the replay lowers an all-gather of its size over the
// group, on f with the replay's NCCL model (nil: alpha–beta) and
// algorithm (kindAlgo): PyTorch's ring gathers k and v
// with an NCCL all-gather (RingTraffic), so under NCCL's cost model its
// bytes take the pattern of the algorithm NCCL chooses at that size
// (collectives.LowerModel: over m > 1 nodes of g > 1 ranks, NCCL's rail
// rings, m·(n−1)/n of the buffer on the network), and under an explicit
// ring or hierarchical algorithm that algorithm's. Each dk/dv send is on
// the path from a rank to the next of its group. ok is false when nothing
// is exchanged (cp 1, or no unit with a ring).
func ringPhase(sc *Schedule, f *collectives.Fabric, algo collectives.Algo) (pb PhaseBytes, ok bool, err error) {
	t := f.Topology()
	cp := int64(t.CP())
	if cp <= 1 {
		return PhaseBytes{}, false, nil
	}
	var c units.Calc
	micro := int64(max(sc.Micro, 1))
	var gathered, permuted, colls, sends int64 // Σ micro·Gathers·KV, Σ micro·Permutes·DKV, Σ micro·(Gathers+Permutes), Σ micro·Permutes
	// count[kv] is a rank's all-gathers of kv-byte k and v over the step
	// (Σ micro·Gathers over the units whose KV is kv).
	count := map[int64]int64{}
	for _, lc := range sc.Costs {
		r := lc.Ring
		if r.Gathers == 0 && r.Permutes == 0 {
			continue
		}
		if r.CP != cp {
			return PhaseBytes{}, false, fmt.Errorf("zero: unit %q: ring of %d ranks in cp groups of %d", lc.Name, r.CP, cp)
		}
		gathered = c.Add(gathered, c.Mul(micro, r.Gathers, r.KV))
		permuted = c.Add(permuted, c.Mul(micro, r.Permutes, r.DKV))
		colls = c.Add(colls, c.Mul(micro, c.Add(r.Gathers, r.Permutes)))
		sends = c.Add(sends, c.Mul(micro, r.Permutes))
		if r.Gathers > 0 && r.KV > 0 {
			count[r.KV] = c.Add(count[r.KV], c.Mul(micro, r.Gathers))
		}
	}
	if c.Err != nil {
		return PhaseBytes{}, false, fmt.Errorf("zero: context-parallel ring bytes: %w", c.Err)
	}
	if colls == 0 {
		return PhaseBytes{}, false, nil
	}
	pb = PhaseBytes{Phase: PhaseCPRing, Collectives: int(colls),
		Logical: c.Add(c.Mul(cp, gathered), permuted), Sent: c.Add(c.Mul(cp-1, gathered), permuted)}
	if sends > 0 { // the dk/dv sends: ft_c.permute_tensor, point to point
		pb.Algos = addAlgo(pb.Algos, collectives.PointToPoint, int(sends))
	}
	kvs := slices.Sorted(maps.Keys(count))
	// The replay's own lowering and accounting (Fabric.Prepare, whose
	// Sent is what the replay's phases count per rank; nothing is started).
	agAlgo := kindAlgo(algo, AllGather)
	// A group's bytes per position depend only on how its ranks fall on
	// nodes: memoized by that pattern.
	type split = [][topology.NumClasses]int64
	memo := map[string]split{}
	group := make([]int, cp)
	var pattern groupPattern
	pos := map[int]int{} // a rank's position in the group
	for d := range t.DP() {
		key := pattern.of(t, d, group)
		ag, seen := memo[key]
		if !seen {
			clear(pos)
			for i, r := range group {
				pos[r] = i
			}
			ag = make(split, cp)
			// Each size is lowered as it is, not as one-byte chunks
			// scaled by the bytes: the model's choice, and so the
			// pattern, follows the size, and NCCL's rail rings split a
			// hop's bytes over their g channels with the remainder (under
			// g bytes) on channel 0 (collectives railRings), which at a
			// byte per chunk would put most of a hop on channel 0's ranks.
			// At its own size each all-gather's bytes per rank are the
			// replay's, remainder included, and the step's are exact
			// multiples of them.
			for _, kv := range kvs {
				size := c.Mul(cp, kv)
				if c.Err != nil {
					return PhaseBytes{}, false, fmt.Errorf("zero: context-parallel ring all-gather of %d × %d B: %w", cp, kv, c.Err)
				}
				pr, err := f.Prepare(collectives.Spec{Op: collectives.AllGather, Algo: agAlgo, Group: group, Bytes: units.Bytes(size)}, nil)
				if err != nil {
					return PhaseBytes{}, false, fmt.Errorf("zero: context-parallel ring all-gather: %w", err)
				}
				if d == 0 { // rank 0's group, as the replay's phases count
					pb.Algos = addAlgo(pb.Algos, pr.Plan().Algo, int(count[kv]))
				}
				for _, rb := range pr.Sent() {
					i, in := pos[rb.Rank]
					if !in {
						return PhaseBytes{}, false, fmt.Errorf("zero: context-parallel ring all-gather: rank %d sends outside its group", rb.Rank)
					}
					for cl, b := range rb.Bytes {
						ag[i][cl] = c.Add(ag[i][cl], c.Mul(count[kv], int64(b)))
					}
				}
			}
			memo[key] = ag
		}
		for i, r := range group {
			rank := ag[i]
			p, err := t.Path(r, group[(i+1)%len(group)])
			if err != nil {
				return PhaseBytes{}, false, fmt.Errorf("zero: context-parallel ring send: %w", err)
			}
			rank[p.Class] = c.Add(rank[p.Class], permuted)
			for cl := range rank {
				pb.Wire[cl] = c.Add(pb.Wire[cl], rank[cl])
				pb.MaxRankWire[cl] = max(pb.MaxRankWire[cl], rank[cl])
			}
		}
	}
	if c.Err != nil {
		return PhaseBytes{}, false, fmt.Errorf("zero: context-parallel ring bytes: %w", c.Err)
	}
	return pb, true, nil
}

// ringReruns reports whether a checkpointing policy reruns the attention
// (and so the ring) in backward: full and selective do; op (torchtitan's
// policy saves the SDPA outputs) and none do not.
func ringReruns(policy string) bool {
	return policy == recomputeFull || policy == recomputeSelective
}

// ringDur is the ring's part of a unit's forward and backward on one rank
// (LayerCost.RingFwd, RingBwd).
type ringDur struct{ fwd, bwd units.Duration }

// ringRows is, per rank of the schedule sc of s, the ring's part of each
// unit's forward and backward where it is not the reference's (nil rows
// elsewhere; nil when no rank's is): on a rank of GPU speed ≠ 1 its merge
// and gradient kernels run at that speed while its exchange keeps the
// links' time (and hides behind the slower attention rounds as far as
// they last), and under link overrides a rank's blocks wait for its own
// cp group's exchange (RingNet.at). The executor's taskDur scales the
// rest of the task by the speed and adds these.
func ringRows(s *scenarios.Scenario, sc *Schedule, net *RingNet, speed []float64) ([][]ringDur, error) {
	if s.Parallelism.CP <= 1 || net == nil {
		return nil, nil
	}
	if err := net.init(); err != nil {
		return nil, err
	}
	var rows [][]ringDur
	memo := map[[2]float64][]ringDur{}
	for r, sp := range speed {
		if sp == 1 && net.live == nil {
			continue
		}
		view, err := net.at(r / s.Parallelism.CP) // topology.Coord
		if err != nil {
			return nil, err
		}
		key := [2]float64{float64(view.group), sp}
		row, ok := memo[key]
		if !ok {
			secs, err := ringSeconds(s, view, sp)
			if err != nil {
				return nil, err
			}
			same := true
			row = make([]ringDur, len(sc.Costs))
			for u := range min(len(secs), len(row)) {
				c := &sc.Costs[u]
				for _, x := range []struct {
					dst  *units.Duration
					ref  units.Duration
					secs float64
				}{{&row[u].fwd, c.RingFwd, secs[u][0]}, {&row[u].bwd, c.RingBwd, secs[u][1]}} {
					if x.ref == 0 {
						continue // no ring in the unit's time
					}
					if *x.dst, err = seconds(x.secs); err != nil {
						return nil, fmt.Errorf("zero: layer %q: context-parallel ring on rank %d: %w", c.Name, r, err)
					}
					same = same && *x.dst == x.ref
				}
			}
			if same && sp == 1 {
				row = nil
			}
			memo[key] = row
		}
		if row == nil {
			continue
		}
		if rows == nil {
			rows = make([][]ringDur, len(speed))
		}
		rows[r] = row
	}
	return rows, nil
}

// ringSeconds is, per unit of s, the seconds the ring adds to its forward
// and backward (blockRing, as planCompute adds them) with its exchanges
// timed by net, on a GPU of the given speed (its peak and HBM bandwidth
// scaled: the ring's kernels and the attention rounds that hide its
// exchange, not the exchange).
func ringSeconds(s *scenarios.Scenario, net *RingNet, speed float64) ([][2]float64, error) {
	base, ok := flopDims(s)
	if !ok {
		return nil, nil
	}
	blocks, _ := blockFlags(s)
	gpu, eff, ring := planContext(s, net)
	gpu.Peak *= speed
	gpu.HBM *= speed
	out := make([][2]float64, len(blocks))
	policy := memory.UnitPolicies(s)
	for u, l := range s.Model.LayerList {
		if !blocks[u] {
			continue
		}
		f, b, _, err := blockRing(s, base, l, ring, gpu, eff, policy[u])
		if err != nil {
			return nil, err
		}
		out[u] = [2]float64{f, b}
	}
	return out, nil
}
