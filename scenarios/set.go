package scenarios

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// applySet applies one "--set key.path=value" override to the tree rooted at
// the mapping root. Missing mappings on the path are created; the value is
// parsed as YAML (a scalar, a flow list such as [dp, cp], or a flow mapping
// that replaces the mapping at the path). Every node the
// flag creates is remembered so later errors name the flag.
func (l *loader) applySet(root *yaml.Node, set string) error {
	fail := func(format string, args ...any) error {
		return &Error{File: l.file, Msg: "--set " + set + ": " + fmt.Sprintf(format, args...)}
	}
	// A value that is not YAML, or whose aliases cannot be expanded, or
	// that holds an unknown key, is wrong whatever the other keys hold
	// (Error.Alone): a sweep refuses it before its first row.
	failAlone := func(path, format string, args ...any) error {
		e := fail(format, args...).(*Error)
		e.Path, e.Alone = path, true
		return e
	}
	eq := strings.IndexByte(set, '=')
	if eq < 0 {
		return fail("missing \"=\" (use --set key.path=value, e.g. --set parallelism.k=2)")
	}
	path, value := strings.TrimSpace(set[:eq]), set[eq+1:]
	if path == "" {
		return fail("empty key path (use --set key.path=value)")
	}
	var vdoc yaml.Node
	if err := yaml.Unmarshal([]byte(value), &vdoc); err != nil {
		return failAlone(path, "the value is not valid YAML: %s (quote it or fix it)", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if vdoc.Kind != yaml.DocumentNode || len(vdoc.Content) != 1 {
		return fail("%s", noValue(path))
	}
	x := &expander{l: l, active: map[*yaml.Node]bool{}}
	val, err := x.copy(vdoc.Content[0])
	if err != nil {
		return failAlone(path, "the value has unusable aliases (write the value out)")
	}
	if val.Kind == yaml.ScalarNode && val.Tag == "!!null" {
		return fail("%s", nullValue(path))
	}
	if err := l.checkKeys(val); err != nil {
		return failAlone(path, "%s", err.(*Error).Msg)
	}
	l.markSet(val, set)

	cur := root
	parts := strings.Split(path, ".")
	for pi, part := range parts {
		name, idx, err := splitIndex(part)
		if err != nil || name == "" {
			return fail("bad key path %q (use dotted names such as cluster.intra.bandwidth, with [i] for list items)", path)
		}
		if cur.Kind != yaml.MappingNode {
			return fail("%s is %s, not a mapping (set a key that exists in the format)", strings.Join(parts[:pi], "."), describe(cur))
		}
		last := pi == len(parts)-1 && len(idx) == 0
		i := findKey(cur, name)
		if i < 0 {
			if len(idx) > 0 {
				return fail("%s is not in the file, so %s has no item to set (set the whole list instead)", name, part)
			}
			k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: name}
			v := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			l.markSet(k, set)
			l.markSet(v, set)
			cur.Content = append(cur.Content, k, v)
			i = len(cur.Content) - 2
		}
		if last {
			l.markSet(cur.Content[i], set)
			cur.Content[i+1] = val
			for _, other := range replaces[path] {
				if l.dropFileKey(cur, other) && path == "model.hf_config" {
					l.replacedModel = append(l.replacedModel, other)
				}
			}
			return nil
		}
		next := cur.Content[i+1]
		for j, n := range idx {
			if next.Kind != yaml.SequenceNode {
				return fail("%s is %s, not a list (drop the [%d])", name, describe(next), n)
			}
			if n < 0 || n >= len(next.Content) {
				return fail("%s has %d item%s, so [%d] is out of range (use 0 to %d)", name, len(next.Content), plural(int64(len(next.Content))), n, len(next.Content)-1)
			}
			if pi == len(parts)-1 && j == len(idx)-1 {
				l.markSet(cur.Content[i], set)
				next.Content[n] = val
				return nil
			}
			next = next.Content[n]
		}
		cur = next
	}
	return nil
}

// replaces names the keys a scenario gives one of: a --set of one replaces
// the others where the file gives them (giving both in the file, or with
// two --set flags, stays an error). A --set of model.hf_config replaces the
// file's model definition (its preset, dimensions or layer list: what
// hf_config excludes), as --set 'model={hf_config: …}' does; the file's
// seq_len and groups stay, and its layers, given for the model it replaced,
// stop the load (resolveHFConfig).
var replaces = map[string][]string{
	"training.mfu":                {"compute_efficiency"},
	"training.compute_efficiency": {"mfu"},
	"model.hf_config":             hfKeysExclusive,
}

// dropFileKey removes key from the mapping m when the file gave it (not a
// --set flag) and reports whether it did.
func (l *loader) dropFileKey(m *yaml.Node, key string) bool {
	i := findKey(m, key)
	if i < 0 {
		return false
	}
	if _, bySet := l.setOf[m.Content[i]]; bySet {
		return false
	}
	m.Content = append(m.Content[:i], m.Content[i+2:]...)
	return true
}

// splitIndex splits "name[1][2]" into "name" and [1 2].
func splitIndex(part string) (string, []int, error) {
	b := strings.IndexByte(part, '[')
	if b < 0 {
		return part, nil, nil
	}
	name, rest := part[:b], part[b:]
	var idx []int
	for rest != "" {
		e := strings.IndexByte(rest, ']')
		if rest[0] != '[' || e < 0 {
			return "", nil, fmt.Errorf("bad index")
		}
		n, err := strconv.Atoi(rest[1:e])
		if err != nil {
			return "", nil, err
		}
		idx = append(idx, n)
		rest = rest[e+1:]
	}
	return name, idx, nil
}

func (l *loader) markSet(n *yaml.Node, set string) {
	l.setOf[n] = set
	for _, c := range n.Content {
		l.markSet(c, set)
	}
}

// CheckSet reports what a "--set key.path=value" override gets wrong before
// any scenario is loaded: no "=", an empty or unknown key path, no value.
// Whether the value suits a scenario is the loader's to say. A sweep checks
// its --sets so, since each of these would make every point an error row.
func CheckSet(set string) error {
	path, value, ok := strings.Cut(set, "=")
	path = strings.TrimSpace(path)
	switch {
	case !ok:
		return fmt.Errorf("--set %s: missing \"=\" (use --set key.path=value, e.g. --set parallelism.k=2)", set)
	case path == "":
		return fmt.Errorf("--set %s: empty key path (use --set key.path=value)", set)
	case strings.TrimSpace(value) == "":
		return fmt.Errorf("--set %s: %s", set, noValue(path))
	case nullSet(value):
		return fmt.Errorf("--set %s: %s", set, nullValue(path))
	}
	if err := CheckKeyPath(path); err != nil {
		return fmt.Errorf("--set %s: %w", set, err)
	}
	return nil
}

// CheckSetType reports the error of "key.path=value" when value cannot be
// of the key's type whatever the scenario holds: not an integer, a size
// without a unit, not a boolean (yaml decoding's errors, which do not
// depend on other keys). Range and consistency errors, which may, are
// not reported. A sweep checks each grid value with it before the first
// row, so that "parallelism.k=1,x" is an input error, not a column of
// error rows.
func CheckSetType(set string) error {
	if err := CheckSet(set); err != nil {
		return err
	}
	path, _, _ := strings.Cut(set, "=")
	path = strings.TrimSpace(path)
	_, err := Load("set", []byte("version: 1\n"), []string{set})
	var e *Error
	if err == nil || !errors.As(err, &e) {
		return nil
	}
	leaf := path[strings.LastIndex(path, ".")+1:]
	if i := strings.IndexByte(leaf, '['); i >= 0 {
		leaf = leaf[:i]
	}
	msg, ok := strings.CutPrefix(e.Msg, "--set "+set+": ")
	if !ok || !strings.HasPrefix(msg, leaf+": ") {
		return nil
	}
	return fmt.Errorf("%s", msg)
}

// nullSet reports a --set value that YAML reads as null (null, ~, Null):
// it said "no value after \"=\"" of parallelism.dp=null, which has one.
func nullSet(value string) bool {
	var doc yaml.Node
	if yaml.Unmarshal([]byte(value), &doc) != nil || doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return false
	}
	n := doc.Content[0]
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// nullValue is the error of a --set value that is YAML's null: every key
// wants a value (a scenario drops a key by leaving it out of the file).
func nullValue(path string) string {
	msg := "null is not a value (give " + path + "=VALUE"
	if path == "parallelism.dp" {
		msg += "; parallelism.dp=auto makes dp the cluster's GPUs over cp"
	}
	return msg + unsetHint(path) + ")"
}

// noValue is the error of a --set with nothing after "=".
func noValue(path string) string {
	return "no value after \"=\" (use --set " + path + "=VALUE" + unsetHint(path) + ")"
}

// unsetHint says how a --set drops the key at path where a value does:
// stack=none runs without a preset (qauser s28 L8: stack=, stack=null
// and stack=none were all refused, with no way named).
func unsetHint(path string) string {
	if path == "stack" {
		return "; stack=" + StackNone + " runs without a stack preset"
	}
	return ""
}
