package zero

import (
	"math"
	"testing"

	"github.com/zerosim/zerosim/collectives"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// efaP4dYAML is a p4d cluster as the EFA-p4d preset's note says to give
// it: 8 × A100 per node, 4 × 100 Gb/s EFA shared by the node's GPUs.
const efaP4dYAML = `version: 1
cluster:
  nodes: 4
  gpus_per_node: 8
  gpu: A100-40GB
  intra:
    preset: NVLink3
  inter:
    preset: EFA-p4d
  nics: per_node
  nics_per_node: 4
model:
  preset: gpt3-125m
parallelism:
  dp: 32
  zero_stage: 3
`

// TestEFAP4dEfficiency holds the EFA-p4d preset's efficiency to the
// published 1 GiB all-reduces it is the mean of (scenarios.LinkPreset
// Efficiency cites them): an uncalibrated model of a p4d cluster meets
// each within 3.5 %, where the nominal model is 42-49 % faster; the
// post's 4-node run (3 of 4 NICs in use) is left out. Explicit
// bandwidths and other presets keep the nominal model.
func TestEFAP4dEfficiency(t *testing.T) {
	cases := []struct {
		name      string
		nodes     int
		algo      collectives.Algo
		busbwGBps float64 // measured, GB/s
	}{
		// collectives/testdata/nccl-tests/a100_2node_allreduce_aws_p4d_efa_ring.log, 1 GiB out-of-place.
		{"aws-efa-eks 2 nodes ring", 2, collectives.Ring, 32.71},
		// NVIDIA/nccl issue #527, 1 GiB out-of-place, NCCL's own choice.
		{"nccl#527 2 nodes", 2, collectives.Auto, 57.17},
		{"nccl#527 3 nodes", 3, collectives.Auto, 31.77},
	}
	s, err := scenarios.Load("p4d.yaml", []byte(efaP4dYAML), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := PresetInterEfficiency(s); got != 0.69 {
		t.Fatalf("EFA-p4d efficiency %v, want 0.69", got)
	}
	m, err := Model(s)
	if err != nil || m == nil {
		t.Fatalf("model: %v", err)
	}
	nominal := collectives.NewModel(m.HW)
	const size = units.GiB
	busbw := func(m *collectives.Model, nodes int, a collectives.Algo) float64 {
		t.Helper()
		ranks := 8 * nodes
		c, err := m.Time(collectives.AllReduce, collectives.Shape{Ranks: ranks, Nodes: nodes}, a, size)
		if err != nil {
			t.Fatal(err)
		}
		return float64(size) / c.Time.Seconds() / 1e9 * 2 * float64(ranks-1) / float64(ranks)
	}
	for _, c := range cases {
		got, nom := busbw(m, c.nodes, c.algo), busbw(nominal, c.nodes, c.algo)
		e := got/c.busbwGBps - 1
		t.Logf("%s: measured %.2f GB/s, model %.2f (%+.1f %%), nominal %.2f (%+.1f %%)", c.name, c.busbwGBps, got, 100*e, nom, 100*(nom/c.busbwGBps-1))
		if math.Abs(e) > 0.035 {
			t.Errorf("%s: model busbw %.2f GB/s, measured %.2f: %+.1f %%, want within 3.5 %%", c.name, got, c.busbwGBps, 100*e)
		}
		if nom/c.busbwGBps < 1.4 {
			t.Errorf("%s: the nominal model gives %.2f GB/s, measured %.2f: the case no longer tests the efficiency", c.name, nom, c.busbwGBps)
		}
	}
	for _, set := range [][]string{{"cluster.inter.bandwidth=90Gbit/s"}, {"cluster.inter.preset=EFA-p5"}, {"cluster.inter.preset=NDR"}} {
		x, err := scenarios.Load("p4d.yaml", []byte(efaP4dYAML), set)
		if err != nil {
			t.Fatal(err)
		}
		if got := PresetInterEfficiency(x); got != 1 {
			t.Errorf("%v: efficiency %v, want 1 (nominal)", set, got)
		}
	}
}
