package collectives

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// TestLogNICShape (rev23 LOW-6): the NICs a logged run crossed on its
// nodes, from its devices block, on nodes of 8 GPUs sharing 4 NICs (GPU g
// on NIC g·4/8, as topology.NIC lays them out: GPUs 0–1 on NIC 0, 2–3 on
// NIC 1, …). By hand: devices 0–3 of each of 2 hosts cross NICs 0 and 1,
// 2, where the rule (min(4 NICs, 4 ranks)) says 4: MinNICs 2; devices 0,
// 2, 4, 6 (or 1, 3, 5, 7) cross all 4, the rule's: none; devices 0–1
// cross 1 of the rule's 2; a host of 0–3 and one of 0, 2, 4, 6: the
// fewest, 2; whole nodes and a GPU of its own NIC each (nics per_gpu,
// shared 0) are the rule's. Unknown (ok false, the rule's shape): no
// devices block, a device 8 on 8-GPU nodes, device 0 twice on a host
// (CUDA_VISIBLE_DEVICES per process), one hostname that calibrate's
// --nodes 2 splits (containers sharing it).
func TestLogNICShape(t *testing.T) {
	devices := func(hosts ...[]int) string {
		b := "# Using devices\n"
		r := 0
		for h, ds := range hosts {
			for _, d := range ds {
				b += fmt.Sprintf("#  Rank %2d Group  0 Pid  1000 on %10s device %2d [0000:1b:00] NVIDIA H100 80GB HBM3\n", r, fmt.Sprintf("host%d", h), d)
				r++
			}
		}
		return b + "#\n"
	}
	header := goodHeader[strings.Index(goodHeader, "#       size"):]
	row := "     1048576        262144     float     sum      -1    71.93   14.58   27.33      0    71.47   14.67   27.51      0\n"
	for _, c := range []struct {
		name         string
		devs         string
		gpn, shared  int
		ranks, nodes int
		min          int
		ok           bool
	}{
		{"4 of 8 on 2 NICs", devices([]int{0, 1, 2, 3}, []int{0, 1, 2, 3}), 8, 4, 8, 2, 2, true},
		{"4 spread over 4 NICs", devices([]int{0, 2, 4, 6}, []int{0, 2, 4, 6}), 8, 4, 8, 2, 0, true},
		{"2 on one NIC", devices([]int{0, 1}, []int{6, 7}), 8, 4, 4, 2, 1, true},
		{"odd and even GPUs", devices([]int{0, 2, 4, 6}, []int{1, 3, 5, 7}), 8, 4, 8, 2, 0, true},
		{"uneven NICs, fewest", devices([]int{0, 1, 2, 3}, []int{0, 2, 4, 6}), 8, 4, 8, 2, 2, true},
		{"whole nodes", devices([]int{0, 1, 2, 3, 4, 5, 6, 7}), 8, 4, 8, 1, 0, true},
		{"own NICs", devices([]int{0, 1}, []int{0, 1}), 8, 0, 4, 2, 0, true},
		{"no devices block", "", 8, 4, 8, 2, 0, false},
		{"device beyond the node", devices([]int{0, 1, 2, 8}, []int{0, 1, 2, 3}), 8, 4, 8, 2, 0, false},
		{"renumbered per process", devices([]int{0, 0, 0, 0}, []int{0, 0, 0, 0}), 8, 4, 8, 2, 0, false},
		{"one hostname, --nodes 2", devices([]int{0, 1, 2, 3, 4, 5, 6, 7}), 8, 4, 8, 2, 0, false},
	} {
		logs, err := ParseLogs("x.log", strings.NewReader("# Collective test starting: all_reduce_perf\n"+c.devs+header+row))
		if err != nil {
			t.Fatal(err)
		}
		l := logs[0]
		if l.Ranks != c.ranks || l.Nodes != c.nodes {
			l.Ranks, l.Nodes = c.ranks, c.nodes // as calibrate's --nodes and --gpus-per-node give them
		}
		sh, ok := l.NICShape(c.gpn, c.shared)
		if want := (Shape{Ranks: c.ranks, Nodes: c.nodes, MinNICs: c.min}); sh != want || ok != c.ok {
			t.Errorf("%s: %+v, %v; want %+v, %v", c.name, sh, ok, want, c.ok)
		}
	}
}

// TestCurveMinNICsRoundTrip: a curve's MinNICs survives the calibration
// file (min_nics) and times only the groups that cross as many NICs: a
// replayed group of 4 ranks a node on 2 shared NICs takes the measured
// 1,000 µs; the rule's group of as many ranks (4 NICs) does not, nor does
// a file without min_nics (an old one) for the 2-NIC group.
func TestCurveMinNICsRoundTrip(t *testing.T) {
	hw := h100(50e9, 0)
	hw.NICsPerNode = 4
	two := Shape{Ranks: 8, Nodes: 2, MinNICs: 2}
	c := &Calibration{HW: hw, Params: Nominal, Curves: []Curve{{Op: AllReduce, Shape: two, Sizes: []int64{1 << 20, 1 << 21}, TimesUS: []float64{1000, 1100}}}}
	f := c.File()
	if f.Curves[0].MinNICs != 2 {
		t.Fatalf("file curve %+v, want min_nics 2", f.Curves[0])
	}
	old := *f
	old.Curves = slices.Clone(f.Curves)
	old.Curves[0].MinNICs = 0
	for _, tc := range []struct {
		name string
		file *scenarios.Calibration
		sh   Shape
		want bool
	}{
		{"2 NICs", f, two, true},
		{"the rule's 4 NICs", f, Shape{Ranks: 8, Nodes: 2}, false},
		{"old file, 2 NICs", &old, two, false},
	} {
		back, err := CalibrationOf(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		ch, err := back.Model(hw).Time(AllReduce, tc.sh, Auto, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if got := ch.Time == 1000*units.Microsecond; got != tc.want {
			t.Errorf("%s: %v, measured curve used %v, want %v", tc.name, ch.Time, got, tc.want)
		}
	}
}
