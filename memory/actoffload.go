package memory

import (
	"fmt"

	"github.com/zerosim/zerosim/scenarios"
)

// Activation CPU offloading (training.activation_offload_layers: N), as
// Transformer Engine's DefaultOffloadSynchronizer runs it under
// Megatron-Core (transformer_engine/pytorch/cpu_offload.py at
// NVIDIA/TransformerEngine d0067d0da6cb01811b8072a7d304f0e00344ce2b;
// Megatron-Core's TransformerBlock enters its context around every layer,
// megatron/core/transformer/transformer_block.py at NVIDIA/Megatron-LM
// d98e8a64ddf34856e74b24714e3bedb2f5a39553):
//   - the offloaded layers are the block's first N, layers 0 … N−1
//     (_init_offload_synchronization_dicts: "The optimal strategy for that
//     is to offload layers 0, ..., num_offloaded_layers - 1");
//   - every tensor autograd saves inside a layer's forward is pushed to
//     that layer's group (saved_tensors_hooks(push_tensor, pop_tensor)),
//     except parameters and tensors under 256Ki elements
//     (OffloadableLayerState._check_if_offload); zerosim offloads the
//     block's whole saved activations (UnitInfo.Activation), whose tensors
//     are b·s·h-sized and above that threshold at training shapes;
//   - layer i's copy to pinned host memory (torch.empty(..., pin_memory=
//     True), then copy_ on the offload stream) starts at the next layer's
//     forward step (fwd_step: start_offload of current_layer_id − 1), and
//     its GPU tensors are released at the forward step of layer
//     L − N + i, which first makes the compute stream wait for the copy
//     (finish_offload_map, release_activation_forward_gpu_memory);
//   - layer i's reload starts at the backward step of layer L − 1 − N + i
//     (start_reload_map): GPU tensors allocated on the compute stream,
//     copied on the offload stream after the compute stream's work so far
//     (offload_stream.wait_stream), and layer i's backward waits for
//     them (pop_tensor); they go with its backward as any saved tensor.
// So at most L − N blocks' saved tensors are on the GPU at once ("peak
// memory usage of saving activations is (num_layers -
// num_offloaded_layers) * T"), and the host holds N blocks' per rank.

// ActOffload is one offloaded block: the unit it is, the unit whose
// forward start releases its GPU tensors, and the unit whose backward
// start allocates and reloads them.
type ActOffload struct{ Unit, Release, Reload int }

// ActivationOffloads lists the offloaded blocks of s in block order
// (nil without activation offloading), the units counted over
// s.Model.LayerList's blocks (Layer.Block) as Megatron-Core's
// TransformerBlock counts its layers.
func ActivationOffloads(s *scenarios.Scenario) []ActOffload {
	n := int(s.Training.ActivationOffloadLayers)
	if n <= 0 {
		return nil
	}
	var blocks []int
	for u, l := range s.Model.LayerList {
		if l.Block {
			blocks = append(blocks, u)
		}
	}
	L := len(blocks)
	if n > L-1 {
		return nil // refused by scenarios' resolveActivationOffload
	}
	out := make([]ActOffload, n)
	for i := range n {
		out[i] = ActOffload{Unit: blocks[i], Release: blocks[L-n+i], Reload: blocks[L-1-n+i]}
	}
	return out
}

// actOffloadEvents emits, at the start of unit u's compute in phase ph,
// the releases (forward) or reloads (backward) of the offloaded blocks
// whose window starts there.
func (m *model) actOffloadEvents(ph Phase, u int) {
	for _, o := range m.actOff {
		a := m.r.Units[o.Unit].Activation
		switch {
		case ph == PhaseForward && o.Release == u:
			m.ev(ph, o.Unit, OpActOffload, CompActivations, -a)
		case ph == PhaseBackward && o.Reload == u:
			m.ev(ph, o.Unit, OpActReload, CompActivations, a)
		}
	}
}

// ActivationOffloadWindow gives, for an offloaded block's unit u, the
// units at whose forward and backward start its OpActOffload and
// OpActReload events are applied (ok false for any other unit).
func (r *Report) ActivationOffloadWindow(u int) (release, reload int, ok bool) {
	for _, o := range r.actOff {
		if o.Unit == u {
			return o.Release, o.Reload, true
		}
	}
	return 0, 0, false
}

// HostActivations is the bytes of saved activations one rank keeps in
// pinned host memory under activation offloading: the offloaded blocks'
// of one micro-batch (TE reuses each layer's group every micro-batch:
// fwd_step's release_all_memory at layer 0).
func (r *Report) HostActivations() int64 {
	var t int64
	for _, o := range r.actOff {
		t += r.Units[o.Unit].Activation
	}
	return t
}

// ActivationOffloadBytes is the saved bytes of each block
// ActivationOffloads lists, in its order: what its copy to the host and
// its reload move (UnitInfo.Activation's bytes).
func ActivationOffloadBytes(s *scenarios.Scenario) ([]int64, error) {
	offs := ActivationOffloads(s)
	if len(offs) == 0 {
		return nil, nil
	}
	stored, _, err := unitActivations(s)
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(offs))
	for i, o := range offs {
		out[i] = stored[o.Unit]
	}
	return out, nil
}

// actOffloadHost records the pinned host buffers of the offloaded blocks
// (HostActivations per rank; the node's GPUs each hold theirs). Transformer
// Engine allocates them with torch.empty(..., pin_memory=True) at each
// offload and drops them at the next forward's first layer unless
// cpu_offloading_retain_pinned_cpu_buffers (OffloadableLayerState.
// start_offload, release_all_memory), so one micro-batch's are alive at
// a time; PyTorch's pinned host allocator caches the blocks it frees,
// which zerosim does not add.
func (m *model) actOffloadHost() {
	if len(m.actOff) == 0 {
		return
	}
	c := m.c
	h := m.host()
	h.PerRank = c.Add(h.PerRank, m.r.HostActivations())
	m.settleHost(h)
	h.Note = fmt.Sprintf("activation offloading: the saved tensors of %d blocks of one micro-batch in pinned host memory (training.activation_offload_layers)", len(m.actOff))
}
