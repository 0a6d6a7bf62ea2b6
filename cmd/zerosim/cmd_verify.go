package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
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

// verifyLong is verify --help's text.
const verifyLong = `verify trains a toy model (the scenario's model kind "mlp": seed 000's
residual MLP at hidden 16 and 13, 3 layers; any other kind: seed 002's
260-parameter tiny transformer) on N = dp·cp simulated ranks for every ZeRO
stage 0–3, every K dividing N and two bucket sizes (one bucket; 97 elements,
which splits parameters across buckets and ranks), and compares every rank's
fp32 master, Adam exp_avg and exp_avg_sq shards and bf16 parameters with
unsharded training after every step, bit for bit. Gradients are summed
exactly and rounded once to bf16, so the result depends neither on the order
of the ranks nor on K: a pass says ZeRO's sharding, padding, bucketing,
gathers and optimizer-state ownership reproduce unsharded training when every
reduction is exact; with per-hop rounding, as NCCL's rings do, different K
drift apart (--drift, docs/numerics.md). It follows the scenario's N = dp·cp (at most 256), seed,
steps, optimizer and hyper-parameters, gradient clipping
(grad_clip norm at max_grad_norm: each rank's sum of squares over its shard,
all-reduced, summed exactly), padding and ZeRO++ quantization;
the header and the JSON's not_modelled name what it does not follow
(grad_accum > 1, micro_batch > 1, reduce_dtype or shard_dtype fp32, fp16
parameters, fp8, dropout, an optimizer_impl other than seed,
offload.optimizer, ep > 1, and any key not yet decided on): a pass says
nothing about them.

--corrupt-shard RANK:INDEX flips bit 16 of element INDEX of RANK's fp32 master
shard after step --corrupt-step, in the scenario's own stage, K and bucket
size (communication.bucket_size in bf16 elements when it cuts the toy's
buffer, one bucket otherwise): verify must then fail and name the rank,
step, parameter and element.

--drift also trains with NCCL-like ring reductions (fp32, and bf16 per hop)
and prints how far K = 1 and K = 4 (or the largest K ≤ 4 dividing N) drift
apart.

--reference FILE checks a zerosim-reference/v1 file produced by PyTorch
(kinds adam, bf16-round, toy-mlp) instead.

Exit code 0 when everything matches, 1 on a mismatch, 2 on bad input.`

func newVerifyCmd(a *app) *cobra.Command {
	o := verifyOpts{}
	cmd := &cobra.Command{
		Use:   "verify [FILE]",
		Short: "Run the real sharded numerics on a toy model and check every stage × K bit for bit under exact reductions",
		Long:  verifyLong,
		Example: `  zerosim verify
  zerosim verify --set cluster.nodes=1 --set parallelism.dp=8 scenario.yaml
  zerosim verify --corrupt-shard 3:5 --corrupt-step 2
  zerosim verify --reference toy-h16-l3.json --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.json && cmd.Flags().Changed("format") && a.format != "json" {
				// --json won over it silently.
				return inputError{fmt.Errorf("--json and --format %s: give one (--json is --format json)", a.format)}
			}
			return runVerify(a, o, fileArg(args), cmd.Flags().Changed("corrupt-step"))
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
	a.dropActivationsWarning(s, true) // the numerics train a toy of the model's shape
	corrupt, err := corruptionOf(o, s.N())
	if err != nil {
		return err
	}
	base, cfgs, err := numerics.ScenarioConfigs(s, corrupt)
	if err != nil {
		return inputError{errors.New(plain(err))}
	}
	rep := &reports.VerifyReport{Zerosim: reports.ReadBuild(), Scenario: nameOrFile(s, a.file), ScenarioSHA256: reports.ScenarioSHA256(s), N: base.N, Pass: true, Wide: a.wide, Adam: reports.NewVerifyAdam(base.AdamHyper()),
		ClipMaxNorm: base.ClipNorm, NotModelled: reports.NewNotModelled(numerics.NotFollowed(s))}
	failed, first, err := verifyAll(rep, cfgs, a.err)
	if err != nil && corrupt != nil {
		// The one configuration is the corrupted one: an index past the
		// rank's shard, or on its padding.
		return inputError{fmt.Errorf("--corrupt-shard %s: %s", o.corrupt, plain(err))}
	}
	if err != nil {
		return err
	}
	if o.drift {
		if rep.Drift, rep.DriftNone, err = driftRows(base); err != nil {
			return err
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
		noun := "configurations differ"
		if len(cfgs) == 1 {
			noun = "configuration differs"
		}
		return failure{fmt.Sprintf("verify: %d of %d %s from unsharded training; first: %s", failed, len(cfgs), noun, first)}
	}
	return nil
}

// verifyAll verifies every configuration into rep's rows (and ZeRO++ drift
// rows) and returns how many differ from unsharded training and the first
// difference.
func verifyAll(rep *reports.VerifyReport, cfgs []numerics.Config, errOut io.Writer) (failed int, first string, err error) {
	// A bar of the steps trained on a terminal, as the other commands'
	// work (QA22 M6: verify --set training.steps=1000 ran 36 s silent).
	var steps, done int64
	for _, c := range cfgs {
		steps += int64(c.Steps)
	}
	set, finish := replayProgress(errOut, "verify")
	defer finish()
	for _, c := range cfgs {
		r, err := numerics.VerifySteps(c, func() {
			if done++; set != nil {
				set(done, steps)
			}
		})
		if err != nil {
			return 0, "", inputError{fmt.Errorf("verify %s: %s", c.Name(), plain(err))}
		}
		row := reports.NewVerifyRow(c, r)
		if !r.Pass {
			rep.Pass = false
			failed++
			if first == "" {
				first = c.Name() + ": " + row.First
			}
		}
		rep.Rows = append(rep.Rows, row)
		rep.QuantDrift = append(rep.QuantDrift, reports.NewQuantDriftRows(c, r)...)
	}
	return failed, first, nil
}

// driftRows is --drift's table: the drift between K = 1 and K > 1 at
// stage 1 in both native modes; or, when no K from 2 to 4 divides N, no
// rows and why (QA23 L8: N = 1 printed ten rows of K 1 vs K 1 zeros).
func driftRows(base numerics.Config) ([]reports.DriftRow, string, error) {
	if base.Quantized() {
		// DriftModes trains at stage 1 with two K; ZeRO++ is stage 3 with
		// K 1: "drift: numerics: drift K 1: numerics: qwZ/qgZ are ZeRO++,
		// stage 3 with K 1 (got stage 1, K 1)".
		return nil, "", inputError{errors.New("--drift compares K = 1 with K > 1 at stage 1, which ZeRO++ (communication.zero_quantized_weights, zero_quantized_gradients) does not allow: drop --drift (verify reports the quantized drift itself)")}
	}
	if base.N%2 != 0 && base.N%3 != 0 {
		return nil, fmt.Sprintf("no K from 2 to 4 divides N = %d, so there is no second K to drift from", base.N), nil
	}
	d, err := numerics.DriftModes(base)
	if err != nil {
		return nil, "", inputError{errors.New(plain(err))}
	}
	return reports.NewDriftRows(d), "", nil
}

// corruptionOf is the corruption --corrupt-shard and --corrupt-step ask
// for in a scenario of n ranks, nil without --corrupt-shard.
func corruptionOf(o verifyOpts, n int) (*numerics.Corruption, error) {
	if o.corrupt == "" {
		return nil, nil
	}
	c, err := parseCorrupt(o.corrupt, o.corruptStep)
	if err != nil {
		return nil, inputError{err}
	}
	if c.Rank >= n {
		// Said "verify …: numerics: corrupt rank 99: must be in [0, 16)".
		return nil, inputError{fmt.Errorf("--corrupt-shard %s: rank %d is not one of the scenario's ranks 0–%d", o.corrupt, c.Rank, n-1)}
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
	if step < 1 || step > numerics.MaxSteps {
		return nil, fmt.Errorf("--corrupt-step %d: use 1 to %d", step, numerics.MaxSteps)
	}
	return &numerics.Corruption{Rank: r, Index: i, Step: step}, nil
}

// runReference checks one zerosim-reference/v1 file.
func runReference(a *app, path string, asJSON bool) error {
	var r io.Reader
	if path == "-" {
		r = a.in
	} else {
		f, err := os.Open(path)
		if err != nil {
			return readError("--reference "+path, err)
		}
		defer f.Close()
		r = f
	}
	// The bytes are read here, so that a file that is not JSON is reported
	// at its line and column with the fix ("reference: unexpected EOF",
	// "reference: EOF" before), and the format named with where such files
	// come from.
	data, err := readBounded(r, numerics.MaxReferenceSize)
	if errors.Is(err, errTooLarge) {
		return inputError{fmt.Errorf("--reference %s: larger than %d MiB, not a zerosim-reference/v1 file", path, numerics.MaxReferenceSize>>20)}
	}
	if err != nil {
		return readError("--reference "+path, err)
	}
	const give = "give a zerosim-reference/v1 file, such as numerics/testdata/reference/adam-basic.json"
	name := path
	if path == "-" {
		name = "<stdin>"
	}
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(new(json.RawMessage)); err != nil {
		return inputError{fmt.Errorf("--reference %w", scenarios.JSONError(name, data, err, give))}
	}
	res, err := numerics.CheckReference(bytes.NewReader(data))
	if err != nil {
		return inputError{refError(path, name, data, err, give)}
	}
	rep := reports.NewReferenceReport(path, res)
	failed := 0
	for _, c := range rep.Checks {
		if !c.Pass {
			failed++
		}
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

// refError is the one line for a reference file CheckReference refused:
// its format named with where such files come from; a value of the wrong
// type at its line and column with its key and the type wanted (qa20 L5:
// "json: cannot unmarshal string into Go struct field refHyper.hyper.lr of
// type float64", Go's names and no position).
func refError(path, name string, data []byte, err error, give string) error {
	var te *json.UnmarshalTypeError
	switch {
	case errors.Is(err, numerics.ErrRefFormat):
		return fmt.Errorf("--reference %s: %s (%s)", path, plain(err), give)
	case errors.As(err, &te) && te.Field != "":
		line, col := scenarios.LineCol(data, valueStart(data, int(te.Offset)))
		return fmt.Errorf("--reference %s:%d:%d: %s: %s, want %s (%s)", name, line, col, te.Field, jsonValueKind(te.Value), goTypeWant(te.Type), give)
	}
	return fmt.Errorf("--reference %s: %s", path, plain(err))
}

// valueStart is where the JSON value that ends at byte end of data starts:
// its opening quote, or the first byte of its literal.
func valueStart(data []byte, end int) int {
	end = min(max(end, 0), len(data))
	i := end - 1
	if i >= 0 && data[i] == '"' {
		for i--; i >= 0; i-- {
			if data[i] == '"' && (i == 0 || data[i-1] != '\\') {
				return i
			}
		}
		return 0
	}
	for i >= 0 && !strings.ContainsRune(",:[{ \t\r\n", rune(data[i])) {
		i--
	}
	return i + 1
}

// jsonValueKind words encoding/json's UnmarshalTypeError.Value ("string",
// "number -5", "array") for a message.
func jsonValueKind(v string) string {
	switch {
	case strings.HasPrefix(v, "number "):
		return "the number " + strings.TrimPrefix(v, "number ")
	case v == "array", v == "object":
		return "an " + v
	}
	return "a " + v
}

// goTypeWant says what a JSON value of Go type t must be.
func goTypeWant(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return fmt.Sprintf("an integer from 0 to %d", uint64(1)<<(8*t.Size())-1)
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}

// nameOrFile is the scenario's name, or the base name of its file without
// the extension when it has none, as run names it (reports.Run): verify
// printed "# verify : N = 16 ranks" and "scenario": "".
func nameOrFile(s *scenarios.Scenario, file string) string {
	if s.Name != "" || file == "" {
		return s.Name
	}
	base := filepath.Base(file)
	return strings.TrimSuffix(base, filepath.Ext(base))
}
