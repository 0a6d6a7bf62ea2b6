package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// MaxAliasNodes bounds how many nodes alias expansion may produce in one
// file (a "billion laughs" document expands to far more).
const MaxAliasNodes = 10000

// MaxDepth bounds how deeply mappings and lists nest. The deepest key of the
// format (model.layer_list[i].tensors[j].shape[k]) is 7 levels down; a
// document nested thousands deep only costs time and memory.
const MaxDepth = 64

// checkDepth returns an error at the first node nested deeper than MaxDepth.
func (l *loader) checkDepth(n *yaml.Node, depth int) error {
	if depth > MaxDepth {
		return l.errAt(n, fmt.Sprintf("mappings and lists nest more than %d levels deep here (a scenario nests at most 7; flatten the document)", MaxDepth))
	}
	for _, c := range n.Content {
		if err := l.checkDepth(c, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// MaxFileSize bounds the size of a scenario file in bytes.
const MaxFileSize = 4 << 20

// ReadLimited reads a scenario from r, at most MaxFileSize bytes: an endless
// stream (/dev/zero, a pipe that never closes) is an error once it passes
// the limit instead of filling memory. file names the input in errors.
func ReadLimited(file string, r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
	if err != nil {
		return nil, &Error{File: file, Msg: oneLine("cannot read the input: " + err.Error())}
	}
	if len(data) > MaxFileSize {
		return nil, &Error{File: file, Msg: fmt.Sprintf("the input is larger than %d bytes (a scenario is a few kilobytes; is this the right file?)", MaxFileSize)}
	}
	return data, nil
}

// syntaxRE matches yaml.v3's syntax errors, "yaml: line N: message".
var syntaxRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parseDoc parses data into the root mapping of its single document.
func (l *loader) parseDoc(data []byte) (*yaml.Node, error) {
	root, err := l.parseDoc1(data)
	if err != nil || !hasKey(root, "version") {
		// Another tool's config given where a scenario goes said
		// "rope_scaling has no value", "version is missing" or "invalid
		// YAML: did not find expected <document start>".
		if msg := foreignConfig(l.file, data, root); msg != "" {
			return nil, l.fileErr(msg)
		}
	}
	return root, err
}

func (l *loader) parseDoc1(data []byte) (*yaml.Node, error) {
	if len(data) > MaxFileSize {
		return nil, l.fileErr(fmt.Sprintf("the file has %d bytes, more than %d (a scenario is a few kilobytes; is this the right file?)", len(data), MaxFileSize))
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, l.fileErr("empty file (a scenario starts with \"version: 1\")")
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, l.fileErr("no YAML document, only comments (a scenario starts with \"version: 1\")")
		}
		return nil, l.syntaxErr(data, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &Error{File: l.file, Line: max(extra.Line, 1), Col: max(extra.Column, 1),
			Msg: "a second YAML document starts here (a scenario file holds exactly one document)"}
	} else if !errors.Is(err, io.EOF) {
		return nil, l.syntaxErr(data, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, l.fileErr("no YAML document (a scenario starts with \"version: 1\")")
	}
	root := doc.Content[0]
	if root.Kind == yaml.AliasNode && root.Alias != nil {
		root = root.Alias
	}
	if root.Kind != yaml.MappingNode {
		return nil, &Error{File: l.file, Line: max(root.Line, 1), Col: max(root.Column, 1),
			Msg: fmt.Sprintf("the document is %s, not a mapping (a scenario is a mapping that starts with \"version: 1\")", describe(root))}
	}
	if isCalibration(root) {
		// It said `unknown key "compute" at the top level` or `unknown
		// key "method" in memory`: true, and no help.
		return nil, l.fileErr("a calibration file (zerosim calibrate writes it), not a scenario: name it in a scenario as communication.calibration: " + l.file)
	}
	return root, nil
}

// isCalibration reports whether the mapping root is shaped like a
// calibration file, not a scenario: no cluster, and a key only a
// calibration has at its top level (hardware, params, curves, compute)
// or a memory part with a method.
func isCalibration(root *yaml.Node) bool {
	calib := false
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch k.Value {
		case "cluster", "model", "parallelism":
			return false
		case "hardware", "params", "curves", "compute":
			calib = true
		case "memory":
			for j := 0; v.Kind == yaml.MappingNode && j+1 < len(v.Content); j += 2 {
				if v.Content[j].Value == "method" || v.Content[j].Value == "measured_bytes" {
					calib = true
				}
			}
		}
	}
	return calib
}

func (l *loader) syntaxErr(data []byte, err error) error {
	msg := err.Error()
	if strings.HasSuffix(msg, "control characters are not allowed") {
		// It gave no position: for a binary file (an executable, a
		// checkpoint) nothing to fix in it, else the byte to delete.
		if bytes.IndexByte(data[:min(len(data), 512)], 0) >= 0 {
			return l.fileErr("a binary file, not a scenario (check the path: a scenario is a YAML text file starting with \"version: 1\")")
		}
		for i, b := range data {
			if b < ' ' && b != '\t' && b != '\n' && b != '\r' || b == 0x7f {
				line, col := lineCol(data, i)
				return &Error{File: l.file, Line: line, Col: col, Msg: fmt.Sprintf("invalid YAML: control character %q (delete it)", rune(b))}
			}
		}
	}
	if line, col, what, ok := notUTF8(data); ok {
		return &Error{File: l.file, Line: line, Col: col, Msg: "invalid YAML: " + what}
	}
	if line, col, tab, what, ok := yamlErrLine(data, msg); ok {
		if tab > 0 {
			// yaml.v3 says "found character that cannot start any
			// token", which does not name the tab an editor hides.
			return &Error{File: l.file, Line: line, Col: tab, Msg: "invalid YAML: " + tabInIndent}
		}
		return &Error{File: l.file, Line: line, Col: col, Msg: "invalid YAML: " + what + " (fix the YAML syntax on this line)"}
	}
	return l.fileErr("invalid YAML: " + strings.TrimPrefix(msg, "yaml: ") + " (fix the YAML syntax)")
}

// notUTF8 locates data's first byte that is not UTF-8, which yaml.v3's
// reader refuses without a position on any line, and says what is wrong.
func notUTF8(data []byte) (line, col int, what string, ok bool) {
	i := invalidUTF8(data)
	if i < 0 {
		return 0, 0, "", false
	}
	line, col = lineCol(data, i)
	return line, col, fmt.Sprintf("byte %#02x is not UTF-8 (save the file as UTF-8 text)", data[i]), true
}

// invalidUTF8 is the offset of data's first byte that does not start a
// valid UTF-8 sequence, -1 when data is UTF-8.
func invalidUTF8(data []byte) int {
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

// tabInIndent is the error for a tab that yaml.v3 refused in a line's
// indentation.
const tabInIndent = "a tab in the indentation (YAML indents with spaces only: replace the tab with spaces)"

// yamlErrLine reads yaml.v3's "yaml: line N: what" (msg) against data:
// the line of a tab in the indentation that caused the error (tabAt) with
// tab its column; else where the problem lies (yamlProblem), at column
// col; else line N, column 1. tab is 0 when there is no tab. ok is false
// when msg names no line of 1 or more; what is then the text after
// "line N: ", "" when msg has no line at all.
func yamlErrLine(data []byte, msg string) (line, col, tab int, what string, ok bool) {
	m := syntaxRE.FindStringSubmatch(msg)
	if m == nil {
		// yaml.v3 names no line for an error on the first: its
		// parser.fail (yaml.go at v3.0.1) writes "line N: " only when
		// the mark's line is not 0, the first line's index.
		// Its reader's errors (bytes that are not UTF-8, control
		// characters) have no line on any line.
		what, ok := strings.CutPrefix(msg, "yaml: ")
		if !ok || strings.Contains(what, "\n") || strings.HasPrefix(what, "unmarshal") || len(data) == 0 ||
			invalidUTF8(data) >= 0 || strings.HasSuffix(what, "control characters are not allowed") {
			return 0, 0, 0, "", false
		}
		m = []string{msg, "1", what}
	}
	n, err := strconv.Atoi(m[1])
	if err != nil || n < 1 {
		return 0, 0, 0, m[2], false
	}
	if tl, col := tabAt(data, n, m[2]); col > 0 {
		return tl, 1, col, m[2], true
	}
	if pl, pc := yamlProblem(data, msg, n); pl > 0 {
		return pl, pc, 0, m[2], true
	}
	return n, 1, 0, m[2], true
}

// yamlSyntax is the one line for an importer's YAML file (Accelerate's
// config, an llm-foundry training YAML) that yaml.v3 cannot parse:
// "FILE:LINE:COL: not valid YAML: what (fix)", at column 1 of the line
// yaml.v3 names (it gives no column), or at a tab in its indentation,
// which is named. Before, Accelerate's said "FILE:LINE:" and
// llm-foundry's "FILE: not valid YAML: yaml: line N: …".
func yamlSyntax(file string, data []byte, err error, fix string) error {
	msg := err.Error()
	if line, col, what, ok := notUTF8(data); ok {
		return fmt.Errorf("%s:%d:%d: not valid YAML: %s", file, line, col, what)
	}
	line, col, tab, what, ok := yamlErrLine(data, msg)
	switch {
	case tab > 0:
		return fmt.Errorf("%s:%d:%d: not valid YAML: %s", file, line, tab, tabInIndent)
	case ok:
		return fmt.Errorf("%s:%d:%d: not valid YAML: %s (%s)", file, line, col, oneLine(what), fix)
	case what == "":
		what = strings.TrimPrefix(msg, "yaml: ")
	}
	return fmt.Errorf("%s: not valid YAML: %s (%s)", file, oneLine(what), fix)
}

// tabAt is the line and column of a tab in the indentation that made
// yaml.v3's error msg at line n: on that line, or, for its "found a tab
// character that violates indentation", which names the line before the
// tab's, on the next. The column is 0 when there is none.
func tabAt(data []byte, n int, msg string) (line, col int) {
	if col := indentTab(data, n); col > 0 {
		return n, col
	}
	if strings.Contains(msg, "tab character") {
		if col := indentTab(data, n+1); col > 0 {
			return n + 1, col
		}
	}
	return n, 0
}

// indentTab is the column of the first tab in the indentation of line n
// (1-based) of data, 0 when there is none.
func indentTab(data []byte, n int) int {
	lines := bytes.SplitN(data, []byte("\n"), n+1)
	if n > len(lines) {
		return 0
	}
	line := lines[n-1]
	indent := line[:len(line)-len(bytes.TrimLeft(line, " \t"))]
	return bytes.IndexByte(indent, '\t') + 1
}

// expander copies a node tree, replacing aliases by copies of their anchors
// and merge keys ("<<") by the merged pairs, within MaxAliasNodes.
type expander struct {
	l        *loader
	active   map[*yaml.Node]bool // anchors being expanded (cycle check)
	inAlias  int                 // depth of alias expansion
	expanded int                 // nodes produced under aliases
	top      *yaml.Node          // outermost alias being expanded
}

func (x *expander) copy(n *yaml.Node) (*yaml.Node, error) {
	if n.Kind == yaml.AliasNode {
		t := n.Alias
		if t == nil {
			return nil, x.l.errAt(n, "alias without an anchor (define the anchor with &name first)")
		}
		if x.active[t] {
			return nil, x.l.errAt(n, fmt.Sprintf("alias *%s refers to a node that contains it (recursive aliases are not allowed)", n.Value))
		}
		if x.inAlias == 0 {
			x.top = n
		}
		x.active[t] = true
		x.inAlias++
		c, err := x.copy(t)
		x.inAlias--
		delete(x.active, t)
		return c, err
	}
	if x.inAlias > 0 {
		x.expanded++
		if x.expanded > MaxAliasNodes {
			return nil, x.l.errAt(x.top, fmt.Sprintf("aliases expand to more than %d nodes (expand fewer aliases; a scenario never needs that many)", MaxAliasNodes))
		}
	}
	// Of the style only whether the tag was written ("!!float 2"), which
	// the decoder names.
	c := &yaml.Node{Kind: n.Kind, Tag: n.Tag, Value: n.Value, Line: n.Line, Column: n.Column, Style: n.Style & yaml.TaggedStyle}
	switch n.Kind {
	case yaml.SequenceNode:
		c.Content = make([]*yaml.Node, 0, len(n.Content))
		for _, e := range n.Content {
			ce, err := x.copy(e)
			if err != nil {
				return nil, err
			}
			c.Content = append(c.Content, ce)
		}
	case yaml.MappingNode:
		var merges []*yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
				merges = append(merges, v)
				continue
			}
			ck, err := x.copy(k)
			if err != nil {
				return nil, err
			}
			cv, err := x.copy(v)
			if err != nil {
				return nil, err
			}
			c.Content = append(c.Content, ck, cv)
		}
		for _, m := range merges {
			if err := x.merge(c, m); err != nil {
				return nil, err
			}
		}
	}
	return c, nil
}

// merge appends the pairs of the mapping (or list of mappings) m to dst,
// skipping keys dst already has.
func (x *expander) merge(dst, m *yaml.Node) error {
	cm, err := x.copy(m)
	if err != nil {
		return err
	}
	var maps []*yaml.Node
	switch cm.Kind {
	case yaml.MappingNode:
		maps = []*yaml.Node{cm}
	case yaml.SequenceNode:
		maps = cm.Content
	}
	for _, mm := range maps {
		if mm.Kind != yaml.MappingNode {
			return x.l.errAt(m, "a merge key (<<) needs a mapping or a list of mappings (use <<: *anchor)")
		}
		for i := 0; i+1 < len(mm.Content); i += 2 {
			if mm.Content[i].Kind == yaml.ScalarNode && findKey(dst, mm.Content[i].Value) < 0 {
				dst.Content = append(dst.Content, mm.Content[i], mm.Content[i+1])
			}
		}
	}
	return nil
}

// findKey returns the index of key name in mapping m's Content, or -1.
func findKey(m *yaml.Node, name string) int {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Kind == yaml.ScalarNode && m.Content[i].Value == name {
			return i
		}
	}
	return -1
}

// checkKeys rejects non-string keys, duplicate keys and keys without a value.
func (l *loader) checkKeys(n *yaml.Node) error {
	switch n.Kind {
	case yaml.SequenceNode:
		for _, e := range n.Content {
			if err := l.checkKeys(e); err != nil {
				return err
			}
		}
	case yaml.MappingNode:
		seen := map[string]*yaml.Node{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode || k.Tag != "!!str" || k.Value == "" {
				return l.errAt(k, fmt.Sprintf("key %s is not a name (use a plain key such as nodes)", describe(k)))
			}
			if p, ok := seen[k.Value]; ok {
				where := "earlier"
				if p.Line > 0 {
					where = fmt.Sprintf("at line %d", p.Line)
				}
				return l.errAt(k, fmt.Sprintf("key %q appears twice (it is already set %s; keep one)", k.Value, where))
			}
			seen[k.Value] = k
			if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
				return l.errAt(k, fmt.Sprintf("%s has no value (write a value or delete the key)", k.Value))
			}
			if err := l.checkKeys(v); err != nil {
				return err
			}
		}
	}
	return nil
}

// entry is one key of the final tree: its key node (nil for list items) and
// value node.
type entry struct {
	key, val *yaml.Node
}

// index records every path of the tree ("cluster.nodes",
// "cluster.placement[1]", "model.layer_list[0].params").
func (l *loader) index(n *yaml.Node, path string) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			p := joinPath(path, n.Content[i].Value)
			l.idx[p] = entry{n.Content[i], n.Content[i+1]}
			l.index(n.Content[i+1], p)
		}
	case yaml.SequenceNode:
		for i, e := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			l.idx[p] = entry{nil, e}
			l.index(e, p)
		}
	}
}

func joinPath(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// leaf is the last key of a path, without list indices: "node" for
// "cluster.link_overrides[1].node", "placement" for "cluster.placement[0]".
func leaf(path string) string {
	if i := strings.IndexByte(path, '['); i >= 0 && !strings.Contains(path[i:], ".") {
		path = path[:i]
	}
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[i+1:]
	}
	return path
}

// clip is s for a one-line message: control characters escaped, long
// names shortened.
func clip(s string) string {
	s = ttName(s) // control characters escaped: a key may hold a newline
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}
