package scenarios

// Compile says which parts of the training step run under torch.compile
// (training.compile). It changes what autograd keeps for backward, not the
// FLOPs: memory/tensors.go derives each tensor from the sources it cites.
// The components are torchtitan's (torchtitan/config/job_config.py, [compile]
// components = ["model", "loss"], pytorch/torchtitan 08b8b244, which compiles
// the model block by block): blocks are the transformer blocks, each
// compiled on its own (torchtitan apply_compile: torch.compile(block,
// fullgraph=True), torchtitan/parallelisms/parallelize_llama.py at 9dec370ad26b),
// loss is the loss function (torchtitan/components/loss.py at e7c0cae934df,
// build_cross_entropy_loss). model is torch.compile(model) on the whole
// model (CompileModel). Unset (none) is eager PyTorch.
type Compile string

// torch.compile settings.
const (
	// CompileNone runs everything eagerly (default).
	CompileNone Compile = "none"
	// CompileBlocks compiles every transformer block (torchtitan's
	// training.compile at 9dec370, where the loss compile is commented out).
	CompileBlocks Compile = "blocks"
	// CompileLoss compiles the loss only.
	CompileLoss Compile = "loss"
	// CompileBlocksLoss compiles both (torchtitan's training.compile from
	// e7c0cae, compile.components = [model, loss] later).
	CompileBlocksLoss Compile = "blocks+loss"
	// CompileModel is torch.compile(model) on the whole model, the loss
	// outside it (KempnerForge's scripts/train.py at 01b461a78f57:
	// model = torch.compile(model), then F.cross_entropy on its logits).
	// Its blocks keep what a compiled block keeps (Blocks), and on one GPU
	// without a data-parallel wrapper the model is one AOTAutograd graph
	// whose backward returns every parameter's gradient at once
	// (memory.OneGraphGrads cites the source). Under PyTorch FSDP at
	// stage 3 Dynamo breaks the graph at every FSDP unit, so each unit is
	// its own graph and the gradients come unit by unit, as under blocks:
	// FSDP1 modules are traced as UnspecializedNNModule, "gets us
	// graph-breaks on FSDP module boundaries" (torch/distributed/fsdp/
	// _dynamo_utils.py at pytorch/pytorch e06d7d09), and FSDP2 runs its
	// hooks under torch._dynamo.disable while skip_fsdp_hooks = True, the
	// default (torch/_dynamo/config.py at df2fb023; fsdp_hook_wrapper in
	// torch/distributed/fsdp/_fully_shard/_fsdp_state.py at 1fd469d0).
	// Other layouts are refused (resolveCompile).
	CompileModel Compile = "model"
)

// CompileName is c's name, none for unset (eager).
func CompileName(c Compile) string {
	if c == "" {
		return string(CompileNone)
	}
	return string(c)
}

// Blocks reports whether the transformer blocks run compiled.
func (c Compile) Blocks() bool {
	return c == CompileBlocks || c == CompileBlocksLoss || c == CompileModel
}

// Loss reports whether the loss runs compiled.
func (c Compile) Loss() bool { return c == CompileLoss || c == CompileBlocksLoss }

// OneGraph reports whether s compiles its whole model as one graph, so
// that one backward returns every parameter gradient (CompileModel on one
// GPU; under FSDP at stage 3 the graph breaks at each unit).
func (s *Scenario) OneGraph() bool {
	return s.Training.Compile == CompileModel && s.Parallelism.Stage == 0
}

// resolveCompile checks training.compile. Unset it stays empty (none), so
// the resolved scenario of a file without the key is unchanged.
func (l *loader) resolveCompile(s *Scenario) *Error {
	if !l.has("training.compile") {
		return nil
	}
	if err := oneOf(l, "training.compile", s.Training.Compile, CompileNone, CompileBlocks, CompileLoss, CompileBlocksLoss, CompileModel); err != nil {
		return err
	}
	if s.Training.Compile != CompileModel {
		return nil
	}
	p := s.Parallelism
	b := s.Communication.Boundary
	switch {
	case s.Stack == "deepspeed" || s.Stack == "megatron":
		return l.errPath("training.compile", "compile=model is not modelled under stack "+s.Stack+" (its engine, not torch.compile(model), runs the step): use compile: none or blocks")
	case p.Stage == 0 && s.N() == 1:
		return nil // one graph: every gradient at once (OneGraph)
	case p.Stage == 3 && (b == BoundaryFSDP1 || b.FSDP2()):
		return nil // a graph per FSDP unit, as blocks
	}
	return l.errPath("training.compile", "compile=model is modelled on one GPU at zero_stage 0 (one graph) or under PyTorch FSDP at zero_stage 3 (communication.boundary fsdp1, fsdp2 or fsdp2_head: a graph per unit); for DDP or ZeRO 1-2 use compile: blocks")
}
