package zero

import (
	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// Activation CPU offloading in the step schedule
// (training.activation_offload_layers; which blocks, and the windows of
// their copies, are memory's ActivationOffloads, after Transformer
// Engine's DefaultOffloadSynchronizer, transformer_engine/pytorch/
// cpu_offload.py at NVIDIA/TransformerEngine
// d0067d0da6cb01811b8072a7d304f0e00344ce2b). Per micro-step, for
// offloaded block i of L, N offloaded:
//   - its copy to the host (PCIeDown) runs on the offload stream after
//     its forward (start_offload is called at the next layer's fwd_step;
//     each tensor's copy waits for the event recorded as autograd saved
//     it, so zerosim's start at the forward's end is the latest the copy
//     can start), one layer after another (one offload stream);
//   - the forward of block L − N + i waits for that copy
//     (release_activation_forward_gpu_memory: the compute stream waits
//     for finish_offload_event) — the exposure where N layers' copies do
//     not fit in the forwards of the L − N layers between;
//   - its reload (PCIeUp) starts once the compute stream has done the
//     work issued before the backward of block L − 1 − N + i
//     (start_reload: offload_stream.wait_stream(current_stream)), and its
//     backward waits for it (pop_tensor's wait_event).
// Transformer Engine runs both directions on one offload stream; zerosim
// puts the copies to the host on HostDown and the reloads on HostUp, the
// directions of the host link (hostNet), which never overlap here: every
// copy to the host ends before the forward's last block and every reload
// before the backward's first (block 0's).
// The link is cluster.host.pcie, as for DeepSpeed's offload (offload.go):
// PCIe on x86 hosts, NVLink-C2C on Grace (the host table's figures).

// actOffPlan is one schedule build's activation offloading.
type actOffPlan struct {
	offs  []memory.ActOffload
	dur   []units.Duration // each block's copy, either way
	bytes []int64
	// down and up are the current micro-step's copy tasks of each block.
	down, up []int32
}

func newActOffPlan(s *scenarios.Scenario) (*actOffPlan, error) {
	offs := memory.ActivationOffloads(s)
	if len(offs) == 0 {
		return nil, nil
	}
	bytes, err := memory.ActivationOffloadBytes(s)
	if err != nil {
		return nil, err
	}
	bw, lat := hostLink(s)
	p := &actOffPlan{offs: offs, bytes: bytes, dur: make([]units.Duration, len(offs)),
		down: make([]int32, len(offs)), up: make([]int32, len(offs))}
	for i, n := range bytes {
		d, err := hostTime(n, bw)
		if err != nil {
			return nil, err
		}
		p.dur[i] = d + lat
	}
	return p, nil
}

// forwardWaits appends to after the copies to the host the forward of
// unit u waits for (the blocks it releases).
func (p *actOffPlan) forwardWaits(u int, after []int32) []int32 {
	if p == nil {
		return after
	}
	for i, o := range p.offs {
		if o.Release == u {
			after = append(after[:len(after):len(after)], p.down[i])
		}
	}
	return after
}

// offload adds the copy to the host of unit u's saved tensors after its
// forward fwd, when u is offloaded.
func (p *actOffPlan) offload(b *builder, u int, fwd int32) {
	if p == nil {
		return
	}
	for i, o := range p.offs {
		if o.Unit == u {
			p.down[i] = b.add(Task{Kind: PCIeDown, Stream: HostDown, Phase: PhaseCompute, Unit: u, Bucket: -1, Dur: p.dur[i], Bytes: p.bytes[i], After: []int32{fwd}})
		}
	}
}

// reload adds, before the backward of unit u, the reloads that start
// there, after the compute stream's last task prev (none when prev < 0).
func (p *actOffPlan) reload(b *builder, u int, prev int32) {
	if p == nil {
		return
	}
	for i, o := range p.offs {
		if o.Reload == u {
			var after []int32
			if prev >= 0 {
				after = []int32{prev}
			}
			p.up[i] = b.add(Task{Kind: PCIeUp, Stream: HostUp, Phase: PhaseCompute, Unit: o.Unit, Bucket: -1, Dur: p.dur[i], Bytes: p.bytes[i], After: after})
		}
	}
}

// backwardWaits appends to after the reload unit u's backward waits for.
func (p *actOffPlan) backwardWaits(u int, after []int32) []int32 {
	if p == nil {
		return after
	}
	for i, o := range p.offs {
		if o.Unit == u {
			after = append(after[:len(after):len(after)], p.up[i])
		}
	}
	return after
}
