package zero

import (
	"cmp"
	"slices"

	"github.com/zerosim/zerosim/collectives"
	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/topology"
	"github.com/zerosim/zerosim/units"
)

// Result is one replayed training step.
type Result struct {
	Name    string
	Stage   int
	N, K    int
	Overlap bool
	// Timing names what timed the collectives: NCCL's cost model
	// (calibrated or not) or the alpha–beta lowering.
	Timing string
	// Calibration is the calibration file the scenario names and the
	// parts of it the run applied (CalibrationUse); nil without one.
	Calibration *CalibrationUse
	StepTime    units.Duration
	// Compute is the nominal compute time of one rank (forward, backward,
	// optimizer: the compute stream's tasks, Task.IsCompute), the lower
	// bound of the step.
	Compute units.Duration
	Ranks   []RankStats
	// Collectives lists every collective instance in start order (none
	// under Options.NoCollectives or past Options.MaxCollectives);
	// CollectiveCount counts them (a group kind's instances per task).
	Collectives     []CollectiveRecord
	CollectiveCount int64
	// Phases holds the bytes of each phase that moved any: logical volume as
	// the seeds count it, exact per-rank send volume, and wire bytes per
	// link class.
	Phases       []PhaseBytes
	CriticalPath []PathStep
	Straggler    *Straggler
	// Degraded lists the scenario's links slower than their class
	// (scenarios.Cluster.DegradedLinks).
	Degraded []scenarios.DegradedLink
	// Latency is what NCCL's cost model charges the busiest rank's
	// collectives per call, beside what it charges for their bytes; nil
	// when the collectives are not timed by that model (the alpha–beta
	// lowerings) or the rank runs none.
	Latency *LatencyTerm
	// Symmetric is set when the fast path simulated one representative per
	// rank class instead of every rank.
	Symmetric bool
	// Asymmetry is why the fast path could not stand node 0's ranks for
	// all (the Asymmetry of the scenario); "" when Symmetric or under
	// Options.Full.
	Asymmetry string
	// Events is the number of engine events run.
	Events int64
	// Schedule is the task template every rank ran.
	Schedule *Schedule
	// Spans holds the per-rank task timelines (rank-major) when kept: every
	// rank's, or the first Options.SpanRanks ranks'.
	Spans [][]Span
	// NotableSpans holds, under Options.SpanNotable, the timelines of the
	// ranks Notable names that Spans leaves out, by rank.
	NotableSpans map[int][]Span
	// MemoryModel is the analytic memory report the timeline follows;
	// Memory is the timeline of Options.MemoryRank and PeakMemory every
	// rank's peak in bytes.
	MemoryModel *memory.Report
	Memory      MemoryTimeline
	PeakMemory  []int64
	// Host is the host side of one rank's step under offload (offload.go);
	// nil without offload.
	Host *HostStats
	// ReservedPeak and DevicePeak are the busiest rank's peak as PyTorch's
	// caching allocator reserves it and as nvidia-smi shows it
	// (memory.ProfilerPeaks).
	ReservedPeak, DevicePeak int64
	// DeviceNeed is what the device needs at the replayed peak (Peak):
	// the allocated bytes with the CUDA context and NCCL's buffers, no
	// reserve (memory.DeviceNeed). Fits judges by it.
	DeviceNeed int64
	// Utilization is tokens per step, tokens/s per GPU, MFU and HFU.
	Utilization Utilization
	Warnings    []string
	// Tokens is the number of tokens one optimizer step trains: micro_batch
	// · grad_accum · dp sequences of seq_len tokens (cp ranks share a
	// sequence).
	Tokens int64
}

// TokensPerSecPerGPU is the step's tokens over its time and the N GPUs.
func (r *Result) TokensPerSecPerGPU() float64 {
	if r.StepTime <= 0 || r.N <= 0 {
		return 0
	}
	return float64(r.Tokens) / r.StepTime.Seconds() / float64(r.N)
}

// Peak is the replayed step's memory peak: the largest of every rank's
// peak over the step (PeakMemory) and the timeline's, and the rank that
// reaches it first. It is the figure every command that replays judges
// "fits" by (run, plan, sweep, compare); the memory model (MemoryModel),
// which walks the step in order rather than in time, can be lower (buffers
// alive at once only in time, such as gradients waiting for reduce-scatters
// queued behind all-gathers on a slow network) or higher.
func (r *Result) Peak() (bytes int64, rank int) {
	bytes, rank = r.Memory.Peak, r.Memory.Rank
	for i, p := range r.PeakMemory {
		if p > bytes {
			bytes, rank = p, i
		}
	}
	return bytes, rank
}

// Fits reports whether the replayed step fits capacity bytes of GPU
// memory: its peak (Peak) and what the device needs there (DeviceNeed: the
// peak with the CUDA context and NCCL's buffers, which live outside the
// caching allocator) within it; false when capacity is unknown (≤ 0), as
// the memory model's Fits. The allocator's reserve above the peak is not
// counted: short of memory it gives cached blocks back and retries
// (memory.DeviceNeed cites the source), so a step whose device peak with
// the reserve exceeds the GPU runs with retries, as published runs did.
// Where the reserve is simulated (memory.SimulatesReserve) and the
// simulated allocator runs out of memory even after releasing its cache
// (AllocatorOOM), the step does not fit either.
func (r *Result) Fits(capacity int64) bool {
	p, _ := r.Peak()
	return capacity > 0 && p <= capacity && r.DeviceNeed <= capacity && r.AllocatorOOM() == nil
}

// AllocatorOOM is the simulated caching allocator's run, when it ran out
// of memory within the GPU (memory.AllocSim.OOM), else nil.
func (r *Result) AllocatorOOM() *memory.AllocSim {
	if m := r.MemoryModel; m != nil && m.AllocSim != nil && m.AllocSim.OOM != nil {
		return m.AllocSim
	}
	return nil
}

// Verdict is the step's answer to "does it fit capacity bytes", the one
// every report gives (memory.VerdictOf): Fits, then the device peak
// (DevicePeak: the allocator's reserve, the CUDA context and NCCL's
// buffers added) within capacity with no allocator retries in the steady
// state (AllocRetries, the last step's). Where the reserve is simulated
// within the GPU (memory.AllocSim.Limit), DevicePeak is capped there and
// the retries say what the cap hides.
func (r *Result) Verdict(capacity int64) memory.Verdict {
	var a *memory.AllocSim
	if m := r.MemoryModel; m != nil {
		a = m.AllocSim
	}
	return memory.VerdictOf(r.Fits(capacity), r.DevicePeak, capacity, a)
}

// DeviceFits reports whether the step fits capacity bytes with room for
// the caching allocator's reserve (Verdict memory.FitsWithRoom); false
// when capacity is unknown (≤ 0), the step does not fit, or the simulated
// allocator ran out (AllocatorOOM).
func (r *Result) DeviceFits(capacity int64) bool {
	return r.Verdict(capacity) == memory.FitsWithRoom
}

// AllocRetries is how many times a step the simulated caching allocator
// released its cache to stay within the GPU: in the last step it replayed,
// the steady state (memory.AllocSim.LastStepRetries; the first steps'
// retries, while the reserve grows, need not recur); 0 when the reserve is
// not simulated.
func (r *Result) AllocRetries() int {
	if m := r.MemoryModel; m != nil && m.AllocSim != nil {
		return m.AllocSim.LastStepRetries()
	}
	return 0
}

// ReservedMode is how ReservedPeak was obtained
// (memory.Report.ReservedMode: "simulated-default", "overhead 0.15
// (default)", …); empty without a memory model.
func (r *Result) ReservedMode() string {
	if m := r.MemoryModel; m != nil {
		return m.ReservedMode
	}
	return ""
}

// SimulatedRetries is AllocRetries where the reserve is simulated, nil
// where it is a fraction: what the machine-readable outputs give as
// allocator_retries.
func (r *Result) SimulatedRetries() *int {
	if m := r.MemoryModel; m != nil {
		return m.AllocSim.SimulatedRetries()
	}
	return nil
}

// CollectiveRecord is one collective instance: a task of a group.
type CollectiveRecord struct {
	Task       int32
	Kind       Kind
	Phase      Phase
	Group      GroupKind
	GroupIndex int
	Ranks      int
	Bytes      int64
	// Algo is the algorithm that ran (NCCL's choice at this size with
	// auto); in the symmetric run, a group it did not lower ran its
	// lowered copies' (Auto when it lowered none).
	Algo       collectives.Algo
	Start, End units.Duration
}

// PhaseBytes is the traffic of one phase of the step.
type PhaseBytes struct {
	Phase Phase
	// Logical is the per-rank volume as the seeds count it: S for an
	// all-gather or reduce-scatter of S bytes, 2S for an all-reduce.
	Logical int64
	// Sent is the exact bytes one rank sends in a ring: (n−1)/n·S, or
	// 2(n−1)/n·S for an all-reduce.
	Sent int64
	// Wire is the total bytes over each link class (all ranks), and
	// MaxRankWire the busiest rank's sent bytes per class, indexed by
	// topology.Class.
	Wire        [topology.NumClasses]int64
	MaxRankWire [topology.NumClasses]int64
	Collectives int
	// Algos splits Collectives by the algorithm each ran (NCCL's choice
	// under auto, which follows the size), in Algo order; the phase's
	// collectives on rank 0, as Collectives counts them.
	Algos []AlgoCount
	// Dispatcher names the MoE token dispatcher of an all-to-all phase
	// when it is a deduplicating one (communication.moe_dispatcher deepep,
	// flex, hybridep: each dispatch and combine is two all-to-alls, over
	// the ep group's rail and node, see builder.a2aAfter); empty under the
	// default alltoall dispatcher.
	Dispatcher scenarios.MoEDispatcher
}

// AlgoCount is how many of a phase's collectives ran one algorithm.
type AlgoCount struct {
	Algo  collectives.Algo
	Count int
}

// addAlgo adds n collectives of algorithm a to list, kept in Algo order.
func addAlgo(list []AlgoCount, a collectives.Algo, n int) []AlgoCount {
	i, found := slices.BinarySearchFunc(list, a, func(c AlgoCount, a collectives.Algo) int { return cmp.Compare(c.Algo, a) })
	if found {
		list[i].Count += n
		return list
	}
	return slices.Insert(list, i, AlgoCount{a, n})
}

// Logical returns the seed-accounting volume of one collective on S bytes.
func Logical(k Kind, s int64) int64 {
	if k == AllReduce {
		return 2 * s
	}
	return s
}

// PhaseTotal returns the logical bytes per rank summed over phases.
func (r *Result) PhaseTotal() (logical, sent int64) {
	for _, p := range r.Phases {
		logical += p.Logical
		sent += p.Sent
	}
	return
}

func sortRecords(rs []CollectiveRecord) {
	slices.SortStableFunc(rs, func(a, b CollectiveRecord) int {
		if c := cmp.Compare(a.Start, b.Start); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Task, b.Task); c != 0 {
			return c
		}
		return cmp.Compare(a.GroupIndex, b.GroupIndex)
	})
}

// LatencyTerm splits the NCCL model's time of one rank's collectives
// (collectives.Choice: Time = Latency + bytes / AlgBW) into its latency
// term, paid once per collective whatever its size (base latency, launch
// cost and per-hop latency times the hops of the algorithm: a ring's grows
// with its ranks), and the rest.
type LatencyTerm struct {
	Rank        int
	Collectives int
	// Latency and Modelled are the latency term and the model's whole time
	// (alone on the links) summed over the rank's collectives.
	Latency, Modelled units.Duration
	// MaxRanks is the largest group among them.
	MaxRanks int
}

// ExposedShareDenom makes communication exposed for at least
// 1/ExposedShareDenom of a step (a quarter) enough for a finding to name
// the network: LatencyBound's, and calibrate's note beside a low fitted
// efficiency. It chooses when a finding is raised, not any time: zerosim's
// threshold, not measured (each finding says or replays what it rests on).
const ExposedShareDenom = 4

// LatencyBound reports whether the step's exposed communication is mostly
// NCCL's per-collective latency: communication is exposed for at least
// 1/ExposedShareDenom of the step (averaged over the ranks) and the
// latency term is at least half of the model's time of the busiest rank's
// collectives. The two fractions choose when run's findings raise it, not
// any time: they are zerosim's, not measured (the finding replays its
// levers, which is what it reports).
func (r *Result) LatencyBound() bool {
	if r.Latency == nil || r.StepTime <= 0 || len(r.Ranks) == 0 {
		return false
	}
	var exposed units.Duration
	for _, st := range r.Ranks {
		exposed += st.ExposedComm
	}
	return ExposedShareDenom*int64(exposed) >= int64(r.StepTime)*int64(len(r.Ranks)) && 2*r.Latency.Latency >= r.Latency.Modelled
}

// SeenPeaks is ReservedPeak and DevicePeak as a profiler and nvidia-smi
// can show them on a GPU of capacity bytes (memory.SeenPeaks): capped at
// the GPU when the step fits (DeviceNeed within capacity) with allocator
// retries; capped says so. ReservedPeak and DevicePeak stay the demand,
// which Verdict judges by.
func (r *Result) SeenPeaks(capacity int64) (reserved, device int64, capped bool) {
	return memory.SeenPeaks(r.ReservedPeak, r.DevicePeak, r.DeviceNeed, capacity)
}
