package memory

import (
	"fmt"
	"slices"
	"strings"

	"github.com/zerosim/zerosim/scenarios"
)

// The memory timeline of one training step on one rank.
//
// Analyze builds the step as a list of allocation and free Events and walks
// it from the at-rest state; the peaks of the report come from that walk, so
// the zero/ replay can emit the very same events at simulated times and get
// the same figures. Event order (per rank):
//
//	forward, unit u = 0 … L-1:
//	  stage 3: all-gather   +Gather(v) for v = u … u+d not yet gathered (d = prefetch depth)
//	  FSDP's stage 2 (FSDPStage2): all-gather +Gather(v), v = u … u+d as
//	                        stage 3's, kept to its backward; under FSDP1's
//	                        no_sync none, but at u = 0 +ΣGather (OpCompute:
//	                        kept from the micro-step before)
//	  stage 3, FSDP2: copy-out  0 (OpCopyOut: a marker for the allocator replay)
//	  stage 3, grad_accum > 1, u = 0: +ΣShardGrad (the earlier micro-steps' accumulated
//	                        gradient shards; the reduce-scatters below then add
//	                        their output into it: +ShardGrad(u) … −ShardGrad(u))
//	  activation offload    −Activation(i) for the offloaded block i this
//	                        unit releases (OpActOffload, actoffload.go)
//	  compute               +Mask(u) +(Activation(u) − AfterLogits(u))
//	                        +LossBuffer(u) +LossHeldGrad(u) (the chunked loss:
//	                        its gradient buffer and lm_head's summed gradient)
//	                        +LossLogits(u) +Logits(u) [−LossLogits(u) when Logits(u) > 0]
//	                        −Logits(u) +LossShift(u) +LossUpcast(u) +AfterLogits(u) (OpLossSaved) −LossUpcast(u)
//	                        [−LossLogits(u) when Logits(u) = 0] −LossShift(u) (the head: the
//	                        16-bit logits; under training.keep_logits the new
//	                        kept logits, the previous step's, at rest, freed by
//	                        the loop's rebinding (OpRebind); the loss's fp32
//	                        upcast and saved tensors; 0 elsewhere. A Hugging
//	                        Face loss inside forward, OutputsHeldPastLoss:
//	                        −Logits(u) after −LossShift(u), and the
//	                        .float()'s −LossLogits(u) as OpRebind)
//	                        +RingForward(u) −RingForward(u) (cp > 1: ringattn.go)
//	                        −MaskFreeForward(u) (sdpa masks: sdpamask.go)
//	  stage 3: release      −Gather(u) (unless kept across the boundary,
//	                        communication.boundary, KeptAcrossBoundary)
//	backward, unit u = L-1 … 0:
//	  stage 3: all-gather   +Gather(v) for v = u … u−d' not yet gathered
//	                        (d' = backward_prefetch_depth)
//	  stage 3, FSDP2: copy-out  0 (OpCopyOut)
//	  activation reload     +Activation(i) for the offloaded block i this
//	                        unit reloads (OpActReload, actoffload.go)
//	  compute               +Grad(u) (stage 3; stage 0 when stage0GradsFreed or ddpGradCopies)
//	                        +Recompute(u) +RingBackward(u)
//	                        −Activation(u) −Recompute(u) −RingBackward(u)  (end of the unit's backward)
//	                        (the head under the eager loss, in place of −Activation(u) −Recompute(u):
//	                        −AfterLogits(u) −Recompute(u) (OpLossSaved) +HeadMm(u) +Grad(u)
//	                        −HeadMm(u) +LossGrad16(u) −LossBuffer(u) (OpHeadGrad)
//	                        −(Activation(u) − AfterLogits(u)) −LossGrad16(u))
//	                        −MaskFreeBackward(u)
//	                        a tied output (tiedHeadGrad): +TiedGrad at the head's
//	                        end (after its Grad under the eager loss, after its
//	                        activations' free otherwise) and −TiedGrad at the
//	                        embedding's end (OpTiedGrad)
//	  stage 3: reduce-scatter +ShardGrad(u) (unless persistent), −Grad(u) (at its end)
//	           with reduce_dtype fp32, at the reduce-scatter's start (copy-in):
//	                        +ReduceInput(u) −Grad(u), and −ReduceInput(u) at its end
//	  stage 3, FSDP's stage 2: release −Gather(u) (the post-backward's reshard;
//	                        under FSDP1's no_sync only in the reducing
//	                        micro-step: Report.OnlyInReducingMicroStep)
//	optimizer step:
//	  optimizer             +fp32 grad copy of the rank's shard (optimizer temporaries)
//	                        +fp8 quantize staging (fp8 groups)
//	                        −both, then −gradients not persistent at rest
//	param all-gather (stages 1–2): in place into the param buffer, no events
//	                        (FSDP's stage 2 gathers in the forward instead).
//
// A replay applies an event with Delta > 0 when its Op starts and one with
// Delta < 0 when its Op ends (OpReduceCopyIn's and OpRebind's both when
// it starts; OpLossSaved's and OpCopyOut's as the unit's OpCompute's). The
// walk returns to the at-rest state at the end of the step.

// Op is the operation of the step an Event belongs to: a replay applies
// the event when that operation starts (allocations) or ends (frees).
type Op string

// Event operations.
const (
	OpAllGather     Op = "all-gather"
	OpCompute       Op = "compute"
	OpReduceScatter Op = "reduce-scatter"
	// OpReduceCopyIn is the copy of a unit's gradients into its
	// reduce-scatter input: its events, allocations and frees alike, are
	// applied when the unit's reduce-scatter starts.
	OpReduceCopyIn Op = "reduce-scatter copy-in"
	OpRelease      Op = "release"
	OpOptimizer    Op = "optimizer"
	// OpRebind is the training loop's rebinding of the logits it keeps
	// (pred = model(...), training.keep_logits) once the head's forward
	// has returned the new ones: its free of the previous step's logits
	// is applied when the head's forward compute starts, after the
	// events before it and before the loss's allocations after it. A
	// Hugging Face loss inside forward (scenarios.Training.
	// OutputsHeldPastLoss) rebinds after the loss, and the model's own
	// logits = logits.float() frees the 16-bit logits by the same kind
	// of rebinding, applied in the same order.
	OpRebind Op = "logits rebind"
	// OpLossSaved is the head's loss saving its tensors for backward
	// (UnitInfo.AfterLogits) once the loop has the logits, after the
	// rebinding and the loss's upcast: applied as the head's forward
	// compute starts, as its OpCompute events. Under the eager loss its
	// backward free (the saved tensors with the loss backward's
	// gradients, before the head's OpHeadGrad events) is applied as the
	// head's other backward frees, when its backward compute ends.
	OpLossSaved Op = "loss saved"
	// OpCopyOut is FSDP2's copy-out of a unit's all-gather output into its
	// unsharded parameters (FSDPParamGroup.pre_forward and pre_backward →
	// wait_for_unshard → foreach_all_gather_copy_out), emitted under
	// FSDP2 at stage 3 for every unit it gathers, before the unit's
	// compute events in forward and in backward. Its Delta is 0: the
	// timeline counts the unsharded parameters in the all-gather's
	// CompGathered bytes; the allocator replay (allocseq.go) allocates
	// them and frees the all-gather output here. Applied as the unit's
	// compute starts.
	OpCopyOut Op = "all-gather copy-out"
	// OpHeadGrad is the output projection's parameter gradient under the
	// eager loss, allocated after the loss's backward has freed its fp32
	// tensors: autograd reaches the projection's MmBackward0 only with
	// the gradient of its output, which ToCopyBackward0 (the .float()
	// upcast) makes from LogSoftmaxBackward0's, which needs NllLossBackward0's
	// (cross_entropy_loss_symint: nll_loss_nd of at::log_softmax,
	// aten/src/ATen/native/LossNLL.cpp at pytorch/pytorch
	// 0321fa774888a7c86501b3cb31ed6b4fc1010230), and a
	// node's input gradient and saved tensors go once it has run (the
	// engine releases the variables of a node it executed when the graph is
	// not retained: Engine::evaluate_function calls release_variables()
	// after the node's outputs exist, torch/csrc/autograd/engine.cpp at
	// pytorch/pytorch e1253a956f6866469eafd88cc3bfb4627f4b1efc). Applied
	// when the head's backward compute ends, after the loss's frees. Its CompActivations events are the tensors
	// MmBackward0 holds beside it (UnitInfo.HeadMm), allocated before the
	// gradient and freed after it, before the rest of the head's
	// activations.
	OpHeadGrad Op = "head gradient"
	// OpTiedGrad is a tied output projection's weight gradient
	// (tiedHeadGrad): allocated as the head unit's backward compute ends,
	// when its projection's backward has made it, and freed as the
	// embedding unit's backward compute ends, where autograd sums it
	// with the embedding's own gradient.
	OpTiedGrad Op = "tied head gradient"
	// OpRootCat and OpRootViews are FSDP1's root FlatParameter's split
	// backward (rootflat.go): the cat of every root view's gradient,
	// allocated as the last root unit's backward compute ends (and under
	// no_sync freed there too, added into the held gradient), and the free
	// of the views' gradients, every root unit's, right after it. Both are
	// applied when that unit's backward compute ends.
	OpRootCat   Op = "root flat-parameter gradient cat"
	OpRootViews Op = "root flat-parameter view gradients"
	// OpActOffload and OpActReload are activation CPU offloading's
	// (actoffload.go): the free of an offloaded block's saved tensors,
	// applied as the forward compute of its ActOffload.Release unit
	// starts, and their reallocation, applied as the backward compute of
	// its ActOffload.Reload unit starts. Their Unit is the offloaded
	// block's (Report.ActivationOffloadWindow gives the others).
	OpActOffload Op = "activation offload"
	OpActReload  Op = "activation reload"
)

// Event is one allocation (Delta > 0) or free (Delta < 0) on one rank.
type Event struct {
	Phase Phase
	// Unit is the layer / FSDP unit the event belongs to, -1 for none.
	Unit      int
	Op        Op
	Component Comp
	Delta     int64
}

// Timeline returns a copy of the step's events in order (see the timeline
// description in timeline.go). Apply them to the at-rest components
// (Component.AtRest) to follow the rank's memory through the step.
func (r *Report) Timeline() []Event { return slices.Clone(r.events) }

// OutsideAllocator is what the device holds outside the caching allocator
// (the CUDA context and NCCL's buffers), under convention zerosim; 0
// otherwise: the device peak less the reserved one.
func (r *Report) OutsideAllocator() int64 { return r.outside }

// UnitGather is the bytes allocated when unit u's parameters are gathered
// at stage 3 (all groups, padding included) and at FSDP's stage 2
// (FSDPStage2); 0 at other stages or out of range.
func (r *Report) UnitGather(u int) int64 {
	if u < 0 || u >= len(r.Units) {
		return 0
	}
	return r.Units[u].Gather
}

// UnitGrad is the bytes of unit u's transient unsharded gradient (see
// UnitInfo.Grad); 0 out of range.
func (r *Report) UnitGrad(u int) int64 {
	if u < 0 || u >= len(r.Units) {
		return 0
	}
	return r.Units[u].Grad
}

// BucketBytes returns the gradient bytes of every bucket of group g's
// layout as they are reduced (padded size × the reduction's element size,
// GroupInfo.ReduceBytes) in buffer order, e.g. the message sizes of the
// reduce-scatters; nil if g is out of range.
func (r *Report) BucketBytes(g int) []int64 {
	if g < 0 || g >= len(r.Groups) {
		return nil
	}
	gi := r.Groups[g]
	out := make([]int64, len(gi.Layout.Buckets))
	for i, b := range gi.Layout.Buckets {
		out[i] = b.Size * gi.ReduceBytes
	}
	return out
}

// unitKVCache is the bytes of block l's KV cache under
// training.hf_use_cache (KVCache over base, baseDims(s); 0 when unset or for a unit that is not
// an attention block), in the dtype its projections return: autocast's
// over fp32 parameters, else param_dtype (scenarios.Training.LogitsDType
// is that dtype).
func unitKVCache(s *scenarios.Scenario, base BlockDims, l scenarios.Layer) (int64, error) {
	if !s.Training.KVCached() || !l.Block || s.Model.Kind != scenarios.KindTransformer || s.Model.Hidden <= 0 || s.Model.Heads <= 0 || s.Model.SeqLen <= 0 {
		return 0, nil
	}
	if l.Dims != nil && l.Dims.Heads == 0 && l.Dims.LinearAttention == "" && l.Dims.ExpertsOnly() {
		return 0, nil
	}
	return KVCache(blockDims(base, l), s.Training.LogitsDType().Bytes16or32())
}

// unitInfos computes the per-unit allocation sizes.
func unitInfos(s *scenarios.Scenario, r *Report, groups []*group) ([]UnitInfo, error) {
	layers := s.Model.LayerList
	act, rec, tensors, err := unitActivationTensors(s)
	if err != nil {
		return nil, err
	}
	ringF, ringB, err := unitRingBuffers(s)
	if err != nil {
		return nil, err
	}
	maskA, maskF, maskB, err := unitMasks(s)
	if err != nil {
		return nil, err
	}
	head, logits, afterLogits, lossLogits, upcast, err := headLogits(s)
	if err != nil {
		return nil, err
	}
	out := make([]UnitInfo, len(layers))
	// The weights a unit released in forward leaves to autograd
	// (savedweights.go); a unit kept to its backward leaves none.
	policies := UnitPolicies(s)
	saves := SavesGatheredWeights(r, s)
	keptThrough := KeptAcrossBoundary(s)
	base := baseDims(s) // the model's dimensions, once for every unit
	var c calc
	for u, l := range layers {
		out[u] = UnitInfo{Name: l.Name, Params: int64(l.Params)}
		if !r.Convention.modelStatesOnly() {
			out[u].Activation, out[u].Recompute = act[u], rec[u]
			out[u].ActivationTensors, out[u].RecomputeTensors = tensors[u].keep, tensors[u].rebuild
			out[u].RingForward, out[u].RingBackward = ringF[u], ringB[u]
			out[u].Mask, out[u].MaskFreeForward, out[u].MaskFreeBackward = maskA[u], maskF[u], maskB[u]
			if out[u].KVCache, err = unitKVCache(s, base, l); err != nil {
				return nil, err
			}
			if u == head {
				out[u].Logits, out[u].AfterLogits = logits, afterLogits
				out[u].LossLogits, out[u].LossUpcast = lossLogits, upcast
				if s.Training.HFLossInsideForward() {
					if out[u].LossShift, err = HFShiftLogits(base, s.Training.KeptLogitsBytes()); err != nil {
						return nil, err
					}
				}
				if afterLogits > 0 {
					if out[u].HeadMm, err = HeadProjectionBackward(base); err != nil {
						return nil, err
					}
				}
				if out[u].LossBuffer, out[u].LossGrad16, err = ChunkedLossBuffers(base); err != nil {
					return nil, err
				}
			}
		}
	}
	for _, g := range groups {
		e, eg := g.info.ParamBytes, g.info.GradBytes
		switch {
		case r.Stage == 3:
			first := map[int]bool{}
			for _, p := range g.layout.Params {
				if first[p.Unit] {
					continue
				}
				first[p.Unit] = true
				b := g.layout.Buckets[p.Bucket]
				ui := &out[p.Unit]
				ge := e
				if s.GathersFP8(p.Unit) {
					// torchao casts the linear weights to fp8 before FSDP2's
					// all-gather (enable_fsdp_float8_all_gather; torchao/float8/
					// fsdp_utils.py @ 11ce634705af1972320a8488d3e2ca223dcb0372).
					ge = 1
				}
				ui.Gather = c.Add(ui.Gather, c.Mul(b.Size, ge))
				if saves && !keptThrough[p.Unit] {
					ui.SavedWeights = c.Add(ui.SavedWeights, c.Mul(savedWeightElems(s, p.Unit, policies[p.Unit]), ge))
				}
				unitGrads(&c, ui, r, s, g, b.Size, b.Size/int64(max(r.Shards/g.info.EP, 1)))
			}
		case fsdpStage2(r, s):
			// FSDP's ZeRO-2 gathers each unit's parameters in its forward
			// (FSDPStage2): the unit's elements on this rank (its 1/ep of
			// routed experts) in the unsharded dtype. A group sharded over
			// one rank holds them whole: nothing to gather. Its gradients
			// are FSDP's at stage 3 (shardsPerUnit), of the unit's
			// elements (no padding: the flat buffer is laid out by bucket
			// at stage 2), the rank's shard of them rounded up.
			n := int64(max(r.Shards/g.info.EP, 1))
			for _, u := range g.units {
				if g.layout.Spec.Shards > 1 {
					ge := e
					if s.GathersFP8(u) {
						ge = 1 // torchao's fp8 all-gather, as at stage 3
					}
					out[u].Gather = c.Add(out[u].Gather, c.Mul(g.perUnit[u], ge))
				}
				unitGrads(&c, &out[u], r, s, g, g.perUnit[u], (g.perUnit[u]+n-1)/n)
			}
		case stage0GradsFreed(r, s) || ddpGradCopies(r, s) && s.Training.GradAccum <= 1:
			for _, u := range g.units {
				out[u].Grad = c.Add(out[u].Grad, c.Mul(g.perUnit[u], eg))
			}
		}
		if OneGraphGrads(s, r.Convention) {
			for _, u := range g.units {
				out[u].OneGraphGrad = c.Add(out[u].OneGraphGrad, c.Mul(g.perUnit[u], e))
			}
		}
		if s.HoldsUnshardedGrads() && !r.Convention.modelStatesOnly() {
			for _, u := range g.units {
				out[u].HeldGrad = c.Add(out[u].HeldGrad, c.Mul(g.perUnit[u], heldGradBytes(s, g)))
			}
		}
		if s.Training.Chunked() && r.Stage == 3 && head >= 0 && !r.Convention.modelStatesOnly() {
			// torchtitan's chunked loss turns lm_head's gradient sync off
			// for all chunks but the last (set_requires_gradient_sync(False),
			// torchtitan/components/loss.py lines 658-680 at b5bcd76c6):
			// FSDP2's post_backward then keeps each chunk's unsharded
			// gradient, upcast to reduce_dtype and summed there
			// (heldGradBytes), and the last chunk's post_backward
			// reduce-scatters the sum once. Unpadded, as autograd makes
			// it: the padding is the reduce-scatter input's.
			out[head].LossHeldGrad = c.Add(out[head].LossHeldGrad, c.Mul(g.perUnit[head], heldGradBytes(s, g)))
		}
	}
	if c.Err != nil {
		return nil, fmt.Errorf("unit sizes overflow int64: %w", c.Err)
	}
	if err := unitCasts(s, r, out); err != nil {
		return nil, err
	}
	return out, nil
}

// unitGrads adds to ui the gradients of elems elements of group g, the
// rank's shard of them shard elements, as ZeRO-3 and FSDP's ZeRO-2 make
// and reduce them unit by unit (shardsPerUnit): the unsharded gradient in
// the gradients' dtype from the unit's backward, the reduce-scatter input
// in reduce_dtype when that differs, and the reduce-scattered shard in the
// shard's dtype.
func unitGrads(c *calc, ui *UnitInfo, r *Report, s *scenarios.Scenario, g *group, elems, shard int64) {
	eg := g.info.GradBytes
	ui.Grad = c.Add(ui.Grad, c.Mul(elems, eg))
	if er := g.info.ReduceBytes; er != eg {
		// FSDP2's foreach_reduce allocates the reduce-scatter
		// input in reduce_dtype and copies the unit's
		// unsharded param_dtype gradients into it, freeing
		// them after the copy-in (torch.empty((reduce_scatter_
		// input_numel,), dtype=reduce_dtype);
		// foreach_reduce_scatter_copy_in; unsharded_grads.clear():
		// torch/distributed/_composable/fsdp/_fsdp_collectives.py
		// at pytorch/pytorch 415cc2628922556efc715d17fa31ac6bab58df36,
		// and torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py
		// at 8fc2039decebd92b15b38296df8bf9aa13275be0; no version
		// at torch 1963fc8 was found, torchtitan's
		// December 2024 runs, which lie between the two). At
		// stage 3 the input is the padded unit (_get_dim0_padded_size).
		// FSDP1 casts the unsharded flat gradient likewise
		// before its reduce-scatter (_post_backward_hook:
		// flat_param.grad.data = flat_param.grad.to(
		// handle._reduce_dtype), torch/distributed/fsdp/
		// _runtime_utils.py at 00ae0bc91ac2c1718d1baa193d9d299e2b82776c).
		ui.ReduceInput = c.Add(ui.ReduceInput, c.Mul(elems, er))
	}
	sg := eg
	if fp32Shard(r, s, &g.info) {
		// FSDP casts the reduce-scattered gradient to the shard's dtype
		// (see atRest).
		sg = 4
	}
	ui.ShardGrad = c.Add(ui.ShardGrad, c.Mul(shard, sg))
}

// stage0GradsFreed reports whether the stage-0 gradients are no buffer at
// rest but each unit's param.grad, made in its backward (UnitInfo.Grad)
// and freed after the optimizer step: seed 000's baseline convention, and
// under convention zerosim a run whose stack keeps no gradient between
// steps (scenarios.Scenario.GradsFreedEachStep). A whole-model compiled
// backward (training.compile: model) makes them at the same points: each
// new gradient exists from the unit the graph computes it in and, .grad
// being None, AccumulateGrad steals it (OneGraphGrads).
func stage0GradsFreed(r *Report, s *scenarios.Scenario) bool {
	if r.Stage != 0 {
		return false
	}
	return r.Convention == ConventionSeed000 || r.Convention == ConventionZerosim && s.GradsFreedEachStep()
}

// ddpGradCopies reports whether the stage-0 gradients are two copies, torch
// DDP's default gradient_as_bucket_view=False under convention zerosim
// (scenarios.Scenario.TorchDDPGradCopies): the Reducer's buckets at rest
// and each parameter's .grad. With one micro-step each unit's .grad is made
// in its backward, as under stage0GradsFreed, and freed after the optimizer
// step; with grad_accum > 1 the last micro-step starts with all of it.
func ddpGradCopies(r *Report, s *scenarios.Scenario) bool {
	return r.Stage == 0 && r.Convention == ConventionZerosim && s.TorchDDPGradCopies()
}

// freedGradsNote says whose gradients stage0GradsFreed counts under
// convention zerosim (scenarios.Scenario.GradsFreedEachStep).
func freedGradsNote(s *scenarios.Scenario) string {
	switch {
	case s.DeepSpeed():
		return "param.grad: each unit's made in its backward, dropped by DeepSpeed's optimizer step (stage 0, grad_accum 1)"
	case s.FSDP1NoShard():
		return "flat_param.grad: each unit's made in its backward, all-reduced in place by FSDP1's NO_SHARD post-backward, freed by zero_grad (grad_accum 1)"
	}
	return "param.grad: each unit's made in its backward, freed by zero_grad after the step (one process, no data-parallel wrapper, grad_accum 1)"
}

// dsFlatGradCopy reports whether s steps through DeepSpeed's
// FP16_Optimizer, whose step makes the fp32 gradient from per-parameter
// copies (see the optimizer temporaries in buildEvents): DeepSpeed's stage
// 0 under convention zerosim with FusedAdam (training.optimizer_impl
// fused, what DeepSpeed builds for the ds_config's Adam and AdamW),
// which _configure_fp16_optimizer wraps in FP16_Optimizer; any other
// optimizer is wrapped in FP16_UnfusedOptimizer, which copies each .grad
// to its fp32 master's .grad and needs the one grad.float() copy
// (deepspeed/runtime/engine.py lines 2279-2334 and
// fp16/unfused_optimizer.py lines 215-220 at edaa7221). The 16-bit params
// are the caller's to check.
func dsFlatGradCopy(r *Report, s *scenarios.Scenario) bool {
	return r.Convention == ConventionZerosim && s.DeepSpeed() && s.Training.OptimizerImpl == scenarios.OptimizerFused
}

// OneGraphGrads reports whether the step's last micro-step holds a second
// set of gradients: under training.compile model on one GPU
// (scenarios.Scenario.OneGraph) the whole model is one AOTAutograd graph,
// whose compiled backward returns a gradient for every graph input, the
// parameters among them, in one call (CompiledFunction.backward returns
// call_func_at_runtime_with_args(CompiledFunction.compiled_bw, all_args,
// steal_args=True): torch/_functorch/_aot_autograd/runtime_wrappers.py at
// pytorch/pytorch 00436dcc47dd895fd100695773a6a4761995f107), so each
// new gradient, computed in its parameter's dtype, is alive from the
// point the graph makes it until the call returns, and only then does the
// engine run each parameter's AccumulateGrad. On the first micro-step
// .grad is None and AccumulateGrad steals the new gradient ("AccumulateGrad
// steals new_grad if it's stealable", update_grad(new_grad.detach())): no
// second set; on every later one it adds it in place (variable_grad +=
// new_grad) into the .grad kept from before, so the new set and the
// accumulated one coexist until each add has run
// (torch/csrc/autograd/functions/accumulate_grad.h at pytorch/pytorch
// 035290b77d8b4bd106cf5f9a728516d4335d5a42). The optimizer's zero_grad()
// sets .grad to None after each step (set_to_none=True, the default), so
// with grad_accum 1 every micro-step is a first one. The timeline follows
// the last micro-step: with grad_accum > 1 it carries the set. Saved
// activations are not held longer: the backward prologue drops its
// references (del ctx_saved_tensors, ctx.maybe_clear_saved_tensors()) and
// steal_args hands the compiled graph the only list of its inputs, which
// Inductor's generated code frees as it consumes them. Seed conventions
// keep their published counts.
func OneGraphGrads(s *scenarios.Scenario, conv Convention) bool {
	return s.OneGraph() && s.Training.GradAccum > 1 && conv == ConventionZerosim
}

type model struct {
	r        *Report
	groups   []*group
	s        *scenarios.Scenario
	c        *calc
	rest     []int64
	notes    []string
	events   []Event
	prefetch int
	// prefetchBwd is the backward prefetch depth.
	prefetchBwd int
	// shardGradsPersistent: stage-3 sharded grads live at rest.
	shardGradsPersistent bool
	// fsdp2Stage is FSDP's ZeRO-2 (FSDPStage2) under convention zerosim:
	// the parameter shard at rest, each unit gathered from its forward to
	// its post-backward. The seeds' conventions keep stage 2's whole
	// 16-bit parameters.
	fsdpStage2 bool
	// fp8Unit is each unit's Transformer Engine fp8 weight copy and
	// transpose (2 bytes per parameter the rank holds unsharded).
	fp8Unit []int64
	// actOff is the activation offloading's blocks (actoffload.go).
	actOff []ActOffload
}

// deepSpeedGradPartitions reports whether the rank's gradient partitions
// live at rest, as DeepSpeed's ZeRO-3 keeps them (communication.boundary:
// deepspeed selects that stack): its optimizer allocates one flat buffer of
// every partition of the rank once, in _setup_for_real_optimizer
// (deepspeedai/DeepSpeed deepspeed/runtime/zero/stage3.py at e9503fe40ee127e74c8b0ea962aac4f0ae957624:
// grad_partitions_flat_buffer = torch.zeros(sum(p.partition_numel()), dtype=
// gradient_accumulation_dtype), the model dtype under bf16 with ZeRO,
// engine.py get_data_types), keeps it for the run and copies each
// reduce-scattered partition into it (partition_grads); only the offloaded
// optimizer puts it on the host (self.device is the CPU there). PyTorch FSDP
// frees the sharded gradients when the optimizer zeroes them.
func deepSpeedGradPartitions(r *Report, s *scenarios.Scenario) bool {
	return r.Convention == ConventionZerosim && r.Stage == 3 &&
		s.Communication.Boundary == scenarios.BoundaryDeepSpeed &&
		s.Offload.Optimizer == scenarios.OffloadNone
}

func newModel(r *Report, groups []*group, s *scenarios.Scenario, c *calc) *model {
	m := &model{r: r, groups: groups, s: s, c: c,
		rest: make([]int64, len(componentOrder)), notes: make([]string, len(componentOrder))}
	m.prefetch = s.Communication.Prefetch()
	m.prefetchBwd = m.prefetch
	if d := s.Communication.BackwardPrefetchDepth; d != nil {
		m.prefetchBwd = *d
	}
	m.shardGradsPersistent = r.Convention == ConventionSeed002 || deepSpeedGradPartitions(r, s)
	m.fsdpStage2 = fsdpStage2(r, s)
	r.keptThroughNoSync = m.fsdpStage2 && keepsGatheredUnderNoSync(s)
	if m.fsdpStage2 {
		r.gatherAhead = m.prefetch
	}
	r.actOff = ActivationOffloads(s)
	m.actOff = r.actOff
	m.actOffloadHost()
	m.fp8Copies()
	m.atRest()
	m.buildEvents()
	return m
}

func (m *model) set(name Comp, v int64, note string) {
	i := componentIndex(name)
	m.rest[i] = m.c.Add(m.rest[i], v)
	if note != "" && m.notes[i] == "" {
		m.notes[i] = note
	}
}

// atRest fills the persistent components.
func (m *model) atRest() {
	r, c := m.r, m.c
	for _, g := range m.groups {
		P, Z := g.layout.Numel, g.layout.Size
		S, R := g.info.ShardElems, g.info.RankNumel
		e, eg, em := g.info.ParamBytes, g.info.GradBytes, g.info.MasterBytes
		dt := g.info.Precision
		switch r.Stage {
		case 0:
			m.set(CompParams, c.Mul(P, e), "full "+dt+" params")
			m.set(CompPadding, c.Mul(Z-P, e), "")
			switch {
			case r.Convention == ConventionSeed000:
				m.set(CompGrads, 0, "param.grad, freed in optimizer.step (seed 000 baseline)")
			case stage0GradsFreed(r, m.s):
				m.set(CompGrads, 0, freedGradsNote(m.s))
			case ddpGradCopies(r, m.s) && m.s.Training.GradAccum > 1:
				m.set(CompGrads, c.Mul(c.Mul(P, eg), 2), gradBufferNote("torch DDP's bucket buffers, kept for the run, and param.grad, accumulated under no_sync (gradient_as_bucket_view=False)", g))
				m.set(CompPadding, c.Mul(Z-P, eg), "")
			case ddpGradCopies(r, m.s):
				m.set(CompGrads, c.Mul(P, eg), gradBufferNote("torch DDP's bucket buffers, kept for the run; in backward also each unit's param.grad, freed by zero_grad after the step (gradient_as_bucket_view=False, grad_accum 1)", g))
				m.set(CompPadding, c.Mul(Z-P, eg), "")
			default:
				m.set(CompGrads, c.Mul(P, eg), gradBufferNote("full grad buffer", g))
				m.set(CompPadding, c.Mul(Z-P, eg), "")
			}
			if m.s.Training.NoMaster() {
				m.set(CompMaster, 0, noMasterNote(g))
				m.set(CompAdamM, c.Mul(P, g.info.StateBytes), "full, "+dt+" (master_dtype: none)")
				m.set(CompAdamV, c.Mul(P, g.info.StateBytes), "full, "+dt+" (master_dtype: none)")
			} else {
				m.set(CompMaster, c.Mul(P, em), "full fp32 copy")
				m.set(CompAdamM, c.Mul(P, 4), "full, fp32")
				m.set(CompAdamV, c.Mul(P, 4), "full, fp32")
			}
		case 1, 2, 3:
			fp32 := fp32Shard(r, m.s, &g.info)
			if r.Stage == 3 && m.s.Offload.Params != scenarios.OffloadNone {
				m.set(CompParams, 0, dt+" param shard offloaded to "+m.s.Offload.Params.String())
			} else if fp32 {
				// PyTorch FSDP under a mixed-precision policy keeps the
				// rank's shard of the flat parameter in fp32 and casts it
				// to param_dtype only for the all-gather (pytorch/pytorch
				// torch/distributed/fsdp/flat_param.py at 002159d1:
				// pre_unshard → _use_low_precision_shard allocates the
				// 16-bit _mp_shard from the fp32 _local_shard, post_unshard
				// frees it). The optimizer steps that fp32 shard: there is
				// no separate master copy.
				m.set(CompParams, c.Mul(R, 4), "fp32 param shard (1/"+itoa(r.Shards)+"), the optimizer's own param (FSDP mixed precision)")
				m.set(CompPadding, c.Mul(S-R, 4), "")
			} else if r.Stage == 3 {
				m.set(CompParams, c.Mul(R, e), dt+" param shard (1/"+itoa(r.Shards)+")")
				m.set(CompPadding, c.Mul(S-R, e), "")
			} else if m.fsdpStage2 {
				// FSDP's ZeRO-2 holds the shard between steps; each
				// unit's unsharded parameters live from its forward to
				// its post-backward (FSDPStage2, buildEvents).
				m.set(CompParams, c.Mul(R, e), dt+" param shard (1/"+itoa(r.Shards)+"); each unit gathered from its forward to its post-backward (FSDP's ZeRO-2)")
				m.set(CompPadding, c.Mul(S-R, e), "")
			} else {
				m.set(CompParams, c.Mul(P, e), "full "+dt+" param buffer")
				m.set(CompPadding, c.Mul(Z-P, e), "")
			}
			switch {
			case r.Stage == 1:
				m.set(CompGrads, c.Mul(P, eg), gradBufferNote("full grad buffer", g))
				m.set(CompPadding, c.Mul(Z-P, eg), "")
			case r.Stage == 3 && deepSpeedGradPartitions(r, m.s):
				m.set(CompGrads, c.Mul(R, eg), "grad partitions (1/"+itoa(r.Shards)+"), DeepSpeed's grad_partitions_flat_buffer")
				m.set(CompPadding, c.Mul(S-R, eg), "")
			case r.Stage == 2 && !m.fsdpStage2 || m.shardGradsPersistent:
				note := "grad shard (1/" + itoa(r.Shards) + ")"
				if r.Stage == 2 {
					note = gradBufferNote(note, g)
				}
				m.set(CompGrads, c.Mul(R, eg), note)
				m.set(CompPadding, c.Mul(S-R, eg), "")
			default:
				// ZeRO-3 and FSDP's ZeRO-2 (shardsPerUnit): the sharded
				// gradients live from the reduce-scatters to zero_grad.
				m.set(CompGrads, 0, "grad shard (1/"+itoa(r.Shards)+") + grads awaiting reduce-scatter; freed after the step")
			}
			if m.s.Offload.Any() {
				m.offload(g) // host RAM per rank and node (offload.go)
			}
			if m.s.Offload.Optimizer == scenarios.OffloadNone {
				sb := g.info.StateBytes
				switch {
				case fp32:
					em = 0
					m.set(CompMaster, 0, "none: the fp32 param shard is the master (FSDP mixed precision)")
				case m.s.Training.NoMaster():
					m.set(CompMaster, 0, noMasterNote(g))
				case m.s.Training.MasterDType == scenarios.MasterBF16:
					m.set(CompMaster, c.Mul(R, em), "bf16 shard (1/"+itoa(r.Shards)+"), a copy of the param shard (master_dtype: bf16, DeepSpeed's bf16_master_weights_and_grads)")
				case m.s.ParamRemainders() && em == 2:
					m.set(CompMaster, c.Mul(R, em), "int16 remainders of the fp32 shard (1/"+itoa(r.Shards)+"): its low 16 bits, the bf16 param its top half (store_param_remainders)")
				default:
					m.set(CompMaster, c.Mul(R, em), "fp32 shard (1/"+itoa(r.Shards)+")")
				}
				stateNote := "fp32 shard"
				switch {
				case m.s.Training.NoMaster():
					stateNote = dt + " shard (master_dtype: none)"
				case m.s.Training.MasterDType == scenarios.MasterBF16:
					stateNote = "bf16 shard (optimizer_state_dtype: bf16, DeepSpeed's bf16_optimizer_states)"
				}
				m.set(CompAdamM, c.Mul(R, sb), stateNote)
				m.set(CompAdamV, c.Mul(R, sb), stateNote)
				m.set(CompPadding, c.Mul(S-R, c.Add(em, 2*sb)), "")
			} else {
				m.set(CompMaster, 0, masterDTypeName(m.s)+" shard offloaded to "+m.s.Offload.Optimizer.String())
			}
			if r.Stage == 2 && !m.fsdpStage2 && !r.Convention.modelStatesOnly() {
				// DeepSpeed's and Megatron-LM's ZeRO-2 stage gradients
				// for the reduce-scatter in buckets; FSDP's ZeRO-2
				// reduces unit by unit, as its ZeRO-3 (shardsPerUnit,
				// UnitInfo.Grad and ReduceInput).
				var maxB int64
				for _, b := range g.layout.Buckets {
					maxB = max(maxB, b.Size)
				}
				// Double-buffered when overlapping (DeepSpeed overlap_comm),
				// never more buffers than buckets.
				inflight := min(int64(2), int64(len(g.layout.Buckets)))
				if !*m.s.Communication.Overlap {
					inflight = 1
				}
				m.set(CompGradBuckets, c.Mul(inflight, maxB, eg), gradBufferNote(itoa64(inflight)+" reduce-scatter staging bucket(s)", g))
			}
		}
	}
	m.set(CompPadding, 0, "to a multiple of the shard count (communication.padding: "+r.Padding+")")
	if m.s.Training.FP8Params && r.Stage < 3 {
		// Two buffers: the note of the first (bf16) alone would misname
		// the sum (scenarios.resolveFP8Params).
		m.notes[componentIndex(CompParams)] = "full param buffers: the blocks' fp8 weights, 1 byte each (training.fp8_params), the rest " + string(m.s.Training.ParamDType)
	}
	m.set(CompRuntime, int64(m.s.Memory.RuntimeContext), "memory.runtime_context")
	m.set(CompNCCL, int64(m.s.Memory.NCCLBuffers), "memory.nccl_buffers")
	// The logits the training loop keeps (training.keep_logits): at rest
	// are the previous step's, which the loop's pred holds until the next
	// forward's pred = model(...) rebinds it (KeptLogits cites
	// torchtitan's train.py at 83c879f18763).
	var logits int64
	for _, u := range r.Units {
		logits = c.Add(logits, u.Logits)
	}
	m.set(CompLogits, logits, "logits the model returned ("+string(m.s.Training.KeepLogits)+
		"), held by the training loop until the next forward returns (training.keep_logits)")
	// The KV cache (training.hf_use_cache): at rest the previous step's
	// when the loop keeps the outputs (kept), which it frees as the new
	// forward returns (KVCache).
	var kv int64
	for _, u := range r.Units {
		kv = c.Add(kv, u.KVCache)
	}
	if !m.s.Training.KVCacheAtRest() {
		kv = 0
	}
	m.set(CompKVCache, kv, "Hugging Face's KV cache (training.hf_use_cache: "+string(m.s.Training.HFUseCache)+
		"): each block's post-RoPE keys and values from its forward until the model returns"+map[bool]string{true: ", and the loop's outputs hold them until the next forward returns", false: " and the loop drops its outputs before backward"}[m.s.Training.KVCacheAtRest()])
}

// tiedHeadGrad is, for a model whose output projection is the embedding's
// weight (tiedHead: no lm_head, as GPT's layer list and a Hugging Face
// config with tie_word_embeddings have; the head runs in the last unit,
// final_norm there), the head unit, the embedding unit and the bytes of the projection's weight
// gradient, vocab × hidden in the parameters' dtype, unsharded: what the
// head's backward makes and autograd holds until the embedding's backward
// (-1, -1, 0 otherwise). The tied weight is one tensor with two consumers,
// so the node its gradient flows into has two incoming edges: the engine
// counts them (Engine::compute_dependencies: dependencies[next_ptr] += 1)
// and keeps each gradient that arrives early in that node's InputBuffer in
// not_ready until the count reaches 0 (Engine::evaluate_function), with the
// gradient cast to the input's dtype (validate_outputs), all in
// torch/csrc/autograd/engine.cpp at pytorch/pytorch
// e1253a956f6866469eafd88cc3bfb4627f4b1efc. The head runs first in
// backward, the embedding last, so the head's gradient waits there over the
// whole backward of the blocks. Every stack zerosim models hands autograd
// the one tensor:
//   - FSDP1: FlatParamHandle._unflatten sets a shared parameter to the very
//     view of the flat parameter its first module holds (the
//     _shared_param_infos loop, torch/distributed/fsdp/flat_param.py lines
//     973-1010 at v1.13.1); MPT's head is F.linear(x, wte.weight).
//   - FSDP2: the unsharded parameter is the autograd leaf (its [Note: FSDP
//     tensors]) and ParamModuleInfo's shared_modules get the same one
//     (torch/distributed/fsdp/_fully_shard/_fsdp_param.py at
//     010ae4a89516fa3be548ab16dff711414ec12d0b).
//   - DeepSpeed ZeRO-3, and torch without a wrapper: the one nn.Parameter,
//     whose AccumulateGrad runs once both gradients are in; ZeRO-3's
//     reduce hook is registered on it (register_grad_hook in
//     create_reduce_and_remove_grad_hooks, deepspeed/runtime/zero/stage3.py
//     line 1437 at deepspeedai/DeepSpeed
//     edaa7221267243c7be7fb49c5d5f5c4fb97b4641).
//
// Not counted: Megatron-LM's gradient-accumulation fusion writes the
// head's weight gradient into main_grad and hands autograd a dummy (Transformer
// Engine's get_dummy_wgrad, one buffer reused:
// megatron/core/tensor_parallel/layers.py lines 733-762 at NVIDIA/Megatron-LM
// d98e8a64ddf34856e74b24714e3bedb2f5a39553); a whole-model compiled backward
// (training.compile: model) sums the two inside its graph; and the seeds'
// model-state conventions count no gradient of this kind.
func tiedHeadGrad(s *scenarios.Scenario, r *Report, groups []*group) (head, emb int, bytes int64) {
	m := &s.Model
	if r.Convention.modelStatesOnly() || s.OneGraph() || s.Stack == "megatron" || s.Communication.Padding == scenarios.PaddingMegatron {
		return -1, -1, 0
	}
	if head, emb = tiedHead(s); head < 0 {
		return -1, -1, 0
	}
	for _, g := range groups {
		if slices.Contains(g.units, emb) {
			var c calc
			bytes = c.Mul(m.Vocab, m.Hidden, g.info.ParamBytes)
			if c.Err != nil {
				return -1, -1, 0
			}
			return head, emb, bytes
		}
	}
	return -1, -1, 0
}

// DefaultSubGroupSize is DeepSpeed's ZeRO-3 sub_group_size default, 1e9
// elements (deepspeed/runtime/zero/config.py line 175 at deepspeedai/
// DeepSpeed edaa7221267243c7be7fb49c5d5f5c4fb97b4641). zerosim models the
// default; scenarios.ImportDeepSpeed notes any other value.
const DefaultSubGroupSize = 1_000_000_000

// largestSubGroup is the partition elements of the largest optimizer
// sub-group DeepSpeed's ZeRO-3 cuts group g into (largestSubGroup).
//
// DeepSpeedZeroOptimizer_Stage3._create_fp16_sub_groups
// (runtime/zero/stage3.py lines 1160-1183 at edaa7221) walks a parameter
// group in order, adding each parameter's partition_numel(), and closes a
// sub-group once it holds at least sub_group_size elements (or at the
// group's last parameter); a group under sub_group_size is one sub-group.
// step (lines 2604-2644) then runs, per sub-group,
// _prepare_sub_group → _prepare_fp32_grad_for_sub_group (lines
// 2398-2417: single_grad_partition = self.flatten(
// self.averaged_gradients[i]).to(fp32), a cat of the sub-group's 16-bit
// gradient partitions into a new flat tensor, then its fp32 copy, set as
// the fp32 partition's .grad), unscale_and_clip_grads (in place, .grad
// .mul_), _optimizer_step (lines 1185-1212: the optimizer's params are
// that sub-group's fp32 partition alone; DeepSpeed's FusedAdam updates in
// place), _reassign_or_swap_out_partitioned_parameters (lines 2585-2602:
// a copy_ into the existing 16-bit partition) and _release_sub_group
// (lines 2448-2457: fp32 partition .grad = None), before the next
// sub-group starts. So the step's temporaries are one sub-group's 16-bit
// flatten and fp32 copy, the flatten freed when the statement ends; the
// largest sub-group sets the peak.
//
// zerosim walks units, not parameters: a sub-group closes at the first
// unit (a block, the embedding, the head) that takes it to sub_group_size,
// where DeepSpeed closes it at the first parameter. The largest sub-group
// overshoots sub_group_size by up to one unit's partition here and one
// parameter's there: an upper bound, by at most one unit's partition.
// Each partition is the unit's ceil(numel/shards), as DeepSpeed pads
// each parameter's partition (partition_numel).
//
// ZeRO-1 and 2 have no sub-groups: DeepSpeedZeroOptimizer.step
// (runtime/zero/stage_1_and_2.py lines 2319-2374 at edaa7221) makes one
// optimizer parameter group's fp32 gradient (flatten(...).to(fp32), the
// 16-bit flatten deleted after the cast), steps it and frees it before
// the next group: the whole partition of the group at once, as the
// grad.float() temporary counts it (its 16-bit flatten, alive only
// through the cast, is not counted there).
func (m *model) largestSubGroup(g *group) int64 {
	c := m.c
	n := int64(max(m.r.Shards/g.info.EP, 1))
	var largest, cur int64
	for i, u := range g.units {
		cur = c.Add(cur, (g.perUnit[u]+n-1)/n)
		if cur >= DefaultSubGroupSize || i == len(g.units)-1 {
			largest = max(largest, cur)
			cur = 0
		}
	}
	return largest
}

// noMasterStepTemp is the optimizer step's temporaries for group g under
// training.master_dtype none, in elements of the parameters' dtype, and
// what they are. The gradients are already in that dtype: nothing casts
// them (no grad.float()). What remains is the update's own intermediates,
// in the states' dtype (torch/optim/adamw.py at pytorch/pytorch
// 002d2f0bb40cf08beb74bce80f52ce4f2eda46a0):
//
//   - fused: torch._fused_adamw_ updates in place, one kernel: none.
//   - foreach, and unset (torch.optim.AdamW's default on CUDA,
//     scenarios.Training.StepImpl): _multi_tensor_adamw's exp_avg_sq_sqrt =
//     torch._foreach_sqrt(device_exp_avg_sqs), the whole shard at once,
//     divided and added to in place.
//   - composer: one parameter at a time,
//     denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
//     (_single_tensor_adamw computes the same; Composer's DecoupledAdamW,
//     composer/optim/decoupled_weight_decay.py at v0.13.4): two
//     temporaries of the largest parameter the rank steps, counted as the
//     largest unit's share (one flat parameter per FSDP unit; at stage 0
//     the unit is an upper bound on its largest tensor).
func (m *model) noMasterStepTemp(g *group) (int64, string) {
	dt := g.info.Precision
	switch m.s.Training.StepImpl() {
	case scenarios.OptimizerFused:
		return 0, ""
	case scenarios.OptimizerForeach:
		elems := g.info.ShardElems
		if m.r.Stage == 0 {
			elems = g.layout.Numel
		}
		return elems, "torch._foreach_sqrt of exp_avg_sq over the whole shard, " + dt + " (foreach Adam; master_dtype: none)"
	}
	shards := int64(1)
	if m.r.Stage > 0 {
		shards = int64(max(m.r.Shards/g.info.EP, 1))
	}
	var largest int64
	for _, u := range g.units {
		largest = max(largest, (g.perUnit[u]+shards-1)/shards)
	}
	return m.c.Mul(2, largest), "exp_avg_sq.sqrt() and its quotient, " + dt + ", of the largest unit's share (master_dtype: none)"
}

// noMasterNote says why group g has no master copy under
// training.master_dtype none.
func noMasterNote(g *group) string {
	return "none: the optimizer steps the " + g.info.Precision + " params (master_dtype: none)"
}

// gradBufferNote is note with the buffer's dtype when training.reduce_dtype
// makes a 16-bit group's gradient buffer fp32 (stages 0–2).
func gradBufferNote(note string, g *group) string {
	if g.info.GradBytes != g.bucketGradBytes {
		return note + ", fp32 (reduce_dtype: fp32)"
	}
	return note
}

// fp32GradBuffer reports whether group g's gradients reach the optimizer
// as an fp32 buffer of their own (stages 0–2 under training.reduce_dtype
// fp32), so that the step casts nothing: Megatron's optimizers hand the
// fp32 main params their grads as main_grad.float(), which for an fp32
// main_grad is the buffer itself, not a copy (distributed optimizer:
// shard_main_param.grad = shard_model_grad.float(), megatron/core/optimizer/
// distrib_optimizer.py _copy_model_grads_to_main_grads at NVIDIA/Megatron-LM
// core_v0.12.0, d580efc6, and at d98e8a64; stage 0: main_param.grad =
// model_param.main_grad.float(), optimizer.py at core_v0.12.0).
func fp32GradBuffer(r *Report, g *group) bool {
	return r.Stage < 3 && g.info.GradBytes == 4 && g.bucketGradBytes < 4
}

// fp8Copies fills m.fp8Unit and puts the amax history at rest under
// Transformer Engine's recipes (te, te_current: current scaling keeps the
// copies and no history): TE keeps, per linear weight, an fp8
// copy for forward and an fp8 transpose for the backward data-gradient GEMM
// (Hopper's fp8 GEMMs take K-major operands only), cached across the
// micro-batches of a step, and an amax history of AmaxHistoryLen fp32
// values for each of a GEMM's three fp8 tensors (input, weight, output
// gradient). At stages 0–2 the copies persist with the module; at stage 3
// they live while the unit is gathered.
func (m *model) fp8Copies() {
	r, c, s := m.r, m.c, m.s
	m.fp8Unit = make([]int64, len(r.Units))
	if !s.Training.FP8.TE() || r.Convention.modelStatesOnly() {
		return
	}
	ep := s.Parallelism.EP
	var copies, gemms int64
	primary := false
	for u, l := range s.Model.LayerList {
		if !scenarios.FP8Linear(l) {
			continue
		}
		held := int64(l.Params)
		if l.Group == scenarios.GroupExpert {
			held /= int64(ep)
		}
		per := int64(2)
		if scenarios.FP8Primary(l) {
			// fp8 primary weights (training.fp8_params): the weight is
			// the fp8 data, in the param buffer; what TE adds is its
			// transpose cache, 1 byte (scenarios.resolveFP8Params).
			per, primary = 1, true
		}
		m.fp8Unit[u] = c.Mul(held, per)
		copies = c.Add(copies, m.fp8Unit[u])
		gemms = c.Add(gemms, scenarios.FP8GEMMs(l, ep))
	}
	what := "TE fp8 weight copies + transposes"
	if primary {
		what = "TE fp8 transposes of the fp8 weights (fp8_params)"
	}
	if s.Training.FP8 == scenarios.FP8TE {
		m.set(CompFP8, c.Mul(gemms, 3, scenarios.AmaxHistoryLen, 4), what+", amax history")
	} else {
		// Current scaling keeps no history: the scale is the tensor's own.
		m.set(CompFP8, 0, what)
	}
	if r.Stage != 3 {
		m.set(CompFP8, copies, "")
	}
}

// heldGradBytes is the element size of group g's unsharded gradients kept
// across micro-steps under no_sync (UnitInfo.HeldGrad): FSDP1 accumulates
// into the flat parameter's .grad, which autograd computes in the dtype of
// the unsharded parameter the backward ran on, param_dtype under mixed
// precision (_post_backward_hook returns before its cast to reduce_dtype
// when not syncing, torch/distributed/fsdp/_runtime_utils.py at
// pytorch/pytorch 00ae0bc91ac2c1718d1baa193d9d299e2b82776c); FSDP2
// (communication.boundary fsdp2, fsdp2_head) upcasts each unsharded
// gradient to reduce_dtype and accumulates there when the two differ
// (FSDPParam.to_accumulated_grad_if_needed and
// accumulate_unsharded_grad_if_needed,
// torch/distributed/fsdp/_fully_shard/_fsdp_param.py at
// 010ae4a89516fa3be548ab16dff711414ec12d0b).
func heldGradBytes(s *scenarios.Scenario, g *group) int64 {
	if s.Communication.Boundary.FSDP2() {
		return g.info.ReduceBytes
	}
	return g.bucketGradBytes
}

// fp32Shard reports whether group g's parameter shard is kept in fp32 as
// the optimizer's parameter (training.shard_dtype: fp32; scenarios/stack.go)
// where the rank holds only its shard (shardsPerUnit: stage 3, FSDP's
// stage 2; FSDP's MixedPrecision keeps the flat parameter, or FSDP2's
// sharded parameter, in its original dtype at both stages and gathers it
// in param_dtype): 16-bit groups only, never when the params are
// offloaded. Its gradient shard is fp32 too: FSDP casts the
// reduce-scattered gradient to the shard's dtype (pytorch/pytorch
// torch/distributed/fsdp/_runtime_utils.py at 00ae0bc9: _post_backward_hook
// calls _cast_grad_to_param_dtype on the new sharded gradient; FSDP2's
// foreach_reduce casts to orig_dtype, shardsPerUnit).
func fp32Shard(r *Report, s *scenarios.Scenario, g *GroupInfo) bool {
	return shardsPerUnit(r, s) && s.Training.FP32Shard() && g.MasterBytes > 0 && g.Precision != "fp8" && s.Offload.Params == scenarios.OffloadNone
}

// lossTempNote says what the head's loss temporaries are (HeadLossTemps):
// the 16-bit logits (logits bytes; with kept logits, the projection's
// output before .float() copies it into them) and the loss's fp32 upcast
// (upcast bytes; under a Hugging Face loss inside forward, shift > 0, the
// forward's own .float()) and the shift_logits copy (shift bytes),
// whichever the scenario has; "" for none.
func lossTempNote(logits, upcast, shift int64, kept bool) string {
	var parts []string
	switch {
	case logits > 0 && kept:
		parts = append(parts, "the projection's 16-bit output until .float() copies it into the kept fp32 logits")
	case logits > 0 && shift > 0:
		parts = append(parts, "the projection's 16-bit output until forward's .float() copies it")
	case logits > 0:
		parts = append(parts, "the 16-bit logits while the loss runs")
	}
	switch {
	case upcast > 0 && shift > 0:
		parts = append(parts, "the fp32 logits forward's .float() makes")
	case upcast > 0:
		parts = append(parts, "the loss's fp32 upcast of the 16-bit logits")
	}
	if shift > 0 {
		parts = append(parts, "Hugging Face's fp32 shift_logits copy while its loss runs inside forward")
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, " and ") + " (head forward only)"
}

// chunkedLossNote is lossTempNote under the chunked loss
// (training.loss_chunks n > 1; ChunkedLossBuffers).
func chunkedLossNote(note string, n int64) string {
	return fmt.Sprintf("one of %d chunks' tensors at a time: %s; the chunked loss's fp32 [T, D] gradient buffer through the loop and its 16-bit cast into the final norm's backward", n, strings.TrimSuffix(note, " (head forward only)"))
}

func itoa(n int) string     { return fmt.Sprintf("%d", n) }
func itoa64(n int64) string { return fmt.Sprintf("%d", n) }

func (m *model) ev(ph Phase, unit int, op Op, comp Comp, d int64) {
	if d == 0 {
		return
	}
	m.event(ph, unit, op, comp, d)
}

// event appends an event, a zero Delta too (OpCopyOut's marker), and names
// its component in the notes.
func (m *model) event(ph Phase, unit int, op Op, comp Comp, d int64) {
	m.events = append(m.events, Event{Phase: ph, Unit: unit, Op: op, Component: comp, Delta: d})
	i := componentIndex(comp)
	if m.notes[i] == "" {
		switch comp {
		case CompGathered:
			m.notes[i] = "ZeRO-3 unit all-gather (current + " + itoa(m.prefetch) + " prefetched)"
			if m.fsdpStage2 {
				m.notes[i] = "FSDP's ZeRO-2: every unit gathered from its forward to its post-backward"
				if m.r.keptThroughNoSync {
					m.notes[i] += ", kept through the no_sync micro-steps (FSDP1)"
				}
			}
		case CompGradBuckets:
			m.notes[i] = "fp32 reduce-scatter input of the unit being reduced, param_dtype grads copied in (reduce_dtype: fp32)"
		case CompFP8:
			m.notes[i] = "fp8 quantize staging of the updated shard"
		case CompActivations:
			m.notes[i] = "kept for backward" + m.rebuiltNote()
			if c := m.s.Training.Compile; c != "" && c != scenarios.CompileNone {
				m.notes[i] += "; torch.compile: " + string(c)
			}
		case CompRing:
			m.notes[i] = "context parallelism: ring attention's gathered K/V and fp32 accumulators, during a block's attention"
		case CompMask:
			m.notes[i] = "transformers' boolean sdpa mask per window or chunk, micro_batch·seq_len² bytes, through the forward (through backward when checkpointed blocks hold it)"
		case CompHPZ:
			m.notes[i] = "ZeRO++ hpZ: bf16 secondary shard (1/" + itoa(min(m.s.Communication.ZeroHPZPartitionSize, m.r.Shards)) + "), dropped after the step"
		case CompQuant:
			m.notes[i] = "ZeRO++ qwZ: int8 + fp32 scales of the gathers in flight"
		case CompSavedWeights:
			m.notes[i] = "nn.Linear weights released in forward that autograd still holds through weight.t() views, to their backward (communication.memory_efficient_linear: false)"
		case CompCasts:
			m.notes[i] = "torch.autocast's " + string(m.s.Training.Autocast) + " casts of the fp32 matmul weights, each from its unit's forward to its backward (checkpointed units: dropped when the forward's autocast exits, cast anew by the recomputation)"
			if !m.s.AutocastCached() {
				m.notes[i] = "torch.autocast's " + string(m.s.Training.Autocast) + " casts of the fp32 matmul weights, each from its unit's forward to its backward (checkpointed units: each freed as its matmul returns, FSDP1's views escaping autocast's cache, cast anew by the recomputation)"
			}
		}
	}
}

// rebuiltNote names what the backward adds to the activations kept
// (UnitInfo.Recompute): the blocks' recompute, and the output head's loss
// gradients (headParts), which every backward of a head builds. It said
// "+ recompute in backward" under recompute: none (qauser s28 L6).
func (m *model) rebuiltNote() string {
	head, _ := m.s.HeadUnit()
	var parts []string
	var recompute, lossGrads bool
	for i, u := range m.r.Units {
		if u.Recompute > 0 {
			recompute = recompute || i != head
			lossGrads = lossGrads || i == head
		}
	}
	if recompute {
		parts = append(parts, "recompute")
	}
	if lossGrads {
		parts = append(parts, "loss gradients")
	}
	if len(parts) == 0 {
		return ""
	}
	return " (+ " + strings.Join(parts, " and ") + " in backward)"
}

func (m *model) buildEvents() {
	r, c := m.r, m.c
	units := r.Units
	L := len(units)
	gathered := make([]bool, L)
	quantHeld := make([]int64, L) // qwZ buffers of the gathers in flight
	var secondary int64           // hpZ's secondary partition so far
	// FSDP2's root group (rootgroup.go): gathered as one at its lead's
	// forward, released and reduced as one after the lead's backward.
	r.root, r.rootLead = fsdp2RootGroup(m.s, r)
	root, lead, inRoot := r.root, r.rootLead, r.inRoot
	// FSDP1's root FlatParameter (rootflat.go): one flat parameter, whose
	// post-backward hook (on its AccumulateGrad, after the split
	// backward's cat at the last root unit) reshards it: every root unit's
	// unsharded parameters stay to that unit's backward end.
	flatRoot, flatLast := fsdp1RootFlat(m.s, r)
	flatCat := rootCatBytes(c, r, flatRoot)
	inFlatRoot := func(u int) bool { return u >= 0 && u < len(flatRoot) && flatRoot[u] }
	// The whole KV cache (training.hf_use_cache), freed as the head's
	// forward returns (the last unit's where no unit derives the head).
	kvHead := headUnit(m.s)
	if kvHead < 0 {
		kvHead = L - 1
	}
	var kvTotal int64
	for u := range units {
		kvTotal = c.Add(kvTotal, units[u].KVCache)
	}
	var rootGather int64
	for u := range root {
		if root[u] {
			rootGather = c.Add(rootGather, units[u].Gather)
		}
	}
	gather := func(ph Phase, v int) {
		if inRoot(v) && !gathered[v] {
			if v != lead {
				return // gathered with the lead
			}
			for w := range root {
				if root[w] {
					gathered[w] = true
				}
			}
			m.ev(ph, v, OpAllGather, CompGathered, rootGather)
			for w := range root {
				if root[w] && !m.fsdpStage2 { // stages 0–2 keep the fp8 copies (fp8Copies)
					m.ev(ph, v, OpAllGather, CompFP8, m.fp8Unit[w])
				}
			}
			return
		}
		if m.fsdpStage2 && v >= 0 && v < L && !gathered[v] {
			// FSDP's ZeRO-2: the unsharded parameters alone (fp8 copies
			// persist at stages 0–2, fp8Copies; no ZeRO++).
			gathered[v] = true
			m.ev(ph, v, OpAllGather, CompGathered, units[v].Gather)
			return
		}
		if r.Stage == 3 && v >= 0 && v < L && !gathered[v] {
			gathered[v] = true
			m.ev(ph, v, OpAllGather, CompGathered, units[v].Gather)
			m.ev(ph, v, OpAllGather, CompFP8, m.fp8Unit[v])
			q, _ := m.zeroPPMemory(v)
			quantHeld[v] = q
			m.ev(ph, v, OpAllGather, CompQuant, q)
		}
	}
	dequantized := func(ph Phase, u int) {
		m.ev(ph, u, OpCompute, CompQuant, -quantHeld[u])
		quantHeld[u] = 0
	}
	release := func(ph Phase, u int) {
		if inRoot(u) {
			if u != lead || !gathered[u] {
				return // released with the lead
			}
			for w := range root {
				if root[w] {
					gathered[w] = false
					if !m.fsdpStage2 {
						m.ev(ph, u, OpRelease, CompFP8, -m.fp8Unit[w])
					}
				}
			}
			m.ev(ph, u, OpRelease, CompGathered, -rootGather)
			return
		}
		if m.fsdpStage2 && gathered[u] {
			gathered[u] = false
			m.ev(ph, u, OpRelease, CompGathered, -units[u].Gather)
			return
		}
		if r.Stage == 3 && ph == PhaseBackward && inFlatRoot(u) {
			// FSDP1's root: resharded as one after its last unit's
			// backward (_post_backward_reshard in the flat parameter's
			// post-backward hook; FULL_SHARD frees in backward,
			// _should_free_in_backward, torch/distributed/fsdp/
			// _runtime_utils.py at pytorch/pytorch
			// 00ae0bc91ac2c1718d1baa193d9d299e2b82776c).
			if u != flatLast {
				return
			}
			var g int64
			for w, ok := range flatRoot {
				if ok && gathered[w] {
					gathered[w] = false
					g = c.Add(g, units[w].Gather)
					m.ev(ph, u, OpRelease, CompFP8, -m.fp8Unit[w])
				}
			}
			m.ev(ph, u, OpRelease, CompGathered, -g)
			return
		}
		if r.Stage == 3 && gathered[u] {
			gathered[u] = false
			m.ev(ph, u, OpRelease, CompGathered, -units[u].Gather)
			m.ev(ph, u, OpRelease, CompFP8, -m.fp8Unit[u])
		}
	}
	// FSDP2's copy-out of a gathered unit before its compute (OpCopyOut).
	fsdp2 := r.Stage == 3 && m.s.Communication.Boundary.FSDP2()
	copyOut := func(ph Phase, u int) {
		if fsdp2 && units[u].Gather > 0 {
			m.event(ph, u, OpCopyOut, CompGathered, 0)
		}
	}
	kept := KeptAcrossBoundary(m.s)
	savedHeld := make([]int64, L) // CompSavedWeights of the units released in forward
	// With gradient accumulation at stage 3 (and FSDP's stage 2,
	// shardsPerUnit) the sharded gradients of the
	// earlier micro-steps are alive through the last one, whose step this
	// timeline follows: FSDP accumulates each micro-step's reduce-scattered
	// shard into the one kept from before (pytorch/pytorch
	// torch/distributed/fsdp/_runtime_utils.py at 00ae0bc9, _post_backward_hook:
	// flat_param._saved_grad_shard += new_sharded_grad, which flat_param.py
	// at 002159d1 prepare_gradient_for_backward took from .grad; Composer
	// never uses no_sync, dist_strategy.py at v0.13.4), and DeepSpeed's stage
	// 3 into grad_partitions_flat_buffer, every partition of the rank
	// (deepspeedai/DeepSpeed deepspeed/runtime/zero/stage3.py at 007cca6a,
	// _setup_for_real_optimizer; on the host under offload_optimizer). Each
	// unit's reduce-scatter output is then a transient added into it.
	// With the optimizer offloaded, the gradient partitions accumulate on
	// the host (DeepSpeed's stage 3 copies each into its CPU fp32
	// partition's grad), not here.
	accum := shardsPerUnit(r, m.s) && !m.shardGradsPersistent && m.s.Training.GradAccum > 1 && m.s.Offload.Optimizer == scenarios.OffloadNone && !m.s.HoldsUnshardedGrads()
	var accumulated int64
	if accum {
		for u := range L {
			accumulated = c.Add(accumulated, units[u].ShardGrad)
		}
	}
	// Under no_sync (grad_sync: last at stages 2 and 3) the earlier
	// micro-steps reduced nothing: every unit's unsharded gradient is
	// alive from their backwards on (UnitInfo.HeldGrad), and each new
	// gradient is added into it as the unit's backward ends. The last
	// micro-step, which this walk follows, reduces each unit's held
	// gradient in its post-backward and frees it there, unit by unit,
	// long before the optimizer step. FSDP1's _post_backward_hook takes
	// unsharded_grad = flat_param.grad.data, sets flat_param.grad = None,
	// reduce-scatters it on the post-backward stream and record_streams it
	// there, so its memory is free once the reduce-scatter is done
	// (pytorch/pytorch torch/distributed/fsdp/_runtime_utils.py at
	// 00ae0bc91ac2c1718d1baa193d9d299e2b82776c); FSDP2's post_backward
	// accumulates the new gradient into unsharded_accumulated_grad, hands
	// its data to foreach_reduce and sets it to None, and foreach_reduce
	// frees the unsharded gradients after the copy-in into its
	// reduce-scatter input (FSDPParamGroup.post_backward,
	// torch/distributed/fsdp/_fully_shard/_fsdp_param_group.py at
	// 002a76fbfea0ac0f199e4b8e2a0691074796c908). So the held gradient is
	// the gradient the unit's reduce-scatter takes (unreduced below; at
	// stage 2 the free after the unit's backward), never the optimizer's.
	var held int64
	for u := range L {
		held = c.Add(held, units[u].HeldGrad)
	}
	// FSDP's ZeRO-2 gathers a unit in its pre-forward, prefetch_depth
	// units ahead of the GPU as at stage 3 (scenarios.DefaultPrefetchDepth:
	// the host runs one unit ahead), and keeps it to its post-backward
	// (FSDPStage2; Report.ForwardGatherUnit). Under FSDP1's no_sync the
	// units are already gathered when the walk's (the last) micro-step
	// starts: the earlier micro-steps kept them (keepsGatheredUnderNoSync),
	// as they kept their gradients (held).
	var keptGathered int64
	if m.r.keptThroughNoSync {
		for v := range L {
			if !gathered[v] {
				gathered[v] = true
				keptGathered = c.Add(keptGathered, units[v].Gather)
			}
		}
	}
	for u := range L {
		for v := u; v <= u+m.prefetch; v++ {
			gather(PhaseForward, v)
		}
		copyOut(PhaseForward, u)
		if u == 0 {
			m.ev(PhaseForward, 0, OpCompute, CompGrads, c.Add(accumulated, held))
			m.ev(PhaseForward, 0, OpCompute, CompGathered, keptGathered)
		}
		m.actOffloadEvents(PhaseForward, u)
		// transformers' boolean sdpa mask, made before the first block
		// that uses it (sdpamask.go).
		m.ev(PhaseForward, u, OpCompute, CompMask, units[u].Mask)
		// torch.autocast's casts of the unit's weights, made as its
		// matmuls run (UnitInfo.Casts); under FSDP1 a checkpointed
		// unit's each freed as its matmul returns, the largest beside
		// what the unit keeps (UnitInfo.CastsPerOp).
		casts := units[u].Casts
		if units[u].CastsPerOp {
			casts = units[u].CastPeak
		}
		m.ev(PhaseForward, u, OpCompute, CompCasts, casts)
		m.ev(PhaseForward, u, OpCompute, CompActivations, units[u].Activation-units[u].AfterLogits)
		// The block's keys and values, handed to the model's cache
		// (training.hf_use_cache, KVCache): alive past its checkpointed
		// forward.
		m.ev(PhaseForward, u, OpCompute, CompKVCache, units[u].KVCache)
		if units[u].CastsPerOp {
			m.ev(PhaseForward, u, OpCompute, CompCasts, -casts)
		}
		// The chunked loss (training.loss_chunks) runs every chunk's
		// forward and backward here; the events below are its last
		// chunk's, the loop's peak: the wrapper's fp32 gradient buffer
		// made before the first chunk, and lm_head's gradient summed over
		// the chunks before it (ChunkedLossBuffers, UnitInfo.LossHeldGrad),
		// exist beside the chunk's own tensors.
		m.ev(PhaseForward, u, OpCompute, CompLossTemp, units[u].LossBuffer)
		m.ev(PhaseForward, u, OpCompute, CompGrads, units[u].LossHeldGrad)
		// The head's forward returns the new logits while the loop still
		// holds the previous step's (at rest); pred = model(...) then
		// rebinds the name and frees those (training.keep_logits,
		// KeptLogits), and only then does the loss run and save its
		// tensors (AfterLogits): the old logits and the loss's never
		// coexist (OpRebind), for a loss outside the model (torchtitan,
		// Composer); a Hugging Face loss inside forward keeps them alive
		// through it (below). Around them the loss's temporaries
		// (HeadLossTemps): the projection's 16-bit logits first, freed
		// once the model's own .float() has copied them when the loop
		// keeps fp32 logits, else when the loss returns; the loss's fp32
		// upcast while log_softmax writes its output.
		if m.s.Training.Liger && units[u].LossLogits > 0 {
			// LigerChunkTemps.
			m.notes[componentIndex(CompLossTemp)] = "one chunk's 16-bit logits and input gradient and the fp32 per-token loss while Liger's fused linear cross-entropy runs (head forward only)"
		} else if n := lossTempNote(units[u].LossLogits, units[u].LossUpcast, units[u].LossShift, units[u].Logits > 0); n != "" {
			if units[u].LossBuffer > 0 {
				n = chunkedLossNote(n, m.s.Training.LossChunks)
			}
			m.notes[componentIndex(CompLossTemp)] = n
		}
		// A Hugging Face model takes the loss inside its forward: the
		// loop's outputs = model(**batch) rebinds the name, freeing the
		// previous step's logits, only after the loss below, and the
		// loss runs on forward's shift_logits copy (LossShift), freed as
		// forward returns (scenarios.Training.OutputsHeldPastLoss; the
		// copy under any loss inside forward, HFLossInsideForward).
		heldPastLoss := m.s.Training.OutputsHeldPastLoss()
		m.ev(PhaseForward, u, OpCompute, CompLossTemp, units[u].LossLogits)
		m.ev(PhaseForward, u, OpCompute, CompLogits, units[u].Logits)
		if units[u].Logits > 0 {
			// logits = logits.float() rebinds forward's name and frees
			// the 16-bit output. Held past the loss, the replay applies
			// the free in order (OpRebind), not at the compute's end:
			// the old logits the loss no longer displaces would
			// otherwise meet the 16-bit ones.
			op := OpCompute
			if heldPastLoss {
				op = OpRebind
			}
			m.ev(PhaseForward, u, op, CompLossTemp, -units[u].LossLogits)
		}
		if !heldPastLoss {
			m.ev(PhaseForward, u, OpRebind, CompLogits, -units[u].Logits)
		}
		// A Hugging Face forward whose loop keeps no logits upcasts them
		// itself (logits = logits.float(), the loss's upcast here) and
		// frees the 16-bit ones at once, before it copies shift_logits
		// (HFShiftLogits); in order (OpRebind), as above.
		hfUpcast := units[u].Logits == 0 && units[u].LossShift > 0
		if hfUpcast {
			m.ev(PhaseForward, u, OpCompute, CompLossTemp, units[u].LossUpcast)
			m.ev(PhaseForward, u, OpRebind, CompLossTemp, -units[u].LossLogits)
		}
		m.ev(PhaseForward, u, OpCompute, CompLossTemp, units[u].LossShift)
		if !hfUpcast {
			m.ev(PhaseForward, u, OpCompute, CompLossTemp, units[u].LossUpcast)
		}
		m.ev(PhaseForward, u, OpLossSaved, CompActivations, units[u].AfterLogits)
		m.ev(PhaseForward, u, OpCompute, CompLossTemp, -units[u].LossUpcast)
		if units[u].Logits == 0 && !hfUpcast {
			m.ev(PhaseForward, u, OpCompute, CompLossTemp, -units[u].LossLogits)
		}
		m.ev(PhaseForward, u, OpCompute, CompLossTemp, -units[u].LossShift)
		// Hugging Face computes the loss inside the model's forward; once
		// it returns, outputs = model(**batch) rebinds the loop's name and
		// frees the previous step's cache (hf_use_cache: kept), or the loop
		// keeps only the loss and the step's own cache goes (forward):
		// either way the bytes of one whole cache (KVCache).
		if heldPastLoss {
			m.ev(PhaseForward, u, OpRebind, CompLogits, -units[u].Logits)
		}
		if u == kvHead {
			m.ev(PhaseForward, u, OpRebind, CompKVCache, -kvTotal)
		}
		// Context parallelism: the ring's buffers during the block's
		// attention (ringattn.go), freed when its compute ends.
		m.ev(PhaseForward, u, OpCompute, CompRing, units[u].RingForward)
		m.ev(PhaseForward, u, OpCompute, CompRing, -units[u].RingForward)
		// A mask no checkpointed block holds dies with the decoder's
		// forward, after its last block.
		m.ev(PhaseForward, u, OpCompute, CompMask, -units[u].MaskFreeForward)
		dequantized(PhaseForward, u)
		if !m.fsdpStage2 && (u >= len(kept) || !kept[u]) {
			if _, sec := m.zeroPPMemory(u); sec > 0 {
				m.ev(PhaseForward, u, OpRelease, CompHPZ, sec)
				secondary = c.Add(secondary, sec)
			}
			release(PhaseForward, u)
			// The weights autograd still references (savedweights.go):
			// after the free, so the two never add up.
			m.ev(PhaseForward, u, OpRelease, CompSavedWeights, units[u].SavedWeights)
			savedHeld[u] = units[u].SavedWeights
		}
	}
	// The forward's autocast exits with the head's loss: its cache goes,
	// and with it the casts of the checkpointed units, which autograd
	// did not save (UnitInfo.CastsRebuilt; those of CastsPerOp went with
	// their ops).
	var dropped int64
	for u := range L {
		if units[u].CastsRebuilt && !units[u].CastsPerOp {
			dropped = c.Add(dropped, units[u].Casts)
		}
	}
	if L > 0 {
		m.ev(PhaseForward, L-1, OpCompute, CompCasts, -dropped)
	}
	var shardGrads, transientGrads int64
	// A unit's reduce-scatter in two parts, as a replay applies them: its
	// start (the copy-in under reduce_dtype fp32, the sharded output) and
	// its end (the unsharded gradient or the reduce-scatter input freed).
	// What unit u reduces: its own buffers, the whole root group's for
	// the group's lead (the other root units reduce nothing of their own).
	// Under no_sync the gradient reduced is the held one, into which the
	// unit's backward added its own: the reduce-scatter frees that.
	// FSDP1's root FlatParameter (rootflat.go): its units' gradients wait
	// for the last root unit's backward, whose split backward cats them
	// into one root-sized gradient; that, not the views, is what a
	// reduce-scatter takes outside no_sync: the last root unit's takes
	// the cat, the others' take nothing of their own.
	unreduced := func(w int) int64 {
		if units[w].HeldGrad > 0 {
			return units[w].HeldGrad
		}
		if inFlatRoot(w) {
			if w == flatLast {
				return flatCat
			}
			return 0
		}
		if units[w].LossHeldGrad > 0 {
			return units[w].LossHeldGrad
		}
		return units[w].Grad
	}
	reduced := func(u int) (in, grad, shard int64) {
		if !inRoot(u) {
			return units[u].ReduceInput, unreduced(u), units[u].ShardGrad
		}
		if u != lead {
			return 0, 0, 0
		}
		for w := range root {
			if root[w] {
				in = c.Add(in, units[w].ReduceInput)
				grad = c.Add(grad, unreduced(w))
				shard = c.Add(shard, units[w].ShardGrad)
			}
		}
		return in, grad, shard
	}
	rsStart := func(u int) {
		in, grad, shard := reduced(u)
		if in > 0 {
			// The copy-in (reduce_dtype fp32): both buffers exist
			// while it runs, then the param_dtype gradients go.
			m.ev(PhaseBackward, u, OpReduceCopyIn, CompGradBuckets, in)
			m.ev(PhaseBackward, u, OpReduceCopyIn, CompGrads, -grad)
		}
		if !m.shardGradsPersistent {
			m.ev(PhaseBackward, u, OpReduceScatter, CompGrads, shard)
		}
	}
	rsEnd := func(u int) {
		in, grad, shard := reduced(u)
		if !m.shardGradsPersistent {
			if accum {
				// Added into the accumulated shard when it ends.
				m.ev(PhaseBackward, u, OpReduceScatter, CompGrads, -shard)
			} else {
				shardGrads = c.Add(shardGrads, shard)
			}
		}
		if in > 0 {
			m.ev(PhaseBackward, u, OpReduceScatter, CompGradBuckets, -in)
		} else {
			m.ev(PhaseBackward, u, OpReduceScatter, CompGrads, -grad)
		}
	}
	// The reduce-scatters the stack lets lag behind the backward
	// (inflight.go): unit u's backward computes beside the unreduced
	// gradients of the units after it whose syncs have not ended — those
	// from u+1 to u+n(u), less any a later unit's bound already ended — the
	// reduce-scatter next in line started (its copy-in done), as the replay
	// holds them when the network lags; under FSDP1, which sets no bound, the
	// one reduce-scatter overlap always keeps beside the next backward.
	// Without overlap each ends before the next backward; the seeds'
	// conventions count it so.
	var lags []int
	if shardsPerUnit(r, m.s) && r.Convention == ConventionZerosim && r.Shards > 1 {
		lags = walkLags(m.s)
	}
	started := make([]bool, L)
	reduce := func(w int) { // unit w's reduce-scatter, to its end
		if !m.r.Units[w].Alone {
			if !started[w] {
				rsStart(w)
			}
			rsEnd(w)
		}
	}
	ended := L // the syncs of units ended ≥ ended are over
	tiedHead, tiedEmb, tied := tiedHeadGrad(m.s, r, m.groups)
	if tied > 0 {
		m.notes[componentIndex(CompGrads)] += "; in backward also the tied output projection's weight gradient, which autograd holds from the head's backward to the embedding's"
	}
	if flatLast >= 0 {
		m.notes[componentIndex(CompGrads)] += "; in backward also FSDP1's root flat parameter's view gradients, which autograd holds to its split backward at the embedding's, and that backward's cat of them"
	}
	for u := L - 1; u >= 0; u-- {
		for v := u; v >= u-m.prefetchBwd; v-- {
			gather(PhaseBackward, v)
		}
		m.actOffloadEvents(PhaseBackward, u)
		if lags != nil {
			next := min(ended, u+1+lags[u])
			for w := ended - 1; w >= next; w-- {
				reduce(w)
			}
			ended = next
			if w := next - 1; w > u && !m.r.Units[w].Alone && !started[w] {
				rsStart(w)
				started[w] = true
			}
		}
		copyOut(PhaseBackward, u)
		// The head under the eager loss computes its parameter gradient
		// after the loss's backward (OpHeadGrad); every other unit's
		// gradients are counted beside everything its backward holds.
		headGrad := units[u].AfterLogits > 0 && !m.s.Training.Compile.Loss() && m.s.Training.CrossEntropy != scenarios.CrossEntropyFused
		// A whole-model compiled backward (OneGraphGrads) keeps each
		// unit's new gradients until it returns, after unit 0; the head's
		// come after the eager loss's backward, with its OpHeadGrad.
		if !headGrad {
			m.ev(PhaseBackward, u, OpCompute, CompGrads, units[u].OneGraphGrad)
		}
		if !headGrad {
			m.ev(PhaseBackward, u, OpCompute, CompGrads, units[u].Grad)
			if units[u].HeldGrad > 0 && !inFlatRoot(u) {
				// Added into the held gradient as the backward ends
				// (FSDP1's root views' wait for the root's cat below).
				m.ev(PhaseBackward, u, OpCompute, CompGrads, -units[u].Grad)
			}
		}
		m.ev(PhaseBackward, u, OpCompute, CompActivations, units[u].Recompute)
		if units[u].CastsRebuilt {
			// The recomputation re-enters autocast and casts again.
			m.ev(PhaseBackward, u, OpCompute, CompCasts, units[u].Casts)
		}
		// The backward ring's buffers, beside everything the block's
		// recomputation rebuilt (its rerun forward ring's are freed
		// before and smaller: ringattn.go).
		m.ev(PhaseBackward, u, OpCompute, CompRing, units[u].RingBackward)
		if headGrad {
			// The loss's tensors go first (its saved output and its
			// backward's gradients: OpLossSaved's free); then the
			// projection's MmBackward0 makes the weight gradient beside
			// its input gradient and the logits' gradient
			// (HeadProjectionBackward), with the rest of the head's
			// activations (its saved input, the final norm's) alive;
			// they go after it.
			mm := c.Add(units[u].HeadMm...)
			m.ev(PhaseBackward, u, OpLossSaved, CompActivations, -c.Add(units[u].AfterLogits, units[u].Recompute))
			m.ev(PhaseBackward, u, OpHeadGrad, CompActivations, mm)
			m.ev(PhaseBackward, u, OpHeadGrad, CompGrads, units[u].Grad)
			if u == tiedHead {
				m.ev(PhaseBackward, u, OpTiedGrad, CompGrads, tied)
			}
			m.ev(PhaseBackward, u, OpHeadGrad, CompGrads, units[u].OneGraphGrad)
			if units[u].HeldGrad > 0 && !inFlatRoot(u) || units[u].LossHeldGrad > 0 {
				m.ev(PhaseBackward, u, OpHeadGrad, CompGrads, -units[u].Grad)
			}
			m.ev(PhaseBackward, u, OpHeadGrad, CompActivations, -mm)
			// The chunked loss's loop is over: the buffer's 16-bit cast
			// is made, the buffer goes as the loss returns, and the cast
			// lives into the final norm's backward (ChunkedLossBuffers).
			m.ev(PhaseBackward, u, OpHeadGrad, CompLossTemp, units[u].LossGrad16)
			m.ev(PhaseBackward, u, OpHeadGrad, CompLossTemp, -units[u].LossBuffer)
			m.ev(PhaseBackward, u, OpCompute, CompActivations, -(units[u].Activation - units[u].AfterLogits))
			m.ev(PhaseBackward, u, OpCompute, CompLossTemp, -units[u].LossGrad16)
		} else {
			m.ev(PhaseBackward, u, OpCompute, CompActivations, -c.Add(units[u].Activation, units[u].Recompute))
			if u == tiedHead {
				m.ev(PhaseBackward, u, OpTiedGrad, CompGrads, tied)
			}
		}
		if u == tiedEmb {
			// Summed with the embedding's gradient, beside the unit's
			// own (+Grad(u) above), as its backward ends.
			m.ev(PhaseBackward, u, OpTiedGrad, CompGrads, -tied)
		}
		if u == flatLast {
			// FSDP1's root split backward: every root view's gradient
			// is in (a tied head's summed into the embedding's view
			// above), the cat allocates the root's, the views go; the
			// cat is the gradient the unit's reduce-scatter takes, or
			// under no_sync is added into the held one and goes.
			m.ev(PhaseBackward, u, OpRootCat, CompGrads, flatCat)
			var views int64
			for w, ok := range flatRoot {
				if ok {
					views = c.Add(views, units[w].Grad)
				}
			}
			m.ev(PhaseBackward, u, OpRootViews, CompGrads, -views)
			if units[u].HeldGrad > 0 {
				m.ev(PhaseBackward, u, OpRootCat, CompGrads, -flatCat)
			}
		}
		m.ev(PhaseBackward, u, OpCompute, CompRing, -units[u].RingBackward)
		// Each linear's backward node releases its saved weight view.
		m.ev(PhaseBackward, u, OpCompute, CompSavedWeights, -savedHeld[u])
		m.ev(PhaseBackward, u, OpCompute, CompCasts, -units[u].Casts)
		// The first checkpointed block's recomputation is the mask's
		// last use.
		m.ev(PhaseBackward, u, OpCompute, CompMask, -units[u].MaskFreeBackward)
		dequantized(PhaseBackward, u)
		switch {
		case !shardsPerUnit(r, m.s):
			transientGrads = c.Add(transientGrads, units[u].Grad)
			// Stage 2 outside FSDP under no_sync: the held gradient
			// goes with the reduce-scatter that takes it (a replay
			// binds it to the bucket's).
			m.ev(PhaseBackward, u, OpReduceScatter, CompGrads, -units[u].HeldGrad)
		case lags == nil || m.r.Units[u].Alone:
			rsStart(u)
			rsEnd(u)
		}
		release(PhaseBackward, u)
	}
	// The compiled backward has returned: AccumulateGrad adds each new
	// gradient into .grad and frees it (OneGraphGrads).
	if L > 0 {
		var oneGraph int64
		for u := range L {
			oneGraph = c.Add(oneGraph, units[u].OneGraphGrad)
		}
		if oneGraph > 0 {
			m.notes[componentIndex(CompGrads)] += "; in backward also every new gradient, which the compiled model's backward returns at once (training.compile: model)"
		}
		m.ev(PhaseBackward, 0, OpCompute, CompGrads, -oneGraph)
	}
	// The syncs still pending after the last backward end in order.
	for w := min(ended, L) - 1; lags != nil && w >= 0; w-- {
		reduce(w)
	}
	var temp, fp8 int64
	var subGroupTemp int64 // DeepSpeed ZeRO-3's largest sub-group's (largestSubGroup)
	var notes []string     // what the temporaries are, as the model counts them
	for _, g := range m.groups {
		if m.s.Training.NoMaster() {
			elems, note := m.noMasterStepTemp(g)
			temp = c.Add(temp, c.Mul(elems, g.info.ParamBytes))
			if elems > 0 && !slices.Contains(notes, note) {
				notes = append(notes, note)
			}
			continue
		}
		if g.info.MasterBytes == 0 || (m.s.Offload.Optimizer != scenarios.OffloadNone && r.Stage > 0) {
			continue // fp32 params: the grad is already fp32; offload: the step runs on the host
		}
		if fp32GradBuffer(r, g) {
			continue // the fp32 grad buffer is the optimizer's grad: no copy
		}
		if m.s.ParamRemainders() {
			// Apex's DistributedFusedAdam and TE's FusedAdam read the
			// 16-bit gradient as it is (decoupled_grad):
			// scenarios.resolveParamRemainders.
			continue
		}
		elems := g.info.ShardElems
		if r.Stage == 0 {
			elems = g.layout.Numel
		}
		if deepSpeedGradPartitions(r, m.s) {
			// DeepSpeed's ZeRO-3 steps one optimizer sub-group at a
			// time (largestSubGroup): the largest sub-group's copies
			// are the peak, whatever the group.
			sg := m.largestSubGroup(g)
			b := c.Mul(sg, c.Add(g.info.GradBytes, g.info.MasterBytes))
			note := fmt.Sprintf("flattened %d-bit copy and fp32 copy of the grads of DeepSpeed's largest optimizer sub-group, %d elements (sub_group_size 1e9; one sub-group at a time)", 8*g.info.GradBytes, sg)
			if m.s.Training.MasterDType == scenarios.MasterBF16 {
				// .to(bf16) of the bf16 flatten is a no-op: one copy.
				b = c.Mul(sg, g.info.MasterBytes)
				note = fmt.Sprintf("bf16 flattened copy of the grads of DeepSpeed's largest optimizer sub-group, %d elements (flatten(...).to(master dtype), master_dtype: bf16; sub_group_size 1e9, one sub-group at a time)", sg)
			}
			subGroupTemp = max(subGroupTemp, b)
			if sg > 0 && !slices.Contains(notes, note) {
				notes = append(notes, note)
			}
			continue
		}
		note := "fp32 copy of the grads the rank updates (grad.float())"
		if m.s.Training.MasterDType == scenarios.MasterBF16 {
			// DeepSpeed flattens the rank's bf16 gradient partition into
			// a new tensor and casts it to the master's dtype, bf16: a
			// no-op .to, so one bf16 copy (stage3.py
			// _prepare_fp32_grad_for_sub_group: self.flatten(
			// self.averaged_gradients[i]).to(master dtype);
			// stage_1_and_2.py step: flatten_dense_tensors_aligned(...)
			// .to(single_partition_of_fp32_groups[i].dtype), both at
			// deepspeedai/DeepSpeed
			// edaa7221267243c7be7fb49c5d5f5c4fb97b4641).
			temp = c.Add(temp, c.Mul(elems, g.info.MasterBytes))
			note = "bf16 flattened copy of the grads the rank updates (DeepSpeed's flatten(...).to(master dtype), master_dtype: bf16)"
			if elems > 0 && !slices.Contains(notes, note) {
				notes = append(notes, note)
			}
			continue
		}
		if r.Stage == 0 && dsFlatGradCopy(r, m.s) {
			// DeepSpeed's FP16_Optimizer (stage 0 under bf16 or fp16 with
			// FusedAdam) builds each parameter group's fp32 gradient as
			// _flatten_dense_tensors([p.grad.to(fp32) for p in group]):
			// the per-parameter fp32 copies and their concatenation exist
			// at once, beside the 16-bit .grad it frees only afterwards
			// (FP16_Optimizer.step, deepspeed/runtime/fp16/
			// fused_optimizer.py lines 284-313 at deepspeedai/DeepSpeed
			// edaa7221267243c7be7fb49c5d5f5c4fb97b4641). Counted for the
			// whole group at once; the flat copy alone lives on through
			// the update, below this peak.
			elems = c.Mul(2, elems)
			note = "fp32 copies of the grads and their flattened concatenation (DeepSpeed FP16_Optimizer.step)"
		}
		if fp32Shard(r, m.s, &g.info) {
			// The gradient shards are fp32 already: no grad.float() copy.
			// What remains is the optimizer's own intermediates, tensor by
			// tensor: Composer's DecoupledAdamW (composer/optim/
			// decoupled_weight_decay.py adamw at v0.13.4, d80c37dc) loops
			// over the params (one flat parameter per FSDP unit) and
			// computes denom = (exp_avg_sq.sqrt() / √bc2).add_(eps): two
			// fp32 temporaries of the largest unit's shard at once.
			var largest int64
			n := int64(max(r.Shards/g.info.EP, 1))
			if g.layout.Spec.PerUnit {
				for _, b := range g.layout.Buckets { // one per unit at stage 3
					largest = max(largest, b.Size/n)
				}
			} else {
				// FSDP's stage 2: the buckets are the schedule's, the
				// units the flat parameters (as unitInfos shards them).
				for _, u := range g.units {
					largest = max(largest, (g.perUnit[u]+n-1)/n)
				}
			}
			elems = c.Mul(2, largest)
			note = "the optimizer's fp32 exp_avg_sq.sqrt() and its quotient, of the largest unit's shard (fp32 shard: no grad.float())"
			switch m.s.Training.OptimizerImpl {
			case scenarios.OptimizerForeach:
				// torch.optim's foreach Adam steps every parameter of a
				// device and dtype at once: exp_avg_sq_sqrt =
				// torch._foreach_sqrt(device_exp_avg_sqs), one fp32
				// temporary the size of the whole shard, divided and
				// added to in place (torch/optim/adam.py
				// _multi_tensor_adam at pytorch/pytorch
				// dc80ccded5385cca3e777472d64cfe3d874fad89).
				elems = g.info.ShardElems
				note = "torch._foreach_sqrt of exp_avg_sq over the whole shard, fp32 (foreach Adam; fp32 shard: no grad.float())"
			case scenarios.OptimizerFused:
				// torch._fused_adam_ updates in place, one kernel: no
				// temporary (the same file's _fused_adam).
				elems = 0
			}
		}
		temp = c.Add(temp, c.Mul(elems, 4))
		if elems > 0 && !slices.Contains(notes, note) {
			notes = append(notes, note)
		}
		if g.info.Precision == "fp8" {
			fp8 = c.Add(fp8, elems)
		}
	}
	temp = c.Add(temp, subGroupTemp)
	if temp > 0 {
		// The note follows the model: under an fp32 shard there is no
		// grad.float() (qa19 L6).
		m.notes[componentIndex(CompStepTemp)] = strings.Join(notes, "; ")
	}
	m.ev(PhaseOptimizer, -1, OpOptimizer, CompStepTemp, temp)
	m.ev(PhaseOptimizer, -1, OpOptimizer, CompFP8, fp8)
	m.ev(PhaseOptimizer, -1, OpOptimizer, CompFP8, -fp8)
	m.ev(PhaseOptimizer, -1, OpOptimizer, CompStepTemp, -temp)
	m.ev(PhaseOptimizer, -1, OpOptimizer, CompGrads, -c.Add(shardGrads, transientGrads, accumulated))
	m.ev(PhaseOptimizer, -1, OpOptimizer, CompHPZ, -secondary) // invalidate_secondary_tensor
}

// run walks the events and fills the report's components and peaks.
func (m *model) run() {
	r := m.r
	cur := slices.Clone(m.rest)
	total := func() int64 { return m.c.Add(cur...) }
	restTotal := total()
	peak := slices.Clone(m.rest)
	peakPhase := make([]Phase, len(cur))
	atPeak := slices.Clone(cur)
	r.AtRest, r.Peak, r.PeakPhase = restTotal, restTotal, PhaseRest
	r.PhasePeaks = make([]PhasePeak, len(Phases))
	for i, ph := range Phases {
		r.PhasePeaks[i] = PhasePeak{Phase: ph, Bytes: restTotal}
	}
	if m.c.Err != nil {
		return
	}
	phase := PhaseRest
	for _, e := range m.events {
		if e.Phase != phase {
			// Entering a phase: its peak is at least the state it starts from.
			t := total()
			for ph := phase + 1; ph <= e.Phase; ph++ {
				r.PhasePeaks[ph].Bytes = max(r.PhasePeaks[ph].Bytes, t)
			}
			phase = e.Phase
		}
		i := componentIndex(e.Component)
		cur[i] = m.c.Add(cur[i], e.Delta)
		if m.c.Err != nil {
			return // the caller reports the overflow
		}
		if cur[i] < 0 {
			panic(fmt.Sprintf("memory: component %q goes negative (%d) at %+v", e.Component, cur[i], e))
		}
		if cur[i] > peak[i] {
			peak[i], peakPhase[i] = cur[i], e.Phase
		}
		t := total()
		if t > r.PhasePeaks[e.Phase].Bytes {
			r.PhasePeaks[e.Phase].Bytes = t
		}
		if t > r.Peak {
			r.Peak, r.PeakPhase, r.PeakUnit = t, e.Phase, e.Unit
			copy(atPeak, cur)
		}
	}
	if !slices.Equal(cur, m.rest) {
		panic(fmt.Sprintf("memory: step does not return to rest: %v vs %v", cur, m.rest))
	}
	// Under no_sync the micro-steps before the last hold every unit's
	// unsharded gradient through their backward (OnlyInReducingMicroStep):
	// their forward and backward count too.
	for _, u := range r.Units {
		r.heldGrads = r.heldGrads || u.HeldGrad > 0
	}
	if r.heldGrads {
		copy(cur, m.rest)
		for _, e := range m.events {
			if r.OnlyInReducingMicroStep(e) {
				continue
			}
			i := componentIndex(e.Component)
			cur[i] = m.c.Add(cur[i], e.Delta)
			if m.c.Err != nil {
				return
			}
			if cur[i] > peak[i] {
				peak[i], peakPhase[i] = cur[i], e.Phase
			}
			t := total()
			r.PhasePeaks[e.Phase].Bytes = max(r.PhasePeaks[e.Phase].Bytes, t)
			if t > r.Peak {
				r.Peak, r.PeakPhase, r.PeakUnit = t, e.Phase, e.Unit
				copy(atPeak, cur)
			}
		}
	}
	r.PhasePeaks = r.PhasePeaks[:len(StagePhases(r.Stage))]
	if i := componentIndex(CompActivations); m.notes[i] == "" && r.Convention == ConventionZerosim && m.s.CountsNoActivations() {
		m.notes[i] = NoActivationsNote
	}
	for i, name := range componentOrder {
		if optionalComps[name] && m.rest[i] == 0 && peak[i] == 0 {
			continue
		}
		r.Components = append(r.Components, Component{
			Name: string(name), AtRest: m.rest[i], Peak: peak[i], PeakPhase: peakPhase[i],
			AtTotalPeak: atPeak[i], Note: m.notes[i],
		})
	}
	r.events = m.events
}

// reducedAlone marks the units whose parameters no other rank shares
// (UnitInfo.Alone): every group of them is sharded over one rank.
func (m *model) reducedAlone() []bool {
	alone := make([]bool, len(m.r.Units))
	for i := range alone {
		alone[i] = true
	}
	for _, g := range m.groups {
		if m.r.Shards/max(g.info.EP, 1) <= 1 {
			continue
		}
		for _, p := range g.layout.Params {
			alone[p.Unit] = false
		}
	}
	return alone
}
