package scenarios

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestStoreParamRemaindersMasterAndImpl: the remainders are the low half
// of an fp32 master beside fp32 moments (Apex's StateBucket, TE's
// FusedAdam: resolveParamRemainders), so a bf16 master is refused at the
// key, also with its states set back to fp32 (communication.boundary:
// deepspeed is where the loader takes master_dtype bf16 under stack
// megatron; fp32 states beside it need ZeRO-Offload's CPU Adam), and so is optimizer_impl composer, which is no fused Adam
// kernel, at optimizer_impl.
func TestStoreParamRemaindersMasterAndImpl(t *testing.T) {
	const base = "version: 1\nstack: megatron\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {preset: llama3.1-8b}\nparallelism: {dp: 8, zero_stage: 1}\n"
	const what = "store_param_remainders keeps the fp32 master as the bf16 param and an int16 remainder (Apex's DistributedFusedAdam, NeMo's distributed_fused_adam; Transformer Engine's FusedAdam under Megatron-Core's --use-precision-aware-optimizer)"
	for _, tc := range []struct {
		name, train, key, want string
	}{
		{"bf16 master, bf16 states", "training: {master_dtype: bf16, store_param_remainders: true}\n", "store_param_remainders",
			what + " beside an fp32 master and fp32 states (master_dtype bf16, optimizer_state_dtype bf16: delete the key)"},
		{"bf16 master, fp32 states", "training: {master_dtype: bf16, optimizer_state_dtype: fp32, store_param_remainders: true}\noffload: {optimizer: cpu}\n", "store_param_remainders",
			what + " beside an fp32 master and fp32 states (master_dtype bf16, optimizer_state_dtype fp32: delete the key)"},
		{"composer", "training: {optimizer_impl: composer, store_param_remainders: true}\n", "optimizer_impl",
			"optimizer_impl composer does not go with training.store_param_remainders: the remainders are Apex's and Transformer Engine's fused Adam kernels (delete optimizer_impl, or set fused)"},
	} {
		doc := base + tc.train + "communication: {boundary: deepspeed}\n"
		_, err := Load("a.yaml", []byte(doc), nil)
		want := "a.yaml:6:" + strconv.Itoa(strings.Index(tc.train, tc.key)+1) + ": " + tc.want
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v\nwant %s", tc.name, err, want)
		}
	}
	// fused, the kernels' own implementation, loads.
	if _, err := Load("a.yaml", []byte(base+"training: {optimizer_impl: fused, store_param_remainders: true}\n"), nil); err != nil {
		t.Errorf("optimizer_impl fused: %v", err)
	}
}

// TestImportMegatronPrecisionAwareEdges: --main-grads-dtype fp32 given
// explicitly is Megatron's default (arguments.py: fp32 main grads), so the
// gradients stay fp32 (reduce_dtype fp32); --fp8-param-gather without
// --fp8-format makes no fp8 primary weights (fp8 is off), so the bf16
// params keep their int16 remainders; and --transformer-impl local on a
// LayerNorm (GPT) model sets no norm_impl, whose aten_fused is
// torch.nn.RMSNorm's kernel (the loader refuses it for GPT blocks).
func TestImportMegatronPrecisionAwareEdges(t *testing.T) {
	base := "--num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 128 --max-position-embeddings 128 --micro-batch-size 2 --tokenizer-type NullTokenizer --vocab-size 1000 --use-distributed-optimizer "
	for _, tc := range []struct {
		name, args string
		has, lacks []string
	}{
		{"main grads fp32 given", "--bf16 --use-precision-aware-optimizer --main-grads-dtype fp32", []string{"store_param_remainders: true", "reduce_dtype: fp32"}, []string{"reduce_dtype: param_dtype"}},
		{"param gather without fp8", "--bf16 --fp8-param-gather --use-precision-aware-optimizer", []string{"store_param_remainders: true"}, []string{"fp8_params:"}},
		{"local GPT", "--bf16 --transformer-impl local", []string{"transformer_impl: local"}, []string{"norm_impl:"}},
	} {
		m, err := ImportMegatron("args.txt", []byte(base+tc.args), MegatronOptions{Nodes: 1, GPU: "H100-80GB"})
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		out := string(m.Scenario())
		for _, k := range tc.has {
			if !strings.Contains(out, "  "+k+"  #") {
				t.Errorf("%s: scenario lacks %q:\n%s", tc.name, k, out)
			}
		}
		for _, k := range tc.lacks {
			if strings.Contains(out, "  "+k) {
				t.Errorf("%s: scenario has %q:\n%s", tc.name, k, out)
			}
		}
		if _, err := Load("args.yaml", []byte(out), nil); err != nil {
			t.Errorf("%s: imported scenario does not load: %v", tc.name, err)
		}
	}
}

// TestNormATenHFBlocks: norm_impl aten_fused under Megatron's local block
// takes a Hugging Face model whose blocks are Llama's (Llama 3.2 1B) and
// refuses one whose blocks are GPT's (GPT-2: LayerNorm, apex's
// FusedLayerNorm in the local spec) at the key.
func TestNormATenHFBlocks(t *testing.T) {
	const train = "training: {transformer_impl: local, norm_impl: aten_fused}"
	const doc = "version: 1\nstack: megatron\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {hf_config: %s}\nparallelism: {dp: 8, zero_stage: 1}\ntraining: {transformer_impl: local, norm_impl: aten_fused}\n"
	if !strings.Contains(doc, "\n"+train+"\n") {
		t.Fatal("doc lacks the training line")
	}
	if _, err := Load("testdata/hf/s.yaml", []byte(strings.Replace(doc, "%s", "llama-3.2-1b/config.json", 1)), nil); err != nil {
		t.Errorf("Llama 3.2 1B: %v", err)
	}
	_, err := Load("testdata/hf/s.yaml", []byte(strings.Replace(doc, "%s", "gpt2/config.json", 1)), nil)
	want := "testdata/hf/s.yaml:6:" + strconv.Itoa(strings.Index(train, "norm_impl")+1) + ": norm_impl=aten_fused is torch.nn.RMSNorm's fused kernel, and this model's blocks are GPT2LMHeadModel's"
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "whose local norm is apex's FusedLayerNorm (delete training.norm_impl)") {
		t.Errorf("GPT-2: %v\nwant %s…", err, want)
	}
}

// TestGptOssBiasDims: the block dims carry the file's attention_bias to
// the activation and recompute models (an addmm is never saved by the op
// policy): GptOssAttention's q, k, v and o_proj take
// bias=config.attention_bias (modeling_gpt_oss.py at 6edf5b31), the
// experts' biases (gate_up_proj_bias, down_proj_bias) are there whatever
// it says.
func TestGptOssBiasDims(t *testing.T) {
	raw, err := os.ReadFile("testdata/hf-extra/gpt-oss-20b.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, bias := range []bool{true, false} {
		data := strings.Replace(string(raw), `"attention_bias": true`, `"attention_bias": `+strconv.FormatBool(bias), 1)
		hm, err := ImportHF("gpt-oss-20b.json", []byte(data))
		if err != nil {
			t.Fatal(err)
		}
		if d := hm.Dims; d.QKVBias != bias || d.OBias != bias || !d.MLPBias {
			t.Errorf("attention_bias %t: QKVBias %t, OBias %t, MLPBias %t; want %t, %t, true", bias, d.QKVBias, d.OBias, d.MLPBias, bias, bias)
		}
	}
}
