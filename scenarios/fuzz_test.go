package scenarios

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// FuzzLoad checks that no input (file bytes and one --set flag) panics,
// that every error is a one-line *Error, that Load is deterministic, and
// that a resolved scenario is consistent.
func FuzzLoad(f *testing.F) {
	for _, n := range ExampleNames() {
		b, _ := Example(n)
		f.Add(b, "")
	}
	tiny, _ := Example("seed002-tiny")
	for _, set := range []string{"parallelism.k=2", "cluster.placement=[dp, cp]", "model.layers=3", "a.b.c=1", "cluster.gpu_overrides[0].speed=1", "x", "=", "model=[1", "training.compile=blocks+loss", "training.compile=model", "training.rope_impl=rotation", "training.rope_impl=real", "training.norm_impl=fused", "training.norm_impl=triton", "training.cross_entropy=fused", "training.cross_entropy=bf16", "training.master_dtype=none", "training.master_dtype=bf16", "training.optimizer_state_dtype=bf16", "training.optimizer_state_dtype=fp32", "training.keep_logits=fp32", "training.keep_logits=bf16", "training.keep_logits=yes", "training.loss_chunks=8", "training.loss_chunks=0", "training.loss_chunks=x", "training.shard_dtype=fp32", "training.reduce_dtype=fp32", "training.reduce_dtype=param_dtype", "training.reduce_dtype=fp64", "training.optimizer_impl=composer", "training.grad_clip=norm", "training.flat_param_views=true", "training.mfu=0.4", "training.compute_efficiency=0.7", "training.attention_kernel=fa3", "communication.collective_interference=0.3", "memory.host_lead=0.5", "memory.host_lead=2", "stack=torchtitan", "stack=megatron", "stack=deepspeed", "stack=llm-foundry", "stack=fms-fsdp", "stack=torchtitn", "stack=[1]", "parallelism.dp=auto", "parallelism.dp='auto'", "parallelism.dp=[auto]", "parallelism.cp=auto"} {
		f.Add(tiny, set)
	}
	for _, s := range []string{
		"",
		"version: 1\n",
		"[1, 2]",
		"a: &a [*a, *a]\nb: *a\n",
		"version: 1\n---\nversion: 1\n",
		"version: 1\ncluster: {nodes: 99999999999999999999, gpus_per_node: -1}\n",
		"version: 1\nmodel: {params: 1e400}\n",
		"version: 1\n<<: {cluster: {nodes: 1}}\n",
		"version: 1\nmodel:\n  layer_list:\n  - {name: a, tensors: [{name: t, shape: [99999999999, 99999999999]}]}\n",
		"version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H200}\nmodel: {hf_config: testdata/hf/gpt2/config.json, seq_len: 512}\nparallelism: {dp: 8, zero_stage: 3}\n",
		"version: 1\ncluster: {nodes: 2, gpus_per_node: 8, gpu: MI300X, gpu_memory: 192GB}\nmodel: {preset: mixtral-8x7b}\nparallelism: {dp: 16, zero_stage: 1, ep: 8}\n",
		"version: 1\ncluster: {nodes: 1, gpus_per_node: 2, gpu: H100-80GB}\nmodel:\n  kind: transformer\n  arch: llama\n  hidden: 64\n  layers: 2\n  heads: 4\n  ffn: 128\n  vocab: 256\n  seq_len: 64\n  layer_list:\n  - {name: embedding, params: 16384}\n  - {name: block.0, params: 40960, dims: {hidden: 64, heads: 4, kv_heads: 2, head_dim: 16, ffn: 128, window: 16}}\n  - {name: block.1, params: 40960, dims: {hidden: 64, heads: 4, kv_heads: 2, head_dim: 16, ffn: 128, attention_chunk: 24}}\n  - {name: lm_head, params: 16384}\nparallelism: {dp: 2, zero_stage: 3}\ntraining: {micro_batch: 2, attention: sdpa}\n",
	} {
		f.Add([]byte(s), "")
	}
	f.Fuzz(func(t *testing.T, data []byte, set string) {
		var sets []string
		if set != "" {
			sets = []string{set}
		}
		s, err := Load("f.yaml", data, sets)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T is not *Error: %v", err, err)
			}
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error is not one line: %q", err.Error())
			}
			if _, err2 := Load("f.yaml", data, sets); err2 == nil || err2.Error() != err.Error() {
				t.Fatalf("second Load: %v, first: %v", err2, err)
			}
			return
		}
		if s.Model.TotalParams() != int64(s.Model.Params) || s.N() != s.GPUs() || len(s.Model.LayerList) == 0 ||
			s.N()%s.Parallelism.K != 0 || s.Cluster.Intra.Bandwidth <= 0 || s.Cluster.Inter.Bandwidth <= 0 {
			t.Fatalf("resolved scenario is inconsistent: %+v", s)
		}
		s2, err := Load("f.yaml", data, sets)
		if err != nil || !reflect.DeepEqual(s, s2) {
			t.Fatalf("second Load differs: %v", err)
		}
	})
}
