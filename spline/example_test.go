package spline_test

import (
	"fmt"
	"math"

	"github.com/bandsolve/bandsolve/spline"
)

// Fit three curves that share their knots in one call: a clamped spline
// reproduces the cubic t³ exactly, whatever the knots.
func ExampleFitBatch() {
	x := []float64{0, 0.5, 1.5, 2, 3} // shared knots, uneven on purpose
	y := make([]float64, 0, 3*len(x)) // curve k at y[k·5 : k·5+5]
	for _, f := range []func(float64) float64{
		func(t float64) float64 { return t * t * t },
		math.Sqrt,
		func(t float64) float64 { return math.Sin(t) },
	} {
		for _, t := range x {
			y = append(y, f(t))
		}
	}
	// End slopes of t³: 0 at t = 0 and 27 at t = 3 (shared by all curves
	// here; spline.ClampedEach gives each curve its own).
	cv, err := spline.FitBatch(len(x), x, y, spline.Clamped(0, 27))
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d curves of %d knots\n", cv.Count, cv.N)
	fmt.Printf("t³ at 2.5: %.12f (exact 15.625)\n", cv.Eval(0, 2.5))
	fmt.Printf("slope at 1: %.12f (exact 3)\n", cv.Deriv(0, 1))
	// Output:
	// 3 curves of 5 knots
	// t³ at 2.5: 15.625000000000 (exact 15.625)
	// slope at 1: 3.000000000000 (exact 3)
}
