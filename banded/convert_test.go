package banded

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

func TestGonumBandRoundTrip(t *testing.T) {
	// kl ≠ ku: K = max
	bd := mat.NewBandDense(6, 6, 1, 3, nil)
	for i := 0; i < 6; i++ {
		for j := max(0, i-1); j <= min(5, i+3); j++ {
			bd.SetBand(i, j, float64(10*i+j+1))
		}
	}
	m, err := FromBanded(bd)
	require.NoError(t, err)
	assert.Equal(t, 3, m.K)
	for i := 0; i < 6; i++ {
		for j := 0; j < 6; j++ {
			assert.Equal(t, bd.At(i, j), m.At(i, j), "(%d,%d)", i, j)
		}
	}
	back := ToBandDense(m)
	kl, ku := back.Bandwidth()
	assert.Equal(t, [2]int{3, 3}, [2]int{kl, ku})
	assert.True(t, mat.Equal(bd, back))

	// FromMatrix dispatches banded types and scans dense ones
	m2, err := FromMatrix(bd)
	require.NoError(t, err)
	assert.Equal(t, m.Data, m2.Data)
	d := mat.NewDense(4, 4, []float64{
		1, 0, 0, 0,
		0, 2, 0, 5,
		0, 0, 3, 0,
		7, 0, 0, 4,
	})
	m3, err := FromMatrix(d)
	require.NoError(t, err)
	assert.Equal(t, 3, m3.K)
	assert.Equal(t, 7.0, m3.At(3, 0))
	assert.Equal(t, 5.0, m3.At(1, 3))
	assert.Equal(t, d.RawMatrix().Data, m3.ToDense())

	_, err = FromMatrix(mat.NewDense(2, 3, nil))
	assert.ErrorIs(t, err, ErrShape)
	_, err = FromBanded(mat.NewBandDense(3, 4, 1, 1, nil))
	assert.ErrorIs(t, err, ErrShape)
	// a 2×2 with kl = 3 (allowed by gonum? no; use kl = 1 on 1×1)
	one, err := FromBanded(mat.NewBandDense(1, 1, 0, 0, []float64{5}))
	require.NoError(t, err)
	assert.Equal(t, 5.0, one.At(0, 0))
}

func TestFromDense(t *testing.T) {
	a := []float32{
		4, 1, 0,
		0, 4, 0,
		0, 0, 4,
	}
	m, err := FromDense(3, a)
	require.NoError(t, err)
	assert.Equal(t, 1, m.K)
	assert.Equal(t, a, m.ToDense())
	z, err := FromDense(2, []float64{0, 0, 0, 0})
	require.NoError(t, err)
	assert.Equal(t, 0, z.K)
	_, err = FromDense(3, a[:8])
	assert.ErrorIs(t, err, ErrShape)
}

func TestFromCOO(t *testing.T) {
	rows := []int{0, 1, 1, 2, 3, 1}
	cols := []int{0, 1, 3, 0, 3, 1}
	vals := []float64{1, 2, 3, 4, 5, 10}
	m, err := FromCOO(4, rows, cols, vals, -1)
	require.NoError(t, err)
	assert.Equal(t, 2, m.K)
	assert.Equal(t, 12.0, m.At(1, 1), "duplicates summed")
	assert.Equal(t, 3.0, m.At(1, 3))
	assert.Equal(t, 4.0, m.At(2, 0))

	m, err = FromCOO(4, rows, cols, vals, 3)
	require.NoError(t, err)
	assert.Equal(t, 3, m.K)

	_, err = FromCOO(4, rows, cols, vals, 1)
	require.ErrorIs(t, err, ErrShape)
	assert.Contains(t, err.Error(), "entry 2 at (1, 3)")
	_, err = FromCOO(4, []int{0, 4}, []int{0, 0}, []float64{1, 1}, -1)
	assert.ErrorIs(t, err, ErrShape)
	_, err = FromCOO(4, []int{0}, []int{0, 1}, []float64{1}, -1)
	assert.ErrorIs(t, err, ErrShape)
	_, err = FromCOO(3, nil, nil, []float32(nil), 3)
	assert.ErrorIs(t, err, ErrShape, "K ≥ N")
}

func TestMulVecAndNorms(t *testing.T) {
	rng := newRNG(31)
	for _, sh := range shapes() {
		n, k := sh[0], sh[1]
		a := Random[float64](n, k, 0.7, rng)
		d := dense(a)
		x := randVec[float64](n, rng)
		y := make([]float64, n)
		a.MulVec(x, y)
		var ref mat.VecDense
		ref.MulVec(d, mat.NewVecDense(n, x))
		for i := range y {
			require.InDelta(t, ref.AtVec(i), y[i], 1e-12, "N=%d K=%d row %d", n, k, i)
		}
		assert.InEpsilon(t, mat.Norm(d, 1), a.Norm1(), 1e-13)
		assert.InEpsilon(t, mat.Norm(d, math.Inf(1)), a.NormInf(), 1e-13)
		assert.InEpsilon(t, mat.Norm(d, 2), a.NormFrob(), 1e-13)
		var mx float64
		for _, v := range d.RawMatrix().Data {
			mx = math.Max(mx, math.Abs(v))
		}
		assert.Equal(t, mx, a.NormMax())
	}
	a := Random[float64](5, 1, 1, rng)
	assertShapePanic(t, func() { a.MulVec(make([]float64, 4), make([]float64, 5)) })
}

func TestRandomDominance(t *testing.T) {
	rng := newRNG(32)
	for _, d := range []float64{0, 0.25, 1, 3} {
		for _, sh := range [][2]int{{50, 1}, {40, 7}, {9, 8}} {
			a := Random[float64](sh[0], sh[1], d, rng)
			assert.InDelta(t, d, DiagonalDominance(a), 1e-14*(1+d))
			a32 := Random[float32](sh[0], sh[1], d, rng)
			assert.InDelta(t, d, DiagonalDominance(a32), 1e-6*(1+d))
			for i := 0; i < a.N; i++ {
				for j := max(0, i-a.K); j <= min(a.N-1, i+a.K); j++ {
					if i != j {
						require.True(t, a.At(i, j) >= -1 && a.At(i, j) < 1)
					} else {
						require.GreaterOrEqual(t, a.At(i, i), 0.0)
					}
				}
			}
		}
	}
	diag := Random[float64](4, 0, 2, rng)
	assert.Equal(t, []float64{1, 1, 1, 1}, diag.Data)
	assert.True(t, math.IsInf(DiagonalDominance(diag), 1))

	// hand example: rows (2 | 1,1) and (1 | 4): d = min(2/1, 1/... )
	m, _ := New[float64](3, 1)
	m.Set(0, 0, 2)
	m.Set(0, 1, 1)
	m.Set(1, 0, 1)
	m.Set(1, 1, 3)
	m.Set(1, 2, 2)
	m.Set(2, 1, 4)
	m.Set(2, 2, 1)
	assert.Equal(t, 0.25, DiagonalDominance(m)) // row 2: 1/4
}

func TestConvert(t *testing.T) {
	a := Random[float64](20, 3, 1, newRNG(33))
	a32 := Convert[float32](a)
	assert.Equal(t, a.N, a32.N)
	assert.Equal(t, a.K, a32.K)
	for i, v := range a.Data {
		require.Equal(t, float32(v), a32.Data[i])
	}
	back := Convert[float64](a32)
	for i, v := range a.Data {
		require.InDelta(t, v, back.Data[i], 1e-7*math.Abs(v)+1e-30)
	}
	c := a.Clone()
	c.Data[0] = 99
	assert.NotEqual(t, a.Data[0], c.Data[0])
}
