package stability

import (
	"math"
	"math/cmplx"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRelErrorC(t *testing.T) {
	x := []complex128{3 + 4i, 0, -1i}
	// ‖x‖₂ = √(25 + 1) and the difference is 1 in the imaginary part of
	// one entry and 2 in the real part of another: √5.
	xhat := []complex64{3 + 5i, 2, -1i}
	assert.InDelta(t, math.Sqrt(5)/math.Sqrt(26), RelErrorC(xhat, x), 1e-15)
	assert.Equal(t, 0.0, RelErrorC(x, x))
	assert.True(t, math.IsNaN(RelErrorC([]complex128{complex(1, math.NaN()), 0, 0}, x)))
	assert.True(t, math.IsNaN(RelErrorC([]complex128{complex(math.Inf(1), 0), 0, 0}, x)))
	assert.True(t, math.IsInf(RelErrorC([]complex128{1i}, []complex128{0}), 1))
	assert.Panics(t, func() { RelErrorC([]complex128{1}, x) })
	// No overflow where the squares would.
	big := []complex128{1e300 + 1e300i}
	assert.InDelta(t, 0.5, RelErrorC([]complex128{0.5e300 + 0.5e300i}, big), 1e-15)
}

func TestGenerateComplex(t *testing.T) {
	for _, f := range ComplexFamilies() {
		m, err := GenerateComplex(f, 50, 7)
		require.NoError(t, err, "%s", f)
		assert.Equal(t, 50, m.N())
		assert.Equal(t, complex128(0), m.A[0])
		assert.Equal(t, complex128(0), m.C[49])
		again, err := GenerateComplex(f, 50, 7)
		require.NoError(t, err)
		assert.Equal(t, m, again, "%s: the same seed gives the same matrix", f)
		dominant := true
		for i := range m.B {
			if cmplx.Abs(m.B[i]) < cmplx.Abs(m.A[i])+cmplx.Abs(m.C[i]) {
				dominant = false
			}
		}
		// Rayleigh quotients of the real part with the smooth vector of
		// ones and the alternating vector: of both signs when indefinite.
		ones, alt := make([]complex128, 50), make([]complex128, 50)
		for i := range ones {
			ones[i], alt[i] = 1, complex(float64(1-2*(i%2)), 0)
		}
		var qs, qa float64
		for i, v := range m.MulVec(ones) {
			qs += real(v) * real(ones[i])
		}
		for i, v := range m.MulVec(alt) {
			qa += real(v) * real(alt[i])
		}
		pos, neg := qs > 0 || qa > 0, qs < 0 || qa < 0
		switch f {
		case ShiftedLaplacian:
			assert.True(t, dominant, "%s is dominant by modulus", f)
		case Helmholtz:
			assert.False(t, dominant, "%s is not dominant", f)
			assert.True(t, pos && neg, "%s is indefinite: Rayleigh quotients of both signs", f)
		}
		x := make([]complex128, 50)
		x[3] = 1
		y := m.MulVec(x)
		assert.Equal(t, []complex128{m.C[2], m.B[3], m.A[4]}, y[2:5])
	}
	_, err := GenerateComplex(ComplexFamily(9), 5, 1)
	assert.Error(t, err)
	_, err = GenerateComplex(Helmholtz, 0, 1)
	assert.Error(t, err)
}
