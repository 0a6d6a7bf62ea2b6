package zero

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestValidationMissesQuoteTheTable: docs/validation.md's known misses said
// the 13B rows on one node "run 11-14 % slower than predicted" while its
// table printed +10.6 % to +13.9 % (qa22 L2): the paragraph's range is
// the lowest and highest error column of those rows, as the table prints
// them.
func TestValidationMissesQuoteTheTable(t *testing.T) {
	b, err := os.ReadFile("../docs/validation.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "## llm-foundry-mpt-a100-40gb-seq\n")
	end := strings.Index(doc[start+1:], "\n## ")
	if start < 0 || end < 0 {
		t.Fatal("no llm-foundry-mpt-a100-40gb-seq section")
	}
	var errs []string
	row := regexp.MustCompile(`(?m)^\| mpt-13b, 8 GPUs [^|]*\| \d+ \| \d+ \| ([+-]\d+\.\d %) \|`)
	for _, m := range row.FindAllStringSubmatch(doc[start:start+1+end], -1) {
		errs = append(errs, m[1])
	}
	if len(errs) < 2 {
		t.Fatalf("%d mpt-13b 8-GPU rows in the table", len(errs))
	}
	num := func(s string) float64 {
		var f float64
		if _, err := fmt.Sscan(strings.TrimSuffix(s, " %"), &f); err != nil {
			t.Fatal(err)
		}
		return f
	}
	lo, hi := errs[0], errs[0]
	for _, e := range errs {
		if num(e) < num(lo) {
			lo = e
		}
		if num(e) > num(hi) {
			hi = e
		}
	}
	want := "the 13B rows on one node run slower than predicted at every sequence length, errors of " + lo + " to " + hi + " (llm-foundry-mpt-a100-40gb-seq)"
	if !strings.Contains(doc, want) {
		t.Errorf("docs/validation.md's known misses do not say %q (the table's %v)", want, errs)
	}
}
