//go:build cuda

package splinegpu

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/spline"
	"github.com/bandsolve/bandsolve/tridiag"
)

// requireBits checks that got is want bit for bit, any NaN matching any
// NaN, naming the first curve and point that differ.
func requireBits[T tridiag.Float](t *testing.T, want, got []T, p int, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i := range want {
		w, g := want[i], got[i]
		if w != w && g != g {
			continue
		}
		same := w == g && math.Signbit(float64(w)) == math.Signbit(float64(g))
		if !same {
			require.Failf(t, "results differ", "%s: curve %d, point %d: GPU %v (%b), CPU %v (%b)", what, i/p, i%p, g, uint64(math.Float64bits(float64(g))), w, uint64(math.Float64bits(float64(w))))
		}
	}
}

// fitCase fits count random curves of n knots (shared or one set per
// curve) with boundary bc on the CPU.
func fitCase[T tridiag.Float](t *testing.T, r *rand.Rand, n, count int, perCurve bool, bc spline.Boundary) *spline.Curves[T] {
	t.Helper()
	knots := func() []T {
		x := make([]T, n)
		v := r.Float64()*4 - 2
		for i := range x {
			x[i] = T(v)
			v += 0.05 + r.Float64()
		}
		return x
	}
	var x []T
	if perCurve {
		for range count {
			x = append(x, knots()...)
		}
	} else {
		x = knots()
	}
	y := make([]T, n*count)
	for k := range count {
		for i := range n {
			y[k*n+i] = T(math.Sin(float64(i)*0.7+float64(k)) + r.Float64())
		}
		if bc.Kind == spline.KindPeriodic {
			y[k*n+n-1] = y[k*n]
		}
	}
	cv, err := spline.FitBatch(n, x, y, bc)
	require.NoError(t, err)
	return cv
}

// pointsFor returns p unsorted points over and around the knots x (every
// curve's), with the end knots, a knot inside, points beyond the ends and
// several periods away, NaN and ±Inf among them.
func pointsFor[T tridiag.Float](r *rand.Rand, x []T, p int) []T {
	lo, hi := slices.Min(x), slices.Max(x)
	span := float64(hi - lo)
	t := make([]T, p)
	for j := range t {
		t[j] = T(float64(lo) - 0.3*span + 1.6*span*r.Float64())
	}
	special := []T{x[0], x[len(x)-1], x[len(x)/2], T(float64(lo) - 3.7*span), T(float64(hi) + 5.2*span), T(math.NaN()), T(math.Inf(1)), T(math.Inf(-1))}
	for i, v := range special {
		if i*7 < p {
			t[i*7] = v
		}
	}
	return t
}

// cpuEval is the CPU evaluator's answer.
func cpuEval[T tridiag.Float](t *testing.T, cv *spline.Curves[T], pts spline.Points[T], p int) [3][]T {
	t.Helper()
	ev, err := spline.NewEvaluator[T](nil)
	require.NoError(t, err)
	var o [3][]T
	for q := range o {
		o[q] = make([]T, cv.Count*p)
	}
	require.NoError(t, ev.Eval(context.Background(), cv, pts, spline.Out[T]{Value: o[0], Deriv: o[1], Deriv2: o[2]}))
	return o
}

// upload copies a host batch of curves to the device.
func upload[T tridiag.Float](t *testing.T, cv *spline.Curves[T]) *Curves[T] {
	t.Helper()
	x, err := cuda.Upload(dev, cv.X)
	require.NoError(t, err)
	y, err := cuda.Upload(dev, cv.Y)
	require.NoError(t, err)
	m, err := cuda.Upload(dev, cv.M)
	require.NoError(t, err)
	t.Cleanup(func() { _ = x.Free(); _ = y.Free(); _ = m.Free() })
	return &Curves[T]{N: cv.N, Count: cv.Count, Kind: cv.Kind, X: x, Y: y, M: m}
}

// checkEval evaluates cv at pts through spline.NewEvaluator on the GPU
// (all three quantities, then each alone) and through EvalDevice, and
// requires the CPU evaluator's bits.
func checkEval[T tridiag.Float](t *testing.T, cv *spline.Curves[T], pts spline.Points[T], name string) {
	t.Helper()
	p := len(pts.T)
	if pts.PerCurve {
		p /= cv.Count
	}
	want := cpuEval(t, cv, pts, p)
	ctx := context.Background()
	ev, err := spline.NewEvaluator[T](dev)
	require.NoError(t, err)
	defer ev.Close()
	assert.Equal(t, dev.Name(), ev.Device().Name())
	var got [3][]T
	for q := range got {
		got[q] = make([]T, cv.Count*p)
		for i := range got[q] {
			got[q][i] = 12345 // overwritten
		}
	}
	require.NoError(t, ev.Eval(ctx, cv, pts, spline.Out[T]{Value: got[0], Deriv: got[1], Deriv2: got[2]}), name)
	for q := range got {
		requireBits(t, want[q], got[q], p, fmt.Sprintf("%s: derivative %d, host slices", name, q))
	}
	for q := range 3 {
		one := make([]T, cv.Count*p)
		var out spline.Out[T]
		*[]*[]T{&out.Value, &out.Deriv, &out.Deriv2}[q] = one
		require.NoError(t, ev.Eval(ctx, cv, pts, out), name)
		requireBits(t, want[q], one, p, fmt.Sprintf("%s: derivative %d alone", name, q))
	}

	g, err := NewEvaluator[T](dev)
	require.NoError(t, err)
	defer g.Close()
	dc := upload(t, cv)
	dt, err := cuda.Upload(dev, pts.T)
	require.NoError(t, err)
	defer dt.Free()
	var outs [3]*cuda.Buffer[T]
	for q := range outs {
		outs[q], err = cuda.Alloc[T](dev, cv.Count*p)
		require.NoError(t, err)
		defer outs[q].Free()
	}
	require.NoError(t, g.EvalDevice(ctx, dc, Points[T]{T: dt, P: p, PerCurve: pts.PerCurve}, Out[T]{Value: outs[0], Deriv: outs[1], Deriv2: outs[2]}), name)
	for q := range outs {
		h := make([]T, cv.Count*p)
		require.NoError(t, outs[q].CopyTo(h))
		requireBits(t, want[q], h, p, fmt.Sprintf("%s: derivative %d, device buffers", name, q))
	}
}

// checkIntegrate integrates cv from a to b on the GPU (host slices and
// device buffers) and requires the CPU evaluator's bits.
func checkIntegrate[T tridiag.Float](t *testing.T, cv *spline.Curves[T], a, b []T, name string) {
	t.Helper()
	ctx := context.Background()
	cpu, err := spline.NewEvaluator[T](nil)
	require.NoError(t, err)
	want := make([]T, cv.Count)
	require.NoError(t, cpu.Integrate(ctx, cv, a, b, want))
	ev, err := spline.NewEvaluator[T](dev)
	require.NoError(t, err)
	defer ev.Close()
	got := make([]T, cv.Count)
	require.NoError(t, ev.Integrate(ctx, cv, a, b, got), name)
	requireBits(t, want, got, 1, name+": integrals, host slices")

	if (len(a) == 1) != (len(b) == 1) {
		return // device bounds are both shared or both per curve
	}
	g, err := NewEvaluator[T](dev)
	require.NoError(t, err)
	defer g.Close()
	dc := upload(t, cv)
	da, err := cuda.Upload(dev, a)
	require.NoError(t, err)
	defer da.Free()
	db, err := cuda.Upload(dev, b)
	require.NoError(t, err)
	defer db.Free()
	dout, err := cuda.Alloc[T](dev, cv.Count)
	require.NoError(t, err)
	defer dout.Free()
	require.NoError(t, g.IntegrateDevice(ctx, dc, da, db, dout), name)
	h := make([]T, cv.Count)
	require.NoError(t, dout.CopyTo(h))
	requireBits(t, want, h, 1, name+": integrals, device buffers")
}

// TestEvalBitExact: every end condition, shared and per-curve knots and
// points, counts that are not powers of two (and fewer points than a
// block, more curves than a block's group), FP32 and FP64: the GPU gives
// the CPU's bits, points outside the knots, at the knots, NaN and ±Inf
// included.
func TestEvalBitExact(t *testing.T) {
	t.Run("f64", func(t *testing.T) { evalBitExact[float64](t) })
	t.Run("f32", func(t *testing.T) { evalBitExact[float32](t) })
}

func evalBitExact[T tridiag.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	shapes := []struct{ n, count, p int }{{2, 5, 9}, {3, 1, 1}, {37, 53, 301}, {1001, 7, 1000}, {129, 300, 37},
		{3072, 3, 2049}, {6144, 2, 1100}, {6145, 2, 1500}}
	for _, bc := range []spline.Boundary{spline.Natural(), spline.Clamped(1, -2), spline.Periodic()} {
		for _, sh := range shapes {
			for _, perKnots := range []bool{false, true} {
				cv := fitCase[T](t, r, sh.n, sh.count, perKnots, bc)
				shared := pointsFor(r, cv.X, sh.p)
				name := fmt.Sprintf("%v n=%d count=%d p=%d perCurveKnots=%t", bc.Kind, sh.n, sh.count, sh.p, perKnots)
				checkEval(t, cv, spline.SharedPoints(shared), name+" shared points")
				var own []T
				for k := range sh.count {
					own = append(own, pointsFor(r, cv.Knots(k), sh.p)...)
				}
				checkEval(t, cv, spline.CurvePoints(own), name+" points per curve")
				sort := slices.Clone(shared)
				slices.Sort(sort)
				checkEval(t, cv, spline.SharedPoints(sort), name+" sorted shared points")
			}
		}
	}
}

// TestIntegrateBitExact: integrals with shared and per-curve bounds,
// reversed, equal, beyond the knots, over several periods, infinite and
// NaN, for every end condition: the CPU's bits.
func TestIntegrateBitExact(t *testing.T) {
	t.Run("f64", func(t *testing.T) { integrateBitExact[float64](t) })
	t.Run("f32", func(t *testing.T) { integrateBitExact[float32](t) })
}

func integrateBitExact[T tridiag.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, bc := range []spline.Boundary{spline.Natural(), spline.Clamped(0.5, 3), spline.Periodic()} {
		for _, perKnots := range []bool{false, true} {
			const n, count = 41, 300
			cv := fitCase[T](t, r, n, count, perKnots, bc)
			name := fmt.Sprintf("%v perCurveKnots=%t", bc.Kind, perKnots)
			lo, hi := slices.Min(cv.X), slices.Max(cv.X)
			span := float64(hi - lo)
			a, b := make([]T, count), make([]T, count)
			for k := range count {
				a[k] = T(float64(lo) - 2*span + 5*span*r.Float64())
				b[k] = T(float64(lo) - 2*span + 5*span*r.Float64())
			}
			a[1] = b[1]
			a[2], b[2] = T(math.Inf(-1)), cv.X[0]
			a[3], b[3] = lo, T(math.Inf(1))
			a[4] = T(math.NaN())
			a[5], b[5] = T(float64(lo)-37*span), T(float64(hi)+41*span)
			checkIntegrate(t, cv, a, b, name+" per-curve bounds")
			checkIntegrate(t, cv, a[:1], b[:1], name+" shared bounds")
			checkIntegrate(t, cv, a[5:6], b, name+" shared lower bound")
		}
	}
}

// TestCarefulCases: the results the CPU finishes with its careful
// evaluation come back the same from the GPU: values near 1e300 whose
// direct formulas overflow beyond the ends, knots 1e-160 apart whose
// h²/6 underflows, values near the largest float64, points so far out
// that t − x[0] overflows, and the float32 twin of the first.
func TestCarefulCases(t *testing.T) {
	sweep := func(lo, hi float64) []float64 {
		var pts []float64
		for e := -4.0; e <= 308; e += 0.5 {
			pts = append(pts, math.Pow(10, e), -math.Pow(10, e), hi+math.Pow(10, e), lo+(hi-lo)*math.Mod(e, 1))
		}
		return append(pts, math.MaxFloat64, -math.MaxFloat64, lo, hi, math.NaN(), math.Inf(1), math.Inf(-1))
	}
	ends := func(cv *spline.Curves[float64]) ([]float64, []float64) {
		var a, b []float64
		for k := range cv.Count {
			x := cv.Knots(k)
			a = append(a, x[0], -1e300, x[0])
			b = append(b, x[len(x)-1], 1e300, x[1])
		}
		return a, b
	}

	// Values near 1e300 on knots 0.01 apart: a batch of that curve and
	// two ordinary ones, so that only some curves are flagged.
	big, err := spline.FitBatch(3, []float64{0, 0.01, 0.02}, []float64{0, 1e300, 0, 0, 1, 0, 1, 2, 3}, spline.Natural())
	require.NoError(t, err)
	checkEval(t, big, spline.SharedPoints(sweep(0, 0.02)), "values near 1e300")

	// Knots 2^-531 ≈ 1.5e-160 apart, values scaled by 2^-200: the
	// moments are the unit curve's times 2^-200/2^-1062, exactly.
	xu := []float64{0, 1, 2.5, 3, 4.25, 6}
	yu := []float64{0.5, 1, -0.25, -1, 0.75, 0.5}
	s, c := math.Ldexp(1, -531), math.Ldexp(1, -200)
	for _, bc := range []spline.Boundary{spline.Natural(), spline.Clamped(0.5, -1), spline.Periodic()} {
		unit, err := spline.FitBatch(len(xu), xu, yu, bc)
		require.NoError(t, err)
		cv := &spline.Curves[float64]{N: len(xu), Count: 2, Kind: bc.Kind, X: make([]float64, len(xu)), Y: make([]float64, 2*len(xu)), M: make([]float64, 2*len(xu))}
		for i := range xu {
			cv.X[i] = xu[i] * s
			cv.Y[i], cv.Y[len(xu)+i] = yu[i]*c, yu[i]
			cv.M[i], cv.M[len(xu)+i] = unit.M[i]*c/s/s, unit.M[i]
		}
		var pts []float64
		for _, p := range []float64{-1.5, 0, 0.3, 1, 1.7, 2.9, 3.5, 5.2, 6, 7.5, -40, 100} {
			pts = append(pts, p*s)
		}
		name := fmt.Sprintf("knots 1.5e-160 apart, %v", bc.Kind)
		checkEval(t, cv, spline.SharedPoints(pts), name)
		a, b := ends(cv)
		checkIntegrate(t, cv, a[:cv.Count], b[:cv.Count], name)
	}

	huge, err := spline.FitBatch(4, []float64{0, 10, 20, 30}, []float64{0, 1.5e308, -1.5e308, 1e308, 1, 2, 3, 4}, spline.Natural())
	require.NoError(t, err)
	checkEval(t, huge, spline.SharedPoints(sweep(0, 30)), "values near the largest float64")
	a, b := ends(huge)
	checkIntegrate(t, huge, a[:2], b[:2], "values near the largest float64")

	far, err := spline.FitBatch(3, []float64{-8e307, -7.9e307, -7.8e307}, []float64{0, 1, 2}, spline.Natural())
	require.NoError(t, err)
	checkEval(t, far, spline.SharedPoints([]float64{1.7e308, -1.7e308, 0, 1e308, math.MaxFloat64}), "far points")
	per, err := spline.FitBatch(3, []float64{-4e307, 0, 4e307}, []float64{0, 1, 0}, spline.Periodic())
	require.NoError(t, err)
	checkEval(t, per, spline.SharedPoints([]float64{1.7e308, -1.7e308, 1e307, -1e307, math.MaxFloat64, -math.MaxFloat64}), "far points, periodic")
	checkIntegrate(t, per, []float64{-1.7e308}, []float64{1.7e308}, "far bounds, periodic")

	big32, err := spline.FitBatch(3, []float32{0, 0.01, 0.02}, []float32{0, 1e32, 0}, spline.Natural())
	require.NoError(t, err)
	var pts32 []float32
	for _, v := range sweep(0, 0.02) {
		pts32 = append(pts32, float32(v))
	}
	checkEval(t, big32, spline.SharedPoints(pts32), "float32 values near 1e32")
}

// TestDeviceErrors: device calls with buffers too short or missing are
// refused with spline.ErrInput; a closed evaluator with ErrClosed.
func TestDeviceErrors(t *testing.T) {
	ctx := context.Background()
	cv, err := spline.FitBatch(3, []float64{0, 1, 2}, []float64{0, 1, 0, 1, 2, 3}, spline.Natural())
	require.NoError(t, err)
	dc := upload(t, cv)
	g, err := NewEvaluator[float64](dev)
	require.NoError(t, err)
	pts, err := cuda.Upload(dev, []float64{0.5, 1.5})
	require.NoError(t, err)
	defer pts.Free()
	short, err := cuda.Alloc[float64](dev, 3)
	require.NoError(t, err)
	defer short.Free()
	assert.ErrorIs(t, g.EvalDevice(ctx, dc, Points[float64]{T: pts, P: 2}, Out[float64]{Value: short}), spline.ErrInput)
	assert.ErrorIs(t, g.EvalDevice(ctx, dc, Points[float64]{T: pts, P: 2, PerCurve: true}, Out[float64]{Deriv: short}), spline.ErrInput)
	assert.ErrorIs(t, g.EvalDevice(ctx, &Curves[float64]{N: 3, Count: 3, X: dc.X, Y: dc.Y, M: dc.M}, Points[float64]{T: pts, P: 2}, Out[float64]{}), spline.ErrInput)
	one, err := cuda.Alloc[float64](dev, 1)
	require.NoError(t, err)
	defer one.Free()
	assert.ErrorIs(t, g.IntegrateDevice(ctx, dc, one, pts, short), spline.ErrInput, "bounds neither both shared nor both per curve")
	assert.NoError(t, g.IntegrateDevice(ctx, dc, pts, short, short), "per-curve bounds longer than the curves")
	assert.NoError(t, g.EvalDevice(ctx, dc, Points[float64]{T: pts, P: 0}, Out[float64]{Value: short}), "nothing to compute")
	require.NoError(t, g.Close())
	four, err := cuda.Alloc[float64](dev, 4)
	require.NoError(t, err)
	defer four.Free()
	assert.ErrorIs(t, g.EvalDevice(ctx, dc, Points[float64]{T: pts, P: 2}, Out[float64]{Value: four}), ErrClosed)
}
