package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestUnreadableFileOneLine holds the messages for a file an argument or a
// flag names that cannot be read, or an output that cannot be written: one
// line naming the flag and the path, the reason without Go's "open PATH:"
// and the fix. The comment of each row says what it printed before.
func TestUnreadableFileOneLine(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	afile := filepath.Join(dir, "afile")
	if err := os.WriteFile(afile, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args    []string
		mention []string
	}{
		// "merge: open DIR/missing: no such file or directory".
		{[]string{"merge", missing}, []string{"merge: " + missing + ": cannot read the file: no such file or directory (check the path)"}},
		// "DIR/missing: cannot read: open DIR/missing: no such file or directory".
		{[]string{"calibrate", missing}, []string{"zerosim: " + missing + ": cannot read the file: no such file or directory (check the path)"}},
		// "DIR: cannot read: read DIR: is a directory".
		{[]string{"calibrate", dir}, []string{"zerosim: " + dir + ": cannot read the file: is a directory (give a file, not a directory)"}},
		// "--calibration: open DIR/missing: no such file or directory".
		{[]string{"collective", "--calibration", missing}, []string{"--calibration " + missing + ": cannot read the file: no such file or directory (check the path)"}},
		// "--reference: open DIR/missing: no such file or directory".
		{[]string{"verify", "--reference", missing}, []string{"--reference " + missing + ": cannot read the file: no such file or directory (check the path)"}},
		// "--trace DIR/missing: cannot read: no such file or directory".
		{[]string{"calibrate", "--trace", missing, "seed002-tiny"}, []string{"--trace " + missing + ": cannot read the file: no such file or directory (check the path)"}},
		// "--train-log DIR: cannot read: read DIR: is a directory".
		{[]string{"calibrate", "--train-log", dir, "seed002-tiny"}, []string{"--train-log " + dir + ": cannot read the file: is a directory (give a file, not a directory)"}},
		// "--trace DIR/missing/t.json: directory DIR/missing does not exist".
		{[]string{"run", "seed002-tiny", "--trace", filepath.Join(missing, "t.json")}, []string{"directory " + missing + " does not exist (create it first"}},
		// "--out: open DIR/missing/s.csv: no such file or directory".
		{[]string{"sweep", "seed002-tiny", "--grid", "parallelism.k=1,2", "--out", filepath.Join(missing, "s.csv")}, []string{"--out " + filepath.Join(missing, "s.csv") + ": directory " + missing + " does not exist (create it first"}},
		// "-o DIR/afile: exists and is not a directory".
		{[]string{"run", "seed002-tiny", "-o", afile}, []string{"-o " + afile + ": exists and is not a directory (name a directory"}},
	} {
		code, out, errOut := runMain(t, "", tc.args...)
		oneLine(t, tc.args, code, out, errOut, tc.mention...)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("%s was created", missing)
	}
}
