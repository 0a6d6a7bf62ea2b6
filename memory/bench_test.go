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

// BenchmarkAnalyzeDeepSeekV3 analyzes DeepSeek-V3 (config.json of
// scenarios/testdata/hf-extra: 58 MoE layers of 256 routed experts) on
// 32 × 8 H200 at ep 8, ZeRO-1, as plan's memory screen does for each of
// its 540 configurations (QA s28 M1: the screen was 6 s of a plan's 8 s).
// Before the experts shared their shapes and were named only when a
// rank holds them: 8.8–10.6 ms, 9.7 MB and 128,185 allocations per
// analysis; after, 4.3–4.5 ms (one run at 8.2 ms), 6.9 MB and 8,734
// (-benchtime 20x -count 3 on a loaded 2-core machine).
func BenchmarkAnalyzeDeepSeekV3(b *testing.B) {
	s, err := scenarios.Load("../scenarios/testdata/hf-extra/s.yaml", []byte("version: 1\ncluster: {nodes: 32, gpus_per_node: 8, gpu: H200}\n"+
		"model: {hf_config: deepseek-v3.json, seq_len: 4096}\nparallelism: {dp: 256, zero_stage: 1, ep: 8}\ntraining: {micro_batch: 1, recompute: full}\n"), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Analyze(s, Options{Reserve: ReserveWhereFits}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(s.Model.LayerList)), "units")
}
