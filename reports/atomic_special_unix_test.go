//go:build unix

package reports

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestWriteFileAtomicSpecialFiles: only a regular file is renamed over. A
// symbolic link stays a link (its target is replaced), a FIFO stays a FIFO
// and its reader gets the bytes, a dangling link's target is created, a
// directory is refused. Before, each became a regular file: `run --trace
// /dev/stdout` as root replaced the machine's /dev/stdout (QA s16
// finding 1). No device is touched here: a failing test must not do that.
func TestWriteFileAtomicSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	data := []byte("trace\n")
	write := func(w io.Writer) error { _, err := w.Write(data); return err }

	target, link := filepath.Join(dir, "target"), filepath.Join(dir, "link")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("target", link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(link, write); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("link: %v, %v; want it still a symbolic link", fi.Mode(), err)
	}
	if got, _ := os.ReadFile(target); string(got) != string(data) {
		t.Errorf("link's target holds %q, want %q", got, data)
	}

	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink("made", dangling); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(dangling, write); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "made")); string(got) != string(data) {
		t.Errorf("dangling link's target holds %q, want %q", got, data)
	}
	if fi, err := os.Lstat(dangling); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("dangling link: %v, %v; want it still a symbolic link", fi.Mode(), err)
	}

	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	got := make(chan []byte)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- nil
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- b
	}()
	if err := WriteFileAtomic(fifo, write); err != nil {
		t.Fatal(err)
	}
	select {
	case b := <-got:
		if string(b) != string(data) {
			t.Errorf("FIFO's reader got %q, want %q", b, data)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("FIFO's reader got nothing in 10 s")
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("fifo: %v, %v; want it still a FIFO", fi.Mode(), err)
	}

	if err := WriteFileAtomic(dir, write); err == nil {
		t.Errorf("a directory was written over")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 5 {
		t.Errorf("%d entries left in the directory, want 5 (no temporary file): %v", len(entries), entries)
	}
}

// TestWriteInPlaceFullDevice (QA19 M4): a device that refuses a write past
// bufio's 64 KiB (/dev/full) gives a WriteError naming it, as one that
// refuses at Flush does; before, the bare "write /dev/full: no space left
// on device" came back.
func TestWriteInPlaceFullDevice(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	for _, n := range []int{100, 200 << 10} {
		err := WriteFileAtomic("/dev/full", func(w io.Writer) error { _, err := w.Write(make([]byte, n)); return err })
		var we *WriteError
		if !errors.As(err, &we) || we.Path != "/dev/full" || !errors.Is(err, syscall.ENOSPC) {
			t.Errorf("%d bytes: %v, want a WriteError on /dev/full (ENOSPC)", n, err)
		}
	}
}
