package scenarios

import (
	"fmt"
	"regexp"

	"github.com/zerosim/zerosim/units"
)

// MaxParams bounds model.params: 20,000 trillion (2·10^16), above the
// 1.35·10^16 (12·h²·L) of a transformer at the largest hidden and layer
// count (2^20, 1024) with a 4·hidden FFN, and low enough that a bare
// count's sizes and its one-token step stay within int64 (20 bytes a
// parameter at stage 0 is 4·10^17 B). params: 9223372036854775807 loaded
// and overflowed in the replay with a message that blamed micro_batch ×
// seq_len 0 (qauser s28 L2). It bounds the key alone: dimensions may
// describe more (ffn 2^24 at hidden 2^20 and 1024 layers is 4.05·10^16
// parameters), which their own bounds and checked int64 arithmetic hold.
const MaxParams = 20_000_000_000_000_000

// intBounds are an integer key's own bounds, lo to hi; count prints them as
// counts ("20000T").
type intBounds struct {
	lo, hi int64
	count  bool
}

// layerDims are the widths of a layer's dims (model.layer_list[i].dims),
// with the limits the Hugging Face import reads them with; 0 is "not
// given".
var layerDims = []struct {
	key string
	hi  int64
}{
	{"hidden", maxHidden}, {"heads", maxHidden}, {"kv_heads", maxHidden},
	{"head_dim", maxHeadDim}, {"ffn", maxFFN}, {"experts", maxExperts},
	{"top_k", maxExperts}, {"expert_ffn", maxFFN}, {"shared_experts", maxExperts},
	{"shared_ffn", maxFFN}, {"value_head_dim", maxHeadDim},
	{"rope_head_dim", maxHeadDim}, {"q_lora_rank", maxHidden},
	{"kv_lora_rank", maxHidden}, {"window", maxSeqLen}, {"attention_chunk", maxSeqLen},
	{"linear_key_heads", maxHidden}, {"linear_value_heads", maxHidden},
	{"linear_key_head_dim", maxHeadDim}, {"linear_value_head_dim", maxHeadDim},
	{"linear_conv_kernel", maxHeadDim}, {"router_groups", maxExperts},
	{"router_group_topk", maxExperts},
}

// ownBounds are the bounds of the integer keys whose range is their own,
// not set by another key: intRange checks a value against them, and a
// value beyond 64 bits is given the same range (qauser s28 L3:
// "micro_batch: 99999999999999999999 does not fit in 64 bits (use a whole
// number below 2^63)", where micro_batch: -3 said "use 1 to 1048576").
// A key inside a list is named without its index (boundsOf).
var ownBounds = func() map[string]intBounds {
	const gpus = int64(MaxNodes) * MaxGPUsPerNode
	b := map[string]intBounds{
		"cluster.nodes":                         {lo: 1, hi: MaxNodes},
		"cluster.gpus_per_node":                 {lo: 1, hi: MaxGPUsPerNode},
		"cluster.host.sockets":                  {lo: 1, hi: MaxGPUsPerNode},
		"model.params":                          {lo: 1, hi: MaxParams, count: true},
		"model.hidden":                          {lo: 1, hi: maxHidden},
		"model.layers":                          {lo: 1, hi: maxLayers},
		"model.ffn":                             {lo: 1, hi: maxFFN},
		"model.heads":                           {lo: 1, hi: maxHidden},
		"model.vocab":                           {lo: 1, hi: maxVocab},
		"model.seq_len":                         {lo: 1, hi: maxSeqLen},
		"model.document_len":                    {lo: 0, hi: maxSeqLen},
		"model.mtp_layers":                      {lo: 0, hi: maxLayers},
		"parallelism.dp":                        {lo: 1, hi: gpus},
		"parallelism.cp":                        {lo: 1, hi: gpus},
		"training.micro_batch":                  {lo: 1, hi: MaxMicroBatch},
		"training.grad_accum":                   {lo: 1, hi: MaxGradAccum},
		"training.steps":                        {lo: 1, hi: maxSteps},
		"training.recompute_every":              {lo: 1, hi: maxRecomputeEvery},
		"training.loss_chunks":                  {lo: 1, hi: maxLossChunks},
		"training.train_metrics":                {lo: 0, hi: maxTrainMetrics},
		"communication.prefetch_depth":          {lo: 0, hi: maxPrefetch},
		"communication.backward_prefetch_depth": {lo: 0, hi: maxPrefetch},
		"communication.max_inflight_allgathers": {lo: 1, hi: maxInflight},
		"communication.zero_hpz_partition_size": {lo: 0, hi: gpus},
	}
	for _, d := range layerDims {
		b["model.layer_list.dims."+d.key] = intBounds{lo: 0, hi: d.hi}
	}
	return b
}()

// listIndex is a list item's index in a key path ("[3]").
var listIndex = regexp.MustCompile(`\[[0-9]+\]`)

// boundsOf is the key at path's own bounds, its list indexes dropped.
func boundsOf(path string) (intBounds, bool) {
	b, ok := ownBounds[listIndex.ReplaceAllString(path, "")]
	return b, ok
}

// rangeMsg is the one message of an integer key's value v out of its own
// range b: "micro_batch=-3 is out of range (use 1 to 1048576)".
func rangeMsg(path, v string, b intBounds) string {
	lo, hi := fmt.Sprint(b.lo), fmt.Sprint(b.hi)
	if b.count {
		lo, hi = units.Count(b.lo).String(), units.Count(b.hi).String()
	}
	return fmt.Sprintf("%s=%s is out of range (use %s to %s)", leaf(path), v, lo, hi)
}

// intRange checks v at path against the key's own bounds (ownBounds; an
// Alone error).
func (l *loader) intRange(path string, v int64) *Error {
	b, ok := boundsOf(path)
	if !ok {
		return l.errAlone(path, fmt.Sprintf("%s has no bounds (please report this)", path))
	}
	if v < b.lo || v > b.hi {
		return l.errAlone(path, rangeMsg(path, fmt.Sprint(v), b))
	}
	return nil
}

// intRangeOf checks v at path against bounds lo and hi other keys give.
func (l *loader) intRangeOf(path string, v, lo, hi int64) *Error {
	if v < lo || v > hi {
		return l.errPath(path, rangeMsg(path, fmt.Sprint(v), intBounds{lo: lo, hi: hi}))
	}
	return nil
}
