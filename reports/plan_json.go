package reports

import (
	"slices"
	"strings"

	"github.com/zerosim/zerosim/sweep"
)

// planJSON is `zerosim plan --format json` (and plan.json): the search
// result, the reason the best row wins and, with --network, the bandwidth
// each stage needs. The format is these structs, not sweep.Plan's layout.
type planJSON struct {
	// Zerosim, ScenarioSHA256 and Sets say what made the plan, as run's
	// JSON (zerosim) and sweep's meta line (scenario_sha256, sets) do;
	// Reproduce is the command that replays the winner (ReproduceArgs,
	// shell-quoted), ReproduceSets its --set overrides in order.
	Zerosim           Build         `json:"zerosim"`
	Scenario          string        `json:"scenario"`
	ScenarioSHA256    string        `json:"scenario_sha256"`
	Sets              []string      `json:"sets"`
	Reproduce         string        `json:"reproduce,omitempty"`
	ReproduceSets     []string      `json:"reproduce_sets,omitempty"`
	Model             string        `json:"model"`
	Params            int64         `json:"params"`
	Nodes             int           `json:"nodes"`
	GPUs              int           `json:"gpus"`
	GPUsPerNode       int           `json:"gpus_per_node"`
	GPU               string        `json:"gpu"`
	GPUMemory         int64         `json:"gpu_memory_bytes"`
	PeakFLOPS         int64         `json:"peak_flops"`
	N                 int           `json:"n"`
	DP                int           `json:"dp"`
	CP                int           `json:"cp"`
	SeqLen            int64         `json:"seq_len"`
	GlobalBatch       int64         `json:"global_batch"`
	TokensPerStep     int64         `json:"tokens_per_step"`
	Searched          int           `json:"searched"`
	MemoryPruned      int           `json:"memory_pruned"`
	Replayed          int           `json:"replayed"`
	Invalid           int           `json:"invalid"`
	FirstInvalid      string        `json:"first_invalid,omitempty"`
	Rows              []planRowJSON `json:"rows"`
	Smallest          candidateJSON `json:"smallest"`
	SmallestPeak      int64         `json:"smallest_peak_bytes"`
	SearchedStages    []int         `json:"searched_stages"`
	SearchedRecompute []string      `json:"searched_recompute"`
	SearchedCP        []int         `json:"searched_cp,omitempty"`
	SearchedEP        []int         `json:"searched_ep,omitempty"`
	// The other lists searched (sweep.Plan), the keys a --set pinned and
	// the stack whose stages and K bound the search.
	SearchedK            []int    `json:"searched_k"`
	SearchedMicroBatches []int64  `json:"searched_micro_batches"`
	SearchedBuckets      []int64  `json:"searched_bucket_sizes_bytes"`
	SearchedPrefetch     []int    `json:"searched_prefetch_depths"`
	SearchedAlgorithms   []string `json:"searched_algorithms"`
	Pinned               []string `json:"pinned,omitempty"`
	RequireDeviceFit     bool     `json:"require_device_fit,omitempty"`
	Stack                string   `json:"stack,omitempty"`
	StackRuns            string   `json:"stack_runs,omitempty"`
	SkippedCP            []string `json:"skipped_cp,omitempty"`
	NodesToFit           int      `json:"nodes_to_fit,omitempty"`
	NodesToRoom          int      `json:"nodes_to_room,omitempty"`
	OffloadSets          []string `json:"offload_sets,omitempty"`
	OffloadPeak          int64    `json:"offload_peak_bytes,omitempty"`
	LossSets             []string `json:"loss_sets,omitempty"`
	LossPeak             int64    `json:"loss_peak_bytes,omitempty"`
	// PickAtFits is the winner at the published runs' fits on its GPU
	// (sweep.Plan.PickAtFits), as result.json's at_published_fits.
	PickAtFits *publishedFitsJSON `json:"pick_at_published_fits,omitempty"`
	Reason     string             `json:"reason"`
	NoFit      string             `json:"no_fit,omitempty"`
	Tokens     int64              `json:"train_tokens,omitempty"`
	Hours      float64            `json:"gpu_hours,omitempty"`
	Network    *networkPlanJSON   `json:"network,omitempty"`
}

// candidateJSON is one configuration (sweep.Candidate); a row's fields
// come first in the row's object.
type candidateJSON struct {
	// CP and DP are set when the plan searched cp (sweep.Candidate).
	CP int `json:"cp,omitempty"`
	DP int `json:"dp,omitempty"`
	// EP is set when the plan searched ep (sweep.Candidate).
	EP         int    `json:"ep,omitempty"`
	Stage      int    `json:"zero_stage"`
	K          int    `json:"k"`
	MicroBatch int64  `json:"micro_batch"`
	GradAccum  int64  `json:"grad_accum"`
	Recompute  string `json:"recompute"`
	BucketSize int64  `json:"bucket_size_bytes,omitempty"`
	Prefetch   int    `json:"prefetch_depth"`
	Algorithm  string `json:"algorithm"`
}

type planRowJSON struct {
	candidateJSON
	StepTime       int64 `json:"step_time_ps"`
	Compute        int64 `json:"compute_ps"`
	ExposedComm    int64 `json:"exposed_comm_ps"`
	Slowed         int64 `json:"slowed_compute_ps"`
	Wait           int64 `json:"wait_ps"`
	NetworkBytes   int64 `json:"network_bytes"`
	NVLinkBytes    int64 `json:"nvlink_bytes"`
	NetworkBusiest int64 `json:"network_busiest_bytes"`
	PeakMemory     int64 `json:"peak_memory_bytes"`
	Headroom       int64 `json:"headroom_bytes"`
	DevicePeak     int64 `json:"device_peak_bytes"`
	// ReservedMode and AllocatorRetries are run's reserved_mode and
	// allocator_retries (sweep.PlanRow).
	ReservedMode       string  `json:"reserved_mode,omitempty"`
	AllocatorRetries   *int    `json:"allocator_retries,omitempty"`
	TokensPerSecPerGPU float64 `json:"tokens_per_s_per_gpu"`
	MFU                float64 `json:"mfu"`
	Pareto             bool    `json:"pareto"`
}

type networkPlanJSON struct {
	Scenario      string               `json:"scenario"`
	Tolerance     float64              `json:"tolerance"`
	NominalPerGPU float64              `json:"nominal_per_gpu_bandwidth"`
	Stages        []stageBandwidthJSON `json:"stages"`
}

type stageBandwidthJSON struct {
	Stage        int            `json:"stage"`
	K            int            `json:"k"`
	Config       *candidateJSON `json:"config,omitempty"`
	NoFit        bool           `json:"config_does_not_fit,omitempty"`
	ComputeBound int64          `json:"compute_bound_ps"`
	Target       int64          `json:"target_ps"`
	NICBandwidth int64          `json:"nic_bandwidth"`
	PerGPU       float64        `json:"per_gpu_bandwidth"`
	Step         int64          `json:"step_ps"`
	NominalStep  int64          `json:"nominal_step_ps"`
	// ComputeRank is the rank whose compute at its cluster.gpu_overrides
	// speed is the compute-bound time, absent when every rank's is;
	// FullSpeedCompute is the compute at full speed then.
	ComputeRank      *int   `json:"compute_rank,omitempty"`
	FullSpeedCompute int64  `json:"full_speed_compute_ps,omitempty"`
	Note             string `json:"note,omitempty"`
	// Above splits the step at 25 TB/s per NIC above compute where no
	// bandwidth reaches the target (sweep.Remainder).
	Above *remainderJSON       `json:"above_compute,omitempty"`
	Curve []bandwidthPointJSON `json:"curve"`
}

type remainderJSON struct {
	Step         int64   `json:"step_ps"`
	Slowed       int64   `json:"slowed_compute_ps"`
	Interference float64 `json:"compute_interference"`
	Exposed      int64   `json:"exposed_comm_ps"`
	Waiting      int64   `json:"waiting_ps"`
	// Links is what cluster.link_overrides add to the step at 25 TB/s
	// (the sweep keeps them), Free the step there without them.
	Links         int64   `json:"link_overrides_ps,omitempty"`
	Free          int64   `json:"without_link_overrides_step_ps,omitempty"`
	PlateauNIC    int64   `json:"plateau_nic_bandwidth"`
	PlateauPerGPU float64 `json:"plateau_per_gpu_bandwidth"`
	PlateauStep   int64   `json:"plateau_step_ps"`
}

type bandwidthPointJSON struct {
	PerGPU float64 `json:"per_gpu_bandwidth"`
	Step   int64   `json:"step_ps"`
}

func newCandidateJSON(c sweep.Candidate) candidateJSON {
	return candidateJSON{CP: c.CP, DP: c.DP, EP: c.EP, Stage: c.Stage, K: c.K, MicroBatch: c.MicroBatch, GradAccum: c.GradAccum, Recompute: c.Recompute,
		BucketSize: c.BucketBytes(), Prefetch: c.Prefetch, Algorithm: c.Algorithm}
}

// newPlanJSON is the plan's JSON without what the report adds (reason,
// no-fit text, training time).
func newPlanJSON(p *sweep.Plan, np *sweep.NetworkPlan) *planJSON {
	o := &planJSON{Scenario: p.Scenario, Model: p.Model, Params: p.Params, Nodes: p.Nodes, GPUs: p.GPUs, GPUsPerNode: p.GPUsPerNode,
		GPU: p.GPU, GPUMemory: p.GPUMemory, PeakFLOPS: p.PeakFLOPS, N: p.N, DP: p.DP, CP: p.CP, SeqLen: p.SeqLen,
		GlobalBatch: p.GlobalBatch, TokensPerStep: p.TokensPerStep, Searched: p.Searched, MemoryPruned: p.MemoryPruned,
		Replayed: p.Replayed, Invalid: p.Invalid, FirstInvalid: p.FirstInvalid,
		Rows: mapSlice(p.Rows, func(r sweep.PlanRow) planRowJSON {
			cj := newCandidateJSON(r.Candidate)
			cj.BucketSize = r.ReplayedBucket // the size replayed, the stack's too
			return planRowJSON{candidateJSON: cj, StepTime: r.StepTime, Compute: r.Compute,
				ExposedComm: r.ExposedComm, Slowed: r.Slowed, Wait: r.Wait, NetworkBytes: r.NetworkBytes, NVLinkBytes: r.NVLinkBytes, NetworkBusiest: r.NetworkBusiest,
				PeakMemory: r.PeakMemory, Headroom: r.Headroom, DevicePeak: r.DevicePeak,
				ReservedMode: r.ReservedMode, AllocatorRetries: r.SimulatedRetries, TokensPerSecPerGPU: r.TokensPerSecPerGPU, MFU: r.MFU, Pareto: r.Pareto}
		}),
		Smallest: newCandidateJSON(p.Smallest), SmallestPeak: p.SmallestPeak, SearchedStages: p.SearchedStages,
		SearchedRecompute: p.SearchedRecompute, SearchedCP: p.SearchedCP, SearchedEP: p.SearchedEP, SkippedCP: p.SkippedCP, NodesToFit: p.NodesToFit, NodesToRoom: p.NodesToRoom, OffloadSets: p.OffloadSets, OffloadPeak: p.OffloadPeak,
		LossSets: p.LossSets, LossPeak: p.LossPeak, PickAtFits: newPublishedFitsJSON(p.PickAtFits),
		Network: newNetworkPlanJSON(np)}
	if o.Rows == nil {
		o.Rows = []planRowJSON{} // [] when nothing fits, never null
	}
	o.Zerosim, o.ScenarioSHA256, o.Sets = ReadBuild(), p.ScenarioSHA256, p.Sets
	if o.Sets == nil {
		o.Sets = []string{}
	}
	if args := ReproduceArgs(p); args != nil {
		o.Reproduce = strings.Join(mapSlice(args, ShellQuote), " ")
		o.ReproduceSets = append(slices.Clone(p.Sets), p.WinnerSets...)
	}
	o.SearchedK, o.SearchedMicroBatches, o.SearchedPrefetch, o.SearchedAlgorithms = p.SearchedK, p.SearchedMicroBatches, p.SearchedPrefetch, p.SearchedAlgorithms
	for _, b := range p.SearchedBuckets {
		o.SearchedBuckets = append(o.SearchedBuckets, sweep.Candidate{BucketSize: b}.BucketBytes())
	}
	o.Pinned, o.Stack, o.StackRuns, o.RequireDeviceFit = p.Pinned, p.Stack, p.StackRuns, p.RequireDeviceFit
	return o
}

func newRemainderJSON(a *sweep.Remainder) *remainderJSON {
	if a == nil {
		return nil
	}
	return &remainderJSON{Step: a.Step, Slowed: a.Slowed, Interference: a.Interference, Exposed: a.Exposed, Waiting: a.Waiting,
		PlateauNIC: a.PlateauNIC, PlateauPerGPU: a.PlateauPerGPU, PlateauStep: a.PlateauStep, Links: a.Links, Free: a.Free}
}

func newNetworkPlanJSON(np *sweep.NetworkPlan) *networkPlanJSON {
	if np == nil {
		return nil
	}
	return &networkPlanJSON{Scenario: np.Scenario, Tolerance: np.Tolerance, NominalPerGPU: np.NominalPerGPU,
		Stages: mapSlice(np.Stages, func(s sweep.StageBandwidth) stageBandwidthJSON {
			var cfg *candidateJSON
			if s.Config != nil {
				c := newCandidateJSON(*s.Config)
				cfg = &c
			}
			j := stageBandwidthJSON{Stage: s.Stage, K: s.K, Config: cfg, NoFit: s.NoFit, ComputeBound: s.ComputeBound, Target: s.Target,
				NICBandwidth: s.NICBandwidth, PerGPU: s.PerGPU, Step: s.Step, NominalStep: s.NominalStep, Note: networkNote(s, np.Tolerance), Above: newRemainderJSON(s.Above),
				Curve: mapSlice(s.Curve, func(b sweep.BandwidthPoint) bandwidthPointJSON {
					return bandwidthPointJSON{PerGPU: b.PerGPU, Step: b.Step}
				})}
			if s.FullSpeedCompute > 0 && s.ComputeBound != s.FullSpeedCompute {
				j.ComputeRank, j.FullSpeedCompute = &s.ComputeRank, s.FullSpeedCompute
			}
			return j
		})}
}
