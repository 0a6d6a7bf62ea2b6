package main

import (
	"strings"
	"testing"
)

// TestPlanToFitUnderPin (s28 L1): with a pinned key (--set of a key plan
// searches) the "to fit:" advice is what fits under the pin, and says so:
// Llama 3.1 70B on 2 × 8 H100 at global batch 64 with grad_accum pinned
// to 1 needs 148.4 GiB at its least (89.9 GiB searching accumulation),
// and GPUs with what the device needs there, the CUDA context and NCCL's
// buffers added: 149.1 GiB (90.6 GiB), as the fits line says.
func TestPlanToFitUnderPin(t *testing.T) {
	base := []string{"plan", "../../docs/examples/llama-3.1-70b.yaml", "--set", "cluster.nodes=2", "--set", "parallelism.dp=16", "--global-batch", "64"}
	pinned, _, code := sweepCLI(t, append(base, "--set", "training.grad_accum=1")...)
	if code != 1 {
		t.Fatalf("pinned: exit %d, want 1 (nothing fits):\n%s", code, pinned)
	}
	free, _, code := sweepCLI(t, base...)
	if code != 1 {
		t.Fatalf("unpinned: exit %d, want 1:\n%s", code, free)
	}
	flat := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	const note = "These hold under the pin training.grad_accum=1: without that --set plan searches the key too, and may need less."
	if !strings.Contains(flat(pinned), note) || !strings.Contains(flat(pinned), "GPUs with at least 149.1 GiB") {
		t.Errorf("pinned: want %q and the pinned least peak in:\n%s", note, pinned)
	}
	if strings.Contains(flat(free), "under the pin") || !strings.Contains(flat(free), "GPUs with at least 90.6 GiB") {
		t.Errorf("unpinned: no pin note and the searched least peak, in:\n%s", free)
	}
}
