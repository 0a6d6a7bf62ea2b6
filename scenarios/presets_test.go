package scenarios

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/units"
)

// loadModel loads baseYAML with the model section replaced by model.
func loadModel(t *testing.T, model string) *Scenario {
	t.Helper()
	s, err := Load("m.yaml", []byte(rep("model:\n  preset: gpt3-125m\n", "model:\n"+model)), nil)
	if err != nil {
		t.Fatalf("%q: %v", model, err)
	}
	return s
}

// TestModelTotals checks every preset's parameter count. Sources: the
// closed forms in the comments (hand calculation) and the published counts
// (Llama 2: HF configs / model cards; seed 000: 10·(8H²+5H); seed 002: 260).
func TestModelTotals(t *testing.T) {
	gpt := func(h, l int64) int64 { return (50257+2048)*h + l*(12*h*h+13*h) + 2*h }
	for _, tc := range []struct {
		preset string
		want   int64
		units  int
	}{
		{"gpt3-125m", gpt(768, 12), 14},
		{"gpt3-350m", gpt(1024, 24), 26},
		{"gpt3-760m", gpt(1536, 24), 26},
		{"gpt3-1.3b", gpt(2048, 24), 26},
		{"gpt3-2.7b", gpt(2560, 32), 34},
		{"gpt3-6.7b", gpt(4096, 32), 34},
		{"gpt3-13b", gpt(5120, 40), 42},
		{"gpt3-175b", 174_604_259_328, 98},
		{"llama2-7b", 6_738_415_616, 35},
		{"llama2-13b", 13_015_864_320, 43},
		{"llama2-70b", 68_976_648_192, 83},
		{"tiny-transformer", 260, 5},
		{"residual-mlp-4096", 1_342_382_080, 10},
	} {
		s := loadModel(t, "  preset: "+tc.preset+"\n")
		m := s.Model
		if int64(m.Params) != tc.want || m.TotalParams() != tc.want || len(m.LayerList) != tc.units {
			t.Errorf("%s: Params %d, sum %d, %d units; want %d in %d units", tc.preset, m.Params, m.TotalParams(), len(m.LayerList), tc.want, tc.units)
		}
		for i, l := range m.LayerList {
			if len(l.Tensors) == 0 {
				continue
			}
			var n int64
			for _, tn := range l.Tensors {
				p := int64(1)
				for _, d := range tn.Shape {
					p *= d
				}
				n += p
			}
			if n != int64(l.Params) {
				t.Errorf("%s: unit %d %s: tensors hold %d, params %d", tc.preset, i, l.Name, n, l.Params)
			}
		}
	}
	// The GPT-3 175B closed form: 52305·12288 + 96·(12·12288² + 13·12288) + 2·12288.
	if gpt(12288, 96) != 174_604_259_328 {
		t.Errorf("gpt3-175b closed form = %d", gpt(12288, 96))
	}
}

// TestModelLayouts checks unit names, order and sizes of each model family.
func TestModelLayouts(t *testing.T) {
	tiny := loadModel(t, "  preset: tiny-transformer\n").Model
	wantTiny := []Layer{
		{Name: "ln1", Params: 8, Group: "dense", Tensors: []Tensor{{"ln1.gamma", []int64{4}}, {"ln1.beta", []int64{4}}}},
		{Name: "attn", Params: 64, Group: "dense", Tensors: []Tensor{{"attn.w_q", []int64{4, 4}}, {"attn.w_k", []int64{4, 4}}, {"attn.w_v", []int64{4, 4}}, {"attn.w_o", []int64{4, 4}}}},
		{Name: "ln2", Params: 8, Group: "dense", Tensors: []Tensor{{"ln2.gamma", []int64{4}}, {"ln2.beta", []int64{4}}}},
		{Name: "ffn", Params: 148, Group: "dense", Tensors: []Tensor{{"ffn.w1", []int64{4, 16}}, {"ffn.b1", []int64{16}}, {"ffn.w2", []int64{16, 4}}, {"ffn.b2", []int64{4}}}},
		{Name: "out", Params: 32, Group: "dense", Tensors: []Tensor{{"out.w_vocab", []int64{4, 8}}}},
	}
	if !reflect.DeepEqual(tiny.LayerList, wantTiny) {
		t.Errorf("tiny-transformer layers\n got %+v\nwant %+v", tiny.LayerList, wantTiny)
	}
	if tiny.Kind != KindTinyTransformer || tiny.Hidden != 4 || tiny.Heads != 2 || tiny.FFN != 16 || tiny.Vocab != 8 || tiny.SeqLen != 3 || tiny.Layers != 1 {
		t.Errorf("tiny-transformer dims %+v", tiny)
	}

	mlp := loadModel(t, "  preset: residual-mlp-4096\n").Model
	l3 := mlp.LayerList[3]
	want3 := Layer{Name: "layers.3", Params: 134_238_208, Group: "dense", Tensors: []Tensor{
		{"layers.3.fc1.weight", []int64{16384, 4096}}, {"layers.3.fc1.bias", []int64{16384}},
		{"layers.3.fc2.weight", []int64{4096, 16384}}, {"layers.3.fc2.bias", []int64{4096}}}}
	if !reflect.DeepEqual(l3, want3) || mlp.Kind != KindMLP || mlp.Hidden != 4096 || mlp.Layers != 10 || mlp.FFN != 16384 {
		t.Errorf("residual-mlp-4096 unit 3 = %+v (model %s h=%d L=%d ffn=%d)", l3, mlp.Kind, mlp.Hidden, mlp.Layers, mlp.FFN)
	}

	ll := loadModel(t, "  preset: llama2-7b\n").Model
	names := []string{ll.LayerList[0].Name, ll.LayerList[1].Name, ll.LayerList[32].Name, ll.LayerList[33].Name, ll.LayerList[34].Name}
	params := []units.Count{ll.LayerList[0].Params, ll.LayerList[1].Params, ll.LayerList[33].Params, ll.LayerList[34].Params}
	if fmt.Sprint(names) != "[embedding block.0 block.31 final_norm lm_head]" ||
		!reflect.DeepEqual(params, []units.Count{131_072_000, 202_383_360, 4096, 131_072_000}) ||
		ll.Kind != KindTransformer || ll.Arch != ArchLlama || ll.KVHeads != 32 || ll.SeqLen != 4096 {
		t.Errorf("llama2-7b layout %v %v kind %s arch %s kv %d", names, params, ll.Kind, ll.Arch, ll.KVHeads)
	}
	l70 := loadModel(t, "  preset: llama2-70b\n").Model
	// 2h² + 2·h·(h/64·8) + 3·h·ffn + 2h with h = 8192, ffn = 28672.
	if l70.LayerList[1].Params != 855_654_400 || l70.KVHeads != 8 || l70.Heads != 64 {
		t.Errorf("llama2-70b block %d, kv %d, heads %d", l70.LayerList[1].Params, l70.KVHeads, l70.Heads)
	}

	g := loadModel(t, "  preset: gpt3-125m\n").Model
	if g.LayerList[0].Name != "embedding" || g.LayerList[0].Params != (50257+2048)*768 ||
		g.LayerList[1].Params != 12*768*768+13*768 || g.LayerList[13].Name != "final_norm" || g.LayerList[13].Params != 1536 ||
		g.Arch != ArchGPT || g.FFN != 3072 || g.Vocab != 50257 || g.SeqLen != 2048 {
		t.Errorf("gpt3-125m layout %+v", g.LayerList[:2])
	}
}

// TestGenericModel checks the layer list of a bare parameter count.
func TestGenericModel(t *testing.T) {
	m := loadModel(t, "  params: 7B\n  largest_layer: 131072000\n").Model
	// (7e9 - 131,072,000) / 32 = 214,654,000 exactly.
	if len(m.LayerList) != 33 || m.LayerList[0].Name != "embedding" || m.LayerList[0].Params != 131_072_000 ||
		m.LayerList[1].Name != "block.0" || m.LayerList[1].Params != 214_654_000 || m.LayerList[32].Params != 214_654_000 ||
		m.Params != 7e9 || m.Kind != KindGeneric || m.Layers != 32 {
		t.Errorf("7B generic: %d units, first %+v, second %+v, params %d", len(m.LayerList), m.LayerList[0], m.LayerList[1], m.Params)
	}
	m = loadModel(t, "  params: 103\n  layers: 4\n").Model
	var got []units.Count
	for _, l := range m.LayerList {
		got = append(got, l.Params)
	}
	if !reflect.DeepEqual(got, []units.Count{26, 26, 26, 25}) || m.Params != 103 {
		t.Errorf("103 over 4 layers = %v", got)
	}
	m = loadModel(t, "  layer_list:\n  - name: w\n    tensors: [{name: w, shape: [3, 5]}]\n  - {name: b, params: 5}\n").Model
	if m.Params != 20 || m.LayerList[0].Params != 15 || m.Kind != KindGeneric {
		t.Errorf("explicit list: params %d, first %+v", m.Params, m.LayerList[0])
	}
}

// TestPresetOverrides checks that explicit fields win over every preset.
func TestPresetOverrides(t *testing.T) {
	s, err := Load("o.yaml", []byte(`version: 1
cluster:
  nodes: 1
  gpus_per_node: 8
  gpu: H100-80GB
  gpu_memory: 94GiB
  intra: {latency: 1us}
  inter: {preset: HDR, bandwidth: 30GB/s}
model:
  preset: gpt3-1.3b
  layers: 2
  seq_len: 1024
parallelism: {dp: 8, zero_stage: 2}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Cluster
	if c.GPUMemory != 94*units.GiB || c.PeakBF16 != 989e12 || c.HBMBandwidth != 3350e9 {
		t.Errorf("gpu: memory %d peak %d hbm %d", c.GPUMemory, c.PeakBF16, c.HBMBandwidth)
	}
	if c.Intra != (Link{"NVLink4", 450e9, units.Microsecond}) || c.Inter != (Link{"HDR", 30e9, 2 * units.Microsecond}) {
		t.Errorf("links: intra %+v inter %+v", c.Intra, c.Inter)
	}
	m := s.Model
	// 2 blocks of 12h²+13h, embedding (50257+1024)·h, final norm 2h, h = 2048.
	want := int64((50257+1024)*2048 + 2*(12*2048*2048+13*2048) + 2*2048)
	if m.Layers != 2 || m.SeqLen != 1024 || m.Hidden != 2048 || int64(m.Params) != want || len(m.LayerList) != 4 {
		t.Errorf("model: layers %d seq %d hidden %d params %d (want %d)", m.Layers, m.SeqLen, m.Hidden, m.Params, want)
	}
}

// TestPayloadBandwidth: a PCIe link carries 128/130 of its line rate
// (128b/130b encoding from PCIe 3.0 on: 985 MB/s a 3.0 lane at 8 GT/s),
// other links their figure.
func TestPayloadBandwidth(t *testing.T) {
	for name, want := range map[string]units.Bandwidth{
		"PCIe3":   15_753_846_153, // 8 GT/s × 16 × 128/130 / 8: 16 × 984.6 MB/s
		"PCIe4":   31_507_692_307,
		"PCIe5":   63_015_384_615,
		"NDR":     50e9,
		"NVLink4": 450e9,
	} {
		lp, _ := FindLink(name)
		if got := PayloadBandwidth(lp); got != want {
			t.Errorf("%s: payload %d B/s, want %d", name, got, want)
		}
	}
}

// TestGPUAndLinkPresets checks the preset tables against the task's figures.
func TestGPUAndLinkPresets(t *testing.T) {
	for _, tc := range []struct {
		gpu          string
		mem          units.Bytes
		peak         units.FLOPS
		hbm          units.Bandwidth
		intra, inter string
	}{
		// Memory: nvidia-smi's memory.total (rocm-smi's VRAM Total on AMD)
		// as the printouts cited at each preset show it, in MiB.
		// Where a CUDA capacity of the part is published (the caching
		// allocator's "X GiB total capacity", scenarios.cudaCapacity, each
		// row citing its message) cluster.gpu_memory is that, X × 2^30 B,
		// not nvidia-smi's total (GPUPreset.Memory, checked below).
		{"V100-16GB", 1577 << 30 / 100, 125e12, 900e9, "NVLink2", "EDR"}, // meta-llama/llama#918, 15.77 GiB
		{"V100-32GB", 3174 << 30 / 100, 125e12, 900e9, "NVLink2", "EDR"}, // liucongg/ChatGLM-Finetuning#73, 31.74 GiB
		// The A100s': "39.39 GiB total capacity" (hiyouga/
		// LlamaFactory#2908) and "79.18 GiB total capacity"
		// (tatsu-lab/stanford_alpaca#86), not nvidia-smi's 40,960 and
		// 81,920 MiB.
		{"A100-40GB", 3939 << 30 / 100, 312e12, 1555e9, "NVLink3", "HDR"},
		{"A100-80GB", 7918 << 30 / 100, 312e12, 2039e9, "NVLink3", "HDR"},
		{"H100-80GB", 7911 << 30 / 100, 989e12, 3350e9, "NVLink4", "NDR"},   // vllm-project/vllm#27508, 79.11 GiB (nvidia-smi 81559MiB)
		{"RTX4090", 2352 << 30 / 100, 165_200e9, 1008e9, "PCIe4", "Eth100"}, // Soul-AILab/SoulX-FlashTalk#5, 23.52 GiB (nvidia-smi 24564MiB)
		{"H200", 13981 << 30 / 100, 989e12, 4800e9, "NVLink4", "NDR"},       // sungwon-chae/arxiv_confi, 139.81 GiB (nvidia-smi 143771MiB)
		// H100 PCIe: no printout, the datasheet's 80GB as GiB; NVIDIA's H100
		// page, PCIe column: 756 TFLOPS bf16 dense, 2 TB/s; the card's PCIe 5.0.
		{"H100-PCIe", 80 << 30, 756e12, 2000e9, "PCIe5", "NDR"},
		// GH200, 96GB HBM3: no printout, the datasheet's 96GB as GiB; NVIDIA's
		// GH200 page: 989 TFLOPS bf16 dense, 4 TB/s; NVLink 4.
		{"GH200-96GB", 96 << 30, 989e12, 4000e9, "NVLink4", "NDR"},
		{"B200", 17835 << 30 / 100, 2250e12, 8000e9, "NVLink5", "NDR"},      // pytorch/ao#4002, 178.35 GiB (nvidia-smi 183359MiB)
		{"GB200", 189471 << 20, 2500e12, 8000e9, "NVLink5", "NDR"},          // NVIDIA GB200, 189471MiB
		{"MI300X", 205_822_885_888, 1307_400e9, 5300e9, "xGMI", "RoCE400"},  // rocm-smi VRAM Total Memory (B)
		{"MI325X", 256 << 30, 1307_400e9, 6000e9, "xGMI", "RoCE400"},        // no printout: the datasheet's 256GB as GiB
		{"L40S", 4453 << 30 / 100, 362_050e9, 864e9, "PCIe4", "RoCE100"},    // Wan-Video/Wan2.1#205, 44.53 GiB (nvidia-smi 46068MiB)
		{"A10G", 23028 << 20, 70e12, 600e9, "PCIe4", "Eth100"},              // NVIDIA A10G, 23028MiB
		{"L4", 23034 << 20, 121e12, 300e9, "PCIe4", "Eth100"},               // NVIDIA L4, 23034MiB
		{"RTX5090", 3136 << 30 / 100, 209_500e9, 1792e9, "PCIe5", "Eth100"}, // TrajectoryCrafter/TrajectoryCrafter#20, 31.36 GiB (nvidia-smi 32607MiB)
		// A800: A100 80GB SXM4 figures (Reuters: same chip, NVLink 400
		// instead of 600 GB/s bidirectional; FlagPerf's A800 theoryflops
		// 312e12); memory: "79.33 GiB" on an A800-80G (hahnyuan/PB-LLM#3).
		{"A800-80GB", 7933 << 30 / 100, 312e12, 2039e9, "NVLink3-A800", "HDR"},
		// HGX B300: 36 PFLOPS bf16 with sparsity over 8 GPUs = 4.5 each,
		// halved; Blackwell Ultra blog 8 TB/s; nvidia-smi "NVIDIA B300 SXM6
		// AC, 275040 MiB".
		{"B300", 275040 << 20, 4_500e12 / 2, 8e12, "NVLink5", "XDR"},
		// GB300 NVL72: 360 PFLOPS bf16 with sparsity / 72 = 5 each, halved;
		// 576 TB/s / 72; nvidia-smi "NVIDIA GB300 … 284208MiB".
		{"GB300", 284208 << 20, 360e15 / 72 / 2, 576e12 / 72, "NVLink5", "XDR"},
		// ROCm gpu-specs: 288 GiB (no rocm-smi printout), 256 CUs; CDNA 4 bf16 4,096 FLOPs per CU
		// per clock at 2.2 GHz (MI350X) and 2.4 GHz (MI355X), to 0.1 TFLOPS.
		{"MI350X", 288 << 30, 2_306_900e9, 8e12, "xGMI-CDNA4", "RoCE400"},
		{"MI355X", 288 << 30, 2_516_600e9, 8e12, "xGMI-CDNA4", "RoCE400"},
	} {
		s, err := Load("g.yaml", []byte(rep("gpu: A100-80GB", "gpu: "+tc.gpu)), nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.gpu, err)
		}
		c := s.Cluster
		if c.GPUMemory != tc.mem || c.PeakBF16 != tc.peak || c.HBMBandwidth != tc.hbm || c.Intra.Preset != tc.intra || c.Inter.Preset != tc.inter {
			t.Errorf("%s: %d %d %d %s %s", tc.gpu, c.GPUMemory, c.PeakBF16, c.HBMBandwidth, c.Intra.Preset, c.Inter.Preset)
		}
	}
	// Dense fp8 peaks, typed from the same sources: 0 where the GPU has
	// no fp8 tensor cores (Ampere).
	for _, tc := range []struct {
		gpu string
		fp8 units.FLOPS
	}{
		{"A800-80GB", 0}, {"A100-80GB", 0},
		{"B300", 72e15 / 8 / 2}, {"GB300", 720e15 / 72 / 2},
		{"MI350X", 4_613_700e9}, {"MI355X", 5_033_200e9},
	} {
		s, err := Load("g.yaml", []byte(rep("gpu: A100-80GB", "gpu: "+tc.gpu)), nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.gpu, err)
		}
		if s.Cluster.PeakFP8 != tc.fp8 {
			t.Errorf("%s: fp8 peak %d, want %d", tc.gpu, s.Cluster.PeakFP8, tc.fp8)
		}
	}
	for _, tc := range []struct {
		link string
		bw   units.Bandwidth
		lat  units.Duration
	}{
		{"NVLink2", 150e9, 500 * units.Nanosecond}, {"NVSwitch", 150e9, 500 * units.Nanosecond},
		{"NVLink3", 300e9, 500 * units.Nanosecond}, {"NVLink4", 450e9, 500 * units.Nanosecond},
		{"PCIe3", 16e9, units.Microsecond}, {"PCIe4", 32e9, units.Microsecond},
		{"EDR", 12_500_000_000, 2 * units.Microsecond}, {"HDR", 25e9, 2 * units.Microsecond},
		{"NDR", 50e9, 2 * units.Microsecond}, {"Eth40", 5e9, 10 * units.Microsecond},
		{"Eth100", 12_500_000_000, 10 * units.Microsecond},
		{"NVLink5", 900e9, 500 * units.Nanosecond}, {"xGMI", 448e9, 500 * units.Nanosecond},
		{"PCIe5", 64e9, units.Microsecond}, {"XDR", 100e9, 2 * units.Microsecond},
		{"RoCE400", 50e9, 3 * units.Microsecond}, {"RoCE200", 25e9, 3 * units.Microsecond},
		{"RoCE100", 12_500_000_000, 3 * units.Microsecond}, {"EFA-p4d", 12_500_000_000, 18 * units.Microsecond},
		// EFA: fi_pingpong's median over 256 B–4 KiB, 18.4 µs one way
		// (modal-labs/multinode-training-guide health-checks/README.md at
		// 0aa238db and 3094ccfb), to the whole µs.
		{"EFA-p5", 50e9, 18 * units.Microsecond}, {"TCPXO", 25e9, 10 * units.Microsecond},
		{"NVLink3-A800", 400e9 / 2, 500 * units.Nanosecond},
		// AMD's MI350X/MI355X pages: 153.6 GB/s a link, bidirectional, 7
		// links: 7 × 153.6 / 2.
		{"xGMI-CDNA4", 7 * 153_600e6 / 2, 500 * units.Nanosecond},
	} {
		s, err := Load("l.yaml", []byte(rep("gpu: A100-80GB", "gpu: A100-80GB\n  inter: {preset: "+tc.link+"}")), nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.link, err)
		}
		if s.Cluster.Inter != (Link{tc.link, tc.bw, tc.lat}) {
			t.Errorf("%s: %+v", tc.link, s.Cluster.Inter)
		}
	}
	if len(GPUPresets()) != 22 || len(LinkPresets()) != 23 || len(ModelPresets()) != 31 {
		t.Errorf("preset counts %d %d %d", len(GPUPresets()), len(LinkPresets()), len(ModelPresets()))
	}
	// The network plugin's latency: aws-ofi-nccl's 75 µs on p4d and p5
	// (src/platform-aws.cpp at 2daf7d30, lines 80–160), none elsewhere.
	for _, p := range LinkPresets() {
		want := units.Duration(0)
		if p.Name == "EFA-p4d" || p.Name == "EFA-p5" {
			want = 75 * units.Microsecond
		}
		if p.PluginLatency != want {
			t.Errorf("%s: plugin latency %v, want %v", p.Name, p.PluginLatency, want)
		}
	}
}

// TestDefaults checks every default Load fills in.
func TestDefaults(t *testing.T) {
	s, err := Load("d.yaml", []byte(baseYAML), nil)
	if err != nil {
		t.Fatal(err)
	}
	yes, one := true, 1
	interference, collective := DefaultComputeInterference, DefaultCollectiveInterference
	want := Scenario{
		Version: 1,
		Cluster: Cluster{Nodes: 2, GPUsPerNode: 4, GPU: "A100-80GB", GPUMemory: 7918 << 30 / 100, GPUMemoryUsable: true, PeakBF16: 312e12, HBMBandwidth: 2039e9,
			Intra: Link{"NVLink3", 300e9, 500 * units.Nanosecond}, Inter: Link{"HDR", 25e9, 2 * units.Microsecond},
			NICs: "per_gpu", NICsPerNode: 4, Placement: []Axis{"cp", "dp"}},
		Model:       s.Model,
		Parallelism: Parallelism{DP: 8, CP: 1, Stage: 1, K: 1, EP: 1},
		Training: Training{MicroBatch: 1, GradAccum: 1, ParamDType: "bf16", MasterDType: "fp32", Optimizer: "adam", LR: 1e-3, Beta1: 0.9,
			Beta2: 0.999, Eps: 1e-8, WeightDecay: 0, Recompute: "none", ComputeEfficiency: 0.8, ComputeEfficiencyDefault: true,
			Attention: "flash", AttentionKernel: "fa2", RecomputeEvery: 1, Steps: 5, Seed: 1, FP8: "none"},
		Communication: Communication{BucketSize: 40_000_000, Algorithm: "auto", Overlap: &yes, PrefetchDepth: &one,
			MaxInflightAllGathers: 2, Padding: "toy", Boundary: "reshard", ComputeInterference: &interference,
			CollectiveInterference: &collective},
		Memory: MemoryConfig{Activations: &yes}, // allocator_overhead stays unset (memory.SimulatesReserve)
	}
	if !reflect.DeepEqual(*s, want) {
		t.Errorf("defaults\n got %+v\nwant %+v", *s, want)
	}
	if !reflect.DeepEqual(s.Model.Groups, []ParamGroup{{"dense", "bf16"}}) {
		t.Errorf("groups %+v", s.Model.Groups)
	}
	// nics: per_node defaults to one NIC; a link override gets gpu -1 and the class latency.
	s, err = Load("d.yaml", []byte(rep("gpu: A100-80GB", "gpu: A100-80GB\n  nics: per_node\n  link_overrides: [{node: 1, class: inter, bandwidth: 1GB/s}]")), nil)
	if err != nil {
		t.Fatal(err)
	}
	o := s.Cluster.LinkOverrides[0]
	if s.Cluster.NICsPerNode != 1 || o.GPU == nil || *o.GPU != -1 || o.Latency != 2*units.Microsecond || o.Bandwidth != 1e9 {
		t.Errorf("per_node nics %d, override %+v", s.Cluster.NICsPerNode, o)
	}
}

// TestAliasesAndMerge checks that anchors, aliases and merge keys work
// within the limit.
func TestAliasesAndMerge(t *testing.T) {
	in := `version: 1
cluster: &c
  nodes: 1
  gpus_per_node: 2
  gpu: A100-80GB
  intra: &fast {preset: NVLink3, latency: 1us}
  inter: {<<: *fast, bandwidth: 10GB/s}
model: {preset: tiny-transformer}
parallelism: {dp: 2, zero_stage: 3}
`
	s, err := Load("a.yaml", []byte(in), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Cluster.Inter != (Link{"NVLink3", 10e9, units.Microsecond}) {
		t.Errorf("merged inter %+v", s.Cluster.Inter)
	}
}

func TestManyLayersIsBounded(t *testing.T) {
	_, err := Load("b.yaml", []byte(rep("preset: gpt3-125m", "params: 7B\n  layers: 100000")), nil)
	if err == nil || !strings.Contains(err.Error(), "layers=100000 is out of range (use 1 to 1024)") {
		t.Errorf("got %v", err)
	}
}

// TestGPUOfDevice maps the device names CUDA reports (cudaDeviceProp.name
// as nccl-tests and nvidia-smi print it) to the GPU presets, and leaves
// the parts zerosim has no preset for unmatched.
func TestGPUOfDevice(t *testing.T) {
	for _, tc := range []struct{ name, gpu string }{
		{"A100-SXM4-40GB", "A100-40GB"},        // nccl-tests logs in collectives/testdata
		{"NVIDIA A100-SXM4-40GB", "A100-40GB"}, // newer drivers prefix the vendor
		{"NVIDIA A100-SXM4-80GB", "A100-80GB"},
		{"NVIDIA A800-SXM4-80GB", "A800-80GB"},
		{"NVIDIA H100 80GB HBM3", "H100-80GB"},
		{"NVIDIA H200", "H200"},
		{"NVIDIA B200", "B200"},
		{"NVIDIA GB200", "GB200"},
		{"Tesla V100-SXM2-16GB", "V100-16GB"},
		{"Tesla V100-SXM2-32GB", "V100-32GB"},
		{"AMD Instinct MI300X", "MI300X"},
		{"NVIDIA GeForce RTX 4090", "RTX4090"},
		{"NVIDIA L40S", "L40S"},
		{"NVIDIA H800", ""},               // no preset: NVLink cut, not an H100's
		{"NVIDIA H100 PCIe", "H100-PCIe"}, // the PCIe card's own preset, not the SXM's
		{"NVIDIA H100 NVL", ""},           // no preset: neither the SXM's nor the PCIe's
		{"NVIDIA GH200 480GB", "GH200-96GB"},
		{"NVIDIA GH200 120GB", ""}, // another memory variant
		{"NVIDIA A100-PCIE-40GB", ""},
		{"", ""},
	} {
		gpu, ok := GPUOfDevice(tc.name)
		if gpu != tc.gpu || ok != (tc.gpu != "") {
			t.Errorf("%q: %q, %t; want %q", tc.name, gpu, ok, tc.gpu)
		}
		if ok {
			if _, found := findGPU(gpu); !found {
				t.Errorf("%q: %q is not a GPU preset", tc.name, gpu)
			}
		}
	}
}
