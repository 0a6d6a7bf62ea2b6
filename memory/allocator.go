package memory

import (
	"errors"
	"fmt"
	"slices"
)

// This file simulates PyTorch's CUDA caching allocator, request by request,
// so that the reserved peak (torch.cuda.max_memory_reserved, what torchtitan
// prints as "memory") can be read off a replay of a step's allocations and
// frees instead of being taken as a fraction of the allocated peak.
//
// The rules are those of pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp
// read at 001074d25084fdb87a799823e395a50f5ec044d3 (2025). The
// default-segment rules predate the validated runs of 2024: the 2 MiB
// multiples, 20 MiB blocks for 1–10 MiB requests and 2 MiB small blocks come
// from pytorch/pytorch#17120 (2019), max_split_size from #44742 (2020); the
// expandable-segment details were not read at a 2024 version:
//
//   - Sizes (the constants after Note [Interaction with CUDA graph capture]):
//     every request is rounded up to kMinBlockSize = 512 B (round_size, with
//     roundup_power2_divisions unset); a request of at most kSmallSize = 1 MiB
//     goes to the small pool, a larger one to the large pool (get_pool).
//   - A new segment (get_allocation_size): kSmallBuffer = 2 MiB for a small
//     request, kLargeBuffer = 20 MiB for one below kMinLargeAlloc = 10 MiB,
//     else the request rounded up to kRoundLarge = 2 MiB. It is reserved
//     with cudaMalloc (alloc_block) only when no cached block fits.
//   - Lookup (get_free_block): the smallest free block of the pool on the
//     request's stream whose size is at least the request (the pool is a set
//     ordered by stream, size, address: BlockComparatorSize). Blocks freed on
//     one stream are never handed to another ("Once freed, blocks can be
//     re-allocated on the same stream, but not on any other stream").
//   - Splitting (should_split, alloc_found_block): a large-pool block is
//     split when more than kSmallSize would remain (max_split_size is
//     unlimited by default), a small-pool block when at least 512 B would;
//     the request takes the front, the rest stays cached. Allocated bytes
//     count the whole block handed out (alloc_found_block adds block->size).
//   - Free (free_block, try_merge_blocks): a freed block merges with its
//     free neighbours of the same segment and is cached; nothing goes back
//     to the driver.
//   - Out of memory (malloc): when cudaMalloc fails the allocator frees
//     every cached segment that is wholly free (release_cached_blocks →
//     release_blocks: blocks with no prev and no next) and retries once;
//     release_available_cached_blocks does nothing while max_split_size is
//     unlimited.
//   - expandable_segments:True (Note [Expandable Segments];
//     find_expandable_block, map_block, try_allocate_expandable_block,
//     unmap_block): one segment per stream and pool, a virtual range of 1⅛
//     times the device's memory, mapped in pages of 20 MiB (large pool) or
//     2 MiB (small pool) as requests need them at the lowest address where a
//     free block followed by unmapped space fits; a block is then split
//     whenever 512 B would remain (should_split), and best fit prefers a
//     block that is not next to unmapped space (get_free_block's
//     expandable_size). Out of memory, the free pages are unmapped and the
//     request retried.
//
// A freed block that another stream used (record_stream) is cached only once
// that stream passes the free (insert_events, process_events); the caller
// models that by issuing the Free when the block becomes reusable.

// Allocator constants (CUDACachingAllocator.cpp, see above).
const (
	allocMinBlock   int64 = 512
	allocSmallSize  int64 = 1 << 20
	allocSmallBuf   int64 = 2 << 20
	allocMinLarge   int64 = 10 << 20
	allocRoundLarge int64 = 2 << 20
	allocLargeBuf   int64 = 20 << 20
	// allocMaxRequest bounds a request so that no sum of the simulation
	// overflows int64 (1 PiB).
	allocMaxRequest int64 = 1 << 50
)

// allocMaxStreams bounds the stream ids Malloc takes, which index the
// free and unmapped sets (the replay uses four: allocseq.go). A zerosim
// bound, not PyTorch's.
const allocMaxStreams = 64

// SegmentMode is the caching allocator's segment mode
// (PYTORCH_CUDA_ALLOC_CONF expandable_segments).
type SegmentMode int

// Segment modes.
const (
	SegmentsDefault SegmentMode = iota
	SegmentsExpandable
)

// ErrAllocatorOOM is returned by Malloc when the request does not fit even
// after the allocator released its cached segments.
var ErrAllocatorOOM = errors.New("memory: caching allocator out of memory")

// OOMError is Malloc's out-of-memory: the request (Size bytes on Stream)
// that found no room with Reserved bytes reserved of Limit after the
// allocator released its cached segments. It wraps ErrAllocatorOOM.
type OOMError struct {
	Size                       int64
	Stream                     int
	Reserved, Allocated, Limit int64
}

func (e *OOMError) Error() string {
	return fmt.Sprintf("%v: %d B on stream %d with %d B reserved of %d", ErrAllocatorOOM, e.Size, e.Stream, e.Reserved, e.Limit)
}

func (e *OOMError) Unwrap() error { return ErrAllocatorOOM }

type ablock struct {
	seg        *aseg
	addr, size int64
	allocated  bool
	mapped     bool
	prev, next *ablock
	// id is the block's index in Allocator.blocks, by which the sets
	// and the handles name it; handle is the handle it is allocated
	// under, 0 while it is not.
	id, handle int
}

// bkey is a block's entry in a set of free or unmapped blocks of one
// stream: the fields BlockComparatorSize orders by after the stream (size,
// address; the unmapped sets by address) and the block's id. It holds no
// pointer, so that inserting into and removing from a sorted slice moves
// plain bytes: moving pointers makes the garbage collector's write
// barrier visit every element moved while it marks, which was about half
// of the replay's time (perf22).
type bkey struct {
	size, addr int64
	id         int
}

// before reports whether x comes before y in BlockComparatorSize's
// order within one stream: by size, then address. The unmapped sets' keys
// carry size 0 (unmappedKey), which orders them by address.
func (x bkey) before(y bkey) bool {
	if x.size != y.size {
		return x.size < y.size
	}
	return x.addr < y.addr
}

func (b *ablock) key() bkey { return bkey{size: b.size, addr: b.addr, id: b.id} }

func (b *ablock) unmappedKey() bkey { return bkey{addr: b.addr, id: b.id} }

type aseg struct {
	stream int
	small  bool
	base   int64
	page   int64 // expandable: page size; 0 for a cudaMalloc segment
}

// Allocator is a deterministic simulation of one device's caching
// allocator. The zero value is not usable: use NewAllocator.
type Allocator struct {
	mode  SegmentMode
	limit int64 // bytes the allocator may reserve; 0: unlimited
	space int64 // an expandable segment's virtual size
	// free[p][st] holds the cached mapped blocks of pool p (0 large, 1
	// small) on stream st, ordered by size, address (bkey.before);
	// unmapped[p][st] the unmapped ranges of stream st's expandable
	// segments, by address: BlockComparatorSize's order by stream, size,
	// address, one stream at a time (a request looks only at its own
	// stream's blocks). Their keys name blocks by id (blocks[id]); spare
	// holds the ids of blocks merged away or released, whose structs
	// newBlk reuses.
	free     [2][][]bkey
	unmapped [2][][]bkey
	blocks   []*ablock
	spare    []int
	next     int64
	// requests numbers the Malloc calls that got a block: a handle is
	// that number above handleIDBits and the block's id below.
	requests int
	// calls, when not nil, records every Malloc and Free (the oracle
	// test replays them).
	calls *[]allocCall

	// Allocated and Reserved are the current allocated and reserved bytes
	// (allocated_bytes.all.current, reserved_bytes.all.current); the Peak
	// fields their maxima, Segments the cudaMalloc segments or mapped
	// ranges alive, Retries the times a request released the cache.
	Allocated, Reserved         int64
	PeakAllocated, PeakReserved int64
	Segments, Retries           int
	// syncEvents, when set, returns the blocks whose frees wait on other
	// streams' events (the replay's record_stream frees, deferred.go):
	// what release_cached_blocks does first.
	syncEvents func()
	// high is the reserve's high-water mark since the replay last reset
	// it (allocseq.go's series: a release within one event, on a retry,
	// must not hide the reserve the event reached).
	high int64
}

// NewAllocator returns an empty allocator in mode. limit is what it may
// reserve before cudaMalloc fails (the device's memory less what lives
// outside the allocator), 0 for no limit.
func NewAllocator(mode SegmentMode, limit int64) (*Allocator, error) {
	if mode != SegmentsDefault && mode != SegmentsExpandable {
		return nil, fmt.Errorf("memory: allocator segment mode %d: use SegmentsDefault or SegmentsExpandable", mode)
	}
	if limit < 0 || limit > allocMaxRequest {
		return nil, fmt.Errorf("memory: allocator limit %d B: use 0 (unlimited) or up to %d", limit, allocMaxRequest)
	}
	space := allocMaxRequest
	if limit > 0 {
		// find_expandable_block: "enough address space for 1 1/8 the
		// total memory on the GPU", in whole pages.
		space = (limit + limit/8 + allocLargeBuf - 1) / allocLargeBuf * allocLargeBuf
	}
	return &Allocator{mode: mode, limit: limit, space: space}, nil
}

// allocCall is one call of an Allocator: Malloc(stream, n) when free is 0,
// else Free(free).
type allocCall struct {
	stream int
	n      int64
	free   int
}

// handleIDBits is the width of a handle's block id: a handle is unique
// (the request's number above the id), so that a second Free of it fails,
// and names its block without a map.
const handleIDBits = 31

// newBlk returns a new block b, under the id and in the struct of a
// spare block if there is one.
func (a *Allocator) newBlk(b ablock) *ablock {
	if n := len(a.spare); n > 0 {
		b.id = a.spare[n-1]
		a.spare = a.spare[:n-1]
		p := a.blocks[b.id]
		*p = b
		return p
	}
	b.id = len(a.blocks)
	if int64(b.id) >= 1<<handleIDBits {
		panic("memory: allocator of more than 2^31 blocks")
	}
	p := new(ablock)
	*p = b
	a.blocks = append(a.blocks, p)
	return p
}

// retire makes b, merged away or released, spare.
func (a *Allocator) retire(b *ablock) {
	*b = ablock{id: b.id}
	a.spare = append(a.spare, b.id)
}

// allocRoundSize is round_size: at least 512 B, a multiple of 512 B.
func allocRoundSize(n int64) int64 {
	if n < allocMinBlock {
		return allocMinBlock
	}
	return (n + allocMinBlock - 1) / allocMinBlock * allocMinBlock
}

// allocSegmentSize is get_allocation_size.
func allocSegmentSize(size int64) int64 {
	switch {
	case size <= allocSmallSize:
		return allocSmallBuf
	case size < allocMinLarge:
		return allocLargeBuf
	}
	return (size + allocRoundLarge - 1) / allocRoundLarge * allocRoundLarge
}

func poolOf(small bool) int {
	if small {
		return 1
	}
	return 0
}

// search is the index of the first key of s not before k (a binary
// search, as std::set's lower_bound).
func search(s []bkey, k bkey) int {
	lo, hi := 0, len(s)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s[m].before(k) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// insertKey inserts k into the set s.
func insertKey(s []bkey, k bkey) []bkey {
	return slices.Insert(s, search(s, k), k)
}

// removeKey removes k from the set s.
func removeKey(s []bkey, k bkey) []bkey {
	i := search(s, k)
	if i == len(s) || s[i].id != k.id {
		panic("memory: allocator block not in its set")
	}
	return slices.Delete(s, i, i+1)
}

// set is the set of stream st in sets (free[p] or unmapped[p]), made on
// first use.
func set(sets *[][]bkey, st int) *[]bkey {
	if st >= len(*sets) {
		*sets = append(*sets, make([][]bkey, st+1-len(*sets))...)
	}
	return &(*sets)[st]
}

// of is the set of stream st in sets, nil when there is none.
func of(sets [][]bkey, st int) []bkey {
	if st < len(sets) {
		return sets[st]
	}
	return nil
}

func (a *Allocator) addFree(b *ablock) {
	s := set(&a.free[poolOf(b.seg.small)], b.seg.stream)
	*s = insertKey(*s, b.key())
}

func (a *Allocator) dropFree(b *ablock) {
	s := set(&a.free[poolOf(b.seg.small)], b.seg.stream)
	*s = removeKey(*s, b.key())
}

func (a *Allocator) addUnmapped(b *ablock) {
	s := set(&a.unmapped[poolOf(b.seg.small)], b.seg.stream)
	*s = insertKey(*s, b.unmappedKey())
}

func (a *Allocator) dropUnmapped(b *ablock) {
	s := set(&a.unmapped[poolOf(b.seg.small)], b.seg.stream)
	*s = removeKey(*s, b.unmappedKey())
}

func (a *Allocator) note() {
	a.PeakAllocated = max(a.PeakAllocated, a.Allocated)
	a.PeakReserved = max(a.PeakReserved, a.Reserved)
	a.high = max(a.high, a.Reserved)
}

// Malloc allocates n bytes on stream and returns a handle for Free.
func (a *Allocator) Malloc(stream int, n int64) (int, error) {
	if a.calls != nil {
		*a.calls = append(*a.calls, allocCall{stream: stream, n: n})
	}
	if n < 0 || n > allocMaxRequest {
		return 0, fmt.Errorf("memory: allocator request of %d B: use 0 to %d", n, allocMaxRequest)
	}
	if stream < 0 || stream >= allocMaxStreams {
		return 0, fmt.Errorf("memory: allocator stream %d: use 0 to %d", stream, allocMaxStreams-1)
	}
	size := allocRoundSize(n)
	small := size <= allocSmallSize
	b := a.freeBlock(stream, small, size)
	if b == nil {
		b = a.newBlock(stream, small, size)
		if b == nil {
			a.Retries++
			if a.syncEvents != nil {
				// release_cached_blocks first synchronizes the
				// outstanding events and returns their blocks
				// (synchronize_and_free_events).
				a.syncEvents()
			}
			a.releaseCached()
			if b = a.newBlock(stream, small, size); b == nil {
				return 0, &OOMError{Size: n, Stream: stream, Reserved: a.Reserved, Allocated: a.Allocated, Limit: a.limit}
			}
		}
	}
	if a.shouldSplit(b, size) {
		rest := a.newBlk(ablock{seg: b.seg, addr: b.addr + size, size: b.size - size, mapped: true, prev: b, next: b.next})
		if b.next != nil {
			b.next.prev = rest
		}
		b.next = rest
		b.size = size
		a.addFree(rest)
	}
	b.allocated = true
	a.Allocated += b.size
	a.requests++
	b.handle = a.requests<<handleIDBits | b.id
	a.note()
	return b.handle, nil
}

// Free returns the block of handle h to the cache.
func (a *Allocator) Free(h int) error {
	if a.calls != nil {
		*a.calls = append(*a.calls, allocCall{free: h})
	}
	id := h & (1<<handleIDBits - 1)
	if h <= 0 || id >= len(a.blocks) || a.blocks[id].handle != h {
		return fmt.Errorf("memory: allocator free of unknown handle %d", h)
	}
	b := a.blocks[id]
	b.handle = 0
	b.allocated = false
	a.Allocated -= b.size
	a.mergeFree(b)
	a.addFree(b)
	return nil
}

// blockSize is the size of the block of the live handle h (0 for a
// handle that is not live).
func (a *Allocator) blockSize(h int) int64 {
	id := h & (1<<handleIDBits - 1)
	if h <= 0 || id >= len(a.blocks) || a.blocks[id].handle != h {
		return 0
	}
	return a.blocks[id].size
}

// mergeFree merges b with its free neighbours of the same mapped state
// (try_merge_blocks), removing them from their sets.
func (a *Allocator) mergeFree(b *ablock) {
	if p := b.prev; p != nil && !p.allocated && p.mapped == b.mapped {
		if p.mapped {
			a.dropFree(p)
		} else {
			a.dropUnmapped(p)
		}
		b.addr, b.size, b.prev = p.addr, b.size+p.size, p.prev
		if b.prev != nil {
			b.prev.next = b
		}
		a.retire(p)
	}
	if n := b.next; n != nil && !n.allocated && n.mapped == b.mapped {
		if n.mapped {
			a.dropFree(n)
		} else {
			a.dropUnmapped(n)
		}
		b.size, b.next = b.size+n.size, n.next
		if b.next != nil {
			b.next.prev = b
		}
		a.retire(n)
	}
}

// shouldSplit is should_split with max_split_size unlimited.
func (a *Allocator) shouldSplit(b *ablock, size int64) bool {
	rest := b.size - size
	if b.seg.small || a.mode == SegmentsExpandable {
		return rest >= allocMinBlock
	}
	return rest > allocSmallSize
}

// expandableSize is get_free_block's expandable_size.
func expandableSize(b *ablock) int64 {
	if b.next != nil && !b.next.mapped {
		return b.size + b.next.size
	}
	return b.size
}

// freeBlock is get_free_block: the best-fitting cached block, removed from
// the cache, or nil.
func (a *Allocator) freeBlock(stream int, small bool, size int64) *ablock {
	s := of(a.free[poolOf(small)], stream)
	// The first block of the stream of at least size: addresses are
	// never negative.
	i := search(s, bkey{size: size, addr: -1})
	if i == len(s) {
		return nil
	}
	b := a.blocks[s[i].id]
	if b.seg.page > 0 {
		for i+1 < len(s) {
			c := a.blocks[s[i+1].id]
			if expandableSize(c) >= expandableSize(b) {
				break
			}
			i, b = i+1, c
		}
	}
	a.dropFree(b)
	return b
}

// newBlock reserves memory for a request that no cached block fits
// (alloc_block), nil when the limit forbids it.
func (a *Allocator) newBlock(stream int, small bool, size int64) *ablock {
	if a.mode == SegmentsExpandable {
		return a.expandableBlock(stream, small, size)
	}
	n := allocSegmentSize(size)
	if a.limit > 0 && a.Reserved+n > a.limit {
		return nil
	}
	seg := &aseg{stream: stream, small: small, base: a.next}
	a.next += n
	a.Reserved += n
	a.Segments++
	a.note()
	return a.newBlk(ablock{seg: seg, addr: seg.base, size: n, mapped: true})
}

// expandableBlock is try_allocate_expandable_block with
// find_expandable_block: a mapped block of at least size at the lowest
// address of the stream's segments where free and unmapped space fits it.
func (a *Allocator) expandableBlock(stream int, small bool, size int64) *ablock {
	p := poolOf(small)
	free := func(b *ablock) bool { return b != nil && !b.allocated }
	room := func(b *ablock) bool {
		var n int64
		for n < size && free(b) {
			n += b.size
			b = b.next
		}
		return n >= size
	}
	var c *ablock
	for _, k := range of(a.unmapped[p], stream) {
		x := a.blocks[k.id]
		if free(x.prev) {
			x = x.prev
		}
		if room(x) {
			c = x
			break
		}
	}
	if c == nil {
		page := allocLargeBuf
		if small {
			page = allocSmallBuf
		}
		seg := &aseg{stream: stream, small: small, base: a.next, page: page}
		a.next += a.space
		c = a.newBlk(ablock{seg: seg, addr: seg.base, size: a.space})
		a.addUnmapped(c)
		a.Segments++
	}
	if !c.mapped {
		if c = a.mapBlock(c, min(c.size, size)); c == nil {
			return nil
		}
	}
	for c.size < size {
		if c = a.mapBlock(c.next, min(size-c.size, c.next.size)); c == nil {
			return nil
		}
	}
	a.dropFree(c)
	return c
}

// mapBlock maps the pages covering the first size bytes of unmapped block
// b (map_block) and returns the free mapped block it merges into, or nil
// when the limit forbids it.
func (a *Allocator) mapBlock(b *ablock, size int64) *ablock {
	pg := b.seg.page
	mapped := (size + pg - 1) / pg * pg
	if a.limit > 0 && a.Reserved+mapped > a.limit {
		return nil
	}
	a.dropUnmapped(b)
	b.mapped = true
	if mapped < b.size {
		rest := a.newBlk(ablock{seg: b.seg, addr: b.addr + mapped, size: b.size - mapped, prev: b, next: b.next})
		if b.next != nil {
			b.next.prev = rest
		}
		b.next = rest
		b.size = mapped
		a.addUnmapped(rest)
	}
	a.mergeFree(b)
	a.addFree(b)
	a.Reserved += mapped
	a.note()
	return b
}

// releaseCached is release_cached_blocks: cudaFree every wholly free
// segment; under expandable segments unmap every free page (unmap_block)
// and drop a segment left wholly unmapped.
func (a *Allocator) releaseCached() {
	for p := range a.free {
		var bs []*ablock
		for _, s := range a.free[p] { // by stream, size, address
			for _, k := range s {
				bs = append(bs, a.blocks[k.id])
			}
		}
		for _, b := range bs {
			if b.seg.page == 0 {
				if b.prev == nil && b.next == nil {
					a.dropFree(b)
					a.Reserved -= b.size
					a.Segments--
					a.retire(b)
				}
				continue
			}
			a.unmapBlock(b)
		}
	}
}

func (a *Allocator) unmapBlock(b *ablock) {
	pg := b.seg.page
	off := b.addr - b.seg.base
	lo := b.seg.base + (off+pg-1)/pg*pg
	hi := b.seg.base + (off+b.size)/pg*pg
	if lo >= hi {
		return
	}
	a.dropFree(b)
	if lo > b.addr {
		before := a.newBlk(ablock{seg: b.seg, addr: b.addr, size: lo - b.addr, mapped: true, prev: b.prev, next: b})
		if b.prev != nil {
			b.prev.next = before
		}
		b.prev = before
		a.addFree(before)
	}
	if end := b.addr + b.size; end > hi {
		after := a.newBlk(ablock{seg: b.seg, addr: hi, size: end - hi, mapped: true, prev: b, next: b.next})
		if b.next != nil {
			b.next.prev = after
		}
		b.next = after
		a.addFree(after)
	}
	b.addr, b.size, b.mapped = lo, hi-lo, false
	a.Reserved -= hi - lo
	a.mergeFree(b)
	if b.prev == nil && b.next == nil {
		a.Segments-- // release_expandable_segment
		a.retire(b)
		return
	}
	a.addUnmapped(b)
}
