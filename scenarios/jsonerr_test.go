package scenarios

import (
	"slices"
	"strings"
	"testing"
)

// TestJSONSyntaxErrorsPositioned: a config.json or ds_config.json that is
// not valid JSON is one line at the line and column of the slip (columns
// in characters), with the fix. Before, each was "FILE: not valid JSON:
// <encoding/json's message> (give …)", with no position: "invalid
// character '}' looking for beginning of object key string" for a trailing
// comma, "unexpected EOF" for a file cut off, "EOF" for an empty file.
func TestJSONSyntaxErrorsPositioned(t *testing.T) {
	for _, c := range []struct{ in, hf, ds string }{
		// A trailing comma: at the comma, which is what to delete.
		{"{\n  \"zero_optimization\": {\"stage\": 2,},\n}\n",
			"c.json:2:35: not valid JSON: a comma before '}' ends the list of keys with nothing after it (JSON allows no trailing comma: delete it)",
			"ds.json:2:35: not valid JSON: a comma before '}' ends the list of keys with nothing after it (JSON allows no trailing comma: delete it)"},
		{"{\n  \"betas\": [0.9, 0.95,\n  ]\n}",
			"c.json:2:22: not valid JSON: a comma before ']' ends the list of values",
			"ds.json:2:22: not valid JSON: a comma before ']' ends the list of values"},
		// A missing comma: at the key after it.
		{"{\n  \"a\": 1\n  \"b\": 2\n}",
			`c.json:3:3: not valid JSON: invalid character '"' after object key:value pair (a comma is missing before it: add one)`,
			`ds.json:3:3: not valid JSON: invalid character '"' after object key:value pair (a comma is missing before it: add one)`},
		// Columns count characters: "é" is one.
		{`{"a": "é", x}`,
			"c.json:1:12: not valid JSON: invalid character 'x' looking for beginning of object key string (fix the syntax there, or give the model's config.json)",
			"ds.json:1:12: not valid JSON: invalid character 'x' looking for beginning of object key string (fix the syntax there, or give the DeepSpeed config file)"},
		// Cut off: at the end of the text.
		{"{\n  \"hidden_size\": 4096,\n  \"archi",
			`c.json:3:9: not valid JSON: the file ends inside a value (a closing ", } or ] is missing, or the file was cut off: give the model's config.json)`,
			`ds.json:3:9: not valid JSON: the file ends inside a value (a closing ", } or ] is missing, or the file was cut off: give the DeepSpeed config file)`},
		{" \n\t\n", "c.json: empty file (give the model's config.json)", "ds.json: empty file (give the DeepSpeed config file)"},
		{"{}\n\n  {}", "c.json:3:3: not valid JSON: a second value after the first", "ds.json:3:3: not valid JSON: a second value after the first"},
		// A YAML file given for JSON.
		{"# ds\nstage: 3\n", "c.json:1:1: not valid JSON: invalid character '#'", "ds.json:1:1: not valid JSON: invalid character '#'"},
	} {
		_, err := ImportHF("c.json", []byte(c.in))
		if err == nil || len(err.Error()) < len(c.hf) || err.Error()[:len(c.hf)] != c.hf {
			t.Errorf("ImportHF(%q) = %v, want prefix %q", c.in, err, c.hf)
		}
		_, err = ImportDeepSpeed("ds.json", []byte(c.in), DeepSpeedOptions{})
		if err == nil || len(err.Error()) < len(c.ds) || err.Error()[:len(c.ds)] != c.ds {
			t.Errorf("ImportDeepSpeed(%q) = %v, want prefix %q", c.in, err, c.ds)
		}
	}
}

// TestJSONNumberMessages: a number in quotes is told to lose them (it said
// "use a number such as 1"), and a whole number too large for the key is
// out of range (it said "is not a whole number", which 1e20 is). Each
// names the key's line and column (QA2 finding 12).
func TestJSONNumberMessages(t *testing.T) {
	llama := `{"model_type": "llama", "vocab_size": 10, `
	for _, c := range []struct{ in, want string }{
		{llama + `"hidden_size": "4096"}`, `c.json:1:43: hidden_size is "4096", not a whole number (write it without quotes: 4096)`},
		{llama + `"hidden_size": 64, "num_hidden_layers": 100000000000000000000}`, "c.json:1:62: num_hidden_layers=100000000000000000000 is out of range (use 1 to 1024)"},
		{llama + `"hidden_size": 64, "num_hidden_layers": 1e20}`, "c.json:1:62: num_hidden_layers=1e20 is out of range (use 1 to 1024)"},
		// Unchanged: not a number, not whole.
		{llama + `"hidden_size": "big"}`, `c.json:1:43: hidden_size is "big", not a whole number (use a number such as 1)`},
		// Not whole: the nearest whole number in range (it said "use a
		// number such as 1", QA17 L6).
		{llama + `"hidden_size": 4.5}`, "c.json:1:43: hidden_size=4.5 is not a whole number (use 4 or 5, the nearest whole numbers)"},
		{llama + `"hidden_size": 8192, "num_hidden_layers": 80, "num_attention_heads": 64, "intermediate_size": 28672.25}`, "c.json:1:116: intermediate_size=28672.25 is not a whole number (use 28672, the nearest whole number)"},
		{llama + `"hidden_size": 4095.75}`, "c.json:1:43: hidden_size=4095.75 is not a whole number (use 4096, the nearest whole number)"},
		{llama + `"hidden_size": 0.25}`, "c.json:1:43: hidden_size=0.25 is not a whole number (use 1 to 1048576; 1 is the nearest)"},
	} {
		_, err := ImportHF("c.json", []byte(c.in))
		if err == nil || err.Error() != c.want {
			t.Errorf("ImportHF(%s) = %v, want %q", c.in, err, c.want)
		}
	}
	for _, c := range []struct{ in, want string }{
		// zero_optimization.stage "3" is stage 3, as DeepSpeed's pydantic
		// reads it (TestDeepSpeedStageLaxInt); the batch keys are read
		// raw (get_scalar_param), so a quoted one stays refused.
		{`{"train_micro_batch_size_per_gpu": "2"}`, `ds.json:1:2: train_micro_batch_size_per_gpu is "2", not a whole number (write it without quotes: 2)`},
		{`{"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": "three"}}`, `ds.json:1:61: zero_optimization.stage is "three", not a whole number (use 0, 1, 2 or 3)`},
		{`{"train_micro_batch_size_per_gpu": 1, "gradient_clipping": "1.0"}`, `ds.json:1:39: gradient_clipping is "1.0", not a number (write it without quotes: 1.0)`},
		{`{"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 2, "reduce_bucket_size": 1e30}}`, "ds.json:1:73: zero_optimization.reduce_bucket_size=1e30 is out of range (use 1 to 1152921504606846976)"},
		{`{"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 2.5}}`, "ds.json:1:61: zero_optimization.stage=2.5 is not a whole number (use 2 or 3, the nearest whole numbers)"},
		{`{"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 3.9}}`, "ds.json:1:61: zero_optimization.stage=3.9 is not a whole number (use 0 to 3; 3 is the nearest)"},
	} {
		_, err := ImportDeepSpeed("ds.json", []byte(c.in), DeepSpeedOptions{})
		if err == nil || err.Error() != c.want {
			t.Errorf("ImportDeepSpeed(%s) = %v, want %q", c.in, err, c.want)
		}
	}
}

// TestJSONByteOrderMark: a UTF-8 byte-order mark at the start of a JSON
// input is read as each tool reads it. DeepSpeed's hjson.load skips it:
// the import is the same as without it, with a note that Accelerate's and
// the Trainer's json.load refuse it. transformers' json.loads refuses a
// config.json with one: the error names the mark and the fix. Before,
// both said "invalid character 'ï' looking for beginning of value" (QA17
// L7).
func TestJSONByteOrderMark(t *testing.T) {
	const bom = "\xef\xbb\xbf"
	ds := `{"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 4, "bf16": {"enabled": true}, "zero_optimization": {"stage": 3}}`
	plain, err := ImportDeepSpeed("ds.json", []byte(ds), DeepSpeedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	marked, err := ImportDeepSpeed("ds.json", []byte(bom+ds), DeepSpeedOptions{})
	if err != nil {
		t.Fatalf("with a byte-order mark: %v", err)
	}
	if !slices.Equal(marked.Settings, plain.Settings) || len(marked.Notes) != len(plain.Notes)+1 || !strings.HasPrefix(marked.Notes[0], "the file starts with a UTF-8 byte-order mark: DeepSpeed's hjson.load skips it") {
		t.Errorf("with a byte-order mark: settings %v, notes %q; without: %v, %q", marked.Settings, marked.Notes, plain.Settings, plain.Notes)
	}
	for _, c := range []struct{ in, want string }{
		{bom + `{"model_type": "llama"}`, `c.json:1:1: not valid JSON: the file starts with a UTF-8 byte-order mark (EF BB BF), which Python's json.loads refuses too ("Unexpected UTF-8 BOM"): save it as UTF-8 without the mark`},
		// A mark elsewhere is not at the start: as before.
		{`{"model_type": "llama"}` + bom, "c.json:1:24: not valid JSON: a second value after the first"},
	} {
		_, err := ImportHF("c.json", []byte(c.in))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("ImportHF(%q) = %v, want %q", c.in, err, c.want)
		}
	}
	// A key error's position is the same with the mark as without it.
	_, err = ImportDeepSpeed("ds.json", []byte(bom+`{"train_micro_batch_size_per_gpu": "2"}`), DeepSpeedOptions{})
	if want := `ds.json:1:2: train_micro_batch_size_per_gpu is "2"`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("%v, want %q", err, want)
	}
}
