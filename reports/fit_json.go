package reports

import "github.com/zerosim/zerosim/sweep"

// fitJSON is `zerosim fit --format json`: the fit of a scenario on its
// cluster for every stage and K, exact bytes. The format is this struct,
// not sweep.Fit's layout.
type fitJSON struct {
	// Zerosim and ScenarioSHA256 say what made the fit, as plan.json does
	// (QA25 M3).
	Zerosim        Build  `json:"zerosim"`
	Scenario       string `json:"scenario"`
	ScenarioSHA256 string `json:"scenario_sha256"`
	Params         int64  `json:"params"`
	N              int    `json:"n"`
	DP             int    `json:"dp"`
	CP             int    `json:"cp"`
	GPUs           int    `json:"gpus"`
	Nodes          int    `json:"nodes"`
	GPUsPerNode    int    `json:"gpus_per_node"`
	GPUMemory      int64  `json:"gpu_memory_bytes"`
	Convention     string `json:"convention"`
	Scaling        string `json:"scaling"`
	MaxGPUs        int    `json:"max_gpus"`
	// Replayed: fits and peaks are the replayed step's (zerosim's
	// convention), else the memory model's (a seed's).
	Replayed bool `json:"replayed"`
	// Stack and StackRuns: the stack preset and what it runs, the only
	// stages and K searched (sweep.Fit).
	Stack     string       `json:"stack,omitempty"`
	StackRuns string       `json:"stack_runs,omitempty"`
	Rows      []fitRowJSON `json:"rows"`
	// ToFit is plan's advice when no stage fits on any cluster tried
	// (fitToFit), absent otherwise.
	ToFit string `json:"to_fit,omitempty"`
	// MicroBatch, GradAccum, Recompute and EP are the file's settings
	// every row holds fixed (sweep.Fit); PlanFinds what zerosim plan
	// finds on the given cluster for the stages that do not fit it with
	// room at them (fitPlanText), absent when it was not searched.
	MicroBatch int64          `json:"micro_batch"`
	GradAccum  int64          `json:"grad_accum"`
	Recompute  string         `json:"recompute"`
	EP         int            `json:"ep"`
	PlanFinds  []fitPlanFound `json:"plan_finds,omitempty"`
}

// fitPlanFound is one stage's fastest configuration by zerosim plan's
// search that fits the given cluster: its --set overrides (plan's
// candidate), peak and device peak, and whether the device has room for
// the caching allocator's reserve (false: run's "yes, but … expect
// allocator retries").
type fitPlanFound struct {
	Stage      int      `json:"stage"`
	Sets       []string `json:"sets"`
	Peak       int64    `json:"peak_bytes"`
	DevicePeak int64    `json:"device_peak_bytes"`
	DeviceFits bool     `json:"device_fits"`
}

// planFinds is fitPlanFound for each stage of f.PlanStages that f.Plan
// fits, nil without a plan.
func planFinds(f *sweep.Fit) []fitPlanFound {
	if f.Plan == nil {
		return nil
	}
	var out []fitPlanFound
	for _, st := range f.PlanStages() {
		if r, ok := planBestRow(f.Plan, st); ok {
			out = append(out, fitPlanFound{Stage: st, Sets: r.Candidate.Sets(), Peak: r.PeakMemory, DevicePeak: r.DevicePeak, DeviceFits: r.DeviceFit})
		}
	}
	return out
}

type fitRowJSON struct {
	Stage  int   `json:"stage"`
	K      int   `json:"k"`
	Peak   int64 `json:"peak_bytes"`
	AtRest int64 `json:"at_rest_bytes"`
	Fits   bool  `json:"fits"`
	// DeviceFits: it fits with room on the device for the caching
	// allocator's reserve (sweep.FitRow.Room; the table's "yes†" is
	// Fits without it).
	DeviceFits bool `json:"device_fits"`
	// PeakReplayed: Peak is the replayed step's, as zerosim run reports it
	// (false: the memory model's, which rejects the layout or whose ranks
	// differ); MinPeakReplayed and MaxPeakReplayed the same for MinPeak and
	// MaxPeak.
	PeakReplayed    bool  `json:"peak_replayed"`
	MinDP           int   `json:"min_dp"`
	MinGPUs         int   `json:"min_gpus"`
	MinNodes        int   `json:"min_nodes"`
	MinPeak         int64 `json:"min_peak_bytes"`
	MinPeakReplayed bool  `json:"min_peak_replayed"`
	// MinDevice is the replayed device peak at MinNodes (0: not
	// replayed); DeviceNodes the least nodes from MinNodes on where the
	// device peak fits too (0: none), DevicePeak its device peak.
	MinDevice       int64  `json:"min_device_peak_bytes"`
	DeviceNodes     int    `json:"device_nodes"`
	DevicePeak      int64  `json:"device_nodes_device_peak_bytes"`
	MaxParams       int64  `json:"max_params"`
	MaxLayers       int64  `json:"max_layers,omitempty"`
	MaxPeak         int64  `json:"max_peak_bytes"`
	MaxPeakReplayed bool   `json:"max_peak_replayed"`
	Note            string `json:"note,omitempty"`
}

func newFitJSON(f *sweep.Fit) *fitJSON {
	return &fitJSON{Zerosim: ReadBuild(), Scenario: f.Scenario, ScenarioSHA256: f.ScenarioSHA256, Params: f.Params, N: f.N, DP: f.DP, CP: f.CP, GPUs: f.GPUs, Nodes: f.Nodes,
		GPUsPerNode: f.GPUsPerNode, GPUMemory: f.GPUMemory, Convention: f.Convention, Scaling: f.Scaling, MaxGPUs: f.MaxGPUs, Replayed: f.Replayed,
		Rows: mapSlice(f.Rows, func(r sweep.FitRow) fitRowJSON {
			return fitRowJSON{Stage: r.Stage, K: r.K, Peak: r.Peak, AtRest: r.AtRest, Fits: r.Fits, DeviceFits: r.Room(), PeakReplayed: r.PeakReplayed, MinDP: r.MinDP, MinGPUs: r.MinGPUs,
				MinNodes: r.MinNodes, MinPeak: r.MinPeak, MinPeakReplayed: r.MinPeakReplayed, MinDevice: r.MinDevice, DeviceNodes: r.DeviceNodes, DevicePeak: r.DevicePeak, MaxParams: r.MaxParams, MaxLayers: r.MaxLayers, MaxPeak: r.MaxPeak,
				MaxPeakReplayed: r.MaxPeakReplayed, Note: r.Note()}
		}), ToFit: fitToFit(f), MicroBatch: f.MicroBatch, GradAccum: f.GradAccum, Recompute: f.Recompute, EP: f.EP, PlanFinds: planFinds(f)}
}
