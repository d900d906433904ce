package pcr_test

import (
	"fmt"

	"github.com/bandsolve/bandsolve/tridiag/pcr"
)

// Solve the 5-row system tridiag(−1, 4, −1)·x = d by parallel cyclic
// reduction, and by the PCR→Thomas hybrid with one PCR step.
func ExampleSolve() {
	a := []float64{0, -1, -1, -1, -1} // a[0] is ignored
	b := []float64{4, 4, 4, 4, 4}
	c := []float64{-1, -1, -1, -1, 0} // c[4] is ignored
	d := []float64{1, 2, 3, 4, 5}
	x := make([]float64, len(b))

	ws := pcr.NewWorkspace[float64](len(b)) // reusable for any n ≤ 5
	if err := pcr.Solve(a, b, c, d, x, ws); err != nil {
		fmt.Println(err)
		return
	}
	for _, v := range x {
		fmt.Printf("%.4f\n", v)
	}

	// One PCR step: two interleaved subsystems {0, 2, 4} and {1, 3},
	// each solved by Thomas.
	if err := pcr.SolveHybrid(a, b, c, d, x, 1, ws); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("hybrid: %.4f\n", x)
	// Output:
	// 0.4962
	// 0.9846
	// 1.4423
	// 1.7846
	// 1.6962
	// hybrid: [0.4962 0.9846 1.4423 1.7846 1.6962]
}
