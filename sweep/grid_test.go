package sweep

import (
	"slices"
	"strings"
	"testing"
)

func TestParseGrid(t *testing.T) {
	for _, tc := range []struct {
		in   string
		key  string
		vals []string
		err  string
	}{
		{"parallelism.k=1,4", "parallelism.k", []string{"1", "4"}, ""},
		{" communication.bucket_size = 25MB, 100MB ", "communication.bucket_size", []string{"25MB", "100MB"}, ""},
		{"cluster.placement=[cp, dp],[dp, cp]", "cluster.placement", []string{"[cp, dp]", "[dp, cp]"}, ""},
		{`name="a,b",c`, "name", []string{`"a,b"`, "c"}, ""},
		{"parallelism.k", "", nil, "missing \"=\""},
		{"=1,2", "", nil, "bad key path"},
		{"parallelism.k=", "", nil, "no values"},
		{"parallelism.k=1,,2", "", nil, "empty value"},
		{"parallelism.k=[1,2", "", nil, "unbalanced"},
		{"parallelism.k=1,1", "", nil, "grid parallelism.k: 1 is given twice"},
		{"parallelism.k=1, 2,1", "", nil, "grid parallelism.k: 1 is given twice"},
	} {
		g, err := ParseGrid(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want one containing %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || g.Key != tc.key || !slices.Equal(g.Values, tc.vals) {
			t.Errorf("%q: got %+v, %v; want %s=%q", tc.in, g, err, tc.key, tc.vals)
		}
	}
}

// TestSpaceOrder: grids in flag order, values in given order, last grid
// fastest (index = Σ value position · product of the later grids' sizes).
func TestSpaceOrder(t *testing.T) {
	sp, err := NewSpace([]Grid{{"a", []string{"a0", "a1"}}, {"b", []string{"b0", "b1", "b2"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"a0", "b0"}, {"a0", "b1"}, {"a0", "b2"}, {"a1", "b0"}, {"a1", "b1"}, {"a1", "b2"}}
	if sp.Len() != len(want) {
		t.Fatalf("Len = %d, want %d", sp.Len(), len(want))
	}
	for i, w := range want {
		p := sp.Point(i)
		if p.Index != i || !slices.Equal(p.Values, w) {
			t.Errorf("point %d = %v, want %v", i, p.Values, w)
		}
	}
	if got := sp.Point(4).Sets(sp); !slices.Equal(got, []string{"a=a1", "b=b1"}) {
		t.Errorf("Sets(4) = %q", got)
	}
	if _, err := NewSpace([]Grid{{"a", []string{"1"}}, {"a", []string{"2"}}}); err == nil {
		t.Error("duplicate key accepted")
	}
	if _, err := NewSpace(nil); err == nil {
		t.Error("no grids accepted")
	}
	big := Grid{"x", make([]string, 1<<16)}
	if _, err := NewSpace([]Grid{big, {"y", big.Values}, {"z", big.Values}}); err == nil {
		t.Error("2^48 points accepted")
	}
}

func TestShard(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Shard
		err  bool
	}{
		{"0/3", Shard{0, 3}, false}, {"2/3", Shard{2, 3}, false}, {"0/1", Shard{0, 1}, false},
		{"3/3", Shard{}, true}, {"-1/3", Shard{}, true}, {"1/0", Shard{}, true}, {"1", Shard{}, true}, {"a/b", Shard{}, true},
	} {
		sh, err := ParseShard(tc.in)
		if (err != nil) != tc.err || (!tc.err && sh != tc.want) {
			t.Errorf("%q: %v, %v; want %v (error %v)", tc.in, sh, err, tc.want, tc.err)
		}
	}
	// The shards of 10 points partition them.
	var all []int
	for i := 0; i < 3; i++ {
		all = slices.AppendSeq(all, Shard{i, 3}.Indices(10, nil))
		if n := (Shard{i, 3}).Count(10); n != 4-min(i, 1) {
			t.Errorf("shard %d/3 of 10 counts %d points", i, n)
		}
	}
	slices.Sort(all)
	if !slices.Equal(all, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}) {
		t.Errorf("shards 0-2/3 of 10 = %v", all)
	}
	if got := slices.Collect((Shard{1, 3}).Indices(10, func(i int) bool { return i == 4 })); !slices.Equal(got, []int{1, 7}) {
		t.Errorf("shard 1/3 without 4 = %v, want [1 7]", got)
	}
	if got := Ranges([]int{0, 1, 2, 5, 7, 8}); got != "0-2, 5, 7-8" {
		t.Errorf("Ranges = %q", got)
	}
}
