package krylov

import (
	"context"
	"fmt"
	"math"
	"sync"
)

// MixedPrecision runs a float32 preconditioner inside the float64
// iteration (the mixed-precision strategy of SPIKE::GPU, §4 of
// spike-gpu-li2014): Apply rounds r to float32, calls the float32 solve and
// widens its result to float64.
//
// Before rounding, r is scaled by a power of two that brings its largest
// entry into [0.5, 1), and the result is scaled back by the same power
// (exact in binary arithmetic, and valid because M⁻¹ is linear). Residuals
// near convergence are many orders of magnitude smaller than b, and b itself
// may lie outside float32's range; the scaling keeps both from underflowing
// or overflowing in float32.
//
// The float32 buffers are owned by the MixedPrecision and reused; Apply
// holds a lock while it uses them, so concurrent solves sharing one value
// are serialised.
type MixedPrecision struct {
	n     int
	apply func(ctx context.Context, r, z []float32) error

	mu       sync.Mutex
	r32, z32 []float32
}

var _ Preconditioner[[]float64] = (*MixedPrecision)(nil)

// NewMixedPrecision wraps apply, a float32 preconditioner for vectors of
// length n that sets z ≈ M⁻¹·r (it must not keep r or z after it returns),
// into a Preconditioner[[]float64].
func NewMixedPrecision(n int, apply func(ctx context.Context, r, z []float32) error) *MixedPrecision {
	return &MixedPrecision{n: n, apply: apply}
}

// Apply sets z ≈ M⁻¹·r through the float32 preconditioner.
func (m *MixedPrecision) Apply(ctx context.Context, r, z []float64) error {
	if len(r) != m.n || len(z) != m.n {
		return fmt.Errorf("%w: MixedPrecision of length %d given vectors of length %d and %d", ErrDimension, m.n, len(r), len(z))
	}
	// Largest magnitude, to choose the scaling.
	amax := 0.0
	for _, v := range r {
		if a := math.Abs(v); a > amax || a != a {
			amax = a
		}
	}
	if amax != amax || math.IsInf(amax, 0) {
		return fmt.Errorf("%w: MixedPrecision input", ErrNonFinite)
	}
	if amax == 0 {
		clear(z)
		return nil
	}
	_, e := math.Frexp(amax) // amax = f·2^e, f in [0.5, 1)
	down, up := math.Ldexp(1, -e), math.Ldexp(1, e)

	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.r32) != m.n {
		m.r32 = make([]float32, m.n)
		m.z32 = make([]float32, m.n)
	}
	r32, z32 := m.r32, m.z32
	parallelFor(m.n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			r32[i] = float32(r[i] * down)
		}
	})
	if err := m.apply(ctx, r32, z32); err != nil {
		return fmt.Errorf("krylov: float32 preconditioner: %w", err)
	}
	parallelFor(m.n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			z[i] = float64(z32[i]) * up
		}
	})
	return nil
}
