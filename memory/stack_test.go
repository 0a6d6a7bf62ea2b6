package memory

import (
	"testing"

	"github.com/zerosim/zerosim/collectives"
	"github.com/zerosim/zerosim/scenarios"
)

// TestHeadActivationFusedLoss: flash-attn's fused cross-entropy (MPT's
// loss) keeps the 16-bit logits and an fp32 log-sum-exp per token, and its
// backward writes one 16-bit gradient; the fp32 loss keeps 4·t·V and its
// backward two fp32 gradients. MPT-760M at micro-batch 12, seq 2048
// (t = 24,576, h = 1536, V = 50,368): the head keeps ln_f's input and
// statistics (2·t·h + 8·t), the output projection's input (2·t·h) and then
// 2·t·V + 4·t fused (2,475,687,936 + ...), 4·t·V in fp32.
func TestHeadActivationFusedLoss(t *testing.T) {
	const tk, h, V = 24576, 1536, 50368
	base := BlockDims{Arch: "gpt", Seq: 2048, Batch: 12, Hidden: h, Heads: 12, Vocab: V, LossFP32: true}
	common := int64(2*tk*h + 8*tk + 2*tk*h)
	for _, c := range []struct {
		fused             bool
		stored, transient int64
	}{
		{false, common + 4*tk*V, 2 * 4 * tk * V},
		{true, common + 2*tk*V + 4*tk, 2 * tk * V},
	} {
		d := base
		d.LossFused = c.fused
		s, tr, err := HeadActivation(d)
		if err != nil {
			t.Fatal(err)
		}
		if s != c.stored || tr != c.transient {
			t.Errorf("fused=%v: stored %d, transient %d; want %d, %d", c.fused, s, tr, c.stored, c.transient)
		}
	}
	// The fused loss saves 2·t·V kept and 6·t·V transient: 9.9 GB here.
	if saved := 2*tk*V - 4*tk + 6*tk*V; saved != 9_902_653_440 {
		t.Errorf("saving %d", saved)
	}
}

// TestFP32Shard: at stage 3 with training.shard_dtype fp32 (PyTorch FSDP
// under a mixed-precision policy) the rank holds its shard in fp32 as the
// optimizer's param, no 16-bit shard and no master copy: 4 + 4 + 4 bytes per
// parameter of its shard at rest instead of 2 + 4 + 4 + 4; the gathered
// unit stays 16-bit; the gradient shard is fp32; the optimizer's
// temporaries are two fp32 copies of the largest unit's shard (Composer's
// DecoupledAdamW, tensor by tensor) instead of an fp32 copy of every
// gradient. Stages 0–2 are unchanged.
func TestFP32Shard(t *testing.T) {
	const n = 8
	layers := []scenarios.Layer{{Name: "a", Params: 8000, Group: "dense"}, {Name: "b", Params: 16000, Group: "dense"}, {Name: "c", Params: 8000, Group: "dense"}}
	mk := func(stage int, fp32 bool) *Report {
		s := bigModel(32000, n, 1, n, stage)
		s.Model.LayerList = layers
		if fp32 {
			s.Training.ShardDType = scenarios.ShardFP32
		}
		return mustAnalyze(t, s, Options{})
	}
	for st := 0; st <= 2; st++ {
		a, b := mk(st, false), mk(st, true)
		if a.AtRest != b.AtRest || a.Peak != b.Peak {
			t.Errorf("stage %d: shard_dtype fp32 changed the memory (%d/%d vs %d/%d)", st, b.AtRest, b.Peak, a.AtRest, a.Peak)
		}
	}
	a, b := mk(3, false), mk(3, true)
	const shard = 32000 / n
	for _, c := range []struct {
		comp      Comp
		want, was int64
	}{
		{CompParams, 4 * shard, 2 * shard},
		{CompMaster, 0, 4 * shard},
		{CompAdamM, 4 * shard, 4 * shard},
		{CompAdamV, 4 * shard, 4 * shard},
	} {
		if got, old := b.Component(c.comp).AtRest, a.Component(c.comp).AtRest; got != c.want || old != c.was {
			t.Errorf("%s at rest: %d (default %d), want %d (default %d)", c.comp, got, old, c.want, c.was)
		}
	}
	var got, old int64
	for u := range b.Units {
		got, old = got+b.Units[u].ShardGrad, old+a.Units[u].ShardGrad
	}
	if got != 4*shard || old != 2*shard {
		t.Errorf("grad shards %d (default %d), want %d (%d)", got, old, 4*shard, 2*shard)
	}
	if got, old := b.Component(CompGathered).Peak, a.Component(CompGathered).Peak; got != old {
		t.Errorf("gathered %d, want the 16-bit %d", got, old)
	}
	if got, want := b.Component(CompStepTemp).Peak, int64(2*4*16000/n); got != want {
		t.Errorf("optimizer temporaries %d, want %d (2 fp32 copies of unit b's shard)", got, want)
	}
}

// TestAccumulatedShardGrads: with gradient accumulation at stage 3 the
// earlier micro-steps' gradient shards are alive from the start of the last
// micro-step (its first event) to the optimizer step, and each
// reduce-scatter's output is added into them; without it, or at stages
// 0–2, nothing changes.
func TestAccumulatedShardGrads(t *testing.T) {
	layers := []scenarios.Layer{{Name: "a", Params: 8000, Group: "dense"}, {Name: "b", Params: 16000, Group: "dense"}}
	mk := func(stage int, ga int64) *Report {
		s := bigModel(24000, 8, 1, 8, stage)
		s.Model.LayerList = layers
		s.Training.GradAccum = ga
		return mustAnalyze(t, s, Options{})
	}
	for st := 0; st <= 2; st++ {
		if a, b := mk(st, 1), mk(st, 4); a.Peak != b.Peak {
			t.Errorf("stage %d: GA 4 peak %d, GA 1 %d", st, b.Peak, a.Peak)
		}
	}
	one, ga := mk(3, 1), mk(3, 4)
	var shards int64
	for _, u := range ga.Units {
		shards += u.ShardGrad
	}
	var first *Event
	ev := ga.Timeline()
	for i := range ev {
		if ev[i].Component == CompGrads {
			first = &ev[i]
			break
		}
	}
	if first == nil || first.Delta != shards || first.Phase != PhaseForward || first.Unit != 0 {
		t.Errorf("first gradient event %+v, want +%d in unit 0's forward", first, shards)
	}
	if ga.AtRest != one.AtRest || ga.Peak <= one.Peak || ga.Peak > one.Peak+shards {
		t.Errorf("GA 4: at rest %d peak %d; GA 1: %d, %d; shards %d", ga.AtRest, ga.Peak, one.AtRest, one.Peak, shards)
	}
}

// TestDeepSpeedZeRO3Memory: communication.boundary deepspeed selects
// DeepSpeed's ZeRO-3 memory. Its optimizer's grad_partitions_flat_buffer
// (stage3.py _setup_for_real_optimizer at e9503fe4) holds every gradient
// partition of the rank at rest, 2 B each in bf16, so the peak, reached in
// backward when few shards have been reduced, grows by the partitions not
// yet reduced there; and its two process groups (the world group for
// parameters, a clone for gradients) add a second ring communicator to the
// device peak. Under reshard, stages 0–2, or an offloaded optimizer (the
// buffer on the host) nothing changes.
func TestDeepSpeedZeRO3Memory(t *testing.T) {
	const n = 8
	layers := []scenarios.Layer{{Name: "a", Params: 8000, Group: "dense"}, {Name: "b", Params: 16000, Group: "dense"}, {Name: "c", Params: 8000, Group: "dense"}}
	mk := func(stage int, b scenarios.Boundary, offload bool) *Report {
		s := bigModel(32000, n, 1, n, stage)
		s.Model.LayerList = layers
		s.Communication.Boundary = b
		if offload {
			s.Offload.Optimizer = scenarios.OffloadCPU
		}
		return mustAnalyze(t, s, Options{})
	}
	const shard = 32000 / n
	// One communicator over the node's n GPUs, with the channels NCCL
	// opens for it on this hardware.
	ring, err := NCCLBuffers(1, collectives.BufferChannels(collectives.HardwareOf(bigModel(32000, n, 1, n, 3)), collectives.Shape{Ranks: n, Nodes: 1}), DefaultRingConnections)
	if err != nil {
		t.Fatal(err)
	}
	fs, ds := mk(3, scenarios.BoundaryReshard, false), mk(3, scenarios.BoundaryDeepSpeed, false)
	if got, was := ds.Component(CompGrads).AtRest, fs.Component(CompGrads).AtRest; got != 2*shard || was != 0 {
		t.Errorf("stage 3 grads at rest: deepspeed %d, reshard %d; want %d, 0", got, was, 2*shard)
	}
	if ds.Peak <= fs.Peak || ds.Peak > fs.Peak+2*shard {
		t.Errorf("stage 3 peak: deepspeed %d, reshard %d; want more by at most the %d B of partitions", ds.Peak, fs.Peak, 2*shard)
	}
	rs, err := Reserved(ds.Peak, scenarios.DefaultAllocatorOverhead)
	if err != nil {
		t.Fatal(err)
	}
	if want := rs + DefaultCUDAContext + 2*ring; ds.Device != want {
		t.Errorf("stage 3 deepspeed device peak %d, want %d (reserved + context + 2 communicators)", ds.Device, want)
	}
	for st := 1; st <= 2; st++ {
		a, b := mk(st, scenarios.BoundaryReshard, false), mk(st, scenarios.BoundaryDeepSpeed, false)
		if a.AtRest != b.AtRest || a.Peak != b.Peak || a.Device != b.Device {
			t.Errorf("stage %d: boundary deepspeed changed the memory (%d/%d/%d vs %d/%d/%d)", st, b.AtRest, b.Peak, b.Device, a.AtRest, a.Peak, a.Device)
		}
	}
	// Stage 0: DeepSpeed's engine keeps no gradient buffer
	// (scenarios.Scenario.GradsFreedEachStep): the 64,000 B of bf16
	// gradients leave the rest, and the peak, in the optimizer step where
	// they are all held beside the grad.float() copy, is the same.
	if a, b := mk(0, scenarios.BoundaryReshard, false), mk(0, scenarios.BoundaryDeepSpeed, false); b.AtRest != a.AtRest-2*32000 || b.Peak != a.Peak {
		t.Errorf("stage 0: boundary deepspeed at rest %d, peak %d; reshard %d, %d; want 64,000 B less at rest, the same peak", b.AtRest, b.Peak, a.AtRest, a.Peak)
	}
	if got := mk(3, scenarios.BoundaryDeepSpeed, true).Component(CompGrads).AtRest; got != 0 {
		t.Errorf("offloaded optimizer: grads at rest %d on the GPU, want 0 (the buffer is on the host)", got)
	}
}
