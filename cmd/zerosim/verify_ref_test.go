package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestReferenceTypeErrors (qa20 L5): a value of the wrong type in a
// reference file is one line at its line and column, naming the key and
// the type wanted, not Go's "cannot unmarshal string into Go struct field
// refHyper.hyper.lr of type float64".
func TestReferenceTypeErrors(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "numerics", "testdata", "reference", "adam-basic.json"))
	if err != nil {
		t.Fatal(err)
	}
	const give = " (give a zerosim-reference/v1 file, such as numerics/testdata/reference/adam-basic.json)\n"
	dir := t.TempDir()
	for _, c := range []struct{ old, new, want string }{
		{`"lr":0.001`, "\n  \"lr\": \"0.001\"", ":2:9: hyper.lr: a string, want a number"},
		{`"param0_f32":[0,`, `"param0_f32":[-5,`, ":1:%d: param0_f32: the number -5, want an integer from 0 to 4294967295"},
	} {
		text := strings.Replace(string(data), c.old, c.new, 1)
		want := c.want
		if strings.Contains(want, "%d") {
			want = strings.Replace(want, "%d", strconv.Itoa(strings.Index(text, "-5")+1), 1)
		}
		path := filepath.Join(dir, "ref.json")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		out, errOut, code := runCLI("verify", "--reference", path)
		if code != 2 || out != "" || errOut != "zerosim: --reference "+path+want+give {
			t.Errorf("%s: exit %d, stdout %q, stderr %q, want %q", c.new, code, out, errOut, "zerosim: --reference "+path+want+give)
		}
	}
}
