package main

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// fullWriter refuses every write, as standard output on a full disk.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestMergeFullStdout: merge to a standard output that cannot be written
// exits 1 like every other command (README: 1 … or standard output could
// not be written), not 2, an input error (QA25 L3).
func TestMergeFullStdout(t *testing.T) {
	out := filepath.Join(t.TempDir(), "s.csv")
	if code, _, errOut := runMain(t, "", "sweep", "seed002-tiny", "--grid", "parallelism.k=1,2", "--out", out); code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, errOut)
	}
	var errOut strings.Builder
	code := Main([]string{"merge", out}, strings.NewReader(""), fullWriter{}, &errOut)
	if code != exitFailure || !strings.Contains(errOut.String(), "no space left on device") || strings.Count(errOut.String(), "\n") != 1 {
		t.Errorf("merge > full stdout: exit %d, stderr %q; want exit 1 and one line", code, errOut.String())
	}
}
