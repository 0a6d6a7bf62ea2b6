package reports

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// OutputFile is one file of an output directory, rendered in memory before
// anything is written.
type OutputFile struct {
	Name string // base name inside the directory
	Data []byte
}

// render runs write into a buffer and returns the file; rendering every
// file first means a rendering error leaves no file behind.
func render(name string, write func(io.Writer) error) (OutputFile, error) {
	return renderSized(name, 0, write)
}

// renderSized is render into a buffer that starts with room for size bytes:
// a file of hundreds of MB grown by doubling holds about three times its
// size at the last copy.
func renderSized(name string, size int, write func(io.Writer) error) (OutputFile, error) {
	var b bytes.Buffer
	b.Grow(size)
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

// ManifestName is the file written last into an output directory: it lists
// the files of the run with their sizes and SHA-256, so a reader tells a
// complete directory (a manifest whose files all match) from one a crash,
// a full disk or a kill left with a mix of old and new files (no manifest,
// or files that do not match it).
const ManifestName = "manifest.json"

// Manifest is the content of ManifestName.
type Manifest struct {
	Tool string `json:"tool"`
	// ManifestMeta, when a command gives one (plan), says what made the
	// files.
	*ManifestMeta
	Files []ManifestFile `json:"files"`
}

// ManifestMeta says what made an output directory, with the field names of
// run's JSON (zerosim) and sweep's meta line (scenario_sha256, sets):
// enough, with the scenario, to make the files again.
type ManifestMeta struct {
	Zerosim  Build    `json:"zerosim"`
	Scenario string   `json:"scenario"`
	SHA256   string   `json:"scenario_sha256"`
	Sets     []string `json:"sets"`
	// Searched are the lists the command searched, by their plan.json
	// names; Reproduce the command that replays its answer.
	Searched  map[string]any `json:"searched,omitempty"`
	Reproduce string         `json:"reproduce,omitempty"`
}

// ManifestFile is one file of a Manifest.
type ManifestFile struct {
	Name   string `json:"name"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// BeginOutputDir creates dir if needed and removes its manifest before any
// file is replaced: from then until finishOutputDir the directory reads as
// incomplete.
func BeginOutputDir(dir string) error {
	if err := CheckOutputDir(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return &WriteError{Path: dir, Err: err}
	}
	m := filepath.Join(dir, ManifestName)
	if err := os.Remove(m); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return &WriteError{Path: m, Err: err}
	}
	return nil
}

// readManifest reads and decodes dir's manifest; the error says whether it
// is missing or not JSON.
func readManifest(dir string) (Manifest, error) {
	var m Manifest
	data, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		return m, fmt.Errorf("reports: %s: no %s: the directory is incomplete or being written", dir, ManifestName)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return m, fmt.Errorf("reports: %s: %w", ManifestName, err)
	}
	return m, nil
}

// ManifestFiles are the files dir's manifest lists, nil when dir has no
// readable manifest.
func ManifestFiles(dir string) []string {
	m, err := readManifest(dir)
	if err != nil {
		return nil
	}
	var names []string
	for _, f := range m.Files {
		names = append(names, filepath.Base(f.Name))
	}
	return names
}

// finishOutputDir writes dir's manifest, atomically and last, listing the
// files names (base names in dir, as written) with their sizes and hashes,
// and meta when not nil.
func finishOutputDir(dir string, names []string, meta *ManifestMeta) error {
	m := Manifest{Tool: "zerosim", ManifestMeta: meta, Files: []ManifestFile{}}
	for _, n := range names {
		f, err := os.Open(filepath.Join(dir, filepath.Base(n)))
		if err != nil {
			return &WriteError{Path: filepath.Join(dir, ManifestName), Err: err}
		}
		h := sha256.New()
		size, err := io.Copy(h, f)
		f.Close()
		if err != nil {
			return &WriteError{Path: filepath.Join(dir, ManifestName), Err: err}
		}
		m.Files = append(m.Files, ManifestFile{Name: filepath.Base(n), Bytes: size, SHA256: hex.EncodeToString(h.Sum(nil))})
	}
	return writeDirFile(filepath.Join(dir, ManifestName), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(m)
	})
}

// CheckManifest reports whether dir is a complete output directory: its
// manifest exists and every file it lists has the listed size and hash.
func CheckManifest(dir string) error {
	m, err := readManifest(dir)
	if err != nil {
		return err
	}
	for _, f := range m.Files {
		b, err := os.ReadFile(filepath.Join(dir, filepath.Base(f.Name)))
		if err != nil {
			return fmt.Errorf("reports: %s: %w", dir, err)
		}
		if sum := sha256.Sum256(b); int64(len(b)) != f.Bytes || hex.EncodeToString(sum[:]) != f.SHA256 {
			return fmt.Errorf("reports: %s: %s does not match the manifest (a mix of two runs)", dir, f.Name)
		}
	}
	return nil
}

// WriteOutputDir creates dir if needed and writes each file atomically
// (WriteFileAtomic: a temporary file in dir renamed over the target), so a
// reader sees the old file or the complete new one and a failure leaves no
// partial file; the manifest is removed first and written last
// (BeginOutputDir, finishOutputDir). Only the named files and the manifest
// are touched; other files in dir are left alone. It returns the paths
// written, manifest excluded.
func WriteOutputDir(dir string, files []OutputFile) ([]string, error) {
	return WriteOutputDirMeta(dir, files, nil)
}

// WriteOutputDirMeta is WriteOutputDir with meta in the manifest.
func WriteOutputDirMeta(dir string, files []OutputFile, meta *ManifestMeta) ([]string, error) {
	if err := CheckOutputDir(dir); err != nil {
		return nil, err
	}
	for _, f := range files {
		if f.Name == "" || filepath.Base(f.Name) != f.Name || f.Name == ManifestName {
			return nil, fmt.Errorf("reports: output file name %q is not a base name", f.Name)
		}
	}
	created := firstMissing(dir)
	if err := BeginOutputDir(dir); err != nil {
		return nil, err
	}
	paths, err := writeOutputFiles(dir, files, meta)
	if err != nil && created != "" {
		// A directory this call created holds only its files: a failure
		// (a full disk) removes it, leaving nothing behind (QA19 M4). In
		// a directory that was there, the missing manifest marks the mix.
		os.RemoveAll(created)
		paths = nil
	}
	return paths, err
}

// writeOutputFiles writes files into dir, each atomically, then the
// manifest, and returns the paths written.
func writeOutputFiles(dir string, files []OutputFile, meta *ManifestMeta) ([]string, error) {
	var paths, names []string
	for _, f := range files {
		p := filepath.Join(dir, f.Name)
		if err := writeDirFile(p, func(w io.Writer) error { _, err := w.Write(f.Data); return err }); err != nil {
			return paths, err
		}
		paths = append(paths, p)
		names = append(names, f.Name)
	}
	if err := finishOutputDir(dir, names, meta); err != nil {
		return paths, err
	}
	return paths, nil
}

// firstMissing is the outermost directory on dir's path that does not
// exist yet (what MkdirAll(dir) creates first), "" when dir exists.
func firstMissing(dir string) string {
	missing := ""
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil {
			return missing
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "" // not sure: remove nothing
		}
		missing = p
		if filepath.Dir(p) == p {
			return ""
		}
	}
}
