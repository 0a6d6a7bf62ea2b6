package zero

import (
	"sort"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// TestOneCommunicatorPerProcessGroup: a ZeRO-3 step's parameter
// all-gathers and gradient reduce-scatters over one shard group run at the
// same time only where the stack gives them two communicators. PyTorch
// FSDP1 and FSDP2 issue both over the shard group's one process group, so
// one NCCL communicator, which runs them one after another whatever
// stream each is issued on; DeepSpeed ZeRO-3 gathers over the world group
// and reduces over a clone of it (memory.GradientCommunicator and
// zero/run.go commKey cite the sources); the default boundary keeps one
// communicator, as the memory model counts. Each of DeepSpeed's two
// communicators is still serial: no two all-gathers, nor two
// reduce-scatters, over one group instance overlap under any stack.
// Before the replay named communicators, every stack overlapped the two
// (they were keyed by zerosim's streams).
func TestOneCommunicatorPerProcessGroup(t *testing.T) {
	for _, c := range []struct {
		boundary     string
		wantOverlaps bool // an all-gather and a reduce-scatter over one group at once
	}{
		{"reshard", false},
		{"fsdp1", false},
		{"fsdp2", false},
		{"fsdp2_head", false},
		{"deepspeed", true},
	} {
		for _, full := range []bool{false, true} {
			data, _ := scenarios.Example("default")
			s, err := scenarios.Load("default.yaml", data, []string{"parallelism.zero_stage=3", "communication.boundary=" + c.boundary,
				"communication.backward_prefetch_depth=2"})
			if err != nil {
				t.Fatal(err)
			}
			type inst struct {
				g GroupKind
				i int
			}
			type wire struct {
				k          Kind
				start, end units.Duration
			}
			res, err := Replay(s, Options{Full: full})
			if err != nil {
				t.Fatal(err)
			}
			byInst := map[inst][]wire{}
			for _, c := range res.Collectives {
				byInst[inst{c.Group, c.GroupIndex}] = append(byInst[inst{c.Group, c.GroupIndex}], wire{c.Kind, c.Start, c.End})
			}
			var agrs, same int
			for _, rs := range byInst {
				sort.Slice(rs, func(a, b int) bool { return rs[a].start < rs[b].start })
				for a := range rs {
					for b := a + 1; b < len(rs) && rs[b].start < rs[a].end; b++ {
						if rs[a].start == rs[a].end || rs[b].start == rs[b].end {
							continue
						}
						if rs[a].k == rs[b].k {
							same++
						} else if (rs[a].k == AllGather) != (rs[b].k == AllGather) {
							agrs++
						}
					}
				}
			}
			if same != 0 {
				t.Errorf("%s (full %v): %d pairs of one kind over one group instance overlap, want none", c.boundary, full, same)
			}
			if (agrs > 0) != c.wantOverlaps {
				t.Errorf("%s (full %v): %d all-gather/reduce-scatter pairs over one group instance overlap; want overlaps: %v",
					c.boundary, full, agrs, c.wantOverlaps)
			}
		}
	}
}
