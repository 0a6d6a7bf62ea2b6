package scenarios

import (
	"os"
	"strings"
	"testing"
)

// TestHFDropoutNote: GPT-2's config.json sets resid_pdrop, embd_pdrop and
// attn_pdrop to 0.1 and OPT-1.3B's dropout to 0.1 (attention_dropout 0.0);
// Llama 2's sets none above 0. A scenario naming such a config warns,
// once, while training.dropout is unset, and not when the scenario says.
func TestHFDropoutNote(t *testing.T) {
	for _, c := range []struct {
		dir, keys string
		p         float64
	}{
		{"gpt2", "resid_pdrop 0.1, embd_pdrop 0.1, attn_pdrop 0.1", 0.1},
		{"opt-1.3b", "dropout 0.1", 0.1},
		{"llama-2-7b", "", 0},
	} {
		raw, err := os.ReadFile("testdata/hf/" + c.dir + "/config.json")
		if err != nil {
			t.Fatal(err)
		}
		hm, err := ImportHF(c.dir, raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(hm.DropoutKeys, ", "); got != c.keys || hm.Dropout != c.p {
			t.Errorf("%s: dropout %g from %q, want %g from %q", c.dir, hm.Dropout, got, c.p, c.keys)
		}
		for _, set := range []string{"", "training: {dropout: 0.1}\n"} {
			y := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nparallelism: {dp: 8, zero_stage: 3}\n" +
				"model: {hf_config: hf/" + c.dir + "/config.json, seq_len: 1024}\n" + set
			s, err := Load("testdata/x.yaml", []byte(y), nil)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, w := range s.Warnings {
				if strings.Contains(w, "config.json sets dropout") {
					n++
					if !strings.Contains(w, "set training.dropout: 0.1") {
						t.Errorf("%s: %q", c.dir, w)
					}
				}
			}
			if want := map[bool]int{true: 1, false: 0}[c.p > 0 && set == ""]; n != want {
				t.Errorf("%s with %q: %d dropout warnings, want %d", c.dir, set, n, want)
			}
		}
	}
}
