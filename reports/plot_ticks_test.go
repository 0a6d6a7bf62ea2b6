package reports

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/units"
	"gonum.org/v1/plot"
)

// labels are the labels drawn on an axis lo–hi (gonum drops ticks outside
// the axis).
func labels(ts []plot.Tick, lo, hi float64) []string {
	var out []string
	for _, t := range ts {
		if t.Label != "" && t.Value >= lo && t.Value <= hi {
			out = append(out, t.Label)
		}
	}
	return out
}

// An axis always carries at least two labels: gonum's LogTicks labels
// nothing on a log axis spanning less than a decade (3 to 8) and
// DefaultTicks two values on a memory axis of 0–90 GiB.
func TestTicksAlwaysLabel(t *testing.T) {
	if got := labels(plot.LogTicks{Prec: -1}.Ticks(3, 8), 3, 8); len(got) != 0 {
		t.Errorf("plot.LogTicks labels %q on 3–8; the premise of labelledLogTicks changed", got)
	}
	cases := []struct {
		name   string
		ticker plot.Ticker
		lo, hi float64
		want   string
	}{
		{"log, less than a decade", labelledLogTicks{}, 3, 8, "[3 4 5 6 7 8]"},
		{"log, within 1-2", labelledLogTicks{}, 1.1, 1.9, "[1.2 1.4 1.6 1.8]"},
		{"log, several decades", labelledLogTicks{}, 0.5, 2000, "[1 10 100 1000]"},
		{"log, 20 to 90", labelledLogTicks{}, 20, 90, "[20 50]"},
		{"memory GiB", readableTicks{}, 0, 88, "[0 20 40 60 80]"},
		{"time ms", readableTicks{}, 0, 438.6, "[0 100 200 300 400]"},
		{"small", readableTicks{}, 0, 0.7, "[0.0 0.2 0.4 0.6]"},
	}
	for _, c := range cases {
		got := labels(c.ticker.Ticks(c.lo, c.hi), c.lo, c.hi)
		if len(got) < 2 {
			t.Errorf("%s: %q labels fewer than two ticks", c.name, got)
		}
		if s := fmtSlice(got); s != c.want {
			t.Errorf("%s: labels %s, want %s", c.name, s, c.want)
		}
	}
}

func fmtSlice(s []string) string {
	out := "["
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out + "]"
}

// The memory timeline puts the components that stay constant (runtime
// context, NCCL buffers, the states at rest) at the bottom, draws the GPU's
// capacity and labels both axes with round values.
func TestMemoryTimelineReads(t *testing.T) {
	run := exampleRun(t, "default", "memory.runtime_context=3GiB", "memory.nccl_buffers=1GiB")
	m := run.memoryTimelinePlot()
	want := "[params grads fp32 master params adam m adam v runtime context nccl buffers optimizer temporaries activations loss temporaries]"
	if got := fmt.Sprint(m.Components); got != want {
		t.Errorf("components bottom to top %s, want %s", got, want)
	}
	// The H100's CUDA capacity, 79.11 GiB (scenarios.cudaCapacity).
	if m.Capacity != 7911<<30/100 || m.CapacityLabel != "GPU memory 79.11 GiB usable" {
		t.Errorf("capacity %d %q", m.Capacity, m.CapacityLabel)
	}
	var svg bytes.Buffer
	pl := run.plots()
	for _, im := range pl.images() {
		if im.Name == "memory_timeline" {
			if err := im.writeSVG(&svg); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, label := range []string{">0<", ">20<", ">40<", ">60<", ">80<", ">100<", ">200<", ">300<", "GPU memory 79.11 GiB usable"} {
		if !strings.Contains(svg.String(), label) {
			t.Errorf("memory_timeline.svg lacks the label %q", label)
		}
	}
}

// A chart's byte axis takes the unit of its largest value up to PiB (PB),
// the units its bar labels use (qa21 LOW 8: comm.png of Qwen3-235B on 576
// GB200s had a GiB axis with ticks to 100,000 beside TiB labels).
func TestByteUnitByMagnitude(t *testing.T) {
	for _, c := range []struct {
		v     int64
		u     MemoryUnits
		unit  string
		scale int64
	}{
		{int64(units.GiB) * 1023, MemoryGiB, "GiB", int64(units.GiB)},
		{int64(units.TiB) * 90, MemoryGiB, "TiB", int64(units.TiB)},
		{int64(units.TiB) * 1024, MemoryGiB, "PiB", int64(units.TiB) * 1024},
		{999e9, MemoryGB, "GB", 1e9},
		{90e12, MemoryGB, "TB", 1e12},
		{2e15, MemoryGB, "PB", 1e15},
	} {
		if unit, scale := byteUnit(c.v, c.u); unit != c.unit || scale != c.scale {
			t.Errorf("byteUnit(%d) = %s %d, want %s %d", c.v, unit, scale, c.unit, c.scale)
		}
		if !strings.HasSuffix(unitBytes(c.v, c.unit), " "+strings.Replace(c.unit, "kB", "KB", 1)) {
			t.Errorf("%d: label %q is not in %s", c.v, unitBytes(c.v, c.unit), c.unit)
		}
	}
}
