// Package scenarios owns the scenario file format (version 1): its schema,
// strict YAML decoding with file:line:column errors, units, presets (GPUs,
// links, models), --set overrides, validation, and the embedded examples.
//
// Load returns a resolved Scenario: presets expanded, defaults filled in and
// Model.LayerList explicit. Every error a file can cause is returned as an
// *Error naming its position; no input panics.
package scenarios
