//go:build cuda

package spline_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/cuda"
	_ "github.com/bandsolve/bandsolve/gpu" // registers the GPU solvers
	"github.com/bandsolve/bandsolve/spline"
	"github.com/bandsolve/bandsolve/tridiag"
)

// TestFitterCUDA: fits on the GPU give the CPU's second derivatives to a
// few units of the precision, for every end condition, shared and
// per-curve knots, both precisions (the algorithms differ, so not bit for
// bit).
func TestFitterCUDA(t *testing.T) {
	dev, err := cuda.Open(0)
	require.NoError(t, err)
	defer dev.Close()
	t.Run("f64", func(t *testing.T) { fitterCUDA[float64](t, dev, 1e-12) })
	t.Run("f32", func(t *testing.T) { fitterCUDA[float32](t, dev, 2e-4) })
}

func fitterCUDA[T tridiag.Float](t *testing.T, dev tridiag.Device, tol float64) {
	const n, count = 301, 97
	r := rand.New(rand.NewPCG(1, 2))
	shared := make([]T, n)
	perCurve := make([]T, n*count)
	y := make([]T, n*count)
	for i := range shared {
		shared[i] = T(float64(i) + 0.5*r.Float64())
	}
	for k := 0; k < count; k++ {
		x := 0.0
		for i := 0; i < n; i++ {
			x += 0.1 + r.Float64()
			perCurve[k*n+i] = T(x)
			y[k*n+i] = T(math.Sin(x) + r.Float64())
		}
		y[k*n+n-1] = y[k*n] // periodic curves end where they start
	}
	ctx := context.Background()
	for _, bc := range []spline.Boundary{spline.Natural(), spline.Clamped(1, -2), spline.Periodic()} {
		for name, x := range map[string][]T{"shared": shared, "per-curve": perCurve} {
			cpu, err := spline.NewFitter[T](nil, n, count, tridiag.Options{})
			require.NoError(t, err)
			gpu, err := spline.NewFitter[T](dev, n, count, tridiag.Options{})
			require.NoError(t, err)
			want, err := cpu.Fit(ctx, x, y, bc)
			require.NoError(t, err, "%v %s cpu", bc.Kind, name)
			got, err := gpu.Fit(ctx, x, y, bc)
			require.NoError(t, err, "%v %s gpu", bc.Kind, name)
			var scale float64
			for _, m := range want.M {
				scale = math.Max(scale, math.Abs(float64(m)))
			}
			for i := range want.M {
				require.InDelta(t, float64(want.M[i]), float64(got.M[i]), tol*scale, "%v %s: moment %d of curve %d", bc.Kind, name, i%n, i/n)
			}
			require.NoError(t, cpu.Close())
			require.NoError(t, gpu.Close())
		}
	}
}
