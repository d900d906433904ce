//go:build cuda

package splinegpu

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/spline"
	"github.com/bandsolve/bandsolve/tridiag"
)

// knotSet is how a fit case's knots are laid out.
type knotSet int

const (
	sharedUneven  knotSet = iota // shared, random spans
	sharedUniform                // shared, equal spans (constant coefficients)
	perCurve                     // one random set per curve
)

func (k knotSet) String() string {
	return [...]string{"shared", "uniform", "per-curve"}[k]
}

// fitData returns count random curves of n knots laid out as ks, for
// end condition kind (periodic curves end where they start).
func fitData[T tridiag.Float](r *rand.Rand, n, count int, ks knotSet, kind spline.Kind) (x, y []T) {
	knots := func() []T {
		x := make([]T, n)
		v := r.Float64()*4 - 2
		for i := range x {
			x[i] = T(v)
			v += 0.05 + r.Float64()
		}
		return x
	}
	switch ks {
	case sharedUneven:
		x = knots()
	case sharedUniform:
		x = make([]T, n)
		for i := range x {
			x[i] = T(-3 + 0.25*float64(i)) // exact: every span is 0.25
		}
	case perCurve:
		for range count {
			x = append(x, knots()...)
		}
	}
	y = make([]T, n*count)
	for k := range count {
		for i := range n {
			y[k*n+i] = T(math.Sin(float64(i)*0.7+float64(k)) + r.Float64())
		}
		if kind == spline.KindPeriodic {
			y[k*n+n-1] = y[k*n]
		}
	}
	return x, y
}

// boundaries are the end conditions of the fit tests for count curves.
func boundaries(r *rand.Rand, count int) []spline.Boundary {
	d0, dn := make([]float64, count), make([]float64, count)
	for k := range d0 {
		d0[k], dn[k] = r.Float64()*4-2, r.Float64()*4-2
	}
	return []spline.Boundary{spline.Natural(), spline.Clamped(0.5, -1.25), spline.ClampedEach(d0, dn), spline.Periodic()}
}

func bcName(bc spline.Boundary) string {
	if bc.Kind == spline.KindClamped && len(bc.Start) > 1 {
		return "clamped-each"
	}
	return bc.Kind.String()
}

// fitDevice uploads x and y, fits them with f and returns the device
// curves (freed with the test).
func fitDevice[T tridiag.Float](t *testing.T, f *Fitter[T], x, y []T, bc spline.Boundary) (*Curves[T], error) {
	t.Helper()
	dx, err := cuda.Upload(dev, x)
	require.NoError(t, err)
	dy, err := cuda.Upload(dev, y)
	require.NoError(t, err)
	t.Cleanup(func() { _ = dx.Free(); _ = dy.Free() })
	cv, err := f.FitDevice(context.Background(), dx, dy, bc)
	if err == nil {
		t.Cleanup(func() { _ = cv.M.Free() })
	}
	return cv, err
}

func download1[T tridiag.Float](t *testing.T, b *cuda.Buffer[T], n int) []T {
	t.Helper()
	h := make([]T, n)
	require.NoError(t, b.CopyTo(h))
	return h
}

// requireClose checks that each curve's moments are want's to rel,
// normwise: max |got − want| ≤ rel · max |want| over the curve.
func requireClose[T tridiag.Float](t *testing.T, want, got []T, n int, rel float64, what string) {
	t.Helper()
	require.Len(t, got, len(want))
	for k := 0; k < len(want)/n; k++ {
		var diff, norm float64
		for i := k * n; i < (k+1)*n; i++ {
			diff = math.Max(diff, math.Abs(float64(got[i])-float64(want[i])))
			norm = math.Max(norm, math.Abs(float64(want[i])))
		}
		require.LessOrEqualf(t, diff, rel*norm, "%s: curve %d: moments differ by %g, %g of their norm %g", what, k, diff, diff/norm, norm)
	}
}

// TestFitDevice fits every end condition with shared, uniform and
// per-curve knots on the device and compares the moments with
// spline.FitBatch's: bit for bit with the Thomas algorithm (the CPU's),
// within 1e-14 (FP64) or 1e-5 (FP32) of their norm per curve with the GPU's
// Auto choice. Uniform knots must take the constant-coefficient plans.
func TestFitDevice(t *testing.T) {
	t.Run("f64", func(t *testing.T) { fitDeviceCases[float64](t, 1e-14) })
	t.Run("f32", func(t *testing.T) { fitDeviceCases[float32](t, 1e-5) })
}

func fitDeviceCases[T tridiag.Float](t *testing.T, rel float64) {
	r := rand.New(rand.NewPCG(31, 2))
	for _, n := range []int{2, 3, 4, 17, 300} {
		for _, count := range []int{1, 7, 130} {
			for _, ks := range []knotSet{sharedUneven, sharedUniform, perCurve} {
				for _, bc := range boundaries(r, count) {
					x, y := fitData[T](r, n, count, ks, bc.Kind)
					want, err := spline.FitBatch(n, x, y, bc)
					require.NoError(t, err)
					for _, algo := range []tridiag.Algorithm{tridiag.Thomas, tridiag.Auto} {
						name := fmt.Sprintf("n=%d/count=%d/%v/%s/%v", n, count, ks, bcName(bc), algo)
						f, err := NewFitter[T](dev, n, count, tridiag.Options{Algorithm: algo})
						require.NoError(t, err, name)
						cv, err := fitDevice(t, f, x, y, bc)
						require.NoError(t, err, name)
						assert.Equal(t, n, cv.N)
						assert.Equal(t, count, cv.Count)
						assert.Equal(t, bc.Kind, cv.Kind)
						got := download1(t, cv.M, n*count)
						if algo == tridiag.Thomas {
							requireBits(t, want.M, got, n, name)
						} else {
							requireClose(t, want.M, got, n, rel, name)
						}
						if ks == sharedUniform && n >= 3 && bc.Kind != spline.KindClamped {
							_, ok := f.plans[planKey{bc.Kind, true}]
							assert.True(t, ok, "%s: uniform knots solved without constant coefficients", name)
						}
						require.NoError(t, f.Close())
					}
				}
			}
		}
	}
}

// TestFitEvalDevice fits on the device and evaluates there (no host copy
// in between), and requires the CPU's FitBatch then Eval bit for bit.
func TestFitEvalDevice(t *testing.T) {
	t.Run("f64", fitEvalDevice[float64])
	t.Run("f32", fitEvalDevice[float32])
}

func fitEvalDevice[T tridiag.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(31, 3))
	ctx := context.Background()
	e, err := NewEvaluator[T](dev)
	require.NoError(t, err)
	defer e.Close()
	const n, count, p = 40, 25, 61
	for _, ks := range []knotSet{sharedUneven, sharedUniform, perCurve} {
		for _, bc := range boundaries(r, count) {
			name := fmt.Sprintf("%v/%s", ks, bcName(bc))
			x, y := fitData[T](r, n, count, ks, bc.Kind)
			want, err := spline.FitBatch(n, x, y, bc)
			require.NoError(t, err)
			pts := pointsFor(r, x, p)
			wantOut := cpuEval(t, want, spline.SharedPoints(pts), p)
			f, err := NewFitter[T](dev, n, count, tridiag.Options{Algorithm: tridiag.Thomas})
			require.NoError(t, err)
			cv, err := fitDevice(t, f, x, y, bc)
			require.NoError(t, err, name)
			dt, err := cuda.Upload(dev, pts)
			require.NoError(t, err)
			var outs [3]*cuda.Buffer[T]
			for q := range outs {
				outs[q], err = cuda.Alloc[T](dev, count*p)
				require.NoError(t, err)
			}
			require.NoError(t, e.EvalDevice(ctx, cv, Points[T]{T: dt, P: p}, Out[T]{Value: outs[0], Deriv: outs[1], Deriv2: outs[2]}), name)
			for q, o := range outs {
				requireBits(t, wantOut[q], download1(t, o, count*p), p, fmt.Sprintf("%s: derivative %d", name, q))
				_ = o.Free()
			}
			_ = dt.Free()
			require.NoError(t, f.Close())
		}
	}
}

// TestFitDeviceScaled fits curves whose slopes overflow (the CPU solves
// for their values scaled down) among ordinary ones: the flagged curves
// are finished on the host, and every moment is the CPU's.
func TestFitDeviceScaled(t *testing.T) {
	const n, count = 3, 6
	x := []float64{0, 10, 20}
	y := make([]float64, n*count)
	for k := range count {
		copy(y[k*n:], []float64{float64(k), 1 - float64(k), 2})
	}
	copy(y[2*n:], []float64{1e308, -1e308, 1e308})
	copy(y[5*n:], []float64{-1e308, 1.5e308, 0})
	want, err := spline.FitBatch(n, x, y, spline.Natural())
	require.NoError(t, err)
	require.False(t, math.IsInf(want.M[2*n+1], 0))
	for _, algo := range []tridiag.Algorithm{tridiag.Thomas, tridiag.Auto} {
		f, err := NewFitter[float64](dev, n, count, tridiag.Options{Algorithm: algo})
		require.NoError(t, err)
		cv, err := fitDevice(t, f, x, y, spline.Natural())
		require.NoError(t, err)
		got := download1(t, cv.M, n*count)
		requireBits(t, want.M[2*n:3*n], got[2*n:3*n], n, "scaled curve 2")
		requireBits(t, want.M[5*n:], got[5*n:], n, "scaled curve 5")
		if algo == tridiag.Thomas {
			requireBits(t, want.M, got, n, "all curves")
		}
		require.NoError(t, f.Close())
	}
}

// TestFitDeviceErrors gives the device fit bad input and requires the
// CPU's error, wrapping spline.ErrInput, naming the curve and index.
func TestFitDeviceErrors(t *testing.T) {
	const n, count = 6, 5
	r := rand.New(rand.NewPCG(31, 4))
	good := func(ks knotSet, kind spline.Kind) ([]float64, []float64) {
		return fitData[float64](r, n, count, ks, kind)
	}
	type errCase struct {
		name string
		x, y []float64
		bc   spline.Boundary
	}
	var cases []errCase
	{
		x, y := good(sharedUneven, spline.KindNatural)
		x[3] = x[2]
		cases = append(cases, errCase{"shared knots repeat", x, y, spline.Natural()})
	}
	{
		x, y := good(sharedUneven, spline.KindNatural)
		x[4] = math.NaN()
		cases = append(cases, errCase{"shared knot NaN", x, y, spline.Clamped(1, 2)})
	}
	{
		x, y := good(sharedUneven, spline.KindNatural)
		x[0], x[n-1] = -1e308, 1e308
		cases = append(cases, errCase{"shared knots span too far", x, y, spline.Natural()})
	}
	{
		x, y := good(perCurve, spline.KindNatural)
		x[3*n+2] = x[3*n+1] - 1
		x[4*n+1] = math.Inf(1)
		cases = append(cases, errCase{"per-curve knots decrease", x, y, spline.Natural()})
	}
	{
		x, y := good(perCurve, spline.KindPeriodic)
		y[2*n+4] = math.NaN()
		y[3*n+1] = math.Inf(-1)
		cases = append(cases, errCase{"value NaN", x, y, spline.Periodic()})
	}
	{
		x, y := good(sharedUneven, spline.KindPeriodic)
		y[3*n+n-1] += 1e-3
		cases = append(cases, errCase{"periodic ends differ", x, y, spline.Periodic()})
	}
	{
		x := []float64{0, 1e-10, 2e-10, 3e-10, 4e-10, 5e-10}
		y := make([]float64, n*count)
		y[1*n+2] = 1e308
		cases = append(cases, errCase{"moments overflow", x, y, spline.Natural()})
	}
	{
		x, y := good(sharedUneven, spline.KindClamped)
		cases = append(cases, errCase{"clamped derivatives count", x, y, spline.ClampedEach([]float64{1, 2}, []float64{3, 4})})
	}
	{
		x, y := good(sharedUneven, spline.KindClamped)
		cases = append(cases, errCase{"clamped derivative Inf", x, y, spline.ClampedEach(make([]float64, count), []float64{0, 0, math.Inf(1), 0, 0})})
	}
	f, err := NewFitter[float64](dev, n, count, tridiag.Options{})
	require.NoError(t, err)
	defer f.Close()
	for _, c := range cases {
		_, want := spline.FitBatch(n, c.x, c.y, c.bc)
		require.Error(t, want, c.name)
		_, got := fitDevice(t, f, c.x, c.y, c.bc)
		require.ErrorIs(t, got, spline.ErrInput, c.name)
		require.EqualError(t, got, want.Error(), c.name)
	}
	// The fitter works after the errors: no flag left set.
	x, y := good(sharedUneven, spline.KindNatural)
	want, err := spline.FitBatch(n, x, y, spline.Natural())
	require.NoError(t, err)
	cv, err := fitDevice(t, f, x, y, spline.Natural())
	require.NoError(t, err)
	requireClose(t, want.M, download1(t, cv.M, n*count), n, 1e-14, "after the errors")
}

// TestFitDeviceShapes checks the buffer lengths and a closed fitter.
func TestFitDeviceShapes(t *testing.T) {
	ctx := context.Background()
	_, err := NewFitter[float64](dev, 1, 3, tridiag.Options{})
	require.ErrorIs(t, err, spline.ErrInput)
	_, err = NewFitter[float64](nil, 4, 3, tridiag.Options{})
	require.ErrorIs(t, err, spline.ErrDevice)
	f, err := NewFitter[float64](dev, 4, 3, tridiag.Options{})
	require.NoError(t, err)
	buf := func(n int) *cuda.Buffer[float64] {
		b, err := cuda.Upload(dev, make([]float64, n))
		require.NoError(t, err)
		t.Cleanup(func() { _ = b.Free() })
		return b
	}
	x := buf(4)
	require.NoError(t, x.CopyFrom([]float64{0, 1, 2, 3}))
	_, err = f.FitDevice(ctx, x, buf(11), spline.Natural())
	require.ErrorIs(t, err, spline.ErrInput)
	_, err = f.FitDevice(ctx, buf(5), buf(12), spline.Natural())
	require.ErrorIs(t, err, spline.ErrInput)
	_, err = f.FitDeviceInto(ctx, x, buf(12), buf(11), spline.Natural())
	require.ErrorIs(t, err, spline.ErrInput)
	m := buf(12)
	cv, err := f.FitDeviceInto(ctx, x, buf(12), m, spline.Natural())
	require.NoError(t, err)
	assert.Same(t, m, cv.M)
	require.NoError(t, f.Close())
	_, err = f.FitDeviceInto(ctx, x, buf(12), m, spline.Natural())
	require.ErrorIs(t, err, ErrFitterClosed)
}
