package scenarios

import (
	"testing"

	"github.com/zerosim/zerosim/units"
)

// TestUsableGPUMemory: a GPU preset with a published CUDA capacity (the
// caching allocator's "X GiB total capacity": A100-40GB 39.39 GiB,
// hiyouga/LlamaFactory#2908; A100-80GB 79.18 GiB, tatsu-lab/stanford_alpaca#86;
// H100-80GB 79.11 GiB, vllm-project/vllm#27508) gives cluster.gpu_memory
// that figure, X × 2^30 B, and marks it usable; one without keeps
// nvidia-smi's total (GB200 189,471 MiB); a gpu_memory the file gives wins
// and is not marked.
func TestUsableGPUMemory(t *testing.T) {
	for _, c := range []struct {
		gpu, memory string
		want        units.Bytes
		usable      bool
	}{
		{"A100-40GB", "", 42294690447, true}, // 39.39 × 1,073,741,824 = 42,294,690,447.36
		{"A100-80GB", "", 85018877624, true}, // 79.18 × 1,073,741,824 = 85,018,877,624.32
		{"H100-80GB", "", 84943715696, true}, // 79.11 × 1,073,741,824 = 84,943,715,696.64
		{"GB200", "", 189471 << 20, false},
		{"A100-40GB", "40GiB", 40 << 30, false},
	} {
		if g, ok := findGPU(c.gpu); !ok || (c.gpu == "A100-40GB" && g.Memory != 40960<<20) || (c.gpu == "A100-80GB" && g.Memory != 81920<<20) || (c.gpu == "H100-80GB" && g.Memory != 81559<<20) {
			t.Errorf("%s: the preset's Memory is not nvidia-smi's total", c.gpu)
		}
		doc := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: " + c.gpu
		if c.memory != "" {
			doc += ", gpu_memory: " + c.memory
		}
		doc += "}\nmodel: {preset: llama3.1-8b}\nparallelism: {dp: 8, zero_stage: 3}\n"
		s, err := Load("s.yaml", []byte(doc), nil)
		if err != nil {
			t.Fatal(err)
		}
		if s.Cluster.GPUMemory != c.want || s.Cluster.GPUMemoryUsable != c.usable {
			t.Errorf("%s gpu_memory %q: %d B usable %v, want %d B usable %v", c.gpu, c.memory, s.Cluster.GPUMemory, s.Cluster.GPUMemoryUsable, c.want, c.usable)
		}
	}
}

// TestUsableBelowDriverTotal: every published CUDA capacity is below the
// driver's total of its part (nvidia-smi's memory.total, GPUPreset.Memory),
// by less than 2 %: the driver's reserve (nvidia-smi -q "Reserved": 479 MiB
// on the L40S, 700 MiB on the H200, the printouts cited at the presets)
// plus what the host OS keeps. A figure above the total, or far below it,
// is a misread message or a message from another part.
func TestUsableBelowDriverTotal(t *testing.T) {
	for name, b := range cudaCapacity {
		g, ok := findGPU(name)
		if !ok {
			t.Errorf("cudaCapacity names %q, which is no GPU preset", name)
			continue
		}
		if b >= g.Memory || float64(g.Memory-b) > 0.02*float64(g.Memory) {
			t.Errorf("%s: CUDA capacity %d B is not within 2 %% below the driver's total %d B", name, b, g.Memory)
		}
		if g.Usable() != b {
			t.Errorf("%s: Usable %d B, want the published capacity %d B", name, g.Usable(), b)
		}
	}
}
