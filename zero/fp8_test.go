package zero

import (
	"testing"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
)

func llama8b(t *testing.T, stage int, fp8 string) *scenarios.Scenario {
	t.Helper()
	doc := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {preset: llama3.1-8b}\n" +
		"parallelism: {dp: 8, zero_stage: " + itoa(stage) + "}\ntraining: {fp8: " + fp8 + "}\n"
	s, err := scenarios.Load("llama.yaml", []byte(doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestFP8 checks the three things an fp8 recipe changes: block GEMMs at
// the fp8 peak (attention and the embedding/lm_head stay bf16), Transformer
// Engine's fp8 weight copies + transposes and amax history, and torchao's
// fp8 all-gather at ZeRO-3 (one byte per block parameter).
func TestFP8(t *testing.T) {
	const (
		block  = 218_112_000 // Llama-3.1-8B decoder layer
		blocks = 32
		embed  = 525_336_576 // 128256 × 4096
	)
	bf, err := Costs(llama8b(t, 1, "none"))
	if err != nil {
		t.Fatal(err)
	}
	s8 := llama8b(t, 1, "te")
	f8, err := Costs(s8)
	if err != nil {
		t.Fatal(err)
	}
	// The block's matmuls at peak_fp8 (1979 TFLOPS) × the H100's
	// fp8_gemm_ratio (scenarios.DefaultFP8GEMMRatio), its attention and
	// memory-bound work as in bf16: the forward equals the per-operation
	// model at that GEMM peak, and is faster than bf16 by less than half.
	d, _ := flopDims(s8)
	elem, _, err := blockElementwise(s8, d, false)
	if err != nil {
		t.Fatal(err)
	}
	// and the recipe's casts (fp8CastBytes, held by TestFP8CastBytes).
	cast, _, err := fp8CastBytes(s8, s8.Model.LayerList[1], d, d.FFN)
	if err != nil || cast <= 0 {
		t.Fatalf("fp8 casts %d B, %v", cast, err)
	}
	elem += cast
	ratio, _, _ := scenarios.DefaultFP8GEMMRatio("H100-80GB")
	fwd, _, err := blockSeconds(d, GPUShape{Peak: 989e12, HBM: 3350e9, SMs: 132, GEMMPeak: 1979e12 * ratio},
		Efficiency{GEMM: 0.8, Attention: HopperAttentionEfficiency, HBM: DefaultHBMEfficiency}, elem, 0)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := seconds(fwd)
	if f8[1].Name != "block.0" || f8[1].Fwd != want || f8[1].FwdFLOPs != bf[1].FwdFLOPs || !(f8[1].Fwd < bf[1].Fwd && 2*f8[1].Fwd > bf[1].Fwd) {
		t.Errorf("fp8 block.0 forward %v (%d FLOPs), want %v (%d FLOPs as bf16, bf16 takes %v)", f8[1].Fwd, f8[1].FwdFLOPs, want, bf[1].FwdFLOPs, bf[1].Fwd)
	}
	if f8[0].Fwd != bf[0].Fwd || f8[len(f8)-1].Fwd != bf[len(bf)-1].Fwd {
		t.Errorf("embedding / lm_head changed under fp8: %v %v", f8[0].Fwd, f8[len(f8)-1].Fwd)
	}

	// TE at ZeRO-1: copies and transposes of every block (2 B/param) and 4
	// GEMMs × 3 tensors × 1024 fp32 amax values per block, at rest.
	m, err := memory.Analyze(llama8b(t, 1, "te"), memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := component(m, memory.CompFP8).AtRest, int64(blocks*(2*block+4*3*1024*4)); got != want {
		t.Errorf("TE fp8 copies at rest %d, want %d", got, want)
	}
	// Current scaling (te_current) keeps the copies and no amax history
	// (Float8CurrentScalingQuantizer computes each tensor's scale from its
	// own amax).
	mc, err := memory.Analyze(llama8b(t, 1, "te_current"), memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := component(mc, memory.CompFP8).AtRest, int64(blocks*2*block); got != want {
		t.Errorf("TE current-scaling fp8 copies at rest %d, want %d", got, want)
	}
	// TE at ZeRO-3: only the amax history at rest; copies live with the
	// gathered units (at most two blocks: current + prefetched).
	m3, err := memory.Analyze(llama8b(t, 3, "te"), memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c := component(m3, memory.CompFP8); c.AtRest != blocks*4*3*1024*4 || c.Peak != c.AtRest+2*2*block {
		t.Errorf("TE ZeRO-3 fp8 copies: at rest %d, peak %d", c.AtRest, c.Peak)
	}
	// torchao at ZeRO-3: the forward all-gathers move 1 B per block
	// parameter and 2 B for the embedding, final norm and lm_head; with
	// fp8_all_gather: false (enable_fsdp_float8_all_gather off, torchtitan's
	// default) 2 B for every parameter, and the gathered units are held
	// at 2 B too: the gathered peak (the bf16 lm_head with one block) holds
	// one block's parameters × 1 B more.
	var peaks []int64
	for _, c := range []struct {
		fp8        string
		blockBytes int64
	}{{"torchao", 1}, {"torchao, fp8_all_gather: false", 2}} {
		r, err := Replay(llama8b(t, 3, c.fp8), Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range r.Phases {
			if p.Phase == PhaseForwardAG {
				if want := int64(blocks*block)*c.blockBytes + 2*(2*embed+4096); p.Logical != want {
					t.Errorf("%s: forward all-gather %d B, want %d", c.fp8, p.Logical, want)
				}
			}
		}
		m, err := memory.Analyze(llama8b(t, 3, c.fp8), memory.Options{})
		if err != nil {
			t.Fatal(err)
		}
		peaks = append(peaks, component(m, memory.CompGathered).Peak)
	}
	if peaks[1]-peaks[0] != block {
		t.Errorf("gathered params peak %d B with fp8 all-gathers, %d B without: want %d B more", peaks[0], peaks[1], block)
	}
	if _, err := scenarios.Load("a.yaml", []byte("version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {preset: llama3.1-8b}\nparallelism: {dp: 8, zero_stage: 3}\ntraining: {fp8: te, fp8_all_gather: false}\n"), nil); err == nil ||
		err.Error() != "a.yaml:5:21: fp8_all_gather is torchao's enable_fsdp_float8_all_gather, and training.fp8 is te (set fp8: torchao, or delete the key)" {
		t.Errorf("fp8_all_gather with te: %v", err)
	}
	if _, err := scenarios.Load("a.yaml", []byte("version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: A100-80GB}\nmodel: {preset: llama3.1-8b}\nparallelism: {dp: 8, zero_stage: 1}\ntraining: {fp8: te}\n"), nil); err == nil ||
		err.Error() != "a.yaml:5:12: fp8 te needs cluster.peak_fp8, and A100-80GB has no fp8 tensor cores (use a GPU with fp8 such as H100-80GB, or give peak_fp8)" {
		t.Errorf("fp8 on A100: %v", err)
	}
}
