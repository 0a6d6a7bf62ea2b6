package scenarios

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Load decodes, overrides (sets are "key.path=value"), resolves and validates
// one scenario file. file names the input in error messages. Every error it
// returns is an *Error whose message is one line.
func Load(file string, data []byte, sets []string) (*Scenario, error) {
	l := &loader{file: file, example: exampleOf(file, data), setOf: map[*yaml.Node]string{}, idx: map[string]entry{}}
	s, err := l.load(data, sets)
	if err != nil {
		// Every message is one line, whatever the input held.
		e := &Error{File: file, Msg: err.Error()}
		if pe := (*Error)(nil); errors.As(err, &pe) {
			c := *pe
			e = &c
		}
		e.Msg = oneLine(e.Msg)
		return nil, e
	}
	return s, nil
}

// loader holds the state of one Load.
type loader struct {
	file string
	// example is the embedded example file is (exampleOf), named beside
	// its positions (Error.Example).
	example string
	setOf   map[*yaml.Node]string // nodes created or replaced by a --set flag
	idx     map[string]entry      // path → key and value of the final tree
	// replacedModel lists the file's model keys a --set of
	// model.hf_config dropped (replaces).
	replacedModel []string
	// dpAuto is parallelism.dp's node when it says auto: the cluster's
	// GPUs over cp (resolveParallelism).
	dpAuto *yaml.Node
}

// oneLine escapes line breaks and other control characters.
func oneLine(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f || r == 0x85 || r == 0x2028 || r == 0x2029 }) {
		return s
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

func (l *loader) fileErr(msg string) *Error { return &Error{File: l.file, Msg: msg} }

// errAt is an error at node n: at its position, or naming the --set flag
// that made it.
func (l *loader) errAt(n *yaml.Node, msg string) *Error {
	if n != nil {
		if set, ok := l.setOf[n]; ok {
			if from, ok := strings.CutPrefix(set, stackOrigin); ok {
				return &Error{File: l.file, Msg: from + ": " + msg}
			}
			return &Error{File: l.file, Msg: "--set " + set + ": " + severalValues(set, msg)}
		}
		if n.Line > 0 {
			return &Error{File: l.file, Line: n.Line, Col: n.Column, Msg: msg, Example: l.example}
		}
	}
	return l.fileErr(msg)
}

// severalValues adds to msg, the error of "--set key=v1,v2" whose value is
// not of the key's type, that --set takes one value, and names the
// commands that take several: a list of values is what compare --vary and
// sweep --grid take, and "k: \"2,4\" is not an integer" did not say so.
func severalValues(set, msg string) string {
	key, v, _ := strings.Cut(set, "=")
	v = strings.TrimSpace(v)
	if !strings.Contains(v, ",") || strings.ContainsAny(v[:1], "[{\"'") || !strings.Contains(msg, " is not a") {
		return msg
	}
	hint := "--set takes one value: for several, zerosim compare FILE --vary " + strings.TrimSpace(key) + "=" + v + " or zerosim sweep FILE --grid " + strings.TrimSpace(key) + "=" + v
	if body, ok := strings.CutSuffix(msg, ")"); ok {
		return body + "; " + hint + ")"
	}
	return msg + " (" + hint + ")"
}

// errPath is an error about the key at path; when the key is absent it
// points at the nearest parent key that is present.
func (l *loader) errPath(path, msg string) *Error {
	e := l.errNear(path, msg)
	e.Path = path
	return e
}

func (l *loader) errNear(path, msg string) *Error {
	for p := path; p != ""; p = parentPath(p) {
		if e, ok := l.idx[p]; ok {
			if e.key != nil {
				if _, set := l.setOf[e.val]; set && p == path {
					return l.errAt(e.val, msg)
				}
				return l.errAt(e.key, msg)
			}
			return l.errAt(e.val, msg)
		}
	}
	return l.fileErr(msg)
}

func parentPath(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i < 0 {
		return ""
	}
	return p[:i]
}

func (l *loader) has(path string) bool { _, ok := l.idx[path]; return ok }

// bySet reports whether a --set flag gave the value at path (not the file).
func (l *loader) bySet(path string) bool {
	e, ok := l.idx[path]
	if !ok {
		return false
	}
	_, set := l.setOf[e.val]
	return set
}

func (l *loader) load(data []byte, sets []string) (*Scenario, error) {
	root, err := l.fileTree(data)
	if err != nil {
		// Before any --set: the file's own syntax, anchors and keys,
		// wrong whatever the flags set (Error.Alone).
		if e := (*Error)(nil); errors.As(err, &e) {
			e.Alone = true
		}
		return nil, err
	}
	for _, set := range sets {
		if err := l.applySet(root, set); err != nil {
			return nil, err
		}
	}
	if err := l.applyStack(root); err != nil {
		return nil, err
	}
	if err := l.checkDepth(root, 1); err != nil {
		return nil, err
	}
	l.index(root, "")
	// The version comes first: a file of another version may use other keys.
	if v, ok := l.idx["version"]; !ok {
		return nil, l.fileErr("version is missing (start the file with \"version: 1\")")
	} else if v.val.Kind == yaml.ScalarNode && v.val.Tag == "!!int" && strings.TrimLeft(v.val.Value, "+0") != "1" {
		return nil, l.errAt(v.key, fmt.Sprintf("version=%s is not supported (use version: 1)", describe(v.val)))
	}

	if err := l.placeholders(root); err != nil {
		return nil, err
	}
	if e, ok := l.idx["parallelism.dp"]; ok && e.val.Kind == yaml.ScalarNode && e.val.Tag == "!!str" && e.val.Value == "auto" {
		// Decoded as 0, then the cluster's GPUs over cp.
		l.dpAuto = e.val
		e.val.Tag, e.val.Value = "!!int", "0"
	}
	var errs []*Error
	var s Scenario
	l.decode(root, reflect.ValueOf(&s).Elem(), "", &errs)
	if len(errs) > 0 {
		e := first(errs)
		// An unknown key, a value of the wrong kind or a bad quantity is
		// wrong whatever the other keys hold.
		e.Alone = true
		return nil, e
	}
	if err := l.resolve(&s); err != nil {
		return nil, err
	}
	return &s, nil
}

// fileTree is the file's YAML tree, anchors expanded, its keys checked.
func (l *loader) fileTree(data []byte) (*yaml.Node, error) {
	orig, err := l.parseDoc(data)
	if err != nil {
		return nil, err
	}
	x := &expander{l: l, active: map[*yaml.Node]bool{}}
	root, err := x.copy(orig)
	if err != nil {
		return nil, err
	}
	return root, l.checkKeys(root)
}

// first returns the error that comes first: --set errors, then by position.
func first(errs []*Error) *Error {
	sort.SliceStable(errs, func(i, j int) bool {
		a, b := errs[i], errs[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	return errs[0]
}

// yamlKeys lists the keys of struct type t in declaration order.
func yamlKeys(t reflect.Type) []string {
	var keys []string
	for i := 0; i < t.NumField(); i++ {
		if k := yamlKey(t.Field(i)); k != "" {
			keys = append(keys, k)
		}
	}
	return keys
}

func yamlKey(f reflect.StructField) string {
	tag := f.Tag.Get("yaml")
	name, _, _ := strings.Cut(tag, ",")
	if name == "-" || !f.IsExported() {
		return ""
	}
	if name == "" {
		return strings.ToLower(f.Name)
	}
	return name
}

func fieldByKey(t reflect.Type, key string) (reflect.Type, bool) {
	for i := 0; i < t.NumField(); i++ {
		if yamlKey(t.Field(i)) == key {
			return t.Field(i).Type, true
		}
	}
	return nil, false
}

func first3(s []string) []string {
	if len(s) > 3 {
		return append(s[:3:3], "…")
	}
	return s
}

var wholeRE = regexp.MustCompile(`^[-+]?[0-9_]+$`)

func isWholeFloat(s string) bool { return wholeRE.MatchString(s) }

// unknownKeyMsg says that key is not allowed in the mapping at parent and
// suggests the nearest allowed key.
func unknownKeyMsg(key, parent string, t reflect.Type) string {
	where := "at the top level"
	if parent != "" {
		where = "in " + parent
	}
	if t == nil || t.Kind() != reflect.Struct {
		return fmt.Sprintf("unknown key %q %s", key, where)
	}
	if paths := keyElsewhere(key, parent); len(paths) > 0 {
		// zero_stage under training, dp under communication, nodes at
		// the top level: the key is right, its section wrong. The nearest
		// key suggested "model" for "nodes" and listed training's 30 keys
		// for zero_stage.
		return fmt.Sprintf("unknown key %q %s (it belongs under %s)", key, where, ListOr(paths))
	}
	keys := yamlKeys(t)
	best, bestD := "", 1<<30
	for _, k := range keys {
		if d := editDistance(strings.ToLower(key), k); d < bestD {
			best, bestD = k, d
		}
	}
	if best != "" && (bestD <= 2 || bestD <= len(key)/3) {
		return fmt.Sprintf("unknown key %q %s (did you mean %q?)", key, where, best)
	}
	return fmt.Sprintf("unknown key %q %s (allowed: %s)", key, where, strings.Join(keys, ", "))
}

// keyElsewhere is the dotted paths, other than under parent, where the
// scenario format has a key named key, walking its sections (structs, not
// lists or maps) at most three levels deep; nil when there are none or
// more than three (a key too common to place).
func keyElsewhere(key, parent string) []string {
	var paths []string
	var walk func(t reflect.Type, prefix string, depth int)
	walk = func(t reflect.Type, prefix string, depth int) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || depth > 3 || reflect.PointerTo(t).Implements(yamlUnmarshaler) {
			return
		}
		for i := 0; i < t.NumField(); i++ {
			k := yamlKey(t.Field(i))
			if k == "" {
				continue
			}
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			if k == key && prefix != parent && depth > 0 {
				paths = append(paths, prefix)
			}
			walk(t.Field(i).Type, p, depth+1)
		}
	}
	walk(scenarioType, "", 0)
	if len(paths) > 3 {
		return nil
	}
	return paths
}

// editDistance is the Levenshtein distance between a and b (bytes).
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 1 << 20
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
