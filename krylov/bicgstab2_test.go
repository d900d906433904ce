package krylov

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const tol = 1e-10

// solveHost runs BiCGStab2 on the host from x₀ = 0.
func solveHost(t *testing.T, a hostOp, m Preconditioner[[]float64], b []float64, opt Options) ([]float64, Result, error) {
	t.Helper()
	x := make([]float64, len(b))
	res, err := BiCGStab2(context.Background(), HostSpace{N: len(b)}, a, m, b, x, opt)
	return x, res, err
}

// requireSolved checks a converged solve against an independent residual
// and the known solution.
func requireSolved(t *testing.T, name string, a hostOp, b, x, xs []float64, res Result, err error, maxErr float64) {
	t.Helper()
	require.NoError(t, err, name)
	require.True(t, res.Converged, name)
	indep := residual(a, b, x)
	assert.LessOrEqual(t, res.Residual, tol, name)
	assert.LessOrEqual(t, indep, tol*(1+1e-6), name)
	assert.InDelta(t, indep, res.Residual, 1e-6*indep+1e-18, "%s: reported residual is the true one", name)
	assert.Less(t, relErr(x, xs), maxErr, name)
	assert.Equal(t, res.Iterations+1, len(res.History), name)
	assert.Equal(t, res.Residual, res.History[len(res.History)-1], name)
	assert.Equal(t, 1.0, res.History[0], "%s: x₀ = 0 gives relative residual 1", name)
}

// A pentadiagonal matrix, not diagonally dominant in sign pattern (random
// signs on the diagonal), preconditioned by the exact inverse of its
// tridiagonal part, in float64 and in float32.
func TestBandedTridiagonalPreconditioner(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 997
	a := randomBand(rng, n, 2, 1.0, true)
	b, xs := rhsFor(rng, a, n)
	tri := a.tridiagPart()

	x, id, err := solveHost(t, a, nil, b, Options{History: true})
	requireSolved(t, "identity", a, b, x, xs, id, err, 1e-7)
	x, pre, err := solveHost(t, a, tri.precond(), b, Options{History: true})
	requireSolved(t, "tridiagonal part", a, b, x, xs, pre, err, 1e-7)
	x, mixed, err := solveHost(t, a, NewMixedPrecision(n, tri.solve32()), b, Options{History: true})
	requireSolved(t, "tridiagonal part in float32", a, b, x, xs, mixed, err, 1e-7)

	t.Logf("steps: identity %d, T⁻¹ %d, T⁻¹ in float32 %d", id.Iterations, pre.Iterations, mixed.Iterations)
	assert.Less(t, 4*pre.Iterations, id.Iterations, "T⁻¹ must cut the steps by more than 4×")
	assert.LessOrEqual(t, mixed.Iterations, pre.Iterations*3/2+2, "float32 preconditioning with residual replacement costs few extra steps")
	// Two operator and two preconditioner applications per step, plus the
	// convergence checks and residual replacements.
	assert.GreaterOrEqual(t, pre.OperatorApplies, 2*pre.Iterations+1)
	assert.GreaterOrEqual(t, pre.PreconditionerApplies, 2*pre.Iterations+1)
	assert.Zero(t, id.PreconditionerApplies)
}

// Strong convection (cell Péclet number ≈ 10): eigenvalues far from the
// real axis, where BiCGStab(1)'s degree-1 stabilising polynomial fails and
// BiCGStab(2) does not.
func TestConvectionDiffusionWhereBiCGStab1Fails(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	a := convDiff{m: 47, beta: 1000}
	n := a.m * a.m
	b, xs := rhsFor(rng, a, n)
	x, res, err := solveHost(t, a, nil, b, Options{History: true})
	requireSolved(t, "BiCGStab(2)", a, b, x, xs, res, err, 1e-6)
	k1, ok1 := bicgstab1(a, b, tol, 1000)
	t.Logf("steps: BiCGStab(2) %d; BiCGStab(1) %d (reached tolerance: %v)", res.Iterations, k1, ok1)
	assert.True(t, !ok1 || k1 > 2*res.Iterations, "BiCGStab(1) should struggle here")
}

// Moderate convection, ILU(0) preconditioning in float64 and float32.
func TestConvectionDiffusionILU(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	a := convDiff{m: 47, beta: 300}
	n := a.m * a.m
	b, xs := rhsFor(rng, a, n)
	f64, f32 := newILU0[float64](a), newILU0[float32](a)

	x, id, err := solveHost(t, a, nil, b, Options{History: true})
	requireSolved(t, "identity", a, b, x, xs, id, err, 1e-7)
	ilu := PreconditionerFunc[[]float64](func(_ context.Context, r, z []float64) error { f64.solve(r, z); return nil })
	x, pre, err := solveHost(t, a, ilu, b, Options{History: true})
	requireSolved(t, "ILU(0)", a, b, x, xs, pre, err, 1e-7)
	mp := NewMixedPrecision(n, func(_ context.Context, r, z []float32) error { f32.solve(r, z); return nil })
	x, mixed, err := solveHost(t, a, mp, b, Options{History: true})
	requireSolved(t, "ILU(0) in float32", a, b, x, xs, mixed, err, 1e-7)

	t.Logf("steps: identity %d, ILU(0) %d, ILU(0) in float32 %d", id.Iterations, pre.Iterations, mixed.Iterations)
	assert.Less(t, 2*pre.Iterations, id.Iterations)
	assert.Less(t, mixed.Iterations, id.Iterations)
	assert.LessOrEqual(t, mixed.Iterations, pre.Iterations*3/2+2, "float32 preconditioning with residual replacement costs few extra steps")
}

// A random sparse matrix with badly scaled rows: Jacobi undoes the scaling.
func TestRandomSparseJacobi(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const n = 1501
	a := randomSparse(rng, n, 6, 1.2)
	b, xs := rhsFor(rng, a, n)
	d := a.diag()

	// Unpreconditioned, this badly scaled matrix takes about 900 steps:
	// allow room so that the test is about Jacobi, not the step limit.
	x, id, err := solveHost(t, a, nil, b, Options{History: true, MaxIter: 4000})
	requireSolved(t, "identity", a, b, x, xs, id, err, 1e-4) // κ ≈ 1e4: the error lags the residual
	x, pre, err := solveHost(t, a, jacobi(d), b, Options{History: true})
	requireSolved(t, "Jacobi", a, b, x, xs, pre, err, 1e-8)
	d32 := make([]float32, n)
	for i := range d {
		d32[i] = float32(d[i])
	}
	mp := NewMixedPrecision(n, func(_ context.Context, r, z []float32) error {
		for i := range r {
			z[i] = r[i] / d32[i]
		}
		return nil
	})
	x, mixed, err := solveHost(t, a, mp, b, Options{History: true})
	requireSolved(t, "Jacobi in float32", a, b, x, xs, mixed, err, 1e-8)

	t.Logf("steps: identity %d, Jacobi %d, Jacobi in float32 %d", id.Iterations, pre.Iterations, mixed.Iterations)
	assert.Less(t, 10*pre.Iterations, id.Iterations)
	assert.LessOrEqual(t, mixed.Iterations, pre.Iterations*3/2+2, "float32 preconditioning with residual replacement costs few extra steps")
}

// The float32 preconditioner works whatever the scale of b, including
// scales outside float32's range, thanks to MixedPrecision's scaling.
func TestMixedPrecisionScales(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const n = 501
	a := randomBand(rng, n, 3, 0.8, false)
	b0, xs0 := rhsFor(rng, a, n)
	mp := NewMixedPrecision(n, a.tridiagPart().solve32())
	for _, scale := range []float64{1, 1e-42, 1e-30, 1e30, 1e45} {
		b, xs := make([]float64, n), make([]float64, n)
		for i := range b {
			b[i], xs[i] = b0[i]*scale, xs0[i]*scale
		}
		x, res, err := solveHost(t, a, mp, b, Options{History: true})
		requireSolved(t, "scaled", a, b, x, xs, res, err, 1e-8)
		t.Logf("scale %g: %d steps", scale, res.Iterations)
	}
}

// dense is a row-major n×n matrix.
type dense struct {
	n int
	a []float64
}

func (m *dense) Apply(_ context.Context, x, y []float64) error {
	for i := range m.n {
		y[i] = dot(m.a[i*m.n:(i+1)*m.n], x)
	}
	return nil
}

func randomDense(rng *rand.Rand, n int) *dense {
	m := &dense{n: n, a: make([]float64, n*n)}
	for i := range m.a {
		m.a[i] = 2*rng.Float64() - 1
	}
	for i := range n {
		m.a[i*n+i] += float64(n) / 2
	}
	return m
}

// BiCG-type methods terminate after at most n steps in exact arithmetic;
// on small well-conditioned systems that shows up in floating point too.
// Also covers the odd sizes 1, 2, 3.
func TestSmallSystemsTerminate(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{1, 2, 3, 5, 7, 12, 19} {
		a := randomDense(rng, n)
		b, xs := rhsFor(rng, a, n)
		x, res, err := solveHost(t, a, nil, b, Options{History: true})
		requireSolved(t, "dense", a, b, x, xs, res, err, 1e-8)
		assert.LessOrEqual(t, res.Iterations, n+2, "n = %d", n)
	}
}

// A multiple of the identity is solved by the first BiCG step: an odd step
// count, the solve stopping in the middle of a cycle.
func TestStopsMidCycle(t *testing.T) {
	const n = 33
	a := OperatorFunc[[]float64](func(_ context.Context, x, y []float64) error {
		for i := range x {
			y[i] = 3 * x[i]
		}
		return nil
	})
	b, xs := rhsFor(rand.New(rand.NewPCG(13, 14)), a, n)
	x, res, err := solveHost(t, a, nil, b, Options{History: true})
	requireSolved(t, "3·I", a, b, x, xs, res, err, 1e-14)
	assert.Equal(t, 1, res.Iterations)
}

// IdentityPreconditioner and a nil preconditioner do the same arithmetic.
func TestIdentityPreconditionerMatchesNil(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	a := convDiff{m: 23, beta: 200}
	n := a.m * a.m
	b, _ := rhsFor(rng, a, n)
	x1, r1, err := solveHost(t, a, nil, b, Options{})
	require.NoError(t, err)
	x2, r2, err := solveHost(t, a, IdentityPreconditioner[[]float64]{Space: HostSpace{N: n}}, b, Options{})
	require.NoError(t, err)
	assert.Equal(t, r1.Iterations, r2.Iterations)
	assert.Equal(t, x1, x2)
	assert.Equal(t, r2.OperatorApplies-1, r2.PreconditionerApplies, "every operator application but the initial residual's is followed by M⁻¹... or a check")
	assert.Nil(t, r1.History, "History only on request")
}

func TestZeroRightHandSide(t *testing.T) {
	const n = 10
	a := randomDense(rand.New(rand.NewPCG(17, 18)), n)
	x := make([]float64, n)
	for i := range x {
		x[i] = float64(i) + 1
	}
	x[3] = math.NaN()
	res, err := BiCGStab2(context.Background(), HostSpace{N: n}, a, nil, make([]float64, n), x, Options{History: true})
	require.NoError(t, err)
	assert.True(t, res.Converged)
	assert.Zero(t, res.Iterations)
	assert.Zero(t, res.Residual)
	assert.Equal(t, make([]float64, n), x)
	assert.Equal(t, []float64{0}, res.History)
}

func TestInitialGuessIsSolution(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	a := randomBand(rng, 101, 1, 2, false)
	b, xs := rhsFor(rng, a, 101)
	x := append([]float64(nil), xs...)
	res, err := BiCGStab2(context.Background(), HostSpace{N: 101}, a, nil, b, x, Options{})
	require.NoError(t, err)
	assert.True(t, res.Converged)
	assert.Zero(t, res.Iterations)
	assert.Equal(t, 1, res.OperatorApplies)
	assert.LessOrEqual(t, res.Residual, 1e-15)
}

// A skew-symmetric matrix has (A·v, v) = 0 for every v, so with the shadow
// residual r̃₀ = r̂₀ the very first σ = (A·r̂₀, r̂₀) vanishes.
func TestBreakdown(t *testing.T) {
	const n = 6
	skew := &band{n: n, k: 1, a: make([]float64, 3*n)}
	for i := range n {
		if i > 0 {
			skew.set(i, i-1, -1)
		}
		if i < n-1 {
			skew.set(i, i+1, 1)
		}
	}
	b := []float64{1, 2, 3, 4, 5, 6}
	_, res, err := solveHost(t, skew, nil, b, Options{})
	require.ErrorIs(t, err, ErrBreakdown)
	assert.Contains(t, err.Error(), "σ")
	assert.False(t, res.Converged)
	assert.Zero(t, res.Iterations)
	assert.InDelta(t, 1, res.Residual, 1e-15)

	zero := OperatorFunc[[]float64](func(_ context.Context, x, y []float64) error { clear(y); return nil })
	_, res, err = solveHost(t, zero, nil, b, Options{})
	require.ErrorIs(t, err, ErrBreakdown)
	assert.False(t, res.Converged)
}

func TestNotConverged(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	a := convDiff{m: 47, beta: 1000}
	n := a.m * a.m
	b, _ := rhsFor(rng, a, n)
	for _, maxIter := range []int{6, 7} {
		x, res, err := solveHost(t, a, nil, b, Options{MaxIter: maxIter, History: true})
		require.ErrorIs(t, err, ErrNotConverged)
		assert.False(t, res.Converged)
		assert.Equal(t, maxIter, res.Iterations)
		assert.Greater(t, res.Residual, tol)
		assert.InDelta(t, residual(a, b, x), res.Residual, 1e-12, "Residual is the true one")
		assert.Len(t, res.History, maxIter+1)
	}
	// An unreachable tolerance ends in ErrNotConverged (or, as the
	// recurrences lose their meaning at the rounding level, a breakdown),
	// never in a false claim of convergence.
	x, res, err := solveHost(t, a, nil, b, Options{Tol: 1e-19, MaxIter: 400})
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrNotConverged) || errors.Is(err, ErrBreakdown), err.Error())
	assert.False(t, res.Converged)
	assert.InDelta(t, residual(a, b, x), res.Residual, 1e-12)
	assert.Less(t, res.Residual, 1e-12)
}

func TestCancellation(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	a := convDiff{m: 31, beta: 1000}
	n := a.m * a.m
	b, _ := rhsFor(rng, a, n)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	x := make([]float64, n)
	res, err := BiCGStab2(ctx, HostSpace{N: n}, a, nil, b, x, Options{})
	require.ErrorIs(t, err, context.Canceled)
	assert.False(t, res.Converged)
	assert.Zero(t, res.Iterations)

	// Cancel from inside the operator after 20 applications.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	op := OperatorFunc[[]float64](func(ctx context.Context, x, y []float64) error {
		if calls++; calls == 20 {
			cancel()
		}
		return a.Apply(ctx, x, y)
	})
	x = make([]float64, n)
	res, err = BiCGStab2(ctx, HostSpace{N: n}, op, nil, b, x, Options{})
	require.ErrorIs(t, err, context.Canceled)
	assert.False(t, res.Converged)
	assert.InDelta(t, 10, res.Iterations, 1, "stopped at the next step after the 20th application")
	assert.Greater(t, res.Residual, 0.0)
}

var errBoom = errors.New("boom")

func TestErrorsPropagate(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	const n = 50
	a := randomBand(rng, n, 1, 1.5, false)
	b, _ := rhsFor(rng, a, n)
	failAt := func(k int, fill float64, err error) OperatorFunc[[]float64] {
		calls := 0
		return func(ctx context.Context, x, y []float64) error {
			if e := a.Apply(ctx, x, y); e != nil {
				return e
			}
			if calls++; calls == k {
				y[n/2] = fill
				return err
			}
			return nil
		}
	}

	_, _, err := solveHost(t, failAt(3, 0, errBoom), nil, b, Options{})
	require.ErrorIs(t, err, errBoom)
	assert.Contains(t, err.Error(), "operator")

	_, _, err = solveHost(t, a, PreconditionerFunc[[]float64](func(context.Context, []float64, []float64) error { return errBoom }), b, Options{})
	require.ErrorIs(t, err, errBoom)
	assert.Contains(t, err.Error(), "preconditioner")

	mp := NewMixedPrecision(n, func(context.Context, []float32, []float32) error { return errBoom })
	_, _, err = solveHost(t, a, mp, b, Options{})
	require.ErrorIs(t, err, errBoom)

	for _, bad := range []float64{math.NaN(), math.Inf(1)} {
		_, _, err = solveHost(t, failAt(4, bad, nil), nil, b, Options{})
		require.ErrorIs(t, err, ErrNonFinite)

		bb := append([]float64(nil), b...)
		bb[7] = bad
		_, _, err = solveHost(t, a, nil, bb, Options{})
		require.ErrorIs(t, err, ErrNonFinite)

		inf := NewMixedPrecision(n, func(_ context.Context, r, z []float32) error {
			copy(z, r)
			z[1] = float32(bad)
			return nil
		})
		_, _, err = solveHost(t, a, inf, b, Options{})
		require.ErrorIs(t, err, ErrNonFinite)
	}

	_, err = BiCGStab2(context.Background(), HostSpace{N: n}, a, nil, b[:n-1], make([]float64, n), Options{})
	require.ErrorIs(t, err, ErrDimension)
	_, err = BiCGStab2(context.Background(), HostSpace{N: n}, a, nil, b, make([]float64, n+1), Options{})
	require.ErrorIs(t, err, ErrDimension)

	for _, opt := range []Options{{Tol: -1}, {Tol: math.NaN()}, {Tol: math.Inf(1)}, {MaxIter: -1}} {
		_, _, err = solveHost(t, a, nil, b, opt)
		require.ErrorIs(t, err, ErrInvalidOption)
	}
}

// A system long enough for HostSpace's parallel loops.
func TestLargeSystemParallel(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	n := 70_001
	if testing.Short() {
		n = parallelMin + 3
	}
	a := randomBand(rng, n, 2, 3, false)
	b, xs := rhsFor(rng, a, n)
	x, res, err := solveHost(t, a, NewMixedPrecision(n, a.tridiagPart().solve32()), b, Options{History: true})
	requireSolved(t, "large", a, b, x, xs, res, err, 1e-8)
	t.Logf("n = %d: %d steps", n, res.Iterations)
}
