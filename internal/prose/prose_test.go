package prose

import "testing"

func TestAndOr(t *testing.T) {
	for _, c := range []struct {
		xs      []string
		and, or string
	}{
		{nil, "", ""},
		{[]string{"a"}, "a", "a"},
		{[]string{"a", "b"}, "a and b", "a or b"},
		{[]string{"a", "b", "c"}, "a, b and c", "a, b or c"},
		{[]string{"x (k)", "", "z"}, "x (k),  and z", "x (k),  or z"},
	} {
		if got := And(c.xs); got != c.and {
			t.Errorf("And(%q) = %q, want %q", c.xs, got, c.and)
		}
		if got := Or(c.xs); got != c.or {
			t.Errorf("Or(%q) = %q, want %q", c.xs, got, c.or)
		}
	}
}
