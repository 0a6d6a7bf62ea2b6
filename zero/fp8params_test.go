package zero

import (
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestFP8ParamsAllGather: under training.fp8_params the distributed
// optimizer's all-gather after the step moves the blocks' uint8 param
// buffer, 1 byte a parameter, and the bf16 buffer (embedding, final norm,
// output layer) in 2 (Megatron's DDP: param dtype torch.uint8 for a
// Float8Tensor, megatron/core/distributed/distributed_data_parallel.py lines
// 113-121 at NVIDIA/Megatron-LM core_v0.9.0; scenarios.resolveFP8Params).
// Llama 3.1 8B on 8 GPUs, no padding (communication.padding toy).
func TestFP8ParamsAllGather(t *testing.T) {
	const (
		block  = 218_112_000 // Llama-3.1-8B decoder layer
		blocks = 32
		embed  = 525_336_576 // 128256 × 4096
	)
	gather := func(set ...string) int64 {
		t.Helper()
		doc := "version: 1\nstack: megatron\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {preset: llama3.1-8b}\n" +
			"parallelism: {dp: 8, zero_stage: 1}\ntraining: {fp8: te}\ncommunication: {padding: toy}\n"
		s, err := scenarios.Load("llama.yaml", []byte(doc), set)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Replay(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var b int64
		for _, p := range r.Phases {
			if p.Phase == PhasePostOptAG || p.Phase == PhaseForwardAG {
				b += p.Logical
			}
		}
		return b
	}
	if got, want := gather(), int64(2*(blocks*block+2*embed+4096)); got != want {
		t.Errorf("te: all-gather %d B, want %d", got, want)
	}
	if got, want := gather("training.fp8_params=true"), int64(blocks*block+2*(2*embed+4096)); got != want {
		t.Errorf("te, fp8_params: all-gather %d B, want %d", got, want)
	}
}
