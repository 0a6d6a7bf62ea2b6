package zero

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/collectives"
	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/topology"
	"github.com/zerosim/zerosim/units"
)

// tiny returns seed 002's 260-parameter transformer on one node of n GPUs
// (units LN1 8, attention 64, LN2 8, FFN 148, output 32).
func tiny(stage, n, k int) *scenarios.Scenario {
	s := &scenarios.Scenario{Version: 1, Name: "tiny"}
	s.Cluster = scenarios.Cluster{Nodes: 1, GPUsPerNode: n, PeakBF16: 312e12, HBMBandwidth: 2e12,
		Intra: scenarios.Link{Bandwidth: 300e9, Latency: 500 * units.Nanosecond},
		Inter: scenarios.Link{Bandwidth: 25e9, Latency: 2 * units.Microsecond}}
	s.Model = scenarios.Model{Kind: "tiny-transformer", Hidden: 4, Heads: 2, FFN: 16, Vocab: 8, SeqLen: 3, Layers: 1}
	for _, l := range []struct {
		name string
		p    units.Count
	}{{"ln1", 8}, {"attention", 64}, {"ln2", 8}, {"ffn", 148}, {"output", 32}} {
		s.Model.LayerList = append(s.Model.LayerList, scenarios.Layer{Name: l.name, Params: l.p})
	}
	s.Model.Params = 260
	s.Parallelism = scenarios.Parallelism{DP: n, CP: 1, Stage: stage, K: k}
	s.Training = scenarios.Training{MicroBatch: 1, ComputeEfficiency: 0.5}
	s.Communication = scenarios.Communication{BucketSize: 40e6, Algorithm: "ring", MaxInflightAllGathers: 2}
	return resolved(s)
}

// mlp returns seed 000's N=8 example: 4 nodes × 2 GPUs, dp 4 across nodes
// on a slow 25 GB/s network, cp 2 inside a node over NVLink, a residual MLP of
// layers × (8H²+5H) parameters.
func mlp(stage, k int, hidden int64, layers int) *scenarios.Scenario {
	s := &scenarios.Scenario{Version: 1, Name: "seed000"}
	s.Cluster = scenarios.Cluster{Nodes: 4, GPUsPerNode: 2, PeakBF16: 312e12, HBMBandwidth: 2039e9,
		Intra: scenarios.Link{Bandwidth: 300e9, Latency: 500 * units.Nanosecond},
		Inter: scenarios.Link{Bandwidth: 25e9, Latency: 2 * units.Microsecond}}
	s.Model = scenarios.Model{Kind: "mlp", Hidden: hidden, Layers: int64(layers), SeqLen: 1}
	for i := 0; i < layers; i++ {
		s.Model.LayerList = append(s.Model.LayerList, scenarios.Layer{Name: fmt.Sprintf("layers.%d", i), Params: units.Count(8*hidden*hidden + 5*hidden)})
	}
	s.Parallelism = scenarios.Parallelism{DP: 4, CP: 2, Stage: stage, K: k}
	s.Training = scenarios.Training{MicroBatch: 1024, ComputeEfficiency: 0.5}
	s.Communication = scenarios.Communication{BucketSize: 40e6, Algorithm: "ring", MaxInflightAllGathers: 2}
	return resolved(s)
}

func off() *bool { b := false; return &b }

// With overlap off every task runs in one stream, so the step is exactly
// compute plus the sum of the collectives' closed-form times.
func TestOverlapOffIsComputePlusClosedForms(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    *scenarios.Scenario
	}{
		{"tiny-stage0", tiny(0, 2, 1)}, {"tiny-stage1", tiny(1, 2, 1)}, {"tiny-stage2", tiny(2, 4, 2)}, {"tiny-stage3", tiny(3, 4, 1)},
		{"mlp-stage1-k1", mlp(1, 1, 256, 4)}, {"mlp-stage1-k4", mlp(1, 4, 256, 4)}, {"mlp-stage3-k2", mlp(3, 2, 256, 4)}, {"mlp-stage0", mlp(0, 1, 256, 4)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.s.Communication.Overlap = off()
			res, err := Replay(tc.s, Options{})
			if err != nil {
				t.Fatal(err)
			}
			topo, err := topology.Build(tc.s)
			if err != nil {
				t.Fatal(err)
			}
			want := units.Duration(0)
			for _, task := range res.Schedule.Tasks {
				if !task.Kind.IsComm() {
					want += task.Dur
					continue
				}
				m := groupMembers(res.N, res.K, res.Schedule.EP, task.Group, 0)
				cf, err := collectives.ClosedForm(topo, collectives.Spec{Op: opOf[task.Kind], Algo: collectives.Ring, Group: m, Bytes: units.Bytes(task.Bytes)})
				if err != nil {
					t.Fatal(err)
				}
				want += cf
			}
			if res.StepTime != want {
				t.Errorf("step %v (%d ps), want compute + Σ closed forms = %v (%d ps)", res.StepTime, res.StepTime, want, want)
			}
			for _, r := range res.Ranks {
				if sum := r.Compute + r.ExposedComm + r.Wait + r.Idle; sum != res.StepTime || r.Idle < 0 {
					t.Errorf("rank %d: compute+exposed+wait+idle = %v, step %v (idle %v)", r.Rank, sum, res.StepTime, r.Idle)
				}
			}
		})
	}
}

// Seed 002's communication table (bytes per GPU per step, N = 2): ZeRO-1 and
// ZeRO-2 move 1040 B (reduce-scatter 520 + post-optimizer all-gather 520),
// ZeRO-3 1560 B (forward all-gather 520, backward all-gather 520,
// reduce-scatter 520).
func TestSeed002CommunicationTable(t *testing.T) {
	want := map[int]map[Phase]int64{
		1: {PhaseBackwardRS: 520, PhasePostOptAG: 520},
		2: {PhaseBackwardRS: 520, PhasePostOptAG: 520},
		3: {PhaseForwardAG: 520, PhaseBackwardAG: 520, PhaseBackwardRS: 520},
	}
	total := map[int]int64{1: 1040, 2: 1040, 3: 1560}
	for stage := 1; stage <= 3; stage++ {
		res, err := Replay(tiny(stage, 2, 1), Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[Phase]int64{}
		for _, p := range res.Phases {
			got[p.Phase] = p.Logical
			// Exact: one rank of two sends half of each buffer.
			if p.Sent != p.Logical/2 {
				t.Errorf("stage %d %s: sent %d, want %d", stage, p.Phase, p.Sent, p.Logical/2)
			}
			// Wire: both ranks send over NVLink, nothing on the network.
			if p.Wire[topology.Intra] != p.Logical || p.Wire[topology.Inter] != 0 {
				t.Errorf("stage %d %s: wire %v, want [%d 0]", stage, p.Phase, p.Wire, p.Logical)
			}
		}
		if len(got) != len(want[stage]) {
			t.Errorf("stage %d: phases %v, want %v", stage, got, want[stage])
		}
		for ph, b := range want[stage] {
			if got[ph] != b {
				t.Errorf("stage %d %s: %d B, want %d", stage, ph, got[ph], b)
			}
		}
		if l, _ := res.PhaseTotal(); l != total[stage] {
			t.Errorf("stage %d: total %d B, want %d", stage, l, total[stage])
		}
	}
}

// Seed 001: reduce-scatter ZeRO-1 moves 2/3 of the bytes of the original
// all-reduce ZeRO-1 (all-reduce 2S + all-gather S = 3S vs 2S).
func TestSeed001ReduceScatterMovesTwoThirds(t *testing.T) {
	for _, s := range []*scenarios.Scenario{tiny(1, 2, 1), mlp(1, 1, 256, 4)} {
		rs, err := Replay(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		s.Communication.Zero1AllReduce = true
		ar, err := Replay(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		lrs, srs := rs.PhaseTotal()
		lar, sar := ar.PhaseTotal()
		if 3*lrs != 2*lar || 3*srs != 2*sar {
			t.Errorf("%s: reduce-scatter variant %d/%d B, all-reduce variant %d/%d B: want exactly 2/3", s.Name, lrs, srs, lar, sar)
		}
		if ar.StepTime <= rs.StepTime {
			t.Errorf("%s: all-reduce ZeRO-1 step %v not slower than reduce-scatter %v", s.Name, ar.StepTime, rs.StepTime)
		}
	}
}

// slowLink sums the step's network bytes: over all ranks, and the busiest
// rank's per phase.
func slowLink(res *Result) (total, busiest int64) {
	for _, p := range res.Phases {
		total += p.Wire[topology.Inter]
		busiest += p.MaxRankWire[topology.Inter]
	}
	return total, busiest
}

func phaseWire(res *Result, ph Phase) PhaseBytes {
	for _, p := range res.Phases {
		if p.Phase == ph {
			return p
		}
	}
	return PhaseBytes{}
}

// Seed 000's N = 8 example (dp 4 over 4 nodes on a slow network, cp 2 over
// NVLink), gradient buffer S: K = 1 flat ring sends 1.75·S per busiest rank
// over the slow link (7·S in all); K = 4 sends 0.75·S per rank (6·S in all),
// and is faster on this slow network.
func TestSeed000KSlowLinkBytes(t *testing.T) {
	var steps [2]units.Duration
	for i, k := range []int{1, 4} {
		res, err := Replay(mlp(1, k, 256, 4), Options{})
		if err != nil {
			t.Fatal(err)
		}
		S := res.Schedule.GradBytes()
		total, busiest := slowLink(res)
		wantTotal, wantBusiest := 7*S, 7*S/4
		if k == 4 {
			wantTotal, wantBusiest = 6*S, 3*S/4
			if w := phaseWire(res, PhaseInterAR).MaxRankWire[topology.Inter]; w != 3*S/4 {
				t.Errorf("K=4 inter all-reduce: %d B per rank, want 0.75·S = %d", w, 3*S/4)
			}
			if w := phaseWire(res, PhasePostOptAG).Wire[topology.Inter]; w != 0 {
				t.Errorf("K=4 all-gather crosses the slow link: %d B", w)
			}
		}
		if total != wantTotal || busiest != wantBusiest {
			t.Errorf("K=%d: slow-link bytes total %d (want %d), busiest rank %d (want %d), S = %d", k, total, wantTotal, busiest, wantBusiest, S)
		}
		steps[i] = res.StepTime
	}
	if steps[1] >= steps[0] {
		t.Errorf("K=4 step %v not faster than K=1 %v on a slow network", steps[1], steps[0])
	}
}

// ZeRO-3 prefetch on a communication-bound scenario: the exposed all-gather
// time falls as the depth goes 0 → 1 → 2 and the peak memory rises by the
// prefetched units.
func TestZeRO3Prefetch(t *testing.T) {
	var exposed [3]units.Duration
	var peak [3]int64
	for d := 0; d <= 2; d++ {
		s := mlp(3, 1, 512, 8)
		// Alternate heavy and light compute so deeper prefetch has slack to use.
		for i := range s.Model.LayerList {
			s.Model.LayerList[i].Fwd = units.Duration(50+400*(i%2)) * units.Microsecond
			s.Model.LayerList[i].Bwd = 2 * s.Model.LayerList[i].Fwd
		}
		s.Communication.PrefetchDepth = &d
		s.Communication.MaxInflightAllGathers = 3
		res, err := Replay(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		exposed[d] = res.Ranks[0].ExposedAllGather
		peak[d] = res.Memory.Peak
		t.Logf("depth %d: step %v, exposed all-gather %v, peak %d B", d, res.StepTime, exposed[d], peak[d])
	}
	if !(exposed[0] > exposed[1] && exposed[1] > exposed[2]) {
		t.Errorf("exposed all-gather %v: want strictly falling with depth 0 → 1 → 2", exposed)
	}
	if !(peak[0] < peak[1] && peak[1] < peak[2]) {
		t.Errorf("peak memory %v: want strictly rising with depth", peak)
	}
}

// Seed 002's ZeRO-3 loop: every unit is gathered, then computed, then
// flushed, in forward order and then in reverse for backward.
func TestZeRO3GatherComputeFlushOrder(t *testing.T) {
	d := 0
	s := tiny(3, 2, 1)
	s.Communication.PrefetchDepth = &d
	res, err := Replay(s, Options{KeepSpans: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, sp := range res.Spans[0] {
		task := res.Schedule.Tasks[sp.Task]
		if task.Kind == AllGather || task.Kind == Forward || task.Kind == Backward {
			got = append(got, task.Kind.String()[:1]+s.Model.LayerList[task.Unit].Name)
		}
	}
	want := []string{"aln1", "fln1", "aattention", "fattention", "aln2", "fln2", "affn", "fffn", "aoutput", "foutput",
		"aoutput", "boutput", "affn", "bffn", "aln2", "bln2", "aattention", "battention", "aln1", "bln1"}
	if len(got) != len(want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
	// Gathered memory returns to zero after each unit: the timeline never
	// holds more than the largest unit (FFN, 296 B) with depth 0.
	gi := -1
	for i, c := range res.Memory.Components {
		if c == "gathered params" {
			gi = i
		}
	}
	var cur, most int64
	for _, p := range res.Memory.Points {
		if p.Component == gi {
			cur += p.Delta
			most = max(most, cur)
		}
	}
	if cur != 0 || most != 296 {
		t.Errorf("gathered params: end %d B, max %d B; want 0 and 296 (FFN)", cur, most)
	}
}

// A single rank runs no collectives at all: nothing is reduced or gathered,
// and no bytes are reported.
func TestSingleRankHasNoCollectives(t *testing.T) {
	for stage := 0; stage <= 3; stage++ {
		res, err := Replay(tiny(stage, 1, 1), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Collectives) != 0 || len(res.Phases) != 0 {
			t.Errorf("stage %d: %d collectives, phases %+v; want none", stage, len(res.Collectives), res.Phases)
		}
		if res.StepTime != res.Compute {
			t.Errorf("stage %d: step %v, want compute %v", stage, res.StepTime, res.Compute)
		}
	}
}

// communication.algorithm=tree applies to all-reduces; reduce-scatters and
// all-gathers have no tree and run as rings (as NCCL does), for every stage.
func TestTreeAlgorithmFallsBackToRing(t *testing.T) {
	for stage := 0; stage <= 3; stage++ {
		s := mlp(stage, 2, 256, 4)
		s.Communication.Algorithm = "tree"
		tree, err := Replay(s, Options{})
		if err != nil {
			t.Fatalf("stage %d: %v", stage, err)
		}
		s.Communication.Algorithm = "ring"
		ring, err := Replay(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		// Only the all-reduces differ.
		for i, p := range tree.Phases {
			q := ring.Phases[i]
			if p.Phase != PhaseBackwardAR && p.Phase != PhaseInterAR && (p.Wire[0] != q.Wire[0] || p.Wire[1] != q.Wire[1]) {
				t.Errorf("stage %d %s: tree wire %v, ring %v", stage, p.Phase, p.Wire, q.Wire)
			}
		}
	}
}

// Replay builds its schedule on the memory report's layouts; that must be
// exactly the schedule Build makes from memory.BufferLayouts.
func TestReplayScheduleEqualsBuild(t *testing.T) {
	for _, s := range []*scenarios.Scenario{tiny(3, 2, 1), mlp(1, 4, 256, 4), mlp(0, 1, 256, 4), mlp(2, 2, 256, 4)} {
		res, err := Replay(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		sc, err := Build(s)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(res.Schedule, sc) {
			t.Errorf("%s stage %d: Replay's schedule differs from Build's", s.Name, s.Parallelism.Stage)
		}
	}
}

// Issue 13: the bytes a rank sends were rounded twice — zero floored
// S/n, collectives.Volume takes ⌈S/n⌉. On 6 ranks with K = 3 the inter
// all-reduce moves the 260-byte shard over 3 ranks (260/3 is no integer):
// every phase's Sent must be collectives.Volume summed over its
// collectives.
func TestSentIsCollectivesVolume(t *testing.T) {
	s := tiny(1, 6, 3)
	res, err := Replay(s, Options{Full: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[Phase]int64{}
	for _, c := range res.Collectives {
		if c.GroupIndex != 0 {
			continue
		}
		group := make([]int, c.Ranks)
		v, err := collectives.Volume(collectives.Spec{Op: opOf[c.Kind], Group: group, Bytes: units.Bytes(c.Bytes)})
		if err != nil {
			t.Fatal(err)
		}
		want[c.Phase] += int64(v)
	}
	for _, p := range res.Phases {
		if p.Sent != want[p.Phase] {
			t.Errorf("phase %v: sent %d, collectives.Volume says %d", p.Phase, p.Sent, want[p.Phase])
		}
	}
}

// Issue 13: a memory event the schedule has no task for was silently bound
// to the first or last task of its phase; it is an error now. Here stage 3
// loses its all-gathers, so the gathered parameters have nowhere to go.
func TestMemoryEventWithoutTaskIsAnError(t *testing.T) {
	s := tiny(3, 2, 1)
	sc, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := memory.Analyze(s, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := bindMemory(sc, rep); err != nil {
		t.Fatalf("full schedule: %v", err)
	}
	for i := range sc.Tasks {
		if sc.Tasks[i].Kind == AllGather {
			sc.Tasks[i].Kind = Forward
			sc.Tasks[i].Unit = -7
		}
	}
	if _, _, _, err := bindMemory(sc, rep); err == nil || !strings.Contains(err.Error(), "no task for memory event") {
		t.Errorf("error %v, want no task for memory event", err)
	}
}
