package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/zerosim/zerosim/reports"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/zero"
)

func init() { commands = append(commands, newValidateCmd) }

func newValidateCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "validate FILE…",
		Short: "Check scenario files (use - for standard input)",
		Long: `validate loads each scenario file strictly (unknown keys, wrong types, bad
units, out-of-range values and inconsistent parallelism are errors), applies
the --set overrides, and, once every file is valid, prints one line per
file (warnings on stderr):

  FILE: ok (N=16, stage 1, K=1, P=6738415616 params)

An invalid file gets one line on stderr, its first error,
"zerosim: FILE:LINE:COL: what is wrong (what is allowed)", and exit code 2;
with several files every file is checked, each invalid one gets its line,
each valid one its warnings (in the files' order), and a last line says how
many passed; nothing goes to stdout. --format json
prints one JSON object instead: the zerosim build and the files.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := stdinOnce(args); err != nil {
				return err
			}
			return runValidate(args, a.sets, a.in, a.out, a.err, a.format == "json")
		},
	}
}

// validateJSON is validate --format json: the build that checked the
// files, as every JSON output names it, and the files in order.
type validateJSON struct {
	Zerosim reports.Build `json:"zerosim"`
	Files   []validFile   `json:"files"`
}

// validFile is one valid file of validate --format json.
type validFile struct {
	File   string `json:"file"`
	N      int    `json:"n"`
	Stage  int    `json:"stage"`
	K      int    `json:"k"`
	Params int64  `json:"params"`
	Active int64  `json:"active_params,omitempty"` // of a mixture of experts
	Stack  string `json:"stack,omitempty"`         // the stack preset that filled in keys
}

// runValidate loads every file in order and, when all are valid, reports
// them on out: a line each, or with asJSON one object. Otherwise nothing
// goes to out: errOut has, in the files' order, an invalid file's first
// error as its line and a valid file's warnings (what it would print
// alone), and with several files the returned error (the last line) says
// how many passed.
func runValidate(files, sets []string, in io.Reader, out, errOut io.Writer, asJSON bool) error {
	rows := []validFile{}
	var lines, warnings, report []string
	var bad []error
	for _, f := range files {
		r, warns, line, err := validateOne(f, sets, in)
		if err != nil {
			bad = append(bad, err)
			report = append(report, "zerosim: "+reports.EscapeControl(plain(err))+"\n")
			continue
		}
		rows, warnings, lines = append(rows, r), append(warnings, warns...), append(lines, line)
		report = append(report, warns...)
	}
	if len(bad) > 0 {
		if len(files) == 1 {
			return inputError{bad[0]}
		}
		for _, l := range report {
			if _, werr := fmt.Fprint(errOut, l); werr != nil {
				return werr
			}
		}
		return inputError{fmt.Errorf("validate: %d of %s passed, %d failed (each failed file's first error is above)", len(files)-len(bad), nOf(len(files), "file", "files"), len(bad))}
	}
	for _, w := range warnings {
		fmt.Fprint(errOut, w)
	}
	if !asJSON {
		for _, l := range lines {
			if _, err := fmt.Fprint(out, l); err != nil {
				return err
			}
		}
		return nil
	}
	e := json.NewEncoder(out)
	e.SetIndent("", "  ")
	return e.Encode(validateJSON{Zerosim: reports.ReadBuild(), Files: rows})
}

// validateOne loads one file of validate: its row, warnings and ok line, or
// its first error.
func validateOne(f string, sets []string, in io.Reader) (validFile, []string, string, error) {
	src, err := scenarios.ReadInput(f, in)
	var s *scenarios.Scenario
	if err == nil {
		s, err = src.Load(sets)
	}
	if err == nil {
		err = src.Place(sets, zero.CheckPins(s))
	}
	if err != nil {
		return validFile{}, nil, "", err
	}
	// What run would refuse (bucket and task limits) fails here too.
	if err := zero.Check(s); err != nil {
		return validFile{}, nil, "", checkError(src, sets, s, err)
	}
	var warnings []string
	for _, w := range s.Warnings {
		warnings = append(warnings, fmt.Sprintf("zerosim: warning: %s\n", w))
	}
	r := validFile{File: src.File, N: s.N(), Stage: s.Parallelism.Stage, K: s.Parallelism.K, Params: int64(s.Model.Params)}
	active := ""
	if a := s.Model.ActiveParams(); a != r.Params {
		r.Active, active = a, fmt.Sprintf(", %d active", a)
	}
	if r.Stack = s.Stack; r.Stack != "" {
		active += ", stack " + r.Stack
	}
	return r, warnings, fmt.Sprintf("%s: ok (N=%d, stage %d, K=%d, P=%d params%s)\n", r.File, r.N, r.Stage, r.K, r.Params, active), nil
}
