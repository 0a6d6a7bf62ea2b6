package scenarios

import (
	"strings"
	"testing"
)

func TestCheckKeyPath(t *testing.T) {
	for _, tc := range []struct{ path, want string }{
		{"parallelism.k", ""},
		{"communication.bucket_size", ""},
		{"model.layer_list[0].params", ""},
		{"cluster.link_overrides[1].bandwidth", ""},
		{"parallelism.kk", `key path "parallelism.kk": unknown key "kk" in parallelism (did you mean "k"?)`},
		{"paralelism.k", `key path "paralelism.k": unknown key "paralelism" at the top level (did you mean "parallelism"?)`},
		{"parallelism.k.x", `key path "parallelism.k.x": parallelism.k holds a value, not keys (set parallelism.k itself)`},
		{"cluster.gpu_memory.x", `key path "cluster.gpu_memory.x": cluster.gpu_memory holds a value, not keys (set cluster.gpu_memory itself)`},
		{"parallelism[0].k", `key path "parallelism[0].k": parallelism is not a list (drop the [i])`},
		{"parallelism..k", `bad key path "parallelism..k" (use dotted names such as cluster.intra.bandwidth, with [i] for list items)`},
	} {
		got := ""
		if err := CheckKeyPath(tc.path); err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("CheckKeyPath(%q) = %q, want %q", tc.path, got, tc.want)
		}
	}
}

func TestCheckSyntax(t *testing.T) {
	if err := CheckSyntax("s.yaml", []byte(baseYAML)); err != nil {
		t.Errorf("base scenario: %v", err)
	}
	err := CheckSyntax("s.yaml", []byte(strings.Replace(baseYAML, "dp: 8", "dp: [8", 1)))
	if err == nil || !strings.HasPrefix(err.Error(), "s.yaml:") {
		t.Errorf("syntax error: %v, want an s.yaml: error", err)
	}
}
