package reports

import (
	"io"
	"slices"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/sweep"
	"github.com/zerosim/zerosim/topology"
	"gopkg.in/yaml.v3"
)

// MaxListedCollectives is the most collective instances result.json lists
// (beyond it, their count stays): what a replay need record
// (zero.Options.MaxCollectives).
const MaxListedCollectives = 20000

// Limits above which result.json leaves out the other bulky lists (their
// counts stay).
const (
	jsonMaxSpans  = 2000 // ranks × tasks
	jsonMaxPoints = 20000
)

// runJSON is result.json: the replayed step with exact integers (bytes,
// picoseconds), phases and kinds as strings, and the memory report of the
// scenario's stage. Field order is fixed by the struct.
type runJSON struct {
	Zerosim  Build  `json:"zerosim"`
	Scenario string `json:"scenario"`
	// ScenarioSHA256 is scenarios.Digest of the resolved scenario, as
	// sweep's meta line, plan.json and the other JSON outputs carry it;
	// the table prints its first 12 digits as "resolved: sha256".
	ScenarioSHA256 string `json:"scenario_sha256"`
	Model          string `json:"model"`
	Params         int64  `json:"params"`
	// ActiveParams is the parameters one token goes through, when fewer
	// than Params (mixture of experts).
	ActiveParams int64  `json:"active_params,omitempty"`
	Stage        int    `json:"stage"`
	N            int    `json:"n"`
	K            int    `json:"k"`
	Algorithm    string `json:"algorithm"`
	// NCCLAlgo and NCCLProto are communication.nccl_algo and nccl_proto,
	// NCCL_ALGO and NCCL_PROTO as they pin NCCL's tuner; absent unset.
	NCCLAlgo  string `json:"nccl_algo,omitempty"`
	NCCLProto string `json:"nccl_proto,omitempty"`
	// Calibration is the calibration file the scenario used and the parts
	// of it applied (CalibrationUse); absent without one.
	Calibration *CalibrationUse `json:"calibration,omitempty"`
	Overlap     bool            `json:"overlap"`
	Symmetric   bool            `json:"symmetric"`
	Events      int64           `json:"events"`
	StepTimePS  int64           `json:"step_time_ps"`
	ComputePS   int64           `json:"compute_ps"`
	LinkClasses []string        `json:"link_classes"`
	// Tokens per optimizer step and tokens/s per GPU (3 decimals).
	TokensPerStep      int64   `json:"tokens_per_step"`
	TokensPerSecPerGPU float64 `json:"tokens_per_s_per_gpu"`
	// Utilization (zero.Utilization) and the busiest rank's peak as the
	// caching allocator reserves it and as nvidia-smi shows it;
	// DeviceNeedBytes what the device needs at the peak (the CUDA context
	// and NCCL's buffers with it, no reserve: zero.Result.DeviceNeed), the
	// figure fits is judged by and plan's headroom_bytes is counted from.
	MFU               float64 `json:"mfu"`
	HFU               float64 `json:"hfu"`
	Executed          float64 `json:"executed_utilization"`
	ReservedPeakBytes int64   `json:"reserved_peak_bytes"`
	DevicePeakBytes   int64   `json:"device_peak_bytes"`
	DeviceNeedBytes   int64   `json:"device_need_bytes"`
	// ReservedMode says how the reserved peak was obtained
	// (memory.Report.ReservedMode); AllocatorRetries how many times a step
	// the simulated caching allocator released its cache to stay within
	// the GPU (zero.Result.AllocRetries, the last simulated step's), absent
	// where the reserve is not simulated.
	ReservedMode     string `json:"reserved_mode,omitempty"`
	AllocatorRetries *int   `json:"allocator_retries,omitempty"`
	// Fits is the run's verdict, what --require-fit decides and run's
	// "fits in GPU memory" says (Run.Fit, zero.Result.Fits): the busiest
	// rank's replayed peak, and with the CUDA context and NCCL's buffers
	// what the device needs there, within the GPU's memory; DeviceFits the
	// device peak's (the allocator's reserve too), as a
	// sweep row's fits and device_fits (false without a GPU memory).
	Fits       bool `json:"fits"`
	DeviceFits bool `json:"device_fits"`
	// AtPublishedFits is the step at the published runs' fits on its GPU
	// (Run.AtFits), absent unless the scenario runs at zerosim's default
	// GEMM efficiency and a published run is on that GPU.
	AtPublishedFits *publishedFitsJSON `json:"at_published_fits,omitempty"`

	Ranks       []rankJSON     `json:"ranks"`
	Straggler   *stragglerJSON `json:"straggler"`
	Phases      []phaseJSON    `json:"phases"`
	Totals      totalsJSON     `json:"totals"`
	Critical    []pathStepJSON `json:"critical_path"`
	Memory      runMemoryJSON  `json:"memory"`
	MemoryModel *memoryJSON    `json:"memory_model"`
	Findings    []string       `json:"findings"`
	Warnings    []string       `json:"warnings"`
	// Host is the host side of an offloaded step (run_host.go).
	Host      *runHostJSON     `json:"host,omitempty"`
	Colls     []collectiveJSON `json:"collectives,omitempty"`
	CollCount int64            `json:"collective_count"`
	Spans     [][]spanJSON     `json:"spans,omitempty"`

	// Files are the files the scenario read (scenarios.Scenario.ReadFiles:
	// model.hf_config, communication.calibration) with the SHA-256 of the
	// bytes read, as a sweep's meta line records them; absent when it
	// read none.
	Files []scenarios.ReadFile `json:"files,omitempty"`
	// Resolved is the scenario as resolved (presets expanded, defaults
	// and --set applied, the files it read named by absolute path:
	// scenarios.Replayable), re-encoded from YAML: saved as a file, it
	// replays this step again from any directory.
	Resolved any `json:"resolved_scenario"`
}

// rankJSON is one rank's split of the step.
type rankJSON struct {
	Rank               int   `json:"rank"`
	EndPS              int64 `json:"end_ps"`
	ComputePS          int64 `json:"compute_ps"`
	ExposedCommPS      int64 `json:"exposed_comm_ps"`
	ExposedAllGatherPS int64 `json:"exposed_all_gather_ps"`
	WaitPS             int64 `json:"wait_ps"`
	IdlePS             int64 `json:"idle_ps"`
	PeakMemory         int64 `json:"peak_memory_bytes"`
	// StandsFor lists, on the symmetric fast path, the ranks this record
	// stands for (identical figures), as ranges; empty when it is one rank.
	StandsFor []rankRange `json:"stands_for,omitempty"`
}

// rankRange is the ranks first…last, both included.
type rankRange struct {
	First int `json:"first"`
	Last  int `json:"last"`
}

// stragglerJSON is zero.Straggler.
type stragglerJSON struct {
	Rank            int   `json:"rank"`
	CausedPS        int64 `json:"caused_wait_ps"`
	ComputePS       int64 `json:"compute_ps"`
	MedianComputePS int64 `json:"median_compute_ps"`
}

// phaseJSON is the traffic of one phase.
type phaseJSON struct {
	Phase       string         `json:"phase"`
	Collectives int            `json:"collectives"`
	Algorithms  map[string]int `json:"algorithms"`
	Logical     int64          `json:"logical_bytes_per_rank"`
	Sent        int64          `json:"sent_bytes_per_rank"`
	Wire        []classJSON    `json:"wire"`
	// Dispatcher: the deduplicating MoE token dispatcher of an all-to-all
	// phase (omitted under alltoall).
	Dispatcher string `json:"dispatcher,omitempty"`
}

// classJSON is the wire bytes of one link class: all ranks and the busiest.
type classJSON struct {
	Class   string `json:"class"`
	Total   int64  `json:"total_bytes"`
	Busiest int64  `json:"busiest_rank_bytes"`
}

// totalsJSON sums the phases (the busiest rank may differ by phase, so
// only all-rank wire totals are summed).
type totalsJSON struct {
	Logical int64            `json:"logical_bytes_per_rank"`
	Sent    int64            `json:"sent_bytes_per_rank"`
	Wire    []classTotalJSON `json:"wire"`
}

// classTotalJSON is the wire bytes of one link class over all ranks.
type classTotalJSON struct {
	Class string `json:"class"`
	Total int64  `json:"total_bytes"`
}

// pathStepJSON is one task of the critical path.
type pathStepJSON struct {
	Rank    int    `json:"rank"`
	Task    int32  `json:"task"`
	Name    string `json:"name"`
	StartPS int64  `json:"start_ps"`
	EndPS   int64  `json:"end_ps"`
	// OnPathPS is zero.PathStep.OnPath.
	OnPathPS int64 `json:"on_path_ps"`
}

// runMemoryJSON is the memory timeline of the memory rank.
type runMemoryJSON struct {
	Rank         int               `json:"rank"`
	Components   []string          `json:"components"`
	AtRest       []int64           `json:"at_rest_bytes"`
	Peak         int64             `json:"peak_bytes"`
	PeakTimePS   int64             `json:"peak_time_ps"`
	PeakTask     int32             `json:"peak_task"`
	PeakTaskName string            `json:"peak_task_name"`
	PointCount   int               `json:"point_count"`
	Points       []memoryPointJSON `json:"points,omitempty"`
	// Reserved is the simulated caching allocator through the step
	// (zero.MemoryTimeline.Reserved), on the time axis of Points: a point
	// where its allocated or reserved bytes change; absent where the
	// reserve is a fraction of the peak (not a time series), or with the
	// points above jsonMaxPoints. OutsideAllocator is what the device
	// holds beside it (the CUDA context and NCCL's buffers): the device's
	// memory is reserved_bytes plus it.
	Reserved         []reservedPointJSON `json:"reserved,omitempty"`
	OutsideAllocator int64               `json:"outside_allocator_bytes,omitempty"`
}

// reservedPointJSON is the simulated allocator from a time on.
type reservedPointJSON struct {
	TimePS    int64 `json:"time_ps"`
	Allocated int64 `json:"allocated_bytes"`
	Reserved  int64 `json:"reserved_bytes"`
}

// memoryPointJSON is one allocation or free.
type memoryPointJSON struct {
	TimePS    int64  `json:"time_ps"`
	Component string `json:"component"`
	Delta     int64  `json:"delta_bytes"`
}

// collectiveJSON is one collective instance.
type collectiveJSON struct {
	Task       int32  `json:"task"`
	Name       string `json:"name"`
	Kind       string `json:"kind"`
	Phase      string `json:"phase"`
	Group      string `json:"group"`
	GroupIndex int    `json:"group_index"`
	Ranks      int    `json:"ranks"`
	Bytes      int64  `json:"bytes"`
	// Algorithm is the algorithm that ran: NCCL's choice at this size
	// under auto (ring, tree, nvls, nvlstree), else the one asked for;
	// point-to-point for an all-to-all (NCCL's grouped sends, which no
	// algorithm applies to).
	Algorithm string `json:"algorithm"`
	StartPS   int64  `json:"start_ps"`
	EndPS     int64  `json:"end_ps"`
}

// spanJSON is one task of one rank.
type spanJSON struct {
	Task     int32  `json:"task"`
	Name     string `json:"name"`
	Stream   string `json:"stream"`
	ArrivePS int64  `json:"arrive_ps"`
	StartPS  int64  `json:"start_ps"`
	EndPS    int64  `json:"end_ps"`
}

func classesJSON(total, busiest [topology.NumClasses]int64) []classJSON {
	var out []classJSON
	for _, c := range topology.Classes() {
		out = append(out, classJSON{Class: c.String(), Total: total[c], Busiest: busiest[c]})
	}
	return out
}

// classNames spells the link classes as the JSON and CSV files do.
func classNames() []string {
	var out []string
	for _, c := range topology.Classes() {
		out = append(out, c.String())
	}
	return out
}

// Warnings are every warning run's table prints: the replay's
// (Result.Warnings) and then the memory model's (the device and allocator
// warnings its memory section prints, as zerosim memory does), each once.
// result.json's warnings and the JSON mode's stderr carry them all, so a
// device_fits of false comes with its reason (QA14 #8).
//
// The memory model's warning that the step fits without room for the
// allocator's reserve (memory.Report.RoomWarning, by the walk's figures)
// gives way to the same warning by the replay's, which the table's verdict
// gives (FitVerdict.roomText), so that result.json and the table name one
// figure (QA30 M1).
func (run *Run) Warnings() []string {
	out := slices.Clone(run.Result.Warnings)
	v := run.Fit()
	if m := run.Result.MemoryModel; m != nil {
		for _, w := range m.Warnings {
			if w == m.RoomWarning {
				continue // said below by the replay's figures
			}
			if !slices.Contains(out, w) {
				out = append(out, w)
			}
		}
	}
	if v.Known && v.Fits && !v.Room && v.Retries == 0 && v.Device > v.Capacity {
		out = append(out, memory.NoRoomWarning(v.Need, v.Capacity, v.Device, v.Vendor.extras()))
	}
	return out
}

// JSON builds result.json's content.
func (run *Run) toJSON() *runJSON {
	s, r := run.Scenario, run.Result
	sc := r.Schedule
	j := &runJSON{Scenario: run.name(), Model: modelText(s), Params: s.Model.TotalParams(), Stage: r.Stage, N: r.N, K: r.K,
		Algorithm: algorithmText(s), NCCLAlgo: s.Communication.NCCLAlgo, NCCLProto: s.Communication.NCCLProto, Overlap: r.Overlap, Symmetric: r.Symmetric, Events: r.Events,
		StepTimePS: int64(r.StepTime), ComputePS: int64(r.Compute), LinkClasses: classNames(),
		TokensPerStep: r.Tokens, TokensPerSecPerGPU: sweep.TokensPerSec(r.TokensPerSecPerGPU()),
		MFU: r.Utilization.MFU, HFU: r.Utilization.HFU, Executed: r.Utilization.Executed, ReservedPeakBytes: r.ReservedPeak, DevicePeakBytes: r.DevicePeak, DeviceNeedBytes: r.DeviceNeed,
		ReservedMode: r.ReservedMode(), AllocatorRetries: r.SimulatedRetries(),
		MemoryModel: newMemoryJSON(r.MemoryModel), Findings: run.findings(), Warnings: run.Warnings(), CollCount: r.CollectiveCount}
	j.Host = hostJSON(r.Host)
	j.Calibration = calibrationUse(r)
	j.AtPublishedFits = newPublishedFitsJSON(run.AtFits)
	capacity := int64(s.Cluster.GPUMemory)
	j.Fits, j.DeviceFits = run.Fit().Fits, r.DeviceFits(capacity)
	if a := s.Model.ActiveParams(); a != j.Params {
		j.ActiveParams = a
	}
	if j.LinkClasses == nil {
		j.LinkClasses = []string{}
	}
	if j.Warnings == nil {
		j.Warnings = []string{}
	}
	j.Zerosim, j.ScenarioSHA256 = ReadBuild(), ScenarioSHA256(s)
	j.Files = slices.Clone(s.ReadFiles)
	j.Resolved = resolvedScenario(s)
	j.Ranks = run.ranksJSON()
	if st := r.Straggler; st != nil {
		j.Straggler = &stragglerJSON{Rank: st.Rank, CausedPS: int64(st.Caused), ComputePS: int64(st.Compute), MedianComputePS: int64(st.MedianCompute)}
	}
	var wire [topology.NumClasses]int64
	j.Phases = []phaseJSON{}
	for _, p := range r.Phases {
		algos := map[string]int{}
		for _, a := range p.Algos {
			algos[a.Algo.String()] = a.Count
		}
		j.Phases = append(j.Phases, phaseJSON{Phase: p.Phase.String(), Collectives: p.Collectives, Algorithms: algos, Logical: p.Logical, Sent: p.Sent,
			Wire: classesJSON(p.Wire, p.MaxRankWire), Dispatcher: string(p.Dispatcher)})
		for _, c := range topology.Classes() {
			wire[c] += p.Wire[c]
		}
	}
	j.Totals.Logical, j.Totals.Sent = r.PhaseTotal()
	j.Totals.Wire = []classTotalJSON{}
	for _, c := range topology.Classes() {
		j.Totals.Wire = append(j.Totals.Wire, classTotalJSON{Class: c.String(), Total: wire[c]})
	}
	j.Critical = []pathStepJSON{}
	for _, p := range r.CriticalPath {
		j.Critical = append(j.Critical, pathStepJSON{Rank: p.Rank, Task: p.Task, Name: taskName(sc, p.Task), StartPS: int64(p.Start), EndPS: int64(p.End), OnPathPS: int64(p.OnPath)})
	}
	m := r.Memory
	j.Memory = runMemoryJSON{Rank: m.Rank, Components: m.Components, AtRest: m.AtRest, Peak: m.Peak, PeakTimePS: int64(m.PeakTime),
		PeakTask: m.PeakTask, PeakTaskName: "at rest", PointCount: len(m.Points)}
	if m.PeakTask >= 0 {
		j.Memory.PeakTaskName = taskName(sc, m.PeakTask)
	}
	if len(m.Points) <= jsonMaxPoints {
		for _, p := range m.Points {
			name := ""
			if p.Component >= 0 && p.Component < len(m.Components) {
				name = m.Components[p.Component]
			}
			j.Memory.Points = append(j.Memory.Points, memoryPointJSON{TimePS: int64(p.Time), Component: name, Delta: p.Delta})
		}
		for _, p := range m.Reserved {
			j.Memory.Reserved = append(j.Memory.Reserved, reservedPointJSON{TimePS: int64(p.Time), Allocated: p.Allocated, Reserved: p.Reserved})
		}
		if m.Reserved != nil {
			j.Memory.OutsideAllocator = m.Outside
		}
	}
	if r.CollectiveCount <= MaxListedCollectives {
		for _, c := range r.Collectives {
			j.Colls = append(j.Colls, collectiveJSON{Task: c.Task, Name: taskName(sc, c.Task), Kind: c.Kind.String(), Phase: c.Phase.String(),
				Group: c.Group.String(), GroupIndex: c.GroupIndex, Ranks: c.Ranks, Bytes: c.Bytes, Algorithm: c.Algo.String(),
				StartPS: int64(c.Start), EndPS: int64(c.End)})
		}
	}
	if n := len(r.Spans) * len(sc.Tasks); n > 0 && n <= jsonMaxSpans {
		for _, spans := range r.Spans {
			row := make([]spanJSON, len(spans))
			for i, sp := range spans {
				row[i] = spanJSON{Task: sp.Task, Name: taskName(sc, sp.Task), Stream: sc.Tasks[sp.Task].Stream.String(),
					ArrivePS: int64(sp.Arrive), StartPS: int64(sp.Start), EndPS: int64(sp.End)}
			}
			j.Spans = append(j.Spans, row)
		}
	}
	return j
}

// ranksJSON is every rank's record; on the symmetric fast path (unless
// Run.AllRanks) ranks with identical figures are written once, with the
// ranks they stand for.
func (run *Run) ranksJSON() []rankJSON {
	r := run.Result
	out := make([]rankJSON, 0, len(r.Ranks))
	same := map[[7]int64]int{} // figures → index in out
	for i, st := range r.Ranks {
		rj := rankJSON{EndPS: int64(st.End), ComputePS: int64(st.Compute),
			ExposedCommPS: int64(st.ExposedComm), ExposedAllGatherPS: int64(st.ExposedAllGather), WaitPS: int64(st.Wait),
			IdlePS: int64(st.Idle), PeakMemory: at(r.PeakMemory, i)}
		if !r.Symmetric || run.AllRanks {
			rj.Rank = st.Rank
			out = append(out, rj)
			continue
		}
		key := [7]int64{rj.EndPS, rj.ComputePS, rj.ExposedCommPS, rj.ExposedAllGatherPS, rj.WaitPS, rj.IdlePS, rj.PeakMemory}
		k, ok := same[key]
		if !ok {
			same[key] = len(out)
			rj.Rank = st.Rank
			out = append(out, rj)
			continue
		}
		rs := out[k].StandsFor
		if len(rs) == 0 {
			rs = []rankRange{{out[k].Rank, out[k].Rank}}
		}
		if last := &rs[len(rs)-1]; last.Last+1 == st.Rank {
			last.Last = st.Rank
		} else {
			rs = append(rs, rankRange{st.Rank, st.Rank})
		}
		out[k].StandsFor = rs
	}
	return out
}

// resolvedScenario is s re-encoded as YAML and decoded as a generic value
// for JSON (keys sorted), or the encoding error as a string.
func resolvedScenario(s *scenarios.Scenario) any {
	data, err := scenarios.Encode(scenarios.Replayable(s))
	if err != nil {
		return "cannot encode the scenario: " + err.Error()
	}
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return "cannot encode the scenario: " + err.Error()
	}
	return v
}

// WriteRunJSON writes result.json: indented, exact integers, stable order.
func WriteRunJSON(w io.Writer, run *Run) error {
	return writeJSON(w, run.toJSON())
}
