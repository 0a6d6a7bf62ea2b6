package sweep

import (
	"context"
	"testing"

	"github.com/zerosim/zerosim/internal/scenariotest"
)

// TestPlanSmallestAllocOOM: when nothing fits because the simulated
// caching allocator runs out of memory (fragmentation) while the peak and
// what the device needs there are within the GPU, plan says so with the
// least-memory configuration (Plan.SmallestAllocOOM), for NoFitText not
// to report a negative excess. Llama 2 7B under FSDP2 on 16.75 GiB GPUs
// (memory's TestSimulateReservedWithinTheGPU: peak and need within the
// GPU, the simulated allocator out of memory), searched at its own
// configuration only.
func TestPlanSmallestAllocOOM(t *testing.T) {
	src := Source{File: "fsdp.yaml", Data: []byte(scenariotest.FSDP2Llama7B)}
	src.Sets = []string{"cluster.gpu_memory=16.75GiB"}
	p, err := PlanSearch(context.Background(), src, PlanOptions{GlobalBatch: 16, Stages: []int{3}, Recompute: []string{"full"},
		MicroBatches: []int64{2}, K: []int{1}, Prefetch: []int{1}, Algorithms: []string{"ring"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Rows) != 0 || p.SmallestPeak <= 0 {
		t.Fatalf("%d rows, smallest peak %d; want none fits", len(p.Rows), p.SmallestPeak)
	}
	if max(p.SmallestPeak, p.SmallestNeed) > p.GPUMemory || !p.SmallestAllocOOM {
		t.Errorf("smallest %v: peak %d, need %d of %d, allocator out of memory %v; want both within the GPU and out of memory",
			p.Smallest.Sets(), p.SmallestPeak, p.SmallestNeed, p.GPUMemory, p.SmallestAllocOOM)
	}
	// The device needs the peak plus the CUDA context and NCCL's buffers,
	// both positive (memory.Report.Need): strictly more than the peak.
	if p.SmallestNeed <= p.SmallestPeak {
		t.Errorf("smallest %v: need %d B, peak %d B; want the need above the peak (CUDA context and NCCL buffers)", p.Smallest.Sets(), p.SmallestNeed, p.SmallestPeak)
	}
}

// TestPlanSmallestNeedReplayed: where the memory model lets the
// least-memory candidate through and its replay does not fit, Smallest's
// need is the replay's. Llama 2 7B under FSDP2 at stage 2 peaks at
// 26.56 GB in the memory model and 27.03 GB in the replay, about 1.07 GB
// more with the CUDA context and NCCL's buffers (zero.Result.DeviceNeed):
// on a GPU of 27.81 GB the model's need, 27.63 GB, is within
// the GPU and the replay's, about 28.1 GB, is not. Nothing fits, not for
// fragmentation, so the need Plan reports is over the GPU (the replay's),
// and above the peak.
func TestPlanSmallestNeedReplayed(t *testing.T) {
	src := Source{File: "fsdp.yaml", Data: []byte(scenariotest.FSDP2Llama7B)}
	src.Sets = []string{"cluster.gpu_memory=27810000000B"}
	p, err := PlanSearch(context.Background(), src, PlanOptions{GlobalBatch: 16, Stages: []int{2}, Recompute: []string{"full"},
		MicroBatches: []int64{2}, K: []int{1}, Algorithms: []string{"ring"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Rows) != 0 || p.SmallestPeak <= 0 || p.SmallestAllocOOM {
		t.Fatalf("%d rows, smallest peak %d, allocator out of memory %v; want none fits, not for fragmentation", len(p.Rows), p.SmallestPeak, p.SmallestAllocOOM)
	}
	if modelNeed, _ := p.modelNeed(p.Smallest); modelNeed > p.GPUMemory {
		t.Fatalf("the memory model's need %d B is over the GPU's %d B: not the case this test is for", modelNeed, p.GPUMemory)
	}
	if p.SmallestNeed <= p.GPUMemory || p.SmallestNeed <= p.SmallestPeak {
		t.Errorf("smallest %v: need %d B, peak %d B, GPU %d B; want the replay's need, over the GPU and above the peak", p.Smallest.Sets(), p.SmallestNeed, p.SmallestPeak, p.GPUMemory)
	}
}
