package scenarios

import (
	"bytes"
	"errors"

	"gopkg.in/yaml.v3"
)

// Load decodes, overrides (sets are "key.path=value"), resolves and validates
// one scenario file. file names the input in error messages.
//
// TEMPORARY minimal version: strict decoding only; presets, --set and
// validation are added by the scenarios work.
func Load(file string, data []byte, sets []string) (*Scenario, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var s Scenario
	if err := dec.Decode(&s); err != nil {
		return nil, &Error{File: file, Msg: err.Error()}
	}
	if len(sets) > 0 {
		return nil, &Error{File: file, Msg: "--set is not implemented yet"}
	}
	if s.Version != 1 {
		return nil, errors.New("version must be 1")
	}
	return &s, nil
}
