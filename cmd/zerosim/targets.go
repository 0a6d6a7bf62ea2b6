package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/zerosim/zerosim/reports"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/sweep"
)

// outputKind is what an output flag writes. An existing file at its path
// is replaced only when it is of that kind (check returns nil): run
// --trace my.yaml replaced the user's scenario with a trace and said
// "wrote my.yaml" (QA22 H1).
type outputKind struct {
	name  string                  // "a zerosim trace"
	check func(path string) error // nil when the file at path is one
	// own: the command calls checkTarget itself, after its own checks
	// of the path (sweep --out: "-", a directory, --resume).
	own bool
}

// headBytes is how much of an existing file the kinds read: a sweep's
// meta line names its grids, sets and files.
const headBytes = 1 << 20

var (
	traceKind = outputKind{"a zerosim trace", headIs(reports.IsRunTrace), false}
	sweepKind = outputKind{"a zerosim sweep output", headIs(sweep.IsOutput), false}
	calKind   = outputKind{"a calibration file", isCalibration, false}
)

// headIs checks the start of a file with is.
func headIs(is func([]byte) bool) func(string) error {
	return func(path string) error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		head, err := io.ReadAll(io.LimitReader(f, headBytes))
		if err != nil {
			return err
		}
		if !is(head) {
			return errNotKind
		}
		return nil
	}
}

// errNotKind is a kind's check failing with nothing more to say.
var errNotKind = errors.New("not of the kind")

// isCalibration reads path as a calibration file; the error says why it
// is not one.
func isCalibration(path string) error {
	data, err := readFileBounded(path, scenarios.MaxCalibrationBytes)
	if errors.Is(err, errTooLarge) {
		return fmt.Errorf("larger than %d MiB", scenarios.MaxCalibrationBytes>>20)
	}
	if err != nil {
		return err
	}
	if _, err := scenarios.ParseCalibration(path, data); err != nil {
		return errors.New(strings.Join(strings.Fields(err.Error()), " ")) // yaml's errors span lines
	}
	return nil
}

// notKind is the one line for an existing file an output flag would
// replace but that is not of the kind it writes; why, when the kind's
// check says more than errNotKind, follows it.
func notKind(flag, path string, kind outputKind, why error) error {
	msg := fmt.Sprintf("--%s %s exists and is not %s (not overwritten: choose another --%s or delete it)", flag, path, kind.name, flag)
	if why != nil && !errors.Is(why, errNotKind) {
		msg += ": " + why.Error()
	}
	return inputError{errors.New(msg)}
}

// input is a file a command reads: what names it, and its path.
type input struct{ what, path string }

// inputFiles are the files cmd reads as given on its command line: its
// arguments and the flags whose value is a FILE it reads (not the output
// flags of o), those that exist.
func inputFiles(cmd *cobra.Command, args []string, o outputs) []input {
	var in []input
	for _, a := range args {
		in = append(in, input{"its argument " + a, a})
	}
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if _, out := o.files[f.Name]; out {
			return
		}
		if name, _ := pflag.UnquoteUsage(f); name == "FILE" {
			in = append(in, input{"its --" + f.Name + " " + f.Value.String(), f.Value.String()})
		}
	})
	return in
}

// readAs is the input that is the file fi (os.SameFile: a link, another
// spelling of its path), if any.
func readAs(fi os.FileInfo, inputs []input) (input, bool) {
	for _, in := range inputs {
		if ii, err := os.Stat(in.path); err == nil && os.SameFile(fi, ii) {
			return in, true
		}
	}
	return input{}, false
}

// checkDirTargets is checkTarget's first rule for -o DIR, whose files are
// known once rendered (nothing is written or printed before): a file it
// would replace that the command reads is refused, and so is a directory
// in the way of one (QA25 L7: the files before it were written). Other
// entries of its names there are its own to replace, a symbolic link
// itself, not its target (reports.WriteOutputDir); other files in DIR are
// left alone.
func checkDirTargets(dir string, files []reports.OutputFile, inputs []input) error {
	for _, f := range append(fileNames(files), reports.ManifestName) {
		p := filepath.Join(dir, f)
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
			return &reports.WriteError{Path: p, Err: syscall.EISDIR}
		}
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		in, ok := readAs(fi, inputs)
		if ok && isLink(p) {
			// The link would be replaced, not the file: refused all
			// the same, as the likely mistake, but not as destroying it.
			return inputError{fmt.Errorf("-o %s: %s there is a link to a file this command reads, %s (choose another -o, or remove the link)", dir, f, in.what)}
		}
		if ok {
			return inputError{fmt.Errorf("-o %s: writes %s there, a file this command reads (%s); writing there would destroy it (choose another -o)", dir, f, in.what)}
		}
	}
	return nil
}

// isLink reports whether p is a symbolic link.
func isLink(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode()&os.ModeSymlink != 0
}

// checkTarget is the one rule of every output file flag: a target that is
// one of the command's inputs (compared by os.SameFile: a link, another
// spelling) is refused, and so is an existing file that is not kind.
// Devices and FIFOs are written in place and pass.
func checkTarget(command, flag, path string, kind outputKind, inputs []input) error {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	if in, ok := readAs(fi, inputs); ok {
		return inputError{fmt.Errorf("--%s %s: zerosim %s reads that file (%s); writing there would destroy it (choose another --%s)", flag, path, command, in.what, flag)}
	}
	if err := kind.check(path); err != nil {
		return notKind(flag, path, kind, err)
	}
	return nil
}
