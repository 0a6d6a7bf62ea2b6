package zero

import (
	"fmt"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/units"
)

// TestRingDocFigures holds the steps docs/compute-model.md quotes for the
// context-parallel ring under a degraded link and beside ZeRO's
// collectives (cp 2, dp 8, placement [dp, cp] on the default example).
func TestRingDocFigures(t *testing.T) {
	cp := []string{"parallelism.cp=2", "parallelism.dp=8", "cluster.placement=[dp,cp]"}
	run := func(sets ...string) *Result {
		t.Helper()
		res, err := Replay(example(t, "default", append(append([]string(nil), cp...), sets...)...), Options{})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	sec := func(d units.Duration) string { return fmt.Sprintf("%.3f s", d.Seconds()) }
	slow := run("cluster.link_overrides=[{node: 1, gpu: 2, class: inter, bandwidth: 1GB/s}]")
	var ring4, other units.Duration
	for _, st := range slow.Ranks {
		switch st.Rank {
		case 4:
			ring4 = st.Compute
		case 0:
			other = st.Alone
		}
	}
	beside := run("cluster.inter.bandwidth=2GB/s", "communication.algorithm=ring")
	auto := run("cluster.inter.bandwidth=2GB/s")
	hier := run("cluster.inter.bandwidth=2GB/s", "communication.algorithm=hierarchical")
	nvlink := run("cluster.placement=[cp,dp]", "cluster.intra.bandwidth=20GB/s", "communication.algorithm=ring")
	half := run("cluster.inter.bandwidth=2GB/s", "communication.algorithm=ring", "cluster.gpu_overrides=[{rank: 3, speed: 0.5}]")
	nominal := run()
	// The ports' bytes by hand (Llama 2 7B: M = 2P = 13,476,831,232 B of
	// bf16 gradients and parameters; N = 16 ranks on 2 nodes of 8; the
	// ring's K/V exchange at cp 2, t = 2,048 tokens a rank: 7 × 2·t·h
	// (K and V forward, rerun, backward, and the fp32 dK, dV) per block,
	// 32 blocks). The busiest NIC under algorithm ring carries a rank's
	// whole (N−1)/N·M of the reduce-scatter and of the all-gather beside
	// the ring; under auto NCCL's rings put m·(N−1)/N·M on the network per
	// collective, over the 2 × 8 NICs; hierarchical's inter-node rings
	// (one per local rank) M/8·(m−1)/m each. On NVLink at 20 GB/s, cp
	// beside dp ([cp,dp]), the ring's port carries what the NIC did.
	const (
		M, N, m, g, blocks = 13_476_831_232.0, 16.0, 2.0, 8.0, 32
		kv                 = 2 * 2048 * 4096 * 2
	)
	ringBytes := float64(blocks * 7 * kv)
	collective := (N - 1) / N * M
	ringPort := 2*collective + ringBytes
	autoPort := 2*m*collective/(m*g) + ringBytes
	hierPort := 2*M/g*(m-1)/m + ringBytes
	under := func(step units.Duration, bytes, bw float64) float64 { return 100 * (1 - step.Seconds()/(bytes/bw)) }
	gb := func(b float64) string { return fmt.Sprintf("%.3f", b/1e9) }
	golden.CheckQuotes(t, "../docs/compute-model.md", "TestRingDocFigures (the ports' bytes by hand)",
		fmt.Sprintf("where the busiest NIC's %s + %s + %s GB (reduce-scatter, all-gather, ring) need %.2f s, %.0f %% under;", gb(collective), gb(collective), gb(ringBytes), ringPort/2e9, under(beside.StepTime, ringPort, 2e9)),
		fmt.Sprintf("against %.2f s (%.0f %%), `hierarchical`", autoPort/2e9, under(auto.StepTime, autoPort, 2e9)),
		fmt.Sprintf("against %.2f s (%.1f %%), and cp on NVLink", hierPort/2e9, under(hier.StepTime, hierPort, 2e9)),
		fmt.Sprintf("against %.2f s (%.0f %%) (QA4 s16, finding F2)", ringPort/20e9, under(nvlink.StepTime, ringPort, 20e9)),
		fmt.Sprintf("the ring's %.1f GB take %.0f ms of a", ringBytes/1e9, 1e3*ringBytes/50e9))
	golden.CheckQuotes(t, "../docs/compute-model.md", "zero.Replay of the default example with "+fmt.Sprint(cp),
		"ranks 4 and 5 compute "+sec(ring4)+", the others "+fmt.Sprintf("%.1f ms", float64(other)/1e9)+" as without it, step "+sec(slow.StepTime),
		"takes "+sec(beside.StepTime)+" where the busiest NIC's",
		"`auto` "+sec(auto.StepTime)+" against", "`hierarchical` "+sec(hier.StepTime)+" against",
		"with `ring` "+sec(nvlink.StepTime)+" against",
		"rank 3 at speed 0.5: compute "+sec(half.Ranks[3].Alone)+" alone,",
		fmt.Sprintf("ms of a %.0f ms step", float64(nominal.StepTime)/1e9))
}
