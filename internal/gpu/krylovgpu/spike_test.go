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

// randomBandSystem draws from a generator seeded with seed a band of n
// rows and half-bandwidth k with diagonal dominance d (banded.Random),
// then a right-hand side b in (−1, 1); a is the band's stored entries as
// a sparse matrix (bandCSR).
func randomBandSystem(seed uint64, n, k int, d float64) (m *banded.Band[float64], a *sparse.CSR, b []float64) {
	r := rand.New(rand.NewPCG(seed, seed+1))
	m = banded.Random[float64](n, k, d, r)
	a = bandCSR(m)
	b = make([]float64, n)
	for i := range b {
		b[i] = r.Float64()*2 - 1
	}
	return m, a, b
}

// deviceSystem is a sparse system on the device: a space of its vectors,
// the operator of its matrix on them, its right-hand side b and a solution
// vector x (zero until a solve writes it).
type deviceSystem struct {
	sp   *Space
	op   krylov.Operator[*cuda.Buffer[float64]]
	b, x *cuda.Buffer[float64]
}

// newDeviceSystem uploads the system a x = b; all of it is freed when t
// ends.
func newDeviceSystem(t *testing.T, a *sparse.CSR, b []float64) deviceSystem {
	t.Helper()
	var ds deviceSystem
	var err error
	ds.sp, err = NewSpace(dev, a.N)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ds.sp.Close() })
	da, err := UploadSparse(dev, a)
	require.NoError(t, err)
	t.Cleanup(func() { _ = da.Close() })
	ds.op, err = ds.sp.Operator(da)
	require.NoError(t, err)
	ds.b, err = cuda.Upload(dev, b)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ds.b.Free() })
	ds.x, err = ds.sp.New()
	require.NoError(t, err)
	t.Cleanup(func() { ds.sp.Free(ds.x) })
	return ds
}

// assertTrueResidual asserts ‖b − a x‖/‖b‖ ≤ tol for the device's x,
// computed on the host.
func assertTrueResidual(t *testing.T, a *sparse.CSR, b []float64, x *cuda.Buffer[float64], tol float64) {
	t.Helper()
	hx := make([]float64, len(b))
	require.NoError(t, x.CopyTo(hx))
	ax := make([]float64, len(b))
	require.NoError(t, a.MulVec(hx, ax))
	var rr, bb float64
	for i := range hx {
		rr += (b[i] - ax[i]) * (b[i] - ax[i])
		bb += b[i] * b[i]
	}
	assert.LessOrEqual(t, math.Sqrt(rr/bb), tol, "true residual")
}

// The mixed-precision strategy of SPIKE::GPU (§4): float32 SPIKE on the GPU
// preconditioning float64 BiCGStab(2) on the GPU, for a band that is not
// diagonally dominant (d = 0.5, where truncated SPIKE is not exact), beside
// the same on the host (spike.Mixed).
func TestSpikeGPUMixedBiCGStab2(t *testing.T) {
	ctx := context.Background()
	const n, k, P = 50000, 10, 40
	m, a, b := randomBandSystem(15, n, k, 0.5)
	opt := krylov.Options{Tol: 1e-10, MaxIter: 2000}
	opts := spike.Options{Partitions: P}

	hpc, err := spike.NewPreconditioner(m, opts, spike.Mixed)
	require.NoError(t, err)
	op := krylov.OperatorFunc[[]float64](func(_ context.Context, x, y []float64) error { return a.MulVec(x, y) })
	hx := make([]float64, n)
	hres, err := krylov.BiCGStab2(ctx, krylov.HostSpace{N: n}, op, hpc, b, hx, opt)
	require.NoError(t, err)

	ds := newDeviceSystem(t, a, b)
	plan, err := spikegpu.NewPlan[float32](dev, n, k, opts)
	require.NoError(t, err)
	defer plan.Close()
	require.NoError(t, plan.FactorBand(ctx, banded.Convert[float32](m)))
	mp, err := NewMixedPrecision(ds.sp, plan.Solve)
	require.NoError(t, err)
	defer mp.Close()
	gres, err := krylov.BiCGStab2(ctx, ds.sp, ds.op, mp, ds.b, ds.x, opt)
	require.NoError(t, err)
	t.Logf("d=0.5, N=%d, K=%d, P=%d: host %d steps (residual %.3g), GPU %d steps (residual %.3g)",
		n, k, P, hres.Iterations, hres.Residual, gres.Iterations, gres.Residual)
	require.True(t, gres.Converged)
	// The float32 solves are the host's bit for bit; the GPU's inner
	// products and products sum in other orders, which moves the count a
	// little.
	assert.InDelta(t, hres.Iterations, gres.Iterations, math.Max(4, float64(hres.Iterations)/5), "iterations host vs GPU")
	assertTrueResidual(t, a, b, ds.x, 1.01e-10)

	// The float64 plan is a krylov.Preconditioner of the device vectors.
	p64, err := spikegpu.NewPlan[float64](dev, n, k, opts)
	require.NoError(t, err)
	defer p64.Close()
	require.NoError(t, p64.FactorBand(ctx, m))
	require.NoError(t, ds.sp.Zero(ds.x))
	res64, err := krylov.BiCGStab2[*cuda.Buffer[float64]](ctx, ds.sp, ds.op, p64, ds.b, ds.x, opt)
	require.NoError(t, err)
	t.Logf("float64 SPIKE on the GPU: %d steps (residual %.3g)", res64.Iterations, res64.Residual)
	assert.True(t, res64.Converged)
}

// A float64 blocked plan (K = 200 > 167) as the preconditioner of
// BiCGStab(2) on device vectors for a band that is not diagonally dominant.
func TestSpikeGPUBlockedBiCGStab2(t *testing.T) {
	ctx := context.Background()
	const n, k, P = 24000, 200, 8
	m, a, b := randomBandSystem(25, n, k, 0.5)
	opt := krylov.Options{Tol: 1e-10, MaxIter: 500}
	ds := newDeviceSystem(t, a, b)
	plan, err := spikegpu.NewPlan[float64](dev, n, k, spike.Options{Partitions: P})
	require.NoError(t, err)
	defer plan.Close()
	require.True(t, plan.Blocked())
	require.NoError(t, plan.FactorBand(ctx, m))
	res, err := krylov.BiCGStab2[*cuda.Buffer[float64]](ctx, ds.sp, ds.op, plan, ds.b, ds.x, opt)
	require.NoError(t, err)
	t.Logf("d=0.5, N=%d, K=%d, P=%d: %d steps (residual %.3g)", n, k, P, res.Iterations, res.Residual)
	require.True(t, res.Converged)
	assertTrueResidual(t, a, b, ds.x, 1.01e-10)
}
