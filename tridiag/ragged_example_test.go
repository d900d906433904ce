package tridiag_test

import (
	"context"
	"fmt"

	"github.com/bandsolve/bandsolve/tridiag"
)

// Solve three cables of 2, 4 and 3 compartments in one call: the systems
// are stored one after another, system g from row Offsets()[g] on.
func ExampleNewRaggedPlan() {
	plan, err := tridiag.NewRaggedPlan[float64](nil, []int{2, 4, 3}, tridiag.Options{})
	if err != nil {
		panic(err)
	}
	defer plan.Close()
	fmt.Println("offsets:", plan.Offsets())
	// Rows 0–1 are system 0, rows 2–5 system 1, rows 6–8 system 2.
	a := []float64{0, -1, 0, -1, -1, -1, 0, 1, 1} // sub-diagonals (a[0] of each unused)
	b := []float64{2, 2, 2, 2, 2, 2, 4, 4, 4}     // diagonals
	c := []float64{-1, 0, -1, -1, -1, 0, 1, 1, 0} // super-diagonals (last of each unused)
	d := []float64{1, 1, 1, 0, 0, 1, 5, 6, 5}     // right-hand sides
	x := make([]float64, plan.Len())
	if err := plan.Solve(context.Background(), a, b, c, d, x); err != nil {
		panic(err)
	}
	fmt.Printf("%.4f\n", x)
	// Output:
	// offsets: [0 2 6 9]
	// [1.0000 1.0000 1.0000 1.0000 1.0000 1.0000 1.0000 1.0000 1.0000]
}
