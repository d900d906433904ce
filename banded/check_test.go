package banded

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/bandsolve/bandsolve/krylov"
	"github.com/bandsolve/bandsolve/tridiag"
)

func TestSolveTrans(t *testing.T) {
	rng := newRNG(31)
	for _, nk := range shapes() {
		n, k := nk[0], nk[1]
		for _, d := range []float64{0.2, 2} {
			a := Random[float64](n, k, d, rng)
			f, err := FactorPivot(a)
			if err != nil {
				continue
			}
			b := randVec[float64](n, rng)
			x := append([]float64(nil), b...)
			f.SolveTrans(x)
			var at mat.Dense
			at.CloneFrom(dense(a).T())
			want := denseSolve(t, &at, b)
			assert.LessOrEqual(t, relDiff(x, want), 1e-9, "N=%d K=%d d=%g", n, k, d)
		}
	}
}

// exactCond is ‖A‖∞·‖A⁻¹‖∞ from gonum's dense inverse (+Inf when gonum
// finds A singular or too ill-conditioned).
func exactCond(a *mat.Dense) float64 {
	var inv mat.Dense
	if err := inv.Inverse(a); err != nil {
		return math.Inf(1)
	}
	return mat.Norm(a, math.Inf(1)) * mat.Norm(&inv, math.Inf(1))
}

func TestCondEstVsDense(t *testing.T) {
	rng := newRNG(32)
	var worst float64 = 1
	count := 0
	for _, nk := range shapes() {
		n, k := nk[0], nk[1]
		for _, d := range []float64{0, 0.3, 1, 4} {
			a := Random[float64](n, k, d, rng)
			if d == 0 { // graded rows as well
				for i := 0; i < n; i++ {
					s := math.Pow(10, float64(i%5)-2)
					for j := max(0, i-k); j <= min(n-1, i+k); j++ {
						a.Set(i, j, a.At(i, j)*s)
					}
				}
			}
			exact := exactCond(dense(a))
			if math.IsInf(exact, 0) || exact > 1e13 {
				continue
			}
			what := fmt.Sprintf("N=%d K=%d d=%g", n, k, d)
			est, err := CondEst(a)
			require.NoError(t, err, what)
			assert.LessOrEqual(t, est, exact*(1+1e-8), what)
			assert.GreaterOrEqual(t, est, exact/10, what)
			worst = min(worst, est/exact)
			count++
			est32, err := CondEst(Convert[float32](a))
			require.NoError(t, err, what)
			assert.InEpsilon(t, est, est32, 1e-2, "%s: float32 entries", what)
		}
	}
	t.Logf("%d matrices, smallest κ̂/κ %.3f", count, worst)
	// Singular: two equal rows inside the band.
	a, _ := New[float64](4, 1)
	for i, v := range [][3]float64{{0, 1, 2}, {2, 4, 0}, {1, 2, 0}, {0, 3, 1}} {
		for t := -1; t <= 1; t++ {
			if j := i + t; j >= 0 && j < 4 {
				a.Set(i, j, v[t+1])
			}
		}
	}
	a.Set(1, 0, 1)
	a.Set(1, 1, 2)
	a.Set(1, 2, 0)
	a.Set(0, 0, 1)
	a.Set(0, 1, 2)
	est, err := CondEst(a)
	assert.ErrorIs(t, err, ErrSingular)
	assert.True(t, math.IsInf(est, 1))
	st, err := Check(a, []float64{1, 1, 1, 1}, []float64{0, 0, 0, 0}, 0)
	require.NoError(t, err)
	assert.True(t, st.Flags&tridiag.Singular != 0, "%v", st)
	assert.True(t, st.Failed())
}

func TestBackwardErrorAndCheck(t *testing.T) {
	rng := newRNG(33)
	a := Random[float64](50, 3, 2, rng)
	want := randVec[float64](50, rng)
	b := make([]float64, 50)
	a.MulVec(want, b)
	assert.LessOrEqual(t, BackwardError(a, b, want), 4*eps[float64]())
	st, err := Check(a, b, want, 0)
	require.NoError(t, err)
	assert.False(t, st.Failed(), "%v", st)
	assert.Less(t, st.Cond, 10.0)
	x := append([]float64(nil), want...)
	x[7] += 1e-6
	assert.InEpsilon(t, relResidual(a, x, b), BackwardError(a, b, x), 1e-8)
	st, err = Check(a, b, x, 0)
	require.NoError(t, err)
	assert.Equal(t, tridiag.BackwardErrorTooLarge, st.Flags)
	st, err = Check(a, b, x, 1e-3)
	require.NoError(t, err)
	assert.False(t, st.Failed())
	x[3] = math.NaN()
	assert.True(t, math.IsInf(BackwardError(a, b, x), 1))
}

// leadingZero is a random band of dominance d with a zero leading pivot:
// LU without pivoting boosts it, and the boosted factors are those of a
// matrix that differs from A in one entry by a relative O(ε): the solution
// they give has a large error since that entry was the whole pivot.
func leadingZero[T Float](n, k int, d float64, seed uint64) *Band[T] {
	a := Random[T](n, k, d, newRNG(seed))
	a.Set(0, 0, 0)
	return a
}

func TestRefineBoosted(t *testing.T) {
	t.Run("float64", testRefineBoosted[float64])
	t.Run("float32", testRefineBoosted[float32])
}

func testRefineBoosted[T Float](t *testing.T) {
	for _, c := range []struct {
		n, k int
		d    float64
	}{{200, 3, 1}, {500, 10, 0.6}, {60, 2, 1.5}} {
		what := fmt.Sprintf("N=%d K=%d d=%g", c.n, c.k, c.d)
		a := leadingZero[T](c.n, c.k, c.d, 5)
		rng := newRNG(6)
		b := randVec[T](c.n, rng)
		lu := a.Clone()
		bs, err := FactorLU(lu, FactorOptions{})
		require.NoError(t, err, what)
		require.Equal(t, []int{0}, bs.Rows, what)
		x := append([]T(nil), b...)
		SolveLU(lu, x)
		before := BackwardError(a, b, x)
		require.Greater(t, before, tridiag.DefaultTol[T](), "%s: the boosted solve alone is inaccurate", what)
		res, err := Refine(a, func(r []T) error { SolveLU(lu, r); return nil }, b, x, RefineOptions{})
		require.NoError(t, err, what)
		assert.True(t, res.Refined(), what)
		assert.LessOrEqual(t, res.BackwardError, tridiag.DefaultTol[T](), what)
		assert.Equal(t, res.BackwardError, BackwardError(a, b, x), what)
		// Against LU with partial pivoting in float64.
		f, err := FactorPivot(Convert[float64](a))
		require.NoError(t, err)
		ref := toF64(b)
		f.Solve(ref)
		cond, _ := CondEst(a)
		assert.LessOrEqual(t, relDiff(x, ref), 10*cond*tridiag.DefaultTol[T](), "%s: κ̂ %.2g, before %.2g, %+v", what, cond, before, res)
		t.Logf("%s: backward error %.2e → %.2e in %d steps + %d BiCG steps", what, before, res.BackwardError, res.Steps, res.Iterations)
	}
}

// TestRefineSingular: refinement of a singular system whose zero pivot
// was boosted drives the backward error down with a huge x (x solves a
// nearby non-singular matrix exactly): only κ̂ says that x is
// meaningless. A preconditioner that does not approximate A makes
// refinement fail with ErrNotRefined and the backward error reached.
func TestRefineSingular(t *testing.T) {
	// [[1 2] [2 4]] with b not in its range.
	a, _ := New[float64](2, 1)
	a.Set(0, 0, 1)
	a.Set(0, 1, 2)
	a.Set(1, 0, 2)
	a.Set(1, 1, 4)
	lu := a.Clone()
	bs, err := FactorLU(lu, FactorOptions{})
	require.NoError(t, err)
	require.Equal(t, 1, bs.Count())
	b := []float64{1, 1}
	x := append([]float64(nil), b...)
	SolveLU(lu, x)
	res, err := Refine(a, func(r []float64) error { SolveLU(lu, r); return nil }, b, x, RefineOptions{})
	require.NoError(t, err)
	assert.LessOrEqual(t, res.BackwardError, tridiag.DefaultTol[float64]())
	assert.Greater(t, normInf(x), 1e12, "x is huge")
	st, err := Check(a, b, x, 0)
	require.NoError(t, err)
	assert.True(t, st.Flags&tridiag.IllConditioned != 0, "%v", st)

	// M = 2·I is no approximation of this indefinite band: two BiCG
	// steps are not enough.
	m := Random[float64](80, 2, 0.3, newRNG(35))
	b = randVec[float64](80, newRNG(36))
	x = make([]float64, 80)
	half := func(r []float64) error {
		for i := range r {
			r[i] *= 0.5
		}
		return nil
	}
	res, err = Refine(m, half, b, x, RefineOptions{MaxIter: 2})
	require.ErrorIs(t, err, ErrNotRefined)
	assert.Contains(t, err.Error(), "backward error")
	assert.ErrorIs(t, err, krylov.ErrNotConverged)
	assert.Greater(t, res.BackwardError, 1e-6)
	assert.True(t, res.Status().Failed())
	assert.Equal(t, res.BackwardError, BackwardError(m, b, x), "x is the best iterate")

	// Bad options.
	_, err = Refine(a, half, b[:2], x[:2], RefineOptions{Tol: -1})
	assert.ErrorIs(t, err, ErrOption)
	_, err = Refine(a, half, b[:2], x[:2], RefineOptions{Mode: 7})
	assert.ErrorIs(t, err, ErrOption)
	// b = 0: x = 0.
	x = []float64{3, 4}
	res, err = Refine(a, half, []float64{0, 0}, x, RefineOptions{})
	require.NoError(t, err)
	assert.Equal(t, []float64{0, 0}, x)
	assert.Zero(t, res.BackwardError)
}

// TestSolveBatchRefine: a system whose factorization boosts a zero
// leading pivot is refined to 10³·ε; a singular one (a zero row) is
// refined to a small backward error too, and only Check (κ̂) fails it;
// without refinement system 1 passes silently with a large backward
// error.
func TestSolveBatchRefine(t *testing.T) {
	for _, lay := range []Layout{Contiguous, Interleaved} {
		const n, k, g = 60, 3, 5
		b, err := NewBatch[float64](n, k, g, lay)
		require.NoError(t, err)
		for s := 0; s < g; s++ {
			m := Random[float64](n, k, 1.2, newRNG(uint64(40+s)))
			switch s {
			case 1:
				m = leadingZero[float64](n, k, 1, 41)
			case 3:
				for j := 20 - k; j <= 20+k; j++ {
					m.Set(20, j, 0)
				}
			}
			require.NoError(t, b.SetSystem(s, m))
		}
		rhs := randVec[float64](n*g, newRNG(49))
		x := make([]float64, n*g)
		res, err := SolveBatch(context.Background(), b, rhs, x, BatchOptions{})
		require.NoError(t, err, lay.String())
		require.Len(t, res.Boosted, 2)
		assert.Equal(t, 1, res.Boosted[0].System)
		assert.Equal(t, 3, res.Boosted[1].System)
		assert.True(t, res.Boosted[0].Refine.Refined())
		xs, bs := make([]float64, n), make([]float64, n)
		for i := 0; i < n; i++ {
			xs[i], bs[i] = x[b.VecIndex(1, i)], rhs[b.VecIndex(1, i)]
		}
		assert.LessOrEqual(t, BackwardError(b.System(1), bs, xs), tridiag.DefaultTol[float64]())

		// With the check, system 3 fails (κ̂ = ∞), with its status.
		_, err = SolveBatch(context.Background(), b, rhs, x, BatchOptions{Check: true})
		var be *BatchError
		require.ErrorAs(t, err, &be, lay.String())
		assert.Equal(t, []int{3}, be.Systems(), "%v: %v", lay, err)
		assert.Equal(t, g, be.G)
		assert.ErrorIs(t, err, tridiag.ErrIllConditioned)
		st := be.Failed[0].Status
		assert.Equal(t, tridiag.Boosted|tridiag.Singular|tridiag.IllConditioned, st.Flags&^tridiag.BackwardErrorTooLarge, "%v", st)
		assert.False(t, math.IsNaN(x[b.VecIndex(3, 0)]), "a system that fails the check keeps its x")

		// Off: the old behaviour, no failure and a poor system 1.
		_, err = SolveBatch(context.Background(), b, rhs, x, BatchOptions{Refine: RefineOptions{Mode: RefineOff}})
		require.NoError(t, err)
		for i := 0; i < n; i++ {
			xs[i] = x[b.VecIndex(1, i)]
		}
		assert.Greater(t, BackwardError(b.System(1), bs, xs), tridiag.DefaultTol[float64]())
	}
}
