package scenarios

import (
	"fmt"
	"strings"
	"testing"
)

// TestStoreParamRemainders: training.store_param_remainders is taken where
// Apex's DistributedFusedAdam and Transformer Engine's FusedAdam store
// remainders (Megatron's distributed optimizer over bf16 params beside an
// fp32 master, resolveParamRemainders) and refused, at the key, elsewhere.
func TestStoreParamRemainders(t *testing.T) {
	const base = "version: 1\nstack: megatron\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {preset: llama3.1-8b}\nparallelism: {dp: 8, zero_stage: 1}\n"
	const train = "training: {store_param_remainders: true}\n"
	s, err := Load("a.yaml", []byte(base+train), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !s.ParamRemainders() {
		t.Errorf("ParamRemainders false at zero_stage 1")
	}
	if s.Parallelism.Stage = 2; s.ParamRemainders() {
		t.Errorf("ParamRemainders true at zero_stage 2 (a stage comparison keeps the whole master)")
	}
	const what = "store_param_remainders keeps the fp32 master as the bf16 param and an int16 remainder (Apex's DistributedFusedAdam, NeMo's distributed_fused_adam; Transformer Engine's FusedAdam under Megatron-Core's --use-precision-aware-optimizer)"
	for _, tc := range []struct {
		name, doc, train, key, want string
	}{
		{"stack", strings.Replace(base, "stack: megatron", "stack: torchtitan", 1), train, "store_param_remainders", what + ", modelled with Megatron's distributed optimizer, and stack is \"torchtitan\" (set stack: megatron, or delete the key)"},
		{"stage 0", strings.Replace(base, "zero_stage: 1", "zero_stage: 0", 1), train, "store_param_remainders", what + ", which Megatron-Core takes with the distributed optimizer only, and zero_stage is 0 (set zero_stage: 1, or delete the key)"},
		{"stage 3", strings.Replace(base, "zero_stage: 1", "zero_stage: 3", 1), train, "store_param_remainders", what + ", which Megatron-Core takes with the distributed optimizer only, and zero_stage is 3 (set zero_stage: 1, or delete the key)"},
		{"fp16", base, "training: {param_dtype: fp16, store_param_remainders: true}\n", "store_param_remainders", what + ": the bf16 param is the master's top half, and param_dtype is fp16 (set param_dtype: bf16, or delete the key)"},
		{"foreach", base, "training: {optimizer_impl: foreach, store_param_remainders: true}\n", "optimizer_impl", "optimizer_impl foreach does not go with training.store_param_remainders: the remainders are Apex's and Transformer Engine's fused Adam kernels (delete optimizer_impl, or set fused)"},
		{"fp8 params", base, "training: {fp8: te, fp8_params: true, store_param_remainders: true}\n", "store_param_remainders", what + " for bf16 parameters only, and training.fp8_params makes the blocks fp8 (NeMo stores a full fp32 master beside fp8 params: delete one of the keys)"},
	} {
		_, err := Load("a.yaml", []byte(tc.doc+tc.train), nil)
		want := fmt.Sprintf("a.yaml:6:%d: %s", strings.Index(tc.train, tc.key)+1, tc.want)
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v\nwant %s", tc.name, err, want)
		}
	}
}

// TestImportMegatronPrecisionAware: --use-precision-aware-optimizer with
// --bf16 and the default fp32 --main-params-dtype, --exp-avg-dtype and
// --exp-avg-sq-dtype is Transformer Engine's FusedAdam with
// store_param_remainders (OptimizerConfig's default, TE 2.1 and later):
// training.store_param_remainders. Lower-precision master or states, an
// fp8 recipe other than delayed (Megatron-Core keeps the master) and
// fp8 primary weights keep the fp32 master with a note; without the
// distributed optimizer OptimizerConfig refuses it. --main-grads-dtype
// bf16 keeps validate_args from accumulating in fp32 (arguments.py lines
// 587-594 at d580efc6).
func TestImportMegatronPrecisionAware(t *testing.T) {
	base := "--num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 128 --max-position-embeddings 128 --micro-batch-size 2 --tokenizer-type NullTokenizer --vocab-size 1000 --use-distributed-optimizer "
	for _, tc := range []struct {
		name, args string
		keys       []string // lines the scenario must hold
		note       string   // a note it must give ("" none about the optimizer)
	}{
		{"bf16", "--bf16 --use-precision-aware-optimizer", []string{"store_param_remainders: true", "reduce_dtype: fp32"}, ""},
		{"bf16 main grads", "--bf16 --use-precision-aware-optimizer --main-grads-dtype bf16", []string{"store_param_remainders: true", "reduce_dtype: param_dtype"}, ""},
		{"delayed fp8", "--bf16 --fp8-format hybrid --use-precision-aware-optimizer", []string{"store_param_remainders: true"}, ""},
		{"tensorwise fp8", "--bf16 --fp8-format hybrid --fp8-recipe tensorwise --use-precision-aware-optimizer", nil, "--fp8-recipe tensorwise: Megatron-Core keeps the fp32 master itself"},
		{"fp8 params", "--bf16 --fp8-format hybrid --fp8-param-gather --use-precision-aware-optimizer", nil, "store_param_remainders beside fp8 primary weights is not modelled"},
		// The fp32 master keeps its remainders whatever the moments' dtypes
		// (FusedAdam.__init__, fused_adam.py at TransformerEngine d0067d0);
		// the bf16 moments are noted with the bytes zerosim counts above
		// them (mgimp31).
		{"bf16 states", "--bf16 --use-precision-aware-optimizer --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16", []string{"store_param_remainders: true"}, "with --exp-avg-dtype bf16, --exp-avg-sq-dtype bf16: master params and optimizer states below fp32 are not modelled (fp32 master and states: zerosim's optimizer memory is an upper bound by 4 bytes per element of the rank's optimizer shard, 2 of exp_avg in bf16 and 2 of exp_avg_sq in bf16)"},
		{"fp16", "--fp16 --use-precision-aware-optimizer", nil, "without --bf16"},
		{"off", "--bf16", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ImportMegatron("args.txt", []byte(base+tc.args), MegatronOptions{Nodes: 1, GPU: "H100-80GB"})
			if err != nil {
				t.Fatal(err)
			}
			out := string(m.Scenario())
			for _, k := range tc.keys {
				if !strings.Contains(out, "  "+k+"  #") {
					t.Errorf("scenario lacks %q:\n%s", k, out)
				}
			}
			if len(tc.keys) == 0 && strings.Contains(out, "  store_param_remainders:") {
				t.Errorf("scenario sets store_param_remainders:\n%s", out)
			}
			checkOneNote(t, m.Notes, "precision-aware", tc.note)
			if _, err := Load("args.yaml", []byte(out), nil); err != nil {
				t.Errorf("imported scenario does not load: %v", err)
			}
		})
	}
	for _, tc := range []struct{ name, args, want string }{
		{"no distributed optimizer", strings.Replace(base, "--use-distributed-optimizer ", "", 1) + "--bf16 --use-precision-aware-optimizer",
			"--use-precision-aware-optimizer needs --use-distributed-optimizer (OptimizerConfig asserts \"--use-precision-aware-optimizer only supported with distributed optimizer\", megatron/core/optimizer/optimizer_config.py:169-171 at d580efc6: add it or remove this)"},
		{"main grads beside fp32 accumulation", base + "--bf16 --accumulate-allreduce-grads-in-fp32 --main-grads-dtype bf16",
			"--main-grads-dtype bf16 beside --accumulate-allreduce-grads-in-fp32"},
		{"bad dtype", base + "--bf16 --use-precision-aware-optimizer --main-params-dtype bf16",
			"--main-params-dtype bf16 is not one of Megatron's choices (use fp32, fp16)"},
	} {
		_, err := ImportMegatron("args.txt", []byte(tc.args), MegatronOptions{Nodes: 1})
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "args.txt:1:") {
			t.Errorf("%s: error %v, want one line at args.txt:1: with %q", tc.name, err, tc.want)
		}
	}
}
