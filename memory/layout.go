package memory

import (
	"errors"
	"fmt"
	"slices"

	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// This file is THE flat-buffer layout shared by memory, numerics and the
// zero/ replay: one code path decides where every parameter sits in the
// padded flat buffer, how the buffer is cut into buckets, where padding goes
// and which slice of each bucket a rank owns.
//
// All offsets and sizes are in elements (not bytes): the same layout serves
// the bf16 param buffer, the bf16 grad buffer and their fp32 shards; callers
// multiply by the element size of the buffer they model.

// Padding selects the padding and bucketing rules of a Layout.
type Padding int

const (
	// PadToy follows seed 000's Buffer (zero_optim_toy): parameters are laid
	// out back to back in forward order with no alignment; each bucket holds
	// exactly BucketElems real elements (the last one fewer) and may split a
	// parameter; each bucket is padded at its end to a multiple of Shards.
	// With BucketElems 0 there is one bucket and
	// padded_numel = ceil(total/Shards)·Shards, exactly as the seed.
	PadToy Padding = iota
	// PadMegatron follows Megatron-Core's _ParamAndGradBuffer with the
	// distributed optimizer (megatron/core/distributed/param_and_grad_buffer.py,
	// NVIDIA/Megatron-LM at commit 001199898c4badd01eaf0785c212d8ed7ce83042,
	// default pad_buckets_for_high_nccl_busbw=False):
	//   - parameters are visited in reverse (backward) order and never split
	//     across buckets; bucket 0 holds the model's last parameters and sits
	//     at offset 0 of the buffer;
	//   - every parameter start is padded to a multiple of 64 elements
	//     (_pad_start_of_param_if_needed: 128-byte alignment at ≥16-bit);
	//   - a bucket is closed after the parameter whose end makes the bucket
	//     span (padded indices, param_end - bucket_start) reach BucketElems;
	//   - every bucket end is padded to a multiple of lcm(Shards, 128)
	//     (_pad_end_of_bucket_if_needed), so buckets also start 256-byte
	//     aligned and every bucket divides evenly among the Shards ranks.
	// Megatron pads only when use_distributed_optimizer is set; zerosim
	// applies the rules whenever PadMegatron is selected (with Shards = 1 the
	// bucket divisor is 128). The shared-embedding rule (a separate bucket for
	// the tied embedding with pipeline parallelism) is not modelled: zerosim
	// has no pipeline stages.
	PadMegatron
)

// Megatron-Core alignment constants (see PadMegatron, which cites
// param_and_grad_buffer.py at 001199898c4badd01eaf0785c212d8ed7ce83042).
const (
	megatronParamAlign  = 64
	megatronBucketAlign = 128
)

// MaxBuckets bounds the number of buckets of one layout so that an input
// such as a one-element bucket size on a 7B model is an error, not an
// out-of-memory crash. 2^18 keeps the step within zero.MaxTasks (at most 3
// collectives per bucket), so the smallest bucket size the error suggests
// also replays; 2^20 suggested 12,854 B for Llama 2 7B, which ran over 600 s.
const MaxBuckets = 1 << 18

// String returns the scenario spelling: "toy" or "megatron".
func (p Padding) String() string {
	switch p {
	case PadToy:
		return "toy"
	case PadMegatron:
		return "megatron"
	}
	return fmt.Sprintf("Padding(%d)", int(p))
}

// PaddingOf is the layout rule of the resolved scenario's
// communication.padding.
func PaddingOf(p scenarios.Padding) Padding {
	if p == scenarios.PaddingMegatron {
		return PadMegatron
	}
	return PadToy
}

// Param is one parameter tensor of a buffer.
type Param struct {
	Name  string
	Numel int64
	// Unit is the index of the model layer / FSDP unit the tensor belongs to.
	Unit int
}

// LayoutSpec describes a buffer to lay out.
type LayoutSpec struct {
	// Params in flat order (the forward order of the model). A unit's
	// parameters must be contiguous in this list.
	Params []Param
	// Shards is the number of ranks sharing one copy of the buffer: N/K, the
	// intra group size. 1 means unsharded.
	Shards int
	// BucketElems is the number of elements per bucket; 0 means one bucket
	// for the whole buffer. Ignored when PerUnit is set.
	BucketElems int64
	// PerUnit asks for one bucket per Unit (ZeRO-3 / FSDP flat parameter per
	// unit).
	PerUnit bool
	Padding Padding
	// NoAlign drops PadMegatron's alignment padding (64-element parameter
	// starts, lcm(Shards,128) bucket ends) while keeping its bucketing:
	// Megatron pads only with the distributed optimizer, so plain DDP
	// (stage 0) uses NoAlign. Ignored with PadToy.
	NoAlign bool
}

// StageSpec is the layout of one parameter buffer at a ZeRO stage: the one
// set of rules memory, the zero/ replay and numerics share. Stage 3 lays one
// bucket per unit (the FSDP flat parameter); stage 0 is plain DDP, where
// Megatron does not align (it pads only with the distributed optimizer:
// NoAlign). Shards is the number of ranks one copy is split over (memory
// counts 1 at stage 0, where nothing is sharded; numerics emulates the
// stage-0 all-reduce as reduce-scatter + all-gather over N/K).
func StageSpec(params []Param, stage, shards int, bucketElems int64, pad Padding) LayoutSpec {
	return LayoutSpec{Params: params, Shards: shards, BucketElems: bucketElems, PerUnit: stage == 3, Padding: pad, NoAlign: stage == 0}
}

// ParamRange is where one parameter lives in the padded flat buffer.
type ParamRange struct {
	Param
	// Start is the offset of the parameter's first element in the padded flat
	// buffer.
	Start int64
	// Bucket is the bucket holding the parameter's first element. With
	// PadToy a parameter may continue into the following buckets, across
	// their end padding: use Layout.Segments for its exact pieces.
	Bucket int
}

// Bucket is one independently communicated slice of the buffer.
type Bucket struct {
	// Start is the bucket's offset in the padded flat buffer; Size is its
	// padded length, a multiple of Shards (of lcm(Shards,128) with
	// PadMegatron).
	Start, Size int64
	// Numel is the number of real (parameter) elements in the bucket.
	Numel int64
	// FirstParam and LastParam are the lowest and highest indices into
	// Layout.Params with at least one element in the bucket.
	FirstParam, LastParam int
}

// Segment is one contiguous piece of a parameter in the padded buffer.
type Segment struct {
	Bucket int
	// Start is the offset in the padded flat buffer.
	Start int64
	// Offset is the offset of the piece's first element inside the
	// parameter; Numel is the piece's length.
	Offset, Numel int64
}

// Layout is a laid-out buffer. It is immutable after NewLayout; callers must
// not modify its slices.
type Layout struct {
	Spec LayoutSpec
	// Params is in the order of Spec.Params (forward order).
	Params []ParamRange
	// Buckets is in buffer order (increasing Start). With PadToy that is
	// forward order; with PadMegatron it is backward order.
	Buckets []Bucket
	// Numel is the number of real elements; Size the padded buffer length.
	Numel, Size int64
}

// NewLayout lays out spec. It returns an error for an empty parameter list,
// a parameter with no elements, Shards < 1, a negative BucketElems, a unit
// whose parameters are not contiguous, more than MaxBuckets buckets, or a
// size that does not fit in an int64.
func NewLayout(spec LayoutSpec) (*Layout, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	spec.Params = slices.Clone(spec.Params)
	l := &Layout{Spec: spec, Params: make([]ParamRange, len(spec.Params))}
	for i, p := range spec.Params {
		l.Params[i].Param = p
		n, err := units.Add(l.Numel, p.Numel)
		if err != nil {
			return nil, fmt.Errorf("memory: layout: total elements: %w", err)
		}
		l.Numel = n
	}
	if spec.Padding == PadToy && spec.BucketElems > 0 && !spec.PerUnit {
		// Bound the bucket count before laying anything out.
		if nb := (l.Numel-1)/spec.BucketElems + 1; nb > MaxBuckets {
			return nil, fmt.Errorf("memory: layout: %d buckets of %d elements for %d elements: more than %d (use buckets of at least %d elements)",
				nb, spec.BucketElems, l.Numel, MaxBuckets, (l.Numel-1)/MaxBuckets+1)
		}
	}
	var err error
	switch spec.Padding {
	case PadToy:
		err = l.layToy()
	case PadMegatron:
		err = l.layMegatron()
	default:
		err = fmt.Errorf("memory: layout: unknown padding %d", int(spec.Padding))
	}
	if err != nil {
		return nil, err
	}
	return l, nil
}

func (spec *LayoutSpec) validate() error {
	if len(spec.Params) == 0 {
		return errors.New("memory: layout: no parameters")
	}
	if spec.Shards < 1 {
		return fmt.Errorf("memory: layout: shards %d: must be ≥ 1", spec.Shards)
	}
	if spec.BucketElems < 0 {
		return fmt.Errorf("memory: layout: bucket size %d elements: must be ≥ 0", spec.BucketElems)
	}
	seen := map[int]bool{}
	for i, p := range spec.Params {
		if p.Numel <= 0 {
			return fmt.Errorf("memory: layout: param %d %q has %d elements: must be > 0", i, p.Name, p.Numel)
		}
		if i > 0 && p.Unit != spec.Params[i-1].Unit && seen[p.Unit] {
			return fmt.Errorf("memory: layout: param %d %q: unit %d is not contiguous in the parameter list", i, p.Name, p.Unit)
		}
		seen[p.Unit] = true
	}
	return nil
}

// padUp rounds n up to a multiple of m (m ≥ 1).
func padUp(n, m int64) (int64, error) {
	r := n % m
	if r == 0 {
		return n, nil
	}
	return units.Add(n, m-r)
}

func lcm(a, b int64) (int64, error) {
	x, y := a, b
	for y != 0 {
		x, y = y, x%y
	}
	return units.Mul(a/x, b)
}

func (l *Layout) addBucket(b Bucket) error {
	if len(l.Buckets) >= MaxBuckets {
		if l.Spec.PerUnit && len(l.Spec.Params) > 0 && l.Spec.Params[len(l.Spec.Params)-1].Unit-l.Spec.Params[0].Unit >= MaxBuckets-1 {
			// Larger buckets do not help: every unit has a bucket of its own.
			return fmt.Errorf("memory: layout: more than %d buckets: stage 3 gives each of the model's units at least one (use fewer layers)", MaxBuckets)
		}
		return fmt.Errorf("memory: layout: more than %d buckets: bucket size %d elements is too small for %d elements (use buckets of at least %d elements)",
			MaxBuckets, l.Spec.BucketElems, l.Numel, (l.Numel-1)/MaxBuckets+1)
	}
	l.Buckets = append(l.Buckets, b)
	return nil
}

// layToy implements PadToy.
func (l *Layout) layToy() error {
	shards := int64(l.Spec.Shards)
	capElems := l.Spec.BucketElems
	if l.Spec.PerUnit {
		capElems = 0
	}
	var off, bstart, inBucket int64
	first := 0
	closeBucket := func(last int) error {
		size, err := padUp(off-bstart, shards)
		if err != nil {
			return fmt.Errorf("memory: layout: padded size: %w", err)
		}
		if err := l.addBucket(Bucket{Start: bstart, Size: size, Numel: inBucket, FirstParam: first, LastParam: last}); err != nil {
			return err
		}
		off = bstart + size
		bstart, inBucket = off, 0
		return nil
	}
	for i, p := range l.Spec.Params {
		if l.Spec.PerUnit && inBucket > 0 && p.Unit != l.Spec.Params[i-1].Unit {
			if err := closeBucket(i - 1); err != nil {
				return err
			}
		}
		if inBucket == 0 {
			first = i
		}
		l.Params[i].Start = off
		l.Params[i].Bucket = len(l.Buckets)
		for rem := p.Numel; rem > 0; {
			take := rem
			if capElems > 0 {
				take = min(rem, capElems-inBucket)
			}
			off += take
			inBucket += take
			rem -= take
			if capElems > 0 && inBucket == capElems {
				if err := closeBucket(i); err != nil {
					return err
				}
				if rem > 0 {
					first = i
				}
			}
		}
	}
	if inBucket > 0 {
		if err := closeBucket(len(l.Spec.Params) - 1); err != nil {
			return err
		}
	}
	l.Size = off
	return nil
}

// layMegatron implements PadMegatron; it mirrors the loop of
// _ParamAndGradBuffer.__init__ (see PadMegatron for the source).
func (l *Layout) layMegatron() error {
	div, err := lcm(int64(l.Spec.Shards), megatronBucketAlign)
	if err != nil {
		return fmt.Errorf("memory: layout: lcm(%d, %d): %w", l.Spec.Shards, megatronBucketAlign, err)
	}
	paramAlign := int64(megatronParamAlign)
	if l.Spec.NoAlign {
		div, paramAlign = int64(l.Spec.Shards), 1
	}
	capElems := l.Spec.BucketElems
	if l.Spec.PerUnit {
		capElems = 0
	}
	var pstart, pend, bstart, inBucket int64
	last := -1 // highest param index of the open bucket; -1 when empty
	lowest := 0
	closeBucket := func(end int64) (int64, error) {
		padded, err := padUp(end, div)
		if err != nil {
			return 0, fmt.Errorf("memory: layout: padded size: %w", err)
		}
		if err := l.addBucket(Bucket{Start: bstart, Size: padded - bstart, Numel: inBucket, FirstParam: lowest, LastParam: last}); err != nil {
			return 0, err
		}
		bstart, inBucket, last = padded, 0, -1
		return padded, nil
	}
	for i := len(l.Spec.Params) - 1; i >= 0; i-- {
		p := l.Spec.Params[i]
		if l.Spec.PerUnit && last >= 0 && p.Unit != l.Spec.Params[last].Unit {
			if pstart, err = closeBucket(pend); err != nil {
				return err
			}
		}
		if pstart, err = padUp(pstart, paramAlign); err != nil {
			return fmt.Errorf("memory: layout: param %q start: %w", p.Name, err)
		}
		if pend, err = units.Add(pstart, p.Numel); err != nil {
			return fmt.Errorf("memory: layout: param %q end: %w", p.Name, err)
		}
		l.Params[i].Start = pstart
		l.Params[i].Bucket = len(l.Buckets)
		if last < 0 {
			last = i
		}
		lowest = i
		inBucket += p.Numel
		if capElems > 0 && pend-bstart >= capElems {
			if pstart, err = closeBucket(pend); err != nil {
				return err
			}
		} else {
			pstart = pend
		}
	}
	if last >= 0 {
		if pstart, err = closeBucket(pend); err != nil {
			return err
		}
	}
	l.Size = pstart
	return nil
}

// Shard returns the half-open range [start, end) of bucket that rank owns,
// as offsets in the padded flat buffer: each bucket is split into Shards
// equal, contiguous pieces in rank order (reduce_scatter_tensor /
// all_gather_into_tensor semantics). It panics if bucket or rank is out of
// range (a caller bug).
func (l *Layout) Shard(bucket, rank int) (start, end int64) {
	if bucket < 0 || bucket >= len(l.Buckets) {
		panic(fmt.Sprintf("memory: Shard: bucket %d out of range [0,%d)", bucket, len(l.Buckets)))
	}
	if rank < 0 || rank >= l.Spec.Shards {
		panic(fmt.Sprintf("memory: Shard: rank %d out of range [0,%d)", rank, l.Spec.Shards))
	}
	b := l.Buckets[bucket]
	n := b.Size / int64(l.Spec.Shards)
	start = b.Start + int64(rank)*n
	return start, start + n
}

// ShardElems is the number of elements one rank owns over all buckets:
// Size/Shards (padding included).
func (l *Layout) ShardElems() int64 { return l.Size / int64(l.Spec.Shards) }

// PaddingElems is the number of padding elements in the buffer: Size - Numel.
func (l *Layout) PaddingElems() int64 { return l.Size - l.Numel }

// ReduceOrder returns the bucket indices in the order the backward pass
// completes them: a bucket is ready once the gradient of its lowest-index
// parameter has been produced, and backward produces gradients from the last
// parameter to the first. With PadToy this is the last bucket first
// (n-1, …, 0); with PadMegatron, whose buckets are already in backward order,
// it is 0, 1, …, n-1. Ties (a toy parameter spanning several buckets) go to
// the later bucket first.
func (l *Layout) ReduceOrder() []int {
	order := make([]int, len(l.Buckets))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		fa, fb := l.Buckets[a].FirstParam, l.Buckets[b].FirstParam
		if fa != fb {
			return fb - fa
		}
		return b - a
	})
	return order
}

// Segments returns the contiguous pieces of parameter i in the padded
// buffer, in parameter order. With PadMegatron, and with PadToy when the
// parameter does not cross a padded bucket boundary, there is exactly one
// segment. It panics if i is out of range.
func (l *Layout) Segments(i int) []Segment {
	if i < 0 || i >= len(l.Params) {
		panic(fmt.Sprintf("memory: Segments: param %d out of range [0,%d)", i, len(l.Params)))
	}
	p := l.Params[i]
	var segs []Segment
	pos, b := p.Start, p.Bucket
	for done := int64(0); done < p.Numel; b++ {
		bk := l.Buckets[b]
		if pos < bk.Start {
			pos = bk.Start
		}
		// Real elements of a bucket run from its start: toy buckets pack
		// them first; Megatron parameters never leave their bucket.
		n := min(p.Numel-done, bk.Start+bk.Size-pos)
		if l.Spec.Padding == PadToy {
			n = min(n, bk.Start+bk.Numel-pos)
		}
		segs = append(segs, Segment{Bucket: b, Start: pos, Offset: done, Numel: n})
		done += n
		pos += n
	}
	return segs
}

// UnitBucket returns the bucket holding unit's first element and whether
// the unit has parameters in the layout. With PerUnit it is the unit's
// bucket (its FSDP flat parameter).
func (l *Layout) UnitBucket(unit int) (int, bool) {
	for _, p := range l.Params {
		if p.Unit == unit {
			return p.Bucket, true
		}
	}
	return 0, false
}

// RankNumel returns the number of real (parameter) elements inside rank's
// shards over all buckets; ShardElems() - RankNumel(rank) of the rank's
// elements are padding. It panics if rank is out of range.
func (l *Layout) RankNumel(rank int) int64 {
	var n int64
	overlap := func(s, e, lo, hi int64) int64 {
		lo, hi = max(s, lo), min(e, hi)
		return max(hi-lo, 0)
	}
	for b, bk := range l.Buckets {
		s, e := l.Shard(b, rank)
		if l.Spec.Padding == PadToy {
			// Toy buckets hold their real elements first, padding last.
			n += overlap(s, e, bk.Start, bk.Start+bk.Numel)
			continue
		}
		// Megatron parameters never leave their bucket.
		for i := bk.FirstParam; i <= bk.LastParam; i++ {
			p := l.Params[i]
			n += overlap(s, e, p.Start, p.Start+p.Numel)
		}
	}
	return n
}
