package pivotpart_test

import (
	"fmt"
	"math"
	"slices"

	"github.com/bandsolve/bandsolve/tridiag/pivotpart"
)

// Solve a 10-row system with a zero diagonal, which every partition
// method without pivoting fails on, in partitions of 4 rows: rows 0–3,
// 4–7 and the remainder 8–9, whose 6 coarse rows are solved directly.
func ExampleSolve() {
	n := 10
	a, b, c, d := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range n {
		a[i], c[i], d[i] = 1, 2, float64(i+1)
	}
	x := make([]float64, n)
	ws := pivotpart.NewWorkspace[float64](n, 4) // reusable for any n ≤ 10
	if err := pivotpart.Solve(a, b, c, d, x, 4, ws); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%.4f\n", x)
	fmt.Println("partitions:", pivotpart.Partitions(n, 4), "coarse rows:", pivotpart.CoarseSize(n, 4))
	// Output:
	// [114.0000 0.5000 -56.0000 1.2500 30.0000 1.8750 -12.0000 2.5625 10.0000 3.2188]
	// partitions: 3 coarse rows: 6
}

// SolveWith hands the coarse system to a solver of the caller's, here
// SolveDirect, the pivoting LU applied to a whole system: once for
// Stages 1–3 and once more for the refinement.
func ExampleSolveWith() {
	n := 12
	a, b, c, d := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range n {
		a[i], b[i], c[i], d[i] = -1, 4, -1, 1
	}
	x := make([]float64, n)
	coarse := func(a, b, c, d, x []float64) error {
		fmt.Println("coarse rows:", len(b))
		return pivotpart.SolveDirect(a, b, c, d, x, nil)
	}
	if err := pivotpart.SolveWith(a, b, c, d, x, 4, nil, coarse); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%.4f\n", x)
	// Output:
	// coarse rows: 6
	// coarse rows: 6
	// [0.3660 0.4641 0.4904 0.4974 0.4993 0.4998 0.4998 0.4993 0.4974 0.4904 0.4641 0.3660]
}

// A singular system, whose unknown x_4 appears in no equation, breaks
// down at that row.
func ExampleSolve_breakdown() {
	a := []float64{0, 1, 1, 1, 0, 0, 1, 1}
	b := []float64{3, 3, 3, 3, 0, 3, 3, 3}
	c := []float64{1, 1, 1, 0, 0, 1, 1, 0}
	d := []float64{1, 1, 1, 1, 1, 1, 1, 1}
	x := make([]float64, len(b))
	fmt.Println(pivotpart.Solve(a, b, c, d, x, 4, nil))
	// Output:
	// zero pivot at row 4
}

// A partition whose own block is singular (rows 4–7: b_4 = 0 and a_5 = 0
// make its column 4 zero; c_3, the coupling from row 3, lies outside it)
// in a nonsingular system: Stage 1 eliminates the partition's interior
// unknowns x_5, x_6 only, and the system is solved.
func ExampleSolve_singularBlock() {
	a := []float64{0, 1, 1, 1, 1, 0, 1, 1}
	b := []float64{3, 3, 3, 3, 0, 3, 3, 3}
	c := []float64{1, 1, 1, 1, 1, 1, 1, 0}
	d := []float64{1, 1, 1, 1, 1, 1, 1, 1}
	x := make([]float64, len(b))
	if err := pivotpart.Solve(a, b, c, d, x, 4, nil); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%.4f\n", x)
	// Output:
	// [0.2517 0.2449 0.0136 0.7143 -1.1565 0.2857 0.1429 0.2857]
}

// SetRefine chooses Stage 4: RefineNever returns the solution of Stages
// 1–3, RefineAuto refines it only where a row's residual exceeds
// RefineTol unit roundoffs, RefineAlways (the default) refines it once.
// On this diagonally dominant system every residual is small, so Auto
// returns Never's solution.
func ExampleWorkspace_SetRefine() {
	n := 40
	a, b, c, d := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range n {
		a[i], b[i], c[i], d[i] = 1, 4, -2, float64(i%5)
	}
	solve := func(r pivotpart.Refine) []float64 {
		ws := pivotpart.NewWorkspace[float64](n, 8)
		ws.SetRefine(r)
		x := make([]float64, n)
		if err := pivotpart.Solve(a, b, c, d, x, 8, ws); err != nil {
			fmt.Println(err)
		}
		return x
	}
	never, auto := solve(pivotpart.RefineNever), solve(pivotpart.RefineAuto)
	fmt.Println("default:", pivotpart.NewWorkspace[float64](n, 8).Refine())
	fmt.Println("auto = never:", slices.Equal(never, auto))
	fmt.Printf("x[:4] = %.6f\n", auto[:4])
	// Output:
	// default: always
	// auto = never: true
	// x[:4] = [0.295180 0.590359 0.828309 0.951797]
}

// PartitionRows and SolvePartition are Stages 1 and 3 for one partition:
// here rows 4–7 of a 12-row system. Its two coarse rows hold for the
// solution, and with the coarse unknowns x_3, x_4, x_7, x_8 known,
// SolvePartition finds x_5 and x_6.
func ExamplePartitionRows() {
	n := 12
	a, b, c, d := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range n {
		a[i], b[i], c[i], d[i] = 1, 0.5, -1, float64(i+1)
	}
	x := make([]float64, n)
	if err := pivotpart.Solve(a, b, c, d, x, 4, nil); err != nil {
		fmt.Println(err)
		return
	}
	first, last, bad := pivotpart.PartitionRows(a, b, c, d, 4, 8)
	fmt.Printf("row 2 (x_4): %+.4f·x_3 %+.4f·x_4 %+.4f·x_7 = %+.4f, holds: %v\n", first.A, first.B, first.C, first.D,
		math.Abs(first.A*x[3]+first.B*x[4]+first.C*x[7]-first.D) < 1e-12)
	fmt.Printf("row 3 (x_7): %+.4f·x_4 %+.4f·x_7 %+.4f·x_8 = %+.4f, holds: %v\n", last.A, last.B, last.C, last.D,
		math.Abs(last.A*x[4]+last.B*x[7]+last.C*x[8]-last.D) < 1e-12)
	fmt.Println("bad pivot:", bad)
	y := make([]float64, n)
	ws := pivotpart.NewWorkspace[float64](n, 4)
	pivotpart.SolvePartition(a, b, c, d, y, 4, 8, x[3], x[4], x[7], x[8], ws)
	fmt.Printf("x[4:8] = %.4f, from SolvePartition %.4f\n", x[4:8], y[4:8])
	// Output:
	// row 2 (x_4): +1.0000·x_3 +0.9000·x_4 -0.8000·x_7 = +13.0000, holds: true
	// row 3 (x_7): +0.8000·x_4 +0.9000·x_7 -1.0000·x_8 = +10.0000, holds: true
	// bad pivot: -1
	// x[4:8] = [15.1906 12.4377 15.4094 13.1424], from SolvePartition [15.1906 12.4377 15.4094 13.1424]
}

// Residual forms a row's residual in about twice the working precision:
// at the rounded solution of 3·x = 1 it is 1 − 3·fl(1/3) = 2^−54
// exactly, which the residual formed in float64 arithmetic rounds away.
func ExampleResidual() {
	a, b, c, d := []float64{0}, []float64{3}, []float64{0}, []float64{1}
	x := []float64{1.0 / 3}
	r, small := pivotpart.Residual(a, b, c, d, x, 0)
	fmt.Printf("residual %.4e (float64 arithmetic: %g), within RefineTol: %v\n", r, d[0]-b[0]*x[0], small)
	// Output:
	// residual 5.5511e-17 (float64 arithmetic: 0), within RefineTol: true
}
