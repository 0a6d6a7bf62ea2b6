package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/numerics"
	"github.com/zerosim/zerosim/reports"
	"github.com/zerosim/zerosim/scenarios"
)

func init() { commands = append(commands, newVerifyCmd) }

type verifyOpts struct {
	reference   string
	json        bool
	corrupt     string
	corruptStep int
	drift       bool
}

func newVerifyCmd(a *app) *cobra.Command {
	o := verifyOpts{}
	cmd := &cobra.Command{
		Use:   "verify [FILE]",
		Short: "Run the real sharded numerics on a toy model and check every stage × K bit for bit",
		Long: `verify trains a toy model (the scenario's model kind "mlp": seed 000's
residual MLP at hidden 16 and 13, 3 layers; any other kind: seed 002's
260-parameter tiny transformer) on N = dp·cp simulated ranks for every ZeRO
stage 0–3, every K dividing N and two bucket sizes (one bucket; 97 elements,
which splits parameters across buckets and ranks), and compares every rank's
fp32 master shard and bf16 parameters with unsharded training after every
step, bit for bit. Gradients are summed exactly and rounded once to bf16, so
the result depends neither on the order of the ranks nor on K
(docs/numerics.md).

--corrupt-shard RANK:INDEX flips bit 16 of element INDEX of RANK's fp32 master
shard after step --corrupt-step, in the scenario's own stage and K: verify
must then fail and name the rank, step, parameter and element.

--drift also trains with NCCL-like ring reductions (fp32, and bf16 per hop)
and prints how far K = 1 and K = 4 (or the largest K ≤ 4 dividing N) drift
apart.

--reference FILE checks a zerosim-reference/v1 file produced by PyTorch
(kinds adam, bf16-round, toy-mlp) instead.

Exit code 0 when everything matches, 1 on a mismatch, 2 on bad input.`,
		Example: `  zerosim verify
  zerosim verify --set parallelism.dp=8 scenario.yaml
  zerosim verify --corrupt-shard 3:5 --corrupt-step 2
  zerosim verify --reference toy-h16-l3.json --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			file := ""
			if len(args) == 1 {
				file = args[0]
			}
			return runVerify(a, o, file, cmd.Flags().Changed("corrupt-step"))
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.reference, "reference", "", "check a zerosim-reference/v1 `FILE` instead of the matrix")
	f.BoolVar(&o.json, "json", false, "print JSON (same as --format json)")
	f.StringVar(&o.corrupt, "corrupt-shard", "", "flip bit 16 of `RANK:INDEX` of that rank's fp32 master shard")
	f.IntVar(&o.corruptStep, "corrupt-step", 2, "step after which --corrupt-shard flips the bit")
	f.BoolVar(&o.drift, "drift", false, "also report native-reduction drift between K = 1 and K = 4")
	return cmd
}

func runVerify(a *app, o verifyOpts, file string, stepSet bool) error {
	asJSON := o.json || a.format == "json"
	if a.format == "csv" {
		return inputError{errors.New("--format csv: verify prints table or json")}
	}
	if o.reference != "" {
		if file != "" || o.corrupt != "" || o.drift {
			return inputError{errors.New("--reference checks one file: give no scenario, --corrupt-shard or --drift")}
		}
		return runReference(a, o.reference, asJSON)
	}
	if stepSet && o.corrupt == "" {
		return inputError{errors.New("--corrupt-step needs --corrupt-shard")}
	}
	s, err := a.loadScenario(file)
	if err != nil {
		return err
	}
	base, err := verifyBase(s)
	if err != nil {
		return inputError{err}
	}
	var cfgs []numerics.Config
	if o.corrupt != "" {
		c, err := parseCorrupt(o.corrupt, o.corruptStep)
		if err != nil {
			return inputError{err}
		}
		one := base
		one.Stage, one.K, one.Steps = s.Parallelism.Stage, s.Parallelism.K, max(base.Steps, c.Step)
		one.Corrupt = c
		cfgs = []numerics.Config{one}
	} else if base.Quantized() {
		// ZeRO++ runs at stage 3 with K 1 only: one configuration, checked
		// against its quantizing reference, with the drift reported.
		cfgs = []numerics.Config{base}
	} else {
		cfgs = numerics.Matrix(base)
	}
	rep := &reports.VerifyReport{Scenario: s.Name, N: base.N, Pass: true}
	var first string
	failed := 0
	for _, c := range cfgs {
		r, err := numerics.Verify(c)
		if err != nil {
			return inputError{fmt.Errorf("verify %s: %w", c.Name(), err)}
		}
		row := verifyRow(c, r)
		if !r.Pass {
			rep.Pass = false
			failed++
			if first == "" {
				first = c.Name() + ": " + row.First
			}
		}
		rep.Rows = append(rep.Rows, row)
		for _, d := range r.QuantDrift {
			rep.QuantDrift = append(rep.QuantDrift, reports.QuantDriftRow{Config: c.Name(), Step: d.Step, Loss: d.Loss, PlainLoss: d.PlainLoss,
				MaxAbsParamDiff: d.MaxAbsParamDiff, RelParamDiff: d.RelParamDiff})
		}
	}
	if o.drift {
		kb := 1
		for k := 2; k <= 4; k++ {
			if base.N%k == 0 {
				kb = k
			}
		}
		dc := base
		dc.Stage = 1
		for _, mode := range []numerics.ReduceMode{numerics.Native, numerics.NativeBF16} {
			dc.Mode = mode
			d, err := numerics.Drift(dc, 1, kb)
			if err != nil {
				return inputError{fmt.Errorf("drift: %w", err)}
			}
			for _, x := range d {
				rep.Drift = append(rep.Drift, reports.DriftRow{Mode: mode.String(), KA: 1, KB: kb, Step: x.Step,
					MaxULP: x.MaxULP, MaxAbsDiff: x.MaxAbsDiff, Differ: x.Differ, Total: x.Total})
			}
		}
	}
	if asJSON {
		err = reports.WriteVerifyJSON(a.out, rep)
	} else {
		err = reports.WriteVerifyTable(a.out, rep)
	}
	if err != nil {
		return err
	}
	if !rep.Pass {
		return failure{fmt.Sprintf("verify: %d of %d configurations differ from unsharded training; first: %s", failed, len(cfgs), first)}
	}
	return nil
}

// verifyBase maps a scenario onto the numerics configuration: N = dp·cp,
// the toy model from the model kind, seed, steps, Adam and padding.
func verifyBase(s *scenarios.Scenario) (numerics.Config, error) {
	n := s.N()
	if n < 1 || n > numerics.MaxRanks {
		return numerics.Config{}, fmt.Errorf("verify simulates every rank: N = dp·cp = %d must be in [1, %d] (use --set parallelism.dp=…)", n, numerics.MaxRanks)
	}
	pad := memory.PaddingOf(s.Communication.Padding)
	c := numerics.Config{Model: numerics.TinyTransformer, N: n, K: 1, Steps: s.Training.Steps,
		Seed: uint64(s.Training.Seed), Padding: pad}
	if s.Model.Kind == scenarios.KindMLP {
		c.Model, c.Hidden, c.Layers = numerics.ResidualMLP, 16, 3
	}
	if cm := s.Communication; cm.ZeroQuantizedWeights || cm.ZeroQuantizedGradients {
		// ZeRO++ (scenario keys mirroring DeepSpeed's): stage 3, K 1.
		c.Stage, c.QuantWeights, c.QuantGrads, c.Local = 3, cm.ZeroQuantizedWeights, cm.ZeroQuantizedGradients, s.Cluster.GPUsPerNode
		c.Steps = max(c.Steps, numerics.MatrixSteps)
	}
	t := s.Training
	if t.LR > 0 {
		c.Hyper = numerics.Hyper{LR: t.LR, Beta1: t.Beta1, Beta2: t.Beta2, Eps: t.Eps, WeightDecay: t.WeightDecay, Decoupled: t.Optimizer == scenarios.OptimizerAdamW}
		if err := c.Hyper.Validate(); err != nil {
			return numerics.Config{}, err
		}
	}
	return c, nil
}

// parseCorrupt parses --corrupt-shard RANK:INDEX.
func parseCorrupt(v string, step int) (*numerics.Corruption, error) {
	rs, is, ok := strings.Cut(v, ":")
	r, err1 := strconv.Atoi(rs)
	i, err2 := strconv.ParseInt(is, 10, 64)
	if !ok || err1 != nil || err2 != nil || r < 0 || i < 0 {
		return nil, fmt.Errorf("--corrupt-shard %q: want RANK:INDEX with non-negative integers, e.g. 3:5", v)
	}
	if step < 1 {
		return nil, fmt.Errorf("--corrupt-step %d: must be ≥ 1", step)
	}
	return &numerics.Corruption{Rank: r, Index: i, Step: step}, nil
}

func verifyRow(c numerics.Config, r *numerics.Result) reports.VerifyRow {
	model := c.Model.String()
	if c.Model == numerics.ResidualMLP {
		model = fmt.Sprintf("mlp h%d l%d", c.Hidden, c.Layers)
	}
	if c.SameData {
		model += " same-data"
	}
	bucket := "one"
	switch {
	case c.Stage == 3:
		bucket = "per-unit"
	case c.BucketElems > 0:
		bucket = strconv.FormatInt(c.BucketElems, 10)
	}
	row := reports.VerifyRow{Config: c.Name(), Model: model, Stage: c.Stage, K: c.K, Bucket: bucket, Padding: c.Padding.String(),
		Mode: c.Mode.String(), Steps: c.Steps, Numel: r.Numel, Size: r.Size, Buckets: r.Buckets, ShardElems: r.ShardElems,
		Pass: r.Pass, MaxAbsDiff: r.MaxAbsDiff, MaxULP: r.MaxULP, Mismatches: r.Mismatches,
		Collectives: []reports.VerifyBytes{}}
	if r.First != nil {
		row.First = r.First.String()
	}
	for _, cb := range r.CollectiveBytes {
		num, den := cb.PerRank()
		per := strconv.FormatInt(num, 10)
		if den != 1 {
			per += "/" + strconv.FormatInt(den, 10)
		}
		row.Collectives = append(row.Collectives, reports.VerifyBytes{Phase: cb.Phase, Op: cb.Op, Group: cb.Group,
			Ranks: cb.Ranks, Calls: cb.Calls, Bytes: cb.Bytes, PerRank: per})
	}
	return row
}

// runReference checks one zerosim-reference/v1 file.
func runReference(a *app, path string, asJSON bool) error {
	var r io.Reader
	if path == "-" {
		r = a.in
	} else {
		f, err := os.Open(path)
		if err != nil {
			return inputError{fmt.Errorf("--reference: %w", err)}
		}
		defer f.Close()
		r = f
	}
	res, err := numerics.CheckReference(r)
	if err != nil {
		return inputError{fmt.Errorf("--reference %s: %w", path, err)}
	}
	rep := &reports.ReferenceReport{File: path, Kind: res.Kind, Generator: res.Generator, Pass: res.Pass}
	failed := 0
	for _, c := range res.Checks {
		if !c.Pass {
			failed++
		}
		rep.Checks = append(rep.Checks, reports.ReferenceCheck{Name: c.Name, Exact: c.Exact, Compared: c.Compared,
			Mismatches: c.Mismatches, First: c.First, Value: c.Value, Limit: c.Limit, Minimum: c.Minimum, Pass: c.Pass})
	}
	if asJSON {
		err = reports.WriteReferenceJSON(a.out, rep)
	} else {
		err = reports.WriteReferenceTable(a.out, rep)
	}
	if err != nil {
		return err
	}
	if !rep.Pass {
		return failure{fmt.Sprintf("verify --reference %s: %d of %d checks fail", path, failed, len(rep.Checks))}
	}
	return nil
}
