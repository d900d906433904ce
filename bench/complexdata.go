package bench

import (
	"fmt"
	"math/rand/v2"

	"github.com/bandsolve/bandsolve/tridiag"
)

// newComplexData generates the data of a complex case (C64, C128): d with
// real and imaginary parts from U(−1, 1), and the complex counterpart of
// the matrix kind, with a = 0 in the first row and c = 0 in the last row
// of every system (cuSPARSE requires it):
//
//   - Toeplitz: tridiag(−1, 2+i, −1), a complex-shifted Laplacian,
//     strictly dominant by modulus (|2+i| = √5 > 2);
//   - Dominant: a and c with real and imaginary parts from U(−1, 1) and
//     b = 4, strictly dominant by modulus (|a| + |c| ≤ 2√2); constant
//     cases (0.5+0.5i, 4, −0.5+0.5i);
//   - Diffusion: the matrix of −(k·u′)′ with a complex coefficient
//     k_{i+1/2} = κ + iλ on every edge, κ from U(0.5, 1.5) and λ from
//     U(−0.5, 0.5) (a lossy medium): its Hermitian part is positive
//     definite, but |b_i| = |k_{i−1/2} + k_{i+1/2}| falls below |a_i| + |c_i|
//     wherever the two edges' phases differ, so it is not dominant by
//     modulus and Auto's pivot growth test decides between Thomas and
//     GTSV system by system; constant cases take Toeplitz's.
//
// Elements outside the batch (the strided layout's halo) are 0.
func newComplexData[T tridiag.Complex](c Case, matrix string, seed uint64) (*hostData[T], error) {
	if !c.Complex() {
		return nil, fmt.Errorf("bench: complex data for a %s case", c.Precision)
	}
	h := &hostData[T]{cs: c, matrix: matrix, seed: seed}
	switch matrix {
	case Toeplitz, Diffusion:
		h.ka, h.kb, h.kc = -1, T(complex(2, 1)), -1
	case Dominant:
		h.ka, h.kb, h.kc = T(complex(0.5, 0.5)), 4, T(complex(-0.5, 0.5))
	default:
		return nil, fmt.Errorf("unknown matrix %q (want one of %v)", matrix, Matrices())
	}
	h.d = make([]T, c.Len())
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	l := c.TridiagLayout()
	for g := 0; g < c.G; g++ {
		for i := 0; i < c.N; i++ {
			re := 2*rng.Float64() - 1
			h.d[l.Index(i, g)] = T(complex(re, 2*rng.Float64()-1))
		}
	}
	if !c.Constant {
		h.coeffs()
	}
	return h, nil
}

// complexCoeffs fills the coefficient arrays of a complex case
// (newComplexData says which matrix each kind is).
func complexCoeffs[T tridiag.Complex](h *hostData[T]) {
	cs := h.cs
	n := cs.Len()
	h.a, h.b, h.c = make([]T, n), make([]T, n), make([]T, n)
	l := cs.TridiagLayout()
	rng := rand.New(rand.NewPCG(h.seed, 0x5851f42d4c957f2d))
	uniform := func(lo, hi float64) float64 { return lo + (hi-lo)*rng.Float64() }
	random := h.matrix == Dominant && !cs.Constant
	diffusion := h.matrix == Diffusion && !cs.Constant
	edge := func() T {
		re := uniform(0.5, 1.5)
		return T(complex(re, uniform(-0.5, 0.5)))
	}
	for g := 0; g < cs.G; g++ {
		var kl T
		if diffusion {
			kl = edge() // k_{−1/2}: the first row keeps it in b
		}
		for i := 0; i < cs.N; i++ {
			k := l.Index(i, g)
			av, bv, cv := h.ka, h.kb, h.kc
			if random {
				re := uniform(-1, 1)
				av = T(complex(re, uniform(-1, 1)))
				re = uniform(-1, 1)
				cv = T(complex(re, uniform(-1, 1)))
			}
			if diffusion {
				kr := edge()
				av, bv, cv = -kl, kl+kr, -kr
				kl = kr
			}
			if i == 0 {
				av = 0
			}
			if i == cs.N-1 {
				cv = 0
			}
			h.a[k], h.b[k], h.c[k] = av, bv, cv
		}
	}
}
