package sweep

import (
	"fmt"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/zero"
)

// limitsScenario is one A100-80GB GPU with a model (the model: section)
// that memory never stops before the replay's limits do.
func limitsScenario(model, rest string) Source {
	return Source{File: "limits.yaml", Data: []byte(`version: 1
name: limits
cluster:
  nodes: 1
  gpus_per_node: 1
  gpu: A100-80GB
  intra:
    preset: NVLink3
model:
` + model + `
parallelism:
  dp: 1
  zero_stage: 0
` + rest)}
}

// TestFitLargestAtReplayLimits: the largest-model search ends where the
// next size is over a replay's limits (zero.LimitError), with a note that
// says so, instead of failing (rev25 LOW-4: no test met a task limit inside
// fit's search, nor the params rule at a limit). The sizes are the task
// count's and the bucket count's own arithmetic (zero/limits.go taskCount,
// memory.MaxBuckets), on a GPU whose memory holds far more:
//   - layers rule, stage 3, grad_accum 128: one bucket per unit (memory's
//     PerUnit layout), so 128·(2 + 3) tasks per layer and 8 more; 819
//     layers make 524,168, 820 make 524,808 > 2^19 (the limit found in the
//     replay: probes.decide);
//   - params rule, stage 0, 4 KB buckets of bf16 gradients (2,000 elements
//     each): 2^18 buckets hold 524,288,000 parameters, one more is over
//     memory.MaxBuckets (found by the model: probes.get);
//   - params rule, stage 1: 2 collectives per bucket, 2 tasks per unit,
//     8 more: the most buckets is (2^19 − 8 − 2·units)/2, at 2,000
//     parameters each (found in the replay).
func TestFitLargestAtReplayLimits(t *testing.T) {
	mlp := limitsScenario("  kind: mlp\n  hidden: 256\n  layers: 700", "training:\n  grad_accum: 128\n")
	bare := limitsScenario("  params: 100M", "communication:\n  bucket_size: 4KB\n")
	s, err := bare.Load()
	if err != nil {
		t.Fatal(err)
	}
	units := int64(len(s.Model.LayerList))
	stage1 := (zero.MaxTasks - 8 - 2*units) / 2 * 2000
	for _, tc := range []struct {
		name        string
		src         Source
		stage       int
		layers, max int64
		note        string
	}{
		{"layers, stage 3", mlp, 3, 819, 0, "largest within zerosim's replay limits: at 820 layers, the step has 524808 tasks per rank, more than the 524288 a replay handles"},
		{"params, stage 0", bare, 0, 0, memory.MaxBuckets * 2000, fmt.Sprintf(`largest within zerosim's replay limits: at %d parameters, communication.bucket_size 4000 B cuts group "dense" (%d parameters) into more than 262144 buckets`, memory.MaxBuckets*2000+1, memory.MaxBuckets*2000+1)},
		{"params, stage 1", bare, 1, 0, stage1, fmt.Sprintf("largest within zerosim's replay limits: at %d parameters, the step has 524290 tasks per rank, more than the 524288", stage1+1)},
	} {
		s, err := tc.src.Load()
		if err != nil {
			t.Fatal(err)
		}
		row, err := fitRow(tc.src, s, tc.stage, 1, FitOptions{Convention: memory.ConventionZerosim, MaxGPUs: 1})
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if tc.layers != 0 && row.MaxLayers != tc.layers || tc.max != 0 && row.MaxParams != tc.max {
			t.Errorf("%s: largest %d layers, %d parameters; want %d layers, %d parameters", tc.name, row.MaxLayers, row.MaxParams, tc.layers, tc.max)
		}
		if len(row.Notes) == 0 || !strings.HasPrefix(row.Notes[0].Text, tc.note) {
			t.Errorf("%s: notes %v; want first %q…", tc.name, row.Notes, tc.note)
		}
	}
}
