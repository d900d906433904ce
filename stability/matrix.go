package stability

import (
	"errors"
	"fmt"
	"math/rand/v2"
)

// Matrix is an n×n tridiagonal matrix in float64. Row i is
// A[i]·x[i-1] + B[i]·x[i] + C[i]·x[i+1]: A is the sub-diagonal, B the
// diagonal and C the super-diagonal, all of length n, with A[0] = 0 and
// C[n-1] = 0.
type Matrix struct {
	A, B, C []float64
}

// N returns the order of the matrix.
func (m Matrix) N() int { return len(m.B) }

// MulVec returns the product m·x computed in plain float64 arithmetic. It
// panics if len(x) != m.N().
func (m Matrix) MulVec(x []float64) []float64 {
	n := m.N()
	if len(x) != n {
		panic(fmt.Sprintf("stability: MulVec length %d, want %d", len(x), n))
	}
	y := make([]float64, n)
	for i := range n {
		s := m.B[i] * x[i]
		if i > 0 {
			s += m.A[i] * x[i-1]
		}
		if i < n-1 {
			s += m.C[i] * x[i+1]
		}
		y[i] = s
	}
	return y
}

// ErrInvalid is wrapped by the errors Generate and NewProblem return for an
// unknown type or a too small order.
var ErrInvalid = errors.New("stability: invalid argument")

// MinN is the smallest order Generate accepts (for every type).
const MinN = 2

// Stream constants of the PCG sources: one for the matrix draws, one for the
// solution vector of NewProblem, so that the two are independent.
const (
	matrixStream = 0x9e3779b97f4a7c15
	vectorStream = 0xd1b54a32d192ed03
)

// Parameters of the gallery matrices of the suite.
const (
	kmsRho    = 0.5
	dorrTheta = 1e-4
	svdKappa  = 1e15
	tiny      = 1e-50
)

// Generate builds the matrix of type t and order n (n >= MinN) from seed.
// Random draws come from a math/rand/v2 PCG source seeded by seed, so the
// result is a deterministic function of (t, n, seed); types for which
// t.Random() is false do not depend on the seed.
//
// The randsvd types 8..11 cost O(n³) time and O(n²) memory (a few 8n²-byte
// dense matrices; about 0.25 s for n = 512 and 2 s for n = 1024); all other
// types are O(n).
//
// The Toeplitz readings 2T, 6T, 14T and 16T take the first draw of the
// source as their whole sub-diagonal and the second as their whole
// super-diagonal, so for one seed the four differ only in the diagonal.
func Generate(t Type, n int, seed uint64) (Matrix, error) {
	if !t.Valid() {
		return Matrix{}, fmt.Errorf("%w: unknown matrix type %d", ErrInvalid, int(t))
	}
	if n < MinN {
		return Matrix{}, fmt.Errorf("%w: order %d < %d for type %s", ErrInvalid, n, MinN, t.Name())
	}
	rng := rand.New(rand.NewPCG(seed, matrixStream))
	m := Matrix{A: make([]float64, n), B: make([]float64, n), C: make([]float64, n)}
	switch t {
	case 1, 2, 4, 5, 6, 12, 14, 16, 20:
		m.fillUniform(rng)
		switch t {
		case 2:
			m.setDiag(1e8)
		case 4:
			m.A[n/2] *= tiny
		case 5:
			for i := 1; i < n; i++ {
				if rng.IntN(2) == 0 {
					m.A[i] = 0
				}
			}
			for i := 0; i < n-1; i++ {
				if rng.IntN(2) == 0 {
					m.C[i] = 0
				}
			}
		case 6:
			m.setDiag(64)
		case 12:
			for i := 1; i < n; i++ {
				m.A[i] *= tiny
			}
		case 14:
			m.setDiag(1e-8)
		case 16:
			m.setDiag(0)
		case 20:
			m.setDiag(4)
			for i := 1; i < n; i++ {
				m.A[i] = -1
			}
		}
	case 3:
		m.lesp()
	case 7:
		m.kmsInverse(kmsRho)
	case 8, 9, 10, 11:
		mode := [...]int{8: 2, 9: 3, 10: 1, 11: 4}[t]
		m = randsvdTridiag(n, svdKappa, mode, rng)
	case 13:
		m.dorr(dorrTheta)
	case 15:
		m.clement()
	case 17:
		m.constant(1, 1e8, 1)
	case 18:
		m.constant(-1, 4, -1)
	case 19:
		m.constant(-1, 4, 1)
	case TypeKS16:
		m.constant(1, 1e-8, 1)
	case Type2T, Type6T, Type14T, Type16T:
		// One draw for the sub-diagonal, then one for the super-diagonal.
		sub := uniform(rng)
		sup := uniform(rng)
		diag := map[Type]float64{Type2T: 1e8, Type6T: 64, Type14T: 1e-8, Type16T: 0}[t]
		m.constant(sub, diag, sup)
	}
	return m, nil
}

// uniform returns a draw from U(-1,1) (precisely [-1,1)).
func uniform(rng *rand.Rand) float64 { return 2*rng.Float64() - 1 }

// fillUniform draws the sub-diagonal, then the diagonal, then the
// super-diagonal from U(-1,1). All seeded types built on type 1 call it
// first, so they share its numbers.
func (m Matrix) fillUniform(rng *rand.Rand) {
	n := m.N()
	for i := 1; i < n; i++ {
		m.A[i] = uniform(rng)
	}
	for i := range n {
		m.B[i] = uniform(rng)
	}
	for i := 0; i < n-1; i++ {
		m.C[i] = uniform(rng)
	}
}

func (m Matrix) setDiag(v float64) {
	for i := range m.B {
		m.B[i] = v
	}
}

// constant sets m to tridiag(sub, diag, sup).
func (m Matrix) constant(sub, diag, sup float64) {
	n := m.N()
	for i := range n {
		m.B[i] = diag
		if i > 0 {
			m.A[i] = sub
		}
		if i < n-1 {
			m.C[i] = sup
		}
	}
}

// lesp sets m to gallery('lesp', n): in 1-based terms, sub-diagonal
// T(j, j-1) = 1/j and super-diagonal T(j-1, j) = j for j = 2..n, and
// diagonal -(2·[2, 3, ..., n+1] + 1) = -5, -7, ..., -(2n+3). design.md writes
// the diagonal bracket as "[3, 2, 3, ..., n]", which we read as this
// (MATLAB's documented) definition: the matrix is similar, through
// D = diag(1!, 2!, ..., n!), to the symmetric tridiagonal matrix with the same
// diagonal and unit off-diagonals, so its eigenvalues are real and lie in
// about [-2n-3.5, -4.5].
func (m Matrix) lesp() {
	n := m.N()
	for i := range n { // i is 0-based; row i+1 in 1-based terms
		m.B[i] = -float64(2*(i+2) + 1)
		if i > 0 {
			m.A[i] = 1 / float64(i+1)
		}
		if i < n-1 {
			m.C[i] = float64(i + 2)
		}
	}
}

// kmsInverse sets m to the inverse of the Kac–Murdock–Szegő matrix
// K(i,j) = rho^|i-j|, which is tridiagonal with diagonal
// [1, 1+rho², ..., 1+rho², 1]/(1-rho²) and off-diagonals -rho/(1-rho²).
func (m Matrix) kmsInverse(rho float64) {
	n := m.N()
	s := 1 - rho*rho
	for i := range n {
		m.B[i] = (1 + rho*rho) / s
		if i > 0 {
			m.A[i] = -rho / s
		}
		if i < n-1 {
			m.C[i] = -rho / s
		}
	}
	m.B[0] = 1 / s
	m.B[n-1] = 1 / s
}

// dorr sets m to gallery('dorr', n, theta) (Dorr 1970): with h = 1/(n+1),
// m = floor((n+1)/2) and 1-based row i,
//
//	i <= m: sub = -theta/h², super = -theta/h² - (1/2 - i·h)/h
//	i >  m: sub = -theta/h² + (1/2 - i·h)/h, super = -theta/h²
//	diag = -(sub + super)
//
// The first sub- and last super-diagonal entries are dropped. Since
// (1/2 - i·h)/h = (n+1)/2 - i, that term is computed exactly. Both
// off-diagonals are non-positive and the diagonal is their negated sum, so
// the matrix is row diagonally dominant (strictly in the first and last
// rows) and an M-matrix; it is nevertheless very ill-conditioned for small
// theta.
func (m Matrix) dorr(theta float64) {
	n := m.N()
	np1 := float64(n + 1)
	term := theta * np1 * np1
	half := (n + 1) / 2
	for k := range n {
		i := k + 1
		conv := np1/2 - float64(i)
		var sub, sup float64
		if i <= half {
			sub = -term
			sup = -term - conv
		} else {
			sub = -term + conv
			sup = -term
		}
		m.B[k] = -(sub + sup)
		if k > 0 {
			m.A[k] = sub
		}
		if k < n-1 {
			m.C[k] = sup
		}
	}
}

// clement sets m to gallery('clement', n, 0): zero diagonal, super-diagonal
// 1, 2, ..., n-1 and sub-diagonal n-1, n-2, ..., 1. Its eigenvalues are
// ±(n-1), ±(n-3), ..., ending in ±1 for even n and 0 for odd n, so it is
// singular for odd n (NewProblem then fails with ErrSingular).
func (m Matrix) clement() {
	n := m.N()
	for i := range n {
		m.B[i] = 0
		if i > 0 {
			m.A[i] = float64(n - i)
		}
		if i < n-1 {
			m.C[i] = float64(i + 1)
		}
	}
}
