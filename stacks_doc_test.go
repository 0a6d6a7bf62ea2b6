package zerosim_test

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/zerosim/zerosim/scenarios"
)

// stackSection is one "## " section of docs/stacks.md: its template (empty
// when the fragment comes from a stack's code, not a validated run) and its
// YAML fragment as --set assignments.
type stackSection struct {
	title, template string
	sets            []string
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
	for k, v := range m {
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
