package numerics

import (
	"math"
	"testing"
)

// TestWideSqExact: squares of bf16 values 2^250 apart sum exactly, in any
// order, and the norm is what float64 gives where float64 is exact.
func TestWideSqExact(t *testing.T) {
	big, one, tiny := ToBF16(float32(math.Ldexp(1, 120))), ToBF16(1), BF16(1) // 2^120, 1, 2^-133
	var a, b wideSq
	for _, x := range []BF16{big, tiny, one} {
		a.addSquare(x)
	}
	for _, x := range []BF16{one, tiny, big} {
		b.addSquare(x)
	}
	if a != b {
		t.Errorf("order changed the sum: %x vs %x", a.w, b.w)
	}
	// 2^240 + 1 + 2^-266: the words hold each term.
	if a.w[0] != 1 || a.w[4] != 1<<(266%64) || a.w[(240+266)/64] != 1<<((240+266)%64) {
		t.Errorf("words %x", a.w)
	}
	var c wideSq
	for _, x := range []float32{3, -4} { // the 3-4-5 triangle
		c.addSquare(ToBF16(x))
	}
	if c.norm() != 5 {
		t.Errorf("norm(3, -4) = %v, want 5", c.norm())
	}
	c.addSquare(ToBF16(float32(math.Inf(-1))))
	if n := c.norm(); !math.IsNaN(float64(n)) {
		t.Errorf("norm with -Inf = %v, want NaN", n)
	}
}

// TestClipCoef: clip_grad_norm_'s coefficient, max_norm/(norm+1e-6)
// clamped to 1.
func TestClipCoef(t *testing.T) {
	if c := clipCoef(1, 0.5); c != 1 {
		t.Errorf("norm 0.5, max 1: %v, want 1 (clamped)", c)
	}
	// 1/(4+1e-6) in float32, times 1: 0.24999994 (float32 of 0.2499999375).
	if c := clipCoef(1, 4); c != float32(float32(1/(float32(4)+float32(1e-6)))) || c >= 0.25 {
		t.Errorf("norm 4, max 1: %v", c)
	}
}

func clipConfig(stage, k int) Config {
	return Config{Model: ResidualMLP, Hidden: 16, Layers: 3, N: 4, K: k, Stage: stage, Steps: 6, Seed: 3, ClipNorm: 0.5, BucketElems: SplitBucketElems}
}

// TestClipVerifies: with training.grad_clip norm, sharded training with a
// norm all-reduced over the shards stays bit-identical to unsharded
// training at every stage and K, and clipping changes the result: the
// norm exceeds max_norm at every step (the toy MLP's gradients have norms
// in the hundreds), so the masters differ from an unclipped run.
func TestClipVerifies(t *testing.T) {
	for _, c := range []Config{clipConfig(0, 1), clipConfig(1, 2), clipConfig(2, 1), clipConfig(3, 2), clipConfig(3, 1)} {
		r, err := Verify(c)
		if err != nil || !r.Pass {
			t.Errorf("%s: error %v, pass %v, first %v", c.Name(), err, r != nil && r.Pass, r.First)
		}
	}
	clipped, err := newReference(clipConfig(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	plain := clipConfig(1, 1)
	plain.ClipNorm = 0
	ref, _ := newReference(plain)
	for step := 1; step <= 3; step++ {
		if err := clipped.runStep(); err != nil {
			t.Fatal(err)
		}
		if err := ref.runStep(); err != nil {
			t.Fatal(err)
		}
		if !(float64(clipped.gradNorm) > 2*clipped.cfg.ClipNorm) {
			t.Errorf("step %d: norm %v does not exceed max_norm %v: the test clips nothing", step, clipped.gradNorm, clipped.cfg.ClipNorm)
		}
	}
	same := 0
	for i := range ref.master {
		if ref.master[i] == clipped.master[i] {
			same++
		}
	}
	if same > len(ref.master)/2 {
		t.Errorf("%d of %d masters equal with and without clipping", same, len(ref.master))
	}
}

// TestClipLocalNormCaught: a norm taken over the rank's local shard only
// (no all-reduce), the textbook ZeRO/FSDP clipping bug, fails verify.
func TestClipLocalNormCaught(t *testing.T) {
	for _, c := range []Config{clipConfig(1, 1), clipConfig(3, 2)} {
		c.localNorm = true
		r, err := Verify(c)
		if err != nil {
			t.Fatal(err)
		}
		if r.Pass || r.First == nil || r.First.Step != 1 {
			t.Errorf("%s with a local-shard norm: pass %v, first %v; want a mismatch at step 1", c.Name(), r.Pass, r.First)
		}
	}
}
