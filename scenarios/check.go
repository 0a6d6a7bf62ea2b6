package scenarios

import (
	"fmt"
	"reflect"
	"strings"
)

// CheckSyntax reports whether data is one YAML document holding a mapping,
// the shape every scenario has, without resolving it. A tool that loads the
// same bytes many times with different overrides (a sweep) checks it once,
// so a syntax error is one input error rather than one error per point.
func CheckSyntax(file string, data []byte) error {
	l := &loader{file: file}
	if _, err := l.parseDoc(data); err != nil {
		if e, ok := err.(*Error); ok {
			c := *e
			c.Msg = oneLine(c.Msg)
			return &c
		}
		return &Error{File: file, Msg: oneLine(err.Error())}
	}
	return nil
}

// CheckKeyPath reports whether path, as a --set or --grid flag names it
// ("parallelism.k", "model.layer_list[0].params"), is a key of the scenario
// format. The error suggests the nearest key.
func CheckKeyPath(path string) error {
	t := scenarioType
	parts := strings.Split(path, ".")
	parent := ""
	for pi, part := range parts {
		name, idx, err := splitIndex(part)
		if err != nil || name == "" {
			return fmt.Errorf("bad key path %q (use dotted names such as cluster.intra.bandwidth, with [i] for list items)", path)
		}
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || reflect.PointerTo(t).Implements(yamlUnmarshaler) {
			return fmt.Errorf("key path %q: %s holds a value, not keys (set %s itself)", path, parent, parent)
		}
		ft, ok := fieldByKey(t, name)
		if !ok {
			return fmt.Errorf("key path %q: %s", path, unknownKeyMsg(name, parent, t))
		}
		t = ft
		for range idx {
			for t.Kind() == reflect.Pointer {
				t = t.Elem()
			}
			if t.Kind() != reflect.Slice {
				return fmt.Errorf("key path %q: %s is not a list (drop the [i])", path, name)
			}
			t = t.Elem()
		}
		parent = strings.Join(parts[:pi+1], ".")
	}
	return nil
}
