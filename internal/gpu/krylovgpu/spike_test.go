//go:build cuda

package krylovgpu

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/spikegpu"
	"github.com/bandsolve/bandsolve/krylov"
	"github.com/bandsolve/bandsolve/sparse"
	"github.com/bandsolve/bandsolve/spike"
)

// bandCSR is the band m as a sparse matrix (its stored entries).
func bandCSR(m *banded.Band[float64]) *sparse.CSR {
	a := &sparse.CSR{N: m.N, M: m.N, RowPtr: make([]int32, m.N+1)}
	for i := 0; i < m.N; i++ {
		for j := max(0, i-m.K); j <= min(m.N-1, i+m.K); j++ {
			a.Col = append(a.Col, int32(j))
			a.Val = append(a.Val, m.At(i, j))
		}
		a.RowPtr[i+1] = int32(len(a.Col))
	}
	return a
}

// The mixed-precision strategy of SPIKE::GPU (§4): float32 SPIKE on the GPU
// preconditioning float64 BiCGStab(2) on the GPU, for a band that is not
// diagonally dominant (d = 0.5, where truncated SPIKE is not exact), beside
// the same on the host (spike.Mixed).
func TestSpikeGPUMixedBiCGStab2(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(15, 16))
	const n, k, P = 50000, 10, 40
	m := banded.Random[float64](n, k, 0.5, r)
	a := bandCSR(m)
	b := make([]float64, n)
	for i := range b {
		b[i] = r.Float64()*2 - 1
	}
	opt := krylov.Options{Tol: 1e-10, MaxIter: 2000}
	opts := spike.Options{Partitions: P}

	hpc, err := spike.NewPreconditioner(m, opts, spike.Mixed)
	require.NoError(t, err)
	op := krylov.OperatorFunc[[]float64](func(_ context.Context, x, y []float64) error { return a.MulVec(x, y) })
	hx := make([]float64, n)
	hres, err := krylov.BiCGStab2(ctx, krylov.HostSpace{N: n}, op, hpc, b, hx, opt)
	require.NoError(t, err)

	sp, err := NewSpace(dev, n)
	require.NoError(t, err)
	defer sp.Close()
	da, err := UploadSparse(dev, a)
	require.NoError(t, err)
	defer da.Close()
	gop, err := sp.Operator(da)
	require.NoError(t, err)
	plan, err := spikegpu.NewPlan[float32](dev, n, k, opts)
	require.NoError(t, err)
	defer plan.Close()
	require.NoError(t, plan.FactorBand(ctx, banded.Convert[float32](m)))
	mp, err := NewMixedPrecision(sp, plan.Solve)
	require.NoError(t, err)
	defer mp.Close()
	db, err := cuda.Upload(dev, b)
	require.NoError(t, err)
	defer db.Free()
	dx, err := sp.New()
	require.NoError(t, err)
	defer sp.Free(dx)
	gres, err := krylov.BiCGStab2(ctx, sp, gop, mp, db, dx, opt)
	require.NoError(t, err)
	t.Logf("d=0.5, N=%d, K=%d, P=%d: host %d steps (residual %.3g), GPU %d steps (residual %.3g)",
		n, k, P, hres.Iterations, hres.Residual, gres.Iterations, gres.Residual)
	require.True(t, gres.Converged)
	// The float32 solves are the host's bit for bit; the GPU's inner
	// products and products sum in other orders, which moves the count a
	// little.
	assert.InDelta(t, hres.Iterations, gres.Iterations, math.Max(4, float64(hres.Iterations)/5), "iterations host vs GPU")
	x := make([]float64, n)
	require.NoError(t, dx.CopyTo(x))
	ax := make([]float64, n)
	require.NoError(t, a.MulVec(x, ax))
	var rr, bb float64
	for i := range x {
		rr += (b[i] - ax[i]) * (b[i] - ax[i])
		bb += b[i] * b[i]
	}
	assert.LessOrEqual(t, math.Sqrt(rr/bb), 1.01e-10, "true residual")

	// The float64 plan is a krylov.Preconditioner of the device vectors.
	p64, err := spikegpu.NewPlan[float64](dev, n, k, opts)
	require.NoError(t, err)
	defer p64.Close()
	require.NoError(t, p64.FactorBand(ctx, m))
	require.NoError(t, sp.Zero(dx))
	res64, err := krylov.BiCGStab2[*cuda.Buffer[float64]](ctx, sp, gop, p64, db, dx, opt)
	require.NoError(t, err)
	t.Logf("float64 SPIKE on the GPU: %d steps (residual %.3g)", res64.Iterations, res64.Residual)
	assert.True(t, res64.Converged)
}

// A float64 blocked plan (K = 200 > 167) as the preconditioner of
// BiCGStab(2) on device vectors for a band that is not diagonally dominant.
func TestSpikeGPUBlockedBiCGStab2(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(25, 26))
	const n, k, P = 24000, 200, 8
	m := banded.Random[float64](n, k, 0.5, r)
	a := bandCSR(m)
	b := make([]float64, n)
	for i := range b {
		b[i] = r.Float64()*2 - 1
	}
	opt := krylov.Options{Tol: 1e-10, MaxIter: 500}
	sp, err := NewSpace(dev, n)
	require.NoError(t, err)
	defer sp.Close()
	da, err := UploadSparse(dev, a)
	require.NoError(t, err)
	defer da.Close()
	gop, err := sp.Operator(da)
	require.NoError(t, err)
	plan, err := spikegpu.NewPlan[float64](dev, n, k, spike.Options{Partitions: P})
	require.NoError(t, err)
	defer plan.Close()
	require.True(t, plan.Blocked())
	require.NoError(t, plan.FactorBand(ctx, m))
	db, err := cuda.Upload(dev, b)
	require.NoError(t, err)
	defer db.Free()
	dx, err := sp.New()
	require.NoError(t, err)
	defer sp.Free(dx)
	res, err := krylov.BiCGStab2[*cuda.Buffer[float64]](ctx, sp, gop, plan, db, dx, opt)
	require.NoError(t, err)
	t.Logf("d=0.5, N=%d, K=%d, P=%d: %d steps (residual %.3g)", n, k, P, res.Iterations, res.Residual)
	require.True(t, res.Converged)
	x := make([]float64, n)
	require.NoError(t, dx.CopyTo(x))
	ax := make([]float64, n)
	require.NoError(t, a.MulVec(x, ax))
	var rr, bb float64
	for i := range x {
		rr += (b[i] - ax[i]) * (b[i] - ax[i])
		bb += b[i] * b[i]
	}
	assert.LessOrEqual(t, math.Sqrt(rr/bb), 1.01e-10, "true residual")
}
