package collectives

import (
	"cmp"
	"fmt"
	"testing"

	"github.com/zerosim/zerosim/sim"
	"github.com/zerosim/zerosim/topology"
	"github.com/zerosim/zerosim/units"
)

// BenchmarkAllReduce: lower and run one all-reduce of 64 MiB over every
// rank of nodes × 8 GPUs (ring and hierarchical), alone on the fabric.
func BenchmarkAllReduce(b *testing.B) {
	for _, nodes := range []int{4, 256, 2048} {
		topo, err := topology.New(topology.Params{Nodes: nodes, GPUsPerNode: 8,
			Intra: topology.LinkParams{Bandwidth: 450e9, Latency: 500 * units.Nanosecond},
			Inter: topology.LinkParams{Bandwidth: 50e9, Latency: 2 * units.Microsecond}})
		if err != nil {
			b.Fatal(err)
		}
		for _, algo := range []Algo{Ring, Hierarchical} {
			b.Run(fmt.Sprintf("ranks=%d/algo=%v", topo.Ranks(), algo), func(b *testing.B) {
				spec := Spec{Op: AllReduce, Algo: algo, Group: topo.All(), Bytes: 64 * units.MiB}
				eng := sim.New()
				f := NewFabric(eng, topo)
				b.ReportAllocs()
				for range b.N {
					if _, err := f.Start(spec, nil); err != nil {
						b.Fatal(err)
					}
					eng.Run()
				}
				b.ReportMetric(float64(eng.Events())/float64(b.N), "events/op")
			})
		}
	}
}

// BenchmarkConcurrentBuckets: 8 bucket all-reduces in flight at once on
// 256 ranks (32 nodes × 8), as an overlapped backward pass issues them.
func BenchmarkConcurrentBuckets(b *testing.B) {
	topo, err := topology.New(topology.Params{Nodes: 32, GPUsPerNode: 8,
		Intra: topology.LinkParams{Bandwidth: 450e9, Latency: 500 * units.Nanosecond},
		Inter: topology.LinkParams{Bandwidth: 50e9, Latency: 2 * units.Microsecond}})
	if err != nil {
		b.Fatal(err)
	}
	spec := Spec{Op: AllReduce, Algo: Hierarchical, Group: topo.All(), Bytes: 25 * units.MiB}
	eng := sim.New()
	f := NewFabric(eng, topo)
	b.ReportAllocs()
	for range b.N {
		for i := range 8 {
			eng.At(eng.Now()+sim.Time(i)*10*sim.Time(units.Microsecond), func() {
				if _, err := f.Start(spec, nil); err != nil {
					panic(err)
				}
			})
		}
		eng.Run()
	}
	b.ReportMetric(float64(eng.Events())/float64(b.N), "events/op")
}

// BenchmarkChooseRCCL: NCCL's choice of algorithm and protocol for an
// all-reduce of 64 MiB over 2 × 8 MI300X (RCCL's tuner ranks, the NCCL
// path times the pick), the tuner's inner loop on AMD across nodes.
func BenchmarkChooseRCCL(b *testing.B) {
	m := NewModel(mi300x())
	sh := Shape{Ranks: 16, Nodes: 2}
	b.ReportAllocs()
	for range b.N {
		if _, err := m.Choose(AllReduce, sh, Auto, 64*units.MiB); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkChooseNCCL: NCCL's choice of algorithm and protocol for an
// all-reduce of 64 MiB over 2 × 8 H100, under the default tuner and under
// a pinned release (communication.nccl_version), whose tuner is looked up
// by its name: the tuner's inner loop on NVIDIA across nodes.
func BenchmarkChooseNCCL(b *testing.B) {
	for _, release := range []string{"", "2.21", "2.29.7"} {
		b.Run("nccl="+cmp.Or(release, "default"), func(b *testing.B) {
			hw := h100(50e9, 0)
			hw.NCCL = release
			m := NewModel(hw)
			sh := Shape{Ranks: 16, Nodes: 2}
			b.ReportAllocs()
			for range b.N {
				if _, err := m.Choose(AllReduce, sh, Auto, 64*units.MiB); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
