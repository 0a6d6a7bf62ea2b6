package reports

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// temps are the temporary files WriteFileAtomic has open, so RemoveTemps
// can delete them when the process is interrupted.
var temps struct {
	sync.Mutex
	paths map[string]bool
}

// RemoveTemps deletes the temporary files of every WriteFileAtomic in
// progress. zerosim calls it on SIGINT and SIGTERM before exiting, so an
// interrupted write leaves the old file and nothing else.
func RemoveTemps() {
	temps.Lock()
	defer temps.Unlock()
	removeTempsLocked()
}

// RemoveTempsAndExit deletes the temporary files as RemoveTemps does and
// exits with code while still holding the lock, so no write can create a
// temporary file between the clean-up and the exit.
func RemoveTempsAndExit(code int) {
	temps.Lock()
	removeTempsLocked()
	os.Exit(code)
}

func removeTempsLocked() {
	for p := range temps.paths {
		os.Remove(p)
	}
	clear(temps.paths)
}

// createTemp creates the temporary file name and registers it in one step
// under the lock, so a signal's clean-up sees every temporary file that
// exists.
func createTemp(name string) (*os.File, error) {
	temps.Lock()
	defer temps.Unlock()
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return nil, err
	}
	if temps.paths == nil {
		temps.paths = map[string]bool{}
	}
	temps.paths[name] = true
	return f, nil
}

// untrackTemp forgets a temporary file that was renamed or removed.
func untrackTemp(p string) {
	temps.Lock()
	defer temps.Unlock()
	delete(temps.paths, p)
}

// tempPrefix is the start of the temporary files of path's writes:
// ".NAME.tmp"; the process ID and a random number follow
// (".NAME.tmp<pid>-<random>").
func tempPrefix(path string) string { return "." + filepath.Base(path) + ".tmp" }

// staleAge is how old a temporary file of another live process must be to
// count as left behind (a write renders in memory first and takes seconds).
const staleAge = 24 * time.Hour

// removeStaleTemps deletes the temporary files of path's earlier writes
// whose process is gone (killed before it could clean up, even by kill -9)
// or that are older than staleAge. Another zerosim writing the same file
// right now keeps its file.
func removeStaleTemps(path string) {
	dir, prefix := filepath.Dir(path), tempPrefix(path)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		pidStr, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidStr)
		stale := err != nil || pid <= 0 || (pid != os.Getpid() && !processAlive(pid))
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > staleAge {
			stale = true
		}
		if stale {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// processAlive reports whether a process with that ID runs on this machine.
func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}

// WriteError is a failure to write an output file (-o's files, --trace, a
// sweep's or calibration's output): the file system refused it, not the
// model. Path names the file, Err the cause (a directory in the way, no
// permission, no space).
type WriteError struct {
	Path string
	Err  error
}

func (e *WriteError) Error() string { return fmt.Sprintf("reports: writing %s: %v", e.Path, e.Err) }
func (e *WriteError) Unwrap() error { return e.Err }

// WriteFileAtomic writes path through write: into a temporary file in the
// same directory (".NAME.tmp<pid>-<random>", created with mode 0666 less
// the umask, like any file), synced and renamed over path, so readers see
// the old file or the complete new one, never a partial file. Temporary
// files of earlier writes of path whose process is gone are deleted first;
// this write's is deleted on error, and by RemoveTemps on a signal.
//
// Only a regular file is replaced: a symbolic link to one is kept and its
// target replaced (beside the target, as Go's renameio and sed
// --follow-symlinks do), and anything else that exists — a device such as
// /dev/null, a FIFO, a socket, a link into /proc such as /dev/stdout — is
// written in place. (Renamed over, /dev/stdout became a regular file for
// every process on the machine.)
func WriteFileAtomic(path string, write func(io.Writer) error) error {
	return writeFileAtomic(path, atomicTarget, write)
}

// writeDirFile is WriteFileAtomic for a file of an output directory
// (WriteOutputDir), whose entries of its names are its own: a symbolic
// link there is replaced itself, not its target, which may be anything
// anywhere (QA25 M4: run -o DIR renamed result.json over a scenario a
// link in DIR pointed to).
func writeDirFile(path string, write func(io.Writer) error) error {
	return writeFileAtomic(path, entryTarget, write)
}

// entryTarget is atomicTarget without following a symbolic link.
func entryTarget(path string) (target string, inPlace bool, err error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return path, false, nil
	}
	return atomicTarget(path)
}

func writeFileAtomic(path string, targetOf func(string) (string, bool, error), write func(io.Writer) error) (err error) {
	target, inPlace, err := targetOf(path)
	if err != nil {
		return &WriteError{Path: path, Err: err}
	}
	if inPlace {
		return writeInPlace(path, write)
	}
	path = target
	removeStaleTemps(path)
	var f *os.File
	for range 100 {
		name := filepath.Join(filepath.Dir(path), tempPrefix(path)+strconv.Itoa(os.Getpid())+"-"+strconv.FormatUint(uint64(rand.Uint32()), 10))
		f, err = createTemp(name)
		if !errors.Is(err, os.ErrExist) {
			break
		}
	}
	if err != nil {
		return &WriteError{Path: path, Err: err}
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
		untrackTemp(f.Name())
	}()
	fw := &ErrWriter{W: f}
	bw := bufio.NewWriterSize(fw, 1<<16)
	if err = write(bw); err != nil {
		return wrapFileErr(fw, path, err)
	}
	if err = bw.Flush(); err != nil {
		return &WriteError{Path: path, Err: err}
	}
	if err = f.Sync(); err != nil {
		return &WriteError{Path: path, Err: err}
	}
	if err = f.Close(); err != nil {
		return &WriteError{Path: path, Err: err}
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return &WriteError{Path: path, Err: err}
	}
	return nil
}

// ErrWriter writes to W and keeps the first error W gave, for a caller
// whose writes go through something that may not return it: a buffer
// (WriteFileAtomic's: past its 64 KiB the file's error, "no space left on
// device" naming the temporary file, comes back through write, not from
// Flush, QA19 M4), or fmt.Fprintln, whose error nobody checks (QA19 L7).
type ErrWriter struct {
	W   io.Writer
	Err error
}

func (e *ErrWriter) Write(p []byte) (int, error) {
	n, err := e.W.Write(p)
	if err != nil && e.Err == nil {
		e.Err = err
	}
	return n, err
}

// wrapFileErr is err, write's error, as a WriteError on path when the file
// under fw gave it, and as it is when write failed on its own.
func wrapFileErr(fw *ErrWriter, path string, err error) error {
	if fw.Err != nil {
		return &WriteError{Path: path, Err: fw.Err}
	}
	return err
}

// atomicTarget is the file WriteFileAtomic replaces for path: path itself
// when it is a regular file or does not exist, a symbolic link's regular
// target; inPlace when path is something else, written without a rename.
func atomicTarget(path string) (target string, inPlace bool, err error) {
	fi, err := os.Lstat(path)
	switch {
	case err != nil:
		return path, false, nil // created (an error shows when creating)
	case fi.Mode().IsRegular():
		return path, false, nil
	case fi.IsDir():
		return "", false, syscall.EISDIR
	case fi.Mode()&os.ModeSymlink == 0:
		return "", true, nil // a device, a FIFO, a socket
	}
	if link, err := os.Readlink(path); err == nil && strings.HasPrefix(link, "/proc/") {
		return "", true, nil // /dev/stdout: whatever the descriptor is open on
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", true, nil // a dangling link: its target is created
	}
	if fi, err := os.Stat(real); err == nil && fi.Mode().IsRegular() {
		return real, false, nil
	}
	return atomicTarget(real)
}

// writeInPlace writes path through write, opened as it is (a device, a
// FIFO, a link to one): what a reader of it gets cannot be made atomic.
func writeInPlace(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return &WriteError{Path: path, Err: err}
	}
	defer f.Close()
	fw := &ErrWriter{W: f}
	bw := bufio.NewWriterSize(fw, 1<<16)
	if err := write(bw); err != nil {
		return wrapFileErr(fw, path, err)
	}
	if err := bw.Flush(); err != nil {
		return &WriteError{Path: path, Err: err}
	}
	if err := f.Close(); err != nil {
		return &WriteError{Path: path, Err: err}
	}
	return nil
}
