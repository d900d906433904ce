package banded_test

import (
	"context"
	"fmt"

	"github.com/bandsolve/bandsolve/banded"
)

// Three pentadiagonal systems (K = 2) of orders 3, 6 and 4 in one ragged
// batch: each is the matrix with 6 on the diagonal and −1 on the first two
// off-diagonals, with right-hand sides that make every x_i = 1.
func ExampleSolveRagged() {
	batch, err := banded.NewRaggedBatch[float64](2, []int{3, 6, 4})
	if err != nil {
		panic(err)
	}
	rhs := make([]float64, batch.Rows())
	for g, n := range batch.Lengths() {
		m := batch.System(g) // a view: writes go to the batch
		for i := range n {
			for j := max(0, i-2); j <= min(n-1, i+2); j++ {
				v := -1.0
				if i == j {
					v = 6
				}
				m.Set(i, j, v)
				rhs[batch.VecIndex(g, i)] += v
			}
		}
	}
	x := make([]float64, batch.Rows())
	res, err := banded.SolveRagged(context.Background(), batch, rhs, x, banded.BatchOptions{Pivot: true})
	fmt.Println(batch.Offsets(), len(res.Boosted), err)
	fmt.Printf("%.4f\n", x)
	// Output:
	// [0 3 9 13] 0 <nil>
	// [1.0000 1.0000 1.0000 1.0000 1.0000 1.0000 1.0000 1.0000 1.0000 1.0000 1.0000 1.0000 1.0000]
}
