package reports

import "github.com/zerosim/zerosim/memory"

// memoryJSON is one memory report in `zerosim memory --format json` and in
// result.json's memory_model: exact integer bytes, phases as names. The
// format is this struct, not memory.Report's layout.
type memoryJSON struct {
	Scenario   string          `json:"scenario"`
	Estimator  string          `json:"estimator"`
	Convention string          `json:"convention"`
	Stage      int             `json:"stage"`
	N          int             `json:"n"`
	K          int             `json:"k"`
	Shards     int             `json:"shards"`
	Rank       int             `json:"rank"`
	Padding    string          `json:"padding"`
	Params     int64           `json:"params"`
	GPUMemory  int64           `json:"gpu_memory"`
	Components []componentJSON `json:"components"`
	// AtRest, Peak, PeakPhase and Fits are null, and Components and
	// PhasePeaks empty, where NotApplicable says why the report has no
	// figures (an estimator without a formula for the stage, a stage the
	// bucket size cannot lay out: memory.Report.NotLaidOut).
	AtRest     *int64          `json:"at_rest"`
	Peak       *int64          `json:"peak"`
	PeakPhase  *string         `json:"peak_phase"`
	PeakUnit   int             `json:"peak_unit"`
	PhasePeaks []phasePeakJSON `json:"phase_peaks"`
	Reserved   int64           `json:"reserved,omitempty"`
	// ReservedMode says how Reserved was obtained
	// (memory.Report.ReservedMode); AllocatorRetries how many times a step
	// the simulated caching allocator released its cache
	// (memory.AllocSim.LastStepRetries), absent where it is not simulated.
	ReservedMode     string          `json:"reserved_mode,omitempty"`
	AllocatorRetries *int            `json:"allocator_retries,omitempty"`
	Device           int64           `json:"device,omitempty"`
	GatherPool       int64           `json:"gather_pool,omitempty"`
	Fits             *bool           `json:"fits"`
	NotApplicable    string          `json:"not_applicable,omitempty"`
	Groups           []groupJSON     `json:"groups,omitempty"`
	Units            []unitJSON      `json:"units,omitempty"`
	Offload          []offloadJSON   `json:"deepspeed_offload,omitempty"`
	Host             *memoryHostJSON `json:"host,omitempty"`
	Warnings         []string        `json:"warnings,omitempty"`
}

// offloadJSON is one row of DeepSpeed's offload estimate.
type offloadJSON struct {
	Stage            int    `json:"stage"`
	OffloadOptimizer bool   `json:"offload_optimizer"`
	OffloadParams    bool   `json:"offload_params"`
	ZeroInit         bool   `json:"zero_init"`
	HostPerNode      int64  `json:"host_per_node"`
	GPU              int64  `json:"gpu"`
	StartupPeak      bool   `json:"host_startup_peak"`
	HostNote         string `json:"host_note"`
}

// memoryHostJSON is the host side of a rank and a node.
type memoryHostJSON struct {
	PerRank     int64  `json:"per_rank"`
	PerNode     int64  `json:"per_node"`
	NVMePerNode int64  `json:"nvme_per_node"`
	Capacity    int64  `json:"capacity"`
	Fits        bool   `json:"fits"`
	Note        string `json:"note"`
}

type componentJSON struct {
	Name        string `json:"name"`
	AtRest      int64  `json:"at_rest"`
	Peak        int64  `json:"peak"`
	PeakPhase   string `json:"peak_phase"`
	AtTotalPeak int64  `json:"at_total_peak"`
	Note        string `json:"note,omitempty"`
}

type phasePeakJSON struct {
	Phase string `json:"phase"`
	Bytes int64  `json:"bytes"`
}

type groupJSON struct {
	Name        string `json:"name"`
	Precision   string `json:"precision"`
	ParamBytes  int64  `json:"param_bytes"`
	GradBytes   int64  `json:"grad_bytes"`
	MasterBytes int64  `json:"master_bytes"`
	ReduceBytes int64  `json:"reduce_bytes"`
	Numel       int64  `json:"numel"`
	Size        int64  `json:"size"`
	ShardElems  int64  `json:"shard_elems"`
	RankNumel   int64  `json:"rank_numel"`
	Buckets     int    `json:"buckets"`
}

type unitJSON struct {
	Name        string `json:"name"`
	Params      int64  `json:"params"`
	Gather      int64  `json:"gather"`
	Grad        int64  `json:"grad"`
	ShardGrad   int64  `json:"shard_grad"`
	ReduceInput int64  `json:"reduce_input"`
	Activation  int64  `json:"activation"`
	Recompute   int64  `json:"recompute"`
}

// mapSlice maps xs through f, keeping nil nil (JSON null) and empty empty.
func mapSlice[T, U any](xs []T, f func(T) U) []U {
	if xs == nil {
		return nil
	}
	out := make([]U, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

func newMemoryJSON(r *memory.Report) *memoryJSON {
	if r == nil {
		return nil
	}
	if r.NotApplicable != "" {
		return &memoryJSON{Scenario: r.Scenario, Estimator: r.Estimator, Convention: r.ConventionName, Stage: r.Stage,
			N: r.N, K: r.K, Shards: r.Shards, Rank: r.Rank, Padding: r.Padding, Params: r.Params, GPUMemory: r.GPUMemory,
			Components: []componentJSON{}, PeakUnit: -1, PhasePeaks: []phasePeakJSON{}, NotApplicable: r.NotApplicable, Warnings: r.Warnings}
	}
	phase := r.PeakPhase.String()
	return &memoryJSON{Scenario: r.Scenario, Estimator: r.Estimator, Convention: r.ConventionName, Stage: r.Stage,
		N: r.N, K: r.K, Shards: r.Shards, Rank: r.Rank, Padding: r.Padding, Params: r.Params, GPUMemory: r.GPUMemory,
		Components: mapSlice(r.Components, func(c memory.Component) componentJSON {
			return componentJSON{Name: c.Name, AtRest: c.AtRest, Peak: c.Peak, PeakPhase: c.PeakPhase.String(), AtTotalPeak: c.AtTotalPeak, Note: c.Note}
		}),
		AtRest: &r.AtRest, Peak: &r.Peak, PeakPhase: &phase, PeakUnit: r.PeakUnit,
		PhasePeaks: mapSlice(r.PhasePeaks, func(p memory.PhasePeak) phasePeakJSON {
			return phasePeakJSON{Phase: p.Phase.String(), Bytes: p.Bytes}
		}),
		Reserved: r.Reserved, ReservedMode: r.ReservedMode, AllocatorRetries: r.AllocSim.SimulatedRetries(), Device: r.Device, GatherPool: r.GatherPoolHeld, Fits: &r.Fits,
		Groups: mapSlice(r.Groups, func(g memory.GroupInfo) groupJSON {
			return groupJSON{Name: g.Name, Precision: g.Precision, ParamBytes: g.ParamBytes, GradBytes: g.GradBytes, MasterBytes: g.MasterBytes, ReduceBytes: g.ReduceBytes,
				Numel: g.Numel, Size: g.Size, ShardElems: g.ShardElems, RankNumel: g.RankNumel, Buckets: g.Buckets}
		}),
		Units: mapSlice(r.Units, func(u memory.UnitInfo) unitJSON {
			return unitJSON{Name: u.Name, Params: u.Params, Gather: u.Gather, Grad: u.Grad, ShardGrad: u.ShardGrad, ReduceInput: u.ReduceInput, Activation: u.Activation, Recompute: u.Recompute}
		}),
		Offload: mapSlice(r.DeepSpeedOffload, func(o memory.DeepSpeedOffloadRow) offloadJSON {
			return offloadJSON{Stage: o.Stage, OffloadOptimizer: o.OffloadOptimizer, OffloadParams: o.OffloadParams, ZeroInit: o.ZeroInit,
				HostPerNode: o.HostPerNode, GPU: o.GPU, StartupPeak: o.StartupPeak, HostNote: o.HostNote}
		}),
		Host: newMemoryHostJSON(r.Host), Warnings: r.Warnings}
}

func newMemoryHostJSON(h *memory.HostMemory) *memoryHostJSON {
	if h == nil {
		return nil
	}
	return &memoryHostJSON{PerRank: h.PerRank, PerNode: h.PerNode, NVMePerNode: h.NVMePerNode, Capacity: h.Capacity, Fits: h.Fits, Note: h.Note}
}
