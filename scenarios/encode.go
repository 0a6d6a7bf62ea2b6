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

// encode is decode's inverse, for Resolve: the node tree of v with keys in
// field order, the zero values of omitempty fields left out (as yaml.v3's
// encoder does) and quantities in exact units.
func encode(v reflect.Value) *yaml.Node {
	t := v.Type()
	if f, ok := unitFormats[t]; ok {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: f(v.Int())}
	}
	switch t.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
		}
		return encode(v.Elem())
	case reflect.Struct:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			key := yamlKey(f)
			if key == "" || (omitEmpty(f) && isZero(v.Field(i))) {
				continue
			}
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, encode(v.Field(i)))
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
