package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/reports"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/zero"
)

func init() { commands = append(commands, newMemoryCmd) }

type memoryOpts struct {
	stage      int
	estimator  string
	detail     bool
	convention string
	rank       int
}

func newMemoryCmd(a *app) *cobra.Command {
	o := memoryOpts{}
	cmd := &cobra.Command{
		Use:   "memory [FILE]",
		Short: "Per-rank memory of ZeRO stages 0–3: every component at rest and at peak",
		Long: `memory prints the memory of one rank for ZeRO stages 0–3 (or --stage):
bf16 params, grads, fp32 master params, Adam m and v, padding, gradient
buckets, ZeRO-3 gathered units, optimizer-step temporaries, activations and
fixed overheads, each at rest (between steps) and at its peak with the phase
of the peak, in GiB (GB with --units gb; exact bytes too with --wide).
With more than one stage or estimator a summary comes first. A stage other
than the scenario's that its communication.bucket_size cannot lay out (too
many buckets over one group at stages 0–2) is n/a, with the size to use.

--estimator deepspeed|megatron prints DeepSpeed's estimate_zero2/3 and
Megatron's 18 / 6+12/DP bytes-per-parameter figures; all prints them side by
side with zerosim's model: the summary, and every table with --detail.
--convention seed000|seed002 counts memory the way seed 000's or seed 002's
published tables do.

Without FILE the default example scenario is used.`,
		Example: `  zerosim memory
  zerosim memory --stage 3 --units gb scenario.yaml
  zerosim memory --estimator all --set parallelism.k=2 scenario.yaml`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMemory(a, o, fileArg(args), a.out, a.err)
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.stage, "stage", -1, "ZeRO stage 0–3; -1 prints all four")
	f.StringVar(&o.estimator, "estimator", "zerosim", "zerosim, deepspeed, megatron or all")
	f.BoolVar(&o.detail, "detail", false, "with --estimator all, print every stage's and estimator's table after the summary")
	f.StringVar(&o.convention, "convention", "zerosim", "what to count: zerosim, seed000 or seed002")
	f.IntVar(&o.rank, "rank", 0, "rank of the shard group whose real/padding split is shown")
	return cmd
}

// memoryFlags checks zerosim memory's flags and returns the convention and
// the estimators they ask for.
func memoryFlags(o memoryOpts) (memory.Convention, []memory.Estimator, error) {
	if o.stage < -1 || o.stage > 3 {
		return 0, nil, inputError{fmt.Errorf("--stage %d: use 0, 1, 2 or 3", o.stage)}
	}
	conv, err := memory.ParseConvention(o.convention)
	if err != nil {
		return 0, nil, inputError{fmt.Errorf("--convention: %s", plain(err))}
	}
	ests, err := parseEstimators(o.estimator)
	if err != nil {
		return 0, nil, err
	}
	if o.convention != "zerosim" && (o.estimator == "deepspeed" || o.estimator == "megatron") {
		// It was ignored: the estimators print their own formulas.
		return 0, nil, inputError{fmt.Errorf("--convention %s counts zerosim's model as a seed's tables do, and --estimator %s prints %s's own estimate, which no convention changes: add --estimator all (or zerosim), or drop --convention",
			o.convention, o.estimator, map[string]string{"deepspeed": "DeepSpeed", "megatron": "Megatron"}[o.estimator])}
	}
	if o.detail && o.estimator != "all" {
		// It was ignored: one estimator's table is printed in full.
		return 0, nil, inputError{fmt.Errorf("--detail adds every table to the summary of --estimator all (--estimator %s prints its table in full): add --estimator all, or drop --detail", o.estimator)}
	}
	if o.rank < 0 {
		return 0, nil, inputError{fmt.Errorf("--rank %d: must be ≥ 0", o.rank)}
	}
	return conv, ests, nil
}

func runMemory(a *app, o memoryOpts, file string, out, errOut io.Writer) error {
	conv, ests, err := memoryFlags(o)
	if err != nil {
		return err
	}
	s, err := a.loadScenarioNoStep(file)
	if err != nil {
		return err
	}
	a.dropActivationsWarning(s, conv != memory.ConventionZerosim || o.estimator == "deepspeed" || o.estimator == "megatron")
	if o.rank >= s.N() {
		return inputError{fmt.Errorf("--rank %d: the scenario has ranks 0–%d", o.rank, s.N()-1)}
	}
	stages := []int{0, 1, 2, 3}
	if o.stage >= 0 {
		stages = []int{o.stage}
	}
	rs, err := memory.EstimateStages(s, stages, ests, memory.Options{Convention: conv, Rank: o.rank}, unlaidStage(s, o.stage < 0), a.atStage)
	if err != nil {
		return memoryError(a, s, err)
	}
	switch a.format {
	case "json":
		err = reports.WriteMemoryJSON(out, s, rs)
	case "csv":
		err = reports.WriteMemoryCSV(out, rs)
	default:
		err = reports.WriteMemoryReport(out, rs, a.styleOf(s), o.detail || o.estimator != "all")
	}
	if err != nil {
		return err
	}
	if a.format != "table" {
		// The table prints warnings inline; other formats keep stdout clean.
		for _, r := range rs {
			for _, w := range r.Warnings {
				fmt.Fprintf(errOut, "zerosim: warning: stage %d: %s\n", r.Stage, w)
			}
		}
	}
	return nil
}

// unlaidStage is what zerosim memory says, instead of refusing s, of a
// stage the bucket size cannot lay out though it lays out s's own stage
// (memory.EstimateStages), which validate and run check: run's refusal at
// that stage, with the bucket size it advises (zero.AdviseBucket). nil
// unless every stage is asked for: --stage N alone is refused.
func unlaidStage(s *scenarios.Scenario, all bool) func(int, error) string {
	if !all {
		return nil
	}
	return func(stage int, err error) string {
		return fmt.Sprintf("stage %d cannot be laid out at this bucket size: %s; stage %d, the scenario's, can", stage, plain(zero.AdviseBucket(s, err)), s.Parallelism.Stage)
	}
}

// memoryError is the memory model's refusal of s as input: a bucket size
// over the limits with the size run and fit advise, named as run names it.
func memoryError(a *app, s *scenarios.Scenario, err error) error {
	if err := zero.AdviseBucket(s, err); errors.As(err, new(*zero.LimitError)) {
		return a.replayError(err)
	}
	return inputError{err}
}

// parseEstimators parses --estimator: one estimator, or all of them.
func parseEstimators(name string) ([]memory.Estimator, error) {
	if name == "all" {
		return memory.Estimators, nil
	}
	e, err := memory.ParseEstimator(name)
	if err != nil {
		// The package knows one estimator at a time; the flag also takes
		// all (the help says so, the refusal did not).
		names := []string{}
		for _, e := range memory.Estimators {
			names = append(names, e.String())
		}
		return nil, inputError{fmt.Errorf("--estimator: estimator %q: use %s", name, scenarios.ListOr(append(names, "all")))}
	}
	return []memory.Estimator{e}, nil
}
