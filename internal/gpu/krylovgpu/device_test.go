//go:build cuda

package krylovgpu

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/krylov"
	"github.com/bandsolve/bandsolve/sparse"
)

// krylov.NewSpace and krylov.NewCSROperator on the GPU (Register, called
// by TestMain) are Space and CSR: the products are UploadSparse's bit for
// bit, and a BiCGStab2 solve through them converges as on the host.
func TestKrylovDeviceNeutral(t *testing.T) {
	ctx := context.Background()
	p := newKryProblem(100, 50, 20, 9)
	n := p.a.N
	s, err := krylov.NewSpace[*cuda.Buffer[float64]](dev, n)
	require.NoError(t, err)
	defer s.Close()
	sp, ok := s.(*Space)
	require.True(t, ok, "the GPU's space is a *Space, not %T", s)
	assert.Equal(t, n, sp.Len())
	op, err := krylov.NewCSROperator[*cuda.Buffer[float64]](dev, p.a)
	require.NoError(t, err)
	defer op.Close()
	g, ok := op.(*CSR)
	require.True(t, ok, "the GPU's operator is a *CSR, not %T", op)
	assert.Equal(t, p.a.NNZ(), g.NNZ())

	ref, err := UploadSparse(dev, p.a)
	require.NoError(t, err)
	defer ref.Close()
	r := rand.New(rand.NewPCG(4, 4))
	x := kryVec(t, sp, kryRandom(r, n, 1))
	y1, y2 := kryVec(t, sp, make([]float64, n)), kryVec(t, sp, make([]float64, n))
	require.NoError(t, op.Apply(ctx, x, y1))
	require.NoError(t, ref.Apply(ctx, x, y2))
	kryBitsEqual(t, kryGet(t, sp, y2), kryGet(t, sp, y1), "krylov.NewCSROperator")

	opt := krylov.Options{Tol: 1e-10, MaxIter: 5000}
	hres, _, err := p.hostSolve(false, opt)
	require.NoError(t, err)
	d, err := cuda.Upload(dev, p.invDia)
	require.NoError(t, err)
	defer d.Free()
	pc := krylov.PreconditionerFunc[*cuda.Buffer[float64]](func(_ context.Context, r, z *cuda.Buffer[float64]) error { return sp.Mul(d, r, z) })
	b := kryVec(t, sp, p.b)
	gx, err := s.New()
	require.NoError(t, err)
	defer s.Free(gx)
	res, err := krylov.BiCGStab2(ctx, s, op, pc, b, gx, opt)
	require.NoError(t, err)
	require.True(t, res.Converged)
	assert.InDelta(t, hres.Iterations, res.Iterations, 4, "iterations host vs GPU")

	// The GPU takes device buffers, not host slices.
	_, err = krylov.NewSpace[[]float64](dev, n)
	require.ErrorIs(t, err, krylov.ErrInvalidOption)
	assert.Contains(t, err.Error(), dev.Name())
	assert.Contains(t, err.Error(), "*cuda.Buffer[float64]")
	_, err = krylov.NewCSROperator[[]float64](dev, p.a)
	require.ErrorIs(t, err, krylov.ErrInvalidOption)
	// The CPU still takes host slices.
	_, err = krylov.NewSpace[*cuda.Buffer[float64]](nil, n)
	require.ErrorIs(t, err, krylov.ErrInvalidOption)
	_, err = krylov.NewCSROperator[*cuda.Buffer[float64]](dev, &sparse.CSR{N: 2, M: 3, RowPtr: []int32{0, 0, 0}})
	assert.ErrorIs(t, err, krylov.ErrDimension)
}
