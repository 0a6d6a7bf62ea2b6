package main

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestReadFileBoundedStat (qa20 L8): a regular file over the limit is
// refused from its size, before it is read: a 64 MiB sparse file against a
// 1 MiB limit allocates next to nothing (reading up to the limit first
// allocated more than 1 MiB).
func TestReadFileBoundedStat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(64 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = readFileBounded(path, 1<<20)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, errTooLarge) {
		t.Fatalf("err %v, want errTooLarge", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 256<<10 {
		t.Errorf("allocated %d B refusing a file over the limit, want it refused before reading", got)
	}
}
