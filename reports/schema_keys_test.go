package reports

import (
	"reflect"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/internal/jsonschema"
)

// TestSchemasHaveEveryKey: every key the JSON outputs' structs can write,
// at every depth, is a property of their docs/*.schema.json, including the
// omitempty keys only some setups write. QA19 M3 found result.json's
// memory_model.gather_pool (DeepSpeed at stage 3) and host (offload)
// missing: the schema tests only see the keys their cases happen to write.
func TestSchemasHaveEveryKey(t *testing.T) {
	for _, c := range []struct {
		schema string
		typ    reflect.Type
	}{
		{"result", reflect.TypeOf(runJSON{})},
		{"memory", reflect.TypeOf(memoryFileJSON{})},
		{"plan", reflect.TypeOf(planJSON{})},
		{"compare", reflect.TypeOf(Comparison{})},
		{"fit", reflect.TypeOf(fitJSON{})},
		{"collective", reflect.TypeOf(CollectiveReport{})},
		{"verify", reflect.TypeOf(VerifyReport{})},
		{"calibration", reflect.TypeOf(calibrationJSON{})},
		{"manifest", reflect.TypeOf(Manifest{})},
	} {
		sch, err := jsonschema.Load("../docs/" + c.schema + ".schema.json")
		if err != nil {
			t.Fatal(err)
		}
		n := schemaKeys(t, "docs/"+c.schema+".schema.json: $", sch, c.typ)
		if n < 10 {
			t.Errorf("%s: %d keys walked; the walk missed the struct's", c.schema, n)
		}
	}
}

// schemaKeys checks that every JSON key of typ (a struct, through pointers
// and slices) is a property of sch, recursively, and returns how many keys
// it checked.
func schemaKeys(t *testing.T, where string, sch *jsonschema.Schema, typ reflect.Type) int {
	t.Helper()
	for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
		typ = typ.Elem()
		if sch = sch.Resolved(); sch.Items != nil {
			sch = sch.Items
		}
	}
	if typ.Kind() != reflect.Struct {
		return 0
	}
	sch = sch.Resolved()
	n := 0
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag := f.Tag.Get("json")
		if f.Anonymous && tag == "" {
			n += schemaKeys(t, where, sch, f.Type)
			continue
		}
		k, _, _ := strings.Cut(tag, ",")
		if !f.IsExported() || k == "-" {
			continue
		}
		if k == "" {
			k = f.Name
		}
		n++
		p, ok := sch.Properties[k]
		if !ok {
			t.Errorf("%s: no property %q for %s.%s", where, k, typ.Name(), f.Name)
			continue
		}
		n += schemaKeys(t, where+"."+k, p, f.Type)
	}
	return n
}
