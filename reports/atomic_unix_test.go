//go:build unix

package reports

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestWriteRespectsUmask: files are created 0666 less the umask, as any
// program's (they were forced to 0644).
func TestWriteRespectsUmask(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		umask int
		want  os.FileMode
	}{{0o077, 0o600}, {0o002, 0o664}, {0o022, 0o644}} {
		old := syscall.Umask(tc.umask)
		p := filepath.Join(dir, "f.txt")
		err := WriteFileAtomic(p, func(w io.Writer) error { return nil })
		syscall.Umask(old)
		if err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != tc.want {
			t.Errorf("umask %03o: mode %v, want %v", tc.umask, fi.Mode().Perm(), tc.want)
		}
	}
}
