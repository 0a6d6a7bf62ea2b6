package scenarios

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestHFSeqLenWarnings: a model.hf_config scenario without seq_len says
// that it trains at zerosim's default (4,096; Llama 2's 4,096 positions
// cap nothing), and one whose seq_len passes max_position_embeddings
// with no rope_scaling names both (Qwen3-8B: 40,960 positions,
// rope_scaling null). Llama 3.1 scales RoPE (rope_scaling llama3): no
// warning past its 131,072; nor at or under the limit.
func TestHFSeqLenWarnings(t *testing.T) {
	const base = "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {hf_config: %s%s}\nparallelism: {dp: 8, zero_stage: 3}\n"
	doc := func(cfg, seq string) []byte {
		return []byte(strings.Replace(strings.Replace(base, "%s", cfg, 1), "%s", seq, 1))
	}
	for _, c := range []struct {
		name string
		doc  []byte
		want string // the one warning; "" none
	}{
		{"no seq_len", doc("llama-2-7b/config.json", ""),
			"s.yaml:3:9: model.seq_len is not given: the model trains at zerosim's default 4,096 tokens for an imported model: config.json states the longest context, not the training length; set model.seq_len to the run's sequence length"},
		{"capped", doc("opt-1.3b/config.json", ""),
			"s.yaml:3:9: model.seq_len is not given: the model trains at 2,048 tokens, zerosim's default 4,096 tokens for an imported model, capped at config.json's max_position_embeddings 2048; set model.seq_len to the run's sequence length"},
		{"past the positions", doc("qwen3-8b/config.json", ", seq_len: 131072"),
			"s.yaml:3:42: seq_len=131,072 is above config.json's max_position_embeddings 40,960 and the config sets no rope_scaling: the model was trained on positions up to 40,960"},
		{"at the positions", doc("qwen3-8b/config.json", ", seq_len: 40960"), ""},
		{"rope_scaling", doc("llama-3.1-8b/config.json", ", seq_len: 262144"), ""},
	} {
		s, err := Load("testdata/hf/s.yaml", c.doc, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var got []string
		for _, w := range s.Warnings {
			if strings.Contains(w, "seq_len") {
				got = append(got, w)
			}
		}
		if c.want == "" && len(got) != 0 || c.want != "" && (len(got) != 1 || !strings.HasPrefix(got[0], "testdata/hf/"+c.want)) {
			t.Errorf("%s: seq_len warnings %q, want %q", c.name, got, c.want)
		}
	}
}

// withoutSeqLenNote checks that a model.hf_config scenario without
// seq_len got the note that it trains at zerosim's default (once), and
// none otherwise, and returns the warnings without it: for the tests that
// hold an import's other notes.
func withoutSeqLenNote(t *testing.T, model string, ws []string) []string {
	t.Helper()
	var out []string
	n := 0
	for _, w := range ws {
		if strings.Contains(w, ": model.seq_len is not given: the model trains at ") {
			n++
			continue
		}
		out = append(out, w)
	}
	want := 0
	if strings.Contains(model, "hf_config:") && !strings.Contains(model, "seq_len:") {
		want = 1
	}
	if n != want {
		t.Errorf("%q: %d seq_len notes, want %d", model, n, want)
	}
	return out
}

// TestHFRopeScaled: which rope_scaling and rope_parameters values count as
// scaling RoPE past the trained context (review s20 A F5). "default" is
// plain RoPE (transformers' ROPE_INIT_FUNCTIONS "default"), any other
// rope_type or the older "type" key is scaled, and a value that is not an
// object is taken as scaled (the import cannot tell).
func TestHFRopeScaled(t *testing.T) {
	for _, c := range []struct {
		cfg  string
		want bool
	}{
		{`{}`, false},
		{`{"rope_scaling": null}`, false},
		{`{"rope_scaling": {"rope_type": "default"}}`, false},
		{`{"rope_parameters": {"rope_type": "default", "rope_theta": 10000}}`, false},
		{`{"rope_parameters": {"rope_type": "yarn", "factor": 4}}`, true},
		{`{"rope_scaling": {"type": "linear", "factor": 2}}`, true},
		{`{"rope_scaling": "yarn"}`, true},
		{`{"text_config": {"rope_scaling": {"rope_type": "llama3", "factor": 8}}}`, true},
	} {
		var m map[string]any
		if err := json.Unmarshal([]byte(c.cfg), &m); err != nil {
			t.Fatal(err)
		}
		if got := hfRopeScaled(m); got != c.want {
			t.Errorf("%s: hfRopeScaled %v, want %v", c.cfg, got, c.want)
		}
	}
}
