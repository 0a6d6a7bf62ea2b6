package numerics_test

import (
	"fmt"

	"github.com/zerosim/zerosim/numerics"
)

// Verify one configuration: seed 002's tiny transformer on 8 ranks with
// ZeRO-3 and K = 2, compared bit for bit with unsharded training.
func ExampleVerify() {
	r, err := numerics.Verify(numerics.Config{Model: numerics.TinyTransformer, N: 8, K: 2, Stage: 3, Steps: 5, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Pass, r.Mismatches, r.Numel, r.Size, r.ShardElems)
	for _, c := range r.CollectiveBytes {
		n, d := c.PerRank()
		fmt.Printf("%s %s %s: %d B, %d/%d per rank\n", c.Phase, c.Op, c.Group, c.Bytes, n, d)
	}
	// Every unit (8, 64, 8, 148, 32 elements) divides by N/K = 4: no
	// padding, shards of 65 elements; each all-gather of 520 B sends 3/4 of
	// it per rank, the inter all-reduce of a 130 B shard sends 1/2 of 260 B.
	// Output:
	// true 0 260 260 65
	// forward all-gather intra: 520 B, 390/1 per rank
	// backward all-gather intra: 520 B, 390/1 per rank
	// backward reduce-scatter intra: 520 B, 390/1 per rank
	// backward all-reduce inter: 260 B, 130/1 per rank
}

// A flipped master bit is found and named. Rank 2 of 4 owns flat elements
// [130, 195); its element 3 is flat 133, w1 (flat 80–143) element 53.
func ExampleVerify_corruption() {
	r, _ := numerics.Verify(numerics.Config{Model: numerics.TinyTransformer, N: 4, K: 1, Stage: 1, Steps: 3, Seed: 1,
		Corrupt: &numerics.Corruption{Rank: 2, Index: 3, Step: 2}})
	fmt.Println(r.Pass, r.First.Step, r.First.Rank, r.First.Buffer, r.First.Param, r.First.Element)
	// Output: false 2 2 fp32 master w1 53
}

func ExampleToBF16() {
	for _, f := range []float32{1, 1.00390625, 1.01171875, 3.14159265} {
		b := numerics.ToBF16(f)
		fmt.Printf("%v → %#04x = %v\n", f, uint16(b), b.Float32())
	}
	// Output:
	// 1 → 0x3f80 = 1
	// 1.0039062 → 0x3f80 = 1
	// 1.0117188 → 0x3f82 = 1.015625
	// 3.1415927 → 0x4049 = 3.140625
}
