package memory

import (
	"fmt"
	"sort"
)

// This file keeps allocator.go as it was before the free-block sets held
// pointer-free keys (perf22), renamed, as the oracle of
// TestAllocatorMatchesOracle: the same rules of CUDACachingAllocator.cpp
// (allocator.go cites them) over sorted slices of block pointers.

type refBlock struct {
	seg         *refSeg
	addr, size  int64
	allocated   bool
	mapped      bool
	prev, next  *refBlock
	freeIndexed bool
}

type refSeg struct {
	stream int
	small  bool
	base   int64
	page   int64 // expandable: page size; 0 for a cudaMalloc segment
}

// refAllocator is a deterministic simulation of one device's caching
// allocator. The zero value is not usable: use newRefAllocator.
type refAllocator struct {
	mode  SegmentMode
	limit int64 // bytes the allocator may reserve; 0: unlimited
	space int64 // an expandable segment's virtual size
	// free[p] holds the cached mapped blocks of pool p (0 large, 1
	// small), ordered by stream, size, address; unmapped[p] the unmapped
	// ranges of expandable segments, by stream and address.
	free     [2][]*refBlock
	unmapped [2][]*refBlock
	next     int64
	live     map[int]*refBlock
	nextID   int

	// Allocated and Reserved are the current allocated and reserved bytes
	// (allocated_bytes.all.current, reserved_bytes.all.current); the Peak
	// fields their maxima, Segments the cudaMalloc segments or mapped
	// ranges alive, Retries the times a request released the cache.
	Allocated, Reserved         int64
	PeakAllocated, PeakReserved int64
	Segments, Retries           int
	// high is the reserve's high-water mark since the replay last reset
	// it (allocseq.go's series: a release within one event, on a retry,
	// must not hide the reserve the event reached).
	high int64
}

// newRefAllocator returns an empty allocator in mode. limit is what it may
// reserve before cudaMalloc fails (the device's memory less what lives
// outside the allocator), 0 for no limit.
func newRefAllocator(mode SegmentMode, limit int64) (*refAllocator, error) {
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
	return &refAllocator{mode: mode, limit: limit, space: space, live: map[int]*refBlock{}}, nil
}

func refPoolOf(small bool) int {
	if small {
		return 1
	}
	return 0
}

func refLessSize(a, b *refBlock) bool {
	if a.seg.stream != b.seg.stream {
		return a.seg.stream < b.seg.stream
	}
	if a.size != b.size {
		return a.size < b.size
	}
	return a.addr < b.addr
}

func refLessAddr(a, b *refBlock) bool {
	if a.seg.stream != b.seg.stream {
		return a.seg.stream < b.seg.stream
	}
	return a.addr < b.addr
}

func refInsertSorted(s []*refBlock, b *refBlock, less func(a, b *refBlock) bool) []*refBlock {
	i := sort.Search(len(s), func(i int) bool { return less(b, s[i]) })
	s = append(s, nil)
	copy(s[i+1:], s[i:])
	s[i] = b
	return s
}

func refRemoveSorted(s []*refBlock, b *refBlock, less func(a, b *refBlock) bool) []*refBlock {
	i := sort.Search(len(s), func(i int) bool { return !less(s[i], b) })
	if i < len(s) && s[i] == b {
		return append(s[:i], s[i+1:]...)
	}
	panic("memory: allocator block not in its set")
}

func (a *refAllocator) addFree(b *refBlock) {
	p := refPoolOf(b.seg.small)
	a.free[p] = refInsertSorted(a.free[p], b, refLessSize)
	b.freeIndexed = true
}

func (a *refAllocator) dropFree(b *refBlock) {
	p := refPoolOf(b.seg.small)
	a.free[p] = refRemoveSorted(a.free[p], b, refLessSize)
	b.freeIndexed = false
}

func (a *refAllocator) addUnmapped(b *refBlock) {
	p := refPoolOf(b.seg.small)
	a.unmapped[p] = refInsertSorted(a.unmapped[p], b, refLessAddr)
}

func (a *refAllocator) dropUnmapped(b *refBlock) {
	p := refPoolOf(b.seg.small)
	a.unmapped[p] = refRemoveSorted(a.unmapped[p], b, refLessAddr)
}

func (a *refAllocator) note() {
	a.PeakAllocated = max(a.PeakAllocated, a.Allocated)
	a.PeakReserved = max(a.PeakReserved, a.Reserved)
	a.high = max(a.high, a.Reserved)
}

// Malloc allocates n bytes on stream and returns a handle for Free.
func (a *refAllocator) Malloc(stream int, n int64) (int, error) {
	if n < 0 || n > allocMaxRequest {
		return 0, fmt.Errorf("memory: allocator request of %d B: use 0 to %d", n, allocMaxRequest)
	}
	size := allocRoundSize(n)
	small := size <= allocSmallSize
	b := a.freeBlock(stream, small, size)
	if b == nil {
		b = a.newBlock(stream, small, size)
		if b == nil {
			a.Retries++
			a.releaseCached()
			if b = a.newBlock(stream, small, size); b == nil {
				return 0, &OOMError{Size: n, Stream: stream, Reserved: a.Reserved, Allocated: a.Allocated, Limit: a.limit}
			}
		}
	}
	if a.shouldSplit(b, size) {
		rest := &refBlock{seg: b.seg, addr: b.addr + size, size: b.size - size, mapped: true, prev: b, next: b.next}
		if b.next != nil {
			b.next.prev = rest
		}
		b.next = rest
		b.size = size
		a.addFree(rest)
	}
	b.allocated = true
	a.Allocated += b.size
	a.nextID++
	a.live[a.nextID] = b
	a.note()
	return a.nextID, nil
}

// Free returns the block of handle h to the cache.
func (a *refAllocator) Free(h int) error {
	b, ok := a.live[h]
	if !ok {
		return fmt.Errorf("memory: allocator free of unknown handle %d", h)
	}
	delete(a.live, h)
	b.allocated = false
	a.Allocated -= b.size
	a.mergeFree(b)
	a.addFree(b)
	return nil
}

// mergeFree merges b with its free neighbours of the same mapped state
// (try_merge_blocks), removing them from their sets.
func (a *refAllocator) mergeFree(b *refBlock) {
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
	}
}

// shouldSplit is should_split with max_split_size unlimited.
func (a *refAllocator) shouldSplit(b *refBlock, size int64) bool {
	rest := b.size - size
	if b.seg.small || a.mode == SegmentsExpandable {
		return rest >= allocMinBlock
	}
	return rest > allocSmallSize
}

// refExpandableSize is get_free_block's expandable_size.
func refExpandableSize(b *refBlock) int64 {
	if b.next != nil && !b.next.mapped {
		return b.size + b.next.size
	}
	return b.size
}

// freeBlock is get_free_block: the best-fitting cached block, removed from
// the cache, or nil.
func (a *refAllocator) freeBlock(stream int, small bool, size int64) *refBlock {
	p := refPoolOf(small)
	s := a.free[p]
	i := sort.Search(len(s), func(i int) bool {
		x := s[i]
		if x.seg.stream != stream {
			return x.seg.stream > stream
		}
		return x.size >= size
	})
	if i == len(s) || s[i].seg.stream != stream {
		return nil
	}
	if s[i].seg.page > 0 {
		for i+1 < len(s) && s[i+1].seg.stream == stream && refExpandableSize(s[i+1]) < refExpandableSize(s[i]) {
			i++
		}
	}
	b := s[i]
	a.dropFree(b)
	return b
}

// newBlock reserves memory for a request that no cached block fits
// (alloc_block), nil when the limit forbids it.
func (a *refAllocator) newBlock(stream int, small bool, size int64) *refBlock {
	if a.mode == SegmentsExpandable {
		return a.expandableBlock(stream, small, size)
	}
	n := allocSegmentSize(size)
	if a.limit > 0 && a.Reserved+n > a.limit {
		return nil
	}
	seg := &refSeg{stream: stream, small: small, base: a.next}
	a.next += n
	a.Reserved += n
	a.Segments++
	a.note()
	return &refBlock{seg: seg, addr: seg.base, size: n, mapped: true}
}

// expandableBlock is try_allocate_expandable_block with
// find_expandable_block: a mapped block of at least size at the lowest
// address of the stream's segments where free and unmapped space fits it.
func (a *refAllocator) expandableBlock(stream int, small bool, size int64) *refBlock {
	p := refPoolOf(small)
	free := func(b *refBlock) bool { return b != nil && !b.allocated }
	room := func(b *refBlock) bool {
		var n int64
		for n < size && free(b) {
			n += b.size
			b = b.next
		}
		return n >= size
	}
	var c *refBlock
	for _, u := range a.unmapped[p] {
		if u.seg.stream != stream {
			continue
		}
		x := u
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
		seg := &refSeg{stream: stream, small: small, base: a.next, page: page}
		a.next += a.space
		c = &refBlock{seg: seg, addr: seg.base, size: a.space}
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
func (a *refAllocator) mapBlock(b *refBlock, size int64) *refBlock {
	pg := b.seg.page
	mapped := (size + pg - 1) / pg * pg
	if a.limit > 0 && a.Reserved+mapped > a.limit {
		return nil
	}
	a.dropUnmapped(b)
	b.mapped = true
	if mapped < b.size {
		rest := &refBlock{seg: b.seg, addr: b.addr + mapped, size: b.size - mapped, prev: b, next: b.next}
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
func (a *refAllocator) releaseCached() {
	for p := range a.free {
		for _, b := range append([]*refBlock(nil), a.free[p]...) {
			if b.seg.page == 0 {
				if b.prev == nil && b.next == nil {
					a.dropFree(b)
					a.Reserved -= b.size
					a.Segments--
				}
				continue
			}
			a.unmapBlock(b)
		}
	}
}

func (a *refAllocator) unmapBlock(b *refBlock) {
	pg := b.seg.page
	off := b.addr - b.seg.base
	lo := b.seg.base + (off+pg-1)/pg*pg
	hi := b.seg.base + (off+b.size)/pg*pg
	if lo >= hi {
		return
	}
	a.dropFree(b)
	if lo > b.addr {
		before := &refBlock{seg: b.seg, addr: b.addr, size: lo - b.addr, mapped: true, prev: b.prev, next: b}
		if b.prev != nil {
			b.prev.next = before
		}
		b.prev = before
		a.addFree(before)
	}
	if end := b.addr + b.size; end > hi {
		after := &refBlock{seg: b.seg, addr: hi, size: end - hi, mapped: true, prev: b, next: b.next}
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
		return
	}
	a.addUnmapped(b)
}

// liveBlocks are a's allocated blocks.
func (a *Allocator) liveBlocks() []*ablock {
	var bs []*ablock
	for _, b := range a.blocks {
		if b.handle > 0 {
			bs = append(bs, b)
		}
	}
	return bs
}

// freeBlocks are a's cached blocks of pool p, in the sets' order (by
// stream, size, address).
func (a *Allocator) freeBlocks(p int) []*ablock {
	var bs []*ablock
	for _, s := range a.free[p] {
		for _, k := range s {
			bs = append(bs, a.blocks[k.id])
		}
	}
	return bs
}
