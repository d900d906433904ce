package sparse

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/bandsolve/bandsolve/banded"
)

// condInf is the exact ‖A‖∞·‖A⁻¹‖∞ of a small matrix, from its dense
// inverse.
func condInf(t *testing.T, a *CSR) float64 {
	t.Helper()
	var inv mat.Dense
	require.NoError(t, inv.Inverse(a.Dense()))
	return mat.Norm(a.Dense(), math.Inf(1)) * mat.Norm(&inv, math.Inf(1))
}

// The estimate is a lower bound within a factor of 3 of the exact κ∞,
// with the whole band as the preconditioner and with a narrower band that
// drops entries of A.
func TestCondEst(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cases := []struct {
		name string
		a    *CSR
		k    int
	}{
		{"convection-diffusion, whole band", ConvectionDiffusion2D(8, 20, 10), 8},
		{"convection-diffusion, band of 3", ConvectionDiffusion2D(8, 20, 10), 3},
		{"random banded with fill", RandomBanded(120, 6, 0.7, 0.9, rng), 6},
		{"random banded, band of 2", RandomBanded(120, 6, 0.7, 1.2, rng), 2},
	}
	for _, c := range cases {
		band, _, err := ToBand[float64](c.a, c.k)
		require.NoError(t, err, c.name)
		got, err := CondEst(context.Background(), c.a, band)
		require.NoError(t, err, c.name)
		want := condInf(t, c.a)
		assert.LessOrEqual(t, got, want*(1+1e-6), "%s: an estimate is a lower bound", c.name)
		assert.GreaterOrEqual(t, got, want/3, "%s: κ̂ %.4g, κ %.4g", c.name, got, want)
	}
}

// A singular band, a singular matrix whose band is not, a shape mismatch.
func TestCondEstFailures(t *testing.T) {
	a := ConvectionDiffusion2D(4, 0, 0)
	zero, err := banded.New[float64](a.N, 1)
	require.NoError(t, err)
	_, err = CondEst(context.Background(), a, zero)
	assert.ErrorIs(t, err, banded.ErrSingular)

	// Rows 0 and 1 equal: A is singular, its tridiagonal band is not.
	c := NewCOO(3, 3, 9)
	for _, e := range [][3]float64{{0, 0, 2}, {0, 1, 1}, {0, 2, 1}, {1, 0, 2}, {1, 1, 1}, {1, 2, 1}, {2, 1, 1}, {2, 2, 3}} {
		c.Add(int(e[0]), int(e[1]), e[2])
	}
	s, err := c.ToCSR()
	require.NoError(t, err)
	band, _, err := ToBand[float64](s, 1)
	require.NoError(t, err)
	got, err := CondEst(context.Background(), s, band)
	assert.ErrorIs(t, err, ErrCondEst)
	assert.True(t, math.IsInf(got, 1))

	small, err := banded.New[float64](2, 1)
	require.NoError(t, err)
	_, err = CondEst(context.Background(), a, small)
	assert.ErrorIs(t, err, ErrShape)
}

func TestNormInf(t *testing.T) {
	a := ConvectionDiffusion2D(5, 3, 0)
	assert.InDelta(t, mat.Norm(a.Dense(), math.Inf(1)), a.NormInf(), 1e-15)
	assert.Zero(t, (&CSR{N: 2, M: 2, RowPtr: make([]int32, 3)}).NormInf())
}
