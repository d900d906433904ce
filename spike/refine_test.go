package spike

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/tridiag"
)

// TestSolveRefinesBoosted: a zero pivot at the start of the band or of a
// partition is boosted; the plain solve is then off by far more than
// 10³·ε, and Solve (refinement on by default) brings the backward error
// under it, in both precisions, with P = 1 and P > 1, in place too.
func TestSolveRefinesBoosted(t *testing.T) {
	t.Run("float64", testSolveRefinesBoosted[float64])
	t.Run("float32", testSolveRefinesBoosted[float32])
}

func testSolveRefinesBoosted[T Float](t *testing.T) {
	tol := tridiag.DefaultTol[T]()
	for _, c := range []struct {
		n, k, p int
		d       float64
		zero    []int
	}{
		{400, 3, 1, 1, []int{0}},
		{1200, 4, 4, 1.5, []int{0, 300}},
		{3000, 10, 2, 1, []int{1500}},
	} {
		what := fmt.Sprintf("N=%d K=%d P=%d zero pivots at %v", c.n, c.k, c.p, c.zero)
		A := banded.Random[T](c.n, c.k, c.d, newRNG(9))
		for _, r := range c.zero {
			A.Set(r, r, 0)
		}
		b := randVec[T](c.n, newRNG(10))

		plain, err := Factor(A, Options{Partitions: c.p, Refine: banded.RefineOptions{Mode: banded.RefineOff}})
		require.NoError(t, err, what)
		require.Positive(t, plain.BoostCount(), what)
		assert.False(t, plain.Refines())
		x := make([]T, c.n)
		require.NoError(t, plain.Solve(b, x), what)
		before := banded.BackwardError(A, b, x)
		assert.Greater(t, before, tol, "%s: the plain solve is inaccurate", what)

		f, err := Factor(A, Options{Partitions: c.p})
		require.NoError(t, err, what)
		assert.True(t, f.Refines())
		res, err := f.SolveRefined(b, x)
		require.NoError(t, err, what)
		assert.True(t, res.Refined(), what)
		after := banded.BackwardError(A, b, x)
		assert.LessOrEqual(t, after, tol, what)
		assert.Equal(t, after, res.BackwardError, what)
		t.Logf("%s: backward error %.2e → %.2e (%d steps, %d BiCG steps)", what, before, after, res.Steps, res.Iterations)

		// In place.
		y := append([]T(nil), b...)
		require.NoError(t, f.Solve(y, y), what)
		assert.LessOrEqual(t, banded.BackwardError(A, b, y), tol, "%s in place", what)
	}
}

// TestSolveRefineAlways: float32 truncated SPIKE with short partitions
// (P = 32) on a band that is not diagonally dominant (K = 10, d = 0.1)
// boosts nothing but neglects spikes that do not decay, a backward error
// of 5e-3; RefineAlways measures and refines it, RefineBoosted (the
// default) leaves it alone.
func TestSolveRefineAlways(t *testing.T) {
	const n, k, p = 20000, 10, 32
	A := banded.Convert[float32](banded.Random[float64](n, k, 0.1, newRNG(12)))
	b := randVec[float32](n, newRNG(13))
	tol := tridiag.DefaultTol[float32]()
	f, err := Factor(A, Options{Partitions: p})
	require.NoError(t, err)
	require.Zero(t, f.BoostCount())
	assert.False(t, f.Refines(), "nothing boosted: the default does not refine")
	x := make([]float32, n)
	require.NoError(t, f.Solve(b, x))
	before := banded.BackwardError(A, b, x)
	assert.Greater(t, before, tol)

	g, err := Factor(A, Options{Partitions: p, Refine: banded.RefineOptions{Mode: banded.RefineAlways}})
	require.NoError(t, err)
	assert.True(t, g.Refines())
	res, err := g.SolveRefined(b, x)
	require.NoError(t, err)
	assert.LessOrEqual(t, banded.BackwardError(A, b, x), tol)
	t.Logf("backward error %.2e → %.2e (%d steps, %d BiCG steps)", before, res.BackwardError, res.Steps, res.Iterations)

	// A tolerance that cannot be met in float32 with one BiCG step fails
	// with the backward error reached.
	h, err := Factor(A, Options{Partitions: 2, Refine: banded.RefineOptions{Mode: banded.RefineAlways, Tol: 1e-12, MaxIter: 1}})
	require.NoError(t, err)
	err = h.Solve(b, x)
	require.ErrorIs(t, err, banded.ErrNotRefined)
	assert.Contains(t, err.Error(), "backward error")

	_, err = Factor(A, Options{Refine: banded.RefineOptions{Mode: 9}})
	assert.ErrorIs(t, err, ErrOption)
}
