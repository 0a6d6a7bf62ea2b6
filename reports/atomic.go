package reports

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// OutputFile is one file of an output directory, rendered in memory before
// anything is written.
type OutputFile struct {
	Name string // base name inside the directory
	Data []byte
}

// Render runs write into a buffer and returns the file; rendering every
// file first means a rendering error leaves no file behind.
func Render(name string, write func(io.Writer) error) (OutputFile, error) {
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return OutputFile{}, fmt.Errorf("reports: rendering %s: %w", name, err)
	}
	return OutputFile{Name: name, Data: b.Bytes()}, nil
}

// CheckOutputDir reports whether dir can hold output files: it exists as a
// directory, or does not exist yet (WriteOutputDir creates it). It creates
// nothing.
func CheckOutputDir(dir string) error {
	if dir == "" {
		return fmt.Errorf("output directory: empty name")
	}
	fi, err := os.Stat(dir)
	switch {
	case err == nil && !fi.IsDir():
		return fmt.Errorf("output directory %s: exists and is not a directory", dir)
	case err == nil || os.IsNotExist(err):
		return nil
	}
	return fmt.Errorf("output directory: %w", err)
}

// WriteOutputDir creates dir if needed and writes each file atomically
// (WriteFileAtomic: a temporary file in dir renamed over the target), so a
// reader sees the old file or the complete new one and a failure leaves no
// partial file. Only the named files are touched; other files in dir are
// left alone. It returns the paths written.
func WriteOutputDir(dir string, files []OutputFile) ([]string, error) {
	if err := CheckOutputDir(dir); err != nil {
		return nil, err
	}
	for _, f := range files {
		if f.Name == "" || filepath.Base(f.Name) != f.Name {
			return nil, fmt.Errorf("reports: output file name %q is not a base name", f.Name)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}
	var paths []string
	for _, f := range files {
		p := filepath.Join(dir, f.Name)
		if err := WriteFileAtomic(p, func(w io.Writer) error { _, err := w.Write(f.Data); return err }); err != nil {
			return paths, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}
