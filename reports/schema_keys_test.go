package reports

import (
	"reflect"
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
		oneOf  int // the schema's oneOf branch the type writes, or -1
		typ    reflect.Type
	}{
		{"result", -1, reflect.TypeOf(runJSON{})},
		{"memory", -1, reflect.TypeOf(memoryFileJSON{})},
		{"plan", -1, reflect.TypeOf(planJSON{})},
		{"compare", -1, reflect.TypeOf(Comparison{})},
		{"fit", -1, reflect.TypeOf(fitJSON{})},
		{"collective", -1, reflect.TypeOf(CollectiveReport{})},
		{"verify", 0, reflect.TypeOf(VerifyReport{})},
		{"verify", 1, reflect.TypeOf(ReferenceReport{})},
		{"calibration", -1, reflect.TypeOf(calibrationJSON{})},
		{"manifest", -1, reflect.TypeOf(Manifest{})},
	} {
		jsonschema.CheckKeys(t, "../docs/"+c.schema+".schema.json", c.oneOf, c.typ, 10)
	}
}
