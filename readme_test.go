package zerosim_test

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite README.md's generated sections")

const refStart, refEnd = "<!-- REFERENCE: generated from docs/scenario-format.md by go test . -update -->\n", "<!-- END REFERENCE -->\n"

// reference is docs/scenario-format.md from "## Units" on, one heading level
// deeper, as the README shows it.
func reference(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("docs/scenario-format.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, "\n## Units")
	if i < 0 {
		t.Fatal(`docs/scenario-format.md has no "## Units" section`)
	}
	var out strings.Builder
	for _, line := range strings.SplitAfter(doc[i+1:], "\n") {
		if strings.HasPrefix(line, "#") {
			line = "#" + line
		}
		out.WriteString(line)
	}
	return out.String()
}

// The README carries the scenario format reference verbatim, so the two
// cannot drift apart.
func TestREADMEReference(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	i, j := strings.Index(readme, refStart), strings.Index(readme, refEnd)
	want := reference(t)
	if *update {
		if i < 0 || j < i {
			i = strings.Index(readme, "<!-- REFERENCE -->\n")
			if i < 0 {
				t.Fatal("README.md has no reference markers")
			}
			readme = readme[:i] + refStart + refEnd + readme[i+len("<!-- REFERENCE -->\n"):]
			i, j = strings.Index(readme, refStart), strings.Index(readme, refEnd)
		}
		readme = readme[:i+len(refStart)] + want + readme[j:]
		if err := os.WriteFile("README.md", []byte(readme), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if i < 0 || j < i {
		t.Fatal("README.md lacks the generated reference section; run go test . -update")
	}
	if got := readme[i+len(refStart) : j]; got != want {
		t.Error("README.md's scenario reference differs from docs/scenario-format.md; run go test . -update")
	}
}

// The README says how to get a binary, that the first build takes minutes,
// and what go run does to exit codes.
func TestREADMEInstall(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for _, want := range []string{"## Getting a `zerosim` binary", "go install ./cmd/zerosim", "go build -o zerosim ./cmd/zerosim",
		"zerosim --version", "expect a few minutes", "bad input (exit code 2) comes back\n  as 1"} {
		if !strings.Contains(readme, want) {
			t.Errorf("README.md lacks %q", want)
		}
	}
}
