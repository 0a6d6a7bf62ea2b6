package memory

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// allocCounters are the counters a decision of the allocator left.
type allocCounters struct {
	next                        int64
	allocated, reserved, high   int64
	peakAllocated, peakReserved int64
	segments, retries           int
}

// sameState reports where a and the oracle ref differ: in their counters
// or their free and unmapped sets, compared in order as (stream, size,
// address); "" when they do not.
func sameState(a *Allocator, ref *refAllocator) string {
	c := allocCounters{a.next, a.Allocated, a.Reserved, a.high, a.PeakAllocated, a.PeakReserved, a.Segments, a.Retries}
	rc := allocCounters{ref.next, ref.Allocated, ref.Reserved, ref.high, ref.PeakAllocated, ref.PeakReserved, ref.Segments, ref.Retries}
	if c != rc {
		return fmt.Sprintf("counters %+v, oracle %+v", c, rc)
	}
	same := func(set string, sets [][]bkey, bs []*refBlock, mapped bool) string {
		key := (*ablock).key
		if !mapped {
			key = (*ablock).unmappedKey
		}
		// The stream's sets one after the other: the oracle's order by
		// stream, size, address.
		var ks []bkey
		var streams []int
		for st, s := range sets {
			ks = append(ks, s...)
			for range s {
				streams = append(streams, st)
			}
		}
		if len(ks) != len(bs) {
			return fmt.Sprintf("%s set of %d blocks, oracle %d", set, len(ks), len(bs))
		}
		for i, k := range ks {
			b, rb := a.blocks[k.id], bs[i]
			if key(b) != k || b.mapped != mapped || b.allocated || b.seg.stream != streams[i] {
				return fmt.Sprintf("%s set of stream %d: key %+v names block %+v", set, streams[i], k, *b)
			}
			if b.seg.stream != rb.seg.stream || b.size != rb.size || b.addr != rb.addr {
				return fmt.Sprintf("%s set [%d]: stream %d size %d addr %d, oracle %d %d %d", set, i, b.seg.stream, b.size, b.addr, rb.seg.stream, rb.size, rb.addr)
			}
		}
		return ""
	}
	for p := range 2 {
		if d := same("free", a.free[p], ref.free[p], true); d != "" {
			return d
		}
		if d := same("unmapped", a.unmapped[p], ref.unmapped[p], false); d != "" {
			return d
		}
	}
	return ""
}

// replayAgainstOracle runs calls through a new Allocator and the oracle
// (allocator_oracle_test.go: allocator.go before perf22) in mode under
// limit and fails at the first call where they differ: the handle, the
// block handed out (stream, address, size), the error, the counters or
// the sets of free and unmapped blocks. It returns the calls replayed and
// the retries and out-of-memory errors met. A free in calls names the
// Malloc call (1-based) whose handle it frees; one that got none (out of
// memory, a later call) is freed as handle 0 or an unknown one in both.
func replayAgainstOracle(t *testing.T, name string, mode SegmentMode, limit int64, calls []allocCall) (n, retries, ooms int) {
	t.Helper()
	a, err := NewAllocator(mode, limit)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := newRefAllocator(mode, limit)
	if err != nil {
		t.Fatal(err)
	}
	var hs, rhs []int
	for i, c := range calls {
		var got, want string
		if c.free == 0 {
			h, err := a.Malloc(c.stream, c.n)
			rh, rerr := ref.Malloc(c.stream, c.n)
			hs, rhs = append(hs, h), append(rhs, rh)
			// The oracle numbers its handles from 1; a handle here
			// carries that number above the block's id.
			got, want = fmt.Sprintf("handle %d err %v", h>>handleIDBits, err), fmt.Sprintf("handle %d err %v", rh, rerr)
			if err == nil && rerr == nil {
				b, rb := a.blocks[h&(1<<handleIDBits-1)], ref.live[rh]
				got += fmt.Sprintf(" block stream %d addr %d size %d", b.seg.stream, b.addr, b.size)
				want += fmt.Sprintf(" block stream %d addr %d size %d", rb.seg.stream, rb.addr, rb.size)
			}
			var oom *OOMError
			if errors.As(err, &oom) {
				ooms++
			}
		} else {
			h, rh := c.free<<handleIDBits, c.free // unknown to both
			if c.free <= len(hs) {
				h, rh = hs[c.free-1], rhs[c.free-1]
			}
			got, want = fmt.Sprint(a.Free(h)), fmt.Sprint(ref.Free(rh))
			if h != rh && got != want {
				// The messages name the handles.
				got, want = fmt.Sprint(got != "<nil>"), fmt.Sprint(want != "<nil>")
			}
		}
		if got != want {
			t.Fatalf("%s: call %d %+v: %s, oracle %s", name, i, c, got, want)
		}
		if d := sameState(a, ref); d != "" {
			t.Fatalf("%s: call %d %+v: %s", name, i, c, d)
		}
	}
	return len(calls), a.Retries, ooms
}

// TestAllocatorMatchesOracle replays the requests of FSDP steps (both
// FSDPs, micro-batches, recompute, accumulation, context parallelism, a
// MoE, default and expandable segments, under limits that force retries
// and out-of-memory) and of random request streams through the allocator
// and its oracle, the allocator before its sets held pointer-free keys
// (perf22), and requires the same decision at every call.
func TestAllocatorMatchesOracle(t *testing.T) {
	var calls, retries, ooms int
	check := func(name string, mode SegmentMode, limit int64, cs []allocCall) {
		n, r, o := replayAgainstOracle(t, name, mode, limit, cs)
		calls, retries, ooms = calls+n, retries+r, ooms+o
	}
	for _, sets := range [][]string{nil, {"communication.boundary=fsdp1"}, {"training.recompute=op"}, {"training.recompute=none", "training.micro_batch=1"},
		{"training.micro_batch=1"}, {"training.micro_batch=4"}, {"training.grad_accum=2"}, {"training.grad_accum=3", "communication.boundary=fsdp1"},
		{"parallelism.cp=2", "parallelism.dp=4"}, {"parallelism.cp=2", "parallelism.dp=4", "communication.boundary=fsdp1"},
		{"training.shard_dtype=bf16"}, {"memory.fsdp2_rs_own_stream=true"},
		{"moe", "parallelism.ep=8"}, {"moe", "parallelism.ep=8", "communication.boundary=fsdp1"}} {
		var s *scenarios.Scenario
		if len(sets) > 0 && sets[0] == "moe" {
			s = loadMoE(t, sets[1:]...)
		} else {
			s = loadFSDP(t, sets...)
		}
		r, err := Analyze(s, Options{Reserve: ReserveNone})
		if err != nil {
			t.Fatal(err)
		}
		for _, mode := range []SegmentMode{SegmentsDefault, SegmentsExpandable} {
			record := func(limit int64) (AllocSim, []allocCall) {
				a, err := NewAllocator(mode, limit)
				if err != nil {
					t.Fatal(err)
				}
				var cs []allocCall
				a.calls = &cs
				sim, _, err := simulateOn(s, r, a, 0)
				if err != nil && sim.OOM == nil {
					t.Fatal(err)
				}
				for i := range cs {
					// The handle's Malloc call: the replay stops at
					// its first out-of-memory.
					cs[i].free >>= handleIDBits
				}
				return sim, cs
			}
			sim, cs := record(0)
			name := fmt.Sprintf("%v mode %d", sets, mode)
			check(name, mode, 0, cs)
			// Limits between the allocated and the reserved peak force
			// retries; below the allocated peak the replay runs out.
			for _, limit := range []int64{sim.PeakAllocated + (sim.PeakReserved-sim.PeakAllocated)/3, sim.PeakAllocated + 64<<20, sim.PeakAllocated * 19 / 20} {
				_, cs := record(limit)
				check(fmt.Sprintf("%s limit %d", name, limit), mode, limit, cs)
			}
		}
	}
	if retries == 0 || ooms == 0 {
		t.Errorf("FSDP steps: %d calls, %d retries, %d out of memory: want retries and out-of-memory errors", calls, retries, ooms)
	}
	t.Logf("FSDP steps: %d calls, %d retries, %d out of memory", calls, retries, ooms)
	calls, retries, ooms = 0, 0, 0
	// Random requests on three streams, sizes over both pools and the
	// segment sizes' thresholds, frees of live, freed and unknown handles.
	for seed := range uint64(8) {
		rng := rand.New(rand.NewPCG(seed, 22))
		var cs []allocCall
		live := []int{}
		h := 0 // Malloc calls
		for range 2000 {
			switch x := rng.IntN(100); {
			case x < 55:
				var n int64
				switch rng.IntN(4) {
				case 0:
					n = rng.Int64N(allocSmallSize + 1)
				case 1:
					n = allocSmallSize + rng.Int64N(allocMinLarge)
				case 2:
					n = rng.Int64N(64 << 20)
				default:
					n = (1 + rng.Int64N(16)) << 20
				}
				cs = append(cs, allocCall{stream: rng.IntN(3), n: n})
				h++
				live = append(live, h)
			case x < 97 && len(live) > 0:
				i := rng.IntN(len(live))
				cs = append(cs, allocCall{free: live[i]})
				live = slices.Delete(live, i, i+1)
			default:
				cs = append(cs, allocCall{free: rng.IntN(h + 2)})
			}
		}
		for _, mode := range []SegmentMode{SegmentsDefault, SegmentsExpandable} {
			for _, limit := range []int64{0, 1 << 30, 400 << 20} {
				check(fmt.Sprintf("seed %d mode %d limit %d", seed, mode, limit), mode, limit, cs)
			}
		}
	}
	// The cases must have exercised what they claim.
	if retries == 0 || ooms == 0 {
		t.Errorf("random: %d calls, %d retries, %d out of memory: want retries and out-of-memory errors", calls, retries, ooms)
	}
	t.Logf("random: %d calls, %d retries, %d out of memory", calls, retries, ooms)
}
