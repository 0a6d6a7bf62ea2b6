package numerics

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
)

// RefFormat is the format tag of PyTorch reference trajectories.
const RefFormat = "zerosim-reference/v1"

// ErrRefFormat is what CheckReference wraps for a file whose format is not
// RefFormat (JSON of another kind): the caller can say which file to give.
var ErrRefFormat = fmt.Errorf("want %q", RefFormat)

// Tolerances for zerosim's own bf16 forward/backward against PyTorch's
// (PyTorch's CPU kernels sum in their own order, so only bf16-level
// agreement is possible; see docs/numerics.md).
const (
	RefLossRelTol   = 0.01  // |loss − loss_ref| / |loss_ref|
	RefGradRelL2Tol = 0.02  // ‖g − g_ref‖₂ / ‖g_ref‖₂ per tensor
	RefGradCosMin   = 0.999 // cosine similarity per tensor
)

// RefCheck is one comparison made against a reference file. Exact checks
// count bit mismatches (Mismatches, First); tolerance checks report the
// measured Value against Limit.
type RefCheck struct {
	Name       string
	Exact      bool
	Compared   int
	Mismatches int
	// First describes the first mismatch of an exact check.
	First string
	// Value and Limit are the metric and its bound of a tolerance check
	// (a maximum, or a minimum for cosine checks).
	Value, Limit float64
	// Minimum marks a Limit that is a lower bound (cosine similarity).
	Minimum bool
	Pass    bool
}

// RefResult is the outcome of CheckReference.
type RefResult struct {
	Kind, Generator string
	Checks          []RefCheck
	Pass            bool
}

type refHyper struct {
	LR                   float64 `json:"lr"`
	Beta1                float64 `json:"beta1"`
	Beta2                float64 `json:"beta2"`
	Eps                  float64 `json:"eps"`
	WeightDecay          float64 `json:"weight_decay"`
	DecoupledWeightDecay bool    `json:"decoupled_weight_decay"`
}

func (h refHyper) hyper() Hyper {
	return Hyper{LR: h.LR, Beta1: h.Beta1, Beta2: h.Beta2, Eps: h.Eps, WeightDecay: h.WeightDecay, Decoupled: h.DecoupledWeightDecay}
}

type refFile struct {
	Format    string    `json:"format"`
	Kind      string    `json:"kind"`
	Generator string    `json:"generator"`
	Hyper     *refHyper `json:"hyper"`
	N         int       `json:"n"`
	Steps     int       `json:"steps"`
	// adam
	Param0F32   []uint32   `json:"param0_f32"`
	GradsF32    [][]uint32 `json:"grads_f32"`
	ParamF32    [][]uint32 `json:"param_f32"`
	ExpAvgF32   [][]uint32 `json:"exp_avg_f32"`
	ExpAvgSqF32 [][]uint32 `json:"exp_avg_sq_f32"`
	// bf16-round
	InputF32   []uint32 `json:"input_f32"`
	OutputBF16 []uint16 `json:"output_bf16"`
	// toy-mlp
	Model *struct {
		Hidden     int    `json:"hidden"`
		Layers     int    `json:"layers"`
		Activation string `json:"activation"`
		Residual   bool   `json:"residual"`
	} `json:"model"`
	Loss        string              `json:"loss"`
	Batch       int                 `json:"batch"`
	ParamNames  []string            `json:"param_names"`
	ParamShapes [][]int             `json:"param_shapes"`
	Params0     []json.RawMessage   `json:"params0_bf16"`
	Inputs      []json.RawMessage   `json:"inputs_bf16"`
	LossF32     []uint32            `json:"loss_f32"`
	Grads       [][]json.RawMessage `json:"grads_bf16"`
	ParamsBF16  [][]json.RawMessage `json:"params_bf16"`
}

// MaxReferenceSize bounds a reference file (the largest in testdata is
// 0.5 MB): an endless stream is an error once it passes the limit instead of
// filling memory.
const MaxReferenceSize = 64 << 20

// limitedReader reads at most n bytes of r, then fails with an error that
// names the limit (io.LimitReader would end the JSON with a bare EOF).
type limitedReader struct {
	r io.Reader
	n int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, fmt.Errorf("the file is larger than %d bytes (is it a reference file?)", int64(MaxReferenceSize))
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	k, err := l.r.Read(p)
	l.n -= int64(k)
	return k, err
}

// CheckReference reads one zerosim-reference/v1 file (kinds adam,
// bf16-round and toy-mlp) and checks zerosim's numerics against it: bit for
// bit where the operation order is defined, with RefLossRelTol,
// RefGradRelL2Tol and RefGradCosMin for zerosim's own forward/backward of
// the toy MLP. A malformed file is an error; a failed comparison is a
// RefResult with Pass false.
func CheckReference(r io.Reader) (*RefResult, error) {
	var f refFile
	dec := json.NewDecoder(&limitedReader{r: r, n: MaxReferenceSize})
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("numerics: reference: %w", err)
	}
	if f.Format != RefFormat {
		return nil, fmt.Errorf("numerics: reference: format %q: %w", f.Format, ErrRefFormat)
	}
	res := &RefResult{Kind: f.Kind, Generator: f.Generator}
	if f.Kind == "adam" || f.Kind == "toy-mlp" {
		if err := checkTorchAdam(f.Generator); err != nil {
			return nil, fmt.Errorf("numerics: reference %s: %w", f.Kind, err)
		}
	}
	var err error
	switch f.Kind {
	case "adam":
		err = checkAdamRef(&f, res)
	case "bf16-round":
		err = checkBF16Ref(&f, res)
	case "toy-mlp":
		err = checkToyRef(&f, res)
	default:
		err = fmt.Errorf("unknown kind %q (want adam, bf16-round or toy-mlp)", f.Kind)
	}
	if err != nil {
		return nil, fmt.Errorf("numerics: reference %s: %w", f.Kind, err)
	}
	res.Pass = true
	for _, c := range res.Checks {
		res.Pass = res.Pass && c.Pass
	}
	return res, nil
}

// torchVersion finds the torch version in a generator string as people
// write it: "torch 2.4.0", "PyTorch 2.4.0", "pytorch==2.3.1", "torch-2.1.0",
// "torch: 2.2", "torch/2.3.0+cu121", "Torch v2.1" (not torchvision's).
var torchVersion = regexp.MustCompile(`(?i)torch[^0-9a-z]{0,3}v?([0-9]+)\.([0-9]+)`)

// checkTorchAdam refuses a file made by a PyTorch whose Adam zerosim does
// not reproduce bit for bit. zerosim's AdamStep is the first-moment update
// exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1) of torch/optim/adam.py
// up to 2.0 (pytorch/pytorch at 005941ebcd15…, 1.13, where the shipped
// files come from). pytorch/pytorch PR #104796 ("[optim] use lerp whenever
// possible", merged 2023-07-11, so 2.1 on) made it exp_avg.lerp_(grad, 1 -
// beta1) (adam.py at dc80ccded5385cca3e777472d64cfe3d874fad89), and ATen's
// float32 lerp rounds one way in its vectorized CPU kernel (an explicit
// fmadd of weight·(end − self) + self) and possibly another in its scalar
// tail (self + weight·(end − self), fused or not as the compiler chose),
// by 1 ulp of exp_avg where they differ: without a real PyTorch ≥ 2.1 file
// to pin which one a given build uses, zerosim refuses such a file rather
// than pass or fail it on a guess. A generator that names no torch version
// is checked as 1.13–2.0.
func checkTorchAdam(generator string) error {
	m := torchVersion.FindStringSubmatch(generator)
	if m == nil {
		return nil
	}
	major, err1 := strconv.Atoi(m[1])
	minor, err2 := strconv.Atoi(m[2])
	if err1 != nil || err2 != nil || major < 2 || major == 2 && minor < 1 {
		return nil
	}
	return fmt.Errorf("generator %q: PyTorch %d.%d's Adam updates exp_avg with lerp_ (PyTorch ≥ 2.1, PR #104796), whose float32 rounding zerosim does not reproduce bit for bit: write the file with torch 1.13 or 2.0, whose exp_avg.mul_(beta1).add_(grad, alpha=1-beta1) it does",
		generator, major, minor)
}

func f32s(b []uint32) []float32 {
	v := make([]float32, len(b))
	for i, x := range b {
		v[i] = math.Float32frombits(x)
	}
	return v
}

// exact32 compares float32 values bit for bit.
func exact32(name string, got []float32, want []uint32) RefCheck {
	c := RefCheck{Name: name, Exact: true, Compared: len(want)}
	for i, w := range want {
		if g := math.Float32bits(got[i]); g != w {
			if c.Mismatches == 0 {
				c.First = fmt.Sprintf("element %d: got %#08x (%g), want %#08x (%g)", i, g, got[i], w, math.Float32frombits(w))
			}
			c.Mismatches++
		}
	}
	c.Pass = c.Mismatches == 0
	return c
}

func checkAdamRef(f *refFile, res *RefResult) error {
	if f.Hyper == nil {
		return errors.New("missing hyper")
	}
	h := f.Hyper.hyper()
	if err := h.Validate(); err != nil {
		return err
	}
	n := len(f.Param0F32)
	if n == 0 || (f.N != 0 && f.N != n) {
		return fmt.Errorf("param0_f32 has %d elements, n is %d", n, f.N)
	}
	steps := len(f.GradsF32)
	if len(f.ParamF32) != steps || len(f.ExpAvgF32) != steps || len(f.ExpAvgSqF32) != steps {
		return errors.New("grads, param, exp_avg and exp_avg_sq differ in step count")
	}
	p := f32s(f.Param0F32)
	m := make([]float32, n)
	v := make([]float32, n)
	for s := range steps {
		for _, a := range [][]uint32{f.GradsF32[s], f.ParamF32[s], f.ExpAvgF32[s], f.ExpAvgSqF32[s]} {
			if len(a) != n {
				return fmt.Errorf("step %d: an array has %d elements, want %d", s+1, len(a), n)
			}
		}
		AdamStep(h, s+1, p, f32s(f.GradsF32[s]), m, v)
		res.Checks = append(res.Checks,
			exact32(fmt.Sprintf("step %d param", s+1), p, f.ParamF32[s]),
			exact32(fmt.Sprintf("step %d exp_avg", s+1), m, f.ExpAvgF32[s]),
			exact32(fmt.Sprintf("step %d exp_avg_sq", s+1), v, f.ExpAvgSqF32[s]))
	}
	return nil
}

func checkBF16Ref(f *refFile, res *RefResult) error {
	if len(f.InputF32) != len(f.OutputBF16) || len(f.InputF32) == 0 {
		return fmt.Errorf("input_f32 has %d values, output_bf16 %d", len(f.InputF32), len(f.OutputBF16))
	}
	c := RefCheck{Name: "bf16 round-to-nearest-even", Exact: true, Compared: len(f.InputF32)}
	for i, in := range f.InputF32 {
		x := math.Float32frombits(in)
		got, want := ToBF16(x), BF16(f.OutputBF16[i])
		ok := got == want
		if math.IsNaN(float64(x)) {
			ok = got.IsNaN() && want.IsNaN()
		}
		if !ok {
			if c.Mismatches == 0 {
				c.First = fmt.Sprintf("element %d: input %#08x: got %#04x, want %#04x", i, in, uint16(got), uint16(want))
			}
			c.Mismatches++
		}
	}
	c.Pass = c.Mismatches == 0
	res.Checks = append(res.Checks, c)
	return nil
}

// flattenBF16 decodes a nested JSON array of uint16 bit patterns (any depth)
// into a flat row-major slice of values.
func flattenBF16(raw json.RawMessage) ([]float32, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	var out []float32
	var walk func(any) error
	walk = func(x any) error {
		switch t := x.(type) {
		case []any:
			for _, e := range t {
				if err := walk(e); err != nil {
					return err
				}
			}
		case float64:
			if t < 0 || t > 0xffff || t != math.Trunc(t) {
				return fmt.Errorf("%v is not a bf16 bit pattern", t)
			}
			out = append(out, BF16(t).Float32())
		default:
			return fmt.Errorf("unexpected JSON value %v", x)
		}
		return nil
	}
	return out, walk(v)
}

func flattenAll(raws []json.RawMessage, sizes []int64, what string) ([][]float32, error) {
	if len(raws) != len(sizes) {
		return nil, fmt.Errorf("%s: %d tensors, want %d", what, len(raws), len(sizes))
	}
	out := make([][]float32, len(raws))
	for k, r := range raws {
		v, err := flattenBF16(r)
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", what, k, err)
		}
		if int64(len(v)) != sizes[k] {
			return nil, fmt.Errorf("%s[%d]: %d elements, want %d", what, k, len(v), sizes[k])
		}
		out[k] = v
	}
	return out, nil
}

// denseEnv serves parameters from dense per-tensor slices and collects
// gradients (no sharding).
type denseEnv[T num] struct {
	p, g [][]T
}

func (e *denseEnv[T]) enter(int, bool)   {}
func (e *denseEnv[T]) leave(int, bool)   {}
func (e *denseEnv[T]) param(k int) []T   { return e.p[k] }
func (e *denseEnv[T]) grad(k int, g []T) { e.g[k] = g }

func newDenseEnv[T num](p [][]T) *denseEnv[T] {
	return &denseEnv[T]{p: p, g: make([][]T, len(p))}
}

func checkToyRef(f *refFile, res *RefResult) error {
	if f.Model == nil || f.Hyper == nil {
		return errors.New("missing model or hyper")
	}
	if f.Model.Activation != "gelu-erf" || !f.Model.Residual {
		return fmt.Errorf("model %+v: only the residual GELU(erf) MLP is supported", *f.Model)
	}
	m, err := newModel(ResidualMLP, f.Model.Hidden, f.Model.Layers)
	if err != nil {
		return err
	}
	h := f.Hyper.hyper()
	if err := h.Validate(); err != nil {
		return err
	}
	sizes := make([]int64, len(m.params))
	for k, p := range m.params {
		sizes[k] = p.Numel
		if k >= len(f.ParamNames) || f.ParamNames[k] != p.Name {
			return fmt.Errorf("param_names: want %q at %d", p.Name, k)
		}
	}
	p0, err := flattenAll(f.Params0, sizes, "params0_bf16")
	if err != nil {
		return err
	}
	steps := len(f.Inputs)
	if len(f.LossF32) != steps || len(f.Grads) != steps || len(f.ParamsBF16) != steps {
		return errors.New("inputs, loss, grads and params differ in step count")
	}
	// Flat master over all tensors (Adam is elementwise, so one vector is
	// the same as PyTorch's per-tensor loop).
	var master []float32
	for _, v := range p0 {
		master = append(master, v...)
	}
	mom := make([]float32, len(master))
	vel := make([]float32, len(master))
	prev := p0
	for s := range steps {
		in, err := flattenBF16(f.Inputs[s])
		if err != nil || len(in) == 0 || len(in)%m.hidden != 0 {
			return fmt.Errorf("inputs_bf16[%d]: bad shape (%v)", s, err)
		}
		grads, err := flattenAll(f.Grads[s], sizes, fmt.Sprintf("grads_bf16[%d]", s))
		if err != nil {
			return err
		}
		want, err := flattenAll(f.ParamsBF16[s], sizes, fmt.Sprintf("params_bf16[%d]", s))
		if err != nil {
			return err
		}
		// (a) PyTorch's gradients through zerosim's precision path.
		var g []float32
		for _, v := range grads {
			g = append(g, v...)
		}
		AdamStep(h, s+1, master, g, mom, vel)
		c := RefCheck{Name: fmt.Sprintf("step %d params (PyTorch grads → Adam → bf16)", s+1), Exact: true, Compared: len(master)}
		off := 0
		for k, w := range want {
			for i, wv := range w {
				if got := RoundBF16(master[off+i]); math.Float32bits(got) != math.Float32bits(wv) {
					if c.Mismatches == 0 {
						c.First = fmt.Sprintf("%s[%d]: got %#04x, want %#04x", m.params[k].Name, i, uint16(ToBF16(got)), uint16(ToBF16(wv)))
					}
					c.Mismatches++
				}
			}
			off += len(w)
		}
		c.Pass = c.Mismatches == 0
		res.Checks = append(res.Checks, c)
		// (b) zerosim's own forward/backward from PyTorch's previous params.
		env := newDenseEnv(prev)
		loss := forwardBackward(m, bf16Arith(), env, batch{x: in}, 1)
		wl := math.Float32frombits(f.LossF32[s])
		rel := math.Abs(float64(loss)-float64(wl)) / math.Abs(float64(wl))
		res.Checks = append(res.Checks, RefCheck{Name: fmt.Sprintf("step %d loss rel. error", s+1), Compared: 1,
			Value: rel, Limit: RefLossRelTol, Pass: rel <= RefLossRelTol})
		for k, gr := range grads {
			l2, cos := relL2Cos(env.g[k], gr)
			name := fmt.Sprintf("step %d %s grad", s+1, m.params[k].Name)
			res.Checks = append(res.Checks,
				RefCheck{Name: name + " rel. L2", Compared: len(gr), Value: l2, Limit: RefGradRelL2Tol, Pass: l2 <= RefGradRelL2Tol},
				RefCheck{Name: name + " cosine", Compared: len(gr), Value: cos, Limit: RefGradCosMin, Minimum: true, Pass: cos >= RefGradCosMin})
		}
		prev = want
	}
	return nil
}

// relL2Cos returns ‖a − b‖/‖b‖ and the cosine similarity of a and b.
func relL2Cos(a, b []float32) (rel, cos float64) {
	var d2, b2, a2, ab float64
	for i := range b {
		x, y := float64(a[i]), float64(b[i])
		d2 += float64((x - y) * (x - y))
		b2 += float64(y * y)
		a2 += float64(x * x)
		ab += float64(x * y)
	}
	if b2 == 0 {
		if d2 == 0 {
			return 0, 1
		}
		return math.Inf(1), 0
	}
	if a2 == 0 {
		return math.Sqrt(d2 / b2), 0
	}
	return math.Sqrt(d2 / b2), ab / math.Sqrt(a2*b2)
}
