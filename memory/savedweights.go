package memory

import (
	"strings"

	"github.com/zerosim/zerosim/scenarios"
)

// CompSavedWeights is the gathered weights autograd still references after
// DeepSpeed's ZeRO-3 has released them in forward
// (communication.memory_efficient_linear: false): each released unit's
// from its forward to its backward. Last in the order, so that the other
// rows keep their places (and their plot colours).
const CompSavedWeights Comp = "saved gathered weights"

// Why a released ZeRO-3 weight can stay allocated.
//
// DeepSpeed releases a gathered parameter by swapping its data for an empty
// tensor (free_param: param.data = torch.empty(0, ...);
// deepspeed/runtime/zero/partition_parameters.py at deepspeedai/DeepSpeed
// 39a682d7992183fd0ce2c1c70152106e20052a45, the commit of the
// bf16_master_weights feature, and the same at edaa7221). That frees the
// storage only when nothing else references it. nn.Linear calls
// F.linear, aten::linear, which for a 2-D input or a contiguous 3-D one
// with a bias is at::addmm(bias, input, weight.t()), else
// at::matmul(input, weight.t()) (aten/src/ATen/native/Linear.cpp at
// pytorch/pytorch 006b3e67c188b7b0d27b543e9536076d6b389c85); addmm's and
// mm's derivative for mat1 needs mat2 (tools/autograd/derivatives.yaml at
// d327a787782618826890c323f8d7e51f3d28ec13: "mat1:
// mm_mat1_backward(grad, mat2, ...)"), so autograd saves weight.t(), a
// view: a non-leaf that shares the weight's storage. A saved leaf is kept
// as the tensor itself, whose data DeepSpeed's swap replaces, but a saved
// non-leaf keeps its own reference to the storage (SavedVariable's
// constructor, torch/csrc/autograd/saved_variable.cpp at
// 032b464e1c3b33ecf442851ff94228833961efe4: "if (!is_output || is_leaf_)
// { saved_original_ = true; data_ = variable; }"). So the gathered copy
// of every nn.Linear weight a unit used in forward lives on until that
// linear's backward node runs and releases its saved variables, while
// DeepSpeed gathers the unit again for backward beside it.
//
// DeepSpeed's answer is LinearFunctionForZeroStage3, which saves the
// weight itself (ctx.save_for_backward(input, weight, bias);
// deepspeed/runtime/zero/linear.py at 39a682d7, "Linear Module to use with
// ZeRO Stage 3 to allow for parameter memory release after the module
// execution during forward"), installed by replacing
// torch.nn.functional.linear with zero3_linear_wrap when
// zero_optimization.memory_efficient_linear is true (its default,
// zero/config.py). At 39a682d7 only entering deepspeed.zero.Init installs
// it (InsertPostInitMethodToModuleSubClasses.patch_init_and_builtins,
// called from __enter__); a model built before deepspeed.initialize is
// converted by Init(module=...) (parameter_offload.py
// _convert_to_zero_parameters), which never enters the context, so its
// linears keep the aten path. DeepSpeed 617061d6b (PR #8189, 2026-07-31,
// "Enable ZeRO-3 linear wrapper for existing models": "Without the
// wrapper, the standard Linear implementation can retain the gathered
// weight storage until backward completes, significantly increasing
// memory usage") installs it on that path too. The replacement reaches
// every call that looks torch.nn.functional.linear up at call time:
// nn.Linear.forward's F.linear, and nn.MultiheadAttention's in- and
// out-projections (multi_head_attention_forward and _in_projection_packed
// call the module-level name linear, which the assignment rebinds;
// torch/nn/functional.py at 0642de177e17dc9d0b7fea8d5e3119e15720c337).
//
// What zerosim counts under communication.memory_efficient_linear: false
// (SavesGatheredWeights), for each unit DeepSpeed releases in forward
// (KeptAcrossBoundary: not the last units, which stay gathered to their
// backward and so hold nothing extra):
//
//   - the two-dimensional tensors of the unit (scenarios.Model.UnitShapes)
//     at the gathered dtype: the nn.Linear weights. Vectors (biases, norm
//     weights) are not saved through views: addmm's bias needs nothing
//     saved, and layer_norm saves its weight itself, a leaf.
//   - nothing for the embedding unit: F.embedding saves the indices, not
//     the weight (derivatives.yaml embedding: embedding_backward(grad,
//     indices, weight.sym_size(0), ...)).
//   - nothing for GPT-2's blocks (GPT2LMHeadModel), whose Conv1D passes
//     its weight itself to addmm (transformers src/transformers/pytorch_utils.py Conv1D.forward at
//     04ae75715f2cca2d87bbaf07c1d8e9fb2ab20bfd: torch.addmm(self.bias,
//     x.view(-1, x.size(-1)), self.weight)).
//   - nothing for a unit whose tensors are unknown (a bare parameter
//     count), nor for routed-expert units (a rank holds 1/ep of them).
//   - nothing for a fully checkpointed block (training.recompute full on
//     it): its forward saves nothing (non-reentrant checkpointing packs
//     the saved tensors away, reentrant runs the forward without grad),
//     and the recomputation in backward saves the re-gathered weight,
//     whose storage DeepSpeed keeps until the block's backward anyway.
//
// They are allocated as the unit's forward release (OpRelease, after the
// gathered params' free, so the two never add up) and freed when its
// backward compute ends. DeepSpeedExamples training/bf16_master_weight
// (testdata/validation/dsx-bf16-master-weight-6.86b.yaml) built its model
// outside zero.Init under a DeepSpeed before 617061d6b: 41.28 GiB peak
// allocated without checkpointing against 31.38 with it.
func SavesGatheredWeights(r *Report, s *scenarios.Scenario) bool {
	return r.Convention == ConventionZerosim && r.Stage == 3 &&
		s.Communication.Boundary == scenarios.BoundaryDeepSpeed &&
		!s.Communication.MemoryEfficientLinearOn()
}

// savedWeightElems is the elements of unit u's weights autograd keeps
// through views under SavesGatheredWeights (see above), before the dtype.
func savedWeightElems(s *scenarios.Scenario, u int, policy string) int64 {
	m := &s.Model
	l := m.LayerList[u]
	if l.Name == "embedding" || l.Group == scenarios.GroupExpert || policy == PolicyFull && l.Block {
		return 0
	}
	if l.Block && strings.HasPrefix(m.Architecture, "GPT2") {
		return 0
	}
	var n int64
	for _, sh := range m.UnitShapes(l) {
		if len(sh) == 2 {
			n += shapeElems(sh)
		}
	}
	return n
}
