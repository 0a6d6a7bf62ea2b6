package reports

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestAttentionLineNamesSinks: gpt-oss's attention adds a learned sink
// column to every softmax, which no rate zerosim times attention at takes
// into account (FlashAttention-2 takes no sinks): its attention line says
// so (QA14 s20 finding 9), and a model without sinks says nothing of them.
func TestAttentionLineNamesSinks(t *testing.T) {
	cfg, err := filepath.Abs("../scenarios/testdata/hf-extra/gpt-oss-20b.json")
	if err != nil {
		t.Fatal(err)
	}
	yaml := "version: 1\nname: gptoss\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {hf_config: " + cfg + ", seq_len: 4096}\nparallelism: {dp: 8, zero_stage: 3}\n"
	s, err := scenarios.Load("gptoss.yaml", []byte(yaml), nil)
	if err != nil {
		t.Fatal(err)
	}
	const note = "; gpt-oss's attention sinks not modelled: the rate stands in for a kernel that takes them (FlashAttention-2 takes none)"
	if got := attentionText(s); !strings.HasSuffix(got, note) {
		t.Errorf("gpt-oss attention line %q does not end with %q", got, note)
	}
	d, _ := scenarios.Example("default")
	plain, err := scenarios.Load("default.yaml", d, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := attentionText(plain); strings.Contains(got, "sinks") {
		t.Errorf("llama2-7b attention line mentions sinks: %q", got)
	}
}
