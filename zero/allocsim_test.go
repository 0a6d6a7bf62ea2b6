package zero

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/internal/scenariotest"
	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
)

// TestSimulatedReserveFollowsTheModel replays every validation row whose
// reserved peak is simulated (PyTorch FSDP at stage 3,
// memory.SimulatesReserve) and holds the simulation to the memory model it
// replays: its allocated peak is the model's, up to one unit's gathered
// parameters (FSDP2's all-gather output lives beside the unsharded
// parameters while they are copied out) and the allocator's 512 B
// rounding of each request, and its reserved peak, which is at least that,
// is what zerosim reports. TestValidation compares the reserved peaks with
// the published ones.
func TestSimulatedReserveFollowsTheModel(t *testing.T) {
	files, err := filepath.Glob("../testdata/validation/*.json")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		base := strings.TrimSuffix(f, ".json")
		name := filepath.Base(base)
		src, tmpl := loadValidation(t, base)
		for i, row := range src.Rows {
			s, err := scenarios.Load(name+".yaml", tmpl, row.sets(src.gpn))
			if err != nil {
				t.Fatal(err)
			}
			if !memory.SimulatesReserve(s) {
				continue
			}
			n++
			r, err := memory.Analyze(s, memory.Options{})
			if err != nil {
				t.Fatalf("%s row %d: %v", name, i, err)
			}
			sim := r.AllocSim
			if sim == nil {
				t.Fatalf("%s row %d: not simulated", name, i)
			}
			alloc := r.Peak - int64(s.Memory.RuntimeContext) - int64(s.Memory.NCCLBuffers)
			var gather int64
			for _, u := range r.Units {
				gather = max(gather, u.Gather)
			}
			// PyTorch's kMinBlockSize (512 B, every request's rounding)
			// and kRoundLarge (2 MiB, a large segment's multiple):
			// c10/cuda/CUDACachingAllocator.cpp.
			const minBlock, segment = 512, 2 << 20
			if hi := alloc + gather + int64(sim.Requests)*minBlock; sim.PeakAllocated < alloc || sim.PeakAllocated > hi {
				t.Errorf("%s row %d: simulated allocated peak %d B, the model's %d B (at most %d)", name, i, sim.PeakAllocated, alloc, hi)
			}
			// zerosim reports the simulated reserve, or the model's
			// allocated peak in whole segments where that is higher
			// (within one segment of it), beside the pool of blocks the
			// host released ahead of the GPU where it runs ahead (FSDP1
			// without its rate limiter: memory.GatherPool, the part the
			// reserve holds).
			switch rest := r.Reserved - r.GatherPoolHeld; {
			case sim.PeakReserved < sim.PeakAllocated:
				t.Errorf("%s row %d: simulated reserve %d B below its allocated peak %d B", name, i, sim.PeakReserved, sim.PeakAllocated)
			case r.GatherPoolHeld > 0 && !s.HostRunsAhead():
				t.Errorf("%s row %d: pool %d B held where the host does not run ahead", name, i, r.GatherPoolHeld)
			case rest != sim.PeakReserved && (rest < max(sim.PeakReserved, alloc) || rest >= alloc+segment):
				t.Errorf("%s row %d: reserved %d B less the pool %d B, neither the simulated %d B nor the %d B allocated in whole segments", name, i, r.Reserved, r.GatherPoolHeld, sim.PeakReserved, alloc)
			}
		}
	}
	if n < 100 {
		t.Errorf("%d simulated rows, want the FSDP sources' (over 100)", n)
	}
}

// Options.Memory: a replay given the memory model's report of its scenario
// takes it (the same figures as a replay that analyzes the scenario
// itself, and the report itself as Result.MemoryModel); a report without
// the profiler's view (memory.ReserveNone) is not taken.
func TestReplayTakesTheMemoryReport(t *testing.T) {
	s, err := scenarios.Load("fsdp.yaml", []byte(scenariotest.FSDP2Llama7B), []string{"cluster.gpu_memory=17.5GiB"})
	if err != nil {
		t.Fatal(err)
	}
	own, err := Replay(s, Options{NoCollectives: true})
	if err != nil {
		t.Fatal(err)
	}
	if own.MemoryModel.AllocSim == nil || own.AllocRetries() == 0 {
		t.Fatalf("the case needs a simulated reserve with retries: %+v", own.MemoryModel.AllocSim)
	}
	for _, level := range []memory.ReserveLevel{memory.ReserveAll, memory.ReserveWhereFits, memory.ReserveNone} {
		rep, err := memory.Analyze(s, memory.Options{Reserve: level})
		if err != nil {
			t.Fatal(err)
		}
		got, err := Replay(s, Options{NoCollectives: true, Memory: rep})
		if err != nil {
			t.Fatal(err)
		}
		if taken := got.MemoryModel == rep; taken != (level != memory.ReserveNone) {
			t.Errorf("level %d: report taken %v", level, taken)
		}
		if got.StepTime != own.StepTime || got.ReservedPeak != own.ReservedPeak || got.DevicePeak != own.DevicePeak || got.DeviceNeed != own.DeviceNeed ||
			got.AllocRetries() != own.AllocRetries() || got.MemoryModel.Reserved != own.MemoryModel.Reserved {
			t.Errorf("level %d: step %v reserved %d device %d need %d retries %d, want %v %d %d %d %d", level, got.StepTime, got.ReservedPeak, got.DevicePeak, got.DeviceNeed, got.AllocRetries(),
				own.StepTime, own.ReservedPeak, own.DevicePeak, own.DeviceNeed, own.AllocRetries())
		}
	}
}
