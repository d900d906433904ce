package banded

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

// gonum v0.17.0 has no banded LU (no Dgbtrf/Dgbtrs in lapack/gonum, no
// Gbtrf in lapack64), so FactorPivot is checked against gonum's dense LU
// with partial pivoting on small matrices. Banded partial pivoting picks
// the same pivots as dense partial pivoting (rows beyond j+K of column j
// stay zero), so the permutations must agree too.
func TestPivotVsDense(t *testing.T) {
	t.Run("float64", testPivotVsDense[float64])
	t.Run("float32", testPivotVsDense[float32])
}

func testPivotVsDense[T Float](t *testing.T) {
	rng := newRNG(11)
	e := eps[T]()
	for _, d := range []float64{0.02, 0.3, 1.5} {
		for _, sh := range shapes() {
			n, k := sh[0], sh[1]
			t.Run(fmt.Sprintf("d=%g/N=%d/K=%d", d, n, k), func(t *testing.T) {
				a := Random[T](n, k, d, rng)
				orig := a.Clone()
				f, err := FactorPivot(a)
				require.NoError(t, err)
				require.Equal(t, orig.Data, a.Data, "FactorPivot must not modify its input")

				ad := dense(a)
				var lu mat.LU
				lu.Factorize(ad)
				if lu.Det() == 0 {
					t.Skip("singular draw")
				}
				cond := mat.Cond(ad, 1)
				// pivots agree with dense partial pivoting (when no near-ties)
				checkPivotsLikeDense(t, f, ad)

				b := randVec[T](n, rng)
				x := append([]T(nil), b...)
				f.Solve(x)
				ref := denseSolve(t, ad, toF64(b))
				assert.Less(t, relResidual(a, x, b), float64(8*(k+1))*e, "residual (cond %.3g)", cond)
				assert.Less(t, relDiff(x, ref), 50*float64(k+1)*e*cond, "vs dense (cond %.3g)", cond)

				// multi-RHS agrees with one-by-one
				const nrhs = 3
				bb := randVec[T](n*nrhs, rng)
				xx := append([]T(nil), bb...)
				f.SolveMulti(xx, nrhs)
				for c := 0; c < nrhs; c++ {
					one := append([]T(nil), bb[c*n:(c+1)*n]...)
					f.Solve(one)
					require.Equal(t, one, xx[c*n:(c+1)*n])
				}
			})
		}
	}
}

// checkPivotsLikeDense replays the interchanges of f on the identity and
// compares with the row permutation of gonum's dense LU.
func checkPivotsLikeDense[T Float](t *testing.T, f *PivotLU[T], ad *mat.Dense) {
	t.Helper()
	n := f.N
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	for j, p := range f.Piv {
		require.GreaterOrEqual(t, p, j)
		require.LessOrEqual(t, p, j+f.KL)
		perm[j], perm[p] = perm[p], perm[j]
	}
	// gonum's RowPivots is the inverse map: where each row of A went.
	inv := make([]int, n)
	for i, r := range perm {
		inv[r] = i
	}
	var lu mat.LU
	lu.Factorize(ad)
	assert.Equal(t, lu.RowPivots(nil), inv, "row order differs from dense partial pivoting")
}

// A fixed 5×5, K=1 matrix whose pivoting is known: every step swaps.
func TestPivotKnown(t *testing.T) {
	a, err := New[float64](5, 1)
	require.NoError(t, err)
	for i := 0; i < 5; i++ {
		a.Set(i, i, 1)
		if i+1 < 5 {
			a.Set(i+1, i, 10)
			a.Set(i, i+1, 2)
		}
	}
	f, err := FactorPivot(a)
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2, 3, 4, 4}, f.Piv)
	// U has fill-in on its second super-diagonal: row 0 of U is row 1 of
	// A = (10, 1, 2, 0, 0).
	assert.Equal(t, 10.0, f.Data[(2*1+0-0)*5+0])
	assert.Equal(t, 1.0, f.Data[(2*1+0-1)*5+1])
	assert.Equal(t, 2.0, f.Data[(2*1+0-2)*5+2])
	b := []float64{1, 2, 3, 4, 5}
	ref := denseSolve(t, dense(a), b)
	f.Solve(b)
	assert.InDeltaSlice(t, ref, b, 1e-14)
}

func TestPivotSingular(t *testing.T) {
	a := Random[float64](30, 4, 0.5, newRNG(12))
	// column 17 zero from row 17 down, and below rows do not refill it
	// (the rows above do not reach it through elimination: zero rows
	// 13…16 of column 17 too), so step 17 has no nonzero candidate.
	for i := 13; i <= 21; i++ {
		a.Set(i, 17, 0)
	}
	_, err := FactorPivot(a)
	require.ErrorIs(t, err, ErrSingular)
	var re *RowError
	require.True(t, errors.As(err, &re))
	assert.Equal(t, 17, re.Row)
	assert.Contains(t, err.Error(), "row 17")

	z, _ := New[float32](4, 2)
	_, err = FactorPivot(z)
	require.ErrorIs(t, err, ErrSingular)
	require.ErrorAs(t, err, &re)
	assert.Equal(t, 0, re.Row)

	a = Random[float64](10, 2, 1, newRNG(13))
	a.Set(3, 5, math.Inf(-1))
	_, err = FactorPivot(a)
	require.ErrorIs(t, err, ErrNonFinite)
	require.ErrorAs(t, err, &re)
	assert.Equal(t, [2]int{3, 5}, [2]int{re.Row, re.Col})

	_, err = FactorPivot(&Band[float64]{N: 4, K: 1, Data: make([]float64, 11)})
	assert.ErrorIs(t, err, ErrShape)
	f, err := FactorPivot(Random[float64](4, 1, 2, newRNG(1)))
	require.NoError(t, err)
	assertShapePanic(t, func() { f.Solve(make([]float64, 5)) })
}

// LU and UL without pivoting agree with the pivoting solve on dominant
// matrices.
func TestNoPivotMatchesPivot(t *testing.T) {
	t.Run("float64", testNoPivotMatchesPivot[float64])
	t.Run("float32", testNoPivotMatchesPivot[float32])
}

func testNoPivotMatchesPivot[T Float](t *testing.T) {
	rng := newRNG(14)
	for _, sh := range [][2]int{{1000, 2}, {517, 17}, {300, 64}, {65, 64}} {
		n, k := sh[0], sh[1]
		a := Random[T](n, k, 1.1, rng)
		b := randVec[T](n, rng)
		f, err := FactorPivot(a)
		require.NoError(t, err)
		xp := append([]T(nil), b...)
		f.Solve(xp)
		for _, s := range solvers[T]() {
			g := a.Clone()
			_, err := s.factor(g, 0, n, FactorOptions{})
			require.NoError(t, err)
			x := append([]T(nil), b...)
			s.solve(g, 0, n, x)
			assert.Less(t, relDiff(x, toF64(xp)), 100*eps[T](), "%s N=%d K=%d", s.name, n, k)
		}
	}
}

// The fused two-step FactorPivot equals the one-step reference bit for bit
// (factors and interchanges), including matrices that pivot at most steps.
func TestPivotFusedMatchesReference(t *testing.T) {
	rng := newRNG(42)
	for _, d := range []float64{0.05, 0.5, 2} {
		for _, sh := range shapes() {
			n, k := sh[0], sh[1]
			a := Random[float64](n, k, d, rng)
			f1, err1 := FactorPivot(a)
			f2, err2 := factorPivotRef(a)
			require.Equal(t, err2, err1)
			if err1 != nil {
				continue
			}
			require.Equal(t, f2.Piv, f1.Piv, "d=%g N=%d K=%d", d, n, k)
			for i := range f1.Data {
				require.Equal(t, math.Float64bits(f2.Data[i]), math.Float64bits(f1.Data[i]), "d=%g N=%d K=%d: storage %d", d, n, k, i)
			}
		}
	}
}
