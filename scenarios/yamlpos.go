package scenarios

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// yamlProblem is the line and column where yaml.v3's syntax error msg on
// data lies, (0, 0) when it cannot tell. yaml.v3's error names the
// enclosing block or flow collection's start, not the problem: its
// parser.fail (decode.go at v3.0.1) writes the context mark when there is
// one, and 0-based for parser errors (it adds 1 only for scanner errors).
// The problem is on the first line whose prefix of data (lines 1 to N)
// fails to parse with msg: before it the prefix parses, or fails
// otherwise, ending inside a flow collection that a later line closes.
// A search finds it in O(log lines) parses: prefix from−1 does not fail
// with msg (msg's own line, from, is where the context starts or after it,
// so no shorter prefix can fail with it: a 3.4 MB scenario broken near its
// end took 8.3 s to report when the search started at line 0), the whole
// file fails with msg, and each step keeps a prefix that does not fail
// with msg below one that does.
func yamlProblem(data []byte, msg string, from int) (line, col int) {
	lines := bytes.SplitAfter(data, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	ends := make([]int, len(lines)+1) // ends[k]: bytes in lines 1..k
	for i, l := range lines {
		ends[i+1] = ends[i] + len(l)
	}
	failsAs := func(k int) bool {
		err := parseAll(data[:ends[k]])
		return err != nil && err.Error() == msg
	}
	if len(lines) == 0 || !failsAs(len(lines)) {
		return 0, 0
	}
	// Gallop from the top (prefixes of 1, 2, 4, … lines past lo), then
	// bisect: the parses cost about twice the bytes up to the problem,
	// times log, not the whole file's each time.
	lo, hi := min(max(from-1, 0), len(lines)-1), len(lines)
	for step := 1; lo+step < hi; step *= 2 {
		if failsAs(lo + step) {
			hi = lo + step
			break
		}
		lo += step
	}
	for hi-lo > 1 {
		if mid := (lo + hi) / 2; failsAs(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return problemPos(data[:ends[hi]], hi, msg)
}

// parseAll parses every YAML document of data, the first error or nil.
func parseAll(data []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		if err := dec.Decode(&n); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// problemPos is where, in prefix (lines 1 to n of the file), a syntax
// error msg lies: for "did not find expected ',' or '}'" (or ']'), the last
// bracket of that kind left open, on any line (a flow collection spans
// lines); else the quote left open on line n; else the last bracket left
// open on line n; else line n's first character that is not a space.
// Columns count characters.
func problemPos(prefix []byte, n int, msg string) (line, col int) {
	type mark struct {
		r         rune
		line, col int
	}
	var stack []mark
	var quote mark // the open quote, r 0 outside quoted scalars
	line, col = 1, 0
	first := 0 // line n's first character that is not a space
	prev := '\n'
	s := string(prefix)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r == '\n' {
			line, col, prev = line+1, 0, r
			continue
		}
		col++
		if line == n && first == 0 && r != ' ' && r != '\t' && r != '\r' {
			first = col
		}
		switch {
		case quote.r == '"' && r == '\\' && i < len(s) && s[i] != '\n':
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
			col++
		case quote.r != 0:
			if r == quote.r && quote.r == '\'' && strings.HasPrefix(s[i:], "'") {
				i++
				col++
			} else if r == quote.r {
				quote.r = 0
			}
		case r == '#' && strings.ContainsRune(" \t\n", prev):
			if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
				i += j
			} else {
				i = len(s)
			}
		case strings.ContainsRune(" \t\n[{,:", prev) && (r == '"' || r == '\''):
			quote = mark{r, line, col}
		case strings.ContainsRune(" \t\n[{,:", prev) && (r == '{' || r == '['):
			stack = append(stack, mark{r, line, col})
		case (r == '}' || r == ']') && len(stack) > 0:
			stack = stack[:len(stack)-1]
		}
		prev = r
	}
	want := rune(0)
	switch {
	case strings.HasSuffix(msg, "'}'"):
		want = '{'
	case strings.HasSuffix(msg, "']'"):
		want = '['
	}
	for i := len(stack) - 1; want != 0 && i >= 0; i-- {
		if stack[i].r == want {
			return stack[i].line, stack[i].col
		}
	}
	if quote.r != 0 && quote.line == n {
		return n, quote.col
	}
	if k := len(stack); k > 0 && stack[k-1].line == n {
		return n, stack[k-1].col
	}
	return n, max(first, 1)
}
