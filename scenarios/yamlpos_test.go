package scenarios

import (
	"strings"
	"testing"
)

// editLine returns data with its 1-based line n replaced by s.
func editLine(t *testing.T, data []byte, n int, s string) []byte {
	t.Helper()
	lines := strings.Split(string(data), "\n")
	if n > len(lines) {
		t.Fatalf("no line %d", n)
	}
	lines[n-1] = s
	return []byte(strings.Join(lines, "\n"))
}

// TestYAMLSyntaxPosition: yaml.v3's "line N" of a parser error is the
// 0-based start of the enclosing block or flow collection (decode.go's
// fail adds 1 only for scanner errors at v3.0.1), so zerosim named a
// comment nine lines above a misindented key, or the line before an
// unclosed bracket, always at column 1 (qa22 M1, qa21 M1). It now names
// the first line whose prefix of the file fails to parse as the whole file
// does, at the bracket or quote left open there, else at its first
// character.
func TestYAMLSyntaxPosition(t *testing.T) {
	def, ok := Example("default")
	if !ok {
		t.Fatal("no default example")
	}
	if got := strings.Split(string(def), "\n")[10]; got != "  gpus_per_node: 8" {
		t.Fatalf("default line 11 is %q: the cases below edit it", got)
	}
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		// Before: "s.yaml:2:1: …" (a comment line).
		{"misindented key", editLine(t, def, 11, " gpus_per_node: 8"),
			"s.yaml:11:2: invalid YAML: did not find expected key (fix the YAML syntax on this line)"},
		// Before: "s.yaml:2:1: …".
		{"misindented key at line 44", editLine(t, def, 44, " optimizer2: 2"),
			"s.yaml:44:2: invalid YAML: did not find expected key (fix the YAML syntax on this line)"},
		// Before: "s.yaml:9:1: …" ("cluster:").
		{"unclosed {", editLine(t, def, 10, "  nodes: {2"),
			"s.yaml:10:10: invalid YAML: did not find expected ',' or '}' (fix the YAML syntax on this line)"},
		// Before: "s.yaml:10:1: …".
		{"unclosed [", editLine(t, def, 11, "  gpus_per_node: [8"),
			"s.yaml:11:18: invalid YAML: did not find expected ',' or ']' (fix the YAML syntax on this line)"},
		// qa21's y11: before "s.yaml:5:1" (a blank line).
		{"unclosed { after blank lines", []byte("version: 1\nname: x\n\n\n\nmodel: {preset: llama2-7b\nparallelism: {dp: 16, zero_stage: 1}\n"),
			"s.yaml:6:8: invalid YAML: did not find expected ',' or '}' (fix the YAML syntax on this line)"},
		// qa21's y7: before "s.yaml:6:1" (a valid line).
		{"unclosed { after a block", []byte("version: 1\nname: x\ncluster:\n  nodes: 2\n  gpus_per_node: 8\n  gpu: B200\nmodel: {preset: llama2-7b\nparallelism: {dp: 16, zero_stage: 1}\n"),
			"s.yaml:7:8: invalid YAML: did not find expected ',' or '}' (fix the YAML syntax on this line)"},
		// qa22's ind2: before "s.yaml:3:1".
		{"misindented 4th line", []byte("version: 1\ncluster:\n  nodes: 2\n gpus: 3\n"),
			"s.yaml:4:2: invalid YAML: did not find expected key (fix the YAML syntax on this line)"},
		// A flow list closed on a later line is valid; the prefix that
		// ends inside it fails otherwise than the file.
		{"unclosed { after a multi-line list", []byte("version: 1\ncluster:\n  gpu_overrides: [{rank: 1, speed: 0.5},\n    {rank: 2, speed: 0.5}]\n  nodes: {2\n  x: 1\n"),
			"s.yaml:5:10: invalid YAML: did not find expected ',' or '}' (fix the YAML syntax on this line)"},
		// The '{' yaml.v3 expects closed, not the '[' before it.
		{"unclosed { in a list", []byte("version: 1\ncluster:\n  gpu_overrides: [{rank: 1, speed: 0.5\nmodel: {preset: llama2-7b}\n"),
			"s.yaml:3:19: invalid YAML: did not find expected ',' or '}' (fix the YAML syntax on this line)"},
		// A list left open two lines up: at its '['.
		{"list not closed", []byte("version: 1\ncluster:\n  gpu_overrides: [{rank: 1, speed: 0.5},\n    {rank: 2, speed: 0.5}\n  nodes: 2\n"),
			"s.yaml:3:18: invalid YAML: did not find expected ',' or ']' (fix the YAML syntax on this line)"},
		// A scanner error: at the quote left open.
		{"unclosed quote", []byte("version: 1\ncluster:\n  nodes: \"2\n  x: 1\n"),
			"s.yaml:3:10: invalid YAML: found unexpected end of stream (fix the YAML syntax on this line)"},
		{"unclosed [ at the end", []byte("version: 1\ncluster: [\n"),
			"s.yaml:2:10: invalid YAML: did not find expected node content (fix the YAML syntax on this line)"},
	} {
		_, err := Load("s.yaml", c.data, nil)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n got %v\nwant %s", c.name, err, c.want)
		}
	}
}
