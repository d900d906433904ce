package wangmou_test

import (
	"fmt"

	"github.com/bandsolve/bandsolve/tridiag/wangmou"
)

// Solve the 5-row system tridiag(−1, 4, −1)·x = d by the Wang & Mou
// algorithm (padded to 8 elements, 3 merge steps).
func ExampleSolve() {
	a := []float64{0, -1, -1, -1, -1} // a[0] is ignored
	b := []float64{4, 4, 4, 4, 4}
	c := []float64{-1, -1, -1, -1, 0} // c[4] is ignored
	d := []float64{1, 2, 3, 4, 5}
	x := make([]float64, len(b))

	ws := wangmou.NewWorkspace[float64](len(b)) // reusable
	if err := wangmou.Solve(a, b, c, d, x, ws); err != nil {
		fmt.Println(err)
		return
	}
	for _, v := range x {
		fmt.Printf("%.4f\n", v)
	}

	// A zero pivot is reported with its row.
	b[2] = 0
	a[2], c[2], a[3], c[1] = 0, 0, 0, 0
	fmt.Println(wangmou.Solve(a, b, c, d, x, ws))
	// Output:
	// 0.4962
	// 0.9846
	// 1.4423
	// 1.7846
	// 1.6962
	// zero pivot at row 2
}
