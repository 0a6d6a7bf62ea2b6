package scenarios

import (
	"errors"
	"strings"
	"testing"
)

// baseYAML is a small valid scenario that the error cases edit.
const baseYAML = `version: 1
cluster:
  nodes: 2
  gpus_per_node: 4
  gpu: A100-80GB
model:
  preset: gpt3-125m
parallelism:
  dp: 8
  zero_stage: 1
`

// rep replaces the first old in baseYAML by new.
func rep(old, new string) string { return strings.Replace(baseYAML, old, new, 1) }

// TestLoadErrors checks the exact one-line message, with file:line:col, of
// every kind of bad input.
func TestLoadErrors(t *testing.T) {
	if _, err := Load("s.yaml", []byte(baseYAML), nil); err != nil {
		t.Fatalf("base scenario: %v", err)
	}
	for _, tc := range []struct{ name, in, want string }{
		{"empty file", "",
			"s.yaml: empty file (a scenario starts with \"version: 1\")"},
		{"only comments", "# only a comment\n",
			"s.yaml: no YAML document, only comments (a scenario starts with \"version: 1\")"},
		{"list document", "- 1\n- 2\n",
			"s.yaml:1:1: the document is a list, not a mapping (a scenario is a mapping that starts with \"version: 1\")"},
		{"scalar document", "hello\n",
			"s.yaml:1:1: the document is \"hello\", not a mapping (a scenario is a mapping that starts with \"version: 1\")"},
		{"two documents", baseYAML + "---\nversion: 1\n",
			"s.yaml:11:1: a second YAML document starts here (a scenario file holds exactly one document)"},
		{"syntax error", "version: 1\ncluster: [\n",
			"s.yaml:2:1: invalid YAML: did not find expected node content (fix the YAML syntax on this line)"},
		// yaml.v3 names no line for an error on the first (an error
		// message piped into zerosim run -): it said "s.yaml: invalid
		// YAML: …", no position.
		{"syntax error on line 1", "zerosim: x.sh: the tokenizer reads: give\n",
			"s.yaml:1:1: invalid YAML: mapping values are not allowed in this context (fix the YAML syntax on this line)"},
		// yaml.v3's reader gives no position for a byte that is not
		// UTF-8 on any line: it is not line 1's (the fallback above).
		{"not UTF-8 on line 3", "version: 1\ncluster: {nodes: 1}\nmodel: {preset: \"a\xff\"}\n",
			"s.yaml:3:19: invalid YAML: byte 0xff is not UTF-8 (save the file as UTF-8 text)"},
		{"version 2", rep("version: 1", "version: 2"),
			"s.yaml:1:1: version=2 is not supported (use version: 1)"},
		{"version missing", rep("version: 1\n", ""),
			"s.yaml: version is missing (start the file with \"version: 1\")"},
		{"unknown key", rep("nodes: 2", "nodez: 2"),
			"s.yaml:3:3: unknown key \"nodez\" in cluster (did you mean \"nodes\"?)"},
		{"nodes not a number", rep("nodes: 2", "nodes: two"),
			"s.yaml:3:10: nodes: \"two\" is not an integer (use a whole number)"},
		{"nodes fraction", rep("nodes: 2", "nodes: 2.5"),
			"s.yaml:3:10: nodes: 2.5 is not an integer (use a whole number)"},
		{"nodes zero", rep("nodes: 2", "nodes: 0"),
			"s.yaml:3:3: nodes=0 is out of range (use 1 to 65536)"},
		{"nodes overflow", rep("nodes: 2", "nodes: 99999999999999999999"),
			"s.yaml:3:10: nodes: 99999999999999999999 does not fit in 64 bits (use a whole number below 2^63)"},
		{"unknown gpu", rep("gpu: A100-80GB", "gpu: A200"),
			"s.yaml:5:3: gpu \"A200\" is unknown (use V100-16GB, V100-32GB, A100-40GB, A100-80GB, A800-80GB, H100-80GB, H200, B200, GB200, B300, GB300, MI300X, MI325X, MI350X, MI355X, L40S, A10G, L4, RTX4090 or RTX5090, or give gpu_memory, peak_bf16 and hbm_bandwidth)"},
		{"bad size unit", rep("gpu: A100-80GB", "gpu: A100-80GB\n  gpu_memory: 80XB"),
			"s.yaml:6:15: gpu_memory: \"80XB\" is not a size (use a size such as 80GiB, 2GB, 512MiB or 4096B)"},
		{"size not a scalar", rep("gpu: A100-80GB", "gpu: A100-80GB\n  gpu_memory: [80GB]"),
			"s.yaml:6:15: gpu_memory: expected a size, got a list"},
		{"negative size", rep("gpu: A100-80GB", "gpu: A100-80GB\n  gpu_memory: -80GB"),
			"s.yaml:6:15: gpu_memory: \"-80GB\" is negative (a size must be ≥ 0)"},
		{"size overflow", rep("gpu: A100-80GB", "gpu: A100-80GB\n  gpu_memory: 99999999999PiB"),
			"s.yaml:6:15: gpu_memory: \"99999999999PiB\": value does not fit in 64 bits (the largest size is 9223372036854775807 bytes)"},
		{"unknown link preset", rep("gpu: A100-80GB", "gpu: A100-80GB\n  intra: {preset: NVLink9}"),
			"s.yaml:6:11: preset \"NVLink9\" is unknown (use NVLink2, NVSwitch, NVLink3, NVLink3-A800, NVLink4, NVLink5, xGMI, PCIe3, PCIe4, PCIe5, EDR, HDR, NDR, XDR, RoCE400, RoCE200, RoCE100, EFA-p4d, EFA-p5, TCPXO, Eth40 or Eth100)"},
		{"bandwidth not whole bytes", rep("gpu: A100-80GB", "gpu: A100-80GB\n  inter: {bandwidth: 1bps}"),
			"s.yaml:6:22: bandwidth: \"1bps\" is not a whole number of bytes per second (zerosim counts whole bytes per second; round it)"},
		{"bad nics", rep("gpu: A100-80GB", "gpu: A100-80GB\n  nics: per_rack"),
			"s.yaml:6:3: nics \"per_rack\" is unknown (use per_gpu or per_node)"},
		{"placement not a permutation", rep("gpu: A100-80GB", "gpu: A100-80GB\n  placement: [dp, dp]"),
			"s.yaml:6:3: placement [dp, dp] is not a permutation of [cp, dp] (use [cp, dp] or [dp, cp])"},
		{"placement not a list", rep("gpu: A100-80GB", "gpu: A100-80GB\n  placement: cp"),
			"s.yaml:6:14: placement: \"cp\" is not a list (use a list such as [a, b] or one \"- item\" per line)"},
		{"override node out of range", rep("gpu: A100-80GB", "gpu: A100-80GB\n  link_overrides:\n  - {node: 2, class: inter, bandwidth: 10GB/s}"),
			"s.yaml:7:6: node=2 is out of range (the cluster has nodes 0 to 1)"},
		{"override rank out of range", rep("gpu: A100-80GB", "gpu: A100-80GB\n  gpu_overrides:\n  - {rank: 8, speed: 0.5}"),
			"s.yaml:7:6: rank=8 is out of range (ranks are 0 to 7)"},
		{"speed zero", rep("gpu: A100-80GB", "gpu: A100-80GB\n  gpu_overrides:\n  - {rank: 1, speed: 0}"),
			"s.yaml:7:15: speed=0 is out of range (use a factor > 0 and ≤ 1000, e.g. 0.8 for 20% slower)"},
		{"unknown model preset", rep("preset: gpt3-125m", "preset: gpt4"),
			"s.yaml:7:3: preset \"gpt4\" is unknown (use gpt3-125m, gpt3-350m, gpt3-760m, gpt3-1.3b, gpt3-2.7b, gpt3-6.7b, gpt3-13b, gpt3-175b, llama2-7b, llama2-13b, llama2-70b, llama3.2-1b, llama3.2-3b, llama3.1-8b, llama3.1-70b, llama3.1-405b, mistral-7b, mixtral-8x7b, mixtral-8x22b, qwen2.5-7b, qwen2.5-72b, gemma2-9b, gemma2-27b, gpt-neox-20b, qwen3-8b, qwen3-30b-a3b, deepseek-v2-lite, phi3.5-mini, falcon-7b, tiny-transformer or residual-mlp-4096)"},
		{"params exponent", rep("preset: gpt3-125m", "params: 1e400"),
			"s.yaml:7:11: params: \"1e400\" has an exponent out of range for a count (use an exponent from -30 to 30)"},
		{"negative params", rep("preset: gpt3-125m", "params: -7B"),
			"s.yaml:7:11: params: \"-7B\" is negative (a count must be ≥ 0)"},
		{"params conflict", rep("preset: gpt3-125m", "preset: gpt3-125m\n  params: 7B"),
			"s.yaml:8:3: params=7000000000 does not match the model's layers, which add up to 125226240 (delete params or fix it)"},
		{"dp\u00b7cp mismatch", rep("dp: 8", "dp: 6"),
			"s.yaml:9:3: dp·cp=6 does not equal nodes·gpus_per_node=8 (use dp·cp = 8, or dp: auto to fill the cluster)"},
		{"zero_stage 4", rep("zero_stage: 1", "zero_stage: 4"),
			"s.yaml:10:3: zero_stage=4 is out of range (use 0, 1, 2 or 3)"},
		{"k not dividing", rep("zero_stage: 1", "zero_stage: 1\n  k: 3"),
			"s.yaml:11:3: k=3 does not divide dp·cp=8 (use a divisor of 8: 1, 2, 4, 8)"},
		{"mfu above 1", baseYAML + "training:\n  mfu: 1.5\n",
			"s.yaml:12:3: mfu=1.5 is out of range (use a fraction in (0, 1] such as 0.4)"},
		{"mfu and compute_efficiency", baseYAML + "training:\n  mfu: 0.4\n  compute_efficiency: 0.7\n",
			"s.yaml:12:3: give training.mfu (the model FLOPs utilization to reach) or training.compute_efficiency (the fraction of peak matmuls reach), not both"},
		{"compute_efficiency 0", baseYAML + "training:\n  compute_efficiency: 0\n",
			"s.yaml:12:3: compute_efficiency=0 is out of range (use a fraction in (0, 1] such as 0.8)"},
		{"unknown attention", baseYAML + "training:\n  attention: ring\n",
			"s.yaml:12:3: attention \"ring\" is unknown (use flash, sdpa or eager)"},
		{"unknown attention kernel", baseYAML + "training:\n  attention_kernel: fa1\n",
			"s.yaml:12:3: attention_kernel \"fa1\" is unknown (use fa2, fa3, cudnn, te, triton or eager)"},
		{"eager kernel with flash", baseYAML + "training:\n  attention: flash\n  attention_kernel: eager\n",
			"s.yaml:13:3: attention_kernel=eager does not go with training.attention=flash (use attention_kernel: eager with attention: eager, and fa2, fa3, cudnn, te or triton with flash or sdpa)"},
		{"fused kernel with eager", baseYAML + "training:\n  attention: eager\n  attention_kernel: triton\n",
			"s.yaml:13:3: attention_kernel=triton does not go with training.attention=eager (use attention_kernel: eager with attention: eager, and fa2, fa3, cudnn, te or triton with flash or sdpa)"},
		{"fa3 on A100", baseYAML + "training:\n  attention_kernel: fa3\n",
			"s.yaml:12:3: attention_kernel=fa3 runs on Hopper GPUs only, not on A100-80GB (use cudnn or fa2)"},
		{"attention_efficiency above 1", baseYAML + "training:\n  attention_efficiency: 1.2\n",
			"s.yaml:12:3: attention_efficiency=1.2 is out of range (use a fraction in (0, 1] such as 0.6)"},
		{"unknown compile", baseYAML + "training:\n  compile: model\n",
			"s.yaml:12:3: compile \"model\" is unknown (use none, blocks, loss or blocks+loss)"},
		{"unknown rope_impl", baseYAML + "training:\n  rope_impl: real\n",
			"s.yaml:12:3: rope_impl \"real\" is unknown (use complex, rotation or fused)"},
		{"unknown cross_entropy", baseYAML + "training:\n  cross_entropy: bf16\n",
			"s.yaml:12:3: cross_entropy \"bf16\" is unknown (use fp32 or fused)"},
		{"unknown optimizer_impl", baseYAML + "training:\n  optimizer_impl: apex\n",
			"s.yaml:12:3: optimizer_impl \"apex\" is unknown (use seed, fused, foreach or composer)"},
		{"unknown grad_clip", baseYAML + "training:\n  grad_clip: value\n",
			"s.yaml:12:3: grad_clip \"value\" is unknown (use none or norm)"},
		{"unknown shard_dtype", baseYAML + "training:\n  shard_dtype: fp16\n",
			"s.yaml:12:3: shard_dtype \"fp16\" is unknown (use bf16 or fp32)"},
		{"unknown reduce_dtype", baseYAML + "training:\n  reduce_dtype: bf32\n",
			"s.yaml:12:3: reduce_dtype \"bf32\" is unknown (use param_dtype or fp32)"},
		{"reduce_dtype given as the dtype", baseYAML + "training:\n  reduce_dtype: bf16\n",
			"s.yaml:12:3: reduce_dtype \"bf16\" is unknown (use param_dtype or fp32)"},
		{"dropout 1", baseYAML + "training:\n  dropout: 1\n",
			"s.yaml:12:3: dropout=1 is out of range (use a probability in [0, 1) such as 0.1)"},
		{"recompute_every 0", baseYAML + "training:\n  recompute_every: 0\n",
			"s.yaml:12:3: recompute_every=0 is out of range (use 1 to 1048576)"},
		{"compute_interference above 10", baseYAML + "communication:\n  compute_interference: 11\n",
			"s.yaml:12:3: compute_interference=11 is out of range (use a slowdown fraction in [0, 10] such as 0.189)"},
		{"collective_interference negative", baseYAML + "communication:\n  collective_interference: -0.1\n",
			"s.yaml:12:3: collective_interference=-0.1 is out of range (use a slowdown fraction in [0, 10] such as 0.2)"},
		{"allocator overhead", baseYAML + "memory:\n  allocator_overhead: -1\n",
			"s.yaml:12:3: allocator_overhead=-1 is out of range (use a fraction in [0, 10] such as 0.15)"},
		{"host lead above 1", baseYAML + "memory:\n  host_lead: 1.5\n",
			"s.yaml:12:3: host_lead=1.5 is out of range (use a fraction in [0, 1] such as 1)"},
		{"mfu NaN", baseYAML + "training:\n  mfu: .nan\n",
			"s.yaml:12:8: mfu: .nan is not a finite number (use a decimal such as 0.5)"},
		{"unknown optimizer", baseYAML + "training:\n  optimizer: sgd\n",
			"s.yaml:12:3: optimizer \"sgd\" is unknown (use adam or adamw)"},
		{"unknown recompute", baseYAML + "training:\n  recompute: some\n",
			"s.yaml:12:3: recompute \"some\" is unknown (use none, selective, op or full)"},
		{"unknown algorithm", baseYAML + "communication:\n  algorithm: butterfly\n",
			"s.yaml:12:3: algorithm \"butterfly\" is unknown (use ring, hierarchical, tree, nvls, nvlstree or auto)"},
		{"unknown padding", baseYAML + "communication:\n  padding: none\n",
			"s.yaml:12:3: padding \"none\" is unknown (use toy or megatron)"},
		{"bucket_size zero", baseYAML + "communication:\n  bucket_size: 0B\n",
			"s.yaml:12:3: bucket_size=0 is out of range (use a size > 0 such as 40MB)"},
		{"overlap yes", baseYAML + "communication:\n  overlap: yes\n",
			"s.yaml:12:12: overlap: \"yes\" is not a boolean (use true or false)"},
		{"billion laughs", baseYAML + "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: [*d, *d]\n",
			"s.yaml:14:36: aliases expand to more than 10000 nodes (expand fewer aliases; a scenario never needs that many)"},
		{"duplicate key", rep("zero_stage: 1", "zero_stage: 1\n  zero_stage: 2"),
			"s.yaml:11:3: key \"zero_stage\" appears twice (it is already set at line 10; keep one)"},
		{"null value", rep("nodes: 2", "nodes:"),
			"s.yaml:3:3: nodes has no value (write a value or delete the key)"},
		{"non-string key", baseYAML + "1: x\n",
			"s.yaml:11:1: key 1 is not a name (use a plain key such as nodes)"},
		{"missing dimension", rep("preset: gpt3-125m", "kind: transformer\n  hidden: 64"),
			"s.yaml:6:1: model.layers is missing (kind transformer needs layers)"},
		{"duplicate layer name", rep("preset: gpt3-125m", "layer_list:\n  - {name: a, params: 10}\n  - {name: a, params: 10}"),
			"s.yaml:9:6: layer name \"a\" is used twice (give every layer a unique name)"},
		{"tensors mismatch", rep("preset: gpt3-125m", "layer_list:\n  - {name: a, params: 10, tensors: [{name: w, shape: [3, 3]}]}"),
			"s.yaml:8:15: params=10 does not match the tensors, which hold 9 (fix params or the shapes)"},
		{"largest_layer too large", rep("preset: gpt3-125m", "params: 100\n  largest_layer: 90"),
			"s.yaml:8:3: largest_layer=90 leaves 10 parameters for 32 layers (use largest_layer ≤ 68)"},
		{"heads not dividing hidden", rep("preset: gpt3-125m", "preset: gpt3-125m\n  heads: 7"),
			"s.yaml:8:3: heads=7 does not divide hidden=768 (use a divisor of 768)"},
		{"unknown top-level key", baseYAML + "trainig:\n  steps: 2\n",
			"s.yaml:11:1: unknown key \"trainig\" at the top level (did you mean \"training\"?)"},
		{"unknown key without a near match", rep("dp: 8", "dp: 8\n  pipeline: 2"),
			"s.yaml:10:3: unknown key \"pipeline\" in parallelism (allowed: dp, cp, zero_stage, k, ep)"},
		{"unknown key in a list item", rep("gpu: A100-80GB", "gpu: A100-80GB\n  gpu_overrides:\n  - rank: 1\n    sped: 0.5"),
			"s.yaml:8:5: unknown key \"sped\" in cluster.gpu_overrides[0] (did you mean \"speed\"?)"},
		{"recursive alias", baseYAML + "x: &a [*a]\n",
			"s.yaml:11:8: alias *a refers to a node that contains it (recursive aliases are not allowed)"},
		{"missing gpu figures", rep("gpu: A100-80GB", "gpu_memory: 80GiB"),
			"s.yaml:2:1: cluster.peak_bf16 is missing (name a GPU preset with gpu: (V100-16GB, V100-32GB, A100-40GB, A100-80GB, A800-80GB, H100-80GB, H200, B200, GB200, B300, GB300, MI300X, MI325X, MI350X, MI355X, L40S, A10G, L4, RTX4090 or RTX5090) or give peak_bf16: 312TFLOPS)"},
		{"per_gpu nics count", rep("gpu: A100-80GB", "gpu: A100-80GB\n  nics_per_node: 2"),
			"s.yaml:6:3: nics_per_node=2 conflicts with nics: per_gpu, which means one NIC per GPU (use 4, or nics: per_node for shared NICs)"},
		{"override gpu out of range", rep("gpu: A100-80GB", "gpu: A100-80GB\n  link_overrides:\n  - {node: 1, gpu: 4, class: intra, bandwidth: 10GB/s}"),
			"s.yaml:7:15: gpu=4 is out of range (use -1 for the whole node, or 0 to 3)"},
		{"override class", rep("gpu: A100-80GB", "gpu: A100-80GB\n  link_overrides:\n  - {node: 1, class: pcie, bandwidth: 10GB/s}"),
			"s.yaml:7:15: class \"pcie\" is unknown (use intra or inter)"},
		{"no model size", rep("preset: gpt3-125m", "seq_len: 2048"),
			"s.yaml:6:1: model has no size (use preset: (gpt3-125m, gpt3-350m, gpt3-760m, gpt3-1.3b, gpt3-2.7b, gpt3-6.7b, gpt3-13b, gpt3-175b, llama2-7b, llama2-13b, llama2-70b, llama3.2-1b, llama3.2-3b, llama3.1-8b, llama3.1-70b, llama3.1-405b, mistral-7b, mixtral-8x7b, mixtral-8x22b, qwen2.5-7b, qwen2.5-72b, gemma2-9b, gemma2-27b, gpt-neox-20b, qwen3-8b, qwen3-30b-a3b, deepseek-v2-lite, phi3.5-mini, falcon-7b, tiny-transformer or residual-mlp-4096), kind: with dimensions, params: such as 7B, or layer_list:)"},
		{"unknown kind", rep("preset: gpt3-125m", "kind: rnn"),
			"s.yaml:7:3: kind \"rnn\" is unknown (use transformer, mlp, tiny-transformer or generic)"},
		{"unknown arch", rep("preset: gpt3-125m", "preset: gpt3-125m\n  arch: mamba"),
			"s.yaml:8:3: arch \"mamba\" is unknown (use gpt or llama)"},
		{"layer group undeclared", rep("preset: gpt3-125m", "layer_list:\n  - {name: a, params: 10, group: moe}"),
			"s.yaml:8:27: group \"moe\" is not declared (declare it under model.groups, or use dense)"},
		{"group precision", rep("preset: gpt3-125m", "preset: gpt3-125m\n  groups: [{name: dense, precision: int4}]"),
			"s.yaml:8:26: precision \"int4\" is unknown (use bf16, fp16, fp32 or fp8)"},
		{"int64 overflow of a tensor", rep("preset: gpt3-125m", "layer_list:\n  - {name: a, tensors: [{name: w, shape: [4294967296, 4294967296]}]}"),
			"s.yaml:8:35: the shape has more than 2^63 elements (use a smaller shape)"},
		{"layer params overflow", rep("preset: gpt3-125m", "layer_list:\n  - {name: a, params: 9000000000000000000}\n  - {name: b, params: 9000000000000000000}"),
			"s.yaml:6:1: the layers' parameters add up to more than 2^63 (use a smaller model)"},
		{"master dtype", baseYAML + "training:\n  master_dtype: bf16\n",
			"s.yaml:12:3: master_dtype \"bf16\" is unknown (use fp32)"},
		{"beta2 of 1", baseYAML + "training:\n  beta2: 1\n",
			"s.yaml:12:3: beta2=1 is out of range (use a value in [0, 1) such as 0.999)"},
		{"mfu infinite", baseYAML + "training:\n  mfu: .inf\n",
			"s.yaml:12:8: mfu: .inf is not a finite number (use a decimal such as 0.5)"},
		{"negative prefetch", baseYAML + "communication:\n  prefetch_depth: -1\n",
			"s.yaml:12:3: prefetch_depth=-1 is out of range (use 0 to 64)"},
		{"structure mismatch", rep("model:\n  preset: gpt3-125m", "model: [gpt3-125m]"),
			"s.yaml:6:8: model: a list is not a mapping (use key: value pairs such as preset, kind, arch, …)"},
		{"version 2 before unknown keys", "version: 2\nfuture_key: 1\n",
			"s.yaml:1:1: version=2 is not supported (use version: 1)"},
		{"version missing before unknown keys", "future_key: 1\n",
			"s.yaml: version is missing (start the file with \"version: 1\")"},
		{"version as a string", rep("version: 1", "version: \"1\""),
			"s.yaml:1:10: version: \"1\" is not an integer (use a whole number)"},
		{"huge file", baseYAML + "#" + strings.Repeat("x", 4<<20) + "\n",
			"s.yaml: the file has 4194437 bytes, more than 4194304 (a scenario is a few kilobytes; is this the right file?)"},
		{"octal-looking integer", rep("dp: 8", "dp: 010"),
			"s.yaml:9:7: dp: 010 has a leading zero, which YAML reads as octal (write 10, or 0o10 if you mean octal)"},
		{"more GPUs than the topology builds", strings.Replace(rep("nodes: 2", "nodes: 65536"), "gpus_per_node: 4", "gpus_per_node: 128", 1),
			"s.yaml:4:3: nodes·gpus_per_node=8388608 GPUs is out of range (use at most 4194304 GPUs)"},
		{"nested 9,990 deep", baseYAML + "x: " + strings.Repeat("[", 9990) + strings.Repeat("]", 9990) + "\n",
			"s.yaml:11:67: mappings and lists nest more than 64 levels deep here (a scenario nests at most 7; flatten the document)"},
		{"nested 10,000 deep", baseYAML + "x: " + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + "\n",
			"s.yaml:11:67: mappings and lists nest more than 64 levels deep here (a scenario nests at most 7; flatten the document)"},
		{"more NICs than GPUs", rep("gpu: A100-80GB", "gpu: A100-80GB\n  nics: per_node\n  nics_per_node: 8"),
			"s.yaml:7:3: nics_per_node=8 is out of range (use 1 to 4)"},
		{"bad merge", baseYAML + "x: {<<: [1]}\n",
			"s.yaml:11:9: a merge key (<<) needs a mapping or a list of mappings (use <<: *anchor)"},
	} {
		s, err := Load("s.yaml", []byte(tc.in), nil)
		if err == nil {
			t.Errorf("%s: no error, want %q (got %+v)", tc.name, tc.want, s)
			continue
		}
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%s: error %T is not *Error", tc.name, err)
		}
		if err.Error() != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, err.Error(), tc.want)
		}
	}
}
