package memory

import (
	"errors"
	"fmt"
	"math"
	"math/big"

	"github.com/zerosim/zerosim/units"
)

// DeepSpeed's offload columns: the rows that
// estimate_zero2_model_states_mem_needs_all_cold and
// estimate_zero3_model_states_mem_needs_all_cold print ("per CPU | per GPU |
// Options"), computed the way the Python computes them.
//
// Source: deepspeedai/DeepSpeed at commit
// edaa7221267243c7be7fb49c5d5f5c4fb97b4641,
//   - deepspeed/runtime/zero/stage_1_and_2.py:3081-3098
//     estimate_zero2_model_states_mem_needs, :3137-3182 its _all_cold
//     printer (cpu_offload in [True, False]);
//   - deepspeed/runtime/zero/stage3.py:3744-3780
//     estimate_zero3_model_states_mem_needs, :3827-3890 its _all_cold
//     printer (cpu_offload in [True, False] × cpu_offload_params in
//     [True, False], skipping params offload without optimizer offload, ×
//     zero_init in [True, False]: six rows).
//
// "per CPU" is the host RAM of one node (the figure multiplies by
// num_gpus_per_node or divides by num_nodes); "per GPU" is one GPU's memory.
// The arithmetic is Python's: integer products are exact, an int times a
// float converts the int to the nearest double first, / between ints is true
// division rounded once, and int() truncates toward zero. Go's float64
// operations round the same way (IEEE 754 round-to-nearest-even), and every
// product below is a separate statement, so nothing is fused.

// DeepSpeedBufferFactor is additional_buffer_factor's default, 1.5
// (stage_1_and_2.py:3085, stage3.py:3751).
const DeepSpeedBufferFactor = 1.5

// DeepSpeedOffloadRow is one printed row of an _all_cold helper.
type DeepSpeedOffloadRow struct {
	// Stage is 2 (the zero2 helper, also used for stage 1) or 3.
	Stage int
	// OffloadOptimizer is cpu_offload (offload_optimizer=cpu);
	// OffloadParams is cpu_offload_params (offload_param=cpu, stage 3
	// only); ZeroInit is zero_init (stage 3 only; the zero2 helper has no
	// such option and prints none).
	OffloadOptimizer bool
	OffloadParams    bool
	ZeroInit         bool
	// HostPerNode is cpu_mem: the node's host RAM in bytes ("per CPU").
	HostPerNode int64
	// GPU is gpu_mem: one GPU's memory in bytes ("per GPU").
	GPU int64
	// StartupPeak is set when the host figure is the start-up peak (every
	// rank of the node materialising fp32 weights before partitioning), not
	// the steady-state host memory of training; HostNote says which term.
	StartupPeak bool
	HostNote    string
}

// Options renders the row's options the way the _all_cold helper prints
// them (stage_1_and_2.py:3158-3162, stage3.py:3855-3864), e.g.
// "offload_param=cpu , offload_optimizer=cpu , zero_init=1".
func (r DeepSpeedOffloadRow) Options() string {
	dev := func(on bool) string {
		if on {
			return "cpu " // f'{OffloadDeviceEnum.cpu:4}' pads "cpu" to four columns
		}
		return "none"
	}
	if r.Stage == 3 {
		zi := 0
		if r.ZeroInit {
			zi = 1
		}
		return fmt.Sprintf("offload_param=%s, offload_optimizer=%s, zero_init=%d", dev(r.OffloadParams), dev(r.OffloadOptimizer), zi)
	}
	return "offload_optimizer=" + dev(r.OffloadOptimizer)
}

// pyNum is a Python number: an exact int or a float.
type pyNum struct {
	isFloat bool
	i       int64
	f       float64
}

func pyInt(i int64) pyNum { return pyNum{i: i} }

func (a pyNum) float() float64 {
	if a.isFloat {
		return a.f
	}
	return float64(a.i) // Go rounds int→float to nearest even, as Python's float(int)
}

// pyCalc evaluates Python arithmetic on ints and floats, recording the first
// error (int overflow beyond int64, a non-finite float).
type pyCalc struct{ err error }

func (c *pyCalc) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

// mul is Python's a * b.
func (c *pyCalc) mul(a, b pyNum) pyNum {
	if !a.isFloat && !b.isFloat {
		v, err := units.Mul(a.i, b.i)
		if err != nil {
			c.fail(err)
		}
		return pyInt(v)
	}
	f := a.float() * b.float()
	if math.IsInf(f, 0) || math.IsNaN(f) {
		c.fail(errors.New("float product is not finite"))
	}
	return pyNum{isFloat: true, f: f}
}

// trueDiv is Python's a / b for ints: the exact quotient rounded once to
// the nearest double.
func (c *pyCalc) trueDiv(a, b int64) pyNum {
	if b == 0 {
		c.fail(errors.New("division by zero"))
		return pyNum{isFloat: true}
	}
	f, _ := new(big.Rat).SetFrac(big.NewInt(a), big.NewInt(b)).Float64()
	return pyNum{isFloat: true, f: f}
}

// max is Python's max(a, b): the first argument unless the second is
// strictly greater (Python compares int and float exactly).
func (c *pyCalc) max(a, b pyNum) pyNum {
	if pyLess(a, b) {
		return b
	}
	return a
}

func pyLess(a, b pyNum) bool {
	if !a.isFloat && !b.isFloat {
		return a.i < b.i
	}
	x, y := new(big.Float).SetPrec(0), new(big.Float).SetPrec(0)
	if a.isFloat {
		x.SetFloat64(a.f)
	} else {
		x.SetInt64(a.i)
	}
	if b.isFloat {
		y.SetFloat64(b.f)
	} else {
		y.SetInt64(b.i)
	}
	return x.Cmp(y) < 0
}

// int is Python's int(x): truncation toward zero.
func (c *pyCalc) int(x pyNum) int64 {
	if !x.isFloat {
		return x.i
	}
	t := math.Trunc(x.f)
	if t >= math.MaxInt64 || t < math.MinInt64 || math.IsNaN(t) {
		c.fail(fmt.Errorf("%g does not fit in 64 bits", x.f))
		return 0
	}
	return int64(t)
}

func (c *pyCalc) add(a, b int64) int64 {
	v, err := units.Add(a, b)
	if err != nil {
		c.fail(err)
	}
	return v
}

func checkDeepSpeedArgs(totalParams, largest int64, gpusPerNode, nodes int, factor float64) error {
	if totalParams < 0 || largest < 0 || gpusPerNode < 1 || nodes < 1 {
		return fmt.Errorf("params %d, largest layer %d, %d GPUs per node, %d nodes: need params ≥ 0 and at least one GPU and node", totalParams, largest, gpusPerNode, nodes)
	}
	if !(factor > 0) || math.IsInf(factor, 0) {
		return fmt.Errorf("additional_buffer_factor %g: need a finite value > 0", factor)
	}
	return nil
}

// DeepSpeedZero2Offload returns the two rows of
// estimate_zero2_model_states_mem_needs_all_cold (offload_optimizer=cpu,
// then none) for totalParams on nodes × gpusPerNode GPUs:
//
//	total_gpus = num_nodes * num_gpus_per_node
//	if cpu_offload:
//	    gpu_mem = 2 * total_params
//	    cpu_mem = total_params * max(4 * total_gpus, 16) * additional_buffer_factor
//	else:
//	    gpu_mem = 2 * total_params + int(18 * total_params / total_gpus)
//	    cpu_mem = total_params * 4 * num_gpus_per_node * additional_buffer_factor
//	return int(cpu_mem), int(gpu_mem)
//
// (stage_1_and_2.py:3087-3098 at edaa722).
func DeepSpeedZero2Offload(totalParams int64, gpusPerNode, nodes int, factor float64) ([]DeepSpeedOffloadRow, error) {
	if err := checkDeepSpeedArgs(totalParams, 0, gpusPerNode, nodes, factor); err != nil {
		return nil, fmt.Errorf("deepspeed zero2: %w", err)
	}
	var c pyCalc
	P, gpn, abf := pyInt(totalParams), pyInt(int64(gpusPerNode)), pyNum{isFloat: true, f: factor}
	G := c.mul(pyInt(int64(nodes)), gpn)
	var rows []DeepSpeedOffloadRow
	for _, off := range []bool{true, false} {
		r := DeepSpeedOffloadRow{Stage: 2, OffloadOptimizer: off}
		if off {
			r.GPU = c.int(c.mul(pyInt(2), P))
			m := c.max(c.mul(pyInt(4), G), pyInt(16))
			r.HostPerNode = c.int(c.mul(c.mul(P, m), abf))
			if m.i > 16 {
				r.StartupPeak = true
				r.HostNote = fmt.Sprintf("start-up peak: fp32 model × %d GPUs of the cluster (total_gpus, not per node)", G.i)
			} else {
				r.HostNote = "steady state: 16 B/param offloaded states, not divided by nodes"
			}
		} else {
			q := c.int(c.trueDiv(c.mul(pyInt(18), P).i, G.i))
			r.GPU = c.add(c.mul(pyInt(2), P).i, q)
			r.HostPerNode = c.int(c.mul(c.mul(c.mul(P, pyInt(4)), gpn), abf))
			r.StartupPeak = true
			r.HostNote = fmt.Sprintf("start-up peak: fp32 model × %d ranks of the node", gpusPerNode)
		}
		rows = append(rows, r)
	}
	if c.err != nil {
		return nil, fmt.Errorf("deepspeed zero2 offload: %w", c.err)
	}
	return rows, nil
}

// DeepSpeedZero3Offload returns the six rows of
// estimate_zero3_model_states_mem_needs_all_cold in its print order, for
// totalParams with largest layer largest on nodes × gpusPerNode GPUs
// (stage3.py:3754-3780 at edaa722):
//
//	total_gpus = num_nodes * num_gpus_per_node
//	gpus_factor = 1 / num_nodes
//	largest_layer_memory = (4 * largest_layer_params)
//	if cpu_offload:
//	    if cpu_offload_params:
//	        gpu_mem = largest_layer_memory
//	        if zero_init: cpu_mem = total_params * 18 * gpus_factor * additional_buffer_factor
//	        else: cpu_mem = total_params * max(4 * num_gpus_per_node, 18 * gpus_factor) * additional_buffer_factor
//	    else:
//	        gpu_mem = largest_layer_memory + int(2 * total_params / total_gpus)
//	        if zero_init: cpu_mem = total_params * 16 * gpus_factor * additional_buffer_factor
//	        else: cpu_mem = total_params * max(4 * num_gpus_per_node, 16 * gpus_factor) * additional_buffer_factor
//	else:
//	    gpu_mem = largest_layer_memory + int(18 * total_params / total_gpus)
//	    if zero_init: cpu_mem = largest_layer_params * 4 * num_gpus_per_node * additional_buffer_factor
//	    else: cpu_mem = total_params * 4 * num_gpus_per_node * additional_buffer_factor
func DeepSpeedZero3Offload(totalParams, largest int64, gpusPerNode, nodes int, factor float64) ([]DeepSpeedOffloadRow, error) {
	if err := checkDeepSpeedArgs(totalParams, largest, gpusPerNode, nodes, factor); err != nil {
		return nil, fmt.Errorf("deepspeed zero3: %w", err)
	}
	var c pyCalc
	P, L, gpn, abf := pyInt(totalParams), pyInt(largest), pyInt(int64(gpusPerNode)), pyNum{isFloat: true, f: factor}
	G := c.mul(pyInt(int64(nodes)), gpn)
	gf := c.trueDiv(1, int64(nodes))
	llm := c.mul(pyInt(4), L)
	var rows []DeepSpeedOffloadRow
	for _, off := range []bool{true, false} {
		for _, offParams := range []bool{true, false} {
			if !off && offParams {
				continue // stage3.py:3872-3873
			}
			for _, zi := range []bool{true, false} {
				r := DeepSpeedOffloadRow{Stage: 3, OffloadOptimizer: off, OffloadParams: offParams, ZeroInit: zi}
				switch {
				case off:
					per := int64(16) // fp32 params, grads, Adam m, v offloaded
					r.GPU = c.int(llm)
					if offParams {
						per = 18 // + the 16-bit params
					} else {
						r.GPU = c.add(r.GPU, c.int(c.trueDiv(c.mul(pyInt(2), P).i, G.i)))
					}
					share := c.mul(pyInt(per), gf)
					var m pyNum
					if zi {
						r.HostPerNode = c.int(c.mul(c.mul(c.mul(P, pyInt(per)), gf), abf))
						r.HostNote = fmt.Sprintf("steady state: %d B/param ÷ %d nodes", per, nodes)
					} else {
						m = c.max(c.mul(pyInt(4), gpn), share)
						r.HostPerNode = c.int(c.mul(c.mul(P, m), abf))
						if !m.isFloat {
							r.StartupPeak = true
							r.HostNote = fmt.Sprintf("start-up peak: fp32 model × %d ranks of the node (no zero_init)", gpusPerNode)
						} else {
							r.HostNote = fmt.Sprintf("steady state: %d B/param ÷ %d nodes (above the start-up fp32 model × %d ranks)", per, nodes, gpusPerNode)
						}
					}
				default:
					r.GPU = c.add(c.int(llm), c.int(c.trueDiv(c.mul(pyInt(18), P).i, G.i)))
					r.StartupPeak = true
					if zi {
						r.HostPerNode = c.int(c.mul(c.mul(c.mul(L, pyInt(4)), gpn), abf))
						r.HostNote = fmt.Sprintf("start-up peak: largest fp32 layer × %d ranks of the node (zero_init)", gpusPerNode)
					} else {
						r.HostPerNode = c.int(c.mul(c.mul(c.mul(P, pyInt(4)), gpn), abf))
						r.HostNote = fmt.Sprintf("start-up peak: fp32 model × %d ranks of the node", gpusPerNode)
					}
				}
				rows = append(rows, r)
			}
		}
	}
	if c.err != nil {
		return nil, fmt.Errorf("deepspeed zero3 offload: %w", c.err)
	}
	return rows, nil
}

// pyIntTrueDiv is Python's int(a * b / c) for ints a, b ≥ 0, c > 0: the
// exact product, its true quotient rounded once to a double, truncated.
func pyIntTrueDiv(a, b, c int64) (int64, error) {
	if a < 0 || b < 0 || c <= 0 {
		return 0, fmt.Errorf("int(%d * %d / %d): need a, b ≥ 0 and c > 0", a, b, c)
	}
	var p pyCalc
	v := p.int(p.trueDiv(p.mul(pyInt(a), pyInt(b)).i, c))
	return v, p.err
}
