package memory

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/internal/scenariotest"
	"github.com/zerosim/zerosim/scenarios"
)

func loadFSDP(t testing.TB, sets ...string) *scenarios.Scenario {
	t.Helper()
	s, err := scenarios.Load("fsdp.yaml", []byte(scenariotest.FSDP2Llama7B), sets)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// loadMoE is Mixtral's shape (two blocks) over 64 GPUs under FSDP2.
func loadMoE(t *testing.T, sets ...string) *scenarios.Scenario {
	t.Helper()
	s, err := scenarios.Load("moe.yaml", []byte(`version: 1
cluster: {nodes: 8, gpus_per_node: 8, gpu: H100-80GB}
model: {preset: mixtral-8x7b, layers: 2, seq_len: 4096}
parallelism: {dp: 64, zero_stage: 3}
training: {micro_batch: 1, recompute: full, shard_dtype: fp32, reduce_dtype: fp32}
communication: {boundary: fsdp2}
`), sets)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The simulation replays the memory model's timeline tensor by tensor: its
// allocated peak is the model's (the allocator's share of it) up to FSDP2's
// all-gather output, which exists beside the unsharded parameters while
// they are copied out (foreach_all_gather_copy_out), and the 512 B
// rounding; its reserved peak is at least that.
//
// It holds for a 16-bit shard beside the fp32 master (training.shard_dtype
// bf16), for pure bf16 training (training.master_dtype none: bf16 Adam
// moments), for a MoE at parallelism.ep 8 (the rank's local experts only)
// and for torchao's fp8 all-gather (1 B unsharded weights).
func TestSimulateReservedFollowsTheTimeline(t *testing.T) {
	for _, sets := range [][]string{nil, {"communication.boundary=fsdp1"}, {"training.recompute=op"}, {"memory.expandable_segments=true"}, {"training.grad_accum=2"},
		{"training.shard_dtype=bf16"}, {"training.shard_dtype=bf16", "communication.boundary=fsdp1"},
		{"training.shard_dtype=bf16", "training.master_dtype=none"},
		{"moe", "parallelism.ep=8"}, {"moe", "parallelism.ep=8", "communication.boundary=fsdp1"}, {"moe", "parallelism.ep=8", "training.shard_dtype=bf16"},
		{"training.fp8=torchao"}} {
		var s *scenarios.Scenario
		if len(sets) > 0 && sets[0] == "moe" {
			s = loadMoE(t, sets[1:]...)
		} else {
			s = loadFSDP(t, sets...)
		}
		r, err := Analyze(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r.AllocSim == nil {
			t.Fatalf("%v: not simulated", sets)
		}
		sim := *r.AllocSim
		var gather int64
		for _, u := range r.Units {
			gather = max(gather, u.Gather)
		}
		alloc := allocatorBytes(s, r.Peak)
		if sim.PeakAllocated < alloc || sim.PeakAllocated > alloc+gather+int64(sim.Requests)*allocMinBlock {
			t.Errorf("%v: simulated allocated peak %d, model's %d (+ at most one gather %d and the rounding)", sets, sim.PeakAllocated, alloc, gather)
		}
		if sim.PeakReserved < sim.PeakAllocated || r.Reserved < sim.PeakReserved {
			t.Errorf("%v: reserved %d, simulated %d, allocated %d", sets, r.Reserved, sim.PeakReserved, sim.PeakAllocated)
		}
		// Steady state: the last step reserved nothing new.
		if n := len(sim.StepPeakReserved); n < 3 || sim.StepPeakReserved[n-1] != sim.StepPeakReserved[n-2] {
			t.Errorf("%v: steps %v did not settle", sets, sim.StepPeakReserved)
		}
		again, err := SimulateReserved(s, r, SegmentModeOf(s), 0, 0)
		if err != nil || again.PeakReserved != sim.PeakReserved || again.Segments != sim.Segments {
			t.Errorf("%v: a second simulation gave %+v (%v), want %+v", sets, again, err, sim)
		}
	}
}

// An explicit memory.allocator_overhead, or a stack the simulation does not
// replay, keeps the fraction.
func TestSimulatesReserve(t *testing.T) {
	for _, c := range []struct {
		sets []string
		want bool
	}{
		{nil, true},
		{[]string{"communication.boundary=fsdp1"}, true},
		{[]string{"memory.allocator_overhead=0.15"}, false},
		{[]string{"communication.boundary=deepspeed"}, false},
		{[]string{"communication.boundary=reshard"}, false},
		{[]string{"parallelism.zero_stage=2"}, false},
		// (offload beside an FSDP boundary is refused by the loader:
		// scenarios.FSDPOffloadNotModelled)
	} {
		s := loadFSDP(t, c.sets...)
		if got := SimulatesReserve(s); got != c.want {
			t.Errorf("%v: SimulatesReserve %v, want %v", c.sets, got, c.want)
		}
		r, err := Analyze(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if (r.AllocSim != nil) != c.want {
			t.Errorf("%v: AllocSim %v, want simulated %v", c.sets, r.AllocSim, c.want)
		}
		if !c.want {
			want, _, err := ProfilerPeaks(s, r.Peak, r.GatherPool)
			if err != nil || r.Reserved != want {
				t.Errorf("%v: reserved %d, the fraction gives %d (%v)", c.sets, r.Reserved, want, err)
			}
		}
	}
}

func TestSimulateReservedErrors(t *testing.T) {
	s := loadFSDP(t, "communication.boundary=deepspeed")
	r, err := Analyze(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := SimulateReserved(s, r, SegmentsDefault, 0, 0); err == nil || !strings.Contains(err.Error(), "FSDP1 and FSDP2 at stage 3") {
		t.Errorf("deepspeed: %v, want the stacks it models named", err)
	}
	s = loadFSDP(t)
	r, _ = Analyze(s, Options{})
	if _, err := SimulateReserved(s, r, SegmentsDefault, 0, -1); err == nil {
		t.Error("negative steps accepted")
	}
	if _, err := SimulateReserved(s, r, SegmentMode(9), 0, 1); err == nil {
		t.Error("unknown mode accepted")
	}
	// Too small a device: the allocator releases its cache, retries and
	// then fails.
	if _, err := SimulateReserved(s, r, SegmentsDefault, 1<<30, 1); err == nil || !strings.Contains(err.Error(), "out of memory") {
		t.Errorf("1 GiB device: %v, want out of memory", err)
	}
	if _, _, err := profilerPeaksSimulated(s, r.Peak, 0, -1, 0); err == nil {
		t.Error("negative simulated reserve accepted")
	}
}

// The rank's slices of a flat parameter: rank 0 holds the first 1/n.
func TestRank0Slices(t *testing.T) {
	got := rank0Slices([]unitParam{{100, 10}, {60, 6}, {40, 4}}, 2)
	if len(got) != 1 || got[0] != 100 {
		t.Errorf("rank0Slices = %v, want [100]", got)
	}
	got = rank0Slices([]unitParam{{30, 3}, {60, 6}, {40, 4}}, 2)
	if len(got) != 2 || got[0] != 30 || got[1] != 35 {
		t.Errorf("rank0Slices = %v, want [30 35]", got)
	}
	if p := padded(unitParam{numel: 30, dim0: 3}, 2); p != 40 {
		t.Errorf("padded 3 rows of 10 over 2 = %d, want 40", p)
	}
}

// The simulated allocator may reserve what the GPU leaves beside the CUDA
// context and NCCL's buffers (allocatorLimit): this step reserves 16.89 GiB
// unconstrained at a 15.20 GiB peak. On a 17.5 GiB GPU it releases its cache
// and retries, and the reserve stays within the limit; on a 16.75 GiB GPU a
// request finds no room even after the release (fragmentation), so the step
// does not fit although its peak and need do, and the verdict says that
// expandable segments fit.
func TestSimulateReservedWithinTheGPU(t *testing.T) {
	free, err := Analyze(loadFSDP(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if free.AllocSim == nil || free.AllocSim.Retries != 0 || free.AllocSim.OOM != nil {
		t.Fatalf("80 GB: %+v, want no retries", free.AllocSim)
	}
	s := loadFSDP(t, "cluster.gpu_memory=17.5GiB")
	o, err := outsideAllocator(s)
	limit := allocatorLimit(s, o)
	if outside := free.Device - free.Reserved; err != nil || limit != 35<<29-outside {
		t.Fatalf("limit %d (%v), want 17.5 GiB less the context and NCCL's %d", limit, err, outside)
	}
	unlimited, err := SimulateReserved(s, free, SegmentModeOf(s), 0, 0)
	if err != nil || unlimited.PeakReserved <= limit {
		t.Fatalf("unconstrained reserve %d (%v): the case needs more than %d", unlimited.PeakReserved, err, limit)
	}
	r, err := Analyze(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sim := r.AllocSim
	if !r.Fits || sim == nil || sim.OOM != nil || sim.Retries == 0 || sim.Limit != limit || sim.PeakReserved > limit {
		t.Fatalf("17.5 GiB: fits %v, %+v: want it to fit with retries within %d", r.Fits, sim, limit)
	}
	if r.Reserved > limit || r.Device > r.GPUMemory {
		t.Errorf("17.5 GiB: reserved %d, device %d beyond the limit %d / GPU %d", r.Reserved, r.Device, limit, r.GPUMemory)
	}
	if !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, "released its cache") }) {
		t.Errorf("17.5 GiB: warnings %q name no retries", r.Warnings)
	}
	s = loadFSDP(t, "cluster.gpu_memory=16.75GiB")
	r, err = Analyze(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sim = r.AllocSim
	if r.Peak > r.GPUMemory || r.Need > r.GPUMemory {
		t.Fatalf("16.75 GiB: peak %d need %d: the case needs both within the GPU", r.Peak, r.Need)
	}
	if r.Fits || sim == nil || sim.OOM == nil || sim.OOM.Size <= 0 || sim.ExpandableReserved <= 0 || sim.ExpandableReserved > sim.Limit {
		t.Fatalf("16.75 GiB: fits %v, %+v: want out of memory, expandable segments within the limit", r.Fits, sim)
	}
	if r.Reserved > sim.Limit {
		t.Errorf("16.75 GiB: reserved %d beyond the limit %d", r.Reserved, sim.Limit)
	}
	if !slices.ContainsFunc(r.Warnings, func(w string) bool {
		return strings.Contains(w, "runs out of memory (fragmentation)") && strings.Contains(w, "memory.expandable_segments: true it fits")
	}) {
		t.Errorf("16.75 GiB: warnings %q", r.Warnings)
	}
	// With expandable segments the same GPU holds the step.
	x, err := Analyze(loadFSDP(t, "cluster.gpu_memory=16.75GiB", "memory.expandable_segments=true"), Options{})
	if err != nil || !x.Fits || x.AllocSim.OOM != nil || x.AllocSim.PeakReserved != sim.ExpandableReserved {
		t.Errorf("16.75 GiB expandable: fits %v, %+v (%v), want it to fit at %d", x.Fits, x.AllocSim, err, sim.ExpandableReserved)
	}
}

// A step whose peak is over the allocator's largest request (1 PiB) fits no
// GPU: it is not simulated, and the verdict is "does not fit", not an
// error (qa16 L9).
func TestSimulateReservedSkipsAbsurdPeaks(t *testing.T) {
	r, err := Analyze(loadFSDP(t, "training.micro_batch=1048576", "model.seq_len=8192"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Peak <= allocMaxRequest || r.AllocSim != nil || r.Fits || r.Reserved < r.Peak {
		t.Errorf("peak %d: AllocSim %+v, fits %v, reserved %d", r.Peak, r.AllocSim, r.Fits, r.Reserved)
	}
}

// Options.Reserve: ReserveWhereFits keeps ReserveAll's verdict (the
// 16.75 GiB case fits by its peak and need but the simulated allocator
// runs out, so it does not fit) and its figures where the step fits;
// where it does not (15 GiB: the need alone is over), it leaves the
// profiler's view out. ReserveNone leaves it out everywhere, and its
// verdict lacks the simulated out-of-memory.
func TestReserveLevels(t *testing.T) {
	for _, c := range []struct {
		gpu             string
		fits, allocFits bool // ReserveAll's verdict; the peak and need alone
	}{{"17.5GiB", true, true}, {"16.75GiB", false, true}, {"15GiB", false, false}} {
		s := loadFSDP(t, "cluster.gpu_memory="+c.gpu)
		all, err := Analyze(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if all.Fits != c.fits || all.ReserveSkipped || all.Reserved == 0 || all.Device == 0 || all.AllocSim == nil {
			t.Fatalf("%s all: fits %v, skipped %v, reserved %d, device %d, sim %v; want fits %v with every figure", c.gpu, all.Fits, all.ReserveSkipped, all.Reserved, all.Device, all.AllocSim != nil, c.fits)
		}
		where, err := Analyze(s, Options{Reserve: ReserveWhereFits})
		if err != nil {
			t.Fatal(err)
		}
		if where.Fits != all.Fits || where.Peak != all.Peak || where.Need != all.Need {
			t.Errorf("%s where-fits: fits %v peak %d need %d, want all's %v %d %d", c.gpu, where.Fits, where.Peak, where.Need, all.Fits, all.Peak, all.Need)
		}
		if c.allocFits != !where.ReserveSkipped {
			t.Errorf("%s where-fits: skipped %v, want %v", c.gpu, where.ReserveSkipped, !c.allocFits)
		}
		if !where.ReserveSkipped && (where.Reserved != all.Reserved || where.Device != all.Device || where.AllocSim.PeakReserved != all.AllocSim.PeakReserved) {
			t.Errorf("%s where-fits: reserved %d device %d, want all's %d %d", c.gpu, where.Reserved, where.Device, all.Reserved, all.Device)
		}
		none, err := Analyze(s, Options{Reserve: ReserveNone})
		if err != nil {
			t.Fatal(err)
		}
		if !none.ReserveSkipped || none.Reserved != 0 || none.Device != 0 || none.AllocSim != nil || none.Fits != c.allocFits || none.Peak != all.Peak || none.Need != all.Need {
			t.Errorf("%s none: skipped %v, reserved %d, device %d, sim %v, fits %v (want %v), peak %d need %d", c.gpu, none.ReserveSkipped, none.Reserved, none.Device, none.AllocSim != nil, none.Fits, c.allocFits, none.Peak, none.Need)
		}
		// A report's own figures at its peak are the package functions'.
		r, d, err := all.ProfilerPeaksAt(s, all.Peak)
		need, err2 := all.DeviceNeedAt(s, all.Peak)
		outside, err3 := outsideAllocator(s)
		wr, wd, err5 := profilerPeaksOf(s, all.Peak, all.GatherPool, all.AllocSim, outside)
		err3 = errors.Join(err3, err5)
		wn, err4 := DeviceNeed(s, all.Peak)
		if err != nil || err2 != nil || err3 != nil || err4 != nil || r != wr || d != wd || need != wn || r != all.Reserved || d != all.Device || need != all.Need {
			t.Errorf("%s: at the peak %d %d %d, want %d %d %d (%v %v %v %v)", c.gpu, r, d, need, wr, wd, wn, err, err2, err3, err4)
		}
	}
}

// ReservedModeOf names the reserve's source for the machine-readable
// outputs (qa16 M2): the simulation's segments, or the fraction and where
// it came from.
func TestReservedModeOf(t *testing.T) {
	s := loadFSDP(t)
	r, err := Analyze(s, Options{})
	if err != nil || r.ReservedMode != "simulated-default" || ReservedModeOf(s, r.AllocSim) != r.ReservedMode {
		t.Errorf("fsdp2 stage 3: %q (%v)", r.ReservedMode, err)
	}
	x, err := Analyze(loadFSDP(t, "memory.expandable_segments=true"), Options{})
	if err != nil || x.ReservedMode != "simulated-expandable" {
		t.Errorf("expandable: %q (%v)", x.ReservedMode, err)
	}
	r2, err := Analyze(loadFSDP(t, "parallelism.zero_stage=2"), Options{})
	if err != nil || r2.ReservedMode != "overhead 0.15 (default)" || r2.OverheadFrom != "" {
		t.Errorf("stage 2: %q, from %q (%v)", r2.ReservedMode, r2.OverheadFrom, err)
	}
	set := loadFSDP(t, "memory.allocator_overhead=0.2")
	rs, err := Analyze(set, Options{})
	if err != nil || rs.ReservedMode != "overhead 0.2 (memory.allocator_overhead)" || rs.Overhead != 0.2 || rs.OverheadFrom != "memory.allocator_overhead" || rs.AllocSim != nil {
		t.Errorf("allocator_overhead 0.2: %q, %g from %q (%v)", rs.ReservedMode, rs.Overhead, rs.OverheadFrom, err)
	}
	// A calibration's overhead (scenarios sets both fields from the file).
	set.Communication.Calibration = "cal.yaml"
	set.Memory.AllocatorOverheadFrom = "calibration cal.yaml (fitted to a reserved peak of 80.00 GiB)"
	if got := ReservedModeOf(set, nil); got != "overhead 0.2 (calibration cal.yaml)" {
		t.Errorf("calibration: %q", got)
	}
	if rc, err := Analyze(set, Options{}); err != nil || rc.OverheadFrom != set.Memory.AllocatorOverheadFrom {
		t.Errorf("calibration: from %q (%v)", rc.OverheadFrom, err)
	}
}

// reservedOn is what allocator a holds mapped on stream: its live and its
// cached blocks.
func reservedOn(a *Allocator, stream int) int64 {
	var n int64
	for _, b := range a.liveBlocks() {
		if b.seg.stream == stream {
			n += b.size
		}
	}
	for p := range a.free {
		for _, b := range a.freeBlocks(p) {
			if b.seg.stream == stream {
				n += b.size
			}
		}
	}
	return n
}

// packedShardGrads is what an expandable segment holding r's sharded
// gradients (scenario s), packed, reserves: their bytes, each rounded to
// 512 B, in 20 MiB pages, those of at most 1 MiB in the small pool's 2 MiB
// pages; and the large and small pools' bytes. FSDP2's root group
// (rootgroup.go) reduces into one output, the sum of its units'.
func packedShardGrads(s *scenarios.Scenario, r *Report) (packed, large, small int64) {
	root, lead := fsdp2RootGroup(s, r)
	shards := make([]int64, len(r.Units))
	for u, x := range r.Units {
		v := u
		if root != nil && root[u] {
			v = lead
		}
		shards[v] += x.ShardGrad
	}
	for _, g := range shards {
		switch n := allocRoundSize(g); {
		case g == 0:
		case n <= allocSmallSize:
			small += n
		default:
			large += n
		}
	}
	return (large+allocLargeBuf-1)/allocLargeBuf*allocLargeBuf + (small+allocSmallBuf-1)/allocSmallBuf*allocSmallBuf, large, small
}

// FSDP2 allocates each unit's reduce-scatter output, its sharded gradient,
// on the reduce-scatter stream in every version (foreach_reduce's "with
// torch.cuda.stream(reduce_scatter_stream)"; memory/allocseq.go), and
// since PyTorch 2.5 the reduce-scatter input on the compute stream. Under
// expandable segments the reduce-scatter stream's segment then holds the
// step's sharded gradients, packed: their bytes, each rounded to 512 B,
// in 20 MiB pages (any of at most 1 MiB in the small pool's 2 MiB pages),
// kept mapped once the optimizer has zeroed them. Before 2.5
// (memory.fsdp2_rs_own_stream) the reduce-scatter inputs come on top.
func TestFSDP2ShardGradsOnTheReduceScatterStream(t *testing.T) {
	s := loadFSDP(t, "memory.expandable_segments=true")
	r, err := Analyze(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, large, small := packedShardGrads(s, r)
	_, a, err := simulate(s, r, SegmentsExpandable, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := reservedOn(a, StreamReduce); got != want || large == 0 {
		t.Errorf("reduce-scatter stream reserves %d B, want the sharded gradients' %d B (%d B large, %d B small)", got, want, large, small)
	}
	own := loadFSDP(t, "memory.expandable_segments=true", "memory.fsdp2_rs_own_stream=true")
	_, b, err := simulate(own, r, SegmentsExpandable, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := reservedOn(b, StreamReduce); got <= want {
		t.Errorf("before PyTorch 2.5 the reduce-scatter stream reserves %d B, want more than the sharded gradients' %d B (the inputs too)", got, want)
	}
}

// FSDP2 copies each unit's all-gather output out at the unit's pre-forward
// (FSDPParamGroup.pre_forward → wait_for_unshard), in the forward's unit
// order, and frees the previous unit's output at the next copy-out
// (AllGatherState). The embedding's forward records no allocation in the
// timeline; the root's group (rootgroup.go: embedding, final norm and the
// untied output, all of V·h the same size but the norm) is copied out all
// the same before the first block's, onto the compute stream, and its
// all-gather output is gone once the first block's is copied out (the
// replay once held it on the all-gather stream until the embedding's
// backward). Replayed up to the first block's forward compute: two blocks
// of V·h parameters on the compute stream (the embedding's and the
// output's), none on the all-gather stream.
func TestFSDP2EmbeddingCopiedOutInForward(t *testing.T) {
	s := loadFSDP(t)
	r, err := Analyze(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	emb := unitIndex(t, r, "embedding")
	cut := *r
	cut.events = nil
	for _, e := range r.events {
		cut.events = append(cut.events, e)
		if e.Phase == PhaseForward && e.Op == OpCompute && e.Unit > emb && e.Delta > 0 {
			break
		}
	}
	_, a, err := simulate(s, &cut, SegmentsDefault, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	size := allocRoundSize(r.Units[emb].Gather)
	var compute, gather int
	for _, b := range a.liveBlocks() {
		if b.size != size {
			continue
		}
		switch b.seg.stream {
		case StreamCompute:
			compute++
		case StreamGather:
			gather++
		}
	}
	if compute != 2 || gather != 0 {
		t.Errorf("after the first block's copy-out: %d blocks of the embedding's %d B on the compute stream, %d on the all-gather stream; want 2 (the embedding's and the output's) and 0", compute, size, gather)
	}
}

// The allocator's series over the reported step (AllocSim.Series): from the
// step's start, after events of the timeline in order, never reserving
// less than it allocates; without a limit the reserve only grows, so the
// steady step's series holds the reserved peak; the step ends where it
// began (the timeline returns to the at-rest state; under accumulation
// with more: the earlier micro-steps' sharded gradients), and the allocated
// bytes peak where the memory model's walk does, within one gather and the
// allocator's rounding (as TestSimulateReservedFollowsTheTimeline).
func TestSimulateReservedSeries(t *testing.T) {
	for _, sets := range [][]string{nil, {"communication.boundary=fsdp1"}, {"memory.expandable_segments=true"}, {"training.grad_accum=2"}} {
		s := loadFSDP(t, sets...)
		r, err := Analyze(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		sim := r.AllocSim
		if sim == nil || len(sim.Series) < 2 {
			t.Fatalf("%v: series %+v", sets, sim)
		}
		ser := sim.Series
		if ser[0].Event != -1 {
			t.Errorf("%v: first point after event %d, want the step's start (-1)", sets, ser[0].Event)
		}
		var alloc int64
		for i, p := range ser {
			if i > 0 && (p.Event <= ser[i-1].Event || p.Event >= len(r.events)) {
				t.Errorf("%v: point %d after event %d (previous %d, %d events)", sets, i, p.Event, ser[i-1].Event, len(r.events))
			}
			if p.Reserved < p.Allocated {
				t.Errorf("%v: point %d: reserved %d below allocated %d", sets, i, p.Reserved, p.Allocated)
			}
			if i > 0 && p.Reserved < ser[i-1].Reserved {
				t.Errorf("%v: point %d: the reserve fell from %d to %d without a limit", sets, i, ser[i-1].Reserved, p.Reserved)
			}
			alloc = max(alloc, p.Allocated)
		}
		if got := sim.SeriesPeakReserved(); got != sim.PeakReserved {
			t.Errorf("%v: series' reserved peak %d, simulated peak %d", sets, got, sim.PeakReserved)
		}
		// Under accumulation the last micro-step starts with the earlier
		// ones' sharded gradients, which its optimizer frees.
		if first, last := ser[0].Allocated, ser[len(ser)-1].Allocated; first != last && s.Training.GradAccum <= 1 || first <= last && s.Training.GradAccum > 1 {
			t.Errorf("%v: the step starts with %d allocated and ends with %d", sets, first, last)
		}
		var gather int64
		for _, u := range r.Units {
			gather = max(gather, u.Gather)
		}
		if model := allocatorBytes(s, r.Peak); alloc < model || alloc > model+gather+int64(sim.Requests)*allocMinBlock {
			t.Errorf("%v: series' allocated peak %d, model's %d (+ at most one gather %d and the rounding)", sets, alloc, model, gather)
		}
	}
}

// Within a GPU that makes the allocator release its cache every step, the
// series shows the reserve falling at the release and stays within the
// limit; out of memory, there is no series (the step does not run).
func TestSimulateReservedSeriesRetries(t *testing.T) {
	r, err := Analyze(loadFSDP(t, "cluster.gpu_memory=17.5GiB"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	sim := r.AllocSim
	if sim == nil || sim.LastStepRetries() == 0 {
		t.Fatalf("17.5 GiB: %+v: the case needs retries in the last step", sim)
	}
	fell := false
	for i, p := range sim.Series {
		if p.Reserved > sim.Limit || p.Reserved < p.Allocated {
			t.Errorf("point %d: reserved %d, allocated %d, limit %d", i, p.Reserved, p.Allocated, sim.Limit)
		}
		fell = fell || i > 0 && p.Reserved < sim.Series[i-1].Reserved
	}
	if !fell {
		t.Errorf("the last step released its cache %d times, but its series never falls", sim.LastStepRetries())
	}
	if peak := sim.SeriesPeakReserved(); peak > sim.PeakReserved || peak < sim.Limit*9/10 {
		t.Errorf("series' reserved peak %d, simulated peak %d, limit %d", peak, sim.PeakReserved, sim.Limit)
	}
	oom, err := Analyze(loadFSDP(t, "cluster.gpu_memory=16.75GiB"), Options{})
	if err != nil || oom.AllocSim == nil || oom.AllocSim.OOM == nil || oom.AllocSim.Series != nil {
		t.Errorf("16.75 GiB: %v, series of %d points, want out of memory without one", err, len(oom.AllocSim.Series))
	}
}

// A point holds the most the allocator reserved during its event: two
// 4 GiB tensors then, freed, a 5 GiB one within a 10 GiB limit make the
// allocator release both cached segments (a retry), so the event ends
// with 5 GiB reserved after holding 8 GiB; the next point reads 5 GiB.
func TestMarkKeepsTheReserveWithinAnEvent(t *testing.T) {
	a, err := NewAllocator(SegmentsDefault, 10<<30)
	if err != nil {
		t.Fatal(err)
	}
	st := &simState{a: a}
	st.mark(-1)
	h1, _ := a.Malloc(0, 4<<30)
	h2, _ := a.Malloc(0, 4<<30)
	if a.Free(h1) != nil || a.Free(h2) != nil {
		t.Fatal("free")
	}
	if _, err := a.Malloc(0, 5<<30); err != nil || a.Retries != 1 {
		t.Fatalf("5 GiB: %v, %d retries, want one", err, a.Retries)
	}
	st.mark(0)
	st.mark(1)
	want := []ReservedPoint{{-1, 0, 0}, {0, 5 << 30, 8 << 30}, {1, 5 << 30, 5 << 30}}
	if !slices.Equal(st.series, want) {
		t.Errorf("series %v, want %v", st.series, want)
	}
}

// TestReservedModeGatherPool (QA18 L7): DeepSpeed ZeRO-3's reserve holds
// its gather pool beside the fraction of the peak, and its mode says so.
func TestReservedModeGatherPool(t *testing.T) {
	s := loadFSDP(t, "communication.boundary=deepspeed")
	r, err := Analyze(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.GatherPoolHeld <= 0 || r.ReservedMode != "overhead 0.15 (default) + DeepSpeed's gather pool" {
		t.Errorf("deepspeed stage 3: pool held %d B, mode %q", r.GatherPoolHeld, r.ReservedMode)
	}
}
