package zero

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/units"
)

// MemoryPoint is a change of one component of one rank's memory at a time.
type MemoryPoint struct {
	Time      units.Duration
	Component int // index into MemoryTimeline.Components
	Delta     int64
}

// MemoryTimeline is one rank's memory through the step: the at-rest
// components, then every allocation and free at its simulated time.
type MemoryTimeline struct {
	Rank       int
	Components []string
	AtRest     []int64
	Points     []MemoryPoint
	// Peak is the largest total, first reached at PeakTime during task
	// PeakTask (-1 at rest).
	Peak     int64
	PeakTime units.Duration
	PeakTask int32
	// Reserved is the simulated caching allocator through the step
	// (memory.AllocSim.Series, the reported steady-state step) at the
	// rank's replayed times: a point where its allocated or reserved bytes
	// change, the first at 0 (with gradient accumulation at the last
	// micro-step's first change, the micro-step the timeline holds). The
	// simulation walks the events in the memory model's order; each value
	// is placed at its event's time. Nil where the reserve is not
	// simulated (a fraction of the peak is no time series).
	Reserved []ReservedPoint
	// Outside is what the device holds outside the allocator (the CUDA
	// context and NCCL's buffers): the device line is Reserved plus it.
	Outside int64
}

// ReservedPoint is the simulated caching allocator from Time on:
// Allocated and Reserved as torch.cuda.memory_allocated and
// memory_reserved would read (memory.ReservedPoint).
type ReservedPoint struct {
	Time                units.Duration
	Allocated, Reserved int64
}

// memEvent is a memory.Event bound to a task of the schedule: applied at
// the task's start (AtEnd false) or end.
type memEvent struct {
	task      int32
	atEnd     bool
	component int
	delta     int64
	// reducing: the micro-steps before the last do not have it
	// (memory.Report.OnlyInReducingMicroStep: no_sync's reductions and
	// the optimizer step).
	reducing bool
}

// bindMemory maps the memory model's ordered events onto the schedule's
// tasks: allocations when their operation starts, frees when it ends (the
// rule memory.Report.Timeline documents). Every event names the task it
// belongs to (its op, phase and unit; with a one-rank shard group, the
// unit's compute stands for its gathers and reduce-scatter); an event the
// schedule has no task for is an error, never bound to some other task of
// its phase.
func bindMemory(sc *Schedule, rep *memory.Report) ([]memEvent, []string, []int64, error) {
	var names []string
	var rest []int64
	index := map[memory.Comp]int{}
	for _, c := range rep.Components {
		index[memory.Comp(c.Name)] = len(names)
		names = append(names, c.Name)
		rest = append(rest, c.AtRest)
	}
	// Tasks by (kind, phase, unit), and by (kind, unit) in any phase: the
	// first task of each, indexed once so binding is linear in the events
	// (a search of the task list per event made 10k units take 8 s). Only
	// the last micro-step's tasks count: the memory model is one
	// micro-step's (see the package doc on accumulation).
	last := sc.Micro - 1
	type kpu struct {
		k    Kind
		ph   Phase
		unit int
	}
	byPhase, anyPhase := map[kpu]int32{}, map[kpu]int32{}
	optimizerTask := int32(-1)
	for i, t := range sc.Tasks {
		if t.Micro < last {
			continue
		}
		if _, ok := byPhase[kpu{t.Kind, t.Phase, t.Unit}]; !ok {
			byPhase[kpu{t.Kind, t.Phase, t.Unit}] = int32(i)
		}
		if _, ok := anyPhase[kpu{t.Kind, PhaseCompute, t.Unit}]; !ok {
			anyPhase[kpu{t.Kind, PhaseCompute, t.Unit}] = int32(i)
		}
		if (t.Kind == Optimizer || t.Kind == CPUAdam) && optimizerTask < 0 {
			optimizerTask = int32(i)
		}
	}
	find := func(k Kind, ph Phase, unit int) int32 {
		m := byPhase
		if ph == PhaseCompute {
			m = anyPhase
		}
		if i, ok := m[kpu{k, ph, unit}]; ok {
			return i
		}
		return -1
	}
	optimizer := func() int32 { return optimizerTask }
	// A unit whose parameters no other rank shares (the memory model's
	// UnitInfo.Alone: a shard group of one rank, N/K = 1 or routed experts
	// with ep = N/K) gathers and reduces nothing, so the schedule has no
	// such tasks: its gathers happen as its compute starts and its
	// reduce-scatter as its backward ends.
	alone := func(unit int) bool { return unit >= 0 && unit < len(rep.Units) && rep.Units[unit].Alone }
	// qgZ: a unit's gradient reduction is its tasks of phase
	// PhaseBackwardRS (fallback reduce-scatter, kernels, all-to-alls); its
	// sharded gradient lives from the first to the last when an all-to-all
	// is among them. Indexed once: a search of the task list per event
	// made the binding quadratic.
	type span struct {
		first, last int32
		a2a         bool
	}
	spans := map[int]*span{}
	for i, t := range sc.Tasks {
		if t.Phase != PhaseBackwardRS || t.Micro < last {
			continue
		}
		sp := spans[t.Unit]
		if sp == nil {
			sp = &span{first: int32(i)}
			spans[t.Unit] = sp
		}
		sp.last = int32(i)
		sp.a2a = sp.a2a || t.Kind == AllToAll
	}
	qgzSpan := func(u int) (int32, int32) {
		if sp := spans[u]; sp != nil && sp.a2a {
			return sp.first, sp.last
		}
		return -1, -1
	}
	// Stages 0-2 reduce per bucket (Unit -1): a unit's gradient goes with
	// the last-issued sync of a bucket its parameters lie in (its
	// reduce-scatter; its all-reduce where there is none), the one that
	// ends its reduction.
	bucketSync := map[int]int32{}
	for _, k := range []Kind{AllReduce, ReduceScatter} {
		for i, t := range sc.Tasks {
			if t.Micro < last || t.Kind != k || t.Unit >= 0 || t.Bucket < 0 ||
				t.Phase != PhaseBackwardRS && t.Phase != PhaseBackwardAR && t.Phase != PhaseInterAR {
				continue
			}
			bk := sc.Buckets[t.Bucket]
			for u := bk.FirstUnit; u <= bk.LastUnit; u++ {
				if j, ok := bucketSync[u]; !ok || sc.Tasks[j].Kind != k || int32(i) > j {
					bucketSync[u] = int32(i)
				}
			}
		}
	}
	var out []memEvent
	for _, ev := range rep.Timeline() {
		ci, ok := index[ev.Component]
		if !ok {
			return nil, nil, nil, fmt.Errorf("zero: memory event for unknown component %q", ev.Component)
		}
		task, atEnd := int32(-1), ev.Delta < 0
		switch {
		case ev.Op == memory.OpAllGather && ev.Phase == memory.PhaseForward:
			task = find(AllGather, PhaseForwardAG, ev.Unit)
			switch {
			case task >= 0:
			case alone(ev.Unit):
				task = find(Forward, PhaseCompute, ev.Unit)
			case sc.Stage < 3:
				// FSDP's stage 2 (memory.FSDPStage2): the schedule
				// times its gathers per bucket (at the step's start and
				// at a micro-step's start after a reshard: regathersAt);
				// the memory model has the unit's unsharded parameters
				// from its pre-forward unshard, issued as the compute of
				// the unit prefetch_depth before it starts.
				task = find(Forward, PhaseCompute, rep.ForwardGatherUnit(ev.Unit))
			}
		case ev.Op == memory.OpAllGather && ev.Phase == memory.PhaseBackward:
			task = find(AllGather, PhaseBackwardAG, ev.Unit)
			if task < 0 && alone(ev.Unit) {
				task = find(Backward, PhaseCompute, ev.Unit)
			}
		case (ev.Op == memory.OpCompute || ev.Op == memory.OpLossSaved || ev.Op == memory.OpCopyOut) && ev.Phase == memory.PhaseForward:
			task = find(Forward, PhaseCompute, ev.Unit)
		case (ev.Op == memory.OpCompute || ev.Op == memory.OpLossSaved || ev.Op == memory.OpCopyOut) && ev.Phase == memory.PhaseBackward:
			task = find(Backward, PhaseCompute, ev.Unit)
		case ev.Op == memory.OpRelease && ev.Phase == memory.PhaseForward:
			task, atEnd = find(Forward, PhaseCompute, ev.Unit), true
		case ev.Op == memory.OpRelease && ev.Phase == memory.PhaseBackward:
			task, atEnd = find(Backward, PhaseCompute, ev.Unit), true
		case ev.Op == memory.OpHeadGrad:
			// The head's parameter gradient under the eager loss (and
			// the tensors its MmBackward0 holds beside it), once its
			// backward has freed the loss's tensors: at its end.
			task, atEnd = find(Backward, PhaseCompute, ev.Unit), true
		case ev.Op == memory.OpTiedGrad:
			// A tied output projection's weight gradient: from the
			// head's backward end to the embedding's (memory's
			// tiedHeadGrad).
			task, atEnd = find(Backward, PhaseCompute, ev.Unit), true
		case ev.Op == memory.OpRootCat || ev.Op == memory.OpRootViews:
			// FSDP1's root flat parameter's split backward: the cat of
			// its views' gradients and their free, as the last root
			// unit's backward ends (memory's rootflat.go).
			task, atEnd = find(Backward, PhaseCompute, ev.Unit), true
		case ev.Op == memory.OpRebind:
			// The previous step's kept logits, freed as the head's
			// forward returns the new ones, before the loss's tensors
			// (after them for a Hugging Face loss inside forward, and
			// there also the 16-bit logits .float() rebinds); the KV
			// cache (training.hf_use_cache) as the model returns.
			task, atEnd = find(Forward, PhaseCompute, ev.Unit), false
		case ev.Op == memory.OpReduceCopyIn:
			// The copy into the reduce-scatter input: as the unit's
			// reduction starts, allocations and frees alike.
			task, atEnd = find(ReduceScatter, PhaseBackwardRS, ev.Unit), false
			if task < 0 {
				task = find(AllReduce, PhaseBackwardAR, ev.Unit)
			}
			if task < 0 && sc.Stage < 3 {
				// FSDP's stage 2 (memory.FSDPStage2) reduces unit by
				// unit, its schedule by bucket: the copy-in is the
				// unit's post-backward's, as its backward ends.
				task, atEnd = find(Backward, PhaseCompute, ev.Unit), true
			}
			if task < 0 && alone(ev.Unit) {
				task, atEnd = find(Backward, PhaseCompute, ev.Unit), true
			}
		case ev.Op == memory.OpReduceScatter:
			task = find(ReduceScatter, PhaseBackwardRS, ev.Unit)
			if first, last := qgzSpan(ev.Unit); first >= 0 {
				task = first // qgZ: the sharded gradient from its first all-to-all to its dequantize
				if ev.Delta < 0 {
					task = last
				}
			}
			if task < 0 {
				task = find(AllReduce, PhaseBackwardAR, ev.Unit)
			}
			if task < 0 && sc.Stage < 3 && ev.Delta > 0 {
				// FSDP's stage 2: the unit's sharded gradient from its
				// post-backward, as its backward ends (see the copy-in).
				task, atEnd = find(Backward, PhaseCompute, ev.Unit), true
			}
			if i, ok := bucketSync[ev.Unit]; task < 0 && ok {
				task = i // stages 0-2: the frees with the sync of the bucket that ends the unit's reduction
			}
			if task < 0 && (alone(ev.Unit) || sc.Stage < 3) {
				// Nothing to reduce (one rank): the unit's backward.
				task, atEnd = find(Backward, PhaseCompute, ev.Unit), true
			}
		case ev.Op == memory.OpActOffload || ev.Op == memory.OpActReload:
			// Activation offloading (memory's actoffload.go): the free at
			// the start of the releasing unit's forward, the reload at the
			// start of the reloading unit's backward.
			release, reload, _ := rep.ActivationOffloadWindow(ev.Unit)
			if ev.Op == memory.OpActOffload {
				task, atEnd = find(Forward, PhaseCompute, release), false
			} else {
				task, atEnd = find(Backward, PhaseCompute, reload), false
			}
		case ev.Op == memory.OpOptimizer:
			task = optimizer()
		}
		if task < 0 {
			return nil, nil, nil, fmt.Errorf("zero: no task for memory event %s %s unit %d", ev.Phase, ev.Op, ev.Unit)
		}
		if atEnd {
			task = lastPiece(sc.Tasks, task)
		}
		out = append(out, memEvent{task: task, atEnd: atEnd, component: ci, delta: ev.Delta, reducing: rep.OnlyInReducingMicroStep(ev)})
	}
	return out, names, rest, nil
}

// lastPiece is the last of the forward pieces task i begins (a unit's first
// forward under Megatron-Core's overlapped parameter gather runs in pieces,
// paramChain.forward): an event at the end of the unit's forward is at the
// end of its last piece. Other tasks are their own last piece.
func lastPiece(tasks []Task, i int32) int32 {
	t := tasks[i]
	if t.Kind != Forward || t.Unit < 0 {
		return i
	}
	for j := i + 1; int(j) < len(tasks); j++ {
		switch n := tasks[j]; {
		case n.Kind == Forward && n.Unit == t.Unit && n.Micro == t.Micro:
			i = j
		case n.Stream == Compute:
			return i
		}
	}
	return i
}

// timedEvent is a bound memory event at its time on one rank.
type timedEvent struct {
	t   units.Duration
	seq int
	ev  memEvent
}

// memLess orders timed memory events: by time; at the same instant the
// events of tasks that end there (their frees) before those of tasks that
// start there (their allocations), then model order (seq is unique, so the
// order is total and an unstable sort gives the one result). Events bound
// to one side of one task keep the walk's order: a reduce-scatter's
// copy-in allocates its input before it frees the unsharded gradients
// (FSDP2's foreach_reduce frees them "only after the copy-in finishes";
// memory/timeline.go cites it), so both are alive at once, as the walk
// counts them. Frees first regardless of the task let the free jump ahead
// of its own allocation: torchtitan's DeepSeek-V3 671B replayed 561.70 GiB
// at block.60 where the walk gives 578.60 GiB at experts.60's copy-in (QA2
// finding 18).
func memLess(a, b timedEvent) int {
	if c := cmp.Compare(a.t, b.t); c != 0 {
		return c
	}
	if a.ev.atEnd != b.ev.atEnd {
		if a.ev.atEnd {
			return -1
		}
		return 1
	}
	return cmp.Compare(a.seq, b.seq)
}

// sortedMemory returns rank r's memory events in time order (see memLess),
// reusing e's scratch. The events are laid out in the order the previous
// rank sorted them to, so ranks with the same timing cost one check.
func (e *executor) sortedMemory(r int, evs []memEvent) []timedEvent {
	ts := e.memScratch[:0]
	if len(e.memOrder) != len(evs) {
		e.memOrder = make([]int32, len(evs))
		for i := range e.memOrder {
			e.memOrder[i] = int32(i)
		}
	}
	for _, i := range e.memOrder {
		ev := evs[i]
		j := e.at(r, ev.task)
		t := e.start[j]
		if ev.atEnd {
			t = e.end[j]
		} else if e.sc.Tasks[ev.task].Kind.IsComm() {
			// A collective's buffers are the rank's from when it issues
			// the collective (reaches it: Arrive), though it may then wait
			// for its group and its communicator: PyTorch's caching
			// allocator hands out the output on the issuing stream before
			// the NCCL call (FSDP1's FlatParamHandle.unshard calls
			// _alloc_padded_unsharded_flat_param, then
			// _all_gather_flat_param's all_gather_into_tensor;
			// torch/distributed/fsdp/_flat_param.py at
			// 01caf79e047fd15e1f75ba3825f789130efa476a).
			t = e.arrive[j]
		}
		ts = append(ts, timedEvent{t, int(i), ev})
	}
	if !slices.IsSortedFunc(ts, memLess) {
		slices.SortFunc(ts, memLess)
		for k, x := range ts {
			e.memOrder[k] = int32(x.seq)
		}
	}
	e.memScratch = ts
	return ts
}

// memoryTimeline replays the bound events on rank r's task times, with
// the simulated allocator's series (nil: not simulated) placed on them.
func (e *executor) memoryTimeline(r int, evs []memEvent, names []string, rest []int64, series []memory.ReservedPoint) MemoryTimeline {
	tl := MemoryTimeline{Rank: r, Components: names, AtRest: rest, PeakTask: -1}
	var total int64
	for _, v := range rest {
		total += v
	}
	tl.Peak = total
	sorted := e.sortedMemory(r, evs)
	for _, x := range sorted {
		if x.ev.delta == 0 {
			continue // a marker (memory.OpCopyOut): the reserved series reads it
		}
		tl.Points = append(tl.Points, MemoryPoint{Time: x.t, Component: x.ev.component, Delta: x.ev.delta})
		total += x.ev.delta
		if total > tl.Peak {
			tl.Peak, tl.PeakTime, tl.PeakTask = total, x.t, x.ev.task
		}
	}
	if p, x := earlierMicroStepPeak(sorted, rest); p > tl.Peak {
		tl.Peak, tl.PeakTime, tl.PeakTask = p, x.t, x.ev.task
	}
	tl.Reserved = reservedSeries(series, sorted, len(evs), e.sc.Micro > 1)
	return tl
}

// earlierMicroStepPeak is the largest total of the micro-steps before the
// last under FSDP's no_sync, on the last one's times: its events without
// the reducing ones (memory.Report.OnlyInReducingMicroStep), which hold
// every unsharded gradient through the backward; and the event it is
// first reached at. 0 when no event is reducing-only.
func earlierMicroStepPeak(sorted []timedEvent, rest []int64) (int64, timedEvent) {
	if !slices.ContainsFunc(sorted, func(x timedEvent) bool { return x.ev.reducing }) {
		return 0, timedEvent{}
	}
	var total int64
	for _, v := range rest {
		total += v
	}
	peak, at := total, timedEvent{ev: memEvent{task: -1}}
	for _, x := range sorted {
		if x.ev.reducing {
			continue
		}
		total += x.ev.delta
		if total > peak {
			peak, at = total, x
		}
	}
	return peak, at
}

// reservedSeries places series (memory.AllocSim.Series, by event index)
// on the times of the sorted events: after each event the value the
// simulation had after it, a point where it changes; of one instant the
// allocated bytes after its last event and the most it reserved, held to
// the next point (a reserve's jump is not lost to a release at the same
// instant). The start's point is at 0, or under accumulation at the first
// event's time.
func reservedSeries(series []memory.ReservedPoint, sorted []timedEvent, events int, accum bool) []ReservedPoint {
	if len(series) == 0 || series[0].Event != -1 {
		return nil
	}
	// at[i] is the point holding after event i: the last at or before it.
	at := make([]int32, events)
	j := 0
	for i := range at {
		for j+1 < len(series) && series[j+1].Event <= i {
			j++
		}
		at[i] = int32(j)
	}
	var start units.Duration
	if accum && len(sorted) > 0 {
		start = sorted[0].t
	}
	out := []ReservedPoint{{Time: start, Allocated: series[0].Allocated, Reserved: series[0].Reserved}}
	for _, x := range sorted {
		p := series[at[x.seq]]
		q := &out[len(out)-1]
		switch {
		case q.Allocated == p.Allocated && q.Reserved == p.Reserved:
		case q.Time == x.t:
			q.Allocated, q.Reserved = p.Allocated, max(q.Reserved, p.Reserved)
			if n := len(out); n >= 2 && out[n-2].Allocated == q.Allocated && out[n-2].Reserved == q.Reserved {
				out = out[:n-1] // back to the value before the instant
			}
		default:
			out = append(out, ReservedPoint{Time: x.t, Allocated: p.Allocated, Reserved: p.Reserved})
		}
	}
	return out
}

// peakMemory is rank r's peak total, without keeping the timeline.
func (e *executor) peakMemory(r int, evs []memEvent, rest []int64) int64 {
	var total int64
	for _, v := range rest {
		total += v
	}
	peak := total
	sorted := e.sortedMemory(r, evs)
	for _, x := range sorted {
		total += x.ev.delta
		peak = max(peak, total)
	}
	p, _ := earlierMicroStepPeak(sorted, rest)
	return max(peak, p)
}
