package problems

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/bandsolve/bandsolve/sparse"
)

func symmetric(a *sparse.CSR) bool {
	t := a.Transpose()
	for i := range a.N {
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			if t.At(i, int(a.Col[p])) != a.Val[p] {
				return false
			}
		}
	}
	return true
}

func positiveDefinite(a *sparse.CSR) bool {
	d := a.Dense()
	var ch mat.Cholesky
	return ch.Factorize(mat.NewSymDense(a.N, d.RawMatrix().Data))
}

func TestSuiteClasses(t *testing.T) {
	for _, p := range Suite(9) {
		require.NoError(t, p.A.Check(), p.Name)
		require.Equal(t, p.A.N, p.A.M, p.Name)
		for i := range p.A.N {
			assert.Greater(t, p.A.At(i, i), 0.0, "%s: diagonal %d", p.Name, i)
		}
		assert.Equal(t, p.SPD, symmetric(p.A), p.Name)
		if p.SPD {
			assert.True(t, positiveDefinite(p.A), p.Name)
		}
	}
}

func TestPoissonByHand(t *testing.T) {
	a := Poisson2D(3)
	assert.Equal(t, 9, a.N)
	assert.Equal(t, 9+2*12, a.NNZ())
	assert.Equal(t, 4.0, a.At(4, 4))
	assert.Equal(t, -1.0, a.At(4, 1))
	assert.Equal(t, -1.0, a.At(4, 7))
	assert.Equal(t, 0.0, a.At(2, 3), "no coupling across the grid's edge")
	b := Poisson3D(3)
	assert.Equal(t, 27, b.N)
	assert.Equal(t, 27+2*3*18, b.NNZ())
	assert.Equal(t, -1.0, b.At(13, 4))
	// Row sums: zero in the interior, positive next to the boundary.
	e := OnesRHS(b)
	assert.Equal(t, 0.0, e[13])
	assert.Equal(t, 3.0, e[0])
}

func TestConvectionDiffusionUpwind(t *testing.T) {
	a := ConvectionDiffusion2D(16, 1000)
	assert.False(t, symmetric(a))
	for i := range a.N {
		off := 0.0
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			if int(a.Col[p]) != i {
				require.LessOrEqual(t, a.Val[p], 0.0, "an M-matrix has non-positive off-diagonal entries")
				off -= a.Val[p]
			}
		}
		require.GreaterOrEqual(t, a.At(i, i), off*(1-1e-12), "row %d is diagonally dominant", i)
	}
	// Pe = 0 is the Laplacian.
	assert.Equal(t, Poisson2D(5).Val, ConvectionDiffusion2D(5, 0).Val)
}

func TestAnisotropicCoefficients(t *testing.T) {
	a := Anisotropic2D(20, 1e-2, 1, 7)
	lo, hi := math.Inf(1), 0.0
	for i := range a.N {
		if i%20 < 19 {
			v := -a.At(i, i+1)
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	assert.Greater(t, hi/lo, 3.0, "the x couplings vary")
	assert.LessOrEqual(t, hi/lo, 100.0+1e-9, "10^(2·contrast) bounds their ratio")
	assert.Equal(t, a.Val, Anisotropic2D(20, 1e-2, 1, 7).Val, "seeded")
	assert.NotEqual(t, a.Val, Anisotropic2D(20, 1e-2, 1, 8).Val)
}

func TestGraphLaplacian(t *testing.T) {
	a, err := GraphLaplacian(400, 1e-3, 3)
	require.NoError(t, err)
	assert.True(t, symmetric(a))
	assert.True(t, positiveDefinite(a))
	sum := OnesRHS(a)
	for i, s := range sum {
		assert.InDelta(t, 1e-3*a.At(i, i)/(1+1e-3), s, 1e-9*a.At(i, i), "row %d: the leak is the row sum", i)
	}
	_, err = GraphLaplacian(10, 0, 1)
	require.ErrorIs(t, err, sparse.ErrShape)
}
