package sweep_test

import (
	"fmt"

	"github.com/zerosim/zerosim/sweep"
)

// Points are numbered with the grids in flag order and the last grid
// varying fastest; shard 1/2 takes the odd indices.
func ExampleSpace_Point() {
	k, _ := sweep.ParseGrid("parallelism.k=1,2")
	st, _ := sweep.ParseGrid("parallelism.zero_stage=1,3")
	sp, _ := sweep.NewSpace([]sweep.Grid{k, st})
	for i := 0; i < sp.Len(); i++ {
		fmt.Println(i, sp.Point(i).Sets(sp), sweep.Shard{I: 1, N: 2}.Has(i))
	}
	// Output:
	// 0 [parallelism.k=1 parallelism.zero_stage=1] false
	// 1 [parallelism.k=1 parallelism.zero_stage=3] true
	// 2 [parallelism.k=2 parallelism.zero_stage=1] false
	// 3 [parallelism.k=2 parallelism.zero_stage=3] true
}
