package memory

import (
	"fmt"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

func benchmarkLayout(b *testing.B, params int, bucketElems int64, padding Padding) {
	ps := make([]Param, params)
	for i := range ps {
		ps[i] = Param{Name: "p", Numel: 1_000_003 + int64(i), Unit: i / 4}
	}
	spec := LayoutSpec{Params: ps, Shards: 64, BucketElems: bucketElems, Padding: padding}
	b.ReportAllocs()
	var buckets int
	for b.Loop() {
		l, err := NewLayout(spec)
		if err != nil {
			b.Fatal(err)
		}
		buckets = len(l.Buckets)
	}
	b.ReportMetric(float64(buckets), "buckets")
}

func BenchmarkNewLayout(b *testing.B) {
	for _, params := range []int{100, 10_000} {
		for _, pad := range []Padding{PadToy, PadMegatron} {
			b.Run(fmt.Sprintf("params=%d/padding=%v", params, pad), func(b *testing.B) {
				benchmarkLayout(b, params, 40_000_000, pad)
			})
		}
	}
	b.Run("params=100/padding=toy/buckets=1M", func(b *testing.B) { benchmarkLayout(b, 100, 101, PadToy) })
}

func benchmarkAnalyze(b *testing.B, layers, stage int) {
	s := &scenarios.Scenario{
		Name: "bench", Cluster: scenarios.Cluster{Nodes: 8, GPUsPerNode: 8},
		Parallelism:   scenarios.Parallelism{DP: 64, Stage: stage},
		Model:         scenarios.Model{Kind: "transformer", Hidden: 4096, Heads: 32, SeqLen: 4096, Layers: int64(layers)},
		Communication: scenarios.Communication{BucketSize: 40 * units.MB},
	}
	for i := range layers {
		s.Model.LayerList = append(s.Model.LayerList, scenarios.Layer{Name: fmt.Sprintf("block.%d", i), Params: 201_588_736})
	}
	resolved(s)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Analyze(s, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(layers), "units")
}

func BenchmarkAnalyze(b *testing.B) {
	for _, layers := range []int{32, 1024} {
		for _, stage := range []int{1, 3} {
			b.Run(fmt.Sprintf("units=%d/stage=%d", layers, stage), func(b *testing.B) { benchmarkAnalyze(b, layers, stage) })
		}
	}
}

// BenchmarkSimulateReserved replays Llama 2 7B under FSDP2 on 8 H100
// (loadFSDP) through the caching allocator until its reserve settles, as
// Analyze does for every FSDP stage-3 scenario (allocseq.go).
func BenchmarkSimulateReserved(b *testing.B) {
	s := loadFSDP(b)
	r, err := Analyze(s, Options{Reserve: ReserveNone})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := SimulateReserved(s, r, SegmentModeOf(s), 0, 0); err != nil {
			b.Fatal(err)
		}
	}
}
