package zero

import (
	"errors"
	"fmt"
	"math"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// CalibrateEfficiency finds the compute efficiency
// (training.compute_efficiency: the fraction of cluster.peak_bf16 large
// matmuls reach) at which Replay gives a step of measured, and returns it;
// s is left as it was. The step time falls monotonically as the efficiency
// rises (compute times are FLOPs/(peak·efficiency) and communication does
// not depend on it), so a bisection over (0, 1] finds the one efficiency to
// within tol (relative). gonum has no scalar root finder (its optimize line
// searches need a gradient); the bisection is the whole method. It fails
// when even an efficiency of 1 is slower than measured (the communication
// or the optimizer alone exceeds the measurement, or the peak is too low).
func CalibrateEfficiency(s *scenarios.Scenario, measured units.Duration, tol float64) (float64, error) {
	return calibrateEfficiency(s, measured, tol, Options{})
}

// calibrateEfficiency is CalibrateEfficiency replaying with opt (its
// NoCollectives set).
func calibrateEfficiency(s *scenarios.Scenario, measured units.Duration, tol float64, opt Options) (float64, error) {
	return calibrate(s, measured, tol, "step", func(r *Result) units.Duration { return r.StepTime }, opt)
}

// calibrateComputeEfficiency is CalibrateEfficiency against the compute
// time of one step rather than the whole step: the time rank 0's compute
// stream is busy (forward, backward, optimizer, slowed where collectives
// overlap it: RankStats.Compute), which is what the compute kernels of a
// profiler trace of one step add up to. Exposed communication does not
// enter the fit.
func calibrateComputeEfficiency(s *scenarios.Scenario, measured units.Duration, tol float64) (float64, error) {
	return calibrate(s, measured, tol, "compute time", RankCompute, Options{})
}

// RankCompute is rank 0's compute time in r (RankStats.Compute), 0 when r
// has no ranks.
func RankCompute(r *Result) units.Duration {
	if len(r.Ranks) == 0 {
		return 0
	}
	return r.Ranks[0].Compute
}

// ComputeByKind is the nominal compute of one rank's step by task kind:
// forward, backward (recompute included) and optimizer, without the
// slowdown of overlapped collectives.
func ComputeByKind(r *Result) (fwd, bwd, opt units.Duration) {
	if r.Schedule == nil {
		return 0, 0, 0
	}
	for _, t := range r.Schedule.Tasks {
		switch t.Kind {
		case Forward:
			fwd += t.Dur
		case Backward:
			bwd += t.Dur
		case Optimizer:
			opt += t.Dur
		}
	}
	return fwd, bwd, opt
}

// MinEfficiency is the lowest efficiency a calibration searches: below
// it (one ten-thousandth of the peak) no GPU trains a model zerosim
// simulates, and a measurement that needs less is of another workload.
const MinEfficiency = scenarios.MinEfficiency

// UnreachableError is a calibration no efficiency in [MinEfficiency, 1]
// reproduces. Without Floor the measurement is shorter than the scenario
// at efficiency 1 (Best): the communication, the optimizer or the
// memory-bound work alone exceed it, or the peak is too low. With Floor it
// is longer than the scenario at MinEfficiency (Best): the measurement is
// of more work than the scenario's (another model, batch or GPU count).
type UnreachableError struct {
	What           string // "step" or "compute time"
	Best, Measured units.Duration
	Floor          bool
}

func (e *UnreachableError) Error() string {
	if e.Floor {
		return fmt.Sprintf("zero: calibrate: even at efficiency %g the %s takes %v, shorter than the measured %v (is the measurement of another workload? check the model, the batch and the GPUs)", MinEfficiency, e.What, e.Best, e.Measured)
	}
	return fmt.Sprintf("zero: calibrate: even at efficiency 1 the %s takes %v, longer than the measured %v (check the peak FLOPS, the links and the model)", e.What, e.Best, e.Measured)
}

// calibrate bisects the efficiency in (0, 1] until metric(Replay) is
// measured, replaying with opt and NoCollectives; metric must not rise
// with the efficiency.
func calibrate(s *scenarios.Scenario, measured units.Duration, tol float64, what string, metric func(*Result) units.Duration, opt Options) (float64, error) {
	if measured <= 0 {
		return 0, fmt.Errorf("zero: calibrate: the measured %s must be > 0 (got %v)", what, measured)
	}
	if tol <= 0 {
		tol = 1e-4
	}
	saved, savedMFU := s.Training.ComputeEfficiency, s.Training.MFU
	defer func() { s.Training.ComputeEfficiency, s.Training.MFU = saved, savedMFU }()
	s.Training.MFU = 0
	at := func(eff float64) (units.Duration, error) {
		s.Training.ComputeEfficiency = eff
		opt.NoCollectives = true
		res, err := Replay(s, opt)
		if err != nil {
			return 0, fmt.Errorf("zero: calibrate at efficiency %.4g: %w", eff, err)
		}
		return metric(res), nil
	}
	return bisectEfficiency(measured, tol, at, func(best units.Duration, floor bool) error {
		return &UnreachableError{What: what, Best: best, Measured: measured, Floor: floor}
	})
}

// bisectEfficiency bisects the efficiency in [MinEfficiency, 1] until
// at(efficiency) is target, to a relative width tol; at must not rise with
// the efficiency. When even at(1) exceeds target it returns
// unreachable(at(1), false); when even at(MinEfficiency) falls short of
// target, unreachable(at(MinEfficiency), true): no efficiency in the range
// reproduces target, and the bisection would stop at its floor with a
// calibration that does not reproduce the measurement.
func bisectEfficiency[T units.Duration | float64](target T, tol float64, at func(float64) (T, error), unreachable func(best T, floor bool) error) (float64, error) {
	best, err := at(1)
	if err != nil {
		return 0, err
	}
	if best > target {
		return 0, unreachable(best, false)
	}
	lo, hi, err := bisectFalling(MinEfficiency, 1, func(lo, hi float64) bool { return hi-lo > tol*hi }, target, at)
	if err != nil {
		return 0, err
	}
	// Only a bisection that never left its floor can have its answer
	// below it: the floor is replayed then, not on every calibration.
	if lo == MinEfficiency {
		worst, err := at(MinEfficiency)
		if err != nil {
			return 0, err
		}
		if worst < target {
			return 0, unreachable(worst, true)
		}
	}
	return (lo + hi) / 2, nil
}

// bisectFalling narrows [lo, hi] around the x at which at(x), which must
// not rise with x, is target, halving it while wide(lo, hi): above target
// the answer lies higher. The one bisection of both calibrations
// (bisectEfficiency's efficiency, CalibrateInterBandwidth's log bandwidth).
func bisectFalling[T units.Duration | float64](lo, hi float64, wide func(lo, hi float64) bool, target T, at func(float64) (T, error)) (float64, float64, error) {
	for wide(lo, hi) {
		mid := (lo + hi) / 2
		d, err := at(mid)
		if err != nil {
			return 0, 0, err
		}
		if d > target {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, hi, nil
}

// modelFLOPsPerToken is ModelFLOPsPerToken for a transformer scenario:
// its matmul parameters (matmulParams) and the attention of each block at
// its own width (modelAttentionWidth) over the full sequence; ok false for
// other models.
func modelFLOPsPerToken(s *scenarios.Scenario) (int64, bool, error) {
	base, ok := flopDims(s)
	if !ok {
		return 0, false, nil
	}
	width, err := modelAttentionWidth(s, base)
	if err != nil {
		return 0, false, err
	}
	per, err := ModelFLOPsPerToken(matmulParams(&s.Model), width, s.Model.SeqLen)
	return per, err == nil, err
}

// matmulParams is the N of the model FLOPs: the parameters a token goes
// through (a mixture of experts: its top-k routed experts), less the input
// embedding when the output layer is not tied to it — a lookup table, no
// matmul; tied, it is the output layer's weight and counts. So count
// torchtitan (get_dense_model_nparams_and_flops and
// get_moe_model_nparams_and_flops, torchtitan/models/utils.py at
// b5bcd76c66d0acb1a08b176d9639425bc55e0b2a: "nparams_for_matmul = nparams
// if enable_weight_tying else nparams - nparams_embedding"; its train.py
// has passed exclude_embedding=True since 0c6ca903ff60ee1555ef236b2a83f611aafdab94, "exclude embedding in
// MFU computation", among them at 9dec370ad26b5f8e9a7333a0e36165018262644b,
// the version of the validation suite's torchtitan rows) and llm-foundry
// (MPTForCausalLM.flops_per_batch, llmfoundry/models/mpt/modeling_mpt.py
// at 34c28fc9199278b10193e69fb52979043b7dc1bd: "embedding layers are
// lookup tables, therefore are not counted in the FLOP computation" unless
// tie_word_embeddings). Untied means a layer named lm_head with
// parameters; the embedding is the layer named embedding, learned positions
// included as torchtitan subtracts every parameter named embedding
// (llm-foundry subtracts wte alone; no untied model here has learned
// positions). A hand-written layer list that names its output layer
// otherwise counts its embedding as tied (docs/compute-model.md).
func matmulParams(m *scenarios.Model) int64 {
	n := m.ActiveParams()
	var embedding int64
	untied := false
	for _, l := range m.LayerList {
		switch l.Name {
		case "embedding":
			embedding += int64(l.Params)
		case "lm_head":
			untied = untied || l.Params > 0
		}
	}
	if untied {
		n -= embedding
	}
	return n
}

// modelAttentionWidth is ModelFLOPsPerToken's attnWidth for a transformer
// whose FLOPDims are base (flopDims): Σ over its blocks of heads·(q·k
// width + value width). A block without its own dims has the model's heads
// spanning the hidden size (2·hidden); an imported block counts the heads
// and head_dim the compute gives it (layerFLOPDims: its own or the
// model's, head_dim hidden/heads) and its value_head_dim (Gemma, Qwen3 and
// gpt-oss heads do not span the hidden size; DeepSeek's multi-head latent
// attention has q·k 192 and value 128 wide), and a linear-attention block
// (Qwen3-Next's Gated DeltaNet) counts none, as torchtitan counts only its
// full-attention layers (num_full_attn, get_moe_model_nparams_and_flops at
// b5bcd76c66d0acb1a08b176d9639425bc55e0b2a). Sliding-window and chunked blocks count the whole sequence, as
// torchtitan's gpt-oss does; run reports what their kernels execute beside
// it (Utilization.Executed).
func modelAttentionWidth(s *scenarios.Scenario, base FLOPDims) (int64, error) {
	var c flopCalc
	var width int64
	for _, l := range s.Model.LayerList {
		switch {
		case !l.Block || (l.Dims != nil && l.Dims.LinearAttention != ""):
		case l.Dims == nil:
			width = c.Add(width, c.Mul(2, s.Model.Hidden))
		default:
			d := layerFLOPDims(s, base, l)
			qk := d.HeadDim
			if qk <= 0 {
				qk = d.Hidden / d.Heads
			}
			v := qk
			if l.Dims.ValueHeadDim > 0 {
				v = l.Dims.ValueHeadDim
			}
			width = c.Add(width, c.Mul(d.Heads, c.Add(qk, v)))
		}
	}
	if c.Err != nil {
		return 0, fmt.Errorf("zero: attention width overflow: %w", c.Err)
	}
	return width, nil
}

// tokensPerGPU is the tokens one GPU processes per micro-step: its
// micro-batch of ceil(seq/cp) tokens per sequence.
func tokensPerGPU(s *scenarios.Scenario) int64 {
	return max(s.Training.MicroBatch, 1) * max(s.RankSeqLen(), 1)
}

// cpCopies is how many GPUs run each sample's whole work. Context
// parallelism splits a sequence over a replica's cp ranks; a model without
// one (seq_len 0: an MLP, a bare parameter count) has nothing to split, so
// each cp rank runs its whole micro-batch (tokensPerGPU, Costs) and a
// sample's work is done cp times. A sample is still trained once, so
// throughput, MFU and HFU count 1/cpCopies of each rank's work; the
// executed utilization (Utilization.Executed) counts what the rank runs.
func cpCopies(s *scenarios.Scenario) int64 {
	if s.RankSeqLen() > 0 {
		return 1
	}
	return int64(max(s.Parallelism.CP, 1))
}

// mfuStep is the step time at which a step reaches the model FLOPs
// utilization mfu: each GPU's tokens times ModelFLOPsPerToken over
// peak·mfu.
func mfuStep(s *scenarios.Scenario, mfu float64) (units.Duration, error) {
	per, ok, err := modelFLOPsPerToken(s)
	if err != nil {
		return 0, err
	}
	ga := int64(max(s.Training.GradAccum, 1))
	if !ok {
		// No per-token count: MFU is 3× the forward FLOPs the cost model
		// executes (utilization), so the target step is those over the
		// peak at mfu.
		costs, err := Costs(s)
		if err != nil {
			return 0, err
		}
		model, err := forwardModelFLOPs(costs, ga)
		if err != nil {
			return 0, err
		}
		if model == 0 {
			return 0, fmt.Errorf("zero: training.mfu: the model executes no FLOPs (use training.compute_efficiency)")
		}
		return mfuSeconds(float64(model)/float64(cpCopies(s))/(float64(s.Cluster.PeakBF16)*mfu), mfu)
	}
	secs := float64(tokensPerGPU(s)*ga) / float64(cpCopies(s)) * float64(per) / (float64(s.Cluster.PeakBF16) * mfu)
	return mfuSeconds(secs, mfu)
}

// mfuSeconds is mfuStep's secs as a duration, or an error at training.mfu:
// it said "1.9086992494786652e+29 s of compute is longer than
// 9223372.037s", no key and no fix (qa22 L13).
func mfuSeconds(secs, mfu float64) (units.Duration, error) {
	d, err := seconds(secs)
	if err != nil {
		return 0, &scenarios.Error{Path: "training.mfu", Msg: fmt.Sprintf("the step's compute at mfu %g takes %g s, longer than %v, the longest zerosim times (raise training.mfu, or lower training.micro_batch or model.seq_len)", mfu, secs, units.Duration(math.MaxInt64/2))}
	}
	return d, nil
}

// fitMFU sets s's compute efficiency so that the step reaches
// training.mfu, and clears the target.
func fitMFU(s *scenarios.Scenario) error {
	mfu := s.Training.MFU
	target, err := mfuStep(s, mfu)
	if err != nil {
		return err
	}
	eff, err := CalibrateEfficiency(s, target, 1e-5)
	var ue *UnreachableError
	if errors.As(err, &ue) && ue.Floor {
		return fmt.Errorf("zero: training.mfu %g cannot be reached: it needs a %s of %v, and even at compute efficiency %g it takes %v: use a higher training.mfu, or training.compute_efficiency", mfu, ue.What, ue.Measured, MinEfficiency, ue.Best)
	}
	if errors.As(err, &ue) {
		return fmt.Errorf("zero: training.mfu %g cannot be reached: it needs a %s of %v, and even at compute efficiency 1 it takes %v (communication, the optimizer or memory-bound work set it): use a lower training.mfu, or training.compute_efficiency", mfu, ue.What, ue.Measured, ue.Best)
	}
	if err != nil {
		return fmt.Errorf("zero: training.mfu %g cannot be reached: %w", mfu, err)
	}
	s.Training.ComputeEfficiency, s.Training.MFU = eff, 0
	return nil
}

// InterBandwidthTol is CalibrateInterBandwidth's default tol, the width
// in ln(bandwidth) at which its bisection stops. It returns the bracket's
// middle, within tol/2 of the crossing: the bandwidth to ±0.05 %. The
// exposed communication it explains scales at most as 1/bandwidth, so the
// step replayed there is within 0.05 % of the measured one: finer than
// the 0.1 % of a step given to four significant figures (steps are quoted
// to three or four: README's --step-time 10.5s, docs/calibration.md's
// 2.84s), so the bisection does not outrun the measurement. Reaching it
// from the range's ln(1000) takes ceil(log2(ln(1000)/1e-3)) = 13 replays
// beyond the two at the range's ends.
const InterBandwidthTol = 1e-3

// CalibrateInterBandwidth is the inter-node bandwidth per NIC
// (cluster.inter.bandwidth) at which s, at its own compute efficiency,
// replays in measured: the network that would explain a measured step
// the efficiency fit charges to the GEMMs (calibrate --step-time's
// low-efficiency warning, qatput29 finding 3). It bisects the bandwidth
// between a thousandth of s's and s's own on a log scale to a relative
// width tol (≤ 0: InterBandwidthTol); the step does not fall as the bandwidth falls. ok is false on
// one node, or when no bandwidth in that range gives measured: s is
// already slower at its own network, or even a thousandth of it leaves
// the step shorter (the network does not explain it).
func CalibrateInterBandwidth(s *scenarios.Scenario, measured units.Duration, tol float64) (bw units.Bandwidth, ok bool, err error) {
	own := s.Cluster.Inter.Bandwidth
	if s.Cluster.Nodes < 2 || own <= 0 || measured <= 0 {
		return 0, false, nil
	}
	if tol <= 0 {
		tol = InterBandwidthTol
	}
	defer func() { s.Cluster.Inter.Bandwidth = own }()
	at := func(f float64) (units.Duration, error) {
		s.Cluster.Inter.Bandwidth = max(units.Bandwidth(math.Round(float64(own)*f)), 1)
		res, err := Replay(s, Options{NoCollectives: true})
		if err != nil {
			return 0, fmt.Errorf("zero: calibrate the inter-node bandwidth at %v: %w", s.Cluster.Inter.Bandwidth, err)
		}
		return res.StepTime, nil
	}
	const floor = 1e-3
	hiStep, err := at(1)
	if err != nil || hiStep >= measured {
		return 0, false, err
	}
	loStep, err := at(floor)
	if err != nil || loStep < measured {
		return 0, false, err
	}
	lo, hi, err := bisectFalling(math.Log(floor), 0, func(lo, hi float64) bool { return hi-lo > tol }, measured,
		func(x float64) (units.Duration, error) { return at(math.Exp(x)) })
	if err != nil {
		return 0, false, err
	}
	return units.Bandwidth(math.Round(float64(own) * math.Exp((lo+hi)/2))), true, nil
}
