package zero

import (
	"fmt"
	"testing"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/units"
)

// TestRingAttentionCostGQA counts the ring's traffic tensor by tensor when
// k and v reach it narrower than the queries (training.attention flash:
// SDPA with enable_gqa, memory.RingKVHeads): Llama 3.1 8B's 32 query heads
// and 8 kv heads of 128 over a rank's 32,768 rows, xq = xo = 32,768·32·128
// (q, dq, the output) and xk = xv = 32,768·8·128 (k, dk, v, dv). From
// ringattn.go's op list: fused forward 10·xo a later round (the merge
// works on the output); fused backward round 0's fp32 casts of dq, dk, dv
// (6 each) and the final casts of the received dk, dv (6 each), a later
// round dq 10, dk and dv 9 each; eager forward k and v contiguous (4 each)
// and the output's two casts (6 each), a later round the k/v cat (4 each)
// and 38 of merge ops on the output; eager backward the fp32 zeros (4
// each of dq, dk, dv), the contiguous k and v (4 each), 64 of casts a
// third on each gradient, a later round dq 10, dk and dv 25 each. The
// exchange: bf16 k and v, 2·xk + 2·xv bytes per gather and rank, fp32 dk
// and dv, 4·xk + 4·xv per send, timed at the link.
func TestRingAttentionCostGQA(t *testing.T) {
	const xq, xk = 32768 * 32 * 128, 32768 * 8 * 128
	const xo, xv = xq, xk
	g := GPUShape{Peak: 989e12, HBM: 2400e9, SMs: 132}
	e := Efficiency{GEMM: 0.4, Attention: 0.35, HBM: 0.88}
	for _, c := range []struct {
		cp       int64
		compiled bool
		fwd, bwd int64
	}{
		{2, true, 10 * xo, 6*xq + 12*xk + 12*xv + (10*xq + 9*xk + 9*xv)},
		{8, true, 7 * 10 * xo, 6*xq + 12*xk + 12*xv + 7*(10*xq+9*xk+9*xv)},
		{2, false, 4*xk + 4*xv + 12*xo + (4*xk + 4*xv + 38*xo), 4*xq + 8*xk + 8*xv + 64*(xq+xk+xv)/3 + (10*xq + 25*xk + 25*xv)},
		{4, false, 4*xk + 4*xv + 12*xo + 3*(4*xk+4*xv+38*xo), 4*xq + 8*xk + 8*xv + 64*(xq+xk+xv)/3 + 3*(10*xq+25*xk+25*xv)},
	} {
		got, err := RingAttentionCost(llama8BRing(c.cp), RingSpec{CP: int(c.cp), Compiled: c.compiled, Net: testRingNet(t, int(c.cp)), KVHeads: 8}, g, e)
		if err != nil {
			t.Fatal(err)
		}
		kv, dkv := int64(2*xk+2*xv), int64(4*xk+4*xv)
		if got.FwdBytes != c.fwd || got.BwdBytes != c.bwd || got.KV != kv || got.DKV != dkv {
			t.Errorf("cp %d compiled %v: bytes %d/%d, KV %d, DKV %d; want %d/%d, %d, %d", c.cp, c.compiled,
				got.FwdBytes, got.BwdBytes, got.KV, got.DKV, c.fwd, c.bwd, kv, dkv)
		}
		gather, send := ringNetTimes(t, testRingNet(t, int(c.cp)), kv, dkv)
		if !ringNear(got.FwdComm, gather) || !ringNear(got.BwdComm, gather+float64(c.cp)*send) {
			t.Errorf("cp %d: comm %g/%g s, want %g/%g", c.cp, got.FwdComm, got.BwdComm, gather, gather+float64(c.cp)*send)
		}
	}
}

// TestRingWidthAgrees holds the one decision on the width of the k and v
// context parallelism's ring carries (memory.RingKVHeads) in the three
// places that use it: the run's context-parallel ring phase, the ring's
// per-block exchange that its time is charged for (RingCost.KV, DKV), and
// the memory model's gathered K and V (memory.RingBuffers). The width is
// typed from the sources, not taken from the helper: Llama 3.1 8B (32
// heads, 8 kv heads, head_dim 128) under sdpa (repeat_kv before SDPA,
// torchtitan 9dec370) carries 32 heads, under flash (SDPA with enable_gqa,
// torchtitan since ff0829c; PyTorch's SDPA hands the flash and cuDNN
// kernels k and v unexpanded) 8. Per block and rank with r = s/cp rows, X
// = r·kvh·128: KV = 4X (bf16 k and v), DKV = 8X (fp32 dk and dv); without
// recompute each rank sends 2·(cp−1)·KV + cp·DKV per block. The ring
// buffers' gathered K and V are cp·KV (docs/memory-model.md: n·2k, k =
// 2·r·kvh·128 bytes), the rest of the forward peak being 9q + 3L eager and
// 5q + 3L compiled (4q + 3L at cp 2), q = 2·r·32·128, L = 4·32·r.
func TestRingWidthAgrees(t *testing.T) {
	const layers, seq, heads, headDim = 4, 16384, 32, 128
	for _, a := range []struct {
		attention string
		kvh       int64
	}{{"sdpa", 32}, {"flash", 8}} {
		for _, compile := range []string{"none", "blocks"} {
			for _, cp := range []int64{2, 4} {
				t.Run(fmt.Sprintf("%s compile %s cp %d", a.attention, compile, cp), func(t *testing.T) {
					s := loadDefault(t, "model.preset=llama3.1-8b", "model.layers="+itoa(layers), "cluster.nodes=1",
						"parallelism.dp="+itoa(int(8/cp)), "parallelism.cp="+itoa(int(cp)), "model.seq_len="+itoa(seq),
						"training.micro_batch=1", "training.recompute=none", "training.attention="+a.attention, "training.compile="+compile)
					r := int64(seq) / cp
					x := r * a.kvh * headDim
					kv, dkv := 4*x, 8*x

					res, err := Replay(s, Options{})
					if err != nil {
						t.Fatal(err)
					}
					if got, want := cpRingPhase(t, res).Sent, layers*(2*(cp-1)*kv+cp*dkv); got != want {
						t.Errorf("run: ring phase sends %d bytes a rank, want %d", got, want)
					}

					costs, _, err := costsAndPlan(s, nil, Options{})
					if err != nil {
						t.Fatal(err)
					}
					for u, l := range s.Model.LayerList {
						if l.Block && (costs[u].Ring.KV != kv || costs[u].Ring.DKV != dkv) {
							t.Errorf("time: block %s exchanges KV %d, DKV %d; want %d, %d", l.Name, costs[u].Ring.KV, costs[u].Ring.DKV, kv, dkv)
						}
					}

					d := memory.BlockDims{Arch: "llama", Seq: r, Batch: 1, Hidden: 4096, Heads: heads, KVHeads: 8, FFN: 14336, Vocab: 128256,
						Attention: a.attention, Compiled: compile == "blocks"}
					fwd, _, err := memory.RingBuffers(d, cp)
					if err != nil {
						t.Fatal(err)
					}
					q, lse := 2*r*heads*headDim, 4*heads*r
					rest := 9*q + 3*lse
					if compile == "blocks" {
						rest = 5*q + 3*lse
						if cp == 2 {
							rest = 4*q + 3*lse
						}
					}
					if got := fwd - rest; got != cp*kv {
						t.Errorf("memory: gathered K and V %d bytes (forward peak %d), want cp·KV = %d", got, fwd, cp*kv)
					}
				})
			}
		}
	}
}

// TestRingExplicitTimes: a block whose fwd or bwd the scenario gives
// (layer_list fwd, bwd: a measured time) keeps that time as given, with
// no ring seconds added, since a time measured at cp > 1 already holds the
// ring that runs inside the block's SDPA call; its exchange still crosses
// the links, so its ring bytes stay in the run's context-parallel ring
// phase. The other direction of the same block, left derived, carries the
// ring's seconds as every other block does.
func TestRingExplicitTimes(t *testing.T) {
	const layers = 4
	s := loadDefault(t, "model.preset=llama3.1-8b", "model.layers="+itoa(layers), "cluster.nodes=1", "parallelism.dp=4", "parallelism.cp=2",
		"training.recompute=none", "training.attention=sdpa")
	base, err := Replay(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ref, _, err := costsAndPlan(s, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var blocks []int
	for u, l := range s.Model.LayerList {
		if l.Block {
			blocks = append(blocks, u)
		}
	}
	u := blocks[1]
	const given = units.Duration(7 * units.Millisecond)
	s.Model.LayerList[u].Fwd = given
	got, _, err := costsAndPlan(s, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got[u].Fwd != given || got[u].Bwd != ref[u].Bwd {
		t.Errorf("block %s: fwd %v, bwd %v; want the given %v and the derived %v", s.Model.LayerList[u].Name, got[u].Fwd, got[u].Bwd, given, ref[u].Bwd)
	}
	// The bytes: the same traffic as the derived block's.
	if got[u].Ring != ref[u].Ring || got[u].Ring.KV == 0 {
		t.Errorf("block %s: ring traffic %+v, want %+v (bytes still counted)", s.Model.LayerList[u].Name, got[u].Ring, ref[u].Ring)
	}
	res, err := Replay(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := cpRingPhase(t, res), cpRingPhase(t, base); a.Sent != b.Sent || a.Logical != b.Logical || a.Collectives != b.Collectives {
		t.Errorf("ring phase with an explicit fwd: sent %d, logical %d, %d collectives; want the derived run's %d, %d, %d",
			a.Sent, a.Logical, a.Collectives, b.Sent, b.Logical, b.Collectives)
	}
}

// TestRingWidthAgreesMLA holds the memory model's gathered K and V to the
// ring's exchange for multi-head latent attention, whose k is
// qk_nope_head_dim + qk_rope_head_dim = 192 wide per head and v
// v_head_dim = 128 (DeepSeek-V2-Lite: 16 heads, k built per head): at cp 4
// and 4,096 rows a rank, KV = 2·4096·16·192 + 2·4096·16·128 bytes
// (RingCost.KV, what the run all-gathers) and the uncompiled forward ring
// buffers cp·KV + 9o + 3L, o = 2·4096·16·128 the bf16 output (v_head_dim
// wide) and L = 4·16·4096 (docs/memory-model.md); one width for k and v
// would gather cp·2·2·4096·16·192.
func TestRingWidthAgreesMLA(t *testing.T) {
	const cp, rows, heads, qk, v = 4, 4096, 16, 192, 128
	s := loadDefault(t, "model.preset=deepseek-v2-lite", "model.layers=2", "cluster.nodes=1", "parallelism.dp=2", "parallelism.cp=4",
		"model.seq_len=16384", "training.micro_batch=1", "training.recompute=none", "training.compile=none")
	kv := int64(2*rows*heads*qk + 2*rows*heads*v)
	o, lse := int64(2*rows*heads*v), int64(4*heads*rows)
	costs, _, err := costsAndPlan(s, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := memory.Analyze(s, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	blocks := 0
	for u, l := range s.Model.LayerList {
		if !l.Block {
			continue
		}
		blocks++
		if costs[u].Ring.KV != kv {
			t.Errorf("time: block %s exchanges KV %d, want %d", l.Name, costs[u].Ring.KV, kv)
		}
		if got := rep.Units[u].RingForward - 9*o - 3*lse; got != cp*kv {
			t.Errorf("memory: block %s gathers %d bytes of K and V (forward %d), want cp·KV = %d", l.Name, got, rep.Units[u].RingForward, cp*kv)
		}
	}
	if blocks != 2 {
		t.Errorf("%d blocks, want 2", blocks)
	}
}
