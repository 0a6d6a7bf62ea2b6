package reports

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestWriteOutputDir writes into an existing directory: the named files
// appear complete, other files stay, no temporary file is left.
func TestWriteOutputDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.json"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	paths, err := WriteOutputDir(dir, []OutputFile{{"a.json", []byte("{}\n")}, {"b.svg", []byte("<svg/>")}})
	if err != nil || len(paths) != 2 {
		t.Fatalf("%v %v", paths, err)
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"a.json", "b.svg", "notes.txt"}) {
		t.Errorf("directory holds %v", names)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.json")); string(b) != "{}\n" {
		t.Errorf("a.json = %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(b) != "mine" {
		t.Errorf("notes.txt = %q", b)
	}
}

func TestWriteOutputDirErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "plain")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		dir   string
		files []OutputFile
	}{
		{"dir is a file", file, []OutputFile{{"a", nil}}},
		{"empty dir name", "", []OutputFile{{"a", nil}}},
		{"path in name", filepath.Join(dir, "new"), []OutputFile{{"../a", nil}}},
	} {
		if _, err := WriteOutputDir(tc.dir, tc.files); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	// Nothing was created by the failed calls.
	if _, err := os.Stat(filepath.Join(dir, "new")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("failed write created %s", filepath.Join(dir, "new"))
	}
}

// TestRenderError: a failing renderer yields an error and no file data.
func TestRenderError(t *testing.T) {
	f, err := Render("x.json", func(w io.Writer) error {
		io.WriteString(w, "partial")
		return errors.New("boom")
	})
	if err == nil || f.Data != nil {
		t.Errorf("Render: %v, %q", err, f.Data)
	}
	if _, err := Render("x.json", func(w io.Writer) error { return nil }); err != nil {
		t.Error(err)
	}
}
