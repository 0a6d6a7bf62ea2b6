package main

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/zerosim/zerosim/reports"
	"github.com/zerosim/zerosim/scenarios"
)

// outputs is what a command does with the global flags: the --format values
// it prints, whether --set reaches its scenario, and which of its own flags
// name an output file. Whether it writes files into -o DIR is its
// writesFiles annotation. A command
// rejects (exit 2) every global flag it would otherwise ignore, and every
// output target is checked before anything is simulated or printed.
type outputs struct {
	formats []string              // --format values it honours; the first is its default
	sets    bool                  // --set overrides its scenario
	files   map[string]outputKind // its flags naming an output FILE, with what they write (checkTarget)
	dirHint string                // what to use instead of -o DIR
	fmtHint string                // what it prints instead, when it has no --format
	csvHint string                // where to get CSV, when it prints none
	units   bool                  // --units sets the memory unit of its tables
	wide    bool                  // --wide shows every column of its tables
}

// formatError refuses --format f for the command key, naming its formats
// (and, for csv, where CSV comes from when it prints none).
func formatError(f, key string, o outputs) error {
	msg := fmt.Sprintf("--format %s: zerosim %s prints %s", shownValue(f), key, scenarios.ListOr(o.formats))
	if f == "csv" && o.csvHint != "" {
		msg += ": " + o.csvHint
	}
	return inputError{errors.New(msg)}
}

// shownValue is a flag value as an error message shows it: as given, or
// "" when empty.
func shownValue(v string) string {
	if v == "" {
		return `""`
	}
	return v
}

// globalFlagsFor shows in cmd's help only the global flags cmd takes, and
// --format with cmd's own formats (every command listed --units and
// "table, json or csv", which most refuse: QA9 #5); the returned func puts
// the flags back as they were.
func globalFlagsFor(cmd *cobra.Command) (restore func()) {
	o, ok := commandOutputs[commandKey(cmd)]
	if !ok {
		return func() {}
	}
	pf := cmd.Root().PersistentFlags()
	type saved struct {
		f             *pflag.Flag
		hidden        bool
		usage, defVal string
	}
	var undo []saved
	set := func(name string, hide bool, usage string) {
		f := pf.Lookup(name)
		undo = append(undo, saved{f, f.Hidden, f.Usage, f.DefValue})
		f.Hidden = f.Hidden || hide
		if usage != "" {
			f.Usage = usage
		}
	}
	formats := ""
	if len(o.formats) > 0 {
		formats = "output format: " + scenarios.ListOr(o.formats)
	}
	set("format", len(o.formats) == 0, formats)
	if len(o.formats) > 0 {
		pf.Lookup("format").DefValue = o.formats[0] // the first is its default
	}
	set("units", !o.units, "")
	set("wide", !o.wide, "")
	set("set", !o.sets, "")
	set("output", cmd.Annotations[writesFiles] == "", "")
	return func() {
		for _, u := range undo {
			u.f.Hidden, u.f.Usage, u.f.DefValue = u.hidden, u.usage, u.defVal
		}
	}
}

// style is the table style --units and --wide ask for (checked by
// checkOutputs).
func (a *app) style() reports.MemoryStyle {
	u, _ := reports.ParseMemoryUnits(a.units)
	return reports.MemoryStyle{Units: u, Wide: a.wide}
}

// styleOf is style with the words of s's GPU maker (reports.VendorOf).
func (a *app) styleOf(s *scenarios.Scenario) reports.MemoryStyle {
	st := a.style()
	st.Vendor = reports.ClusterVendor(&s.Cluster)
	return st
}

// commandOutputs holds the outputs of every command, by its path below
// "zerosim". TestEveryCommandDeclaresItsOutputs keeps it complete.
var commandOutputs = map[string]outputs{
	"run":               {formats: []string{"table", "json"}, sets: true, files: map[string]outputKind{"trace": traceKind}, units: true, wide: true, csvHint: "for CSV rows, zerosim sweep FILE --grid KEY=V1,V2 (a one-value grid is one run)"},
	"memory":            {formats: []string{"table", "json", "csv"}, sets: true, units: true, wide: true},
	"sweep":             {formats: []string{"csv", "json"}, sets: true, files: map[string]outputKind{"out": {sweepKind.name, sweepKind.check, true}}, dirHint: "use --out FILE"},
	"merge":             {files: map[string]outputKind{"out": sweepKind}, dirHint: "use --out FILE", fmtHint: "merge writes the format of its inputs"},
	"fit":               {formats: []string{"table", "json", "csv"}, sets: true, wide: true},
	"compare":           {formats: []string{"table", "json", "csv"}, sets: true, wide: true},
	"plan":              {formats: []string{"table", "json", "csv"}, sets: true},
	"verify":            {formats: []string{"table", "json"}, sets: true, wide: true},
	"validate":          {formats: []string{"table", "json"}, sets: true},
	"collective":        {formats: []string{"table", "json", "csv", "nccl-tests"}, sets: true, wide: true},
	"calibrate":         {formats: []string{"table", "json"}, sets: true, files: map[string]outputKind{"file": calKind}},
	"scenarios":         {formats: []string{"table", "json", "csv"}},
	"scenarios show":    {fmtHint: "scenarios show prints the example's YAML verbatim"},
	"version":           {formats: []string{"table", "json"}},
	"import hf":         {formats: []string{"table", "json"}}, // table: the model section as YAML
	"import torchtitan": {fmtHint: "import torchtitan prints the scenario's YAML"},
	// cobra's completion scripts.
	"completion bash":       {fmtHint: "completion prints a shell script"},
	"completion zsh":        {fmtHint: "completion prints a shell script"},
	"completion fish":       {fmtHint: "completion prints a shell script"},
	"completion powershell": {fmtHint: "completion prints a shell script"},
}

// commandKey is cmd's path below the root ("scenarios show").
func commandKey(cmd *cobra.Command) string {
	return strings.TrimPrefix(strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()), " ")
}

// exempt reports cobra's help and the completion group, which take no
// global flags of ours. The completion scripts' commands are declared
// (commandOutputs) and reject them (QA25 L4).
func exempt(key string) bool {
	return key == "" || key == "help" || key == "completion"
}

// checkOutputs rejects the global flags cmd does not honour and checks every
// output target it was given (or will write by default), before the
// command runs.
func (a *app) checkOutputs(cmd *cobra.Command, args []string) error {
	key := commandKey(cmd)
	if exempt(key) || !cmd.Runnable() {
		return nil
	}
	o, ok := commandOutputs[key]
	if !ok {
		return nil // TestEveryCommandDeclaresItsOutputs catches this
	}
	changed := cmd.Flags().Changed
	if changed("format") && !slices.Contains(o.formats, a.format) {
		if o.fmtHint != "" {
			return inputError{fmt.Errorf("--format %s: %s", a.format, o.fmtHint)}
		}
		return formatError(a.format, key, o)
	}
	dir := cmd.Annotations[writesFiles] != ""
	if changed("output") && !dir {
		msg := fmt.Sprintf("zerosim %s writes no files into a directory (-o DIR is for %s)", key, fileWriters(cmd.Root()))
		if o.dirHint != "" {
			msg += ": " + o.dirHint
		}
		return inputError{fmt.Errorf("-o %s: %s", a.outDir, msg)}
	}
	if changed("set") && !o.sets {
		return inputError{fmt.Errorf("--set %s: zerosim %s reads no scenario", a.sets[0], key)}
	}
	if changed("units") && !o.units {
		return inputError{fmt.Errorf("--units %s: zerosim %s does not take --units (only run's and memory's tables switch to GB; JSON and CSV give exact bytes)", a.units, key)}
	}
	if changed("wide") && !o.wide {
		return inputError{fmt.Errorf("--wide: zerosim %s has no narrower default to widen (run, memory, fit, compare, verify and collective do)", key)}
	}
	if err := a.tableOnly(key, changed); err != nil {
		return err
	}
	if _, err := reports.ParseMemoryUnits(a.units); err != nil {
		return inputError{fmt.Errorf("--units: %w", err)}
	}
	if dir && changed("output") {
		if err := checkOutputDir(a.outDir); err != nil {
			return inputError{fmt.Errorf("-o %s: %w", a.outDir, err)}
		}
	}
	a.inputs = inputFiles(cmd, args, o)
	for _, name := range slices.Sorted(maps.Keys(o.files)) {
		f := cmd.Flags().Lookup(name)
		if f == nil || (!f.Changed && f.Value.String() == "") || o.files[name].own {
			continue
		}
		if err := checkOutputFile(f.Value.String()); err != nil {
			return inputError{fmt.Errorf("--%s %s: %w", name, f.Value.String(), err)}
		}
		if err := checkTarget(commandName(cmd), name, f.Value.String(), o.files[name], a.inputs); err != nil {
			return err
		}
	}
	return nil
}

// tableOnly refuses --wide and --units with an output that gives exact
// bytes (JSON, CSV, nccl-tests), one rule for every command (qa21 LOW 1:
// memory, compare and collective ignored them there). Run's -o files are
// the exception for --units: its plots and report.html switch to GB.
func (a *app) tableOnly(key string, changed func(string) bool) error {
	if a.format == "table" {
		return nil
	}
	flag := ""
	switch {
	case changed("wide"):
		flag = "--wide"
	case changed("units") && !(key == "run" && changed("output")):
		flag = "--units " + a.units
	default:
		return nil
	}
	return inputError{fmt.Errorf("%s: --format %s gives exact bytes in every field; %s changes only the table (drop %s, or use --format table)", flag, a.format, strings.Fields(flag)[0], strings.Fields(flag)[0])}
}

// checkOutputDir reports whether files can be written into dir, or into the
// directory that would be created at dir, by creating and removing a probe
// file in it (or in its parent, which must exist). It leaves nothing behind.
func checkOutputDir(dir string) error {
	if dir == "" {
		return errors.New("give a directory")
	}
	if dir == "-" {
		return errors.New(`"-" would be a directory named "-": give a directory name`)
	}
	if err := checkName(dir); err != nil {
		return err
	}
	p := filepath.Clean(dir)
	for {
		fi, err := os.Stat(p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			// "file name too long": -o stat'ed a parent, ran, printed
			// the report and failed creating the directory (exit 1).
			return plainError(err)
		}
		if err == nil {
			if !fi.IsDir() {
				if p == filepath.Clean(dir) {
					return errors.New("exists and is not a directory (name a directory: -o writes several files into it)")
				}
				return fmt.Errorf("%s is not a directory", p)
			}
			return probe(p)
		}
		if p != filepath.Clean(dir) {
			// The output directory itself is created, not a missing
			// parent: as --trace and --out refuse a file in a missing
			// directory, so a typo in a path (-o /tmp/rnu/out) does not
			// create a tree of directories (qauser33 L2).
			return fmt.Errorf("directory %s does not exist (create it first, or name an output directory in an existing one)", p)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return plainError(err)
		}
		p = parent
	}
}

// checkOutputFile reports whether path can be written: not a directory, in
// an existing directory where files can be created.
func checkOutputFile(path string) error {
	if path == "" {
		return errors.New("give a file name")
	}
	if path == "-" {
		// It created a file named "-" where standard output was meant.
		return errors.New(`"-" is not standard output here: give a file name`)
	}
	if err := checkName(path); err != nil {
		return err
	}
	fi, err := os.Stat(path)
	if err == nil && fi.IsDir() {
		return errors.New("is a directory (name a file, not a directory)")
	}
	if err == nil {
		// /dev/stdout, /dev/fd/1 or the file standard output is
		// redirected to: the report goes there too, and one write
		// would cut the other.
		if out, e := os.Stdout.Stat(); e == nil && os.SameFile(fi, out) && !isDevNull(fi) {
			return errors.New("is standard output, where the report goes (give a file name)")
		}
		if !fi.Mode().IsRegular() {
			return nil // a device or a FIFO, written in place (reports.WriteFileAtomic)
		}
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
		// "file name too long" after the run had printed its report.
		return plainError(err)
	}
	dir := filepath.Dir(path)
	fi, err = os.Stat(dir)
	if err != nil {
		return fmt.Errorf("directory %s does not exist (create it first, or name a file in an existing directory)", dir)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	return probe(dir)
}

// checkName refuses a path no file system takes: a NUL byte ends the name
// the kernel sees ("invalid argument" only when writing).
func checkName(path string) error {
	if strings.ContainsRune(path, 0) {
		return errors.New("a file name cannot hold a NUL byte")
	}
	return nil
}

// probe creates and removes a file in dir.
func probe(dir string) error {
	f, err := os.CreateTemp(dir, ".zerosim-probe-*")
	if err != nil {
		return fmt.Errorf("cannot write into %s: %w (choose a directory you can write to)", dir, plainError(err))
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// plainError drops the operation and path of a *fs.PathError (they would
// name the probe file), keeping the reason ("permission denied").
func plainError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// readError is the one line for a file that an argument or a flag names
// but that cannot be read. It gives the reason without Go's "open NAME:"
// prefix, which repeats the path, and says how to fix it; before it said
// "merge: open x.csv: no such file or directory" or "x.log: cannot read:
// read x.log: is a directory". prefix names the file, and the flag when
// a flag gave it ("--calibration c.yaml").
func readError(prefix string, err error) error {
	fix := "check the path"
	switch {
	case errors.Is(err, syscall.EISDIR):
		fix = "give a file, not a directory"
	case errors.Is(err, fs.ErrPermission):
		fix = "check the file's permissions"
	}
	return inputError{fmt.Errorf("%s: cannot read the file: %v (%s)", prefix, plainError(err), fix)}
}

// writeFailure is the one line for an output file the file system refused:
// the file, the cause without the temporary file's name (a rename's
// "rename DIR/.NAME.tmp… DIR/NAME: file exists" is the directory in the
// way), and what to do about it.
func writeFailure(we *reports.WriteError) string { return writeFailureAs(we, we.Path) }

// writeFailureFrom is writeFailure naming the flag that gave the file
// (QA25 L16: "cannot write /dev/full: …" named no flag): "--trace
// /dev/full: cannot write it: …", "-o od: cannot write od/result.json: …".
func (a *app) writeFailureFrom(cmd *cobra.Command, we *reports.WriteError) string {
	if cmd == nil {
		return writeFailure(we)
	}
	o := commandOutputs[commandKey(cmd)]
	for _, name := range slices.Sorted(maps.Keys(o.files)) {
		if f := cmd.Flags().Lookup(name); f != nil && f.Value.String() != "" && filepath.Clean(f.Value.String()) == filepath.Clean(we.Path) {
			return fmt.Sprintf("--%s %s: %s", name, f.Value.String(), writeFailureAs(we, "it"))
		}
	}
	if dir := filepath.Clean(a.outDir); a.outDir != "" && cmd.Annotations[writesFiles] != "" && (filepath.Clean(we.Path) == dir || filepath.Dir(we.Path) == dir) {
		return fmt.Sprintf("-o %s: %s", a.outDir, writeFailure(we))
	}
	return writeFailure(we)
}

// writeFailureAs is writeFailure naming the file as name.
func writeFailureAs(we *reports.WriteError, name string) string {
	cause, fix := we.Err, "choose another path"
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(cause, &le):
		cause = le.Err
	case errors.As(cause, &pe):
		cause = pe.Err
	}
	switch {
	case errors.Is(cause, syscall.EISDIR), errors.Is(cause, syscall.EEXIST), errors.Is(cause, syscall.ENOTEMPTY):
		cause, fix = errors.New("a directory of that name is in the way"), "remove or rename it, or write elsewhere"
	case errors.Is(cause, fs.ErrPermission), errors.Is(cause, syscall.EROFS):
		fix = "choose a directory you can write to"
	case errors.Is(cause, syscall.ENOSPC), errors.Is(cause, syscall.EDQUOT):
		fix = "free some space there, or write elsewhere"
	case errors.Is(cause, syscall.EFBIG):
		fix = "raise the file size limit, ulimit -f, or write elsewhere"
	case errors.Is(cause, syscall.ENOTDIR):
		fix = "a file is in the way of a directory on that path; write elsewhere"
	}
	return fmt.Sprintf("cannot write %s: %v (%s)", name, cause, fix)
}

// isDevNull reports whether fi is the null device (os.DevNull), which
// takes any number of writers: an output there beside standard output
// cuts nothing.
func isDevNull(fi os.FileInfo) bool {
	null, err := os.Stat(os.DevNull)
	return err == nil && os.SameFile(fi, null)
}
