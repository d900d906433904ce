package banded

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/tridiag"
)

// complexShapes are (N, KL, KU) triples with N not a power of two and
// KL ≠ KU in most.
var complexShapes = [][3]int{
	{1, 0, 0}, {2, 1, 0}, {3, 0, 2}, {7, 1, 3}, {13, 4, 1}, {31, 2, 5},
	{100, 7, 2}, {131, 3, 3}, {57, 0, 9}, {45, 11, 0}, {9, 8, 8},
}

func randC[T Complex](rng *rand.Rand) T {
	return T(complex(2*rng.Float64()-1, 2*rng.Float64()-1))
}

func randVecC[T Complex](n int, rng *rand.Rand) []T {
	v := make([]T, n)
	for i := range v {
		v[i] = randC[T](rng)
	}
	return v
}

// randomGeneralC is a complex General with entries uniform in the unit
// square (re, im in [−1, 1)); with d ≥ 0 each diagonal entry is set to
// d times the sum of the moduli of its row's others (times a random unit
// phase), with d < 0 it stays random: partial pivoting then interchanges
// rows.
func randomGeneralC[T Complex](n, kl, ku int, d float64, rng *rand.Rand) *General[T] {
	m, err := NewGeneral[T](n, kl, ku)
	if err != nil {
		panic(err)
	}
	for i := 0; i < n; i++ {
		var off float64
		for j := max(0, i-kl); j <= min(n-1, i+ku); j++ {
			v := randC[T](rng)
			m.Set(i, j, v)
			if j != i {
				off += cmplx.Abs(complex128(v))
			}
		}
		if d >= 0 {
			phase := cmplx.Exp(complex(0, 2*math.Pi*rng.Float64()))
			m.Set(i, i, T(complex(max(d*off, 1), 0)*phase))
		}
	}
	return m
}

// denseLUSolveC solves A·x = b for the n×n row-major complex128 a by
// Gaussian elimination with partial pivoting by |re| + |im| on the dense
// matrix, the reference of these tests; it returns the interchanges
// (row swapped with row j at step j) and the first all-zero pivot column
// (−1 when none).
func denseLUSolveC(n int, a, b []complex128) (x []complex128, piv []int, zero int) {
	a = append([]complex128(nil), a...)
	x = append([]complex128(nil), b...)
	piv = make([]int, n)
	zero = -1
	c1 := func(z complex128) float64 { return math.Abs(real(z)) + math.Abs(imag(z)) }
	for j := 0; j < n; j++ {
		p := j
		for i := j + 1; i < n; i++ {
			if c1(a[i*n+j]) > c1(a[p*n+j]) {
				p = i
			}
		}
		piv[j] = p
		if a[p*n+j] == 0 {
			if zero < 0 {
				zero = j
			}
			continue
		}
		if p != j {
			for c := 0; c < n; c++ {
				a[j*n+c], a[p*n+c] = a[p*n+c], a[j*n+c]
			}
			x[j], x[p] = x[p], x[j]
		}
		for i := j + 1; i < n; i++ {
			l := a[i*n+j] / a[j*n+j]
			for c := j; c < n; c++ {
				a[i*n+c] -= l * a[j*n+c]
			}
			x[i] -= l * x[j]
		}
	}
	for j := n - 1; j >= 0; j-- {
		s := x[j]
		for c := j + 1; c < n; c++ {
			s -= a[j*n+c] * x[c]
		}
		x[j] = s / a[j*n+j]
	}
	return x, piv, zero
}

// denseC is m as an n×n row-major complex128 matrix; trans gives Aᵀ,
// and conjugated with cj.
func denseC[T Scalar](m *General[T], trans, cj bool) []complex128 {
	n := m.N
	d := make([]complex128, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			v := toC128(m.At(i, j))
			if cj {
				v = cmplx.Conj(v)
			}
			if trans {
				d[j*n+i] = v
			} else {
				d[i*n+j] = v
			}
		}
	}
	return d
}

func vecC128[T Scalar](v []T) []complex128 {
	out := make([]complex128, len(v))
	for i, z := range v {
		out[i] = toC128(z)
	}
	return out
}

// relDiffC is ‖x − y‖∞ / ‖y‖∞ with moduli.
func relDiffC[T Scalar](x []T, y []complex128) float64 {
	var d, ny float64
	for i := range x {
		d = max(d, cmplx.Abs(toC128(x[i])-y[i]))
		ny = max(ny, cmplx.Abs(y[i]))
	}
	return d / ny
}

// exactCondInf is ‖A‖∞·‖A⁻¹‖∞ from the columns of A⁻¹ computed with the
// dense reference.
func exactCondInf(n int, a []complex128) float64 {
	inv := make([]complex128, n*n)
	for c := 0; c < n; c++ {
		e := make([]complex128, n)
		e[c] = 1
		col, _, _ := denseLUSolveC(n, a, e)
		for r := 0; r < n; r++ {
			inv[r*n+c] = col[r]
		}
	}
	norm := func(m []complex128) float64 {
		var mx float64
		for r := 0; r < n; r++ {
			var s float64
			for c := 0; c < n; c++ {
				s += cmplx.Abs(m[r*n+c])
			}
			mx = max(mx, s)
		}
		return mx
	}
	return norm(a) * norm(inv)
}

// Solutions of FactorPivotGeneral, for one and several right-hand sides
// and with A, Aᵀ and Aᴴ, agree with the dense reference to ε·κ in both
// precisions, and the interchanges of complex128 are the reference's.
func TestComplexPivotAgainstDense(t *testing.T) {
	t.Run("complex64", func(t *testing.T) { testComplexPivotAgainstDense[complex64](t) })
	t.Run("complex128", func(t *testing.T) { testComplexPivotAgainstDense[complex128](t) })
}

func testComplexPivotAgainstDense[T Complex](t *testing.T) {
	rng := newRNG(281)
	e := tridiag.Epsilon[T]()
	for _, sh := range complexShapes {
		n, kl, ku := sh[0], sh[1], sh[2]
		for _, d := range []float64{-1, 0.5} {
			what := fmt.Sprintf("N=%d KL=%d KU=%d d=%g", n, kl, ku, d)
			a := randomGeneralC[T](n, kl, ku, d, rng)
			f, err := FactorPivotGeneral(a)
			require.NoError(t, err, what)
			cond := exactCondInf(n, denseC(a, false, false))
			const nrhs = 3
			b := randVecC[T](n*nrhs, rng)
			for _, op := range []struct {
				name        string
				trans, conj bool
				solve       func([]T, int)
			}{
				{"A", false, false, f.SolveMulti},
				{"Aᵀ", true, false, f.SolveTransMulti},
				{"Aᴴ", true, true, f.SolveConjTransMulti},
			} {
				x := append([]T(nil), b...)
				op.solve(x, nrhs)
				ad := denseC(a, op.trans, op.conj)
				for c := 0; c < nrhs; c++ {
					want, piv, zero := denseLUSolveC(n, ad, vecC128(b[c*n:(c+1)*n]))
					require.Equal(t, -1, zero, what)
					if !op.trans {
						if _, ok := any(*new(T)).(complex128); ok {
							require.Equal(t, piv, f.Piv, "%s: interchanges", what)
						}
					}
					assert.LessOrEqual(t, relDiffC(x[c*n:(c+1)*n], want), 30*float64(n)*e*cond, "%s %s column %d", what, op.name, c)
				}
			}
			// One right-hand side: Solve is SolveMulti's first column bit for bit.
			x1 := append([]T(nil), b[:n]...)
			f.Solve(x1)
			xm := append([]T(nil), b...)
			f.SolveMulti(xm, nrhs)
			require.Equal(t, xm[:n], x1, what)
			x1 = append(x1[:0], b[:n]...)
			f.SolveConjTrans(x1)
			xm = append(xm[:0], b...)
			f.SolveConjTransMulti(xm, nrhs)
			require.Equal(t, xm[:n], x1, what)
			// The backward error of the solution is of the order of ε.
			x1 = append(x1[:0], b[:n]...)
			f.Solve(x1)
			assert.LessOrEqual(t, BackwardErrorGeneral(a, b[:n], x1), 10*float64(kl+ku+1)*e, what)
		}
	}
}

// The pivot is the candidate of largest |re| + |im| (zgbtrf's choice),
// not of largest modulus: 1+i (|re|+|im| = 2, modulus √2) wins over 1.5.
func TestComplexPivotByCabs1(t *testing.T) {
	a, err := GeneralFromDense(2, []complex128{1.5, 1, 1 + 1i, 2})
	require.NoError(t, err)
	f, err := FactorPivotGeneral(a)
	require.NoError(t, err)
	require.Equal(t, []int{1, 1}, f.Piv)
	// And the real part alone does not decide: 0.2+1.9i beats 2.
	a, err = GeneralFromDense(2, []complex128{2, 1, 0.2 + 1.9i, 2})
	require.NoError(t, err)
	f, err = FactorPivotGeneral(a)
	require.NoError(t, err)
	require.Equal(t, 1, f.Piv[0])
}

// A complex matrix with an all-zero pivot column fails with a *RowError
// wrapping ErrSingular that names the row, where the dense reference
// meets it, in both precisions and for a Band.
func TestComplexSingularNamesRow(t *testing.T) {
	t.Run("complex64", func(t *testing.T) { testComplexSingular[complex64](t) })
	t.Run("complex128", func(t *testing.T) { testComplexSingular[complex128](t) })
}

func testComplexSingular[T Complex](t *testing.T) {
	rng := newRNG(5)
	for _, sh := range [][4]int{{13, 2, 3, 6}, {31, 0, 4, 30}, {20, 3, 0, 0}, {7, 1, 1, 4}} {
		n, kl, ku, col := sh[0], sh[1], sh[2], sh[3]
		what := fmt.Sprintf("N=%d KL=%d KU=%d column %d", n, kl, ku, col)
		a := randomGeneralC[T](n, kl, ku, 2, rng)
		for i := max(0, col-ku); i <= min(n-1, col+kl); i++ {
			a.Set(i, col, 0)
		}
		_, _, zero := denseLUSolveC(n, denseC(a, false, false), make([]complex128, n))
		require.Equal(t, col, zero, what)
		_, err := FactorPivotGeneral(a)
		require.ErrorIs(t, err, ErrSingular, what)
		var re *RowError
		require.ErrorAs(t, err, &re, what)
		assert.Equal(t, col, re.Row, what)
		assert.Equal(t, col, re.Col, what)
		assert.Contains(t, err.Error(), fmt.Sprintf("row %d", col), what)
		if kl == ku {
			band, err := a.ToBand()
			require.NoError(t, err)
			_, err = FactorPivot(band)
			require.ErrorAs(t, err, &re, what)
			assert.Equal(t, col, re.Row, what)
		}
	}
	// A NaN entry is named by its row and column.
	a := randomGeneralC[T](9, 2, 1, 2, rng)
	a.Set(5, 4, T(complex(1, math.NaN())))
	_, err := FactorPivotGeneral(a)
	require.ErrorIs(t, err, ErrNonFinite)
	var re *RowError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, [2]int{5, 4}, [2]int{re.Row, re.Col})
}

// CondEstGeneral of a complex matrix is a lower bound of the exact κ∞
// within the factor 3 of the Hager–Higham estimate, and CheckGeneral
// gives the verdicts of the real check: a good solution passes, a wrong
// one is BackwardErrorTooLarge, a singular matrix is Singular, an
// ill-conditioned one IllConditioned, a NaN solution NonFinite.
func TestComplexCheck(t *testing.T) {
	t.Run("complex64", func(t *testing.T) { testComplexCheck[complex64](t) })
	t.Run("complex128", func(t *testing.T) { testComplexCheck[complex128](t) })
}

func testComplexCheck[T Complex](t *testing.T) {
	rng := newRNG(77)
	for _, sh := range complexShapes[3:] {
		n, kl, ku := sh[0], sh[1], sh[2]
		what := fmt.Sprintf("N=%d KL=%d KU=%d", n, kl, ku)
		a := randomGeneralC[T](n, kl, ku, -1, rng)
		exact := exactCondInf(n, denseC(a, false, false))
		est, err := CondEstGeneral(a)
		require.NoError(t, err, what)
		assert.LessOrEqual(t, est, exact*(1+1e-6), what)
		assert.GreaterOrEqual(t, est, exact/3, what)

		b := randVecC[T](n, rng)
		x := append([]T(nil), b...)
		f, err := FactorPivotGeneral(a)
		require.NoError(t, err)
		f.Solve(x)
		st, err := CheckGeneral(a, b, x, 0)
		require.NoError(t, err, what)
		if est*tridiag.Epsilon[T]() < 0.5 {
			assert.False(t, st.Failed(), "%s: %v", what, st)
		}
		assert.Equal(t, est, st.Cond, what)

		bad := append([]T(nil), x...)
		var xn float64
		for _, v := range x {
			xn = max(xn, cmplx.Abs(complex128(v)))
		}
		bad[n/2] += T(complex(0, 0.5*xn))
		st, err = CheckGeneral(a, b, bad, 0)
		require.NoError(t, err, what)
		if n > 1 {
			assert.NotZero(t, st.Flags&tridiag.BackwardErrorTooLarge, "%s: %v", what, st)
		}
		bad[0] = T(complex(math.NaN(), 0))
		st, err = CheckGeneral(a, b, bad, 0)
		require.NoError(t, err, what)
		assert.NotZero(t, st.Flags&tridiag.NonFinite, "%s: %v", what, st)
	}
	// Singular: an all-zero column.
	a := randomGeneralC[T](12, 2, 3, 2, rng)
	for i := 0; i <= 5; i++ { // rows 3−KU … 3+KL
		a.Set(i, 3, 0)
	}
	b := randVecC[T](12, rng)
	st, err := CheckGeneral(a, b, b, 0)
	require.NoError(t, err)
	assert.NotZero(t, st.Flags&tridiag.Singular, "%v", st)
	assert.True(t, math.IsInf(st.Cond, 1))
	// Ill-conditioned: one row nearly a complex multiple of another.
	a = randomGeneralC[T](10, 2, 2, 2, rng)
	for j := 3; j <= 6; j++ {
		a.Set(5, j, a.At(4, j)*T(complex(0.3, -0.7)))
	}
	a.Set(5, 6, a.At(5, 6)+T(complex(1e-9, 0)))
	a.Set(4, 2, 0)
	a.Set(5, 7, a.At(4, 7)*T(complex(0.3, -0.7)))
	st, err = CheckGeneral(a, b[:10], b[:10], 0)
	require.NoError(t, err)
	if _, ok := any(*new(T)).(complex64); ok {
		assert.NotZero(t, st.Flags&(tridiag.IllConditioned|tridiag.Singular), "%v", st)
	}
	assert.Greater(t, st.Cond, 1e6, "%v", st)
	// The Band form is the General's.
	g := randomGeneralC[T](17, 3, 3, -1, rng)
	band, err := g.ToBand()
	require.NoError(t, err)
	x := randVecC[T](17, rng)
	_, err = CheckGeneral(g, b[:0:0], x, 0)
	require.ErrorIs(t, err, ErrShape)
	bb := randVecC[T](17, rng)
	sg, err := CheckGeneral(g, bb, x, 0)
	require.NoError(t, err)
	sb, err := Check(band, bb, x, 0)
	require.NoError(t, err)
	assert.Equal(t, sg, sb)
	assert.Equal(t, BackwardErrorGeneral(g, bb, x), BackwardError(band, bb, x))
}

// A complex batch with Pivot solves every system as FactorPivot does,
// bit for bit, in both layouts and through a CPU BatchPlan; a singular
// system fails alone, named with its row; Check judges each system;
// without Pivot the batch is refused with ErrOption.
func TestComplexSolveBatch(t *testing.T) {
	t.Run("complex64", func(t *testing.T) { testComplexSolveBatch[complex64](t) })
	t.Run("complex128", func(t *testing.T) { testComplexSolveBatch[complex128](t) })
}

func testComplexSolveBatch[T Complex](t *testing.T) {
	rng := newRNG(33)
	for _, sh := range [][3]int{{1, 0, 7}, {29, 3, 5}, {100, 1, 19}, {9, 8, 3}} {
		n, k, g := sh[0], sh[1], sh[2]
		for _, layout := range []Layout{Contiguous, Interleaved} {
			what := fmt.Sprintf("N=%d K=%d G=%d %v", n, k, g, layout)
			b, err := NewBatch[T](n, k, g, layout)
			require.NoError(t, err)
			for s := 0; s < g; s++ {
				m, err := randomGeneralC[T](n, k, k, -1, rng).ToBand()
				require.NoError(t, err)
				require.NoError(t, b.SetSystem(s, m))
			}
			bad := -1
			if g > 1 && n > 2 {
				bad = g / 2 // system bad gets an all-zero column 2
				for i := max(0, 2-k); i <= min(n-1, 2+k); i++ {
					b.Set(bad, i, 2, 0)
				}
			}
			rhs := randVecC[T](n*g, rng)
			x := make([]T, n*g)
			opt := BatchOptions{Pivot: true, Workers: 3}
			_, err = SolveBatch(context.Background(), b, rhs, x, opt)
			if bad >= 0 {
				var be *BatchError
				require.ErrorAs(t, err, &be, what)
				require.Len(t, be.Failed, 1, what)
				assert.Equal(t, bad, be.Failed[0].System, what)
				assert.Equal(t, 2, be.Failed[0].Row, what)
				assert.ErrorIs(t, err, ErrSingular, what)
			} else {
				require.NoError(t, err, what)
			}
			for s := 0; s < g; s++ {
				xs := make([]T, n)
				for i := range xs {
					xs[i] = x[b.VecIndex(s, i)]
				}
				if s == bad {
					assert.True(t, cmplx.IsNaN(complex128(xs[0])), what)
					continue
				}
				f, err := FactorPivot(b.System(s))
				require.NoError(t, err, what)
				want := rhsOf(b, rhs, s)
				f.Solve(want)
				require.Equal(t, want, xs, "%s: system %d", what, s)
			}
			// BatchPlan on the CPU, with Check: the same solutions.
			p, err := NewBatchPlan[T](nil, n, k, g, layout, BatchOptions{Pivot: true, Check: true})
			require.NoError(t, err, what)
			assert.Contains(t, p.Describe(), "partial pivoting")
			x2 := make([]T, n*g)
			_, err = p.Solve(context.Background(), b.Data, rhs, x2)
			if bad >= 0 {
				var be *BatchError
				require.ErrorAs(t, err, &be, what)
				require.Len(t, be.Failed, 1, what)
				assert.Equal(t, bad, be.Failed[0].System, what)
			} else {
				require.NoError(t, err, what)
			}
			for i := range x {
				if !cmplx.IsNaN(complex128(x[i])) {
					require.Equal(t, x[i], x2[i], what)
				}
			}
			require.NoError(t, p.Close())
		}
	}
	b, err := NewBatch[T](5, 1, 2, Contiguous)
	require.NoError(t, err)
	v := make([]T, 10)
	_, err = SolveBatch(context.Background(), b, v, v, BatchOptions{})
	require.ErrorIs(t, err, ErrOption)
	assert.Contains(t, err.Error(), "Pivot")
	_, err = NewBatchPlan[T](nil, 5, 1, 2, Interleaved, BatchOptions{})
	require.ErrorIs(t, err, ErrOption)
	rb, err := NewRaggedBatch[T](1, []int{5, 3})
	require.NoError(t, err)
	_, err = SolveRagged(context.Background(), rb, v[:8], v[:8], BatchOptions{})
	require.ErrorIs(t, err, ErrOption)
}

// A ragged complex batch with Pivot solves each system as FactorPivot,
// bit for bit.
func TestComplexSolveRagged(t *testing.T) {
	rng := newRNG(12)
	lengths := []int{7, 30, 3, 101, 12}
	const k = 2
	rb, err := NewRaggedBatch[complex128](k, lengths)
	require.NoError(t, err)
	for g, n := range lengths {
		m, err := randomGeneralC[complex128](n, k, k, -1, rng).ToBand()
		require.NoError(t, err)
		require.NoError(t, rb.SetSystem(g, m))
	}
	rhs := randVecC[complex128](rb.Rows(), rng)
	x := make([]complex128, len(rhs))
	_, err = SolveRagged(context.Background(), rb, rhs, x, BatchOptions{Pivot: true, Workers: 2})
	require.NoError(t, err)
	for g, n := range lengths {
		f, err := FactorPivot(rb.System(g))
		require.NoError(t, err)
		o := rb.VecIndex(g, 0)
		want := append([]complex128(nil), rhs[o:o+n]...)
		f.Solve(want)
		require.Equal(t, want, x[o:o+n], "system %d", g)
	}
}

// Real matrices go through the widened code unchanged: SolveConjTrans is
// SolveTrans bit for bit.
func TestRealConjTransIsTrans(t *testing.T) {
	rng := newRNG(3)
	a := randomGeneral[float64](40, 3, 5, -1, rng)
	f, err := FactorPivotGeneral(a)
	require.NoError(t, err)
	b := randVec[float64](80, rng)
	x1, x2 := append([]float64(nil), b...), append([]float64(nil), b...)
	f.SolveTransMulti(x1, 2)
	f.SolveConjTransMulti(x2, 2)
	require.Equal(t, x1, x2)
}

func TestComplexGeneralHelpers(t *testing.T) {
	a, err := GeneralFromCOO(3, []int{0, 1, 2, 1}, []int{0, 1, 2, 0}, []complex64{3i, 4, 1 - 1i, 3 + 4i}, -1, -1)
	require.NoError(t, err)
	assert.Equal(t, [2]int{1, 0}, [2]int{a.KL, a.KU})
	assert.InDelta(t, 9, a.NormInf(), 1e-6) // |3+4i| + |4|
	assert.InDelta(t, 8, a.Norm1(), 1e-6)   // |3i| + |3+4i|
	assert.InDelta(t, 5, a.NormMax(), 1e-6)
	assert.InDelta(t, 0.8, DiagonalDominanceGeneral(a), 1e-6)
	c := ConvertGeneralComplex[complex128](a)
	assert.Equal(t, complex128(3+4i), c.At(1, 0))
	y := make([]complex64, 3)
	a.MulVec([]complex64{1, 1i, 1}, y)
	assert.Equal(t, []complex64{3i, 3 + 8i, 1 - 1i}, y)
	assert.Panics(t, func() { a.ToBandDense() })
	_, err = NewGeneral[complex128](4, 4, 0)
	require.ErrorIs(t, err, ErrShape)
	err = CheckGeneralMemory[complex128](1<<40, 1<<20, 1<<20, 1)
	require.ErrorIs(t, err, ErrMemory)
	assert.Contains(t, err.Error(), "complex128")
	assert.True(t, errors.Is(err, ErrMemory))
}
