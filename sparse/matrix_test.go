package sparse

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/bandsolve/bandsolve/banded"
)

func TestCOOToCSR(t *testing.T) {
	c := NewCOO(3, 4, 0)
	c.Add(2, 3, 1)
	c.Add(0, 2, 2)
	c.Add(0, 0, 3)
	c.Add(2, 3, 4) // repeat: summed
	c.Add(0, 2, -2)
	a := mustCSR(t, c)
	assert.Equal(t, []int32{0, 2, 2, 3}, a.RowPtr)
	assert.Equal(t, []int32{0, 2, 3}, a.Col)
	assert.Equal(t, []float64{3, 0, 5}, a.Val) // cancelled repeat stays as a stored zero
	assert.Equal(t, 5.0, a.At(2, 3))
	assert.Equal(t, 0.0, a.At(1, 1))

	for _, sz := range [][3]int{{1, 1, 1}, {7, 5, 30}, {37, 41, 400}, {101, 101, 50}} {
		c := randomCOO(sz[0], sz[1], sz[2], newRNG(uint64(sz[2])))
		a := mustCSR(t, c)
		requireDenseEqual(t, denseOf(c), a.Dense(), 1e-15)
		// Back to COO and again: same CSR.
		b := mustCSR(t, a.ToCOO())
		assert.Equal(t, a, b)
	}
}

func TestCheckErrors(t *testing.T) {
	c := NewCOO(2, 2, 0)
	c.Add(2, 0, 1)
	_, err := c.ToCSR()
	require.ErrorIs(t, err, ErrShape)
	c = &COO{N: 2, M: 2, Row: []int{0}, Col: []int{0}}
	require.ErrorIs(t, c.Check(), ErrShape)
	require.ErrorIs(t, (&COO{N: -1}).Check(), ErrShape)

	good := mustCSR(t, randomCOO(5, 5, 12, newRNG(1)))
	bad := good.Clone()
	bad.RowPtr[5]++
	require.ErrorIs(t, bad.Check(), ErrShape)
	bad = good.Clone()
	bad.Col[0], bad.Col[1] = bad.Col[1], bad.Col[0] // unsorted (row 0 has ≥ 2 entries?)
	if bad.RowPtr[1] >= 2 {
		require.ErrorIs(t, bad.Check(), ErrShape)
	}
	bad = good.Clone()
	bad.Col[len(bad.Col)-1] = 5
	require.ErrorIs(t, bad.Check(), ErrShape)
}

func TestTransposeMulVec(t *testing.T) {
	rng := newRNG(2)
	for _, sz := range [][3]int{{1, 1, 1}, {13, 29, 100}, {300, 211, 3000}, {20011, 20011, 100000}} {
		a := mustCSR(t, randomCOO(sz[0], sz[1], sz[2], rng))
		at := a.Transpose()
		require.NoError(t, at.Check())
		assert.Equal(t, a, at.Transpose())
		x := randVec(a.M, rng)
		y := make([]float64, a.N)
		require.NoError(t, a.MulVec(x, y))
		// Reference: row-by-row through the transpose (column access).
		ref := make([]float64, a.N)
		for j := range at.N {
			for p := at.RowPtr[j]; p < at.RowPtr[j+1]; p++ {
				ref[at.Col[p]] += at.Val[p] * x[j]
			}
		}
		assert.InDeltaSlice(t, ref, y, 1e-12)
		if a.N <= 300 {
			var d mat.VecDense
			d.MulVec(a.Dense(), mat.NewVecDense(a.M, x))
			assert.InDeltaSlice(t, d.RawVector().Data, y, 1e-12)
			var dt mat.Dense
			dt.CloneFrom(a.Dense().T())
			requireDenseEqual(t, &dt, at.Dense(), 0)
		}
	}
	a := mustCSR(t, randomCOO(3, 4, 5, rng))
	require.ErrorIs(t, a.MulVec(make([]float64, 3), make([]float64, 3)), ErrShape)
	require.ErrorIs(t, a.MulVec(make([]float64, 4), make([]float64, 4)), ErrShape)
}

func TestToFloat32(t *testing.T) {
	a := mustCSR(t, randomCOO(9, 9, 30, newRNG(3)))
	f := a.ToFloat32()
	require.Len(t, f, a.NNZ())
	for p, v := range a.Val {
		assert.Equal(t, float32(v), f[p])
	}
}

// TestPermuteConvention pins the gather convention down on a small case.
func TestPermuteConvention(t *testing.T) {
	// A[i][j] = 10·i + j + 1 (dense 3×3).
	d := mat.NewDense(3, 3, nil)
	for i := range 3 {
		for j := range 3 {
			d.Set(i, j, float64(10*i+j+1))
		}
	}
	a := FromDense(d)
	rp, cp := []int{2, 0, 1}, []int{1, 2, 0}
	b, err := a.Permute(rp, cp)
	require.NoError(t, err)
	require.NoError(t, b.Check())
	// New row 0 is old row 2, new column 0 is old column 1.
	assert.Equal(t, 22.0, b.At(0, 0))
	for i := range 3 {
		for j := range 3 {
			assert.Equal(t, a.At(rp[i], cp[j]), b.At(i, j))
		}
	}
	// Permuting back with the inverses gives A again.
	c, err := b.Permute(InversePerm(rp), InversePerm(cp))
	require.NoError(t, err)
	assert.Equal(t, a, c)
	// Composition: permuting by p then q is permuting by ComposePerm(p, q).
	q := []int{1, 2, 0}
	bq, err := b.Permute(q, q)
	require.NoError(t, err)
	direct, err := a.Permute(ComposePerm(rp, q), ComposePerm(cp, q))
	require.NoError(t, err)
	assert.Equal(t, bq, direct)
	// A vector permutes the same way: (P A Pᵀ)(P x) = P (A x).
	x := []float64{1, -2, 5}
	ax := make([]float64, 3)
	require.NoError(t, a.MulVec(x, ax))
	pa, _ := a.Permute(rp, rp)
	y := make([]float64, 3)
	require.NoError(t, pa.MulVec(PermuteVec(x, rp), y))
	assert.Equal(t, PermuteVec(ax, rp), y)

	_, err = a.Permute([]int{0, 0, 1}, nil)
	require.ErrorIs(t, err, ErrShape)
	_, err = a.Permute(nil, []int{0, 1})
	require.ErrorIs(t, err, ErrShape)
	id, err := a.Permute(nil, nil)
	require.NoError(t, err)
	assert.Equal(t, a, id)
}

func TestPermuteLargeRows(t *testing.T) {
	// Rows longer than 32 take the sort.Sort path.
	rng := newRNG(4)
	a := mustCSR(t, randomCOO(60, 70, 2000, rng))
	rp, cp := rng.Perm(60), rng.Perm(70)
	b, err := a.Permute(rp, cp)
	require.NoError(t, err)
	require.NoError(t, b.Check())
	for i := range 60 {
		for j := range 70 {
			require.Equal(t, a.At(rp[i], cp[j]), b.At(i, j))
		}
	}
}

func TestBandwidthToBand(t *testing.T) {
	rng := newRNG(5)
	a := RandomBanded(53, 4, 0.5, 1, rng)
	require.NoError(t, a.Check())
	assert.Equal(t, 4, a.Bandwidth())
	kl, ku := a.LowerUpper()
	assert.Equal(t, 4, kl)
	assert.Equal(t, 4, ku)
	c := NewCOO(5, 5, 0)
	c.Add(4, 1, 1)
	c.Add(0, 1, 1)
	kl, ku = mustCSR(t, c).LowerUpper()
	assert.Equal(t, []int{3, 1}, []int{kl, ku})
	assert.Equal(t, 0, mustCSR(t, NewCOO(4, 4, 0)).Bandwidth())

	b, dropped, err := ToBand[float64](a, 4)
	require.NoError(t, err)
	assert.Zero(t, dropped)
	for i := range a.N {
		for j := range a.N {
			require.Equal(t, a.At(i, j), b.At(i, j))
		}
	}
	b2, dropped, err := ToBand[float32](a, 2)
	require.NoError(t, err)
	want := 0
	for i := range a.N {
		for j := range a.N {
			if i-j > 2 || j-i > 2 {
				if a.At(i, j) != 0 {
					want++
				}
				continue
			}
			require.Equal(t, float32(a.At(i, j)), b2.At(i, j))
		}
	}
	assert.Equal(t, want, dropped)
	assert.Positive(t, dropped)
	assert.Equal(t, a.NNZ()-dropped, a.DropOutsideBand(2).NNZ())

	_, _, err = ToBand[float64](a, 53)
	require.ErrorIs(t, err, banded.ErrShape)
	_, _, err = ToBand[float64](mustCSR(t, NewCOO(3, 4, 0)), 1)
	require.ErrorIs(t, err, ErrShape)
}

func TestCheckPerm(t *testing.T) {
	require.NoError(t, CheckPerm([]int{2, 0, 1}, 3))
	require.ErrorIs(t, CheckPerm([]int{2, 0}, 3), ErrShape)
	require.ErrorIs(t, CheckPerm([]int{2, 0, 3}, 3), ErrShape)
	require.ErrorIs(t, CheckPerm([]int{2, 0, 2}, 3), ErrShape)
	require.ErrorIs(t, CheckPerm([]int{-1, 0, 1}, 3), ErrShape)
	p := newRNG(6).Perm(17)
	assert.Equal(t, p, InversePerm(InversePerm(p)))
	assert.Equal(t, identity(17), ComposePerm(p, InversePerm(p)))
}

func identity(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return p
}

func TestFromBand(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, sh := range []struct{ n, k int }{{1, 0}, {7, 0}, {9, 2}, {10, 4}, {5, 4}} {
		b := banded.Random[float64](sh.n, sh.k, 0.7, rng)
		if sh.n > 3 {
			b.Set(2, max(0, 2-sh.k), 0) // an exact zero inside the band is not stored
		}
		a, err := FromBand(b)
		require.NoError(t, err)
		require.NoError(t, a.Check())
		x := make([]float64, sh.n)
		for i := range x {
			x[i] = rng.Float64() - 0.5
		}
		want, got := make([]float64, sh.n), make([]float64, sh.n)
		b.MulVec(x, want)
		require.NoError(t, a.MulVec(x, got))
		assert.InDeltaSlice(t, want, got, 1e-14, "N=%d K=%d", sh.n, sh.k)
		back, dropped, err := ToBand[float64](a, sh.k)
		require.NoError(t, err)
		assert.Zero(t, dropped)
		assert.Equal(t, b.Data, back.Data, "N=%d K=%d round trip", sh.n, sh.k)
		if sh.n > 3 {
			assert.Less(t, a.NNZ(), nnzBand(sh.n, sh.k), "the zero is not stored")
		}
	}
	_, err := FromBand[float64](nil)
	assert.ErrorIs(t, err, ErrShape)
}

// nnzBand is the number of positions in a band of order n and half-width k.
func nnzBand(n, k int) int {
	c := 0
	for i := range n {
		c += min(n-1, i+k) - max(0, i-k) + 1
	}
	return c
}
