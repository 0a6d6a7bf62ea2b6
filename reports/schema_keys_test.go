package reports

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestResultSchemaHasEveryKey: every key runJSON and memoryJSON can write
// into result.json (its top level and memory_model) is a property of
// docs/result.schema.json, including the omitempty keys that only some
// setups write. QA19 M3 found memory_model.gather_pool (DeepSpeed at
// stage 3) and host (offload) missing: TestResultJSONSchema only sees the
// keys its cases happen to write.
func TestResultSchemaHasEveryKey(t *testing.T) {
	b, err := os.ReadFile("../docs/result.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var sch struct {
		Properties map[string]struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(b, &sch); err != nil {
		t.Fatal(err)
	}
	mm := sch.Properties["memory_model"].Properties
	// deepspeed_offload is written by memory --estimator deepspeed only;
	// result.json's memory_model is zerosim's estimator (newMemoryJSON of
	// the run's memory.Report).
	skip := map[string]bool{"deepspeed_offload": true}
	for _, c := range []struct {
		where string
		typ   reflect.Type
		props func(string) bool
	}{
		{"the top level", reflect.TypeOf(runJSON{}), func(k string) bool { _, ok := sch.Properties[k]; return ok }},
		{"memory_model", reflect.TypeOf(memoryJSON{}), func(k string) bool { _, ok := mm[k]; return ok }},
	} {
		for i := 0; i < c.typ.NumField(); i++ {
			k, _, _ := strings.Cut(c.typ.Field(i).Tag.Get("json"), ",")
			if k == "" || k == "-" || skip[k] {
				continue
			}
			if !c.props(k) {
				t.Errorf("docs/result.schema.json has no %q at %s (%s.%s)", k, c.where, c.typ.Name(), c.typ.Field(i).Name)
			}
		}
	}
}
