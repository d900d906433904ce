//go:build cudaemu

package splineemu

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/spline"
	"github.com/bandsolve/bandsolve/tridiag"
)

// sameBits reports whether a and b are the same float, any NaN matching
// any NaN.
func sameBits[T tridiag.Float](a, b T) bool {
	if a != a && b != b {
		return true
	}
	return a == b && math.Signbit(float64(a)) == math.Signbit(float64(b))
}

func fit[T tridiag.Float](t *testing.T, r *rand.Rand, n, count int, perCurve bool, bc spline.Boundary) *spline.Curves[T] {
	t.Helper()
	var x []T
	sets := 1
	if perCurve {
		sets = count
	}
	for range sets {
		v := r.Float64()*4 - 2
		for range n {
			x = append(x, T(v))
			v += 0.05 + r.Float64()
		}
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

func points[T tridiag.Float](r *rand.Rand, x []T, p int) []T {
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

// checkEval runs the evaluation kernel with several groupings of curves
// and requires: every NaN or infinite result flags its curve (and the
// batch), and the results, the flagged curves' non-finite ones finished
// by the CPU's own functions as splinegpu does, are the CPU evaluator's
// bit for bit.
func checkEval[T tridiag.Float](t *testing.T, cv *spline.Curves[T], pts spline.Points[T], name string) {
	t.Helper()
	count, n := cv.Count, cv.N
	p := len(pts.T)
	if pts.PerCurve {
		p /= count
	}
	ev, err := spline.NewEvaluator[T](nil)
	require.NoError(t, err)
	var want [3][]T
	for q := range want {
		want[q] = make([]T, count*p)
	}
	require.NoError(t, ev.Eval(context.Background(), cv, pts, spline.Out[T]{Value: want[0], Deriv: want[1], Deriv2: want[2]}))
	for _, grouping := range []struct{ cpk, gy, bd int }{{1, count, 256}, {3, 2, 64}, {64, 1, 1024}} {
		var got [3][]T
		for q := range got {
			got[q] = make([]T, count*p)
		}
		e := &Eval[T]{GX: (p + grouping.bd - 1) / grouping.bd, BD: grouping.bd, GY: min(grouping.gy, (count+grouping.cpk-1)/grouping.cpk), CPK: grouping.cpk,
			X: cv.X, Y: cv.Y, M: cv.M, T: pts.T, N: n, Count: count, P: p,
			Val: got[0], Der: got[1], Der2: got[2], Flags: make([]uint32, count+1)}
		if cv.Kind == spline.KindPeriodic {
			e.Periodic = 1
		}
		if len(cv.X) != n {
			e.XS = int64(n)
		}
		if pts.PerCurve {
			e.TS = int64(p)
		}
		e.Run()
		anyFlag := false
		for k := range count {
			tk := pts.T
			if pts.PerCurve {
				tk = tk[k*p : (k+1)*p]
			}
			for q := range got {
				for j := range p {
					v := got[q][k*p+j]
					if v-v == 0 {
						continue
					}
					require.NotZero(t, e.Flags[k], "%s cpk=%d: curve %d derivative %d at point %d is %v but not flagged", name, grouping.cpk, k, q, j, v)
					got[q][k*p+j] = []func(int, T) T{cv.Eval, cv.Deriv, cv.Deriv2}[q](k, tk[j])
				}
			}
			anyFlag = anyFlag || e.Flags[k] != 0
		}
		require.Equal(t, anyFlag, e.Flags[count] != 0, "%s: the batch flag", name)
		for q := range got {
			for i := range got[q] {
				if !sameBits(want[q][i], got[q][i]) {
					require.Failf(t, "results differ", "%s cpk=%d: curve %d, point %d, derivative %d: kernel %v, CPU %v", name, grouping.cpk, i/p, i%p, q, got[q][i], want[q][i])
				}
			}
		}
	}
}

// checkIntegrate runs the integration kernel (two grids: one thread per
// curve, and grid-stride over fewer) and requires the CPU's bits, the
// flagged curves finished by Curves.Integral.
func checkIntegrate[T tridiag.Float](t *testing.T, cv *spline.Curves[T], a, b []T, name string) {
	t.Helper()
	count := cv.Count
	ev, err := spline.NewEvaluator[T](nil)
	require.NoError(t, err)
	want := make([]T, count)
	require.NoError(t, ev.Integrate(context.Background(), cv, a, b, want))
	pick := func(v []T, k int) T {
		if len(v) == 1 {
			return v[0]
		}
		return v[k]
	}
	lo, hi, bs := a, b, int64(0)
	if len(a) != 1 || len(b) != 1 {
		lo, hi, bs = make([]T, count), make([]T, count), 1
		for k := range count {
			lo[k], hi[k] = pick(a, k), pick(b, k)
		}
	}
	for _, gx := range []int{(count + Block - 1) / Block, 1} {
		got := make([]T, count)
		e := &Integrate[T]{GX: gx, X: cv.X, Y: cv.Y, M: cv.M, N: cv.N, Count: count, Lo: lo, Hi: hi, BS: bs, Out: got, Flags: make([]uint32, count+1)}
		if cv.Kind == spline.KindPeriodic {
			e.Periodic = 1
		}
		if len(cv.X) != cv.N {
			e.XS = int64(cv.N)
		}
		e.Run()
		for k, v := range got {
			if v-v != 0 && !(a[0] != a[0]) {
				if pick(a, k) == pick(a, k) && pick(b, k) == pick(b, k) {
					require.NotZero(t, e.Flags[k], "%s: integral of curve %d is %v but not flagged", name, k, v)
				}
			}
			if e.Flags[k] != 0 {
				got[k] = cv.Integral(k, pick(a, k), pick(b, k))
			}
			if !sameBits(want[k], got[k]) {
				require.Failf(t, "integrals differ", "%s gx=%d: curve %d: kernel %v, CPU %v", name, gx, k, got[k], want[k])
			}
		}
	}
}

// TestEvalBitExact: the evaluation kernel against the CPU evaluator, every
// end condition, shared and per-curve knots and points, both precisions.
func TestEvalBitExact(t *testing.T) {
	t.Run("f64", func(t *testing.T) { evalBitExact[float64](t) })
	t.Run("f32", func(t *testing.T) { evalBitExact[float32](t) })
}

func evalBitExact[T tridiag.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, bc := range []spline.Boundary{spline.Natural(), spline.Clamped(1, -2), spline.Periodic()} {
		for _, sh := range []struct{ n, count, p int }{{2, 5, 9}, {3, 1, 1}, {37, 53, 301}, {129, 70, 37}} {
			for _, perKnots := range []bool{false, true} {
				cv := fit[T](t, r, sh.n, sh.count, perKnots, bc)
				name := fmt.Sprintf("%v n=%d count=%d p=%d perCurveKnots=%t", bc.Kind, sh.n, sh.count, sh.p, perKnots)
				shared := points(r, cv.X, sh.p)
				checkEval(t, cv, spline.SharedPoints(shared), name+" shared points")
				var own []T
				for k := range sh.count {
					own = append(own, points(r, cv.Knots(k), sh.p)...)
				}
				checkEval(t, cv, spline.CurvePoints(own), name+" points per curve")
				slices.Sort(shared)
				checkEval(t, cv, spline.SharedPoints(shared), name+" sorted shared points")
			}
		}
	}
}

// TestIntegrateBitExact: the integration kernel against the CPU.
func TestIntegrateBitExact(t *testing.T) {
	t.Run("f64", func(t *testing.T) { integrateBitExact[float64](t) })
	t.Run("f32", func(t *testing.T) { integrateBitExact[float32](t) })
}

func integrateBitExact[T tridiag.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, bc := range []spline.Boundary{spline.Natural(), spline.Clamped(0.5, 3), spline.Periodic()} {
		for _, perKnots := range []bool{false, true} {
			const n, count = 41, 300
			cv := fit[T](t, r, n, count, perKnots, bc)
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
			checkIntegrate(t, cv, a[5:6], b[5:6], name+" shared bounds")
			checkIntegrate(t, cv, a[5:6], b, name+" shared lower bound")
		}
	}
}

// TestCarefulCases: values near 1e300, knots 1.5e-160 apart, values near
// the largest float64, far points, and float32 values near 1e32: the
// kernel flags what the CPU evaluates carefully and agrees elsewhere.
func TestCarefulCases(t *testing.T) {
	sweep := func(lo, hi float64) []float64 {
		var pts []float64
		for e := -4.0; e <= 308; e += 0.5 {
			pts = append(pts, math.Pow(10, e), -math.Pow(10, e), hi+math.Pow(10, e), lo+(hi-lo)*math.Mod(e, 1))
		}
		return append(pts, math.MaxFloat64, -math.MaxFloat64, lo, hi, math.NaN(), math.Inf(1), math.Inf(-1))
	}
	big, err := spline.FitBatch(3, []float64{0, 0.01, 0.02}, []float64{0, 1e300, 0, 0, 1, 0, 1, 2, 3}, spline.Natural())
	require.NoError(t, err)
	checkEval(t, big, spline.SharedPoints(sweep(0, 0.02)), "values near 1e300")
	checkIntegrate(t, big, []float64{-1e300, 0, -0.5}, []float64{1e300, 0.02, 0.7}, "values near 1e300")

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
		checkIntegrate(t, cv, []float64{0, -s}, []float64{6 * s, 9 * s}, name)
	}

	huge, err := spline.FitBatch(4, []float64{0, 10, 20, 30}, []float64{0, 1.5e308, -1.5e308, 1e308, 1, 2, 3, 4}, spline.Natural())
	require.NoError(t, err)
	checkEval(t, huge, spline.SharedPoints(sweep(0, 30)), "values near the largest float64")
	checkIntegrate(t, huge, []float64{0, -5}, []float64{30, 31}, "values near the largest float64")

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
