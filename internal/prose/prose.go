// Package prose joins words into the lists zerosim's messages and reports
// write: "a", "a and b", "a, b and c" (And) and the same with "or" (Or).
// It is the one joiner shared by scenarios, sweep, reports and cmd/zerosim,
// which cannot all import one another.
package prose

import "strings"

// And joins xs as prose does: "", "a", "a and b", "a, b and c".
func And(xs []string) string { return join(xs, " and ") }

// Or joins xs as prose does: "", "a", "a or b", "a, b or c".
func Or(xs []string) string { return join(xs, " or ") }

func join(xs []string, last string) string {
	if len(xs) < 2 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + last + xs[len(xs)-1]
}
