package zero

import (
	"fmt"
	"math"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// ZeRO++ in the stage-3 schedule, as DeepSpeed implements it
// (deepspeedai/DeepSpeed at commit edaa7221267243c7be7fb49c5d5f5c4fb97b4641;
// file:line below are at that commit).
//
// qwZ (zero_quantized_weights). Every stage-3 parameter all-gather, forward
// and backward (partitioned_param_coordinator.py:575-580 passes
// quantize=self.zero_quantized_weights to both), quantizes the rank's
// partition — the concatenation of its shards of the fetched params — to
// int8 with one fp32 scale per group (partition_parameters.py:1484-1493,
// 1476-1481 with the secondary tensor) and all-gathers the int8 payload and
// the scales (two all-gathers, :1493-1494, scale buffer fp32 of
// scales.numel()·world_size, :1487-1492). The group count follows
// CUDAQuantizer.quantize (:857-880): quantGroups. The quantize kernel runs
// on the all-gather stream (the coordinator launches the gather inside
// get_accelerator().stream(self.__allgather_stream),
// partitioned_param_coordinator.py:610-613); the dequantize runs when the
// compute stream waits on the handle (partition_parameters.py:756-767).
// zerosim gathers the payload and the scales as one collective of their
// summed bytes.
//
// hpZ (zero_hpz_partition_size = h > 1). Releasing a gathered param also
// fills a secondary partition over h consecutive ranks
// (partition_parameters.py:1738-1742, _partition_param_sec :1872-1920;
// groups.py:859-886), and a gather of a param with a secondary tensor runs
// over that group (:1543-1546). The secondary copy is dropped after every
// optimizer step (stage3.py:2577, invalidate_secondary_tensor :706-710), so
// each step's forward gathers over all N ranks and its backward over the h
// ranks of the group: inside the node when h divides the GPUs of a node.
//
// qgZ (zero_quantized_gradients), when the job spans more than one node
// (stage3.py:1803-1811: num_nodes = world / device_count > 1, else the
// plain reduce-scatter). all_to_all_quant_reduce
// (runtime/comm/coalesced_collectives.py:31-76) takes each gradient tensor
// of the reduced params: a 1-D tensor, or one whose numel is not a multiple
// of 2·world, falls back to reduce_scatter_coalesced (:43-52); the others
// are quantized to int4 in groups = max(shape[0], shape[1], world) with one
// fp32 scale each (:54-59, csrc/quantization/pt_binding.cpp:226-266), sent
// by an all-to-all inside the node (:62-63), reduced and re-quantized to
// int4 over groups/local_world_size groups (:64-66, pt_binding.cpp:269-313),
// sent by an all-to-all across nodes among the ranks of the same local index
// (:69-70), dequantized and averaged over the nodes (:71-75). The
// all-to-alls are collectives.AllToAll (NCCL's grouped send/recv, ⌈S/n⌉ to
// every peer). The quantize, reduce and dequantize kernels run on the
// gradient stream (stage3.py reduces inside reduce_and_partition_stream).
//
// Kernels are timed by the HBM roofline (bytes read + written / hbm
// bandwidth), as the optimizer is.

// quantGroups is memory.QuantGroups, CUDAQuantizer's group count.
func quantGroups(numel int64) int64 { return memory.QuantGroups(numel) }

// qwzBytes is memory.QWZGatherBytes: int8 payload and fp32 scales.
func qwzBytes(elems int64, world int) int64 { return memory.QWZGatherBytes(elems, world) }

// zeroPP is the ZeRO++ configuration of one schedule build.
type zeroPP struct {
	qwz, qgz bool
	hpz      int // > 1: hpZ group size
	nodes    int // qgZ runs when > 1
	local    int
	hbm      units.Bandwidth
	// grads per unit: qgZ's all-to-all buffers and fallback bytes.
	grads []qgzUnit
}

// qgzUnit is one unit's gradient reduction under qgZ.
type qgzUnit struct {
	// Elems is the elements that go through the all-to-alls; Intra and
	// Inter the per-rank buffers (int4 payload + fp32 scales) of the
	// intra-node and inter-node all-to-all.
	Elems, Intra, Inter int64
	// Fallback is the bf16 bytes reduce-scattered as usual (1-D tensors and
	// tensors whose numel is not a multiple of 2·world).
	Fallback int64
	// KernelBytes is the HBM traffic of the quantize, reduce and
	// dequantize kernels.
	KernelBytes int64
}

func newZeroPP(s *scenarios.Scenario, sc *Schedule) (*zeroPP, error) {
	c := s.Communication
	if !c.ZeroPP() || sc.Stage != 3 {
		return nil, nil
	}
	z := &zeroPP{qwz: c.ZeroQuantizedWeights, qgz: c.ZeroQuantizedGradients, nodes: s.Cluster.Nodes,
		local: s.Cluster.GPUsPerNode, hbm: s.Cluster.HBMBandwidth}
	if h := min(c.ZeroHPZPartitionSize, sc.N); h > 1 {
		z.hpz = h
		sc.HPZ = h
	}
	if z.qgz && z.nodes > 1 {
		z.grads = make([]qgzUnit, len(s.Model.LayerList))
		for u, l := range s.Model.LayerList {
			g, err := qgzPlan(&s.Model, l, sc.N, z.local)
			if err != nil {
				return nil, fmt.Errorf("zero: qgZ of %s: %w", l.Name, err)
			}
			z.grads[u] = g
		}
	}
	return z, nil
}

// qgzPlan splits a unit's gradients into the tensors qgZ sends through its
// all-to-alls and the ones it reduce-scatters (coalesced_collectives.py:43-75).
func qgzPlan(m *scenarios.Model, l scenarios.Layer, world, local int) (qgzUnit, error) {
	var u qgzUnit
	var fallback int64
	W, L := int64(world), int64(local)
	for _, shape := range unitShapes(m, l) {
		n := int64(1)
		for _, d := range shape {
			n *= d
		}
		if len(shape) == 1 || n%(2*W) != 0 {
			// reduce_scatter_coalesced([tensor]) pads the tensor to a
			// multiple of the world size on its own (chunk_sz =
			// ceil(numel / world_sz) per rank).
			fallback += (n + W - 1) / W * W
			continue
		}
		groups := max(shape[0], shape[1], W) // intra_quant_group
		inter := groups / L                  // inter_quant_group
		u.Elems += n
		u.Intra += n/2 + 4*groups
		u.Inter += n/(2*L) + 4*inter
		// swizzle_quant reads 2n, writes n/2 + scales; quantized_reduction
		// reads the n/2 + scales received and writes n/(2L) + scales;
		// dequantize reads those and writes 2n/L (fp16); the average over
		// nodes reads 2n/L and writes 2n/world.
		u.KernelBytes += 2*n + (n/2 + 4*groups) + (n/2 + 4*groups) + (n/(2*L) + 4*inter) +
			(n/(2*L) + 4*inter) + 2*n/L + 2*n/L + 2*n/W
	}
	// all_to_all_quant_reduce (deepspeed/runtime/comm/
	// coalesced_collectives.py at deepspeedai/DeepSpeed
	// edaa7221267243c7be7fb49c5d5f5c4fb97b4641, its loop over the tensors)
	// calls reduce_scatter_coalesced([tensor]) once per 1-D or
	// non-divisible tensor, each padded alone (above). The calls, like the
	// per-tensor all-to-alls, are modelled as one collective per unit: the
	// launches are not counted one per tensor.
	u.Fallback = 2 * fallback
	if u.KernelBytes < 0 || u.Intra < 0 || u.Fallback < 0 {
		return u, fmt.Errorf("sizes overflow")
	}
	return u, nil
}

// unitShapes lists a unit's gradient tensor shapes: the ones the scenario
// resolved (scenarios.Model.UnitShapes: the layer's tensors, or those its
// dims imply, holding exactly its params, less those that get no gradient:
// UnitGradShapes), or, for a unit without any, one
// [numel/4096, 4096] matrix (a 1-D tensor when 4096 does not divide numel).
func unitShapes(m *scenarios.Model, l scenarios.Layer) [][]int64 {
	if sh := m.UnitGradShapes(l); sh != nil {
		return sh
	}
	n := int64(l.Params)
	switch {
	case n <= 0:
		return nil
	case n%genericRow == 0:
		return [][]int64{{n / genericRow, genericRow}}
	}
	return [][]int64{{n}} // no matrix shape to assume: reduce-scattered, as DeepSpeed does a tensor qgZ cannot split
}

// genericRow is the row length assumed for a unit without tensor shapes
// (a hidden size of 4096).
const genericRow = 4096

// kernel is a ZeRO++ quantize/dequantize kernel of bytes HBM traffic.
func (z *zeroPP) kernel(bytes int64) (units.Duration, error) {
	d, err := units.CheckedTransferTime(units.Bytes(bytes), z.hbm)
	if err != nil {
		return 0, fmt.Errorf("zero: a ZeRO++ kernel over %d B at %d B/s takes longer than %v (check cluster.hbm_bandwidth)", bytes, int64(z.hbm), units.Duration(math.MaxInt64))
	}
	return d, nil
}

// gather adds the all-gathers of unit u (buckets byUnit) in phase ph with
// the given dependencies: qwZ quantizes first (on the gather stream) and
// sends int8 + scales; hpZ's backward gathers run over the hpZ group.
func (z *zeroPP) gather(b *builder, u int, buckets []int, ph Phase, after, afterStart []int32) ([]int32, error) {
	sc := b.sc
	var ts []int32
	for _, i := range buckets {
		group, world := GroupIntra, sc.N
		if ph == PhaseBackwardAG && z.hpz > 1 {
			group, world = GroupHPZ, z.hpz
		}
		elems := sc.Buckets[i].ParamBytes / sc.Groups[sc.Buckets[i].Group].ParamBytes
		bytes := sc.Buckets[i].ParamBytes
		a, as := after, afterStart
		if z.qwz {
			part := elems / int64(world)
			g := quantGroups(part)
			d, err := z.kernel(3*part + 4*g) // read bf16, write int8 + scales
			if err != nil {
				return nil, err
			}
			q := b.add(Task{Kind: Quantize, Stream: ParamComm, Phase: PhaseCompute, Unit: u, Bucket: i, Dur: d, After: a, AfterStart: as})
			a, as = []int32{q}, nil
			bytes = qwzBytes(elems, world)
		}
		ts = append(ts, b.add(Task{Kind: AllGather, Stream: ParamComm, Phase: ph, Unit: u, Bucket: i,
			Group: group, Bytes: bytes, After: a, AfterStart: as}))
	}
	if !z.qwz || len(ts) == 0 {
		return ts, nil
	}
	// Dequantize on the compute stream when it waits for the gathers:
	// read int8 + scales, write bf16.
	var bytes int64
	for _, i := range buckets {
		elems := sc.Buckets[i].ParamBytes / sc.Groups[sc.Buckets[i].Group].ParamBytes
		bytes += 3 * elems
	}
	d, err := z.kernel(bytes)
	if err != nil {
		return nil, err
	}
	return []int32{b.add(Task{Kind: Quantize, Stream: Compute, Phase: PhaseCompute, Unit: u, Bucket: -1, Dur: d, After: ts})}, nil
}

// gradSync adds unit u's gradient reduction under qgZ after task ready and
// returns the tasks that end it; ok is false when qgZ does not apply (one
// node) and the plain reduce-scatter runs.
func (z *zeroPP) gradSync(b *builder, u int, ready int32) ([]int32, bool, error) {
	if z.grads == nil {
		return nil, false, nil
	}
	g := z.grads[u]
	var out []int32
	if g.Fallback > 0 {
		out = append(out, b.add(Task{Kind: ReduceScatter, Stream: GradComm, Phase: PhaseBackwardRS, Unit: u, Bucket: -1,
			Group: GroupIntra, Bytes: g.Fallback, After: []int32{ready}}))
	}
	if g.Elems == 0 {
		return out, true, nil
	}
	// The kernel traffic splits over the three kernels in proportion; the
	// quantize before the first all-to-all, the reduction between them and
	// the dequantize after.
	q1 := 2*g.Elems + g.Intra
	q2 := g.Intra + g.Inter
	q3 := g.KernelBytes - q1 - q2
	var ds [3]units.Duration
	for i, by := range []int64{q1, q2, q3} {
		d, err := z.kernel(by)
		if err != nil {
			return nil, false, err
		}
		ds[i] = d
	}
	k1 := b.add(Task{Kind: Quantize, Stream: GradComm, Phase: PhaseBackwardRS, Unit: u, Bucket: -1, Dur: ds[0], After: []int32{ready}})
	a1 := b.add(Task{Kind: AllToAll, Stream: GradComm, Phase: PhaseBackwardRS, Unit: u, Bucket: -1, Group: GroupNode, Bytes: g.Intra, After: []int32{k1}})
	k2 := b.add(Task{Kind: Quantize, Stream: GradComm, Phase: PhaseBackwardRS, Unit: u, Bucket: -1, Dur: ds[1], After: []int32{a1}})
	a2 := b.add(Task{Kind: AllToAll, Stream: GradComm, Phase: PhaseBackwardRS, Unit: u, Bucket: -1, Group: GroupRail, Bytes: g.Inter, After: []int32{k2}})
	k3 := b.add(Task{Kind: Quantize, Stream: GradComm, Phase: PhaseBackwardRS, Unit: u, Bucket: -1, Dur: ds[2], After: []int32{a2}})
	return append(out, k3), true, nil
}
