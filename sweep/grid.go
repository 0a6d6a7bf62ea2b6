package sweep

import (
	"fmt"
	"iter"
	"math"
	"strconv"
	"strings"
)

// Grid is one swept key path and its values, each applied as a
// "--set key=value" override.
type Grid struct {
	Key    string
	Values []string
}

// ParseGrid parses "key.path=v1,v2,…". Commas inside brackets, braces or
// quotes do not split values, so a flow list such as [dp, cp] is one value.
func ParseGrid(s string) (Grid, error) {
	eq := strings.IndexByte(s, '=')
	if eq < 0 {
		return Grid{}, fmt.Errorf("grid %q: missing \"=\" (use key.path=v1,v2, e.g. parallelism.k=1,2,4)", s)
	}
	key := strings.TrimSpace(s[:eq])
	if key == "" || strings.ContainsAny(key, " \t,=") {
		return Grid{}, fmt.Errorf("grid %q: bad key path %q (use a dotted path such as parallelism.k)", s, key)
	}
	vals, err := splitValues(s[eq+1:])
	if err != nil {
		return Grid{}, fmt.Errorf("grid %q: %w", s, err)
	}
	if len(vals) == 0 {
		return Grid{}, fmt.Errorf("grid %q: no values (use %s=v1,v2)", s, key)
	}
	// A value given twice would replay the same point twice (and compare
	// it with itself).
	seen := make(map[string]bool, len(vals))
	for _, v := range vals {
		if seen[v] {
			return Grid{}, fmt.Errorf("grid %s: %s is given twice (give each value once)", key, v)
		}
		seen[v] = true
	}
	return Grid{Key: key, Values: vals}, nil
}

// splitValues splits a comma list at top level; empty values and line breaks
// are errors.
func splitValues(s string) ([]string, error) {
	var out []string
	depth, quote, start := 0, rune(0), 0
	add := func(end int) error {
		v := strings.TrimSpace(s[start:end])
		if v == "" {
			return fmt.Errorf("empty value at position %d (remove the extra comma)", start+1)
		}
		out = append(out, v)
		return nil
	}
	for i, r := range s {
		switch {
		case r == '\n' || r == '\r':
			return nil, fmt.Errorf("a value contains a line break")
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '"' || r == '\'':
			quote = r
		case r == '[' || r == '{':
			depth++
		case r == ']' || r == '}':
			depth--
		case r == ',' && depth == 0:
			if err := add(i); err != nil {
				return nil, err
			}
			start = i + 1
		}
	}
	if quote != 0 || depth != 0 {
		return nil, fmt.Errorf("unbalanced quotes or brackets")
	}
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	if err := add(len(s)); err != nil {
		return nil, err
	}
	return out, nil
}

// Space is the cartesian product of grids.
type Space struct {
	Grids []Grid
	size  int
}

// MaxPoints bounds a sweep's size so every index fits an int on any platform.
const MaxPoints = math.MaxInt32

// NewSpace checks the grids (non-empty, distinct keys) and returns their
// product.
func NewSpace(grids []Grid) (*Space, error) {
	if len(grids) == 0 {
		return nil, fmt.Errorf("no --grid given (use --grid key.path=v1,v2)")
	}
	seen := map[string]bool{}
	size := 1
	for _, g := range grids {
		if seen[g.Key] {
			return nil, fmt.Errorf("grid %s is given twice (list all its values in one --grid)", g.Key)
		}
		seen[g.Key] = true
		if len(g.Values) == 0 {
			return nil, fmt.Errorf("grid %s has no values", g.Key)
		}
		if size > MaxPoints/len(g.Values) {
			return nil, fmt.Errorf("the grids make more than %d points (split the sweep)", MaxPoints)
		}
		size *= len(g.Values)
	}
	return &Space{Grids: grids, size: size}, nil
}

// Len is the number of points.
func (s *Space) Len() int { return s.size }

// Keys returns the grid key paths in flag order.
func (s *Space) Keys() []string {
	k := make([]string, len(s.Grids))
	for i, g := range s.Grids {
		k[i] = g.Key
	}
	return k
}

// Point is one combination of grid values.
type Point struct {
	Index  int
	Values []string // one per grid, in grid order
}

// Sets returns the point's "key=value" overrides in grid order.
func (p Point) Sets(s *Space) []string {
	out := make([]string, len(p.Values))
	for i, v := range p.Values {
		out[i] = s.Grids[i].Key + "=" + v
	}
	return out
}

// Point returns point i (0 ≤ i < Len): mixed radix, the last grid fastest.
// It panics if i is out of range.
func (s *Space) Point(i int) Point {
	if i < 0 || i >= s.size {
		panic("sweep: point index out of range")
	}
	p := Point{Index: i, Values: make([]string, len(s.Grids))}
	for g := len(s.Grids) - 1; g >= 0; g-- {
		n := len(s.Grids[g].Values)
		p.Values[g] = s.Grids[g].Values[i%n]
		i /= n
	}
	return p
}

// Shard selects every N-th point starting at I.
type Shard struct{ I, N int }

// All is the shard that holds every point.
var All = Shard{0, 1}

// ParseShard parses "i/n" with 0 ≤ i < n.
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Shard{}, fmt.Errorf("shard %q: use i/n, e.g. 0/4", s)
	}
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	if err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("shard %q: i and n must be integers (use i/n, e.g. 0/4)", s)
	}
	if n < 1 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("shard %q: need 0 ≤ i < n (use 0/%d … %d/%d)", s, max(n, 1), max(n, 1)-1, max(n, 1))
	}
	return Shard{I: i, N: n}, nil
}

func (sh Shard) String() string { return fmt.Sprintf("%d/%d", sh.I, sh.N) }

// Has reports whether point index i belongs to the shard.
func (sh Shard) Has(i int) bool { return sh.N <= 1 || i%sh.N == sh.I }

// Indices yields the shard's points of a space of n points in ascending
// order, leaving out those for which done reports true (done may be nil).
// They are generated one at a time: a sweep of 2^31 points holds none of
// them in memory.
func (sh Shard) Indices(n int, done func(int) bool) iter.Seq[int] {
	return func(yield func(int) bool) {
		step := max(sh.N, 1)
		for i := sh.I; i < n; i += step {
			if (done == nil || !done(i)) && !yield(i) {
				return
			}
			if step >= n-i {
				return // the next index is past n; i+step could overflow (--shard 39/9223372036854775807)
			}
		}
	}
}

// Count is the number of the shard's points in a space of n points.
func (sh Shard) Count(n int) int {
	step := max(sh.N, 1)
	if sh.I >= n {
		return 0
	}
	return (n-sh.I-1)/step + 1
}
