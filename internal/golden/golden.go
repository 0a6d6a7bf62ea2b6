// Package golden compares test output with golden files: a mismatch fails
// with a line diff and leaves the output beside the golden file as
// NAME.got, so it can be inspected, diffed with any tool, or accepted with
// the test's -update flag. CheckBlocks checks the generated blocks of a
// hand-written document, CheckQuotes the figures its prose quotes. It is
// used by tests only.
package golden

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
)

// Check compares got with the golden file at path. With update it rewrites
// the file instead. On a mismatch it writes got to path+".got" and reports a
// diff; on a match it removes a stale path+".got".
func Check(t testing.TB, path string, got []byte, update bool) {
	t.Helper()
	if update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	gotPath := path + ".got"
	if bytes.Equal(got, want) {
		_ = os.Remove(gotPath)
		return
	}
	if err := os.WriteFile(gotPath, got, 0o644); err != nil {
		t.Errorf("writing %s: %v", gotPath, err)
	}
	t.Errorf("output differs from %s (got written to %s; -update accepts it):\n%s", path, gotPath, Diff(want, got))
}

// maxLines caps each side of a diff.
const maxLines = 40

// Diff describes how got differs from want, line by line: the lines both
// share at the start and end are skipped, the rest is shown as "-want" and
// "+got" lines (at most maxLines of each) under the line number where they
// start. It returns "" when they are equal.
func Diff(want, got []byte) string {
	if bytes.Equal(want, got) {
		return ""
	}
	w, g := strings.SplitAfter(string(want), "\n"), strings.SplitAfter(string(got), "\n")
	pre := 0
	for pre < len(w) && pre < len(g) && w[pre] == g[pre] {
		pre++
	}
	suf := 0
	for suf < len(w)-pre && suf < len(g)-pre && w[len(w)-1-suf] == g[len(g)-1-suf] {
		suf++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "@@ line %d: %d lines of want, %d of got differ @@\n", pre+1, len(w)-pre-suf, len(g)-pre-suf)
	side := func(sign string, lines []string) {
		for i, l := range lines {
			if i == maxLines {
				fmt.Fprintf(&b, "%s… %d more lines\n", sign, len(lines)-maxLines)
				break
			}
			if !strings.HasSuffix(l, "\n") {
				l += "\n\\ no newline at end\n"
			}
			b.WriteString(sign + l)
		}
	}
	side("-", w[pre:len(w)-suf])
	side("+", g[pre:len(g)-suf])
	return b.String()
}

// Splice returns doc with block between the lines begin and end (begin's
// line ending included), for a generated part of a hand-written document;
// an error names the markers when doc lacks them or has them in the wrong
// order.
func Splice(doc, begin, end, block string) (string, error) {
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i+len(begin) {
		return "", fmt.Errorf("no %q ... %q markers in order", begin, end)
	}
	return doc[:i+len(begin)] + block + doc[j:], nil
}

// Block is a generated part of a hand-written document: Text goes between
// the lines Begin and End.
type Block struct{ Begin, End, Text string }

// CheckBlocks is Check for a hand-written document at path whose blocks
// are generated: the document with each block's text spliced in must equal
// the file (with update, it is rewritten so).
func CheckBlocks(t testing.TB, path string, update bool, blocks ...Block) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for _, b := range blocks {
		if doc, err = Splice(doc, b.Begin, b.End, b.Text); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	Check(t, path, []byte(doc), update)
}

// CheckQuotes is for figures a hand-written document quotes in its prose:
// each quote, whitespace-normalized, must appear in the document at path
// (likewise normalized, so a quote may span lines). A missing quote fails
// t naming the line where the document's text shares the quote's longest
// start, what it says there, and from, the command or code the figures
// come from.
func CheckQuotes(t testing.TB, path, from string, quotes ...string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The document's words, each with its line number.
	var words []string
	var lines []int
	for i, l := range strings.Split(string(data), "\n") {
		for _, w := range strings.Fields(l) {
			words, lines = append(words, w), append(lines, i+1)
		}
	}
	doc := strings.Join(words, " ")
	for _, q := range quotes {
		want := strings.Fields(q)
		if strings.Contains(doc, strings.Join(want, " ")) {
			continue
		}
		// The position sharing the most leading words with the quote.
		at, best := -1, 0
		for i := range words {
			n := 0
			for n < len(want) && i+n < len(words) && words[i+n] == want[n] {
				n++
			}
			if n > best {
				at, best = i, n
			}
		}
		if at < 0 {
			t.Errorf("%s does not say %q (from %s), nor anything that starts like it", path, q, from)
			continue
		}
		says := strings.Join(words[at:min(at+len(want), len(words))], " ")
		t.Errorf("%s:%d says\n\t%q\nwhere %s gives\n\t%q\nchange the document to the latter", path, lines[at], says, from, strings.Join(want, " "))
	}
}
