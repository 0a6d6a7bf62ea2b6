package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/zerosim/zerosim/reports"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/sweep"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1 // the run itself failed (e.g. verify found a mismatch)
	exitInput   = 2 // usage or input error, or an output file that cannot be written
)

// app carries the I/O streams and the global flags shared by every command.
type app struct {
	in       io.Reader
	out, err io.Writer
	sets     []string // --set key.path=value
	format   string   // --format table|json|csv
	outDir   string   // -o DIR
	units    string   // --units gib|gb
	wide     bool     // --wide
	args     []string // the command line, as given
	// file names the scenario loadScenario read last, as error messages
	// name it ("default.yaml", "<stdin>", the path).
	file string
	// input is the scenario loadScenario read last (its bytes, for
	// replays of it with other overrides).
	input scenarios.Input
	// loaded is the scenario loadScenario read last, as loaded: the
	// sizes an overflow of the replay names (checkError).
	loaded *scenarios.Scenario
	// pending holds the warnings of the scenarios the command loaded
	// (load, loadSource) and those it adds, until its checks pass:
	// nothing is printed before an input error (QA22 M2: run, compare
	// and calibrate printed the file's warnings, then an error the
	// replay found). They are printed (flushWarnings) where a command
	// says its checks passed (plan's Accepted, sweep before its work,
	// fit after its search), before its first byte on standard output
	// (warnFirst), or when it ends without an input error (execute);
	// an input error drops them. The warnings of a finished replay's
	// result (run's, compare's, memory's, sweep's) are printed by the
	// command after its checks, once its output is written.
	pending []string
	// inputs are the files the command line names for reading
	// (inputFiles), which no output may replace.
	inputs []input
}

// warnf holds a warning (pending) until the command's checks pass.
func (a *app) warnf(format string, args ...any) {
	a.pending = append(a.pending, fmt.Sprintf(format, args...))
}

// dropActivationsWarning drops, when drop is set, s's warning that its
// model counts no activations (scenarios.Scenario.ActivationsWarning) from
// the warnings held: a command that counts model states only (memory and
// fit under a seed's convention, the published estimators, verify's
// numerics) prints the seeds' tables without it.
func (a *app) dropActivationsWarning(s *scenarios.Scenario, drop bool) {
	if !drop || s == nil || s.ActivationsWarning == "" {
		return
	}
	a.pending = slices.DeleteFunc(a.pending, func(w string) bool { return w == s.ActivationsWarning })
}

// flushWarnings prints the warnings held, once.
func (a *app) flushWarnings() {
	for _, w := range a.pending {
		fmt.Fprintf(a.err, "zerosim: warning: %s\n", w)
	}
	a.pending = nil
}

// warnFirst is standard output, printing the held warnings (on stderr)
// before its first write: a command writes its report once its checks
// have passed.
type warnFirst struct {
	a *app
	w io.Writer
}

func (w warnFirst) Write(p []byte) (int, error) {
	w.a.flushWarnings()
	return w.w.Write(p)
}

// writesFiles is the annotation of a command that writes files into -o DIR;
// -o on any other command is an input error rather than silently ignored.
const writesFiles = "writes-files"

// commands is filled by each cmd_*.go file's init, so commands live in their
// own files.
var commands []func(*app) *cobra.Command

// inputError marks errors caused by the user's input (exit code 2).
type inputError struct{ err error }

func (e inputError) Error() string { return e.err.Error() }
func (e inputError) Unwrap() error { return e.err }

// failure marks a run that completed but failed its check (exit code 1)
// after printing its own report.
type failure struct{ msg string }

func (e failure) Error() string { return e.msg }

func newRoot(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "zerosim",
		Short: "Performance and memory simulator for ZeRO data parallelism",
		Long: `zerosim replays one training step of ZeRO data parallelism (stages 0–3,
FSDP, Megatron's distributed optimizer with redundancy K) on a simulated
cluster: step time, exposed communication, bytes per link class and memory per
rank. It also runs the real sharded numerics on toy models and checks them bit
for bit against unsharded training.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionLine(reports.ReadStamp()),
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetIn(a.in)
	root.SetOut(a.out)
	root.SetErr(a.err)
	pf := root.PersistentFlags()
	pf.StringArrayVar(&a.sets, "set", nil, "override a scenario value, e.g. --set parallelism.k=4 (repeatable)")
	pf.StringVar(&a.format, "format", "table", "output format: table, json or csv (collective: also nccl-tests)")
	pf.StringVarP(&a.outDir, "output", "o", "", "write output files into `DIR`")
	pf.StringVar(&a.units, "units", "gib", "memory in tables: gib (2^30 B) or gb (1e9 B)")
	pf.BoolVar(&a.wide, "wide", false, "tables with every column (exact bytes), wider than 120 columns")
	root.PersistentPreRunE = a.checkInput
	help := root.HelpFunc()
	root.SetHelpFunc(func(cmd *cobra.Command, args []string) {
		defer globalFlagsFor(cmd)()
		help(cmd, args)
	})
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		// pflag's "unknown flag: --stage" names neither the command nor
		// where its flags are listed.
		err = plainFlagValue(shortGroup(err, a.args))
		if cmd == cmd.Root() {
			return inputError{fmt.Errorf("%v (see %s --help)", err, cmd.CommandPath())}
		}
		return inputError{fmt.Errorf("%s: %v (see %s --help)", commandName(cmd), err, cmd.CommandPath())}
	})
	for _, c := range commands {
		root.AddCommand(c(a))
	}
	addCobraCommands(root)
	addCompletions(root)
	onceFlags(root)
	for _, c := range root.Commands() {
		if c.HasSubCommands() && !c.Runnable() {
			// Left alone, cobra prints a group's help and exits 0 for
			// "zerosim import" and "zerosim import nope" alike.
			c.Args, c.RunE = cobra.ArbitraryArgs, groupWithoutCommand
			if c.Annotations == nil {
				c.Annotations = map[string]string{}
			}
			c.Annotations[groupOnly] = "true"
		}
	}
	return root
}

// addCobraCommands adds cobra's "help" and "completion" commands, which
// cobra adds only when it executes, after newRoot has turned command
// groups into errors: "completion tcsh" printed the group's help with exit
// 0, and "help nope" "Unknown help topic" and the usage, exit 0. Added
// first, completion is a group like import, and help of an unknown
// command is an input error.
func addCobraCommands(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	root.InitDefaultHelpCmd()
	if c, _, err := root.Find([]string{"completion"}); err == nil && c != root {
		for _, sh := range c.Commands() {
			// "completion bash extra" said unknown command "extra".
			sh.Args = noArgs
		}
	}
	for _, c := range root.Commands() {
		if c.Name() != "help" || c.Run == nil {
			continue
		}
		show := c.Run
		c.Run = nil
		c.RunE = func(c *cobra.Command, args []string) error {
			if t, rest, err := c.Root().Find(args); len(args) > 0 && (err != nil || t == c.Root() || len(rest) > 0) {
				return inputError{fmt.Errorf("help: no command %q (see %s --help)", strings.Join(args, " "), c.Root().Name())}
			}
			show(c, args)
			return nil
		}
	}
}

// checkEmptyValues rejects a flag given an empty value (--tokens "",
// --recompute ""): every such flag would otherwise fall back to its
// default and the run would silently answer another question. Flags with a
// message of their own (--format, -o, output files) are checked before.
func checkEmptyValues(cmd *cobra.Command) error {
	var err error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if err != nil {
			return
		}
		empty := false
		switch f.Value.Type() {
		case "string":
			empty = strings.TrimSpace(f.Value.String()) == ""
		case "stringSlice", "intSlice":
			empty = f.Value.String() == "[]"
		}
		if empty {
			err = inputError{fmt.Errorf("--%s: empty value (give %s; see %s --help)", f.Name, flagWant(f), cmd.CommandPath())}
		}
	})
	return err
}

// checkInput checks what every command is given before it runs: the
// format and output targets, empty arguments and empty flag values.
func (a *app) checkInput(cmd *cobra.Command, args []string) error {
	if isCompletionRequest(cmd) {
		// Its arguments are the command line being completed, whose
		// last word is empty after a space (QA25 H1).
		return nil
	}
	switch a.format {
	case "table", "json", "csv", "nccl-tests":
		// nccl-tests is collective's; checkOutputs rejects it elsewhere.
		if err := a.checkOutputs(cmd, args); err != nil {
			return err
		}
		if err := checkEmptyArgs(cmd, args); err != nil {
			return err
		}
		return checkEmptyValues(cmd)
	}
	if o, ok := commandOutputs[commandKey(cmd)]; ok && len(o.formats) > 0 {
		return formatError(a.format, commandKey(cmd), o)
	}
	return inputError{fmt.Errorf("--format %s: use table, json or csv", shownValue(a.format))}
}

// checkEmptyArgs rejects an empty argument (zerosim run "$FILE" with FILE
// unset): run, plan, fit and memory took it for no argument and ran the
// default example.
func checkEmptyArgs(cmd *cobra.Command, args []string) error {
	for i, arg := range args {
		if strings.TrimSpace(arg) == "" {
			return inputError{fmt.Errorf("%s: argument %d is empty (%q; usage: %s)", commandName(cmd), i+1, arg, cmd.UseLine())}
		}
	}
	return nil
}

// flagWant is what a flag takes, from its usage text: "sequences per
// optimizer step (N, or tokens: 4Mtokens)…".
func flagWant(f *pflag.Flag) string {
	_, usage := pflag.UnquoteUsage(f)
	if usage == "" {
		return "a value"
	}
	return "a value: " + usage
}

// plainFlagValue says what a flag of a number type wants instead of Go's
// parse error: `invalid argument "1.5" for "--top" flag: strconv.ParseInt:
// parsing "1.5": invalid syntax` becomes `--top "1.5": want a whole
// number`. It reads pflag's InvalidValueError and the strconv.NumError it
// wraps, not their text.
func plainFlagValue(err error) error {
	if tw := twiceFlag(err); tw != nil {
		return tw
	}
	var iv *pflag.InvalidValueError
	var ne *strconv.NumError
	if !errors.As(err, &iv) || !errors.As(err, &ne) {
		return err
	}
	flag, value := "--"+iv.GetFlag().Name, iv.GetValue()
	want := ""
	switch ne.Func {
	case "ParseInt", "Atoi", "ParseUint":
		want = "a whole number"
	case "ParseFloat":
		want = "a number"
	case "ParseBool":
		want = "true or false"
	default:
		return err
	}
	if errors.Is(ne.Err, strconv.ErrRange) {
		return fmt.Errorf("%s %q: out of range (want %s of a sensible size)", flag, value, want)
	}
	if n, ok := strings.CutSuffix(strings.TrimSpace(value), "%"); ok && want == "a number" {
		if _, err := strconv.ParseFloat(n, 64); err == nil {
			// --tolerance 5%: the flag is in percent already.
			return fmt.Errorf("%s %q: want a number (the flag is in percent: %s %s)", flag, value, flag, n)
		}
	}
	return fmt.Errorf("%s %q: want %s", flag, value, want)
}

// shortGroup names the whole argument in pflag's errors about a group of
// shorthand flags: for "-v-1" pflag says "unknown shorthand flag: '-' in
// --1", the rest of the group after the -v it took, which is not what was
// typed; this says `unknown shorthand flag "-" in "-v-1"`, and "-vj"
// gives `-j (--jobs) needs a value, in "-vj"`.
func shortGroup(err error, args []string) error {
	var rest string
	var ne *pflag.NotExistError
	var vr *pflag.ValueRequiredError
	switch {
	case errors.As(err, &ne) && ne.GetSpecifiedShortnames() != "":
		rest = ne.GetSpecifiedShortnames()
	case errors.As(err, &vr) && vr.GetSpecifiedShortnames() != "":
		rest = vr.GetSpecifiedShortnames()
	default:
		return err
	}
	group := "-" + rest
	for _, arg := range args {
		if arg == "--" {
			break
		}
		if strings.HasPrefix(arg, "-") && !strings.HasPrefix(arg, "--") && strings.HasSuffix(arg, rest) {
			group = arg
			break
		}
	}
	if vr != nil {
		need := fmt.Sprintf("-%s (--%s) needs a value", vr.GetSpecifiedName(), vr.GetFlag().Name)
		if group != "-"+vr.GetSpecifiedName() {
			need += fmt.Sprintf(", in %q", group)
		}
		return errors.New(need)
	}
	return fmt.Errorf("unknown shorthand flag %q in %q", ne.GetSpecifiedName()[:1], group)
}

// groupOnly marks a command that only groups others (import): run alone
// it is an input error.
const groupOnly = "group-only"

// groupWithoutCommand is the error of a command group run without one of
// its commands, or with one it does not have.
func groupWithoutCommand(cmd *cobra.Command, args []string) error {
	var names []string
	for _, s := range cmd.Commands() {
		if s.IsAvailableCommand() {
			names = append(names, s.Name())
		}
	}
	if len(args) == 0 {
		return inputError{fmt.Errorf("%s: name one of its commands: %s (see %s --help)", commandName(cmd), strings.Join(names, ", "), cmd.CommandPath())}
	}
	if cmd.Name() == "import" {
		if sub, why := importKind(args[0]); sub != "" {
			return inputError{fmt.Errorf("%s: %q is a file, not a command; %s, so run: %s %s %s", commandName(cmd), args[0], why, cmd.CommandPath(), sub, args[0])}
		}
	}
	return inputError{fmt.Errorf("%s: unknown command %q (use %s; see %s --help)", commandName(cmd), args[0], strings.Join(names, ", "), cmd.CommandPath())}
}

// commandName is a command's path below zerosim: "import hf".
func commandName(cmd *cobra.Command) string {
	return strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
}

// Main runs zerosim with args and returns the exit code.
func Main(args []string, in io.Reader, out, errOut io.Writer) int {
	code, _ := execute(args, in, out, errOut)
	return code
}

// execute is Main, also returning the error it reported (nil on exit 0),
// so a test can tell a failed check (failure) from any other exit 1.
func execute(args []string, in io.Reader, out, errOut io.Writer) (int, error) {
	// Standard output keeping the first error a write to it gave:
	// "zerosim version > /dev/full" and --help printed with
	// fmt.Fprintln, whose error nobody checked, and exited 0 with nothing
	// written; every other command exits 1 with "write /dev/stdout: no
	// space left on device" (QA19 L7), and now so do they.
	o := &reports.ErrWriter{W: out}
	a := &app{in: in, err: errOut, args: args}
	a.out = warnFirst{a, o}
	root := newRoot(a)
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	if err == nil {
		err = o.Err
	}
	if err == nil || errors.As(err, new(failure)) {
		a.flushWarnings() // the checks passed
	}
	if err == nil {
		return exitOK, nil
	}
	if isArgCount(err) && cmd != nil {
		// cobra's "accepts 1 arg(s), received 0" names neither the command nor the fix.
		err = inputError{fmt.Errorf("%s: %v (usage: %s)", commandName(cmd), err, cmd.UseLine())}
	}
	if cmd != nil && strings.HasPrefix(err.Error(), "unknown command ") {
		// cobra appends "\n\nDid you mean this?\n\trun\n": five lines.
		err = inputError{errors.New(unknownCommand(err.Error(), cmd))}
	}
	// A value given on the command line or read from a file may hold a
	// newline or a terminal escape: the error stays one line, as typed.
	var f failure
	if errors.As(err, &f) {
		fmt.Fprintln(errOut, "zerosim:", reports.EscapeControl(f.msg))
		return exitFailure, err
	}
	var we *reports.WriteError
	if errors.As(err, &we) {
		// The file system refused an output file: exit 2 like other input
		// the user can fix, not 1, which --require-fit gives "does not fit".
		fmt.Fprintln(errOut, "zerosim:", reports.EscapeControl(a.writeFailureFrom(cmd, we)))
		return exitInput, err
	}
	fmt.Fprintln(errOut, "zerosim:", reports.EscapeControl(plainOf(err, cmd)))
	var ie inputError
	var se *scenarios.Error
	if errors.As(err, &ie) || errors.As(err, &se) || isUsage(err) {
		return exitInput, err
	}
	return exitFailure, err
}

// plainOf is plain(err) keeping a leading "memory: " or "sweep: " that
// names the command run, not the package.
func plainOf(err error, cmd *cobra.Command) string {
	msg := plain(err)
	if cmd != nil {
		name := cmd.Name() + ": "
		if strings.HasPrefix(err.Error(), name) && !strings.HasPrefix(msg, name) {
			return name + msg
		}
	}
	return msg
}

// unknownCommand puts cobra's "unknown command" error and its suggestions
// on one line: `unknown command "rnu" for "zerosim" (did you mean run? see
// zerosim --help)`.
func unknownCommand(msg string, cmd *cobra.Command) string {
	head, suggestions, _ := strings.Cut(msg, "\n\nDid you mean this?\n")
	var names []string
	for _, l := range strings.Split(suggestions, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			names = append(names, l)
		}
	}
	hint := "see " + cmd.CommandPath() + " --help"
	if len(names) > 0 {
		hint = "did you mean " + scenarios.ListOr(names) + "? " + hint
	}
	return strings.TrimSpace(head) + " (" + hint + ")"
}

// isArgCount reports cobra's errors for a wrong number of arguments.
func isArgCount(err error) bool {
	msg := err.Error()
	return strings.HasPrefix(msg, "accepts ") || strings.HasPrefix(msg, "requires ")
}

// isUsage reports cobra's own usage errors (unknown command, wrong args).
func isUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "accepts ", "requires ", "invalid argument", "flag needs"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// fileWriters names the commands that take -o DIR: "run and compare".
func fileWriters(root *cobra.Command) string {
	var names []string
	for _, c := range root.Commands() {
		if c.Annotations[writesFiles] != "" {
			names = append(names, c.Name())
		}
	}
	return scenarios.ListAnd(names)
}

// checkJobs checks a --jobs value (sweep, plan, compare).
func checkJobs(j int) error {
	if j < 1 || j > sweep.MaxJobs {
		return inputError{fmt.Errorf("--jobs %d: use 1 to %d (default %d: the CPUs this process may use, GOMAXPROCS, at most %d)", j, sweep.MaxJobs, sweep.DefaultJobs(), sweep.MaxJobs)}
	}
	return nil
}
