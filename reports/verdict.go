package reports

import (
	"fmt"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
)

// FitVerdict says whether a replayed step fits the GPU: the largest peak
// over the ranks, and what the device needs there, against the GPU's
// memory (zero.Result.Fits).
type FitVerdict struct {
	Known    bool  // the scenario gives the GPU's memory
	Fits     bool  // Known, Peak ≤ Capacity and Need ≤ Capacity
	Peak     int64 // bytes, the largest peak of any rank
	Rank     int   // the rank with that peak
	Need     int64 // bytes the device needs at Peak: + CUDA context, NCCL buffers
	Capacity int64 // bytes of GPU memory
	Units    MemoryUnits
	Vendor   Vendor // the words for the context and buffers
	// Alloc is the simulated caching allocator's run when it ran out of
	// memory within the GPU (zero.Result.AllocatorOOM): then Fits is false.
	Alloc *memory.AllocSim
	// Device is what the device holds at the busiest rank's peak with the
	// caching allocator's reserve (zero.Result.DevicePeak, nvidia-smi's
	// view); Retries the simulated allocator's cache releases in a step
	// (zero.Result.AllocRetries). A step that fits with Device above
	// Capacity, or with retries, runs with allocator retries: the
	// verdict says so after its yes (Room false), as fit's "leave room"
	// and plan's "to fit" do.
	Device  int64
	Retries int
	Room    bool // Fits and zero.Result.DeviceFits
}

// Fit returns the run's memory verdict (the replay's per-rank peaks).
func (run *Run) Fit() FitVerdict {
	v := FitVerdict{Capacity: int64(run.Scenario.Cluster.GPUMemory), Units: run.Style.Units, Need: run.Result.DeviceNeed, Vendor: run.vendor()}
	v.Peak, v.Rank = run.Result.Peak()
	v.Known = v.Capacity > 0
	v.Fits = run.Result.Fits(v.Capacity)
	v.Alloc = run.Result.AllocatorOOM()
	v.Device, v.Retries = run.Result.DevicePeak, run.Result.AllocRetries()
	v.Room = v.Fits && run.Result.DeviceFits(v.Capacity)
	return v
}

// fragmentationOOM reports whether a step whose allocated peak and device
// need both fit capacity does not fit all the same because the simulated
// caching allocator a runs out of memory (fragmentation: memory.AllocSim.OOM).
func fragmentationOOM(a *memory.AllocSim, peak, need, capacity int64) bool {
	return a != nil && a.OOM != nil && peak <= capacity && need <= capacity
}

// String is the verdict in words, each figure named by what it counts
// (qauser33 M4: the headline's "peak" was the allocated peak while the
// device figure, 25–35 % above it under FSDP, was thirty lines below).
// A step that fits with room leads with the device figure, what the GPU
// holds as nvidia-smi shows it (zero.Result.DevicePeak: allocated bytes,
// the caching allocator's reserve, the CUDA context and NCCL's buffers):
// "yes: device 53.95 GiB of 79.11 GiB (68.2 %, as nvidia-smi shows it:
// allocated, the caching allocator's reserve, the CUDA context and NCCL's
// buffers); allocated peak 40.07 GiB (50.7 %)". Without a device figure,
// or when the reserve does not fit (roomText), the allocated peak and
// the need without the reserve: "yes: allocated peak 49.31 GiB of 80.00
// GiB (61.6 %); with the CUDA context and NCCL's buffers 50.30 GiB
// (62.9 %)". Otherwise "NO: allocated peak 125.51 GiB on rank 0 exceeds
// the GPU's 80.00 GiB by 45.51 GiB", or, when the peak fits and the
// device's need does not, "NO: allocated peak 79.20 GiB on rank 0, and
// with the CUDA context and NCCL's buffers the device needs 80.22 GiB,
// 0.22 GiB over the GPU's 80.00 GiB".
func (v FitVerdict) String() string {
	iec := v.Units.format
	switch {
	case !v.Known:
		return fmt.Sprintf("unknown: allocated peak %s, the scenario gives no GPU memory", iec(v.Peak))
	case v.Fits && v.Room && v.Device > 0:
		return fmt.Sprintf("yes: device %s of %s (%s %%, as %s shows it: allocated, the caching allocator's reserve, %s); allocated peak %s (%s %%)",
			iec(v.Device), iec(v.Capacity), percent(v.Device, v.Capacity), v.Vendor.smi(), v.Vendor.extras(), iec(v.Peak), percent(v.Peak, v.Capacity))
	case v.Fits:
		return fmt.Sprintf("yes: allocated peak %s of %s (%s %%); with %s %s (%s %%)",
			iec(v.Peak), iec(v.Capacity), percent(v.Peak, v.Capacity), v.Vendor.extras(), iec(v.Need), percent(v.Need, v.Capacity)) + v.roomText()
	case fragmentationOOM(v.Alloc, v.Peak, v.Need, v.Capacity):
		return fmt.Sprintf("NO: allocated peak %s of %s, with %s %s, but %s",
			iec(v.Peak), iec(v.Capacity), v.Vendor.extras(), iec(v.Need), v.Alloc.OOMReason())
	}
	if v.Peak <= v.Capacity {
		return fmt.Sprintf("NO: allocated peak %s on rank %d, and with %s the device needs %s, %s over the GPU's %s",
			iec(v.Peak), v.Rank, v.Vendor.extras(), iec(v.Need), iec(v.Need-v.Capacity), iec(v.Capacity))
	}
	return fmt.Sprintf("NO: allocated peak %s on rank %d exceeds the GPU's %s by %s", iec(v.Peak), v.Rank, iec(v.Capacity), iec(v.Peak-v.Capacity))
}

// Cell is the verdict as a table cell (fitCell): "no", "yes", or "yes†"
// where the step fits without room for the caching allocator's reserve
// (String's "yes, but … expect allocator retries").
func (v FitVerdict) Cell() string { return fitCell(v.Fits, v.Room) }

// retriesMark marks a table's "yes" whose device has no room for the
// caching allocator's reserve: zerosim run's "yes, but … expect allocator
// retries", plan's † rows (QA s31 L2: compare and fit wrote a bare "yes"
// where run and plan warned).
const retriesMark = "†"

// fitCell is a fit verdict in a table's cell: "no", "yes", or "yes†" when
// it fits (the allocated peak and the device's need without the reserve)
// but not with room for the caching allocator's reserve
// (zero.Result.DeviceFits false), which retriesLegend explains.
func fitCell(fits, room bool) string {
	switch {
	case !fits:
		return "no"
	case !room:
		return "yes" + retriesMark
	}
	return "yes"
}

// retriesLegend is the line under a table with a fitCell "yes†", in
// zerosim run's words; smi names the device monitor (Vendor.smi).
func retriesLegend(smi string) string {
	// Both causes of a † (qauser32 L3: compare's K=2 row, 78.99 of 79.11
	// GiB, was said to need more than the GPU): the reserve over the GPU,
	// or the simulated allocator within it only by releasing its cache.
	return fmt.Sprintf("%s: fits, but with the caching allocator's reserve the device needs more than the GPU (%s's view), or stays within it only by releasing its cache: %s",
		retriesMark, smi, memory.ExpectRetries)
}

// roomText is what a fitting verdict adds when the device has no room for
// the caching allocator's reserve (Room false): "", or ", but with the
// caching allocator's reserve the device needs 80.18 GiB: expect
// allocator retries (…)", the figure fit's "leave room" judges by.
func (v FitVerdict) roomText() string {
	switch {
	case v.Room:
		return ""
	case v.Retries > 0:
		return fmt.Sprintf(", but the simulated caching allocator releases its cache %s a step to stay within it: %s", timesWord(v.Retries), memory.ExpectRetries)
	case v.Device > v.Capacity:
		return fmt.Sprintf(", but with the caching allocator's reserve the device needs %s (%s %%): %s",
			v.Units.format(v.Device), percent(v.Device, v.Capacity), memory.ExpectRetries)
	}
	return ""
}

// ScenarioSHA256 is scenarios.Digest of s, the scenario_sha256 of every
// JSON output (sweep's meta line, plan.json, fit, compare, verify,
// collective); "" when it does not encode.
func ScenarioSHA256(s *scenarios.Scenario) string {
	d, err := scenarios.Digest(s)
	if err != nil {
		return ""
	}
	return d
}

// scenarioDigest names the resolved scenario in a report that does not
// carry it in full (the terminal): " (resolved: sha256 1a2b3c4d5e6f)", the
// first 12 digits of scenarios.Digest (sweep's and plan's scenario_sha256).
func scenarioDigest(s *scenarios.Scenario) string {
	d, err := scenarios.Digest(s)
	if err != nil {
		return ""
	}
	return " (resolved: sha256 " + d[:12] + ")"
}

// resolvedYAML is the resolved scenario as a scenario file, for the HTML
// report: the files it read named by absolute path, as result.json's
// resolved_scenario (scenarios.Replayable).
func resolvedYAML(s *scenarios.Scenario) string {
	data, err := scenarios.Encode(scenarios.Replayable(s))
	if err != nil {
		return "cannot encode the scenario: " + err.Error()
	}
	return string(data)
}

// countNoun spells a count with its noun in the right number: "1 task",
// "19 tasks", "1,024 ranks".
func countNoun(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return commas(int64(n)) + " " + many
}
