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
