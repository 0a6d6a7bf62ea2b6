package scenarios

import "fmt"

// ZeRO++ (Wang et al. 2023, "ZeRO++: Extremely Efficient Collective
// Communication for Giant Model Training", arXiv 2306.10209) as DeepSpeed
// configures it: three
// zero_optimization keys, read only by the stage-3 engine
// (deepspeed/runtime/zero/config.py:309-325, deepspeedai/DeepSpeed at
// edaa7221267243c7be7fb49c5d5f5c4fb97b4641):
//
//   - zero_quantized_weights (qwZ): the stage-3 parameter all-gathers send
//     int8 with one fp32 scale per group (partition_parameters.py:846-883,
//     CUDAQuantizer);
//   - zero_hpz_partition_size (hpZ): a secondary copy of the parameters,
//     sharded over groups of that many consecutive ranks, so the backward
//     gathers stay inside the group (partition_parameters.py:1872-1920;
//     groups.py:859-886). DeepSpeed's default is 1 and any value ≤ 1 is
//     off (stage3.py:266 tests > 1);
//   - zero_quantized_gradients (qgZ): the gradient reduce-scatter becomes a
//     two-stage int4 all-to-all, inside the node then across nodes
//     (runtime/comm/coalesced_collectives.py:31-76).

// ZeroPP reports whether any ZeRO++ feature is on.
func (c Communication) ZeroPP() bool {
	return c.ZeroQuantizedWeights || c.ZeroHPZPartitionSize > 1 || c.ZeroQuantizedGradients
}

func (l *loader) resolveZeroPP(s *Scenario) *Error {
	c := &s.Communication
	const hpz = "communication.zero_hpz_partition_size"
	if err := l.intRange(hpz, int64(c.ZeroHPZPartitionSize)); err != nil {
		return err
	}
	if !c.ZeroPP() {
		return nil
	}
	key := "communication.zero_quantized_weights"
	switch {
	case c.ZeroHPZPartitionSize > 1:
		key = hpz
	case c.ZeroQuantizedGradients:
		key = "communication.zero_quantized_gradients"
	}
	p := s.Parallelism
	if p.Stage != 3 {
		return l.errPath(key, fmt.Sprintf("%s is ZeRO++, which DeepSpeed runs at ZeRO stage 3 only (set zero_stage: 3, or remove the key)", leaf(key)))
	}
	if p.K > 1 {
		return l.errPath(key, fmt.Sprintf("%s is DeepSpeed's ZeRO++, which has no k (num_distributed_optimizer_instances); k=%d must be 1", leaf(key), p.K))
	}
	if p.EP > 1 {
		return l.errPath(key, fmt.Sprintf("%s is DeepSpeed's ZeRO++, modelled for dense data parallelism; ep=%d must be 1", leaf(key), p.EP))
	}
	if p.CP > 1 {
		return l.errPath(key, fmt.Sprintf("%s is DeepSpeed's ZeRO++, modelled over dp only; cp=%d must be 1", leaf(key), p.CP))
	}
	if h := c.ZeroHPZPartitionSize; h > 1 {
		// groups.py:878-879: min(group_size, world_size) must divide the world.
		n := s.N()
		if m := min(h, n); n%m != 0 {
			return l.errPath(hpz, fmt.Sprintf("zero_hpz_partition_size=%d does not divide the %d ranks (DeepSpeed builds groups of consecutive ranks; use a divisor such as %d, the GPUs of a node)", h, n, s.Cluster.GPUsPerNode))
		}
	}
	return nil
}

// MemoryEfficientLinearOn reports whether DeepSpeed's ZeRO-3
// memory-efficient linear covers the model's linears
// (communication.memory_efficient_linear, default true; see
// memory/savedweights.go).
func (c Communication) MemoryEfficientLinearOn() bool {
	return c.MemoryEfficientLinear == nil || *c.MemoryEfficientLinear
}

// resolveMemoryEfficientLinear refuses communication.memory_efficient_linear
// outside DeepSpeed's ZeRO-3, the only engine that installs (or not) its
// linear wrapper: FSDP frees a gathered parameter's storage itself
// (resize_(0)), whatever autograd references.
func (l *loader) resolveMemoryEfficientLinear(s *Scenario) *Error {
	const key = "communication.memory_efficient_linear"
	if s.Communication.MemoryEfficientLinear == nil {
		return nil
	}
	if s.Parallelism.Stage != 3 || s.Communication.Boundary != BoundaryDeepSpeed {
		return l.errPath(key, "memory_efficient_linear is DeepSpeed ZeRO-3's (zero_optimization.memory_efficient_linear): it applies with zero_stage: 3 and communication.boundary: deepspeed (stack: deepspeed); set those, or remove the key")
	}
	return nil
}
