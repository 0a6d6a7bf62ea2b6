package memory

import (
	"slices"
	"testing"
)

// TestMegatronLossTensors: under stack: megatron the loss is Megatron's
// _VocabParallelCrossEntropy (megatron/core/tensor_parallel/cross_entropy.py
// at NVIDIA/Megatron-LM d98e8a64ddf34856e74b24714e3bedb2f5a39553). Its
// forward upcasts the 16-bit logits once (.float()), works on that copy in
// place (the max subtracted, torch.exp(..., out=), div_) and saves it,
// the fp32 softmax: 4·s·b·V (tensor parallelism 1: V/tp = V). Its backward
// writes the gradient into that saved softmax (grad_input = softmax,
// grad_input.mul_), so no fp32 gradient is made. The engine's cast of that
// fp32 gradient to the 16-bit logits' dtype (validate_outputs) is the one
// new tensor, 2·s·b·V. The eager torch loss instead makes nll_loss's and
// log_softmax's fp32 gradients, 4·s·b·V each. Llama 2 7B at s 2048, b 8,
// V 32,000 (keepLogitsYAML).
func TestMegatronLossTensors(t *testing.T) {
	const s, b, v = 2048, 8, 32000
	const softmax, grad16 = 4 * s * b * v, 2 * s * b * v
	d := BlockDims{Arch: "llama", Seq: s, Batch: b, Hidden: 4096, Heads: 32, KVHeads: 32, FFN: 11008, Vocab: v, LossFP32: true}
	_, eagerLoss, eagerGrads, err := headParts(d)
	if err != nil {
		t.Fatal(err)
	}
	if eagerLoss != softmax || !slices.Equal(eagerGrads, []int64{softmax, softmax}) {
		t.Errorf("eager torch loss: saves %d, gradients %v; want %d, [%d %d]", eagerLoss, eagerGrads, softmax, softmax, softmax)
	}
	d.LossSavesUpcast = true
	_, loss, grads, err := headParts(d)
	if err != nil {
		t.Fatal(err)
	}
	if loss != softmax || !slices.Equal(grads, []int64{grad16}) {
		t.Errorf("megatron loss: saves %d, gradients %v; want the fp32 softmax %d and the 16-bit cast [%d]", loss, grads, softmax, grad16)
	}
	// The 16-bit logits (the projection's output, gpt_model.py
	// _postprocess's local) live through the loss's forward beside the
	// fp32 copy, which is the saved softmax, not a temporary.
	if logits, upcast, err := HeadLossTemps(d); err != nil || logits != grad16 || upcast != 0 {
		t.Errorf("megatron loss temporaries: %d, %d (%v), want %d, 0", logits, upcast, err, grad16)
	}
	r := keepLogitsReport(t, "stack=megatron", "parallelism.zero_stage=1")
	head := r.Units[len(r.Units)-1]
	if !slices.Equal(head.RecomputeTensors, []int64{grad16}) {
		t.Errorf("stack megatron: head rebuilds %v, want the 16-bit cast [%d]", head.RecomputeTensors, grad16)
	}
}
