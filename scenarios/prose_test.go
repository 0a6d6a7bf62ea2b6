package scenarios

import "testing"

func TestListAndOr(t *testing.T) {
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
		if got := ListAnd(c.xs); got != c.and {
			t.Errorf("ListAnd(%q) = %q, want %q", c.xs, got, c.and)
		}
		if got := ListOr(c.xs); got != c.or {
			t.Errorf("ListOr(%q) = %q, want %q", c.xs, got, c.or)
		}
	}
}
