package memory

import (
	"math"
	"slices"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// Reduce-scatters in flight at ZeRO-3. A unit's unsharded gradient lives
// from its backward until its reduce-scatter has read it; each stack bounds
// how far its backward may run ahead of those reduce-scatters, and so how
// many unreduced gradients it can hold at once when the network lags the
// compute. ReduceScatterLags gives the bound per unit u as a lag n(u):
// zero/ makes the backward of unit u wait for the end of the gradient sync
// of unit u+1+n(u), and the walk (timeline.go) keeps the gradients of the
// units after u whose syncs that dependency leaves pending alive while u
// computes, the most the replay can hold:
//
//	reshard, deepspeed  DeepSpeed's ZeRO-3 records an event after each
//	          bucket's reduce-scatter and partition copy and, before launching
//	          the next one, pops the events that have completed and, when more
//	          than max_param_reduce_events = 2 are still outstanding,
//	          synchronizes the host on the oldest ("if len(self.
//	          param_reduce_events) > self.max_param_reduce_events: self.
//	          param_reduce_events.popleft().synchronize()", __reduce_and_
//	          partition_ipg_grads, deepspeed/runtime/zero/stage3.py at
//	          deepspeedai/DeepSpeed edaa7221267243c7be7fb49c5d5f5c4fb97b4641;
//	          events are recorded on CUDA, whose accelerator does not
//	          handles_memory_backpressure, accelerator/cuda_accelerator.py).
//	          The host thread that issues the backward blocks with it, so at
//	          most three reductions of reduce_bucket_size elements
//	          (communication.bucket_size) are launched and not done while the
//	          backward computes. DeepSpeed launches them bucket by bucket as
//	          the gradients arrive; zerosim's ZeRO-3 schedule reduces a unit
//	          once its backward has ended (the layout's rule), so n(u) is the
//	          most whole units after u whose elements three buckets hold (a
//	          unit that would overflow them DeepSpeed has mostly reduced
//	          already, all but the buckets in flight), at least one: the
//	          one unit whose reduce-scatter overlaps the next backward,
//	          which DeepSpeed overlaps with the unit's own backward
//	          instead. reshard, the seeds' schedule, is what `zerosim import
//	          deepspeed` and the ZeRO++ keys (DeepSpeed's alone) resolve to,
//	          and its stage-3 memory follows DeepSpeed's: it takes DeepSpeed's
//	          bound (and, on one communicator, is DeepSpeed from v0.19.3:
//	          GradientCommunicator).
//	fsdp2, fsdp2_head  n = 1. FSDP2's post_backward makes the compute stream
//	          wait for the previous unit's reduce-scatter event before it
//	          issues its own ("self.device_handle.current_stream().
//	          wait_event(self.comm_ctx.reduce_scatter_state.event)" in
//	          FSDPParamGroup.post_backward, torch/distributed/fsdp/
//	          _fully_shard/_fsdp_param_group.py at pytorch/pytorch
//	          002a76fbfea0ac0f199e4b8e2a0691074796c908, the same line as
//	          at 415cc262 under torch/distributed/_composable/fsdp/): one
//	          in flight.
//	fsdp1     unbounded. FSDP1's _post_backward_hook issues the
//	          reduce-scatter on the post-backward stream after
//	          "state._streams["post_backward"].wait_stream(torch.cuda.
//	          current_stream())" and only record_streams the unsharded
//	          gradient there; the compute stream waits for that stream once,
//	          in _post_backward_final_callback at the end of the backward
//	          (torch/distributed/fsdp/_runtime_utils.py at pytorch/pytorch
//	          00ae0bc91ac2c1718d1baa193d9d299e2b82776c). Nothing in FSDP1
//	          holds the backward back (nil): the walk keeps the least that
//	          overlap always holds, one unit's reduce-scatter beside the next
//	          backward (walkLags), and the replay may hold more.
//
// Without overlap every task runs on the compute stream in order: a unit's
// reduce-scatter ends before the next backward, none in flight.
func ReduceScatterLags(s *scenarios.Scenario) []int {
	if s.Parallelism.Stage != 3 || s.Communication.Boundary == scenarios.BoundaryFSDP1 {
		return nil
	}
	layers := s.Model.LayerList
	lags := make([]int, len(layers))
	if s.Communication.Overlap != nil && !*s.Communication.Overlap {
		return lags
	}
	if s.Communication.Boundary.FSDP2() {
		for u := range lags {
			lags[u] = 1
		}
		return lags
	}
	// DeepSpeed: reduce_bucket_size elements (communication.bucket_size
	// over the gradients' element size, as import deepspeed sets it).
	elem := s.Training.ParamDType.Bytes16or32()
	inFlight, err := units.Mul(deepSpeedMaxParamReduceEvents+1, max(int64(s.Communication.BucketSize)/elem, 1))
	if err != nil {
		inFlight = math.MaxInt64 // more than any model holds: every unit may lag
	}
	// A window over the units after u, slid along: held is the elements
	// of units u+1 … j−1 (a model's total fits in int64), so the lags
	// take one pass, not one per unit (104,800 units are within the
	// replay's limits). The window takes the whole units whose elements
	// fit in the three buckets: a unit that would take it past them is
	// not left pending, as DeepSpeed, which reduces bucket by bucket as
	// the gradients arrive, has reduced all but its last buckets by then
	// (QA30 M1: counting it pending held all of gpt-oss-120b's next
	// expert unit, 6.37 GB of unreduced gradients beside this one's,
	// against at most 3 × 20,000,000 elements DeepSpeed leaves in flight;
	// the replay's reduce-scatter had ended, the walk's bound peaked
	// 4.16 GiB above it).
	j, held := 0, int64(0)
	for u := range lags {
		if j < u+1 {
			j, held = u+1, 0
		}
		for j < len(layers) && held+int64(layers[j].Params) <= inFlight {
			held += int64(layers[j].Params)
			j++
		}
		lags[u] = max(j-u-1, 1)
		if j > u+1 {
			held -= int64(layers[u+1].Params)
		}
	}
	return lags
}

// walkLags are the lags the walk keeps: the stack's, or under FSDP1 with
// overlap one per unit (the reduce-scatter of the unit before, which starts
// as the next backward does); nil when no reduce-scatter lags. FSDP's
// stage 2 (FSDPStage2) reduces unit by unit as its stage 3 does
// (shardsPerUnit): FSDP2's post_backward waits for the previous
// reduce-scatter and FSDP1's overlaps the next backward alike, one unit
// in flight per unit; its schedule reduces by bucket, with no bound on
// the backward (ReduceScatterLags is stage 3's).
func walkLags(s *scenarios.Scenario) []int {
	lags := ReduceScatterLags(s)
	if lags == nil && (s.Parallelism.Stage == 3 || FSDPStage2(s)) && (s.Communication.Overlap == nil || *s.Communication.Overlap) {
		lags = make([]int, len(s.Model.LayerList))
		for u := range lags {
			lags[u] = 1
		}
	}
	if !slices.ContainsFunc(lags, func(n int) bool { return n > 0 }) {
		return nil // no reduce-scatter lags
	}
	return lags
}

// deepSpeedMaxParamReduceEvents is DeepSpeed ZeRO-3's
// max_param_reduce_events ("TODO. make this configurable via JSON",
// stage3.py at edaa7221267243c7be7fb49c5d5f5c4fb97b4641): the host waits when more are outstanding.
const deepSpeedMaxParamReduceEvents = 2
