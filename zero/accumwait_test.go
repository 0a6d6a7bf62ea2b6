package zero

import (
	"fmt"
	"testing"

	"github.com/zerosim/zerosim/collectives"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/topology"
	"github.com/zerosim/zerosim/units"
)

// fourLayerMLP is an MLP of four layers of params bf16 parameters each on
// the 2 GPUs of one A100 node (NVLink3, 300 GB/s, 500 ns), with explicit
// layer times (forward 1 ms, backward 2 ms), at ZeRO stage stage, with
// the communication section comm (a flow mapping): with no compute
// interference every time of the step is a sum of layer times and
// collective closed forms.
func fourLayerMLP(params int64, stage int, comm string) string {
	layers := ""
	for i := range 4 {
		layers += fmt.Sprintf("    - {name: l%d, params: %d, fwd: 1ms, bwd: 2ms}\n", i, params)
	}
	return "version: 1\ncluster: {nodes: 1, gpus_per_node: 2, gpu: A100-80GB}\n" +
		"model:\n  kind: mlp\n  hidden: 64\n  groups: [{name: dense, precision: bf16}]\n  layer_list:\n" + layers +
		fmt.Sprintf("parallelism: {dp: 2, zero_stage: %d}\ncommunication: %s\n", stage, comm)
}

// fourLayersYAML is four layers of 100M bf16 parameters (200 MB of
// gradients each) at ZeRO-1, ring collectives, no compute interference.
var fourLayersYAML = fourLayerMLP(100000000, 1, "{algorithm: ring, compute_interference: 0}")

func fourLayers(t *testing.T, sets ...string) *scenarios.Scenario {
	t.Helper()
	s, err := scenarios.Load("four-layers.yaml", []byte(fourLayersYAML), sets)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// closedForm is the ring closed form of collective task task of res over
// its group instance 0 (collectives.ClosedForm: (n−1)·α + (n−1)·⌈S/n⌉/B
// for a reduce-scatter or all-gather, twice that for an all-reduce).
func closedForm(t *testing.T, s *scenarios.Scenario, res *Result, task *Task) units.Duration {
	t.Helper()
	topo, err := topology.Build(s)
	if err != nil {
		t.Fatal(err)
	}
	m := groupMembers(res.N, res.K, res.Schedule.EP, task.Group, 0)
	cf, err := collectives.ClosedForm(topo, collectives.Spec{Op: opOf[task.Kind], Algo: collectives.Ring, Group: m, Bytes: units.Bytes(task.Bytes)})
	if err != nil {
		t.Fatal(err)
	}
	return cf
}

// TestGradSyncStartsWhenItsBucketIsFull: at stages 0–2 a gradient bucket is
// reduced once every gradient in it is computed (DDP's reducer and
// DeepSpeed's ipg buckets launch a bucket when it is full), that is when
// the backward of the bucket's first unit — the last of its units the
// backward reaches — ends. With the layers' explicit times the backward
// runs l3, l2, l1, l0, 2 ms each, after 4 ms of forward: a bucket holding
// l0 starts reducing at 4 + 4·2 = 12 ms; one holding l2 and l3 (and not
// l1) at 4 + 2·2 = 8 ms.
func TestGradSyncStartsWhenItsBucketIsFull(t *testing.T) {
	ms := units.Millisecond
	for _, c := range []struct {
		name string
		sets []string
		// want is each bucket's sync start by the bucket's first unit.
		want map[int]units.Duration
	}{
		// One 1 GB bucket holds the 800 MB of gradients: ready at l0.
		{"stage 0, one bucket", []string{"parallelism.zero_stage=0", "communication.bucket_size=1GB"}, map[int]units.Duration{0: 12 * ms}},
		{"stage 1, one bucket", []string{"communication.bucket_size=1GB"}, map[int]units.Duration{0: 12 * ms}},
		{"stage 2, one bucket", []string{"parallelism.zero_stage=2", "communication.bucket_size=1GB"}, map[int]units.Duration{0: 12 * ms}},
		// 400 MB buckets: two layers each.
		{"stage 1, two buckets", []string{"communication.bucket_size=400MB"}, map[int]units.Duration{0: 12 * ms, 2: 8 * ms}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := Replay(fourLayers(t, c.sets...), Options{KeepSpans: true, SpanRanks: 1})
			if err != nil {
				t.Fatal(err)
			}
			sc := res.Schedule
			got := map[int]units.Duration{}
			for _, sp := range res.Spans[0] {
				task := &sc.Tasks[sp.Task]
				if task.Phase != PhaseBackwardRS && task.Phase != PhaseBackwardAR {
					continue
				}
				bk := sc.Buckets[task.Bucket]
				if _, dup := got[bk.FirstUnit]; dup {
					t.Fatalf("two syncs for buckets starting at unit %d", bk.FirstUnit)
				}
				got[bk.FirstUnit] = sp.Start
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("sync start by bucket's first unit %v, want %v", got, c.want)
			}
		})
	}
}

// TestMicroStepWaitsForGradientSyncs: where a micro-step reduces its
// gradients, the next micro-step's forward starts only once those
// reductions have ended. DeepSpeed's ZeRO-1/2 ends every backward in
// independent_gradient_partition_epilogue, which under overlap_comm
// synchronizes the device (get_accelerator().synchronize(),
// deepspeed/runtime/zero/stage_1_and_2.py:929-931 at deepspeedai/DeepSpeed
// edaa7221267243c7be7fb49c5d5f5c4fb97b4641, called from
// engine.allreduce_gradients on every micro-step at stage ≥ 2); PyTorch
// FSDP's root _post_backward_final_callback makes the compute stream wait
// for the post-backward stream's reduce-scatters (cited at microStep3).
//
// Four 1 ms + 2 ms layers, two micro-steps. Where the last reduction of a
// micro-step (the one of the bucket holding l0, issued as the backward
// ends) is exposed before the next forward, the step is
// a·(4 + 8) ms + a·sync + optimizer (+ the post-optimizer all-gather at
// stages 1 and 2), the syncs' ring closed forms. At stages 0 and 1 only the
// last micro-step reduces (no_sync): a·12 ms + one sync + optimizer.
func TestMicroStepWaitsForGradientSyncs(t *testing.T) {
	const a = 2
	for _, c := range []struct {
		name string
		sets []string
		// syncs is how many of the exposed sync's closed forms the step
		// holds: a where every micro-step reduces, 1 where only the last.
		syncs int64
	}{
		{"stage 0, no_sync until the last", []string{"parallelism.zero_stage=0", "communication.bucket_size=1GB"}, 1},
		{"stage 1, no_sync until the last", []string{"communication.bucket_size=1GB"}, 1},
		// torchtitan's DDP and llm-foundry's NO_SHARD never enter no_sync
		// (scenarios.Scenario.GradSyncEvery).
		{"stage 0, torchtitan", []string{"stack=torchtitan", "parallelism.zero_stage=0", "communication.bucket_size=1GB"}, a},
		{"stage 0, llm-foundry", []string{"stack=llm-foundry", "parallelism.zero_stage=0", "communication.bucket_size=1GB"}, a},
		// llm-foundry without fsdp_config is Composer DDP, no_sync until
		// the last micro-batch: its importer writes grad_sync: last.
		{"stage 0, llm-foundry DDP", []string{"stack=llm-foundry", "parallelism.zero_stage=0", "training.grad_sync=last", "communication.bucket_size=1GB"}, 1},
		{"stage 0, fms-fsdp NO_SHARD", []string{"stack=fms-fsdp", "parallelism.zero_stage=0", "communication.bucket_size=1GB"}, a},
		{"stage 0, grad_sync every", []string{"parallelism.zero_stage=0", "training.grad_sync=every", "communication.bucket_size=1GB"}, a},
		{"stage 1, grad_sync every", []string{"training.grad_sync=every", "communication.bucket_size=1GB"}, a},
		{"stage 0, deepspeed", []string{"stack=deepspeed", "parallelism.zero_stage=0", "communication.bucket_size=1GB"}, 1},
		{"stage 0, megatron", []string{"stack=megatron", "parallelism.zero_stage=0", "communication.bucket_size=1GB"}, 1},
		{"stage 2, one bucket", []string{"parallelism.zero_stage=2", "communication.bucket_size=1GB"}, a},
		// FSDP's no_sync at stages 2 and 3: one reduction per step.
		{"stage 2, grad_sync last", []string{"parallelism.zero_stage=2", "training.grad_sync=last", "communication.bucket_size=1GB"}, 1},
		{"stage 3, K=N, grad_sync last", []string{"parallelism.zero_stage=3", "parallelism.k=2", "training.grad_sync=last"}, 1},
		// K = N: each unit's gradients all-reduced across the two ranks,
		// no gathers; l3..l1's hide behind the next unit's backward (a
		// 200 MB all-reduce is 2·(0.5 µs + 100 MB / 300 GB/s) ≈ 0.668 ms
		// < 2 ms), l0's does not.
		{"stage 3, K=N", []string{"parallelism.zero_stage=3", "parallelism.k=2"}, a},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := fourLayers(t, append(c.sets, fmt.Sprintf("training.grad_accum=%d", a))...)
			res, err := Replay(s, Options{KeepSpans: true, SpanRanks: 1})
			if err != nil {
				t.Fatal(err)
			}
			sc := res.Schedule
			want := a * (4 + 8) * units.Millisecond
			var last, gather *Task // the sync of the bucket holding l0, the post-optimizer gather
			for i := range sc.Tasks {
				task := &sc.Tasks[i]
				switch {
				case task.Kind == Optimizer:
					want += task.Dur
				case task.Phase == PhasePostOptAG:
					gather = task
				case task.Kind.IsComm() && task.Micro == a-1 && (task.Unit == 0 || task.Unit < 0 && sc.Buckets[task.Bucket].FirstUnit == 0):
					last = task
				}
			}
			if last == nil {
				t.Fatal("no gradient sync of the bucket holding l0")
			}
			want += units.Duration(c.syncs) * closedForm(t, s, res, last)
			if gather != nil {
				want += closedForm(t, s, res, gather)
			}
			if res.StepTime != want {
				t.Errorf("step %v (%d ps), want %v (%d ps)", res.StepTime, res.StepTime, want, want)
			}
			// And in the spans: micro-step m's first forward starts after
			// every sync of micro-step m−1 has ended.
			end := map[int]units.Duration{}
			for _, sp := range res.Spans[0] {
				if task := &sc.Tasks[sp.Task]; task.Kind.IsComm() && (task.Phase == PhaseBackwardRS || task.Phase == PhaseBackwardAR || task.Phase == PhaseInterAR) {
					end[task.Micro] = max(end[task.Micro], sp.End)
				}
			}
			for _, sp := range res.Spans[0] {
				if task := &sc.Tasks[sp.Task]; task.Kind == Forward && task.Unit == 0 && task.Micro > 0 {
					if e, ok := end[task.Micro-1]; ok && sp.Start < e {
						t.Errorf("micro-step %d's forward starts at %v, before micro-step %d's gradient syncs end at %v", task.Micro, sp.Start, task.Micro-1, e)
					}
				}
			}
		})
	}
}
