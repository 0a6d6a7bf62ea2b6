package scenarios

import (
	"reflect"

	"gopkg.in/yaml.v3"
)

// Encode writes s as a scenario file: keys in field order, quantities in
// exact units (bytes, B/s, ps). For a resolved scenario this is the
// resolved scenario, presets expanded and --set applied: loading the bytes
// gives s again, so a report that carries them can be reproduced from the
// report alone.
func Encode(s *Scenario) ([]byte, error) {
	c := *s
	if c.Version == 0 {
		c.Version = 1
	}
	return yaml.Marshal(encode(reflect.ValueOf(&c).Elem()))
}
