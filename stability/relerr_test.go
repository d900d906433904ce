package stability

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRelError(t *testing.T) {
	x := []float64{3, 4}
	assert.Equal(t, 0.0, RelError([]float64{3, 4}, x))
	assert.InDelta(t, 0.2, RelError([]float64{3, 5}, x), 1e-15)   // 1/5
	assert.InDelta(t, 0.2, RelError([]float32{3, 3}, x), 1e-15)   // float32 input
	assert.InDelta(t, 1.0, RelError([]float64{0, 0}, x), 1e-15)   // zero guess
	assert.InDelta(t, 2.0, RelError([]float64{-3, -4}, x), 1e-15) // negated
	assert.True(t, math.IsNaN(RelError([]float64{math.NaN(), 4}, x)))
	assert.True(t, math.IsNaN(RelError([]float64{math.Inf(1), 4}, x)))
	assert.True(t, math.IsNaN(RelError([]float32{float32(math.Inf(-1)), 4}, x)))
	assert.True(t, math.IsNaN(RelError([]float64{3, 4}, []float64{math.Inf(1), 4})))
	assert.Equal(t, 0.0, RelError([]float64{0, 0}, []float64{0, 0}))
	assert.True(t, math.IsInf(RelError([]float64{1, 0}, []float64{0, 0}), 1))
	assert.Equal(t, 0.0, RelError([]float64{}, []float64{}))
	// Scaled norms: no overflow or underflow in the squares.
	assert.InDelta(t, 1/math.Sqrt2, RelError([]float64{2e200, 1e200}, []float64{1e200, 1e200}), 1e-15)
	assert.InDelta(t, 1/math.Sqrt2, RelError([]float64{2e-200, 1e-200}, []float64{1e-200, 1e-200}), 1e-15)
	// A difference that overflows float64 counts as infinitely wrong.
	assert.True(t, math.IsInf(RelError([]float64{-1.5e308}, []float64{1.5e308}), 1))
	assert.Panics(t, func() { RelError([]float64{1}, x) })
}
