package sweep

import (
	"slices"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestSeedSlowLink checks seed 000's slow-link accounting on its N=8
// example (dp 4 across nodes, cp 2 in a node) for every K, with S = 2P
// bytes: K=1 counts RS S + AG S = 2S; K=2 (intra groups of 4 span two
// nodes) adds the inter all-reduce 2·1/2·S/4 = S/4 → 2.25S; K=4 (intra
// groups inside a node) counts only 2·3/4·S/2 = 0.75S (seed: 6P/8); K=8
// (no intra group) 2·7/8·S = 1.75S.
func TestSeedSlowLink(t *testing.T) {
	data, _ := scenarios.Example("seed000-k4")
	src := Source{File: "seed000-k4.yaml", Data: data}
	const S = 2 * 1_342_382_080
	for _, tc := range []struct {
		k    string
		want int64
	}{{"1", 2 * S}, {"2", 9 * S / 4}, {"4", 3 * S / 4}, {"8", 7 * S / 4}} {
		for _, algo := range Algorithms {
			o, err := RunVariant(Variant{Label: "k=" + tc.k, Src: src, Sets: []string{"parallelism.k=" + tc.k}}, "communication.algorithm="+algo)
			if err != nil {
				t.Fatal(err)
			}
			if BufferBytes(o.Scenario) != S {
				t.Fatalf("S = %d, want %d", BufferBytes(o.Scenario), S)
			}
			if got := SeedSlowLink(o.Result); got != tc.want {
				t.Errorf("K=%s %s: seed slow-link %d B, want %d", tc.k, algo, got, tc.want)
			}
		}
	}
}

func TestDivisorsLabel(t *testing.T) {
	if got := Divisors(12); !slices.Equal(got, []int{1, 2, 3, 4, 6, 12}) {
		t.Errorf("Divisors(12) = %v", got)
	}
	for in, want := range map[string]string{"a/b/c.yaml": "c", `x\y.yml`: "y", "seed000-k4": "seed000-k4"} {
		if got := Label(in); got != want {
			t.Errorf("Label(%q) = %q, want %q", in, got, want)
		}
	}
}
