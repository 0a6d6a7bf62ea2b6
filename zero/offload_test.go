package zero

import (
	"testing"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

func offloadScenario(t *testing.T, stage int, offload, host string) *scenarios.Scenario {
	t.Helper()
	s, err := scenarios.Load("off.yaml", []byte(`version: 1
cluster: {nodes: 1, gpus_per_node: 8, gpu: A100-80GB`+host+`}
model: {preset: llama2-7b, seq_len: 4096}
parallelism: {dp: 8, zero_stage: `+string(rune('0'+stage))+`}
training: {micro_batch: 1, recompute: full}
`+offload), nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestOffloadReplay: ZeRO-Offload moves each rank's reduced gradient shard
// down and its bf16 shard up over PCIe and runs Adam on the CPU, all as
// flows on the engine (per-rank or per-socket PCIe links, the node's DRAM
// and NVMe shared by its ranks); the host stats are rank 0's times, and
// which of PCIe or the CPU bounds the host follows the configured
// bandwidths.
//
// Llama-2-7B on 8 A100s, stage 2: the shard is the buffer / 8 elements
// (OptElems); down and up carry 2 B per element; CPU Adam 28 B per element
// at 409.6 GB/s / 8 ranks = 51.2 GB/s; PCIe4's payload per GPU, 32 GB/s ×
// 128/130 = 31,507,692,307 B/s (128b/130b encoding), 1 µs.
func TestOffloadReplay(t *testing.T) {
	base, err := Replay(offloadScenario(t, 2, "", ""), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if base.Host != nil {
		t.Fatalf("no offload: host stats %+v", base.Host)
	}
	res, err := Replay(offloadScenario(t, 2, "offload: {optimizer: cpu}\n", ""), Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := res.Host
	e := res.Schedule.OptElems
	var gradShard int64
	for _, b := range res.Schedule.Buckets {
		gradShard += b.GradBytes / 8
	}
	cpu := units.TransferTime(units.Bytes(28*e), 51_200_000_000)
	up := units.TransferTime(units.Bytes(2*e), 31_507_692_307) + units.Microsecond
	if h == nil || h.PCIeDown != gradShard || h.PCIeUp != 2*e || h.CPUTime != cpu || h.PCIeUpTime != up || h.Bottleneck != "cpu" {
		t.Fatalf("host %+v, want down %d, up %d in %v, cpu %v, cpu-bound", h, gradShard, 2*e, up, cpu)
	}
	if h.RAMPerNode != 8*16*e {
		t.Errorf("host RAM per node %d, want 16 B × %d × 8", h.RAMPerNode, e)
	}
	// The step waits for the CPU step and the copy up: at least the
	// no-offload step minus its GPU optimizer plus both.
	if res.StepTime <= base.StepTime || res.StepTime < base.Compute-gpuOptimizer(t, base)+cpu+up {
		t.Errorf("offload step %v vs %v without", res.StepTime, base.StepTime)
	}
	// PCIe shared per socket (4 GPUs on a PCIe3 link: a quarter each of its
	// 15,753,846,153 B/s of payload) and
	// fast DRAM: PCIe bounds the host.
	res, err = Replay(offloadScenario(t, 2, "offload: {optimizer: cpu}\n", ", host: {pcie: {preset: PCIe3}, pcie_sharing: per_socket, memory_bandwidth: 4TB/s}"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if h := res.Host; h.Bottleneck != "pcie" || h.PCIeUpTime != units.TransferTime(units.Bytes(4*2*e), 15_753_846_153)+units.Microsecond {
		t.Errorf("per-socket PCIe3: %+v, want pcie-bound with up at a quarter of 15.75 GB/s", h)
	}
	// Stage 3 with parameters on the host: every gather first copies the
	// unit's shard up (forward and backward), nothing goes up after the
	// step.
	res, err = Replay(offloadScenario(t, 3, "offload: {optimizer: cpu, params: cpu}\n", ""), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var paramShard int64
	for _, b := range res.Schedule.Buckets {
		paramShard += b.ParamBytes / 8
	}
	if h := res.Host; h.PCIeUp != 2*paramShard || res.MemoryModel.Component("params").AtRest != 0 {
		t.Errorf("params offloaded: up %d, want %d; GPU params %d", h.PCIeUp, 2*paramShard, res.MemoryModel.Component("params").AtRest)
	}
	// NVMe optimizer: the CPU step also streams 24 B per element at
	// 31.5 GB/s / 8.
	res, err = Replay(offloadScenario(t, 2, "offload: {optimizer: nvme}\n", ""), Options{})
	if err != nil {
		t.Fatal(err)
	}
	nv := units.TransferTime(units.Bytes(24*e), units.Bandwidth(int64(scenarios.DefaultNVMeBandwidth)/8))
	// The eight ranks share the node's NVMe as flows on the engine: their
	// rates are rounded, so allow a nanosecond.
	if h := res.Host; h.CPUTime < cpu+nv-units.Nanosecond || h.CPUTime > cpu+nv+units.Nanosecond {
		t.Errorf("nvme: cpu %v (%d ps), want %v + %v", h.CPUTime, int64(h.CPUTime), cpu, nv)
	}
}

func gpuOptimizer(t *testing.T, r *Result) units.Duration {
	for _, task := range r.Schedule.Tasks {
		if task.Kind == Optimizer {
			return task.Dur
		}
	}
	t.Fatal("no optimizer task")
	return 0
}

// TestOffloadGB200Rack (QA13 F5): CPU Adam on a GB200 NVL72 rack (one node
// of 72, llama2-70b at ZeRO-3 with the optimizer on the host) runs on the
// rack's 36 Grace CPUs, not DGX A100's two EPYCs. By hand: 28 B ×
// 68,976,648,192 params = 1.931e12 B over 72 × 256 GB/s = 18.432 TB/s is
// 104.78 ms a rank (DGX A100's 409.6 GB/s gave 4.715 s), and the ranks'
// 1,103,626,381,824 B of host RAM fit the rack's 72 × 240 GB = 17.28 TB
// (DGX A100's 1 TiB, 1,099,511,627,776 B, they exceeded).
func TestOffloadGB200Rack(t *testing.T) {
	s, err := scenarios.Load("gb200off.yaml", []byte(`version: 1
cluster: {nodes: 1, gpus_per_node: 72, gpu: GB200}
model: {preset: llama2-70b, seq_len: 4096}
parallelism: {dp: 72, zero_stage: 3}
offload: {optimizer: cpu}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Replay(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	h, e := res.Host, res.Schedule.OptElems
	// The shard is the params over 72, padded (958,009,012 elements).
	if e*72 < 68_976_648_192 || e*72 >= 68_976_648_192+72*16 {
		t.Fatalf("optimizer shard %d elements, want 68,976,648,192 / 72 padded", e)
	}
	cpu := units.TransferTime(units.Bytes(28*e), 256_000_000_000)
	if h == nil || h.CPUTime != cpu || cpu < 104*units.Millisecond || cpu > 105*units.Millisecond {
		t.Fatalf("host %+v, want CPU Adam %v (about 104.78ms)", h, cpu)
	}
	if h.RAMPerNode != 1_103_626_381_824 || units.Bytes(h.RAMPerNode) <= units.TiB || s.Cluster.Host.Memory != 17_280_000_000_000 {
		t.Errorf("host RAM %d B of %d; want 1,103,626,381,824 B of 17.28 TB", h.RAMPerNode, s.Cluster.Host.Memory)
	}
}

// TestCopyKindNames (qauser32 L8): the host copies are named by their
// direction, as run's host line says them ("PCIe GPU→host … host→GPU"):
// the critical-path table, traces and result.json said "pcie down" and
// "pcie up".
func TestCopyKindNames(t *testing.T) {
	for k, want := range map[Kind]string{PCIeDown: "pcie gpu→host", PCIeUp: "pcie host→gpu"} {
		if got := k.String(); got != want {
			t.Errorf("%d: %q, want %q", k, got, want)
		}
	}
}
