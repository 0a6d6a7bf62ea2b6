//go:build unix

package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSignalRemovesTempFiles: SIGTERM or SIGINT during an atomic write (merge
// --out, its input a pipe that never ends) exits 143 or 130 and leaves no
// ".NAME.tmp…" file; the target is not created.
func TestSignalRemovesTempFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the CLI")
	}
	bin := filepath.Join(t.TempDir(), "zerosim")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGTERM, 143}, {syscall.SIGINT, 130}} {
		dir := t.TempDir()
		fifo := filepath.Join(dir, "shard.csv")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Skip("no fifo:", err)
		}
		out := filepath.Join(dir, "merged.csv")
		cmd := exec.Command(bin, "merge", "--out", out, fifo)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Hold the pipe open without writing: merge waits with its temp file.
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(20 * time.Second)
		for !hasTemp(dir) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if !hasTemp(dir) {
			t.Fatal("merge never created its temporary file")
		}
		cmd.Process.Signal(tc.sig)
		err = cmd.Wait()
		w.Close()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != tc.code {
			t.Errorf("%v: exit %v, want %d", tc.sig, err, tc.code)
		}
		if hasTemp(dir) {
			t.Errorf("%v left a temporary file", tc.sig)
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%v: %s exists", tc.sig, out)
		}
	}
}

func hasTemp(dir string) bool {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp") {
			return true
		}
	}
	return false
}
