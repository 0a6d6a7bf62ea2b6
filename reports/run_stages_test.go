package reports

import (
	"slices"
	"strconv"
	"testing"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
)

// TestRunStagesStack (qauser32 L10, L2): the memory plot's stages are
// those the stack runs (torchtitan: 0, 2 and 3; memory_stages.png drew a
// ZeRO-1 bar), each as the loader reads the file at that stage when at
// gives it: torchtitan's stage 0 is DDP over fp32 parameters under
// autocast, 12 B a parameter at rest with AdamW's states, where the stage
// set alone left bf16 parameters beside an fp32 master, 14 B.
func TestRunStagesStack(t *testing.T) {
	data := []byte("version: 1\ncluster: {nodes: 1, gpus_per_node: 2, gpu: H100-80GB}\nmodel: {preset: llama3.1-8b, layers: 2, seq_len: 1024}\nparallelism: {dp: 2, zero_stage: 3}\nstack: torchtitan\n")
	s, err := scenarios.Load("s.yaml", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	at := func(st int) *scenarios.Scenario {
		c, err := scenarios.Load("s.yaml", data, []string{"parallelism.zero_stage=" + strconv.Itoa(st)})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	p := s.Model.TotalParams()
	for _, tc := range []struct {
		name   string
		at     func(int) *scenarios.Scenario
		atRest int64 // stage 0's params, master and Adam states
	}{
		{"stage set alone", nil, 14 * p},
		{"reloaded at each stage", at, 12 * p},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs, err := runStages(s, tc.at)
			if err != nil {
				t.Fatal(err)
			}
			var stages []int
			for _, r := range rs {
				stages = append(stages, r.Stage)
			}
			if !slices.Equal(stages, []int{0, 2, 3}) {
				t.Fatalf("stages %v, want 0, 2, 3", stages)
			}
			r := rs[0]
			st := r.Component(memory.CompParams).AtRest + r.Component(memory.CompMaster).AtRest + r.Component(memory.CompAdamM).AtRest + r.Component(memory.CompAdamV).AtRest
			if st != tc.atRest {
				t.Errorf("stage 0 model states at rest %d B, want %d B", st, tc.atRest)
			}
		})
	}
}
