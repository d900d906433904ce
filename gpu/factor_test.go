//go:build cuda

package gpu_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/gpu"
	"github.com/bandsolve/bandsolve/tridiag"
)

// A GPU plan has no stored factorization yet: Factor and the LDLT
// algorithm are refused with ErrOptions, and SolveMany solves the columns
// one after another, each as Solve solves it (bit for bit).
func TestFactorOnGPU(t *testing.T) {
	dev, err := gpu.Open(0)
	require.NoError(t, err)
	defer dev.Close()
	ctx := context.Background()
	const n, g, nrhs = 300, 17, 3
	shape := tridiag.Shape{N: n, G: g}
	p, err := tridiag.NewPlan[float64](dev, shape, tridiag.Options{})
	require.NoError(t, err)
	defer p.Close()
	r := rand.New(rand.NewPCG(3, 4))
	a, b, c := make([]float64, n*g), make([]float64, n*g), make([]float64, n*g)
	for i := range b {
		a[i], b[i], c[i] = r.Float64()-0.5, 3+r.Float64(), r.Float64()-0.5
	}
	_, err = p.Factor(ctx, a, b, c)
	assert.ErrorIs(t, err, tridiag.ErrOptions)

	d := make([]float64, nrhs*n*g)
	for i := range d {
		d[i] = r.Float64()*2 - 1
	}
	x := make([]float64, len(d))
	require.NoError(t, p.SolveMany(ctx, nrhs, a, b, c, d, x))
	L := shape.Len()
	for col := range nrhs {
		one := make([]float64, L)
		require.NoError(t, p.Solve(ctx, a, b, c, d[col*L:(col+1)*L], one))
		assert.Equal(t, one, x[col*L:(col+1)*L], "column %d", col)
	}

	_, err = tridiag.NewPlan[float64](dev, shape, tridiag.Options{Algorithm: tridiag.LDLT})
	assert.ErrorIs(t, err, tridiag.ErrOptions)
}

// A GPU has no ragged batches yet: NewRaggedPlan refuses the device with
// ErrOptions.
func TestRaggedOnGPU(t *testing.T) {
	dev, err := gpu.Open(0)
	require.NoError(t, err)
	defer dev.Close()
	_, err = tridiag.NewRaggedPlan[float32](dev, []int{3, 100, 7}, tridiag.Options{})
	assert.ErrorIs(t, err, tridiag.ErrOptions)
}
