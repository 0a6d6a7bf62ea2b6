package scenarios

import (
	"bytes"
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

// exampleOf is the name of the embedded example an input is, "" for any
// other: its file is named NAME.yaml, as ReadInput names an example
// (the command line gave no file, or an example's name and no such file
// exists), and its bytes are that example's. A position in it is one that
// "zerosim scenarios show NAME" prints.
func exampleOf(file string, data []byte) string {
	name, ok := strings.CutSuffix(file, ".yaml")
	if !ok {
		return ""
	}
	if b, ok := Example(name); ok && bytes.Equal(b, data) {
		return name
	}
	return ""
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
