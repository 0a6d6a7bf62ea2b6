package zero

import (
	"math"
	"testing"

	"github.com/zerosim/zerosim/memory"
)

// TestLigerHeadCompute: Liger's fused linear cross-entropy runs the head's
// three GEMMs in its forward, in chunks of memory.LigerChunk tokens (256
// for Llama 3 8B at 8,192 tokens: 32 chunks) and reads each logit twice
// and writes it once, 6 B (ligerHead); its backward scales grad_input and
// grad_weight in place, 4 B per element of [t, h] and [V, h]. The FLOPs are
// the unfused head's, 2·t·h·V forward and twice that backward, all in the
// forward. On a GPU of 10¹⁵ FLOP/s, 10¹³ B/s and 132 SMs at efficiency 1:
//   - forward GEMM per chunk, 256×4096 by 4096×128,256: 2·256·4096·128,256
//     FLOPs over ⌈256/128⌉·⌈128,256/128⌉ = 2,004 tiles, 16 waves of 132
//     (2,112 slots) — GEMMSeconds' own rule, so the test compares the sum
//     of 32 chunk GEMMs with GEMMSeconds at that shape;
//   - backward: 4·(8192·4096 + 128,256·4096) B / 10¹³ B/s.
func TestLigerHeadCompute(t *testing.T) {
	d := FLOPDims{Arch: "llama", Seq: 8192, Batch: 1, Hidden: 4096, Heads: 32, KVHeads: 8, FFN: 14336, Vocab: 128256}
	gpu, eff := GPUShape{Peak: 1e15, HBM: 1e13, SMs: 132}, Efficiency{GEMM: 1, Attention: 1, HBM: 1}
	plain := ComputeSpec{Dims: d, GPU: gpu, Eff: eff, Blocks: []bool{false}, Head: 0, HeadElementwise: 14 * 8192 * 128256}
	lig := plain
	ligerHead(&lig)
	p, err := PlanCompute(plain)
	if err != nil {
		t.Fatal(err)
	}
	l, err := PlanCompute(lig)
	if err != nil {
		t.Fatal(err)
	}
	u, v := p[0], l[0]
	if v.FwdFLOPs+v.BwdFLOPs != u.FwdFLOPs+u.BwdFLOPs || v.BwdFLOPs != 0 {
		t.Errorf("liger FLOPs %d + %d, want %d all forward", v.FwdFLOPs, v.BwdFLOPs, u.FwdFLOPs+u.BwdFLOPs)
	}
	if c := memory.LigerChunk(8192, 4096, 128256); c != 256 {
		t.Fatalf("chunk %d, want 256", c)
	}
	f, _ := GEMMSeconds(256, 128256, 4096, gpu, eff)
	dg, _ := GEMMSeconds(256, 4096, 128256, gpu, eff)
	wg, _ := GEMMSeconds(4096, 128256, 256, gpu, eff)
	wantF := 32*(f+dg+wg) + 6*8192*128256/1e13
	wantB := 4 * (8192*4096 + 128256*4096) / 1e13
	if math.Abs(v.Fwd-wantF) > 1e-12 || math.Abs(v.Bwd-wantB) > 1e-12 {
		t.Errorf("liger head forward %g s, backward %g s; want %g, %g", v.Fwd, v.Bwd, wantF, wantB)
	}
	// A remainder chunk: 8,000 tokens are 31 chunks of 256 and one of 64.
	d.Seq = 8000
	lig.Dims = d
	ligerHead(&lig)
	r, err := PlanCompute(lig)
	if err != nil {
		t.Fatal(err)
	}
	f64, _ := GEMMSeconds(64, 128256, 4096, gpu, eff)
	dg64, _ := GEMMSeconds(64, 4096, 128256, gpu, eff)
	wg64, _ := GEMMSeconds(4096, 128256, 64, gpu, eff)
	wantF = 31*(f+dg+wg) + f64 + dg64 + wg64 + 6*8000*128256/1e13
	if math.Abs(r[0].Fwd-wantF) > 1e-12 {
		t.Errorf("8,000 tokens: forward %g s, want %g", r[0].Fwd, wantF)
	}
}

// TestLigerBlockTraffic: Liger's SwiGLU is one kernel each way, reading a
// and b and writing c (2+2+2 B), backward reading dc, a and b and writing
// da and db (ops/swiglu.py lines 27-30 and 45-57 at Liger-Kernel c3c2d4fa):
// the eager chain's silu then mul (10 and 18 B per element of t·f) become
// 6 and 10.
func TestLigerBlockTraffic(t *testing.T) {
	d := FLOPDims{Arch: "llama", Seq: 4096, Batch: 1, Hidden: 4096, Heads: 32, KVHeads: 8, FFN: 14336}
	p := llamaParts{FFN: 14336, RoPE: 4096 + 1024, Attention: true, FusedNorm: true}
	f0, b0, err := llamaChain(d, p, "", false, false)
	if err != nil {
		t.Fatal(err)
	}
	p.FusedSwiGLU = true
	f1, b1, err := llamaChain(d, p, "", false, false)
	if err != nil {
		t.Fatal(err)
	}
	tf := int64(4096 * 14336)
	if f0-f1 != (10-6)*tf || b0-b1 != (18-10)*tf {
		t.Errorf("fused SwiGLU saves %d and %d B, want %d and %d", f0-f1, b0-b1, 4*tf, 8*tf)
	}
}
