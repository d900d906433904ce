package banded

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

// spdBand is a random symmetric band of half-bandwidth k whose diagonal
// exceeds the sum of its row's off-diagonal magnitudes by shift (positive
// definite for shift > 0), the upper triangle the lower's transpose.
func spdBand(r *rand.Rand, n, k int, shift float64) *Band[float64] {
	m, err := New[float64](n, k)
	if err != nil {
		panic(err)
	}
	row := make([]float64, n)
	for t := 1; t <= k; t++ {
		for j := 0; j+t < n; j++ {
			v := r.Float64()*2 - 1
			m.Data[(k+t)*n+j] = v   // a_{j+t, j}
			m.Data[(k-t)*n+j+t] = v // a_{j, j+t}
			row[j] += math.Abs(v)
			row[j+t] += math.Abs(v)
		}
	}
	for j := range n {
		m.Data[k*n+j] = row[j] + shift
	}
	return m
}

func TestCholeskyMatchesDense(t *testing.T) {
	for _, c := range []struct{ n, k int }{{1, 0}, {7, 0}, {9, 1}, {50, 3}, {123, 10}, {40, 39}} {
		t.Run(fmt.Sprintf("N=%d K=%d", c.n, c.k), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(c.n), uint64(c.k)))
			// A small shift: far from diagonally dominant, well conditioned
			// enough for a relative comparison.
			m := spdBand(r, c.n, c.k, 0.05)
			f, err := FactorCholesky(m)
			require.NoError(t, err)
			const nrhs = 3
			b := make([]float64, c.n*nrhs)
			for i := range b {
				b[i] = r.Float64()*2 - 1
			}
			x := append([]float64(nil), b...)
			f.SolveMulti(x, nrhs)

			// Reference: gonum's dense Cholesky.
			sym := mat.NewSymDense(c.n, nil)
			for i := range c.n {
				for j := max(0, i-c.k); j <= i; j++ {
					sym.SetSym(i, j, m.Data[(c.k+i-j)*c.n+j])
				}
			}
			var ch mat.Cholesky
			require.True(t, ch.Factorize(sym), "gonum finds the matrix not positive definite")
			for col := range nrhs {
				var want mat.VecDense
				require.NoError(t, ch.SolveVecTo(&want, mat.NewVecDense(c.n, b[col*c.n:(col+1)*c.n])))
				got := x[col*c.n : (col+1)*c.n]
				for i := range c.n {
					assert.InDelta(t, want.AtVec(i), got[i], 1e-10*math.Max(1, math.Abs(want.AtVec(i))), "column %d row %d", col, i)
				}
				assert.Less(t, BackwardError(m, b[col*c.n:(col+1)*c.n], got), 1e-15, "column %d", col)
			}
			// L·Lᵀ restores the band.
			for i := range c.n {
				for j := max(0, i-c.k); j <= i; j++ {
					s := 0.0
					for p := max(0, i-c.k); p <= j; p++ {
						s += f.Data[(i-p)*c.n+p] * f.Data[(j-p)*c.n+p]
					}
					assert.InDelta(t, m.Data[(c.k+i-j)*c.n+j], s, 1e-12, "(L·Lᵀ)_%d,%d", i, j)
				}
			}
		})
	}
}

func TestCholeskyFloat32(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	m64 := spdBand(r, 200, 5, 1)
	f, err := FactorCholesky(Convert[float32](m64))
	require.NoError(t, err)
	b := make([]float32, 200)
	for i := range b {
		b[i] = float32(r.Float64())
	}
	x := append([]float32(nil), b...)
	f.Solve(x)
	assert.Less(t, BackwardError(Convert[float32](m64), b, x), 1e-6)
}

func TestCholeskyRefuses(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	m := spdBand(r, 30, 2, 0.5)
	m.Data[2*30+17] = -1 // a_17,17 < 0: the leading 18×18 block is not positive definite
	_, err := FactorCholesky(m)
	var re *RowError
	require.True(t, errors.As(err, &re), "%v", err)
	assert.ErrorIs(t, err, ErrNotPositiveDefinite)
	assert.Equal(t, 17, re.Row)
	assert.Contains(t, err.Error(), "row 17")

	m = spdBand(r, 30, 2, 0.5)
	m.Data[(2+1)*30+4] = math.NaN() // a_5,4
	_, err = FactorCholesky(m)
	require.True(t, errors.As(err, &re), "%v", err)
	assert.ErrorIs(t, err, ErrNonFinite)
	assert.Equal(t, [2]int{5, 4}, [2]int{re.Row, re.Col})

	// The upper triangle is not read.
	m = spdBand(r, 30, 2, 0.5)
	m.Data[0*30+9] = math.NaN() // a_7,9
	_, err = FactorCholesky(m)
	assert.NoError(t, err)

	_, err = FactorCholesky[float64](nil)
	assert.ErrorIs(t, err, ErrShape)
	f, err := FactorCholesky(spdBand(r, 10, 1, 1))
	require.NoError(t, err)
	assert.Panics(t, func() { f.Solve(make([]float64, 9)) })
}

// TestRandomSymmetric: the band is symmetric, of degree of dominance d,
// and for d > 1 Cholesky factors it.
func TestRandomSymmetric(t *testing.T) {
	m := RandomSymmetric[float64](400, 5, 1.2, rand.New(rand.NewPCG(8, 8)))
	for i := range m.N {
		for j := max(0, i-m.K); j <= min(m.N-1, i+m.K); j++ {
			require.Equal(t, m.Data[m.Index(i, j)], m.Data[m.Index(j, i)], "a[%d][%d]", i, j)
		}
	}
	assert.InDelta(t, 1.2, DiagonalDominance(m), 1e-12)
	_, err := FactorCholesky(m)
	assert.NoError(t, err)
}
