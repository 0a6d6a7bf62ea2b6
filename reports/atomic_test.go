package reports

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
	if !slices.Equal(names, []string{"a.json", "b.svg", "manifest.json", "notes.txt"}) {
		t.Errorf("directory holds %v", names)
	}
	if err := CheckManifest(dir); err != nil {
		t.Errorf("complete directory: %v", err)
	}
	m, _ := os.ReadFile(filepath.Join(dir, ManifestName))
	// sha256("{}\n") and sha256("<svg/>"), from sha256sum.
	for _, want := range []string{`"name": "a.json",
      "bytes": 3,
      "sha256": "ca3d163bab055381827226140568f3bef7eaac187cebd76878e0b63e9e442356"`, `"name": "b.svg"`} {
		if !strings.Contains(string(m), want) {
			t.Errorf("manifest %s lacks %s", m, want)
		}
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
	f, err := render("x.json", func(w io.Writer) error {
		io.WriteString(w, "partial")
		return errors.New("boom")
	})
	if err == nil || f.Data != nil {
		t.Errorf("Render: %v, %q", err, f.Data)
	}
	if _, err := render("x.json", func(w io.Writer) error { return nil }); err != nil {
		t.Error(err)
	}
}

// TestManifestTellsMixedDirectories: a file replaced by another run's (the
// full-disk case: new report, old trace) or a directory whose rewrite
// stopped before its manifest reads as incomplete.
func TestManifestTellsMixedDirectories(t *testing.T) {
	dir := t.TempDir()
	if _, err := WriteOutputDir(dir, []OutputFile{{"a.json", []byte("1")}, {"trace.json", []byte("old")}}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "trace.json"), []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CheckManifest(dir); err == nil || !strings.Contains(err.Error(), "trace.json does not match") {
		t.Errorf("mixed directory: %v", err)
	}
	if err := BeginOutputDir(dir); err != nil {
		t.Fatal(err)
	}
	if err := CheckManifest(dir); err == nil || !strings.Contains(err.Error(), "incomplete") {
		t.Errorf("directory being rewritten: %v", err)
	}
}

// TestTempFilesCleaned: the temporary file of a write killed earlier (its
// process gone) is removed by the next write of the same file; a live
// process's is kept; RemoveTemps removes the ones in progress.
func TestTempFilesCleaned(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "report.html")
	dead := filepath.Join(dir, ".report.html.tmp2147483646-12345") // no such process
	live := filepath.Join(dir, ".report.html.tmp1-12345")          // init runs
	other := filepath.Join(dir, ".trace.json.tmp2147483646-1")     // another file's
	for _, p := range []string{dead, live, other} {
		if err := os.WriteFile(p, []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteFileAtomic(target, func(w io.Writer) error { _, err := io.WriteString(w, "ok"); return err }); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{dead: false, live: true, other: true, target: true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s exists: %v, want %v", filepath.Base(p), err == nil, want)
		}
	}
	// A write in progress when RemoveTemps runs (as on SIGTERM) leaves no
	// temporary file.
	err := WriteFileAtomic(filepath.Join(dir, "x.json"), func(w io.Writer) error {
		RemoveTemps()
		return errors.New("interrupted")
	})
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".x.json") {
			t.Errorf("left %s (%v)", e.Name(), err)
		}
	}
}
