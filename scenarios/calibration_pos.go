package scenarios

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// calNode is one key of a calibration file as parsed: its key node (nil
// for a list element) and its value node, whose position errors name.
type calNode struct{ key, val *yaml.Node }

// calIndex maps the key paths of a calibration file ("compute.method",
// "curves[1].sizes[3]") to their nodes, so that an error about a hand-
// edited value names its line and column in that file (qa20 M6: it named
// only the key path, and the scenario's communication.calibration key).
type calIndex map[string]calNode

func indexCalibration(root *yaml.Node) calIndex {
	idx := calIndex{}
	var walk func(n *yaml.Node, path string, depth int)
	walk = func(n *yaml.Node, path string, depth int) {
		for n.Kind == yaml.AliasNode && n.Alias != nil && depth < 64 {
			n, depth = n.Alias, depth+1
		}
		if depth > 64 {
			return
		}
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				p := k.Value
				if path != "" {
					p = path + "." + k.Value
				}
				if _, dup := idx[p]; !dup {
					idx[p] = calNode{k, v}
				}
				walk(v, p, depth+1)
			}
		case yaml.SequenceNode:
			for i, e := range n.Content {
				p := fmt.Sprintf("%s[%d]", path, i)
				idx[p] = calNode{nil, e}
				walk(e, p, depth+1)
			}
		}
	}
	walk(root, "", 0)
	return idx
}

// at is the line and column of the value at path, or of the nearest parent
// key present (a missing key), 0, 0 when none is.
func (idx calIndex) at(path string) (line, col int) {
	for p := path; p != ""; p = parentPath(p) {
		if n, ok := idx[p]; ok {
			if p != path && n.key != nil {
				return n.key.Line, n.key.Column
			}
			return n.val.Line, n.val.Column
		}
	}
	return 0, 0
}

// keyAt finds the key named name on line (yaml.v3's "field name not
// found"), "" when there is none.
func (idx calIndex) keyAt(line int, name string) (path string, col int) {
	for p, n := range idx {
		if n.key != nil && n.key.Line == line && n.key.Value == name && (path == "" || p < path) {
			path, col = p, n.key.Column
		}
	}
	return path, col
}

// nodeAt finds the value on line that yaml.v3 could not decode: of tag
// (its "!!str"), and of text value when the message quotes it; the first
// such by column.
func (idx calIndex) nodeAt(line int, tag, value string) (path string, n *yaml.Node) {
	for p, c := range idx {
		v := c.val
		if v.Line != line || v.ShortTag() != tag || value != "" && v.Kind == yaml.ScalarNode && v.Value != value {
			continue
		}
		if n == nil || v.Column < n.Column || v.Column == n.Column && len(p) > len(path) {
			path, n = p, v
		}
	}
	return path, n
}

// calWant says what a calibration key takes, from its Go type: "a number",
// "an integer", "a list of numbers"…, "" for a path not in the file's
// schema.
func calWant(path string) string {
	t := reflect.TypeOf(Calibration{})
	for _, part := range strings.Split(path, ".") {
		name, idx, _ := strings.Cut(part, "[")
		f, ok := yamlField(t, name)
		if !ok {
			return ""
		}
		t = f
		for ; idx != ""; _, idx, _ = strings.Cut(idx, "[") {
			if t.Kind() != reflect.Slice {
				return ""
			}
			t = t.Elem()
		}
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
	}
	return describeType(t)
}

func describeType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Float64:
		return "a number"
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		if e := describeType(t.Elem()); e != "" {
			return "a list of " + strings.TrimPrefix(strings.TrimPrefix(pluralType(e), "a "), "an ")
		}
	case reflect.Struct:
		return "a mapping of keys"
	}
	return ""
}

func pluralType(s string) string {
	switch s {
	case "a number":
		return "numbers"
	case "an integer":
		return "integers"
	case "a string":
		return "strings"
	case "a mapping of keys":
		return "mappings"
	}
	return s
}

// yamlField is the type of t's field whose yaml key is name, looking into
// inline fields.
func yamlField(t reflect.Type, name string) (reflect.Type, bool) {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, false
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		key, opts, _ := strings.Cut(tag, ",")
		if strings.Contains(opts, "inline") {
			if ft, ok := yamlField(f.Type, name); ok {
				return ft, true
			}
			continue
		}
		if key == name && f.IsExported() {
			return f.Type, true
		}
	}
	return nil, false
}

// calKeys lists the keys the mapping at path takes (its parent for an
// unknown key), for the fix of a misspelt one.
func calKeys(path string) []string {
	t := reflect.TypeOf(Calibration{})
	if path != "" {
		for _, part := range strings.Split(path, ".") {
			name, _, _ := strings.Cut(part, "[")
			f, ok := yamlField(t, name)
			if !ok {
				return nil
			}
			t = f
			for t.Kind() == reflect.Slice || t.Kind() == reflect.Pointer {
				t = t.Elem()
			}
		}
	}
	var keys []string
	var add func(t reflect.Type)
	add = func(t reflect.Type) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			key, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if strings.Contains(opts, "inline") {
				add(f.Type)
			} else if key != "" && key != "-" {
				keys = append(keys, key)
			}
		}
	}
	if t.Kind() == reflect.Struct {
		add(t)
	}
	return keys
}

// calTypeError is the one line for yaml.v3's type error m (yamlTypeError's
// match), placed by idx: "FILE:LINE:COL: compute.compute_efficiency:
// "fast" is a string, want a number", or "FILE:LINE:COL: unknown key
// "compute.foo" (compute takes …)".
func calTypeError(file string, idx calIndex, m []string, more string) string {
	line, _ := strconv.Atoi(m[1])
	if m[2] != "" {
		path, col := idx.keyAt(line, m[2])
		if path == "" {
			return fmt.Sprintf("%s:%d: unknown key %q%s", file, line, m[2], more)
		}
		parent := parentPath(path)
		where := "the top level takes "
		if parent != "" {
			where = parent + " takes "
		}
		return fmt.Sprintf("%s:%d:%d: unknown key %q (%s%s)%s", file, line, col, path, where, strings.Join(calKeys(parent), ", "), more)
	}
	value := ""
	if q := strings.Index(m[0], "`"); q >= 0 {
		if e := strings.Index(m[0][q+1:], "`"); e >= 0 {
			value = m[0][q+1 : q+1+e]
		}
	}
	path, n := idx.nodeAt(line, m[3], value)
	if n == nil {
		return ""
	}
	what := describe(n)
	if !strings.HasPrefix(m[3], "!!") {
		// A local tag ("!x 1"): the value may be right, the tag is not.
		what = fmt.Sprintf("%s tagged %s", n.Value, oneLine(n.Tag))
		if want := calWant(path); want != "" {
			return fmt.Sprintf("%s:%d:%d: %s: %s: want %s without a tag%s", file, n.Line, n.Column, path, what, want, more)
		}
	}
	if want := calWant(path); want != "" {
		fix := ""
		if pct, ok := strings.CutSuffix(n.Value, "%"); ok && want == "a number" {
			if f, err := strconv.ParseFloat(strings.TrimSpace(pct), 64); err == nil {
				fix = fmt.Sprintf(" (write the fraction, %g, not a percentage)", f/100)
			}
		}
		return fmt.Sprintf("%s:%d:%d: %s: %s is not %s%s%s", file, n.Line, n.Column, path, what, want, fix, more)
	}
	return fmt.Sprintf("%s:%d:%d: %s: %s of the wrong type%s", file, n.Line, n.Column, path, what, more)
}
