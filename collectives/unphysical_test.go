package collectives

import (
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestUnphysical (QA6 F6): fitted values no hardware can have are named
// with their file key. The XE9680 fits (docs/calibration.md's accuracy
// table; the 4-node log alone at 100.7 % of NDR's line rate) are
// physical; a hand-set inter_efficiency 50 and fixed_cost_us -500 (a 2-node
// 1 MiB all-reduce at 4.09 µs, busbw 481 GB/s) and the intra hop of -2.74
// µs fitted to logs whose small rows were cut to 1/8 are not.
func TestUnphysical(t *testing.T) {
	def, _ := scenarios.Example("default")
	s, err := scenarios.Load("default.yaml", def, nil)
	if err != nil {
		t.Fatal(err)
	}
	hw := HardwareOf(s)
	for _, tc := range []struct {
		name string
		p    Params
		want []string // prefixes, in order
	}{
		{"nominal", Nominal, nil},
		{"XE9680 2+4 nodes", Params{0.916, 1.031, 0.24, 0.23, -2.11}, nil},
		{"XE9680 4 nodes", Params{0.806, 1.049, -0.46, 2.25, -0.68}, nil},
		{"hand-set", Params{1, 50, 0, 0, -500}, []string{"params.inter_efficiency: inter efficiency 50.000 (4800 % of a NIC's line rate)", "params.fixed_cost_us: -500.00 µs makes NCCL's base latency -493.40 µs"}},
		{"small rows cut", Params{0.9, 1, -2.74, 6.28, 0}, []string{"params.intra_hop_latency_us: -2.74 µs makes an intra-node hop -2.14 µs"}},
		{"NVLink too fast", Params{1.3, 1, 0, 0, 0}, []string{"params.intra_efficiency: intra efficiency 1.300 (107 % of the intra-node link's line rate)"}},
		{"network hop", Params{1, 1, 0, -2.8, 0}, []string{"params.inter_hop_latency_us: -2.80 µs makes a network hop -0.10 µs"}},
	} {
		got := Unphysical(hw, tc.p)
		ok := len(got) == len(tc.want)
		for i := 0; ok && i < len(got); i++ {
			ok = strings.HasPrefix(got[i], tc.want[i])
		}
		if !ok {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
