package tpr_test

import (
	"fmt"

	"github.com/bandsolve/bandsolve/tridiag/tpr"
)

// Solve the 7-row system tridiag(−1, 4, −1)·x = d by TPR with slices of
// S = 4 rows (two slices, the second padded with one identity row), then run
// the three stages by hand.
func ExampleSolve() {
	a := []float64{0, -1, -1, -1, -1, -1, -1} // a[0] is ignored
	b := []float64{4, 4, 4, 4, 4, 4, 4}
	c := []float64{-1, -1, -1, -1, -1, -1, 0} // c[6] is ignored
	d := []float64{3, 2, 2, 2, 2, 2, 3}       // solution: all ones
	x := make([]float64, len(b))

	ws := tpr.NewWorkspace[float64](len(b), 4) // reusable
	if err := tpr.Solve(a, b, c, d, x, 4, ws); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("x = %.4f\n", x)

	// The same, stage by stage.
	lay, _ := tpr.NewLayout(len(b), 4)
	eq := tpr.NewEqs[float64](lay.N)      // Stage 1 → Stage 3
	bnd := tpr.NewEqs[float64](2 * lay.M) // Stage 1 → Stage 2: two equations per slice
	xb := make([]float64, lay.M)          // Stage 2 → Stage 3: last unknown of each slice
	_ = tpr.Stage1(lay, a, b, c, d, eq, bnd, nil)
	_ = tpr.Stage2(lay, bnd, xb, nil)
	_ = tpr.Stage3(lay, a, b, c, d, eq, xb, x, nil)
	fmt.Printf("M = %d slices, x[3] = %.4f, last of slice 1 (virtual row 7) = %.4f\n", lay.M, xb[0], xb[1])
	fmt.Printf("x = %.4f\n", x)
	// Output:
	// x = [1.0000 1.0000 1.0000 1.0000 1.0000 1.0000 1.0000]
	// M = 2 slices, x[3] = 1.0000, last of slice 1 (virtual row 7) = 0.0000
	// x = [1.0000 1.0000 1.0000 1.0000 1.0000 1.0000 1.0000]
}

// The paper's two tuned slice sizes (§4.4 Table 4, §5.2).
func ExampleDefaultSliceSize() {
	for _, n := range []int{100, 65536, 1 << 20} {
		fmt.Println(n, tpr.DefaultSliceSize(n), tpr.StableSliceSize(n))
	}
	// Output:
	// 100 128 128
	// 65536 128 2048
	// 1048576 512 2048
}
