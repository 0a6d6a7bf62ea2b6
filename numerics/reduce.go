package numerics

// CollectiveBytes is the traffic of one kind of collective during one
// training step, counted the way the seeds count it: a reduce-scatter or
// all-gather of a buffer of S bytes moves S logical bytes, an all-reduce
// 2S; each rank sends (Ranks−1)/Ranks of that (ring algorithms). Bytes is
// for one group instance (every group does the same), summed over the
// step's calls (buckets or units). Collectives over a single rank move
// nothing and are not listed.
type CollectiveBytes struct {
	// Phase is "forward" (ZeRO-3 gathers), "backward" (ZeRO-3 re-gathers
	// and every stage's gradient reduction) or "post-optim" (the parameter
	// all-gather of stages 1 and 2).
	Phase string
	// Op is "all-gather", "reduce-scatter" or "all-reduce".
	Op string
	// Group is "intra" (N/K contiguous ranks), "inter" (the K ranks that
	// hold the same shard) or "world" (all N ranks, K = 1 all-reduce).
	Group string
	Ranks int
	Calls int
	Bytes int64
}

// PerRank returns the bytes each rank sends, (Ranks−1)/Ranks·Bytes, as an
// exact fraction num/den in lowest terms.
func (c CollectiveBytes) PerRank() (num, den int64) {
	num, den = c.Bytes*int64(c.Ranks-1), int64(c.Ranks)
	g, b := num, den
	for b != 0 {
		g, b = b, g%b
	}
	if g == 0 {
		return 0, 1
	}
	return num / g, den / g
}

// ledger accumulates CollectiveBytes in first-seen order.
type ledger []CollectiveBytes

func (l *ledger) add(phase, op, group string, ranks int, bytes int64) {
	if ranks < 2 {
		return
	}
	for i := range *l {
		c := &(*l)[i]
		if c.Phase == phase && c.Op == op && c.Group == group {
			c.Calls++
			c.Bytes += bytes
			return
		}
	}
	*l = append(*l, CollectiveBytes{Phase: phase, Op: op, Group: group, Ranks: ranks, Calls: 1, Bytes: bytes})
}

// reduceGrads sums the ranks' gradients bucket by bucket in backward
// completion order: reduce-scatter within each intra group, all-reduce of
// each shard across the K groups, one rounding to bf16 at the shard's
// owners; stage 0 then all-gathers the reduced shards within the intra
// group (with K = 1 the whole is one ring all-reduce). Stages 2 and 3 then
// flush everything but the rank's own gradient shard (NaN).
func (s *sim) reduceGrads() {
	cfg := &s.cfg
	first := s.step == 1
	for _, b := range s.lay.ReduceOrder() {
		bk := s.lay.Buckets[b]
		var qgz func()
		if cfg.qgzActive() {
			qgz = s.qgzBucket(b) // reads the ranks' gradients before the reduction overwrites the owners'
		}
		s.reduceBucket(b)
		if qgz != nil {
			qgz()
		}
		if first {
			bytes := 2 * bk.Size
			if cfg.Stage == 0 && cfg.K == 1 {
				s.ledger.add("backward", "all-reduce", "world", cfg.N, 2*bytes)
			} else {
				s.ledger.add("backward", "reduce-scatter", "intra", s.S, bytes)
				s.ledger.add("backward", "all-reduce", "inter", cfg.K, 2*bytes/int64(s.S))
				if cfg.Stage == 0 {
					s.ledger.add("backward", "all-gather", "intra", s.S, bytes)
				}
			}
		}
		if cfg.Stage == 0 {
			for _, rk := range s.ranks {
				for p := range s.S {
					if p == rk.pos {
						continue
					}
					lo, hi := s.lay.Shard(b, p)
					copy(rk.grad[lo:hi], s.ranks[rk.group*s.S+p].grad[lo:hi])
				}
			}
		}
	}
	if cfg.Stage >= 2 {
		for _, rk := range s.ranks {
			for b, bk := range s.lay.Buckets {
				lo, hi := s.lay.Shard(b, rk.pos)
				for e := bk.Start; e < bk.Start+bk.Size; e++ {
					if e < lo || e >= hi {
						rk.grad[e] = bf16NaN
					}
				}
			}
		}
	}
}

// reduceBucket reduces bucket b into the owners' grad shards.
func (s *sim) reduceBucket(b int) {
	cfg := &s.cfg
	S, K := s.S, cfg.K
	for p := range S {
		lo, hi := s.lay.Shard(b, p)
		n := int(hi - lo)
		if cfg.Mode == Exact {
			// Intra reduce-scatter: group g's owner of shard p gets the
			// exact sum over its group; then the inter all-reduce sums the
			// K partials. Exact fixed-point sums (wideSum): order and
			// grouping do not matter.
			part := make([][]wideSum, K)
			for g := range K {
				part[g] = make([]wideSum, n)
				for i := range S {
					q := s.ranks[g*S+(p+1+i)%S]
					for j := range n {
						part[g][j].addFloat32(q.grad[lo+int64(j)].Float32())
					}
				}
			}
			for j := range n {
				var tot wideSum
				for g := range K {
					tot.add(&part[g][j])
				}
				r := BF16FromFloat64(tot.float64())
				for g := range K {
					s.ranks[g*S+p].grad[lo+int64(j)] = r
				}
			}
			continue
		}
		// Native: fp32 (NativeBF16: bf16) ring reduce-scatter within each group (shard p
		// starts at position p+1 and ends at its owner), rounding to fp32
		// at every hop, then a ring all-reduce across the K groups on
		// K sub-chunks (sub-chunk c starts at group c+1), then bf16.
		hop := func(x float32) float32 { return x }
		if cfg.Mode == NativeBF16 {
			hop = RoundBF16
		}
		part := make([][]float32, K)
		for g := range K {
			part[g] = make([]float32, n)
			for i := range S {
				q := s.ranks[g*S+(p+1+i)%S]
				for j := range n {
					part[g][j] = hop(part[g][j] + q.grad[lo+int64(j)].Float32())
				}
			}
		}
		for c := range K {
			clo, chi := c*n/K, (c+1)*n/K
			for j := clo; j < chi; j++ {
				var acc float32
				for i := range K {
					acc = hop(acc + part[(c+1+i)%K][j])
				}
				r := ToBF16(acc)
				for g := range K {
					s.ranks[g*S+p].grad[lo+int64(j)] = r
				}
			}
		}
	}
}
