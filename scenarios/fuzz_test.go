package scenarios

import (
	"errors"
	"testing"
)

// FuzzLoad checks that no input panics and that every error is a one-line
// *Error.
func FuzzLoad(f *testing.F) {
	for _, n := range ExampleNames() {
		b, _ := Example(n)
		f.Add(b)
	}
	for _, s := range []string{
		"",
		"version: 1\n",
		"[1, 2]",
		"a: &a [*a, *a]\nb: *a\n",
		"version: 1\n---\nversion: 1\n",
		"version: 1\ncluster: {nodes: 99999999999999999999, gpus_per_node: -1}\n",
		"version: 1\nmodel: {params: 1e400}\n",
		"version: 1\n<<: {cluster: {nodes: 1}}\n",
		"version: 1\nmodel:\n  layer_list:\n  - {name: a, tensors: [{name: t, shape: [99999999999, 99999999999]}]}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Load("f.yaml", data, nil)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T is not *Error: %v", err, err)
			}
			for _, c := range err.Error() {
				if c == '\n' {
					t.Fatalf("error is not one line: %q", err.Error())
				}
			}
			return
		}
		if s.Model.TotalParams() != int64(s.Model.Params) || s.N() != s.GPUs() {
			t.Fatalf("resolved scenario is inconsistent: %+v", s)
		}
	})
}
