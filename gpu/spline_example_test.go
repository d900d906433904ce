//go:build cuda

package gpu_test

import (
	"context"
	"fmt"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/gpu"
	"github.com/bandsolve/bandsolve/spline"
	"github.com/bandsolve/bandsolve/tridiag"
)

// Spline evaluation on the GPU through spline.NewEvaluator: the same
// calls as on the CPU, the same bits.
func Example_spline() {
	dev, err := gpu.Open(0)
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	x := []float64{0, 1, 2, 3}
	y := []float64{0, 2, 4, 6, 1, 1, 1, 1} // the line 2t and the constant 1
	cv, err := spline.FitBatch(4, x, y, spline.Natural())
	if err != nil {
		panic(err)
	}
	ev, err := spline.NewEvaluator[float64](dev)
	if err != nil {
		panic(err)
	}
	defer ev.Close()
	grid := []float64{-1, 0.5, 3}
	vals, slopes, areas := make([]float64, 6), make([]float64, 6), make([]float64, 2)
	ctx := context.Background()
	if err := ev.Eval(ctx, cv, spline.SharedPoints(grid), spline.Out[float64]{Value: vals, Deriv: slopes}); err != nil {
		panic(err)
	}
	if err := ev.Integrate(ctx, cv, []float64{0}, []float64{3}, areas); err != nil {
		panic(err)
	}
	fmt.Println(vals, slopes, areas)
	// Output: [-2 1 6 1 1 1] [2 2 2 0 0 0] [9 3]
}

// Evaluation of curves held in device buffers: the points and results
// stay on the GPU.
func ExampleNewSplineEvaluator() {
	dev, err := gpu.Open(0)
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	// y = t² sampled at 0 … 4: a clamped fit with slopes 0 and 8 is t².
	cv, err := spline.FitBatch(5, []float64{0, 1, 2, 3, 4}, []float64{0, 1, 4, 9, 16}, spline.Clamped(0, 8))
	if err != nil {
		panic(err)
	}
	up := func(v []float64) *cuda.Buffer[float64] {
		b, err := cuda.Upload(dev, v)
		if err != nil {
			panic(err)
		}
		return b
	}
	dx, dy, dm, dt := up(cv.X), up(cv.Y), up(cv.M), up([]float64{0.5, 2.5, 5})
	defer dx.Free()
	defer dy.Free()
	defer dm.Free()
	defer dt.Free()
	val, err := cuda.Alloc[float64](dev, 3)
	if err != nil {
		panic(err)
	}
	defer val.Free()
	ev, err := gpu.NewSplineEvaluator[float64](dev)
	if err != nil {
		panic(err)
	}
	defer ev.Close()
	curves := &gpu.SplineCurves[float64]{N: 5, Count: 1, Kind: cv.Kind, X: dx, Y: dy, M: dm}
	if err := ev.EvalDevice(context.Background(), curves, gpu.SplinePoints[float64]{T: dt, P: 3}, gpu.SplineOut[float64]{Value: val}); err != nil {
		panic(err)
	}
	h := make([]float64, 3)
	if err := val.CopyTo(h); err != nil {
		panic(err)
	}
	fmt.Printf("%.6f\n", h)
	// Output: [0.250000 6.250000 25.000000]
}

// A fit whose knots, values and moments stay on the GPU, evaluated there:
// no copy to the host between the fit and the evaluation.
func ExampleNewSplineFitter() {
	dev, err := gpu.Open(0)
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	up := func(v []float64) *cuda.Buffer[float64] {
		b, err := cuda.Upload(dev, v)
		if err != nil {
			panic(err)
		}
		return b
	}
	// Two curves on shared knots: t² (clamped with slopes 0 and 8 it is
	// exact) and 3t + 1.
	dx := up([]float64{0, 1, 2, 3, 4})
	dy := up([]float64{0, 1, 4, 9, 16, 1, 4, 7, 10, 13})
	dt := up([]float64{0.5, 2.5})
	defer dx.Free()
	defer dy.Free()
	defer dt.Free()
	fit, err := gpu.NewSplineFitter[float64](dev, 5, 2, tridiag.Options{Algorithm: tridiag.Thomas})
	if err != nil {
		panic(err)
	}
	defer fit.Close()
	ctx := context.Background()
	curves, err := fit.FitDevice(ctx, dx, dy, spline.ClampedEach([]float64{0, 3}, []float64{8, 3}))
	if err != nil {
		panic(err)
	}
	defer curves.M.Free()
	ev, err := gpu.NewSplineEvaluator[float64](dev)
	if err != nil {
		panic(err)
	}
	defer ev.Close()
	val, err := cuda.Alloc[float64](dev, 4)
	if err != nil {
		panic(err)
	}
	defer val.Free()
	if err := ev.EvalDevice(ctx, curves, gpu.SplinePoints[float64]{T: dt, P: 2}, gpu.SplineOut[float64]{Value: val}); err != nil {
		panic(err)
	}
	h := make([]float64, 4)
	if err := val.CopyTo(h); err != nil {
		panic(err)
	}
	fmt.Printf("%.6f\n", h)
	// Output: [0.250000 6.250000 2.500000 8.500000]
}
