package zero

import (
	"fmt"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

func actOffStep(t *testing.T, stage, n int, overlap bool, host string) (*Result, *scenarios.Scenario) {
	t.Helper()
	return loadReplay(t, "actoff.yaml", []byte(fmt.Sprintf(`version: 1
stack: megatron
cluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB%s}
model: {preset: llama3.2-1b, seq_len: 4096}
parallelism: {dp: 8, zero_stage: %d}
training: {micro_batch: 2, grad_accum: 2, param_dtype: bf16, recompute: none, activation_offload_layers: %d}
communication: {overlap: %t}
`, host, stage, n, overlap)), nil)
}

// TestActivationOffloadStep: the offloaded blocks' saved tensors go down
// and come back up once per micro-step over the host link, on their own
// streams (Transformer Engine's offload stream, whatever the collectives'
// overlap); the step waits only where a copy is not done when the forward
// of block L − N + i (its copy down) or the backward of block i (its
// reload) needs it. So the step never gets shorter as the link gets
// slower, equals the step without offload once the link is fast enough,
// and is at least the copies' own time when the link is slow: GA · N
// copies each way, one after another on one link.
func TestActivationOffloadStep(t *testing.T) {
	for _, c := range []struct {
		stage   int
		overlap bool
	}{{1, true}, {1, false}, {3, true}} {
		t.Run(fmt.Sprintf("stage%d-overlap-%t", c.stage, c.overlap), func(t *testing.T) {
			base, _ := actOffStep(t, c.stage, 0, c.overlap, "")
			if base.Host != nil {
				t.Fatalf("no offload: host %+v", base.Host)
			}
			const n = 8
			prev := units.Duration(1 << 62)
			for _, bw := range []string{"2GB/s", "8GB/s", "32GB/s", "128GB/s", "20TB/s"} {
				res, s := actOffStep(t, c.stage, n, c.overlap, ", host: {pcie: {bandwidth: "+bw+", latency: 1us}}")
				h := res.Host
				if h == nil || h.CPUStep {
					t.Fatalf("%s: host %+v", bw, h)
				}
				// Bytes: GA micro-steps × the N blocks' saved tensors.
				bytes, err := memory.ActivationOffloadBytes(s)
				if err != nil || len(bytes) != n {
					t.Fatalf("%s: %v %v", bw, bytes, err)
				}
				var T int64
				for _, b := range bytes {
					T += b
				}
				if h.PCIeDown != 2*T || h.PCIeUp != 2*T {
					t.Errorf("%s: down %d, up %d, want 2 × %d", bw, h.PCIeDown, h.PCIeUp, T)
				}
				if res.StepTime > prev {
					t.Errorf("%s: step %v, longer than %v at the slower link", bw, res.StepTime, prev)
				}
				prev = res.StepTime
				switch bw {
				case "2GB/s":
					if res.StepTime < h.PCIeDownTime+h.PCIeUpTime {
						t.Errorf("%s: step %v shorter than its copies %v + %v", bw, res.StepTime, h.PCIeDownTime, h.PCIeUpTime)
					}
				case "20TB/s":
					if res.StepTime != base.StepTime {
						t.Errorf("%s: step %v, want the step without offload %v (copies hidden)", bw, res.StepTime, base.StepTime)
					}
					// The replayed timeline's peak lacks one micro-batch's
					// offloaded blocks (memory's walk, on the tasks'
					// times).
					if res.Memory.Peak != base.Memory.Peak-T {
						t.Errorf("%s: replayed peak %d, want %d − %d", bw, res.Memory.Peak, base.Memory.Peak, T)
					}
				}
			}
			if slow, _ := actOffStep(t, c.stage, n, c.overlap, ", host: {pcie: {bandwidth: 2GB/s, latency: 1us}}"); slow.StepTime <= base.StepTime {
				t.Errorf("2GB/s: step %v, not above %v", slow.StepTime, base.StepTime)
			}
		})
	}
}

// TestActivationOffloadDocFigures holds docs/compute-model.md's step times
// of Llama-3.1-8B over PCIe 5.0 by the number of offloaded blocks to the
// replay of that scenario (zerosim run of it, at the default efficiency).
func TestActivationOffloadDocFigures(t *testing.T) {
	ns := []int{0, 8, 16, 24, 31}
	steps := make([]string, len(ns))
	for i, n := range ns {
		res, _ := loadReplay(t, "actoff-doc.yaml", []byte(fmt.Sprintf(`version: 1
stack: megatron
cluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}
model: {preset: llama3.1-8b, seq_len: 8192}
parallelism: {dp: 8, zero_stage: 1}
training: {micro_batch: 1, grad_accum: 2, param_dtype: bf16, recompute: none, activation_offload_layers: %d}
`, n)), nil)
		steps[i] = fmt.Sprintf("%.3f", res.StepTime.Seconds())
	}
	golden.CheckQuotes(t, "../docs/compute-model.md", "TestActivationOffloadDocFigures (Replay of Llama-3.1-8B, micro-batch 1, GA 2, seq 8192, 8 H100, stage 1)",
		"(PCIe 5.0): N = 0, 8, 16, 24, 31 give "+strings.Join(steps, ", ")+" s per step of 2 micro-batches")
}
