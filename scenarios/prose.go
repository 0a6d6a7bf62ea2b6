package scenarios

import "strings"

// ListAnd joins xs as prose does: "", "a", "a and b", "a, b and c". It is
// the one list joiner of zerosim's messages and reports: scenarios, sweep,
// reports and cmd/zerosim all import scenarios (the lowest package whose
// messages join lists; topology, below it, may import nothing else).
func ListAnd(xs []string) string { return joinList(xs, " and ") }

// ListOr joins xs as prose does: "", "a", "a or b", "a, b or c".
func ListOr(xs []string) string { return joinList(xs, " or ") }

func joinList(xs []string, last string) string {
	if len(xs) < 2 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + last + xs[len(xs)-1]
}
