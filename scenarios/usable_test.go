package scenarios

import (
	"testing"

	"github.com/zerosim/zerosim/units"
)

// TestUsableGPUMemory: a GPU preset with a published CUDA capacity (the
// caching allocator's "X GiB total capacity": A100-40GB 39.39 GiB,
// hiyouga/LlamaFactory#2908; A100-80GB 79.18 GiB, tatsu-lab/stanford_alpaca#86)
// gives cluster.gpu_memory that figure, X × 2^30 B, and marks it usable;
// one without keeps nvidia-smi's total (H100-80GB 81,559 MiB); a
// gpu_memory the file gives wins and is not marked.
func TestUsableGPUMemory(t *testing.T) {
	for _, c := range []struct {
		gpu, memory string
		want        units.Bytes
		usable      bool
	}{
		{"A100-40GB", "", 42294690447, true}, // 39.39 × 1,073,741,824 = 42,294,690,447.36
		{"A100-80GB", "", 85018877624, true}, // 79.18 × 1,073,741,824 = 85,018,877,624.32
		{"H100-80GB", "", 81559 << 20, false},
		{"A100-40GB", "40GiB", 40 << 30, false},
	} {
		if g, ok := findGPU(c.gpu); !ok || (c.gpu == "A100-40GB" && g.Memory != 40960<<20) || (c.gpu == "A100-80GB" && g.Memory != 81920<<20) {
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
