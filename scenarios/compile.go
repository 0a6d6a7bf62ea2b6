package scenarios

// Compile says which parts of the training step run under torch.compile
// (training.compile). It changes what autograd keeps for backward, not the
// FLOPs: memory/tensors.go derives each tensor from the sources it cites.
// The components are torchtitan's (torchtitan/config/job_config.py, [compile]
// components = ["model", "loss"], pytorch/torchtitan 08b8b244, which compiles
// the model block by block): blocks are the transformer blocks, each
// compiled on its own (torchtitan apply_compile: torch.compile(block,
// fullgraph=True), torchtitan/parallelisms/parallelize_llama.py at 9dec370),
// loss is the loss function (torchtitan/components/loss.py at e7c0cae,
// build_cross_entropy_loss). Unset (none) is eager PyTorch.
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
)

// CompileName is c's name, none for unset (eager).
func CompileName(c Compile) string {
	if c == "" {
		return string(CompileNone)
	}
	return string(c)
}

// Blocks reports whether the transformer blocks run compiled.
func (c Compile) Blocks() bool { return c == CompileBlocks || c == CompileBlocksLoss }

// Loss reports whether the loss runs compiled.
func (c Compile) Loss() bool { return c == CompileLoss || c == CompileBlocksLoss }

// resolveCompile checks training.compile. Unset it stays empty (none), so
// the resolved scenario of a file without the key is unchanged.
func (l *loader) resolveCompile(s *Scenario) *Error {
	if !l.has("training.compile") {
		return nil
	}
	return oneOf(l, "training.compile", s.Training.Compile, CompileNone, CompileBlocks, CompileLoss, CompileBlocksLoss)
}
