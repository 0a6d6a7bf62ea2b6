package zero

import (
	"fmt"

	"github.com/zerosim/zerosim/scenarios"
)

// This file is the cost of context parallelism's attention as PyTorch runs
// it (torch.distributed.tensor.experimental.context_parallel, the API
// torchtitan 9dec370 enables for parallelism.cp > 1: train.py
// create_context_parallel_ctx, utils.py get_train_context). Sources:
//
//   - torch/distributed/tensor/experimental/_attention.py at pytorch/pytorch
//     0123248 (the stored version nearest torch 1963fc8, 2024-12-23, which
//     torchtitan's Table 2 ran; it has the rotater API of
//     pytorch/pytorch#142093, December 2024, that torchtitan 9dec370's
//     set_rotate_method imports): _templated_ring_attention,
//     _templated_ring_attention_backward, _SDPAMerger, _AllGatherRotater,
//     _AllToAllRotater, _ContextParallelOptions (convert_to_f32 = True,
//     enable_load_balance = True, rotate_method = ALL_GATHER).
//   - torchtitan 9dec370: config_manager.py (context_parallel_rotate_method
//     default "allgather"), utils.py (sdpa_kernel([FLASH_ATTENTION,
//     EFFICIENT_ATTENTION]) under CP: the flash backend, FlashAttention-2,
//     as at cp = 1, where torch 1963fc8's default priority puts flash first:
//     cuDNN attention was made opt-in by pytorch/pytorch#138522 after 2.5),
//     models/llama/model.py (repeat_kv before SDPA: K and V reach the ring
//     at the full query width heads·head_dim, not kv_heads·head_dim),
//     parallelize_llama.py apply_compile (torch.compile(block,
//     fullgraph=True): the ring loop is traced into each block's graph, so
//     its elementwise work is fused by Inductor).
//
// What a rank does per block and pass, with n = cp, the load-balanced
// layout (each rank holds chunks r and 2n−1−r of 2n) and X = b·(s/n)·W
// elements (its queries, keys, values or output; W = heads·head_dim):
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
// pytorch/pytorch fff02e6: "if _are_we_tracing(): return
// wait_tensor(self)"), and Inductor moves a wait later only with
// reorder_for_compute_comm_overlap, off by default
// (torch/_inductor/config.py at a112bb8), which torchtitan 9dec370 does not
// set: every byte of the exchange is exposed.

// RingSpec describes context parallelism's attention for RingAttentionCost.
type RingSpec struct {
	// CP is the context-parallel degree (1: no ring, no cost).
	CP int
	// Compiled is set when the block runs under torch.compile (the ring's
	// elementwise work fused); else every op is an eager kernel.
	Compiled bool
	// LinkBW is the bandwidth per direction (B/s) of the link the ring
	// crosses: NVLink inside a node.
	LinkBW float64
	// Interference is the compute slowdown while communication runs beside
	// it (communication.compute_interference).
	Interference float64
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
	if g.Peak <= 0 || g.HBM <= 0 || e.Attention <= 0 || e.HBM <= 0 || r.LinkBW <= 0 {
		return RingCost{}, fmt.Errorf("zero: ring attention needs a peak, an HBM and a link bandwidth and efficiencies > 0")
	}
	n := int64(r.CP)
	var c flopCalc
	x := c.Mul(d.Batch, d.Seq, d.Heads, d.HeadDim)
	// Round 0's causal local block and each later round's half block
	// execute the same FLOPs: 4·b·a·hd·(s/n)²/2.
	round := float64(c.Mul(2, x, d.Seq)) / (g.Peak * e.Attention)
	var fwd, bwd int64
	if r.Compiled {
		fwd = c.Mul(10, n-1, x)
		bwd = c.Add(c.Mul(30, x), c.Mul(28, n-1, x))
	} else {
		fwd = c.Add(c.Mul(20, x), c.Mul(46, n-1, x))
		bwd = c.Add(c.Mul(84, x), c.Mul(60, n-1, x))
	}
	gather := float64(c.Mul(4, n-1, x)) / r.LinkBW
	dkv := float64(c.Mul(8, x)) / r.LinkBW
	if c.Err != nil {
		return RingCost{}, fmt.Errorf("zero: ring attention bytes overflow: %w", c.Err)
	}
	hbm := g.HBM * e.HBM
	out := RingCost{FwdBytes: fwd, BwdBytes: bwd, FwdComm: gather, BwdComm: gather + float64(n)*dkv}
	if r.Compiled {
		// Waited for where issued: nothing overlaps.
		out.FwdExposed, out.BwdExposed = out.FwdComm, out.BwdComm
		out.Fwd = float64(fwd)/hbm + out.FwdExposed
		out.Bwd = float64(bwd)/hbm + out.BwdExposed
		return out, nil
	}
	// Forward: the all-gather beside round 0.
	out.FwdExposed = max(0, gather-round)
	out.Fwd = float64(fwd)/hbm + out.FwdExposed + r.Interference*min(gather, round)
	// Backward: the all-gather beside round 0's backward (2.5× its
	// forward, FlashAttention-2's five matmuls to two: the ring runs only
	// under flash and sdpa, archspec.go), each dk/dv exchange beside the
	// next round's backward, the last one exposed.
	rb := attentionBackwardFactor(false) * round
	out.BwdExposed = max(0, gather-rb) + float64(n-1)*max(0, dkv-rb) + dkv
	out.Bwd = float64(bwd)/hbm + out.BwdExposed + r.Interference*(min(gather, rb)+float64(n-1)*min(dkv, rb))
	return out, nil
}

// ringSpec is a scenario's RingSpec: the cp group crosses NVLink when it
// fits in a node with cp placed fastest (the default placement [cp, dp],
// torchtitan's mesh order [pp, dp_replicate, dp_shard, cp, tp] in
// parallelisms/parallel_dims.py at 9dec370), else the inter-node NIC.
func ringSpec(s *scenarios.Scenario) RingSpec {
	r := RingSpec{CP: s.Parallelism.CP, Compiled: s.Training.Compile.Blocks(),
		Interference: computeInterference(s)}
	cp := s.Parallelism.CP
	intra := len(s.Cluster.Placement) == 0 || s.Cluster.Placement[0] == scenarios.AxisCP
	if intra && cp <= s.Cluster.GPUsPerNode && s.Cluster.GPUsPerNode%max(cp, 1) == 0 {
		r.LinkBW = float64(s.Cluster.Intra.Bandwidth)
	} else {
		r.LinkBW = float64(s.Cluster.Inter.Bandwidth)
	}
	if r.LinkBW <= 0 { // a single node without an inter-node link
		r.LinkBW = float64(s.Cluster.Intra.Bandwidth)
	}
	return r
}

// ringReruns reports whether a checkpointing policy reruns the attention
// (and so the ring) in backward: full and selective do; op (torchtitan's
// policy saves the SDPA outputs) and none do not.
func ringReruns(policy string) bool {
	return policy == recomputeFull || policy == recomputeSelective
}
