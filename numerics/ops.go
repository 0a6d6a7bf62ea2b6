package numerics

import "math"

// num is the arithmetic type of a forward/backward pass: float32 for the
// bf16 model (fp32 accumulation, every tensor rounded to bf16 when an
// operation writes it) and float64 for the unrounded reference used by the
// gradient checks.
type num interface{ ~float32 | ~float64 }

// arith carries the storage rounding applied to every tensor an operation
// writes: bf16 rounding for the bf16 model, the identity for float64.
type arith[T num] struct{ round func(T) T }

func bf16Arith() arith[float32] { return arith[float32]{round: RoundBF16} }

func f64Arith() arith[float64] { return arith[float64]{round: func(x float64) float64 { return x }} }

// wIndex returns the index of weight element (out o, in i) in a weight
// stored [out, in] (PyTorch nn.Linear) or [in, out] (x @ W).
func wIndex(outIn bool, o, i, in, out int) int {
	if outIn {
		return o*in + i
	}
	return i*out + o
}

// linear computes y[r, o] = Σ_i x[r, i]·W[o, i] + bias[o] over rows r, with
// the sum accumulated in T in increasing i, the bias added last and one
// rounding to storage. bias may be nil.
func linear[T num](ar arith[T], x, w, bias []T, rows, in, out int, outIn bool) []T {
	y := make([]T, rows*out)
	for r := range rows {
		xr := x[r*in : (r+1)*in]
		for o := range out {
			var acc T
			for i := range in {
				acc += T(xr[i] * w[wIndex(outIn, o, i, in, out)])
			}
			if bias != nil {
				acc += bias[o]
			}
			y[r*out+o] = ar.round(acc)
		}
	}
	return y
}

// linearBack returns dx = dy·W, dW = Σ_r dy[r]ᵀx[r] (in W's own layout) and,
// when withBias, db = Σ_r dy[r]; each sum is accumulated in T and rounded
// once. dx is nil when needX is false.
func linearBack[T num](ar arith[T], x, w, dy []T, rows, in, out int, outIn, withBias, needX bool) (dx, dw, db []T) {
	dw = make([]T, in*out)
	for o := range out {
		for i := range in {
			var acc T
			for r := range rows {
				acc += T(dy[r*out+o] * x[r*in+i])
			}
			dw[wIndex(outIn, o, i, in, out)] = ar.round(acc)
		}
	}
	if withBias {
		db = make([]T, out)
		for o := range out {
			var acc T
			for r := range rows {
				acc += dy[r*out+o]
			}
			db[o] = ar.round(acc)
		}
	}
	if needX {
		dx = make([]T, rows*in)
		for r := range rows {
			for i := range in {
				var acc T
				for o := range out {
					acc += T(dy[r*out+o] * w[wIndex(outIn, o, i, in, out)])
				}
				dx[r*in+i] = ar.round(acc)
			}
		}
	}
	return dx, dw, db
}

// gelu is GELU with erf, evaluated in float64 and rounded to storage.
func gelu[T num](ar arith[T], a []T) []T {
	h := make([]T, len(a))
	for i, v := range a {
		x := float64(v)
		h[i] = ar.round(T(0.5 * x * (1 + math.Erf(x/math.Sqrt2))))
	}
	return h
}

// geluBack returns dh·gelu'(a), gelu'(x) = Φ(x) + x·φ(x).
func geluBack[T num](ar arith[T], a, dh []T) []T {
	da := make([]T, len(a))
	for i, v := range a {
		x := float64(v)
		d := float64(0.5*(1+math.Erf(x/math.Sqrt2))) + float64(x*math.Exp(-x*x/2)/math.Sqrt(2*math.Pi))
		da[i] = ar.round(T(float64(dh[i]) * d))
	}
	return da
}

// add returns a + b elementwise, rounded to storage.
func add[T num](ar arith[T], a, b []T) []T {
	y := make([]T, len(a))
	for i := range a {
		y[i] = ar.round(a[i] + b[i])
	}
	return y
}

// lnEps is LayerNorm's epsilon, PyTorch's default (LayerNorm.__init__'s
// eps: float = 1e-5, torch/nn/modules/normalization.py at pytorch/pytorch
// f3eef90335dca1b8b1d58e9df340629a5ad2ee1f).
const lnEps = 1e-5

// layerNorm normalises each row of x (width d) and applies gamma and beta;
// statistics are computed in T and only the output is rounded to storage.
// It returns y and, for the backward pass, xhat and 1/σ per row.
func layerNorm[T num](ar arith[T], x, gamma, beta []T, rows, d int) (y, xhat, rstd []T) {
	y = make([]T, rows*d)
	xhat = make([]T, rows*d)
	rstd = make([]T, rows)
	for r := range rows {
		xr := x[r*d : (r+1)*d]
		var mu T
		for _, v := range xr {
			mu += v
		}
		mu /= T(d)
		var vr T
		for _, v := range xr {
			vr += T((v - mu) * (v - mu))
		}
		vr /= T(d)
		rs := T(1 / math.Sqrt(float64(vr)+lnEps))
		rstd[r] = rs
		for j, v := range xr {
			xh := T((v - mu) * rs)
			xhat[r*d+j] = xh
			y[r*d+j] = ar.round(T(xh*gamma[j]) + beta[j])
		}
	}
	return y, xhat, rstd
}

// layerNormBack returns dgamma, dbeta and (when needX) dx of layerNorm.
func layerNormBack[T num](ar arith[T], xhat, rstd, gamma, dy []T, rows, d int, needX bool) (dx, dgamma, dbeta []T) {
	dgamma = make([]T, d)
	dbeta = make([]T, d)
	for j := range d {
		var ag, ab T
		for r := range rows {
			ag += T(dy[r*d+j] * xhat[r*d+j])
			ab += dy[r*d+j]
		}
		dgamma[j] = ar.round(ag)
		dbeta[j] = ar.round(ab)
	}
	if !needX {
		return nil, dgamma, dbeta
	}
	dx = make([]T, rows*d)
	dxh := make([]T, d)
	for r := range rows {
		var m1, m2 T
		for j := range d {
			dxh[j] = T(dy[r*d+j] * gamma[j])
			m1 += dxh[j]
			m2 += T(dxh[j] * xhat[r*d+j])
		}
		m1 /= T(d)
		m2 /= T(d)
		for j := range d {
			dx[r*d+j] = ar.round(T(rstd[r] * T(dxh[j]-m1-T(xhat[r*d+j]*m2))))
		}
	}
	return dx, dgamma, dbeta
}
