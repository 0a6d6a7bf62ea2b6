package zero

import (
	"slices"
	"testing"
)

// TestGroupLayoutsInverse holds the three encodings of each group kind's
// layout to each other: for every rank r, its instance i = instance(g, r)
// lies in [0, groupCount), the members of instance i contain r and every
// one of them maps back to i, and the distinct instances number
// groupCount — on 16 ranks of 4-GPU nodes with ep 8 (a deduplicating
// dispatcher's ep-node of 4 and ep-rail of 2), hpZ 4, K 1 and 2.
func TestGroupLayoutsInverse(t *testing.T) {
	for _, k := range []int{1, 2} {
		sc := &Schedule{N: 16, K: k, EP: 8, HPZ: 4, Local: 4, EPNode: 4}
		e := &executor{sc: sc}
		for g := GroupKind(0); g < numGroupKinds; g++ {
			t.Run(g.String()+" K "+itoa(k), func(t *testing.T) {
				seen := map[int]bool{}
				count := groupCount(sc, g)
				for r := range sc.N {
					i := e.instance(g, r)
					if i < 0 || i >= count {
						t.Fatalf("rank %d: instance %d outside [0, %d)", r, i, count)
					}
					seen[i] = true
					m := sc.groupMembers(g, i)
					if !slices.Contains(m, r) {
						t.Errorf("rank %d: instance %d's members %v do not hold it", r, i, m)
					}
					for _, x := range m {
						if j := e.instance(g, x); j != i {
							t.Errorf("rank %d is in instance %d's members %v but its instance is %d", x, i, m, j)
						}
					}
				}
				if len(seen) != count {
					t.Errorf("%d distinct instances, groupCount %d", len(seen), count)
				}
			})
		}
	}
}
