package scenarios

import (
	"embed"
	"sort"
	"strings"
)

// DefaultExample is the example new users start from.
const DefaultExample = "default"

//go:embed examples/*.yaml
var examplesFS embed.FS

// ExampleNames lists the embedded examples, sorted.
func ExampleNames() []string {
	ents, err := examplesFS.ReadDir("examples")
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name(), ".yaml"); ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// Example returns the bytes of the embedded example name.
func Example(name string) ([]byte, bool) {
	if name == "" || strings.ContainsAny(name, "/\\.") {
		return nil, false
	}
	b, err := examplesFS.ReadFile("examples/" + name + ".yaml")
	if err != nil {
		return nil, false
	}
	return b, true
}
