package numerics

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/zerosim/zerosim/memory"
)

// ModelKind selects a toy model.
type ModelKind int

const (
	// ResidualMLP is seed 000's ToyModel: Layers blocks x = x + fc2(gelu(fc1(x)))
	// with fc1: Hidden → 4·Hidden and fc2: 4·Hidden → Hidden (both with bias,
	// GELU with erf, weights [out, in]); loss = sum of the outputs. One
	// unit per layer.
	ResidualMLP ModelKind = iota
	// TinyTransformer is seed 002's 260-parameter pre-LN transformer block
	// (d 4, 2 heads of 2, FFN 16, vocab 8, T 3) with five units LN1(8),
	// attention(64), LN2(8), FFN(148), output(32). Hidden and Layers are
	// ignored.
	TinyTransformer
)

// String returns "mlp" or "tiny-transformer".
func (k ModelKind) String() string {
	switch k {
	case ResidualMLP:
		return "mlp"
	case TinyTransformer:
		return "tiny-transformer"
	}
	return fmt.Sprintf("ModelKind(%d)", int(k))
}

// Tiny transformer dimensions (seed 002).
const (
	ttD     = 4
	ttHeads = 2
	ttDK    = 2
	ttFFN   = 16
	ttVocab = 8
	ttT     = 3
)

// Per-rank batch sizes: rows of the MLP input, sequences of the
// transformer.
const (
	mlpBatch = 2
	ttBatch  = 2
)

// model is a toy model instance: its parameter list (flat order, with
// units), tensor shapes and, for the transformer, the fixed embedding.
type model struct {
	kind          ModelKind
	hidden, layer int
	params        []memory.Param
	shapes        [][]int
	emb           []float32 // transformer token embedding [vocab, d], bf16 values, not trained
}

func newModel(kind ModelKind, hidden, layers int) (*model, error) {
	m := &model{kind: kind, hidden: hidden, layer: layers}
	addp := func(name string, unit int, shape ...int) {
		n := 1
		for _, s := range shape {
			n *= s
		}
		m.params = append(m.params, memory.Param{Name: name, Numel: int64(n), Unit: unit})
		m.shapes = append(m.shapes, shape)
	}
	switch kind {
	case ResidualMLP:
		if hidden < 1 || hidden > 1024 {
			return nil, fmt.Errorf("numerics: mlp hidden %d: must be in [1, 1024]", hidden)
		}
		if layers < 1 || layers > 64 {
			return nil, fmt.Errorf("numerics: mlp layers %d: must be in [1, 64]", layers)
		}
		for l := range layers {
			p := fmt.Sprintf("layers.%d.", l)
			addp(p+"fc1.weight", l, 4*hidden, hidden)
			addp(p+"fc1.bias", l, 4*hidden)
			addp(p+"fc2.weight", l, hidden, 4*hidden)
			addp(p+"fc2.bias", l, hidden)
		}
	case TinyTransformer:
		addp("ln1.gamma", 0, ttD)
		addp("ln1.beta", 0, ttD)
		addp("w_q", 1, ttD, ttD)
		addp("w_k", 1, ttD, ttD)
		addp("w_v", 1, ttD, ttD)
		addp("w_o", 1, ttD, ttD)
		addp("ln2.gamma", 2, ttD)
		addp("ln2.beta", 2, ttD)
		addp("w1", 3, ttD, ttFFN)
		addp("b1", 3, ttFFN)
		addp("w2", 3, ttFFN, ttD)
		addp("b2", 3, ttD)
		addp("w_vocab", 4, ttD, ttVocab)
	default:
		return nil, fmt.Errorf("numerics: unknown model kind %d", int(kind))
	}
	return m, nil
}

// numel is the number of parameter elements.
func (m *model) numel() int64 {
	var n int64
	for _, p := range m.params {
		n += p.Numel
	}
	return n
}

// init returns the initial parameters (bf16 values as float32), one dense
// slice per parameter, drawn from seed: PyTorch-like U(±1/√fan_in) for
// weights and biases, γ = 1 + U(±0.1) and β = U(±0.1) for LayerNorm. For
// the transformer it also draws the fixed embedding (N(0,1)).
func (m *model) init(seed uint64) [][]float32 {
	rng := rand.New(rand.NewPCG(seed, 0x1e7a))
	out := make([][]float32, len(m.params))
	for k, p := range m.params {
		v := make([]float32, p.Numel)
		fanIn := m.shapes[k][len(m.shapes[k])-1]
		if m.kind == TinyTransformer && len(m.shapes[k]) == 2 {
			fanIn = m.shapes[k][0] // [in, out]
		}
		if m.kind == ResidualMLP && len(m.shapes[k]) == 1 {
			fanIn = m.shapes[k-1][1] // a bias shares its weight's fan-in
		}
		bound := 1 / math.Sqrt(float64(fanIn))
		for i := range v {
			u := float64(2*float64(rng.Float64())) - 1
			switch {
			case m.kind == TinyTransformer && (p.Name == "ln1.gamma" || p.Name == "ln2.gamma"):
				v[i] = RoundBF16(float32(1 + float64(0.1*u)))
			case m.kind == TinyTransformer && (p.Name == "ln1.beta" || p.Name == "ln2.beta"):
				v[i] = RoundBF16(float32(0.1 * u))
			default:
				v[i] = RoundBF16(float32(bound * u))
			}
		}
		out[k] = v
	}
	if m.kind == TinyTransformer {
		m.emb = make([]float32, ttVocab*ttD)
		for i := range m.emb {
			m.emb[i] = RoundBF16(float32(rng.NormFloat64()))
		}
	}
	return out
}

// batch is one rank's data for one step.
type batch struct {
	x      []float32 // MLP input [mlpBatch, hidden], bf16 values
	tokens []int     // transformer tokens [ttBatch, ttT+1]: inputs 0..T-1, targets 1..T
}

// makeBatch draws the data of data-rank r at step (from 1) from its own
// PCG stream, so it depends only on (seed, step, r).
func (m *model) makeBatch(seed uint64, step, r int) batch {
	rng := rand.New(rand.NewPCG(seed, uint64(step)<<32|uint64(r)))
	switch m.kind {
	case ResidualMLP:
		x := make([]float32, mlpBatch*m.hidden)
		for i := range x {
			x[i] = RoundBF16(float32(rng.NormFloat64()))
		}
		return batch{x: x}
	default:
		t := make([]int, ttBatch*(ttT+1))
		for i := range t {
			t[i] = rng.IntN(ttVocab)
		}
		return batch{tokens: t}
	}
}

// paramEnv is how a forward/backward pass reaches the parameters: it
// announces each unit before and after use (ZeRO-3 gathers and flushes
// there, and reduce-scatters a unit's gradients when its backward leaves),
// reads a parameter from storage at the moment it is needed and deposits
// gradients.
type paramEnv[T num] interface {
	enter(unit int, backward bool)
	leave(unit int, backward bool)
	param(k int) []T
	grad(k int, g []T)
}

// forwardBackward runs one forward and backward pass on b and returns the
// loss; scale multiplies the loss (seed 000's loss/N), so every gradient is
// that of scale·loss.
func forwardBackward[T num](m *model, ar arith[T], e paramEnv[T], b batch, scale T) T {
	if m.kind == ResidualMLP {
		return mlpForwardBackward(m, ar, e, b, scale)
	}
	return ttForwardBackward(m, ar, e, b, scale)
}

func conv[T num](x []float32) []T {
	y := make([]T, len(x))
	for i, v := range x {
		y[i] = T(v)
	}
	return y
}

func mlpForwardBackward[T num](m *model, ar arith[T], e paramEnv[T], b batch, scale T) T {
	H, F, B := m.hidden, 4*m.hidden, len(b.x)/m.hidden
	type cache struct{ in, a, h []T }
	caches := make([]cache, m.layer)
	cur := conv[T](b.x)
	for l := range m.layer {
		e.enter(l, false)
		a := linear(ar, cur, e.param(4*l), e.param(4*l+1), B, H, F, true)
		h := gelu(ar, a)
		y := linear(ar, h, e.param(4*l+2), e.param(4*l+3), B, F, H, true)
		e.leave(l, false)
		caches[l] = cache{cur, a, h}
		cur = add(ar, cur, y)
	}
	var s T
	for _, v := range cur {
		s += v
	}
	loss := ar.round(ar.round(s) * scale)
	g := make([]T, len(cur))
	for i := range g {
		g[i] = ar.round(scale)
	}
	for l := m.layer - 1; l >= 0; l-- {
		e.enter(l, true)
		c := caches[l]
		dh, dw2, db2 := linearBack(ar, c.h, e.param(4*l+2), g, B, F, H, true, true, true)
		da := geluBack(ar, c.a, dh)
		dx, dw1, db1 := linearBack(ar, c.in, e.param(4*l), da, B, H, F, true, true, true)
		e.grad(4*l, dw1)
		e.grad(4*l+1, db1)
		e.grad(4*l+2, dw2)
		e.grad(4*l+3, db2)
		e.leave(l, true)
		g = add(ar, g, dx)
	}
	return loss
}

// ttForwardBackward is the tiny transformer: x0 = emb[tokens];
// x1 = x0 + Wo·attn(LN1(x0)) (causal, 2 heads, scores scaled by 1/√d_k);
// x2 = x1 + W2·gelu(W1·LN2(x1) + b1) + b2; logits = x2·W_vocab;
// loss = Σ cross-entropy(logits_t, token_{t+1}) over the batch.
// Weights are [in, out]. There is no final LayerNorm.
func ttForwardBackward[T num](m *model, ar arith[T], e paramEnv[T], b batch, scale T) T {
	const d, D1 = ttD, ttT + 1
	S := len(b.tokens) / D1
	R := S * ttT
	x0 := make([]T, R*d)
	for s := range S {
		for t := range ttT {
			tok := b.tokens[s*D1+t]
			for j := range d {
				x0[(s*ttT+t)*d+j] = T(m.emb[tok*d+j])
			}
		}
	}
	// Forward.
	e.enter(0, false)
	h1, xh1, rs1 := layerNorm(ar, x0, e.param(0), e.param(1), R, d)
	e.leave(0, false)
	e.enter(1, false)
	q := linear(ar, h1, e.param(2), nil, R, d, d, false)
	k := linear(ar, h1, e.param(3), nil, R, d, d, false)
	v := linear(ar, h1, e.param(4), nil, R, d, d, false)
	p, o := attention(ar, q, k, v, S)
	att := linear(ar, o, e.param(5), nil, R, d, d, false)
	e.leave(1, false)
	x1 := add(ar, x0, att)
	e.enter(2, false)
	h2, xh2, rs2 := layerNorm(ar, x1, e.param(6), e.param(7), R, d)
	e.leave(2, false)
	e.enter(3, false)
	a := linear(ar, h2, e.param(8), e.param(9), R, d, ttFFN, false)
	g := gelu(ar, a)
	f := linear(ar, g, e.param(10), e.param(11), R, ttFFN, d, false)
	e.leave(3, false)
	x2 := add(ar, x1, f)
	e.enter(4, false)
	logits := linear(ar, x2, e.param(12), nil, R, d, ttVocab, false)
	e.leave(4, false)
	// Loss and its gradient (softmax in float64 from the stored logits).
	var ls T
	dl := make([]T, len(logits))
	for r := range R {
		s, t := r/ttT, r%ttT
		target := b.tokens[s*D1+t+1]
		row := logits[r*ttVocab : (r+1)*ttVocab]
		mx := math.Inf(-1)
		for _, z := range row {
			mx = max(mx, float64(z))
		}
		var sum float64
		for _, z := range row {
			sum += math.Exp(float64(z) - mx)
		}
		ls += T(mx + math.Log(sum) - float64(row[target]))
		for j, z := range row {
			pj := math.Exp(float64(z)-mx) / sum
			if j == target {
				pj--
			}
			dl[r*ttVocab+j] = ar.round(T(float64(scale) * pj))
		}
	}
	loss := ar.round(ar.round(ls) * scale)
	// Backward.
	e.enter(4, true)
	dx2, dwv, _ := linearBack(ar, x2, e.param(12), dl, R, d, ttVocab, false, false, true)
	e.grad(12, dwv)
	e.leave(4, true)
	e.enter(3, true)
	dg, dw2, db2 := linearBack(ar, g, e.param(10), dx2, R, ttFFN, d, false, true, true)
	da := geluBack(ar, a, dg)
	dh2, dw1, db1 := linearBack(ar, h2, e.param(8), da, R, d, ttFFN, false, true, true)
	e.grad(8, dw1)
	e.grad(9, db1)
	e.grad(10, dw2)
	e.grad(11, db2)
	e.leave(3, true)
	e.enter(2, true)
	dx1ln, dg2, dbe2 := layerNormBack(ar, xh2, rs2, e.param(6), dh2, R, d, true)
	e.grad(6, dg2)
	e.grad(7, dbe2)
	e.leave(2, true)
	dx1 := add(ar, dx2, dx1ln)
	e.enter(1, true)
	do, dwo, _ := linearBack(ar, o, e.param(5), dx1, R, d, d, false, false, true)
	dq, dk, dv := attentionBack(ar, q, k, v, p, do, S)
	dhq, dwq, _ := linearBack(ar, h1, e.param(2), dq, R, d, d, false, false, true)
	dhk, dwk, _ := linearBack(ar, h1, e.param(3), dk, R, d, d, false, false, true)
	dhv, dwv2, _ := linearBack(ar, h1, e.param(4), dv, R, d, d, false, false, true)
	e.grad(2, dwq)
	e.grad(3, dwk)
	e.grad(4, dwv2)
	e.grad(5, dwo)
	e.leave(1, true)
	dh1 := add(ar, add(ar, dhq, dhk), dhv)
	e.enter(0, true)
	_, dg1, dbe1 := layerNormBack(ar, xh1, rs1, e.param(0), dh1, R, d, false)
	e.grad(0, dg1)
	e.grad(1, dbe1)
	e.leave(0, true)
	return loss
}

// attention computes causal multi-head attention for S sequences of ttT
// rows; it returns the probabilities p [S, heads, T, T] and the output
// [S·T, d].
func attention[T num](ar arith[T], q, k, v []T, S int) (p, o []T) {
	const d, n = ttD, ttT
	scl := 1 / math.Sqrt(ttDK)
	p = make([]T, S*ttHeads*n*n)
	o = make([]T, S*n*d)
	for s := range S {
		for h := range ttHeads {
			c0 := h * ttDK
			for t := range n {
				pr := p[((s*ttHeads+h)*n+t)*n:][:n]
				var sc [ttT]float64
				mx := math.Inf(-1)
				for u := 0; u <= t; u++ {
					var acc T
					for c := range ttDK {
						acc += T(q[(s*n+t)*d+c0+c] * k[(s*n+u)*d+c0+c])
					}
					sc[u] = float64(ar.round(T(float64(acc) * scl)))
					mx = max(mx, sc[u])
				}
				var sum float64
				for u := 0; u <= t; u++ {
					sum += math.Exp(sc[u] - mx)
				}
				for u := 0; u <= t; u++ {
					pr[u] = ar.round(T(math.Exp(sc[u]-mx) / sum))
				}
				for c := range ttDK {
					var acc T
					for u := 0; u <= t; u++ {
						acc += T(pr[u] * v[(s*n+u)*d+c0+c])
					}
					o[(s*n+t)*d+c0+c] = ar.round(acc)
				}
			}
		}
	}
	return p, o
}

// attentionBack returns dq, dk and dv of attention given do.
func attentionBack[T num](ar arith[T], q, k, v, p, do []T, S int) (dq, dk, dv []T) {
	const d, n = ttD, ttT
	scl := T(1 / math.Sqrt(ttDK))
	dq = make([]T, len(q))
	dk = make([]T, len(k))
	dv = make([]T, len(v))
	// Accumulate in T across all contributions, round once per element.
	for s := range S {
		for h := range ttHeads {
			c0 := h * ttDK
			for t := range n {
				pr := p[((s*ttHeads+h)*n+t)*n:][:n]
				var dp [ttT]T
				var dot T
				for u := 0; u <= t; u++ {
					var acc T
					for c := range ttDK {
						acc += T(do[(s*n+t)*d+c0+c] * v[(s*n+u)*d+c0+c])
						dv[(s*n+u)*d+c0+c] += T(pr[u] * do[(s*n+t)*d+c0+c])
					}
					dp[u] = acc
					dot += T(pr[u] * acc)
				}
				for u := 0; u <= t; u++ {
					ds := ar.round(T(T(pr[u]*(dp[u]-dot)) * scl))
					for c := range ttDK {
						dq[(s*n+t)*d+c0+c] += T(ds * k[(s*n+u)*d+c0+c])
						dk[(s*n+u)*d+c0+c] += T(ds * q[(s*n+t)*d+c0+c])
					}
				}
			}
		}
	}
	for _, x := range [][]T{dq, dk, dv} {
		for i := range x {
			x[i] = ar.round(x[i])
		}
	}
	return dq, dk, dv
}
