package reports

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/zero"
)

// TestDispatcherPhaseName: under a deduplicating MoE dispatcher the
// all-to-all phases say so in the table ("forward all-to-all (deepep)")
// and in result.json ("dispatcher"); under the default they do not.
func TestDispatcherPhaseName(t *testing.T) {
	doc := "version: 1\ncluster: {nodes: 2, gpus_per_node: 2, gpu: H100-80GB}\nmodel:\n  kind: transformer\n  arch: llama\n  hidden: 64\n  layers: 1\n  heads: 4\n  ffn: 128\n  vocab: 256\n  seq_len: 64\n  layer_list:\n  - {name: embedding, params: 16384}\n  - {name: block.0, params: 16640, dims: {hidden: 64, heads: 4, kv_heads: 4, head_dim: 16}}\n  - {name: experts.0, params: 196608, group: expert, dims: {hidden: 64, experts: 8, top_k: 2, expert_ffn: 128}}\n  - {name: lm_head, params: 16384}\nparallelism: {dp: 4, zero_stage: 1, ep: 4}\n"
	for _, c := range []struct {
		set, row, json string
	}{
		{"communication.moe_dispatcher=deepep", "forward all-to-all (deepep)", "deepep"},
		{"communication.moe_dispatcher=flex", "backward all-to-all (flex)", "flex"},
		{"communication.moe_dispatcher=alltoall", "forward all-to-all ", ""},
	} {
		s, err := scenarios.Load("d.yaml", []byte(doc), []string{c.set})
		if err != nil {
			t.Fatal(err)
		}
		r, err := zero.Replay(s, zero.Options{})
		if err != nil {
			t.Fatal(err)
		}
		run, err := NewRun(s, r, nil)
		if err != nil {
			t.Fatal(err)
		}
		var text, js bytes.Buffer
		if err := WriteRunTable(&text, run); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(text.String(), "│ "+c.row) || (c.json == "" && strings.Contains(text.String(), "all-to-all (")) {
			t.Errorf("%s: table lacks %q or names a dispatcher:\n%s", c.set, c.row, text.String())
		}
		if err := WriteRunJSON(&js, run); err != nil {
			t.Fatal(err)
		}
		var out struct {
			Phases []struct {
				Phase      string  `json:"phase"`
				Dispatcher *string `json:"dispatcher"`
			} `json:"phases"`
		}
		if err := json.Unmarshal(js.Bytes(), &out); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, p := range out.Phases {
			if !strings.Contains(p.Phase, "all-to-all") {
				if p.Dispatcher != nil {
					t.Errorf("%s: phase %s has dispatcher %q", c.set, p.Phase, *p.Dispatcher)
				}
				continue
			}
			n++
			switch {
			case c.json == "" && p.Dispatcher != nil:
				t.Errorf("%s: %s has dispatcher %q, want none", c.set, p.Phase, *p.Dispatcher)
			case c.json != "" && (p.Dispatcher == nil || *p.Dispatcher != c.json):
				t.Errorf("%s: %s dispatcher %v, want %q", c.set, p.Phase, p.Dispatcher, c.json)
			}
		}
		if n != 2 {
			t.Errorf("%s: %d all-to-all phases, want 2", c.set, n)
		}
	}
}
