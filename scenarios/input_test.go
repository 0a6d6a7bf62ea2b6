package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadInput: one resolution of a command's scenario argument for run,
// memory, verify, sweep and validate.
func TestReadInput(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(file, []byte(baseYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	// A file named like an example wins over the example.
	shadow := filepath.Join(dir, "seed002-tiny")
	if err := os.WriteFile(shadow, []byte(baseYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	def, _ := Example(DefaultExample)
	tiny, _ := Example("seed002-tiny")
	for _, tc := range []struct {
		arg, stdin, file, data, err string
	}{
		{arg: "", file: "default.yaml", data: string(def)},
		{arg: "-", stdin: "version: 1\n", file: "<stdin>", data: "version: 1\n"},
		{arg: file, file: file, data: baseYAML},
		{arg: "seed002-tiny", file: "seed002-tiny.yaml", data: string(tiny)},
		// As reports name an example (compare's JSON "file"): no such file
		// here, so the example.
		{arg: "seed002-tiny.yaml", file: "seed002-tiny.yaml", data: string(tiny)},
		{arg: shadow, file: shadow, data: baseYAML},
		{arg: filepath.Join(dir, "nope.yaml"), err: filepath.Join(dir, "nope.yaml") + ": cannot read the file: no such file or directory (check the path, or name an embedded example: zerosim scenarios)"},
		{arg: dir, err: dir + ": cannot read the file: is a directory (check the path, or name an embedded example: zerosim scenarios)"},
	} {
		in, err := ReadInput(tc.arg, strings.NewReader(tc.stdin))
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("ReadInput(%q) error %v, want %q", tc.arg, err, tc.err)
			}
			continue
		}
		if err != nil || in.File != tc.file || string(in.Data) != tc.data {
			t.Errorf("ReadInput(%q) = %q, %d bytes, %v; want %q, %d bytes", tc.arg, in.File, len(in.Data), err, tc.file, len(tc.data))
		}
	}
	// Standard input larger than a scenario may be stops being read after
	// MaxFileSize bytes, with ReadLimited's error.
	if _, err := ReadInput("-", strings.NewReader(strings.Repeat("#", 2*MaxFileSize))); err == nil || !strings.Contains(err.Error(), "<stdin>: the input is larger than") {
		t.Errorf("large stdin: %v", err)
	}
}
