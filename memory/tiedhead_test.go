package memory

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestTiedHeadOneLookup: autocast's cast of a tied head's weight
// (AutocastCastElems) and the tied weight's gradient (tiedHeadGrad) find
// the head the same way (tiedHead): the last unit, whatever it is named,
// of a transformer with a vocabulary, an embedding and no lm_head.
//
// torch.autocast casts the tied weight wherever the head's projection runs
// (HF GPT-2's lm_head, an nn.Linear whose weight is wte's; llm-foundry's
// SharedEmbedding.forward(unembed=True), F.linear(input, self.weight)):
// linear is on autocast's lower-precision list whatever zerosim counts of
// activations, so memory.activations: false keeps the cast, as it keeps
// every block's (before, HeadUnit's "activations are not derived" dropped
// the head's alone). A hand-written layer list whose final norm is named
// ln_f runs the head in that unit (scenarios.Model.OutputUnit; zero's
// compute puts the head's FLOPs there), so its tied gradient is held from
// there to the embedding's backward (before, only a unit named final_norm
// held it).
func TestTiedHeadOneLookup(t *testing.T) {
	const v, h = 50368, 512
	for _, c := range []struct {
		name, yaml string
		sets       []string
	}{
		{"gpt", tiedGPT, nil},
		{"gpt, memory.activations false", tiedGPT, []string{"memory.activations=false"}},
		{"layer list ending in ln_f", tiedLnF(v, h), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			sets := append([]string{"parallelism.zero_stage=0", "training.param_dtype=fp32", "training.autocast=bf16"}, c.sets...)
			s, err := scenarios.Load("tied.yaml", []byte(c.yaml), sets)
			if err != nil {
				t.Fatal(err)
			}
			last := len(s.Model.LayerList) - 1
			if !slices.Contains(AutocastCastElems(s)[last], v*h) {
				t.Errorf("unit %d (%s) casts %v, want the tied weight's %d·%d = %d among them", last, s.Model.LayerList[last].Name, AutocastCastElems(s)[last], v, h, v*h)
			}
			r, err := Analyze(s, Options{})
			if err != nil {
				t.Fatal(err)
			}
			evs, _ := tiedEvents(r)
			if want := int64(v * h * 4); len(evs) != 2 || evs[0].Unit != last || evs[0].Delta != want || evs[1].Unit != 0 {
				t.Errorf("tied-gradient events %v, want +%d B (fp32) at unit %d and its release at unit 0", evs, want, last)
			}
		})
	}
}

// tiedLnF is tiedGPT's model as a hand-written layer list (models.go's gpt
// units: embedding with learned positions, 12h²+13h blocks) whose final
// norm is named ln_f, as GPT-2's module is.
func tiedLnF(v, h int64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  - {name: embedding, params: %d}\n", v*h+256*h)
	for i := range 4 {
		fmt.Fprintf(&b, "  - {name: block.%d, params: %d}\n", i, 12*h*h+13*h)
	}
	fmt.Fprintf(&b, "  - {name: ln_f, params: %d}\n", 2*h)
	return strings.Replace(tiedGPT, "model: {kind: transformer, arch: gpt, vocab: 50368, seq_len: 256, hidden: 512, layers: 4, heads: 8}",
		"model:\n  kind: transformer\n  arch: gpt\n  vocab: 50368\n  seq_len: 256\n  hidden: 512\n  layers: 4\n  heads: 8\n  layer_list:\n"+b.String(), 1)
}

// TestTiedHeadTransformerOnly: a tied head is modelled for kind
// transformer only (tiedHead). Seed 002's tiny-transformer projects with a
// weight of its own (out.w_vocab, scenarios/models.go), so a hand-written
// tiny-transformer layer list that happens to name a unit "embedding"
// casts no vocab × hidden tied weight in its last unit and holds no tied
// gradient: its last unit casts its own 20,000 parameters (one tensor,
// shapes unknown), nothing else.
func TestTiedHeadTransformerOnly(t *testing.T) {
	const y = `version: 1
cluster: {nodes: 1, gpus_per_node: 2, gpu: A100-80GB}
model:
  kind: tiny-transformer
  hidden: 64
  layers: 1
  vocab: 256
  seq_len: 16
  layer_list:
  - {name: embedding, params: 16384}
  - {name: attn, params: 16384}
  - {name: out, params: 20000}
parallelism: {dp: 2, zero_stage: 0}
training: {micro_batch: 1, param_dtype: fp32, autocast: bf16}
`
	s, err := scenarios.Load("tiny.yaml", []byte(y), nil)
	if err != nil {
		t.Fatal(err)
	}
	if head, emb := tiedHead(s); head >= 0 || emb >= 0 {
		t.Errorf("tiedHead = %d, %d for a tiny-transformer, want -1, -1", head, emb)
	}
	if got := AutocastCastElems(s)[2]; !slices.Equal(got, []int64{20000}) {
		t.Errorf("unit out casts %v, want its own [20000] without the 256·64 tied weight", got)
	}
	r, err := Analyze(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if evs, _ := tiedEvents(r); len(evs) != 0 {
		t.Errorf("tied-gradient events %v, want none", evs)
	}
}
