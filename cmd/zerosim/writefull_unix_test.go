//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// fullChild runs args in a child process (this test binary again) whose
// files cannot grow past limit bytes (RLIMIT_FSIZE: a write past it fails
// with EFBIG, as one on a full disk fails with ENOSPC), and returns its
// exit code, stdout and stderr.
func fullChild(t *testing.T, limit int, args ...string) (int, string, string) {
	t.Helper()
	a, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^TestWriteErrorOnFullFile$")
	cmd.Env = append(os.Environ(), "ZEROSIM_FULL_CHILD="+strconv.Itoa(limit), "ZEROSIM_FULL_ARGS="+string(a))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child %v: %v\n%s", args, err, out)
	}
	var r struct {
		Code        int
		Out, ErrOut string
	}
	if err := json.Unmarshal(out[:bytes.IndexByte(out, '\n')], &r); err != nil {
		t.Fatalf("child %v: %v\n%s", args, err, out)
	}
	return r.Code, r.Out, r.ErrOut
}

// TestWriteErrorOnFullFile (QA19 M4): a file the file system refuses past
// 64 KiB (bufio's buffer in reports.WriteFileAtomic) is the same one line
// as a small one: exit 2, the target's name (not the temporary file's)
// and the fix, nothing on stdout, no file left. Before: exit 1, "write
// DIR/.report.html.tmp…: file too large", after the whole report on
// stdout; sweep --out left its file with the header cut.
func TestWriteErrorOnFullFile(t *testing.T) {
	if lim := os.Getenv("ZEROSIM_FULL_CHILD"); lim != "" {
		n, _ := strconv.Atoi(lim)
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: uint64(n), Max: uint64(n)}); err != nil {
			t.Fatal(err)
		}
		var args []string
		json.Unmarshal([]byte(os.Getenv("ZEROSIM_FULL_ARGS")), &args)
		var out, errOut bytes.Buffer
		code, _ := execute(args, strings.NewReader(""), &out, &errOut)
		b, _ := json.Marshal(map[string]any{"Code": code, "Out": out.String(), "ErrOut": errOut.String()})
		os.Stdout.Write(append(b, '\n'))
		return
	}
	dir := t.TempDir()
	const limit = 40 << 10 // report.html is larger, and larger than 64 KiB
	for _, c := range []struct {
		args []string
		want string // stderr's start (the fix ends it)
		gone string // a path that must not exist afterwards
	}{
		{[]string{"run", "seed002-tiny", "-o", filepath.Join(dir, "out")},
			"zerosim: -o " + filepath.Join(dir, "out") + ": cannot write " + filepath.Join(dir, "out", "report.html") + ": file too large (raise the file size limit, ulimit -f, or write elsewhere)\n",
			filepath.Join(dir, "out")},
		{[]string{"run", "seed000-k4", "--trace", filepath.Join(dir, "t.json")},
			"zerosim: --trace " + filepath.Join(dir, "t.json") + ": cannot write it: file too large (raise the file size limit, ulimit -f, or write elsewhere)\n",
			filepath.Join(dir, "t.json")},
		// plan and compare write -o first too; which file is refused
		// first is theirs to say.
		{[]string{"plan", "seed000-k4", "-o", filepath.Join(dir, "p")}, "zerosim: -o " + filepath.Join(dir, "p") + ": cannot write " + filepath.Join(dir, "p") + string(filepath.Separator), filepath.Join(dir, "p")},
		{[]string{"compare", "seed000-k4", "--vary", "parallelism.k=1,2", "-o", filepath.Join(dir, "c")}, "zerosim: -o " + filepath.Join(dir, "c") + ": cannot write " + filepath.Join(dir, "c") + string(filepath.Separator), filepath.Join(dir, "c")},
	} {
		code, out, errOut := fullChild(t, limit, c.args...)
		const fix = ": file too large (raise the file size limit, ulimit -f, or write elsewhere)\n"
		if code != exitInput || out != "" || !strings.HasPrefix(errOut, c.want) || !strings.HasSuffix(errOut, fix) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %d bytes, stderr %q; want exit 2, nothing on stdout, %q", c.args, code, len(out), errOut, c.want)
		}
		if _, err := os.Stat(c.gone); err == nil {
			t.Errorf("%v: %s was left", c.args, c.gone)
		}
		if m, _ := filepath.Glob(filepath.Join(dir, ".*.tmp*")); len(m) > 0 {
			t.Errorf("%v: temporary files left: %v", c.args, m)
		}
	}
	// sweep --out: a header cut short removes the file; rows written are
	// kept for --resume.
	s := filepath.Join(dir, "s.csv")
	code, out, errOut := fullChild(t, 100, "sweep", "seed002-tiny", "--grid", "parallelism.k=1,2", "--out", s)
	if want := "zerosim: --out " + s + ": cannot write it: file too large (raise the file size limit, ulimit -f, or write elsewhere)\n"; code != exitInput || out != "" || errOut != want {
		t.Errorf("sweep, header cut: exit %d, stdout %q, stderr %q; want exit 2 and %q", code, out, errOut, want)
	}
	if _, err := os.Stat(s); err == nil {
		t.Errorf("sweep, header cut: %s was left", s)
	}
	code, _, errOut = fullChild(t, 1000, "sweep", "seed002-tiny", "--grid", "parallelism.k=1,2", "--grid", "communication.bucket_size=1MB,2MB,3MB,4MB,5MB,6MB", "--out", s)
	if want := "; the rows written are kept: continue with --resume --out " + s + "\n"; code != exitInput || !strings.HasPrefix(errOut, "zerosim: cannot write "+s+": file too large") || !strings.HasSuffix(errOut, want) {
		t.Errorf("sweep, rows cut: exit %d, stderr %q; want exit 2, the file and %q", code, errOut, want)
	}
	if fi, err := os.Stat(s); err != nil || fi.Size() == 0 {
		t.Errorf("sweep, rows cut: the rows written were not kept (%v)", err)
	}
}
