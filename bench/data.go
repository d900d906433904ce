package bench

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"

	"github.com/bandsolve/bandsolve/tridiag"
)

// Matrix kinds for the coefficients.
const (
	// Toeplitz is tridiag(−1, 2, −1), the matrix of the measured anchors.
	Toeplitz = "toeplitz"
	// Dominant has a, c from U(−1, 1) and b = 4: strictly diagonally
	// dominant, so every algorithm is stable on it.
	Dominant = "dominant"
	// Diffusion is the matrix of −(k·u′)′ with a coefficient k_{i+1/2}
	// from U(0.5, 1.5) on every edge (a_i = −k_{i−1/2}, c_i = −k_{i+1/2},
	// b_i = k_{i−1/2} + k_{i+1/2}): weakly dominant, condition ~N², where
	// PCR's backward error grows with N (package pcr, "Stability");
	// constant cases take tridiag(−1, 2, −1).
	Diffusion = "diffusion"
)

// Matrices returns the matrix kinds of the -matrix flag.
func Matrices() []string { return []string{Toeplitz, Dominant, Diffusion} }

// hostData is the data of one case on the host: the coefficient arrays
// (materialised also for constant cases, where the peers need them), the
// right-hand side, and the constant coefficients.
type hostData[T tridiag.Scalar] struct {
	cs         Case
	a, b, c    []T // nil until coeffs is called for a constant case
	d          []T
	ka, kb, kc T // the constant coefficients
	matrix     string
	seed       uint64
}

// newHostData generates the data of a case: d from U(−1, 1), and the
// coefficients of the matrix kind, with a = 0 in the first row and c = 0
// in the last row of every system (cuSPARSE requires it). Elements of the
// arrays outside the batch (the strided layout's halo) are 0.
func newHostData[T tridiag.Float](c Case, matrix string, seed uint64) (*hostData[T], error) {
	h := &hostData[T]{cs: c, matrix: matrix, seed: seed}
	switch matrix {
	case Toeplitz, Diffusion: // diffusion: the constants of its constant cases
		h.ka, h.kb, h.kc = -1, 2, -1
	case Dominant:
		h.ka, h.kb, h.kc = 0.5, 4, -0.5
	default:
		return nil, fmt.Errorf("unknown matrix %q (want one of %v)", matrix, Matrices())
	}
	n := c.Len()
	h.d = make([]T, n)
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	l := c.TridiagLayout()
	for g := 0; g < c.G; g++ {
		for i := 0; i < c.N; i++ {
			h.d[l.Index(i, g)] = T(2*rng.Float64() - 1)
		}
	}
	if !c.Constant {
		h.coeffs()
	}
	return h, nil
}

// newCaseData generates the data of a case of any element type: the real
// data of newHostData, or the complex data of newComplexData.
func newCaseData[T tridiag.Scalar](c Case, matrix string, seed uint64) (*hostData[T], error) {
	var h any
	var err error
	switch any(*new(T)).(type) {
	case float32:
		h, err = newHostData[float32](c, matrix, seed)
	case float64:
		h, err = newHostData[float64](c, matrix, seed)
	case complex64:
		h, err = newComplexData[complex64](c, matrix, seed)
	case complex128:
		h, err = newComplexData[complex128](c, matrix, seed)
	}
	if err != nil {
		return nil, err
	}
	return h.(*hostData[T]), nil
}

// coeffs materialises the coefficient arrays (for constant cases, with
// the constant values) and returns them.
func (h *hostData[T]) coeffs() (a, b, c []T) {
	if h.a != nil {
		return h.a, h.b, h.c
	}
	switch hd := any(h).(type) {
	case *hostData[float32]:
		realCoeffs(hd)
	case *hostData[float64]:
		realCoeffs(hd)
	case *hostData[complex64]:
		complexCoeffs(hd)
	case *hostData[complex128]:
		complexCoeffs(hd)
	}
	return h.a, h.b, h.c
}

// realCoeffs fills the coefficient arrays of a real case.
func realCoeffs[T tridiag.Float](h *hostData[T]) {
	cs := h.cs
	n := cs.Len()
	h.a, h.b, h.c = make([]T, n), make([]T, n), make([]T, n)
	l := cs.TridiagLayout()
	rng := rand.New(rand.NewPCG(h.seed, 0x5851f42d4c957f2d))
	random := h.matrix == Dominant && !cs.Constant
	diffusion := h.matrix == Diffusion && !cs.Constant
	for g := 0; g < cs.G; g++ {
		kl := T(0.5 + rng.Float64()) // k_{−1/2}: the first row keeps it in b
		for i := 0; i < cs.N; i++ {
			k := l.Index(i, g)
			av, bv, cv := h.ka, h.kb, h.kc
			if random {
				av, cv = T(2*rng.Float64()-1), T(2*rng.Float64()-1)
			}
			if diffusion {
				kr := T(0.5 + rng.Float64())
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

// residSample is the most systems the residual check looks at.
const residSample = 64

// backwardError returns the largest normwise backward error
// max_i |(Ax−d)_i| / max_i (|a_i x_{i−1}| + |b_i x_i| + |c_i x_{i+1}| + |d_i|)
// over up to residSample systems spread over the batch, computed in
// float64 (complex128 for complex cases, |·| the modulus). x is in the
// case's layout. It is NaN when a solution holds a NaN or an infinity.
func (h *hostData[T]) backwardError(x []T) float64 {
	switch hd := any(h).(type) {
	case *hostData[float32]:
		return sampledBackwardError(hd, any(x).([]float32), func(v float32) float64 { return float64(v) }, math.Abs)
	case *hostData[float64]:
		return sampledBackwardError(hd, any(x).([]float64), func(v float64) float64 { return v }, math.Abs)
	case *hostData[complex64]:
		return sampledBackwardError(hd, any(x).([]complex64), func(v complex64) complex128 { return complex128(v) }, cmplx.Abs)
	case *hostData[complex128]:
		return sampledBackwardError(hd, any(x).([]complex128), func(v complex128) complex128 { return v }, cmplx.Abs)
	}
	return math.NaN()
}

// sampledBackwardError is backwardError with the elements widened to E
// (float64 or complex128) and measured by abs.
func sampledBackwardError[T tridiag.Scalar, E float64 | complex128](h *hostData[T], x []T, widen func(T) E, abs func(E) float64) float64 {
	cs := h.cs
	l := cs.TridiagLayout()
	step := max(1, cs.G/residSample)
	worst := 0.0
	at := func(v []T, i, g int) E {
		if v == nil {
			return 0
		}
		return widen(v[l.Index(i, g)])
	}
	for g := 0; g < cs.G; g += step {
		var num, den float64
		for i := 0; i < cs.N; i++ {
			var av, bv, cv E
			if cs.Constant {
				av, bv, cv = widen(h.ka), widen(h.kb), widen(h.kc)
				if i == 0 {
					av = 0
				}
				if i == cs.N-1 {
					cv = 0
				}
			} else {
				av, bv, cv = at(h.a, i, g), at(h.b, i, g), at(h.c, i, g)
			}
			xi := at(x, i, g)
			if m := abs(xi); math.IsNaN(m) || math.IsInf(m, 0) {
				return math.NaN()
			}
			di := at(h.d, i, g)
			r := bv * xi
			s := abs(bv*xi) + abs(di)
			if i > 0 {
				v := av * at(x, i-1, g)
				r += v
				s += abs(v)
			}
			if i < cs.N-1 {
				v := cv * at(x, i+1, g)
				r += v
				s += abs(v)
			}
			num = max(num, abs(r-di))
			den = max(den, s)
		}
		if den > 0 {
			worst = max(worst, num/den)
		} else if num > 0 {
			return math.Inf(1)
		}
	}
	return worst
}
