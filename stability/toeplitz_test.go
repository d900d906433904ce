package stability

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// isToeplitz reports whether every diagonal of m is constant.
func isToeplitz(m Matrix) bool {
	n := m.N()
	for i := 1; i < n; i++ {
		if m.B[i] != m.B[0] || m.A[i] != m.A[1] || (i < n-1 && m.C[i] != m.C[0]) {
			return false
		}
	}
	return true
}

// The Toeplitz readings keep the diagonal of their classic type and draw
// one value from U(-1,1) per off-diagonal; the entry-wise types draw every
// entry, so their off-diagonals are not constant.
func TestToeplitzReadingsStructure(t *testing.T) {
	classic := map[Type]Type{Type2T: 2, Type6T: 6, Type14T: 14, Type16T: 16}
	for _, n := range []int{3, 7, 64, 513} {
		for seed := uint64(1); seed <= 5; seed++ {
			var sub, sup float64
			for i, ty := range Toeplitz() {
				m, err := Generate(ty, n, seed)
				require.NoError(t, err)
				assert.True(t, isToeplitz(m), "type %s n %d seed %d", ty.Name(), n, seed)
				assert.Zero(t, m.A[0])
				assert.Zero(t, m.C[n-1])
				assert.True(t, m.A[1] >= -1 && m.A[1] < 1, "sub %v", m.A[1])
				assert.True(t, m.C[0] >= -1 && m.C[0] < 1, "super %v", m.C[0])
				assert.NotEqual(t, m.A[1], m.C[0], "one draw per off-diagonal")
				if i == 0 {
					sub, sup = m.A[1], m.C[0]
				} else {
					// The four readings of one seed share the off-diagonals.
					assert.Equal(t, sub, m.A[1], "type %s", ty.Name())
					assert.Equal(t, sup, m.C[0], "type %s", ty.Name())
				}
				ew, err := Generate(classic[ty], n, seed)
				require.NoError(t, err)
				assert.Equal(t, ew.B, m.B, "type %s keeps the diagonal of type %d", ty.Name(), classic[ty])
				assert.False(t, isToeplitz(ew), "type %d n %d seed %d", classic[ty], n, seed)
			}
		}
	}
	m, err := Generate(Type14T, 100, 1)
	require.NoError(t, err)
	again, err := Generate(Type14T, 100, 1)
	require.NoError(t, err)
	assert.True(t, equalMatrices(m, again))
	other, err := Generate(Type14T, 100, 2)
	require.NoError(t, err)
	assert.NotEqual(t, m.A[1], other.A[1])
}

// ratioPow returns r^(n/2) for r = max(|a|,|c|)/min(|a|,|c|), the
// sub-diagonal a and super-diagonal c of the Toeplitz matrix m.
func ratioPow(m Matrix) float64 {
	a, c := math.Abs(m.A[1]), math.Abs(m.C[0])
	return math.Pow(math.Max(a, c)/math.Min(a, c), float64(m.N()/2))
}

// The condition number of tridiag(a, b, c) with a tiny or zero diagonal
// grows like r^(n/2), r = |a/c| or its inverse (through diag(r^(i/2)) the
// matrix is similar to one whose off-diagonals have equal magnitudes); with
// a dominant diagonal it stays near 1. Measured for ten seeds at n = 64 and
// 128: κ∞/r^(n/2) lies in [1.09, 49]; the test allows [1/2, n²].
func TestToeplitzReadingsConditioning(t *testing.T) {
	for _, n := range []int{64, 128} {
		for seed := uint64(1); seed <= 10; seed++ {
			for _, ty := range []Type{Type14T, Type16T} {
				m, err := Generate(ty, n, seed)
				require.NoError(t, err)
				k, g := condInf(m, 1024), ratioPow(m)
				assert.GreaterOrEqual(t, k, g/2, "type %s n %d seed %d", ty.Name(), n, seed)
				assert.LessOrEqual(t, k, g*float64(n*n), "type %s n %d seed %d", ty.Name(), n, seed)
			}
			for _, ty := range []Type{Type2T, Type6T} {
				m, err := Generate(ty, n, seed)
				require.NoError(t, err)
				// Diagonally dominant: κ∞ ≤ (b+2)/(b-2) = 66/62 for b = 64.
				assert.Less(t, condInf(m, 256), 66.0/62, "type %s n %d seed %d", ty.Name(), n, seed)
			}
		}
	}
}

// At n = 512, seed 1 (the documented table's problem) the Toeplitz reading
// of type 14 has κ∞ ≈ 5.4e205 (r = 6.36), the entry-wise type 14 1.0e11.
func TestToeplitzReadingsIllConditionedAt512(t *testing.T) {
	if testing.Short() {
		t.Skip("about two seconds of big.Float inverses")
	}
	m14, err := Generate(14, 512, 1)
	require.NoError(t, err)
	m14T, err := Generate(Type14T, 512, 1)
	require.NoError(t, err)
	k14, k14T := condInf(m14, 1024), condInf(m14T, 1024)
	assert.Greater(t, k14T, 1e200)
	assert.Less(t, k14, 1e12)
	assert.Greater(t, k14, 1e9)
}

// The reference solution settles for every Toeplitz reading at n = 512 in
// both precisions, even at κ ≈ 1e205: the exact solution of the rounded
// system is far from x₀ but finite, and it solves the system.
func TestToeplitzReadingsReference(t *testing.T) {
	for _, ty := range Toeplitz() {
		p64, err := NewProblem[float64](ty, 512, 1)
		require.NoError(t, err, "type %s", ty.Name())
		assert.Equal(t, ty, p64.Type)
		p32, err := NewProblem[float32](ty, 512, 1)
		require.NoError(t, err, "type %s", ty.Name())
		switch ty {
		case Type2T, Type6T:
			assert.Less(t, RelError(dgtsv(p64), p64.X), 1e-14, "type %s", ty.Name())
			assert.Less(t, RelError(p64.X, p64.X0), 1e-14, "type %s", ty.Name())
			assert.Less(t, RelError(p32.X, p32.X0), 1e-6, "type %s", ty.Name())
			assert.Equal(t, uint(2*MinRefBits), p64.RefBits)
		default:
			// κ·ε ≫ 1: rounding d to T moves the solution far from x₀.
			// (The elimination settles at the first two precisions all
			// the same: its pivots and multipliers are products and
			// quotients of a, b and c without cancellation.)
			assert.Greater(t, RelError(p64.X, p64.X0), 1e100, "type %s", ty.Name())
			assert.Greater(t, RelError(p32.X, p32.X0), 1e100, "type %s", ty.Name())
		}
		again, err := NewProblem[float64](ty, 512, 1)
		require.NoError(t, err)
		assert.Equal(t, p64, again, "type %s not deterministic", ty.Name())
	}
	// Zero diagonal, odd n: singular as type 16.
	_, err := NewProblem[float64](Type16T, 513, 1)
	require.ErrorIs(t, err, ErrSingular)
	_, err = NewProblem[float64](Type16T, 512, 1)
	require.NoError(t, err)
}
