package spline_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/spline"
	"github.com/bandsolve/bandsolve/tridiag"
)

// randomKnots returns n strictly increasing knots from lo to hi with
// random spacing.
func randomKnots(rng *rand.Rand, n int, lo, hi float64) []float64 {
	x := make([]float64, n)
	s := 0.0
	for i := range x {
		x[i] = s
		s += 0.2 + rng.Float64()
	}
	span := x[n-1]
	for i := range x {
		x[i] = lo + (hi-lo)*x[i]/span
	}
	x[n-1] = hi
	return x
}

func cubic(c [4]float64, t float64) (v, d float64) {
	return c[0] + t*(c[1]+t*(c[2]+t*c[3])), c[1] + t*(2*c[2]+t*3*c[3])
}

// A clamped spline through samples of a cubic, with the cubic's end
// slopes, is that cubic: many curves, each its own knots and slopes.
func TestClampedReproducesCubics(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, count = 9, 50
	x := make([]float64, 0, n*count)
	y := make([]float64, 0, n*count)
	d0, dn := make([]float64, count), make([]float64, count)
	polys := make([][4]float64, count)
	for k := range count {
		xs := randomKnots(rng, n, -1-rng.Float64(), 1+rng.Float64())
		p := [4]float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
		polys[k] = p
		for _, xi := range xs {
			v, _ := cubic(p, xi)
			y = append(y, v)
		}
		x = append(x, xs...)
		_, d0[k] = cubic(p, xs[0])
		_, dn[k] = cubic(p, xs[n-1])
	}
	cv, err := spline.FitBatch(n, x, y, spline.ClampedEach(d0, dn))
	require.NoError(t, err)
	worst := 0.0
	for k := range count {
		xs := cv.Knots(k)
		for j := range 200 {
			tt := xs[0] + (xs[n-1]-xs[0])*float64(j)/199
			want, wantD := cubic(polys[k], tt)
			worst = max(worst, math.Abs(cv.Eval(k, tt)-want), math.Abs(cv.Deriv(k, tt)-wantD))
		}
	}
	assert.Less(t, worst, 1e-12, "largest error in value or slope")
}

// A natural spline interpolates, has S″ = 0 at the ends, continuous S′
// across the knots, and reproduces straight lines.
func TestNaturalProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n, count = 12, 5
	x := randomKnots(rng, n, 0, 3)
	y := make([]float64, n*count)
	for i := range y {
		y[i] = rng.NormFloat64()
	}
	// Curve 4 is a line.
	for i, xi := range x {
		y[4*n+i] = 2 - 0.5*xi
	}
	cv, err := spline.FitBatch(n, x, y, spline.Natural())
	require.NoError(t, err)
	for k := range count {
		m := cv.M[k*n : (k+1)*n]
		assert.Zero(t, m[0])
		assert.Zero(t, m[n-1])
		for i := range n {
			assert.InDelta(t, y[k*n+i], cv.Eval(k, x[i]), 1e-13, "curve %d knot %d", k, i)
		}
		for i := 1; i < n-1; i++ {
			const e = 1e-9
			l, r := cv.Deriv(k, x[i]-e), cv.Deriv(k, x[i]+e)
			assert.InDelta(t, l, r, 1e-6, "S′ jumps at curve %d knot %d", k, i)
		}
	}
	for i := range n {
		assert.InDelta(t, 0, cv.M[4*n+i], 1e-13)
	}
	assert.InDelta(t, 2-0.5*1.2345, cv.Eval(4, 1.2345), 1e-14)
}

// The periodic spline of a sine on a uniform grid converges at fourth
// order: errors fall 16-fold as the knot spacing halves.
func TestPeriodicSineFourthOrder(t *testing.T) {
	var errs []float64
	for _, n := range []int{9, 17, 33, 65} { // 8, 16, 32, 64 intervals
		x := make([]float64, n)
		y := make([]float64, 2*n)
		for i := range x {
			x[i] = 2 * math.Pi * float64(i) / float64(n-1)
			y[i] = math.Sin(x[i])
			y[n+i] = math.Cos(3 * x[i])
		}
		y[n-1], y[2*n-1] = y[0], y[n] // exact periodicity
		cv, err := spline.FitBatch(n, x, y, spline.Periodic())
		require.NoError(t, err)
		worst := 0.0
		for j := range 1000 {
			tt := -3 + 12*float64(j)/999 // beyond one period on both sides
			worst = max(worst, math.Abs(cv.Eval(0, tt)-math.Sin(tt)))
		}
		assert.InDelta(t, cv.M[0], cv.M[n-1], 0)
		errs = append(errs, worst)
	}
	for i := 1; i < len(errs); i++ {
		r := errs[i-1] / errs[i]
		assert.InDelta(t, 16, r, 1.5, "error ratio %d: %v / %v", i, errs[i-1], errs[i])
	}
}

// Fitting many curves at once gives exactly what fitting each alone gives.
func TestBatchEqualsOneAtATime(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n, count = 20, 16
	x := randomKnots(rng, n, 0, 1)
	y := make([]float64, n*count)
	for i := range y {
		y[i] = rng.NormFloat64()
	}
	for k := range count { // periodic data
		y[k*n+n-1] = y[k*n]
	}
	for _, bc := range []spline.Boundary{spline.Natural(), spline.Clamped(0.5, -1), spline.Periodic()} {
		all, err := spline.FitBatch(n, x, y, bc)
		require.NoError(t, err)
		for k := range count {
			one, err := spline.FitBatch(n, x, y[k*n:(k+1)*n], bc)
			require.NoError(t, err)
			assert.Equal(t, one.M, all.M[k*n:(k+1)*n], "%v curve %d", bc.Kind, k)
		}
	}
}

// A Fitter reuses its plans across fits and kinds, in float32 too.
func TestFitterReuseFloat32(t *testing.T) {
	const n, count = 33, 4
	f, err := spline.NewFitter[float32](nil, n, count, tridiag.Options{Algorithm: tridiag.Thomas})
	require.NoError(t, err)
	defer f.Close()
	x := make([]float32, n)
	y := make([]float32, n*count)
	for i := range x {
		x[i] = float32(i) / float32(n-1)
		for k := range count {
			y[k*n+i] = float32(math.Sin(2 * math.Pi * float64(k+1) * float64(x[i])))
		}
	}
	for k := range count {
		y[k*n+n-1] = y[k*n]
	}
	for range 2 {
		for _, bc := range []spline.Boundary{spline.Natural(), spline.Periodic(), spline.Clamped(0, 0)} {
			cv, err := f.Fit(context.Background(), x, y, bc)
			require.NoError(t, err)
			for k := range count {
				for i := range n {
					assert.InDelta(t, y[k*n+i], cv.Eval(k, x[i]), 1e-5)
				}
			}
		}
	}
	out := make([]float32, count*3)
	cv, err := f.Fit(context.Background(), x, y, spline.Periodic())
	require.NoError(t, err)
	require.NoError(t, cv.EvalAll([]float32{0.25, 0.5, 1.25}, out))
	assert.InDelta(t, 1, out[0], 2e-3)   // sin(π/2)
	assert.InDelta(t, 0, out[1], 2e-3)   // sin(π)
	assert.InDelta(t, 1, out[2], 2e-3)   // wraps to 0.25
	assert.InDelta(t, 0, out[3+0], 5e-3) // sin(π)
}

func TestErrors(t *testing.T) {
	x := []float64{0, 1, 2, 3}
	y := []float64{1, 2, 3, 4}
	for name, fit := range map[string]func() error{
		"ragged y": func() error { _, err := spline.FitBatch(4, x, y[:3], spline.Natural()); return err },
		"x length": func() error { _, err := spline.FitBatch(2, x[:3], y, spline.Natural()); return err },
		"knots not increasing": func() error {
			_, err := spline.FitBatch(4, []float64{0, 1, 1, 3}, y, spline.Natural())
			return err
		},
		"periodic ends differ": func() error { _, err := spline.FitBatch(4, x, y, spline.Periodic()); return err },
		"clamped slopes": func() error {
			_, err := spline.FitBatch(2, x[:2], y, spline.ClampedEach([]float64{1, 2, 3}, []float64{0}))
			return err
		},
	} {
		assert.ErrorIs(t, fit(), spline.ErrInput, name)
	}
	_, err := spline.FitBatch(2, x[:2], []float64{0, math.NaN()}, spline.Clamped(0, 0))
	assert.ErrorIs(t, err, spline.ErrInput, "NaN data")
	// Two knots, natural: a straight line.
	cv, err := spline.FitBatch(2, []float64{0, 2}, []float64{1, 3}, spline.Natural())
	require.NoError(t, err)
	assert.InDelta(t, 2, cv.Eval(0, 1), 1e-15)
}

// Curves that share their knots are fitted on the CPU with one
// factorization of the moment matrix; the moments are bit for bit those
// of the same knots given per curve (each system solved by tridiag), and
// close to those of another algorithm (which solves through tridiag).
func TestSharedKnotsFactorOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	for _, n := range []int{3, 4, 5, 40} {
		const count = 9
		x := randomKnots(rng, n, -2, 3)
		y := make([]float64, n*count)
		for i := range y {
			y[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(6)))
		}
		for k := range count {
			y[k*n+n-1] = y[k*n]
		}
		each := make([]float64, 0, n*count)
		for range count {
			each = append(each, x...)
		}
		d0, dn := make([]float64, count), make([]float64, count)
		for k := range d0 {
			d0[k], dn[k] = rng.NormFloat64(), rng.NormFloat64()
		}
		for _, bc := range []spline.Boundary{spline.Natural(), spline.ClampedEach(d0, dn), spline.Periodic()} {
			shared, err := spline.FitBatch(n, x, y, bc)
			require.NoError(t, err)
			own, err := spline.FitBatch(n, each, y, bc)
			require.NoError(t, err)
			assert.Equal(t, own.M, shared.M, "%v n=%d", bc.Kind, n)

			f, err := spline.NewFitter[float64](nil, n, count, tridiag.Options{Algorithm: tridiag.PCR})
			require.NoError(t, err)
			pcr, err := f.Fit(context.Background(), x, y, bc)
			require.NoError(t, err)
			require.NoError(t, f.Close())
			for i := range pcr.M {
				assert.InDelta(t, shared.M[i], pcr.M[i], 1e-12*(1+math.Abs(shared.M[i])), "%v n=%d PCR moment %d", bc.Kind, n, i)
			}
		}
	}
	// A cancelled fit stops.
	f, err := spline.NewFitter[float64](nil, 5, 3, tridiag.Options{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = f.Fit(ctx, []float64{0, 1, 2, 3, 4}, make([]float64, 15), spline.Natural())
	assert.ErrorIs(t, err, context.Canceled)
}
