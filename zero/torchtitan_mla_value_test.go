package zero

import (
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestTorchtitanMLAValueUnpadded: under stack torchtitan, flash with fa2
// is how zerosim import torchtitan writes deepseek_v3's FlexAttention,
// which takes MLA's value at its own width (torchtitan's deepseek_v3
// Attention.forward pads nothing: memory.BlockDims.ValueUnpadded). With
// as many kv heads as heads nothing separates it from sdpa then: the same
// forward FLOPs (P·V at v_head_dim 128, not the padded 192 that
// TestMLAValuePadByKernel gives fa2 without the stack) and the same peak
// (saved v a view of wkv_b's output, the output at 128), where the
// stackless flash pads both (qauser29 F3: the 671B file written as flash
// peaked 15 GiB above the same file written as sdpa).
func TestTorchtitanMLAValueUnpadded(t *testing.T) {
	load := func(stack, attention string) *scenarios.Scenario {
		t.Helper()
		y := "version: 1\n" + stack + "cluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\n" +
			"model: {hf_config: deepseek-v2-lite.json, layers: 2, seq_len: 4096}\nparallelism: {dp: 8, zero_stage: 3}\n" +
			"training: {micro_batch: 1, attention: " + attention + ", attention_kernel: fa2}\n"
		s, err := scenarios.Load("../scenarios/testdata/hf-extra/s.yaml", []byte(y), nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	fwd := func(s *scenarios.Scenario) int64 {
		t.Helper()
		cs, err := Costs(s)
		if err != nil {
			t.Fatal(err)
		}
		return cs[1].FwdFLOPs
	}
	saved := func(s *scenarios.Scenario) int64 {
		t.Helper()
		r, err := Replay(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		peak, _ := r.Peak()
		return peak
	}
	const tt = "stack: torchtitan\n"
	flash, sdpa, plain := load(tt, "flash"), load(tt, "sdpa"), load("", "flash")
	if a, b := fwd(flash), fwd(sdpa); a != b {
		t.Errorf("stack torchtitan: flash forward FLOPs of block.0 %d, sdpa's %d: want equal", a, b)
	}
	const s, heads = 4096, 16
	if got, want := fwd(plain)-fwd(flash), int64(2*heads*s*s*64/2); got != want {
		t.Errorf("flash without the stack − with it: %d forward FLOPs, want P·V's padded 64 columns, %d", got, want)
	}
	if a, b := saved(flash), saved(sdpa); a != b {
		t.Errorf("stack torchtitan: flash peaks at %d B, sdpa at %d: want equal", a, b)
	}
	if saved(plain) == saved(flash) {
		t.Error("flash without the stack peaks where it does with it: the padded v and output are gone")
	}
}
