package pivotpart_test

import (
	"fmt"

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
// SolveDirect, the pivoting LU of the partitions applied to a whole
// system.
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
	// [0.3660 0.4641 0.4904 0.4974 0.4993 0.4998 0.4998 0.4993 0.4974 0.4904 0.4641 0.3660]
}

// A partition whose block has a zero column breaks down at that row.
func ExampleSolve_breakdown() {
	a := []float64{0, 1, 1, 1, 1, 0, 1, 1}
	b := []float64{3, 3, 3, 3, 0, 3, 3, 3}
	c := []float64{1, 1, 1, 1, 1, 1, 1, 0}
	d := []float64{1, 1, 1, 1, 1, 1, 1, 1}
	x := make([]float64, len(b))
	fmt.Println(pivotpart.Solve(a, b, c, d, x, 4, nil))
	// Output:
	// zero pivot at row 4
}
