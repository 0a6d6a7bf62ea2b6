// Package scenarios owns the scenario file format (version 1): its schema,
// strict YAML decoding with file:line:column errors, units, presets (GPUs,
// links, models), --set overrides, validation, and the embedded examples.
//
// ReadInput resolves what a command names (a file, "-" for standard input
// or an embedded example) and Load returns a resolved Scenario: presets expanded, defaults
// filled in and Model.LayerList explicit. Every error a file can cause is
// returned as an *Error whose message is one line, "file:line:col: what is
// wrong (what is allowed)"; no input panics. Resolve (and Validate) run the
// same resolution on a Scenario built or edited in Go; the compute packages
// take only resolved scenarios and validate nothing themselves. Enumerated
// values are typed (Padding, Algorithm, NICSharing, Recompute, Axis,
// LinkClass, DType, Optimizer) and spelled as in the files; Layer.Block marks
// the transformer blocks once for every package.
//
// Loading runs in stages on the yaml.Node tree: parse one document, expand
// aliases and merge keys (at most MaxAliasNodes nodes), reject duplicate,
// non-string and empty keys, apply the --set flags, decode by walking the
// tree and the Go fields together (an unknown key, a value of the wrong kind
// and a bad quantity are each reported at their own node; quantities are
// read with units' Parse functions), then resolve presets and defaults and
// validate ranges and consistency using a path → position index. The format
// reference, with every key, default and preset, is docs/scenario-format.md.
//
// ImportHF reads a Hugging Face config.json into a model; ImportTorchtitan
// reads a torchtitan job config (TOML) into a whole scenario, refusing what
// zerosim does not model (tensor, pipeline and expert parallelism) in one
// line naming file:line:column.
//
// ExampleNames and Example give the embedded examples (examples/*.yaml);
// GPUPresets, LinkPresets and ModelPresets list the presets.
package scenarios
