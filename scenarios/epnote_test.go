package scenarios

import (
	"strings"
	"testing"
)

// TestExpertParallelNote (QA5 F5): every MoE scenario with ep > 1 says on
// load what its experts assume (balanced dropless routing, Megatron's
// alltoall dispatcher with top-k copies per token, no overlap), once;
// without ep, or ep 1, nothing is said.
func TestExpertParallelNote(t *testing.T) {
	for _, c := range []struct {
		name, parallelism string
		note              bool
	}{
		{"ep 8", "{dp: 64, zero_stage: 3, ep: 8}", true},
		{"ep 2", "{dp: 64, zero_stage: 1, ep: 2}", true},
		{"ep 1", "{dp: 64, zero_stage: 3, ep: 1}", false},
		{"no ep", "{dp: 64, zero_stage: 3}", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := "version: 1\ncluster: {nodes: 8, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {preset: mixtral-8x7b}\nparallelism: " + c.parallelism + "\n"
			s, err := Load("n.yaml", []byte(doc), nil)
			if err != nil {
				t.Fatal(err) // every row loads: the note is what differs
			}
			n := 0
			for _, w := range s.Warnings {
				if strings.Contains(w, "balanced, dropless routing") {
					n++
					for _, want := range []string{"parallelism.ep", "top-k copies", "Megatron-LM d98e8a64", "DeepEP/HybridEP", "(communication.moe_dispatcher: deepep models it)", "not overlapped with compute"} {
						if want == "parallelism.ep" {
							want = "n.yaml:4:" // the position of parallelism.ep's value
						}
						if !strings.Contains(w, want) {
							t.Errorf("note %q lacks %q", w, want)
						}
					}
				}
			}
			if want := map[bool]int{true: 1, false: 0}[c.note]; n != want {
				t.Errorf("%d expert-parallel notes in %q, want %d", n, s.Warnings, want)
			}
		})
	}
}

// TestExpertParallelRefusals (QA5 F8): a refused ep suggests the degrees
// that run, the common divisors of the shard group's ranks and every MoE
// layer's expert count (Mixtral-8x7B on 64 GPUs: 1, 2, 4, 8; it suggested
// 16, 32, 64 too, which the expert check then refused), and 0 or a negative
// ep is out of range, not a divisor problem.
func TestExpertParallelRefusals(t *testing.T) {
	for _, c := range []struct{ ep, want string }{
		{"3", "e.yaml: --set parallelism.ep=3: ep=3 does not divide the 64 ranks of a shard group dp·cp/k (use a divisor of 64 and of every MoE layer's experts: 1, 2, 4, 8)"},
		{"16", "e.yaml: --set parallelism.ep=16: ep=16 does not divide the 8 experts of experts.0 (use a divisor of 8 and of the 64 ranks of a shard group: 1, 2, 4, 8)"},
		{"0", "e.yaml: --set parallelism.ep=0: ep=0 is out of range: ep must be ≥ 1 (1: no expert parallelism)"},
		{"-2", "e.yaml: --set parallelism.ep=-2: ep=-2 is out of range: ep must be ≥ 1 (1: no expert parallelism)"},
	} {
		doc := "version: 1\ncluster: {nodes: 8, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {preset: mixtral-8x7b}\nparallelism: {dp: 64, zero_stage: 3}\n"
		_, err := Load("e.yaml", []byte(doc), []string{"parallelism.ep=" + c.ep})
		if err == nil || err.Error() != c.want {
			t.Errorf("ep %s: %v\nwant %s", c.ep, err, c.want)
		}
	}
}

// ep with k > 1 is refused where the k came from: a --set of k names the
// flag, not the file's ep line (qa21 LOW 4); a --set of ep, or both in the
// file, name ep.
func TestExpertParallelWithKPointsAtTheCause(t *testing.T) {
	doc := "version: 1\ncluster: {nodes: 8, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {preset: mixtral-8x7b}\nparallelism:\n  dp: 64\n  zero_stage: 3\n  ep: 8\n"
	for _, c := range []struct {
		sets []string
		want string
	}{
		{[]string{"parallelism.k=2"}, "e.yaml: --set parallelism.k=2: ep=8 with k=2 is not modelled (use k: 1 with expert parallelism)"},
		{[]string{"parallelism.k=2", "parallelism.ep=4"}, "e.yaml: --set parallelism.ep=4: ep=4 with k=2 is not modelled (use k: 1 with expert parallelism)"},
		{nil, ""},
	} {
		_, err := Load("e.yaml", []byte(doc), c.sets)
		if c.want == "" {
			if err != nil {
				t.Errorf("sets %v: %v", c.sets, err)
			}
			continue
		}
		if err == nil || err.Error() != c.want {
			t.Errorf("sets %v: %v\nwant %s", c.sets, err, c.want)
		}
	}
	_, err := Load("e.yaml", []byte(doc+"  k: 2\n"), nil)
	if want := "e.yaml:7:3: ep=8 with k=2 is not modelled (use k: 1 with expert parallelism)"; err == nil || err.Error() != want {
		t.Errorf("both in the file: %v\nwant %s", err, want)
	}
}

// ep > 1 under a stack that runs no expert parallelism for the model
// warns at parallelism.ep, as a stage the stack does not run does (qa21
// LOW 13): fms-fsdp 078c29e has no MoE; llm-foundry runs it only in MPT's
// MegaBlocks FFNs; DeepSpeed's AutoEP has presets for Mixtral, not for
// gpt-oss. torchtitan and Megatron-LM run it.
func TestStackExpertParallelWarning(t *testing.T) {
	for _, c := range []struct {
		stack, model string
		warn         string
	}{
		{"fms-fsdp", "mixtral-8x7b", "stack fms-fsdp does not run expert parallelism: fms-fsdp 078c29e has no MoE model and no expert parallelism"},
		{"llm-foundry", "mixtral-8x7b", "stack llm-foundry does not run expert parallelism for MixtralForCausalLM"},
		{"deepspeed", "{hf_config: testdata/hf-extra/gpt-oss-20b.json}", "stack deepspeed does not run expert parallelism for GptOssForCausalLM"},
		{"deepspeed", "mixtral-8x7b", ""},
		{"torchtitan", "mixtral-8x7b", ""},
		{"megatron", "mixtral-8x7b", ""},
	} {
		model := "{preset: " + c.model + "}"
		if strings.HasPrefix(c.model, "{") {
			model = c.model
		}
		doc := "version: 1\ncluster: {nodes: 8, gpus_per_node: 8, gpu: H100-80GB}\nmodel: " + model + "\nparallelism: {dp: 64, zero_stage: 3, ep: 8}\n"
		sets := []string{"stack=" + c.stack}
		if c.stack == "megatron" {
			sets = append(sets, "parallelism.zero_stage=1")
		}
		s, err := Load("n.yaml", []byte(doc), sets)
		if err != nil {
			t.Fatalf("%s %s: %v", c.stack, c.model, err)
		}
		var got []string
		for _, w := range s.Warnings {
			if strings.Contains(w, "expert parallelism") && strings.Contains(w, "does not run") {
				got = append(got, w)
			}
		}
		switch {
		case c.warn == "" && len(got) > 0:
			t.Errorf("%s %s: %q", c.stack, c.model, got)
		case c.warn != "" && (len(got) != 1 || !strings.Contains(got[0], c.warn) || !strings.HasPrefix(got[0], "n.yaml:4:")):
			t.Errorf("%s %s: %q, want one at n.yaml:4 with %q", c.stack, c.model, got, c.warn)
		}
	}
}
