package tridiag_test

import (
	"context"
	"errors"
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

// Factor a batch once and solve it for a new right-hand side at every
// step, as an implicit time-stepper whose matrix does not change does:
// each step is a forward and a back substitution with the stored factors.
func ExamplePlan_Factor() {
	ctx := context.Background()
	plan, err := tridiag.NewPlan[float64](nil, tridiag.Shape{N: 5, G: 1}, tridiag.Options{Algorithm: tridiag.Thomas})
	if err != nil {
		panic(err)
	}
	defer plan.Close()
	// Backward Euler for u' = u'' with r = Δt/Δx² = 1: (1+2r)·u − r·(left + right).
	f, err := plan.FactorConst(ctx, -1, 3, -1)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	u := []float64{0, 0, 1, 0, 0}
	for step := 1; step <= 3; step++ {
		if err := f.Solve(ctx, u, u); err != nil { // in place
			panic(err)
		}
		fmt.Printf("step %d: %.4f\n", step, u)
	}
	fmt.Println(f.Describe())
	// Output:
	// step 1: [0.0556 0.1667 0.4444 0.1667 0.0556]
	// step 2: [0.0741 0.1667 0.2593 0.1667 0.0741]
	// step 3: [0.0710 0.1389 0.1790 0.1389 0.0710]
	// thomas (lu without pivoting)
}

// Solve a batch of two systems for three right-hand sides with one
// factorization. The right-hand sides are stored column-major over
// batches: column r is a whole batch in the plan's layout at
// d[r·L : (r+1)·L], L = Shape().Len().
func ExampleFactors_SolveMany() {
	ctx := context.Background()
	shape := tridiag.Shape{N: 3, G: 2}
	plan, err := tridiag.NewPlan[float64](nil, shape, tridiag.Options{})
	if err != nil {
		panic(err)
	}
	defer plan.Close()
	a := []float64{0, 1, 1, 0, -1, -1}
	b := []float64{4, 4, 4, 2, 2, 2}
	c := []float64{1, 1, 0, -1, -1, 0}
	f, err := plan.Factor(ctx, a, b, c)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	L := shape.Len()
	d := []float64{
		5, 6, 5, 1, 0, 1, // column 0: A·1
		4, 4, 4, 2, 2, 2, // column 1: b itself
		0, 0, 0, 0, 0, 0, // column 2: zero
	}
	x := make([]float64, 3*L)
	if err := f.SolveMany(ctx, 3, d, x); err != nil {
		panic(err)
	}
	for r := range 3 {
		fmt.Printf("column %d: %.4f\n", r, x[r*L:(r+1)*L])
	}
	// Output:
	// column 0: [1.0000 1.0000 1.0000 1.0000 1.0000 1.0000]
	// column 1: [0.8571 0.5714 0.8571 3.0000 4.0000 3.0000]
	// column 2: [0.0000 0.0000 0.0000 0.0000 0.0000 0.0000]
}

// Symmetric positive definite systems: LDLT reads the diagonal b and the
// super-diagonal c only (a is nil), as LAPACK's ptsv does, and reports a
// pivot that is not positive with the system and row.
func ExampleLDLT() {
	ctx := context.Background()
	plan, err := tridiag.NewPlan[float64](nil, tridiag.Shape{N: 4, G: 2}, tridiag.Options{Algorithm: tridiag.LDLT})
	if err != nil {
		panic(err)
	}
	defer plan.Close()
	b := []float64{2, 2, 2, 2, 1, 1, 1, 1}    // system 1 is not positive definite
	c := []float64{-1, -1, -1, 0, 1, 1, 1, 0} // c[N−1] unused
	d := []float64{1, 0, 0, 1, 1, 1, 1, 1}
	x := make([]float64, 8)
	err = plan.Solve(ctx, nil, b, c, d, x)
	fmt.Printf("%.4f\n", x[:4])
	fmt.Println(err)
	fmt.Println(errors.Is(err, tridiag.ErrNotPositiveDefinite))
	// Output:
	// [1.0000 1.0000 1.0000 1.0000]
	// 1 of 2 systems failed; system 1, row 1: not positive definite at row 1
	// true
}

// Solve a complex system with the same API as a real one: the implicit
// half of a Crank–Nicolson step of i·ψ_t = −ψ_xx on four points,
// (1 − (i/2)·Δ)·x = d, Δ the second difference (1, −2, 1).
func ExampleNewPlan_complex() {
	plan, err := tridiag.NewPlan[complex128](nil, tridiag.Shape{N: 4, G: 1}, tridiag.Options{})
	if err != nil {
		panic(err)
	}
	defer plan.Close()
	a, b, c := complex(0, -0.5), complex(1, 1), complex(0, -0.5)
	d := []complex128{1, 1i, -1, -1i}
	x := make([]complex128, 4)
	if err := plan.SolveConst(context.Background(), a, b, c, d, x); err != nil {
		panic(err)
	}
	for _, v := range x {
		fmt.Printf("%.4f\n", v)
	}
	st, _ := plan.CheckConst(a, b, c, d, x)
	fmt.Println(st[0].BackwardError < 1e-15)
	// Output:
	// (0.4805-0.2614i)
	// (0.4383+0.5162i)
	// (-0.5716+0.4172i)
	// (-0.7472-0.5386i)
	// true
}
