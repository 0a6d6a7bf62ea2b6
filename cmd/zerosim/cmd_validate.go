package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
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
the --set overrides, and prints one line per valid file:

  FILE: ok (N=16, stage 1, K=1, P=6738415616 params)

The first invalid file stops the run with one line on stderr,
"zerosim: FILE:LINE:COL: what is wrong (what is allowed)", and exit code 2.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runValidate(args, a.sets, a.in, a.out, a.err)
		},
	}
}

// runValidate loads every file in order and reports each valid one on out.
func runValidate(files, sets []string, in io.Reader, out, errOut io.Writer) error {
	for _, f := range files {
		src, err := scenarios.ReadInput(f, in)
		var s *scenarios.Scenario
		if err == nil {
			s, err = src.Load(sets)
		}
		if err != nil {
			return inputError{err}
		}
		// What run would refuse (bucket and task limits) fails here too.
		if err := zero.Check(s); err != nil {
			return inputError{fmt.Errorf("%s: %w", src.File, err)}
		}
		for _, w := range s.Warnings {
			fmt.Fprintf(errOut, "zerosim: warning: %s\n", w)
		}
		active := ""
		if a := s.Model.ActiveParams(); a != int64(s.Model.Params) {
			active = fmt.Sprintf(", %d active", a)
		}
		fmt.Fprintf(out, "%s: ok (N=%d, stage %d, K=%d, P=%d params%s)\n",
			src.File, s.N(), s.Parallelism.Stage, s.Parallelism.K, int64(s.Model.Params), active)
	}
	return nil
}
