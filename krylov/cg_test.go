package krylov_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/ilu"
	"github.com/bandsolve/bandsolve/krylov"
	"github.com/bandsolve/bandsolve/krylov/problems"
	"github.com/bandsolve/bandsolve/sparse"
	"github.com/bandsolve/bandsolve/sptrsv"
)

type method func(context.Context, krylov.Space[[]float64], krylov.Operator[[]float64], krylov.Preconditioner[[]float64], []float64, []float64, krylov.Options) (krylov.Result, error)

// trueRel returns ‖b − A·x‖/‖b‖ computed apart from the solvers.
func trueRel(t *testing.T, a *sparse.CSR, b, x []float64) float64 {
	y := make([]float64, a.N)
	require.NoError(t, a.MulVec(x, y))
	var rr, bb float64
	for i := range b {
		rr += (b[i] - y[i]) * (b[i] - y[i])
		bb += b[i] * b[i]
	}
	return math.Sqrt(rr / bb)
}

// precond returns the named preconditioner of a.
func precond(t *testing.T, a *sparse.CSR, name string) krylov.Preconditioner[[]float64] {
	var (
		f   *ilu.Factors
		err error
	)
	switch name {
	case "none":
		return nil
	case "jacobi":
		j, err := krylov.NewJacobi(a)
		require.NoError(t, err)
		return j
	case "ic0":
		f, err = ilu.IC0(a, ilu.Options{})
	case "ilu0":
		f, err = ilu.ILU0(a, ilu.Options{})
	}
	require.NoError(t, err)
	p, err := ilu.NewPreconditioner[float64](f, nil, sptrsv.Auto)
	require.NoError(t, err)
	return p
}

// solveAll runs m on a with b = A·e for each preconditioner and returns
// the iteration counts, checking the true residual and the history.
func solveAll(t *testing.T, m method, a *sparse.CSR, names []string, tol float64) map[string]int {
	ctx := context.Background()
	// b = A·x for a random x (b = A·e is too easy for a graph Laplacian
	// with a leak proportional to the diagonal: Jacobi maps it onto e).
	rng := rand.New(rand.NewPCG(uint64(a.N), 5))
	xs := make([]float64, a.N)
	for i := range xs {
		xs[i] = 2*rng.Float64() - 1
	}
	b := make([]float64, a.N)
	require.NoError(t, a.MulVec(xs, b))
	sp := krylov.HostSpace{N: a.N}
	op, err := krylov.NewCSROperator[[]float64](nil, a)
	require.NoError(t, err)
	its := map[string]int{}
	for _, name := range names {
		x := make([]float64, a.N)
		res, err := m(ctx, sp, op, precond(t, a, name), b, x, krylov.Options{Tol: tol, MaxIter: 5000, History: true})
		require.NoError(t, err, name)
		require.True(t, res.Converged, name)
		rel := trueRel(t, a, b, x)
		assert.LessOrEqual(t, rel, tol, name)
		assert.InDelta(t, rel, res.Residual, 1e-3*tol, name)
		require.Len(t, res.History, res.Iterations+1, name)
		assert.Equal(t, res.Residual, res.History[res.Iterations], name)
		assert.Equal(t, 1.0, res.History[0], name)
		its[name] = res.Iterations
	}
	return its
}

func TestCGPoisson2D(t *testing.T) {
	a := problems.Poisson2D(64)
	its := solveAll(t, krylov.CG[[]float64], a, []string{"none", "jacobi", "ic0"}, 1e-8)
	t.Logf("CG iterations, Poisson 2-D 64²: %v", its)
	// The Laplacian's diagonal is constant: Jacobi only rescales.
	assert.InDelta(t, its["none"], its["jacobi"], 2)
	assert.Less(t, float64(its["ic0"]), 0.6*float64(its["none"]), "IC(0) should cut the iterations")
}

func TestCGSuiteSPD(t *testing.T) {
	for _, p := range problems.Suite(40) {
		if !p.SPD {
			continue
		}
		its := solveAll(t, krylov.CG[[]float64], p.A, []string{"none", "jacobi", "ic0"}, 1e-8)
		t.Logf("%s: %v", p.Name, its)
		assert.Less(t, its["ic0"], its["none"], p.Name)
		assert.LessOrEqual(t, its["ic0"], its["jacobi"], p.Name)
	}
}

func TestBiCGStabConvectionDiffusion(t *testing.T) {
	for _, pe := range []float64{100, 1000} {
		a := problems.ConvectionDiffusion2D(64, pe)
		its := solveAll(t, krylov.BiCGStab[[]float64], a, []string{"none", "jacobi", "ilu0"}, 1e-8)
		t.Logf("BiCGStab iterations, convection–diffusion 64², Pe %g: %v", pe, its)
		assert.Less(t, float64(its["ilu0"]), 0.6*float64(its["none"]), "ILU(0) should cut the iterations")
	}
	// On an SPD problem BiCGStab with IC(0)'s ILU(0) twin converges too.
	solveAll(t, krylov.BiCGStab[[]float64], problems.Poisson2D(30), []string{"none", "ilu0"}, 1e-10)
}

func TestCGMatchesBiCGStab2Solution(t *testing.T) {
	a := problems.Anisotropic2D(30, 0.1, 1, 2)
	b := problems.OnesRHS(a)
	ctx := context.Background()
	op, err := krylov.NewCSROperator[[]float64](nil, a)
	require.NoError(t, err)
	sp := krylov.HostSpace{N: a.N}
	for name, m := range map[string]method{"CG": krylov.CG[[]float64], "BiCGStab": krylov.BiCGStab[[]float64], "BiCGStab2": krylov.BiCGStab2[[]float64]} {
		x := make([]float64, a.N)
		_, err := m(ctx, sp, op, precond(t, a, "ilu0"), b, x, krylov.Options{Tol: 1e-11})
		require.NoError(t, err, name)
		for i := range x {
			require.InDelta(t, 1, x[i], 1e-6, "%s: x[%d] (the solution is e)", name, i)
		}
	}
}

// indefinite returns diag(1, …, 1, −1, …, −1) + a small symmetric
// tridiagonal coupling: symmetric, indefinite.
func indefinite(n int) *sparse.CSR {
	c := sparse.NewCOO(n, n, 3*n)
	for i := range n {
		d := 1.0 + float64(i)/float64(n)
		if i >= n/2 {
			d = -d
		}
		c.Add(i, i, d)
		if i+1 < n {
			c.Add(i, i+1, 0.1)
			c.Add(i+1, i, 0.1)
		}
	}
	a, err := c.ToCSR()
	if err != nil {
		panic(err)
	}
	return a
}

func TestCGBreakdownIndefinite(t *testing.T) {
	a := indefinite(50)
	b := make([]float64, a.N)
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range b {
		b[i] = rng.Float64()
	}
	op, err := krylov.NewCSROperator[[]float64](nil, a)
	require.NoError(t, err)
	x := make([]float64, a.N)
	res, err := krylov.CG(context.Background(), krylov.HostSpace{N: a.N}, op, nil, b, x, krylov.Options{Tol: 1e-10})
	require.ErrorIs(t, err, krylov.ErrBreakdown)
	assert.Contains(t, err.Error(), "not positive definite")
	assert.False(t, res.Converged)
	assert.InDelta(t, trueRel(t, a, b, x), res.Residual, 1e-12)

	// A preconditioner that is not positive definite: M⁻¹ = −I.
	neg := krylov.PreconditionerFunc[[]float64](func(_ context.Context, r, z []float64) error {
		for i := range r {
			z[i] = -r[i]
		}
		return nil
	})
	p := problems.Poisson2D(5)
	_, err = krylov.CG(context.Background(), krylov.HostSpace{N: p.N}, krylov.Operator[[]float64](krylov.OperatorFunc[[]float64](func(_ context.Context, x, y []float64) error { return p.MulVec(x, y) })), neg, problems.OnesRHS(p), make([]float64, p.N), krylov.Options{})
	require.ErrorIs(t, err, krylov.ErrBreakdown)
	assert.Contains(t, err.Error(), "preconditioner is not positive definite")
}

func TestNotConvergedAndStagnation(t *testing.T) {
	a := problems.Poisson2D(30)
	b := problems.OnesRHS(a)
	ctx := context.Background()
	op, err := krylov.NewCSROperator[[]float64](nil, a)
	require.NoError(t, err)
	sp := krylov.HostSpace{N: a.N}
	for name, m := range map[string]method{"CG": krylov.CG[[]float64], "BiCGStab": krylov.BiCGStab[[]float64]} {
		x := make([]float64, a.N)
		res, err := m(ctx, sp, op, nil, b, x, krylov.Options{Tol: 1e-10, MaxIter: 5, History: true})
		require.ErrorIs(t, err, krylov.ErrNotConverged, name)
		assert.Equal(t, 5, res.Iterations, name)
		assert.InDelta(t, trueRel(t, a, b, x), res.Residual, 1e-12, name)
		assert.Len(t, res.History, 6, name)

		// A tolerance below the attainable accuracy: the operator is
		// perturbed by noise of relative size 10⁻⁹ at every product.
		rng := rand.New(rand.NewPCG(2, 3))
		noisy := krylov.OperatorFunc[[]float64](func(ctx context.Context, x, y []float64) error {
			if err := a.MulVec(x, y); err != nil {
				return err
			}
			for i := range y {
				y[i] *= 1 + 1e-9*(2*rng.Float64()-1)
			}
			return nil
		})
		x = make([]float64, a.N)
		res, err = m(ctx, sp, noisy, nil, b, x, krylov.Options{Tol: 1e-15, MaxIter: 100000, Stagnation: 200})
		require.ErrorIsf(t, err, krylov.ErrStagnation, "%s: %v", name, err)
		assert.Less(t, res.Iterations, 100000, name)
		assert.Greater(t, res.Residual, 1e-15, name)
	}
}

func TestZeroRHSAndOptions(t *testing.T) {
	a := problems.Poisson2D(4)
	op, err := krylov.NewCSROperator[[]float64](nil, a)
	require.NoError(t, err)
	sp := krylov.HostSpace{N: a.N}
	for name, m := range map[string]method{"CG": krylov.CG[[]float64], "BiCGStab": krylov.BiCGStab[[]float64]} {
		x := make([]float64, a.N)
		x[3] = 7
		res, err := m(context.Background(), sp, op, nil, make([]float64, a.N), x, krylov.Options{})
		require.NoError(t, err, name)
		assert.True(t, res.Converged, name)
		assert.Equal(t, make([]float64, a.N), x, name)
		_, err = m(context.Background(), sp, op, nil, x, make([]float64, a.N), krylov.Options{Tol: -1})
		require.ErrorIs(t, err, krylov.ErrInvalidOption, name)
	}
}

func TestJacobiErrors(t *testing.T) {
	a := problems.Poisson2D(3)
	a.Val[a.RowPtr[4]+2] = 0 // row 4's diagonal (after its south and west entries)
	_, err := krylov.NewJacobi(a)
	require.ErrorIs(t, err, krylov.ErrInvalidOption)
	assert.Contains(t, err.Error(), "row 4")
}

func TestMixedPrecisionIC0(t *testing.T) {
	a := problems.Poisson2D(40)
	f, err := ilu.IC0(a, ilu.Options{})
	require.NoError(t, err)
	p32, err := ilu.NewPreconditioner[float32](f, nil, sptrsv.LevelSet)
	require.NoError(t, err)
	m := krylov.NewMixedPrecision(a.N, p32.Apply)
	op, err := krylov.NewCSROperator[[]float64](nil, a)
	require.NoError(t, err)
	b := problems.OnesRHS(a)
	x := make([]float64, a.N)
	res, err := krylov.CG(context.Background(), krylov.HostSpace{N: a.N}, op, m, b, x, krylov.Options{Tol: 1e-10})
	require.NoError(t, err)
	assert.LessOrEqual(t, trueRel(t, a, b, x), 1e-10)
	its := solveAll(t, krylov.CG[[]float64], a, []string{"ic0"}, 1e-10)
	assert.InDelta(t, its["ic0"], res.Iterations, 3, "a float32 IC(0) preconditions as well as the float64 one")
}
