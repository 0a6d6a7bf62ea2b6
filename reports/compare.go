package reports

import (
	"cmp"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/sweep"
	"github.com/zerosim/zerosim/topology"
	"github.com/zerosim/zerosim/units"
	"github.com/zerosim/zerosim/zero"
)

// Comparison is a side-by-side comparison of replayed variants.
type Comparison struct {
	// Zerosim says what made the comparison, as plan.json does; each
	// variant carries its scenario_sha256 (QA25 M3).
	Zerosim  Build            `json:"zerosim"`
	Title    string           `json:"title"`
	Variants []compareVariant `json:"variants"`
	// Rows are the table rows: one value per variant, exact integers
	// (picoseconds or bytes), and the change against the first variant.
	Rows     []compareRow `json:"rows"`
	SlowLink *slowLinks   `json:"slow_link,omitempty"`
	// NotKAlone says, when the variants differ in K and in more
	// (sweep.Runs.BeyondK), that there is no slow-link section or K
	// verdict and why.
	NotKAlone string `json:"not_k_alone,omitempty"`
	// KNoEffect says, when the variants differ in K alone at ZeRO stage
	// 0 (sweep.Runs.KNoEffect), that K changes nothing there, in place of
	// a slow-link section.
	KNoEffect string `json:"k_no_effect,omitempty"`
	// GEMMDefaults says, when the variants differ in GPU and one runs at
	// zerosim's default GEMM efficiency, what each variant's efficiency is
	// and where it comes from (scenarios.DefaultComputeEfficiencyOf): the
	// gap between GPUs rests on it (QA s29: one 0.8 for every GPU made an
	// MI300X 39 % faster than an H200).
	GEMMDefaults string `json:"gemm_efficiency_note,omitempty"`
	// ZeroPP is compare --zeropp's section (compare_zeropp.go).
	ZeroPP *ZeroPPSection `json:"zero_pp,omitempty"`
	// Verdict says which variant is fastest, by how much and why, and which
	// do not fit (computed from the rows).
	Verdict string `json:"verdict"`
	// AttentionNote says, when the variants' GPUs differ and attention is
	// a large share timed at different rates, which kernel each was timed
	// with (compareAttention).
	AttentionNote string      `json:"attention_note,omitempty"`
	Plot          comparePlot `json:"plot"`
	// Wide writes one table with a "Δ vs" column per variant (--wide);
	// by default the tables keep to maxColumns.
	Wide bool `json:"-"`
}

// compareVariant is one replayed variant.
type compareVariant struct {
	Label          string   `json:"label"`
	File           string   `json:"file"`
	Sets           []string `json:"sets"`
	ScenarioSHA256 string   `json:"scenario_sha256,omitempty"`
	Stage          int      `json:"stage"`
	N              int      `json:"n"`
	K              int      `json:"k"`
	Algorithm      string   `json:"algorithm"`
	// Calibration is the calibration file the variant used and the parts
	// of it applied (CalibrationUse); absent without one.
	Calibration *CalibrationUse `json:"calibration,omitempty"`
	StepTimePS  int64           `json:"step_time_ps"`
	// ComputePS is the step's compute at full speed (zero.Result.Compute);
	// BusiestComputePS the busiest rank's, slowed where collectives ran
	// beside it (run's "compute", which with the exposed communication
	// makes the step).
	ComputePS        int64 `json:"compute_ps"`
	BusiestComputePS int64 `json:"busiest_compute_ps"`
	// BusiestAlonePS is the busiest rank's compute without collectives
	// beside it (zero.RankStats.Alone): ComputePS unless that rank's GPU
	// runs at another speed (cluster.gpu_overrides).
	BusiestAlonePS int64 `json:"-"`
	// vendor is the GPU's maker, whose words the verdict uses.
	vendor Vendor
	// gpu, gemm and gemmFrom are the variant's GPU preset, its GEMM
	// efficiency and who set it ("" for zerosim's default), for
	// Comparison.GEMMDefaults.
	gpu, gemmFrom string
	gemm          float64
	// attn is the attention the variant was timed with
	// (compareAttention).
	attn struct {
		variantAttention
		ok bool
	}
	ExposedCommPS int64          `json:"exposed_comm_ps"`
	Phases        []comparePhase `json:"phases"`
	PeakMemory    int64          `json:"peak_memory_bytes"`
	AtRestMemory  int64          `json:"at_rest_memory_bytes"`
	GPUMemory     int64          `json:"gpu_memory_bytes"`
	Fits          bool           `json:"fits"`
	// DeviceFits: it fits with room on the device for the caching
	// allocator's reserve (zero.Result.DeviceFits; false beside Fits is
	// run's "yes, but … expect allocator retries", the table's "yes†").
	DeviceFits bool `json:"device_fits"`
	// TokensPerSecPerGPU has 3 decimals, as run's result.json
	// (docs/result.schema.json) and sweep's rows give it.
	TokensPerSecPerGPU float64 `json:"tokens_per_s_per_gpu"`
	// MFU is run's (zero.Utilization.MFU): the figure that compares
	// clusters of different GPUs, whose tokens/s alone does not say how
	// much of each GPU's peak the step uses.
	MFU float64 `json:"mfu"`
	// ReservedPeak is the busiest rank's peak as the caching allocator
	// reserves it (a profiler's max_memory_reserved: zero.Result.
	// ReservedPeak), run's reserved_peak_bytes; ReservedMode and
	// AllocatorRetries run's reserved_mode and allocator_retries.
	ReservedPeak     int64  `json:"reserved_peak_bytes"`
	ReservedMode     string `json:"reserved_mode,omitempty"`
	AllocatorRetries *int   `json:"allocator_retries,omitempty"`
	// DevicePeak is the busiest rank's peak as nvidia-smi sees it
	// (zero.Result.DevicePeak: the caching allocator's reserve, the CUDA
	// context and NCCL's buffers added), run's device_peak_bytes.
	DevicePeak int64 `json:"device_peak_bytes"`
	// Tokens is the tokens one step trains (zero.Result.Tokens): the
	// verdict ranks by tokens per second when the variants' differ.
	Tokens int64 `json:"-"`
	// DeviceNeed is what the device needs at the peak without the
	// allocator's reserve (zero.Result.DeviceNeed), which Fits judges by.
	DeviceNeed int64 `json:"-"`
	// Alloc is the simulated caching allocator's run (memory.AllocSim;
	// nil when the reserve is a fraction): its retries and out-of-memory
	// go into the verdict.
	Alloc *memory.AllocSim `json:"-"`
}

// comparePhase is the traffic of one phase of a variant.
type comparePhase struct {
	Phase string `json:"phase"`
	// Logical and Sent are per rank (seed accounting and exact ring bytes).
	Logical int64               `json:"logical_bytes"`
	Sent    int64               `json:"sent_bytes"`
	Classes []compareClassBytes `json:"classes"`
}

// compareClassBytes is the wire bytes over one link class: every rank's, and the
// busiest rank's.
type compareClassBytes struct {
	Class   string `json:"class"`
	Total   int64  `json:"total_bytes"`
	Busiest int64  `json:"busiest_rank_bytes"`
}

// compareRow is one metric across the variants. Unit is "ps", "bytes",
// "tokens/s", "fraction" (MFU; Values in 0.1 %) or "bool" (1 = yes); DeltaPct[i] is the change of variant i against variant
// 0 in percent, rounded to 0.1, nil for variant 0 or a zero base.
type compareRow struct {
	Metric   string     `json:"metric"`
	Unit     string     `json:"unit"`
	Values   []int64    `json:"values"`
	DeltaPct []*float64 `json:"delta_pct"`
	// Marks are appended to the table's cells (the fits row's "†":
	// fitCell), nil for none.
	Marks []string `json:"-"`
	// Rates are the tokens/s row's values with their 3 decimals
	// (compareVariant.TokensPerSecPerGPU), or the MFU row's fractions
	// with 4: its JSON and CSV values. Values holds them for the table,
	// rounded to a whole token or, for MFU, to 0.1 %.
	Rates []float64 `json:"-"`
}

// MarshalJSON writes a row's values: Rates where the row has them.
func (r compareRow) MarshalJSON() ([]byte, error) {
	type row compareRow // without the method
	if r.Rates == nil {
		return json.Marshal(row(r))
	}
	return json.Marshal(struct {
		Metric   string     `json:"metric"`
		Unit     string     `json:"unit"`
		Values   []float64  `json:"values"`
		DeltaPct []*float64 `json:"delta_pct"`
	}{r.Metric, r.Unit, r.Rates, r.DeltaPct})
}

// slowLinks sets seed 000's logical slow-link figures beside the exact
// wire bytes of each K with each of sweep.Algorithms (auto, the flat ring,
// hierarchical collectives).
type slowLinks struct {
	// S is the bf16 gradient/parameter buffer in bytes (2 per parameter).
	S      int64         `json:"s_bytes"`
	Params int64         `json:"params"`
	Rows   []slowLinkRow `json:"rows"`
	// Skipped names the K and algorithm pairs that cannot run
	// (sweep.Runs.SlowSkipped), with why.
	Skipped []string `json:"skipped,omitempty"`
	Note    string   `json:"note"`
	// vendor is the GPU's maker (the runs differ in K alone, so one GPU):
	// the intra-node column's and the note's name for the link.
	vendor Vendor
}

// slowLinkRow is one K with one algorithm. Fractions of S and deltas
// (against the smallest K with the same algorithm) are rounded to 0.001
// and 0.1 %.
type slowLinkRow struct {
	K         int    `json:"k"`
	Algorithm string `json:"algorithm"`
	// Seed is sweep.SeedSlowLink: the seed's per-rank slow-link volume.
	Seed         int64    `json:"seed_bytes"`
	SeedS        float64  `json:"seed_x_S"`
	SeedDeltaPct *float64 `json:"seed_delta_pct"`
	// NetworkBusiest is the busiest rank's network wire bytes per step.
	NetworkBusiest  int64    `json:"network_busiest_bytes"`
	NetworkBusiestS float64  `json:"network_busiest_x_S"`
	NetworkDeltaPct *float64 `json:"network_delta_pct"`
	NetworkTotal    int64    `json:"network_total_bytes"`
	NVLinkTotal     int64    `json:"nvlink_total_bytes"`
	StepTimePS      int64    `json:"step_time_ps"`
	PeakMemory      int64    `json:"peak_memory_bytes"`
	GPUMemory       int64    `json:"gpu_memory_bytes"`
	Fits            bool     `json:"fits"`
	// timing is what timed the row's collectives (zero.Result.Timing):
	// the explicit ring and hierarchical are alpha–beta lowerings, auto
	// NCCL's cost model on a cluster with a GPU preset.
	timing string
}

// round rounds v to digits decimals: the float64 nearest the decimal, so
// that JSON prints 51.4, not 51.400000000000006 (which math.Round(v/0.1)·0.1
// gave: 514 · 0.1 is not the double nearest 51.4).
func round(v float64, digits int) float64 {
	p := math.Pow10(digits)
	return math.Round(v*p) / p
}

func deltaPct(v, base int64) *float64 { return changePct(float64(v-base), float64(base)) }

// changePct is a change of diff against base in percent, rounded to 0.1
// (nil for a zero base): deltaPct's, and a rate row's (compareRows).
func changePct(diff, base float64) *float64 {
	if base == 0 {
		return nil
	}
	d := round(diff/base*100, 1)
	if d == 0 {
		d = 0 // no -0
	}
	return &d
}

func variantOf(o *sweep.Outcome) compareVariant {
	r, s := o.Result, o.Scenario
	v := compareVariant{Label: o.Label, File: o.Src.File, Sets: append([]string{}, o.Sets...), ScenarioSHA256: ScenarioSHA256(s), Stage: r.Stage, N: r.N, K: r.K,
		Algorithm: string(s.Communication.Algorithm), StepTimePS: int64(r.StepTime), ComputePS: int64(r.Compute),
		TokensPerSecPerGPU: sweep.TokensPerSec(r.TokensPerSecPerGPU()), MFU: r.Utilization.MFU, Tokens: r.Tokens, Calibration: calibrationUse(r),
		vendor: ClusterVendor(&s.Cluster), gpu: s.Cluster.GPU, gemm: s.Training.ComputeEfficiency}
	switch t := &s.Training; {
	case t.MFU > 0:
		v.gemmFrom = "fitted to training.mfu"
	case t.ComputeEfficiencyFrom != "":
		v.gemmFrom = "from " + t.ComputeEfficiencyFrom
	case !sweep.UncalibratedDefault(s):
		v.gemmFrom = "training.compute_efficiency"
	}
	for _, rk := range r.Ranks {
		v.ExposedCommPS = max(v.ExposedCommPS, int64(rk.ExposedComm))
	}
	v.attn.variantAttention, v.attn.ok = attentionOf(s)
	b := r.Busiest()
	v.BusiestComputePS, v.BusiestAlonePS = int64(b.Compute), int64(b.Alone)
	for _, p := range r.Phases {
		cp := comparePhase{Phase: p.Phase.String(), Logical: p.Logical, Sent: p.Sent}
		for _, c := range topology.Classes() {
			cp.Classes = append(cp.Classes, compareClassBytes{Class: c.String(), Total: p.Wire[c], Busiest: p.MaxRankWire[c]})
		}
		v.Phases = append(v.Phases, cp)
	}
	// The replayed peak and verdict, as zerosim run reports them; at rest
	// is the memory model's.
	v.PeakMemory, _ = r.Peak()
	v.GPUMemory = int64(s.Cluster.GPUMemory)
	v.Fits = r.Fits(v.GPUMemory)
	v.DeviceFits = v.Fits && r.DeviceFits(v.GPUMemory)
	v.DevicePeak, v.DeviceNeed = r.DevicePeak, r.DeviceNeed
	v.ReservedPeak, v.ReservedMode, v.AllocatorRetries = r.ReservedPeak, r.ReservedMode(), r.SimulatedRetries()
	if m := r.MemoryModel; m != nil {
		v.AtRestMemory = m.AtRest
		v.Alloc = m.AllocSim
	}
	return v
}

// gemmDefaults is Comparison.GEMMDefaults: "" unless the variants differ
// in GPU and one of them runs at zerosim's default GEMM efficiency. Where
// their efficiencies differ, the gap between the variants rests on them;
// where they are the same (H100's and A100's 0.8: the A100's is kept, not
// raised), the gap assumes the GPUs reach the same fraction of their
// peaks (QA s31 L5: "differs by GPU" was said of 0.8 and 0.8). The rule
// stated is DefaultComputeEfficiencyOf's, its cap at 0.8 included.
func gemmDefaults(vs []compareVariant) string {
	differ := slices.ContainsFunc(vs, func(v compareVariant) bool { return v.gpu != vs[0].gpu })
	byDefault := slices.ContainsFunc(vs, func(v compareVariant) bool { return v.gemmFrom == "" })
	if !differ || !byDefault {
		return ""
	}
	parts := make([]string, len(vs))
	for i, v := range vs {
		gpu := v.gpu
		if gpu == "" {
			gpu = "this GPU"
		}
		from := v.gemmFrom
		if from == "" {
			from = "default: " + scenarios.MatmulCeilingBrief(v.gpu)
		}
		parts[i] = fmt.Sprintf("%s %s (%s)", v.Label, fmtEff(v.gemm), from)
		if !strings.Contains(v.Label, gpu) {
			parts[i] = fmt.Sprintf("%s on %s %s (%s)", v.Label, gpu, fmtEff(v.gemm), from)
		}
	}
	rule := "zerosim's default is 0.8 × the GPU's measured maximum bf16 matmul over the H100's, at most 0.8 (" + scenarios.MatmulCeilingSource +
		"); calibrate each GPU (zerosim calibrate) to compare your own runs."
	if slices.ContainsFunc(vs, func(v compareVariant) bool { return v.gemm != vs[0].gemm }) {
		return "GEMM efficiency differs by GPU, and the gap between the variants rests on it: " + strings.Join(parts, ", ") + "; " + rule
	}
	return "GEMM efficiency is the same on these GPUs, so the gap between the variants assumes each reaches that fraction of its peak: " +
		strings.Join(parts, ", ") + "; " + rule
}

// NewComparison builds the comparison of the runs: deltas against the
// first variant and the verdict; a slow-link section when runs.SlowLink is
// set, whose note is seed 000's rule about K when seedNote is set (seed
// 000's own scenario, or --convention seed000) and otherwise computed from
// the rows; the slow-link plot over every K when runs.AllK is set, else a
// bar chart of the variants.
func NewComparison(title string, runs *sweep.Runs, seedNote bool) *Comparison {
	c := &Comparison{Zerosim: ReadBuild(), Title: title}
	for _, o := range runs.Variants {
		c.Variants = append(c.Variants, variantOf(o))
	}
	c.Rows = compareRows(c.Variants)
	c.Verdict = compareVerdict(c.Variants)
	c.AttentionNote = compareAttention(c.Variants)
	if len(runs.SlowLink) > 0 {
		c.SlowLink = slowLinkSection(runs.SlowLink, seedNote)
		c.SlowLink.Skipped = runs.SlowSkipped
	}
	if len(runs.BeyondK) > 0 {
		c.NotKAlone = notKAlone(c.Variants, runs.BeyondK)
	}
	c.GEMMDefaults = gemmDefaults(c.Variants)
	if ks := runs.KNoEffect; len(ks) > 1 {
		names := make([]string, len(ks))
		for i, k := range ks {
			names[i] = "K=" + strconv.Itoa(k)
		}
		c.KNoEffect = fmt.Sprintf("K has no effect here: ZeRO stage 0 shards nothing, so %s replay the same step (no slow-link analysis).", scenarios.ListAnd(names))
	}
	if len(runs.AllK) > 0 {
		c.Plot = slowLinkPlot(c.Title, runs.AllK)
	} else {
		c.Plot = generalPlot(c.Title, c.Variants)
	}
	return c
}

func compareRows(vs []compareVariant) []compareRow {
	var rows []compareRow
	add := func(metric, unit string, get func(v *compareVariant) int64) {
		r := compareRow{Metric: metric, Unit: unit}
		for i := range vs {
			r.Values = append(r.Values, get(&vs[i]))
		}
		if unit == "bytes" && !slices.ContainsFunc(r.Values, func(x int64) bool { return x != 0 }) {
			return // a phase or class no variant uses
		}
		for i, x := range r.Values {
			if i == 0 || unit == "bool" {
				r.DeltaPct = append(r.DeltaPct, nil)
				continue
			}
			r.DeltaPct = append(r.DeltaPct, deltaPct(x, r.Values[0]))
		}
		rows = append(rows, r)
	}
	add("step time", "ps", func(v *compareVariant) int64 { return v.StepTimePS })
	// A rate's row: its values with their decimals (Rates: JSON and CSV),
	// Values for the table at scale (a whole token; MFU in 0.1 %), deltas
	// from the unrounded values, as every row's relative to the first.
	addRate := func(metric, unit string, scale, decimals float64, get func(v *compareVariant) float64) {
		r := compareRow{Metric: metric, Unit: unit}
		var base float64
		for i := range vs {
			x := get(&vs[i])
			if i == 0 {
				base = x
			}
			r.Rates = append(r.Rates, math.Round(x*decimals)/decimals)
			r.Values = append(r.Values, int64(math.Round(x*scale)))
			var d *float64
			if i > 0 {
				d = changePct(x-base, base)
			}
			r.DeltaPct = append(r.DeltaPct, d)
		}
		rows = append(rows, r)
	}
	addRate("tokens/s per GPU", "tokens/s", 1, 1000, func(v *compareVariant) float64 { return v.TokensPerSecPerGPU })
	if slices.ContainsFunc(vs, func(v compareVariant) bool { return v.MFU != 0 }) {
		addRate("MFU", "fraction", 1000, math.Pow10(sweep.MFUDecimals), func(v *compareVariant) float64 { return v.MFU })
	}
	add("compute (busiest rank)", "ps", func(v *compareVariant) int64 { return v.BusiestComputePS })
	// The row under the busiest rank's compute is the same rank's without
	// collectives beside it: "at full speed" while that is the nominal
	// compute, named for the rank where a variant's busiest rank runs at
	// another speed (cluster.gpu_overrides).
	alone := "compute at full speed"
	if slices.ContainsFunc(vs, func(v compareVariant) bool { return v.BusiestAlonePS != v.ComputePS }) {
		alone = "compute (busiest rank) without comm beside it"
	}
	add(alone, "ps", func(v *compareVariant) int64 { return v.BusiestAlonePS })
	add("exposed comm (busiest rank)", "ps", func(v *compareVariant) int64 { return v.ExposedCommPS })
	// Phases in step order over every variant; classes in the results' order.
	var phases, classes []string
	for _, ph := range []zero.Phase{zero.PhaseForwardAG, zero.PhaseBackwardAG, zero.PhaseBackwardRS, zero.PhaseBackwardAR, zero.PhaseInterAR, zero.PhasePostOptAG, zero.PhaseForwardA2A, zero.PhaseBackwardA2A, zero.PhaseCPRing} {
		name := ph.String()
		for _, v := range vs {
			if slices.ContainsFunc(v.Phases, func(p comparePhase) bool { return p.Phase == name }) {
				phases = append(phases, name)
				break
			}
		}
	}
	for _, v := range vs {
		for _, p := range v.Phases {
			for _, cb := range p.Classes {
				if !slices.Contains(classes, cb.Class) {
					classes = append(classes, cb.Class)
				}
			}
		}
	}
	class := func(v *compareVariant, phase, cl string, busiest bool) int64 {
		var t int64
		for _, p := range v.Phases {
			if phase != "" && p.Phase != phase {
				continue
			}
			for _, cb := range p.Classes {
				if cb.Class == cl {
					if busiest {
						t += cb.Busiest
					} else {
						t += cb.Total
					}
				}
			}
		}
		return t
	}
	// The rows name a class in the variants' words (classLabel); cl, the
	// class's key, picks its bytes.
	for _, ph := range phases {
		for _, cl := range classes {
			name := classLabel(vs, cl)
			add(ph+": "+name+" total", "bytes", func(v *compareVariant) int64 { return class(v, ph, cl, false) })
			add(ph+": "+name+" busiest rank", "bytes", func(v *compareVariant) int64 { return class(v, ph, cl, true) })
		}
	}
	for _, cl := range classes {
		name := classLabel(vs, cl)
		add("step: "+name+" total", "bytes", func(v *compareVariant) int64 { return class(v, "", cl, false) })
		add("step: "+name+" busiest rank (Σ phases)", "bytes", func(v *compareVariant) int64 { return class(v, "", cl, true) })
	}
	add("peak memory per GPU", "bytes", func(v *compareVariant) int64 { return v.PeakMemory })
	// The same peak as a profiler and the device monitor see it: the
	// caching allocator's reserve (memory.expandable_segments changes it
	// alone), then the runtime's context and the collectives' buffers.
	add("reserved peak (profiler)", "bytes", func(v *compareVariant) int64 { return v.ReservedPeak })
	add("device peak ("+smiLabel(vs)+")", "bytes", func(v *compareVariant) int64 { return v.DevicePeak })
	add("memory at rest per GPU", "bytes", func(v *compareVariant) int64 { return v.AtRestMemory })
	add("fits in GPU memory", "bool", func(v *compareVariant) int64 {
		if v.Fits {
			return 1
		}
		return 0
	})
	// run's one verdict (fitCell): "yes†" where the device has no room
	// for the allocator's reserve (QA s31 L2: a bare "yes" beside a
	// device peak of 88.80 GiB on a 79.11 GiB GPU).
	fits := &rows[len(rows)-1]
	for i := range vs {
		mark := ""
		if fitCell(vs[i].Fits, vs[i].DeviceFits) != humanValue("bool", fits.Values[i]) {
			mark = retriesMark
		}
		fits.Marks = append(fits.Marks, mark)
	}
	return rows
}

// classLabel names the link class whose key (topology.Class's name) is
// key in the rows of the variants vs: the intra-node class is "nvlink"
// when every variant runs on NVIDIA GPUs, "xgmi" when every one runs on
// AMD's (Vendor.class, as run's phase table says), and "intra-node" when
// the variants mix them, since either vendor's name would misname the
// other's bytes (QA14 #1). Any other class keeps its key.
func classLabel(vs []compareVariant, key string) string {
	if key != topology.Intra.String() || len(vs) == 0 {
		return key
	}
	first := vs[0].vendor
	if slices.ContainsFunc(vs, func(v compareVariant) bool { return v.vendor != first }) {
		return "intra-node"
	}
	return first.ClassName(topology.Intra)
}

// smiLabel names the device monitor of the variants vs (Vendor.smi):
// nvidia-smi or rocm-smi, both when they mix vendors.
func smiLabel(vs []compareVariant) string {
	if len(vs) == 0 {
		return NVIDIA.smi()
	}
	first := vs[0].vendor
	if slices.ContainsFunc(vs, func(v compareVariant) bool { return v.vendor != first }) {
		return NVIDIA.smi() + " / " + AMD.smi()
	}
	return first.smi()
}

// notKAlone is the line that stands for the slow-link section when the
// variants differ in K and in the keys beyond (at most 5 named).
func notKAlone(vs []compareVariant, beyond []string) string {
	var ks []string
	for _, v := range vs {
		if k := strconv.Itoa(v.K); !slices.Contains(ks, k) {
			ks = append(ks, k)
		}
	}
	named := beyond
	more := ""
	if len(named) > 5 {
		named, more = named[:5], fmt.Sprintf(" and %d more", len(beyond)-5)
	}
	return fmt.Sprintf("No K analysis: the variants differ in K (%s) and in more than K (%s%s), so no figure here is K's alone; compare K with --vary parallelism.k on one file.",
		strings.Join(ks, ", "), strings.Join(named, ", "), more)
}

// algoLabel is how compare's and plan's tables, plots and prose name a
// communication.algorithm value: the explicit ring is zerosim's alpha–beta
// flat ring (docs/scenario-format.md), named "alphabeta-ring" as zerosim
// collective --algo names it, so that it is not read as NCCL's Ring
// (collective --algo ring, NCCL_ALGO=Ring, its channels over every NIC).
// The scenario key still takes "ring", and the JSON and CSV keep the
// key's value.
// labelAlgos is algoLabel of each of as, in place.
func labelAlgos(as []string) []string {
	for i, a := range as {
		as[i] = algoLabel(a)
	}
	return as
}

func algoLabel(a string) string {
	if a == "ring" { // scenarios.AlgoRing
		return "alphabeta-ring"
	}
	return a
}

func slowLinkSection(os []*sweep.Outcome, seedNote bool) *slowLinks {
	sec := &slowLinks{S: sweep.BufferBytes(os[0].Scenario), Params: os[0].Scenario.Model.TotalParams(), vendor: ClusterVendor(&os[0].Scenario.Cluster)}
	base := map[string]*slowLinkRow{}
	for _, o := range os {
		r := o.Result
		busy, total := sweep.BusiestWire(r, topology.Inter)
		_, nv := sweep.BusiestWire(r, topology.Intra)
		row := slowLinkRow{K: r.K, Algorithm: string(o.Scenario.Communication.Algorithm), Seed: sweep.SeedSlowLink(r),
			NetworkBusiest: busy, NetworkTotal: total, NVLinkTotal: nv, StepTimePS: int64(r.StepTime), timing: r.Timing}
		row.PeakMemory, _ = r.Peak()
		row.GPUMemory = int64(o.Scenario.Cluster.GPUMemory)
		row.Fits = r.Fits(row.GPUMemory)
		// In multiples of sec.S: the runs differ in K alone (a slow-link
		// section exists only when sweep.Runs.BeyondK is empty) and S, the
		// model's buffer bytes, does not depend on K, so one S stands for
		// all.
		if sec.S > 0 {
			row.SeedS = round(float64(row.Seed)/float64(sec.S), 3)
			row.NetworkBusiestS = round(float64(busy)/float64(sec.S), 3)
		}
		if b, ok := base[row.Algorithm]; ok {
			row.SeedDeltaPct = deltaPct(row.Seed, b.Seed)
			row.NetworkDeltaPct = deltaPct(row.NetworkBusiest, b.NetworkBusiest)
		} else {
			base[row.Algorithm] = &row
		}
		sec.Rows = append(sec.Rows, row)
	}
	if seedNote {
		sec.Note = slowLinkNote(sec)
	} else {
		sec.Note = kNote(sec)
	}
	return sec
}

// slowLinkNote is seed 000's rule about when K > 1 helps, with this
// comparison's figures.
func slowLinkNote(sec *slowLinks) string {
	find := func(algo string, k1 bool) *slowLinkRow {
		var best *slowLinkRow
		for i := range sec.Rows {
			r := &sec.Rows[i]
			if r.Algorithm != algo || (r.K == 1) != k1 {
				continue
			}
			if best == nil || r.NetworkBusiest < best.NetworkBusiest {
				best = r
			}
		}
		return best
	}
	ring1, ringK, hier1 := find("ring", true), find("ring", false), find("hierarchical", true)
	// NCCL's own all-gather and reduce-scatter are flat rings too (one per
	// channel, under auto): only zerosim's two-level lowering is
	// hierarchical, so the rule does not call it NCCL's.
	const rule = "K>1 cuts slow-link bytes only when flat rings carry every rank's data across the slow link (NCCL's ring, one per channel, under auto; zerosim's alphabeta-ring) and zerosim's two-level hierarchical collectives are not used"
	if ring1 == nil || ringK == nil || hier1 == nil {
		return rule + "; it always costs optimizer memory."
	}
	gb := func(b int64) string { return units.Bytes(b).IEC() }
	// than says a difference in NVLink bytes against a K=1 row.
	than := func(d int64, row string) string {
		if d == 0 {
			return "as much as " + row
		}
		return moreLess(d, siBytes) + " than " + row
	}
	s := fmt.Sprintf("%s: here K=%d takes the busiest rank's network bytes from %s (alphabeta-ring, K=1) to %s (%s %%)",
		rule, ringK.K, gb(ring1.NetworkBusiest), gb(ringK.NetworkBusiest), pct(deltaPct(ringK.NetworkBusiest, ring1.NetworkBusiest)))
	// auto is what a run does: its K=1 row, not the explicit ring's, is the
	// planner's baseline, and its NVLink traffic falls with K where the
	// ring's rises.
	auto1, autoK := find("auto", true), find("auto", false)
	withAuto := auto1 != nil && autoK != nil && autoK.K == ringK.K
	if withAuto {
		s += fmt.Sprintf(" and, with auto (what a run does), from %s to %s (%s %%)",
			gb(auto1.NetworkBusiest), gb(autoK.NetworkBusiest), pct(deltaPct(autoK.NetworkBusiest, auto1.NetworkBusiest)))
	}
	s += fmt.Sprintf(", but hierarchical collectives already give K=1 %s (%.3f·S); in %s traffic per step K=%d moves %s",
		gb(hier1.NetworkBusiest), hier1.NetworkBusiestS, sec.vendor.link(), ringK.K, than(ringK.NVLinkTotal-ring1.NVLinkTotal, "alphabeta-ring at K=1"))
	if withAuto {
		s += " and " + than(autoK.NVLinkTotal-auto1.NVLinkTotal, "auto at K=1")
	}
	return s + fmt.Sprintf("; it needs %s peak memory per GPU.", moreLess(ringK.PeakMemory-ring1.PeakMemory, siBytes))
}

func pct(p *float64) string {
	if p == nil {
		return "n/a"
	}
	return strconv.FormatFloat(*p, 'f', 1, 64)
}

func deltaCell(p *float64) string {
	if p == nil {
		return "-"
	}
	s := strconv.FormatFloat(*p, 'f', 1, 64)
	if *p > 0 {
		s = "+" + s
	}
	return s + " %"
}

// pointsCell is a change of tenths of a percent in percentage points:
// "+6.2 pts".
func pointsCell(tenths int64) string {
	s := strconv.FormatFloat(float64(tenths)/10, 'f', 1, 64)
	if tenths > 0 {
		s = "+" + s
	}
	return s + " pts"
}

func humanValue(unit string, v int64) string {
	switch unit {
	case "ps":
		return durText(v)
	case "bool":
		if v != 0 {
			return "yes"
		}
		return "no"
	case "tokens/s":
		return commas(v)
	case "fraction": // in 0.1 %
		return strconv.FormatFloat(float64(v)/10, 'f', 1, 64) + " %"
	}
	return units.Bytes(v).IEC()
}

// WriteCompareTable writes the side-by-side table (human units, deltas in
// % against the first variant), then the slow-link section if any.
func WriteCompareTable(w io.Writer, c *Comparison) error {
	if _, err := fmt.Fprintf(w, "# compare: %s\n", EscapeControl(c.Title)); err != nil {
		return err
	}
	for _, v := range c.Variants {
		cal := ""
		if v.Calibration != nil {
			cal = ", " + v.Calibration.String()
		}
		if _, err := fmt.Fprintf(w, "#   %s: %s, ZeRO stage %d, N=%d K=%d, %s collectives%s\n", EscapeControl(v.Label), EscapeControl(v.File), v.Stage, v.N, v.K, algoLabel(v.Algorithm), cal); err != nil {
			return err
		}
	}
	if err := writeCompareRows(w, c); err != nil {
		return err
	}
	sl := c.SlowLink
	if c.Verdict != "" {
		if _, err := fmt.Fprintln(w, c.Verdict); err != nil {
			return err
		}
	}
	for _, note := range []string{c.AttentionNote, c.NotKAlone, c.KNoEffect, c.GEMMDefaults} {
		if note == "" {
			continue
		}
		if _, err := fmt.Fprintln(w, note); err != nil {
			return err
		}
	}
	if c.SlowLink == nil {
		return nil
	}
	// By default the table keeps to maxColumns in multiples of S; --wide
	// adds the same figures in bytes (the busiest rank's exact).
	bytesToo := "in multiples of S (--wide adds bytes)"
	if c.Wide {
		bytesToo = "next to the exact wire bytes"
	}
	if _, err := fmt.Fprintf(w, "\n# slow link (network) per step: seed 000's logical figure %s\n"+
		"# seed: by the seed's rule (each all-gather or reduce-scatter on the network counts its whole buffer S, the inter all-reduce of K>1 its ring cost); busiest: exact wire bytes\n"+
		"# S = %s B, the bf16 gradient buffer of P = %s parameters; deltas against K=%d with the same algorithm\n",
		bytesToo, commas(sl.S), commas(sl.Params), sl.Rows[0].K); err != nil {
		return err
	}
	narrow := func(r []string) []string {
		if c.Wide {
			return r
		}
		return slices.Delete(slices.Delete(r, 5, 6), 2, 3) // seed logical, network busiest rank (B)
	}
	head := []string{"K", "algorithm", "seed logical", "seed", "Δ seed", "network busiest rank (B)", "busiest", "Δ busiest",
		"network total", sl.vendor.ClassName(topology.Intra) + " total", "step time", "peak mem"}
	head = narrow(head)
	t := newTable(w, len(head), 0, 1)
	t.Header(head)
	steps := make([]int64, len(sl.Rows))
	for i, r := range sl.Rows {
		steps[i] = r.StepTimePS
	}
	stepCells := durs(steps...) // one precision down the column
	for i, r := range sl.Rows {
		if err := t.Append(narrow([]string{strconv.Itoa(r.K), algoLabel(r.Algorithm), units.Bytes(r.Seed).IEC(), fmt.Sprintf("%.3f·S", r.SeedS), deltaCell(r.SeedDeltaPct),
			commas(r.NetworkBusiest), fmt.Sprintf("%.3f·S", r.NetworkBusiestS), deltaCell(r.NetworkDeltaPct),
			units.Bytes(r.NetworkTotal).IEC(), units.Bytes(r.NVLinkTotal).IEC(), stepCells[i], units.Bytes(r.PeakMemory).IEC()})); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	for _, sk := range sl.Skipped {
		if _, err := fmt.Fprintf(w, "not run: %s\n", EscapeControl(sk)); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(w, sl.Note)
	return err
}

// compareColumns is how wide the compare tables may be by default.
const compareColumns = 120

// writeCompareRows writes the rows: with c.Wide one table, each variant's
// value and its "Δ vs" the first; by default the change columns are headed
// "Δ" with a legend under the tables, and the variants are split over as
// many tables as keep to compareColumns, the metric column and the
// baseline's values repeated in each.
func writeCompareRows(w io.Writer, c *Comparison) error {
	cells := make([][]string, len(c.Rows)) // per row: metric, then value (and Δ) per variant
	for j, r := range c.Rows {
		cells[j] = []string{r.Metric}
		var times []string // a row of times at one precision (durs)
		if r.Unit == "ps" {
			times = durs(r.Values...)
		}
		for i, v := range r.Values {
			if times != nil {
				cells[j] = append(cells[j], times[i])
			} else {
				cells[j] = append(cells[j], humanValue(r.Unit, v))
			}
			if i < len(r.Marks) {
				cells[j][len(cells[j])-1] += r.Marks[i]
			}
			switch {
			case i > 0 && r.Unit == "fraction":
				// A change of a percentage in points, from the values
				// shown (0.1 %): 48.5 % → 54.7 % is +6.2 pts, not
				// +12.8 % (QA s28 L12). JSON keeps the relative change.
				cells[j] = append(cells[j], pointsCell(v-r.Values[0]))
			case i > 0:
				cells[j] = append(cells[j], deltaCell(r.DeltaPct[i]))
			}
		}
	}
	delta := "Δ"
	if c.Wide {
		delta = "Δ vs " + c.Variants[0].Label
	}
	head := []string{"metric"}
	first := []int{} // per variant, its first column in cells
	for i, v := range c.Variants {
		first = append(first, len(head))
		head = append(head, v.Label)
		if i > 0 {
			head = append(head, delta)
		}
	}
	width := func(col int) int { // a column's runes with its padding and border
		n := utf8.RuneCountInString(EscapeControl(head[col]))
		for _, r := range cells {
			n = max(n, utf8.RuneCountInString(EscapeControl(r[col])))
		}
		return n + 3
	}
	var groups [][]int // variants per table
	used := 1 + width(0)
	for i := range c.Variants {
		cols := 1
		if i > 0 {
			cols = 2
		}
		need := 0
		for k := range cols {
			need += width(first[i] + k)
		}
		// A table holding the baseline alone would only be repeated in
		// the next, which shows the baseline again: the first variant
		// beside it stays there however wide.
		alone := len(groups) == 1 && len(groups[0]) == 1
		if len(groups) == 0 || (!c.Wide && !alone && used+need > compareColumns) {
			groups = append(groups, nil)
			used = 1 + width(0)
			if i > 0 { // a later table repeats the baseline's values
				used += width(first[0])
			}
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], i)
		used += need
	}
	for n, g := range groups {
		pick := []int{0}
		if n > 0 {
			pick = append(pick, first[0])
		}
		for _, i := range g {
			pick = append(pick, first[i])
			if i > 0 {
				pick = append(pick, first[i]+1)
			}
		}
		sub := func(r []string) []string {
			out := make([]string, len(pick))
			for k, col := range pick {
				out[k] = r[col]
			}
			return out
		}
		t := newTable(w, len(pick), 0)
		t.Header(sub(head))
		for _, r := range cells {
			if err := t.Append(sub(r)); err != nil {
				return err
			}
		}
		if err := t.Render(); err != nil {
			return err
		}
	}
	if slices.ContainsFunc(c.Rows, func(r compareRow) bool { return slices.Contains(r.Marks, retriesMark) }) {
		if _, err := fmt.Fprintln(w, retriesLegend(smiLabel(c.Variants))); err != nil {
			return err
		}
	}
	if err := writeReserveModes(w, c); err != nil {
		return err
	}
	if c.Wide || len(c.Variants) < 2 {
		return nil
	}
	points := ""
	if slices.ContainsFunc(c.Rows, func(r compareRow) bool { return r.Unit == "fraction" }) {
		points = " (MFU in percentage points)"
	}
	split := ""
	if len(groups) > 1 {
		// The variants did not fit one table of compareColumns: say how
		// to get the one table a reader comparing them all wants (QA29
		// #11).
		split = fmt.Sprintf("; %d tables to keep within %d columns, --wide prints one", len(groups), compareColumns)
	}
	_, err := fmt.Fprintf(w, "Δ: change against %s%s%s\n", EscapeControl(c.Variants[0].Label), points, split)
	return err
}

// writeReserveModes writes a line under the tables when the variants'
// reserved peaks come from different estimates (memory.ReservedModeOf: a
// simulated caching allocator, a fraction of the allocated peak), which
// the reserved row would otherwise compare as alike (QA18 L8: a 0.15
// estimate against a simulation, -44.4 %, said nothing).
func writeReserveModes(w io.Writer, c *Comparison) error {
	var modes []string
	for _, v := range c.Variants {
		if v.ReservedMode != "" && !slices.Contains(modes, v.ReservedMode) {
			modes = append(modes, v.ReservedMode)
		}
	}
	if len(modes) < 2 {
		return nil
	}
	parts := make([]string, len(c.Variants))
	for i, v := range c.Variants {
		parts[i] = EscapeControl(v.Label) + ": " + cmp.Or(v.ReservedMode, "none")
	}
	_, err := fmt.Fprintf(w, "reserved peak: the variants' reserves are estimated differently (%s), so that row compares unlike estimates\n", strings.Join(parts, "; "))
	return err
}

// WriteCompareJSON writes the comparison as indented JSON (exact integers).
func WriteCompareJSON(w io.Writer, c *Comparison) error {
	return writeJSON(w, c)
}

// compareSlowLinkColumns are the slow-link table's columns in compare's CSV.
var compareSlowLinkColumns = []string{"k", "algorithm", "seed_bytes", "seed_x_S", "seed_delta_pct", "network_busiest_bytes", "network_busiest_x_S",
	"network_delta_pct", "network_total_bytes", "nvlink_total_bytes", "step_time_ps", "peak_memory_bytes"}

// WriteCompareCSV writes the comparison as one rectangular CSV table, so
// every csv reader takes it whole: its first column, table, names the table
// a row belongs to. A "metrics" row is one row of the table: metric, unit,
// the exact value of every variant, delta_unit, then the change of every
// variant after the first (empty when undefined), as the table's Δ: in
// percent of the first (delta_unit pct), or for MFU in percentage points
// (pts). When varying K, "slow_link" rows
// follow with the slow-link table's columns (compareSlowLinkColumns),
// after the metrics' columns; each kind of row leaves the other's columns
// empty.
func WriteCompareCSV(w io.Writer, c *Comparison) error {
	cw := csv.NewWriter(w)
	head := []string{"table", "metric", "unit"}
	for _, v := range c.Variants {
		head = append(head, v.Label)
	}
	head = append(head, "delta_unit")
	for _, v := range c.Variants[1:] {
		head = append(head, "delta "+v.Label)
	}
	metricCols := len(head)
	sl := c.SlowLink
	if sl != nil {
		head = append(head, compareSlowLinkColumns...)
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	fl := func(p *float64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatFloat(*p, 'f', 1, 64)
	}
	for _, r := range c.Rows {
		row := make([]string, 0, len(head))
		// The MFU row's change is in percentage points, as the table
		// shows it (pointsCell), the others' in percent of the first
		// variant; delta_unit says which (qauser30 L6: the CSV's 1.3
		// beside the table's +0.7 pts).
		deltaUnit := "pct"
		if r.Unit == "fraction" {
			deltaUnit = "pts"
		}
		row = append(row, "metrics", r.Metric, r.Unit)
		for i, v := range r.Values {
			switch {
			case r.Rates != nil && r.Unit == "fraction": // MFU, as sweep and plan.csv write it
				row = append(row, sweep.FormatMFU(r.Rates[i]))
			case r.Rates != nil && r.Unit == "tokens/s": // as sweep and plan.csv write it
				row = append(row, sweep.FormatTokensPerSec(r.Rates[i]))
			case r.Rates != nil:
				row = append(row, strconv.FormatFloat(r.Rates[i], 'f', 3, 64))
			case r.Unit == "bool": // true/false, as sweep and plan.csv write it
				row = append(row, strconv.FormatBool(v != 0))
			default:
				row = append(row, exact(v))
			}
		}
		row = append(row, deltaUnit)
		for i, d := range r.DeltaPct[1:] {
			if deltaUnit == "pts" {
				// From the values the table shows (0.1 %), as pointsCell.
				row = append(row, strconv.FormatFloat(float64(r.Values[i+1]-r.Values[0])/10, 'f', 1, 64))
				continue
			}
			row = append(row, fl(d))
		}
		row = append(row, make([]string, len(head)-len(row))...) // the slow-link columns
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	if sl != nil {
		for _, r := range sl.Rows {
			row := make([]string, metricCols, len(head))
			row[0] = "slow_link"
			row = append(row, strconv.Itoa(r.K), r.Algorithm, exact(r.Seed), strconv.FormatFloat(r.SeedS, 'f', 3, 64), fl(r.SeedDeltaPct),
				exact(r.NetworkBusiest), strconv.FormatFloat(r.NetworkBusiestS, 'f', 3, 64), fl(r.NetworkDeltaPct),
				exact(r.NetworkTotal), exact(r.NVLinkTotal), exact(r.StepTimePS), exact(r.PeakMemory))
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
