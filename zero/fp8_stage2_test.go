package zero

import (
	"testing"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
)

// TestFP8GatherFSDPStage2 checks torchao's fp8 all-gather at FSDP's ZeRO-2
// (memory.FSDPStage2: fully_shard(reshard_after_forward=False)), whose
// all-gathers run torchao's fsdp_pre_all_gather as stage 3's do: the
// schedule's gathers move 1 B per block parameter, the bytes the memory
// model holds gathered, and the weight casts are the shard's, once per
// micro-step's gather. DeepSpeed's stage 2 keeps 16-bit gathers.
func TestFP8GatherFSDPStage2(t *testing.T) {
	const (
		// Llama-3.1-8B decoder layer (hidden 4096, 8 KV heads of 128,
		// ffn 14336): q, o 2·4096² = 33,554,432; k, v 2·4096·1024 =
		// 8,388,608; MLP 3·4096·14336 = 176,160,768; two RMSNorms
		// 2·4096 = 8,192; 218,112,000 in all.
		block  = 2*4096*4096 + 2*4096*1024 + 3*4096*14336 + 2*4096
		blocks = 32
		embed  = 525_336_576 // 128256 × 4096
		linear = block - 2*4096
	)
	load := func(stack string, stage int) *scenarios.Scenario {
		t.Helper()
		s, err := scenarios.Load("s.yaml", []byte("version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nstack: "+stack+
			"\nmodel: {preset: llama3.1-8b}\nparallelism: {dp: 8, zero_stage: "+itoa(stage)+"}\ntraining: {fp8: torchao}\n"), nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, c := range []struct {
		stack      string
		blockBytes int64
	}{{"torchtitan", 1}, {"deepspeed", 2}} {
		s := load(c.stack, 2)
		if memory.FSDPStage2(s) != (c.stack == "torchtitan") {
			t.Fatalf("%s: FSDPStage2 %v", c.stack, memory.FSDPStage2(s))
		}
		groups, err := memory.BufferLayouts(s)
		if err != nil {
			t.Fatal(err)
		}
		var pad int64
		for _, g := range groups {
			pad += (g.Layout.Size - g.Layout.Numel) * g.ParamBytes
		}
		r, err := Replay(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		// Whole blocks at the fp8 width, norms too, as stage 3's gathers
		// and the memory model count them (scenarios.FP8Linear).
		want := int64(blocks*block)*c.blockBytes + 2*(2*embed+4096) + pad
		found := false
		for _, p := range r.Phases {
			if p.Phase == PhasePostOptAG || p.Phase == PhaseForwardAG {
				found = true
				if p.Logical != want {
					t.Errorf("%s: step's all-gather %d B, want %d (blocks at %d B, padding %d B)", c.stack, p.Logical, want, c.blockBytes, pad)
				}
			}
		}
		if !found {
			t.Errorf("%s: no all-gather", c.stack)
		}
	}
	// The weight casts: at stage 3, per shard element for each of the
	// unit's two gathers, at FSDP's stage 2 for its one: 3 B compiled, and
	// eager the kernels of TorchAOEagerCast after the amax (the scale is
	// precomputed), to(float32) 2 + 4, mul 4 + 4, clamp 4 + 4, to(fp8)
	// 4 + 1 = 27 B: 3·linear/8 = 81,788,928 B and 27·linear/8 =
	// 736,100,352 B less a block.
	ls := blockFP8Linears(FLOPDims{Arch: "llama", Seq: 8192, Batch: 1, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128}, 14336, false, false)
	for _, c := range []struct {
		compile string
		perElem int64
	}{{"none", 27}, {"blocks", 3}} {
		if got := castBytes(TorchAOEagerCast[2:]); c.compile == "none" && got != c.perElem {
			t.Errorf("eager cast after the amax: %d B an element, want %d", got, c.perElem)
		}
		traffic := func(stage int) (int64, int64) {
			t.Helper()
			s := load("torchtitan", stage)
			s.Training.Compile = scenarios.Compile(c.compile)
			f, b, err := fp8CastTraffic(s, scenarios.Layer{Name: "block.0", Block: true}, ls)
			if err != nil {
				t.Fatal(err)
			}
			return f, b
		}
		f3, b3 := traffic(3)
		f2, b2 := traffic(2)
		if want := c.perElem * linear / 8; f3-f2 != want || b3 != b2 {
			t.Errorf("compile %s: fp8 casts at stage 3 %d + %d B, at FSDP's stage 2 %d + %d B: want forward %d B less, backward equal", c.compile, f3, b3, f2, b2, want)
		}
	}
}
