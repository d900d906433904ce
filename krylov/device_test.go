package krylov_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/krylov"
	"github.com/bandsolve/bandsolve/sparse"
	"github.com/bandsolve/bandsolve/tridiag"
)

var _ krylov.CSRMatrix = (*sparse.CSR)(nil)

// jacobi is the Jacobi preconditioner of a, on host vectors.
func jacobi(a *sparse.CSR) krylov.Preconditioner[[]float64] {
	inv := make([]float64, a.N)
	for i := range inv {
		inv[i] = 1 / a.At(i, i)
	}
	return krylov.PreconditionerFunc[[]float64](func(_ context.Context, r, z []float64) error {
		for i := range r {
			z[i] = inv[i] * r[i]
		}
		return nil
	})
}

// The CPU path of NewSpace and NewCSROperator is HostSpace and MulVec: the
// same solve, bit for bit, on every CPU device.
func TestNewSpaceCPUSolvesLikeHostSpace(t *testing.T) {
	ctx := context.Background()
	a := sparse.ConvectionDiffusion2D(60, 40, 10)
	n := a.N
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]float64, n)
	for i := range b {
		b[i] = 2*r.Float64() - 1
	}
	opt := krylov.Options{Tol: 1e-10, History: true}
	op := krylov.OperatorFunc[[]float64](func(_ context.Context, x, y []float64) error { return a.MulVec(x, y) })
	want := make([]float64, n)
	wantRes, err := krylov.BiCGStab2(ctx, krylov.HostSpace{N: n}, op, jacobi(a), b, want, opt)
	require.NoError(t, err)
	require.True(t, wantRes.Converged)

	for name, dev := range map[string]tridiag.Device{"nil": nil, "default": tridiag.DefaultCPU(), "two workers": tridiag.NewCPU(2)} {
		t.Run(name, func(t *testing.T) {
			sp, err := krylov.NewSpace[[]float64](dev, n)
			require.NoError(t, err)
			defer sp.Close()
			assert.Equal(t, krylov.HostSpace{N: n}, sp)
			dop, err := krylov.NewCSROperator[[]float64](dev, a)
			require.NoError(t, err)
			defer dop.Close()
			x, err := sp.New()
			require.NoError(t, err)
			res, err := krylov.BiCGStab2(ctx, sp, dop, jacobi(a), b, x, opt)
			require.NoError(t, err)
			assert.Equal(t, wantRes, res)
			for i := range x {
				require.Equalf(t, math.Float64bits(want[i]), math.Float64bits(x[i]), "x[%d]: want %v, got %v", i, want[i], x[i])
			}
		})
	}
}

func TestNewCSROperatorCPU(t *testing.T) {
	a := sparse.ConvectionDiffusion2D(5, 1, 2)
	op, err := krylov.NewCSROperator[[]float64](nil, a)
	require.NoError(t, err)
	x, y, want := make([]float64, a.N), make([]float64, a.N), make([]float64, a.N)
	for i := range x {
		x[i] = float64(i%7) - 3
	}
	require.NoError(t, a.MulVec(x, want))
	require.NoError(t, op.Apply(context.Background(), x, y))
	assert.Equal(t, want, y)
	assert.ErrorIs(t, op.Apply(context.Background(), x, y[1:]), krylov.ErrDimension)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, op.Apply(ctx, x, y), context.Canceled)
	require.NoError(t, op.Close())

	// Matrices an operator cannot use.
	var nilCSR *sparse.CSR
	for name, m := range map[string]krylov.CSRMatrix{
		"nil":                 nil,
		"nil *sparse.CSR":     nilCSR,
		"rectangular":         &sparse.CSR{N: 2, M: 3, RowPtr: []int32{0, 1, 2}, Col: []int32{0, 1}, Val: []float64{1, 1}},
		"no rows":             &sparse.CSR{RowPtr: []int32{0}},
		"short val":           &sparse.CSR{N: 2, M: 2, RowPtr: []int32{0, 1, 2}, Col: []int32{0, 1}, Val: []float64{1}},
		"decreasing rowPtr":   &sparse.CSR{N: 2, M: 2, RowPtr: []int32{0, 2, 1}, Col: []int32{0, 1}, Val: []float64{1, 1}},
		"column out of range": &sparse.CSR{N: 2, M: 2, RowPtr: []int32{0, 1, 2}, Col: []int32{0, 2}, Val: []float64{1, 1}},
	} {
		_, err := krylov.NewCSROperator[[]float64](nil, m)
		assert.ErrorIs(t, err, krylov.ErrDimension, name)
	}
	_, err = krylov.NewSpace[[]float64](nil, 0)
	assert.ErrorIs(t, err, krylov.ErrDimension)
}

// A vector type the device does not take is refused, naming the device
// and its vector type.
func TestNewSpaceWrongVector(t *testing.T) {
	cpu := tridiag.DefaultCPU()
	_, err := krylov.NewSpace[*float64](cpu, 10)
	require.ErrorIs(t, err, krylov.ErrInvalidOption)
	assert.Contains(t, err.Error(), cpu.Name())
	assert.Contains(t, err.Error(), "[]float64")
	assert.Contains(t, err.Error(), "*float64")
	_, err = krylov.NewCSROperator[[]float32](nil, sparse.ConvectionDiffusion2D(3, 0, 0))
	require.ErrorIs(t, err, krylov.ErrInvalidOption)
	assert.Contains(t, err.Error(), "[]float64")
}

// otherDevice is a device no backend serves.
type otherDevice struct{}

func (otherDevice) Name() string { return "other:0" }

func TestNewSpaceWithoutBackend(t *testing.T) {
	for _, f := range []func() error{
		func() error { _, err := krylov.NewSpace[[]float64](otherDevice{}, 10); return err },
		func() error {
			_, err := krylov.NewCSROperator[[]float64](otherDevice{}, sparse.ConvectionDiffusion2D(3, 0, 0))
			return err
		},
		func() error { _, err := krylov.BackendOf(otherDevice{}); return err },
	} {
		err := f()
		require.ErrorIs(t, err, krylov.ErrInvalidOption)
		assert.Contains(t, err.Error(), "other:0")
		assert.Contains(t, err.Error(), "-tags cuda")
		assert.Contains(t, err.Error(), "github.com/bandsolve/bandsolve/gpu")
	}
}

// fakeDevice is served by fakeBackend, registered below: its vectors are
// *fakeVec, a handle the solver cannot index.
type fakeDevice struct{ fail bool }

func (fakeDevice) Name() string { return "fake:0" }

type fakeVec struct{ data []float64 }

type fakeBackend struct{ fail bool }

func (fakeBackend) Vector() reflect.Type { return reflect.TypeFor[*fakeVec]() }

func (b fakeBackend) NewSpace(n int) (any, error) {
	if b.fail {
		return nil, errors.New("out of fake memory")
	}
	return &fakeSpace{host: krylov.HostSpace{N: n}}, nil
}

func (fakeBackend) NewCSROperator(a krylov.CSRMatrix) (any, error) {
	return fakeOperator{a: a}, nil
}

type fakeSpace struct {
	host   krylov.HostSpace
	closed bool
}

func (s *fakeSpace) New() (*fakeVec, error) {
	v, err := s.host.New()
	return &fakeVec{v}, err
}
func (s *fakeSpace) Free(*fakeVec)                {}
func (s *fakeSpace) Copy(dst, src *fakeVec) error { return s.host.Copy(dst.data, src.data) }
func (s *fakeSpace) Zero(v *fakeVec) error        { return s.host.Zero(v.data) }
func (s *fakeSpace) Axpby(a float64, x *fakeVec, b float64, y *fakeVec) error {
	return s.host.Axpby(a, x.data, b, y.data)
}
func (s *fakeSpace) Dots(xs, ys []*fakeVec, out []float64) error {
	hx, hy := make([][]float64, len(xs)), make([][]float64, len(ys))
	for i := range xs {
		hx[i], hy[i] = xs[i].data, ys[i].data
	}
	return s.host.Dots(hx, hy, out)
}
func (s *fakeSpace) Close() error { s.closed = true; return nil }

type fakeOperator struct{ a krylov.CSRMatrix }

func (o fakeOperator) Apply(_ context.Context, x, y *fakeVec) error {
	return o.a.MulVec(x.data, y.data)
}
func (fakeOperator) Close() error { return nil }

func init() {
	krylov.RegisterBackend(func(dev tridiag.Device) (krylov.Backend, bool) {
		d, ok := dev.(fakeDevice)
		return fakeBackend{fail: d.fail}, ok
	})
}

// A registered backend serves its devices: the same solve runs on its
// vectors by changing the device and V.
func TestRegisteredBackend(t *testing.T) {
	ctx := context.Background()
	a := sparse.ConvectionDiffusion2D(20, 10, 5)
	n := a.N
	b := make([]float64, n)
	for i := range b {
		b[i] = 1
	}
	hx := make([]float64, n)
	hop := krylov.OperatorFunc[[]float64](func(_ context.Context, x, y []float64) error { return a.MulVec(x, y) })
	hres, err := krylov.BiCGStab2(ctx, krylov.HostSpace{N: n}, hop, nil, b, hx, krylov.Options{Tol: 1e-10})
	require.NoError(t, err)

	sp, err := krylov.NewSpace[*fakeVec](fakeDevice{}, n)
	require.NoError(t, err)
	op, err := krylov.NewCSROperator[*fakeVec](fakeDevice{}, a)
	require.NoError(t, err)
	x, err := sp.New()
	require.NoError(t, err)
	res, err := krylov.BiCGStab2(ctx, sp, op, nil, &fakeVec{b}, x, krylov.Options{Tol: 1e-10})
	require.NoError(t, err)
	assert.Equal(t, hres, res)
	assert.Equal(t, hx, x.data)
	require.NoError(t, sp.Close())
	assert.True(t, sp.(*fakeSpace).closed)

	_, err = krylov.NewSpace[[]float64](fakeDevice{}, n)
	require.ErrorIs(t, err, krylov.ErrInvalidOption)
	assert.Contains(t, err.Error(), "fake:0")
	assert.Contains(t, err.Error(), "*krylov_test.fakeVec")
	_, err = krylov.NewSpace[*fakeVec](fakeDevice{fail: true}, n)
	assert.ErrorContains(t, err, "out of fake memory")
	assert.ErrorContains(t, err, "fake:0")
}
