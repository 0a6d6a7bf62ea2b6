package numerics

import (
	"slices"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

func loadExample(t *testing.T, name string, sets ...string) *scenarios.Scenario {
	t.Helper()
	in, err := scenarios.ReadInput(name, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := in.Load(sets)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestScenarioConfigs: verify's mapping of a scenario onto the toy runs.
func TestScenarioConfigs(t *testing.T) {
	s := loadExample(t, "seed002-tiny")
	base, cfgs, err := ScenarioConfigs(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if base.Model != TinyTransformer || base.N != s.N() || base.K != 1 {
		t.Errorf("base %+v", base)
	}
	if len(cfgs) != len(Matrix(base)) {
		t.Errorf("%d configurations, want the matrix's %d", len(cfgs), len(Matrix(base)))
	}
	c := &Corruption{Rank: 1, Index: 5, Step: 7}
	s.Parallelism.Stage, s.Parallelism.K = 2, 2
	_, one, err := ScenarioConfigs(s, c)
	if err != nil || len(one) != 1 || one[0].Stage != 2 || one[0].K != 2 || one[0].Steps != 7 || one[0].Corrupt != c {
		t.Errorf("corrupted run %+v, %v", one, err)
	}
	big := loadExample(t, "seed002-tiny", "parallelism.dp=4096", "cluster.nodes=2048")
	if _, err := FromScenario(big); err == nil || !strings.Contains(err.Error(), "N = dp·cp = 4096") {
		t.Errorf("N = 4096: %v", err)
	}
}

// TestNotFollowed: the settings verify reads past are named, each only
// when the scenario sets it away from what verify runs (QA3 s16 finding
// 10: grad_accum 4, micro_batch 8, reduce_dtype fp32 and shard_dtype fp32
// printed the header and JSON of a plain verify, and --corrupt-shard 3:5
// gave the same values to the last digit with and without grad_accum 4).
func TestNotFollowed(t *testing.T) {
	for _, tc := range []struct {
		example         string
		sets            []string
		keys            []string
		rows, seqTokens int // the micro_batch entry's toy batch, when listed
	}{
		{"default", nil, nil, 0, 0},
		{"default", []string{"training.micro_batch=1", "training.grad_accum=1"}, nil, 0, 0},
		{"default", []string{"training.grad_accum=4"}, []string{"training.grad_accum"}, 0, 0},
		// The transformer's batch: 2 sequences of ttT+1 = 4 tokens (3 inputs, the targets shifted by one).
		{"default", []string{"training.micro_batch=8"}, []string{"training.micro_batch"}, 2, 4},
		{"seed000-k4", []string{"training.micro_batch=4"}, []string{"training.micro_batch"}, 2, 0}, // 2 input rows
		{"default", []string{"training.grad_accum=4", "training.reduce_dtype=fp32", "training.shard_dtype=fp32", "training.micro_batch=8"},
			[]string{"training.grad_accum", "training.micro_batch", "training.reduce_dtype", "training.shard_dtype"}, 2, 4},
		{"default", []string{"training.param_dtype=fp16"}, []string{"training.param_dtype"}, 0, 0},
		{"default", []string{"training.seed=7", "training.lr=0.1", "communication.padding=megatron"}, nil, 0, 0}, // followed
	} {
		t.Run(tc.example+" "+strings.Join(tc.sets, " "), func(t *testing.T) {
			us := NotFollowed(loadExample(t, tc.example, tc.sets...))
			var keys []string
			for _, u := range us {
				keys = append(keys, u.Key)
				rows, seq := 0, 0
				if u.Key == "training.micro_batch" {
					rows, seq = tc.rows, tc.seqTokens
				}
				if u.Rows != rows || u.SeqTokens != seq {
					t.Errorf("%s: toy batch %d × %d tokens, want %d × %d", u.Key, u.Rows, u.SeqTokens, rows, seq)
				}
			}
			if !slices.Equal(keys, tc.keys) {
				t.Errorf("not followed %v, want %v", keys, tc.keys)
			}
		})
	}
}
