// Package jsonschema validates zerosim's JSON outputs against the schemas
// in docs/*.schema.json, for tests. It holds the subset of JSON Schema
// (2020-12) those schemas use: type (one or a list), enum (of strings),
// properties, required, additionalProperties (false or a schema), items,
// oneOf and $ref (to the same file or another schema file beside it, with
// a JSON pointer); Load refuses a schema with any other keyword, which
// would look enforced while ignored. That is enough to hold every key and type of the files
// zerosim writes; a general validator would be a new dependency for eight
// keywords.
package jsonschema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

// Schema is one schema or subschema.
type Schema struct {
	Type        any                `json:"type"`
	Enum        []string           `json:"enum"`
	Properties  map[string]*Schema `json:"properties"`
	Required    []string           `json:"required"`
	Additional  json.RawMessage    `json:"additionalProperties"`
	Items       *Schema            `json:"items"`
	OneOf       []*Schema          `json:"oneOf"`
	Description string             `json:"description"`
	Ref         string             `json:"$ref"`
	// ref is the schema Ref points to (Load resolves it).
	ref *Schema
}

// Load reads the schema file at path and resolves its $refs, which name a
// JSON pointer in the same file ("#/properties/zerosim") or in a schema
// file in the same directory ("result.schema.json#/properties/zerosim").
func Load(path string) (*Schema, error) {
	return load(path, "", map[string]*Schema{}, 0)
}

// load is the schema at pointer ptr of the file at path; done holds the
// ones resolved so far ("path#ptr"), so two references share one.
func load(path, ptr string, done map[string]*Schema, depth int) (*Schema, error) {
	key := path + "#" + ptr
	if s, ok := done[key]; ok {
		return s, nil
	}
	if depth > 16 {
		return nil, fmt.Errorf("%s: $ref nested more than 16 deep", key)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		if tok == "" {
			continue
		}
		m, ok := doc.(map[string]any)
		if !ok || m[tok] == nil {
			return nil, fmt.Errorf("%s: no %q at %s", path, tok, ptr)
		}
		doc = m[tok]
	}
	if err := supported(doc, ptr); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	sub, _ := json.Marshal(doc)
	s := &Schema{}
	if err := json.Unmarshal(sub, s); err != nil {
		return nil, fmt.Errorf("%s: %v", key, err)
	}
	done[key] = s
	var resolve func(x *Schema) error
	resolve = func(x *Schema) error {
		if x == nil {
			return nil
		}
		if x.Ref != "" {
			file, p, _ := strings.Cut(x.Ref, "#")
			target := path
			if file != "" {
				target = filepath.Join(filepath.Dir(path), file)
			}
			r, err := load(target, p, done, depth+1)
			if err != nil {
				return fmt.Errorf("%s: $ref %q: %v", key, x.Ref, err)
			}
			x.ref = r
		}
		for _, p := range x.Properties {
			if err := resolve(p); err != nil {
				return err
			}
		}
		for _, o := range x.OneOf {
			if err := resolve(o); err != nil {
				return err
			}
		}
		return resolve(x.Items)
	}
	return s, resolve(s)
}

// keywords are the JSON Schema keywords Check enforces; annotations are
// those that enforce nothing, and $defs holds schemas for $ref.
var (
	keywords    = []string{"type", "enum", "properties", "required", "additionalProperties", "items", "oneOf", "$ref"}
	annotations = []string{"description", "title", "$schema", "$id", "$comment", "$defs"}
)

// supported refuses a schema (doc, at JSON pointer ptr) or subschema with
// a keyword outside keywords and annotations: one such as minimum, const,
// anyOf or minItems would look enforced while Check ignored it.
func supported(doc any, ptr string) error {
	m, ok := doc.(map[string]any)
	if !ok {
		return fmt.Errorf("%s: a schema must be an object", or(ptr, "/"))
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !slices.Contains(keywords, k) && !slices.Contains(annotations, k) {
			return fmt.Errorf("%s: keyword %q is not one this validator checks (%s)", or(ptr, "/"), k, strings.Join(keywords, ", "))
		}
		var subs map[string]any
		switch v := m[k].(type) {
		case map[string]any:
			switch k {
			case "properties", "$defs":
				subs = v
			case "items", "additionalProperties":
				subs = map[string]any{"": v}
			}
		case []any:
			if k == "oneOf" {
				subs = map[string]any{}
				for i, x := range v {
					subs[fmt.Sprint(i)] = x
				}
			}
		case bool:
			if k == "additionalProperties" {
				continue
			}
		}
		names := make([]string, 0, len(subs))
		for name := range subs {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			p := ptr + "/" + k
			if name != "" {
				p += "/" + name
			}
			if err := supported(subs[name], p); err != nil {
				return err
			}
		}
	}
	return nil
}

// or is s, or else when s is empty.
func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Decode unmarshals one JSON value with numbers as json.Number, so that
// integers stay integers.
func Decode(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}

// typeOf names v's JSON type; numbers without a fraction are integers.
func typeOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if strings.ContainsAny(x.String(), ".eE") {
			return "number"
		}
		return "integer"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// Check validates v (as Decode gives it) against s and returns the first
// violations, each with the path of the value.
func (s *Schema) Check(v any, path string) []string {
	if s.ref != nil {
		return s.ref.Check(v, path)
	}
	var errs []string
	if len(s.OneOf) > 0 {
		var match []string
		for i, b := range s.OneOf {
			e := b.Check(v, path)
			if len(e) == 0 {
				match = append(match, fmt.Sprint(i))
			}
			errs = append(errs, e...)
		}
		switch len(match) {
		case 1:
			errs = nil
		case 0:
			return append([]string{fmt.Sprintf("%s: matches none of oneOf's %d schemas:", path, len(s.OneOf))}, errs...)
		default:
			return []string{fmt.Sprintf("%s: matches oneOf's schemas %s, want exactly one", path, strings.Join(match, ", "))}
		}
	}
	var types []string
	switch t := s.Type.(type) {
	case string:
		types = []string{t}
	case []any:
		for _, x := range t {
			types = append(types, x.(string))
		}
	}
	got := typeOf(v)
	if len(types) > 0 && !slices.Contains(types, got) && !(got == "integer" && slices.Contains(types, "number")) {
		return []string{fmt.Sprintf("%s: %s, want %s", path, got, strings.Join(types, " or "))}
	}
	switch x := v.(type) {
	case string:
		if len(s.Enum) > 0 && !slices.Contains(s.Enum, x) {
			return []string{fmt.Sprintf("%s: %q, want one of %s", path, x, strings.Join(s.Enum, ", "))}
		}
	case map[string]any:
		for _, k := range s.Required {
			if _, ok := x[k]; !ok {
				errs = append(errs, fmt.Sprintf("%s: no key %q", path, k))
			}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if p, ok := s.Properties[k]; ok {
				errs = append(errs, p.Check(x[k], path+"."+k)...)
				continue
			}
			switch a := strings.TrimSpace(string(s.Additional)); {
			case a == "false":
				errs = append(errs, fmt.Sprintf("%s: key %q is not in the schema", path, k))
			case strings.HasPrefix(a, "{"):
				var as Schema
				if err := json.Unmarshal(s.Additional, &as); err != nil {
					return append(errs, err.Error())
				}
				errs = append(errs, as.Check(x[k], path+"."+k)...)
			}
		}
	case []any:
		if s.Items != nil {
			for i, e := range x {
				errs = append(errs, s.Items.Check(e, fmt.Sprintf("%s[%d]", path, i))...)
				if len(errs) > 10 {
					break
				}
			}
		}
	}
	return errs
}

// Resolved is the schema s stands for: the one its $ref points to, else s.
func (s *Schema) Resolved() *Schema {
	if s.ref != nil {
		return s.ref.Resolved()
	}
	return s
}

// MissingKeys lists the JSON keys of typ (a struct, through pointers and
// slices, its embedded structs' keys as its own) that s, at the same
// depth, has no property for, as "path: key (Type.Field)", and counts the
// keys it walked. The structs' omitempty keys count too: a test's outputs
// only show the keys its cases happen to write.
func (s *Schema) MissingKeys(typ reflect.Type) (missing []string, walked int) {
	var walk func(s *Schema, typ reflect.Type, path string)
	walk = func(s *Schema, typ reflect.Type, path string) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
			typ = typ.Elem()
			if s = s.Resolved(); s.Items != nil {
				s = s.Items
				path += "[]"
			}
		}
		if typ.Kind() != reflect.Struct {
			return
		}
		s = s.Resolved()
		for i := range typ.NumField() {
			f := typ.Field(i)
			tag := f.Tag.Get("json")
			if f.Anonymous && tag == "" {
				walk(s, f.Type, path)
				continue
			}
			k, _, _ := strings.Cut(tag, ",")
			if !f.IsExported() || k == "-" {
				continue
			}
			if k == "" {
				k = f.Name
			}
			walked++
			p, ok := s.Properties[k]
			if !ok {
				missing = append(missing, fmt.Sprintf("%s: %s (%s.%s)", path, k, typ.Name(), f.Name))
				continue
			}
			walk(p, f.Type, path+"."+k)
		}
	}
	walk(s, typ, "$")
	return missing, walked
}

// CheckKeys fails t for every JSON key of typ (walked as MissingKeys walks
// it) that the schema in file does not describe, taking the oneOf-th
// alternative where oneOf ≥ 0, and when the walk reached fewer than
// atLeast keys: the schema tests of cmd/zerosim and reports call it.
func CheckKeys(t testing.TB, file string, oneOf int, typ reflect.Type, atLeast int) {
	t.Helper()
	sch, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if oneOf >= 0 {
		sch = sch.OneOf[oneOf]
	}
	missing, n := sch.MissingKeys(typ)
	for _, m := range missing {
		t.Errorf("%s has no property %s", file, m)
	}
	if n < atLeast {
		t.Errorf("%s: %d keys walked, want %d at least: the walk missed the struct's", file, n, atLeast)
	}
}
