package ilu

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/bandsolve/bandsolve/krylov/problems"
	"github.com/bandsolve/bandsolve/sparse"
	"github.com/bandsolve/bandsolve/sptrsv"
)

// randomDense returns an n×n matrix with entries from U(−1, 1) and a
// diagonal of n + 1, so that every column is strictly diagonally dominant
// (partial pivoting keeps the rows in place).
func randomDense(rng *rand.Rand, n int) *mat.Dense {
	d := mat.NewDense(n, n, nil)
	for i := range n {
		for j := range n {
			d.Set(i, j, 2*rng.Float64()-1)
		}
		d.Set(i, i, float64(n+1))
	}
	return d
}

// randomSPD returns B·Bᵀ + n·I for a random B.
func randomSPD(rng *rand.Rand, n int) *mat.SymDense {
	b := mat.NewDense(n, n, nil)
	for i := range n {
		for j := range n {
			b.Set(i, j, 2*rng.Float64()-1)
		}
	}
	s := mat.NewSymDense(n, nil)
	s.SymOuterK(1, b)
	for i := range n {
		s.SetSym(i, i, s.At(i, i)+float64(n))
	}
	return s
}

// randomSparse returns an n×n matrix with the diagonal and about perRow
// random off-diagonal entries per row from U(−1, 1); the diagonal is
// dom·Σ|off| + 1. With sym set the pattern and values are symmetric.
func randomSparse(rng *rand.Rand, n, perRow int, dom float64, sym bool) *sparse.CSR {
	c := sparse.NewCOO(n, n, n*(perRow+1)*2)
	off := make([]float64, n)
	seen := map[[2]int]bool{}
	for i := range n {
		for range perRow {
			j := rng.IntN(n)
			if j == i || seen[[2]int{i, j}] || (sym && seen[[2]int{j, i}]) {
				continue
			}
			v := 2*rng.Float64() - 1
			seen[[2]int{i, j}] = true
			c.Add(i, j, v)
			off[i] += math.Abs(v)
			if sym {
				seen[[2]int{j, i}] = true
				c.Add(j, i, v)
				off[j] += math.Abs(v)
			}
		}
	}
	for i := range n {
		c.Add(i, i, dom*off[i]+1)
	}
	a, err := c.ToCSR()
	if err != nil {
		panic(err)
	}
	return a
}

// requireClose checks |got − want| ≤ tol·max(1, |want|) entry by entry.
func requireClose(t *testing.T, want, got mat.Matrix, tol float64, what string) {
	t.Helper()
	r, c := want.Dims()
	gr, gc := got.Dims()
	require.Equal(t, [2]int{r, c}, [2]int{gr, gc}, what)
	for i := range r {
		for j := range c {
			w, g := want.At(i, j), got.At(i, j)
			require.LessOrEqualf(t, math.Abs(w-g), tol*math.Max(1, math.Abs(w)), "%s(%d, %d): want %g, got %g", what, i, j, w, g)
		}
	}
}

func TestILU0FullPatternIsLU(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 5, 12} {
		d := randomDense(rng, n)
		var lu mat.LU
		lu.Factorize(d)
		piv := lu.RowPivots(nil)
		for i, p := range piv {
			require.Equal(t, i, p, "the reference pivoted; the test matrix must be column diagonally dominant")
		}
		var l, u mat.TriDense
		lu.LTo(&l)
		lu.UTo(&u)

		f, err := ILU0(sparse.FromDense(d), Options{})
		require.NoError(t, err)
		requireClose(t, &l, f.L().Dense(), 1e-12, fmt.Sprintf("L (n=%d)", n))
		requireClose(t, &u, f.U().Dense(), 1e-12, fmt.Sprintf("U (n=%d)", n))
		assert.Equal(t, 0.0, f.Shift())
		assert.Equal(t, n, f.Levels(), "a full lower triangle has one row per level")
	}
}

func TestIC0FullPatternIsCholesky(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 3, 8, 15} {
		s := randomSPD(rng, n)
		var ch mat.Cholesky
		require.True(t, ch.Factorize(s))
		var l mat.TriDense
		ch.LTo(&l)

		f, err := IC0(sparse.FromDense(s), Options{})
		require.NoError(t, err)
		requireClose(t, &l, f.L().Dense(), 1e-12, fmt.Sprintf("L (n=%d)", n))
		var lt mat.Dense
		lt.CloneFrom(l.T())
		requireClose(t, &lt, f.U().Dense(), 1e-12, fmt.Sprintf("Lᵀ (n=%d)", n))
	}
}

// requireProductOnPattern checks (P·Q)ᵢⱼ = aᵢⱼ at every stored (i, j) of a
// (for which keep holds), and that P·Q differs from A somewhere else
// (fill that ILU(0) drops) when dropped is set.
func requireProductOnPattern(t *testing.T, a *sparse.CSR, p, q mat.Matrix, keep func(i, j int) bool, dropped bool) {
	t.Helper()
	var prod mat.Dense
	prod.Mul(p, q)
	ad := a.Dense()
	other := 0.0
	n := a.N
	for i := range n {
		for j := range n {
			stored := false
			for k := a.RowPtr[i]; k < a.RowPtr[i+1]; k++ {
				stored = stored || int(a.Col[k]) == j
			}
			if stored && keep(i, j) {
				require.InDeltaf(t, ad.At(i, j), prod.At(i, j), 1e-12*math.Max(1, math.Abs(ad.At(i, j))), "(L·U)(%d, %d)", i, j)
			} else if !stored {
				other = math.Max(other, math.Abs(prod.At(i, j)))
			}
		}
	}
	if dropped {
		assert.Greater(t, other, 1e-8, "the product should hold fill outside the pattern")
	}
}

func TestILU0ProductOnPattern(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, a := range []*sparse.CSR{randomSparse(rng, 40, 3, 1.2, false), randomSparse(rng, 60, 5, 0.8, false), problems.Poisson2D(7)} {
		f, err := ILU0(a, Options{})
		require.NoError(t, err)
		l, u := f.L(), f.U()
		for i := range a.N {
			assert.Equal(t, 1.0, l.At(i, i), "L has a unit diagonal")
		}
		requireProductOnPattern(t, a, l.Dense(), u.Dense(), func(int, int) bool { return true }, true)
	}
}

func TestIC0ProductOnPattern(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, a := range []*sparse.CSR{randomSparse(rng, 50, 3, 1.1, true), problems.Poisson2D(8)} {
		f, err := IC0(a, Options{})
		require.NoError(t, err)
		l := f.L().Dense()
		var lt mat.Dense
		lt.CloneFrom(l.T())
		requireProductOnPattern(t, a, l, &lt, func(i, j int) bool { return j <= i }, true)
		for i := range a.N {
			assert.Greater(t, l.At(i, i), 0.0)
		}
	}
}

func TestIC0ReadsOnlyTheLowerTriangle(t *testing.T) {
	a := problems.Poisson2D(5)
	b := a.Clone()
	for i := range b.N {
		for p := b.RowPtr[i]; p < b.RowPtr[i+1]; p++ {
			if int(b.Col[p]) > i {
				b.Val[p] = 1e3 // an upper triangle IC(0) must not read
			}
		}
	}
	fa, err := IC0(a, Options{})
	require.NoError(t, err)
	fb, err := IC0(b, Options{})
	require.NoError(t, err)
	assert.Equal(t, fa.LU().Val, fb.LU().Val)
}

func TestZeroPivotNamesRow(t *testing.T) {
	// Row 2's pivot is 1 − 1·1 = 0 after the elimination with row 1.
	a := sparse.FromDense(mat.NewDense(4, 4, []float64{
		2, 0, 0, 1,
		0, 1, 1, 0,
		0, 1, 1, 0,
		1, 0, 0, 3,
	}))
	_, err := ILU0(a, Options{})
	require.ErrorIs(t, err, ErrZeroPivot)
	assert.Contains(t, err.Error(), "row 2")
	assert.Contains(t, err.Error(), "4×4")

	// IC(0) of an indefinite matrix: l₁₁² = 1 − 2² < 0.
	b := sparse.FromDense(mat.NewDense(3, 3, []float64{
		1, 2, 0,
		2, 1, 0,
		0, 0, 1,
	}))
	_, err = IC0(b, Options{})
	require.ErrorIs(t, err, ErrNotPositive)
	assert.Contains(t, err.Error(), "row 1")
}

func TestMissingDiagonalAndShape(t *testing.T) {
	a := sparse.FromDense(mat.NewDense(3, 3, []float64{
		1, 0, 0,
		1, 0, 1,
		0, 0, 1,
	}))
	for name, factor := range map[string]func(*sparse.CSR, Options) (*Factors, error){"ILU0": ILU0, "IC0": IC0} {
		_, err := factor(a, Options{})
		require.ErrorIs(t, err, ErrMissingDiagonal, name)
		assert.Contains(t, err.Error(), "row 1", name)
		_, err = factor(&sparse.CSR{N: 2, M: 3, RowPtr: []int32{0, 0, 0}}, Options{})
		require.ErrorIs(t, err, ErrShape, name)
		_, err = factor(problems.Poisson2D(2), Options{Shift: -1})
		require.ErrorIs(t, err, ErrOption, name)
	}
}

// shifted returns A + s·diag(A).
func shifted(a *sparse.CSR, s float64) *sparse.CSR {
	b := a.Clone()
	for i := range b.N {
		for p := b.RowPtr[i]; p < b.RowPtr[i+1]; p++ {
			if int(b.Col[p]) == i {
				b.Val[p] *= 1 + s
			}
		}
	}
	return b
}

func TestShiftFactorsShiftedMatrix(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	a := randomSparse(rng, 30, 4, 0.9, true)
	for _, kind := range []Kind{KindILU0, KindIC0} {
		want, err := factor(shifted(a, 0.25), Options{}, kind)
		require.NoError(t, err)
		got, err := factor(a, Options{Shift: 0.25}, kind)
		require.NoError(t, err)
		assert.Equal(t, want.LU().Val, got.LU().Val, kind.String())
		assert.Equal(t, 0.25, got.Shift())
	}
}

func TestAutoShift(t *testing.T) {
	// ILU(0): row 1's pivot 1 − 1·1/1 = 0 without a shift; with the shift
	// s it is (1+s) − 1/(1+s) ≠ 0, so 10⁻³ is enough.
	a := sparse.FromDense(mat.NewDense(2, 2, []float64{1, 1, 1, 1}))
	_, err := ILU0(a, Options{})
	require.ErrorIs(t, err, ErrZeroPivot)
	f, err := ILU0(a, Options{AutoShift: true})
	require.NoError(t, err)
	assert.Equal(t, 1e-3, f.Shift())

	// IC(0): l₁₁² = (1+s)² − 1.05² > 0 needs s > 0.05: 10⁻¹.
	b := sparse.FromDense(mat.NewDense(2, 2, []float64{1, 1.05, 1.05, 1}))
	f, err = IC0(b, Options{AutoShift: true})
	require.NoError(t, err)
	assert.Equal(t, 0.1, f.Shift())
	want, err := IC0(shifted(b, 0.1), Options{})
	require.NoError(t, err)
	assert.Equal(t, want.LU().Val, f.LU().Val)

	// No shift of the list is enough: the last failure is returned.
	c := sparse.FromDense(mat.NewDense(2, 2, []float64{1, 3, 3, 1}))
	_, err = IC0(c, Options{AutoShift: true})
	require.ErrorIs(t, err, ErrNotPositive)
	assert.Contains(t, err.Error(), "shift 0.1")
	assert.Contains(t, err.Error(), "row 1")
}

func TestRefactor(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	a := randomSparse(rng, 80, 4, 1.5, true)
	b := a.Clone()
	for p := range b.Val {
		b.Val[p] *= 1 + 0.1*rng.Float64()
	}
	// Keep b symmetric for IC(0): take the values of the lower triangle.
	bt := b.Transpose()
	for i := range b.N {
		for p := b.RowPtr[i]; p < b.RowPtr[i+1]; p++ {
			if j := int(b.Col[p]); j > i {
				b.Val[p] = bt.At(i, j)
			}
		}
	}
	for _, kind := range []Kind{KindILU0, KindIC0} {
		f, err := factor(a, Options{}, kind)
		require.NoError(t, err)
		before := append([]float64(nil), f.LU().Val...)
		require.NoError(t, f.Refactor(b.Val))
		want, err := factor(b, Options{}, kind)
		require.NoError(t, err)
		assert.Equal(t, want.LU().Val, f.LU().Val, kind.String())
		assert.NotEqual(t, before, f.LU().Val)
		require.ErrorIs(t, f.Refactor(b.Val[1:]), ErrShape)
	}
}

func TestParallelLevelsSameBits(t *testing.T) {
	saved := minParallelRows
	minParallelRows = 1
	defer func() { minParallelRows = saved }()
	rng := rand.New(rand.NewPCG(13, 14))
	a := randomSparse(rng, 3000, 4, 1.1, true)
	for _, kind := range []Kind{KindILU0, KindIC0} {
		serial, err := factor(a, Options{Workers: 1}, kind)
		require.NoError(t, err)
		par, err := factor(a, Options{Workers: 4}, kind)
		require.NoError(t, err)
		assert.Equal(t, serial.LU().Val, par.LU().Val, kind.String())
	}
	// The error of a parallel level names the same row as the serial one.
	bad := a.Clone()
	for p := bad.RowPtr[2000]; p < bad.RowPtr[2001]; p++ {
		if bad.Col[p] == 2000 {
			bad.Val[p] = -1e6
		}
	}
	_, errS := IC0(bad, Options{Workers: 1})
	_, errP := IC0(bad, Options{Workers: 4})
	require.ErrorIs(t, errS, ErrNotPositive)
	require.Error(t, errP)
	assert.Equal(t, errS.Error(), errP.Error())
}

// denseSolve returns (P·Q)⁻¹r.
func denseSolve(t *testing.T, p, q mat.Matrix, r []float64) []float64 {
	var m mat.Dense
	m.Mul(p, q)
	var z mat.VecDense
	require.NoError(t, z.SolveVec(&m, mat.NewVecDense(len(r), append([]float64(nil), r...))))
	return z.RawVector().Data
}

func TestPreconditionerApply(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	a := randomSparse(rng, 120, 4, 1.2, true)
	r := make([]float64, a.N)
	for i := range r {
		r[i] = 2*rng.Float64() - 1
	}
	ctx := context.Background()
	for _, kind := range []Kind{KindILU0, KindIC0} {
		f, err := factor(a, Options{}, kind)
		require.NoError(t, err)
		want := denseSolve(t, f.L().Dense(), f.U().Dense(), r)
		for _, alg := range []sptrsv.Algorithm{sptrsv.Auto, sptrsv.Sequential, sptrsv.LevelSet, sptrsv.SyncFree, sptrsv.SyncFreeCSR} {
			p, err := NewPreconditioner[float64](f, nil, alg)
			require.NoError(t, err)
			z := make([]float64, a.N)
			r0 := append([]float64(nil), r...)
			require.NoError(t, p.Apply(ctx, r, z))
			assert.Equal(t, r0, r, "Apply must leave r unchanged")
			for i := range z {
				require.InDeltaf(t, want[i], z[i], 1e-10*math.Max(1, math.Abs(want[i])), "%s %s z[%d]", kind, alg, i)
			}
			require.NoError(t, p.Close())

			p32, err := NewPreconditioner[float32](f, nil, alg)
			require.NoError(t, err)
			r32, z32 := make([]float32, a.N), make([]float32, a.N)
			for i := range r {
				r32[i] = float32(r[i])
			}
			require.NoError(t, p32.Apply(ctx, r32, z32))
			for i := range z32 {
				require.InDeltaf(t, want[i], float64(z32[i]), 1e-5*math.Max(1, math.Abs(want[i])), "%s %s float32 z[%d]", kind, alg, i)
			}
		}
		p, err := NewPreconditioner[float64](f, nil, sptrsv.Sequential)
		require.NoError(t, err)
		require.ErrorIs(t, p.Apply(ctx, r[1:], make([]float64, a.N)), ErrShape)
	}
}
