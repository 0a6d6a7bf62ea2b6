package numerics

import (
	"math"

	"github.com/zerosim/zerosim/memory"
)

// ZeRO++'s quantized communication on the toy models (DeepSpeed at
// edaa7221267243c7be7fb49c5d5f5c4fb97b4641):
//
//   - qwZ: each rank's partition of a stage-3 unit is quantized to int8 in
//     memory.QuantGroups groups before the all-gather, and every rank —
//     the owner too — computes with the dequantized values
//     (partition_parameters.py:1484-1497, 756-767); the partition itself
//     (ds_tensor) and the fp32 master stay exact.
//   - qgZ: the gradient reduce-scatter of every 2-D tensor whose numel is a
//     multiple of 2·world becomes the two-stage int4 all-to-all
//     (runtime/comm/coalesced_collectives.py:31-76): qgzReduce. Other
//     tensors are reduced as usual.
//
// Symmetric quantization follows csrc/includes/quantization_utils.h:52-92:
// scale = 2^bits / (2·max|x|) over the group (1 when max is 0), q =
// clamp(round-to-nearest-even(x·scale), −2^(bits−1), 2^(bits−1)−1), stored
// scale 1/scale in fp32, dequantized q·(1/scale). DeepSpeed converts the
// input to fp16 first (exact for the toy models' bf16 values in fp16's
// range) and its int4 groups sum in fp32.

// fakeQuant quantizes x symmetrically to bits bits in groups contiguous
// groups (the last may be shorter) and returns the dequantized values.
func fakeQuant(x []float32, groups int64, bits uint) []float32 {
	out := make([]float32, len(x))
	n := int64(len(x))
	if n == 0 {
		return out
	}
	groups = max(min(groups, n), 1)
	size := (n + groups - 1) / groups
	qmin, qmax := -float32(int32(1)<<(bits-1)), float32(int32(1)<<(bits-1)-1)
	for lo := int64(0); lo < n; lo += size {
		hi := min(lo+size, n)
		var mx float32
		for _, v := range x[lo:hi] {
			mx = max(mx, float32(math.Abs(float64(v))))
		}
		scale := float32(1)
		if mx != 0 {
			scale = float32(int32(1)<<bits) / (2 * mx)
		}
		inv := 1 / scale
		for i := lo; i < hi; i++ {
			q := float32(math.RoundToEven(float64(x[i] * scale)))
			q = min(max(q, qmin), qmax)
			out[i] = q * inv
		}
	}
	return out
}

// qwzPartition is what every rank computes with for one partition of a
// gathered unit under qwZ: its int8 quantization, dequantized to bf16.
func qwzPartition(part []float32) []float32 {
	q := fakeQuant(part, memory.QuantGroups(int64(len(part))), 8)
	for i, v := range q {
		q[i] = RoundBF16(v)
	}
	return q
}

// qgzEligible reports whether qgZ's all-to-all takes a tensor of this shape
// over world ranks (coalesced_collectives.py:43-52).
func qgzEligible(shape []int, world int) bool {
	if len(shape) != 2 {
		return false
	}
	n := shape[0] * shape[1]
	return n%(2*world) == 0
}

// qgzReduce is qgZ's two-stage int4 reduction of one tensor (shape d0×d1)
// over world ranks on nodes of local ranks (rank r = node·local + local
// index): grads[r] is rank r's gradient. It returns the sum over the ranks
// (DeepSpeed averages; the toy verification sums, as its reference does),
// element by element of the tensor.
//
//  1. Every rank orders its tensor by destination (swizzle: for local
//     index j, the slices of ranks (i, j) of every node i) and quantizes
//     it to int4 in G1 = max(d0, d1, world) contiguous groups.
//  2. The intra-node all-to-all gives local index j the L chunks for its
//     ranks; it dequantizes and sums them (in local order) and quantizes
//     the n/L sums to int4 in G1/L groups.
//  3. The inter-node all-to-all gives rank (i, j) every node's chunk for
//     slice (i, j); it dequantizes and sums them in node order.
func qgzReduce(grads [][]float32, d0, d1, world, local int) []float32 {
	n := d0 * d1
	nodes := world / local
	slice := n / world // elements of one rank's result
	g1 := int64(max(d0, d1, world))
	g2 := g1 / int64(local)
	// dest(j) is the swizzled chunk for local index j: slices (i, j), i = 0…nodes−1.
	swizzle := func(x []float32) []float32 {
		out := make([]float32, 0, n)
		for j := range local {
			for i := range nodes {
				r := i*local + j
				out = append(out, x[r*slice:(r+1)*slice]...)
			}
		}
		return out
	}
	chunk := n / local // one local index's chunk
	// partial[i][j]: node i's sums for local index j, quantized again.
	partial := make([][][]float32, nodes)
	for i := range nodes {
		partial[i] = make([][]float32, local)
		q := make([][]float32, local)
		for l := range local {
			q[l] = fakeQuant(swizzle(grads[i*local+l]), g1, 4)
		}
		for j := range local {
			sum := make([]float32, chunk)
			for l := range local {
				for e, v := range q[l][j*chunk : (j+1)*chunk] {
					sum[e] += v
				}
			}
			partial[i][j] = fakeQuant(sum, g2, 4)
		}
	}
	out := make([]float32, n)
	for i2 := range nodes {
		for j := range local {
			r := i2*local + j
			res := out[r*slice : (r+1)*slice]
			for i := range nodes {
				for e, v := range partial[i][j][i2*slice : (i2+1)*slice] {
					res[e] += v
				}
			}
		}
	}
	return out
}

// qgzBucket computes qgZ's two-stage int4 reduction of bucket b's
// eligible tensors from the ranks' gradients and returns the function that
// writes it over the owners' reduced gradients once reduceBucket has run
// (the other tensors keep reduceBucket's result: DeepSpeed's fallback
// reduce-scatter).
func (s *sim) qgzBucket(b int) func() {
	l := s.lay
	bk := l.Buckets[b]
	per := bk.Size / int64(s.S)
	var writes []func()
	for k, p := range l.Params {
		if p.Bucket != b || !qgzEligible(s.model.shapes[k], s.cfg.N) {
			continue
		}
		grads := make([][]float32, s.cfg.N)
		for r, rk := range s.ranks {
			g := make([]float32, p.Numel)
			for _, sg := range l.Segments(k) {
				for j := range sg.Numel {
					g[sg.Offset+j] = rk.grad[sg.Start+j].Float32()
				}
			}
			grads[r] = g
		}
		sh := s.model.shapes[k]
		res := qgzReduce(grads, sh[0], sh[1], s.cfg.N, s.cfg.Local)
		writes = append(writes, func() {
			for _, sg := range l.Segments(k) {
				for j := range sg.Numel {
					e := sg.Start + j
					owner := int((e - bk.Start) / per)
					s.ranks[owner].grad[e] = ToBF16(res[sg.Offset+j])
				}
			}
		})
	}
	return func() {
		for _, w := range writes {
			w()
		}
	}
}

// qwzParams returns the parameters every rank computes with under qwZ: the
// reference's dense parameters laid out in the stage-3 flat buffer,
// each partition quantized as qwZ does, read back per tensor.
func (r *reference) qwzParams() [][]float32 {
	l := r.lay
	flat := make([]float32, l.Size)
	for k := range l.Params {
		for _, sg := range l.Segments(k) {
			copy(flat[sg.Start:sg.Start+sg.Numel], r.params[k][sg.Offset:sg.Offset+sg.Numel])
		}
	}
	S := r.cfg.N / r.cfg.K
	for b := range l.Buckets {
		for p := range S {
			lo, hi := l.Shard(b, p)
			copy(flat[lo:hi], qwzPartition(flat[lo:hi]))
		}
	}
	out := make([][]float32, len(r.params))
	for k, p := range r.params {
		out[k] = make([]float32, len(p))
		for _, sg := range l.Segments(k) {
			copy(out[k][sg.Offset:sg.Offset+sg.Numel], flat[sg.Start:sg.Start+sg.Numel])
		}
	}
	return out
}

// qgzGrads replaces the summed gradient g (parameter order) of every
// qgZ-eligible tensor by qgZ's reduction of the ranks' gradients.
func (r *reference) qgzGrads(perRank [][][]float32, g []float32) {
	for k, shape := range r.model.shapes {
		if !qgzEligible(shape, r.cfg.N) {
			continue
		}
		grads := make([][]float32, len(perRank))
		for d, gs := range perRank {
			grads[d] = make([]float32, len(gs[k]))
			for i, v := range gs[k] {
				grads[d][i] = RoundBF16(v)
			}
		}
		res := qgzReduce(grads, shape[0], shape[1], r.cfg.N, r.cfg.Local)
		for i, v := range res {
			g[r.off[k]+int64(i)] = RoundBF16(v)
		}
	}
}

// QuantDriftStep compares quantized training (qwZ/qgZ) with unquantized
// training after one step.
type QuantDriftStep struct {
	Step int
	// Loss and PlainLoss are the step's loss summed over the data ranks.
	Loss, PlainLoss float64
	// MaxAbsParamDiff is the largest |quantized − unquantized| bf16
	// parameter; RelParamDiff the L2 norm of the difference over the L2
	// norm of the unquantized parameters.
	MaxAbsParamDiff, RelParamDiff float64
}

func quantDrift(q, plain *reference) QuantDriftStep {
	d := QuantDriftStep{Step: q.step, Loss: q.loss, PlainLoss: plain.loss}
	var diff2, norm2 float64
	for k, p := range plain.params {
		for i, v := range p {
			x := float64(q.params[k][i]) - float64(v)
			d.MaxAbsParamDiff = max(d.MaxAbsParamDiff, math.Abs(x))
			diff2 += float64(x * x)
			norm2 += float64(float64(v) * float64(v))
		}
	}
	if norm2 > 0 {
		d.RelParamDiff = math.Sqrt(diff2 / norm2)
	}
	return d
}
