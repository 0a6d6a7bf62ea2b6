package reports

import (
	"bytes"
	"maps"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/numerics"
	"github.com/zerosim/zerosim/scenarios"
)

// sampleVerify has one passing row, one corrupted row (the values of
// `zerosim verify --corrupt-shard 3:5` on the default scenario), the
// same-data row of `zerosim verify`, Adam's defaults and two drift rows.
func sampleVerify() *VerifyReport {
	return &VerifyReport{
		Zerosim: ReadBuild(), Scenario: "default", N: 16, Pass: false, Adam: NewVerifyAdam(numerics.DefaultHyper),
		Rows: []VerifyRow{
			{Config: "tiny-transformer N16 stage 0 K 1 bucket one exact", Model: "tiny-transformer", Stage: 0, K: 1, Bucket: "one",
				Padding: "toy", Mode: "exact", Steps: 5, Numel: 260, Size: 272, Buckets: 1, ShardElems: 272, Pass: true,
				Collectives: []verifyBytes{{Phase: "backward", Op: "all-reduce", Group: "world", Ranks: 16, Calls: 1, Bytes: 1088, PerRank: "1020"}}},
			{Config: "tiny-transformer N16 stage 1 K 1 bucket one exact", Model: "tiny-transformer", Stage: 1, K: 1, Bucket: "one",
				Padding: "toy", Mode: "exact", Steps: 5, Numel: 260, Size: 272, Buckets: 1, ShardElems: 17, Pass: false,
				MaxAbsDiff: 0.0001220703125, MaxULP: 1, Mismatches: 16,
				First: "step 2 rank 3 fp32 master w_o[0]: got -0.0190536175, want -0.0191756878",
				Collectives: []verifyBytes{{Phase: "backward", Op: "reduce-scatter", Group: "intra", Ranks: 16, Calls: 1, Bytes: 544, PerRank: "510"},
					{Phase: "post-optim", Op: "all-gather", Group: "intra", Ranks: 16, Calls: 1, Bytes: 544, PerRank: "510"}}},
			{Config: "tiny-transformer N16 stage 1 K 1 bucket one exact same-data", Model: "tiny-transformer", Stage: 1, K: 1, Bucket: "one",
				Padding: "toy", Mode: "exact", SameData: true, Steps: 5, Numel: 260, Size: 272, Buckets: 1, ShardElems: 17, Pass: true,
				Collectives: []verifyBytes{{Phase: "backward", Op: "reduce-scatter", Group: "intra", Ranks: 16, Calls: 1, Bytes: 544, PerRank: "510"},
					{Phase: "post-optim", Op: "all-gather", Group: "intra", Ranks: 16, Calls: 1, Bytes: 544, PerRank: "510"}}},
		},
		Drift: []DriftRow{
			{Mode: "native", KA: 1, KB: 4, Step: 1, Total: 260},
			{Mode: "native-bf16", KA: 1, KB: 4, Step: 2, MaxULP: 1, MaxAbsDiff: 0.0009765625, Differ: 1, Total: 260},
		},
	}
}

func sampleReference() *ReferenceReport {
	return &ReferenceReport{
		File: "toy-h16-l3.json", Kind: "toy-mlp", Generator: "torch 1.13.0a0 bf16 ToyModel", Pass: false,
		Checks: []referenceCheck{
			{Name: "step 1 params (PyTorch grads → Adam → bf16)", Exact: true, Compared: 6384, Pass: true},
			{Name: "step 1 loss rel. error", Compared: 1, Value: 0.0025, Limit: 0.01, Pass: true},
			{Name: "step 1 layers.0.fc1.weight grad cosine", Compared: 1024, Value: 0.99993, Limit: 0.999, Minimum: true, Pass: true},
			{Name: "step 2 params (PyTorch grads → Adam → bf16)", Exact: true, Compared: 6384, Mismatches: 1,
				First: "layers.0.fc1.bias[3]: got 0x3c01, want 0x3c00"},
		},
	}
}

// TestVerifyGolden renders the verify and reference reports as tables and
// toJSON (go test ./reports/ -update rewrites the golden files).
func TestVerifyGolden(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(*bytes.Buffer) error
	}{
		{"verify.table.golden", func(b *bytes.Buffer) error { return WriteVerifyTable(b, sampleVerify()) }},
		{"verify.json.golden", func(b *bytes.Buffer) error { return WriteVerifyJSON(b, sampleVerify()) }},
		{"reference.table.golden", func(b *bytes.Buffer) error { return WriteReferenceTable(b, sampleReference()) }},
		{"reference.json.golden", func(b *bytes.Buffer) error { return WriteReferenceJSON(b, sampleReference()) }},
	} {
		var b bytes.Buffer
		if err := tc.write(&b); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		golden(t, tc.name, b.Bytes())
	}
}

// TestVerifyAdamLine: the header names the optimizer and every
// hyper-parameter verify ran, and how the weight decay applies (QA15).
func TestVerifyAdamLine(t *testing.T) {
	for _, tc := range []struct {
		h    numerics.Hyper
		want string
	}{
		{numerics.DefaultHyper, "adam: lr 0.001, betas (0.9, 0.999), eps 1e-08, weight decay 0"},
		{numerics.Hyper{LR: 3e-4, Beta1: 0.9, Beta2: 0.95, Eps: 1e-8, WeightDecay: 0.1, Decoupled: true},
			"adamw: lr 0.0003, betas (0.9, 0.95), eps 1e-08, weight decay 0.1 (decoupled)"},
		{numerics.Hyper{LR: 1e-3, Beta1: 0.8, Beta2: 0.99, Eps: 1e-6, WeightDecay: 0.01},
			"adam: lr 0.001, betas (0.8, 0.99), eps 1e-06, weight decay 0.01 (L2, added to the gradient)"},
	} {
		if got := NewVerifyAdam(tc.h).line(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.h, got, tc.want)
		}
	}
}

// TestVerifySameDataOneLine: the same-data row is one table line with its
// result, marked in the mode column; it was "tiny-transformer" on one
// line and "same-data" alone on the next, reading like a duplicate of the
// stage-1 K-1 row (QA15).
func TestVerifySameDataOneLine(t *testing.T) {
	var b bytes.Buffer
	if err := WriteVerifyTable(&b, sampleVerify()); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.Contains(l, "same-data") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "│ same-data │") || !strings.Contains(lines[0], "PASS") {
		t.Errorf("same-data lines %q, want one row line with its result", lines)
	}
}

func TestFmtDiff(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{{0, "0"}, {0.0001220703125, "0.0001221"}, {1e-300, "1e-300"}} {
		if got := fmtDiff(tc.v); got != tc.want {
			t.Errorf("fmtDiff(%g) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

// TestNotModelledWords: numerics names the settings verify does not follow
// with facts (the toy batch), and the report words them, every key
// numerics can list with its own words (a field-by-field copy of numerics'
// English before, B F17).
func TestNotModelledWords(t *testing.T) {
	load := func(name string, sets ...string) *scenarios.Scenario {
		t.Helper()
		data, ok := scenarios.Example(name)
		if !ok {
			t.Fatalf("no example %s", name)
		}
		s, err := scenarios.Load(name+".yaml", data, sets)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	got := map[string]string{}
	for _, s := range []*scenarios.Scenario{
		load("default", "training.grad_accum=4", "training.micro_batch=8", "training.reduce_dtype=fp32", "training.shard_dtype=fp32", "training.param_dtype=fp16"),
		load("seed000-k4", "training.micro_batch=4"),
		load("default", "training.fp8=te", "training.dropout=0.1", "training.optimizer_impl=fused", "offload.optimizer=cpu"),
		load("default", "training.master_dtype=none"),
		load("default", "training.cross_entropy=bf16"),
	} {
		for _, m := range NewNotModelled(numerics.NotFollowed(s)) {
			got[s.Name+" "+m.Key+" "+m.Value] = m.Runs
		}
	}
	want := map[string]string{
		"default training.grad_accum 4":         "one micro-step per step",
		"default training.micro_batch 8":        "the toy model's 2 sequences of 4 tokens per rank",
		"default training.reduce_dtype fp32":    "an exact sum rounded once to bf16",
		"default training.shard_dtype fp32":     "bf16 parameters beside an fp32 master shard",
		"default training.param_dtype fp16":     "bf16 parameters",
		"seed000-k4 training.micro_batch 4":     "the toy model's 2 input rows per rank",
		"default training.fp8 te":               "bf16 GEMMs",
		"default training.dropout 0.1":          "no dropout",
		"default training.optimizer_impl fused": "torch.optim.Adam(foreach=False)'s operation order",
		"default offload.optimizer cpu":         "Adam on the GPU in torch.optim.Adam(foreach=False)'s order",
		"default training.master_dtype none":    "an fp32 master and fp32 Adam moments",
		"default training.cross_entropy bf16":   "cross-entropy on the logits upcast (a float64 softmax)",
	}
	if !maps.Equal(got, want) {
		t.Errorf("not modelled\n%v\nwant\n%v", got, want)
	}
}
