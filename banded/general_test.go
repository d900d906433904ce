package banded

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/bandsolve/bandsolve/internal/memguard"
	"github.com/bandsolve/bandsolve/tridiag"
)

// generalShapes are the (N, KL, KU) triples of the General tests: KL in
// {0, 1, 2, 5}, KU in {0, 1, 3, 7}, N in {1, 2, 3, 17, 100}, each
// bandwidth capped at N−1 (duplicates dropped).
func generalShapes() [][3]int {
	var out [][3]int
	seen := map[[3]int]bool{}
	for _, n := range []int{1, 2, 3, 17, 100} {
		for _, kl := range []int{0, 1, 2, 5} {
			for _, ku := range []int{0, 1, 3, 7} {
				s := [3]int{n, min(kl, n-1), min(ku, n-1)}
				if !seen[s] {
					seen[s] = true
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// randomGeneral draws an N×N General: every off-diagonal entry of the
// band from U(−1, 1) and the diagonal entry of row i set to
// d·Σ_{j≠i}|a_ij| (1 for a row without off-diagonal entries) for d ≥ 0,
// or from U(−1, 1) like the others for d < 0 (no dominance at all, so
// partial pivoting interchanges rows at most steps).
func randomGeneral[T Float](n, kl, ku int, d float64, rng *rand.Rand) *General[T] {
	m, err := NewGeneral[T](n, kl, ku)
	if err != nil {
		panic(err)
	}
	for i := 0; i < n; i++ {
		var off float64
		for j := max(0, i-kl); j <= min(n-1, i+ku); j++ {
			if j != i {
				v := T(2*rng.Float64() - 1)
				m.Set(i, j, v)
				off += math.Abs(float64(v))
			}
		}
		switch {
		case d < 0:
			m.Set(i, i, T(2*rng.Float64()-1))
		case off == 0:
			m.Set(i, i, 1)
		default:
			m.Set(i, i, T(d*off))
		}
	}
	return m
}

// denseOf copies a General into a float64 gonum matrix.
func denseOf[T Float](m *General[T]) *mat.Dense {
	d := mat.NewDense(m.N, m.N, nil)
	for i := 0; i < m.N; i++ {
		for j := 0; j < m.N; j++ {
			d.Set(i, j, float64(m.At(i, j)))
		}
	}
	return d
}

// denseGBTRF is Gaussian elimination with partial pivoting on the dense
// n×n row-major a, in T with each product rounded before its
// subtraction, choosing the first entry of largest magnitude, and
// interchanging at step j only columns j…n−1, so that the multipliers of
// step j stay where step j computed them, as gbtrf stores them. It
// returns the factors (U on and above the diagonal, the multipliers
// below) and the interchanges, or the step whose pivot column is zero
// (singular ≥ 0).
func denseGBTRF[T Float](n int, a []T) (lu []T, piv []int, singular int) {
	lu = append([]T(nil), a...)
	piv = make([]int, n)
	for j := 0; j < n; j++ {
		p, best := j, math.Abs(float64(lu[j*n+j]))
		for i := j + 1; i < n; i++ {
			if v := math.Abs(float64(lu[i*n+j])); v > best {
				p, best = i, v
			}
		}
		piv[j] = p
		if best == 0 {
			return lu, piv, j
		}
		for c := j; c < n; c++ {
			lu[j*n+c], lu[p*n+c] = lu[p*n+c], lu[j*n+c]
		}
		for i := j + 1; i < n; i++ {
			l := lu[i*n+j] / lu[j*n+j]
			lu[i*n+j] = l
			for c := j + 1; c < n; c++ {
				lu[i*n+c] -= T(l * lu[j*n+c])
			}
		}
	}
	return lu, piv, -1
}

// finite reports whether every entry of v is finite.
func finite[T Float](v []T) bool {
	for _, x := range v {
		if !isFinite(x) {
			return false
		}
	}
	return true
}

// relResidualG is ‖A·x − b‖∞ / (‖A‖∞·‖x‖∞ + ‖b‖∞) in float64.
func relResidualG[T Float](m *General[T], x, b []T) float64 {
	m64 := ConvertGeneral[float64](m)
	x64, b64 := toF64(x), toF64(b)
	y := make([]float64, m.N)
	m64.MulVec(x64, y)
	var r float64
	for i := range y {
		r = math.Max(r, math.Abs(y[i]-b64[i]))
	}
	return r / (m64.NormInf()*normInf(x64) + normInf(b64))
}

// FactorPivotGeneral against a dense reference on dominant, weakly
// dominant and random (not dominant) bands of every shape of
// generalShapes, in both precisions: the interchanges and every stored
// factor entry equal dense partial pivoting's (same operations in the
// same order), the one-step gbtf2 reference bit for bit, and the solves
// (one and several right-hand sides, A and Aᵀ) gonum's dense LU.
func TestGeneralPivotVsDense(t *testing.T) {
	t.Run("float64", testGeneralPivotVsDense[float64])
	t.Run("float32", testGeneralPivotVsDense[float32])
}

func testGeneralPivotVsDense[T Float](t *testing.T) {
	rng := newRNG(101)
	e := eps[T]()
	swaps, illCond, singular, cases := 0, 0, 0, 0
	for _, d := range []float64{1.5, 0.3, -1} {
		for _, sh := range generalShapes() {
			n, kl, ku := sh[0], sh[1], sh[2]
			what := fmt.Sprintf("d=%g/N=%d/KL=%d/KU=%d", d, n, kl, ku)
			a := randomGeneral[T](n, kl, ku, d, rng)
			cases++
			orig := a.Clone()
			f, err := FactorPivotGeneral(a)
			require.Equal(t, orig.Data, a.Data, "%s: the input must not change", what)
			lu, piv, sing := denseGBTRF(n, a.ToDense())
			if err != nil {
				// Underflow in float32 can leave a zero pivot column on
				// a weakly dominant triangular band: dense partial
				// pivoting meets it at the same step.
				var re *RowError
				require.ErrorAs(t, err, &re, what)
				require.ErrorIs(t, err, ErrSingular, what)
				require.Equal(t, sing, re.Row, what)
				singular++
				continue
			}
			require.Equal(t, [3]int{n, kl, ku}, [3]int{f.N, f.KL, f.KU}, what)
			require.Len(t, f.Data, (2*kl+ku+1)*n, what)

			// The factors against dense partial pivoting.
			require.Equal(t, -1, sing, what)
			require.Equal(t, piv, f.Piv, "%s: interchanges", what)
			dc := kl + ku
			for i := 0; i < n; i++ {
				for j := 0; j < n; j++ {
					v := lu[i*n+j]
					if i-j > kl || j-i > dc {
						require.Zero(t, v, "%s: dense factor (%d, %d) outside the factors' band", what, i, j)
						continue
					}
					require.Equal(t, v, f.Data[(dc+i-j)*n+j], "%s: factor entry (%d, %d)", what, i, j)
				}
			}
			for j, p := range f.Piv {
				if p != j {
					swaps++
				}
			}

			// The fused factorization is the one-step reference bit for bit.
			ref, err := factorPivotGeneralRef(a)
			require.NoError(t, err, what)
			require.Equal(t, ref.Piv, f.Piv, what)
			for i := range ref.Data {
				require.Equal(t, math.Float64bits(float64(ref.Data[i])), math.Float64bits(float64(f.Data[i])), "%s: storage %d", what, i)
			}

			// Solves against gonum's dense LU in float64, where the
			// condition number leaves digits to compare (a weakly dominant
			// triangular band, KL = 0 or KU = 0, has κ growing like
			// (1/d)^N).
			ad := denseOf(a)
			cond := mat.Cond(ad, math.Inf(1))
			b := randVec[T](n, rng)
			x := append([]T(nil), b...)
			f.Solve(x)
			if finite(x) {
				assert.Less(t, relResidualG(a, x, b), 16*float64(kl+ku+1)*e, "%s: residual", what)
			}
			if cond*e > 1e-2 {
				illCond++
			} else {
				assert.Less(t, relDiff(x, denseSolve(t, ad, toF64(b))), 50*float64(kl+ku+1)*e*cond, "%s: vs dense (κ %.3g)", what, cond)
				xt := append([]T(nil), b...)
				f.SolveTrans(xt)
				var at mat.Dense
				at.CloneFrom(ad.T())
				assert.Less(t, relDiff(xt, denseSolve(t, &at, toF64(b))), 50*float64(kl+ku+1)*e*cond, "%s: Aᵀ vs dense", what)
			}

			const nrhs = 3
			bb := randVec[T](n*nrhs, rng)
			xx, xxt := append([]T(nil), bb...), append([]T(nil), bb...)
			f.SolveMulti(xx, nrhs)
			f.SolveTransMulti(xxt, nrhs)
			for c := 0; c < nrhs; c++ {
				one := append([]T(nil), bb[c*n:(c+1)*n]...)
				f.Solve(one)
				require.Equal(t, one, xx[c*n:(c+1)*n], "%s: column %d", what, c)
				one = append(one[:0], bb[c*n:(c+1)*n]...)
				f.SolveTrans(one)
				require.Equal(t, one, xxt[c*n:(c+1)*n], "%s: transposed, column %d", what, c)
			}
		}
	}
	assert.Greater(t, swaps, 1000, "the random bands must make partial pivoting interchange rows")
	assert.Less(t, illCond+singular, cases/4, "most solves are compared")
	t.Logf("%d bands, %d interchanges, %d too ill-conditioned to compare solutions, %d singular in %T", cases, swaps, illCond, singular, T(0))
}

// With KL = KU = K a General is a Band: same storage, same factors.
func TestGeneralPivotIsBandPivot(t *testing.T) {
	rng := newRNG(102)
	for _, sh := range shapes() {
		n, k := sh[0], sh[1]
		a := Random[float64](n, k, 0.4, rng)
		fb, err := FactorPivot(a)
		require.NoError(t, err)
		g := a.ToGeneral()
		require.Equal(t, a.Data, g.Data)
		fg, err := FactorPivotGeneral(g)
		require.NoError(t, err)
		require.Equal(t, fb, fg, "N=%d K=%d", n, k)
		cb, err := CondEst(a)
		require.NoError(t, err)
		cg, err := CondEstGeneral(g)
		require.NoError(t, err)
		require.Equal(t, cb, cg, "N=%d K=%d", n, k)
	}
}

// The interchanges of gbtrf on a lower bidiagonal matrix (KL = 1, KU = 0)
// whose sub-diagonal outweighs the diagonal, worked by hand:
//
//	A = | 1 0 0 0 |   step 0: |3| > |1|, rows 0 and 1 swap (columns 0…1),
//	    | 3 2 0 0 |           l = 1/3, a11 = 0 − 2/3;
//	    | 0 5 1 0 |   step 1: |5| > |−2/3|, rows 1 and 2 swap (1…2),
//	    | 0 0 4 7 |           l = −2/15, a22 = 0 + 2/15;
//	                  step 2: |4| > |2/15|, rows 2 and 3 swap (2…3),
//	                          l = 1/30, a33 = 0 − 7/30;
//	                  step 3: no candidate below.
//
// So Piv = (1, 2, 3, 3), U has the fill-in super-diagonal (2, 1, 7)
// and the diagonal (3, 5, 4, −7/30), and L's multipliers are
// (1/3, −2/15, 1/30). LAPACK's dgbtrf (through SciPy) gives the same.
func TestGeneralPivotKnown(t *testing.T) {
	a, err := GeneralFromDense(4, []float64{
		1, 0, 0, 0,
		3, 2, 0, 0,
		0, 5, 1, 0,
		0, 0, 4, 7,
	})
	require.NoError(t, err)
	require.Equal(t, [2]int{1, 0}, [2]int{a.KL, a.KU})
	f, err := FactorPivotGeneral(a)
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2, 3, 3}, f.Piv)
	// Rows of the factor storage: U's fill-in super-diagonal, U's
	// diagonal, L's multipliers (3 = 2·KL+KU+1 rows of N).
	n := 4
	want := [][]float64{
		{0, 2, 1, 7},
		{3, 5, 4, -7.0 / 30},
		{1.0 / 3, -2.0 / 15, 1.0 / 30, 0},
	}
	for r, row := range want {
		assert.InDeltaSlice(t, row, f.Data[r*n:(r+1)*n], 1e-15, "storage row %d", r)
	}
	b := []float64{1, 1, 1, 1}
	ref := denseSolve(t, denseOf(a), b)
	f.Solve(b)
	assert.InDeltaSlice(t, ref, b, 1e-14)
	assert.InDeltaSlice(t, []float64{1, -1, 6, -23.0 / 7}, b, 1e-14)
}

func TestGeneralPivotSingular(t *testing.T) {
	// A zero column: no candidate at its step.
	a := randomGeneral[float64](12, 2, 3, 0.5, newRNG(103))
	for i := 0; i < 12; i++ {
		if a.InBand(i, 6) {
			a.Set(i, 6, 0)
		}
	}
	_, err := FactorPivotGeneral(a)
	require.ErrorIs(t, err, ErrSingular)
	var re *RowError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, [2]int{6, 6}, [2]int{re.Row, re.Col})
	assert.Contains(t, err.Error(), "singular matrix at row 6")

	// Singular through elimination (rows 0 and 1 proportional, KL = KU = 1
	// but stored as a General): step 0 takes row 1 (|2| > |1|), leaving
	// row 1 = (0, 0, 0), so step 1 has no nonzero candidate.
	s, err := GeneralFromDense(3, []float64{
		1, 2, 0,
		2, 4, 0,
		0, 0, 1,
	})
	require.NoError(t, err)
	_, err = FactorPivotGeneral(s)
	require.ErrorAs(t, err, &re)
	assert.Equal(t, 1, re.Row)

	// A lower bidiagonal matrix (KL = 1, KU = 0) with a zero diagonal
	// entry in row 1 and ones elsewhere: step 0 keeps row 0 (a tie), step 1
	// swaps rows 1 and 2 and step 2 rows 2 and 3, each time carrying the
	// zero row down, so the pivot column is zero at step 3: the error
	// names row 3, the step where elimination finds the singularity.
	l, err := GeneralFromDense(4, []float64{
		1, 0, 0, 0,
		1, 0, 0, 0,
		0, 1, 1, 0,
		0, 0, 1, 1,
	})
	require.NoError(t, err)
	require.Equal(t, [2]int{1, 0}, [2]int{l.KL, l.KU})
	_, err = FactorPivotGeneral(l)
	require.ErrorIs(t, err, ErrSingular)
	require.ErrorAs(t, err, &re)
	assert.Equal(t, 3, re.Row)
	_, _, sing := denseGBTRF(4, l.ToDense())
	assert.Equal(t, 3, sing, "dense partial pivoting meets it at the same step")
	cond, err := CondEstGeneral(l)
	require.ErrorIs(t, err, ErrSingular)
	assert.True(t, math.IsInf(cond, 1))
	st, err := CheckGeneral(l, []float64{1, 1, 1, 1}, []float64{1, 0, 0, 1}, 0)
	require.NoError(t, err)
	assert.True(t, st.Flags&tridiag.Singular != 0)

	z, _ := NewGeneral[float32](5, 1, 3)
	_, err = FactorPivotGeneral(z)
	require.ErrorAs(t, err, &re)
	assert.Equal(t, 0, re.Row)

	// A non-finite entry names its row and column.
	a = randomGeneral[float64](10, 3, 1, 1, newRNG(104))
	a.Set(7, 4, math.NaN())
	_, err = FactorPivotGeneral(a)
	require.ErrorIs(t, err, ErrNonFinite)
	require.ErrorAs(t, err, &re)
	assert.Equal(t, [2]int{7, 4}, [2]int{re.Row, re.Col})
	_, err = CondEstGeneral(a)
	require.ErrorIs(t, err, ErrNonFinite)

	// Bad shapes.
	_, err = FactorPivotGeneral(&General[float64]{N: 4, KL: 1, KU: 2, Data: make([]float64, 15)})
	assert.ErrorIs(t, err, ErrShape)
	_, err = FactorPivotGeneral[float64](nil)
	assert.ErrorIs(t, err, ErrShape)
	f, err := FactorPivotGeneral(randomGeneral[float64](4, 1, 2, 2, newRNG(1)))
	require.NoError(t, err)
	assertShapePanic(t, func() { f.Solve(make([]float64, 5)) })
	assertShapePanic(t, func() { f.SolveTrans(make([]float64, 3)) })
	assertShapePanic(t, func() { f.SolveMulti(make([]float64, 9), 2) })
	assertShapePanic(t, func() { f.SolveTransMulti(make([]float64, 8), -2) })
}

// Storage slots outside the matrix are ignored: garbage there changes
// neither the factors nor the products, norms and checks.
func TestGeneralIgnoresCorners(t *testing.T) {
	rng := newRNG(105)
	a := randomGeneral[float64](9, 2, 4, 0.5, rng)
	g := a.Clone()
	n := a.N
	for s := 0; s < a.Rows(); s++ {
		_, j0, j1 := a.diagRange(s)
		for j := 0; j < n; j++ {
			if j < j0 || j >= j1 {
				g.Data[s*n+j] = math.NaN()
			}
		}
	}
	fa, err := FactorPivotGeneral(a)
	require.NoError(t, err)
	fg, err := FactorPivotGeneral(g)
	require.NoError(t, err)
	assert.Equal(t, fa, fg)
	x := randVec[float64](n, rng)
	ya, yg := make([]float64, n), make([]float64, n)
	a.MulVec(x, ya)
	g.MulVec(x, yg)
	assert.Equal(t, ya, yg)
	assert.Equal(t, a.NormInf(), g.NormInf())
	assert.Equal(t, a.Norm1(), g.Norm1())
	assert.Equal(t, a.NormMax(), g.NormMax())
	assert.Equal(t, DiagonalDominanceGeneral(a), DiagonalDominanceGeneral(g))
	assert.Equal(t, BackwardErrorGeneral(a, ya, x), BackwardErrorGeneral(g, ya, x))
	assert.Equal(t, a.ToDense(), g.ToDense())
	ba, err := a.ToBand()
	require.NoError(t, err)
	bg, err := g.ToBand()
	require.NoError(t, err)
	assert.Equal(t, ba, bg)
}

func TestGeneralMulVecAndNorms(t *testing.T) {
	rng := newRNG(106)
	for _, sh := range generalShapes() {
		n, kl, ku := sh[0], sh[1], sh[2]
		what := fmt.Sprintf("N=%d KL=%d KU=%d", n, kl, ku)
		a := randomGeneral[float64](n, kl, ku, -1, rng)
		ad := denseOf(a)
		x := randVec[float64](n, rng)
		y := make([]float64, n)
		a.MulVec(x, y)
		var want mat.VecDense
		want.MulVec(ad, mat.NewVecDense(n, x))
		assert.InDeltaSlice(t, want.RawVector().Data, y, 1e-14, what)
		assert.InDelta(t, mat.Norm(ad, math.Inf(1)), a.NormInf(), 1e-14, what)
		assert.InDelta(t, mat.Norm(ad, 1), a.Norm1(), 1e-14, what)
		assert.Equal(t, mat.Norm(ad, math.Inf(1)), a.NormInf(), what)
		var mx float64
		for _, v := range ad.RawMatrix().Data {
			mx = math.Max(mx, math.Abs(v))
		}
		assert.Equal(t, mx, a.NormMax(), what)
		// Dominance of the rows, read from the dense matrix.
		dd := math.Inf(1)
		for i := 0; i < n; i++ {
			var off float64
			for j := 0; j < n; j++ {
				if j != i {
					off += math.Abs(ad.At(i, j))
				}
			}
			if off > 0 {
				dd = math.Min(dd, math.Abs(ad.At(i, i))/off)
			}
		}
		assert.Equal(t, dd, DiagonalDominanceGeneral(a), what)
	}
	a := randomGeneral[float64](4, 1, 2, 1, rng)
	assertShapePanic(t, func() { a.MulVec(make([]float64, 4), make([]float64, 3)) })
}

func TestNewGeneralShapes(t *testing.T) {
	for _, c := range []struct {
		n, kl, ku int
		want      string
	}{
		{0, 0, 0, "order N=0"},
		{5, -1, 0, "lower bandwidth KL=-1"},
		{5, 0, -2, "upper bandwidth KU=-2"},
		{5, 5, 0, "KL=5 must be < N=5"},
		{5, 1, 7, "KU=7 must be < N=5"},
	} {
		_, err := NewGeneral[float64](c.n, c.kl, c.ku)
		require.ErrorIs(t, err, ErrShape, "%+v", c)
		assert.Contains(t, err.Error(), c.want)
		assert.ErrorIs(t, CheckGeneralShape(c.n, c.kl, c.ku), ErrShape)
	}
	g, err := NewGeneral[float32](6, 1, 3)
	require.NoError(t, err)
	assert.Len(t, g.Data, 5*6)
	assert.Equal(t, 5, g.Rows())
	g.Set(4, 3, 2)  // sub-diagonal
	g.Set(1, 4, -1) // third super-diagonal
	assert.Equal(t, float32(2), g.Data[(3+1)*6+3], "a_43 at row KU+1")
	assert.Equal(t, float32(-1), g.Data[0*6+4], "a_14 at row KU−3")
	assert.Equal(t, float32(0), g.At(5, 3), "outside the band")
	assert.Panics(t, func() { g.Set(5, 3, 1) })
	assert.Panics(t, func() { g.At(6, 0) })
	assert.False(t, g.InBand(0, 4))
	assert.True(t, g.InBand(0, 3))

	_, err = NewGeneral[float64](1<<40, 0, 1)
	require.ErrorIs(t, err, ErrMemory)
	assert.Contains(t, err.Error(), "banded: a float64 band of N=1099511627776, KL=0, KU=1 needs")
	defer memguard.SetLimit(memguard.SetLimit(1 << 20))
	require.ErrorIs(t, CheckGeneralMemory[float64](10000, 4, 5, 2), ErrMemory)
	m, err := NewGeneral[float64](1000, 3, 9)
	require.NoError(t, err, "small shapes pass")
	memguard.SetLimit(128 << 10)
	_, err = FactorPivotGeneral(m)
	require.ErrorIs(t, err, ErrMemory)
	assert.Contains(t, err.Error(), "banded: the pivoted LU factors of a float64 band of N=1000, KL=3, KU=9 needs")
}

// Every conversion round-trips: Band ↔ General, dense, COO, gonum and
// the precisions.
func TestGeneralConversions(t *testing.T) {
	rng := newRNG(107)
	for _, sh := range generalShapes() {
		n, kl, ku := sh[0], sh[1], sh[2]
		what := fmt.Sprintf("N=%d KL=%d KU=%d", n, kl, ku)
		a := randomGeneral[float64](n, kl, ku, -1, rng)

		// General → Band (K = max) → General: the narrower side is zero.
		b, err := a.ToBand()
		require.NoError(t, err, what)
		require.Equal(t, max(kl, ku), b.K, what)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				require.Equal(t, a.At(i, j), b.At(i, j), "%s (%d, %d)", what, i, j)
			}
		}
		g := b.ToGeneral()
		require.Equal(t, [3]int{n, b.K, b.K}, [3]int{g.N, g.KL, g.KU}, what)
		require.Equal(t, b.Data, g.Data, "%s: same storage", what)
		back, err := g.ToBand()
		require.NoError(t, err, what)
		require.Equal(t, b, back, what)

		// Dense.
		d, err := GeneralFromDense(n, a.ToDense())
		require.NoError(t, err, what)
		require.Equal(t, a, d, what)

		// gonum.
		bd := a.ToBandDense()
		bl, bu := bd.Bandwidth()
		require.Equal(t, [2]int{kl, ku}, [2]int{bl, bu}, what)
		require.True(t, mat.Equal(bd, denseOf(a)), what)
		gb, err := GeneralFromBanded(bd)
		require.NoError(t, err, what)
		require.Equal(t, a, gb, what)

		// COO: entries in scrambled order, some split in two.
		var rows, cols []int
		var vals []float64
		for _, e := range rng.Perm(n * n) {
			i, j := e/n, e%n
			if !a.InBand(i, j) {
				continue
			}
			v := a.At(i, j)
			if e%3 == 0 {
				rows, cols, vals = append(rows, i), append(cols, j), append(vals, 0.25)
				v -= 0.25
			}
			rows, cols, vals = append(rows, i), append(cols, j), append(vals, v)
		}
		c, err := GeneralFromCOO(n, rows, cols, vals, kl, ku)
		require.NoError(t, err, what)
		require.InDeltaSlice(t, a.Data, c.Data, 1e-15, what)
		c, err = GeneralFromCOO(n, rows, cols, vals, -1, -1)
		require.NoError(t, err, what)
		require.Equal(t, [2]int{kl, ku}, [2]int{c.KL, c.KU}, "%s: bandwidths from the entries", what)

		// Precision.
		a32 := ConvertGeneral[float32](a)
		require.Equal(t, a32, ConvertGeneral[float32](ConvertGeneral[float64](a32)), what)
	}
}

func TestGeneralFromCOOErrors(t *testing.T) {
	rows := []int{0, 1, 3, 2}
	cols := []int{0, 3, 1, 2}
	vals := []float64{1, 2, 3, 4}
	g, err := GeneralFromCOO(4, rows, cols, vals, -1, -1)
	require.NoError(t, err)
	assert.Equal(t, [2]int{2, 2}, [2]int{g.KL, g.KU})
	g, err = GeneralFromCOO(4, rows, cols, vals, 2, -1)
	require.NoError(t, err)
	assert.Equal(t, [2]int{2, 2}, [2]int{g.KL, g.KU})

	_, err = GeneralFromCOO(4, rows, cols, vals, 1, 2)
	require.ErrorIs(t, err, ErrShape)
	assert.Contains(t, err.Error(), "COO entry 2 at row 3, column 1 outside the band: 2 below the diagonal, KL=1")
	_, err = GeneralFromCOO(4, rows, cols, vals, 3, 1)
	require.ErrorIs(t, err, ErrShape)
	assert.Contains(t, err.Error(), "COO entry 1 at row 1, column 3 outside the band: 2 above the diagonal, KU=1")
	_, err = GeneralFromCOO(4, []int{0, 4}, []int{0, 0}, []float64{1, 1}, -1, -1)
	require.ErrorIs(t, err, ErrShape)
	assert.Contains(t, err.Error(), "entry 1 at row 4, column 0 outside a 4×4 matrix")
	_, err = GeneralFromCOO(4, rows, cols[:3], vals, -1, -1)
	assert.ErrorIs(t, err, ErrShape)
	_, err = GeneralFromCOO(4, nil, nil, []float64(nil), 4, 0)
	assert.ErrorIs(t, err, ErrShape, "KL ≥ N")
	_, err = GeneralFromDense(3, []float64{1, 2})
	assert.ErrorIs(t, err, ErrShape)
	_, err = GeneralFromBanded(mat.NewBandDense(3, 4, 1, 1, nil))
	assert.ErrorIs(t, err, ErrShape)
	z, err := GeneralFromDense(2, []float32{0, 0, 0, 0})
	require.NoError(t, err)
	assert.Equal(t, [2]int{0, 0}, [2]int{z.KL, z.KU})
}

// CondEstGeneral against κ∞ from gonum's dense inverse, and CheckGeneral
// on a good and a perturbed solution.
func TestGeneralCondEstAndCheck(t *testing.T) {
	rng := newRNG(108)
	count := 0
	for _, d := range []float64{-1, 0.3, 2} {
		for _, sh := range generalShapes() {
			n, kl, ku := sh[0], sh[1], sh[2]
			what := fmt.Sprintf("d=%g N=%d KL=%d KU=%d", d, n, kl, ku)
			a := randomGeneral[float64](n, kl, ku, d, rng)
			exact := exactCond(denseOf(a))
			if math.IsInf(exact, 0) || exact > 1e12 {
				continue
			}
			est, err := CondEstGeneral(a)
			require.NoError(t, err, what)
			assert.LessOrEqual(t, est, exact*(1+1e-8), what)
			assert.GreaterOrEqual(t, est, exact/10, what)
			est32, err := CondEstGeneral(ConvertGeneral[float32](a))
			require.NoError(t, err, what)
			assert.InEpsilon(t, est, est32, 1e-2, "%s: float32 entries", what)
			count++

			b := randVec[float64](n, rng)
			f, err := FactorPivotGeneral(a)
			require.NoError(t, err, what)
			x := append([]float64(nil), b...)
			f.Solve(x)
			st, err := CheckGeneral(a, b, x, 0)
			require.NoError(t, err, what)
			assert.Equal(t, est, st.Cond, what)
			assert.Equal(t, BackwardErrorGeneral(a, b, x), st.BackwardError, what)
			assert.LessOrEqual(t, st.BackwardError, 1e3*eps[float64](), what)
			if est*eps[float64]() < 1e-6 {
				assert.False(t, st.Failed(), "%s: %+v", what, st)
			}
			x[n/2] += 1e-3 * (1 + math.Abs(x[n/2]))
			st, err = CheckGeneral(a, b, x, 0)
			require.NoError(t, err, what)
			assert.True(t, st.Failed(), "%s: a perturbed x must fail", what)
		}
	}
	assert.Greater(t, count, 100)
	_, err := CheckGeneral(randomGeneral[float64](5, 1, 2, 2, rng), make([]float64, 5), make([]float64, 4), 0)
	assert.ErrorIs(t, err, ErrShape)
	_, err = CondEstGeneral(&General[float32]{N: 3, KL: 0, KU: 1})
	assert.ErrorIs(t, err, ErrShape)
	assert.Panics(t, func() { BackwardErrorGeneral(randomGeneral[float64](5, 1, 2, 2, rng), make([]float64, 5), nil) })
}

// TestPivotGeneralPadded: a General of bandwidths (KL, KU) stored in the
// 2K+1 diagonals of K ≥ max(KL, KU) with the others zero (what
// bandedgpu.BatchPlan.SolveDeviceGeneral gives its pivoting kernel,
// FactorPivot's twin) factors and solves as it does with (KL, KU): the
// same interchanges, the same singular row and the same values (up to
// the sign of a zero), since the zero rows never win a pivot search and
// only subtract exact zeros.
func TestPivotGeneralPadded(t *testing.T) {
	t.Run("float64", testPivotGeneralPadded[float64])
	t.Run("float32", testPivotGeneralPadded[float32])
}

func testPivotGeneralPadded[T Float](t *testing.T) {
	rng := newRNG(41)
	for _, sh := range [][3]int{{2, 0, 0}, {9, 0, 0}, {9, 1, 0}, {9, 0, 1}, {12, 2, 1}, {12, 1, 3}, {30, 0, 5}, {30, 4, 0}, {40, 3, 7}, {40, 8, 2}} {
		n, kl, ku := sh[0], sh[1], sh[2]
		for _, d := range []float64{-1, 0.3, 1.5} {
			m := randomGeneral[T](n, kl, ku, d, rng)
			k := max(1, kl, ku)
			p, err := NewGeneral[T](n, k, k)
			require.NoError(t, err)
			for i := range n {
				for j := max(0, i-kl); j <= min(n-1, i+ku); j++ {
					p.Set(i, j, m.At(i, j))
				}
			}
			what := fmt.Sprintf("N=%d KL=%d KU=%d d=%g padded to K=%d", n, kl, ku, d, k)
			f, err := FactorPivotGeneral(m)
			require.NoError(t, err, what)
			fp, err := FactorPivotGeneral(p)
			require.NoError(t, err, what)
			assert.Equal(t, f.Piv, fp.Piv, "%s: interchanges", what)
			const nrhs = 3
			b := make([]T, n*nrhs)
			for i := range b {
				b[i] = T(2*rng.Float64() - 1)
			}
			x, xp := append([]T(nil), b...), append([]T(nil), b...)
			f.SolveMulti(x, nrhs)
			fp.SolveMulti(xp, nrhs)
			for i := range x {
				// Equal values (a zero's sign may differ: −0 − 0·v is +0).
				require.True(t, x[i] == xp[i], "%s: x[%d] = %v and %v", what, i, x[i], xp[i])
			}
		}
		// A singular system fails at the same row.
		m := randomGeneral[T](n, kl, ku, 1.5, rng)
		c := n / 2
		for i := max(0, c-ku); i <= min(n-1, c+kl); i++ {
			m.Set(i, c, 0)
		}
		k := max(1, kl, ku)
		p, err := NewGeneral[T](n, k, k)
		require.NoError(t, err)
		for i := range n {
			for j := max(0, i-kl); j <= min(n-1, i+ku); j++ {
				p.Set(i, j, m.At(i, j))
			}
		}
		_, err = FactorPivotGeneral(m)
		_, errp := FactorPivotGeneral(p)
		var re, rep *RowError
		require.ErrorAs(t, err, &re)
		require.ErrorAs(t, errp, &rep)
		assert.Equal(t, *re, *rep, "N=%d KL=%d KU=%d: the singular row", n, kl, ku)
	}
}
