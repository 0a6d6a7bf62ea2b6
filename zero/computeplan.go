package zero

import (
	"fmt"
	"math"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// ComputeSpec describes a transformer's compute for PlanCompute: the
// dimensions, the GPU, the efficiencies, the checkpointing policy and the
// unit layout (which units are blocks, which carries the output head).
type ComputeSpec struct {
	Dims   FLOPDims
	GPU    GPUShape
	Eff    Efficiency
	Policy string
	// Placement picks the blocks Policy applies to (memory.Placement, the
	// predicate memory's timeline asks too; zero value: every block); the
	// others recompute nothing.
	Placement memory.Placement
	Blocks    []bool
	Head      int // unit of the output projection and loss; −1: none
	// HeadPasses is how many times the output projection and loss run
	// per micro-batch (0 counts as 1): 1 + DeepSeek-V3's multi-token-
	// prediction modules (scenarios.Model.MTPModules), each of which sends
	// its own t tokens through the shared head at the same shape.
	HeadPasses int64
	// HeadChunks is training.loss_chunks, torchtitan's chunked loss
	// (scenarios/losschunks.go; 0 counts as 1): the projection's three
	// GEMMs run once per chunk at t/HeadChunks rows (the same FLOPs, each
	// GEMM timed at its own shape), and the wrapper's fp32 gradient
	// buffer adds its traffic to the head's backward (chunkBufferBytes).
	HeadChunks int64
	// HeadLiger is Liger's fused linear cross-entropy (training.liger,
	// scenarios/liger.go): the head runs in HeadChunks chunks
	// (memory.LigerChunk tokens) and computes the input's and the
	// weight's gradients in its forward, so all three GEMMs and the
	// loss's traffic (HeadElementwise) are the forward's; the backward
	// only scales grad_input and grad_weight in place, HeadLigerBwd bytes.
	HeadLiger    bool
	HeadLigerBwd int64
	// EarlyStop is PyTorch's early stop of non-reentrant checkpointing
	// (training.recompute_early_stop): a fully checkpointed block's
	// recompute ends when the last tensor backward needs is saved again,
	// so the MLP's down projection, which only saves its input, is not
	// rerun (see earlyStopFLOPs); under the op policy likewise when it
	// recomputes it (memory.OpEarlyStopMMFLOPs).
	EarlyStop bool
	// Elementwise is the forward HBM traffic of one block's memory-bound
	// ops in bytes (norms, activations, residuals, RoPE); ElementwiseBwd
	// their backward's (0: twice Elementwise); HeadElementwise the loss's
	// (softmax over the vocabulary).
	Elementwise, ElementwiseBwd, HeadElementwise int64
	// HeadElementwiseBwd is the loss's backward traffic when it is not
	// twice HeadElementwise (0: twice), and HeadMetrics the traffic of
	// the train metrics' cross-entropies after the backward, once per
	// micro-step and outside the graph (training.train_metrics): both
	// timed at the memory-bound rate, HeadMetrics with the forward.
	HeadElementwiseBwd, HeadMetrics int64
	// Cast is the part of Elementwise that is the fp8 recipe's casts, and
	// CastRerun, when > 0, what of them a block's recompute under the op
	// policy reruns whatever FLOPs it reruns (eager torchao's casts,
	// fp8CastRerun): charged in place of Cast's share by FLOPs.
	Cast, CastRerun int64
}

// UnitCompute is one unit's compute: FLOPs executed in forward and in
// backward (recompute included) and the seconds they take.
type UnitCompute struct {
	FwdFLOPs, BwdFLOPs int64
	Fwd, Bwd           float64
	// FwdBy and BwdBy split Fwd and Bwd by the efficiency each part
	// depends on (calibrate --trace fits them per class).
	FwdBy, BwdBy ClassSeconds
}

// PlanCompute returns every unit's compute under spec. Units that are
// neither blocks nor the head (embedding lookup, final norm) cost nothing
// here (planCompute charges those two by their bytes); a block's backward is its input and weight gradients plus the
// forward work its checkpointing policy reruns.
func PlanCompute(spec ComputeSpec) ([]UnitCompute, error) {
	out := make([]UnitCompute, len(spec.Blocks))
	f, err := BlockForwardFLOPs(spec.Dims)
	if err != nil {
		return nil, err
	}
	var re [2]int64
	if re[1], err = RecomputeFLOPs(spec.Dims, spec.Policy); err != nil {
		return nil, err
	}
	if spec.EarlyStop && spec.Policy == recomputeFull {
		if re[1], err = earlyStopFLOPs(spec.Dims, re[1]); err != nil {
			return nil, err
		}
	}
	if spec.EarlyStop && spec.Policy == recomputeOp {
		// The same early stop under the op policy: its recomputation
		// does not run the last mm when only the residual reads it.
		d := spec.Dims
		if err := d.fill(); err != nil {
			return nil, err
		}
		last, err := memory.OpEarlyStopMMFLOPs(d.opBlockDims())
		if err != nil {
			return nil, fmt.Errorf("zero: %w", err)
		}
		re[1] -= last
	}
	// One block's GEMM, attention and memory times, without and with the
	// policy's recompute, as totals and by class.
	elemBwd := spec.ElementwiseBwd
	if elemBwd == 0 {
		elemBwd = 2 * spec.Elementwise
	}
	bt, err := blockClasses(spec.Dims, spec.GPU, spec.Eff, spec.Elementwise, elemBwd)
	if err != nil {
		return nil, err
	}
	var secs [2][2]float64
	var by [2][2]ClassSeconds
	for i := range re {
		secs[i][0], secs[i][1] = bt.seconds(re[i])
		by[i][0], by[i][1] = bt.classes(re[i])
	}
	// torchtitan's op policy before b39377f (Dims.OpRecomputeAttention:
	// its _save_list lacked _scaled_dot_product_cudnn_attention) reruns
	// the attention's forward in the block's backward to rebuild the
	// output and log-sum-exp the kernel's backward reads: one more
	// forward attention, at the attention kernel's rate.
	var reAtt [2]int64
	if spec.Policy == recomputeOp && spec.Dims.OpRecomputeAttention {
		reAtt[1] = f.Attention
		secs[1][1] += bt.fwd.Attention
		by[1][1].Attention += bt.fwd.Attention
	}
	if spec.Policy == recomputeOp && spec.CastRerun > 0 {
		// seconds charged the casts' share of the rerun forward by
		// FLOPs (re/total of Cast); the recompute reruns CastRerun.
		var share float64
		if total := bt.flops.Total(); total > 0 && bt.flops.GEMM > 0 {
			share = float64(re[1]) / float64(total)
		}
		d := (float64(spec.CastRerun) - float64(share*float64(spec.Cast))) / (spec.GPU.HBM * spec.Eff.HBM)
		secs[1][1] += d
		by[1][1].Other += d
	}
	var c flopCalc
	// Executed backward FLOPs: 2× the GEMMs, 2.5× the attention (2×
	// eager: AttentionBackwardFLOPs).
	attBwd, err := AttentionBackwardFLOPs(f.Attention, spec.Dims.KeepsProbs)
	if err != nil {
		return nil, err
	}
	bwd := c.Add(c.Mul(2, f.GEMM), attBwd)
	block := 0
	for u, isBlock := range spec.Blocks {
		if !isBlock {
			continue
		}
		i := 1
		if !spec.Placement.Checkpointed(block) {
			i = 0
		}
		out[u] = UnitCompute{FwdFLOPs: f.Total(), BwdFLOPs: c.Add(bwd, re[i], reAtt[i]), Fwd: secs[i][0], Bwd: secs[i][1], FwdBy: by[i][0], BwdBy: by[i][1]}
		block++
	}
	if spec.Head >= 0 && spec.Dims.Vocab > 0 {
		if spec.Head >= len(out) {
			return nil, fmt.Errorf("zero: head unit %d out of range [0, %d)", spec.Head, len(out))
		}
		hf, err := HeadForwardFLOPs(spec.Dims)
		if err != nil {
			return nil, err
		}
		t := spec.Dims.Seq * spec.Dims.Batch
		chunks := max(spec.HeadChunks, 1)
		if spec.HeadLiger {
			chunks = 1 // ligerHeadGEMMs times its own chunks
		}
		tc, err := scenarios.LossChunkTokens(t, chunks)
		if err != nil {
			return nil, fmt.Errorf("zero: %w", err)
		}
		fs, err := GEMMSeconds(tc, spec.Dims.Vocab, spec.Dims.Hidden, spec.GPU, spec.Eff)
		if err != nil {
			return nil, err
		}
		dg, _ := GEMMSeconds(tc, spec.Dims.Hidden, spec.Dims.Vocab, spec.GPU, spec.Eff)
		wg, _ := GEMMSeconds(spec.Dims.Hidden, spec.Dims.Vocab, tc, spec.GPU, spec.Eff)
		k := float64(chunks)
		fs, dg, wg = float64(k*fs), float64(k*dg), float64(k*wg)
		mem := float64(spec.HeadElementwise) / (spec.GPU.HBM * spec.Eff.HBM)
		bmem := float64(2 * mem)
		if spec.HeadElementwiseBwd > 0 {
			bmem = float64(spec.HeadElementwiseBwd) / (spec.GPU.HBM * spec.Eff.HBM)
		}
		metrics := float64(spec.HeadMetrics) / (spec.GPU.HBM * spec.Eff.HBM)
		buf := chunkBufferBytes(t, spec.Dims.Hidden, chunks) / (spec.GPU.HBM * spec.Eff.HBM)
		// Every pass is the same GEMM and loss: forward 2·t·h·V FLOPs
		// and the loss's traffic, backward twice both.
		passes := max(spec.HeadPasses, 1)
		hf = c.Mul(hf, passes)
		n := float64(passes)
		u := &out[spec.Head]
		if spec.HeadLiger {
			// The same FLOPs, all in the forward (HeadLiger), in
			// chunks of LigerChunk tokens and a shorter last one.
			if fs, dg, wg, err = ligerHeadGEMMs(spec, t); err != nil {
				return nil, err
			}
			scale := float64(spec.HeadLigerBwd) / (spec.GPU.HBM * spec.Eff.HBM)
			u.FwdFLOPs = c.Add(u.FwdFLOPs, c.Mul(3, hf))
			u.Fwd += float64(n * (fs + dg + wg + mem))
			u.Bwd += float64(n * scale)
			u.FwdBy = u.FwdBy.add(ClassSeconds{GEMM: fs + dg + wg, Other: mem}.scale(n))
			u.BwdBy = u.BwdBy.add(ClassSeconds{Other: scale}.scale(n))
		} else {
			u.FwdFLOPs = c.Add(u.FwdFLOPs, hf)
			u.BwdFLOPs = c.Add(u.BwdFLOPs, c.Mul(2, hf))
			u.Fwd += float64(n * (fs + mem))
			u.Bwd += float64(n*(dg+wg+bmem)) + buf
			u.FwdBy = u.FwdBy.add(ClassSeconds{GEMM: fs, Other: mem}.scale(n))
			u.BwdBy = u.BwdBy.add(ClassSeconds{GEMM: dg + wg, Other: bmem}.scale(n))
			u.BwdBy.Other += buf
		}
		// The train metrics read the main head's logits once, whatever
		// the MTP passes (scenarios/trainmetrics.go).
		u.Fwd += metrics
		u.FwdBy.Other += metrics
	}
	if c.Err != nil {
		return nil, fmt.Errorf("zero: FLOPs overflow: %w", c.Err)
	}
	return out, nil
}

// ligerHeadGEMMs times the head's three GEMMs as Liger's fused linear
// cross-entropy runs them over t tokens (ComputeSpec.HeadLiger):
// t/c chunks of c = memory.LigerChunk tokens and a last chunk of the
// remainder (ops/fused_linear_cross_entropy.py lines 45 and 71-74 at
// Liger-Kernel c3c2d4fa), each the logits' GEMM, the input gradient's
// (grad_logits_chunk @ weight) and the weight gradient's addmm.
func ligerHeadGEMMs(spec ComputeSpec, t int64) (fs, dg, wg float64, err error) {
	h, v := spec.Dims.Hidden, spec.Dims.Vocab
	c := memory.LigerChunk(t, h, v)
	for _, part := range [][2]int64{{t / c, c}, {1, t % c}} {
		n, rows := part[0], part[1]
		if n == 0 || rows == 0 {
			continue
		}
		f, err := GEMMSeconds(rows, v, h, spec.GPU, spec.Eff)
		if err != nil {
			return 0, 0, 0, err
		}
		d, _ := GEMMSeconds(rows, h, v, spec.GPU, spec.Eff)
		w, _ := GEMMSeconds(h, v, rows, spec.GPU, spec.Eff)
		fs, dg, wg = fs+float64(float64(n)*f), dg+float64(float64(n)*d), wg+float64(float64(n)*w)
	}
	return fs, dg, wg, nil
}

// chunkBufferBytes is the HBM traffic of torchtitan's chunked loss's
// gradient buffer over t tokens of width h (0 for chunks ≤ 1), per
// element of [t, h]: GradAccumulator's torch.zeros_like(..., dtype=
// torch.float32) writes 4 B; each chunk's bf16 hidden-state gradient is
// cast to fp32 (chunk_grad.to(self._buffer.dtype): 2 B read, 4 written)
// and copied into the buffer's slice (4 read, 4 written); the loop's end
// casts the buffer back, .to(hidden_states.dtype) (4 read, 2 written):
// 24 B (torchtitan/components/loss.py lines 432, 464-473 and 711 at
// pytorch/torchtitan b5bcd76c6).
func chunkBufferBytes(t, h, chunks int64) float64 {
	if chunks <= 1 {
		return 0
	}
	return 24 * float64(t) * float64(h)
}

// earlyStopFLOPs is a full block recompute under PyTorch's early stop: the
// forward's FLOPs less the MLP down projection (fc2, llama's w2), 2·t·ffn·h.
// Non-reentrant checkpointing (torch/utils/checkpoint.py, early stop the
// default since pytorch/pytorch pull request 96866, "Make early stop the
// default for checkpoint and expose a way to disable", opened 2023-03-15
// and approved 2023-03-22, after the 2.0 release, so PyTorch 2.1; its
// landing commit in pytorch/pytorch was not found: pytorch/pytorch is too
// large to mirror here and the index holds only a 2019 checkpoint.py, so
// the pull request is cited) raises _StopRecomputationError from
// _recomputation_hook's pack hook once early_stop is set and
// recomp_counter[gid] reaches len(weak_holders), i.e. once the
// recomputation has packed as many tensors as the forward saved (read in
// torch/utils/checkpoint.py at 10b22ea5c6a60ffa85520eb2d293affc48cea8ee
// of ROCm/pytorch, ROCm's fork of pytorch/pytorch, class
// _recomputation_hook; _checkpoint_hook's unpack_hook catches the error
// and ends the recomputation); the down
// projection's matmul saves its input when autograd records it, before its kernel
// runs, and nothing after it (the residual add) saves a tensor, so the
// recompute stops there. Reentrant checkpointing (DeepSpeed's, Megatron's,
// torch.utils.checkpoint with use_reentrant=True) reruns the whole block.
func earlyStopFLOPs(d FLOPDims, full int64) (int64, error) {
	if err := d.fill(); err != nil {
		return 0, err
	}
	var c flopCalc
	down := c.Mul(2, d.Seq, d.Batch, d.FFN, d.Hidden)
	if c.Err != nil || down > full {
		return 0, fmt.Errorf("zero: recompute FLOPs overflow")
	}
	return full - down, nil
}

// seconds converts to a duration, rounded up to a picosecond.
func seconds(s float64) (units.Duration, error) {
	ps := math.Ceil(s * float64(units.Second))
	if math.IsNaN(ps) || ps < 0 || ps > math.MaxInt64/2 {
		// It said "longer than 9223372.037s" of 5.08e6 s: the bound is
		// half the range.
		return 0, fmt.Errorf("%g s of compute is longer than %v, the longest zerosim times (half the range of int64 picoseconds)", s, units.Duration(math.MaxInt64/2))
	}
	return units.Duration(ps), nil
}

// Utilization is a step's throughput and FLOP utilization per GPU.
type Utilization struct {
	// TokensPerStep is micro_batch · seq_len · grad_accum · dp (every
	// replica's tokens); TokensPerGPU is tokens/s per GPU.
	TokensPerStep int64
	TokensPerGPU  float64
	// MFU is model FLOPs (PaLM: 6·N + 12·L·H·Q·s per token, attention not
	// halved for the causal mask, as llm-foundry and torchtitan count it)
	// per second over the peak; HFU is the hardware FLOPs: the same count
	// plus the forward work recompute reruns (PaLM appendix B; llm-foundry's
	// HFU), so HFU ≥ MFU.
	MFU, HFU float64
	// Executed is the FLOPs the cost model executes (recompute included,
	// attention over the causal half and over any sliding window or chunk,
	// as the kernels compute it) per second over the bf16 peak: below MFU
	// and HFU, which count full attention, by the attention they count
	// and no kernel runs (most for windowed blocks at long sequences,
	// where HFU can pass 100 %). A model without a sequence under cp is
	// the other way: each cp rank runs the whole sample, and Executed
	// counts each of them while MFU and HFU count the sample once
	// (cpCopies).
	Executed float64
	// FromForward marks a model without a per-token FLOP count (no
	// transformer dimensions: a bare parameter count, an MLP): its MFU is
	// 3× the forward FLOPs the cost model executes (the backward twice the
	// forward, as 6N counts it; recompute not counted).
	FromForward bool
}

// Utilize computes Utilization for a step of step seconds in which each GPU
// processed tokensPerGPU tokens and hardware hardware FLOPs (model FLOPs plus
// recompute), with modelFLOPsPerToken from ModelFLOPsPerToken and the GPU's
// dense peak.
func Utilize(step units.Duration, tokensPerGPU, tokensPerStep, modelFLOPsPerToken, hardware int64, peak float64) Utilization {
	secs := step.Seconds()
	if secs <= 0 || peak <= 0 {
		return Utilization{TokensPerStep: tokensPerStep}
	}
	tps := float64(tokensPerGPU) / secs
	return Utilization{
		TokensPerStep: tokensPerStep,
		TokensPerGPU:  tps,
		MFU:           tps * float64(modelFLOPsPerToken) / peak,
		HFU:           float64(hardware) / secs / peak,
	}
}
