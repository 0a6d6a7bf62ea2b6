package zero

import (
	"testing"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// ringBytesLlama2CP2 is what one rank of the default example (llama2-7b,
// 32 blocks, seq_len 4096, micro-batch 1, selective recompute) at cp 2
// sends of the ring per step, by hand from PyTorch's ring (RingTraffic):
// X = 1·2048·4096 elements of q, k or v per rank; each block all-gathers
// its bf16 k and v (4X = 33,554,432 B, one peer: (cp−1)·4X sent) in
// forward, again in the recompute and in backward (3 gathers), and sends
// its fp32 dk and dv (8X = 67,108,864 B) cp = 2 times in backward:
// 32·(3·33,554,432 + 2·67,108,864) B. With two ranks a group's every hop
// is between its two GPUs, so each crosses the one link class between
// them; the QA measured the same figure in phases[] (7.516 GB).
const ringBytesLlama2CP2 = 32 * (3*33_554_432 + 2*67_108_864)

// replayWith replays the default example with sets.
func replayWith(t *testing.T, sets []string) *Result {
	t.Helper()
	data, _ := scenarios.Example("default")
	s, err := scenarios.Load("default.yaml", data, sets)
	if err != nil {
		t.Fatalf("%v: %v", sets, err)
	}
	res, err := Replay(s, Options{})
	if err != nil {
		t.Fatalf("%v: %v", sets, err)
	}
	return res
}

// TestRingWaitsOnOwnLinks: under cluster.link_overrides every cp group
// whose ring crosses a degraded link is timed on it, and only its ranks'
// blocks wait for it (QA4 s16 F1). The ring's bytes through the slow link
// at its bandwidth bound the compute of the ranks behind it (the ring is
// in their blocks' compute); a rank of a group that crosses no degraded
// link computes exactly what it does on the nominal cluster; and two
// physically symmetric overrides give one step. Before, only the first cp
// group of each node pattern was timed (node 1 gpu 2's NIC at 1 GB/s left
// the compute at 344.7 ms while gpu 0's made it 4.55 s), and under auto
// the all-gather took NCCL's nominal time whatever the links (6.68 s for
// the whole of node 1 at 1 GB/s, below the 7.52 s its ring bytes need).
func TestRingWaitsOnOwnLinks(t *testing.T) {
	dpcp := []string{"parallelism.cp=2", "parallelism.dp=8", "cluster.placement=[dp,cp]"}
	cpdp := []string{"parallelism.cp=2", "parallelism.dp=8", "cluster.placement=[cp,dp]"}
	for _, c := range []struct {
		name     string
		sets     []string
		override string
		bw       float64 // the degraded link's bytes per second (0: a latency override)
		slow     []int   // the ranks whose cp group crosses it
		twin     string  // a physically symmetric override: the same step
	}{
		// [dp,cp]: rank 2d+i on GPU 8i+d, so group d = node 0 and node 1
		// gpu d, over their NICs.
		{"[dp,cp] auto, node 1 gpu 0 NIC", dpcp, "[{node: 1, gpu: 0, class: inter, bandwidth: 1GB/s}]", 1e9, []int{0, 1},
			"[{node: 1, gpu: 2, class: inter, bandwidth: 1GB/s}]"},
		{"[dp,cp] auto, node 1 gpu 2 NIC", dpcp, "[{node: 1, gpu: 2, class: inter, bandwidth: 1GB/s}]", 1e9, []int{4, 5},
			"[{node: 0, gpu: 2, class: inter, bandwidth: 1GB/s}]"},
		{"[dp,cp] auto, node 1 every NIC", dpcp, "[{node: 1, class: inter, bandwidth: 1GB/s}]", 1e9, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, ""},
		{"[dp,cp] ring, node 1 gpu 2 NIC", append([]string{"communication.algorithm=ring"}, dpcp...), "[{node: 1, gpu: 2, class: inter, bandwidth: 1GB/s}]", 1e9, []int{4, 5},
			"[{node: 1, gpu: 6, class: inter, bandwidth: 1GB/s}]"},
		{"[dp,cp] hierarchical, node 0 gpu 7 NIC", append([]string{"communication.algorithm=hierarchical"}, dpcp...), "[{node: 0, gpu: 7, class: inter, bandwidth: 2GB/s}]", 2e9, []int{14, 15}, ""},
		{"[dp,cp] auto, node 1 gpu 2 NIC latency 500us", dpcp, "[{node: 1, gpu: 2, class: inter, latency: 500us}]", 0, []int{4, 5},
			"[{node: 1, gpu: 5, class: inter, latency: 500us}]"},
		// [cp,dp]: group d = ranks 2d, 2d+1 on GPUs 2d, 2d+1, over NVLink.
		{"[cp,dp] auto, node 0 gpu 0 NVLink", cpdp, "[{node: 0, gpu: 0, class: intra, bandwidth: 4.5GB/s}]", 4.5e9, []int{0, 1},
			"[{node: 0, gpu: 2, class: intra, bandwidth: 4.5GB/s}]"},
		{"[cp,dp] auto, node 0 gpu 2 NVLink", cpdp, "[{node: 0, gpu: 2, class: intra, bandwidth: 4.5GB/s}]", 4.5e9, []int{2, 3},
			"[{node: 1, gpu: 3, class: intra, bandwidth: 4.5GB/s}]"},
	} {
		nominal := replayWith(t, c.sets)
		res := replayWith(t, append(c.sets, "cluster.link_overrides="+c.override))
		var floor units.Duration
		if c.bw > 0 {
			floor = units.Duration(float64(ringBytesLlama2CP2) / c.bw * float64(units.Second))
		}
		slow := map[int]bool{}
		for _, r := range c.slow {
			slow[r] = true
			if a := res.Ranks[r].Alone; c.bw == 0 && a <= nominal.Ranks[r].Alone {
				t.Errorf("%s: rank %d computes %v alone, no longer than on the nominal cluster", c.name, r, a)
			} else if a < floor {
				t.Errorf("%s: rank %d computes %v alone, below the %v its ring's %d B need at %g B/s", c.name, r, a, floor, int64(ringBytesLlama2CP2), c.bw)
			}
		}
		if res.StepTime < floor {
			t.Errorf("%s: step %v, below the %v the ring's bytes need on the slow link", c.name, res.StepTime, floor)
		}
		for r, st := range res.Ranks {
			if !slow[r] && st.Alone != nominal.Ranks[r].Alone {
				t.Errorf("%s: rank %d, whose cp group crosses no degraded link, computes %v alone, want the nominal %v", c.name, r, st.Alone, nominal.Ranks[r].Alone)
			}
		}
		if c.twin != "" {
			if twin := replayWith(t, append(c.sets, "cluster.link_overrides="+c.twin)); twin.StepTime != res.StepTime {
				t.Errorf("%s: step %v, but %v with the symmetric %s", c.name, res.StepTime, twin.StepTime, c.twin)
			}
		}
	}
}

// TestRingSpeedScalesKernelsOnly: a GPU speed (cluster.gpu_overrides)
// scales the ring's kernels, never its communication (QA4 s16 F2 b). With
// the ring's exchange far longer than the attention rounds it overlaps
// (cp 2 across 2 GB/s NICs), a rank's compute at speed s is A/s + B, and
// B, the part no speed changes, holds the ring's bytes at the NIC's
// bandwidth. Before, the executor divided the whole task, ring included,
// by the speed: rank 3 at speed 0.5 computed 7.90 s instead of about
// 4.1 s, and at speed 10 0.39 s, a tenth of what its NIC needs.
func TestRingSpeedScalesKernelsOnly(t *testing.T) {
	const bw = 2e9
	base := []string{"parallelism.cp=2", "parallelism.dp=8", "cluster.placement=[dp,cp]", "cluster.inter.bandwidth=2GB/s"}
	floor := units.Duration(float64(ringBytesLlama2CP2) / bw * float64(units.Second))
	for _, algo := range []string{"ring", "auto"} {
		sets := append([]string{"communication.algorithm=" + algo}, base...)
		alone := func(speed string) units.Duration {
			res := replayWith(t, append(sets, "cluster.gpu_overrides=[{rank: 3, speed: "+speed+"}]"))
			return res.Ranks[3].Alone
		}
		a1 := replayWith(t, sets).Ranks[3].Alone
		a2 := alone("2")
		kernels := 2 * (a1 - a2) // A
		fixed := a1 - kernels    // B
		if fixed < floor {
			t.Errorf("%s: the part of rank 3's compute no speed changes is %v, below the %v its ring's %d B need at 2 GB/s", algo, fixed, floor, int64(ringBytesLlama2CP2))
		}
		for _, c := range []struct {
			speed string
			div   float64
		}{{"0.5", 0.5}, {"10", 10}, {"1000", 1000}} {
			got := alone(c.speed)
			want := units.Duration(float64(kernels)/c.div) + fixed
			if d := got - want; d < -units.Microsecond || d > units.Microsecond {
				t.Errorf("%s: rank 3 at speed %s computes %v alone, want %v (%v of kernels at that speed and %v of communication)", algo, c.speed, got, want, kernels, fixed)
			}
			if got < floor {
				t.Errorf("%s: rank 3 at speed %s computes %v alone, below the %v its ring's bytes need", algo, c.speed, got, floor)
			}
		}
	}
}
