package scenarios

import (
	"reflect"
	"strconv"
	"strings"

	"github.com/zerosim/zerosim/units"
	"gopkg.in/yaml.v3"
)

// unitFormats write each quantity of package units exactly, in a spelling
// its Parse function reads back to the same integer.
var unitFormats = map[reflect.Type]func(int64) string{
	reflect.TypeFor[units.Bytes]():     func(v int64) string { return strconv.FormatInt(v, 10) + "B" },
	reflect.TypeFor[units.Bandwidth](): func(v int64) string { return strconv.FormatInt(v, 10) + "B/s" },
	reflect.TypeFor[units.Duration]():  func(v int64) string { return strconv.FormatInt(v, 10) + "ps" },
	reflect.TypeFor[units.Count]():     func(v int64) string { return strconv.FormatInt(v, 10) },
	reflect.TypeFor[units.FLOPS]():     func(v int64) string { return strconv.FormatInt(v, 10) + "FLOPS" },
}

// encodeScenario is s's node tree as a scenario file (encode), and, when s
// names a stack preset, with every bool or number key the preset fills in
// written even where its value is the zero omitempty leaves out: loading
// the bytes applies the preset again to each key the file does not give,
// so a false or 0 that overrode the preset (training.recompute_early_stop:
// false under torchtitan's true, training.weight_decay: 0 under its 0.1)
// must be in the file, or the replay runs the preset's value (QA27 H3).
func encodeScenario(s *Scenario) *yaml.Node {
	keep := map[string]bool{}
	for _, k := range stackPresets[s.Stack] {
		keep[k.path] = true
	}
	return encodeKeep(reflect.ValueOf(s).Elem(), "", keep)
}

// encode is encodeKeep keeping no zero value.
func encode(v reflect.Value) *yaml.Node { return encodeKeep(v, "", nil) }

// encodeKeep is decode's inverse, for Resolve: the node tree of v with keys in
// field order, the zero values of omitempty fields left out (as yaml.v3's
// encoder does) unless keep holds their dotted path (prefix is v's, with
// its trailing dot) and v is a bool or number, and quantities in exact
// units.
func encodeKeep(v reflect.Value, prefix string, keep map[string]bool) *yaml.Node {
	t := v.Type()
	if f, ok := unitFormats[t]; ok {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: f(v.Int())}
	}
	switch t.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
		}
		return encodeKeep(v.Elem(), prefix, keep)
	case reflect.Struct:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			key := yamlKey(f)
			if key == "" || (omitEmpty(f) && isZero(v.Field(i)) && !(keep[prefix+key] && isBoolOrNumber(f.Type))) {
				continue
			}
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, encodeKeep(v.Field(i), prefix+key+".", keep))
		}
		return n
	case reflect.Slice:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for i := 0; i < v.Len(); i++ {
			n.Content = append(n.Content, encode(v.Index(i)))
		}
		return n
	}
	var n yaml.Node
	if err := n.Encode(v.Interface()); err != nil {
		// Scalars of the schema always encode; say what failed if not.
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: err.Error()}
	}
	return &n
}

// isBoolOrNumber reports a bool or number field (a quantity of package
// units is one too: it encodes as its exact spelling).
func isBoolOrNumber(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

func omitEmpty(f reflect.StructField) bool {
	_, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	return opts == "omitempty"
}

// isZero is yaml.v3's test for omitempty: empty strings, slices and maps,
// nil pointers, zero numbers, false, and structs whose exported fields are
// all zero.
func isZero(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.String:
		return v.Len() == 0
	case reflect.Pointer, reflect.Interface:
		return v.IsNil()
	case reflect.Slice, reflect.Map:
		return v.Len() == 0
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() && !isZero(v.Field(i)) {
				return false
			}
		}
		return true
	}
	return false
}
