package memory

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// seed002Params is seed 002's tiny transformer as five units (LN1 8,
// attention 64, LN2 8, FFN 148, output 32 = 260 params).
func seed002Params() []Param {
	return []Param{
		{"ln1", 8, 0}, {"wq", 16, 1}, {"wk", 16, 1}, {"wv", 16, 1}, {"wo", 16, 1},
		{"ln2", 8, 2}, {"w1", 64, 3}, {"b1", 16, 3}, {"w2", 64, 3}, {"b2", 4, 3},
		{"wvocab", 32, 4},
	}
}

func TestLayoutToy(t *testing.T) {
	for _, tc := range []struct {
		name        string
		spec        LayoutSpec
		size, shard int64
		buckets     []Bucket
	}{
		{
			// Seed 002: 260 params split at index 130 between 2 GPUs.
			name: "seed002-one-bucket", spec: LayoutSpec{Params: seed002Params(), Shards: 2},
			size: 260, shard: 130, buckets: []Bucket{{0, 260, 260, 0, 10}},
		},
		{
			// Seed 000's hidden_dim=13 padding test: ceil(total/N)·N.
			name: "seed000-h13-n4", spec: LayoutSpec{Params: mlpParams(13, 1), Shards: 4},
			size: 1420, shard: 355, buckets: []Bucket{{0, 1420, 13*52 + 52 + 52*13 + 13, 0, 3}},
		},
		{
			name: "seed002-buckets-of-100", spec: LayoutSpec{Params: seed002Params(), Shards: 3, BucketElems: 100},
			size: 102 + 102 + 60, shard: 88,
			buckets: []Bucket{{0, 102, 100, 0, 6}, {102, 102, 100, 6, 8}, {204, 60, 60, 8, 10}},
		},
		{
			name: "seed002-per-unit", spec: LayoutSpec{Params: seed002Params(), Shards: 2, PerUnit: true, BucketElems: 7},
			size: 260, shard: 130,
			buckets: []Bucket{{0, 8, 8, 0, 0}, {8, 64, 64, 1, 4}, {72, 8, 8, 5, 5}, {80, 148, 148, 6, 9}, {228, 32, 32, 10, 10}},
		},
		{
			name: "seed002-per-unit-n3", spec: LayoutSpec{Params: seed002Params(), Shards: 3, PerUnit: true},
			size: 9 + 66 + 9 + 150 + 33, shard: 89,
			buckets: []Bucket{{0, 9, 8, 0, 0}, {9, 66, 64, 1, 4}, {75, 9, 8, 5, 5}, {84, 150, 148, 6, 9}, {234, 33, 32, 10, 10}},
		},
	} {
		l, err := NewLayout(tc.spec)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if l.Size != tc.size || l.ShardElems() != tc.shard || !slices.Equal(l.Buckets, tc.buckets) {
			t.Errorf("%s: size %d shard %d buckets %v, want %d %d %v", tc.name, l.Size, l.ShardElems(), l.Buckets, tc.size, tc.shard, tc.buckets)
		}
		checkLayout(t, tc.name, l)
	}
}

func TestLayoutToySeed002Split(t *testing.T) {
	// Seed 002: "W₁ partial (50 params, idx 80-129)", "W₁ rest (14 params,
	// idx 130-143)": GPU-0 owns 0–129, GPU-1 130–259.
	l, err := NewLayout(LayoutSpec{Params: seed002Params(), Shards: 2})
	if err != nil {
		t.Fatal(err)
	}
	if s, e := l.Shard(0, 0); s != 0 || e != 130 {
		t.Errorf("rank 0 shard [%d,%d), want [0,130)", s, e)
	}
	if s, e := l.Shard(0, 1); s != 130 || e != 260 {
		t.Errorf("rank 1 shard [%d,%d), want [130,260)", s, e)
	}
	w1 := l.Params[6]
	if w1.Name != "w1" || w1.Start != 80 || w1.Start+w1.Numel != 144 {
		t.Errorf("w1 at [%d,%d), want [80,144)", w1.Start, w1.Start+w1.Numel)
	}
}

func TestLayoutToySplitAcrossPadding(t *testing.T) {
	// One 10-element param, buckets of 3 real elements, 2 shards: pieces
	// 3,3,3,1 each padded to an even size.
	l, err := NewLayout(LayoutSpec{Params: []Param{{"w", 10, 0}}, Shards: 2, BucketElems: 3})
	if err != nil {
		t.Fatal(err)
	}
	want := []Segment{{0, 0, 0, 3}, {1, 4, 3, 3}, {2, 8, 6, 3}, {3, 12, 9, 1}}
	if got := l.Segments(0); !slices.Equal(got, want) {
		t.Errorf("segments %v, want %v", got, want)
	}
	if l.Size != 14 || l.PaddingElems() != 4 {
		t.Errorf("size %d padding %d, want 14 4", l.Size, l.PaddingElems())
	}
	if got, want := l.ReduceOrder(), []int{3, 2, 1, 0}; !slices.Equal(got, want) {
		t.Errorf("reduce order %v, want %v", got, want)
	}
	checkLayout(t, "split", l)
}

func TestLayoutMegatron(t *testing.T) {
	// Hand-derived from _ParamAndGradBuffer.__init__: reverse order, param
	// starts padded to 64, bucket ends to lcm(shards,128).
	params := []Param{{"a", 100, 0}, {"b", 300, 1}, {"c", 50, 2}, {"d", 1000, 3}}
	for _, tc := range []struct {
		name    string
		spec    LayoutSpec
		starts  []int64
		buckets []Bucket
		size    int64
	}{
		{
			// d@0..1000, c@1024..1074, b@1088..1388, a@1408..1508, end pad 128 → 1536.
			name: "one-bucket", spec: LayoutSpec{Params: params, Shards: 4, Padding: PadMegatron},
			starts:  []int64{1408, 1088, 1024, 0},
			buckets: []Bucket{{0, 1536, 1450, 0, 3}}, size: 1536,
		},
		{
			// Bucket size 1000: d fills bucket 0 (1000 ≥ 1000) → padded to 1024;
			// c@1024, b@1088..1388 (span 364), a@1408..1508 → end 1536.
			name: "bucket-1000", spec: LayoutSpec{Params: params, Shards: 4, BucketElems: 1000, Padding: PadMegatron},
			starts:  []int64{1408, 1088, 1024, 0},
			buckets: []Bucket{{0, 1024, 1000, 3, 3}, {1024, 512, 450, 0, 2}}, size: 1536,
		},
		{
			// Shards 3: divisor lcm(3,128)=384. d@0..1000 → bucket 0 = 1152;
			// c@1152..1202, b@1216..1516 (span 364 < 400), a@1536..1636 (span 484) → 1920.
			name: "bucket-400-n3", spec: LayoutSpec{Params: params, Shards: 3, BucketElems: 400, Padding: PadMegatron},
			starts:  []int64{1536, 1216, 1152, 0},
			buckets: []Bucket{{0, 1152, 1000, 3, 3}, {1152, 768, 450, 0, 2}}, size: 1920,
		},
		{
			// Without the distributed optimizer Megatron buckets the same way
			// but pads nothing: d@0..1000 closes bucket 0; c, b, a follow.
			name: "no-align", spec: LayoutSpec{Params: params, Shards: 1, BucketElems: 1000, Padding: PadMegatron, NoAlign: true},
			starts:  []int64{1350, 1050, 1000, 0},
			buckets: []Bucket{{0, 1000, 1000, 3, 3}, {1000, 450, 450, 0, 2}}, size: 1450,
		},
		{
			name: "per-unit", spec: LayoutSpec{Params: params, Shards: 2, PerUnit: true, Padding: PadMegatron},
			starts:  []int64{1536, 1152, 1024, 0},
			buckets: []Bucket{{0, 1024, 1000, 3, 3}, {1024, 128, 50, 2, 2}, {1152, 384, 300, 1, 1}, {1536, 128, 100, 0, 0}}, size: 1664,
		},
	} {
		l, err := NewLayout(tc.spec)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var starts []int64
		for _, p := range l.Params {
			starts = append(starts, p.Start)
		}
		if !slices.Equal(starts, tc.starts) || !slices.Equal(l.Buckets, tc.buckets) || l.Size != tc.size {
			t.Errorf("%s: starts %v buckets %v size %d, want %v %v %d", tc.name, starts, l.Buckets, l.Size, tc.starts, tc.buckets, tc.size)
		}
		order := l.ReduceOrder()
		for i, b := range order {
			if b != i {
				t.Errorf("%s: megatron reduce order %v, want increasing", tc.name, order)
				break
			}
		}
		checkLayout(t, tc.name, l)
	}
}

func TestLayoutErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec LayoutSpec
	}{
		{"no-params", LayoutSpec{Shards: 1}},
		{"zero-shards", LayoutSpec{Params: seed002Params()}},
		{"negative-bucket", LayoutSpec{Params: seed002Params(), Shards: 1, BucketElems: -1}},
		{"empty-param", LayoutSpec{Params: []Param{{"x", 0, 0}}, Shards: 1}},
		{"unit-not-contiguous", LayoutSpec{Params: []Param{{"x", 1, 0}, {"y", 1, 1}, {"z", 1, 0}}, Shards: 1}},
		{"too-many-buckets", LayoutSpec{Params: []Param{{"x", 7e9, 0}}, Shards: 1, BucketElems: 1}},
		{"overflow", LayoutSpec{Params: []Param{{"x", 1 << 62, 0}, {"y", 1 << 62, 0}}, Shards: 1}},
		{"overflow-padding", LayoutSpec{Params: []Param{{"x", 1<<63 - 1, 0}}, Shards: 2}},
		{"bad-padding", LayoutSpec{Params: seed002Params(), Shards: 1, Padding: 7}},
	} {
		if _, err := NewLayout(tc.spec); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	for s, want := range map[scenarios.Padding]Padding{scenarios.PaddingToy: PadToy, scenarios.PaddingMegatron: PadMegatron} {
		if got := PaddingOf(s); got != want || got.String() != string(s) {
			t.Errorf("PaddingOf(%q) = %v; want %v", s, got, want)
		}
	}
}

// checkLayout verifies the layout invariants: buckets tile the buffer in
// order with sizes divisible by Shards; every real element belongs to
// exactly one rank's shard of exactly one bucket; shards are equal;
// parameter segments never overlap and never cover padding; Numel adds up.
func checkLayout(t *testing.T, name string, l *Layout) {
	t.Helper()
	shards := int64(l.Spec.Shards)
	if l.Size%shards != 0 {
		t.Errorf("%s: size %d not a multiple of %d shards", name, l.Size, shards)
	}
	var next, numel int64
	for i, b := range l.Buckets {
		if b.Start != next || b.Size%shards != 0 || b.Size < b.Numel || b.Numel <= 0 {
			t.Errorf("%s: bucket %d %+v bad (expected start %d)", name, i, b, next)
		}
		if l.Spec.Padding == PadMegatron && !l.Spec.NoAlign && b.Size%128 != 0 {
			t.Errorf("%s: megatron bucket %d size %d not a multiple of 128", name, i, b.Size)
		}
		next += b.Size
		numel += b.Numel
		var prevEnd int64 = b.Start
		for r := range l.Spec.Shards {
			s, e := l.Shard(i, r)
			if s != prevEnd || e-s != b.Size/shards {
				t.Errorf("%s: bucket %d rank %d shard [%d,%d) not contiguous/equal", name, i, r, s, e)
			}
			prevEnd = e
		}
		if prevEnd != b.Start+b.Size {
			t.Errorf("%s: bucket %d shards end at %d, want %d", name, i, prevEnd, b.Start+b.Size)
		}
	}
	if next != l.Size || numel != l.Numel {
		t.Errorf("%s: buckets cover %d elements with %d real; want %d, %d", name, next, numel, l.Size, l.Numel)
	}
	// Mark every element owned by a parameter.
	owner := make([]int, l.Size)
	for i := range owner {
		owner[i] = -1
	}
	perBucket := make([]int64, len(l.Buckets))
	for i, p := range l.Params {
		var total int64
		for _, sg := range l.Segments(i) {
			b := l.Buckets[sg.Bucket]
			if sg.Start < b.Start || sg.Start+sg.Numel > b.Start+b.Size || sg.Offset != total {
				t.Errorf("%s: param %d segment %+v outside bucket %+v", name, i, sg, b)
			}
			if i < b.FirstParam || i > b.LastParam {
				t.Errorf("%s: param %d in bucket %d with params [%d,%d]", name, i, sg.Bucket, b.FirstParam, b.LastParam)
			}
			perBucket[sg.Bucket] += sg.Numel
			for x := sg.Start; x < sg.Start+sg.Numel; x++ {
				if owner[x] != -1 {
					t.Fatalf("%s: element %d in params %d and %d", name, x, owner[x], i)
				}
				owner[x] = i
			}
			total += sg.Numel
		}
		if total != p.Numel {
			t.Errorf("%s: param %d segments hold %d of %d elements", name, i, total, p.Numel)
		}
		if l.Spec.Padding == PadMegatron && !l.Spec.NoAlign && p.Start%64 != 0 {
			t.Errorf("%s: megatron param %d start %d not 64-aligned", name, i, p.Start)
		}
	}
	for i, b := range l.Buckets {
		if perBucket[i] != b.Numel {
			t.Errorf("%s: bucket %d holds %d param elements, Numel %d", name, i, perBucket[i], b.Numel)
		}
	}
	var pad int64
	for _, o := range owner {
		if o == -1 {
			pad++
		}
	}
	if pad != l.PaddingElems() {
		t.Errorf("%s: %d unowned elements, PaddingElems %d", name, pad, l.PaddingElems())
	}
}

// mlpParams is seed 000's ToyModel: layers × (fc1 W, fc1 b, fc2 W, fc2 b).
func mlpParams(h int64, layers int) []Param {
	var ps []Param
	for i := range layers {
		ps = append(ps,
			Param{fmt.Sprintf("layers.%d.fc1.weight", i), 4 * h * h, i},
			Param{fmt.Sprintf("layers.%d.fc1.bias", i), 4 * h, i},
			Param{fmt.Sprintf("layers.%d.fc2.weight", i), 4 * h * h, i},
			Param{fmt.Sprintf("layers.%d.fc2.bias", i), h, i})
	}
	return ps
}

// TestLayoutProperties checks the invariants over random layouts.
func TestLayoutProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for c := range 400 {
		var ps []Param
		unit := 0
		for i := range 1 + rng.IntN(12) {
			if i > 0 && rng.IntN(3) == 0 {
				unit++
			}
			ps = append(ps, Param{fmt.Sprintf("p%d", i), 1 + rng.Int64N(300), unit})
		}
		spec := LayoutSpec{
			Params:  ps,
			Shards:  1 + rng.IntN(9),
			PerUnit: rng.IntN(4) == 0,
			Padding: Padding(rng.IntN(2)),
			NoAlign: rng.IntN(4) == 0,
		}
		if rng.IntN(3) > 0 {
			spec.BucketElems = 1 + rng.Int64N(400)
		}
		l, err := NewLayout(spec)
		if err != nil {
			t.Fatalf("case %d %+v: %v", c, spec, err)
		}
		checkLayout(t, fmt.Sprintf("case %d", c), l)
		if spec.Padding == PadToy && !spec.PerUnit && spec.BucketElems > 0 {
			for i, b := range l.Buckets[:len(l.Buckets)-1] {
				if b.Numel != spec.BucketElems {
					t.Errorf("case %d: toy bucket %d holds %d, want %d", c, i, b.Numel, spec.BucketElems)
				}
			}
		}
		if spec.PerUnit && len(l.Buckets) != unit+1 {
			t.Errorf("case %d: per-unit layout has %d buckets for %d units", c, len(l.Buckets), unit+1)
		}
		if spec.PerUnit {
			for u := 0; u <= unit; u++ {
				b, ok := l.UnitBucket(u)
				// Toy buckets are in forward order, Megatron's backward.
				want := u
				if spec.Padding == PadMegatron {
					want = unit - u
				}
				if !ok || b != want {
					t.Errorf("case %d: unit %d in bucket %d %v, want %d", c, u, b, ok, want)
				}
			}
			if _, ok := l.UnitBucket(unit + 1); ok {
				t.Errorf("case %d: unit %d has no params but UnitBucket says ok", c, unit+1)
			}
		}
		if spec.Padding == PadMegatron {
			for i := range l.Params {
				if len(l.Segments(i)) != 1 {
					t.Errorf("case %d: megatron param %d split", c, i)
				}
			}
		}
	}
}

func TestRankNumel(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for c := range 200 {
		var ps []Param
		for i := range 1 + rng.IntN(8) {
			ps = append(ps, Param{fmt.Sprintf("p%d", i), 1 + rng.Int64N(500), i / 2})
		}
		spec := LayoutSpec{Params: ps, Shards: 1 + rng.IntN(7), BucketElems: rng.Int64N(600), Padding: Padding(rng.IntN(2)), PerUnit: rng.IntN(3) == 0}
		l, err := NewLayout(spec)
		if err != nil {
			t.Fatal(err)
		}
		// Naive reference: walk every element of every segment.
		owned := make([]int64, spec.Shards)
		for i := range l.Params {
			for _, sg := range l.Segments(i) {
				b := l.Buckets[sg.Bucket]
				per := b.Size / int64(spec.Shards)
				for x := sg.Start; x < sg.Start+sg.Numel; x++ {
					owned[(x-b.Start)/per]++
				}
			}
		}
		var total int64
		for r := range spec.Shards {
			if got := l.RankNumel(r); got != owned[r] {
				t.Errorf("case %d rank %d: RankNumel %d, naive %d", c, r, got, owned[r])
			}
			total += owned[r]
		}
		if total != l.Numel {
			t.Errorf("case %d: ranks own %d of %d elements", c, total, l.Numel)
		}
	}
}
