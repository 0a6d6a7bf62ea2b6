package scenarios

import (
	"strings"
	"testing"
)

// TestKeepLogitsWarnsWhenItCountsNothing: training.keep_logits adds the
// output head's logits to its activations, so it warns, naming why, where
// there are none to add to (review s19 B15: it was dropped silently), and
// says nothing where it counts.
func TestKeepLogitsWarnsWhenItCountsNothing(t *testing.T) {
	def, _ := Example("default")
	tiny, _ := Example("seed002-tiny")
	for _, c := range []struct {
		data []byte
		sets []string
		want string
	}{
		{def, []string{"training.keep_logits=fp32"}, ""},
		{def, []string{"training.keep_logits=fp32", "memory.activations=false"}, "memory.activations is false"},
		{tiny, []string{"training.keep_logits=fp32"}, "not a transformer"},
	} {
		s, err := Load("s.yaml", c.data, c.sets)
		if err != nil {
			t.Fatal(err)
		}
		var got string
		for _, w := range s.Warnings {
			if strings.Contains(w, "keep_logits counts nothing") {
				got = w
			}
		}
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%q: warning %q, want one with %q", c.sets, got, c.want)
		}
	}
}
