package zero

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
)

// keysYAML writes a scenario that sets every key of the format from the
// fuzzer's values: cluster (nodes, GPUs, NICs, placement, link presets and
// bandwidths, link and GPU overrides, host), offload, model (dimensions or a layer list
// with groups, tensors, FLOPs, times, activations), parallelism, training,
// communication (ZeRO++ included) and memory. Sizes stay small so one replay takes
// milliseconds; the loader, not this function, decides what is valid.
func keysYAML(a, b, c, d, e uint64, name string) string {
	pick := func(x *uint64, n uint64) uint64 { v := *x % n; *x /= n; return v }
	of := func(x *uint64, xs ...string) string { return xs[pick(x, uint64(len(xs)))] }
	stage := pick(&d, 4)
	nodes, gpn := pick(&a, 4)+1, pick(&a, 8)+1
	cp := []uint64{1, 1, 2}[pick(&a, 3)]
	dp := nodes * gpn / cp
	if pick(&a, 8) == 0 {
		dp++ // sometimes inconsistent on purpose
	}
	var y strings.Builder
	fmt.Fprintf(&y, "version: 1\nname: %q\ndescription: fuzz\ncluster:\n  nodes: %d\n  gpus_per_node: %d\n  gpu: %s\n", name, nodes, gpn,
		of(&a, "A100-40GB", "A100-80GB", "H100-80GB", "V100-16GB", "RTX4090"))
	fmt.Fprintf(&y, "  gpu_memory: %dGiB\n  peak_bf16: %dTFLOPS\n  hbm_bandwidth: %dGB/s\n", pick(&a, 80)+1, pick(&a, 1000)+1, pick(&a, 4000)+1)
	if pick(&b, 2) == 0 {
		fmt.Fprintf(&y, "  nics: per_node\n  nics_per_node: %d\n", pick(&b, 2)+1)
	} else {
		y.WriteString("  nics: per_gpu\n")
	}
	fmt.Fprintf(&y, "  placement: %s\n", of(&b, "[cp, dp]", "[dp, cp]"))
	fmt.Fprintf(&y, "  intra: {preset: %s, bandwidth: %dGB/s, latency: %dns}\n", of(&b, "NVLink3", "NVLink4", "PCIe4"), pick(&b, 900)+1, pick(&b, 5000))
	fmt.Fprintf(&y, "  inter: {bandwidth: %dGB/s, latency: %dns}\n", pick(&b, 100)+1, pick(&b, 10000))
	if pick(&b, 2) == 0 {
		fmt.Fprintf(&y, "  link_overrides: [{node: %d, gpu: %d, class: %s, bandwidth: %dGB/s, latency: %dns}]\n", pick(&b, nodes+1), pick(&b, gpn), of(&b, "intra", "inter"), pick(&b, 50)+1, pick(&b, 100))
	}
	if pick(&b, 2) == 0 {
		fmt.Fprintf(&y, "  gpu_overrides: [{rank: %d, speed: 0.%d}]\n", pick(&b, dp*cp+1), pick(&b, 9)+1)
	}
	if pick(&e, 3) != 0 {
		fmt.Fprintf(&y, "  host: {memory: %dGiB, pcie: {preset: PCIe4}, pcie_sharing: %s, sockets: %d, memory_bandwidth: %dGB/s, nvme_bandwidth: %dGB/s}\n",
			pick(&e, 2048)+1, of(&e, "per_gpu", "per_socket"), []uint64{1, 2, 4}[pick(&e, 3)], pick(&e, 500)+1, pick(&e, 40)+1)
	}
	if pick(&e, 3) == 0 {
		fmt.Fprintf(&y, "offload: {optimizer: %s, params: %s}\n", of(&e, "none", "cpu", "nvme"), of(&e, "none", "cpu", "nvme"))
	}
	y.WriteString("model:\n")
	if pick(&c, 2) == 0 {
		h := 64 * (pick(&c, 8) + 1)
		fmt.Fprintf(&y, "  kind: transformer\n  arch: %s\n  hidden: %d\n  layers: %d\n  heads: %d\n  kv_heads: %d\n  ffn: %d\n  vocab: %d\n  seq_len: %d\n",
			of(&c, "gpt", "llama"), h, pick(&c, 16)+1, 4, []uint64{1, 2, 4}[pick(&c, 3)], 4*h, pick(&c, 5000)+1, 64*(pick(&c, 8)+1))
	} else {
		fmt.Fprintf(&y, "  kind: %s\n  hidden: 64\n  groups: [{name: moe, precision: %s}]\n  layer_list:\n", of(&c, "mlp", "transformer"), of(&c, "bf16", "fp16", "fp32", "fp8"))
		for i := range pick(&c, 6) + 1 {
			fmt.Fprintf(&y, "  - {name: l%d, params: %d, group: %s, fwd_flops: %d, fwd: %dus, bwd: %dus, activation_bytes: %dKiB}\n",
				i, pick(&c, 1<<20)+1, of(&c, "dense", "moe"), pick(&c, 1<<30), pick(&c, 3), pick(&c, 3), pick(&c, 64))
		}
		fmt.Fprintf(&y, "  - {name: t, params: %d, tensors: [{name: w, shape: [%d, 64]}, {name: b, shape: [64]}]}\n", 64*(pick(&c, 8)+1)+64, pick(&c, 8)+1)
	}
	fmt.Fprintf(&y, "parallelism:\n  dp: %d\n  cp: %d\n  zero_stage: %d\n  k: %d\n", dp, cp, stage, []uint64{1, 2, 4, 3}[pick(&d, 4)])
	fmt.Fprintf(&y, "training:\n  micro_batch: %d\n  grad_accum: %d\n  param_dtype: bf16\n  master_dtype: fp32\n  optimizer: %s\n  lr: 0.001\n  beta1: 0.9\n  beta2: 0.95\n  eps: 1e-8\n  weight_decay: 0.1\n  recompute: %s\n  %s: 0.%d\n  steps: %d\n  seed: %d\n",
		pick(&d, 4)+1, pick(&d, 3)+1, of(&d, "adam", "adamw"), of(&d, "none", "selective", "full", "op"), of(&e, "compute_efficiency", "mfu"), pick(&d, 9)+1, pick(&d, 3)+1, pick(&d, 100))
	fmt.Fprintf(&y, "  attention: %s\n  dropout: 0.%d\n  recompute_every: %d\n", of(&e, "flash", "sdpa", "eager"), pick(&e, 3), pick(&e, 3)+1)
	fmt.Fprintf(&y, "  reduce_dtype: %s\n", of(&e, "param_dtype", "fp32"))
	fmt.Fprintf(&y, "communication:\n  bucket_size: %dKiB\n  algorithm: %s\n  overlap: %t\n  prefetch_depth: %d\n  max_inflight_allgathers: %d\n  zero1_allreduce: %t\n  overlap_param_gather: %t\n  padding: %s\n",
		64*(pick(&d, 64)+1), of(&d, "ring", "hierarchical", "tree", "auto"), pick(&d, 2) == 0, pick(&d, 4), pick(&d, 4)+1, pick(&d, 2) == 0, pick(&d, 2) == 0, of(&d, "toy", "megatron"))
	fmt.Fprintf(&y, "  boundary: %s\n  backward_prefetch_depth: %d\n  compute_interference: 0.%d\n  collective_interference: 0.%d\n",
		of(&e, "reshard", "fsdp1", "fsdp2", "deepspeed"), pick(&e, 3), pick(&e, 5), pick(&e, 5))
	fmt.Fprintf(&y, "  moe_dispatcher: %s\n", of(&e, "alltoall", "deepep", "flex", "hybridep"))
	if stage == 3 && pick(&e, 2) == 0 {
		fmt.Fprintf(&y, "  zero_quantized_weights: %t\n  zero_hpz_partition_size: %d\n  zero_quantized_gradients: %t\n", pick(&e, 2) == 0, []uint64{0, 1, 2, 4, 8}[pick(&e, 5)], pick(&e, 2) == 0)
	}
	fmt.Fprintf(&y, "memory:\n  runtime_context: %dMiB\n  nccl_buffers: %dMiB\n  activations: %t\n  allocator_overhead: 0.%d\n  host_lead: 0.%d\n", pick(&d, 1024), pick(&d, 1024), pick(&d, 2) == 0, pick(&e, 3), pick(&e, 10))
	return y.String()
}

// FuzzReplayKeys replays scenarios that set every key of the format (see
// keysYAML): whatever the loader accepts replays without a panic, to the
// same result twice, and the symmetric fast path equals the full
// simulation wherever it applies.
func FuzzReplayKeys(f *testing.F) {
	for i := range uint64(8) {
		f.Add(i*0x9e3779b97f4a7c15, i*0xbf58476d1ce4e5b9, i*0x94d049bb133111eb, i+1, i*0x2545f4914f6cdd1d, "fuzz")
	}
	f.Add(uint64(0), uint64(0), uint64(1), uint64(0), uint64(0), "a\x1b[31m\nb")
	f.Fuzz(func(t *testing.T, a, b, c, d, e uint64, name string) {
		replayChecks(t, []byte(keysYAML(a, b, c, d, e, name)), nil)
	})
}

// FuzzReplayYAML replays any file (and one --set flag) the loader accepts,
// starting from every embedded example and a file with every key.
func FuzzReplayYAML(f *testing.F) {
	for _, n := range scenarios.ExampleNames() {
		if n == "gpt3-175b-16k" {
			continue // 16,384 ranks: seconds per replay
		}
		data, _ := scenarios.Example(n)
		f.Add(data, "")
	}
	tiny, _ := scenarios.Example("seed002-tiny")
	for _, set := range []string{"parallelism.zero_stage=2", "communication.algorithm=tree", "training.recompute=full", "communication.bucket_size=1B", "cluster.gpu_overrides=[{rank: 1, speed: 0.5}]", "training.reduce_dtype=fp32"} {
		f.Add(tiny, set)
	}
	// Stage 0 under a stack that all-reduces every micro-step: countTasks'
	// bound must count a reduction per micro-step.
	for _, st := range []string{"torchtitan", "llm-foundry"} {
		f.Add(append(bytes.Replace(tiny, []byte("zero_stage: "), []byte("zero_stage: 0 #"), 1), []byte("\n  grad_accum: 8\nstack: "+st+"\n")...), "communication.bucket_size=1B")
	}
	f.Add([]byte(keysYAML(1, 2, 3, 4, 5, "all keys")), "")
	// Routed experts over ep 4 on 2 nodes of 2 GPUs, under each dispatcher
	// (deepep splits every all-to-all over the ep-rail and ep-node groups).
	moe := []byte("version: 1\ncluster: {nodes: 2, gpus_per_node: 2, gpu: H100-80GB}\nmodel:\n  kind: transformer\n  arch: llama\n  hidden: 64\n  layers: 1\n  heads: 4\n  ffn: 128\n  vocab: 256\n  seq_len: 64\n  layer_list:\n  - {name: embedding, params: 16384}\n  - {name: block.0, params: 16640, dims: {hidden: 64, heads: 4, kv_heads: 4, head_dim: 16}}\n  - {name: experts.0, params: 196608, group: expert, dims: {hidden: 64, experts: 8, top_k: 2, expert_ffn: 128}}\n  - {name: lm_head, params: 16384}\nparallelism: {dp: 4, zero_stage: 1, ep: 4}\ntraining: {micro_batch: 2, recompute: full}\n")
	for _, set := range []string{"", "communication.moe_dispatcher=deepep", "communication.moe_dispatcher=hybridep", "parallelism.zero_stage=3"} {
		f.Add(moe, set)
	}
	// FSDP at stage 3: the reserved peak is simulated (memory.SimulatesReserve).
	for _, set := range []string{"communication.boundary=fsdp1", "communication.boundary=fsdp2", "memory.expandable_segments=true"} {
		f.Add(bytes.Replace(moe, []byte("zero_stage: 1, ep: 4}"), []byte("zero_stage: 3, ep: 4}\ncommunication: {boundary: fsdp2}"), 1), set)
	}
	// torchtitan's chunked loss (training.loss_chunks) under FSDP2 with
	// [norm, lm_head] one group: a count that divides the 128 tokens, all
	// of them as chunks of one, and one that does not.
	dense := []byte("version: 1\ncluster: {nodes: 1, gpus_per_node: 2, gpu: H100-80GB}\nmodel:\n  kind: transformer\n  arch: llama\n  hidden: 64\n  layers: 2\n  heads: 4\n  ffn: 128\n  vocab: 256\n  seq_len: 64\nparallelism: {dp: 2, zero_stage: 3}\ncommunication: {boundary: fsdp2_head}\ntraining: {micro_batch: 2, recompute: full, reduce_dtype: fp32}\n")
	for _, set := range []string{"training.loss_chunks=8", "training.loss_chunks=128", "training.loss_chunks=3"} {
		f.Add(dense, set)
	}
	// Two ep groups of 4 nodes of 2 (8 ranks each).
	f.Add(bytes.Replace(bytes.Replace(moe, []byte("nodes: 2,"), []byte("nodes: 8,"), 1), []byte("dp: 4, zero_stage: 1, ep: 4"), []byte("dp: 16, zero_stage: 1, ep: 8"), 1),
		"communication.moe_dispatcher=deepep")
	// A sliding window and an attention chunk shorter than seq_len.
	f.Add([]byte("version: 1\ncluster: {nodes: 1, gpus_per_node: 2, gpu: H100-80GB}\nmodel:\n  kind: transformer\n  arch: llama\n  hidden: 64\n  layers: 2\n  heads: 4\n  ffn: 128\n  vocab: 256\n  seq_len: 64\n  layer_list:\n  - {name: embedding, params: 16384}\n  - {name: block.0, params: 40960, dims: {hidden: 64, heads: 4, kv_heads: 2, head_dim: 16, ffn: 128, window: 16}}\n  - {name: block.1, params: 40960, dims: {hidden: 64, heads: 4, kv_heads: 2, head_dim: 16, ffn: 128, attention_chunk: 24}}\n  - {name: lm_head, params: 16384}\nparallelism: {dp: 2, zero_stage: 3}\ntraining: {micro_batch: 2}\n"), "training.attention=sdpa")
	f.Fuzz(func(t *testing.T, data []byte, set string) {
		var sets []string
		if set != "" {
			sets = []string{set}
		}
		replayChecks(t, data, sets)
	})
}

func replayChecks(t *testing.T, data []byte, sets []string) {
	s, err := scenarios.Load("f.yaml", data, sets)
	if err != nil {
		return
	}
	// Keep one execution in milliseconds: the limits let a replay take
	// seconds, which would stall the fuzzer (BenchmarkReplayLargest covers
	// those).
	mrep, err := memory.Analyze(s, memory.Options{})
	if err != nil {
		return
	}
	bound := countTasks(s, mrep.Groups).bound()
	if bound*int64(s.N()) > 50_000 {
		return
	}
	res, err := Replay(s, Options{})
	if err != nil {
		if strings.ContainsAny(err.Error(), "\n\r") {
			t.Fatalf("error is not one line: %q", err)
		}
		return
	}
	if n := int64(len(res.Schedule.Tasks)); n > bound {
		t.Fatalf("%d tasks, more than the bound %d the limits are checked with before the build", n, bound)
	}
	if res.StepTime <= 0 || len(res.Ranks) != s.N() || res.Memory.Peak < 0 {
		t.Fatalf("step %v, %d ranks of %d, peak %d", res.StepTime, len(res.Ranks), s.N(), res.Memory.Peak)
	}
	again, err := Replay(s, Options{})
	if err != nil || again.StepTime != res.StepTime || again.Memory.Peak != res.Memory.Peak {
		t.Fatalf("second replay differs: %v", err)
	}
	if Symmetric(s) {
		full, err := Replay(s, Options{Full: true})
		if err != nil || full.StepTime != res.StepTime {
			t.Fatalf("symmetric step %v, full %v (%v)", res.StepTime, full.StepTime, err)
		}
	}
}
