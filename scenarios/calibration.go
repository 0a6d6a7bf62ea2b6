package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Calibration is a calibration file (version 1), written by `zerosim
// calibrate`. Its network part, from nccl-tests logs, is the nominal
// hardware the fit started from, the fitted corrections of NCCL's cost
// model and the measured curves (collectives.CalibrationOf reads it); its
// compute part (Compute), from a measured step time or a profiler trace,
// is the fitted compute efficiency; its memory part (Memory), from a
// measured peak, the fitted allocator overhead. A file holds any of the
// parts.
type Calibration struct {
	Version  int         `yaml:"version"`
	Hardware CalHardware `yaml:"hardware,omitempty"`
	Params   CalParams   `yaml:"params,omitempty"`
	Curves   []CalCurve  `yaml:"curves,omitempty"`
	Compute  *CalCompute `yaml:"compute,omitempty"`
	Memory   *CalMemory  `yaml:"memory,omitempty"`
}

// CalMemory is the memory part of a calibration: memory.allocator_overhead
// fitted to one measured peak of one scenario (zerosim calibrate
// --reserved or --device). A scenario that names the file takes the
// overhead unless it sets memory.allocator_overhead itself.
type CalMemory struct {
	// AllocatorOverhead is the fitted memory.allocator_overhead, in
	// [0, MaxAllocatorOverhead].
	AllocatorOverhead float64 `yaml:"allocator_overhead"`
	// Method is what was measured: "reserved" (the caching allocator's
	// peak, torch.cuda.max_memory_reserved) or "device" (nvidia-smi).
	Method string `yaml:"method"`
	// MeasuredBytes is the measured peak.
	MeasuredBytes int64 `yaml:"measured_bytes"`
	// Scenario names the scenario the fit ran on, GPU its cluster.gpu.
	Scenario string `yaml:"scenario,omitempty"`
	GPU      string `yaml:"gpu,omitempty"`
	// CalModel is the model the fit ran on, as resolved.
	CalModel `yaml:",inline"`
	// CalSetup is the stack, fp8 recipe and segment mode it ran with.
	CalSetup `yaml:",inline"`
}

// CalSetup is what a compute or memory fit depended on besides the GPU and
// the model (qa20 M2: a fit carried over silently to another stack, fp8
// recipe or allocator segment mode): the scenario's stack ("none" when it
// names none), training.fp8 and memory.expandable_segments, as resolved.
// A scenario that differs is warned, naming the key. Files written before
// it have none of them, and are not warned.
type CalSetup struct {
	Stack              string `yaml:"stack,omitempty"`
	FP8                string `yaml:"fp8,omitempty"`
	ExpandableSegments *bool  `yaml:"expandable_segments,omitempty"`
}

// checkCalSetup refuses a setup a hand edit left naming no stack or fp8
// recipe (final read R3: stack: 5 loaded, and was compared as a name);
// bad places the error at part+key.
func checkCalSetup(bad func(field, msg string) error, part string, c CalSetup) error {
	if c.Stack != "" && c.Stack != "none" && !slices.Contains(StackNames(), c.Stack) {
		return bad(part+"stack", fmt.Sprintf("%q is not a stack (%s, none, or absent)", c.Stack, strings.Join(StackNames(), ", ")))
	}
	if f := FP8Recipe(c.FP8); f != "" && !slices.Contains([]FP8Recipe{FP8None, FP8TE, FP8TECurrent, FP8TorchAO}, f) {
		return bad(part+"fp8", fmt.Sprintf("%q is not an fp8 recipe (training.fp8's: %s, %s, %s, %s, or absent)", f, FP8None, FP8TE, FP8TECurrent, FP8TorchAO))
	}
	return nil
}

// CalSetupOf is the calibration's record of a resolved scenario's setup.
func CalSetupOf(s *Scenario) CalSetup {
	stack := s.Stack
	if stack == "" {
		stack = "none"
	}
	exp := s.Memory.ExpandableSegments != nil && *s.Memory.ExpandableSegments
	return CalSetup{Stack: stack, FP8: string(s.Training.FP8), ExpandableSegments: &exp}
}

// CalModel is the resolved model a compute or memory part was fitted on
// (--set model.* may have replaced the scenario's), so that reports name
// what was measured and a scenario running another model is warned: its
// Model.Label and total parameters. Files written before it have neither.
type CalModel struct {
	Model  string `yaml:"model,omitempty"`
	Params int64  `yaml:"params,omitempty"`
}

// CalModelOf is the calibration's record of a resolved model.
func CalModelOf(m *Model) CalModel {
	return CalModel{Model: m.Label(), Params: m.TotalParams()}
}

// of describes the fitted run for reports: "transformer (LlamaForCausalLM),
// 8,030,261,248 params, in scenario llama-3.1-70b"; the scenario's name
// alone for a file without the model, "" without either.
func (c CalModel) of(scenario string) string {
	if c.Params == 0 {
		return scenario
	}
	what := fmt.Sprintf("%s, %s params", c.Model, commas(c.Params))
	if scenario != "" {
		what += ", in scenario " + scenario
	}
	return what
}

// differs is what a scenario running model m is warned of when the
// calibration was fitted on another model ("" when it was not, or the file
// does not say): part names what was fitted ("the compute efficiency").
// Another model is another parameter count: the label alone differs
// between one model's preset and its imported config ("llama2-7b",
// "transformer (LlamaForCausalLM)"), which are the same model.
func (c CalModel) differs(part string, m *Model) string {
	now := CalModelOf(m)
	if c.Params == 0 || c.Params == now.Params {
		return ""
	}
	return fmt.Sprintf("%s was fitted on %s, %s params; this scenario runs %s, %s params: it may not carry over (calibrate on this model)",
		part, c.Model, commas(c.Params), now.Model, commas(now.Params))
}

// Methods of a memory calibration (CalMemory.Method).
const (
	CalMethodReserved = "reserved"
	CalMethodDevice   = "device"
)

// CalCompute is the compute part of a calibration: the compute efficiency
// (training.compute_efficiency, the fraction of the dense peak large
// GEMMs reach) fitted to one measurement of one scenario. A scenario that
// names the file takes the efficiency unless it sets
// training.compute_efficiency or training.mfu itself.
type CalCompute struct {
	// Efficiency is the fitted training.compute_efficiency, in (0, 1].
	Efficiency float64 `yaml:"compute_efficiency"`
	// Method is what was measured: "step-time" (the whole step, exposed
	// communication included) or "trace" (the compute kernels' time in a
	// profiler trace of one step).
	Method string `yaml:"method"`
	// MeasuredMS is the measured step (step-time) or compute kernel time
	// per step (trace), in ms.
	MeasuredMS float64 `yaml:"measured_ms"`
	// Scenario names the scenario the fit ran on, GPU its cluster.gpu and
	// PeakTFLOPS its cluster.peak_bf16 (TFLOP/s), so that a reader can
	// tell whether the efficiency carries over to another cluster.
	Scenario   string  `yaml:"scenario,omitempty"`
	GPU        string  `yaml:"gpu,omitempty"`
	PeakTFLOPS float64 `yaml:"peak_tflops,omitempty"`
	// CalModel is the model the fit ran on, as resolved.
	CalModel `yaml:",inline"`
	// CalSetup is the stack, fp8 recipe and segment mode it ran with.
	CalSetup `yaml:",inline"`
	// Source is the profiler trace (method trace) or the training log
	// (calibrate --train-log, method step-time).
	Source string `yaml:"source,omitempty"`
	// AttentionEfficiency is the fitted training.attention_efficiency
	// (method trace, when the trace has attention kernels and the
	// scenario runs attention at its own efficiency), 0 when not fitted;
	// AttentionKernel is the scenario's training.attention_kernel it was
	// fitted with (also for a step-time fit, whose step holds attention
	// at that kernel's rate). A scenario that names the file takes it unless it sets
	// training.attention_efficiency itself.
	AttentionEfficiency float64 `yaml:"attention_efficiency,omitempty"`
	AttentionKernel     string  `yaml:"attention_kernel,omitempty"`
	// HeadDim is the head_dim (zero.ModelHeadDim) of the model the
	// attention efficiency was fitted on: a kernel's rate follows it
	// (zero.HeadDimScale), so a scenario of another head_dim takes the
	// rate rescaled. Files written before it have none (taken as is).
	HeadDim int64 `yaml:"head_dim,omitempty"`
	// Compile is the scenario's training.compile a step-time fit ran with
	// ("none" for eager): the measured step holds torch.compile's
	// speed-up, which the model charges only in part, so the fitted
	// efficiency carries the rest into a row of another compile setting
	// (qa31 M2). Files written before it have none.
	Compile string `yaml:"compile,omitempty"`
	// GEMMMS, AttentionMS and OtherMS are the trace's compute kernel time
	// per step by class (ms; method trace): what each efficiency was
	// fitted to (other is not fitted).
	GEMMMS      float64 `yaml:"gemm_ms,omitempty"`
	AttentionMS float64 `yaml:"attention_ms,omitempty"`
	OtherMS     float64 `yaml:"other_ms,omitempty"`
}

// HasNetwork reports whether the file has a network part (hardware, params
// or curves).
func (c *Calibration) HasNetwork() bool {
	h := c.Hardware
	return h.Arch != "" || h.GFX != "" || h.IntraGBps != 0 || h.NICGBps != 0 || h.NICsPerNode != 0 || len(h.Protos) > 0 || len(h.Algos) > 0 ||
		h.InterLatencyUS != 0 || h.IntraLatencyUS != 0 || h.PCI || h.NVLS || c.Params != (CalParams{}) || len(c.Curves) > 0
}

// CalHardware is the nominal hardware of the calibrated cluster.
type CalHardware struct {
	// Arch is the NCCL generation of an NVIDIA GPU (Volta, Ampere, Hopper,
	// Blackwell). A file fitted on an AMD GPU (GFX) leaves it out: its
	// collectives are RCCL's, whose picks across nodes are timed with
	// NCCL's Ampere tables (collectives.HardwareOf); files that wrote
	// arch: Ampere beside gfx are read as before.
	Arch           string  `yaml:"arch,omitempty"`
	PCI            bool    `yaml:"pci,omitempty"`
	NVLS           bool    `yaml:"nvls"`
	IntraGBps      float64 `yaml:"intra_gbytes_per_s"`
	NICGBps        float64 `yaml:"nic_gbytes_per_s"`
	NICsPerNode    int     `yaml:"nics_per_node"`
	InterLatencyUS float64 `yaml:"inter_latency_us"`
	IntraLatencyUS float64 `yaml:"intra_latency_us"`
	// Protos lists the NCCL protocols the cluster runs (NCCL_PROTO), when
	// restricted (GPUDirect-TCPXO: Simple); absent means all three.
	Protos []string `yaml:"protos,omitempty"`
	// BuffSize is NCCL_BUFFSIZE (bytes) when the cluster sets it
	// (GPUDirect-TCPXO: 8 MiB); absent means NCCL's default, 4 MiB
	// (DEFAULT_BUFFSIZE, src/init.cc line 813 at NVIDIA/nccl
	// 5067397c2676d5aed50042fc39e5c8ee96eb0027, as
	// collectives.Hardware.BuffSize cites it).
	BuffSize int64 `yaml:"nccl_buffsize,omitempty"`
	// PluginLatencyUS is the latency (µs) the network plugin reports to
	// NCCL when it is not the link's (aws-ofi-nccl on EFA: 75), by which
	// NCCL chooses; absent means none.
	PluginLatencyUS float64 `yaml:"plugin_latency_us,omitempty"`
	// Algos lists the NCCL algorithms the cluster may run (NCCL_ALGO),
	// when restricted (GPUDirect-TCPXO: Ring, Tree); absent means all.
	Algos []string `yaml:"algos,omitempty"`
	// HostCPU is the cluster's host CPU (cluster.host.cpu: intel, amd or
	// arm), which NCCL's tuner reads across nodes; absent means intel.
	HostCPU string `yaml:"host_cpu,omitempty"`
	// GFX is an AMD GPU's LLVM target (gfx942, gfx950), timed by RCCL's
	// tuner (collectives/rccl.go); absent for an NVIDIA GPU.
	GFX string `yaml:"gfx,omitempty"`
	// NCCLVersion is the NCCL release whose tuner the fit ran
	// (communication.nccl_version, an NCCLReleases entry); absent means
	// DefaultNCCLRelease.
	NCCLVersion string `yaml:"nccl_version,omitempty"`
	// ComputeCapability is the GPU's compute capability × 10 where it is
	// not its arch's first (103: B300, GB300), which NCCL's LL128 switch
	// reads; absent means the arch's.
	ComputeCapability int `yaml:"compute_capability,omitempty"`
}

// CalParams are the fitted corrections: bandwidth efficiency per link
// class (1 = nominal), latency per hop per class and fixed cost per
// collective added to NCCL's tables (µs).
// The JSON keys are the file's (calibrate --format json prints them).
type CalParams struct {
	IntraEff   float64 `yaml:"intra_efficiency" json:"intra_efficiency"`
	InterEff   float64 `yaml:"inter_efficiency" json:"inter_efficiency"`
	IntraHopUS float64 `yaml:"intra_hop_latency_us" json:"intra_hop_latency_us"`
	InterHopUS float64 `yaml:"inter_hop_latency_us" json:"inter_hop_latency_us"`
	FixedUS    float64 `yaml:"fixed_cost_us" json:"fixed_cost_us"`
}

// CalParamName is one fitted network parameter: its name as calibrate
// prints it and its key under the file's params (CalParams' yaml tag).
type CalParamName struct{ Name, Key string }

// CalParamNames are CalParams' fields in order (collectives' paramVec
// order): the one table calibrate's text, its JSON, collectives.Fit.Held
// and the file's checks name them by (TestCalParamNames holds the keys
// to CalParams' yaml tags).
var CalParamNames = [5]CalParamName{{"intra efficiency", "intra_efficiency"}, {"inter efficiency", "inter_efficiency"},
	{"intra hop", "intra_hop_latency_us"}, {"inter hop", "inter_hop_latency_us"}, {"fixed", "fixed_cost_us"}}

// CalCurve is one measured curve: op, communicator shape, sizes (bytes,
// increasing) and times (µs).
type CalCurve struct {
	Op    string `yaml:"op"`
	Ranks int    `yaml:"ranks"`
	Nodes int    `yaml:"nodes"`
	// MinNICs is the fewest shared NICs the logged ranks crossed on one
	// node, where that differs from min(the node's NICs, ranks per node):
	// a log of part of each node whose GPUs share NICs (collectives
	// Log.NICShape); omitted: the rule's. The curve times only groups
	// that cross as many.
	MinNICs int       `yaml:"min_nics,omitempty"`
	Source  string    `yaml:"source,omitempty"`
	Sizes   []int64   `yaml:"sizes,flow"`
	TimesUS []float64 `yaml:"times_us,flow"`
	// GPUsPerThread is the GPUs one host thread drove in the logged run
	// (nccl-tests -g); omitted: one.
	GPUsPerThread int `yaml:"gpus_per_thread,omitempty"`
}

// MarshalCalibration writes c as YAML.
func MarshalCalibration(c *Calibration) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(c); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// yamlTypeError matches one of yaml.v3's type errors: "line 2: field foo
// not found in type scenarios.Calibration", "line 3: cannot unmarshal
// !!str `1024 ...` into scenarios.Calibration", "line 1: cannot unmarshal
// !!seq into scenarios.Calibration" (no value quoted: FuzzParseCalibration,
// a file "[0]").
var yamlTypeError = regexp.MustCompile(`(?s)^line (\d+): (?:field (.*) not found in type \S+|cannot unmarshal (\S+)(?:\s.*)? into \S+)$`)

// calibrationDecodeError is yaml.v3's decoding error as one line naming
// the file, line and column: "c.yaml:2:3: unknown key "foo" (…)" rather
// than "unmarshal errors:\n  line 2: field foo not found in type
// scenarios.Calibration" (two lines and a Go type), and the first of
// several. idx (nil: none) places it and names the key and the type it
// takes.
func calibrationDecodeError(file string, idx calIndex, err error) string {
	var te *yaml.TypeError
	if !errors.As(err, &te) || len(te.Errors) == 0 {
		return file + ": " + oneLine(strings.TrimPrefix(err.Error(), "yaml: "))
	}
	more := ""
	if n := len(te.Errors) - 1; n > 0 {
		more = fmt.Sprintf(" (and %d more)", n)
	}
	m := yamlTypeError.FindStringSubmatch(te.Errors[0])
	if m != nil && idx != nil {
		if msg := calTypeError(file, idx, m, more); msg != "" {
			return oneLine(msg)
		}
	}
	switch {
	case m == nil:
		return file + ": " + oneLine(te.Errors[0]) + more
	case m[2] != "":
		return fmt.Sprintf("%s:%s: unknown key %q%s", file, m[1], m[2], more)
	case !strings.HasPrefix(m[3], "!!"):
		// A local tag ("!x", or "!" with a control character after it):
		// no YAML type to name.
		return fmt.Sprintf("%s:%s: a value of the wrong type%s", file, m[1], more)
	default:
		return fmt.Sprintf("%s:%s: a %s value of the wrong type%s", file, m[1], strings.TrimPrefix(m[3], "!!"), more)
	}
}

// calFix ends every error about a calibration file's content.
const calFix = " (a calibration file is written by zerosim calibrate)"

// ParseCalibration reads and validates a calibration file; errors start
// with file, line and column (of the value, or of the nearest key
// present) and name the key.
func ParseCalibration(file string, data []byte) (*Calibration, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		// yaml's "EOF" (QA22 L5); a scenario says the same.
		return nil, fmt.Errorf("%s: empty file%s", file, calFix)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		if _, ok := err.(*yaml.TypeError); !ok {
			return nil, yamlSyntax(file, data, err, "fix the YAML syntax; a calibration file is written by zerosim calibrate")
		}
	}
	if doc.Kind == 0 {
		return nil, fmt.Errorf("%s: no calibration in the file, only comments%s", file, calFix)
	}
	var idx calIndex
	if len(doc.Content) == 1 {
		idx = indexCalibration(doc.Content[0])
	}
	return parseCalibration(file, data, idx)
}

// parseCalibration is ParseCalibration with the file's nodes indexed (idx;
// nil for bytes that are not a file, whose positions mean nothing).
func parseCalibration(file string, data []byte, idx calIndex) (*Calibration, error) {
	var c Calibration
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%s%s", calibrationDecodeError(file, idx, err), calFix)
	}
	bad := func(field, msg string) error {
		if _, ok := idx[field]; !ok && idx != nil {
			// Absent, not zero (final read R2: a missing
			// compute_efficiency read "0 is out of range"): said at
			// its parent, with what it takes.
			what := ""
			if i := strings.Index(msg, " ("); i >= 0 && strings.Contains(msg[:i], "out of range") {
				what = msg[i:]
			} else if i := strings.Index(msg, ": use "); i >= 0 {
				what = msg[i:]
			}
			msg = "is missing" + what
			if line, col := idx.at(field); line > 0 {
				return &Error{File: file, Line: line, Col: col, Path: field, Msg: oneLine(field + " " + msg)}
			}
			return fmt.Errorf("%s: %s %s", file, field, oneLine(msg))
		}
		if line, col := idx.at(field); line > 0 {
			return &Error{File: file, Line: line, Col: col, Path: field, Msg: oneLine(field + ": " + msg)}
		}
		return fmt.Errorf("%s: %s: %s", file, field, oneLine(msg))
	}
	if c.Version == 0 && idx != nil {
		if _, ok := idx["version"]; !ok {
			return nil, &Error{File: file, Line: 1, Col: 1, Path: "version", Msg: "version is missing (add version: 1 as the first line)"}
		}
	}
	if c.Version != 1 {
		return nil, bad("version", fmt.Sprintf("%d is not supported (want version: 1)", c.Version))
	}
	if cc := c.Compute; cc != nil {
		if math.IsNaN(cc.Efficiency) || !(cc.Efficiency > 0 && cc.Efficiency <= 1) {
			return nil, bad("compute.compute_efficiency", fmt.Sprintf("%g is out of range (a fraction of the peak in (0, 1])", cc.Efficiency))
		}
		if cc.Method != CalMethodStepTime && cc.Method != CalMethodTrace {
			return nil, bad("compute.method", fmt.Sprintf("%q: use %s or %s", cc.Method, CalMethodStepTime, CalMethodTrace))
		}
		if !(cc.MeasuredMS > 0 && cc.MeasuredMS < 1e12) {
			return nil, bad("compute.measured_ms", fmt.Sprintf("%g is out of range (ms, > 0)", cc.MeasuredMS))
		}
		if math.IsNaN(cc.PeakTFLOPS) || cc.PeakTFLOPS < 0 || cc.PeakTFLOPS > 1e9 {
			return nil, bad("compute.peak_tflops", fmt.Sprintf("%g is out of range (TFLOP/s, ≥ 0)", cc.PeakTFLOPS))
		}
		if cc.Params < 0 {
			return nil, bad("compute.params", fmt.Sprintf("%d is out of range (the fitted model's parameters, ≥ 0)", cc.Params))
		}
		if a := cc.AttentionEfficiency; math.IsNaN(a) || a < 0 || a > 1 {
			return nil, bad("compute.attention_efficiency", fmt.Sprintf("%g is out of range (a fraction of the peak in (0, 1], or absent)", a))
		}
		if cc.HeadDim < 0 {
			// Taken as "not said" it would keep the rate unscaled
			// without a word (zero.CalibratedHeadDimScale).
			return nil, bad("compute.head_dim", fmt.Sprintf("%d is out of range (the head_dim of the model attention_efficiency was fitted on, > 0, or absent)", cc.HeadDim))
		}
		if k := AttentionKernel(cc.AttentionKernel); k != "" && !slices.Contains([]AttentionKernel{KernelFA2, KernelFA1, KernelFA3, KernelCuDNN, KernelTE, KernelTriton, KernelFlex, KernelEager}, k) {
			return nil, bad("compute.attention_kernel", fmt.Sprintf("%q is not an attention kernel (training.attention_kernel's: %s, %s, %s, %s, %s, %s, %s, %s, or absent)", k, KernelFA2, KernelFA1, KernelFA3, KernelCuDNN, KernelTE, KernelTriton, KernelFlex, KernelEager))
		}
		if k := Compile(cc.Compile); k != "" && !slices.Contains([]Compile{CompileNone, CompileBlocks, CompileLoss, CompileBlocksLoss, CompileModel}, k) {
			return nil, bad("compute.compile", fmt.Sprintf("%q is not a compile setting (training.compile's: %s, %s, %s, %s, %s, or absent)", k, CompileNone, CompileBlocks, CompileLoss, CompileBlocksLoss, CompileModel))
		}
		if err := checkCalSetup(bad, "compute.", cc.CalSetup); err != nil {
			return nil, err
		}
		for _, f := range []struct {
			name string
			v    float64
		}{{"compute.gemm_ms", cc.GEMMMS}, {"compute.attention_ms", cc.AttentionMS}, {"compute.other_ms", cc.OtherMS}} {
			if !(f.v >= 0 && f.v < 1e12) {
				return nil, bad(f.name, fmt.Sprintf("%g is out of range (ms, ≥ 0)", f.v))
			}
		}
	}
	if m := c.Memory; m != nil {
		if v := m.AllocatorOverhead; math.IsNaN(v) || v < 0 || v > MaxAllocatorOverhead {
			return nil, bad("memory.allocator_overhead", fmt.Sprintf("%g is out of range (a fraction in [0, %g])", v, MaxAllocatorOverhead))
		}
		if m.Method != CalMethodReserved && m.Method != CalMethodDevice {
			return nil, bad("memory.method", fmt.Sprintf("%q: use %s or %s", m.Method, CalMethodReserved, CalMethodDevice))
		}
		if m.MeasuredBytes <= 0 {
			return nil, bad("memory.measured_bytes", fmt.Sprintf("%d is out of range (bytes, > 0)", m.MeasuredBytes))
		}
		if m.Params < 0 {
			return nil, bad("memory.params", fmt.Sprintf("%d is out of range (the fitted model's parameters, ≥ 0)", m.Params))
		}
		if err := checkCalSetup(bad, "memory.", m.CalSetup); err != nil {
			return nil, err
		}
	}
	if !c.HasNetwork() {
		if c.Compute == nil && c.Memory == nil {
			return nil, fmt.Errorf("%s: neither a network part (hardware, params, curves) nor a compute or memory part: write one with zerosim calibrate LOG..., --step-time or --reserved", file)
		}
		return &c, nil
	}
	h := c.Hardware
	switch h.Arch {
	case "Volta", "Ampere", "Hopper", "Blackwell":
	case "":
		if h.GFX == "" {
			return nil, bad("hardware", "arch is missing: use Volta, Ampere, Hopper or Blackwell for an NVIDIA GPU, or gfx: gfx942 or gfx950 for an AMD one")
		}
	default:
		return nil, bad("hardware.arch", fmt.Sprintf("%q: use Volta, Ampere, Hopper or Blackwell", h.Arch))
	}
	// gfx is the file's AMD target, as cluster.gfx is a scenario's
	// (resolveGFX): one RCCL's cost model knows, beside no arch or the
	// arch: Ampere files before ccde8df wrote (collectives.CalibrationOf
	// reads only that one as legacy), and without NVLS, which RCCL never
	// runs (ROCm/rccl at 0cbce2a7571c907554199fad7e905f16ec0a565c: every
	// tuning model's NVLS and NVLS-tree bwRatio is 0, src/graph/tuning.cc
	// lines 84–252, and lines 377–380 scale the bus bandwidth by it; nor
	// does its topology hold the NVSwitch node the NVLS search needs,
	// src/graph/search.cc line 997, xGMI links running GPU to GPU,
	// src/graph/xml.cc lines 770–797 and src/graph/topo.cc lines 574–580).
	if h.GFX != "" {
		switch {
		case h.GFX != GFX942 && h.GFX != GFX950:
			return nil, bad("hardware.gfx", fmt.Sprintf("%q is not an AMD target zerosim models (use gfx942 for CDNA 3, MI300X-like, or gfx950 for CDNA 4, MI355X-like, or delete gfx for an NVIDIA GPU)", h.GFX))
		case h.Arch != "" && h.Arch != "Ampere":
			return nil, bad("hardware.gfx", fmt.Sprintf("%s beside arch: %s: gfx names an AMD GPU and arch an NVIDIA generation (delete arch for an AMD file, or gfx for an NVIDIA one)", h.GFX, h.Arch))
		case h.NVLS:
			return nil, bad("hardware.nvls", fmt.Sprintf("true beside gfx: %s: RCCL has no NVLS (set nvls: false for an AMD file, or delete gfx for an NVIDIA one)", h.GFX))
		}
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"hardware.intra_gbytes_per_s", h.IntraGBps}, {"hardware.nic_gbytes_per_s", h.NICGBps}} {
		if !(f.v > 0 && f.v < 1e6) {
			return nil, bad(f.name, fmt.Sprintf("%g is out of range (GB/s per direction, > 0)", f.v))
		}
	}
	if !(h.InterLatencyUS >= 0 && h.InterLatencyUS < 1e6) {
		return nil, bad("hardware.inter_latency_us", fmt.Sprintf("%g is out of range (µs, ≥ 0)", h.InterLatencyUS))
	}
	if !(h.IntraLatencyUS >= 0 && h.IntraLatencyUS < 1e6) {
		return nil, bad("hardware.intra_latency_us", fmt.Sprintf("%g is out of range (µs, ≥ 0)", h.IntraLatencyUS))
	}
	if h.BuffSize != 0 && (h.BuffSize < 1<<12 || h.BuffSize > 1<<30) {
		return nil, bad("hardware.nccl_buffsize", fmt.Sprintf("%d is out of range (4096..1073741824 bytes, or absent for NCCL's 4 MiB)", h.BuffSize))
	}
	if !(h.PluginLatencyUS >= 0 && h.PluginLatencyUS < 1e6) {
		return nil, bad("hardware.plugin_latency_us", fmt.Sprintf("%g is out of range (µs, ≥ 0)", h.PluginLatencyUS))
	}
	switch HostCPU(h.HostCPU) {
	case "", HostIntel, HostAMD, HostArm:
	default:
		return nil, bad("hardware.host_cpu", fmt.Sprintf("%q: use intel, amd or arm, or leave it out for intel", h.HostCPU))
	}
	if h.NCCLVersion != "" {
		if r, err := ParseNCCLVersion(h.NCCLVersion); err != nil || r != h.NCCLVersion {
			return nil, bad("hardware.nccl_version", fmt.Sprintf("%q: use one of %s as zerosim calibrate writes it, or leave it out for %s", h.NCCLVersion, strings.Join(NCCLReleases, ", "), DefaultNCCLRelease))
		}
		if h.GFX != "" {
			return nil, bad("hardware.nccl_version", NCCLVersionOnAMD(h.GFX, "nccl_version"))
		}
	}
	if h.ComputeCapability != 0 && (h.ComputeCapability != 103 || h.Arch != "Blackwell") {
		return nil, bad("hardware.compute_capability", fmt.Sprintf("%d: zerosim calibrate writes only 103 (B300, GB300) under arch Blackwell; leave it out for the arch's", h.ComputeCapability))
	}
	if h.NICsPerNode < 1 || h.NICsPerNode > 1<<10 {
		return nil, bad("hardware.nics_per_node", fmt.Sprintf("%d is out of range (1..1024)", h.NICsPerNode))
	}
	p := c.Params
	for _, f := range []struct {
		name string
		v    float64
	}{{"params." + CalParamNames[0].Key, p.IntraEff}, {"params." + CalParamNames[1].Key, p.InterEff}} {
		if !(f.v >= 0.01 && f.v <= 100) {
			return nil, bad(f.name, fmt.Sprintf("%g is out of range (0.01..100; 1 is nominal)", f.v))
		}
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"params." + CalParamNames[2].Key, p.IntraHopUS}, {"params." + CalParamNames[3].Key, p.InterHopUS}, {"params." + CalParamNames[4].Key, p.FixedUS}} {
		if math.IsNaN(f.v) || math.Abs(f.v) > 1e5 {
			return nil, bad(f.name, fmt.Sprintf("%g is out of range (|µs| ≤ 100000)", f.v))
		}
	}
	for i, cv := range c.Curves {
		at := fmt.Sprintf("curves[%d]", i)
		switch cv.Op {
		case "allreduce", "allgather", "reducescatter":
		default:
			return nil, bad(at+".op", fmt.Sprintf("%q: use allreduce, allgather or reducescatter", cv.Op))
		}
		if cv.Ranks < 1 || cv.Nodes < 1 || cv.Ranks%cv.Nodes != 0 || cv.Ranks > 1<<24 {
			return nil, bad(at, fmt.Sprintf("ranks %d over nodes %d: want ranks a multiple of nodes ≥ 1", cv.Ranks, cv.Nodes))
		}
		if cv.MinNICs < 0 || cv.MinNICs > cv.Ranks/cv.Nodes {
			return nil, bad(at+".min_nics", fmt.Sprintf("%d: want 1 to ranks per node (%d), or omit it (the NICs the node's ranks reach)", cv.MinNICs, cv.Ranks/cv.Nodes))
		}
		if cv.GPUsPerThread < 0 || cv.GPUsPerThread > cv.Ranks {
			return nil, bad(at+".gpus_per_thread", fmt.Sprintf("%d: want 1 to ranks (%d), or omit it (one GPU per thread)", cv.GPUsPerThread, cv.Ranks))
		}
		if len(cv.Sizes) == 0 || len(cv.Sizes) != len(cv.TimesUS) {
			return nil, bad(at, fmt.Sprintf("%d sizes and %d times_us: want as many of each, at least one", len(cv.Sizes), len(cv.TimesUS)))
		}
		for j := range cv.Sizes {
			if cv.Sizes[j] <= 0 || (j > 0 && cv.Sizes[j] <= cv.Sizes[j-1]) {
				return nil, bad(fmt.Sprintf("%s.sizes[%d]", at, j), "sizes must be positive and increase")
			}
			if t := cv.TimesUS[j]; !(t > 0 && t < 1e12) {
				return nil, bad(fmt.Sprintf("%s.times_us[%d]", at, j), fmt.Sprintf("%g is out of range (µs, > 0)", t))
			}
		}
	}
	return &c, nil
}

// Methods of a compute calibration (CalCompute.Method).
const (
	CalMethodStepTime = "step-time"
	CalMethodTrace    = "trace"
)

// MaxCalibrationBytes bounds a calibration file read by a scenario (and by
// zerosim calibrate merging into an existing one).
const MaxCalibrationBytes = 16 << 20

// loadCalibration reads communication.calibration, relative to the
// scenario file's directory, and records it (Scenario.ReadFiles).
func (l *loader) loadCalibration(s *Scenario) *Error {
	c := &s.Communication
	if c.Calibration == "" {
		return l.errPath("communication.calibration", "empty path (name a file written by zerosim calibrate, relative to the scenario)")
	}
	path := c.Calibration
	if !filepath.IsAbs(path) && l.file != "" && l.file != "-" {
		path = filepath.Join(filepath.Dir(l.file), path)
	}
	f, err := os.Open(path)
	if err != nil {
		if hint := l.fromScenarioDir(c.Calibration); hint != "" {
			return l.errAlone("communication.calibration", fmt.Sprintf("cannot read %s%s", path, hint))
		}
		return l.errAlone("communication.calibration", fmt.Sprintf("cannot read %s (the path is relative to the scenario file)", path))
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		// "cannot read /tmp: read /tmp: is a directory" (QA22 L5).
		return l.errAlone("communication.calibration", fmt.Sprintf("%s is a directory (name the file zerosim calibrate wrote, e.g. %s)", path, filepath.Join(path, "calibration.yaml")))
	}
	var b bytes.Buffer
	if _, err := b.ReadFrom(io.LimitReader(f, MaxCalibrationBytes+1)); err != nil {
		return l.errAlone("communication.calibration", fmt.Sprintf("cannot read %s: %v", path, err))
	}
	if b.Len() > MaxCalibrationBytes {
		return l.errAlone("communication.calibration", fmt.Sprintf("%s is larger than %d MiB", path, MaxCalibrationBytes>>20))
	}
	cal, err := ParseCalibration(path, b.Bytes())
	if err != nil {
		// An error at a line of the calibration file is placed there,
		// where the value to fix is, and names the scenario's key too.
		// It is the file's alone, whatever the scenario's other keys
		// hold (Error.Alone): a sweep refuses it before its first row.
		named := l.errPath("communication.calibration", "x")
		in := fmt.Sprintf(" (in the calibration that %s names; zerosim calibrate writes it)", strings.TrimSuffix(named.Error(), ": x"))
		var e *Error
		if errors.As(err, &e) && e.Line > 0 {
			return &Error{File: e.File, Line: e.Line, Col: e.Col, Path: "communication.calibration", Msg: e.Msg + in, Alone: true}
		}
		if line, col, msg, ok := positioned(path, err.Error()); ok {
			return &Error{File: path, Line: line, Col: col, Path: "communication.calibration", Msg: strings.TrimSuffix(msg, calFix) + in, Alone: true}
		}
		return l.errAlone("communication.calibration", err.Error())
	}
	c.CalibrationData = cal
	s.readFile("communication.calibration", c.Calibration, path, b.Bytes())
	return nil
}

// fromScenarioDir is the fix for a relative path (hf_config, calibration)
// that the loader read from the scenario's directory, where it is not, but
// that names a file from the working directory, as a path typed in --set
// on the command line does: "--set model.hf_config=scenarios/…/x.json" on
// docs/examples/llama-3.1-70b.yaml looked for
// docs/examples/scenarios/…/x.json and said only "check the path". It
// gives the path from the scenario's directory; "" when it does not apply.
func (l *loader) fromScenarioDir(given string) string {
	if given == "" || filepath.IsAbs(given) || l.file == "" || l.file == Stdin {
		return ""
	}
	if st, err := os.Stat(given); err != nil || st.IsDir() && !isFile(filepath.Join(given, "config.json")) {
		return ""
	}
	abs, err := filepath.Abs(given)
	if err != nil {
		return ""
	}
	dir, err := filepath.Abs(filepath.Dir(l.file))
	if err != nil {
		return ""
	}
	rel, err := filepath.Rel(dir, abs)
	if err != nil {
		return ""
	}
	return fmt.Sprintf(" (a relative path is read from the scenario's directory, %s, not the working directory, where %s is: give it as %s, or as an absolute path)",
		ttName(filepath.Dir(l.file)), ttName(given), ttName(rel))
}

func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// positioned splits "FILE:LINE:COL: msg", an error that ParseCalibration
// placed in file, into its parts; ok is false for any other.
func positioned(file, err string) (line, col int, msg string, ok bool) {
	rest, ok := strings.CutPrefix(err, file+":")
	if !ok {
		return 0, 0, "", false
	}
	if n, _ := fmt.Sscanf(rest, "%d:%d:", &line, &col); n != 2 || line < 1 {
		return 0, 0, "", false
	}
	_, msg, ok = strings.Cut(rest, ": ")
	return line, col, msg, ok
}
