package memory

import (
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// tiedGPT is a small GPT (output tied to the embedding: models.go's gpt
// layer list) with MPT's vocabulary, 50,368 pieces.
const tiedGPT = `version: 1
cluster: {nodes: 1, gpus_per_node: 8, gpu: A100-40GB}
model: {kind: transformer, arch: gpt, vocab: 50368, seq_len: 256, hidden: 512, layers: 4, heads: 8}
parallelism: {dp: 8, zero_stage: 3}
training: {micro_batch: 2}
`

// tiedEvents returns the OpTiedGrad events of r's timeline and, at each
// backward compute event of a block unit, the OpTiedGrad bytes live there.
func tiedEvents(r *Report) (evs []Event, liveAtBlocks []int64) {
	var live int64
	for _, e := range r.Timeline() {
		if e.Op == OpTiedGrad {
			evs = append(evs, e)
			live += e.Delta
			continue
		}
		if e.Phase == PhaseBackward && e.Op == OpCompute && e.Unit > 0 && e.Unit < len(r.Units)-1 {
			liveAtBlocks = append(liveAtBlocks, live)
		}
	}
	return evs, liveAtBlocks
}

// TestTiedHeadGradient: a tied output projection's weight gradient,
// vocab × hidden in the parameters' dtype (50,368 × 512 × 2 B = 51,576,832 B
// for bf16, × 4 B = 103,153,664 B for fp32 parameters), is made by the
// head's backward (the last unit) and held by autograd's InputBuffer until
// the embedding's backward (unit 0) sums it with the embedding's own
// (torch/csrc/autograd/engine.cpp evaluate_function's not_ready at
// pytorch/pytorch e1253a95): so it is live over every block's backward,
// under FSDP1, FSDP2, DeepSpeed ZeRO-3 and plain DDP alike, with the fused
// and the eager loss. An untied model (llama's lm_head), Megatron-LM
// (gradient-accumulation fusion) and the seeds' conventions have none.
func TestTiedHeadGradient(t *testing.T) {
	const bf16, fp32 = 50368 * 512 * 2, 50368 * 512 * 4
	for _, c := range []struct {
		name string
		sets []string
		conv Convention
		want int64
	}{
		{"fsdp1 fused", []string{"communication.boundary=fsdp1", "training.cross_entropy=fused", "training.flat_param_views=true"}, ConventionZerosim, bf16},
		{"fsdp2 eager", []string{"communication.boundary=fsdp2"}, ConventionZerosim, bf16},
		{"composer", []string{"stack=llm-foundry"}, ConventionZerosim, bf16},
		{"deepspeed zero-3", []string{"stack=deepspeed"}, ConventionZerosim, bf16},
		{"ddp", []string{"parallelism.zero_stage=0"}, ConventionZerosim, bf16},
		{"fp32 params", []string{"training.param_dtype=fp32"}, ConventionZerosim, fp32},
		{"untied llama", []string{"model.arch=llama", "model.ffn=1536"}, ConventionZerosim, 0},
		{"megatron", []string{"stack=megatron", "parallelism.zero_stage=1"}, ConventionZerosim, 0},
		// Megatron-LM's fusion, not its padding, hands autograd the dummy.
		{"megatron toy padding", []string{"stack=megatron", "parallelism.zero_stage=1", "communication.padding=toy"}, ConventionZerosim, 0},
		{"seed 002", nil, ConventionSeed002, 0},
		{"whole-model compile", []string{"cluster.gpus_per_node=1", "parallelism.dp=1", "parallelism.zero_stage=0", "training.compile=model"}, ConventionZerosim, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := scenarios.Load("tied.yaml", []byte(tiedGPT), c.sets)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Analyze(s, Options{Convention: c.conv})
			if err != nil {
				t.Fatal(err)
			}
			evs, live := tiedEvents(r)
			if c.want == 0 {
				if len(evs) != 0 {
					t.Fatalf("tied-gradient events %v, want none", evs)
				}
				return
			}
			last := len(r.Units) - 1
			if len(evs) != 2 || evs[0].Unit != last || evs[0].Delta != c.want || evs[1].Unit != 0 || evs[1].Delta != -c.want ||
				evs[0].Component != CompGrads || evs[0].Phase != PhaseBackward {
				t.Fatalf("tied-gradient events %v, want +%d B at unit %d (%s) and -%d B at unit 0 (%s), backward gradients",
					evs, c.want, last, r.Units[last].Name, c.want, r.Units[0].Name)
			}
			if len(live) == 0 {
				t.Fatal("no block backward event")
			}
			for i, b := range live {
				if b != c.want {
					t.Errorf("block backward event %d: %d B of the tied gradient live, want %d", i, b, c.want)
				}
			}
		})
	}
}
