//go:build cudaemu

package splineemu

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/spline"
	"github.com/bandsolve/bandsolve/tridiag"
)

// emuFit runs the device fit of internal/gpu/splinegpu's Fitter with the
// emulated kernels and the CPU's Thomas solver in place of the GPU's
// (the same arithmetic: ptx/src/thomas.cuh and cyclic.cuh are tri.Thomas
// and solveCyclic's twins): the shared knots' check, the rows, the solve
// of the layout and coefficients the fitter chooses, the periodic wrap.
// It returns the moments, the flags and whether the constant-coefficient
// path ran.
func emuFit[T tridiag.Float](t *testing.T, n, count int, x, y []T, bc spline.Boundary) ([]T, []uint32, bool) {
	t.Helper()
	uniform := false
	var h T
	xs := int64(n)
	if len(x) == n {
		xs = 0
		info, hh := make([]uint32, 2), make([]T, 1)
		(&FitKnots[T]{GX: 2, BD: 3, X: x, N: n, Info: info, H: hh}).Run()
		require.Zero(t, info[0], "the shared knots are good")
		uniform, h = info[1] == 0, hh[0]
	}
	uniform = uniform && bc.Kind != spline.KindClamped && n >= 3
	zero := n == 2 && bc.Kind != spline.KindClamped
	var d0, dn []T
	ss := int64(0)
	if bc.Kind == spline.KindClamped {
		for k := range len(bc.Start) {
			d0, dn = append(d0, T(bc.Start[k])), append(dn, T(bc.End[k]))
		}
		if len(bc.Start) > 1 {
			ss = 1
		}
	}
	m := make([]T, n*count)
	for i := range m {
		m[i] = 7 // every moment is written
	}
	var a, b, c []T
	if !uniform && !zero {
		a, b, c = make([]T, n*count), make([]T, n*count), make([]T, n*count)
	}
	flags := make([]uint32, count+1)
	// Fewer blocks than curves: the kernel's grid stride.
	(&FitRows[T]{GX: max(1, count/2), X: x, XS: xs, Y: y, N: n, Count: count, Kind: int(bc.Kind),
		D0: d0, DN: dn, SS: ss, A: a, B: b, C: c, D: m, Flags: flags}).Run()
	if zero {
		return m, flags, false
	}
	rows, first := n, 0
	switch {
	case bc.Kind == spline.KindPeriodic:
		rows = n - 1
	case uniform:
		rows, first = n-2, 1
	}
	shape := tridiag.Shape{N: rows, G: count, Layout: tridiag.Strided(1, n)}
	p, err := tridiag.NewPlan[T](nil, shape, tridiag.Options{Algorithm: tridiag.Thomas, Cyclic: bc.Kind == spline.KindPeriodic, SkipFiniteCheck: true})
	require.NoError(t, err)
	defer p.Close()
	l := shape.Len()
	d := m[first : first+l]
	ctx := context.Background()
	if uniform {
		require.NoError(t, p.SolveConst(ctx, h, 2*(h+h), h, d, d))
	} else {
		require.NoError(t, p.Solve(ctx, a[:l], b[:l], c[:l], d, d))
	}
	if bc.Kind == spline.KindPeriodic {
		(&FitWrap[T]{GX: 1, BD: 4, M: m, N: n, Count: count}).Run()
	}
	return m, flags, uniform
}

// fitData returns count curves of n knots: shared with random spans,
// shared with equal spans (uniform), or one random set per curve.
func fitData[T tridiag.Float](r *rand.Rand, n, count int, knots string, kind spline.Kind) (x, y []T) {
	random := func() []T {
		x := make([]T, n)
		v := r.Float64()*4 - 2
		for i := range x {
			x[i] = T(v)
			v += 0.05 + r.Float64()
		}
		return x
	}
	switch knots {
	case "shared":
		x = random()
	case "uniform":
		for i := range n {
			x = append(x, T(-3+0.25*float64(i)))
		}
	default:
		for range count {
			x = append(x, random()...)
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

// TestFitBitExact: the device fit's kernels with Thomas give
// spline.FitBatch's moments bit for bit, for every end condition, shared,
// uniform and per-curve knots, FP32 and FP64, and flag no curve.
func TestFitBitExact(t *testing.T) {
	t.Run("f64", func(t *testing.T) { fitBitExact[float64](t) })
	t.Run("f32", func(t *testing.T) { fitBitExact[float32](t) })
}

func fitBitExact[T tridiag.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(31, 5))
	for _, n := range []int{2, 3, 4, 5, 17, 200} {
		for _, count := range []int{1, 6, 41} {
			d0, dn := make([]float64, count), make([]float64, count)
			for k := range d0 {
				d0[k], dn[k] = r.Float64()*4-2, r.Float64()*4-2
			}
			for _, bc := range []spline.Boundary{spline.Natural(), spline.Clamped(0.5, -1.25), spline.ClampedEach(d0, dn), spline.Periodic()} {
				for _, knots := range []string{"shared", "uniform", "per-curve"} {
					name := fmt.Sprintf("n=%d/count=%d/%v(%d)/%s", n, count, bc.Kind, len(bc.Start), knots)
					x, y := fitData[T](r, n, count, knots, bc.Kind)
					want, err := spline.FitBatch(n, x, y, bc)
					require.NoError(t, err, name)
					got, flags, constant := emuFit(t, n, count, x, y, bc)
					require.Equal(t, make([]uint32, count+1), flags, name)
					if knots == "uniform" && n >= 3 && bc.Kind != spline.KindClamped {
						require.True(t, constant, "%s: uniform knots give constant coefficients", name)
					}
					for i := range want.M {
						if !sameBits(want.M[i], got[i]) {
							require.Failf(t, "moments differ", "%s: curve %d, knot %d: emulated %v, CPU %v", name, i/n, i%n, got[i], want.M[i])
						}
					}
				}
			}
		}
	}
}

// TestFitFlags: the rows kernel flags exactly the curves the CPU refuses
// or solves for scaled down, and the shared knots' check refuses what
// the CPU refuses.
func TestFitFlags(t *testing.T) {
	const n, count = 6, 8
	r := rand.New(rand.NewPCG(31, 6))
	x, y := fitData[float64](r, n, count, "per-curve", spline.KindPeriodic)
	x[1*n+3] = x[1*n+2]         // curve 1: knots repeat
	x[2*n+5] = math.NaN()       // curve 2: knot NaN
	y[3*n+2] = math.Inf(1)      // curve 3: value infinite
	y[4*n+n-1] += 1e-6          // curve 4: periodic ends differ
	x[5*n+5] = x[5*n] + 1.5e308 // curve 5: knots span too far
	// Curve 6: the slopes overflow, the moments do not.
	for i := range n {
		x[6*n+i] = 10 * float64(i)
	}
	y[6*n+1], y[6*n+2] = 1e308, -1e308
	y[7*n+n-1] += 4e-15 // curve 7: ends within 64ε: passes
	flags := make([]uint32, count+1)
	d := make([]float64, n*count)
	(&FitRows[float64]{GX: 3, X: x, XS: n, Y: y, N: n, Count: count, Kind: int(spline.KindPeriodic), D: d, Flags: flags}).Run()
	require.Equal(t, []uint32{0, 1, 1, 1, 1, 1, 1, 0, 1}, flags)
	for k := 1; k <= 6; k++ {
		// The CPU refuses or scales each flagged curve, alone.
		xs, ys := x[k*n:(k+1)*n], y[k*n:(k+1)*n]
		_, err := spline.FitBatch(n, xs, ys, spline.Periodic())
		if k == 6 {
			require.NoError(t, err, "curve 6 is solved for scaled down")
		} else {
			require.ErrorIs(t, err, spline.ErrInput, "curve %d", k)
		}
	}
	for _, c := range []struct {
		name string
		x    []float64
		bad  bool
	}{
		{"good", []float64{0, 1, 2.5, 3}, false},
		{"repeat", []float64{0, 1, 1, 3}, true},
		{"decrease", []float64{0, 2, 1, 3}, true},
		{"NaN", []float64{0, 1, math.NaN(), 3}, true},
		{"Inf", []float64{0, 1, 2, math.Inf(1)}, true},
		{"span", []float64{-1e308, 0, 1, 1e308}, true},
	} {
		info, h := make([]uint32, 2), make([]float64, 1)
		(&FitKnots[float64]{GX: 1, BD: 2, X: c.x, N: len(c.x), Info: info, H: h}).Run()
		require.Equal(t, c.bad, info[0] != 0, c.name)
		_, err := spline.FitBatch(len(c.x), c.x, make([]float64, len(c.x)), spline.Natural())
		require.Equal(t, c.bad, err != nil, "%s: the CPU agrees", c.name)
		require.Equal(t, c.x[1]-c.x[0], h[0], c.name)
	}
}
