package sweep

import (
	"errors"
	"fmt"
	"github.com/zerosim/zerosim/topology"
	"slices"
	"strings"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/zero"
)

// Source is a scenario file's bytes and the overrides every run applies
// before its own.
type Source struct {
	// File names the input in error messages.
	File string
	Data []byte
	// Sets are applied first ("key.path=value", as --set).
	Sets []string
}

// Load loads the source with its sets, then extra, and refuses, at its
// key, an NCCL pin that leaves a collective of the step no algorithm
// (zero.CheckPins), as the commands' own loads do.
func (src Source) Load(extra ...string) (*scenarios.Scenario, error) {
	s, err := src.LoadUnpinned(extra...)
	if err != nil {
		return nil, err
	}
	if err := src.checkPins(s, extra...); err != nil {
		return nil, err
	}
	return s, nil
}

// LoadUnpinned is Load without the pin check: a plan's base scenario,
// whose own stage may leave a pinned collective no algorithm where the
// stages the plan searches run (rev24: plan --set
// communication.nccl_algo=NVLS,Tree --stages 0 over a stage-1 file was
// refused, though stage 0 only all-reduces, which Tree runs).
func (src Source) LoadUnpinned(extra ...string) (*scenarios.Scenario, error) {
	sets := append(append([]string(nil), src.Sets...), extra...)
	return scenarios.Load(src.File, src.Data, sets)
}

// checkPins is zero.CheckPins on s, the source loaded with extra, its
// error at the key it names.
func (src Source) checkPins(s *scenarios.Scenario, extra ...string) error {
	if err := zero.CheckPins(s); err != nil {
		return scenarios.Place(src.File, src.Data, append(append([]string(nil), src.Sets...), extra...), err)
	}
	return nil
}

// PinError reports whether err is the loader's or zero.CheckPins's
// refusal of communication.algorithm, nccl_algo or nccl_proto: NCCL has no
// algorithm for a collective of the step. Which points it refuses depends
// on the other keys (the cluster, the stage), so a sweep or a plan refuses
// it only where it refuses every point.
func PinError(err error) bool {
	var e *scenarios.Error
	return errors.As(err, &e) && slices.Contains([]string{"communication.algorithm", "communication.nccl_algo", "communication.nccl_proto"}, e.Path)
}

// Row is the outcome of one point.
type Row struct {
	Index  int
	Values []string
	// StepTime and ExposedComm (the busiest rank's) in picoseconds.
	StepTime    int64
	ExposedComm int64
	// NetworkBytes and NVLinkBytes are the wire bytes of the step over
	// every link of the class (all ranks, all phases).
	NetworkBytes int64
	NVLinkBytes  int64
	// PeakMemory is the replayed step's per-rank peak in bytes
	// (zero.Result.Peak, as zerosim run reports it), Fits whether the step
	// fits the GPU: run's "fits in GPU memory" (zero.Result.Fits: the peak
	// with the CUDA context and NCCL's buffers), the verdict plan keeps its
	// rows by.
	PeakMemory int64
	Fits       bool
	// DevicePeak is the busiest rank's peak as nvidia-smi sees it
	// (zero.Result.DevicePeak: the caching allocator's reserve, the CUDA
	// context and NCCL's buffers added; run's and plan's
	// device_peak_bytes), DeviceFits whether it fits the GPU: a row that
	// fits but not with the allocator's reserve is one run warns of
	// ("expect allocator retries") and plan flags.
	DevicePeak int64
	DeviceFits bool
	// ReservedMode says how the reserve in DevicePeak was obtained
	// (zero.Result.ReservedMode: "simulated-default", "overhead 0.15
	// (default)", …); AllocRetries how many times a step the simulated
	// caching allocator released its cache (zero.Result.AllocRetries),
	// nil where the reserve is not simulated.
	ReservedMode string
	AllocRetries *int
	// TokensPerSecPerGPU is the tokens of one step over its time and the
	// GPUs; MFU the model FLOPs utilization as run and plan report it
	// (zero.Utilization.MFU).
	TokensPerSecPerGPU float64
	MFU                float64
	// MFUFromForward marks an MFU counted as 3× the forward FLOPs (a model
	// without a per-token count, zero.Utilization.FromForward); plan's
	// legend says so. Not a column.
	MFUFromForward bool
	// Err is the one-line error of a point whose input is invalid (the other
	// fields are then zero, and the outputs leave its figures empty or
	// null).
	Err string
	// Warnings are the point's load warnings (scenarios.Scenario.Warnings,
	// its grid values named as --grid) and its replay's on the network
	// calibration (zero.CalibrationWarnings), for the CLI to print on
	// stderr, each distinct one once.
	// Not a column.
	Warnings []string
}

// Measure replays s and fills the measured fields of a row.
func Measure(s *scenarios.Scenario) (Row, error) {
	res, err := zero.Replay(s, zero.Options{NoCollectives: true})
	if err != nil {
		return Row{}, err
	}
	r := measured(res, int64(s.Cluster.GPUMemory))
	// The replay's warnings on the network calibration (measured curves
	// not used on this point's hardware or algorithm, a value no hardware
	// reaches): a sweep mixing calibrated and uncalibrated rows says so
	// (qa20 M4).
	r.Warnings = zero.CalibrationWarnings(s)
	return r, nil
}

// measured is what a sweep row and a plan row (Plan.replay) take from one
// replay on a GPU of capacity bytes.
func measured(res *zero.Result, capacity int64) Row {
	r := Row{StepTime: int64(res.StepTime)}
	for _, rk := range res.Ranks {
		r.ExposedComm = max(r.ExposedComm, int64(rk.ExposedComm))
	}
	r.NetworkBytes = WireBytes(res, topology.Inter)
	r.NVLinkBytes = WireBytes(res, topology.Intra)
	r.PeakMemory, _ = res.Peak()
	r.Fits = res.Fits(capacity)
	r.DevicePeak = res.DevicePeak
	r.DeviceFits = res.DeviceFits(capacity)
	r.ReservedMode, r.AllocRetries = res.ReservedMode(), res.SimulatedRetries()
	r.TokensPerSecPerGPU = res.TokensPerSecPerGPU()
	// MFU as zerosim run reports it (zero.Utilization: 6N + 12·L·H·Q·s per
	// token, PaLM's convention; models without one, 3× the forward FLOPs).
	r.MFU, r.MFUFromForward = res.Utilization.MFU, res.Utilization.FromForward
	return r
}

// WireBytes sums the wire bytes of a link class over the step's phases.
func WireBytes(res *zero.Result, class topology.Class) int64 {
	var t int64
	for _, p := range res.Phases {
		t += p.Wire[class]
	}
	return t
}

// Evaluator runs the points of a space on a source.
type Evaluator struct {
	Src   Source
	Space *Space
}

// Eval loads point i with its overrides and replays it. An invalid point
// (a load or replay error, even a panic in the model) becomes a row with Err
// set, never a failure of the sweep.
func (e *Evaluator) Eval(i int) (row Row) {
	p := e.Space.Point(i)
	defer func() {
		if v := recover(); v != nil {
			row = Row{Index: i, Values: p.Values, Err: oneLine(fmt.Sprintf("internal error: %v", v))}
		}
	}()
	sets := p.Sets(e.Space)
	asGrid := func(msg string) string { return AsGrid(msg, sets) }
	s, err := e.Src.Load(sets...)
	var warnings []string
	if err == nil {
		row, err = Measure(s)
		for _, w := range append(slices.Clip(s.Warnings), row.Warnings...) {
			warnings = append(warnings, asGrid(w))
		}
		if s.Parallelism.Stage == 0 && s.Parallelism.K > 1 {
			// As run's "K: 2 (no effect: stage 0 shards nothing)" and
			// compare's KNoEffect: such a row repeats its K=1 twin
			// (qauser30 L2: rows 3–8 of a stage × K × nodes grid
			// repeated rows 0–2 without a word).
			warnings = append(warnings, KNoEffectNote)
		}
	}
	if err != nil {
		row = Row{Err: oneLine(asGrid(replayRefusal(err)))}
	}
	row.Index, row.Values, row.Warnings = i, p.Values, warnings
	return row
}

// KNoEffectNote is a sweep point's note at ZeRO stage 0 with K above 1:
// stage 0 shards nothing, so K changes nothing.
const KNoEffectNote = "K has no effect at ZeRO stage 0, which shards nothing: these rows repeat the rows with K=1"

// AsGrid is msg, the loader's message about a point loaded with sets (a
// grid point's overrides), with each override it names as a --set named as
// the user's --grid.
func AsGrid(msg string, sets []string) string {
	for _, set := range sets {
		msg = strings.Replace(msg, "--set "+set+":", "--grid "+set+":", 1)
	}
	return msg
}

// replayRefusal is a point's error as the CLI prints a replay's: without
// zero's package prefix (the key and the fix follow).
func replayRefusal(err error) string { return strings.TrimPrefix(err.Error(), "zero: ") }

// refusal is a replay's error as replayRefusal words it, its cause kept
// for errors.As (compare skips a collectives.LayoutError).
type refusal struct{ err error }

func (r refusal) Error() string { return replayRefusal(r.err) }
func (r refusal) Unwrap() error { return r.err }

// oneLine replaces line breaks so a row stays one line of CSV or JSONL.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}
