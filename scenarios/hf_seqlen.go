package scenarios

import "fmt"

// hfRopeScaled reports whether config.json, or its text_config, scales
// RoPE past the trained context: a rope_scaling object (transformers'
// ROPE_INIT_FUNCTIONS: linear, dynamic, yarn, longrope, llama3) or a
// rope_parameters object (transformers v5's spelling) whose rope_type (or
// type) is not "default". null, absent or "default" is plain RoPE.
func hfRopeScaled(m map[string]any) bool {
	for _, o := range []map[string]any{m, asObject(m["text_config"])} {
		for _, k := range []string{"rope_scaling", "rope_parameters"} {
			v, ok := o[k]
			if !ok || v == nil {
				continue
			}
			r, isObj := v.(map[string]any)
			if !isObj {
				return true // not plain RoPE as far as the import can tell
			}
			t, _ := r["rope_type"].(string)
			if t == "" {
				t, _ = r["type"].(string)
			}
			if t != "" && t != "default" {
				return true
			}
		}
	}
	return false
}

// warnHFSeqLen warns on a model.hf_config scenario's sequence length: when
// model.seq_len is not given, that the model trains at zerosim's default
// (DefaultHFSeqLen, capped at max_position_embeddings), which the run's
// tokens line shows without saying where it comes from; when it is given
// above config.json's max_position_embeddings and the config scales no
// RoPE, that the model was trained on shorter positions (the counts stand
// as given: memory and time do not depend on it). It returns the
// default-seq_len warning (the caller keeps it as seqLenNote), "" otherwise:
// the above-max_position_embeddings warning is only added to s.Warnings.
func (l *loader) warnHFSeqLen(s *Scenario, hm *HFModel) string {
	m := &s.Model
	switch {
	case !l.has("model.hf_config"):
	case !l.has("model.seq_len"):
		at := "the model trains at " // at the default: its tokens are said once
		if m.SeqLen != DefaultHFSeqLen {
			at += commas(m.SeqLen) + " tokens, "
		}
		l.warn(s, "model.hf_config", fmt.Sprintf("model.seq_len is not given: %s%s; set model.seq_len to the run's sequence length", at, hm.SeqLenSource()))
		return s.Warnings[len(s.Warnings)-1]
	case hm.MaxPositions > 0 && m.SeqLen > hm.MaxPositions && !hm.RopeScaled:
		l.warn(s, "model.seq_len", fmt.Sprintf("seq_len=%s is above config.json's max_position_embeddings %s and the config sets no rope_scaling: the model was trained on positions up to %s; a run past them sets rope_scaling (YaRN, for one) in config.json, or trains at seq_len %s or less",
			commas(m.SeqLen), commas(hm.MaxPositions), commas(hm.MaxPositions), commas(hm.MaxPositions)))
	}
	return ""
}
