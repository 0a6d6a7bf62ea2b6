package zerosim_test

import (
	"os"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
	"gopkg.in/yaml.v3"
)

// TestAccelerateStacksDoc: the Hugging Face Trainer and Accelerate fragment
// of docs/stacks.md is what zerosim import accelerate makes of the
// alignment-handbook's FSDP recipe, key by key, and loads on a scenario.
func TestAccelerateStacksDoc(t *testing.T) {
	b, err := os.ReadFile("docs/stacks.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "## Hugging Face Trainer and Accelerate")
	if !ok {
		t.Fatal("docs/stacks.md has no Hugging Face Trainer and Accelerate section")
	}
	_, rest, ok := strings.Cut(sec, "```yaml\n")
	if !ok {
		t.Fatal("docs/stacks.md: the Accelerate section has no yaml fragment")
	}
	frag, _, _ := strings.Cut(rest, "```")
	var m map[string]any
	if err := yaml.Unmarshal([]byte(frag), &m); err != nil {
		t.Fatal(err)
	}
	sets := flattenSets("", m)
	a, err := scenarios.ReadAccelerateConfig("scenarios/testdata/accelerate/alignment-handbook-fsdp.yaml", scenarios.AccelerateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) < 10 {
		t.Fatalf("the fragment has %d keys: %q", len(sets), sets)
	}
	for _, s := range sets {
		key, val, _ := strings.Cut(s, "=")
		if got := a.Setting(key); got != val {
			t.Errorf("docs/stacks.md says %s, the import sets %q", s, got)
		}
	}
	def, _ := scenarios.Example("default")
	if _, err := scenarios.Load("default.yaml", def, sets); err != nil {
		t.Errorf("the fragment does not load: %v", err)
	}
}
