package reports

import (
	"encoding/json"
	"io"
	"math"

	"github.com/zerosim/zerosim/scenarios"
)

// CalibrationSummary is what one calibrate command fitted, for
// WriteCalibrationJSON: the network form's report, or the compute and
// memory forms' (with the train log read, for --train-log); nil parts
// were not fitted.
type CalibrationSummary struct {
	File     string
	Network  *CalibrationReport
	TrainLog *TrainLogSummary
	Compute  *ComputeCalibration
	Memory   *MemoryCalibration
}

// calibrationJSON is calibrate --format json: snake_case keys, times in
// ps and bytes as integers as result.json gives them, the fitted
// parameters under the calibration file's own keys; a figure with no
// value (a leave-one-out error without another log) is null.
type calibrationJSON struct {
	Zerosim  Build          `json:"zerosim"`
	File     string         `json:"file"`
	Network  *networkJSON   `json:"network,omitempty"`
	TrainLog *trainLogJSON  `json:"train_log,omitempty"`
	Compute  *computeJSON   `json:"compute,omitempty"`
	Memory   *memoryFitJSON `json:"memory,omitempty"`
}

type networkJSON struct {
	Params CalibrationParams `json:"params"`
	// Held are the parameters no logged size measures, left nominal, by
	// their keys in params.
	Held []string     `json:"held"`
	Logs []calLogJSON `json:"logs"`
}

type calLogJSON struct {
	Source        string             `json:"source"`
	Op            string             `json:"op"`
	Ranks         int                `json:"ranks"`
	Nodes         int                `json:"nodes"`
	GPUsPerThread int                `json:"gpus_per_thread"`
	Sizes         []int64            `json:"sizes_bytes"`
	MeasuredUS    []float64          `json:"measured_us"`
	ModelledUS    []*float64         `json:"modelled_us"`
	Own           *CalibrationParams `json:"own_params"`
	OwnExact      bool               `json:"own_exact"`
	InExact       bool               `json:"in_exact"`
	Bands         []calBandJSON      `json:"bands"`
	Warning       string             `json:"warning"`
}

type calBandJSON struct {
	Band      string   `json:"band"`
	Rows      int      `json:"rows"`
	InMedian  *float64 `json:"in_median"`
	InMax     *float64 `json:"in_max"`
	LOOMedian *float64 `json:"loo_median"`
	LOOMax    *float64 `json:"loo_max"`
}

type trainLogJSON struct {
	File        string `json:"file"`
	Format      string `json:"format"`
	Logged      int    `json:"logged"`
	FirstLogged int64  `json:"first_logged"`
	LastLogged  int64  `json:"last_logged"`
	Warmup      int    `json:"warmup"`
	Lines       int    `json:"lines"`
	First       int64  `json:"first"`
	Last        int64  `json:"last"`
	MedianPS    int64  `json:"median_ps"`
	Q1PS        int64  `json:"q1_ps"`
	Q3PS        int64  `json:"q3_ps"`
	MinPS       int64  `json:"min_ps"`
	MaxPS       int64  `json:"max_ps"`
	// MaxReservedBytes is the log's max reserved memory (0: none);
	// MemoryNotFitted why the memory part was not fitted ("" when it was).
	MaxReservedBytes int64  `json:"max_reserved_bytes"`
	MaxReservedLine  int    `json:"max_reserved_line"`
	MemoryNotFitted  string `json:"memory_not_fitted"`
}

type computePointJSON struct {
	Efficiency float64 `json:"compute_efficiency"`
	StepPS     int64   `json:"step_time_ps"`
	ComputePS  int64   `json:"compute_ps"`
	MFU        float64 `json:"mfu"`
}

type computeJSON struct {
	Scenario   string `json:"scenario"`
	Method     string `json:"method"`
	MeasuredPS int64  `json:"measured_ps"`
	// TokensPerSec and TokensPerStep: calibrate --tokens-per-sec's
	// throughput and the scenario's tokens per GPU per step (absent
	// otherwise).
	TokensPerSec  float64          `json:"tokens_per_sec_per_gpu,omitempty"`
	TokensPerStep float64          `json:"tokens_per_gpu_per_step,omitempty"`
	Before        computePointJSON `json:"before"`
	After         computePointJSON `json:"after"`
	// AttentionEfficiency before and after a --trace fit (absent
	// otherwise).
	AttentionBefore *float64 `json:"attention_efficiency_before,omitempty"`
	AttentionAfter  *float64 `json:"attention_efficiency_after,omitempty"`
}

type calMemoryPointJSON struct {
	Overhead      float64 `json:"allocator_overhead"`
	ReservedBytes int64   `json:"reserved_peak_bytes"`
	DeviceBytes   int64   `json:"device_peak_bytes"`
	// Simulated: the reserved peak came from the caching-allocator
	// simulation, not the overhead (MemoryPoint.Simulated).
	Simulated bool `json:"reserved_simulated,omitempty"`
}

type memoryFitJSON struct {
	Scenario       string             `json:"scenario"`
	Method         string             `json:"method"`
	MeasuredBytes  int64              `json:"measured_bytes"`
	AllocatedBytes int64              `json:"allocated_peak_bytes"`
	Before         calMemoryPointJSON `json:"before"`
	After          calMemoryPointJSON `json:"after"`
}

// finite is v, or nil (null) when it is NaN or infinite.
func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// WriteCalibrationJSON writes calibrate's summary as JSON (--format json).
func WriteCalibrationJSON(w io.Writer, s *CalibrationSummary) error {
	j := calibrationJSON{Zerosim: ReadBuild(), File: s.File}
	if r := s.Network; r != nil {
		n := &networkJSON{Params: r.Params, Held: []string{}, Logs: []calLogJSON{}}
		for _, h := range r.Held {
			n.Held = append(n.Held, scenarios.CalParamNames[h].Key)
		}
		for _, l := range r.Logs {
			lj := calLogJSON{Source: l.Source, Op: l.Op, Ranks: l.Ranks, Nodes: l.Nodes, GPUsPerThread: max(l.GPUsPerThread, 1), Sizes: l.Sizes,
				MeasuredUS: l.Measured, OwnExact: l.OwnExact, InExact: l.InExact, Warning: l.Warning, Bands: []calBandJSON{}}
			for _, m := range l.Modelled {
				lj.ModelledUS = append(lj.ModelledUS, finite(m))
			}
			lj.Own = l.Own
			for _, b := range l.Bands {
				bj := calBandJSON{Band: b.Band, Rows: b.Rows, LOOMedian: finite(b.LOOMedian), LOOMax: finite(b.LOOMax)}
				if !l.InExact {
					bj.InMedian, bj.InMax = finite(b.InMedian), finite(b.InMax)
				}
				lj.Bands = append(lj.Bands, bj)
			}
			n.Logs = append(n.Logs, lj)
		}
		j.Network = n
	}
	if t := s.TrainLog; t != nil {
		nf := t.NotFitted
		if nf == "" {
			nf = t.NoMemory
		}
		j.TrainLog = &trainLogJSON{File: t.File, Format: t.Format, Logged: t.Logged, FirstLogged: t.FirstLogged, LastLogged: t.LastLogged,
			Warmup: t.Warmup, Lines: t.Lines, First: t.First, Last: t.Last, MedianPS: int64(t.Median), Q1PS: int64(t.Q1), Q3PS: int64(t.Q3),
			MinPS: int64(t.Min), MaxPS: int64(t.Max), MaxReservedBytes: t.Reserved, MaxReservedLine: t.ReservedLine, MemoryNotFitted: nf}
	}
	if c := s.Compute; c != nil {
		pt := func(p ComputePoint) computePointJSON {
			return computePointJSON{Efficiency: p.Efficiency, StepPS: int64(p.Step), ComputePS: int64(p.Compute), MFU: p.Utilization.MFU}
		}
		cj := &computeJSON{Scenario: c.Scenario, Method: c.Method, MeasuredPS: int64(c.Measured), TokensPerSec: c.TokensPerSec, TokensPerStep: c.TokensPerStep,
			Before: pt(c.Before), After: pt(c.After)}
		if cl := c.Classes; cl != nil {
			cj.AttentionBefore, cj.AttentionAfter = finite(cl.AttentionBefore), finite(cl.AttentionAfter)
		}
		j.Compute = cj
	}
	if m := s.Memory; m != nil {
		pt := func(p MemoryPoint) calMemoryPointJSON {
			return calMemoryPointJSON{Overhead: p.Overhead, ReservedBytes: p.Reserved, DeviceBytes: p.Device, Simulated: p.Simulated}
		}
		j.Memory = &memoryFitJSON{Scenario: m.Scenario, Method: m.Method, MeasuredBytes: m.Measured, AllocatedBytes: m.Allocated, Before: pt(m.Before), After: pt(m.After)}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(j)
}
