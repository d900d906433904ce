package spline_test

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/spline"
	"github.com/bandsolve/bandsolve/tridiag"
)

// batchCase is a batch of random curves with everything a reference
// needs.
type batchCase struct {
	name      string
	n, count  int
	x, y      []float64 // x: n shared or n·count
	bc        spline.Boundary
	kind      refKind
	d0, dn    []float64
	cv        *spline.Curves[float64]
	refM      [][]*big.Float
	perCurveX bool
}

func randomBatch(t *testing.T, rng *rand.Rand, kind refKind, n, count int, perCurveX bool) *batchCase {
	c := &batchCase{n: n, count: count, kind: kind, perCurveX: perCurveX}
	if perCurveX {
		for range count {
			c.x = append(c.x, randomKnots(rng, n, -1-rng.Float64(), 1+2*rng.Float64())...)
		}
	} else {
		c.x = randomKnots(rng, n, -1, 2)
	}
	c.y = make([]float64, n*count)
	for i := range c.y {
		c.y[i] = rng.NormFloat64()
	}
	switch kind {
	case refNatural:
		c.bc = spline.Natural()
	case refClamped:
		c.d0, c.dn = make([]float64, count), make([]float64, count)
		for k := range count {
			c.d0[k], c.dn[k] = rng.NormFloat64(), rng.NormFloat64()
		}
		c.bc = spline.ClampedEach(c.d0, c.dn)
	case refPeriodic:
		for k := range count {
			c.y[k*n+n-1] = c.y[k*n]
		}
		c.bc = spline.Periodic()
	}
	c.name = fmt.Sprintf("%v n=%d count=%d perCurveX=%v", c.bc.Kind, n, count, perCurveX)
	var err error
	c.cv, err = spline.FitBatch(n, c.x, c.y, c.bc)
	require.NoError(t, err, c.name)
	for k := range count {
		var d0, dn float64
		if kind == refClamped {
			d0, dn = c.d0[k], c.dn[k]
		}
		c.refM = append(c.refM, refMoments(c.cv.Knots(k), c.y[k*n:(k+1)*n], kind, d0, dn))
	}
	return c
}

// ref returns the reference derivative q of curve k at t and its scale.
func (c *batchCase) ref(k int, t float64, q int) (v, scale *big.Float) {
	x := c.cv.Knots(k)
	if c.kind == refPeriodic && (t < x[0] || t > x[c.n-1]) {
		p := x[c.n-1] - x[0]
		s := math.Mod(t-x[0], p)
		if s < 0 {
			s += p
		}
		t = x[0] + s
	}
	return refAt(x, c.y[k*c.n:(k+1)*c.n], c.refM[k], t, q)
}

// points returns P points around the knots [lo, hi]: inside, at knots,
// at the ends and beyond them, ascending or shuffled.
func points(rng *rand.Rand, p int, lo, hi float64, x []float64, sorted bool) []float64 {
	t := make([]float64, p)
	w := hi - lo
	for j := range t {
		switch j % 7 {
		case 0:
			t[j] = x[rng.IntN(len(x))]
		case 1:
			t[j] = lo - w*rng.Float64()*1.5
		case 2:
			t[j] = hi + w*rng.Float64()*1.5
		default:
			t[j] = lo + w*rng.Float64()
		}
	}
	t[0], t[1] = lo, hi
	if sorted {
		slices.Sort(t)
	}
	return t
}

// Every combination of end condition, shared or per-curve knots, shared
// or per-curve points, ascending or shuffled: the batch gives the values
// and first and second derivatives of the math/big reference, inside and
// outside the knots, and exactly the data at the knots.
func TestEvalMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	ctx := context.Background()
	cpu := tridiag.NewCPU(3) // more workers than cores: blocks interleave
	ev, err := spline.NewEvaluator[float64](cpu)
	require.NoError(t, err)
	defer ev.Close()
	for _, kind := range []refKind{refNatural, refClamped, refPeriodic} {
		for _, perCurveX := range []bool{false, true} {
			c := randomBatch(t, rng, kind, 5+rng.IntN(12), 7, perCurveX)
			for _, perCurveT := range []bool{false, true} {
				for _, sorted := range []bool{false, true} {
					const p = 60
					var ts []float64
					for k := range c.count {
						if k > 0 && !perCurveT {
							break
						}
						x := c.cv.Knots(k)
						ts = append(ts, points(rng, p, x[0], x[c.n-1], x, sorted)...)
					}
					pts := spline.SharedPoints(ts)
					if perCurveT {
						pts = spline.CurvePoints(ts)
					}
					out := spline.Out[float64]{Value: make([]float64, c.count*p), Deriv: make([]float64, c.count*p), Deriv2: make([]float64, c.count*p)}
					require.NoError(t, ev.Eval(ctx, c.cv, pts, out))
					name := fmt.Sprintf("%s perCurveT=%v sorted=%v", c.name, perCurveT, sorted)
					bad := 0
					for k := range c.count {
						for j := range p {
							tj := ts[j]
							if perCurveT {
								tj = ts[k*p+j]
							}
							for q, o := range [][]float64{out.Value, out.Deriv, out.Deriv2} {
								ref, scale := c.ref(k, tj, q)
								if got := o[k*p+j]; !closeTo(got, ref, scale, 1e-11) && bad < 5 {
									bad++
									assert.Fail(t, "batch differs from the reference", "%s: curve %d, t = %v, derivative %d: %v, want %s", name, k, tj, q, got, ref.Text('g', 17))
								}
							}
							if x := c.cv.Knots(k); slices.Contains(x, tj) {
								i := slices.Index(x, tj)
								assert.Equal(t, c.y[k*c.n+i], out.Value[k*p+j], "%s: curve %d at knot %d", name, k, i)
							}
						}
					}
				}
			}
		}
	}
}

// The batch equals the one-point methods, with points in blocks across
// workers (one curve, many points) and curves across workers (many
// curves), in float32 too.
func TestEvalEqualsPointwise(t *testing.T) {
	testEvalEqualsPointwise[float64](t)
	testEvalEqualsPointwise[float32](t)
}

func testEvalEqualsPointwise[T tridiag.Float](t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	ev, err := spline.NewEvaluator[T](tridiag.NewCPU(4))
	require.NoError(t, err)
	for _, sh := range []struct{ n, count, p int }{{40, 1, 20000}, {9, 300, 37}, {200, 5, 5000}} {
		for _, bc := range []spline.Boundary{spline.Natural(), spline.Clamped(1, -2), spline.Periodic()} {
			x := make([]T, sh.n)
			for i, v := range randomKnots(rng, sh.n, 0, 10) {
				x[i] = T(v)
			}
			y := make([]T, sh.n*sh.count)
			for i := range y {
				y[i] = T(rng.NormFloat64())
			}
			for k := range sh.count {
				y[k*sh.n+sh.n-1] = y[k*sh.n]
			}
			cv, err := spline.FitBatch(sh.n, x, y, bc)
			require.NoError(t, err)
			ts := make([]T, sh.p)
			for j := range ts {
				ts[j] = T(-5 + 20*rng.Float64())
			}
			out := spline.Out[T]{Value: make([]T, sh.count*sh.p), Deriv: make([]T, sh.count*sh.p), Deriv2: make([]T, sh.count*sh.p)}
			require.NoError(t, ev.Eval(context.Background(), cv, spline.SharedPoints(ts), out))
			all := make([]T, sh.count*sh.p)
			require.NoError(t, cv.EvalAll(ts, all))
			assert.Equal(t, out.Value, all, "EvalAll")
			for k := range sh.count {
				for j, tj := range ts {
					want := [3]T{cv.Eval(k, tj), cv.Deriv(k, tj), cv.Deriv2(k, tj)}
					got := [3]T{out.Value[k*sh.p+j], out.Deriv[k*sh.p+j], out.Deriv2[k*sh.p+j]}
					if !assert.Equal(t, want, got, "%v %+v curve %d t=%v", bc.Kind, sh, k, tj) {
						return
					}
				}
			}
		}
	}
}

// A clamped spline through a cubic is the cubic: the batch gives its
// value, slope and curvature everywhere, in both precisions, at shared
// and per-curve points.
func TestEvalCubicExactly(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const n, count, p = 8, 20, 50
	x := make([]float64, 0, n*count)
	y := make([]float64, 0, n*count)
	d0, dn := make([]float64, count), make([]float64, count)
	polys := make([][4]float64, count)
	for k := range count {
		xs := randomKnots(rng, n, -1, 1+rng.Float64())
		polys[k] = [4]float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
		for _, xi := range xs {
			v, _ := cubic(polys[k], xi)
			y = append(y, v)
		}
		x = append(x, xs...)
		_, d0[k] = cubic(polys[k], xs[0])
		_, dn[k] = cubic(polys[k], xs[n-1])
	}
	cv, err := spline.FitBatch(n, x, y, spline.ClampedEach(d0, dn))
	require.NoError(t, err)
	ts := make([]float64, count*p)
	for j := range ts {
		ts[j] = -2 + 5*rng.Float64()
	}
	ev, err := spline.NewEvaluator[float64](nil)
	require.NoError(t, err)
	for _, pts := range []spline.Points[float64]{spline.SharedPoints(ts[:p]), spline.CurvePoints(ts)} {
		out := spline.Out[float64]{Value: make([]float64, count*p), Deriv: make([]float64, count*p), Deriv2: make([]float64, count*p)}
		require.NoError(t, ev.Eval(context.Background(), cv, pts, out))
		for k := range count {
			c := polys[k]
			for j := range p {
				tj := ts[j]
				if pts.PerCurve {
					tj = ts[k*p+j]
				}
				v, d := cubic(c, tj)
				d2 := 2*c[2] + 6*c[3]*tj
				tol := 1e-12 * (1 + math.Abs(tj)*math.Abs(tj)*math.Abs(tj)) * 10
				assert.InDelta(t, v, out.Value[k*p+j], tol, "value curve %d t=%v", k, tj)
				assert.InDelta(t, d, out.Deriv[k*p+j], tol, "slope curve %d t=%v", k, tj)
				assert.InDelta(t, d2, out.Deriv2[k*p+j], tol, "curvature curve %d t=%v", k, tj)
			}
		}
	}

	// float32: t³ − t on shared knots, to float32 rounding.
	xs := []float32{-1, -0.5, 0.25, 0.5, 1.5}
	ys := make([]float32, len(xs))
	for i, v := range xs {
		ys[i] = v*v*v - v
	}
	cv32, err := spline.FitBatch(len(xs), xs, ys, spline.Clamped(2, 5.75))
	require.NoError(t, err)
	ev32, err := spline.NewEvaluator[float32](nil)
	require.NoError(t, err)
	ts32 := []float32{-2, -1, -0.3, 0, 0.7, 1.5, 3}
	out32 := spline.Out[float32]{Value: make([]float32, 7), Deriv: make([]float32, 7), Deriv2: make([]float32, 7)}
	require.NoError(t, ev32.Eval(context.Background(), cv32, spline.SharedPoints(ts32), out32))
	for j, v := range ts32 {
		assert.InDelta(t, v*v*v-v, out32.Value[j], 2e-5, "t=%v", v)
		assert.InDelta(t, 3*v*v-1, out32.Deriv[j], 2e-5, "t=%v", v)
		assert.InDelta(t, 6*v, out32.Deriv2[j], 2e-5, "t=%v", v)
	}
}

// The derivatives are those of the values: central differences of S and
// S′ away from the knots.
func TestEvalFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, kind := range []refKind{refNatural, refClamped, refPeriodic} {
		c := randomBatch(t, rng, kind, 12, 4, true)
		const p, h = 40, 1e-5
		ts := make([]float64, 0, 3*p)
		for range p {
			tj := -3 + 7*rng.Float64()
			ts = append(ts, tj-h, tj, tj+h)
		}
		ev, err := spline.NewEvaluator[float64](nil)
		require.NoError(t, err)
		out := spline.Out[float64]{Value: make([]float64, c.count*3*p), Deriv: make([]float64, c.count*3*p), Deriv2: make([]float64, c.count*3*p)}
		require.NoError(t, ev.Eval(context.Background(), c.cv, spline.SharedPoints(ts), out))
		for k := range c.count {
			x := c.cv.Knots(k)
			for j := range p {
				o := k*3*p + 3*j
				tj := ts[3*j+1]
				near := false
				for _, xi := range x {
					period := x[c.n-1] - x[0]
					d := math.Abs(tj - xi)
					if kind == refPeriodic {
						d = math.Abs(math.Remainder(tj-xi, period))
					}
					near = near || d < 2*h
				}
				if near {
					continue // S″ is only continuous there
				}
				fd1 := (out.Value[o+2] - out.Value[o]) / (2 * h)
				fd2 := (out.Deriv[o+2] - out.Deriv[o]) / (2 * h)
				scale := 1 + math.Abs(out.Deriv[o+1]) + math.Abs(out.Deriv2[o+1])
				assert.InDelta(t, fd1, out.Deriv[o+1], 1e-6*scale, "%v curve %d t=%v: S′", kind, k, tj)
				assert.InDelta(t, fd2, out.Deriv2[o+1], 1e-6*scale, "%v curve %d t=%v: S″", kind, k, tj)
			}
		}
	}
}

// simpson integrates curve k from a to b piece by piece between the knots
// (and their copies one period on, for a periodic curve): Simpson's rule
// is exact for cubics.
func simpson(cv *spline.Curves[float64], k int, a, b float64) (v, scale float64) {
	if a > b {
		v, scale = simpson(cv, k, b, a)
		return -v, scale
	}
	x := cv.Knots(k)
	cuts := []float64{a, b}
	period := x[len(x)-1] - x[0]
	shifts := []float64{0}
	if cv.Kind == spline.KindPeriodic {
		lo, hi := math.Floor((a-x[0])/period)-1, math.Ceil((b-x[0])/period)+1
		shifts = shifts[:0]
		for s := lo; s <= hi; s++ {
			shifts = append(shifts, s*period)
		}
	}
	for _, s := range shifts {
		for _, xi := range x {
			if xi+s > a && xi+s < b {
				cuts = append(cuts, xi+s)
			}
		}
	}
	slices.Sort(cuts)
	for i := 1; i < len(cuts); i++ {
		l, r := cuts[i-1], cuts[i]
		piece := (r - l) / 6 * (cv.Eval(k, l) + 4*cv.Eval(k, (l+r)/2) + cv.Eval(k, r))
		v += piece
		scale += math.Abs(piece)
	}
	return v, scale
}

// Integrals per curve, with shared and per-curve bounds, inside, across
// and beyond the knots, reversed, over several periods: Simpson's rule
// between the knots.
func TestIntegrate(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	ev, err := spline.NewEvaluator[float64](tridiag.NewCPU(3))
	require.NoError(t, err)
	for _, kind := range []refKind{refNatural, refClamped, refPeriodic} {
		for _, perCurveX := range []bool{false, true} {
			c := randomBatch(t, rng, kind, 4+rng.IntN(10), 30, perCurveX)
			a, b := make([]float64, c.count), make([]float64, c.count)
			for k := range c.count {
				x := c.cv.Knots(k)
				w := x[c.n-1] - x[0]
				a[k] = x[0] - w + 3*w*rng.Float64()
				b[k] = x[0] - w + 3*w*rng.Float64()
				switch k % 5 {
				case 0:
					b[k] = a[k] + 4.5*w // several periods
				case 1:
					a[k], b[k] = x[1], x[1] // empty
				case 2:
					a[k], b[k] = x[0], x[c.n-1]
				}
			}
			out := make([]float64, c.count)
			require.NoError(t, ev.Integrate(context.Background(), c.cv, a, b, out))
			for k := range c.count {
				want, scale := simpson(c.cv, k, a[k], b[k])
				assert.InDelta(t, want, out[k], 1e-12*(1+scale), "%s curve %d from %v to %v", c.name, k, a[k], b[k])
				assert.Equal(t, out[k], c.cv.Integral(k, a[k], b[k]))
			}
			// Shared bounds.
			require.NoError(t, ev.Integrate(context.Background(), c.cv, []float64{-0.5}, []float64{1.25}, out))
			for k := range c.count {
				want, scale := simpson(c.cv, k, -0.5, 1.25)
				assert.InDelta(t, want, out[k], 1e-12*(1+scale), "%s curve %d shared bounds", c.name, k)
			}
		}
	}
}

// Integral edge cases: NaN and infinite bounds, and values near 1e300
// whose integral is finite although the per-interval sums overflow.
func TestIntegralEdges(t *testing.T) {
	inf := math.Inf(1)
	lines, err := spline.FitBatch(2, []float64{0, 1}, []float64{1, 2, 0, 0}, spline.Natural())
	require.NoError(t, err)
	assert.True(t, math.IsNaN(lines.Integral(0, math.NaN(), 1)))
	assert.Equal(t, inf, lines.Integral(0, 0, inf))
	assert.Equal(t, -inf, lines.Integral(0, inf, 0))
	assert.Equal(t, 0.0, lines.Integral(1, -inf, inf), "the zero line")
	assert.InDelta(t, 1.5, lines.Integral(0, 0, 1), 1e-15)
	per, err := spline.FitBatch(3, []float64{0, 1, 2}, []float64{0, 1, 0}, spline.Periodic())
	require.NoError(t, err)
	assert.True(t, math.IsNaN(per.Integral(0, 0, inf)))
	assert.InDelta(t, 3, per.Integral(0, -1, 5), 1e-14, "three periods of a curve of mean 1/2")

	// A hump of 5e307 over [0, 6] and its negative over [6, 12]: the
	// integral over [0, 6] is beyond the range, over [0, 10] it is not.
	x := []float64{0, 2, 4, 6, 8, 10, 12}
	y := []float64{0, 5e307, 5e307, 0, -5e307, -5e307, 0}
	cv, err := spline.FitBatch(len(x), x, y, spline.Natural())
	require.NoError(t, err)
	m := refMoments(x, y, refNatural, 0, 0)
	assert.Equal(t, inf, cv.Integral(0, 0, 6))
	for _, b := range []float64{9, 10, 11} {
		want := refIntegral(x, y, m, 0, b)
		assert.InEpsilon(t, want, cv.Integral(0, 0, b), 1e-13, "from 0 to %v", b)
	}
	// The same curve periodic: whole periods and the rest.
	hump, err := spline.FitBatch(len(x), x, y, spline.Periodic())
	require.NoError(t, err)
	pm := refMoments(x, y, refPeriodic, 0, 0)
	assert.Equal(t, inf, hump.Integral(0, 0, 6))
	want := refIntegral(x, y, pm, 0, 10)
	assert.InEpsilon(t, want, hump.Integral(0, 0, 10), 1e-13)
	assert.InEpsilon(t, want, hump.Integral(0, -24, 10), 1e-13, "two periods more")
	assert.InEpsilon(t, want, hump.Integral(0, 12, 22), 1e-13, "one period on")
	assert.InEpsilon(t, -want, hump.Integral(0, 34, 24), 1e-13, "reversed, two periods on")
	// The whole is zero by symmetry, to rounding of the 2.5e308 halves.
	assert.InDelta(t, 0, cv.Integral(0, 0, 12), 1e-15*2.5e308)
}

// Bad calls are refused with ErrInput; devices other than the CPU with
// ErrDevice; a cancelled context stops the evaluation.
func TestEvalErrors(t *testing.T) {
	cv, err := spline.FitBatch(3, []float64{0, 1, 2}, []float64{0, 1, 0, 1, 2, 3}, spline.Natural())
	require.NoError(t, err)
	ev, err := spline.NewEvaluator[float64](nil)
	require.NoError(t, err)
	ctx := context.Background()
	ts := []float64{0.5, 1.5, 2.5}
	assert.ErrorIs(t, ev.Eval(ctx, cv, spline.SharedPoints(ts), spline.Out[float64]{Value: make([]float64, 5)}), spline.ErrInput)
	assert.ErrorIs(t, ev.Eval(ctx, cv, spline.CurvePoints(ts), spline.Out[float64]{Value: make([]float64, 6)}), spline.ErrInput)
	assert.ErrorIs(t, ev.Eval(ctx, nil, spline.SharedPoints(ts), spline.Out[float64]{}), spline.ErrInput)
	assert.ErrorIs(t, ev.Integrate(ctx, cv, []float64{0, 1, 2}, []float64{1}, make([]float64, 2)), spline.ErrInput)
	assert.ErrorIs(t, ev.Integrate(ctx, cv, []float64{0}, []float64{1}, make([]float64, 1)), spline.ErrInput)
	assert.ErrorIs(t, cv.EvalAll(ts, make([]float64, 5)), spline.ErrInput)
	broken := *cv
	broken.M = broken.M[:5]
	assert.ErrorIs(t, ev.Eval(ctx, &broken, spline.SharedPoints(ts), spline.Out[float64]{Value: make([]float64, 6)}), spline.ErrInput)

	_, err = spline.NewEvaluator[float64](fakeDevice{})
	assert.ErrorIs(t, err, spline.ErrDevice)

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	assert.ErrorIs(t, ev.Eval(cancelled, cv, spline.SharedPoints(ts), spline.Out[float64]{Value: make([]float64, 6)}), context.Canceled)
	assert.ErrorIs(t, ev.Integrate(cancelled, cv, ts[:1], ts[1:2], make([]float64, 2)), context.Canceled)

	// Nothing to compute: no error, nothing written.
	assert.NoError(t, ev.Eval(ctx, cv, spline.SharedPoints[float64](nil), spline.Out[float64]{Value: []float64{}}))
	assert.NoError(t, ev.Eval(ctx, cv, spline.SharedPoints(ts), spline.Out[float64]{}))
}

type fakeDevice struct{}

func (fakeDevice) Name() string { return "fake" }
func (fakeDevice) NewSolver32(tridiag.Spec) (tridiag.Solver[float32], error) {
	return nil, fmt.Errorf("fake")
}
func (fakeDevice) NewSolver64(tridiag.Spec) (tridiag.Solver[float64], error) {
	return nil, fmt.Errorf("fake")
}

// NaN and infinite points in a batch give what the one-point methods
// give; the output slices are reused across calls of different sizes.
func TestEvalSpecialPointsAndReuse(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	ev, err := spline.NewEvaluator[float64](nil)
	require.NoError(t, err)
	for _, bc := range []spline.Boundary{spline.Natural(), spline.Periodic()} {
		cv, err := spline.FitBatch(4, []float64{0, 1, 2, 3}, []float64{0, 1, -1, 0, 2, 2, 2, 2}, bc)
		require.NoError(t, err)
		out := spline.Out[float64]{Value: make([]float64, 100), Deriv: make([]float64, 100), Deriv2: make([]float64, 100)}
		for _, ts := range [][]float64{{nan, inf, -inf, 1.5, 3}, {1, 2, nan}, {-inf, 0.5, 7, nan, 0, inf, 9, 3, 3}} {
			require.NoError(t, ev.Eval(context.Background(), cv, spline.SharedPoints(ts), out))
			for k := range 2 {
				for j, tj := range ts {
					for q, f := range []func(int, float64) float64{cv.Eval, cv.Deriv, cv.Deriv2} {
						got := [][]float64{out.Value, out.Deriv, out.Deriv2}[q][k*len(ts)+j]
						want := f(k, tj)
						if math.IsNaN(want) {
							assert.True(t, math.IsNaN(got), "%v curve %d t=%v q=%d", bc.Kind, k, tj, q)
						} else {
							assert.Equal(t, want, got, "%v curve %d t=%v q=%d", bc.Kind, k, tj, q)
						}
					}
				}
			}
		}
		assert.True(t, math.IsNaN(cv.Eval(0, nan)))
	}
}

// Ascending points are located by a walk over the knots; the walk must
// find the interval the binary search of the one-point methods finds, so
// the batch equals them bit for bit: at the knots themselves, at repeated
// points, beyond both ends, with knots per curve and points shared or per
// curve, on one worker and on several.
func TestSortedWalkEqualsSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	const n, count, p = 50, 6, 3000
	for _, bc := range []spline.Boundary{spline.Natural(), spline.Clamped(-1, 0.5), spline.Periodic()} {
		x := make([]float64, 0, n*count)
		for range count {
			x = append(x, randomKnots(rng, n, -1+rng.Float64(), 9+rng.Float64())...)
		}
		y := make([]float64, n*count)
		for i := range y {
			y[i] = rng.NormFloat64()
		}
		for k := range count {
			y[k*n+n-1] = y[k*n]
		}
		cv, err := spline.FitBatch(n, x, y, bc)
		require.NoError(t, err)
		ts := make([]float64, 0, p*count)
		for k := range count {
			var c []float64
			for j := range p {
				switch j % 5 {
				case 0:
					c = append(c, x[rng.IntN(n*count)]) // a knot of some curve
				case 1:
					c = append(c, x[k*n+rng.IntN(n)]) // a knot of this curve
				default:
					c = append(c, -4+16*rng.Float64())
				}
			}
			c[p-1] = c[p-2] // a repeated point
			slices.Sort(c)
			ts = append(ts, c...)
		}
		for _, pts := range []spline.Points[float64]{spline.SharedPoints(ts[:p]), spline.CurvePoints(ts)} {
			var outs [2]spline.Out[float64]
			for w, workers := range []int{1, 4} {
				ev, err := spline.NewEvaluator[float64](tridiag.NewCPU(workers))
				require.NoError(t, err)
				outs[w] = spline.Out[float64]{Value: make([]float64, count*p), Deriv: make([]float64, count*p), Deriv2: make([]float64, count*p)}
				require.NoError(t, ev.Eval(context.Background(), cv, pts, outs[w]))
			}
			assert.Equal(t, outs[0], outs[1], "%v perCurve=%v: one worker and four", bc.Kind, pts.PerCurve)
			for k := range count {
				for j := range p {
					tj := pts.T[j]
					if pts.PerCurve {
						tj = pts.T[k*p+j]
					}
					want := [3]float64{cv.Eval(k, tj), cv.Deriv(k, tj), cv.Deriv2(k, tj)}
					o := outs[1]
					got := [3]float64{o.Value[k*p+j], o.Deriv[k*p+j], o.Deriv2[k*p+j]}
					if !assert.Equal(t, want, got, "%v perCurve=%v curve %d t=%v", bc.Kind, pts.PerCurve, k, tj) {
						return
					}
				}
			}
		}
	}
}
