package reports

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/zerosim/zerosim/units"
)

// MemoryCalibration is what `zerosim calibrate --reserved` and `--device`
// print: the measurement, the fitted allocator overhead and the peaks
// before and after.
type MemoryCalibration struct {
	File, Scenario string
	// Method is "reserved" (torch.cuda.max_memory_reserved) or "device"
	// (nvidia-smi); Measured the measured peak.
	Method   string
	Measured int64
	// Allocated is the busiest rank's allocated peak in the replay, the
	// one zerosim run reports; Pool DeepSpeed ZeRO-3's gather pool in
	// whole segments (0: none), Outside the CUDA context and NCCL buffers
	// the device peak adds.
	Allocated, Pool, Outside int64
	// PoolName names Pool (scenarios.GatherPoolName): DeepSpeed's gather
	// pool, or FSDP1's all-gather pool without its rate limiter.
	PoolName string
	// Before and After are memory.allocator_overhead and the reserved and
	// device peaks it gives, before and after the fit.
	Before, After MemoryPoint
	KeptNetwork   bool // the file's network part was kept
	WithNetwork   bool // the fit ran with the file's network part
	KeptCompute   bool // the file's compute part was kept
	// NoHeader leaves out the "# zerosim calibrate" line (calibrate
	// --train-log prints one of its own before).
	NoHeader bool
}

// MemoryPoint is the scenario's profiler peaks at one allocator overhead,
// or (Simulated) with the reserved peak from the caching-allocator
// simulation (memory.SimulatesReserve), Overhead then unused.
type MemoryPoint struct {
	Overhead         float64
	Reserved, Device int64
	Simulated        bool
}

// WriteMemoryCalibration prints a memory calibration.
func WriteMemoryCalibration(w io.Writer, r *MemoryCalibration) error {
	var b strings.Builder
	row := func(label, format string, args ...any) {
		fmt.Fprintf(&b, "%-21s%s\n", label+":", fmt.Sprintf(format, args...))
	}
	size := func(n int64) string { return units.Bytes(n).String() }
	if !r.NoHeader {
		fmt.Fprintf(&b, "# zerosim calibrate --%s: %s\n", r.Method, r.Scenario)
	}
	what, reproduced := "reserved peak", r.After.Reserved
	source, rounded := "torch.cuda.max_memory_reserved", "the measurement to the nearest 2 MiB segment"
	if r.Method == "device" {
		what, reproduced, source = "device peak", r.After.Device, "nvidia-smi"
		rounded = "the measurement less the CUDA context and NCCL buffers to the nearest 2 MiB segment, plus them"
	}
	row("measured", "%s %s (%s B, %s)", what, size(r.Measured), commas(r.Measured), source)
	pool := ""
	if r.Pool > 0 {
		pool = fmt.Sprintf(" + %s %s", r.PoolName, size(r.Pool))
	}
	row("allocated peak", "%s (%s B): the busiest rank's in the replay, as zerosim run reports it", size(r.Allocated), commas(r.Allocated))
	was := strconv.FormatFloat(r.Before.Overhead, 'f', -1, 64)
	if r.Before.Simulated {
		was = "none: the reserved peak was simulated"
	}
	row("allocator overhead", "%s fitted (was %s): reserved = allocated × (1 + overhead) in 2 MiB segments%s",
		strconv.FormatFloat(r.After.Overhead, 'f', -1, 64), was, pool)
	row("reserved peak", "%s before, %s after", size(r.Before.Reserved), size(r.After.Reserved))
	row("device peak", "%s before, %s after (reserved + CUDA context and NCCL buffers, %s)", size(r.Before.Device), size(r.After.Device), size(r.Outside))
	row("reproduced", "%s %s B against %s B measured: %s", what, commas(reproduced), commas(r.Measured), rounded)
	var kept []string
	if r.KeptNetwork {
		k := "network"
		if r.WithNetwork {
			k += " (the fit ran with it)"
		}
		kept = append(kept, k)
	}
	if r.KeptCompute {
		kept = append(kept, "compute")
	}
	also := ""
	if len(kept) > 0 {
		also = "; its " + strings.Join(kept, " and ") + " part"
		if len(kept) > 1 {
			also += "s"
		}
		also += " kept"
	}
	row("wrote", "%s (memory part%s); scenarios use it as communication.calibration", r.File, also)
	_, err := io.WriteString(w, b.String())
	return err
}
