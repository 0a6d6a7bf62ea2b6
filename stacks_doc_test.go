package zerosim_test

import (
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/zerosim/zerosim/scenarios"
)

// stackSection is one "## " section of docs/stacks.md: its template (empty
// when the fragment comes from a stack's code, not a validated run) and its
// YAML fragment as --set assignments.
type stackSection struct {
	title, template, preset string
	sets                    []string
}

// stackSections reads docs/stacks.md's sections that carry a YAML fragment.
func stackSections(t *testing.T) []stackSection {
	t.Helper()
	b, err := os.ReadFile("docs/stacks.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []stackSection
	for _, sec := range strings.Split(string(b), "\n## ")[1:] {
		title, body, _ := strings.Cut(sec, "\n")
		var s stackSection
		s.title = title
		if _, rest, ok := strings.Cut(body, "\nTemplate: "); ok {
			s.template, _, _ = strings.Cut(rest, "\n")
		}
		if _, rest, ok := strings.Cut(body, "Preset: `stack: "); ok {
			s.preset, _, _ = strings.Cut(rest, "`")
		}
		_, rest, ok := strings.Cut(body, "```yaml\n")
		if !ok {
			t.Fatalf("docs/stacks.md %q: no yaml fragment", title)
		}
		frag, _, _ := strings.Cut(rest, "```")
		var m map[string]any
		if err := yaml.Unmarshal([]byte(frag), &m); err != nil {
			t.Fatalf("docs/stacks.md %q: %v", title, err)
		}
		s.sets = flattenSets("", m)
		if len(s.sets) == 0 {
			t.Fatalf("docs/stacks.md %q: empty fragment", title)
		}
		out = append(out, s)
	}
	return out
}

// flattenSets turns a nested YAML mapping into "a.b=v" assignments.
func flattenSets(prefix string, m map[string]any) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		key := prefix + k
		if sub, ok := v.(map[string]any); ok {
			out = append(out, flattenSets(key+".", sub)...)
			continue
		}
		out = append(out, fmt.Sprintf("%s=%v", key, v))
	}
	return out
}

// TestStacksDoc: every stack fragment in docs/stacks.md with a template is
// what that validated template already says, key by key: the template with
// the fragment applied resolves to exactly the template (a key the template
// does not set, or sets otherwise, changes it). A fragment without a
// template (Megatron-LM, from its code) must load on a scenario.
func TestStacksDoc(t *testing.T) {
	secs := stackSections(t)
	if len(secs) < 5 {
		t.Fatalf("docs/stacks.md has %d stack sections, want torchtitan, Composer, fms-fsdp, DeepSpeed and Megatron-LM", len(secs))
	}
	for _, s := range secs {
		if s.template == "" {
			def, ok := scenarios.Example("default")
			if !ok {
				t.Fatal("no default example")
			}
			if _, err := scenarios.Load("default.yaml", def, s.sets); err != nil {
				t.Errorf("docs/stacks.md %q: the fragment does not load: %v", s.title, err)
			}
			continue
		}
		data, err := os.ReadFile(s.template)
		if err != nil {
			t.Errorf("docs/stacks.md %q: %v", s.title, err)
			continue
		}
		want, err := scenarios.Load(s.template, data, nil)
		if err != nil {
			t.Fatalf("%s: %v", s.template, err)
		}
		for _, set := range s.sets {
			got, err := scenarios.Load(s.template, data, []string{set})
			if err != nil {
				t.Errorf("docs/stacks.md %q: %s on %s: %v", s.title, set, s.template, err)
				continue
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("docs/stacks.md %q: %s is not what %s says", s.title, set, s.template)
			}
		}
	}
}

// stackBase is a stage-3 scenario without stack behaviour keys.
const stackBase = `version: 1
cluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}
model: {preset: llama3.1-8b}
parallelism: {dp: 8, zero_stage: 3}
`

// withoutParallelism drops the parallelism keys a fragment names: presets
// leave them to the user.
func withoutParallelism(sets []string) []string {
	return slices.DeleteFunc(slices.Clone(sets), func(s string) bool { return strings.HasPrefix(s, "parallelism.") })
}

// TestStackPresetsDoc: each section's preset (`stack: NAME`) fills in
// exactly its fragment's keys but parallelism, and a validation template
// with those keys deleted and the preset named instead resolves to the
// template: the presets carry what the templates validate.
func TestStackPresetsDoc(t *testing.T) {
	names := map[string]bool{}
	for _, s := range stackSections(t) {
		if s.preset == "" {
			// A stack zerosim has no preset for says so in its title
			// (its fragment is checked against its importer instead:
			// TestAccelerateStacksDoc).
			if !strings.HasSuffix(s.title, ", no preset") {
				t.Errorf("docs/stacks.md %q: no Preset line (or end the title with \", no preset\")", s.title)
			}
			continue
		}
		names[s.preset] = true
		// Both at the fragment's own stage (Megatron's 1): a stage the
		// stack does not run would add the loader's layout warning.
		par := slices.DeleteFunc(slices.Clone(s.sets), func(x string) bool { return !strings.HasPrefix(x, "parallelism.") })
		got, err := scenarios.Load("s.yaml", []byte(stackBase+"stack: "+s.preset+"\n"), par)
		if err != nil {
			t.Fatalf("stack %s: %v", s.preset, err)
		}
		want, err := scenarios.Load("s.yaml", []byte(stackBase), s.sets)
		if err != nil {
			t.Fatalf("docs/stacks.md %q by hand: %v", s.title, err)
		}
		got.Stack = ""
		if !reflect.DeepEqual(got, want) {
			t.Errorf("stack %s does not fill in the fragment of docs/stacks.md %q", s.preset, s.title)
		}
		if s.template == "" {
			continue
		}
		data, err := os.ReadFile(s.template)
		if err != nil {
			t.Fatal(err)
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		root := doc.Content[0]
		for _, set := range withoutParallelism(s.sets) {
			path, _, _ := strings.Cut(set, "=")
			sec, key, _ := strings.Cut(path, ".")
			m := mapValue(root, sec)
			if m == nil || mapValue(m, key) == nil {
				t.Fatalf("%s: no %s", s.template, path)
			}
			for i := 0; i < len(m.Content); i += 2 {
				if m.Content[i].Value == key {
					m.Content = append(m.Content[:i], m.Content[i+2:]...)
					break
				}
			}
		}
		root.Content = append([]*yaml.Node{{Kind: yaml.ScalarNode, Value: "stack"}, {Kind: yaml.ScalarNode, Value: s.preset}}, root.Content...)
		short, err := yaml.Marshal(&doc)
		if err != nil {
			t.Fatal(err)
		}
		tmpl, err := scenarios.Load(s.template, data, nil)
		if err != nil {
			t.Fatal(err)
		}
		viaPreset, err := scenarios.Load(s.template, short, nil)
		if err != nil {
			t.Fatalf("%s with stack %s: %v", s.template, s.preset, err)
		}
		viaPreset.Stack = ""
		if !reflect.DeepEqual(viaPreset, tmpl) {
			t.Errorf("%s: its stack keys replaced by stack: %s resolve otherwise", s.template, s.preset)
		}
	}
	for _, n := range scenarios.StackNames() {
		if !names[n] {
			t.Errorf("stack %s has no section in docs/stacks.md", n)
		}
	}
}

// mapValue is the value of key in the mapping node m, nil when absent.
func mapValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}
