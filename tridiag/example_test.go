package tridiag_test

import (
	"context"
	"fmt"

	"github.com/bandsolve/bandsolve/tridiag"
)

// Solve two systems of four rows at once on the CPU.
func ExampleNewPlan() {
	shape := tridiag.Shape{N: 4, G: 2} // contiguous: system g at rows 4g…4g+3
	plan, err := tridiag.NewPlan[float64](nil, shape, tridiag.Options{Algorithm: tridiag.Thomas})
	if err != nil {
		panic(err)
	}
	defer plan.Close()
	a := []float64{0, -1, -1, -1, 0, 1, 1, 1} // sub-diagonals (a[0] unused)
	b := []float64{2, 2, 2, 2, 4, 4, 4, 4}    // diagonals
	c := []float64{-1, -1, -1, 0, 1, 1, 1, 0} // super-diagonals (c[N−1] unused)
	d := []float64{1, 0, 0, 1, 5, 6, 6, 5}    // right-hand sides
	x := make([]float64, 8)
	if err := plan.Solve(context.Background(), a, b, c, d, x); err != nil {
		panic(err)
	}
	fmt.Printf("%.4f\n", x)
	// Output: [1.0000 1.0000 1.0000 1.0000 1.0000 1.0000 1.0000 1.0000]
}

// Solve along both axes of a row-major 2-D array without a transpose, as
// an ADI time-stepper does, with constant coefficients.
func ExampleStrided() {
	const ny, nx = 3, 4
	u := []float64{ // u[y·nx + x]
		1, 2, 3, 4,
		5, 6, 7, 8,
		9, 10, 11, 12,
	}
	// Along x: ny systems of nx rows, rows 1 apart, systems nx apart.
	alongX, _ := tridiag.NewPlan[float64](nil, tridiag.Shape{N: nx, G: ny, Layout: tridiag.Strided(1, nx)}, tridiag.Options{})
	// Along y: nx systems of ny rows, rows nx apart, systems 1 apart.
	alongY, _ := tridiag.NewPlan[float64](nil, tridiag.Shape{N: ny, G: nx, Layout: tridiag.Strided(nx, 1)}, tridiag.Options{})
	ctx := context.Background()
	// Identity systems (b = 1, a = c = 0) leave u unchanged: a quick check
	// that both plans visit every element exactly once.
	_ = alongX.SolveConst(ctx, 0, 1, 0, u, u)
	_ = alongY.SolveConst(ctx, 0, 2, 0, u, u) // halves every element
	fmt.Println(u)
	// Output: [0.5 1 1.5 2 2.5 3 3.5 4 4.5 5 5.5 6]
}

// A periodic system: row 0 couples to row N−1 through a[0], and row N−1 to
// row 0 through c[N−1].
func ExampleOptions_cyclic() {
	plan, _ := tridiag.NewPlan[float64](nil, tridiag.Shape{N: 5, G: 1}, tridiag.Options{Cyclic: true})
	// The periodic 1-D Laplacian plus identity: 3x_i − x_{i−1} − x_{i+1}.
	x := []float64{1, 1, 1, 1, 1}
	_ = plan.SolveConst(context.Background(), -1, 3, -1, x, x)
	fmt.Printf("%.4f\n", x)
	// Output: [1.0000 1.0000 1.0000 1.0000 1.0000]
}
