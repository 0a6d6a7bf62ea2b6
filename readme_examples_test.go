package zerosim_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// example is one "$ zerosim …" command of a README console block with the
// output the README shows for it.
type example struct {
	line int
	args []string
	want []string
	// exit is the code the README shows with "$ echo $?", or -1.
	exit int
}

// readmeExamples parses the console blocks of a Markdown file (the README,
// docs/*.md).
func readmeExamples(t *testing.T, path string) []example {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []example
	in := false
	for i, line := range strings.Split(string(b), "\n") {
		switch {
		case line == "```console":
			in = true
		case in && line == "```":
			in = false
		case in && line == "$ echo $?":
			out[len(out)-1].exit = -2 // the next line holds the code
		case in && strings.HasPrefix(line, "$ zerosim "):
			out = append(out, example{line: i + 1, args: strings.Fields(line)[2:], exit: -1})
		case in && len(out) > 0 && out[len(out)-1].exit == -2:
			code, err := strconv.Atoi(line)
			if err != nil {
				t.Fatalf("%s:%d: %q after echo $? is not an exit code", path, i+1, line)
			}
			out[len(out)-1].exit = code
		case in && len(out) > 0:
			out[len(out)-1].want = append(out[len(out)-1].want, line)
		}
	}
	return out
}

// matches reports whether got holds the want lines in order, where a want
// line containing "…" stands for any number of lines (the README elides
// long output), and every other line must match exactly. A "…" line that
// shows text stands for a line holding that text, the pieces between the
// "…"s in order (the first at its start, the last at its end unless the
// line ends in "…"), and any number of lines after it: the sweep's meta
// line shows the first digits of scenario_sha256, which went stale unseen
// (QA22 L1: "7784da52…" where zerosim printed 3d4a102b…), and after
// "binary_sha256":"…" the digest and grids went unchecked.
func matches(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if strings.Contains(want[0], "…") {
		if strings.TrimSpace(strings.ReplaceAll(want[0], "…", "")) != "" {
			if len(got) == 0 || !elidedLine(want[0], got[0]) {
				return false
			}
			got = got[1:]
		}
		for k := 0; k <= len(got); k++ {
			if matches(want[1:], got[k:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && got[0] == want[0] && matches(want[1:], got[1:])
}

// elidedLine reports whether line holds the pieces of want between its
// "…"s in order: the first at the start, the last at the end.
func elidedLine(want, line string) bool {
	pieces := strings.Split(want, "…")
	first, last := pieces[0], pieces[len(pieces)-1]
	if !strings.HasPrefix(line, first) {
		return false
	}
	rest := line[len(first):]
	for _, p := range pieces[1 : len(pieces)-1] {
		i := strings.Index(rest, p)
		if i < 0 {
			return false
		}
		rest = rest[i+len(p):]
	}
	return strings.HasSuffix(rest, last)
}

// TestMatches: the elisions TestREADMEExamples reads, on the sweep's meta
// line (a stale digest or grid after a mid-line "…" fails) and on elided
// output lines.
func TestMatches(t *testing.T) {
	meta := `# zerosim sweep {"zerosim":{"version":"devel","binary_sha256":"0c7bd50aaa5d"},"scenario_sha256":"3d4a102b9f","sets":[],"grids":["parallelism.k=1,2"]}`
	rows := []string{meta, "index,k", "0,1", "1,2"}
	for _, c := range []struct {
		name string
		want []string
		ok   bool
	}{
		{"exact", rows, true},
		{"meta elided", []string{`# zerosim sweep {"zerosim":{"version":"devel","binary_sha256":"…"},"scenario_sha256":"3d4a102b…","sets":[],"grids":["parallelism.k=1,2"]}`, "index,k", "…"}, true},
		{"stale digest after a …", []string{`# zerosim sweep {"zerosim":{"version":"devel","binary_sha256":"…"},"scenario_sha256":"7784da52…","sets":[],"grids":["parallelism.k=1,2"]}`, "…"}, false},
		{"other grid after a …", []string{`# zerosim sweep {"zerosim":{"version":"devel","binary_sha256":"…"},"scenario_sha256":"3d4a102b…","sets":[],"grids":["parallelism.k=1,4"]}`, "…"}, false},
		{"stale prefix", []string{`# zerosim sweep {"zerosim":{"version":"v1…`, "…"}, false},
		{"a row's start", []string{meta, "index,k", "0,…"}, true},
		{"a row's end", []string{meta, "…", "…,2"}, true},
		{"a missing row", []string{meta, "index,k", "…", "2,…"}, false},
		{"lines elided", []string{meta, "…"}, true},
		{"an extra line", append(rows, "2,4"), false},
	} {
		if got := matches(c.want, rows); got != c.ok {
			t.Errorf("%s: matches = %v, want %v", c.name, got, c.ok)
		}
	}
}

// Every zerosim command the README shows prints what the README says it
// prints (with "…" lines as elisions), so the tour cannot drift from the
// code; the console blocks of docs/*.md hold as the README's do
// (docs/sweeps.md's compare, sweep and fit). The CLI is built once for
// both.
func TestREADMEExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the CLI")
	}
	bin := filepath.Join(t.TempDir(), "zerosim")
	// Without VCS stamping the version is "devel" wherever the test runs
	// (the README's run report shows it).
	if out, err := exec.Command("go", "build", "-buildvcs=false", "-o", bin, "./cmd/zerosim").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	exs := readmeExamples(t, "README.md")
	if len(exs) < 8 {
		t.Fatalf("found %d README examples, want the whole tour", len(exs))
	}
	docs, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	docExs := make([][]example, len(docs))
	for i, doc := range docs {
		docExs[i] = readmeExamples(t, doc)
	}
	// The files the examples write under /tmp start absent, as on a
	// fresh machine: one an earlier run (or another zerosim) left would
	// be merged into by calibrate --file, or refused.
	for _, e := range slices.Concat(append(docExs, exs)...) {
		for _, a := range e.args {
			if strings.HasPrefix(a, "/tmp/zerosim-") {
				if err := os.Remove(a); err != nil && !errors.Is(err, fs.ErrNotExist) {
					t.Fatal(err)
				}
			}
		}
	}
	checkExamples(t, bin, "README.md", exs)
	n := 0
	for i, doc := range docs {
		n += len(docExs[i])
		checkExamples(t, bin, doc, docExs[i])
	}
	if n < 3 {
		t.Fatalf("found %d examples in docs/*.md, want docs/sweeps.md's three at least", n)
	}
}

// checkExamples runs each example of file with bin and compares.
func checkExamples(t *testing.T, bin, file string, exs []example) {
	t.Helper()
	for _, ex := range exs {
		cmd := exec.Command(bin, ex.args...)
		var buf bytes.Buffer
		cmd.Stdout, cmd.Stderr = &buf, &buf
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%s:%d: %v", file, ex.line, err)
		}
		if want := max(ex.exit, 0); code != want {
			t.Errorf("%s:%d: zerosim %s exited %d, the file says %d", file, ex.line, strings.Join(ex.args, " "), code, want)
		}
		got := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
		if !matches(ex.want, got) {
			t.Errorf("%s:%d: zerosim %s prints something else than the file shows; got:\n%s", file, ex.line, strings.Join(ex.args, " "), buf.String())
		}
	}
}
