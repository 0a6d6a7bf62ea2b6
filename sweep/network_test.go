package sweep

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/zerosim/zerosim/internal/byhand"
	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/topology"
	"github.com/zerosim/zerosim/zero"
)

// On the default scenario, for every stage, replaying at the bandwidth
// plan --network reports gives a step within the tolerance of the
// compute-bound time, and at 10 % less bandwidth it does not. Where it says
// no bandwidth is enough (stages 1 and 2 expose their post-optimizer
// all-gather, 7.3 % of the step, and compute slows 18.9 % while their
// reduce-scatters overlap it, so they stay over 10 %; stage 3's gathers
// overlap its compute, which runs 18.9 % slower meanwhile — zero's overlap
// interference — so it stays over 5 % at any bandwidth), the step at the
// largest bandwidth is indeed over. Stage 0's bucketed all-reduces overlap
// backward the same way and its last bucket is exposed, 4.73 % over
// compute at 25 TB/s (the eager Llama block's memory-bound op chains,
// zero/opchain.go, lengthen compute): at 5 % only stage 0 is reachable on
// the default cluster, and both cases check a reported bandwidth and 10 %
// less.
func TestNetworkSearchDefault(t *testing.T) {
	// Stages 1 and 2 expose their post-optimizer all-gather, which NCCL's
	// model bounds by NVLink (18 × 20.6 GB/s per H100): no network makes
	// their step reach 10 % of compute on the default cluster.
	for _, tc := range []struct {
		tol     float64
		reached []int
	}{{0.05, []int{0}}, {0.10, []int{0, 3}}} {
		testNetworkSearch(t, tc.tol, tc.reached)
	}
}

func testNetworkSearch(t *testing.T, tol float64, reached []int) {
	src := exampleSource(t, "default")
	np, err := NetworkSearch(context.Background(), src, NetworkOptions{Points: 2, Tolerance: tol})
	if err != nil {
		t.Fatal(err)
	}
	replay := func(stage int, bw int64) (step, compute int64) {
		s, err := src.Load("parallelism.zero_stage="+strconv.Itoa(stage), "cluster.inter.bandwidth="+strconv.FormatInt(bw, 10)+"B/s")
		if err != nil {
			t.Fatal(err)
		}
		r, err := zero.Replay(s, zero.Options{Full: true}) // the full simulation, not the fast path the search used
		if err != nil {
			t.Fatal(err)
		}
		return int64(r.StepTime), int64(r.Compute)
	}
	found := []int{}
	for _, sb := range np.Stages {
		if sb.NICBandwidth == 0 {
			step, compute := replay(sb.Stage, maxNICBandwidth)
			if float64(step) <= float64(compute)*(1+tol) {
				t.Errorf("tolerance %g, stage %d: says unreachable, but at %d B/s the step %d is within", tol, sb.Stage, maxNICBandwidth, step)
			}
			continue
		}
		found = append(found, sb.Stage)
		step, compute := replay(sb.Stage, sb.NICBandwidth)
		limit := float64(compute) * (1 + tol)
		if float64(step) > limit {
			t.Errorf("stage %d at %d B/s: step %d > %.0f (5 %% over compute %d)", sb.Stage, sb.NICBandwidth, step, limit, compute)
		}
		less := int64(math.Floor(float64(sb.NICBandwidth) * 0.9))
		if step, _ := replay(sb.Stage, less); float64(step) <= limit {
			t.Errorf("stage %d at %d B/s (10 %% less): step %d still within %.0f", sb.Stage, less, step, limit)
		}
		t.Logf("tolerance %g, stage %d: %.2f GB/s per GPU (step %d ps, compute %d ps)", tol, sb.Stage, sb.PerGPU/1e9, step, compute)
	}
	if !slices.Equal(found, reached) {
		t.Errorf("tolerance %g: stages with a bandwidth %v, want %v", tol, found, reached)
	}
}

// TestNetworkRemainder: where no bandwidth brings a stage within the
// tolerance of its compute (QA3 s16 finding 6), Above splits the step at
// 25 TB/s per NIC on the busiest rank, and the parts add up to the step
// above compute. On the default scenario at stage 3 the step is the same
// picosecond at 25 TB/s as at 50 GB/s, 369,077,481,196 ps, over compute
// 348,081,751,379 (plan.json's row: plan's fastest, the file's without
// checkpointing, prefetch depth 2): 16,714,368,029 ps of compute slowed
// by the collectives beside it (compute_interference 0.189) and
// 4,281,361,788 of exposed communication (368,984,755,736, 16,731,893,141
// and 4,171,111,216 before DeepSpeed's lag counted the whole units its
// three buckets hold, QA30 M1: the backward waits for one more sync); the note called it all "NVLink
// and latency". The compute is worked by hand (byhand.Default without
// checkpointing, within a picosecond a task); the step, slowed and
// exposed figures are regression pins, the replay's own (they moved with
// the final norm and embedding costs, c0528693); what is derived of them
// is that slowed + exposed + compute is the step, below.
// With compute_interference 0 nothing is slowed. The
// plateau bandwidth is the least whose step is within the tolerance of the
// step at 25 TB/s: replayed there it is within, at 10 % less it is not.
func TestNetworkRemainder(t *testing.T) {
	src := exampleSource(t, "default")
	plans := []string{"training.recompute=none", "communication.prefetch_depth=2"}
	const any = -1
	for _, tc := range []struct {
		name                  string
		sets                  []string
		stage                 int
		reach                 bool // a bandwidth brings it within 5 % of compute: no remainder
		step, slowed, exposed int64
		interference          float64
	}{
		// Regression pins of NetworkSearch's replay at 25 TB/s (step,
		// slowed, exposed ps; see above), not derived: update with the
		// before → after when the replay's costs move.
		{"stage 3", plans, 3, false, 369_077_481_196, 16_714_368_029, 4_281_361_788, 0.189},
		{"stage 3, no interference", append(plans, "communication.compute_interference=0"), 3, true, 0, 0, 0, 0},
		{"stage 1", nil, 1, false, any, any, any, 0.189},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := src
			s.Sets = append(append([]string(nil), src.Sets...), tc.sets...)
			np, err := NetworkSearch(context.Background(), s, NetworkOptions{Points: 2, Stages: []int{tc.stage}})
			if err != nil {
				t.Fatal(err)
			}
			sb := np.Stages[0]
			a := sb.Above
			if tc.reach {
				if a != nil || sb.NICBandwidth == 0 {
					t.Fatalf("want an answer and no remainder, got %d B/s and %+v", sb.NICBandwidth, a)
				}
				golden.CheckQuotes(t, "../docs/sweeps.md", "TestNetworkRemainder (default, stage 3, no interference)",
					fmt.Sprintf("it is within 5 %% from %.2f GB/s per GPU", sb.PerGPU/1e9))
				return
			}
			if a == nil {
				t.Fatalf("stage %d reaches compute at %d B/s", tc.stage, sb.NICBandwidth)
			}
			if want := int64(math.Round(byhand.Default().FullSpeed(false) * 1e12)); tc.stage == 3 && (sb.ComputeBound < want-71 || sb.ComputeBound > want+71) {
				t.Errorf("compute %d ps, by hand %d ps", sb.ComputeBound, want)
			}
			if got := a.Slowed + a.Exposed + a.Waiting; got != a.Step-sb.ComputeBound {
				t.Errorf("parts %d ≠ step %d − compute %d", got, a.Step, sb.ComputeBound)
			}
			for _, f := range []struct {
				what      string
				got, want int64
			}{{"step at 25 TB/s", a.Step, tc.step}, {"slowed", a.Slowed, tc.slowed}, {"exposed", a.Exposed, tc.exposed}} {
				if f.want != any && f.got != f.want {
					t.Errorf("%s %d, want %d", f.what, f.got, f.want)
				}
			}
			if tc.stage == 3 {
				golden.CheckQuotes(t, "../docs/sweeps.md", "TestNetworkRemainder (default, stage 3)",
					fmt.Sprintf("ZeRO-3 is %.1f %% above compute at any bandwidth", 100*float64(a.Step-sb.ComputeBound)/float64(sb.ComputeBound)))
			}
			if a.Interference != tc.interference {
				t.Errorf("interference %g, want %g", a.Interference, tc.interference)
			}
			limit := float64(a.Step) * 1.05
			if r, err := stepAt(s, tc.stage, nil, a.PlateauNIC); err != nil || float64(r.StepTime) > limit || int64(r.StepTime) != a.PlateauStep {
				t.Errorf("at the plateau %d B/s: step %v (reported %d), want within %.0f (%v)", a.PlateauNIC, r.StepTime, a.PlateauStep, limit, err)
			}
			less := int64(float64(a.PlateauNIC) * 0.9)
			if r, err := stepAt(s, tc.stage, nil, less); err == nil && float64(r.StepTime) <= limit {
				t.Errorf("at 10 %% under the plateau (%d B/s) the step %d is still within %.0f", less, r.StepTime, limit)
			}
			t.Logf("%s: step %d = compute %d + slowed %d + exposed %d + waiting %d; plateau %.2f GB/s per GPU", tc.name, a.Step, sb.ComputeBound, a.Slowed, a.Exposed, a.Waiting, a.PlateauPerGPU/1e9)
		})
	}
}

// QA4 s16 F5: under cluster.gpu_overrides the compute-bound time was the
// full-speed compute (360 ms) while rank 3 at half speed computes twice
// that; under cluster.link_overrides the part of the step at 25 TB/s per
// NIC that the overridden link adds (the sweep sets the class bandwidth
// and leaves the override at its value) was called "NVLink and latency".
// Independent figures: the unperturbed replay's compute (the executor
// scales each task by 1e6/500000: exactly twice) and the byte floor of
// node 1's NICs at 1 GB/s, the busiest rank's network bytes of the
// replay at the file's bandwidth over 1 GB/s, which the step at 25 TB/s
// cannot beat and which without the override is nearly all gone.
func TestNetworkUnderOverrides(t *testing.T) {
	src := exampleSource(t, "default")
	src.Sets = append(src.Sets, "parallelism.k=2")
	base, err := stepAt(src, 1, nil, 50e9)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		set     string
		compute int64 // the compute-bound time
		rank    int   // the rank it is, −1: every rank's
		slow    int64 // bytes/s of the overridden link, 0: none
	}{
		{"rank 3 at half speed", "cluster.gpu_overrides=[{rank: 3, speed: 0.5}]", 2 * int64(base.Compute), 3, 0},
		{"rank 3 twice as fast", "cluster.gpu_overrides=[{rank: 3, speed: 2}]", int64(base.Compute), -1, 0},
		{"node 1's NICs at 1 GB/s", "cluster.link_overrides=[{node: 1, class: inter, bandwidth: 1GB/s}]", int64(base.Compute), -1, 1e9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := src
			s.Sets = append(append([]string(nil), src.Sets...), tc.set)
			np, err := NetworkSearch(context.Background(), s, NetworkOptions{Points: 2, Stages: []int{1}})
			if err != nil {
				t.Fatal(err)
			}
			sb := np.Stages[0]
			if sb.ComputeBound != tc.compute || sb.ComputeRank != tc.rank || sb.FullSpeedCompute != int64(base.Compute) {
				t.Errorf("compute-bound %d of rank %d (full speed %d); want %d of rank %d (full speed %d)", sb.ComputeBound, sb.ComputeRank, sb.FullSpeedCompute, tc.compute, tc.rank, base.Compute)
			}
			a := sb.Above
			if tc.slow == 0 {
				if a != nil && a.Links != 0 {
					t.Errorf("no link override, yet %d ps of the step put on one", a.Links)
				}
				return
			}
			nom, err := stepAt(s, 1, nil, 50e9)
			if err != nil {
				t.Fatal(err)
			}
			var bytes int64
			for _, p := range nom.Phases {
				bytes += p.MaxRankWire[topology.Inter]
			}
			floor := bytes * 1e12 / tc.slow
			if a == nil || a.Step < floor {
				t.Fatalf("remainder %+v; want the step at 25 TB/s at least the %d ps node 1's NICs need", a, floor)
			}
			if got := a.Slowed + a.Exposed + a.Waiting + a.Links; got != a.Step-sb.ComputeBound {
				t.Errorf("parts %d ≠ step %d − compute %d", got, a.Step, sb.ComputeBound)
			}
			// Without the override the step at 25 TB/s is within 20 % of
			// compute: the link's share is at least the floor less that.
			if want := floor - sb.ComputeBound*12/10; a.Links < want || len(a.Degraded) != 1 || a.Degraded[0].Node != 1 || int64(a.Degraded[0].Bandwidth) != tc.slow {
				t.Errorf("the override's share %d ps (links %+v); want at least %d ps on node 1's link at %d B/s", a.Links, a.Degraded, want, tc.slow)
			}
		})
	}
}

// TestNetworkBoundWithCP: with context parallelism the ring's exchange
// runs inside the blocks' compute, so a compute bound taken at the file's
// bandwidth moved with the bandwidth swept (review s16: cp 2 under
// [dp, cp]: 4.017 s at 2 GB/s, 0.345 s at 50); at 25 TB/s on nominal links
// it is the same whatever the file says, and with a degraded link on the
// ring the link's share and the rest add up to the step above compute.
func TestNetworkBoundWithCP(t *testing.T) {
	cp := []string{"parallelism.cp=2", "parallelism.dp=8", "cluster.placement=[dp,cp]"}
	bound := func(sets ...string) StageBandwidth {
		src := exampleSource(t, "default")
		src.Sets = append(append(append([]string(nil), src.Sets...), cp...), sets...)
		np, err := NetworkSearch(context.Background(), src, NetworkOptions{Points: 2, Stages: []int{1}})
		if err != nil {
			t.Fatal(err)
		}
		return np.Stages[0]
	}
	slow, fast := bound("cluster.inter.bandwidth=2GB/s"), bound("cluster.inter.bandwidth=50GB/s")
	if slow.ComputeBound != fast.ComputeBound || slow.ComputeRank != -1 {
		t.Errorf("compute-bound %d (rank %d) at 2 GB/s, %d at 50 GB/s; want one, every rank's", slow.ComputeBound, slow.ComputeRank, fast.ComputeBound)
	}
	sb := bound("cluster.link_overrides=[{node: 1, gpu: 2, class: inter, bandwidth: 1GB/s}]")
	if a := sb.Above; a == nil || a.Links <= 0 || a.Slowed+a.Exposed+a.Waiting+a.Links != a.Step-sb.ComputeBound || sb.ComputeRank != -1 {
		t.Errorf("degraded ring link: remainder %+v over compute %d (rank %d); want the link's share and the rest to add up to the step above compute", sb.Above, sb.ComputeBound, sb.ComputeRank)
	}
}

// TestNetworkSearchProgress: NetworkSearch reports each replay to
// Progress (plan --network showed a bar frozen at 0 % for 5-13 s: QA22
// M6), against a total that starts at the most it can run and ends equal
// to the replays done. The most: a bisection over 1 MB/s-25 TB/s to
// 0.1 % takes ceil(log2(ln(2.5e7)/ln(1.001))) = ceil(log2(17043)) = 15
// steps after its first replay, 16 replays; a stage adds 3 (nominal, at
// 25 TB/s, the same without overridden links) and 2 curve points.
func TestNetworkSearchProgress(t *testing.T) {
	if got := bisectReplays(); got != 16 {
		t.Fatalf("bisectReplays %d, want 16", got)
	}
	var calls, last, first, lastTotal int
	np, err := NetworkSearch(context.Background(), exampleSource(t, "default"), NetworkOptions{Points: 2, Jobs: 2, Progress: func(done, total int) {
		if calls == 0 {
			first = total
		}
		if done < last || done > total {
			t.Errorf("progress %d of %d after %d", done, total, last)
		}
		calls++
		last, lastTotal = done, total
	}})
	if err != nil {
		t.Fatal(err)
	}
	if first != 4*(3+16+2) || last != lastTotal || last < 4*(2+1+2) || last >= first {
		t.Errorf("progress began at a total of %d (want %d), ended at %d of %d after %d calls (want equal, at least %d: no stage has overridden links)", first, 4*(3+16+2), last, lastTotal, calls, 4*(2+1+2))
	}
	if len(np.Stages) != 4 {
		t.Errorf("%d stages", len(np.Stages))
	}
}
