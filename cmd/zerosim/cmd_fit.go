package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/reports"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/sweep"
	"github.com/zerosim/zerosim/zero"
)

func init() { commands = append(commands, newFitCmd) }

type fitOpts struct {
	convention string
	maxGPUs    int
}

func newFitCmd(a *app) *cobra.Command {
	o := fitOpts{}
	cmd := &cobra.Command{
		Use:   "fit [FILE]",
		Short: "Does the model fit per GPU at each ZeRO stage and K; the fewest nodes that fit; the largest model that fits",
		Long: `fit answers three questions for every ZeRO stage 0–3 and every K dividing N
(stage 0 shards nothing, so only K=1), as zerosim run --require-fit judges
"fits" (the replayed step's peak against the GPU's memory):

  - does the model fit on the given cluster;
  - the fewest whole nodes that make it fit, as zerosim accepts a cluster
    (same GPU and GPUs per node, dp·cp = nodes · GPUs per node, K dividing
    it), and the fewest over every stage;
  - the largest model that fits on the given cluster: a model with
    dimensions (preset, or kind with hidden/layers) is scaled by its number
    of layers, from the fewest that zerosim runs with the file's settings
    (with ep > 1, the fewest that hold a MoE block: 4 for DeepSeek-V3,
    whose first 3 are dense); a bare parameter count is scaled as a whole
    (layer count fixed, largest_layer in proportion); an explicit layer
    list is not scaled.

The memory model finds where each search starts (a binary search, the peak
taken not to grow with dp nor to shrink with the model) and screens: a
layout it rejects is not replayed and its peak, marked *, is the model's;
so is a layout whose ranks differ (shard groups straddling nodes, per-GPU
or per-link overrides), which run replays rank by rank, too slowly for a
search: the model decides it.
--convention seed000|seed002 counts memory as those seeds' tables do; then
the memory model decides and nothing is replayed. FILE may name an
embedded example; without FILE the default example scenario is used.`,
		Example: `  zerosim fit seed002-7b
  zerosim fit seed002-7b --convention seed002 --format json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runFit(a, o, fileArg(args), a.out)
		},
	}
	cmd.Flags().StringVar(&o.convention, "convention", "zerosim", "what memory counts: zerosim, seed000 or seed002")
	cmd.Flags().IntVar(&o.maxGPUs, "max-gpus", 1<<16, "largest cluster the smallest-dp search tries")
	return cmd
}

func runFit(a *app, o fitOpts, file string, out io.Writer) error {
	conv, err := memory.ParseConvention(o.convention)
	if err != nil {
		return inputError{fmt.Errorf("--convention: %s", plain(err))}
	}
	if o.maxGPUs < 1 || o.maxGPUs > scenarios.MaxGPUs {
		// Above a scenario's largest cluster the search's sizes overflowed
		// int64 near 2^62 (exit 1, naming no flag).
		return inputError{fmt.Errorf("--max-gpus %d: use 1 to %d (the largest cluster a scenario describes)", o.maxGPUs, scenarios.MaxGPUs)}
	}
	src, s, err := loadSource(a, file, true)
	if err != nil {
		return err
	}
	a.dropActivationsWarning(s, conv != memory.ConventionZerosim)
	// The least-nodes search tries whole nodes: below one node it tried
	// nothing and every row read "none", beside rows that fit this cluster.
	if s != nil && o.maxGPUs < s.Cluster.GPUsPerNode {
		return inputError{fmt.Errorf("--max-gpus %d: less than one node of %d GPUs, and the search tries whole nodes (use %d or more)",
			o.maxGPUs, s.Cluster.GPUsPerNode, s.Cluster.GPUsPerNode)}
	}
	// The file's warnings stay held until the search is done: an input
	// error the search finds (a bucket size over the replay's limits at a
	// stage it tries) is then the one line on stderr (QA24 L4: the ep
	// note came first); the bar is cleared before they are printed.
	opt := sweep.FitOptions{Convention: conv, MaxGPUs: o.maxGPUs}
	done := func() {}
	if isTerminal(a.err) {
		var set func(int64, int64)
		set, done = delayedBar(a.err, "fit")
		opt.Progress = func(d, n int) { set(int64(d), int64(n)) }
	}
	f, err := sweep.FitSearch(src, opt)
	done()
	if err != nil {
		return fitError(src, err)
	}
	f.Plan = planForFit(a, src, f)
	a.flushWarnings()
	switch a.format {
	case "json":
		return reports.WriteFitJSON(out, f)
	case "csv":
		return reports.WriteFitCSV(out, f)
	}
	vendor := reports.NVIDIA
	if s != nil {
		vendor = reports.ClusterVendor(&s.Cluster)
	}
	return reports.WriteFitTable(out, f, a.wide, vendor)
}

// planForFit is what the settings fit holds fixed change: plan's search
// on the scenario's cluster of the stages that do not fit it with room
// (sweep.PlanFit; QA s31 M1), and its advice where nothing fits (QA34
// L2), with a progress bar on a terminal; nil where plan refuses the
// scenario, which keeps fit's answer alone.
func planForFit(a *app, src sweep.Source, f *sweep.Fit) *sweep.Plan {
	var progress func(int, int)
	done := func() {}
	if isTerminal(a.err) {
		var set func(int64, int64)
		set, done = delayedBar(a.err, "fit: plan")
		progress = func(d, n int) { set(int64(d), int64(n)) }
	}
	defer done()
	return sweep.PlanFit(context.Background(), src, f, progress)
}

// fitError is a fit search's error as the user meets it. The scenario's
// own model over a replay's limits at a stage or K fit tries is bad input
// (exit 2), as run refuses it: a bucket size over memory.MaxBuckets at the
// key's line or the --set that gave it, as run and memory place it (final
// read s23: fit alone said "default.yaml: stage 0, K=1:" for a --set); a
// step over the task limits at the file, with the layout it was found at,
// on which the limit depends.
func fitError(src sweep.Source, err error) error {
	var le *zero.LimitError
	if !errors.As(err, &le) {
		return err
	}
	var re *sweep.FitRowError
	if !errors.As(err, &re) {
		return inputError{fmt.Errorf("%s: %s", src.File, plain(le))}
	}
	if errors.As(err, new(*memory.TooManyBucketsError)) && src.Data != nil {
		e := &scenarios.Error{Path: "communication.bucket_size", Msg: plain(le)}
		return inputError{scenarios.Place(src.File, src.Data, src.Sets, e)}
	}
	// The limit's own words, without the search's ("replay: ").
	return inputError{fmt.Errorf("%s: stage %d, K=%d: %s", src.File, re.Stage, re.K, plain(le))}
}
