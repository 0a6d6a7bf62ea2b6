package reports

import (
	"bytes"
	"maps"
	"testing"

	"github.com/zerosim/zerosim/numerics"
	"github.com/zerosim/zerosim/scenarios"
)

// sampleVerify has one passing row and one corrupted row (the values of
// `zerosim verify --corrupt-shard 3:5` on the default scenario) and two
// drift rows.
func sampleVerify() *VerifyReport {
	return &VerifyReport{
		Scenario: "default", N: 16, Pass: false,
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
	} {
		for _, m := range NewNotModelled(numerics.NotFollowed(s)) {
			got[s.Name+" "+m.Key+" "+m.Value] = m.Runs
		}
	}
	want := map[string]string{
		"default training.grad_accum 4":      "one micro-step per step",
		"default training.micro_batch 8":     "the toy model's 2 sequences of 4 tokens per rank",
		"default training.reduce_dtype fp32": "an exact sum rounded once to bf16",
		"default training.shard_dtype fp32":  "bf16 parameters beside an fp32 master shard",
		"default training.param_dtype fp16":  "bf16 parameters",
		"seed000-k4 training.micro_batch 4":  "the toy model's 2 input rows per rank",
	}
	if !maps.Equal(got, want) {
		t.Errorf("not modelled\n%v\nwant\n%v", got, want)
	}
}
