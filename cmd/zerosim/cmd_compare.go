package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/zerosim/zerosim/reports"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/sweep"
)

func init() { commands = append(commands, newCompareCmd) }

type compareOpts struct {
	vary       string
	varies     []string // every --vary given: one is allowed
	zeropp     bool
	convention string
	jobs       int
}

func newCompareCmd(a *app) *cobra.Command {
	o := compareOpts{}
	cmd := &cobra.Command{
		Annotations: map[string]string{writesFiles: "yes"},
		Use:         "compare [FILE] --vary key=v1,v2,… | compare FILE_A FILE_B [FILE…]",
		Short:       "Replay variants of a scenario side by side: step time, communication, bytes per link class, memory, deltas in %",
		Long: `compare replays several variants and prints them side by side: step time,
compute, the busiest rank's exposed communication, the wire bytes of every
phase per link class (all ranks, and the busiest rank), peak memory and
memory at rest per GPU, with each variant's change in % against the first.

With --vary key=v1,v2,… the variants are FILE (the default example without
FILE, as for run) with each value applied as a --set override; otherwise
every FILE is a variant. FILE may also name an embedded example (zerosim
scenarios).

When the variants differ in K (parallelism.k) alone, a slow-link section sets seed
000's logical slow-link figures (~2P for K=1, ~6P/8 for N=8, K=4) next to
the exact network wire bytes of each K with auto (what a run does: NCCL's
choice on a cluster with a GPU preset), the flat ring and hierarchical
collectives, and says what K>1 does here: bytes and step time
per algorithm, whether the fastest K>1 beats the fastest K=1, its memory and
whether it fits. Seed 000's own rule about K is stated for seed 000's
scenarios or with --convention seed000. Variants that differ in K and in
more (another model, micro-batch, …) get one line naming the keys instead:
their figures would credit the other change to K.

Under the table a verdict says which variant is fastest (when it does not fit
and another does, the fastest that fits first), by how much and why (exposed
communication, compute, slow-network bytes, memory), and which do not fit.

--zeropp replays FILE as ZeRO-3, as ZeRO-3 with K raised to the node count
(sharded inside each node, replicated across) and as ZeRO++ (qwZ, hpZ over
one node, qgZ), prints each one's network bytes per node in M = 2P, and says
from the replays which wins and why: when the network is what ZeRO-3 waits
on, and when ZeRO++ beats raising K.

-o DIR writes the plot (compare.png, compare.svg): when varying
parallelism.k, the busiest rank's slow-link bytes and the step time for every
K that divides N; otherwise a bar chart of times and bytes per variant;
then manifest.json.

To vary the cluster's size, let dp follow it: --set parallelism.dp=auto
(dp = the cluster's GPUs over cp) with --vary cluster.nodes=….`,
		Example: `  zerosim compare seed000-k4 --vary parallelism.k=1,4
  zerosim compare seed000-k4 --vary parallelism.k=1,4 --format json
  zerosim compare scenario.yaml --set parallelism.dp=auto --vary cluster.nodes=2,4,8
  zerosim compare a.yaml b.yaml -o plots
  zerosim compare --zeropp scenario.yaml`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCompare(a, o, args, a.out, a.err)
		},
	}
	cmd.Flags().StringArrayVar(&o.varies, "vary", nil, "compare FILE with each value of `key.path=v1,v2,…` applied as --set")
	cmd.Flags().BoolVar(&o.zeropp, "zeropp", false, "compare FILE as ZeRO-3, ZeRO-3 with K raised to the nodes, and ZeRO++ (qwZ, hpZ, qgZ), with a verdict")
	cmd.Flags().StringVar(&o.convention, "convention", "", "seed000: state seed 000's rule about K in the slow-link note (default for seed 000's scenarios)")
	cmd.Flags().IntVarP(&o.jobs, "jobs", "j", sweep.DefaultJobs(), "replays run at once")
	return cmd
}

// compareVariants builds the variants from --vary or the files, with the
// comparison's title and whether K is varied.
func compareVariants(a *app, o compareOpts, files []string) ([]sweep.Variant, string, bool, error) {
	if len(files) == 0 && (o.zeropp || o.vary != "") {
		files = []string{""} // the default example, as run, plan and sweep take it
	}
	switch {
	case o.zeropp && o.vary != "":
		return nil, "", false, inputError{errors.New("--zeropp compares variants of one FILE, without --vary (drop --vary)")}
	case o.zeropp && len(files) != 1:
		return nil, "", false, inputError{fmt.Errorf("--zeropp compares variants of one FILE, without --vary (got %d files)", len(files))}
	case o.zeropp:
		src, _, err := loadSource(a, files[0], false)
		if err != nil {
			return nil, "", false, err
		}
		variants, err := sweep.ZeroPPVariants(src)
		if err != nil {
			return nil, "", false, inputError{err}
		}
		return variants, src.File + ": ZeRO-3, raising K, ZeRO++", false, nil
	case o.vary != "" && len(files) != 1:
		return nil, "", false, inputError{fmt.Errorf("--vary compares variants of one FILE, got %s", nOf(len(files), "file", "files"))}
	case o.vary != "":
		g, err := sweep.ParseGrid(o.vary)
		if err != nil {
			return nil, "", false, inputError{fmt.Errorf("--vary: %w", err)}
		}
		if len(g.Values) < 2 {
			return nil, "", false, inputError{fmt.Errorf("--vary %s: give at least two values to compare", o.vary)}
		}
		src, _, err := loadSource(a, files[0], false, g.Key)
		if err != nil {
			return nil, "", false, err
		}
		if err := checkVaryValues(src, o.vary, g); err != nil {
			return nil, "", false, err
		}
		return sweep.Vary(src, g.Key, g.Values), fmt.Sprintf("%s, varying %s", src.File, g.Key), g.Key == "parallelism.k", nil
	case len(files) < 2:
		return nil, "", false, inputError{errors.New("compare needs two or more FILEs, or --vary key=v1,v2 on one FILE (without FILE, the default example)")}
	}
	var variants []sweep.Variant
	var labels []string
	for _, f := range files {
		src, _, err := loadSource(a, f, false)
		if err != nil {
			return nil, "", false, err
		}
		l := sweep.Label(src.File)
		for n := 2; slices.Contains(labels, l); n++ {
			l = sweep.Label(src.File) + "#" + strconv.Itoa(n)
		}
		labels = append(labels, l)
		variants = append(variants, sweep.Variant{Label: l, Src: src})
	}
	return variants, strings.Join(labels, " vs "), false, nil
}

// seedScenario reports whether the comparison is of one of seed 000's
// scenarios (named seed000…), whose note states the seed's rule.
func seedScenario(runs *sweep.Runs) bool {
	return len(runs.Variants) > 0 && strings.HasPrefix(runs.Variants[0].Scenario.Name, "seed000")
}

func runCompare(a *app, o compareOpts, files []string, out, errOut io.Writer) error {
	// A second --vary replaced the first without a word (a string flag):
	// "--vary parallelism.zero_stage=1,3 --vary parallelism.k=1,2" compared
	// K only.
	switch len(o.varies) {
	case 0:
	case 1:
		o.vary = o.varies[0]
		if strings.TrimSpace(o.vary) == "" { // as checkEmptyValues says it of a string flag
			return inputError{errors.New("--vary: empty value (give a value: compare FILE with each value of key.path=v1,v2,… applied as --set; see zerosim compare --help)")}
		}
	default:
		return inputError{fmt.Errorf("--vary given %d times (%s): compare varies one key; fix the others with --set, or replay a grid with zerosim sweep --grid … --grid …",
			len(o.varies), strings.Join(o.varies, ", "))}
	}
	if err := checkCompareFlags(o, files); err != nil {
		return err
	}
	variants, title, varyK, err := compareVariants(a, o, files)
	if err != nil {
		return err
	}
	set, done := func(int64, int64) {}, func() {}
	if isTerminal(errOut) {
		set, done = delayedBar(errOut, "compare")
	}
	runs, err := compareRuns(sweep.CompareOptions{AllK: varyK, Jobs: o.jobs, Progress: func(d, n int) { set(int64(d), int64(n)) }}, o.zeropp, variants)
	done()
	if err != nil {
		return inputError{err} // a variant's scenario cannot be replayed
	}
	// The load warnings, printed before the report (app.pending: a
	// variant's replay can still refuse it), not again with a variant.
	shown := fileWarnings(a, runs.Variants, o.vary != "" || o.zeropp)
	c := reports.NewComparison(title, runs, o.convention == "seed000" || seedScenario(runs))
	if o.zeropp {
		c.ZeroPP = reports.NewZeroPPSection(runs.Variants)
	}
	// The plots first: a file system that refuses one fails the command
	// with nothing on stdout (QA19 M4); the "wrote" line follows the table.
	var wrote bytes.Buffer
	if a.outDir != "" {
		if err := writeComparePlots(a.outDir, c, &wrote, a.inputs); err != nil {
			return err
		}
		for _, sk := range runs.Skipped { // the every-K plot's runs
			fmt.Fprintf(&wrote, "zerosim: compare: plot: left out %s\n", sk)
		}
	}
	if err := printComparison(a.format, a.wide, out, c); err != nil {
		return err
	}
	_, _ = wrote.WriteTo(errOut)
	variantWarnings(errOut, runs.Variants, shown)
	return nil
}

// variantWarnings prints each variant's load warnings not shown yet (the
// file's and --set's were: --vary cluster.gpu=MI300X runs on the file's
// NVLink4, which only the variant's load says), once each, then its
// replay's.
func variantWarnings(errOut io.Writer, outs []*sweep.Outcome, shown map[string]bool) {
	for _, o := range outs {
		for _, w := range o.Scenario.Warnings {
			if !shown[w] {
				shown[w] = true
				fmt.Fprintf(errOut, "zerosim: warning: %s: %s\n", o.Label, w)
			}
		}
		for _, w := range o.Result.Warnings {
			fmt.Fprintf(errOut, "zerosim: warning: %s: %s\n", o.Label, w)
		}
	}
}

// checkCompareFlags checks --convention, --jobs and that standard input is
// read once.
func checkCompareFlags(o compareOpts, files []string) error {
	if o.convention != "" && o.convention != "seed000" {
		return inputError{fmt.Errorf("--convention %q: use seed000 (or leave it out)", o.convention)}
	}
	if err := checkJobs(o.jobs); err != nil {
		return err
	}
	return stdinOnce(files)
}

// compareRuns replays the variants; --zeropp gets its own section and no
// slow-link runs for the K variant.
func compareRuns(opt sweep.CompareOptions, zeropp bool, variants []sweep.Variant) (*sweep.Runs, error) {
	if zeropp {
		outs, err := sweep.RunVariants(variants, opt)
		if err != nil {
			return nil, err
		}
		return &sweep.Runs{Variants: outs}, nil
	}
	return sweep.Compare(variants, opt)
}

// printComparison prints the comparison as JSON, CSV or the table (with the
// ZeRO++ section, if any).
func printComparison(format string, wide bool, out io.Writer, c *reports.Comparison) error {
	c.Wide = wide
	switch format {
	case "json":
		return reports.WriteCompareJSON(out, c)
	case "csv":
		return reports.WriteCompareCSV(out, c)
	}
	if err := reports.WriteCompareTable(out, c); err != nil {
		return err
	}
	return reports.WriteZeroPPSection(out, c.ZeroPP)
}

// writeComparePlots writes compare.png and compare.svg into dir.
func writeComparePlots(dir string, c *reports.Comparison, errOut io.Writer, inputs []input) error {
	if err := reports.CheckOutputDir(dir); err != nil {
		return inputError{fmt.Errorf("-o: %w", err)}
	}
	files, err := reports.RenderComparePlots(c)
	if err != nil {
		return err
	}
	return writeOutputDir(errOut, dir, files, inputs)
}

// checkVaryValues loads FILE with each value of --vary before anything
// runs, so that a value the scenario refuses is named as --vary's: the
// variants apply it as a --set, whose message said "--set
// parallelism.k=x: …", a flag the user never gave.
func checkVaryValues(src sweep.Source, vary string, g sweep.Grid) error {
	for _, v := range g.Values {
		set := g.Key + "=" + v
		_, err := src.Load(set)
		if err == nil {
			continue
		}
		var se *scenarios.Error
		if errors.As(err, &se) && se.Line == 0 {
			if msg, ok := strings.CutPrefix(se.Msg, "--set "+set+": "); ok {
				return inputError{fmt.Errorf("%s: --vary %s: %s", se.File, vary, msg)}
			}
		}
		return inputError{err}
	}
	return nil
}

// fileWarnings keeps, when the variants are of one file (--vary,
// --zeropp), the file's load warnings every variant gives (givenByAll),
// and returns the warnings kept, which variantWarnings does not repeat.
func fileWarnings(a *app, outs []*sweep.Outcome, oneFile bool) map[string]bool {
	if oneFile {
		var scs []*scenarios.Scenario
		for _, o := range outs {
			scs = append(scs, o.Scenario)
		}
		a.pending = givenByAll(a.pending, scs...)
	}
	shown := map[string]bool{}
	for _, w := range a.pending {
		shown[w] = true
	}
	return shown
}
