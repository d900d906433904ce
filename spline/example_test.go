package spline_test

import (
	"context"
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

// Evaluate a whole batch in one call: every curve's value and slope on a
// shared grid, and each curve's integral.
func ExampleEvaluator() {
	ctx := context.Background()
	n, x := 4, []float64{0, 1, 2, 3}       // knots shared by the curves
	y := []float64{0, 2, 4, 6, 1, 1, 1, 1} // the line 2t and the constant 1
	grid := []float64{-1, 0.5, 3}
	vals, slopes, areas := make([]float64, 2*len(grid)), make([]float64, 2*len(grid)), make([]float64, 2)

	cv, err := spline.FitBatch(n, x, y, spline.Natural()) // curve k at y[k·n : k·n+n]
	if err != nil {
		panic(err)
	}
	ev, err := spline.NewEvaluator[float64](nil) // the CPU, every core
	if err != nil {
		panic(err)
	}
	// Caller's slices, reused call after call: vals[k·len(grid)+j] is curve k at grid[j].
	out := spline.Out[float64]{Value: vals, Deriv: slopes}
	if err := ev.Eval(ctx, cv, spline.SharedPoints(grid), out); err != nil {
		panic(err)
	}
	if err := ev.Integrate(ctx, cv, []float64{0}, []float64{3}, areas); err != nil {
		panic(err)
	}

	for k := range 2 {
		fmt.Printf("curve %d: values %.3g, slopes %.3g, integral over [0, 3] %.3g\n", k, vals[k*3:k*3+3], slopes[k*3:k*3+3], areas[k])
	}
	// Output:
	// curve 0: values [-2 1 6], slopes [2 2 2], integral over [0, 3] 9
	// curve 1: values [1 1 1], slopes [0 0 0], integral over [0, 3] 3
}
