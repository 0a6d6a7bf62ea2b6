package memory

import (
	"fmt"
	"slices"

	"github.com/zerosim/zerosim/scenarios"
)

// TransformerActivation returns the activation bytes one GPT-style layer
// keeps from forward for backward, and the extra bytes its backward
// rebuilds transiently by recomputation, following Korthikanti et al. 2022,
// "Reducing Activation Recomputation in Large Transformer Models" (arXiv
// 2205.05198), §4
// (no tensor or sequence parallelism, 16-bit activations, 1-byte dropout
// masks):
//
//	none:      s·b·h·(34 + 5·a·s/h) = 34·s·b·h + 5·a·s²·b
//	selective: 34·s·b·h (the 5·a·s²·b attention part is recomputed)
//	full:      2·s·b·h (only the layer input; everything is recomputed)
//
// s is the sequence length, b the micro-batch, h the hidden size and a the
// number of heads. The figures are exact integers (5·a·s/h·s·b·h =
// 5·a·s²·b). GPT-3 175B (s=2048, b=1, h=12288, a=96): 2,868,903,936 B per
// layer with no recompute.
func TransformerActivation(s, b, h, a int64, recompute scenarios.Recompute) (stored, transient int64, err error) {
	if s <= 0 || b <= 0 || h <= 0 || a <= 0 {
		return 0, 0, fmt.Errorf("activations need seq_len, micro_batch, hidden, heads > 0 (got %d, %d, %d, %d)", s, b, h, a)
	}
	var c calc
	sbh := c.Mul(s, b, h)
	attn := c.Mul(5, a, s, s, b)
	full := c.Add(c.Mul(34, sbh), attn)
	switch recompute {
	case "", scenarios.RecomputeNone:
		stored = full
	case scenarios.RecomputeSelective:
		stored, transient = c.Mul(34, sbh), attn
	case scenarios.RecomputeFull:
		stored = c.Mul(2, sbh)
		transient = full - stored
	default:
		return 0, 0, fmt.Errorf("training.recompute %q: use none, selective or full", recompute)
	}
	if c.Err != nil {
		return 0, 0, fmt.Errorf("activation size overflows: %w", c.Err)
	}
	return stored, transient, nil
}

// MLPActivation returns the activation bytes one block of seed 000's
// residual MLP keeps for backward: the block input x (H), the fc1 output
// (F = 4H) and the GELU output (F), all bf16, for each of tokens rows:
// tokens·(H + F + F)·2 bytes = 18·tokens·H with F = 4H. (fc2's output is
// consumed by the residual add, which keeps nothing; the sum becomes the
// next block's input and is counted there.) ffn ≤ 0 means 4H.
func MLPActivation(tokens, h, ffn int64) (int64, error) {
	if tokens <= 0 || h <= 0 {
		return 0, fmt.Errorf("activations need micro_batch and hidden > 0 (got %d, %d)", tokens, h)
	}
	if ffn <= 0 {
		ffn = 4 * h
	}
	var c calc
	v := c.Mul(2, tokens, c.Add(h, ffn, ffn))
	if c.Err != nil {
		return 0, fmt.Errorf("activation size overflows: %w", c.Err)
	}
	return v, nil
}

// unitActivations returns the stored and transient (recompute) activation
// bytes of every unit. Layer.ActivationBytes wins when set. Otherwise
// kind "transformer" derives them tensor by tensor for its block style
// (BlockStyle: gpt or llama; BlockActivation on the units the scenario
// marks as blocks, scenarios.Layer.Block, under training.recompute and
// the blocks Placement picks; HeadActivation, the output head and fp32 loss, on
// lm_head or the last unit; ExpertActivation and RouterTensors on routed
// experts, moeActivation); kind "mlp"
// applies MLPActivation to every unit with parameters. Other kinds
// (including seed 002's tiny transformer) derive nothing.
// memory.activations: false turns everything off.
func unitActivations(s *scenarios.Scenario) (stored, transient []int64, err error) {
	stored, transient, _, err = unitActivationTensors(s)
	return stored, transient, err
}

// actTensors are the tensors of one unit's activations, in the order its
// forward allocates them: keep, what it keeps for backward; rebuild, what
// its backward's recomputation rebuilds. A unit whose tensors the model
// does not tell apart (activation_bytes, routed experts, seed 000's MLP
// blocks) has one of each sum; the head keeps its model part as one tensor
// and rebuilds the loss backward's gradients (headParts: two under the
// eager loss, one under a compiled or fused one). The head's loss
// tensor (headParts' loss, UnitInfo.AfterLogits) is not in keep: the
// timeline allocates it apart (OpLossSaved).
type actTensors struct{ keep, rebuild []int64 }

// one is a unit's tensors of one kept and one rebuilt tensor.
func one(stored, transient int64) actTensors {
	var a actTensors
	if stored > 0 {
		a.keep = []int64{stored}
	}
	if transient > 0 {
		a.rebuild = []int64{transient}
	}
	return a
}

// unitActivationTensors is unitActivations with each unit's tensors
// (actTensors): a unit's stored bytes are the sum of its keep (and, on the
// head, of the loss's tensor), its transient bytes the sum of its rebuild.
func unitActivationTensors(s *scenarios.Scenario) (stored, transient []int64, tensors []actTensors, err error) {
	layers := s.Model.LayerList
	stored = make([]int64, len(layers))
	transient = make([]int64, len(layers))
	tensors = make([]actTensors, len(layers))
	if !*s.Memory.Activations {
		return stored, transient, tensors, nil
	}
	b := s.Training.MicroBatch
	m := s.Model
	unitPolicy := UnitPolicies(s)
	var perBlock, perBlockT int64
	blocks := map[int]bool{}
	switch {
	case m.Kind == scenarios.KindTransformer && m.Hidden > 0 && m.Heads > 0 && m.SeqLen > 0:
		// Context parallelism splits the sequence over cp ranks; each rank
		// keeps the activations of its ceil(s/cp) tokens (ring attention
		// holds one block of keys and values at a time).
		base := baseDims(s)
		head := headUnit(s)
		type lists struct {
			keep, rebuild []int64
			err           error
		}
		type dimsPolicy struct {
			d      BlockDims
			policy string
		}
		seen := map[dimsPolicy]lists{} // blocks mostly share their dimensions and policy
		for u, l := range layers {
			switch {
			case l.ActivationBytes > 0:
				stored[u] = int64(l.ActivationBytes)
				tensors[u] = one(stored[u], 0)
			case l.ActivationBytes < 0:
				return nil, nil, nil, fmt.Errorf("model.layer_list[%d] %q: activation_bytes %d < 0", u, l.Name, l.ActivationBytes)
			case l.Dims != nil && l.Dims.ExpertsOnly() && l.Dims.TopK > 0:
				stored[u], transient[u], err = moeActivation(base.Seq, b, l.Dims, scenarios.Recompute(unitPolicy[u]), s.Stack == "megatron", s.Parallelism.EP, OpSavesAllToAll(s))
				tensors[u] = one(stored[u], transient[u])
			case l.Block:
				d := blockDims(base, l)
				_, d.SDPAMask = sdpaMask(s, l)
				d.RouterExperts, d.RouterBias = routerGateExperts(layers, u)
				k := dimsPolicy{d, unitPolicy[u]}
				x, ok := seen[k]
				if !ok {
					x.keep, x.rebuild, x.err = BlockActivationTensors(d, k.policy)
					seen[k] = x
				}
				if err = x.err; err != nil {
					break
				}
				// Each unit its own lists: blocks of one shape share
				// x's (final read R1 F9: editing one unit's edited all).
				t := actTensors{keep: slices.Clone(x.keep), rebuild: slices.Clone(x.rebuild)}
				if l.Dims != nil && l.Dims.MTP {
					// Outside the decoder layer's checkpoint: kept
					// under every policy.
					var in int64
					if in, err = MTPInputActivation(d); err != nil {
						break
					}
					t.keep = append(slices.Clip(t.keep), in)
				}
				var c calc
				stored[u], transient[u] = c.Add(t.keep...), c.Add(t.rebuild...)
				if c.Err != nil {
					err = fmt.Errorf("activation size overflows: %w", c.Err)
				}
				tensors[u] = t
			}
			if err != nil {
				return nil, nil, nil, err
			}
		}
		if head >= 0 { // headUnit is -1 when the head's activation_bytes are given
			// The logits the model returns, when the training loop keeps
			// them (training.keep_logits), are a component of their own
			// (headLogits); under a compiled or fused loss they are the
			// very tensor the loss saves, which HeadActivation then leaves
			// out of the main pass.
			kd := base
			kd.KeepLogits = s.Training.KeptLogitsBytes()
			model, loss, grads, err := headParts(kd)
			if err != nil {
				return nil, nil, nil, err
			}
			var c calc
			if n := m.MTPModules(); n > 0 {
				// Each DeepSeek-V3 MTP module sends its tokens through
				// the shared head and a loss of its own, whose logits
				// the loop does not keep.
				hs, _, err := HeadActivation(base)
				if err != nil {
					return nil, nil, nil, err
				}
				model = c.Add(model, c.Mul(hs, n))
			}
			stored[head] = c.Add(stored[head], model, loss)
			t := &tensors[head]
			if model > 0 {
				t.keep = append(slices.Clip(t.keep), model)
			}
			// The loss backward's gradients, beside none of the
			// head's recomputation: the larger of the two is alive.
			if ht := c.Add(grads...); ht > transient[head] {
				transient[head], t.rebuild = ht, grads
			}
			if c.Err != nil {
				return nil, nil, nil, fmt.Errorf("activation size overflows: %w", c.Err)
			}
		}
		return stored, transient, tensors, nil
	case m.Kind == scenarios.KindMLP && m.Hidden > 0:
		perBlock, err = MLPActivation(b*max(m.SeqLen, 1), m.Hidden, m.FFN)
		if err != nil {
			return nil, nil, nil, err
		}
		for u, l := range layers {
			if l.Params > 0 {
				blocks[u] = true
			}
		}
	}
	for u, l := range layers {
		switch {
		case l.ActivationBytes > 0:
			stored[u] = int64(l.ActivationBytes)
		case l.ActivationBytes < 0:
			return nil, nil, nil, fmt.Errorf("model.layer_list[%d] %q: activation_bytes %d < 0", u, l.Name, l.ActivationBytes)
		case blocks[u]:
			stored[u], transient[u] = perBlock, perBlockT
		case l.Dims != nil && l.Dims.ExpertsOnly() && l.Dims.TopK > 0 && m.SeqLen > 0:
			stored[u], transient[u], err = moeActivation(s.RankSeqLen(), b, l.Dims, scenarios.Recompute(unitPolicy[u]), s.Stack == "megatron", s.Parallelism.EP, OpSavesAllToAll(s))
			if err != nil {
				return nil, nil, nil, err
			}
		}
		tensors[u] = one(stored[u], transient[u])
	}
	return stored, transient, tensors, nil
}

// headUnit is the unit that carries the output head and the loss
// (HeadActivation), -1 where activations are not derived there
// (scenarios.Scenario.HeadUnit).
func headUnit(s *scenarios.Scenario) int {
	u, _ := s.HeadUnit()
	return u
}

// headLogits is the head unit (headUnit) with what the timeline
// (timeline.go) allocates there around the loss: kept, the bytes of the
// logits the model returns that the training loop keeps referenced
// (training.keep_logits, KeptLogits; 0 when the key is unset); of the
// head's activations, the bytes its loss saves after the model has
// returned them (afterLogits, headParts' loss); and the loss's forward
// temporaries (HeadLossTemps: the 16-bit logits nothing keeps, the fp32
// upcast). All 0 when no unit derives the head. The timeline holds kept
// logits from the head's forward in one step to the head's forward in the
// next: at rest, as the previous step's, and twice at the head's forward,
// until the loop's rebinding frees the previous ones, before the loss runs.
func headLogits(s *scenarios.Scenario) (head int, kept, afterLogits, lossLogits, upcast int64, err error) {
	head = headUnit(s)
	if head < 0 {
		return head, 0, 0, 0, 0, nil
	}
	d := baseDims(s)
	d.KeepLogits = s.Training.KeptLogitsBytes()
	if kept, err = KeptLogits(d); err != nil {
		return 0, 0, 0, 0, 0, err
	}
	if _, afterLogits, _, err = headParts(d); err != nil {
		return 0, 0, 0, 0, 0, err
	}
	if lossLogits, upcast, err = HeadLossTemps(d); err != nil {
		return 0, 0, 0, 0, 0, err
	}
	return head, kept, afterLogits, lossLogits, upcast, nil
}

// baseDims are the dimensions of a transformer scenario's blocks as the
// activation model sees them on one rank: its ceil(s/cp) tokens. The
// final norm is of the blocks' kind: Norms is the first block's
// (scenarios.BlockDims.Norms; HeadActivation).
func baseDims(s *scenarios.Scenario) BlockDims {
	m := s.Model
	norms := ""
	for _, l := range m.LayerList {
		if l.Block && l.Dims != nil {
			norms = l.Dims.Norms
			break
		}
	}
	gpt := BlockStyle(&m) == "gpt" // the preset's biases on every matrix (buildLayers)
	// Megatron-core's llama block, as zero's megatronChain runs it: Llama's
	// norms, never compiled; with Transformer Engine's modules or its own.
	megatronLlama := s.Stack == "megatron" && BlockStyle(&m) == "llama" && norms == "" && !s.Training.Compile.Blocks()
	force, forceGiven := s.Training.OpForceJoined()
	return BlockDims{OpForce: force, OpForceGiven: forceGiven, OpRecomputeAttention: s.Training.OpRecomputeAttention, OpSaveAbs: OpSavesAbs(s), OpAbsWeights: !s.Training.FP8Gather() || s.Parallelism.Stage < 2, ValueUnpadded: s.Stack == "torchtitan", QKVBias: gpt, OBias: gpt, MLPBias: gpt, LinearSplitProj: scenarios.GDNSplitProjections(m.Architecture), Norms: norms, SoftmaxFP32: scenarios.HFEagerSoftmaxFP32(m.Architecture), LogitSoftcap: m.LogitSoftcap, Arch: BlockStyle(&m), Seq: s.RankSeqLen(), Batch: s.Training.MicroBatch, Hidden: m.Hidden, Heads: m.Heads,
		KVHeads: m.KVHeads, FFN: m.FFN, Vocab: m.Vocab, Dropout: s.Training.Dropout > 0,
		Attention: string(s.Training.Attention), LossFP32: !s.Training.Loss16() && !s.Training.LossAutocast(), LossAutocast: s.Training.LossAutocast(),
		Compiled: s.Training.Compile.Blocks(), LossCompiled: s.Training.Compile.Loss(),
		// Liger's RMSNorm keeps what torchtitan's fused one does
		// (scenarios/liger.go).
		NormFused: s.Training.NormImpl == scenarios.NormFused || s.Training.Liger,
		Liger:     s.Training.Liger, LigerWeightElem: s.Training.ParamDType.Bytes16or32(), LigerLogitsElem: s.Training.LogitsDType().Bytes16or32(),
		LossFused: s.Training.CrossEntropy == scenarios.CrossEntropyFused, LossSavesUpcast: s.Stack == "megatron",
		LossChunks: s.Training.LossChunks,
		// torch.autocast's op policies apply over 16-bit parameters
		// (AutocastOps) and over an fp32 model (Autocasts), whose
		// residual stream is fp32 besides (InputFP32).
		Autocast: s.Training.AutocastOps() || s.Training.Autocasts(), InputFP32: s.Training.Autocasts(),
		// Transformer Engine's linear layers keep their inputs in fp8
		// under te and te_current (BlockDims.FP8Inputs); torchao's
		// Float8Linear keeps the high-precision input
		// (matmul_with_hp_or_float8_args.forward:
		// ctx.save_for_backward(input_hp, weight_hp_t),
		// torchao/float8/float8_linear.py line 45 at pytorch/ao
		// 36027d82d1ad9949597ea16002ff4940374b1b94, line 76 at 11ce6347),
		// so torchao's are 16-bit as without fp8.
		FP8Inputs: s.Training.FP8.TE(),
		// Megatron-core sets save_original_input on linear_proj when
		// config.fp8 and fp8_recipe != 'delayed' (and TE >= 2.6): "the
		// output of the fused core_attn is saved by itself, and
		// linear_proj also saves the quantized tensor of this output
		// ... to avoid the extra memory usage"
		// (megatron/core/transformer/attention.py lines 428-444 at
		// NVIDIA/Megatron-LM d98e8a64ddf34856e74b24714e3bedb2f5a39553);
		// TE refuses it under delayed scaling (linear.py lines 308-326
		// at TransformerEngine d0067d0d).
		FP8ProjOriginal: s.Stack == "megatron" && s.Training.FP8 == scenarios.FP8TECurrent,
		// Megatron-core's Transformer Engine block (BlockDims.MegatronTE).
		MegatronTE: megatronLlama && s.Training.TransformerImpl != scenarios.TransformerLocal,
		// Megatron-core's local block (BlockDims.MegatronLocal).
		MegatronLocal: megatronLlama && s.Training.TransformerImpl == scenarios.TransformerLocal,
		// torch.nn.RMSNorm on aten::_fused_rms_norm (BlockDims.NormATen):
		// Megatron-core's local block, or torchtitan's Llama-style blocks
		// and final norm (a compiled block keeps the same tensors anyway;
		// torchtitan compiles the blocks, not model.norm).
		NormATen: scenarios.ATenRMSNorm(s) && (megatronLlama || s.Stack == "torchtitan" && BlockStyle(&m) == "llama" && norms == "")}
}

// UnitOpRecomputedMMFLOPs is OpRecomputedMMFLOPs of s's block u with the
// dimensions the activation model gives it (UnitBlockDims).
func UnitOpRecomputedMMFLOPs(s *scenarios.Scenario, u int) (int64, error) {
	return OpRecomputedMMFLOPs(UnitBlockDims(s, u))
}

// OpSavesAbs reports whether torchtitan's op policy keeps the abs of the
// blocks' float8 casts for s: training.op_save_abs (torchtitan 87e2c09c4
// to 88247277c, whose _save_list held aten.abs.default) under torchao's
// float8 with the blocks in eager mode. Compiled, the partitioner keeps
// none: torchtitan 88247277c's message measured tensorwise float8 under
// compile at 47.77 GiB with abs in the list and without it, where
// 2271b6386's eager run of the same job at abs's time took 81.77 GiB.
// What is kept: BlockDims.OpSaveAbs (opAbs).
func OpSavesAbs(s *scenarios.Scenario) bool {
	return s.Training.OpSaveAbs && s.Training.FP8 == scenarios.FP8TorchAO && !s.Training.Compile.Blocks()
}

// OpSavesAllToAll reports whether torchtitan's op policy keeps the
// expert-parallel all-to-alls' outputs for s: training.op_save_all_to_all,
// torchtitan from c4e2291155a4 (2025-09-06, pytorch/torchtitan#1672),
// whose deepseek_v3 and llama4 _save_list hold
// torch.ops._c10d_functional.all_to_all_single.default (gpt_oss's from
// its first commit; qwen3's not up to 238fa9953e4a). Kept, each is the
// whole received tensor: the autograd op
// _c10d_functional_autograd::all_to_all_single (AllToAllSingle, an
// autograd-key kernel) dispatches _c10d_functional::all_to_all_single
// below autograd, which allocates its output (input.new_empty with the
// received rows) and which the checkpoint's _CachingTorchDispatchMode
// sees under the policy and, MUST_SAVE, stores as a detached alias of
// that output until the recompute pops it (torch/csrc/distributed/c10d/
// Functional.cpp: c10d::all_to_all_single, AllToAllSingle::forward and
// TORCH_LIBRARY(_c10d_functional_autograd) at pytorch/pytorch
// 00295aec0dd325c7641f0a839bb776880a4fae5f; torch/utils/checkpoint.py
// _CachingTorchDispatchMode.__torch_dispatch__ at
// 4b804b8500f89bdf9a8c6db04a3dc6b8dbcb3757). Nothing else keeps it:
// the dispatch's output feeds vstack and an index (whose backward needs
// the indices only), the combine's the scores' multiply and a scatter_add
// under the same checkpoint (torchtitan/distributed/expert_parallel.py
// lines 121-155 and 238-268, torchtitan/models/moe.py lines 403-433 at
// c4e2291155a4785bbef1d87dc64561a5ad54c121). Otherwise (false) the
// all-to-alls rerun in backward (zero's recomputeA2A) and are not kept
// (moeActivation).
func OpSavesAllToAll(s *scenarios.Scenario) bool {
	return s.Training.OpSaveAllToAll
}

// routerGateExperts is the routed experts of the MoE layer block u holds
// (BlockDims.RouterExperts): the experts are the unit after it
// (UnitPolicies); 0 when there is none. Its router gate is a Linear
// without a bias, an aten.mm, but gpt-oss's (bias true: an addmm,
// BlockDims.RouterBias; torchtitan/models/gpt_oss/__init__.py at
// 238fa9953e4aec2a62582121564273d7cbb1e9f1 gives every flavour's MoEArgs
// gate_bias=True).
func routerGateExperts(layers []scenarios.Layer, u int) (experts int64, bias bool) {
	if u+1 >= len(layers) || layers[u+1].Block {
		return 0, false
	}
	x := layers[u+1].Dims
	if x == nil || !x.ExpertsOnly() {
		return 0, false
	}
	return x.Experts, x.Router == scenarios.RouterGptOss
}

// UnitBlockDims is block u's dimensions as the activation model sizes its
// tensors (blockDims over the scenario's base) with its router gate
// (RouterExperts: routerGateExperts), the one constructor of a unit's
// dims: zero's per-operation model charges the memory-bound traffic of
// the blocks it leaves to the FLOP count (MoE, MLA, linear-attention)
// from the tensors they keep, and UnitOpRecomputedMMFLOPs counts its mms.
func UnitBlockDims(s *scenarios.Scenario, u int) BlockDims {
	d := blockDims(baseDims(s), s.Model.LayerList[u])
	d.RouterExperts, d.RouterBias = routerGateExperts(s.Model.LayerList, u)
	return d
}

// blockDims are block l's dimensions: its own when the scenario knows them
// (an imported model: head_dim, kv_heads, a dense FFN or none beside routed
// experts, a shared expert's width, multi-head latent attention's value
// width and ranks), else base. zero's layerFLOPDims applies the same dims to the
// FLOP model with one difference: here a missing ffn means no dense MLP
// (NoFFN: the attention half of a MoE block, scenarios.BlockDims.FFN),
// there it keeps the model's ffn, because the FLOP model leaves MoE blocks
// to the FLOP count and only sizes blocks that have an MLP.
func blockDims(base BlockDims, l scenarios.Layer) BlockDims {
	d := base
	if x := l.Dims; x != nil {
		if x.Heads > 0 {
			d.Heads = x.Heads
		}
		if x.KVHeads > 0 {
			d.KVHeads = x.KVHeads
		}
		d.HeadDim, d.FFN, d.NoFFN = x.HeadDim, x.FFN, x.FFN == 0
		d.SharedFFN, d.SharedGate = x.SharedFFN, x.SharedGate
		d.ValueHeadDim, d.RopeHeadDim, d.QLoRARank, d.KVLoRARank = x.ValueHeadDim, x.RopeHeadDim, x.QLoRARank, x.KVLoRARank
		d.OutputGate, d.LinearAttention = x.OutputGate, x.LinearAttention
		d.QKNorm, d.Norms, d.AttnSoftcap = x.QKNorm, x.Norms, x.AttnSoftcap
		d.LinearKeyHeads, d.LinearValueHeads, d.LinearKeyHeadDim, d.LinearValueHeadDim = x.LinearKeyHeads, x.LinearValueHeads, x.LinearKeyHeadDim, x.LinearValueHeadDim
		d.LinearSplitProj = x.LinearAttention != "" && d.LinearSplitProj
		d.QKVBias, d.OBias, d.MLPBias = x.QKVBias, x.OBias, x.MLPBias
	}
	return d
}

// unitRingBuffers returns, per unit, the bytes of context parallelism's
// ring attention alive during the unit's forward and during its backward
// (RingBuffers) for the transformer blocks of a scenario with
// parallelism.cp > 1; zeros otherwise (and with memory.activations: false).
// training.attention eager has no ring either: PyTorch's context
// parallelism rings only the SDPA ops it intercepts, and eager attention
// is no SDPA call (the loader warns of it at cp > 1, and zero's blockRing
// gives it no ring time or bytes), so it gets no ring buffers.
func unitRingBuffers(s *scenarios.Scenario) (fwd, bwd []int64, err error) {
	layers := s.Model.LayerList
	fwd = make([]int64, len(layers))
	bwd = make([]int64, len(layers))
	m := s.Model
	cp := int64(s.Parallelism.CP)
	if cp <= 1 || !*s.Memory.Activations || m.Kind != scenarios.KindTransformer || m.Hidden <= 0 || m.Heads <= 0 || m.SeqLen <= 0 ||
		s.Training.Attention == scenarios.AttentionEager {
		return fwd, bwd, nil
	}
	base := baseDims(s)
	type fb struct{ f, b int64 }
	seen := map[BlockDims]fb{} // blocks mostly share their dimensions
	policy := UnitPolicies(s)
	for u, l := range layers {
		if !l.Block || l.Dims != nil && l.Dims.LinearAttention != "" {
			// No ring attention in a linear-attention block: it passes
			// its recurrent state, not keys and values (not modelled).
			continue
		}
		d := blockDims(base, l)
		v, ok := seen[d]
		if !ok {
			if v.f, v.b, err = RingBuffers(d, cp); err != nil {
				return nil, nil, err
			}
			seen[d] = v
		}
		fwd[u], bwd[u] = v.f, v.b
		// A policy that reruns the attention (full, selective) reruns the
		// forward ring in the block's backward: its buffers are freed
		// before the backward ring's, but with K and V narrower than the
		// queries they can be the larger.
		if p := scenarios.Recompute(policy[u]); p == scenarios.RecomputeFull || p == scenarios.RecomputeSelective {
			bwd[u] = max(v.f, v.b)
		}
	}
	return fwd, bwd, nil
}

// moeActivation returns what a unit of routed experts keeps: its experts'
// tensors (ExpertActivation) and its router's and dispatch's
// (RouterTensors, for the routers it models), both under the same rule,
// the policy of the block that holds the experts (UnitPolicies):
// full recompute keeps none of them (the block input is counted on the
// block) and rebuilds them in backward; selective and none keep them.
// Under stack: megatron the experts keep MegatronExpertActivation's.
//
// op (torchtitan's policy, opParity) keeps only the outputs of the ops in
// its save list, and the MoE layer past the router gate (an mm the block
// counts: BlockDims.RouterExperts) runs none of them: torchtitan's
// MoE.forward (torchtitan/models/moe/moe.py at
// 238fa9953e4aec2a62582121564273d7cbb1e9f1) scores, sorts and gathers the
// tokens with pointwise and indexing ops and runs the experts with
// torch._grouped_mm (_run_experts_grouped_mm), not aten.mm: all of it is
// rebuilt, as under full. With ep > 1 the dispatch and the combine are
// all_to_all_single_autograd (torchtitan/distributed/expert_parallel.py
// at that commit, _token_dispatch and _token_combine), whose
// _c10d_functional.all_to_all_single the deepseek_v3, llama4 and gpt_oss
// save lists hold from c4e2291155a4 (2025-09-06) on (their
// infra/parallelize.py; qwen3's does not): with it (saveA2A,
// training.op_save_all_to_all, OpSavesAllToAll) the tokens each rank
// receives for its experts and the expert outputs it receives back, 2·h
// bytes per (token, expert) row each, are kept, the rest rebuilt.
func moeActivation(s, b int64, d *scenarios.BlockDims, recompute scenarios.Recompute, megatron bool, ep int, saveA2A bool) (stored, transient int64, err error) {
	expert := ExpertActivation
	if megatron {
		expert = MegatronExpertActivation
	}
	rows := recompute
	if rows == scenarios.RecomputeOp {
		rows = scenarios.RecomputeFull
	}
	stored, transient, err = expert(s, b, d.TopK, d.Hidden, d.ExpertFFN, rows)
	if err != nil {
		return 0, 0, err
	}
	var c calc
	ts, err := RouterTensors(c.Mul(s, b), d.Hidden, d.Experts, d.TopK, d.Router, d.RouterNorm)
	if err != nil {
		return 0, 0, err
	}
	var r int64
	for _, x := range ts {
		r = c.Add(r, x.Bytes)
	}
	if rows == scenarios.RecomputeFull {
		transient = c.Add(transient, r)
	} else {
		stored = c.Add(stored, r)
	}
	if recompute == scenarios.RecomputeOp && ep > 1 && saveA2A {
		// Both are among the rows rebuilt above (ExpertActivation's
		// dispatched input and expert output).
		stored = min(c.Mul(s, b, d.TopK, 4, d.Hidden), transient)
		transient -= stored
	}
	if c.Err != nil {
		return 0, 0, fmt.Errorf("router activation size overflows: %w", c.Err)
	}
	return stored, transient, nil
}

// ExpertActivation returns the activation bytes a unit of routed SwiGLU
// experts keeps for backward, and what full recompute rebuilds
// transiently: each of the s·b tokens reaches top-k experts, and each
// (token, expert) pair keeps, in bf16, the dispatched input (h, for the
// gate and up weight gradients), the gate and up outputs (for SiLU and the
// product), their product (the down projection's input, f each) and the
// expert output (h, for the gradient of the routing weights in the
// combine): s·b·k·(4h + 6f) bytes. Selective recompute rebuilds attention
// only and keeps them; full recompute keeps nothing here (the block input
// is counted on the block) and rebuilds them in backward. Mixtral-8x7B
// (s = 4096, b = 1, k = 2, h = 4096, f = 14336): 838,860,800 B per layer.
func ExpertActivation(s, b, k, h, f int64, recompute scenarios.Recompute) (stored, transient int64, err error) {
	var c calc
	return expertRows(s, b, k, c.Add(c.Mul(4, h), c.Mul(6, f)), c.Err, recompute)
}

// MegatronExpertActivation is ExpertActivation for Megatron-LM's routed
// experts (TEGroupedMLP under bias_activation_fusion, as
// NVIDIA/Megatron-LM 44151194143711368b17797bc7000fd0285d8d51 runs them):
// each (token, expert) row keeps the grouped fc1's bf16 input (2h, for its
// weight gradient), the weighted SwiGLU's bf16 input (the gate and up
// outputs, 4f) and fp32 routing weight (4), which WeightedSwiGLUFunction
// saves (megatron/core/fusions/fused_bias_swiglu.py), and the fc2's bf16
// input (their product, 2f): s·b·k·(2h + 6f + 4) bytes. The routing weights
// are applied inside the SwiGLU (experts.py :655), so the unpermute that
// sums the rows back (moe_utils.py `unpermute` :435, called without probs
// by token_dispatcher.py :864 and by HybridEP's combine) keeps no expert
// output, where ExpertActivation's modeling files multiply it by the weight
// (2h). Qwen3-30B-A3B at s = 4096, b = 1 (k = 8, h = 2048, f = 768):
// 285,343,744 B per layer, against ExpertActivation's 419,430,400. The same
// rule for full recompute.
func MegatronExpertActivation(s, b, k, h, f int64, recompute scenarios.Recompute) (stored, transient int64, err error) {
	var c calc
	return expertRows(s, b, k, c.Add(c.Mul(2, h), c.Mul(6, f), 4), c.Err, recompute)
}

// expertRows is s·b·k rows of perRow bytes (perErr: perRow's own
// overflow), kept, or rebuilt transiently under full recompute.
func expertRows(s, b, k, perRow int64, perErr error, recompute scenarios.Recompute) (stored, transient int64, err error) {
	c := calc{Err: perErr}
	v := c.Mul(s, b, k, perRow)
	if c.Err != nil {
		return 0, 0, fmt.Errorf("expert activation size overflows: %w", c.Err)
	}
	if recompute == scenarios.RecomputeFull {
		return 0, v, nil
	}
	return v, 0, nil
}
