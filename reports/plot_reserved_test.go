package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	goldenfile "github.com/zerosim/zerosim/internal/golden"
)

// fsdp2Sets put the default scenario (Llama 2 7B, 16 H100) under FSDP2 at
// stage 3, where the reserve is simulated (memory.SimulatesReserve).
var fsdp2Sets = []string{"parallelism.zero_stage=3", "communication.boundary=fsdp2"}

// The memory timeline plot draws the simulated reserve where there is one:
// its data (plot_tiny_fsdp2.json.golden, the tiny scenario under FSDP2)
// holds the reserve from the step's start, whose most is the simulation's
// reserved peak of the step, never below the allocated stack drawn under
// it, and what the device holds beside it (the device peak less the
// reserved one); the legend names both lines. Under a 34 GiB GPU the
// allocator releases its cache once a step and the line falls there.
func TestMemoryTimelineReservedLine(t *testing.T) {
	tiny := yamlRun(t, "tiny.yaml", []byte(tinyYAML), "communication.boundary=fsdp2").plots().MemoryTimeline
	b, err := json.MarshalIndent(tiny, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "plot_tiny_fsdp2.json.golden", append(b, '\n'))
	// Its steps allocate KiB of 2 MiB segments: the lines would flatten
	// the stack, so the legend gives their most instead.
	svg := string(plotFile(t, yamlRun(t, "tiny.yaml", []byte(tinyYAML), "communication.boundary=fsdp2"), "memory_timeline.svg"))
	if !strings.Contains(svg, "reserved up to 6.00 MiB (off scale)") || !strings.Contains(svg, "device up to 1.00 GiB (off scale)") || strings.Contains(svg, reservedLineName) {
		t.Errorf("tiny FSDP2: the legend does not give the lines off scale")
	}
	for _, sets := range [][]string{fsdp2Sets, append(slices.Clone(fsdp2Sets), "cluster.gpu_memory=34GiB")} {
		run := exampleRun(t, "default", sets...)
		r, sim := run.Result, run.Result.MemoryModel.AllocSim
		m := run.plots().MemoryTimeline
		if sim == nil || len(m.Reserved) == 0 || len(m.Reserved) != len(m.ReservedTimes) || m.ReservedTimes[0] != m.Start {
			t.Fatalf("%v: simulated %v, reserved %v at %v", sets, sim != nil, m.Reserved, m.ReservedTimes)
		}
		if got := slices.Max(m.Reserved); got != sim.SeriesPeakReserved() || sim.LastStepRetries() == 0 && got != sim.PeakReserved {
			t.Errorf("%v: the line's most %d, the step's simulated reserve %d (peak %d)", sets, got, sim.SeriesPeakReserved(), sim.PeakReserved)
		}
		if m.Outside <= 0 || m.Outside != r.DevicePeak-r.ReservedPeak {
			t.Errorf("%v: outside %d, device %d less reserved %d", sets, m.Outside, r.DevicePeak, r.ReservedPeak)
		}
		j := 0
		for i, at := range m.Times {
			for j+1 < len(m.ReservedTimes) && m.ReservedTimes[j+1] <= at {
				j++
			}
			var stack int64
			for c := range m.Components {
				stack += m.Values[c][i]
			}
			if m.Reserved[j] < stack {
				t.Errorf("%v: at %d ps reserved %d below the %d allocated", sets, at, m.Reserved[j], stack)
				break
			}
		}
		fell := false
		for i := 1; i < len(m.Reserved); i++ {
			fell = fell || m.Reserved[i] < m.Reserved[i-1]
		}
		if fell != (sim.LastStepRetries() > 0) {
			t.Errorf("%v: the line falls %v, %d retries in the step", sets, fell, sim.LastStepRetries())
		}
		svg := plotFile(t, run, "memory_timeline.svg")
		for _, want := range []string{reservedLineName, deviceLineName("NCCL")} {
			if !strings.Contains(string(svg), want) {
				t.Errorf("%v: the plot's legend lacks %q", sets, want)
			}
		}
	}
	// On AMD's GPUs the device line names RCCL (QA14 #3).
	amd := string(plotFile(t, exampleRun(t, "default", append(slices.Clone(fsdp2Sets), "cluster.gpu=MI300X", "cluster.intra.preset=xGMI")...), "memory_timeline.svg"))
	if !strings.Contains(amd, deviceLineName("RCCL")) || strings.Contains(amd, "NCCL") {
		t.Errorf("MI300X: the device line is not named %q", deviceLineName("RCCL"))
	}
	// A reserve that is a fraction of the peak is no time series: none.
	run := exampleRun(t, "default")
	if m := run.plots().MemoryTimeline; m.Reserved != nil || m.Outside != 0 || strings.Contains(string(plotFile(t, run, "memory_timeline.svg")), "reserved") {
		t.Errorf("default (stage 1): reserved %v, outside %d", m.Reserved, m.Outside)
	}
}

// plotFile renders run's plot file name.
func plotFile(t *testing.T, run *Run, name string) []byte {
	t.Helper()
	files, err := RenderRunFiles(run, map[string]bool{"plots": true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.Name == name {
			return f.Data
		}
	}
	t.Fatalf("no %s", name)
	return nil
}

// The memory timeline plot with its reserved and device lines is the same
// bytes from two replays (PNG and SVG), and the SVG of the default
// scenario under FSDP2 on a 34 GiB GPU (the reserve jumps, and falls
// where the allocator releases its cache) is its golden. The reserve at
// the step's start docs/memory-model.md quotes is the plot's first
// reserved point (the figure before the head's MmBackward0 moment,
// 34fa84f5, is history and not held).
func TestMemoryTimelinePlotDeterministic(t *testing.T) {
	var start int64
	render := func() [][]byte {
		run := exampleRun(t, "default", append(slices.Clone(fsdp2Sets), "cluster.gpu_memory=34GiB")...)
		if r := run.plots().MemoryTimeline.Reserved; len(r) > 0 {
			start = r[0]
		}
		return [][]byte{plotFile(t, run, "memory_timeline.png"), plotFile(t, run, "memory_timeline.svg")}
	}
	a, b := render(), render()
	for i, name := range []string{"png", "svg"} {
		if !bytes.Equal(a[i], b[i]) {
			t.Errorf("memory_timeline.%s differs between two runs", name)
		}
	}
	golden(t, "memory_timeline_fsdp2_34gib.svg.golden", a[1])
	goldenfile.CheckQuotes(t, "../docs/memory-model.md", "TestMemoryTimelinePlotDeterministic (default, FSDP2, cluster.gpu_memory=34GiB: memory_timeline.svg's first reserved point)",
		fmt.Sprintf("→ %s B at the step's start", commas(start)))
}

// result.json carries the simulated allocator's series beside the memory
// points, on their time axis, where the reserve is simulated, and none
// where it is a fraction.
func TestRunJSONReservedSeries(t *testing.T) {
	run := exampleRun(t, "default", fsdp2Sets...)
	j := run.toJSON()
	m := j.Memory
	if len(m.Reserved) == 0 || m.OutsideAllocator != run.Result.DevicePeak-run.Result.ReservedPeak {
		t.Fatalf("series of %d points, outside %d", len(m.Reserved), m.OutsideAllocator)
	}
	var peak int64
	for i, p := range m.Reserved {
		if p.Reserved < p.Allocated || i > 0 && p.TimePS <= m.Reserved[i-1].TimePS || p.TimePS > j.StepTimePS {
			t.Errorf("point %d: %+v", i, p)
		}
		peak = max(peak, p.Reserved)
	}
	if peak != j.ReservedPeakBytes {
		t.Errorf("the series' reserved peak %d, result.json's reserved_peak_bytes %d", peak, j.ReservedPeakBytes)
	}
	if j := exampleRun(t, "default").toJSON(); j.Memory.Reserved != nil || j.Memory.OutsideAllocator != 0 {
		t.Errorf("default (stage 1): %d points, outside %d", len(j.Memory.Reserved), j.Memory.OutsideAllocator)
	}
}
