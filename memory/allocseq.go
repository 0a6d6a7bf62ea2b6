package memory

import (
	"fmt"
	"slices"
	"strings"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// This file turns the step's timeline (timeline.go) into the allocation
// and free requests PyTorch FSDP makes, tensor by tensor and stream by
// stream, and replays them through the caching allocator (allocator.go)
// for a few steps from the process's start, so that the reserved peak is
// read off the simulation.
//
// Streams (stream ids of the simulation):
//
//	0 compute (the default stream): activations, recomputed tensors,
//	  autograd's gradients, the kept logits, the loss's temporaries, the
//	  optimizer's state and temporaries; FSDP2's unsharded parameters
//	  (foreach_all_gather_copy_out allocates them on the current stream,
//	  alloc_all_gather_outputs) and both FSDPs' sharded parameters.
//	1 all-gather: FSDP1's unsharded flat parameter (FlatParamHandle.unshard
//	  under the unshard stream: _alloc_padded_unsharded_flat_param), freed
//	  after its compute (record_stream on the current stream, then
//	  _free_storage: _free_unsharded_flat_param); FSDP2's all_gather_output
//	  (foreach_all_gather under all_gather_copy_in_stream), freed once
//	  copied out.
//	2 reduce-scatter: FSDP1's fp32 copy of the unsharded gradient and the
//	  new sharded gradient (_post_backward_hook under _post_backward_stream:
//	  flat_param.grad.to(reduce_dtype), _get_reduce_scatter_tensors'
//	  empty_like); FSDP2's reduce_scatter_output (foreach_reduce under
//	  reduce_scatter_stream) and, before PyTorch 2.5
//	  (memory.fsdp2_rs_own_stream), its reduce_scatter_input (on the
//	  compute stream since). The sharded gradients live until the
//	  optimizer zeroes them.
//	3 FSDP1's pre-unshard stream: the bf16 _mp_shard cast before each
//	  all-gather (_use_low_precision_shard), freed after it.
//
// Sources: pytorch/pytorch torch/distributed/fsdp/_runtime_utils.py at
// 00ae0bc91ac2c1718d1baa193d9d299e2b82776c (_init_streams, _unshard,
// _post_backward_hook) and flat_param.py at 002159d1 (FSDP1's
// FlatParamHandle),
// torch/distributed/_composable/fsdp/_fsdp_collectives.py at
// 01d66d21f38a04729a87a5840f405ca1b7acf856 (FSDP2 of early 2024), and
// torchtitan's train.py (83c879f18763, ab5d91823f83) for the process: the memory
// monitor is built before the model is initialised, so the reserved peak
// covers the initialisation too.
//
// A free the allocator defers for record_stream is issued where the
// timeline frees the tensor, the simulation assuming the recorded stream has
// passed it by then, but for FSDP1's own (deferred.go): those return their
// block once the host has waited for the GPU past them.

// The streams of the simulation (see above).
const (
	StreamCompute = 0
	StreamGather  = 1
	StreamReduce  = 2
	StreamPre     = 3
)

// AllocSim is the result of replaying a scenario's steps through the
// caching allocator.
type AllocSim struct {
	// Expandable: simulated with expandable_segments:True.
	Expandable                  bool
	Steps                       int
	PeakAllocated, PeakReserved int64
	// PeakActive is the peak of the allocated bytes and the blocks freed
	// but not yet reusable (FSDP1's record_stream frees, deferred.go):
	// active_bytes.all.peak; PeakAllocated where nothing is deferred.
	PeakActive        int64
	Segments, Retries int
	Requests          int
	// StepPeakReserved is the reserved peak after each step, StepRetries
	// the retries up to the end of each step (the initialisation's in the
	// first).
	StepPeakReserved []int64
	StepRetries      []int
	// Limit is what the simulated allocator could reserve before
	// cudaMalloc fails (allocatorLimit; 0: no limit).
	Limit int64
	// OOM is the request the simulated allocator could not serve within
	// Limit even after releasing its cache (nil: every request was
	// served); the figures above are those up to it.
	OOM *OOMError
	// ExpandableReserved is, when the simulation with default segments ran
	// out (OOM), the reserved peak the same steps reach within Limit with
	// expandable segments; 0 when they run out too or were not tried.
	ExpandableReserved int64
	// Series is the allocator through the last step replayed (the steady
	// state the reserved peak is read at), its last micro-step (the one
	// Report.Timeline describes): a point at the step's start (Event -1)
	// and then after each event of the timeline where the allocated or
	// reserved bytes change. Nil when the simulation ran out of memory
	// (OOM): that step does not run.
	Series []ReservedPoint
}

// ReservedPoint is the simulated caching allocator after one event of the
// step's timeline (Report.Timeline), as torch.cuda.memory_allocated and
// memory_reserved would read there: Event is the event's index (-1: the
// step's start), Allocated the bytes allocated after it (in the
// allocator's rounded block sizes), Reserved the most the allocator held
// reserved during it (a release of its cache on a retry within the event
// does not hide the reserve the event reached), never below Allocated.
// The simulation walks the events in the timeline's order.
type ReservedPoint struct {
	Event               int
	Allocated, Reserved int64
}

// SeriesPeakReserved is the largest Reserved of a.Series: the reserved
// peak of the step the series covers (0 without a series).
func (a *AllocSim) SeriesPeakReserved() int64 {
	var p int64
	for _, x := range a.Series {
		p = max(p, x.Reserved)
	}
	return p
}

// unitParam is one parameter of a unit: numel and dim-0 size.
type unitParam struct{ numel, dim0 int64 }

// simUnitParams lists the parameters of unit u in module order; a unit whose
// layout is not known is one parameter.
func simUnitParams(s *scenarios.Scenario, u int) []unitParam {
	m := s.Model
	l := m.LayerList[u]
	h, v := m.Hidden, m.Vocab
	var ps []unitParam
	switch {
	case l.Block && BlockStyle(&m) == "llama" && (l.Dims == nil || (l.Dims.FFN == 0 && l.Dims.HeadDim == 0)):
		for _, p := range llamaBlockParams(&m) {
			ps = append(ps, unitParam{p.numel, p.dim0})
		}
	case l.Name == "embedding" || l.Name == "lm_head":
		ps = []unitParam{{v * h, v}}
	case l.Name == "final_norm":
		ps = []unitParam{{h, h}}
	}
	var sum int64
	for _, p := range ps {
		sum += p.numel
	}
	if sum != int64(l.Params) || len(ps) == 0 {
		return []unitParam{{int64(l.Params), int64(l.Params)}}
	}
	return ps
}

// simUnit is what the replay allocates for one unit, as the memory model
// sizes it (buildGroups, unitInfos, atRest): the parameters the rank holds
// (a routed-expert unit: its 1/ep of the experts, sharded over the
// shards/ep ranks holding them), and the element sizes of the shard (fp32
// under training.shard_dtype fp32, the group's param_dtype beside a master
// copy otherwise), of the unsharded parameters (1 B under torchao's fp8
// all-gather) and of autograd's gradients, and of each Adam moment (4,
// or the parameters' under training.master_dtype none: GroupInfo.StateBytes).
type simUnit struct {
	ps                         []unitParam
	n                          int64
	shard, gather, grad, state int64
	fp32Shard                  bool
}

// simUnits lists the units of r with their sizes; a unit with no
// parameters has none (and the group's shard count).
func simUnits(s *scenarios.Scenario, r *Report) []simUnit {
	us := make([]simUnit, len(r.Units))
	shards := int64(max(r.Shards, 1))
	for u := range us {
		us[u].n = shards // a unit without parameters divides by it too
	}
	for i := range r.Groups {
		g := &r.Groups[i]
		if g.Layout == nil {
			continue
		}
		ep := int64(max(g.EP, 1))
		fp32 := fp32Shard(r, s, g)
		for _, p := range g.Layout.Params {
			u := p.Unit
			if u < 0 || u >= len(us) || us[u].ps != nil {
				continue
			}
			x := simUnit{n: max(shards/ep, 1), shard: g.ParamBytes, gather: g.ParamBytes, grad: g.GradBytes, state: g.StateBytes, fp32Shard: fp32}
			if fp32 {
				x.shard = 4
			}
			if s.GathersFP8(u) {
				x.gather = 1 // as unitInfos: torchao's fp8 all-gather
			}
			for _, q := range simUnitParams(s, u) {
				x.ps = append(x.ps, unitParam{numel: q.numel / ep, dim0: max(q.dim0/ep, 1)})
			}
			us[u] = x
		}
	}
	return us
}

// handle stacks of the simulation, per kind and unit.
type simState struct {
	a     *Allocator
	s     *scenarios.Scenario
	r     *Report
	fsdp2 bool
	// rsInStream is the stream FSDP2 allocates its reduce-scatter input
	// on (memory.fsdp2_rs_own_stream); FSDP1's is on its post-backward
	// stream, as are both FSDPs' reduce-scatter outputs.
	rsInStream int
	// live holds the live tensors of each kind and unit; an entry stays
	// when they are freed, its slices emptied for the next ones.
	live map[simKey]*simTensors
	// last is the entry of live looked up last, under lastKey: runs of
	// tensors of one kind and unit (a block's activations, a unit's
	// gradients) skip the map.
	lastKey simKey
	last    *simTensors
	err     error
	reqs    int
	// series is AllocSim.Series of the micro-step being replayed last
	// (microStep's last), reused from step to step.
	series []ReservedPoint
	// def holds FSDP1's deferred frees (deferred.go); peakAlloc is the
	// allocated peak without them (the allocator's counts them).
	def       fsdp1Defer
	peakAlloc int64
}

// mark records the allocator after event i of the timeline (-1: before
// the first) in st.series, where it changed, and restarts the reserve's
// high-water mark there.
func (st *simState) mark(i int) {
	a := st.a
	p := ReservedPoint{Event: i, Allocated: a.Allocated - st.def.bytes, Reserved: max(a.high, a.Reserved)}
	a.high = a.Reserved
	if n := len(st.series); n > 0 {
		q := &st.series[n-1]
		if q.Event == i {
			p.Reserved = max(p.Reserved, q.Reserved)
			*q = p
			return
		}
		if q.Allocated == p.Allocated && q.Reserved == p.Reserved {
			return
		}
	}
	st.series = append(st.series, p)
}

// simKey names the live tensors of one kind and unit (-1: none) in
// simState's maps.
type simKey struct {
	kind string
	u    int
}

func key(kind string, u int) simKey { return simKey{kind, u} }

// simTensors are the live tensors of one kind and unit, oldest first:
// their allocator handles and the bytes requested.
type simTensors struct {
	hs    []int
	sizes []int64
}

// lookup is the entry of k in st.live, nil when there is none.
func (st *simState) lookup(k simKey) *simTensors {
	if st.last != nil && st.lastKey == k {
		return st.last
	}
	t := st.live[k]
	if t != nil {
		st.lastKey, st.last = k, t
	}
	return t
}

// tensors are the live tensors of k (an empty entry, made on first use).
func (st *simState) tensors(k simKey) *simTensors {
	t := st.lookup(k)
	if t == nil {
		t = &simTensors{}
		st.live[k] = t
		st.lastKey, st.last = k, t
	}
	return t
}

// count is the number of live tensors of kind and unit.
func (st *simState) count(kind string, u int) int {
	if t := st.lookup(key(kind, u)); t != nil {
		return len(t.hs)
	}
	return 0
}

func (st *simState) alloc(kind string, u, stream int, n int64) {
	if st.err != nil || n <= 0 {
		return
	}
	h, err := st.a.Malloc(stream, n)
	if err != nil {
		st.err = err
		return
	}
	st.reqs++
	st.peakAlloc = max(st.peakAlloc, st.a.Allocated-st.def.bytes)
	t := st.tensors(key(kind, u))
	t.hs = append(t.hs, h)
	t.sizes = append(t.sizes, n)
}

// free frees every live tensor of kind and unit, last allocated first.
func (st *simState) free(kind string, u int) {
	t := st.lookup(key(kind, u))
	if t == nil {
		return
	}
	for i := len(t.hs) - 1; i >= 0 && st.err == nil; i-- {
		st.err = st.a.Free(t.hs[i])
	}
	t.hs, t.sizes = t.hs[:0], t.sizes[:0]
}

// freeOldest frees the oldest live tensor of kind and unit.
func (st *simState) freeOldest(kind string, u int) {
	t := st.lookup(key(kind, u))
	if t == nil || len(t.hs) == 0 || st.err != nil {
		return
	}
	st.err = st.a.Free(t.hs[0])
	t.hs, t.sizes = t.hs[1:], t.sizes[1:]
}

// liveBytes is the bytes of the live tensors of kind (unit -1).
func (st *simState) liveBytes(kind string) int64 {
	var n int64
	if t := st.lookup(key(kind, -1)); t != nil {
		for _, b := range t.sizes {
			n += b
		}
	}
	return n
}

// freeBytes frees the oldest live tensors of kind (unit -1) until n bytes
// are freed, a tensor of exactly n first.
func (st *simState) freeBytes(kind string, n int64) {
	t := st.lookup(key(kind, -1))
	if t == nil {
		return
	}
	hs, sizes := t.hs, t.sizes
	if i := slices.Index(sizes, n); i >= 0 && st.err == nil {
		st.err = st.a.Free(hs[i])
		t.hs, t.sizes = slices.Delete(hs, i, i+1), slices.Delete(sizes, i, i+1)
		return
	}
	for n > 0 && len(hs) > 0 && st.err == nil {
		st.err = st.a.Free(hs[0])
		n -= sizes[0]
		hs, sizes = hs[1:], sizes[1:]
	}
	t.hs, t.sizes = hs, sizes
}

// padded is FSDP2's dim-0 padded numel of p over n shards
// (_get_dim0_padded_size).
func padded(p unitParam, n int64) int64 {
	if p.dim0 <= 0 {
		return p.numel
	}
	rows := (p.dim0 + n - 1) / n * n
	return rows * (p.numel / p.dim0)
}

// rank0Slices is what rank 0 holds of each parameter of a flat parameter
// sharded over n ranks (FSDP1 with use_orig_params: the optimizer sees
// each original parameter's slice in the rank's shard).
func rank0Slices(ps []unitParam, n int64) []int64 {
	var total int64
	for _, p := range ps {
		total += p.numel
	}
	left := (total + n - 1) / n
	var out []int64
	for _, p := range ps {
		if left <= 0 {
			break
		}
		take := min(p.numel, left)
		out = append(out, take)
		left -= take
	}
	return out
}

// maxSimSteps bounds the steps SimulateReserved replays until one
// reserves nothing more: zerosim's own bound, no PyTorch figure (a step
// that still reserves more after 8 is reported as it stands then).
const maxSimSteps = 8

// SimulateReserved replays the training steps of s (whose memory report is
// r) through a caching allocator in mode that may reserve limit bytes (0:
// no limit), after the parameters' initialisation, and returns the peaks
// (with an *OOMError, and the figures up to it, when a request finds no
// room within limit even after the allocator released its cache):
// steps steps, or with steps 0 until a step after the second (the first
// allocates the optimizer's state) reserves nothing more, at most
// maxSimSteps. Only FSDP (communication.boundary fsdp1, fsdp2 or
// fsdp2_head) at stage 3 is modelled.
func SimulateReserved(s *scenarios.Scenario, r *Report, mode SegmentMode, limit int64, steps int) (AllocSim, error) {
	out, _, err := simulate(s, r, mode, limit, steps)
	return out, err
}

// newSimState is the replay of r's tensors (scenario s) on allocator a
// from the process's start: each tensor's stream chosen as the FSDP that
// s runs allocates it, and the units' parameters initialised (initParams).
func newSimState(s *scenarios.Scenario, r *Report, a *Allocator) (*simState, []simUnit) {
	// About eight kinds of tensor per unit have an entry in live (279
	// for Llama 2 7B's 35 units under FSDP2).
	st := &simState{a: a, s: s, r: r, fsdp2: s.Communication.Boundary.FSDP2(), live: make(map[simKey]*simTensors, 8*len(r.Units)),
		series: make([]ReservedPoint, 0, len(r.events)+1)}
	params := simUnits(s, r)
	a.syncEvents = func() { st.release(-1) }
	st.rsInStream = StreamReduce
	if own := s.Memory.FSDP2RSOwnStream; st.fsdp2 && (own == nil || !*own) {
		// PyTorch ≥ 2.5's FSDP2 allocates the reduce-scatter input on the
		// default stream (pytorch/pytorch#129721: foreach_reduce's
		// torch.empty before it enters the reduce-scatter stream), held
		// until the next group's post-backward (memory/inflight.go's
		// reduce_scatter_state). The output stays on the reduce-scatter
		// stream: #129721 says so ("The reduce-scatter outputs are still
		// allocated in the separate reduce_scatter stream since they are
		// small and have a non-spiky allocation/free pattern (we
		// iteratively allocate them through backward and free them
		// altogether after optimizer)"), torch 2.5.1's foreach_reduce
		// allocates reduce_output inside "with
		// torch.cuda.stream(reduce_scatter_stream)" (the diff against the
		// installed 2.5.1 file in saforem2/mmm docs/torch-on-aurora.md at
		// 847e87a491ac8a3c29ebc7820967b74f1ffd4764 shows those lines as
		// context), and so does today's
		// (torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py at
		// 010ae4a89516fa3be548ab16dff711414ec12d0b: "The RS output is
		// allocated in the RS stream and used in the default stream (for
		// optimizer)"). #132445, which would have moved it, never landed.
		// Once zeroed, the sharded gradients' bytes stay reserved in that
		// stream's pool, which the default stream cannot use.
		st.rsInStream = StreamCompute
	}
	st.initParams(params)
	return st, params
}

// simulate is SimulateReserved, with the allocator as the replay left it.
func simulate(s *scenarios.Scenario, r *Report, mode SegmentMode, limit int64, steps int) (AllocSim, *Allocator, error) {
	if r.Stage != 3 || (s.Communication.Boundary != scenarios.BoundaryFSDP1 && !s.Communication.Boundary.FSDP2()) {
		return AllocSim{}, nil, fmt.Errorf("memory: the allocator simulation models FSDP1 and FSDP2 at stage 3 (got stage %d, boundary %q)", r.Stage, s.Communication.Boundary)
	}
	if steps < 0 {
		return AllocSim{}, nil, fmt.Errorf("memory: the allocator simulation needs steps ≥ 0 (got %d)", steps)
	}
	a, err := NewAllocator(mode, limit)
	if err != nil {
		return AllocSim{}, nil, err
	}
	return simulateOn(s, r, a, steps)
}

// simulateOn is simulate's replay on the new allocator a.
func simulateOn(s *scenarios.Scenario, r *Report, a *Allocator, steps int) (AllocSim, *Allocator, error) {
	st, params := newSimState(s, r, a)
	out := AllocSim{Expandable: a.mode == SegmentsExpandable}
	for step := 1; st.err == nil; step++ {
		st.step(step, params)
		out.StepPeakReserved = append(out.StepPeakReserved, a.PeakReserved)
		out.StepRetries = append(out.StepRetries, a.Retries)
		out.Steps = step
		if steps > 0 && step == steps {
			break
		}
		if steps == 0 && (step == maxSimSteps || step > 2 && a.PeakReserved == out.StepPeakReserved[step-2]) {
			break
		}
	}
	out.Limit = a.limit
	out.PeakAllocated, out.PeakReserved, out.PeakActive = st.peakAlloc, a.PeakReserved, a.PeakAllocated
	out.Segments, out.Retries, out.Requests = a.Segments, a.Retries, st.reqs
	if st.err == nil {
		out.Series = st.series
	}
	if oom, ok := st.err.(*OOMError); ok {
		// Out of memory within the limit: the figures up to the failed
		// request come with the error.
		out.OOM = oom
		return out, a, oom
	}
	if st.err != nil {
		return AllocSim{}, nil, st.err
	}
	return out, a, nil
}

// initParams allocates the sharded parameters as the FSDP version
// initialises them from meta-device modules.
func (st *simState) initParams(params []simUnit) {
	for u, pu := range params {
		ps, n := pu.ps, pu.n
		if st.fsdp2 {
			// torchtitan 83c879f train.py: model.to_empty(device="cuda")
			// then init_weights() in place: one shard per parameter,
			// padded on dim 0 (FSDPParam._init_sharded_param), in the
			// shard's dtype (fp32 under training.shard_dtype fp32; with a
			// 16-bit shard the fp32 master is a tensor of its own below).
			for _, p := range ps {
				st.alloc("shard", u, StreamCompute, padded(p, n)/n*pu.shard)
			}
			continue
		}
		// FSDP1 with param_init_fn (torchtitan ab5d918,
		// meta_to_real_init_fn: randn_like on cuda per parameter), then
		// FlatParamHandle flattens them into one flat parameter
		// (torch.cat), the originals go, and shard() keeps a clone of the
		// rank's chunk (_get_shard) while the full flat parameter's
		// storage is released (flat_param.set_). The rank materialises
		// only its local experts, in the shard's dtype (as FSDP2 above).
		var total int64
		for _, p := range ps {
			st.alloc("init", u, StreamCompute, p.numel*pu.shard)
			total += p.numel
		}
		flat := (total + n - 1) / n * n
		st.alloc("initflat", u, StreamCompute, flat*pu.shard)
		st.free("init", u)
		st.alloc("shard", u, StreamCompute, flat/n*pu.shard)
		st.free("initflat", u)
	}
	// What else lives at rest in the allocator (an fp32 master copy, fp8
	// state, persistent gradients), one tensor each; the parameters are
	// above, the optimizer's moments come at its first step and the kept
	// logits from the previous step's forward (memory.runtime_context and
	// memory.nccl_buffers are outside the allocator).
	for _, c := range st.r.Components {
		switch Comp(c.Name) {
		case CompParams, CompAdamM, CompAdamV, CompPadding, CompLogits, CompKVCache, CompRuntime, CompNCCL:
		default:
			st.alloc("rest:"+c.Name, -1, StreamCompute, c.AtRest)
		}
	}
	if !st.fsdp2 {
		// FSDP1's lazy init at the first forward (_lazy_init →
		// _share_state_and_init_handle_attrs →
		// FlatParamHandle.init_flat_param_attributes, flat_param.py at
		// 002159d1): under parameter mixed precision each handle
		// allocates its 16-bit _mp_shard, its 16-bit _full_param_padded
		// and its full-precision _full_prec_full_param_padded on the
		// current stream, each freed (_free_storage) right after.
		for u, pu := range params {
			var total int64
			for _, p := range pu.ps {
				total += p.numel
			}
			n := pu.n
			flat := (total + n - 1) / n * n
			if pu.fp32Shard {
				st.alloc("lazy", u, StreamCompute, flat/n*pu.gather)
				st.free("lazy", u)
				st.alloc("lazy", u, StreamCompute, flat*pu.gather)
				st.free("lazy", u)
				st.alloc("lazy", u, StreamCompute, flat*4)
			} else {
				st.alloc("lazy", u, StreamCompute, flat*pu.shard)
			}
			st.free("lazy", u)
		}
	}
}

// step replays one step of the timeline, tensor by tensor.
func (st *simState) step(step int, params []simUnit) {
	// Under gradient accumulation at stage 3 the timeline is the last
	// micro-step's, the earlier micro-steps' sharded gradients allocated
	// at its start (timeline.go). The replay runs the step's micro-steps
	// instead: the first leaves each unit's reduce-scatter output as its
	// sharded gradient (FSDP1's _saved_grad_shard, FSDP2's
	// sharded_param.grad), the later ones add theirs into it and free it,
	// the optimizer runs after the last. Middle micro-steps repeat the
	// same requests: once one reserves nothing more, the rest are skipped.
	accum := false
	for _, e := range st.r.events { // read only: Timeline would copy it every step
		// The chunked loss's held lm_head gradient is allocated in
		// forward too (UnitInfo.LossHeldGrad, the chunks before the
		// last): not an earlier micro-step's sharded gradients.
		if e.Component == CompGrads && e.Phase == PhaseForward && e.Op == OpCompute && e.Delta > 0 && !st.lossHeld(e) {
			accum = true
			break
		}
	}
	ga := int64(1)
	if accum {
		ga = max(st.s.Training.GradAccum, 2)
	}
	for m := int64(1); m <= ga && st.err == nil; m++ {
		before := st.a.PeakReserved
		st.microStep(step, m == 1 && accum, m == ga, params)
		if m >= 2 && m < ga-1 && st.a.PeakReserved == before {
			m = ga - 1 // to the last
		}
	}
}

// lossHeld says whether e allocates the chunked loss's held lm_head
// gradient (UnitInfo.LossHeldGrad), the forward event microStep replays
// as "lossheld".
func (st *simState) lossHeld(e Event) bool {
	u := e.Unit
	return e.Phase == PhaseForward && u >= 0 && u < len(st.r.Units) && st.r.Units[u].LossHeldGrad > 0 && e.Delta == st.r.Units[u].LossHeldGrad
}

// microStep replays one micro-step of the timeline, tensor by tensor:
// first marks the first of several under gradient accumulation, last the
// one the optimizer step follows.
func (st *simState) microStep(step int, first, last bool, params []simUnit) {
	r := st.r
	// pendingCopyOut[u]: unit u's all-gather output awaits its copy-out
	// (OpCopyOut).
	pendingCopyOut := make([]bool, len(params))
	// held is the forward unit whose all-gather output FSDP2 keeps after
	// its copy-out (AllGatherState, comm_ctx.all_gather_state): "we must
	// keep the current all-gather result alive until that copy-in
	// finishes ... the next parameter group is responsible for freeing
	// the current's all-gather result" (pytorch/pytorch#117973, January
	// 2024); FSDPParamGroup.wait_for_unshard frees it before the next
	// group's copy-out, the root's post-forward the last one's. −1: none.
	held := -1
	release := func() {
		if held >= 0 {
			st.free("agout", held)
			held = -1
		}
	}
	copyOut := func(u int, fwd bool) {
		if !pendingCopyOut[u] {
			return
		}
		pendingCopyOut[u] = false
		release()
		// foreach_all_gather_copy_out: the unsharded parameters on the
		// compute stream; the all-gather output goes, or in forward
		// stays held.
		for _, p := range params[u].ps {
			st.alloc("unsharded", u, StreamCompute, padded(p, params[u].n)*params[u].gather)
		}
		if fwd {
			held = u
			return
		}
		st.free("agout", u)
	}
	if last {
		st.series = st.series[:0]
		st.a.high = st.a.Reserved
		st.mark(-1)
	}
	for i, e := range r.events { // read only: Timeline would copy it every micro-step
		u := e.Unit
		if e.Phase == PhaseOptimizer && !last {
			continue
		}
		if last && i > 0 {
			st.mark(i - 1)
		}
		if e.Phase != PhaseForward {
			release()
		}
		if st.r.inRoot(u) && st.rootEvent(e, params, copyOut) {
			continue
		}
		if e.Op == OpCopyOut {
			copyOut(u, e.Phase == PhaseForward)
			continue
		}
		switch e.Component {
		case CompGathered:
			switch {
			case e.Delta > 0 && st.fsdp2:
				st.alloc("agout", u, StreamGather, e.Delta)
				pendingCopyOut[u] = true
			case e.Delta > 0:
				st.unshardFSDP1()
				st.alloc("mpshard", u, StreamPre, e.Delta/params[u].n)
				st.alloc("gathered", u, StreamGather, e.Delta)
				st.deferFree("mpshard", u, 0, -1)
			case st.fsdp2:
				st.free("unsharded", u)
			default:
				if in, last := fsdp1RootFlat(st.s, r); last >= 0 && u == last && e.Phase == PhaseBackward {
					// FSDP1's root flat parameter, resharded as one
					// (rootflat.go): every root unit's.
					for v, ok := range in {
						if ok && v != u {
							st.reshardFSDP1(v)
						}
					}
				}
				st.reshardFSDP1(u)
			}
		case CompActivations:
			switch {
			case e.Op == OpActOffload:
				// Activation offloading: the block's saved tensors
				// leave the GPU once their copy to the host is done.
				st.free("act", u)
			case e.Op == OpActReload:
				// Reloaded into new tensors allocated on the compute
				// stream (OffloadableLayerState.start_reload).
				for _, b := range r.Units[u].ActivationTensors {
					st.alloc("act", u, StreamCompute, b)
				}
			case e.Op == OpLossSaved && e.Delta > 0:
				// The head's loss saves its tensors once the loop
				// has the logits.
				st.alloc("loss", u, StreamCompute, e.Delta)
			case e.Op == OpLossSaved:
				// Under the eager loss they go, with the loss
				// backward's gradients, before the head's weight
				// gradient (OpHeadGrad).
				st.free("rec", u)
				st.free("loss", u)
			case e.Op == OpHeadGrad && e.Delta > 0:
				// MmBackward0's logits gradient and input gradient,
				// beside the weight gradient it makes.
				for _, b := range r.Units[u].HeadMm {
					st.alloc("headmm", u, StreamCompute, b)
				}
			case e.Op == OpHeadGrad:
				st.free("headmm", u)
			case e.Delta > 0 && e.Phase == PhaseForward:
				st.unpadSync(u)
				for _, b := range r.Units[u].ActivationTensors {
					st.alloc("act", u, StreamCompute, b)
				}
			case e.Delta > 0:
				st.unpadSync(u)
				for _, b := range r.Units[u].RecomputeTensors {
					st.alloc("rec", u, StreamCompute, b)
				}
			default:
				st.free("rec", u)
				st.free("loss", u)
				st.free("act", u)
			}
		case CompCasts:
			// One tensor per cast weight, on the compute stream; the
			// forward's end drops every checkpointed unit's
			// (UnitInfo.CastsRebuilt).
			switch {
			case e.Delta > 0:
				ts := r.Units[u].CastTensors
				if e.Phase == PhaseForward && r.Units[u].CastsPerOp {
					ts = []int64{r.Units[u].CastPeak} // one op's (UnitInfo.CastsPerOp)
				}
				for _, b := range ts {
					st.alloc("cast", u, StreamCompute, b)
				}
			case e.Phase == PhaseForward:
				for v := range r.Units {
					if r.Units[v].CastsRebuilt {
						st.free("cast", v)
					}
				}
			default:
				st.free("cast", u)
			}
		case CompKVCache:
			// Each block's keys and values (training.hf_use_cache), freed
			// whole as the model returns: the oldest, the previous
			// step's when the loop keeps them, none at the first step.
			switch {
			case e.Delta > 0:
				st.alloc("kvcache", -1, StreamCompute, e.Delta)
			case !st.s.Training.KVCacheAtRest() || st.liveBytes("kvcache") > -e.Delta:
				st.freeBytes("kvcache", -e.Delta)
			}
		case CompLogits:
			if e.Delta > 0 {
				st.alloc("logits", -1, StreamCompute, e.Delta)
			} else if st.count("logits", -1) > 1 {
				st.freeOldest("logits", -1)
			}
		case CompGrads:
			var held int64
			if u >= 0 && u < len(r.Units) {
				held = r.Units[u].LossHeldGrad
			}
			switch {
			case e.Op == OpTiedGrad && e.Delta > 0:
				// The tied output projection's weight gradient, in
				// autograd's InputBuffer until the embedding's backward
				// (tiedHeadGrad).
				st.alloc("tiedgrad", -1, StreamCompute, e.Delta)
			case e.Op == OpTiedGrad:
				st.free("tiedgrad", -1)
			case e.Op == OpRootCat && e.Delta > 0:
				// FSDP1's root cat (rootflat.go), on the compute stream.
				st.alloc("rootcat", u, StreamCompute, e.Delta)
			case e.Op == OpRootViews:
				// The root views' gradients go; the cat is the unit's
				// gradient from now on, which its reduce-scatter takes.
				in, _ := fsdp1RootFlat(st.s, r)
				for v, ok := range in {
					if ok {
						st.free("grad", v)
					}
				}
				t, g := st.tensors(key("rootcat", u)), st.tensors(key("grad", u))
				g.hs, g.sizes = append(g.hs, t.hs...), append(g.sizes, t.sizes...)
				t.hs, t.sizes = t.hs[:0], t.sizes[:0]
			case e.Op == OpRootCat:
				// Under no_sync: added into the held gradient, freed.
				st.free("grad", u)
			case st.lossHeld(e):
				// The chunked loss's lm_head gradient, summed over the
				// chunks before the last in reduce_dtype (UnitInfo.
				// LossHeldGrad): one tensor per parameter, as FSDP2's
				// unsharded_accumulated_grad.
				st.alloc("lossheld", u, StreamCompute, held)
			case held > 0 && e.Op == OpHeadGrad && e.Delta < 0:
				// The last chunk's gradient, added into the held one.
				st.free("grad", u)
			case held > 0 && e.Delta == -held && (e.Op == OpReduceCopyIn || e.Op == OpReduceScatter) && st.count("lossheld", u) > 0:
				// The held sum is what the last chunk reduce-scatters.
				st.free("lossheld", u)
			case (e.Op == OpCompute || e.Op == OpHeadGrad) && e.Delta > 0 && e.Phase == PhaseBackward:
				if st.fsdp2 {
					// autograd's per-parameter gradients, last first.
					ps := params[u].ps
					for i := len(ps) - 1; i >= 0; i-- {
						st.alloc("grad", u, StreamCompute, ps[i].numel*params[u].grad)
					}
				} else {
					st.alloc("grad", u, StreamCompute, e.Delta)
				}
			case e.Op == OpReduceScatter && e.Delta > 0:
				st.alloc("shardgrad", u, StreamReduce, e.Delta)
			case e.Delta < 0 && (e.Op == OpReduceCopyIn || e.Op == OpReduceScatter) && st.count("grad", u) > 0:
				if st.fsdp2 {
					st.free("grad", u)
				} else {
					// FSDP1's autograd_computed_grad, record_streamed
					// on the post-backward stream (deferred.go): done
					// with its unit's reduce-scatter, which ends here
					// when it reads the gradient itself, where the
					// timeline frees the fp32 copy otherwise.
					rs := -1
					if e.Op == OpReduceCopyIn && st.count("rsin", u) > 0 {
						rs = u
					}
					st.deferFree("grad", u, 0, rs)
				}
			case e.Delta < 0 && e.Op == OpReduceScatter && first:
				// Gradient accumulation, first micro-step: the new
				// shard is the unit's sharded gradient from now on.
				t, acc := st.tensors(key("shardgrad", u)), st.tensors(key("accum", -1))
				acc.hs, acc.sizes = append(acc.hs, t.hs...), append(acc.sizes, t.sizes...)
				t.hs, t.sizes = t.hs[:0], t.sizes[:0]
			case e.Delta < 0 && e.Op == OpReduceScatter:
				// Gradient accumulation, a later micro-step: the new
				// shard is added into the accumulated one and goes.
				st.free("shardgrad", u)
			case e.Op == OpOptimizer:
				for v := range r.Units {
					st.free("shardgrad", v)
				}
				st.free("accum", -1)
			case e.Delta > 0:
				// The accumulated shards: the first micro-step left
				// them (step above).
			}
		case CompGradBuckets:
			switch {
			case e.Delta > 0:
				st.alloc("rsin", u, st.rsInStream, e.Delta)
			case st.fsdp2:
				st.free("rsin", u)
			default:
				// FSDP1's fp32 copy, which ProcessGroupNCCL
				// record_streams on its stream (deferred.go).
				st.reduceDoneFSDP1(u)
			}
		case CompStepTemp:
			if e.Delta > 0 {
				if step == 1 {
					st.adamStates(params)
				}
				for _, b := range st.stepTemps(params, e.Delta) {
					st.alloc("steptemp", -1, StreamCompute, b)
				}
			} else {
				st.free("steptemp", -1)
			}
		default:
			// Any other component (ring attention's buffers, sdpa
			// masks, fp8 copies, ZeRO++'s buffers): one tensor per
			// event on the compute stream; a free releases the
			// component's oldest tensors until it covers the bytes.
			comp := string(e.Component)
			if e.Delta > 0 {
				st.alloc(comp, -1, StreamCompute, e.Delta)
			} else {
				st.freeBytes(comp, -e.Delta)
			}
		}
	}
	if last && step == 1 {
		st.adamStates(params)
	}
	if last {
		// The host waits for the GPU at the step's end (deferred.go).
		st.release(-1)
	}
	if last && len(r.events) > 0 {
		st.mark(len(r.events) - 1)
	}
}

// rootEvent replays event e of a unit of FSDP2's root group (rootgroup.go)
// where the group's tensors are not the lead unit's alone, and says
// whether it did (false: e is replayed as any unit's). The group's one
// all-gather output and reduce-scatter input and output are the lead's
// events already; here the copy-out at the lead's forward allocates every
// root unit's unsharded parameters (foreach_all_gather_copy_out over the
// group's parameters; the other root units' copy-outs find them there),
// the lead's release frees them all (FSDPParamGroup.reshard), and the
// lead's copy-in frees every root unit's autograd gradients
// (foreach_reduce's copy of the group's gradients into its one input; the
// reduce-scatter's end where no copy is made).
func (st *simState) rootEvent(e Event, params []simUnit, copyOut func(int, bool)) bool {
	u := e.Unit
	switch {
	case e.Op == OpCopyOut:
		if u == st.r.rootLead && e.Phase == PhaseForward {
			for v, in := range st.r.root {
				if in && v != u && st.count("unsharded", v) == 0 {
					for _, p := range params[v].ps {
						st.alloc("unsharded", v, StreamCompute, padded(p, params[v].n)*params[v].gather)
					}
				}
			}
			copyOut(u, true)
		}
		return true
	case e.Component == CompGathered && e.Op == OpRelease:
		for v, in := range st.r.root {
			if in {
				st.free("unsharded", v)
			}
		}
		return true
	case e.Component == CompGrads && e.Delta < 0 && (e.Op == OpReduceCopyIn || e.Op == OpReduceScatter):
		// The copy-in frees them (or, with no copy, the reduce-scatter's
		// end): every root unit's at once.
		held := false
		for v, in := range st.r.root {
			if in && st.count("grad", v) > 0 {
				held = true
				st.free("grad", v)
			}
		}
		return held
	}
	return false
}

// adamStates allocates AdamW's exp_avg and exp_avg_sq of each parameter
// the optimizer holds at its first step (pytorch/pytorch torch/optim/adamw.py
// at 002d2f0bb40cf08beb74bce80f52ce4f2eda46a0, _init_group →
// init_state_per_param: zeros_like per parameter, exp_avg then exp_avg_sq,
// in the parameters' order, in the parameter's dtype: fp32 beside a master
// or an fp32 shard, 16-bit under training.master_dtype none; the step
// counter stays on the CPU).
func (st *simState) adamStates(params []simUnit) {
	if st.count("adam", -1) > 0 {
		return // allocated at the first step already
	}
	for _, pu := range params {
		for _, x := range st.shardElems(pu) {
			st.alloc("adam", -1, StreamCompute, x*pu.state)
			st.alloc("adam", -1, StreamCompute, x*pu.state)
		}
	}
}

// shardElems is the elements rank 0 holds of each parameter of unit pu,
// the tensors the optimizer steps one by one: FSDP2's per-parameter
// DTensor shards; FSDP1's views of the flat shard under
// use_orig_params=True (what torchtitan ab5d918's parallelize_llama.py
// line 231, dlrover's and fms-fsdp's compiled runs pass; a parameter with
// nothing in the rank's shard gets no gradient and is not stepped).
// FSDP1 with use_orig_params=False (fms-fsdp's eager runs:
// use_orig_params=cfg.use_torch_compile) steps the unit's one flat shard
// instead; no scenario key says so yet, so the replay takes the views.
func (st *simState) shardElems(pu simUnit) []int64 {
	n := pu.n
	if !st.fsdp2 {
		return rank0Slices(pu.ps, n)
	}
	// Rank 0's shard of each parameter: FSDP2 chunks dim 0
	// (torch.chunk), ⌈dim0/n⌉ rows (review s21 B F9).
	sizes := make([]int64, 0, len(pu.ps))
	for _, p := range pu.ps {
		sizes = append(sizes, (padded(p, n)+n-1)/n)
	}
	return sizes
}

// stepTemps is the optimizer step's temporaries of delta bytes as the
// allocator sees them. foreach Adam's are tensor lists:
// torch._foreach_sqrt(device_exp_avg_sqs) (and, beside a master copy,
// the grads' fp32 copies) return one new tensor per parameter, each
// allocated on its own (foreach_unary_op: vec_res.emplace_back(
// at::native::empty_like(t)) for every t of the list,
// aten/src/ATen/native/cuda/ForeachUnaryOp.cu at pytorch/pytorch
// 84296aaf11a45e2c7ca80c3b481cd3b4fb81e8f2; the slow path calls the op
// per tensor). So delta, when it is a whole number of lists of the
// rank's parameter shards in the Adam moments' element size, is that
// many lists of per-parameter tensors; otherwise (fused Adam, one
// parameter at a time, a layout the replay does not know) one tensor.
func (st *simState) stepTemps(params []simUnit, delta int64) []int64 {
	if st.s.Training.StepImpl() != scenarios.OptimizerForeach {
		return []int64{delta}
	}
	var list []int64
	var total int64
	for _, pu := range params {
		for _, x := range st.shardElems(pu) {
			if b := x * pu.state; b > 0 {
				list = append(list, b)
				total += b
			}
		}
	}
	if total <= 0 || delta%total != 0 {
		return []int64{delta}
	}
	out := make([]int64, 0, int(delta/total)*len(list))
	for range delta / total {
		out = append(out, list...)
	}
	return out
}

// allocatorLimit is what the caching allocator of a rank of s can reserve
// before cudaMalloc fails: the GPU's memory less outside, the CUDA context
// and NCCL's buffers as ProfilerPeaks counts them (outsideAllocator); 0 when
// the GPU's memory is not given.
func allocatorLimit(s *scenarios.Scenario, outside int64) int64 {
	capacity := int64(s.Cluster.GPUMemory)
	if capacity <= 0 {
		return 0
	}
	return max(capacity-outside, 0)
}

// Describe names the simulation for a report: "simulated, default
// segments" or "simulated, expandable segments".
func (a *AllocSim) Describe() string {
	if a.Expandable {
		return "simulated, expandable segments"
	}
	return "simulated, default segments"
}

// simulateWithin simulates the caching allocator of s (memory report r)
// within what it can reserve on the GPU (allocatorLimit), as PyTorch's
// allocator runs: short of memory it releases its cached segments and
// retries (malloc → release_cached_blocks; pytorch/pytorch
// c10/cuda/CUDACachingAllocator.cpp at 001074d2, see allocator.go), and
// raises OutOfMemoryError when the retry fails too. A step whose device
// need exceeds the GPU anyway (or a GPU of unknown memory) is simulated
// without a limit, for the reserve it would need. When default segments run
// out, expandable segments are tried within the same limit. A peak over the
// allocator's largest request is not simulated (nil).
func simulateWithin(s *scenarios.Scenario, r *Report) (*AllocSim, error) {
	if r.Peak > allocMaxRequest {
		// Beyond what the simulated allocator takes (a request of over
		// 1 PiB): the step fits no GPU, and the reserve is the fraction.
		return nil, nil
	}
	var limit int64
	if r.GPUMemory > 0 && r.Peak <= r.GPUMemory && r.Need <= r.GPUMemory {
		limit = allocatorLimit(s, r.outside)
	}
	mode := SegmentModeOf(s)
	sim, err := SimulateReserved(s, r, mode, limit, 0)
	if sim.OOM == nil && err != nil {
		return nil, err
	}
	if sim.OOM != nil && mode == SegmentsDefault {
		if x, err := SimulateReserved(s, r, SegmentsExpandable, limit, 0); err == nil {
			sim.ExpandableReserved = x.PeakReserved
		}
	}
	return &sim, nil
}

// profilerPeaksOf is profilerPeaksSimulated with the reserve of sim (nil:
// not simulated), capped at the limit the simulation ran under (the
// allocator cannot reserve more; at least the allocated peak); outside is
// the device's memory outside the allocator (outsideAllocator).
func profilerPeaksOf(s *scenarios.Scenario, peak, pool int64, sim *AllocSim, outside int64) (reserved, device int64, err error) {
	var simulated int64
	if sim != nil {
		simulated = sim.PeakReserved
	}
	if reserved, device, err = profilerPeaksSimulated(s, peak, pool, simulated, outside); err != nil {
		return 0, 0, err
	}
	if sim != nil && sim.Limit > 0 {
		if c := max(sim.Limit, peak); reserved > c {
			device -= reserved - c
			reserved = c
		}
	}
	return reserved, device, nil
}

// OOMReason says why a step whose peak fits does not run under the
// simulated allocator (a.OOM set): "the simulated caching allocator runs
// out of memory (fragmentation): a request of 7.83 GiB finds no room with
// 70.52 GiB reserved of the 77.02 GiB it can hold, even after releasing its
// cache (PyTorch raises OutOfMemoryError); with memory.expandable_segments:
// true it fits (reserved 74.10 GiB)".
func (a *AllocSim) OOMReason() string {
	if a.OOM == nil {
		return ""
	}
	why := fmt.Sprintf("the simulated caching allocator (%s) runs out of memory (fragmentation): a request of %s finds no room with %s reserved of the %s it can hold, even after releasing its cache (PyTorch raises OutOfMemoryError)",
		strings.TrimPrefix(a.Describe(), "simulated, "), units.Bytes(a.OOM.Size).IEC(), units.Bytes(a.OOM.Reserved).IEC(), units.Bytes(a.OOM.Limit).IEC())
	switch {
	case a.ExpandableReserved > 0:
		why += fmt.Sprintf("; with memory.expandable_segments: true it fits (reserved %s)", units.Bytes(a.ExpandableReserved).IEC())
	case !a.Expandable:
		why += "; expandable segments run out too"
	}
	return why
}

// ExpectRetries is the clause that ends every warning of a step that fits
// but leaves the device no room for the caching allocator's reserve:
// NoRoomWarning's, and the reports' fit verdicts.
const ExpectRetries = "expect allocator retries (it releases cached blocks before it reports out-of-memory)"

// Verdict is zerosim's one answer to "does the step fit the GPU", the
// one that run, plan, fit, compare and sweep all give (VerdictOf).
type Verdict int8

const (
	// DoesNotFit: the allocated peak, or what the device needs with the
	// CUDA context and NCCL's buffers, is over the GPU's memory, or the
	// simulated caching allocator runs out within it (fragmentation).
	DoesNotFit Verdict = iota
	// FitsWithRetries: it fits, but without room for the caching
	// allocator's reserve: ExpectRetries (run's "yes, but …", the
	// tables' "yes†").
	FitsWithRetries
	// FitsWithRoom: it fits with the caching allocator's reserve.
	FitsWithRoom
)

// VerdictOf decides the Verdict of a step: fits says that its allocated
// peak and what the device needs without the reserve are within capacity
// bytes (zero.Result.Fits), device is what the device holds with the
// caching allocator's reserve (nvidia-smi's view), a is the simulated
// allocator's run (nil where the reserve is a fraction of the peak).
//
// Retries count in the steady state, the last step replayed
// (LastStepRetries): that is what a job running many steps sees at every
// step. The first steps' retries, while the cache warms up, happen once a
// process and leave the verdict a plain fit; RetriesReason names them
// ("none in the last … from there on the steps run within it").
func VerdictOf(fits bool, device, capacity int64, a *AllocSim) Verdict {
	switch {
	case !fits || capacity <= 0 || a != nil && a.OOM != nil:
		return DoesNotFit
	case device > capacity || a.LastStepRetries() > 0:
		return FitsWithRetries
	}
	return FitsWithRoom
}

// NoRoomWarning says that the allocated peak with what the GPU holds
// outside the allocator (need) fits the GPU's capacity, but with the
// caching allocator's usual reserve the device needs device: "the device
// needs 78.12 GiB of 79.65 GiB (the allocated peak with the CUDA context
// and NCCL's buffers), 80.11 GiB with the caching allocator's usual
// reserve: expect allocator retries (…)". Report.RoomWarning and the run
// report's warnings (by the replay's figures) both say it.
func NoRoomWarning(need, capacity, device int64, outside string) string {
	return fmt.Sprintf("the device needs %s of %s (the allocated peak with %s), %s with the caching allocator's usual reserve: %s",
		units.Bytes(need).IEC(), units.Bytes(capacity).IEC(), outside, units.Bytes(device).IEC(), ExpectRetries)
}

// RetriesReason says that the simulated allocator, within its limit,
// released its cache a.Retries times: "the simulated caching allocator
// released its cache 4 times in 4 steps from the process's start, once in
// the last, to stay within the 78.65 GiB it can hold of the GPU's 79.65 GiB
// (the rest: the CUDA context and NCCL's buffers); each release …", outside
// naming what the GPU's memory holds beside the allocator. A last step
// without retries is said to run within the limit.
func (a *AllocSim) RetriesReason(outside string, capacity int64) string {
	steps := "1 step"
	if a.Steps != 1 {
		steps = fmt.Sprintf("%d steps", a.Steps)
	}
	last := a.LastStepRetries()
	in := "none in the last"
	if last > 0 {
		in = timesWord(last) + " in the last"
	}
	why := fmt.Sprintf("the simulated caching allocator released its cache %s in %s from the process's start, %s, to stay within the %s it can hold of the GPU's %s (the rest: %s)",
		timesWord(a.Retries), steps, in, units.Bytes(a.Limit).IEC(), units.Bytes(capacity).IEC(), outside)
	if last == 0 {
		return why + "; from there on the steps run within it"
	}
	return why + "; each release synchronizes the device and frees every wholly free cached segment (release_cached_blocks), so expect slower steps"
}

// LastStepRetries is how many times the simulated allocator released its
// cache in the last step it replayed: the steady state's (the first steps'
// retries, while the reserve grows, need not recur); 0 for a nil a (the
// reserve not simulated).
func (a *AllocSim) LastStepRetries() int {
	if a == nil {
		return 0
	}
	if n := len(a.StepRetries); n >= 2 {
		return a.StepRetries[n-1] - a.StepRetries[n-2]
	}
	return a.Retries
}

// SimulatedRetries is LastStepRetries, nil where nothing was simulated (a
// nil a): what the machine-readable outputs give as allocator_retries.
func (a *AllocSim) SimulatedRetries() *int {
	if a == nil {
		return nil
	}
	n := a.LastStepRetries()
	return &n
}

// timesWord is "once" or "N times".
func timesWord(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}
