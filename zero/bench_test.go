package zero

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// gpt3 returns GPT-3 175B (h 12288, 96 layers, a 96, s 2048) with ZeRO-3,
// prefetch depth 2, on nodes × 8 GPUs: NVLink4 inside (450 GB/s), 400 Gbps
// per GPU between nodes.
func gpt3(nodes int) *scenarios.Scenario {
	const h = 12288
	s := &scenarios.Scenario{Version: 1, Name: fmt.Sprintf("gpt3-175b-%d", nodes*8)}
	s.Cluster = scenarios.Cluster{Nodes: nodes, GPUsPerNode: 8, GPU: "H100-80GB", PeakBF16: 989e12, HBMBandwidth: 3350e9, GPUMemory: 80 << 30,
		Intra: scenarios.Link{Bandwidth: 450e9, Latency: 500 * units.Nanosecond},
		Inter: scenarios.Link{Bandwidth: 50e9, Latency: 2 * units.Microsecond}}
	s.Model = scenarios.Model{Kind: "transformer", Hidden: h, SeqLen: 2048, Heads: 96, Layers: 96, Vocab: 50257, FFN: 4 * h}
	s.Model.LayerList = append(s.Model.LayerList, scenarios.Layer{Name: "embedding", Params: units.Count((50257 + 2048) * h)})
	for i := 0; i < 96; i++ {
		s.Model.LayerList = append(s.Model.LayerList, scenarios.Layer{Name: fmt.Sprintf("block.%d", i), Params: 12*h*h + 13*h})
	}
	s.Model.LayerList = append(s.Model.LayerList, scenarios.Layer{Name: "final_norm", Params: 2 * h})
	two := 2
	s.Parallelism = scenarios.Parallelism{DP: nodes * 8, CP: 1, Stage: 3, K: 1}
	s.Training = scenarios.Training{MicroBatch: 1, ComputeEfficiency: 0.5}
	s.Communication = scenarios.Communication{BucketSize: 40e6, Algorithm: "auto", MaxInflightAllGathers: 2, PrefetchDepth: &two}
	return resolved(s)
}

// heapBytes is the heap's allocated bytes (runtime.MemStats.HeapAlloc) as
// runtime/metrics reads it: without stopping the world, which
// runtime.ReadMemStats does (and which, every 2 ms, cost the 16k symmetric
// replay more than a tenth of its time).
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// benchmarkStep replays s b.N times and reports the ranks, the events per
// replay and per second, and the peak live heap above the heap before the
// first replay (sampled every 2 ms, and once more at the end while the last
// result is still live).
func benchmarkStep(b *testing.B, s *scenarios.Scenario, opt Options) {
	b.ReportAllocs()
	// Collect and return the previous benchmark's heap to the OS now: after
	// the 16k replay (~450 MiB) the background scavenger otherwise does it
	// during the next benchmark's replays, on the same two cores.
	debug.FreeOSMemory()
	before := heapBytes()
	var peak atomic.Uint64
	sample := func() {
		if h := heapBytes(); h > peak.Load() {
			peak.Store(h)
		}
	}
	stop, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			sample()
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	var events int64
	var res *Result
	for b.Loop() {
		var err error
		res, err = Replay(s, opt)
		if err != nil {
			b.Fatal(err)
		}
		events = res.Events
	}
	close(stop)
	<-sampled
	sample()
	runtime.KeepAlive(res)
	b.ReportMetric(float64(s.N()), "ranks")
	b.ReportMetric(float64(events), "events/op")
	b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(peak.Load()-min(peak.Load(), before))/(1<<20), "peak-heap-MiB")
}

// BenchmarkStep175BZeRO3_16k simulates every one of 16,384 ranks.
func BenchmarkStep175BZeRO3_16k(b *testing.B) { benchmarkStep(b, gpt3(2048), Options{Full: true}) }

// BenchmarkStep175BZeRO3_16kCalibrated is BenchmarkStep175BZeRO3_16k with
// a calibration (fitted parameters and two measured curves, as `zerosim
// calibrate` writes them for the shared 2- and 4-node H100 logs): issue 15
// holds it within 1.2× of the uncalibrated replay.
func BenchmarkStep175BZeRO3_16kCalibrated(b *testing.B) {
	s := gpt3(2048)
	s.Communication.CalibrationData = benchCalibration()
	benchmarkStep(b, s, Options{Full: true})
}

func benchCalibration() *scenarios.Calibration {
	sizes := []int64{1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20, 1 << 30}
	return &scenarios.Calibration{Version: 1,
		Hardware: scenarios.CalHardware{Arch: "Hopper", NVLS: true, IntraGBps: 450, NICGBps: 50, NICsPerNode: 8, InterLatencyUS: 2, IntraLatencyUS: 0.5},
		Params:   scenarios.CalParams{IntraEff: 0.927, InterEff: 1.037, IntraHopUS: -1.16, InterHopUS: 10.31, FixedUS: -4.68},
		Curves: []scenarios.CalCurve{
			{Op: "allreduce", Ranks: 16, Nodes: 2, Sizes: sizes, TimesUS: []float64{71.47, 94.22, 183.8, 466.1, 1276.0, 4470.2}},
			{Op: "allreduce", Ranks: 32, Nodes: 4, Sizes: sizes, TimesUS: []float64{82.17, 151.1, 258.3, 574.4, 1768.0, 5802.8}},
		}}
}

// BenchmarkStep175BZeRO3_16kSymmetric uses the symmetric fast path.
func BenchmarkStep175BZeRO3_16kSymmetric(b *testing.B) { benchmarkStep(b, gpt3(2048), Options{}) }

// BenchmarkStepK8_4k simulates every one of 4,096 ranks with K = 8: eight
// shard groups of 512 ranks across 64 nodes each, whose collectives contend
// for the same NICs, and 512 inter-group all-reduces at once. Rate
// recomputation over a component of thousands of resources and parking
// checks among hundreds of disjoint classes dominate it: 27.0 s before
// progressive filling by a sort and a heap and parking by marks, 2.4 s after (identical
// output; docs/performance.md).
func BenchmarkStepK8_4k(b *testing.B) {
	s := gpt3(512)
	s.Parallelism.K = 8
	benchmarkStep(b, s, Options{Full: true})
}

// BenchmarkStepK2_16kSymmetric is the symmetric fast path at ZeRO-1 with
// K = 2 over 16,384 ranks, the slow-link comparison's second row at scale:
// 8,192 inter-group all-reduces per bucket, of which the replay simulates
// those holding node 0's ranks. Counting arrivals and recording every
// instance took 60 s and 16 GB (`zerosim run gpt3-175b-16k --set
// parallelism.k=2 --set parallelism.zero_stage=1`); with arrivals per
// touched instance and the command's record limit (Options.MaxCollectives,
// as cmd/zerosim passes it) 0.35 s and 105 MB resident for the command,
// 0.22–0.29 s and 102 MB/op here.
func BenchmarkStepK2_16kSymmetric(b *testing.B) {
	s := gpt3(2048)
	s.Parallelism.K, s.Parallelism.Stage = 2, 1
	benchmarkStep(b, resolved(s), Options{MaxCollectives: 20000})
}

// BenchmarkStep_1k simulates every one of 1,024 ranks.
func BenchmarkStep_1k(b *testing.B) { benchmarkStep(b, gpt3(128), Options{Full: true}) }

// BenchmarkStepScaling runs the full simulation from 8 to 16,384 ranks,
// doubling: how the simulator's time, events and memory grow with the
// cluster (README "Performance", docs/performance.md "Scaling"). It replaced
// the `zerosim scaling` command, which measured the same replays once each
// by hand.
func BenchmarkStepScaling(b *testing.B) {
	for nodes := 1; nodes <= 2048; nodes *= 2 {
		b.Run(fmt.Sprintf("ranks=%d", nodes*8), func(b *testing.B) { benchmarkStep(b, gpt3(nodes), Options{Full: true}) })
	}
}

// BenchmarkStepGA256 replays one of plan's configurations at a large
// global batch (QA s28 M2: plan q5_13b_measured.yaml --global-batch 4096,
// 13B on 2 × 8 H100, ran ~50 s and 1.6 GB): Llama-2-13B at ZeRO-3,
// micro-batch 1, 256 micro-steps, as plan replays it (NoCollectives).
func BenchmarkStepGA256(b *testing.B) {
	s, err := scenarios.Load("ga256.yaml", []byte(`version: 1
cluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB, inter: {preset: NDR}}
model: {preset: llama2-13b}
parallelism: {dp: 16, zero_stage: 3}
training: {micro_batch: 1, grad_accum: 256, recompute: none}
communication: {prefetch_depth: 2, overlap: true}
`), nil)
	if err != nil {
		b.Fatal(err)
	}
	benchmarkStep(b, s, Options{NoCollectives: true})
}
