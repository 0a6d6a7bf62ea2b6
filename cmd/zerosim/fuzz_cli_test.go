package main

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/zerosim/zerosim/reports"
	"github.com/zerosim/zerosim/scenarios"
)

// FuzzCLI runs whole zerosim command lines in process, built from the
// fuzzer's input: args is an argument vector, one token per line (the
// seeds are every --help example and every command alone), and picks is a
// list of edits applied to it, three bytes or more each (see
// cliFuzzArgs): append a flag of the command's real flag set (read from the
// cobra tree) with a value from a vocabulary of valid, boundary and hostile
// values, append a file, a key=value pair with a real scenario key (read
// from docs/scenario-format.md and checked with scenarios.CheckKeyPath),
// replace, insert or delete a token, choose standard input. Each execution
// runs in a fresh directory holding small inputs (copies of seed 002's tiny
// scenario and other small examples, nccl-tests logs, a profiler trace, a
// reference file, a Hugging Face config, sweep shards, a calibration file,
// an empty, a binary and a malformed file, a directory).
//
// Every execution must: not panic; exit 0, 1 or 2; exit 1 only for a
// failed check (the failure type: verify's mismatch, run --require-fit,
// merge's missing points), not for any other error; on exit 2 print
// nothing on stdout and one line "zerosim: …" on stderr that names a flag
// (or a flag it wants), a --set key, a file or argument given (as given or
// escaped), or the command's usage, and names no package as a message's
// prefix ("sweep: " from merge); leave the directory as it was on exit 2
// (no file created, changed or removed), and never leave an atomic write's
// temporary file.
//
// Caps, so one execution takes milliseconds to a few seconds (see
// cliFuzzCapped): plan and fit on one of the large embedded examples (or
// on none, the default) run on seed002-tiny instead, as gpt3-175b-16k does
// in every command; a command line asking for more than 4,096 GPUs (the
// product of the largest in-range values of --nodes, --gpus-per-node,
// cluster.nodes, cluster.gpus_per_node, parallelism.dp and parallelism.cp
// it gives) is skipped, as is a sweep of more than 64 points or a compare
// of more than 16 values; an execution still running after
// cliFuzzDeadline fails as a hang.
func FuzzCLI(f *testing.F) {
	tmpl := cliFuzzTemplate(f)
	root := cliFuzzRoot()
	// The examples' "$(zerosim …)" runs in the template directory; the
	// fuzzing engine's own relative paths need the package directory back
	// before f.Fuzz (so no f.Chdir).
	if err := os.Chdir(tmpl); err != nil {
		f.Fatal(err)
	}
	defer os.Chdir(cwd)
	for i, c := range cliFuzzCommands(root) {
		f.Add(strings.Join(strings.Fields(commandName(c)), "\n"), []byte(nil))
		// Two of its flags with values and a file, chosen by i.
		b := byte(i)
		f.Add(strings.Join(strings.Fields(commandName(c)), "\n"), []byte{0, b, 3 * b, 32, b + 1, 5 * b, 2, b, 0})
		grid := ""
		for _, line := range strings.Split(c.Example, "\n") {
			line = strings.TrimSpace(line)
			if strings.HasPrefix(line, "zerosim ") {
				args := expandExample(f, line, &grid)
				if c.Name() == "plan" {
					// As TestHelpExamples: a search of stage 3 without
					// recomputation keeps the seed short.
					args = append(args, "--stages", "3", "--recompute", "none")
				}
				f.Add(strings.Join(args, "\n"), []byte(nil))
			}
		}
	}
	f.Add("", []byte{0, 0, 0})
	if err := os.Chdir(cwd); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, args string, picks []byte) {
		argv, stdin := cliFuzzArgs(root, args, picks)
		argv, ok := cliFuzzCapped(argv)
		if !ok {
			t.Skip("over the size caps")
		}
		dir := t.TempDir()
		if err := os.CopyFS(dir, os.DirFS(tmpl)); err != nil {
			t.Fatal(err)
		}
		t.Chdir(dir)
		before := cliFuzzSnapshot(t, dir)
		code, out, errOut, err := cliFuzzExec(t, argv, stdin)
		after := cliFuzzSnapshot(t, dir)
		for name := range after {
			if strings.HasPrefix(filepath.Base(name), ".") && strings.Contains(name, ".tmp") {
				t.Errorf("%q: exit %d left a temporary file %s", argv, code, name)
			}
		}
		switch code {
		case exitOK:
		case exitFailure:
			var fl failure
			if !errors.As(err, &fl) {
				t.Errorf("%q: exit 1 for an error that is not a failed check (%T): %q; bad input is exit 2", argv, err, errOut)
			}
		case exitInput:
			if out != "" {
				t.Errorf("%q: exit 2 with %d bytes on stdout: %.200q", argv, len(out), out)
			}
			if lines, ok := validateReport(errOut); ok {
				// validate with several files: a line per invalid file,
				// then the count of files that passed.
				for _, l := range lines {
					if !cliFuzzNamesInput(root, argv, l) {
						t.Errorf("%q: exit 2, stderr line %q names no file or argument given", argv, l)
					}
				}
			} else if !strings.HasPrefix(errOut, "zerosim: ") || strings.Count(errOut, "\n") != 1 || !strings.HasSuffix(errOut, "\n") || strings.TrimSpace(strings.TrimPrefix(errOut, "zerosim:")) == "" {
				t.Errorf("%q: exit 2, stderr %.300q: want one non-empty line \"zerosim: …\"", argv, errOut)
			} else if !cliFuzzNamesInput(root, argv, errOut) {
				t.Errorf("%q: exit 2, stderr %q names no flag, key, file or argument given", argv, errOut)
			}
			if m := pkgPrefix.FindStringSubmatch(errOut); m != nil && !setsKeyNamed(argv, m[1]) {
				if c, _, err := root.Find(argv); err != nil || c.Name() != m[1] || !strings.HasPrefix(errOut, "zerosim: "+m[1]+": ") {
					t.Errorf("%q: exit 2, stderr %q: %q is the package's name, not the command's", argv, errOut, m[1])
				}
			}
			if d := cliFuzzDiff(before, after); d != "" {
				t.Errorf("%q: exit 2 but the directory changed: %s", argv, d)
			}
		default:
			t.Errorf("%q: exit %d, stderr %.300q: want 0, 1 or 2", argv, code, errOut)
		}
	})
}

// pkgPrefix matches an error that starts with the name of one of
// zerosim's packages, which says nothing to the user (plain strips them).
var pkgPrefix = regexp.MustCompile(`(?:^zerosim|: )(zero|memory|collectives|sweep|numerics|sim|units|scenarios|reports|topology): `)

// setsKeyNamed reports whether argv sets (--set) a key whose last
// component is name: the scenario's errors name a key by it
// ("--set cluster.host.memory=x: memory: …"), which is not a package prefix.
func setsKeyNamed(argv []string, name string) bool {
	for i, a := range argv {
		v, ok := strings.CutPrefix(a, "--set=")
		if !ok && a == "--set" && i+1 < len(argv) {
			v, ok = argv[i+1], true
		}
		if key, _, found := strings.Cut(v, "="); ok && found && (key == name || strings.HasSuffix(key, "."+name)) {
			return true
		}
	}
	return false
}

// cliFuzzDeadline is how long one execution may run before it counts as a
// hang.
const cliFuzzDeadline = 60 * time.Second

// cliFuzzExec runs zerosim in process, turning a panic into a test failure
// with its stack and a run past cliFuzzDeadline into a hang.
func cliFuzzExec(t *testing.T, argv []string, stdin string) (code int, out, errOut string, err error) {
	t.Helper()
	type result struct {
		code     int
		out, err string
		e        error
		panicked any
		stack    []byte
	}
	done := make(chan result, 1)
	go func() {
		var r result
		defer func() {
			if p := recover(); p != nil {
				r.panicked, r.stack = p, debug.Stack()
			}
			done <- r
		}()
		var o, e bytes.Buffer
		r.code, r.e = execute(argv, strings.NewReader(stdin), &o, &e)
		r.out, r.err = o.String(), e.String()
	}()
	select {
	case r := <-done:
		if r.panicked != nil {
			t.Fatalf("%q: panic: %v\n%s", argv, r.panicked, r.stack)
		}
		return r.code, r.out, r.err, r.e
	case <-time.After(cliFuzzDeadline):
		t.Fatalf("%q: still running after %v (a hang, or a cost the caps of FuzzCLI miss)", argv, cliFuzzDeadline)
	}
	return
}

// cliFuzzRoot is the command tree the fuzzer picks commands and flags from,
// with cobra's own help and completion commands and help flags added as
// Execute adds them.
var cliFuzzRoot = sync.OnceValue(func() *cobra.Command {
	root := newRoot(&app{})
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	root.InitDefaultVersionFlag()
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		c.InitDefaultHelpFlag()
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	return root
})

// cliFuzzCommands lists every command of the tree below the root, groups
// and their commands included.
func cliFuzzCommands(root *cobra.Command) []*cobra.Command {
	var cs []*cobra.Command
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		for _, s := range c.Commands() {
			cs = append(cs, s)
			walk(s)
		}
	}
	walk(root)
	return cs
}

// cliFuzzFlags is every flag a command takes: its own and the ones it
// inherits.
func cliFuzzFlags(c *cobra.Command) []*pflag.Flag {
	var fs []*pflag.Flag
	add := func(f *pflag.Flag) { fs = append(fs, f) }
	c.LocalFlags().VisitAll(add)
	c.InheritedFlags().VisitAll(add)
	return fs
}

// cliFuzzValues are values tried for every flag and key: valid ones,
// boundaries and hostile ones.
var cliFuzzValues = []string{
	"0", "1", "-1", "2", "3", "4", "8", "16", "64", "1024", "65536", "4194304",
	"9223372036854775807", "-9223372036854775808", "9223372036854775808", "18446744073709551616", "0x10", "1_000",
	"0.5", "1.5", "1e308", "-1e308", "1e-308", "1e400", "NaN", "Inf", "-Inf", "-0",
	"", " ", "=", ",", ",,", "a=b", "=1", "1,", ",1", "true", "false", "maybe", "null", "~", "[]", "{}", "[1, 2]", "{a: 1}",
	"é", "日本語", "\u202e", "\x00", "\t", "\n", "a\nb", "\r", "\x1b[31m", "\xff\xfe", `"`, "'", "\\", "#", "%s", "${HOME}",
	strings.Repeat("x", 5000), strings.Repeat("9", 400), strings.Repeat("1,", 300) + "1",
	"1B", "0B", "1KiB", "25MB", "1GiB", "80GiB", "8PiB", "16EiB", "9223372036854775807B", "1MiB:1GiB", "1GiB:1MiB", "1B:8PiB", "0:0", ":",
	"0s", "1ns", "500ns", "2.84s", "1e9s", "-1s", "1h", "10ps", "0.1ps",
	"25GB/s", "400Gbps", "0GB/s", "1e308GB/s", "312TFLOPS", "1T", "7B", "4Mtokens", "2097152tokens", "0tokens", "1.5tokens",
	"0/1", "1/2", "2/8", "2/1", "1/0", "-1/2", "39/9223372036854775807", "9223372036854775807/9223372036854775807",
	"3:5", "0:0", "-1:-1", "1:9223372036854775807",
	"-", "--", "-x", "--help", "table", "json", "csv", "nccl-tests", "gib", "gb", "cpu", "nvme", "none", "all", "intra", "inter", "0,2,4,6", "0,99", "3,3",
	"out", "out/", "plots", ".", "..", "/", "/dev/null", "adir", "tiny.yaml", "calibration.yaml", "sweep.csv", "shard-0.csv",
}

// cliFuzzFiles are file arguments: the inputs of the template directory,
// embedded examples, standard input and missing or odd paths.
var cliFuzzFiles = []string{
	"tiny.yaml", "scenario.yaml", "my.yaml", "s.yaml", "a.yaml", "b.yaml", "seed000-k4.yaml", "mlp.yaml", "7b.yaml", "bad.yaml", "typo.yaml", "empty.yaml", "bin.dat", "big.yaml",
	"ar_2node.log", "ar_4node.log", "run.log", "toy-h16-l3.json", "adam-basic.json", "step.json", "config.json", "hfdir", "calibration.yaml",
	"shard-0.csv", "shard-1.csv", "shard-0.json", "adir", "missing.yaml", "adir/missing.yaml", "tiny.yaml/x",
	"seed002-tiny", "seed002-tiny.yaml", "seed000-mlp", "seed000-k4", "seed002-7b", "default", "default.yaml", "nope", "-", "", ".", "/",
}

// cliFuzzStdins are what standard input holds.
var cliFuzzStdins = func() []string {
	tiny, _ := scenarios.Example("seed002-tiny")
	return []string{"", string(tiny), string(tiny[:len(tiny)/2]), "x: [", "\x00\x01\x02", "{}", "version: 1\n", string(tiny) + "\nfoo: 1\n"}
}()

// cliFuzzKey is a scenario key path and values its documentation names.
type cliFuzzKey struct {
	path   string
	values []string
}

// cliFuzzKeys reads the scenario keys from docs/scenario-format.md: each
// table row's key under its section (cluster, model, …), and the keys of
// the nested tables (links, overrides, layer list items) under every key
// they may belong to, keeping what scenarios.CheckKeyPath accepts. The
// values are the row's backquoted words (defaults, allowed values).
var cliFuzzKeys = sync.OnceValues(func() ([]cliFuzzKey, error) {
	data, err := os.ReadFile(filepath.Join(cwd, "..", "..", "docs", "scenario-format.md"))
	if err != nil {
		return nil, err
	}
	quoted := regexp.MustCompile("`([^`]*)`")
	section := regexp.MustCompile(`^### ([a-z_.]+|Top level)$`)
	values := map[string][]string{} // table key → its row's values
	var sections []string           // key paths of the sections
	var order []string
	bySection := map[string][]string{}
	cur := ""
	for _, line := range strings.Split(string(data), "\n") {
		if m := section.FindStringSubmatch(line); m != nil {
			cur = m[1]
			if cur == "Top level" {
				cur = ""
			}
			sections = append(sections, cur)
			continue
		}
		if strings.HasPrefix(line, "## ") {
			cur = "-"
		}
		cells := strings.Split(line, "|")
		if cur == "-" || len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		var vs []string
		for _, cell := range cells[2:] {
			for _, m := range quoted.FindAllStringSubmatch(cell, -1) {
				vs = append(vs, m[1])
			}
		}
		for _, m := range quoted.FindAllStringSubmatch(cells[1], -1) {
			k := m[1]
			if _, seen := values[k]; !seen {
				order = append(order, k)
			}
			values[k] = append(values[k], vs...)
			bySection[cur] = append(bySection[cur], k)
		}
	}
	var keys []cliFuzzKey
	seen := map[string]bool{}
	add := func(path, k string) {
		if !seen[path] && scenarios.CheckKeyPath(path) == nil {
			seen[path] = true
			keys = append(keys, cliFuzzKey{path, values[k]})
		}
	}
	join := func(p, k string) string {
		if p == "" {
			return k
		}
		return p + "." + k
	}
	for _, s := range sections {
		for _, k := range bySection[s] {
			add(join(s, k), k)
		}
	}
	// Nested tables: their keys under every key found so far, as a
	// mapping and as a list's first item.
	for i := 0; i < len(keys); i++ {
		parent := keys[i].path
		for _, p := range []string{parent, parent + "[0]"} {
			if err := scenarios.CheckKeyPath(p + ".probe"); err != nil && !strings.Contains(err.Error(), "probe") {
				continue // a value or not a list
			}
			for _, k := range order {
				add(p+"."+k, k)
			}
		}
	}
	if len(keys) < 80 {
		return nil, fmt.Errorf("read %d scenario keys from docs/scenario-format.md; it documents more", len(keys))
	}
	return keys, nil
})

// cliFuzzArgs builds the argument vector and standard input from the
// fuzzer's input. args gives the starting tokens (one per line; when empty
// the first pick chooses a command); every following pick is an edit:
// op, a, b (and more bytes for some):
//
//	0, 1  append a flag of the command (a) with a value (b): --name=v, --name v or -s v
//	2     append a file argument (a)
//	3     replace token a with a value (b)
//	4     delete token a
//	5     standard input (a)
//	6     insert a value (b) at a
//	7     append a key=value (key a, value b; a --grid or --vary gets 1 to 3 values)
func cliFuzzArgs(root *cobra.Command, args string, picks []byte) ([]string, string) {
	var argv []string
	if args != "" {
		argv = strings.Split(args, "\n")
	}
	next := func() int {
		if len(picks) == 0 {
			return 0
		}
		b := int(picks[0])
		picks = picks[1:]
		return b
	}
	if len(argv) == 0 && len(picks) > 0 {
		cs := cliFuzzCommands(root)
		argv = strings.Fields(commandName(cs[next()%len(cs)]))
	}
	keys, _ := cliFuzzKeys()
	keyValue := func(a, b int, lists bool) string {
		if len(keys) == 0 {
			return cliFuzzValues[b%len(cliFuzzValues)]
		}
		k := keys[a%len(keys)]
		vs := append(slices.Clone(k.values), cliFuzzValues...)
		v := vs[b%len(vs)]
		if lists {
			for range next() % 3 {
				v += "," + vs[next()%len(vs)]
			}
		}
		return k.path + "=" + v
	}
	stdin := ""
	for ops := 0; len(picks) >= 3 && ops < 24; ops++ {
		op, a, b := next(), next(), next()
		c, _, err := root.Find(argv)
		if err != nil || c == nil {
			c = root
		}
		switch op % 8 {
		case 0, 1:
			fs := cliFuzzFlags(c)
			if len(fs) == 0 {
				continue
			}
			fl := fs[a%len(fs)]
			name := "--" + fl.Name
			if fl.Shorthand != "" && op&16 != 0 {
				name = "-" + fl.Shorthand
			}
			var v string
			switch fl.Name {
			case "set", "grid", "vary":
				v = keyValue(b, next(), fl.Name != "set")
			default:
				vs := cliFuzzFlagValues(fl)
				v = vs[b%len(vs)]
			}
			switch {
			case fl.Value.Type() == "bool" && op&8 == 0:
				argv = append(argv, name)
			case op&32 != 0 && !strings.HasPrefix(name, "--"):
				argv = append(argv, name+v)
			case op&32 != 0:
				argv = append(argv, name+"="+v)
			default:
				argv = append(argv, name, v)
			}
		case 2:
			argv = append(argv, cliFuzzFiles[a%len(cliFuzzFiles)])
		case 3:
			if len(argv) > 0 {
				argv[a%len(argv)] = cliFuzzValues[b%len(cliFuzzValues)]
			}
		case 4:
			if len(argv) > 0 {
				argv = slices.Delete(argv, a%len(argv), a%len(argv)+1)
			}
		case 5:
			stdin = cliFuzzStdins[a%len(cliFuzzStdins)]
		case 6:
			argv = slices.Insert(argv, a%(len(argv)+1), cliFuzzValues[b%len(cliFuzzValues)])
		case 7:
			argv = append(argv, keyValue(a, b, op&8 != 0))
		}
	}
	return argv, stdin
}

// cliFuzzFlagValues are the values tried for one flag: the words of its
// usage text (the choices it lists, its examples), its default, the files
// and the common vocabulary.
func cliFuzzFlagValues(fl *pflag.Flag) []string {
	vs := []string{fl.DefValue}
	vs = append(vs, regexp.MustCompile(`[A-Za-z0-9_.:/,+=-]+`).FindAllString(fl.Usage, -1)...)
	vs = append(vs, cliFuzzFiles...)
	return append(vs, cliFuzzValues...)
}

// cliFuzzCapped applies FuzzCLI's caps to an argument vector: false when
// it is to be skipped.
func cliFuzzCapped(argv []string) ([]string, bool) {
	argv = slices.Clone(argv)
	huge := map[string]bool{"gpt3-175b-16k": true, "gpt3-175b-16k.yaml": true}
	costly := map[string]bool{"default": true, "default.yaml": true, "llama2-13b-a100-eth": true, "llama2-13b-a100-eth.yaml": true,
		"seed001-azure": true, "seed001-azure.yaml": true, "seed001-dgx2h": true, "seed001-dgx2h.yaml": true}
	c, rest, err := newRoot(&app{}).Find(argv)
	plan := err == nil && (c.Name() == "plan" || c.Name() == "fit")
	for i, a := range argv {
		if huge[a] || plan && costly[a] {
			argv[i] = "seed002-tiny"
		}
	}
	if plan && c.ParseFlags(rest) == nil && len(c.Flags().Args()) == 0 {
		argv = append(argv, "seed002-tiny")
	}
	// GPUs asked for.
	gpus := int64(1)
	shape := regexp.MustCompile(`(?:^|[^a-z_.])(?:cluster\.nodes|cluster\.gpus_per_node|parallelism\.dp|parallelism\.cp)=(.*)$`)
	for i, a := range argv {
		var list string
		if m := shape.FindStringSubmatch(a); m != nil {
			list = m[1]
		} else if v, ok := strings.CutPrefix(a, "--nodes="); ok {
			list = v
		} else if v, ok := strings.CutPrefix(a, "--gpus-per-node="); ok {
			list = v
		} else if (a == "--nodes" || a == "--gpus-per-node") && i+1 < len(argv) {
			list = argv[i+1]
		}
		most := int64(1)
		for _, v := range strings.Split(list, ",") {
			if n, err := strconv.ParseInt(strings.TrimSpace(v), 0, 64); err == nil && n <= 65536 && n > most {
				most = n
			}
		}
		if gpus *= most; gpus > 4096 {
			return nil, false
		}
	}
	// Points of a sweep, values of a compare.
	points, values := 1, 0
	for i, a := range argv {
		v, ok := "", false
		switch {
		case strings.HasPrefix(a, "--grid="):
			v, ok = strings.TrimPrefix(a, "--grid="), true
		case a == "--grid" && i+1 < len(argv):
			v, ok = argv[i+1], true
		case strings.HasPrefix(a, "--vary=") || a == "--vary" && i+1 < len(argv):
			v, _ = strings.CutPrefix(a, "--vary=")
			if a == "--vary" {
				v = argv[i+1]
			}
			values += strings.Count(v, ",") + 1
		}
		if ok {
			points *= strings.Count(v, ",") + 1
		}
		if points > 64 || values > 16 {
			if len(argv) > 0 && argv[0] == "sweep" && slices.Contains(argv, "--count") {
				continue
			}
			return nil, false
		}
	}
	return argv, true
}

// cliFuzzNamesInput reports whether an error line names something the
// command line gave (a flag, a --set key, a file or other argument, quoted
// or not; "<stdin>" for "-"; the default example when no file is given)
// or the command's usage.
// validateCount is the last line of validate's report of several files.
var validateCount = regexp.MustCompile(`^zerosim: validate: ([0-9]+) of ([0-9]+) files passed, ([0-9]+) failed \(each failed file's first error is above\)$`)

// validateReport splits the stderr of validate given several files, some
// invalid: one non-empty "zerosim: …" line per invalid file, then the
// count, whose numbers add up; it returns the files' lines. False for
// anything else, which must then be one line.
func validateReport(errOut string) ([]string, bool) {
	lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
	if !strings.HasSuffix(errOut, "\n") || len(lines) < 2 {
		return nil, false
	}
	m := validateCount.FindStringSubmatch(lines[len(lines)-1])
	if m == nil {
		return nil, false
	}
	passed, _ := strconv.Atoi(m[1])
	total, _ := strconv.Atoi(m[2])
	failed, _ := strconv.Atoi(m[3])
	files := lines[:len(lines)-1]
	if failed != len(files) || passed+failed != total || total < 2 {
		return nil, false
	}
	for _, l := range files {
		if !strings.HasPrefix(l, "zerosim: ") || strings.TrimSpace(strings.TrimPrefix(l, "zerosim:")) == "" {
			return nil, false
		}
	}
	return files, true
}

func cliFuzzNamesInput(root *cobra.Command, argv []string, line string) bool {
	names := []string{"default.yaml", "(usage: zerosim "}
	for _, a := range argv {
		names = append(names, strconv.Quote(a))
		if strings.TrimSpace(a) != "" {
			// As given, or as the error line escapes it.
			for _, a := range []string{a, reports.EscapeControl(a)} {
				names = append(names, a, filepath.Base(a), strings.TrimSuffix(a, "/"))
			}
		}
		if a == "-" {
			names = append(names, "<stdin>", "standard input")
		}
		if flag, _, isFlag := strings.Cut(a, "="); strings.HasPrefix(a, "-") && len(a) > 1 && isFlag || strings.HasPrefix(a, "-") {
			name := strings.TrimLeft(flag, "-")
			names = append(names, "--"+name)
			if strings.HasPrefix(flag, "--") {
				// A long flag may be named by its shorthand ("-o DIR: …"
				// for --output).
				for _, c := range append(cliFuzzCommands(root), root) {
					for _, fs := range []*pflag.FlagSet{c.Flags(), c.PersistentFlags()} {
						if f := fs.Lookup(name); f != nil && f.Shorthand != "" {
							names = append(names, "-"+f.Shorthand+" ", "-"+f.Shorthand+":")
						}
					}
				}
			}
			if len(name) >= 1 && !strings.HasPrefix(flag, "--") {
				names = append(names, "-"+name[:1]+" ", "-"+name[:1]+":")
				for _, c := range append(cliFuzzCommands(root), root) {
					if f := c.Flags().ShorthandLookup(name[:1]); f != nil {
						names = append(names, "--"+f.Name)
					}
					if f := c.PersistentFlags().ShorthandLookup(name[:1]); f != nil {
						names = append(names, "--"+f.Name)
					}
				}
			}
		}
		if key, val, ok := strings.Cut(a, "="); ok && strings.TrimSpace(key) != "" {
			names = append(names, key, strings.TrimLeft(key, "-"))
			if strings.HasPrefix(key, "--") && strings.TrimSpace(val) != "" {
				// --train-log=FILE: the file named as given ("FILE: …").
				names = append(names, val, filepath.Base(val))
			}
		}
		if scenarios.CheckKeyPath(a) == nil || strings.HasSuffix(a, ".yaml") {
			names = append(names, strings.TrimSuffix(a, ".yaml")+".yaml")
		}
		if _, ok := scenarios.Example(a); ok {
			names = append(names, a+".yaml")
		}
	}
	if c, _, err := root.Find(argv); err == nil {
		// A flag the command wants given ("no --grid given").
		for _, f := range cliFuzzFlags(c) {
			names = append(names, "--"+f.Name+" ", "--"+f.Name+":")
		}
	}
	for _, n := range names {
		if n != "" && strings.Contains(line, n) {
			return true
		}
	}
	return false
}

// cliFuzzSnapshot is every file under dir with a hash of its content (a
// directory with "dir").
func cliFuzzSnapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	snap := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			snap[rel] = "dir"
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			snap[rel] = "unreadable: " + err.Error()
			return nil
		}
		snap[rel] = fmt.Sprintf("%x", sha256.Sum256(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// cliFuzzDiff names the files created, changed or removed between two
// snapshots.
func cliFuzzDiff(before, after map[string]string) string {
	var d []string
	for n, h := range after {
		switch b, ok := before[n]; {
		case !ok:
			d = append(d, "created "+n)
		case b != h:
			d = append(d, "changed "+n)
		}
	}
	for n := range before {
		if _, ok := after[n]; !ok {
			d = append(d, "removed "+n)
		}
	}
	slices.Sort(d)
	return strings.Join(d, ", ")
}

// cliFuzzTemplate writes the inputs every execution starts from into a
// directory: small scenarios under the names the --help examples use,
// odd files, nccl-tests logs, a profiler trace, reference files, a Hugging
// Face config, a calibration file, and sweep shards made by zerosim.
func cliFuzzTemplate(f *testing.F) string {
	dir := f.TempDir()
	ex := func(name string) []byte {
		data, ok := scenarios.Example(name)
		if !ok {
			f.Fatalf("no example %s", name)
		}
		return data
	}
	tiny, k4 := ex("seed002-tiny"), ex("seed000-k4")
	files := map[string][]byte{
		"tiny.yaml": tiny, "scenario.yaml": tiny, "my.yaml": tiny, "s.yaml": tiny, "a.yaml": tiny,
		"b.yaml": k4, "seed000-k4.yaml": k4, "mlp.yaml": ex("seed000-mlp"), "7b.yaml": ex("seed002-7b"),
		"bad.yaml": []byte("version: 1\ncluster: [\n"), "empty.yaml": nil, "bin.dat": {0, 1, 2, 0xff, 0xfe, '\n', 0},
		"big.yaml": append(slices.Clone(tiny), []byte("\ndescription: "+strings.Repeat("y", 1<<16)+"\n")...),
	}
	root := filepath.Join(cwd, "..", "..")
	for name, src := range map[string]string{
		"ar_2node.log":      "collectives/testdata/nccl-tests/a100_2node_allreduce_aws_p4d_efa_ring.log",
		"ar_4node.log":      "collectives/testdata/nccl-tests/a100_2node_allreduce_oci_bmgpu48_roce.log",
		"run.log":           "collectives/testdata/nccl-tests/h100_2node_allreduce_default_xe9680_nccltests309.log",
		"toy-h16-l3.json":   "numerics/testdata/reference/toy-h16-l3.json",
		"adam-basic.json":   "numerics/testdata/reference/adam-basic.json",
		"step.json":         "scenarios/testdata/proftrace/step.json",
		"config.json":       "scenarios/testdata/hf/gpt2/config.json",
		"hfdir/config.json": "scenarios/testdata/hf/llama-3.2-1b/config.json",
		"calibration.yaml":  "docs/examples/calibration-h100-ndr.yaml",
		"typo.yaml":         "docs/examples/typo.yaml",
	} {
		data, err := os.ReadFile(filepath.Join(root, src))
		if err != nil {
			f.Fatal(err)
		}
		files[name] = data
	}
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			f.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			f.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "adir"), 0o755); err != nil {
		f.Fatal(err)
	}
	in := func(name string) string { return filepath.Join(dir, name) }
	for _, args := range [][]string{
		{"sweep", in("s.yaml"), "--grid", "parallelism.k=1,2", "--grid", "training.micro_batch=1,2", "--shard", "0/2", "--out", in("shard-0.csv")},
		{"sweep", in("s.yaml"), "--grid", "parallelism.k=1,2", "--grid", "training.micro_batch=1,2", "--shard", "1/2", "--out", in("shard-1.csv")},
		{"sweep", in("s.yaml"), "--grid", "parallelism.k=1,2", "--shard", "0/2", "--format", "json", "--out", in("shard-0.json")},
	} {
		if code, _, errOut := runMain(f, "", args...); code != 0 {
			f.Fatalf("%q: exit %d: %s", args, code, errOut)
		}
	}
	return dir
}
