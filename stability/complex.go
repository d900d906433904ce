package stability

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// ComplexFamily is a family of complex tridiagonal test matrices.
type ComplexFamily int

const (
	// ShiftedLaplacian is the complex shifted Laplacian of Helmholtz
	// preconditioners on n points: tridiag(−1, 2 + iσ, −1) with σ drawn
	// from U(0.1, 1) once per matrix (Erlangga et al., "A novel
	// multigrid based preconditioner for heterogeneous Helmholtz
	// problems", SISC 2006). Diagonally dominant by modulus.
	ShiftedLaplacian ComplexFamily = iota + 1
	// Helmholtz is a damped Helmholtz operator −u″ − k²(x)·u on n
	// points: tridiag(−1, 2 − (kh)²·w[i] + iε, −1) with kh = 1, w[i]
	// from U(0.5, 1.5) for every row and ε = 10⁻³. Its real part has
	// eigenvalues of both signs (the smooth modes see 2 − 2cos θ − w < 0),
	// so it is indefinite and not dominant: elimination without pivoting
	// can meet tiny pivots.
	Helmholtz
)

// ComplexFamilies lists every complex family.
func ComplexFamilies() []ComplexFamily { return []ComplexFamily{ShiftedLaplacian, Helmholtz} }

func (f ComplexFamily) String() string {
	switch f {
	case ShiftedLaplacian:
		return "shifted-laplacian"
	case Helmholtz:
		return "helmholtz"
	}
	return fmt.Sprintf("ComplexFamily(%d)", int(f))
}

// ComplexMatrix is a complex tridiagonal matrix: sub-diagonal A (A[0] =
// 0), diagonal B and super-diagonal C (C[n−1] = 0).
type ComplexMatrix struct {
	A, B, C []complex128
}

// N returns the order of the matrix.
func (m ComplexMatrix) N() int { return len(m.B) }

// MulVec returns A·x.
func (m ComplexMatrix) MulVec(x []complex128) []complex128 {
	n := m.N()
	y := make([]complex128, n)
	for i := range n {
		y[i] = m.B[i] * x[i]
		if i > 0 {
			y[i] += m.A[i] * x[i-1]
		}
		if i < n-1 {
			y[i] += m.C[i] * x[i+1]
		}
	}
	return y
}

// GenerateComplex returns the matrix of family f and order n ≥ 1, its
// random draws from a PCG source seeded by seed.
func GenerateComplex(f ComplexFamily, n int, seed uint64) (ComplexMatrix, error) {
	if n < 1 {
		return ComplexMatrix{}, fmt.Errorf("stability: complex family %s: order %d, need n ≥ 1", f, n)
	}
	rng := rand.New(rand.NewPCG(seed, uint64(f)))
	m := ComplexMatrix{A: make([]complex128, n), B: make([]complex128, n), C: make([]complex128, n)}
	for i := range n {
		if i > 0 {
			m.A[i] = -1
		}
		if i < n-1 {
			m.C[i] = -1
		}
	}
	switch f {
	case ShiftedLaplacian:
		sigma := 0.1 + 0.9*rng.Float64()
		for i := range m.B {
			m.B[i] = complex(2, sigma)
		}
	case Helmholtz:
		const kh, eps = 1, 1e-3
		for i := range m.B {
			w := 0.5 + rng.Float64()
			m.B[i] = complex(2-kh*kh*w, eps)
		}
	default:
		return ComplexMatrix{}, fmt.Errorf("stability: unknown complex family %d", int(f))
	}
	return m, nil
}

// RelErrorC is RelError for complex vectors: ‖x̂ − x‖₂ / ‖x‖₂ with the
// complex 2-norm (‖z‖₂² = Σ |z[i]|²), computed in float64 with scaling.
// It returns NaN when either vector holds NaN or ±Inf in a real or
// imaginary part, 0 when both are zero and +Inf when x is zero and x̂ is
// not. It panics when the lengths differ.
func RelErrorC[T complex64 | complex128](xhat []T, x []complex128) float64 {
	if len(xhat) != len(x) {
		panic(fmt.Sprintf("stability: RelErrorC lengths %d and %d", len(xhat), len(x)))
	}
	// The 2-norm of a complex vector is that of its parts, side by side.
	diff := make([]float64, 2*len(x))
	parts := make([]float64, 2*len(x))
	for i := range x {
		v := complex128(xhat[i])
		for _, p := range [...]float64{real(v), imag(v), real(x[i]), imag(x[i])} {
			if math.IsNaN(p) || math.IsInf(p, 0) {
				return math.NaN()
			}
		}
		diff[2*i], diff[2*i+1] = real(v)-real(x[i]), imag(v)-imag(x[i])
		parts[2*i], parts[2*i+1] = real(x[i]), imag(x[i])
	}
	num, den := norm2(diff), norm2(parts)
	if den == 0 {
		if num == 0 {
			return 0
		}
		return math.Inf(1)
	}
	return num / den
}
