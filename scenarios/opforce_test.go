package scenarios

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestImportTorchtitanOpForce: the importer reads
// activation_checkpoint.per_op_sac_force_recompute_mm_shapes_by_fqns
// (torchtitan/config/job_config.py at
// 238fa9953e4aec2a62582121564273d7cbb1e9f1, lines 661-663) into
// training.op_force_recompute under the op policy: unset is torchtitan's
// default (the key is not written), a list is written as given and loads
// as given, [] loads as an empty list (nothing forced); under a policy
// that is not op the key is noted and not written.
func TestImportTorchtitanOpForce(t *testing.T) {
	const key = "per_op_sac_force_recompute_mm_shapes_by_fqns"
	opt := `selective_ac_option = 'op'  # 'int' = ac every positive int layer or 'op', ac based on ops policy`
	for _, c := range []struct {
		name  string
		edits []string
		want  []string // nil: unset
		line  string
	}{
		{"unset", nil, nil, ""},
		{"two", []string{opt, opt + "\n" + key + ` = ["moe.router.gate", "feed_forward.w2"]`}, []string{"moe.router.gate", "feed_forward.w2"},
			`  op_force_recompute: ["moe.router.gate", "feed_forward.w2"]  # activation_checkpoint.per_op_sac_force_recompute_mm_shapes_by_fqns = ["moe.router.gate", "feed_forward.w2"]`},
		{"empty", []string{opt, opt + "\n" + key + ` = []`}, []string{},
			`  op_force_recompute: []  # activation_checkpoint.per_op_sac_force_recompute_mm_shapes_by_fqns = []`},
		{"not op", []string{opt, "selective_ac_option = '2'\n" + key + ` = []`}, nil, ""},
	} {
		tt, err := ImportTorchtitan("deepseek_v3_16b.toml", ttFile(t, "deepseek_v3_16b.toml", c.edits...), ttH100x16)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		y := string(tt.Scenario())
		if c.line == "" && strings.Contains(y, "op_force_recompute") || c.line != "" && !strings.Contains(y, c.line+"\n") {
			t.Errorf("%s: the scenario's op_force_recompute line is not %q:\n%s", c.name, c.line, y)
		}
		s, err := Load("s.yaml", tt.Scenario(), nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := s.Training.OpForceRecompute
		if (got == nil) != (c.want == nil) || got != nil && !slices.Equal(*got, c.want) {
			t.Errorf("%s: op_force_recompute %v, want %v", c.name, got, c.want)
		}
	}
	_, err := ImportTorchtitan("deepseek_v3_16b.toml", ttFile(t, "deepseek_v3_16b.toml", opt, opt+"\n"+key+` = ["moe.router.gate", ""]`), ttH100x16)
	if want := `deepseek_v3_16b.toml:66:1: activation_checkpoint.per_op_sac_force_recompute_mm_shapes_by_fqns holds "", which every module's FQN contains`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("empty fragment: %v, want %q…", err, want)
	}
}

// TestOpForceRecomputeKey: training.op_force_recompute loads as given; an
// empty fragment, or one in the FQN of a module that is not an nn.Linear,
// is an error at its item; a fragment no Linear of the model's blocks
// holds loads with a warning at its item (torchtitan accepts it: it forces
// nothing), as does one naming one layer's Linear; and the key under
// another policy than op is warned of.
func TestOpForceRecomputeKey(t *testing.T) {
	head := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {preset: llama2-7b}\nparallelism: {dp: 8, zero_stage: 3}\n"
	for _, c := range []struct {
		training, err string
		warns         []string
	}{
		{"training: {recompute: op, op_force_recompute: [feed_forward.w2, attention.wo]}\n", "", nil},
		{"training: {recompute: op, op_force_recompute: []}\n", "", nil},
		{"training:\n  recompute: op\n  op_force_recompute: [feed_forward.w2, \"\"]\n", "s.yaml:7:41: op_force_recompute: an empty fragment is in every module's FQN", nil},
		{"training: {recompute: op, op_force_recompute: [feed_forward.w2, moe.router.gate]}\n", "",
			[]string{`s.yaml:5:65: op_force_recompute: "moe.router.gate" is in the FQN of no Linear of the model's blocks (they are such as attention.wq, attention.wo, feed_forward.w2): it forces nothing`}},
		// torchtitan's _apply_op_sac raises ValueError for a module
		// that is not an nn.Linear: the FeedForward, the attention, the
		// block itself (layers.1.).
		{"training: {recompute: op, op_force_recompute: [feed_forward]}\n", `s.yaml:5:48: op_force_recompute: "feed_forward" is in the FQN of layers.0.feed_forward, which is not an nn.Linear`, nil},
		{"training: {recompute: op, op_force_recompute: [attention]}\n", `s.yaml:5:48: op_force_recompute: "attention" is in the FQN of layers.0.attention, which is not an nn.Linear`, nil},
		{"training: {recompute: op, op_force_recompute: [w1, layers.1]}\n", `s.yaml:5:52: op_force_recompute: "layers.1" is in the FQN of layers.1., which is not an nn.Linear`, nil},
		// One layer's Linear: torchtitan forces it there, zerosim nowhere.
		{"training: {recompute: op, op_force_recompute: [layers.3.attention.wq]}\n", "",
			[]string{`s.yaml:5:48: op_force_recompute: "layers.3.attention.wq" names Linears of some layers only (their FQNs start layers.<i>.): zerosim matches the FQNs below the block, the same in every block, so it forces nothing here`}},
		{"training: {recompute: full, op_force_recompute: []}\n", "",
			[]string{"s.yaml:5:29: op_force_recompute counts nothing here: it is torchtitan's op policy's list, and training.recompute is full (set recompute: op, or delete the key)"}},
	} {
		s, err := Load("s.yaml", []byte(head+c.training), nil)
		if c.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), c.err) {
				t.Errorf("%q: %v, want %q…", c.training, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.training, err)
			continue
		}
		if !slices.Equal(s.Warnings, c.warns) {
			t.Errorf("%q: warnings %q, want %q", c.training, s.Warnings, c.warns)
		}
	}
	// A MoE model: the router is a module (TokenChoiceTopKRouter), its
	// gate the Linear; the experts (GroupedExperts) hold no Linear.
	moe := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {hf_config: testdata/hf-extra/qwen3-30b-a3b.json, layers: 2, seq_len: 4096}\n" +
		"parallelism: {dp: 8, zero_stage: 3}\ntraining: {recompute: op, op_force_recompute: [%s]}\n"
	if s, err := Load("s.yaml", []byte(fmt.Sprintf(moe, "moe.router.gate, attention.wk")), nil); err != nil || len(s.Warnings) != 0 {
		t.Errorf("MoE, the gate and wk: %v, warnings %q", err, s.Warnings)
	}
	for _, f := range []string{"moe.router", "experts"} {
		want := fmt.Sprintf("s.yaml:5:48: op_force_recompute: %q is in the FQN of layers.0.moe.", f)
		if _, err := Load("s.yaml", []byte(fmt.Sprintf(moe, f)), nil); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("MoE, %s: %v, want %q…", f, err, want)
		}
	}
}

// TestSetListForm (final read LOW-5): a --set that gives a list key a
// scalar is told the flag's list form; a file has lines for "- item", a
// flag has none.
func TestSetListForm(t *testing.T) {
	data, _ := Example("default")
	for set, want := range map[string]string{
		"training.op_force_recompute=zzz": `default.yaml: --set training.op_force_recompute=zzz: op_force_recompute: "zzz" is not a list (use a list such as --set training.op_force_recompute=[a,b])`,
		"cluster.placement=cp":            `default.yaml: --set cluster.placement=cp: placement: "cp" is not a list (use a list such as --set cluster.placement=[a,b])`,
	} {
		if _, err := Load("default.yaml", data, []string{set}); err == nil || err.Error() != want {
			t.Errorf("--set %s: %v, want %q", set, err, want)
		}
	}
}

// TestOpRecomputeAttentionKey: training.op_recompute_attention loads
// under recompute: op with attention_kernel cudnn; with another kernel it
// is refused at the key (torchtitan's _save_list before b39377f held
// SDPA's flash and memory-efficient ops, so only cuDNN's was rerun), as
// under context parallelism (not modelled); under another policy it is
// warned of.
func TestOpRecomputeAttentionKey(t *testing.T) {
	head := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: B200}\nmodel: {preset: llama3.1-8b}\nparallelism: {zero_stage: 3%s}\n"
	for _, c := range []struct {
		par, training, err string
		warns              []string
	}{
		{", dp: 8", "training: {recompute: op, attention_kernel: cudnn, op_recompute_attention: true}\n", "", nil},
		{", dp: 8", "training: {recompute: op, op_recompute_attention: true}\n",
			"s.yaml:5:27: op_recompute_attention describes torchtitan's op policy before b39377f, whose _save_list lacked only the cuDNN attention op (flash and memory-efficient SDPA were saved); attention_kernel is fa2 (set training.attention_kernel: cudnn, or delete the key)", nil},
		{", dp: 4, cp: 2", "training: {recompute: op, attention_kernel: cudnn, op_recompute_attention: true}\n",
			"s.yaml:5:52: op_recompute_attention under context parallelism (cp=2) is not modelled: ring attention reruns the kernel once per round (set parallelism.cp: 1, or delete the key)", nil},
		{", dp: 8", "training: {recompute: full, attention_kernel: cudnn, op_recompute_attention: true}\n", "",
			[]string{"s.yaml:5:54: op_recompute_attention counts nothing here: it is torchtitan's op policy's, and training.recompute is full (set recompute: op, or delete the key)"}},
	} {
		s, err := Load("s.yaml", []byte(fmt.Sprintf(head, c.par)+c.training), nil)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%q: %v, want %q", c.training, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.training, err)
			continue
		}
		if !slices.Equal(s.Warnings, c.warns) || !s.Training.OpRecomputeAttention {
			t.Errorf("%q: warnings %q, want %q (op_recompute_attention %v)", c.training, s.Warnings, c.warns, s.Training.OpRecomputeAttention)
		}
	}
}
