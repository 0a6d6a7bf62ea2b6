package zero

import (
	"cmp"
	"slices"
	"strings"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/units"
)

// Megatron-Core's overlapped parameter all-gather (--overlap-param-gather
// with the distributed optimizer), as swiss-ai/Megatron-LM runs it at
// e50c6ba0040c6ad55563c5d1611f55c346252585 (Megatron-Core of February 2025;
// the same in NVIDIA/Megatron-LM core_v0.12.0, d580efc6, whose
// finish_param_sync, param_and_grad_buffer.py:241-277, also skips a next
// group already dispatched, as paramChain.dispatch does):
//
//   - After the optimizer step nothing is gathered: step_with_ready_grads
//     launches the all-gathers only without overlap_param_gather
//     (megatron/core/optimizer/distrib_optimizer.py:1907-1926), and
//     finish_grad_sync resets param_gather_dispatched
//     (megatron/core/distributed/param_and_grad_buffer.py:356-365).
//   - Every module has a forward pre-hook (_make_forward_pre_hook,
//     megatron/core/distributed/distributed_data_parallel.py:326-360) that
//     calls finish_param_sync on the bucket group of each of its parameters
//     (param_and_grad_buffer.py:216-244): if that group's all-gather was
//     not dispatched, dispatch it; wait for it; then dispatch the next
//     group's (next_param_gather_bucket_group). So the first group's gather
//     is dispatched by the first forward's first hook, fully exposed, and
//     each later group's is dispatched when the forward reaches the group
//     before it: one group gathered ahead of the compute.
//   - The chain runs through the bucket groups in reverse order
//     (distributed_data_parallel.py:211-218, "all-gathers happen in reverse
//     order of buckets"): the buffer's bucket 0 holds the model's last
//     parameters (params[::-1], param_and_grad_buffer.py:529), so the chain
//     starts at the embedding and ends at the output layer. Without fp8
//     parameters each bucket is its own group (partition_buckets, case 2,
//     param_and_grad_buffer.py:796-810). The dense and the expert-parallel
//     buffers have a chain each (_allocate_buffers_for_parameters builds
//     both, distributed_data_parallel.py:246-260).
//   - The gather is an async all_gather_into_tensor on the data-parallel
//     group (start_param_sync, param_and_grad_buffer.py:168-214):
//     ProcessGroupNCCL orders it after the work the current (compute)
//     stream has queued at the hook (collective()'s syncStream(device,
//     ncclEvents_[key], ncclStream), "First let NCCL streams wait for input
//     tensors allocation streams", torch/csrc/distributed/c10d/
//     ProcessGroupNCCL.cpp, the file run.go's commKey cites), and wait()
//     makes the compute stream wait for it. Later micro-batches find param_gather_dispatched set and
//     no handle: they gather nothing (the step's first micro-batch only).
//   - Nothing overlaps the optimizer step itself: that needs
//     overlap_param_gather_with_optimizer_step, which arguments.py:425-431
//     allows only with interleaved pipeline parallelism (zerosim has no
//     pipeline stages), as align_param_gather
//     (arguments.py:376 turns it off without it; its
//     dispatch from schedules.py's param_sync_func, training.py:1400).
//
// Seed 000 describes the same pipeline: the first bucket's all-gather
// launched after optimizer.step(), then "before each layer's forward, a
// pre-hook waits on that layer's all-gather and dispatches the next
// bucket"; in a replay of one step nothing runs between the previous
// step's optimizer and the first pre-hook, so both start at the step's
// start.
//
// zerosim times compute per unit (a layer), while a bucket boundary may
// fall inside a layer: a Megatron-Core block's buckets (at the default 40 M
// parameters and more, its MLP's two weights and the attention with the
// MLP's fused norm, the tensors' order as megatronTensors lists them) are
// first used at different points of its forward. So the first forward of
// a unit whose buckets are first used at different points runs in pieces,
// one per such point (paramChain.forward): a piece waits only for the
// gathers of the buckets its modules use first, and dispatches their
// successors once the piece before it has ended, as the module's pre-hook
// does. Where the points lie is hookAt's estimate from the block's
// modules in the order Megatron-Core's TransformerLayer runs them.

// paramChain is the dispatch state of Megatron-Core's overlapped
// parameter all-gathers during the step's first forward.
type paramChain struct {
	next    []int   // bucket → the bucket its first pre-hook dispatches (-1: none)
	task    []int32 // bucket → its all-gather task (-1: not dispatched, or no gather)
	entered []bool  // bucket → its first pre-hook has run
	hooks   [][]hook
}

// hook is a point of a unit's forward (At after its start) where modules
// first use the parameters of Buckets (in chain order).
type hook struct {
	At      units.Duration
	Buckets []int
}

// newParamChain lays out the chains of the schedule's buckets and the hooks
// of every unit. Chains: one per expert-parallel degree (the dense buffers
// and the expert-parallel ones), from the groups' last to their first and
// in each group against its reduce order (Layout.ReduceOrder), which is
// Megatron's reverse of the buffers' bucket order (sc.Buckets lists the
// groups' buckets group by group in buffer order, as DDP's bucket_groups).
func (b *builder) newParamChain() *paramChain {
	sc := b.sc
	n := len(sc.Buckets)
	c := &paramChain{next: make([]int, n), task: make([]int32, n), entered: make([]bool, n)}
	base := make([]int, len(sc.Groups)+1)
	for g, gi := range sc.Groups {
		base[g+1] = base[g] + len(gi.Layout.Buckets)
	}
	last := map[int]int{}  // expert-parallel degree → the chain's last bucket so far
	rank := make([]int, n) // bucket → its place in its chain
	for g := len(sc.Groups) - 1; g >= 0; g-- {
		order := sc.Groups[g].Layout.ReduceOrder()
		for j := len(order) - 1; j >= 0; j-- {
			i := base[g] + order[j]
			c.next[i], c.task[i] = -1, -1
			ep := sc.Groups[g].EP
			if p, ok := last[ep]; ok {
				c.next[p] = i
				rank[i] = rank[p] + 1
			}
			last[ep] = i
		}
	}
	// Each unit's hooks: where its forward first uses each bucket.
	at := make([]map[int]units.Duration, len(sc.Costs)) // unit → bucket → first use
	for g, gi := range sc.Groups {
		l := gi.Layout
		pos := hookAt(sc.Costs, l)
		for p, pr := range l.Params {
			if pr.Unit < 0 || pr.Unit >= len(at) {
				continue
			}
			if at[pr.Unit] == nil {
				at[pr.Unit] = map[int]units.Duration{}
			}
			for _, seg := range l.Segments(p) {
				k := base[g] + seg.Bucket
				if d, ok := at[pr.Unit][k]; !ok || pos[p] < d {
					at[pr.Unit][k] = pos[p]
				}
			}
		}
	}
	c.hooks = make([][]hook, len(sc.Costs))
	for u, m := range at {
		ks := make([]int, 0, len(m))
		for k := range m {
			ks = append(ks, k)
		}
		slices.SortFunc(ks, func(x, y int) int {
			if m[x] != m[y] {
				return cmp.Compare(m[x], m[y])
			}
			return cmp.Or(cmp.Compare(rank[x], rank[y]), cmp.Compare(x, y))
		})
		for _, k := range ks {
			if h := c.hooks[u]; len(h) > 0 && h[len(h)-1].At == m[k] {
				h[len(h)-1].Buckets = append(h[len(h)-1].Buckets, k)
				continue
			}
			c.hooks[u] = append(c.hooks[u], hook{At: m[k], Buckets: []int{k}})
		}
	}
	return c
}

// Module classes of a Megatron-Core transformer block, in the order its
// TransformerLayer runs them (megatron/core/transformer/
// transformer_layer.py forward: _forward_attention, then _forward_mlp, at
// swiss-ai/Megatron-LM e50c6ba0): linear_qkv (with its fused input norm,
// then the q/k norms), the core attention, linear_proj, linear_fc1 (with
// the fused pre-MLP norm), linear_fc2. moduleOther is any other tensor.
const (
	moduleQKV = iota
	moduleProj
	moduleFC1
	moduleFC2
	moduleOther
)

// blockModule is the class of a tensor of a Megatron-Core block by its
// name (memory's megatronTensors names).
func blockModule(name string) int {
	switch {
	case strings.Contains(name, ".self_attention.linear_qkv."), strings.Contains(name, ".self_attention.q_layernorm."), strings.Contains(name, ".self_attention.k_layernorm."):
		return moduleQKV
	case strings.Contains(name, ".self_attention.linear_proj."):
		return moduleProj
	case strings.Contains(name, ".mlp.linear_fc1."):
		return moduleFC1
	case strings.Contains(name, ".mlp.linear_fc2."):
		return moduleFC2
	}
	return moduleOther
}

// hookAt is, for every parameter of layout l, when its unit's forward
// first runs the module holding it, after the unit's start: 0 for every
// tensor of a unit that is not a block of the four modules above (the
// embedding, the head, routed experts, tensors without Megatron's names).
// In a block the core attention (LayerCost.FwdAttn) runs between
// linear_qkv and linear_proj, and the rest of its forward is spread over
// the modules by their parameters (their GEMMs' FLOPs are 2·tokens·
// parameters; the norms, RoPE, activation and residual adds beside them
// are taken in the same proportion).
func hookAt(costs []LayerCost, l *memory.Layout) []units.Duration {
	pos := make([]units.Duration, len(l.Params))
	mod := make([]int, len(l.Params)) // each parameter's blockModule
	for i := 0; i < len(l.Params); {
		u := l.Params[i].Unit
		j := i
		var numel [moduleOther + 1]int64
		for ; j < len(l.Params) && l.Params[j].Unit == u; j++ {
			mod[j] = blockModule(l.Params[j].Name)
			numel[mod[j]] += l.Params[j].Numel
		}
		if u >= 0 && u < len(costs) && numel[moduleOther] == 0 && numel[moduleQKV] > 0 {
			c := costs[u]
			attn := c.FwdAttn // at most c.Fwd (fwdAttn clamps it)
			rest := c.Fwd - attn
			total := numel[moduleQKV] + numel[moduleProj] + numel[moduleFC1] + numel[moduleFC2]
			var before [moduleOther]units.Duration
			var sum int64
			for m := moduleQKV; m < moduleOther; m++ {
				x, err := units.CheckedMulDivFloor(int64(rest), sum, total)
				if err != nil { // sum ≤ total: never
					x = 0
				}
				before[m] = units.Duration(x)
				if m > moduleQKV {
					before[m] += attn
				}
				sum += numel[m]
			}
			for p := i; p < j; p++ {
				pos[p] = before[mod[p]]
			}
		}
		i = j
	}
	return pos
}

// forward adds unit u's first forward: one compute task per hook (one,
// after the tasks after, where every bucket is first used at its start),
// each piece after the gathers its hook waits for, the successors its hook
// dispatches after the compute before it (before: the forward before u,
// -1 at the step start). It returns the last piece.
func (c *paramChain) forward(b *builder, u int, before int32, after []int32) int32 {
	d := b.sc.Costs[u].Fwd
	hs := c.hooks[u]
	if len(hs) == 0 || hs[0].At != 0 || b.sc.Costs[u].RingFwd != 0 {
		// No bucket at the start, or a context-parallel ring the replay
		// swaps per task (executor.taskDur): one piece, every hook at
		// its start.
		var all []int
		for _, h := range hs {
			all = append(all, h.Buckets...)
		}
		hs = []hook{{Buckets: all}}
	}
	t := before
	for j, h := range hs {
		var deps []int32
		if j == 0 {
			deps = after
		}
		deps = append(deps, c.enter(b, h.Buckets, t)...)
		end := d
		if j+1 < len(hs) {
			end = hs[j+1].At
		}
		t = b.add(Task{Kind: Forward, Stream: Compute, Phase: PhaseCompute, Unit: u, Bucket: -1, Dur: end - h.At, After: deps})
	}
	return t
}

// enter runs the pre-hooks of modules that first use buckets: each bucket
// not entered before is gathered if it was not yet and its chain successor
// is dispatched, both after the compute-stream task after (-1: none). It
// returns the gathers of buckets the modules wait for.
func (c *paramChain) enter(b *builder, buckets []int, after int32) []int32 {
	var waits []int32
	for _, k := range buckets {
		if !c.entered[k] {
			c.entered[k] = true
			c.dispatch(b, k, after)
			if n := c.next[k]; n >= 0 {
				c.dispatch(b, n, after)
			}
		}
		if c.task[k] >= 0 {
			waits = append(waits, c.task[k])
		}
	}
	return waits
}

// dispatch adds bucket k's all-gather once (none when its shard group is
// one rank).
func (c *paramChain) dispatch(b *builder, k int, after int32) {
	if c.task[k] >= 0 {
		return
	}
	g, size := b.shardGroup(k)
	if size == 1 {
		return
	}
	var deps []int32
	if after >= 0 {
		deps = []int32{after}
	}
	c.task[k] = b.add(Task{Kind: AllGather, Stream: ParamComm, Phase: PhasePostOptAG, Unit: -1, Bucket: k,
		Group: g, Bytes: b.bucketGatherBytes(k), After: deps})
}
