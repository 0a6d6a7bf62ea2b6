package sweep

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestExpertParallelSearchesK1 (QA5 F7): with ep > 1 the loader refuses
// k > 1 (not modelled), so fit lists K = 1 only (it printed the other K as
// rows of 0 B that did not fit) and plan's candidates at ep > 1 have K = 1
// only (Mixtral-8x7B at ep 8: 432 of 531 candidates were loader
// rejections); plan searches ep itself (TestPlanEP), every K at ep 1.
func TestExpertParallelSearchesK1(t *testing.T) {
	for _, c := range []struct {
		name, ep string
		// fitKs: the K of fit's rows at stages 1–3.
		fitKs []int
	}{
		{"ep 8", ", ep: 8", []int{1}},
		{"no ep", "", []int{1, 2, 4, 8, 16}},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := Source{File: "m.yaml", Data: []byte("version: 1\ncluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {preset: mixtral-8x7b, layers: 2, seq_len: 1024}\n" +
				"parallelism: {dp: 16, zero_stage: 3" + c.ep + "}\n")}
			f, err := FitSearch(src, FitOptions{Jobs: 2})
			if err != nil {
				t.Fatal(err)
			}
			byStage := map[int][]int{}
			for _, r := range f.Rows {
				byStage[r.Stage] = append(byStage[r.Stage], r.K)
				if r.Peak == 0 {
					t.Errorf("stage %d, K=%d: a row of 0 B", r.Stage, r.K)
				}
			}
			for st := 1; st <= 3; st++ {
				if got := byStage[st]; !slices.Equal(got, c.fitKs) {
					t.Errorf("fit stage %d: K %v, want %v", st, got, c.fitKs)
				}
			}
			sp, err := newPlanSpace(src, PlanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			// Plan searches ep too (QA7 F6): K = 1 wherever ep > 1, every
			// K at ep 1, so no candidate is a loader rejection.
			for _, cd := range sp.candidates() {
				if cd.EP > 1 && cd.K != 1 || cd.EP == 0 {
					t.Fatalf("plan candidate ep %d, K %d", cd.EP, cd.K)
				}
				if _, err := src.Load(cd.Sets()...); err != nil {
					t.Fatalf("plan candidate %v: %v", cd.Sets(), err)
				}
			}
		})
	}
}

// TestNodesToFitCandidateEP: plan's least node count steps as the
// candidate's layout needs, at the ep plan searched, not the file's
// (qauser32 M3: gpt-oss-120b's least-memory candidate, ep 16, was grown
// one node at a time by the file's ep 1, refused at 3 nodes, "ep=16 does
// not divide the 24 ranks", and plan named no node count). Mixtral 8x7B
// cut to 4 layers on nodes of 4 GPUs with 10 GiB, ZeRO-3 at ep 8: zerosim
// run peaks at 15,168,071,680 B on 2 nodes (dp 8) and 7,584,035,840 B on
// 4 (dp 16; 3 nodes are refused: 12 ranks), so 4 nodes, two steps of 2.
func TestNodesToFitCandidateEP(t *testing.T) {
	src := Source{File: "m.yaml", Data: []byte("version: 1\ncluster: {nodes: 2, gpus_per_node: 4, gpu: H100-80GB, gpu_memory: 10GiB}\n" +
		"model: {preset: mixtral-8x7b, layers: 4, seq_len: 1024}\nparallelism: {dp: 8, zero_stage: 3}\n")}
	s, err := src.Load()
	if err != nil {
		t.Fatal(err)
	}
	c := Candidate{EP: 8, Stage: 3, K: 1, MicroBatch: 1, GradAccum: 1, Recompute: "none", Prefetch: 1, Algorithm: "ring"}
	fit, room := nodesToFit(src, s, c, false)
	if fit != 4 || room != 4 {
		t.Errorf("nodesToFit %v: %d nodes, room on %d; want 4 and 4", c.Sets(), fit, room)
	}
}

// TestNodesToFitAcrossStages (qauser32 M3): when nothing fits, the least
// node count is searched for each searched stage's least-memory
// configuration, not the least-memory one's alone. gpt-oss-120b (the
// published config.json of openai/gpt-oss-120b is gpt-oss-20b's with 36
// layers, 128 local experts and no quantization_config) under FSDP2 on 2
// × 8 H100 at a global batch of 128: the least memory is ZeRO stage 2 at
// ep 16, 136 GiB, which fits from 6 nodes; stage 3's least-memory
// configuration fits on 4 (zerosim run there: yes, with allocator
// retries; checkNodesToFit holds the count to run's verdict).
func TestNodesToFitAcrossStages(t *testing.T) {
	raw, err := os.ReadFile("../scenarios/testdata/hf-extra/gpt-oss-20b.json")
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	types := cfg["layer_types"].([]any)
	cfg["num_hidden_layers"], cfg["num_local_experts"], cfg["layer_types"] = 36, 128, append(types, types[:12]...)
	delete(cfg, "quantization_config")
	dir := t.TempDir()
	out, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "gpt-oss-120b.json"), out, 0o644); err != nil {
		t.Fatal(err)
	}
	src := Source{File: filepath.Join(dir, "g.yaml"), Data: []byte("version: 1\ncluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}\n" +
		"model: {hf_config: gpt-oss-120b.json, seq_len: 4096}\nparallelism: {dp: 16, zero_stage: 3}\ntraining: {recompute: full, attention: flash}\nstack: torchtitan\n")}
	p, err := PlanSearch(context.Background(), src, PlanOptions{GlobalBatch: 128})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Rows) != 0 || p.Smallest.Stage != 2 {
		t.Fatalf("%d rows, smallest %v; want none, stage 2", len(p.Rows), p.Smallest.Sets())
	}
	if p.NodesToFit != 4 || p.NodesCandidate.Stage != 3 || p.NodesToRoom <= p.NodesToFit {
		t.Errorf("nodes to fit %d with %v, room on %d; want 4 at stage 3, room on more", p.NodesToFit, p.NodesCandidate.Sets(), p.NodesToRoom)
	}
	s, err := src.Load()
	if err != nil {
		t.Fatal(err)
	}
	if fit, _ := nodesToFit(src, s, p.Smallest, false); fit != 6 {
		t.Errorf("the least-memory configuration fits on %d nodes, want 6", fit)
	}
	q := *p
	q.Smallest = p.NodesCandidate
	checkNodesToFit(t, src, &q)
}
