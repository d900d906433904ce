package partition_test

import (
	"fmt"

	"github.com/bandsolve/bandsolve/tridiag/partition"
)

// Solve the 7-row system tridiag(−1, 4, −1)·x = d by the partition method
// with chunks of 3 rows: chunks {0,1,2}, {3,4,5}, {6}, a reduced system of
// 5 rows (x0, x2, x3, x5, x6).
func ExampleSolve() {
	a := []float64{0, -1, -1, -1, -1, -1, -1} // a[0] is ignored
	b := []float64{4, 4, 4, 4, 4, 4, 4}
	c := []float64{-1, -1, -1, -1, -1, -1, 0} // c[6] is ignored
	d := []float64{1, 2, 3, 4, 5, 6, 7}
	x := make([]float64, len(b))

	ws := partition.NewWorkspace[float64](len(b)) // reusable for any n ≤ 7
	if err := partition.Solve(a, b, c, d, x, 3, ws); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%.4f\n", x)
	fmt.Println("reduced rows:", partition.ReducedSize(len(b), 3), "levels of cyclic reduction:", partition.Levels(len(b), 3))
	// Output:
	// [0.4996 0.9985 1.4945 1.9794 2.4230 2.7128 2.4282]
	// reduced rows: 5 levels of cyclic reduction: 2
}

// A zero pivot inside a chunk is reported with its row.
func ExampleSolve_breakdown() {
	a := []float64{0, 1, 0, 1}
	b := []float64{2, 2, 0, 2}
	c := []float64{1, 1, 1, 0}
	d := []float64{1, 1, 1, 1}
	x := make([]float64, 4)
	// One chunk of 4 rows: piv_2 = b_2 − a_2·γ_1 = 0.
	fmt.Println(partition.Solve(a, b, c, d, x, 4, nil))
	// Output:
	// zero pivot at row 2
}

// Solve the same 7-row system cut into segments of 4 rows (as a GPU cuts
// systems longer than a block) with chunks of 2: segment {0…3} and
// {4…6}, each reduced to two rows of a 4-row reduced system, here solved
// by PCR as the GPU's one-pass kernels do.
func ExampleSolveSegmented() {
	a := []float64{0, -1, -1, -1, -1, -1, -1}
	b := []float64{4, 4, 4, 4, 4, 4, 4}
	c := []float64{-1, -1, -1, -1, -1, -1, 0}
	d := []float64{1, 2, 3, 4, 5, 6, 7}
	x := make([]float64, len(b))
	fmt.Println("segments:", partition.Segments(len(b), 4), "valid:", partition.SegmentOK(len(b), 4, 2))
	if err := partition.SolveSegmented(a, b, c, d, x, 2, 4, nil, partition.ReducedCR[float64]); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%.4f\n", x)
	// Output:
	// segments: 2 valid: true
	// [0.4996 0.9985 1.4945 1.9794 2.4230 2.7128 2.4282]
}

// Solve the complex shifted Laplacian −x[i−1] + (2 + i)·x[i] − x[i+1] =
// d[i] on 5 points with chunks of 2 rows.
func ExampleSolveC() {
	n := 5
	a, b, c, d := make([]complex128, n), make([]complex128, n), make([]complex128, n), make([]complex128, n)
	for i := range n {
		a[i], b[i], c[i], d[i] = -1, 2+1i, -1, 1
	}
	x := make([]complex128, n)
	if err := partition.SolveC(a, b, c, d, x, 2, partition.NewWorkspaceC[complex128](n)); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%.4f\n", x)
	// Output:
	// [(0.3000-0.6500i) (0.2500-1.0000i) (0.2000-1.1000i) (0.2500-1.0000i) (0.3000-0.6500i)]
}

// SolveBoundedC refuses a system whose elimination without pivoting
// would grow, where SolveC solves it: with chunks of 2 rows the reduced
// system's first level eliminates row 0 (b = 10⁻³) into row 1, whose fill
// c[0]·a[1]/b[0] dwarfs b[1]. The caller can solve it with pivoting
// instead.
func ExampleSolveBoundedC() {
	a := []complex128{0, 1, 1, 1}
	b := []complex128{1e-3, 1e-3, 4, 4}
	c := []complex128{1, 1, 1, 0}
	d := []complex128{1, 2, 3, 4}
	x := make([]complex128, 4)
	fmt.Println(partition.SolveBoundedC(a, b, c, d, x, 2, nil))
	fmt.Println(partition.SolveC(a, b, c, d, x, 2, nil))
	// Output:
	// pivot growth at row 1
	// <nil>
}
