package zero

import (
	"strings"
	"testing"

	"github.com/zerosim/zerosim/collectives"
	"github.com/zerosim/zerosim/scenarios"
)

// TestCalibrationNotUsedIsSaid (QA6 F1, F3): a network calibration corrects
// NCCL's cost model (auto, nvls, nvlstree) on the hardware it was fitted
// on. An explicit ring, tree or hierarchical runs zerosim's alpha–beta
// lowering, which the calibration does not touch (run gave 671.325 ms for
// ring on a calibration of inter efficiency 0.3 and said nothing), and a
// calibration of H100/NDR applied to an A100 cluster of one 12.5 GB/s NIC
// per node drops its measured curves (run gave 10.104 s and said nothing):
// both are said in the header and in a warning. So is one measured under
// NCCL's default NCCL_ALGO on this hardware, run under nccl_algo Ring
// (final read R2 F3): one warning naming both settings, not the hardware.
func TestCalibrationNotUsedIsSaid(t *testing.T) {
	for _, tc := range []struct {
		example, algo string
		timing        string // Result.Timing
		warn          string // "" = no warning
		set           string
	}{
		{"default", "auto", "NCCL's cost model calibrated by cal.yaml", "", ""},
		{"default", "nvls", "NCCL's cost model calibrated by cal.yaml", "", ""},
		{"default", "ring", "alpha–beta, not calibrated", "communication.algorithm ring runs zerosim's alpha–beta lowering: the network part of cal.yaml (fitted to NCCL's cost model) is not used", ""},
		{"default", "hierarchical", "alpha–beta, not calibrated", "communication.algorithm hierarchical runs zerosim's alpha–beta lowering", ""},
		{"default", "tree", "alpha–beta, not calibrated; all-reduces on the tree", "communication.algorithm tree runs zerosim's alpha–beta lowering", ""},
		{"llama2-13b-a100-eth", "auto", "NCCL's cost model calibrated by cal.yaml of other hardware, its measured curves not used",
			"the network part of cal.yaml was fitted on Hopper, NVLink 450 GB/s, 8 × 50 GB/s NICs per node, NVLS, this cluster is Ampere, NVLink 300 GB/s, 1 × 12.5 GB/s NICs per node, network latency +8µs, AMD host: its efficiencies and latencies are applied to this cluster's links, its measured curves are not used", ""},
		{"default", "auto", "NCCL's cost model calibrated by cal.yaml measured under other NCCL_ALGO or NCCL_PROTO settings, its measured curves not used",
			"the network part of cal.yaml was measured with NCCL_ALGO NCCL's default, NCCL_PROTO NCCL's default (hardware.algos, hardware.protos), this run has NCCL_ALGO Ring, NCCL_PROTO NCCL's default: its efficiencies and latencies are applied, its measured curves, timed under the algorithms those settings chose, are not used", "communication.nccl_algo=Ring"},
		// The NICs a node: the same H100 nodes with 4 shared NICs, not 8.
		{"default", "auto", "NCCL's cost model calibrated by cal.yaml of other hardware, its measured curves not used",
			"was fitted on Hopper, NVLink 450 GB/s, 8 × 50 GB/s NICs per node, NVLS, this cluster is Hopper, NVLink 450 GB/s, 4 × 50 GB/s NICs per node, NVLS: its efficiencies and latencies are applied to this cluster's links, its measured curves are not used (calibrate on this cluster)", "cluster.nics=per_node;cluster.nics_per_node=4"},
		// The NCCL release alone: the two descriptions were identical and
		// named no release.
		{"default", "auto", "NCCL 2.26's cost model calibrated by cal.yaml of other hardware, its measured curves not used",
			"was fitted on Hopper, NVLink 450 GB/s, 8 × 50 GB/s NICs per node, NVLS, NCCL 2.30, this cluster is Hopper, NVLink 450 GB/s, 8 × 50 GB/s NICs per node, NVLS, NCCL 2.26: its efficiencies and latencies are applied to this cluster's links, its measured curves are not used (time under NCCL 2.30 as fitted (communication.nccl_version, collective --nccl-version), or calibrate on logs of this release)", "communication.nccl_version=2.26"},
	} {
		t.Run(tc.example+"/"+tc.algo+tc.set, func(t *testing.T) {
			sets := []string{"communication.algorithm=" + tc.algo}
			if tc.set != "" {
				sets = append(sets, strings.Split(tc.set, ";")...)
			}
			s := example(t, tc.example, sets...)
			s.Communication.Calibration = "cal.yaml"
			s.Communication.CalibrationData = h100Calibration(t)
			m, err := Model(s)
			if err != nil {
				t.Fatal(err)
			}
			algo := algoOf[s.Communication.Algorithm]
			if got := timing(s, m, algo); !strings.HasPrefix(got, tc.timing) {
				t.Errorf("timing %q, want it to start %q", got, tc.timing)
			}
			w := CalibrationWarnings(s)
			switch {
			case tc.warn == "" && len(w) != 0:
				t.Errorf("warnings %q, want none", w)
			case tc.warn != "" && (len(w) != 1 || !strings.Contains(w[0], tc.warn)):
				t.Errorf("warnings %q, want one with %q", w, tc.warn)
			}
			if tc.warn == "" && algo == collectives.Auto && len(m.Curves) == 0 {
				t.Error("the calibration's curves were dropped on its own hardware")
			}
			if tc.set != "" && len(m.Curves) != 0 {
				t.Error("the calibration's curves were kept under other NCCL_ALGO settings or NICs")
			}
		})
	}
}

// h100Calibration is a network calibration of the default example's
// cluster (2 × 8 H100, NVLink4, 8 NDR NICs per node): its nominal
// hardware, the fit of QA6's calnet.yaml and bench's measured curves.
func h100Calibration(t *testing.T) *scenarios.Calibration {
	b := benchCalibration()
	c := &collectives.Calibration{HW: collectives.HardwareOf(example(t, "default")),
		Params: collectives.Params{IntraEff: 0.916, InterEff: 1.031, IntraHop: 0.24, InterHop: 0.23, Fixed: -2.11}}
	f := c.File()
	f.Curves = b.Curves
	return f
}

// TestCalibrationOtherPinsAndHardware (rev24): a calibration of other
// hardware measured under other NCCL pins gets both warnings, and the
// second describes this cluster as it is: an A100 cluster with nothing
// pinned, calibrated on H100 logs taken under NCCL_ALGO=Ring and
// NCCL_PROTO=Simple, is not described with the calibration's pins.
func TestCalibrationOtherPinsAndHardware(t *testing.T) {
	s := example(t, "llama2-13b-a100-eth")
	s.Communication.Calibration = "cal.yaml"
	cd := h100Calibration(t)
	pinned := example(t, "default", "communication.nccl_algo=Ring", "communication.nccl_proto=Simple")
	c := &collectives.Calibration{HW: collectives.HardwareOf(pinned), Params: collectives.Params{IntraEff: 0.916, InterEff: 1.031}}
	cd.Hardware = c.File().Hardware
	s.Communication.CalibrationData = cd
	w := CalibrationWarnings(s)
	const this = "this cluster is Ampere, NVLink 300 GB/s, 1 × 12.5 GB/s NICs per node, network latency +8µs, AMD host:"
	if len(w) != 2 || !strings.Contains(w[0], "measured with NCCL_ALGO Ring, NCCL_PROTO Simple") || !strings.Contains(w[1], this) {
		t.Errorf("warnings %q, want the pins', then the hardware's with %q", w, this)
	}
	// The header says both too (final read R1 F3: it said the pins only).
	m, err := Model(s)
	if err != nil {
		t.Fatal(err)
	}
	const both = "calibrated by cal.yaml of other hardware, measured under other NCCL_ALGO or NCCL_PROTO settings, its measured curves not used"
	if got := timing(s, m, collectives.Auto); !strings.Contains(got, both) {
		t.Errorf("timing %q, want %q", got, both)
	}
}
