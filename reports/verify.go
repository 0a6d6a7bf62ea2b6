package reports

import (
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/zerosim/zerosim/numerics"
)

// VerifyReport is the result of `zerosim verify`: one row per configuration
// of the verify matrix, each compared bit for bit with unsharded training.
type VerifyReport struct {
	// Zerosim and ScenarioSHA256 say what made the report, as plan.json
	// does (QA25 M3).
	Zerosim        Build       `json:"zerosim"`
	Scenario       string      `json:"scenario"`
	ScenarioSHA256 string      `json:"scenario_sha256,omitempty"`
	N              int         `json:"n"`
	Pass           bool        `json:"pass"`
	Rows           []VerifyRow `json:"rows"`
	// Drift is the native-reduction drift between two K (optional).
	Drift []DriftRow `json:"drift,omitempty"`
	// DriftNone says why --drift has no rows: no K from 2 to 4 divides N.
	DriftNone string `json:"drift_none,omitempty"`
	// QuantDrift is ZeRO++'s drift from unquantized training (verify_quant.go).
	QuantDrift []QuantDriftRow `json:"quant_drift,omitempty"`
	// Adam is the optimizer setting every configuration ran (nil: not
	// given), so a --set of a hyper-parameter can be seen to take effect.
	Adam *VerifyAdam `json:"adam,omitempty"`
	// ClipMaxNorm is training.grad_clip norm's max_norm every
	// configuration clipped the reduced gradients to (0: no clipping).
	ClipMaxNorm float64 `json:"clip_max_norm,omitempty"`
	// NotModelled are the scenario's settings verify does not follow
	// (numerics.NotFollowed): a pass says nothing about them.
	NotModelled []NotModelled `json:"not_modelled,omitempty"`
	// Wide makes the terminal table show every column (--wide); by
	// default the columns every row shares (model, padding, steps) go into
	// the title and the table keeps to 120 columns.
	Wide bool `json:"-"`
}

// VerifyAdam is Adam's hyper-parameters as verify ran them: Decoupled is
// AdamW's weight decay (p ← p·(1 − lr·wd)), otherwise a non-zero
// WeightDecay is Adam's L2 term (g ← g + wd·p).
type VerifyAdam struct {
	LR          float64 `json:"lr"`
	Beta1       float64 `json:"beta1"`
	Beta2       float64 `json:"beta2"`
	Eps         float64 `json:"eps"`
	WeightDecay float64 `json:"weight_decay"`
	Decoupled   bool    `json:"decoupled_weight_decay"`
}

// NewVerifyAdam is h for the report.
func NewVerifyAdam(h numerics.Hyper) *VerifyAdam {
	return &VerifyAdam{LR: h.LR, Beta1: h.Beta1, Beta2: h.Beta2, Eps: h.Eps, WeightDecay: h.WeightDecay, Decoupled: h.Decoupled}
}

// line is the header line: "adam: lr 0.001, betas (0.9, 0.999), eps 1e-08,
// weight decay 0".
func (a *VerifyAdam) line() string {
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	name, wd := "adam", g(a.WeightDecay)
	switch {
	case a.Decoupled:
		name, wd = "adamw", wd+" (decoupled)"
	case a.WeightDecay != 0:
		wd += " (L2, added to the gradient)"
	}
	return fmt.Sprintf("%s: lr %s, betas (%s, %s), eps %s, weight decay %s", name, g(a.LR), g(a.Beta1), g(a.Beta2), g(a.Eps), wd)
}

// NotModelled is a scenario setting verify runs past, and what it runs.
type NotModelled struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	Runs  string `json:"verify_runs"`
}

// NewNotModelled words numerics.NotFollowed's settings for the report:
// each with what verify runs in its place.
func NewNotModelled(us []numerics.Unfollowed) []NotModelled {
	var out []NotModelled
	for _, u := range us {
		out = append(out, NotModelled{Key: u.Key, Value: u.Value, Runs: verifyRuns(u)})
	}
	return out
}

// verifyRuns is what verify runs in place of an unfollowed setting.
func verifyRuns(u numerics.Unfollowed) string {
	switch u.Key {
	case "training.grad_accum":
		return "one micro-step per step"
	case "training.micro_batch":
		if u.SeqTokens == 0 {
			return fmt.Sprintf("the toy model's %s per rank", countNoun(u.Rows, "input row", "input rows"))
		}
		return fmt.Sprintf("the toy model's %s of %d tokens per rank", countNoun(u.Rows, "sequence", "sequences"), u.SeqTokens)
	case "training.reduce_dtype":
		return "an exact sum rounded once to bf16"
	case "training.shard_dtype":
		return "bf16 parameters beside an fp32 master shard"
	case "training.param_dtype":
		return "bf16 parameters"
	case "training.master_dtype":
		return "an fp32 master and fp32 Adam moments"
	case "training.store_param_remainders":
		return "a full fp32 master, cast to bf16 rounding to nearest even"
	case "training.autocast":
		return "bf16 parameters beside an fp32 master, no autocast"
	case "training.cross_entropy":
		return "cross-entropy on the logits upcast (a float64 softmax)"
	case "training.fp8":
		return "bf16 GEMMs"
	case "training.dropout":
		return "no dropout"
	case "training.optimizer_impl":
		return "torch.optim.Adam(foreach=False)'s operation order"
	case "offload.optimizer":
		return "Adam on the GPU in torch.optim.Adam(foreach=False)'s order"
	case "parallelism.ep":
		return "a toy model without experts"
	}
	if numerics.KeyClassOf(u.Key) == numerics.Unknown {
		return "nothing for it (no decision on this key yet)"
	}
	return "its own default"
}

// VerifyRow is one verified configuration.
type VerifyRow struct {
	Config  string `json:"config"`
	Model   string `json:"model"`
	Stage   int    `json:"stage"`
	K       int    `json:"k"`
	Bucket  string `json:"bucket"` // "one", "per-unit" or elements
	Padding string `json:"padding"`
	Mode    string `json:"mode"`
	// SameData marks seed 000's own check: every rank trains on the same
	// batch with loss/N against one process on it (numerics.Config).
	SameData bool `json:"same_data,omitempty"`
	Steps    int  `json:"steps"`
	// Layout: real elements, padded buffer, buckets, elements per shard.
	Numel      int64 `json:"numel"`
	Size       int64 `json:"size"`
	Buckets    int   `json:"buckets"`
	ShardElems int64 `json:"shard_elems"`

	Pass       bool    `json:"pass"`
	MaxAbsDiff float64 `json:"max_abs_diff"`
	MaxULP     int     `json:"max_ulp"`
	Mismatches int     `json:"mismatches"`
	// First describes the first mismatch ("" when none).
	First       string        `json:"first_mismatch,omitempty"`
	Collectives []verifyBytes `json:"collectives"`
}

// verifyBytes is the traffic of one kind of numeric collective in one
// step (per group instance): logical Bytes, and PerRank = (Ranks−1)/Ranks
// of it as an exact fraction ("390" or "1300/3").
type verifyBytes struct {
	Phase   string `json:"phase"`
	Op      string `json:"op"`
	Group   string `json:"group"`
	Ranks   int    `json:"ranks"`
	Calls   int    `json:"calls"`
	Bytes   int64  `json:"bytes"`
	PerRank string `json:"per_rank"`
}

// DriftRow compares native reductions with two values of K after a step.
type DriftRow struct {
	Mode       string  `json:"mode"`
	KA         int     `json:"k_a"`
	KB         int     `json:"k_b"`
	Step       int     `json:"step"`
	MaxULP     int     `json:"max_ulp"`
	MaxAbsDiff float64 `json:"max_abs_diff"`
	Differ     int     `json:"differ"`
	Total      int     `json:"total"`
}

// fmtDiff prints a float at fixed precision (4 significant digits) so
// golden files are stable; 0 prints as "0".
func fmtDiff(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

func passFail(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}

// WriteVerifyTable writes r as a terminal table, a drift table when
// present, and a summary line.
func WriteVerifyTable(w io.Writer, r *VerifyReport) error {
	// Without --wide, a column every row shares (model, padding, steps)
	// moves into the title and long cells wrap, within 120 columns.
	same := func(f func(VerifyRow) string) bool {
		if r.Wide || len(r.Rows) == 0 {
			return false
		}
		for _, row := range r.Rows {
			if f(row) != f(r.Rows[0]) {
				return false
			}
		}
		return true
	}
	sameModel := same(func(v VerifyRow) string { return v.Model })
	samePadding := same(func(v VerifyRow) string { return v.Padding })
	sameSteps := same(func(v VerifyRow) string { return strconv.Itoa(v.Steps) })
	what := countNoun(len(r.Rows), "configuration", "configurations")
	if sameModel {
		what = r.Rows[0].Model + ", " + what
	}
	if sameSteps {
		what += " of " + countNoun(r.Rows[0].Steps, "step", "steps")
	}
	if samePadding && r.Rows[0].Padding != "toy" {
		what += ", " + r.Rows[0].Padding + " padding"
	}
	if _, err := fmt.Fprintf(w, "# verify %s: N = %s, %s, sharded vs unsharded bit for bit\n", EscapeControl(r.Scenario), countNoun(r.N, "rank", "ranks"), what); err != nil {
		return err
	}
	if r.Adam != nil {
		if _, err := fmt.Fprintf(w, "# %s\n", r.Adam.line()); err != nil {
			return err
		}
	}
	if r.ClipMaxNorm > 0 {
		if _, err := fmt.Fprintf(w, "# clipping: global gradient 2-norm at most %s (clip_grad_norm_; each rank's sum of squares over its shard, all-reduced)\n", strconv.FormatFloat(r.ClipMaxNorm, 'g', -1, 64)); err != nil {
			return err
		}
	}
	if len(r.NotModelled) > 0 {
		if _, err := fmt.Fprintln(w, "# not modelled here (the pass says nothing about them):"); err != nil {
			return err
		}
		for _, u := range r.NotModelled {
			if _, err := fmt.Fprintf(w, "#   %s %s: verify runs %s\n", u.Key, EscapeControl(u.Value), u.Runs); err != nil {
				return err
			}
		}
	}
	type column struct {
		head string
		left bool
		drop bool
		cell func(VerifyRow) string
	}
	cols := []column{
		{"model", true, sameModel, func(v VerifyRow) string { return v.Model }},
		{"stage", false, false, func(v VerifyRow) string { return strconv.Itoa(v.Stage) }},
		{"K", false, false, func(v VerifyRow) string { return strconv.Itoa(v.K) }},
		{"bucket", true, false, func(v VerifyRow) string { return v.Bucket }},
		{"padding", true, samePadding, func(v VerifyRow) string { return v.Padding }},
		{"mode", true, false, func(v VerifyRow) string {
			if v.SameData {
				// Seed 000's own check (exact reduction): one line, not
				// a model name that wraps into two (QA15).
				return "same-data"
			}
			return v.Mode
		}},
		{"steps", false, sameSteps, func(v VerifyRow) string { return strconv.Itoa(v.Steps) }},
		{"elems", false, false, func(v VerifyRow) string { return strconv.FormatInt(v.Numel, 10) }},
		{"padded", false, false, func(v VerifyRow) string { return strconv.FormatInt(v.Size, 10) }},
		{"result", true, false, func(v VerifyRow) string { return passFail(v.Pass) }},
		{"max |diff|", false, false, func(v VerifyRow) string { return fmtDiff(v.MaxAbsDiff) }},
		{"max ULP", false, false, func(v VerifyRow) string { return strconv.Itoa(v.MaxULP) }},
		{"first mismatch", true, false, func(v VerifyRow) string { return v.First }},
	}
	cols = slices.DeleteFunc(cols, func(c column) bool { return c.drop })
	var head []string
	var left []int
	wrap := map[int]int{}
	for i, c := range cols {
		head = append(head, c.head)
		if c.left {
			left = append(left, i)
		}
		if !r.Wide && c.head == "model" {
			wrap[i] = 16
		}
		if !r.Wide && c.head == "first mismatch" {
			wrap[i] = 40
			if slices.ContainsFunc(r.Rows, func(v VerifyRow) bool { return v.SameData }) {
				wrap[i] = 36 // "same-data" is 4 wider than "exact"
			}
		}
	}
	t := newTable(w, len(head), left...)
	wrapColumns(t, wrap)
	t.Header(head)
	failed := 0
	for _, row := range r.Rows {
		if !row.Pass {
			failed++
		}
		cells := make([]string, len(cols))
		for i, c := range cols {
			cells[i] = c.cell(row)
		}
		if err := t.Append(cells); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	if r.DriftNone != "" {
		if _, err := fmt.Fprintf(w, "# native reduction drift: %s\n", r.DriftNone); err != nil {
			return err
		}
	}
	if len(r.Drift) > 0 {
		if _, err := fmt.Fprintln(w, "# native reduction drift (ring order, rounding per hop) between two K, bf16 params after each step"); err != nil {
			return err
		}
		d := newTable(w, 8, 0)
		d.Header([]string{"mode", "K", "vs K", "step", "max ULP", "max |diff|", "differ", "of"})
		for _, x := range r.Drift {
			if err := d.Append([]string{x.Mode, strconv.Itoa(x.KA), strconv.Itoa(x.KB), strconv.Itoa(x.Step), strconv.Itoa(x.MaxULP),
				fmtDiff(x.MaxAbsDiff), strconv.Itoa(x.Differ), strconv.Itoa(x.Total)}); err != nil {
				return err
			}
		}
		if err := d.Render(); err != nil {
			return err
		}
	}
	if err := writeQuantDrift(w, r.QuantDrift); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%s: %d of %s bit-exact\n", passFail(r.Pass), len(r.Rows)-failed, countNoun(len(r.Rows), "configuration", "configurations"))
	return err
}

// WriteVerifyJSON writes r as indented JSON.
func WriteVerifyJSON(w io.Writer, r *VerifyReport) error {
	return writeJSON(w, r)
}

// ReferenceReport is the result of `zerosim verify --reference FILE`.
type ReferenceReport struct {
	File      string           `json:"file"`
	Kind      string           `json:"kind"`
	Generator string           `json:"generator"`
	Pass      bool             `json:"pass"`
	Checks    []referenceCheck `json:"checks"`
}

// referenceCheck is one comparison with a PyTorch reference: exact ones
// count mismatching elements, tolerance ones report Value against Limit.
type referenceCheck struct {
	Name       string  `json:"name"`
	Exact      bool    `json:"exact"`
	Compared   int     `json:"compared"`
	Mismatches int     `json:"mismatches"`
	First      string  `json:"first_mismatch,omitempty"`
	Value      float64 `json:"value"`
	Limit      float64 `json:"limit"`
	// Minimum marks Limit as a lower bound (cosine); otherwise an upper one.
	Minimum bool `json:"minimum,omitempty"`
	Pass    bool `json:"pass"`
}

// WriteReferenceTable writes r as a terminal table and a summary line.
func WriteReferenceTable(w io.Writer, r *ReferenceReport) error {
	if _, err := fmt.Fprintf(w, "# reference %s: kind %s, generator %q\n", EscapeControl(r.File), r.Kind, r.Generator); err != nil {
		return err
	}
	t := newTable(w, 5, 0, 2, 3, 4)
	t.Header([]string{"check", "compared", "result", "measure", "detail"})
	failed := 0
	for _, c := range r.Checks {
		if !c.Pass {
			failed++
		}
		measure := countNoun(int(c.Mismatches), "mismatch", "mismatches") + " (bit-exact)"
		if !c.Exact {
			rel := "≤"
			if c.Minimum {
				rel = "≥"
			}
			measure = fmt.Sprintf("%s %s %s", fmtDiff(c.Value), rel, fmtDiff(c.Limit))
		}
		if err := t.Append([]string{c.Name, strconv.Itoa(c.Compared), passFail(c.Pass), measure, c.First}); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%s: %d of %s pass\n", passFail(r.Pass), len(r.Checks)-failed, countNoun(len(r.Checks), "check", "checks"))
	return err
}

// WriteReferenceJSON writes r as indented JSON.
func WriteReferenceJSON(w io.Writer, r *ReferenceReport) error {
	return writeJSON(w, r)
}

// NewVerifyRow is the row of configuration c verified as r.
func NewVerifyRow(c numerics.Config, r *numerics.Result) VerifyRow {
	model := c.Model.String()
	if c.Model == numerics.ResidualMLP {
		model = fmt.Sprintf("mlp h%d l%d", c.Hidden, c.Layers)
	}

	bucket := "one"
	switch {
	case c.Stage == 3:
		bucket = "per-unit"
	case c.BucketElems > 0:
		bucket = strconv.FormatInt(c.BucketElems, 10)
	}
	row := VerifyRow{Config: c.Name(), Model: model, Stage: c.Stage, K: c.K, Bucket: bucket, Padding: c.Padding.String(),
		Mode: c.Mode.String(), SameData: c.SameData, Steps: c.Steps, Numel: r.Numel, Size: r.Size, Buckets: r.Buckets, ShardElems: r.ShardElems,
		Pass: r.Pass, MaxAbsDiff: r.MaxAbsDiff, MaxULP: r.MaxULP, Mismatches: r.Mismatches,
		Collectives: []verifyBytes{}}
	if r.First != nil {
		row.First = r.First.String()
	}
	for _, cb := range r.CollectiveBytes {
		num, den := cb.PerRank()
		per := strconv.FormatInt(num, 10)
		if den != 1 {
			per += "/" + strconv.FormatInt(den, 10)
		}
		row.Collectives = append(row.Collectives, verifyBytes{Phase: cb.Phase, Op: cb.Op, Group: cb.Group,
			Ranks: cb.Ranks, Calls: cb.Calls, Bytes: cb.Bytes, PerRank: per})
	}
	return row
}

// NewQuantDriftRows are the ZeRO++ drift rows of configuration c verified
// as r (none without quantization).
func NewQuantDriftRows(c numerics.Config, r *numerics.Result) []QuantDriftRow {
	var rows []QuantDriftRow
	for _, d := range r.QuantDrift {
		rows = append(rows, QuantDriftRow{Config: c.Name(), Step: d.Step, Loss: d.Loss, PlainLoss: d.PlainLoss,
			MaxAbsParamDiff: d.MaxAbsParamDiff, RelParamDiff: d.RelParamDiff})
	}
	return rows
}

// NewDriftRows flattens the drift of every mode into rows, mode by mode,
// step by step.
func NewDriftRows(ds []numerics.ModeDrift) []DriftRow {
	var rows []DriftRow
	for _, d := range ds {
		for _, x := range d.Steps {
			rows = append(rows, DriftRow{Mode: d.Mode.String(), KA: d.KA, KB: d.KB, Step: x.Step,
				MaxULP: x.MaxULP, MaxAbsDiff: x.MaxAbsDiff, Differ: x.Differ, Total: x.Total})
		}
	}
	return rows
}

// NewReferenceReport is the report of the reference file named file checked
// as res.
func NewReferenceReport(file string, res *numerics.RefResult) *ReferenceReport {
	rep := &ReferenceReport{File: file, Kind: res.Kind, Generator: res.Generator, Pass: res.Pass}
	for _, c := range res.Checks {
		rep.Checks = append(rep.Checks, referenceCheck{Name: c.Name, Exact: c.Exact, Compared: c.Compared,
			Mismatches: c.Mismatches, First: c.First, Value: c.Value, Limit: c.Limit, Minimum: c.Minimum, Pass: c.Pass})
	}
	return rep
}
