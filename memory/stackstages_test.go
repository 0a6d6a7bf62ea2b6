package memory

import (
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestStagesStackDoesNotRun (qauser32 L10): the per-stage tables leave out
// a stage the scenario's stack does not run, saying why, as fit and plan
// search only what it runs: torchtitan has DDP (stage 0) and FSDP2
// (stages 2 and 3), no ZeRO-1. Without a stack every stage has figures.
func TestStagesStackDoesNotRun(t *testing.T) {
	const yaml = "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {preset: llama3.1-8b, seq_len: 2048}\nparallelism: {dp: 8, zero_stage: 3}\n"
	for _, tc := range []struct {
		stack string
		na    []bool // stages 0–3: no figures
	}{
		{"torchtitan", []bool{false, true, false, false}},
		{"megatron", []bool{false, false, true, true}},
		{"", []bool{false, false, false, false}},
	} {
		t.Run("stack "+tc.stack, func(t *testing.T) {
			data := yaml
			if tc.stack != "" {
				data += "stack: " + tc.stack + "\n"
			}
			var sets []string
			if tc.stack == "megatron" {
				sets = []string{"parallelism.zero_stage=1"}
			}
			s, err := scenarios.Load("s.yaml", []byte(data), sets)
			if err != nil {
				t.Fatal(err)
			}
			rs, err := EstimateStages(s, []int{0, 1, 2, 3}, []Estimator{EstimatorZerosim}, Options{}, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range rs {
				na := r.NotApplicable != ""
				if na != tc.na[i] || na && !strings.Contains(r.NotApplicable, "does not run ZeRO stage") {
					t.Errorf("stage %d: not applicable %q, want %v", r.Stage, r.NotApplicable, tc.na[i])
				}
			}
		})
	}
}
