package scenarios

import (
	"strings"
	"testing"
)

// TestYAMLTabNamed: a tab in a YAML file's indentation is named, at its
// line and column, with the fix; yaml.v3 says "found character that cannot
// start any token" (a scenario) or "found a tab character that violates
// indentation" at the line before the tab (Accelerate, llm-foundry), and
// Accelerate's and llm-foundry's syntax errors had no column ("c.yaml:13:",
// "mpt.yaml: not valid YAML: yaml: line 5: …").
func TestYAMLTabNamed(t *testing.T) {
	const tab = "a tab in the indentation (YAML indents with spaces only: replace the tab with spaces)"
	for _, c := range []struct {
		name string
		err  func() error
		want string
	}{
		{"scenario, key", func() error {
			_, err := Load("s.yaml", []byte("version: 1\ncluster:\n\tnodes: 2\n"), nil)
			return err
		}, "s.yaml:3:1: invalid YAML: " + tab},
		{"scenario, after spaces", func() error {
			_, err := Load("s.yaml", []byte("version: 1\ncluster:\n  nodes: 2\n  \tgpus_per_node: 8\n"), nil)
			return err
		}, "s.yaml:4:3: invalid YAML: " + tab},
		{"accelerate", func() error {
			_, err := ImportAccelerate("c.yaml", []byte("distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: FULL_SHARD\n\tfsdp_offload_params: false\n"), AccelerateOptions{})
			return err
		}, "c.yaml:4:1: not valid YAML: " + tab},
		{"llm-foundry", func() error {
			_, err := ImportLLMFoundry("mpt.yaml", []byte("model:\n  name: mpt_causal_lm\n\td_model: 4096\n"), LLMFoundryOptions{})
			return err
		}, "mpt.yaml:3:1: not valid YAML: " + tab},
		// Not a tab: the bracket left open, yaml.v3's reason.
		{"llm-foundry, bracket", func() error {
			_, err := ImportLLMFoundry("mpt.yaml", []byte("model: [\n  name: x\n"), LLMFoundryOptions{})
			return err
		}, "mpt.yaml:1:8: not valid YAML: did not find expected ',' or ']' (fix the file)"},
		// A byte that is not UTF-8: yaml.v3's reader names no line, on
		// any line (it read "mpt.yaml:1:1" or no position at all).
		{"llm-foundry, not UTF-8", func() error {
			_, err := ImportLLMFoundry("mpt.yaml", []byte("model:\n  name: mpt\xff\n"), LLMFoundryOptions{})
			return err
		}, "mpt.yaml:2:12: not valid YAML: byte 0xff is not UTF-8 (save the file as UTF-8 text)"},
	} {
		err := c.err()
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "cannot start any token") {
			t.Errorf("%s: %v names no tab", c.name, err)
		}
	}
}

// TestYAMLControlCharacter: yaml.v3's "control characters are not
// allowed" had no position: a binary file given as a scenario is named as
// one, and a stray control character is located.
func TestYAMLControlCharacter(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"\x7fELF\x02\x01\x01\x00\x00\x00", `b.yaml: a binary file, not a scenario (check the path: a scenario is a YAML text file starting with "version: 1")`},
		{"version: 1\nname: a\x07b\n", `b.yaml:2:8: invalid YAML: control character '\a' (delete it)`},
		// The column counts characters, as yaml.v3's own do (Node.Column
		// of b in "a: [é, b]" is 8): the 2-byte é made it 13.
		{"version: 1\nname: héllo\x07\n", `b.yaml:2:12: invalid YAML: control character '\a' (delete it)`},
	} {
		_, err := Load("b.yaml", []byte(c.in), nil)
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: %v, want %q", c.in, err, c.want)
		}
	}
}
