//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestOutputDirLinkReplaced: a symbolic link in -o DIR with the name of
// one of its files is that file of DIR: the link is replaced, and the file
// it pointed to outside DIR is left alone (QA25 M4: run -o DIR renamed
// result.json over the link's target, a scenario outside DIR).
func TestOutputDirLinkReplaced(t *testing.T) {
	tmp := t.TempDir()
	victim := filepath.Join(tmp, "victim.yaml")
	want := []byte("version: 1\n# not zerosim's\n")
	if err := os.WriteFile(victim, want, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "od")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"result.json", "manifest.json"} {
		if err := os.Symlink(victim, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	code, _, errOut := runMain(t, "", "run", "seed002-tiny", "-o", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if got, _ := os.ReadFile(victim); string(got) != string(want) {
		t.Errorf("the link's target outside -o DIR was replaced: %.60q", got)
	}
	for _, name := range []string{"result.json", "manifest.json"} {
		if fi, err := os.Lstat(filepath.Join(dir, name)); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%s: %v, %v; want the regular file written in place of the link", name, fi, err)
		}
	}
}

// TestOutputDirInTheWay: a directory in the way of one of -o DIR's files
// is refused before any file is written (QA25 L7: report.html was written,
// then result.json failed, leaving a partial set).
func TestOutputDirInTheWay(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "od")
	if err := os.MkdirAll(filepath.Join(dir, "result.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"run", "seed002-tiny", "-o", dir}
	code, out, errOut := runMain(t, "", args...)
	oneLine(t, args, code, out, errOut, "cannot write "+filepath.Join(dir, "result.json")+": a directory of that name is in the way (remove or rename it, or write elsewhere)")
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("-o %s holds %d entries after the refusal; want only the directory in the way", dir, len(entries))
	}
}

// TestOutputDirLinkToInput: a link in -o DIR to a file the command reads
// is still refused, but not as a write that "would destroy it": the link,
// not the file, would be replaced.
func TestOutputDirLinkToInput(t *testing.T) {
	tmp := t.TempDir()
	scen := filepath.Join(tmp, "s.yaml")
	data, _ := scenarios.Example("seed002-tiny")
	if err := os.WriteFile(scen, data, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "od")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(scen, filepath.Join(dir, "result.json")); err != nil {
		t.Fatal(err)
	}
	args := []string{"run", scen, "-o", dir}
	code, out, errOut := runMain(t, "", args...)
	oneLine(t, args, code, out, errOut, "-o "+dir+": result.json there is a link to a file this command reads, its argument "+scen+" (choose another -o, or remove the link)")
	if strings.Contains(errOut, "destroy") {
		t.Errorf("stderr %q", errOut)
	}
}
