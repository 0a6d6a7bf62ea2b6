package jsonschema

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheck: each keyword the docs' schemas use refuses what it should,
// and a $ref into another file or into the same one is followed (the
// referenced schema's rules apply, its description beside it does not
// hide them).
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("base.schema.json", `{"properties": {"build": {"type": "object", "properties": {"version": {"type": "string"}}, "required": ["version"], "additionalProperties": false}}}`)
	main := write("main.schema.json", `{
  "type": "object",
  "properties": {
    "zerosim": {"$ref": "base.schema.json#/properties/build", "description": "the build"},
    "n": {"type": "integer"},
    "mfu": {"type": "number"},
    "peak": {"type": ["integer", "null"]},
    "kind": {"type": "string", "enum": ["a", "b"]},
    "rows": {"type": "array", "items": {"$ref": "#/$defs/row"}},
    "line": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
    "size": {"oneOf": [{"type": "integer"}, {"type": "number"}]},
    "by": {"type": "object", "additionalProperties": {"type": "integer"}}
  },
  "required": ["n"],
  "additionalProperties": false,
  "$defs": {"row": {"type": "object", "properties": {"k": {"type": "integer"}}, "additionalProperties": false}}
}`)
	s, err := Load(main)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		doc  string
		want string // "" when valid, else the violation
	}{
		{`{"n": 1, "mfu": 0.5, "peak": null, "kind": "a", "zerosim": {"version": "devel"}, "rows": [{"k": 1}], "line": "x"}`, ""},
		{`{"n": 1, "mfu": 2}`, ""}, // an integer is a number
		{`{"n": 1.5}`, "$.n: number, want integer"},
		{`{"mfu": 1}`, `$: no key "n"`},
		{`{"n": 1, "extra": 1}`, `$: key "extra" is not in the schema`},
		{`{"n": 1, "peak": "x"}`, "$.peak: string, want integer or null"},
		{`{"n": 1, "kind": "c"}`, `$.kind: "c", want one of a, b`},
		{`{"n": 1, "zerosim": {}}`, `$.zerosim: no key "version"`},
		{`{"n": 1, "zerosim": {"version": "v1", "time": "x"}}`, `$.zerosim: key "time" is not in the schema`},
		{`{"n": 1, "rows": [{"k": 1}, {"k": "2"}]}`, "$.rows[1].k: string, want integer"},
		{`{"n": 1, "line": true}`, "$.line: matches none of oneOf's 2 schemas:"},
		// oneOf wants exactly one: an integer is also a number.
		{`{"n": 1, "size": 1.5}`, ""},
		{`{"n": 1, "size": 2}`, "$.size: matches oneOf's schemas 0, 1, want exactly one"},
		// additionalProperties as a schema holds every key not listed.
		{`{"n": 1, "by": {"a": 1, "b": 2}}`, ""},
		{`{"n": 1, "by": {"a": 1, "b": "2"}}`, "$.by.b: string, want integer"},
		{`[1]`, "$: array, want object"},
	} {
		v, err := Decode([]byte(tc.doc))
		if err != nil {
			t.Fatal(err)
		}
		got := s.Check(v, "$")
		if tc.want == "" && len(got) > 0 || tc.want != "" && (len(got) == 0 || got[0] != tc.want) {
			t.Errorf("%s: %q, want %q", tc.doc, got, tc.want)
		}
	}
	if _, err := Load(write("bad.schema.json", `{"properties": {"a": {"$ref": "base.schema.json#/properties/nothing"}}}`)); err == nil || !strings.Contains(err.Error(), `no "nothing"`) {
		t.Errorf("a $ref to nothing: %v", err)
	}
}

// TestLoadRefusesUnsupportedKeywords: a keyword Check does not enforce is
// refused at any depth, naming it and where it is (a schema with minimum,
// const, anyOf or minItems passed {"a":-7,"b":12,"c":[]} unchecked), while
// annotations and $defs load; every schema in docs/ loads.
func TestLoadRefusesUnsupportedKeywords(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ schema, want string }{
		{`{"type": "object", "properties": {"a": {"type": "integer", "minimum": 0}}}`, `/properties/a: keyword "minimum"`},
		{`{"properties": {"b": {"const": 3}}}`, `/properties/b: keyword "const"`},
		{`{"anyOf": [{"type": "string"}]}`, `/: keyword "anyOf"`},
		{`{"properties": {"c": {"type": "array", "items": {"type": "integer"}, "minItems": 1}}}`, `/properties/c: keyword "minItems"`},
		{`{"type": "array", "items": {"pattern": "^a"}}`, `/items: keyword "pattern"`},
		{`{"oneOf": [{"type": "string"}, {"format": "date"}]}`, `/oneOf/1: keyword "format"`},
		{`{"additionalProperties": {"maximum": 1}}`, `/additionalProperties: keyword "maximum"`},
		{`{"$ref": "#/$defs/x", "$defs": {"x": {"minLength": 1}}}`, `/$defs/x: keyword "minLength"`},
		{`{"properties": {"d": 1}}`, `/properties/d: a schema must be an object`},
		{`{"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "x", "title": "t", "description": "d", "$comment": "c", "additionalProperties": false, "$defs": {"r": {"type": "integer"}}}`, ""},
	} {
		p := filepath.Join(dir, "s.schema.json")
		if err := os.WriteFile(p, []byte(tc.schema), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(p)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: Load: %v, want %q", tc.schema, err, tc.want)
		}
	}
	docs, err := filepath.Glob("../../docs/*.schema.json")
	if err != nil || len(docs) < 10 {
		t.Fatalf("docs/*.schema.json: %d files, %v", len(docs), err)
	}
	for _, d := range docs {
		if _, err := Load(d); err != nil {
			t.Errorf("Load: %v", err)
		}
	}
}
