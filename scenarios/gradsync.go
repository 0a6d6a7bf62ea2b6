package scenarios

import "fmt"

// GradSync is training.grad_sync: which micro-steps reduce the gradients
// at stages 0 and 1.
type GradSync string

const (
	// GradSyncEvery reduces every micro-step's gradients: the trainer runs
	// each micro-batch's backward with the gradient hooks on.
	GradSyncEvery GradSync = "every"
	// GradSyncLast reduces only the last micro-step's: the trainer wraps
	// the others in no_sync (DDP's, FSDP's) or DeepSpeed's and Megatron's
	// equivalents.
	GradSyncLast GradSync = "last"
)

// resolveGradSync checks training.grad_sync; unset it stays "" and
// GradSyncEvery decides by stack.
func (l *loader) resolveGradSync(s *Scenario) *Error {
	return enum(l, "training.grad_sync", &s.Training.GradSync, "", GradSyncEvery, GradSyncLast)
}

// GradSyncEvery reports whether every micro-step of s reduces its
// gradients. Stages 2 and 3 always do (see zero's package doc). At stages
// 0 and 1 training.grad_sync decides, and unset, the stack:
//
//   - torchtitan, llm-foundry and fms-fsdp at stage 0: every. torchtitan's
//     train_step runs forward_backward_step on each micro-batch with no
//     no_sync or set_requires_gradient_sync anywhere in the repository
//     (torchtitan/train.py:547-595 at pytorch/torchtitan
//     238fa9953e4aec2a62582121564273d7cbb1e9f1), and its DDP is composable
//     replicate (torchtitan/models/llama3/infra/parallelize.py:363-372),
//     whose reducer all-reduces each bucket in every backward
//     (torch/csrc/distributed/c10d/reducer.cpp at pytorch/pytorch
//     ad78a7b33a496f60c756927a4fcd8e3e8fc1aee6). The stack's stage 0 of
//     llm-foundry is FSDP's NO_SHARD (StackLayout), and Composer's
//     ddp_sync_context returns at once for a model that is not
//     DistributedDataParallel (composer/distributed/dist_strategy.py at
//     mosaicml/composer e147a68331e11588048ef6f2bc8ec83004c6d00b), so
//     FSDP's post-backward hook all-reduces every micro-step; llm-foundry
//     without fsdp_config is Composer DDP, which the importer marks
//     grad_sync: last. fms-fsdp's stage 0 is NO_SHARD too, and it has no
//     accumulation at all (warnGradSync).
//   - any other stack, or none: last, as DeepSpeed (engine.py
//     allreduce_gradients at deepspeedai/DeepSpeed
//     edaa7221267243c7be7fb49c5d5f5c4fb97b4641, lines 2891-2914: below
//     stage 2 only at the gradient-accumulation boundary) and Megatron
//     (no_sync in forward_backward_no_pipelining) reduce.
func (s *Scenario) GradSyncEvery() bool {
	if s.Parallelism.Stage >= 2 {
		return true
	}
	switch s.Training.GradSync {
	case GradSyncEvery:
		return true
	case GradSyncLast:
		return false
	}
	return s.Parallelism.Stage == 0 && (s.Stack == "torchtitan" || s.Stack == "llm-foundry" || s.Stack == "fms-fsdp")
}

// warnGradSync warns when training.grad_sync: last asks for what zerosim
// does not model (stages 2 and 3 reduce every micro-step; FSDP's no_sync,
// which reduces once and keeps whole unsharded gradients in between, is
// not modelled), and when gradient accumulation is asked of fms-fsdp,
// whose train loop steps the optimizer after every batch
// (fms_fsdp/utils/train_utils.py train at foundation-model-stack/fms-fsdp
// 078c29e74593981ee1453fe0feca1e7ba5fa8aaf: zero_grad, forward, backward,
// clip_grad_norm_, step per batch).
func (l *loader) warnGradSync(s *Scenario) {
	t := &s.Training
	if t.GradSync == GradSyncLast && s.Parallelism.Stage >= 2 {
		l.warn(s, "training.grad_sync", fmt.Sprintf("grad_sync: last has no effect at ZeRO stage %d: zerosim reduces every micro-step at stages 2 and 3 and accumulates sharded gradients (FSDP's no_sync, one reduction and whole gradients kept in between, is not modelled)", s.Parallelism.Stage))
	}
	if NoGradAccum(s.Stack) && t.GradAccum > 1 {
		l.warn(s, "training.grad_accum", fmt.Sprintf("grad_accum=%d: fms-fsdp 078c29e steps the optimizer after every batch (fms_fsdp/utils/train_utils.py train), no gradient accumulation; modelled as asked, but no setting of the stack reproduces it", t.GradAccum))
	}
}

// NoAccumFrom is where fms-fsdp's train loop steps the optimizer after
// every batch.
const NoAccumFrom = "fms_fsdp/utils/train_utils.py train at fms-fsdp 078c29e"

// NoGradAccum reports whether stack's trainer has no gradient
// accumulation: fms-fsdp (NoAccumFrom: zero_grad, forward, backward,
// clip_grad_norm_, step per batch).
func NoGradAccum(stack string) bool { return stack == "fms-fsdp" }
