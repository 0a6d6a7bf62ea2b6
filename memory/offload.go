package memory

import (
	"fmt"

	"github.com/zerosim/zerosim/scenarios"
)

// Offload (ZeRO-Offload, ZeRO-Infinity; DeepSpeed at
// edaa7221267243c7be7fb49c5d5f5c4fb97b4641): with offload_optimizer the
// rank's fp32 master partition, Adam's exp_avg and exp_avg_sq and the fp32
// gradient partition the CPU Adam reads live in pinned host memory
// (stage_1_and_2.py: single_partition_of_fp32_groups on the CPU and its
// .grad; stage3.py: fp32_partitioned_groups_flat on the offload device),
// 16 bytes per element of the rank's shard; on nvme the 12 bytes of
// master and Adam states go to NVMe and the host keeps the fp32 gradients.
// With offload_param the 16-bit parameter partition lives on the host (2
// bytes per element), or on NVMe. GPU memory loses those components, and
// the optimizer's fp32 gradient copy (the step runs on the CPU).
//
// zerosim counts these per rank and per node (GPUs per node × per rank);
// DeepSpeed's swap and pinned staging buffers are not counted.

// HostMemory is the host side of a rank and a node.
type HostMemory struct {
	// PerRank and PerNode are host RAM bytes; NVMePerNode the bytes on the
	// node's NVMe; Capacity the node's host RAM (cluster.host.memory).
	PerRank     int64
	PerNode     int64
	NVMePerNode int64
	Capacity    int64
	Fits        bool
	Note        string
}

// offload records group g's offloaded optimizer states on the host (or
// NVMe) instead of the GPU.
func (m *model) offload(g *group) {
	c := m.c
	S := g.info.ShardElems
	h := m.host()
	// The master and the gradient it steps with are in the master's
	// dtype, the moments in optimizer_state_dtype: 4 + 4 + 4 + 4 beside
	// an fp32 master; under master_dtype bf16 (scenarios.MasterBF16)
	// DeepSpeed builds the host partition and its gradient in bf16
	// (stage3.py converted = fp16_partitioned_groups_flat[i].to(...,
	// dtype=master_weights_and_grads_dtype), fp32_grad_tensor.copy_(
	// grad_buffer.to(dtype=master_weights_and_grads_dtype)) at
	// edaa7221), and DeepSpeedCPUAdam keeps fp32 moments, or bf16 ones
	// when built with fp32_optimizer_states=False.
	master, state := int64(4), g.info.StateBytes
	if m.s.Training.MasterDType == scenarios.MasterBF16 {
		master = g.info.MasterBytes
	}
	states := c.Add(master, c.Mul(2, state))
	switch m.s.Offload.Optimizer {
	case scenarios.OffloadCPU:
		h.PerRank = c.Add(h.PerRank, c.Mul(S, c.Add(states, master)))
	case scenarios.OffloadNVMe:
		h.PerRank = c.Add(h.PerRank, c.Mul(S, master))
		h.NVMePerNode = c.Add(h.NVMePerNode, c.Mul(S, states, int64(m.s.Cluster.GPUsPerNode)))
	}
	switch m.s.Offload.Params {
	case scenarios.OffloadCPU:
		h.PerRank = c.Add(h.PerRank, c.Mul(S, g.info.ParamBytes))
	case scenarios.OffloadNVMe:
		h.NVMePerNode = c.Add(h.NVMePerNode, c.Mul(S, g.info.ParamBytes, int64(m.s.Cluster.GPUsPerNode)))
	}
	m.settleHost(h)
	h.Note = "optimizer " + m.s.Offload.Optimizer.String() + ", params " + m.s.Offload.Params.String() +
		": fp32 master, Adam m, v and fp32 grads 16 B per shard element (nvme: 4 B on the host, 12 on NVMe), params 2 B"
	if m.s.Training.MasterDType == scenarios.MasterBF16 {
		h.Note = "optimizer " + m.s.Offload.Optimizer.String() + ", params " + m.s.Offload.Params.String() +
			fmt.Sprintf(": bf16 master and grads 2 B each, Adam m, v %d B each per shard element (nvme: the grads on the host, the rest on NVMe), params 2 B", state)
	}
}

// settleHost sets h's node total (GPUs per node × PerRank), the node's
// host RAM and whether the total fits it, after PerRank has changed.
func (m *model) settleHost(h *HostMemory) {
	h.PerNode = m.c.Mul(h.PerRank, int64(m.s.Cluster.GPUsPerNode))
	h.Capacity = int64(m.s.Cluster.Host.Memory)
	h.Fits = h.Capacity > 0 && h.PerNode <= h.Capacity
}

func (m *model) host() *HostMemory {
	if m.r.Host == nil {
		m.r.Host = &HostMemory{}
	}
	return m.r.Host
}

// masterDTypeName names the dtype of the optimizer's master partition.
func masterDTypeName(s *scenarios.Scenario) string {
	if s.Training.MasterDType == scenarios.MasterBF16 {
		return "bf16"
	}
	return "fp32"
}
