package scenarios

import (
	"encoding"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/zerosim/zerosim/units"
	"gopkg.in/yaml.v3"
)

// unitParsers are the quantity types of package units, each with the name of
// what it holds (for "expected a size") and its parse function.
var unitParsers = map[reflect.Type]struct {
	what  string
	parse func(string) (int64, error)
}{
	reflect.TypeFor[units.Bytes]():     {"size", parseAs(units.ParseBytes)},
	reflect.TypeFor[units.Bandwidth](): {"bandwidth", parseAs(units.ParseBandwidth)},
	reflect.TypeFor[units.Duration]():  {"duration", parseAs(units.ParseDuration)},
	reflect.TypeFor[units.Count]():     {"count", parseAs(units.ParseCount)},
	reflect.TypeFor[units.FLOPS]():     {"rate", parseAs(units.ParseFLOPS)},
}

func parseAs[T ~int64](p func(string) (T, error)) func(string) (int64, error) {
	return func(s string) (int64, error) { v, err := p(s); return int64(v), err }
}

var (
	scenarioType    = reflect.TypeFor[Scenario]()
	yamlUnmarshaler = reflect.TypeFor[yaml.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// decode fills v from node n of the final tree, walking the tree and the Go
// type together, and appends an error for every unknown key, every value of
// the wrong kind and every bad quantity, each at its own node (or naming the
// --set flag that made it). path is n's key path ("cluster.nodes").
func (l *loader) decode(n *yaml.Node, v reflect.Value, path string, errs *[]*Error) {
	t := v.Type()
	bad := func(want, use string) {
		*errs = append(*errs, l.errAt(n, fmt.Sprintf("%s: %s is not %s (use %s)", leaf(path), describe(n), want, use)))
	}
	if u, ok := unitParsers[t]; ok {
		if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
			*errs = append(*errs, l.errAt(n, fmt.Sprintf("%s: expected a %s, got %s", leaf(path), u.what, describe(n))))
			return
		}
		x, err := u.parse(n.Value)
		if b, ok := boundsOf(path); ok && errors.Is(err, units.ErrOverflow) {
			*errs = append(*errs, l.errAt(n, rangeMsg(path, clip40(n.Value), b)))
			return
		}
		if err != nil {
			msg := err.Error()
			// A bare number as a bucket size means megabytes, not the
			// GiB a bare GPU memory means (QA28 L3: "25" got "25GiB").
			// A bucket size is a positive whole number of bytes: a negative
			// one gets no fix of it, and a fraction no "B for bytes".
			if f, ferr := strconv.ParseFloat(n.Value, 64); ferr == nil && f != 0 && math.Abs(f) < 1<<20 && t == reflect.TypeFor[units.Bytes]() && strings.Contains(leaf(path), "bucket") {
				switch {
				case f < 0:
					msg = fmt.Sprintf("%s is negative: a bucket size is a positive size with a unit, such as 25MB or 25MiB", n.Value)
				case f != math.Trunc(f):
					msg = fmt.Sprintf("%s what? use %sMB or %sMiB (a bucket size needs a unit)", n.Value, n.Value, n.Value)
				default:
					msg = fmt.Sprintf("%s what? use %sMB or %sMiB (a bucket size needs a unit; %sB for bytes)", n.Value, n.Value, n.Value, n.Value)
				}
			}
			*errs = append(*errs, l.errAt(n, fmt.Sprintf("%s: %s", leaf(path), msg)))
			return
		}
		v.SetInt(x)
		return
	}
	if pt := reflect.PointerTo(t); pt.Implements(yamlUnmarshaler) || (n.Kind == yaml.ScalarNode && pt.Implements(textUnmarshaler)) {
		// A type that reads itself (an enum of another package).
		if err := n.Decode(v.Addr().Interface()); err != nil {
			*errs = append(*errs, l.errAt(n, fmt.Sprintf("%s: %v", leaf(path), strings.TrimPrefix(err.Error(), "yaml: "))))
		}
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		e := reflect.New(t.Elem())
		l.decode(n, e.Elem(), path, errs)
		v.Set(e)
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			bad("a mapping", "key: value pairs such as "+strings.Join(first3(yamlKeys(t)), ", "))
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			f, ok := fieldIndex(t, k.Value)
			if !ok {
				*errs = append(*errs, l.errAt(k, unknownKeyMsg(k.Value, path, t)))
				continue
			}
			l.decode(n.Content[i+1], v.Field(f), joinPath(path, k.Value), errs)
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			if _, set := l.setOf[n]; set {
				// A flag has no lines to put "- item" on.
				bad("a list", "a list such as --set "+path+"=[a,b]")
				return
			}
			bad("a list", "a list such as [a, b] or one \"- item\" per line")
			return
		}
		s := reflect.MakeSlice(t, len(n.Content), len(n.Content))
		for i, e := range n.Content {
			l.decode(e, s.Index(i), fmt.Sprintf("%s[%d]", path, i), errs)
		}
		v.Set(s)
	case reflect.Int, reflect.Int64:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
			if n.Kind == yaml.ScalarNode && n.Style&yaml.TaggedStyle != 0 && isWholeFloat(n.Value) {
				// "!!float 2" said "2 does not fit in 64 bits".
				*errs = append(*errs, l.errAt(n, fmt.Sprintf("%s: %s is tagged %s, not an integer (delete the tag: %s: %s)", leaf(path), n.Value, n.Tag, leaf(path), n.Value)))
				return
			}
			if n.Kind == yaml.ScalarNode && n.Tag == "!!float" && isWholeFloat(n.Value) {
				*errs = append(*errs, l.errAt(n, beyond64(path, n)))
				return
			}
			bad("an integer", "a whole number")
			return
		}
		if d := strings.TrimLeft(n.Value, "+-"); len(d) > 1 && d[0] == '0' && d[1] >= '0' && d[1] <= '9' {
			// yaml.v3 keeps YAML 1.1's octal: 010 would silently be 8.
			v := strings.TrimLeft(d, "0_")
			if v == "" {
				v = "0"
			}
			*errs = append(*errs, l.errAt(n, fmt.Sprintf("%s: %s has a leading zero, which YAML reads as octal (write %s, or 0o%s if you mean octal)", leaf(path), describe(n), v, v)))
			return
		}
		l.scalar(n, v, func() { *errs = append(*errs, l.errAt(n, beyond64(path, n))) })
	case reflect.Float64:
		if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") {
			bad("a number", "a decimal such as 0.5")
			return
		}
		switch strings.ToLower(strings.TrimLeft(n.Value, "+-")) {
		case ".inf", ".nan":
			bad("a finite number", "a decimal such as 0.5")
			return
		}
		if f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64); err == nil && (math.IsInf(f, 0) || math.IsNaN(f)) {
			bad("a finite number", "a decimal such as 0.5")
			return
		}
		l.scalar(n, v, func() { bad("a number", "a decimal such as 0.5") })
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
			bad("a boolean", "true or false")
			return
		}
		l.scalar(n, v, func() { bad("a boolean", "true or false") })
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			bad("a string", "a plain value")
			return
		}
		l.scalar(n, v, func() { bad("a string", "a plain value") })
	default:
		*errs = append(*errs, l.errAt(n, fmt.Sprintf("%s: cannot read a value of Go type %s (please report this)", leaf(path), t)))
	}
}

// clip40 is v clipped to 40 characters, as describe clips a value.
func clip40(v string) string {
	if len(v) > 40 {
		return v[:37] + "..."
	}
	return v
}

// beyond64 is the error of an integer n at path beyond 64 bits: its key's
// range where the key has its own (ownBounds), as a value inside 64 bits
// out of it is told.
func beyond64(path string, n *yaml.Node) string {
	if b, ok := boundsOf(path); ok {
		return rangeMsg(path, describe(n), b)
	}
	return fmt.Sprintf("%s: %s does not fit in 64 bits (use a whole number below 2^63)", leaf(path), describe(n))
}

// scalar decodes the scalar n, whose tag decode has checked, into v with
// yaml.v3's own rules (1_000, 0x10, yes/no are what yaml.v3 says they are);
// fail reports a value yaml.v3 still refuses (an integer beyond 64 bits).
func (l *loader) scalar(n *yaml.Node, v reflect.Value, fail func()) {
	if err := n.Decode(v.Addr().Interface()); err != nil {
		fail()
	}
}

// fieldIndex returns the index of the field of struct type t with YAML key
// key.
func fieldIndex(t reflect.Type, key string) (int, bool) {
	for i := 0; i < t.NumField(); i++ {
		if yamlKey(t.Field(i)) == key {
			return i, true
		}
	}
	return 0, false
}

// describe names a YAML node's value for error messages: "a mapping", "a
// list", "an alias", "a document", "empty", a quoted string ("\"abc\"") or a
// bare number (1.5), clipped to 40 characters.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.DocumentNode:
		return "a document"
	}
	v := n.Value
	if len(v) > 40 {
		v = v[:37] + "..."
	}
	switch {
	case n.Tag == "!!null":
		return "empty"
	case n.Tag != "!!str" && strconv.CanBackquote(v) && !strings.ContainsAny(v, "` "):
		return v
	}
	return strconv.Quote(v)
}
