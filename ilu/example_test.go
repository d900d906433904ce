package ilu_test

import (
	"context"
	"errors"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/bandsolve/bandsolve/ilu"
	"github.com/bandsolve/bandsolve/sparse"
	"github.com/bandsolve/bandsolve/sptrsv"
)

// ILU(0) of a tridiagonal matrix is its exact LU factorization (there is
// no fill to drop); the preconditioner then solves with A exactly.
func ExampleILU0() {
	a := sparse.FromDense(mat.NewDense(3, 3, []float64{
		4, -1, 0,
		-2, 4, -1,
		0, -2, 4,
	}))
	f, err := ilu.ILU0(a, ilu.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("L = %.4v\n", mat.Formatted(f.L().Dense(), mat.Prefix("    ")))
	fmt.Printf("U = %.4v\n", mat.Formatted(f.U().Dense(), mat.Prefix("    ")))

	m, err := ilu.NewPreconditioner[float64](f, nil, sptrsv.Auto)
	if err != nil {
		fmt.Println(err)
		return
	}
	b := []float64{3, 1, 2} // A·[1 1 1]ᵀ
	x := make([]float64, 3)
	if err := m.Apply(context.Background(), b, x); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("x = %.4f\n", x)
	// Output:
	// L = ⎡      1        0        0⎤
	//     ⎢   -0.5        1        0⎥
	//     ⎣      0  -0.5714        1⎦
	// U = ⎡    4     -1      0⎤
	//     ⎢    0    3.5     -1⎥
	//     ⎣    0      0  3.429⎦
	// x = [1.0000 1.0000 1.0000]
}

// IC(0) of an indefinite matrix fails on the row whose pivot is not
// positive; AutoShift retries with growing diagonal shifts and reports the
// one that worked.
func ExampleIC0() {
	a := sparse.FromDense(mat.NewDense(2, 2, []float64{
		1, 1.05,
		1.05, 1,
	}))
	_, err := ilu.IC0(a, ilu.Options{})
	fmt.Println(errors.Is(err, ilu.ErrNotPositive), err)

	f, err := ilu.IC0(a, ilu.Options{AutoShift: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("shift:", f.Shift())
	fmt.Printf("L = %.4v\n", mat.Formatted(f.L().Dense(), mat.Prefix("    ")))
	// Output:
	// true ilu: non-positive pivot: IC(0) of the 2×2 matrix (shift 0): row 1: l[1,1]² = -0.103
	// shift: 0.1
	// L = ⎡ 1.049       0⎤
	//     ⎣ 1.001  0.3126⎦
}
