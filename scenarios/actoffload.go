package scenarios

import "fmt"

// Activation CPU offloading as Megatron-Core runs it
// (training.activation_offload_layers: N).
//
// Megatron-Core's TransformerBlock builds Transformer Engine's offload
// context with get_cpu_offload_context(cpu_offloading,
// cpu_offloading_num_layers, num_layers, cpu_offloading_activations,
// cpu_offloading_weights, ...), enters it around every layer's forward
// and hands each layer's output to its synchronization function
// (megatron/core/transformer/transformer_block.py at NVIDIA/Megatron-LM
// d98e8a64ddf34856e74b24714e3bedb2f5a39553, lines 304–318 and 737–742).
// TransformerConfig.__post_init__ refuses cpu_offloading with
// cpu_offloading_num_layers < 0 or ≥ num_layers, with pipeline parallelism
// and with any recompute_granularity (transformer_config.py, same commit,
// lines 1884–1899); Transformer Engine refuses num_layers > model_layers − 1
// (transformer_engine/pytorch/cpu_offload.py at NVIDIA/TransformerEngine
// d0067d0da6cb01811b8072a7d304f0e00344ce2b, get_cpu_offload_context).
// The offload schedule itself (which layers, when their copies run and
// when their memory goes) is the memory and zero packages' (memory's
// actoffload.go, zero's actoffload.go).

// OffloadsActivations reports whether the scenario offloads activations
// to the host (training.activation_offload_layers > 0).
func (s *Scenario) OffloadsActivations() bool { return s.Training.ActivationOffloadLayers > 0 }

// resolveActivationOffload checks training.activation_offload_layers
// against the refusals of Megatron-Core and Transformer Engine above.
func (l *loader) resolveActivationOffload(s *Scenario) *Error {
	const key = "training.activation_offload_layers"
	n := s.Training.ActivationOffloadLayers
	if n == 0 {
		return nil
	}
	blocks := int64(s.Model.BlockCount())
	switch {
	case n < 0:
		return l.errPath(key, fmt.Sprintf("activation_offload_layers=%d is out of range (use 0 for none, or 1 to the block count − 1)", n))
	case s.Stack != "megatron":
		return l.errPath(key, "activation_offload_layers is Megatron-Core's --cpu-offloading-num-layers (Transformer Engine's offload context): set stack: megatron, or 0 (torch's save_on_cpu and other stacks' offloading are not modelled)")
	case blocks < 2:
		return l.errPath(key, fmt.Sprintf("activation_offload_layers=%d needs a transformer of 2 or more blocks (the model has %d): set 0", n, blocks))
	case n > blocks-1:
		return l.errPath(key, fmt.Sprintf("activation_offload_layers=%d is out of range (use 1 to %d: Megatron-Core and Transformer Engine offload fewer layers than the model's %d, the last stays)", n, blocks-1, blocks))
	case s.Training.Recompute != RecomputeNone:
		return l.errPath(key, fmt.Sprintf("activation_offload_layers with recompute: %s: Megatron-Core refuses cpu_offloading with any recompute_granularity (set recompute: none or activation_offload_layers: 0)", s.Training.Recompute))
	case s.Offload.Any():
		return l.errPath(key, "activation_offload_layers with offload.optimizer or offload.params (DeepSpeed's) is not modelled: set one of them to none")
	}
	return nil
}
