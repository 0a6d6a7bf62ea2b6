package sweep

import (
	"fmt"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// TestNodeStep: the node counts fit searches at a K are the multiples of
// the least n for which n·gpus_per_node GPUs hold whole shard groups and
// whole cp groups: n·gpn divisible by lcm(cp, K·ep) (nodeStep). By hand,
// with 8 GPUs a node unless stated:
//   - K=3: 24 GPUs, 3 nodes (8 and 16 do not divide by 3);
//   - cp 4, K=4: lcm 4 divides 8, 1 node (4·4 = 16 would say 2);
//   - cp 2, K=16: lcm 16, 2 nodes;
//   - cp 3, K=2: lcm 6, 24 GPUs, 3 nodes;
//   - K=2, ep 4 on 4-GPU nodes: K·ep 8, 2 nodes;
//   - cp 6, K=4 on 12-GPU nodes: lcm 12, 1 node (6·4 = 24 would say 2).
func TestNodeStep(t *testing.T) {
	for _, c := range []struct {
		cp, k, ep, gpn int
		want           int
	}{
		{1, 1, 1, 8, 1},
		{1, 3, 1, 8, 3},
		{4, 4, 1, 8, 1},
		{2, 16, 1, 8, 2},
		{3, 2, 1, 8, 3},
		{1, 2, 4, 4, 2},
		{6, 4, 1, 12, 1},
	} {
		t.Run(fmt.Sprintf("cp%d K%d ep%d gpn%d", c.cp, c.k, c.ep, c.gpn), func(t *testing.T) {
			s := &scenarios.Scenario{Cluster: scenarios.Cluster{GPUsPerNode: c.gpn}, Parallelism: scenarios.Parallelism{CP: c.cp, EP: c.ep}}
			if got := nodeStep(s, c.k); got != c.want {
				t.Errorf("nodeStep = %d, want %d", got, c.want)
			}
		})
	}
}

// TestRoundScale: a bare parameter count scaled from p0 to x scales its
// largest layer ll in proportion, to the nearest whole parameter (halves
// away from zero) and at least 1: 10·3/4 = 7.5 → 8, 10·1/4 = 2.5 → 3,
// 7·2/3 = 4.67 → 5, 1000/3 = 333.3 → 333, 1/1000 → 1.
func TestRoundScale(t *testing.T) {
	for _, c := range []struct{ ll, x, p0, want int64 }{
		{10, 3, 4, 8},
		{10, 1, 4, 3},
		{7, 2, 3, 5},
		{1000, 1, 3, 333},
		{1, 1, 1000, 1},
	} {
		if got := roundScale(c.ll, c.x, c.p0); got != c.want {
			t.Errorf("roundScale(%d, %d, %d) = %d, want %d", c.ll, c.x, c.p0, got, c.want)
		}
	}
}
