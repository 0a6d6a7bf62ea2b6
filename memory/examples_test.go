package memory

import (
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

func loadExample(t *testing.T, name string) *scenarios.Scenario {
	t.Helper()
	data, ok := scenarios.Example(name)
	if !ok {
		t.Fatalf("no example %q", name)
	}
	s, err := scenarios.Load(name+".yaml", data, nil)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s
}

// TestExamples runs every embedded example through every stage, convention
// and estimator and checks the report invariants.
func TestExamples(t *testing.T) {
	for _, name := range scenarios.ExampleNames() {
		s := loadExample(t, name)
		for _, conv := range Conventions {
			rs, err := Stages(s, Options{Convention: conv})
			if err != nil {
				t.Errorf("%s %v: %v", name, conv, err)
				continue
			}
			for _, r := range rs {
				checkReport(t, name, r)
			}
		}
		for _, est := range Estimators {
			for st := range 4 {
				c := *s
				c.Parallelism.Stage = st
				if _, err := Estimate(&c, est, Options{}); err != nil {
					t.Errorf("%s %v stage %d: %v", name, est, st, err)
				}
			}
		}
	}
}

// TestExampleSeeds checks that the seed examples reproduce the seed tables
// through the scenario loader (presets, layer lists) and not only through
// hand-built scenarios.
func TestExampleSeeds(t *testing.T) {
	for _, tc := range []struct {
		example string
		conv    Convention
		want    []int64 // at rest, stages 0–3
	}{
		{"seed002-tiny", ConventionSeed002, []int64{4160, 2600, 2340, 2080}},
		{"seed002-7b", ConventionSeed002, []int64{112e9, 38_500_000_000, 26_250_000_000, 14e9}},
		{"seed000-mlp", ConventionSeed000, []int64{18_793_349_120, 9_396_674_560, 1_342_382_080 * 22 / 4, 1_342_382_080 * 14 / 4}},
	} {
		s := loadExample(t, tc.example)
		rs, err := Stages(s, Options{Convention: tc.conv})
		if err != nil {
			t.Fatalf("%s: %v", tc.example, err)
		}
		for st, r := range rs {
			if got := r.AtRest - int64(s.Memory.RuntimeContext+s.Memory.NCCLBuffers); got != tc.want[st] {
				t.Errorf("%s stage %d: %d B, want %d", tc.example, st, got, tc.want[st])
			}
		}
	}
	// Seed 002's tiny example at stage 3 with the zerosim convention: 1,820 B
	// at rest, gathers 16/128/16/296/64.
	r, err := Analyze(loadExample(t, "seed002-tiny"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.AtRest-int64(r.Component(CompRuntime).AtRest+r.Component(CompNCCL).AtRest) != 1820 {
		t.Errorf("seed002-tiny at rest %d, want 1820 + fixed overheads", r.AtRest)
	}
	for u, w := range []int64{16, 128, 16, 296, 64} {
		if r.UnitGather(u) != w {
			t.Errorf("seed002-tiny unit %d gather %d, want %d", u, r.UnitGather(u), w)
		}
	}
}

// A bucket size that would cut the model into more than MaxBuckets buckets
// is an input error naming the key and the smallest size that works: the
// 6,738,415,616 bf16 gradients of Llama 2 7B need buckets of at least
// ⌈6738415616 / 2^18⌉ = 25,706 elements = 51,412 B.
func TestBucketSizeTooSmall(t *testing.T) {
	s := loadExample(t, "default")
	s.Communication.BucketSize = 1
	_, err := Analyze(s, Options{})
	want := `memory: communication.bucket_size 1 B cuts group "dense" (6738415616 parameters) into more than 262144 buckets (use a bucket_size of at least 51412 B)`
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
	s.Communication.BucketSize = 51412
	if _, err := Analyze(s, Options{}); err != nil {
		t.Errorf("the suggested bucket size fails: %v", err)
	}
}
