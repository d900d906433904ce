package krylov

import (
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func randVec(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = 2*rng.Float64() - 1
	}
	return v
}

func TestHostSpace(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for _, n := range []int{0, 1, 7, dotBlock + 1, parallelMin + 5, 2*parallelMin + 3} {
		sp := HostSpace{N: n}
		v, err := sp.New()
		require.NoError(t, err)
		require.Len(t, v, n)
		assert.Equal(t, make([]float64, n), v)

		x, y := randVec(rng, n), randVec(rng, n)
		want := make([]float64, n)

		// Axpby with β = 1, β = 0 (y not read, even if NaN), general β.
		for _, c := range []struct{ a, b float64 }{{2.5, 1}, {-1.5, 0}, {0.5, -3}} {
			yy := slices.Clone(y)
			if c.b == 0 && n > 0 {
				yy[n/2] = math.NaN()
			}
			for i := range want {
				want[i] = c.a*x[i] + c.b*yy[i]
				if c.b == 0 {
					want[i] = c.a * x[i]
				}
			}
			require.NoError(t, sp.Axpby(c.a, x, c.b, yy))
			assert.Equal(t, want, yy, "n = %d, α = %g, β = %g", n, c.a, c.b)
		}

		z := make([]float64, n)
		require.NoError(t, sp.Copy(z, x))
		assert.Equal(t, x, z)
		if n > 0 {
			z[0] = math.NaN()
		}
		require.NoError(t, sp.Zero(z))
		assert.Equal(t, make([]float64, n), z)

		// Dots against a naive sum, pairs sharing vectors.
		out := make([]float64, 3)
		require.NoError(t, sp.Dots([][]float64{x, x, y}, [][]float64{y, x, y}, out))
		var xy, xx, yy float64
		for i := range x {
			xy += x[i] * y[i]
			xx += x[i] * x[i]
			yy += y[i] * y[i]
		}
		scale := math.Sqrt(xx*yy) + 1e-300
		assert.InDelta(t, xy, out[0], 1e-13*scale)
		assert.InDelta(t, xx, out[1], 1e-13*scale)
		assert.InDelta(t, yy, out[2], 1e-13*scale)
		d, err := Dot[[]float64](sp, x, y)
		require.NoError(t, err)
		assert.Equal(t, out[0], d)
	}
}

// Inner products do not depend on the number of goroutines.
func TestHostSpaceDotsReproducible(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	n := 5*parallelMin + 17
	sp := HostSpace{N: n}
	x, y := randVec(rng, n), randVec(rng, n)
	var results [][]float64
	for _, procs := range []int{1, 2, 3, 8} {
		prev := runtime.GOMAXPROCS(procs)
		out := make([]float64, 2)
		err := sp.Dots([][]float64{x, y}, [][]float64{y, y}, out)
		runtime.GOMAXPROCS(prev)
		require.NoError(t, err)
		results = append(results, out)
	}
	for _, r := range results[1:] {
		assert.Equal(t, results[0], r)
	}
}

func TestHostSpaceErrors(t *testing.T) {
	sp := HostSpace{N: 4}
	short, ok := make([]float64, 3), make([]float64, 4)
	require.ErrorIs(t, sp.Copy(ok, short), ErrDimension)
	require.ErrorIs(t, sp.Copy(short, ok), ErrDimension)
	require.ErrorIs(t, sp.Zero(short), ErrDimension)
	require.ErrorIs(t, sp.Axpby(1, short, 1, ok), ErrDimension)
	require.ErrorIs(t, sp.Axpby(1, ok, 1, short), ErrDimension)
	require.ErrorIs(t, sp.Dots([][]float64{ok}, [][]float64{short}, make([]float64, 1)), ErrDimension)
	require.ErrorIs(t, sp.Dots([][]float64{ok}, [][]float64{ok}, make([]float64, 2)), ErrDimension)
	_, err := HostSpace{N: -1}.New()
	require.ErrorIs(t, err, ErrDimension)
}

func TestMixedPrecisionAdapter(t *testing.T) {
	ctx := context.Background()
	const n = 9
	calls := 0
	half := NewMixedPrecision(n, func(_ context.Context, r, z []float32) error {
		calls++
		for i := range r {
			z[i] = r[i] / 2
		}
		return nil
	})
	// Magnitudes below, inside and above float32's range: the power-of-two
	// scaling keeps them all to float32's relative precision.
	for _, scale := range []float64{1e-44, 1e-3, 1, 1e38, 1e300} {
		r := make([]float64, n)
		for i := range r {
			r[i] = scale * (float64(i) - 3.3) / 7
		}
		z := make([]float64, n)
		require.NoError(t, half.Apply(ctx, r, z))
		for i := range r {
			assert.InDelta(t, r[i]/2, z[i], 1e-7*scale, "scale %g", scale)
		}
	}
	assert.Equal(t, 5, calls)

	z := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}
	require.NoError(t, half.Apply(ctx, make([]float64, n), z))
	assert.Equal(t, make([]float64, n), z, "r = 0 gives z = 0 without a call")
	assert.Equal(t, 5, calls)

	r := make([]float64, n)
	r[2] = math.Inf(-1)
	require.ErrorIs(t, half.Apply(ctx, r, z), ErrNonFinite)
	r[2] = math.NaN()
	require.ErrorIs(t, half.Apply(ctx, r, z), ErrNonFinite)
	require.ErrorIs(t, half.Apply(ctx, r[:n-1], z), ErrDimension)
}
