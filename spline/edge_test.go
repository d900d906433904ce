package spline_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/spline"
)

// Values near 1e300 on close knots: beyond the end knots the value and
// the slope are finite (3.97e303 at t = −0.2) although (b³ − b)·M alone
// overflows. Every finite exact answer must come back to rounding, and
// every answer beyond the range of float64 as ±Inf of the right sign.
func TestNoOverflowBeyondTheEnds(t *testing.T) {
	x := []float64{0, 0.01, 0.02}
	y := []float64{0, 1e300, 0}
	cv, err := spline.FitBatch(3, x, y, spline.Natural())
	require.NoError(t, err)
	m := refMoments(x, y, refNatural, 0, 0)
	for i := range m {
		want, _ := m[i].Float64()
		assert.InDelta(t, want, cv.M[i], 1e-15*math.Abs(want)+1e-300, "moment %d", i)
	}
	ref, _ := refAt(x, y, m, -0.2, 0)
	want, _ := ref.Float64()
	assert.InEpsilon(t, 3.97e303, want, 1e-12, "the reference")
	assert.InEpsilon(t, want, cv.Eval(0, -0.2), 1e-14, "S(−0.2)")

	var pts []float64
	for e := -4.0; e <= 308; e += 0.25 {
		pts = append(pts, math.Pow(10, e), -math.Pow(10, e), 0.02+math.Pow(10, e))
	}
	pts = append(pts, math.MaxFloat64, -math.MaxFloat64)
	finite := 0
	for _, tt := range pts {
		for q, f := range []func(int, float64) float64{cv.Eval, cv.Deriv} {
			ref, scale := refAt(x, y, m, tt, q)
			got := f(0, tt)
			assert.True(t, closeTo(got, ref, scale, 1e-13), "derivative %d at %g: got %g, want %s", q, tt, got, ref.Text('g', 17))
			if r, _ := ref.Float64(); !math.IsInf(r, 0) {
				finite++
			}
		}
	}
	assert.Greater(t, finite, 100, "the sweep checks finite answers")
}

// The same in float32, where the limit is 3.4e38.
func TestNoOverflowBeyondTheEndsFloat32(t *testing.T) {
	x := []float32{0, 0.01, 0.02}
	y := []float32{0, 1e32, 0}
	cv, err := spline.FitBatch(3, x, y, spline.Natural())
	require.NoError(t, err)
	// Reference from the float32 data exactly.
	xd, yd := []float64{float64(x[0]), float64(x[1]), float64(x[2])}, []float64{0, float64(y[1]), 0}
	m := refMoments(xd, yd, refNatural, 0, 0)
	for _, tt := range []float32{-0.2, -1, 1, 5, -50, 1e3} {
		for q, f := range []func(int, float32) float32{cv.Eval, cv.Deriv} {
			ref, _ := refAt(xd, yd, m, float64(tt), q)
			r, _ := ref.Float64()
			got := f(0, tt)
			if math.Abs(r) > math.MaxFloat32 {
				assert.True(t, math.IsInf(float64(got), int(math.Copysign(1, r))), "derivative %d at %g: %g, want %g", q, tt, got, r)
				continue
			}
			assert.InEpsilon(t, r, float64(got), 1e-5, "derivative %d at %g", q, tt)
		}
	}
}

// Every fit path checks the data: a natural or periodic fit of two knots
// (which solves no system), and the fits that solve one, refuse NaN and
// infinite values with an error wrapping ErrInput that names the curve
// and the index into y.
func TestNonFiniteDataNamed(t *testing.T) {
	for _, bc := range []spline.Boundary{spline.Natural(), spline.Clamped(0, 1), spline.Periodic()} {
		for _, n := range []int{2, 3, 6} {
			for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
				x := make([]float64, n)
				y := make([]float64, 3*n)
				for i := range x {
					x[i] = float64(i)
				}
				const k, i = 2, 1 // curve 2, knot 1
				y[k*n+i] = bad
				_, err := spline.FitBatch(n, x, y, bc)
				require.ErrorIs(t, err, spline.ErrInput, "%v n=%d %v", bc.Kind, n, bad)
				assert.ErrorContains(t, err, "curve 2", "%v n=%d", bc.Kind, n)
				assert.ErrorContains(t, err, fmt.Sprintf("y[%d]", k*n+i), "%v n=%d", bc.Kind, n)
			}
		}
	}
}

// Knots whose differences overflow are refused, naming the curve and the
// knots; a span whose double fits is fitted.
func TestHugeKnots(t *testing.T) {
	y := []float64{1, 2, 0}
	_, err := spline.FitBatch(3, []float64{-9e307, 0, 9e307}, y, spline.Natural())
	require.ErrorIs(t, err, spline.ErrInput)
	assert.ErrorContains(t, err, "x[2] = 9e+307")

	x := []float64{0, 1, 2, -9e307, 0, 9e307}
	_, err = spline.FitBatch(3, x, []float64{1, 2, 0, 1, 2, 0}, spline.Clamped(0, 0))
	require.ErrorIs(t, err, spline.ErrInput)
	assert.ErrorContains(t, err, "curve 1")
	assert.ErrorContains(t, err, "x[5]")

	_, err = spline.FitBatch(3, []float32{-2e38, 0, 2e38}, []float32{1, 2, 0}, spline.Natural())
	require.ErrorIs(t, err, spline.ErrInput)

	cv, err := spline.FitBatch(3, []float64{-4e307, 0, 4e307}, y, spline.Natural())
	require.NoError(t, err)
	for i, xi := range cv.X {
		assert.Equal(t, y[i], cv.Eval(0, xi), "knot %d", i)
	}
	v := cv.Eval(0, 2e307)
	assert.False(t, math.IsNaN(v) || math.IsInf(v, 0), "S(2e307) = %v", v)
}

// A periodic fit does not depend on the scale of its knots: on knots
// 1e160 apart the corner product of its cyclic system, h²/36, would
// overflow; the fit forms (α/γ)·β instead and gives the values of the
// same fit on knots 1 apart, to rounding. (Beyond about 1e162 the
// moments, of order y/h², underflow, as SciPy's coefficients do.)
func TestPeriodicWideKnots(t *testing.T) {
	y := []float64{0, 1, -2, 3, 0}
	at := func(h float64) []float64 {
		x := make([]float64, len(y))
		for i := range x {
			x[i] = float64(i) * h
		}
		cv, err := spline.FitBatch(len(y), x, y, spline.Periodic())
		require.NoError(t, err, "h = %g", h)
		var v []float64
		for _, u := range []float64{0.5, 1.5, 2.25, 3.3} {
			v = append(v, cv.Eval(0, u*h))
		}
		return v
	}
	want := at(1)
	for _, h := range []float64{1e100, 1e150, 1e160} {
		got := at(h)
		for i := range want {
			assert.InDelta(t, want[i], got[i], 1e-13, "h = %g, point %d", h, i)
		}
	}
}

// Values close to the largest float64: the differences of slopes overflow
// although the second derivatives do not; the fit scales the curve.
func TestHugeValuesFit(t *testing.T) {
	x := []float64{0, 10, 20, 30}
	y := []float64{0, 1.5e308, -1.5e308, 1e308, 1, 2, 3, 4}
	for _, c := range []struct {
		bc   spline.Boundary
		kind refKind
	}{{spline.Natural(), refNatural}, {spline.Clamped(1e308, -1e308), refClamped}} {
		cv, err := spline.FitBatch(4, x, y, c.bc)
		require.NoError(t, err, c.bc.Kind)
		for k := range 2 {
			m := refMoments(x, y[4*k:4*k+4], c.kind, 1e308, -1e308)
			big := 0.0
			for i := range m {
				v, _ := m[i].Float64()
				big = max(big, math.Abs(v))
			}
			for i := range m {
				want, _ := m[i].Float64()
				assert.InDelta(t, want, cv.M[4*k+i], 1e-14*big, "%v curve %d moment %d", c.bc.Kind, k, i)
			}
			for i, xi := range x {
				assert.Equal(t, y[4*k+i], cv.Eval(k, xi))
			}
		}
		// The same knots given per curve (solved by tridiag): the same bits.
		own, err := spline.FitBatch(4, append(slices.Clone(x), x...), y, c.bc)
		require.NoError(t, err, c.bc.Kind)
		assert.Equal(t, cv.M, own.M, c.bc.Kind)
	}
	// Second derivatives beyond the range: refused, naming the curve.
	_, err := spline.FitBatch(3, []float64{0, 1e-200, 2e-200}, []float64{0, 1, 0, 0, 1, 0}, spline.Natural())
	require.ErrorIs(t, err, spline.ErrInput)
	assert.ErrorContains(t, err, "curve 0")
	assert.ErrorContains(t, err, "second derivatives")
}

// The bad inputs a SciPy CubicSpline user meets, each refused with
// ErrInput.
func TestBadInputs(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for name, c := range map[string]struct {
		n    int
		x, y []float64
		bc   spline.Boundary
		want string
	}{
		"one knot":            {1, []float64{0}, []float64{1}, spline.Natural(), "knots"},
		"no knots":            {0, nil, nil, spline.Natural(), "knots"},
		"unsorted knots":      {4, []float64{0, 2, 1, 3}, []float64{1, 2, 3, 4}, spline.Natural(), "x[1] = 2, x[2] = 1"},
		"duplicate knots":     {4, []float64{0, 1, 1, 3}, []float64{1, 2, 3, 4}, spline.Clamped(0, 0), "x[1] = 1, x[2] = 1"},
		"decreasing knots":    {3, []float64{3, 2, 1}, []float64{1, 2, 3}, spline.Natural(), "do not increase"},
		"NaN knot":            {3, []float64{0, nan, 2}, []float64{1, 2, 3}, spline.Natural(), "x[1] = NaN"},
		"infinite knot":       {3, []float64{0, 1, inf}, []float64{1, 2, 3}, spline.Natural(), "x[2] = +Inf"},
		"per-curve NaN knot":  {2, []float64{0, 1, 0, nan}, []float64{1, 2, 3, 4}, spline.Natural(), "curve 1"},
		"periodic ends":       {4, []float64{0, 1, 2, 3}, []float64{1, 2, 3, 1.001}, spline.Periodic(), "y[0] = 1 and y[3] = 1.001"},
		"periodic two ends":   {2, []float64{0, 1}, []float64{1, 2}, spline.Periodic(), "differ"},
		"clamped NaN start":   {3, []float64{0, 1, 2}, []float64{1, 2, 3}, spline.Clamped(nan, 0), "Start[0] = NaN"},
		"clamped Inf end":     {3, []float64{0, 1, 2}, []float64{1, 2, 3}, spline.ClampedEach([]float64{0}, []float64{-inf}), "End[0] = -Inf"},
		"values not curves":   {3, []float64{0, 1, 2}, []float64{1, 2, 3, 4}, spline.Natural(), "curves"},
		"slopes too steep":    {3, []float64{0, 1e-300, 2e-300}, []float64{0, 1e300, 0}, spline.Natural(), "curve 0"},
		"slopes overflow":     {3, []float64{0, 1e-310, 2e-310}, []float64{0, 0.5, 0}, spline.Natural(), "slopes between knots 0 and 2"},
		"knots of wrong size": {3, []float64{0, 1}, []float64{1, 2, 3}, spline.Natural(), "x has 2 knots"},
	} {
		_, err := spline.FitBatch(c.n, c.x, c.y, c.bc)
		require.ErrorIs(t, err, spline.ErrInput, name)
		assert.ErrorContains(t, err, c.want, name)
	}
}

// Exactly at the knots, the end points included, a spline returns the
// data; at NaN it returns NaN.
func TestKnotsAndNaN(t *testing.T) {
	x := []float64{-1, -0.3, 0.4, 2, 2.5, 4}
	y := []float64{3, -1, 0.25, 7, 2, 3}
	for _, bc := range []spline.Boundary{spline.Natural(), spline.Clamped(2, -1), spline.Periodic()} {
		cv, err := spline.FitBatch(len(x), x, y, bc)
		require.NoError(t, err, bc.Kind)
		for i, xi := range x {
			assert.Equal(t, y[i], cv.Eval(0, xi), "%v knot %d", bc.Kind, i)
		}
		assert.True(t, math.IsNaN(cv.Eval(0, math.NaN())), bc.Kind)
		assert.True(t, math.IsNaN(cv.Deriv(0, math.NaN())), bc.Kind)
		if bc.Kind == spline.KindClamped {
			assert.InDelta(t, 2, cv.Deriv(0, x[0]), 1e-13)
			assert.InDelta(t, -1, cv.Deriv(0, x[5]), 1e-13)
		}
		if bc.Kind == spline.KindPeriodic {
			// One period on: the same values.
			for i, xi := range x {
				assert.InDelta(t, y[i], cv.Eval(0, xi+5), 1e-14, "knot %d + period", i)
				assert.InDelta(t, y[i], cv.Eval(0, xi-10), 1e-14, "knot %d − 2 periods", i)
			}
		}
	}
}

// At ±Inf a natural or clamped curve has the limit of its end cubic:
// ±Inf, or the constant of a constant end; a periodic curve has none.
func TestInfinitePoints(t *testing.T) {
	inf := math.Inf(1)
	line, err := spline.FitBatch(2, []float64{0, 2}, []float64{1, 5, 3, 3}, spline.Natural())
	require.NoError(t, err)
	assert.Equal(t, inf, line.Eval(0, inf))
	assert.Equal(t, -inf, line.Eval(0, -inf))
	assert.Equal(t, 2.0, line.Deriv(0, inf))
	assert.Equal(t, 3.0, line.Eval(1, inf), "a constant stays constant")
	assert.Equal(t, 3.0, line.Eval(1, -inf))
	assert.Equal(t, 0.0, line.Deriv(1, -inf))

	cv, err := spline.FitBatch(3, []float64{0, 1, 2}, []float64{0, 1, 0}, spline.Natural())
	require.NoError(t, err)
	// The last cubic is 1 − 1.5u² + 0.5u³ around x = 1 (M = 0, −3, 0), so
	// it goes to +Inf on the right; the first is 1.5t − 0.5t³, +Inf on the
	// left.
	assert.Equal(t, inf, cv.Eval(0, inf))
	assert.Equal(t, inf, cv.Eval(0, -inf))
	assert.Equal(t, inf, cv.Deriv(0, inf))
	assert.Equal(t, -inf, cv.Deriv(0, -inf))

	per, err := spline.FitBatch(3, []float64{0, 1, 2}, []float64{0, 1, 0}, spline.Periodic())
	require.NoError(t, err)
	assert.True(t, math.IsNaN(per.Eval(0, inf)))
	assert.True(t, math.IsNaN(per.Deriv(0, -inf)))
}

// Two knots: natural is the straight line, periodic the constant, clamped
// the cubic with the given end slopes.
func TestTwoKnots(t *testing.T) {
	x := []float64{1, 3}
	cv, err := spline.FitBatch(2, x, []float64{2, 4}, spline.Natural())
	require.NoError(t, err)
	assert.Equal(t, 3.0, cv.Eval(0, 2))
	assert.Equal(t, 6.0, cv.Eval(0, 5))
	per, err := spline.FitBatch(2, x, []float64{2, 2}, spline.Periodic())
	require.NoError(t, err)
	assert.Equal(t, 2.0, per.Eval(0, 10.3))
	assert.Equal(t, 0.0, per.Deriv(0, -7))
	// t³ on [1, 3]: slopes 3 and 27.
	cl, err := spline.FitBatch(2, x, []float64{1, 27}, spline.Clamped(3, 27))
	require.NoError(t, err)
	assert.InDelta(t, 8, cl.Eval(0, 2), 1e-13)
	assert.InDelta(t, 12, cl.Deriv(0, 2), 1e-13)
}

// Points so far from the knots that t − x[0] overflows: the value is
// still finite, and a periodic curve still wraps.
func TestFarPoints(t *testing.T) {
	line, err := spline.FitBatch(3, []float64{-8e307, -7.9e307, -7.8e307}, []float64{0, 1, 2}, spline.Natural())
	require.NoError(t, err)
	// Slope 1/1e306: 1 + (1.7e308 + 7.9e307)/1e306 = 250.
	assert.InEpsilon(t, 250, line.Eval(0, 1.7e308), 1e-12)
	assert.InEpsilon(t, 1e-306, line.Deriv(0, 1.7e308), 1e-12)

	per, err := spline.FitBatch(3, []float64{-4e307, 0, 4e307}, []float64{0, 1, 0}, spline.Periodic())
	require.NoError(t, err)
	// 1.7e308 is 1e307 plus two periods of 8e307.
	assert.InEpsilon(t, per.Eval(0, 1e307), per.Eval(0, 1.7e308), 1e-12)
	assert.InEpsilon(t, per.Eval(0, -1e307), per.Eval(0, -1.7e308), 1e-12)
}

// Knots so close that h²/6 falls below the smallest normal float64 (h
// under 1.5e-154): the values, slopes, curvatures and integrals are those
// of the same curve on unit knots, scaled by powers of two, so h² must not
// underflow to zero or lose its digits. Scaling knots by s and values by c
// scales S by c, S′ by c/s, S″ by c/s² and ∫ by c·s, exactly in binary.
func TestTinyKnotSpacing(t *testing.T) {
	xu := []float64{0, 1, 2.5, 3, 4.25, 6}
	yu := []float64{0.5, 1, -0.25, -1, 0.75, 0.5}
	pts := []float64{-1.5, 0, 0.3, 1, 1.7, 2.9, 3.5, 5.2, 6, 7.5}
	for _, sc := range []struct{ s, c int }{{-200, -150}, {-520, -200}, {-600, -200}, {-1000, -1000}} {
		s, c := math.Ldexp(1, sc.s), math.Ldexp(1, sc.c)
		for _, bc := range []spline.Boundary{spline.Natural(), spline.Clamped(0.5, -1), spline.Periodic()} {
			unit, err := spline.FitBatch(len(xu), xu, yu, bc)
			require.NoError(t, err)
			x, y := make([]float64, len(xu)), make([]float64, len(yu))
			for i := range xu {
				x[i], y[i] = xu[i]*s, yu[i]*c
			}
			d := bc
			if bc.Kind == spline.KindClamped {
				d = spline.Clamped(0.5*c/s, -1*c/s)
			}
			name := fmt.Sprintf("s = 2^%d c = 2^%d %v", sc.s, sc.c, bc.Kind)
			// The curve of the scaled data: its moments are the unit
			// curve's times c/s², exactly.
			cv := &spline.Curves[float64]{N: len(x), Count: 1, Kind: bc.Kind, X: x, Y: y, M: make([]float64, len(x))}
			for i, v := range unit.M {
				cv.M[i] = v * c / s / s
			}
			if bc.Kind != spline.KindPeriodic {
				fit, err := spline.FitBatch(len(x), x, y, d)
				require.NoError(t, err, name)
				big := 0.0
				for _, v := range cv.M {
					big = max(big, math.Abs(v))
				}
				for i, v := range cv.M {
					assert.InDelta(t, v, fit.M[i], 1e-13*big, "%s fitted moment %d", name, i)
				}
			}
			scales := []float64{c, c / s, c / s / s}
			ts := make([]float64, len(pts))
			for j, p := range pts {
				ts[j] = p * s
			}
			out := spline.Out[float64]{Value: make([]float64, len(ts)), Deriv: make([]float64, len(ts)), Deriv2: make([]float64, len(ts))}
			ev, err := spline.NewEvaluator[float64](nil)
			require.NoError(t, err)
			require.NoError(t, ev.Eval(t.Context(), cv, spline.SharedPoints(ts), out))
			batch := [][]float64{out.Value, out.Deriv, out.Deriv2}
			for j, p := range pts {
				for q, f := range []func(int, float64) float64{cv.Eval, cv.Deriv, cv.Deriv2} {
					want := []func(int, float64) float64{unit.Eval, unit.Deriv, unit.Deriv2}[q](0, p) * scales[q]
					tol := 1e-13 * scales[q] * max(1, math.Abs(want/scales[q]))
					assert.InDelta(t, want, f(0, ts[j]), tol, "%s derivative %d at %g·s", name, q, p)
					assert.InDelta(t, want, batch[q][j], tol, "%s batch derivative %d at %g·s", name, q, p)
				}
			}
			for i := range x {
				assert.Equal(t, y[i], cv.Eval(0, x[i]), "%s knot %d", name, i)
			}
			if cs := c * s; cs > 0x1p-1000 {
				for _, ab := range [][2]float64{{0, 6}, {-1, 2.2}, {0.4, 7}} {
					want := unit.Integral(0, ab[0], ab[1]) * cs
					assert.InDelta(t, want, cv.Integral(0, ab[0]*s, ab[1]*s), 1e-13*cs*max(1, math.Abs(want/cs)), "%s ∫ %v·s", name, ab)
				}
			}
		}
	}
}

// A non-finite clamped end derivative given per curve is refused naming
// its curve and its index; one shared by every curve says so.
func TestNonFiniteEndDerivativeNamed(t *testing.T) {
	x := []float64{0, 1, 2}
	y := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}
	_, err := spline.FitBatch(3, x, y, spline.ClampedEach([]float64{0, 1, 2}, []float64{0, math.Inf(-1), 2}))
	require.ErrorIs(t, err, spline.ErrInput)
	assert.ErrorContains(t, err, "End[1] = -Inf")
	assert.ErrorContains(t, err, "curve 1")

	_, err = spline.FitBatch(3, x, y, spline.Clamped(math.NaN(), 0))
	require.ErrorIs(t, err, spline.ErrInput)
	assert.ErrorContains(t, err, "Start[0] = NaN")
	assert.ErrorContains(t, err, "shared by every curve")
}
