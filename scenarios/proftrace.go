package scenarios

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/zerosim/zerosim/units"
)

// This file reads the GPU kernel time of one training step from a PyTorch
// profiler trace: the Chrome trace JSON torch.profiler's
// export_chrome_trace writes through Kineto ({"traceEvents": [...]}). The
// fields it relies on, and where PyTorch defines them:
//
//   - Complete events ("ph": "X") with "ts" and "dur" in microseconds, a
//     "cat" naming the activity type, "pid"/"tid" numbers or strings
//     (pytorch/kineto libkineto/src/output_json.cpp at acf03f80228f,
//     ChromeTraceLogger::handleActivity).
//   - Categories (libkineto/src/ActivityType.cpp at d659be200838): "kernel" for
//     GPU kernels, "cuda_runtime"/"cuda_driver" for the launch calls on a
//     CPU thread, "user_annotation" for record_function ranges, "cpu_op"
//     for operators (older Kineto wrote "Kernel", "Runtime" and "Operator";
//     "gpu_kernel" comes from some converters; all are read). Kernels and their launches carry the same
//     args.correlation (CUPTI's correlation id).
//   - "ProfilerStep#N": the record_function range profile.step() opens for
//     each step (pytorch/pytorch torch/profiler/profiler.py at e40a5ef9aeaf,
//     profile.step).
//   - Backward: the autograd engine wraps each backward node in a
//     record_function named "autograd::engine::evaluate_function: <Node>"
//     (pytorch/pytorch torch/csrc/profiler/collection.cpp at 126fc44a272c,
//     materialize), on the autograd thread.
//   - The optimizer: torch.optim wraps step() in "Optimizer.step#<Class>.step"
//     (pytorch/pytorch torch/optim/optimizer.py, profile_hook_step).
//   - NCCL kernels are named ncclKernel_* (NCCL ≤ 2.18) or ncclDevKernel_*
//     (NCCL ≥ 2.19); they are communication, not compute. The others are
//     classed by name (ClassifyKernel: GEMM, attention, other).
//   - Module annotations: with with_stack=True (or with_modules) the Python
//     tracer records each nn.Module call as a "python_function" event named
//     "nn.Module: <Class>_<id>" (pytorch/pytorch
//     torch/csrc/profiler/collection.cpp, toString of
//     ExtraFields<EventType::PyCall>). Operators carry args "Sequence
//     number" (torch/csrc/autograd/profiler_kineto.cpp, addMetadata), which
//     a backward node shares with the forward op that created it: a
//     backward kernel belongs to the block whose forward ran the op.

// TraceKernels is the GPU kernel time of one step read from a profiler
// trace.
type TraceKernels struct {
	// Steps is the number of ProfilerStep#N ranges in the trace (0: none,
	// the whole trace is taken as one step); Step names the one used (the
	// median of the steps by compute time).
	Steps int
	Step  string
	// Compute is the summed time of the step's compute kernels (every GPU
	// kernel but NCCL's); Kernels their number. Kernels on several streams
	// that overlap each count in full.
	Compute units.Duration
	Kernels int
	// Passes is set when the trace marks backward ops
	// (autograd::engine::evaluate_function); Forward, Backward and
	// Optimizer then split Compute (kernels launched outside backward and
	// the optimizer count as forward: the loss, the embedding).
	Passes                       bool
	Forward, Backward, Optimizer units.Duration
	// NCCL is the summed time of the step's NCCL kernels (not fitted).
	NCCL units.Duration
	// GEMM, Attention and Other split Compute by kernel class
	// (ClassifyKernel), with their kernel counts.
	GEMM, Attention, Other                      units.Duration
	GEMMKernels, AttentionKernels, OtherKernels int
	// AttentionFamily is the kernel family (AttentionFamily) with the most
	// attention time, AttentionFamilyTime that time ("" and 0 when no
	// attention kernel's name says).
	AttentionFamily     AttentionKernel
	AttentionFamilyTime units.Duration
	// Modules is set when the trace has nn.Module annotations; Block is
	// then the module class taken as the transformer block (the outermost
	// class with several instances, none inside another), "" when none
	// qualifies, and Layers the step's compute per block instance in the
	// order of their forward; Unattributed is the compute of no block
	// (embedding, head, loss, optimizer; backward kernels whose forward op
	// is unknown).
	Modules bool
	Block   string
	// DeviceName is the first GPU of the trace's deviceProperties
	// (Kineto's createDevicePropertiesJson "name", pytorch/kineto
	// libkineto/src/DeviceProperties.cpp at
	// e1f99a3cf48d434b262725adf965efa2532d20e7), WorldSize its
	// distributedInfo.world_size (torch.profiler's _get_distributed_info,
	// pytorch/pytorch torch/profiler/profiler.py at
	// 0015978cdddb8676ae59fbfb2586c45b0eed87ad; 0 when absent), each
	// with its file:line:column. Devices is the number of GPUs (kernel
	// pids) with kernels; only the first one's are summed (one rank's
	// step), Device names it.
	DeviceName, DeviceAt             string
	WorldSize                        int64
	WorldSizeAt                      string
	Devices                          int
	Device                           string
	Layers                           []TraceLayer
	UnattributedFwd, UnattributedBwd units.Duration
}

// TraceLayer is one block's kernel time in a step: forward, and backward
// (recompute included).
type TraceLayer struct {
	Name              string
	Forward, Backward units.Duration
}

// traceEvent is the part of a Chrome trace event the reader uses.
type traceEvent struct {
	Ph   string          `json:"ph"`
	Cat  string          `json:"cat"`
	Name string          `json:"name"`
	Pid  json.RawMessage `json:"pid"`
	Tid  json.RawMessage `json:"tid"`
	Ts   json.RawMessage `json:"ts"`
	Dur  json.RawMessage `json:"dur"`
	Args struct {
		Correlation json.RawMessage `json:"correlation"`
		Seq         json.RawMessage `json:"Sequence number"`
	} `json:"args"`
}

// span is a time range in picoseconds on a thread.
type span struct {
	thread   string
	lo, hi   int64
	name     string
	optimize bool
	seq      int64 // a backward op's sequence number, −1 when none
}

type kernel struct {
	pid         string // the GPU (Kineto's kernel pid is the device)
	stream      string // its tid: Kineto's CUDA stream
	name        string
	ts, dur     int64
	correlation int64
	hasCorr     bool
	at          int64 // the event's byte offset in the file
}

// maxTraceEvents bounds the events kept from one trace.
const maxTraceEvents = 1 << 25

// ParseProfilerTrace reads a torch.profiler Chrome trace and returns the
// kernel time of one step. Errors start with file:line:column (or file)
// and say what to do.
func ParseProfilerTrace(file string, data []byte) (*TraceKernels, error) {
	p := traceParser{file: file, data: data, launches: map[int64]launch{}, forward: map[int64]launch{}}
	if err := p.read(); err != nil {
		return nil, err
	}
	return p.sum()
}

type launch struct {
	thread string
	ts     int64
}

type traceParser struct {
	deviceName, deviceAt string
	worldSize            int64
	worldSizeAt          string
	file                 string
	at                   int64 // the byte offset of the event being read
	data                 []byte
	kernels              []kernel
	launches             map[int64]launch
	steps                []span
	passes               []span           // backward ops and optimizer steps, by thread
	modules              []span           // nn.Module calls
	forward              map[int64]launch // the earliest op of each sequence number
	events               int
}

// errAt is an error at the value that starts after byte offset off of
// the file (past the separator and blanks before it).
func (p *traceParser) errAt(off int64, msg string) error {
	if off < 0 || off > int64(len(p.data)) {
		off = int64(len(p.data))
	}
	for off < int64(len(p.data)) && strings.IndexByte(" \t\r\n,:", p.data[off]) >= 0 {
		off++
	}
	return p.errAtExact(off, msg)
}

// errAtExact is an error at byte offset off of the file.
func (p *traceParser) errAtExact(off int64, msg string) error {
	off = min(max(off, 0), int64(len(p.data)))
	line := 1 + bytes.Count(p.data[:off], []byte("\n"))
	col := int(off) - bytes.LastIndexByte(p.data[:off], '\n')
	return fmt.Errorf("%s:%d:%d: %s", p.file, line, col, msg)
}

const traceHint = "export one step with torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) and prof.export_chrome_trace(FILE)"

func (p *traceParser) read() error {
	dec := json.NewDecoder(bytes.NewReader(p.data))
	dec.UseNumber()
	syntax := func(err error) error {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			// The decoder's offsets are relative to the value it was
			// reading; a scan of the whole input gives the absolute one.
			off := se.Offset
			var whole *json.SyntaxError
			if errors.As(json.Unmarshal(p.data, new(json.RawMessage)), &whole) {
				off = whole.Offset
			}
			return p.errAtExact(off-1, "not valid JSON: "+se.Error()+" (a Chrome trace JSON file: "+traceHint+")")
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return p.errAt(int64(len(p.data)), "the JSON ends early: the trace was cut off ("+traceHint+")")
		}
		return p.errAt(dec.InputOffset(), err.Error())
	}
	tok, err := dec.Token()
	if err != nil {
		return syntax(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return p.errAt(0, `not a Chrome trace: want an object {"traceEvents": [...]} (`+traceHint+")")
	}
	found := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return syntax(err)
		}
		key, _ := tok.(string)
		if key != "traceEvents" {
			at := dec.InputOffset()
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return syntax(err)
			}
			p.metadata(key, skip, at)
			continue
		}
		found = true
		at := dec.InputOffset()
		tok, err = dec.Token()
		if err != nil {
			return syntax(err)
		}
		if d, ok := tok.(json.Delim); !ok || d != '[' {
			return p.errAt(at, "traceEvents: want an array of events")
		}
		for i := 0; dec.More(); i++ {
			at := dec.InputOffset()
			var ev traceEvent
			if err := dec.Decode(&ev); err != nil {
				var te *json.UnmarshalTypeError
				if errors.As(err, &te) {
					return p.errAt(at, fmt.Sprintf("traceEvents[%d]: %s is a %s, want a %s", i, te.Field, te.Value, te.Type))
				}
				return syntax(err)
			}
			p.at = at
			if err := p.event(&ev); err != nil {
				return p.errAt(at, fmt.Sprintf("traceEvents[%d] (%s %q): %v", i, ev.Cat, clipName(ev.Name), err))
			}
		}
		if _, err := dec.Token(); err != nil {
			return syntax(err)
		}
	}
	if _, err := dec.Token(); err != nil {
		return syntax(err)
	}
	if !found {
		return fmt.Errorf(`%s: no "traceEvents": not a torch.profiler trace (%s)`, p.file, traceHint)
	}
	return nil
}

// clipName shortens a name for a message.
func clipName(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}

// micros reads a "ts" or "dur" (µs, possibly fractional) as picoseconds.
func micros(raw json.RawMessage, field string) (int64, error) {
	if len(raw) == 0 {
		return 0, fmt.Errorf("no %s", field)
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, fmt.Errorf("%s %s: want a number of microseconds", field, clipName(string(raw)))
	}
	f, err := n.Float64()
	ps := f * 1e6
	if err == nil && ps > math.MaxInt64/4 {
		// qa20 L4: "ts 1750000000100000.0 is out of range (microseconds,
		// ≥ 0)" named no bound, and the value is ≥ 0.
		return 0, fmt.Errorf("%s %s is out of range (microseconds, at most %.4g, %d days: a value past it is likely in nanoseconds, and Chrome traces count microseconds; %s)",
			field, clipName(string(raw)), float64(math.MaxInt64/4)/1e6, int64(math.MaxInt64/4)/int64(24*3600*units.Second), traceHint)
	}
	if err != nil || math.IsNaN(ps) || ps < 0 {
		return 0, fmt.Errorf("%s %s is out of range (microseconds, ≥ 0)", field, clipName(string(raw)))
	}
	return int64(math.Round(ps)), nil
}

// correlation reads args.correlation; ok is false when absent.
func correlation(raw json.RawMessage) (int64, bool, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, false, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, false, fmt.Errorf("args.correlation %s: want an integer", clipName(string(raw)))
	}
	v, err := n.Int64()
	if err != nil {
		return 0, false, fmt.Errorf("args.correlation %s: want an integer", clipName(string(raw)))
	}
	return v, true, nil
}

func isKernel(cat string) bool { return cat == "kernel" || cat == "Kernel" || cat == "gpu_kernel" }

// isLaunch reports the CPU-side launch calls ("Runtime" in the Kineto of
// PyTorch 1.8–1.9, which also named operators "Operator").
func isLaunch(cat string) bool {
	return cat == "cuda_runtime" || cat == "cuda_driver" || cat == "Runtime"
}

// IsNCCLKernel reports NCCL's kernels (ncclKernel_* before NCCL 2.19,
// ncclDevKernel_* since).
func IsNCCLKernel(name string) bool {
	return strings.HasPrefix(name, "ncclKernel") || strings.HasPrefix(name, "ncclDevKernel")
}

const (
	modulePrefix    = "nn.Module: "
	backwardPrefix  = "autograd::engine::evaluate_function: "
	optimizerPrefix = "Optimizer.step#"
	stepPrefix      = "ProfilerStep#"
)

func (p *traceParser) event(ev *traceEvent) error {
	if ev.Ph != "X" {
		return nil
	}
	op := ev.Cat == "cpu_op" || ev.Cat == "Operator"
	module := ev.Cat == "python_function" && strings.HasPrefix(ev.Name, modulePrefix)
	seq := int64(-1)
	if op && len(ev.Args.Seq) > 0 {
		var n json.Number
		if json.Unmarshal(ev.Args.Seq, &n) == nil {
			if v, err := n.Int64(); err == nil && v >= 0 {
				seq = v
			}
		}
	}
	relevant := isKernel(ev.Cat) || isLaunch(ev.Cat) || module || seq >= 0 ||
		((ev.Cat == "user_annotation" || op) && (strings.HasPrefix(ev.Name, stepPrefix) || strings.HasPrefix(ev.Name, optimizerPrefix))) ||
		(op && strings.HasPrefix(ev.Name, backwardPrefix))
	if !relevant {
		return nil
	}
	if p.events++; p.events > maxTraceEvents {
		return fmt.Errorf("more than %d kernels and annotations: record one step (torch.profiler.schedule(wait=1, warmup=1, active=1))", maxTraceEvents)
	}
	ts, err := micros(ev.Ts, "ts")
	if err != nil {
		return err
	}
	dur, err := micros(ev.Dur, "dur")
	if err != nil {
		return err
	}
	thread := string(ev.Pid) + "/" + string(ev.Tid)
	switch {
	case isKernel(ev.Cat):
		c, ok, err := correlation(ev.Args.Correlation)
		if err != nil {
			return err
		}
		p.kernels = append(p.kernels, kernel{pid: string(ev.Pid), stream: string(ev.Tid), name: ev.Name, ts: ts, dur: dur, correlation: c, hasCorr: ok, at: p.at})
	case isLaunch(ev.Cat):
		c, ok, err := correlation(ev.Args.Correlation)
		if err != nil {
			return err
		}
		if ok {
			p.launches[c] = launch{thread: thread, ts: ts}
		}
	case module:
		p.modules = append(p.modules, span{thread: thread, lo: ts, hi: ts + dur, name: strings.TrimPrefix(ev.Name, modulePrefix), seq: -1})
	case strings.HasPrefix(ev.Name, stepPrefix):
		p.steps = append(p.steps, span{thread: thread, lo: ts, hi: ts + dur, name: ev.Name, seq: -1})
	case strings.HasPrefix(ev.Name, backwardPrefix) || strings.HasPrefix(ev.Name, optimizerPrefix):
		p.passes = append(p.passes, span{thread: thread, lo: ts, hi: ts + dur, name: ev.Name, optimize: strings.HasPrefix(ev.Name, optimizerPrefix), seq: seq})
	default: // an operator with a sequence number
		if f, ok := p.forward[seq]; !ok || ts < f.ts {
			p.forward[seq] = launch{thread: thread, ts: ts}
		}
	}
	return nil
}

// metadata reads the trace's deviceProperties and distributedInfo (the
// value of key at byte offset at); a value of another shape is not a
// statement and is skipped.
func (p *traceParser) metadata(key string, v json.RawMessage, at int64) {
	pos := func() string {
		err := p.errAt(at, "")
		return strings.TrimSuffix(err.Error(), ": ")
	}
	switch key {
	case "deviceProperties":
		var d []struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(v, &d) == nil && len(d) > 0 && d[0].Name != "" {
			p.deviceName, p.deviceAt = d[0].Name, pos()
		}
	case "distributedInfo":
		var d struct {
			WorldSize int64 `json:"world_size"`
		}
		if json.Unmarshal(v, &d) == nil && d.WorldSize > 0 {
			p.worldSize, p.worldSizeAt = d.WorldSize, pos()
		}
	}
}

// stepTotals is one step's sums.
type stepTotals struct {
	name                         string
	compute, fwd, bwd, opt, nccl int64
	kernels                      int
	class                        [3]int64 // by KernelClass
	classKernels                 [3]int
	// family is the attention kernels' time by AttentionFamily ("": its
	// name does not say).
	family map[AttentionKernel]int64
}

// placed is a compute kernel's step, launch and pass.
type placed struct {
	step   int
	thread string
	at     int64
	pass   pass
	dur    int64
}

// sum assigns each kernel to a step by its launch time (its kernel time
// when the trace has no launch for it) and to a pass by the op that
// launched it, and returns the median step.
func (p *traceParser) sum() (*TraceKernels, error) {
	// One GPU's kernels: a trace of several devices (merged ranks, or one
	// process driving several GPUs) would sum every GPU's step.
	var pids []string
	for _, k := range p.kernels {
		if !slices.Contains(pids, k.pid) {
			pids = append(pids, k.pid)
		}
	}
	if len(pids) > 1 {
		kept := p.kernels[:0]
		for _, k := range p.kernels {
			if k.pid == pids[0] {
				kept = append(kept, k)
			}
		}
		p.kernels = kept
	}
	if err := p.streamsSerial(); err != nil {
		return nil, err
	}
	computeKernels := 0
	for _, k := range p.kernels {
		if !IsNCCLKernel(k.name) {
			computeKernels++
		}
	}
	if computeKernels == 0 {
		return nil, fmt.Errorf("%s: no GPU compute kernels (events with \"cat\": \"kernel\"): the trace was recorded without CUDA activity (%s)", p.file, traceHint)
	}
	sort.Slice(p.steps, func(i, j int) bool { return p.steps[i].lo < p.steps[j].lo })
	spans := map[string][]span{}
	for _, s := range p.passes {
		spans[s.thread] = append(spans[s.thread], s)
	}
	byThread := map[string]threadPasses{}
	for th, ss := range spans {
		sort.Slice(ss, func(i, j int) bool { return ss[i].lo < ss[j].lo })
		byThread[th] = threadPasses{
			backward:  unionOf(ss, func(s span) bool { return !s.optimize }),
			optimizer: unionOf(ss, func(s span) bool { return s.optimize }),
		}
	}
	// Without ProfilerStep#N ranges the whole trace is one step, which a
	// trace of several iterations is not (a profiler used as a plain
	// context manager around the loop, with no prof.step(), records them
	// so). One step may call optimizer.step() several times (DeepSpeed's
	// ZeRO-1/2 once per parameter group, ZeRO-3 once per sub-group:
	// stage_1_and_2.py lines 2257-2274 and stage3.py lines 1185-1195 at
	// edaa7221), so iterations are counted as optimizer phases a backward
	// pass separates: a new iteration needs a backward.
	if len(p.steps) == 0 {
		if n := p.iterations(); n > 1 {
			return nil, fmt.Errorf("%s: %d iterations (optimizer steps with a backward pass between them) and no ProfilerStep#N ranges to tell them apart: call prof.step() once per iteration, or %s", p.file, n, traceHint)
		}
	}
	n := max(len(p.steps), 1)
	totals := make([]stepTotals, n)
	for i := range totals {
		totals[i].name = "the whole trace"
		if len(p.steps) > 0 {
			totals[i].name = p.steps[i].name
		}
	}
	var c units.Calc
	matched := 0
	var kept []placed
	for _, k := range p.kernels {
		at, thread := k.ts, ""
		if l, ok := p.launches[k.correlation]; ok && k.hasCorr {
			at, thread = l.ts, l.thread
			matched++
		}
		si := 0
		if len(p.steps) > 0 {
			si = sort.Search(len(p.steps), func(i int) bool { return p.steps[i].lo > at }) - 1
			if si < 0 || at > p.steps[si].hi {
				continue // outside every step
			}
		}
		t := &totals[si]
		if IsNCCLKernel(k.name) {
			t.nccl = c.Add(t.nccl, k.dur)
			continue
		}
		t.compute = c.Add(t.compute, k.dur)
		t.kernels++
		cl := ClassifyKernel(k.name)
		t.class[cl] = c.Add(t.class[cl], k.dur)
		t.classKernels[cl]++
		if cl == KernelAttention {
			if t.family == nil {
				t.family = map[AttentionKernel]int64{}
			}
			f := AttentionFamily(k.name)
			t.family[f] = c.Add(t.family[f], k.dur)
		}
		ps := byThread[thread].passOf(at)
		if len(p.modules) > 0 {
			kept = append(kept, placed{step: si, thread: thread, at: at, pass: ps, dur: k.dur})
		}
		switch ps {
		case passBackward:
			t.bwd = c.Add(t.bwd, k.dur)
		case passOptimizer:
			t.opt = c.Add(t.opt, k.dur)
		default:
			t.fwd = c.Add(t.fwd, k.dur)
		}
	}
	if c.Err != nil {
		return nil, fmt.Errorf("%s: kernel time overflows: %w", p.file, c.Err)
	}
	// The median step by compute time (the lower middle of an even count).
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(totals[a].compute, totals[b].compute) })
	mi := order[(n-1)/2]
	m := totals[mi]
	if m.compute == 0 {
		return nil, fmt.Errorf("%s: %s has no compute kernels launched inside it: record a whole step (%s)", p.file, m.name, traceHint)
	}
	hasBackward := false
	for _, s := range p.passes {
		hasBackward = hasBackward || !s.optimize
	}
	tk := &TraceKernels{Steps: len(p.steps), Step: m.name, Compute: units.Duration(m.compute), Kernels: m.kernels, NCCL: units.Duration(m.nccl),
		GEMM: units.Duration(m.class[KernelGEMM]), Attention: units.Duration(m.class[KernelAttention]), Other: units.Duration(m.class[KernelOther]),
		GEMMKernels: m.classKernels[KernelGEMM], AttentionKernels: m.classKernels[KernelAttention], OtherKernels: m.classKernels[KernelOther]}
	for f, d := range m.family {
		if f != "" && (tk.AttentionFamily == "" || d > int64(tk.AttentionFamilyTime) || d == int64(tk.AttentionFamilyTime) && f < tk.AttentionFamily) {
			tk.AttentionFamily, tk.AttentionFamilyTime = f, units.Duration(d)
		}
	}
	if len(p.modules) > 0 {
		tk.Modules = true
		p.layers(tk, kept, mi, spans)
	}
	// Passes need the launches: without them no kernel can be placed
	// inside a backward op.
	if hasBackward && matched > 0 {
		tk.Passes = true
		tk.Forward, tk.Backward, tk.Optimizer = units.Duration(m.fwd), units.Duration(m.bwd), units.Duration(m.opt)
	}
	tk.DeviceName, tk.DeviceAt, tk.WorldSize, tk.WorldSizeAt = p.deviceName, p.deviceAt, p.worldSize, p.worldSizeAt
	tk.Devices = len(pids)
	if len(pids) > 0 {
		tk.Device = pids[0]
	}
	return tk, nil
}

// streamsSerial refuses kernels of one CUDA stream that overlap each
// other grossly: a stream runs its kernels one at a time, so their
// durations add up to no more than the span they cover. Durations written
// in ns (a converter's), 1000× too long, were fitted at efficiency 0.0003
// with only a warning that the step was of a larger run (qa20 L4). Small
// overlaps (Kineto's timestamps round, ~1 µs) pass: a stream is refused
// when its kernels add up to more than twice their span.
func (p *traceParser) streamsSerial() error {
	byStream := map[string][]int{}
	for i, k := range p.kernels {
		byStream[k.stream] = append(byStream[k.stream], i)
	}
	streams := slices.Sorted(maps.Keys(byStream))
	for _, st := range streams {
		idx := byStream[st]
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(p.kernels[a].ts, p.kernels[b].ts) })
		var sum, covered, end int64
		first := -1
		for _, i := range idx {
			k := p.kernels[i]
			if k.ts < end-max(int64(units.Microsecond), k.dur/10) && first < 0 {
				first = i
			}
			sum += k.dur
			covered += max(0, k.ts+k.dur-max(k.ts, end))
			end = max(end, k.ts+k.dur)
		}
		if first >= 0 && sum > 2*covered {
			k := p.kernels[first]
			return p.errAt(k.at, fmt.Sprintf("kernel %q starts at ts %s µs, before the kernel before it on stream %s ends: a CUDA stream runs its kernels one at a time, yet its kernels' durations add up to %v within %v; the durations are likely not in microseconds (Chrome traces count µs: a converter that wrote ns makes them 1000× too long; %s)",
				clipName(k.name), fmtMicros(k.ts), st, units.Duration(sum), units.Duration(covered), traceHint))
		}
	}
	return nil
}

// fmtMicros prints ps as microseconds.
func fmtMicros(ps int64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%d.%06d", ps/1e6, ps%1e6), "0"), ".")
}

type pass uint8

const (
	passForward pass = iota
	passBackward
	passOptimizer
)

// ranges is a union of time ranges: sorted, disjoint.
type ranges [][2]int64

// unionOf merges the spans kept by keep into sorted disjoint ranges.
func unionOf(ss []span, keep func(span) bool) ranges {
	var r ranges
	for _, s := range ss { // sorted by lo
		if !keep(s) {
			continue
		}
		if n := len(r); n > 0 && s.lo <= r[n-1][1] {
			r[n-1][1] = max(r[n-1][1], s.hi)
			continue
		}
		r = append(r, [2]int64{s.lo, s.hi})
	}
	return r
}

// contains reports whether t lies in one of the ranges.
func (r ranges) contains(t int64) bool {
	i := sort.Search(len(r), func(i int) bool { return r[i][0] > t }) - 1
	return i >= 0 && t <= r[i][1]
}

// threadPasses holds one thread's backward and optimizer ranges.
type threadPasses struct{ backward, optimizer ranges }

// iterations is the number of optimizer phases in the trace: runs of
// Optimizer.step# ranges (on any thread) with no backward range (on any
// thread) between them; 0 when the trace has no optimizer range.
func (p *traceParser) iterations() int {
	ss := slices.Clone(p.passes)
	sort.SliceStable(ss, func(i, j int) bool { return ss[i].lo < ss[j].lo })
	opt := unionOf(ss, func(s span) bool { return s.optimize })
	bwd := unionOf(ss, func(s span) bool { return !s.optimize })
	n := min(len(opt), 1)
	for i := 1; i < len(opt); i++ {
		// A backward range that starts between the two.
		lo, hi := opt[i-1][1], opt[i][0]
		j := sort.Search(len(bwd), func(j int) bool { return bwd[j][0] >= lo })
		if j < len(bwd) && bwd[j][0] < hi {
			n++
		}
	}
	return n
}

// passOf is the pass a launch at t on a thread belongs to: the optimizer
// inside Optimizer.step, backward inside a backward op, else forward.
func (tp threadPasses) passOf(t int64) pass {
	switch {
	case tp.optimizer.contains(t):
		return passOptimizer
	case tp.backward.contains(t):
		return passBackward
	}
	return passForward
}

// blockClass picks the module class of the transformer blocks: among the
// classes with at least two instances none of which runs inside another
// of its class on the same thread, the outermost (fewest enclosing
// modules at its first call; more instances break a tie). "" when none.
func blockClass(mods []span) string {
	type info struct {
		names  map[string]bool
		nested bool
		depth  int
		first  int64
	}
	classes := map[string]*info{}
	var order []string
	// mods is sorted by thread, then start; open is the stack of calls
	// enclosing the current one.
	var open []span
	for _, m := range mods {
		for len(open) > 0 && (open[len(open)-1].thread != m.thread || open[len(open)-1].hi < m.hi) {
			open = open[:len(open)-1]
		}
		cls := moduleClass(m.name)
		in := classes[cls]
		if in == nil {
			in = &info{names: map[string]bool{}, depth: len(open), first: m.lo}
			classes[cls] = in
			order = append(order, cls)
		}
		in.names[m.name] = true
		for _, o := range open {
			if o.name != m.name && moduleClass(o.name) == cls {
				in.nested = true
			}
		}
		open = append(open, m)
	}
	best := ""
	for _, cls := range order {
		in := classes[cls]
		if in.nested || len(in.names) < 2 {
			continue
		}
		if b := classes[best]; best == "" || in.depth < b.depth || (in.depth == b.depth && len(in.names) > len(b.names)) {
			best = cls
		}
	}
	return best
}

// moduleClass is the class of a module call "<Class>_<id>".
func moduleClass(name string) string {
	if i := strings.LastIndexByte(name, '_'); i > 0 {
		return name[:i]
	}
	return name
}

// layers fills tk's per-block breakdown of step si from the kernels kept
// (their launches) and the backward ops by thread (spans).
func (p *traceParser) layers(tk *TraceKernels, kept []placed, si int, spans map[string][]span) {
	sort.SliceStable(p.modules, func(i, j int) bool {
		a, b := p.modules[i], p.modules[j]
		if a.thread != b.thread {
			return a.thread < b.thread
		}
		if a.lo != b.lo {
			return a.lo < b.lo
		}
		return a.hi > b.hi
	})
	tk.Block = blockClass(p.modules)
	if tk.Block == "" {
		return
	}
	blocks := map[string][]span{}
	for _, m := range p.modules {
		if moduleClass(m.name) == tk.Block {
			blocks[m.thread] = append(blocks[m.thread], m)
		}
	}
	// The block whose call on thread contains t ("" when none); calls of
	// the block class do not nest, so they are sorted and disjoint.
	blockAt := func(thread string, t int64) string {
		bs := blocks[thread]
		i := sort.Search(len(bs), func(i int) bool { return bs[i].lo > t }) - 1
		if i >= 0 && t <= bs[i].hi {
			return bs[i].name
		}
		return ""
	}
	// The innermost backward op with a sequence number containing t (the
	// latest to start of the 64 before t: backward ops nest shallowly).
	backwardOp := func(thread string, t int64) int64 {
		ss := spans[thread] // sorted by start
		i := sort.Search(len(ss), func(i int) bool { return ss[i].lo > t }) - 1
		for j := i; j >= 0 && j > i-64; j-- {
			if s := ss[j]; !s.optimize && s.seq >= 0 && t <= s.hi {
				return s.seq
			}
		}
		return -1
	}
	idx := map[string]int{}
	var c units.Calc
	layer := func(name string) *TraceLayer {
		i, ok := idx[name]
		if !ok {
			i = len(tk.Layers)
			idx[name] = i
			tk.Layers = append(tk.Layers, TraceLayer{Name: name})
		}
		return &tk.Layers[i]
	}
	var ufwd, ubwd int64
	for _, k := range kept {
		if k.step != si || k.pass == passOptimizer {
			continue
		}
		name := blockAt(k.thread, k.at)
		if name == "" && k.pass == passBackward {
			if f, ok := p.forward[backwardOp(k.thread, k.at)]; ok {
				name = blockAt(f.thread, f.ts)
			}
		}
		switch {
		case name == "" && k.pass == passBackward:
			ubwd = c.Add(ubwd, k.dur)
		case name == "":
			ufwd = c.Add(ufwd, k.dur)
		case k.pass == passBackward:
			l := layer(name)
			l.Backward = units.Duration(c.Add(int64(l.Backward), k.dur))
		default:
			l := layer(name)
			l.Forward = units.Duration(c.Add(int64(l.Forward), k.dur))
		}
	}
	tk.UnattributedFwd, tk.UnattributedBwd = units.Duration(ufwd), units.Duration(ubwd)
	// In the order of the blocks' first calls.
	first := map[string]int64{}
	for _, bs := range blocks {
		for _, b := range bs {
			if f, ok := first[b.name]; !ok || b.lo < f {
				first[b.name] = b.lo
			}
		}
	}
	sort.SliceStable(tk.Layers, func(i, j int) bool { return first[tk.Layers[i].Name] < first[tk.Layers[j].Name] })
}
