package banded

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type solver[T Float] struct {
	name   string
	factor func(*Band[T], int, int, FactorOptions) (Boosts, error)
	solve  func(*Band[T], int, int, []T)
	multi  func(*Band[T], int, int, []T, int)
}

func solvers[T Float]() []solver[T] {
	return []solver[T]{
		{"LU", FactorLURange[T], SolveLURange[T], SolveLURangeMulti[T]},
		{"UL", FactorULRange[T], SolveULRange[T], SolveULRangeMulti[T]},
	}
}

func TestLUULSolveDominant(t *testing.T) {
	t.Run("float64", testLUULSolveDominant[float64])
	t.Run("float32", testLUULSolveDominant[float32])
}

func testLUULSolveDominant[T Float](t *testing.T) {
	rng := newRNG(1)
	e := eps[T]()
	for _, s := range solvers[T]() {
		for _, sh := range shapes() {
			n, k := sh[0], sh[1]
			t.Run(fmt.Sprintf("%s/N=%d/K=%d", s.name, n, k), func(t *testing.T) {
				a := Random[T](n, k, 1.5, rng)
				b := randVec[T](n, rng)
				ref := denseSolve(t, dense(a), toF64(b))

				f := a.Clone()
				boosts, err := s.factor(f, 0, n, FactorOptions{})
				require.NoError(t, err)
				assert.Zero(t, boosts.Count(), "no boosting expected on a dominant matrix")
				x := append([]T(nil), b...)
				s.solve(f, 0, n, x)

				assert.Less(t, relResidual(a, x, b), 10*e, "residual")
				// dominant ⇒ well conditioned (cond∞ ≤ 5 for d = 1.5)
				assert.Less(t, relDiff(x, ref), 100*e, "vs dense partial-pivoting LU")
			})
		}
	}
}

// A range [r0, r1) strictly inside a larger matrix: the block is factored
// and solved as its own matrix, and nothing outside it changes.
func TestRangeBlock(t *testing.T) {
	t.Run("float64", testRangeBlock[float64])
	t.Run("float32", testRangeBlock[float32])
}

func testRangeBlock[T Float](t *testing.T) {
	rng := newRNG(2)
	for _, s := range solvers[T]() {
		for _, c := range []struct{ n, k, r0, r1 int }{
			{50, 3, 7, 41}, {50, 5, 1, 50}, {37, 17, 10, 36}, {20, 2, 5, 6}, {20, 0, 3, 11}, {90, 64, 13, 88},
		} {
			t.Run(fmt.Sprintf("%s/N=%d/K=%d/[%d,%d)", s.name, c.n, c.k, c.r0, c.r1), func(t *testing.T) {
				a := Random[T](c.n, c.k, 1.2, rng)
				m := c.r1 - c.r0
				// the block as a matrix of its own
				kb := min(c.k, m-1)
				blk, err := New[T](m, kb)
				require.NoError(t, err)
				for i := 0; i < m; i++ {
					for j := max(0, i-kb); j <= min(m-1, i+kb); j++ {
						blk.Set(i, j, a.At(c.r0+i, c.r0+j))
					}
				}
				f := a.Clone()
				_, err = s.factor(f, c.r0, c.r1, FactorOptions{})
				require.NoError(t, err)
				for i := 0; i < c.n; i++ {
					for j := max(0, i-c.k); j <= min(c.n-1, i+c.k); j++ {
						inside := i >= c.r0 && i < c.r1 && j >= c.r0 && j < c.r1
						if !inside {
							require.Equal(t, a.At(i, j), f.At(i, j), "entry (%d,%d) outside the block changed", i, j)
						}
					}
				}
				const nrhs = 3
				b := randVec[T](m*nrhs, rng)
				x := append([]T(nil), b...)
				s.multi(f, c.r0, c.r1, x, nrhs)
				for col := 0; col < nrhs; col++ {
					xc, bc := x[col*m:(col+1)*m], b[col*m:(col+1)*m]
					assert.Less(t, relResidual(blk, xc, bc), 10*eps[T](), "column %d", col)
					one := append([]T(nil), bc...)
					s.solve(f, c.r0, c.r1, one)
					assert.Equal(t, one, xc, "multi and single solves differ")
				}
			})
		}
	}
}

// The factors sit where the doc comments say: L·U (resp. U·L) rebuilt from
// storage equals A.
func TestFactorStorage(t *testing.T) {
	rng := newRNG(3)
	for _, ul := range []bool{false, true} {
		for _, sh := range [][2]int{{9, 2}, {12, 5}, {6, 5}, {5, 0}} {
			n, k := sh[0], sh[1]
			a := Random[float64](n, k, 2, rng)
			f := a.Clone()
			var err error
			if ul {
				_, err = FactorUL(f, FactorOptions{})
			} else {
				_, err = FactorLU(f, FactorOptions{})
			}
			require.NoError(t, err)
			for i := 0; i < n; i++ {
				for j := 0; j < n; j++ {
					var s float64
					for p := 0; p < n; p++ {
						var l, u float64 // L·U or U·L: first factor (i,p), second (p,j)
						if !ul {
							l, u = lowerUnit(f, i, p), upper(f, p, j)
						} else {
							l, u = upperUnit(f, i, p), lower(f, p, j)
						}
						s += l * u
					}
					require.InDelta(t, a.At(i, j), s, 1e-13, "ul=%v N=%d K=%d (%d,%d)", ul, n, k, i, j)
				}
			}
		}
	}
}

func lowerUnit(f *Band[float64], i, j int) float64 {
	switch {
	case i == j:
		return 1
	case i > j:
		return f.At(i, j)
	}
	return 0
}

func upper(f *Band[float64], i, j int) float64 {
	if i <= j {
		return f.At(i, j)
	}
	return 0
}

func upperUnit(f *Band[float64], i, j int) float64 {
	switch {
	case i == j:
		return 1
	case i < j:
		return f.At(i, j)
	}
	return 0
}

func lower(f *Band[float64], i, j int) float64 {
	if i >= j {
		return f.At(i, j)
	}
	return 0
}

// zeroPivotMatrix is a dominant random matrix whose pivot at row r is
// exactly zero for LU: a_rr = 0 and row/column r are decoupled from the
// rows and columns before r (so elimination leaves a_rr alone). For UL the
// same holds mirrored: decoupled from the rows/columns after r.
func zeroPivotMatrix[T Float](n, k, r int, ul bool, seed uint64) *Band[T] {
	a := Random[T](n, k, 1.5, newRNG(seed))
	for t := 1; t <= k; t++ {
		j := r - t
		if ul {
			j = r + t
		}
		if j >= 0 && j < n {
			a.Set(r, j, 0)
			a.Set(j, r, 0)
		}
	}
	a.Set(r, r, 0)
	return a
}

func TestBoosting(t *testing.T) {
	t.Run("float64", testBoosting[float64])
	t.Run("float32", testBoosting[float32])
}

func testBoosting[T Float](t *testing.T) {
	for _, c := range [][3]int{{60, 3, 23}, {200, 17, 100}, {77, 5, 0}} {
		n, k, r := c[0], c[1], c[2]
		for _, s := range solvers[T]() {
			if s.name == "UL" && r == 0 {
				continue // decoupled from the rows after it: singular
			}
			t.Run(fmt.Sprintf("%s/N=%d/K=%d/r=%d", s.name, n, k, r), func(t *testing.T) {
				a := zeroPivotMatrix[T](n, k, r, s.name == "UL", 4)
				f := a.Clone()
				boosts, err := s.factor(f, 0, n, FactorOptions{})
				require.NoError(t, err)
				assert.Equal(t, []int{r}, boosts.Rows)
				assert.True(t, boosts.Boosted(r))
				assert.False(t, boosts.Boosted(r+1))
				assert.InDelta(t, eps[T]()*a.NormMax(), boosts.Tau, 1e-30)
				assert.Equal(t, T(boosts.Tau), f.At(r, r), "boosted pivot is +τ")

				// Boosted factors as a preconditioner: a few steps of iterative
				// refinement reach a residual at rounding level.
				rng := newRNG(5)
				b := randVec[T](n, rng)
				x := refine(a, f, s.solve, b, 10)
				assert.Less(t, relResidual(a, x, b), 10*eps[T]())

				// Without boosting: the zero pivot is an error naming the row.
				f = a.Clone()
				_, err = s.factor(f, 0, n, FactorOptions{BoostTol: -1})
				require.Error(t, err)
				require.ErrorIs(t, err, ErrZeroPivot)
				var re *RowError
				require.True(t, errors.As(err, &re))
				assert.Equal(t, r, re.Row)
				assert.Contains(t, err.Error(), fmt.Sprintf("row %d", r))
			})
		}
	}
}

// refine runs iterative refinement x ← x + M⁻¹(b − A·x) with the factors f
// as M, iters times, residuals in float64.
func refine[T Float](a, f *Band[T], solve func(*Band[T], int, int, []T), b []T, iters int) []T {
	n := a.N
	a64 := Convert[float64](a)
	x := make([]T, n)
	ax := make([]float64, n)
	r := make([]T, n)
	for it := 0; it < iters; it++ {
		a64.MulVec(toF64(x), ax)
		for i := range r {
			r[i] = T(float64(b[i]) - ax[i])
		}
		solve(f, 0, n, r)
		for i := range x {
			x[i] += r[i]
		}
	}
	return x
}

// A pivot that is small but nonzero is boosted with its sign kept; a user
// tolerance scales τ.
func TestBoostSignAndTol(t *testing.T) {
	a, err := New[float64](3, 1)
	require.NoError(t, err)
	a.Set(0, 0, -1e-9)
	a.Set(0, 1, 1)
	a.Set(1, 0, 1)
	a.Set(1, 1, 4)
	a.Set(1, 2, 1)
	a.Set(2, 1, 1)
	a.Set(2, 2, 4)
	f := a.Clone()
	b, err := FactorLU(f, FactorOptions{BoostTol: 1e-6})
	require.NoError(t, err)
	assert.Equal(t, []int{0}, b.Rows)
	assert.Equal(t, 4e-6, b.Tau)
	assert.Equal(t, -4e-6, f.At(0, 0))

	f = a.Clone()
	b, err = FactorLU(f, FactorOptions{})
	require.NoError(t, err)
	assert.Zero(t, b.Count(), "|−1e−9| ≥ eps·4: no boost by default")
}

func TestNonFinite(t *testing.T) {
	for _, s := range solvers[float64]() {
		for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
			a := Random[float64](20, 3, 2, newRNG(6))
			a.Set(9, 11, bad)
			f := a.Clone()
			_, err := s.factor(f, 0, 20, FactorOptions{})
			require.ErrorIs(t, err, ErrNonFinite)
			var re *RowError
			require.True(t, errors.As(err, &re))
			assert.Equal(t, 9, re.Row)
			assert.Equal(t, 11, re.Col)
			assert.Contains(t, err.Error(), "row 9, column 11")
			for i := range a.Data {
				require.Equal(t, math.Float64bits(a.Data[i]), math.Float64bits(f.Data[i]), "nothing written before the scan fails")
			}

			// outside the range: ignored
			_, err = s.factor(a.Clone(), 12, 20, FactorOptions{})
			require.NoError(t, err)
		}
	}
	a := Random[float32](10, 2, 2, newRNG(7))
	a.Set(4, 4, float32(math.NaN()))
	_, err := FactorLU(a, FactorOptions{BoostTol: -1})
	var re *RowError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, [2]int{4, 4}, [2]int{re.Row, re.Col})
}

func TestLUShapeErrors(t *testing.T) {
	a := Random[float64](10, 2, 2, newRNG(8))
	for _, rg := range [][2]int{{-1, 5}, {3, 11}, {6, 5}} {
		_, err := FactorLURange(a, rg[0], rg[1], FactorOptions{})
		assert.ErrorIs(t, err, ErrShape, "range %v", rg)
		_, err = FactorULRange(a, rg[0], rg[1], FactorOptions{})
		assert.ErrorIs(t, err, ErrShape, "range %v", rg)
	}
	_, err := FactorLU(&Band[float64]{N: 10, K: 2, Data: make([]float64, 49)}, FactorOptions{})
	assert.ErrorIs(t, err, ErrShape)
	_, err = FactorLU[float64](nil, FactorOptions{})
	assert.ErrorIs(t, err, ErrShape)
	_, err = FactorUL(&Band[float64]{N: 3, K: 3, Data: make([]float64, 21)}, FactorOptions{})
	assert.ErrorIs(t, err, ErrShape)

	// solves panic with an error wrapping ErrShape
	assertShapePanic(t, func() { SolveLURange(a, 0, 10, make([]float64, 9)) })
	assertShapePanic(t, func() { SolveULRangeMulti(a, 2, 5, make([]float64, 7), 2) })
	assertShapePanic(t, func() { SolveLURange(a, 0, 11, make([]float64, 11)) })
	// empty range: a no-op
	b, err := FactorLURange(a, 4, 4, FactorOptions{})
	assert.NoError(t, err)
	assert.Zero(t, b.Count())
}

func assertShapePanic(t *testing.T, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		require.NotNil(t, r, "no panic")
		err, ok := r.(error)
		require.True(t, ok, "panic value %v is not an error", r)
		assert.ErrorIs(t, err, ErrShape)
	}()
	f()
}

// The fused two-step factorizations equal the one-step references bit for
// bit, boosts included.
func TestFusedMatchesReference(t *testing.T) {
	rng := newRNG(41)
	type fac func(*Band[float64], int, int, FactorOptions) (Boosts, error)
	pairs := []struct {
		name      string
		fast, ref fac
	}{{"LU", FactorLURange[float64], factorLURef[float64]}, {"UL", FactorULRange[float64], factorULRef[float64]}}
	for _, p := range pairs {
		for _, sh := range shapes() {
			n, k := sh[0], sh[1]
			for _, rg := range [][2]int{{0, n}, {n / 3, n - n/5}, {n / 2, n/2 + 1}} {
				a := Random[float64](n, k, 0.4, rng) // weak dominance: boosts can happen
				if n > 4 {
					a.Set(n/2, n/2, 0)
				}
				f1, f2 := a.Clone(), a.Clone()
				b1, e1 := p.fast(f1, rg[0], rg[1], FactorOptions{BoostTol: 1e-3})
				b2, e2 := p.ref(f2, rg[0], rg[1], FactorOptions{BoostTol: 1e-3})
				require.Equal(t, e2, e1)
				require.Equal(t, b2, b1, "%s N=%d K=%d %v", p.name, n, k, rg)
				for i := range f1.Data {
					require.Equal(t, math.Float64bits(f2.Data[i]), math.Float64bits(f1.Data[i]), "%s N=%d K=%d %v: storage %d", p.name, n, k, rg, i)
				}
			}
		}
	}
}

// The spike tips from partial solves: the top l rows of A⁻¹[C; 0] from the
// UL factors' top-left block, the bottom l rows of A⁻¹[0; B] from the LU
// factors' bottom-right block, bit for bit equal to full solves.
func TestSpikeTips(t *testing.T) {
	rng := newRNG(43)
	for _, c := range [][4]int{{120, 4, 10, 100}, {60, 17, 0, 60}, {40, 1, 3, 39}} {
		n, k, r0, r1 := c[0], c[1], c[2], c[3]
		m := r1 - r0
		a := Random[float64](n, k, 1.2, rng)
		for _, l := range []int{k, 2 * k} {
			l = min(l, m)
			cols := randVec[float64](l*k, rng) // k columns of length l
			full := make([]float64, m*k)
			for q := 0; q < k; q++ {
				copy(full[q*m:q*m+l], cols[q*l:(q+1)*l]) // [C; 0]
			}
			ul := a.Clone()
			_, err := FactorULRange(ul, r0, r1, FactorOptions{})
			require.NoError(t, err)
			SolveULRangeMulti(ul, r0, r1, full, k)
			top := append([]float64(nil), cols...)
			SolveULRangeMulti(ul, r0, r0+l, top, k)
			for q := 0; q < k; q++ {
				require.Equal(t, full[q*m:q*m+l], top[q*l:(q+1)*l], "W top, column %d", q)
			}

			full = make([]float64, m*k)
			for q := 0; q < k; q++ {
				copy(full[(q+1)*m-l:(q+1)*m], cols[q*l:(q+1)*l]) // [0; B]
			}
			lu := a.Clone()
			_, err = FactorLURange(lu, r0, r1, FactorOptions{})
			require.NoError(t, err)
			SolveLURangeMulti(lu, r0, r1, full, k)
			bot := append([]float64(nil), cols...)
			SolveLURangeMulti(lu, r1-l, r1, bot, k)
			for q := 0; q < k; q++ {
				require.Equal(t, full[(q+1)*m-l:(q+1)*m], bot[q*l:(q+1)*l], "V bottom, column %d", q)
			}
		}
	}
}
