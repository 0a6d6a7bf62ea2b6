package memory

import (
	"fmt"
	"slices"

	"github.com/zerosim/zerosim/scenarios"
)

// AutocastCastElems lists, per unit of s, the elements of each weight
// torch.autocast casts to training.autocast's dtype in the unit's forward
// (scenarios.Training.Autocasts; nil without autocast): the unit's tensors
// of two or more dimensions (scenarios.Model.UnitShapes), the matmul
// weights autocast's lower-precision ops take, or the whole unit as one
// tensor where its shapes are not known; none of the embedding's
// (nn.Embedding is on no autocast list) or of the one-dimensional norm
// weights and biases (scenarios/autocast.go cites the cast policy). Under
// a tied output head (tiedHead) the head unit's projection casts the
// embedding's vocab × hidden weight, which the embedding's own forward did
// not.
func AutocastCastElems(s *scenarios.Scenario) [][]int64 {
	if !s.Training.Autocasts() {
		return nil
	}
	m := &s.Model
	out := make([][]int64, len(m.LayerList))
	for u, l := range m.LayerList {
		if l.Name == "embedding" || l.Params == 0 {
			continue
		}
		shapes := m.UnitShapes(l)
		if shapes == nil {
			out[u] = []int64{int64(l.Params)}
			continue
		}
		for _, sh := range shapes {
			if len(sh) >= 2 {
				out[u] = append(out[u], shapeElems(sh))
			}
		}
	}
	if head, _ := tiedHead(s); head >= 0 {
		out[head] = append(out[head], m.Vocab*m.Hidden)
	}
	return out
}

// tiedHead is the unit whose forward runs a tied output head, a
// projection with the embedding's weight (scenarios.Model.OutputUnit: the
// last unit, as zero's compute places the head), and the embedding's unit:
// for a transformer with a vocabulary whose head is tied (tiedEmbedding);
// -1, -1 otherwise. Autocast's cast of the tied weight (AutocastCastElems)
// and the tied weight's gradient (tiedHeadGrad) both take it. Neither
// depends on what zerosim counts of the head's activations: torch.autocast
// casts the weight wherever the projection runs (HF GPT-2's lm_head, an
// nn.Linear holding wte's weight; llm-foundry's SharedEmbedding.forward
// with unembed=True, F.linear(input, self.weight),
// llmfoundry/models/layers/custom_embedding.py at
// 34c28fc9199278b10193e69fb52979043b7dc1bd), and linear is on its
// lower-precision list (scenarios/autocast.go).
func tiedHead(s *scenarios.Scenario) (head, emb int) {
	m := &s.Model
	if m.Kind != scenarios.KindTransformer || m.Vocab <= 0 || m.Hidden <= 0 {
		return -1, -1
	}
	head, emb = m.OutputUnit(), tiedEmbedding(m)
	if emb < 0 || head < 0 || head == emb {
		return -1, -1
	}
	return head, emb
}

// shapeElems is the elements of one tensor of scenarios.Model.UnitShapes,
// whose shapes the loader checked fit in int64.
func shapeElems(sh []int64) int64 {
	n, _ := scenarios.ShapesNumel([][]int64{sh})
	return n
}

// tiedEmbedding is the index of m's embedding unit when the model ties
// its output head to it (no lm_head unit; layer names are unique), else -1.
func tiedEmbedding(m *scenarios.Model) int {
	emb := -1
	for i, l := range m.LayerList {
		switch l.Name {
		case "lm_head":
			return -1
		case "embedding":
			emb = i
		}
	}
	return emb
}

// autocastDTypeBytes is the element size of training.autocast's dtype.
func autocastDTypeBytes(s *scenarios.Scenario) int64 {
	if s.Training.Autocasts() {
		return 2 // bf16 and fp16
	}
	return 0
}

// unitCasts fills the units' autocast weight casts (UnitInfo.Casts,
// CastTensors, CastsRebuilt, CastsPerOp, CastPeak) under convention
// zerosim.
func unitCasts(s *scenarios.Scenario, r *Report, out []UnitInfo) error {
	elems := AutocastCastElems(s)
	if elems == nil || r.Convention.modelStatesOnly() {
		return nil
	}
	b := autocastDTypeBytes(s)
	rebuilt := AutocastRebuilt(s)
	var c calc
	for u := range out {
		for _, n := range elems[u] {
			t := c.Mul(n, b)
			out[u].CastTensors = append(out[u].CastTensors, t)
			out[u].Casts = c.Add(out[u].Casts, t)
		}
		out[u].CastsRebuilt = out[u].Casts > 0 && rebuilt[u]
		if out[u].CastsRebuilt && !s.AutocastCached() {
			out[u].CastsPerOp, out[u].CastPeak = true, slices.Max(out[u].CastTensors)
		}
	}
	if c.Err != nil {
		return fmt.Errorf("autocast casts overflow int64: %w", c.Err)
	}
	return nil
}

// AutocastRebuilt marks the units of s whose weights torch.autocast casts
// again in their backward: those torch.utils.checkpoint wraps whole, the
// units under recompute full or op (UnitPolicies), whose recomputation
// re-enters autocast and reruns the block's matmuls (scenarios/autocast.go
// cites checkpoint.py). Their forward casts, which autograd did not save,
// go when the forward's autocast exits. Under selective (Korthikanti et
// al.'s core-attention recompute, which reruns no weight) and none the
// forward's casts, saved by autograd, live to the unit's backward. nil
// without autocast.
func AutocastRebuilt(s *scenarios.Scenario) []bool {
	if !s.Training.Autocasts() {
		return nil
	}
	pol := UnitPolicies(s)
	out := make([]bool, len(pol))
	for u, p := range pol {
		l := s.Model.LayerList[u]
		out[u] = (l.Block || l.Group == scenarios.GroupExpert) &&
			(p == string(scenarios.RecomputeFull) || p == string(scenarios.RecomputeOp))
	}
	return out
}
