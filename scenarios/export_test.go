package scenarios

import (
	"reflect"
	"testing"
)

// Encode of a loaded scenario loads back to the same scenario, for every
// embedded example with an override.
func TestEncodeRoundTrip(t *testing.T) {
	for _, name := range ExampleNames() {
		data, _ := Example(name)
		s, err := Load(name+".yaml", data, []string{"parallelism.zero_stage=2"})
		if err != nil {
			t.Fatal(err)
		}
		enc, err := Encode(s)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Load("encoded.yaml", enc, nil)
		if err != nil {
			t.Fatalf("%s: encoded scenario does not load: %v", name, err)
		}
		if !reflect.DeepEqual(s, back) {
			t.Errorf("%s: the encoded scenario loads to a different scenario", name)
		}
	}
}
