package banded

import (
	"math"
	"math/cmplx"
)

// Complex is the complex element type of General, Band, PivotLU and the
// batches that pivot: complex64 or complex128.
type Complex interface {
	complex64 | complex128
}

// Scalar is the element type of the matrices and of LU with partial
// pivoting: a Float or a Complex. The factorizations without pivoting,
// boosting, refinement and SPIKE take a Float only.
type Scalar interface {
	float32 | float64 | complex64 | complex128
}

// magnitude is |v| in float64: the absolute value of a real v, the modulus
// of a complex one. Norms, κ̂ and the backward error use it.
func magnitude[T Scalar](v T) float64 {
	switch z := any(v).(type) {
	case float32:
		return math.Abs(float64(z))
	case float64:
		return math.Abs(z)
	case complex64:
		return cmplx.Abs(complex128(z))
	case complex128:
		return cmplx.Abs(z)
	}
	return 0
}

// cabs1 is the size LU with partial pivoting compares to choose a pivot:
// |v| for a real v, |re(v)| + |im(v)| for a complex one, as LAPACK's
// zgbtrf (izamax) does (within a factor √2 of the modulus, no square
// root). NaN compares false, as in the real search.
func cabs1[T Scalar](v T) float64 {
	switch z := any(v).(type) {
	case float32:
		return math.Abs(float64(z))
	case float64:
		return math.Abs(z)
	case complex64:
		return math.Abs(float64(real(z))) + math.Abs(float64(imag(z)))
	case complex128:
		return math.Abs(real(z)) + math.Abs(imag(z))
	}
	return 0
}

// finiteScalar reports whether v (both parts of a complex v) is finite.
func finiteScalar[T Scalar](v T) bool {
	switch z := any(v).(type) {
	case float32:
		f := float64(z)
		return f-f == 0
	case float64:
		return z-z == 0
	case complex64:
		r, i := float64(real(z)), float64(imag(z))
		return r-r == 0 && i-i == 0
	case complex128:
		r, i := real(z), imag(z)
		return r-r == 0 && i-i == 0
	}
	return false
}

// conj is the complex conjugate of v (v itself when real).
func conj[T Scalar](v T) T {
	switch z := any(v).(type) {
	case complex64:
		return any(complex64(cmplx.Conj(complex128(z)))).(T)
	case complex128:
		return any(cmplx.Conj(z)).(T)
	}
	return v
}

// isComplex reports whether T is complex64 or complex128.
func isComplex[T Scalar]() bool {
	switch any(*new(T)).(type) {
	case complex64, complex128:
		return true
	}
	return false
}

// toC128 is v as a complex128 (imaginary part 0 for a real v).
func toC128[T Scalar](v T) complex128 {
	switch z := any(v).(type) {
	case float32:
		return complex(float64(z), 0)
	case float64:
		return complex(z, 0)
	case complex64:
		return complex128(z)
	case complex128:
		return z
	}
	return 0
}

// fromC128 is v rounded to T (the real part for a real T).
func fromC128[T Scalar](v complex128) T {
	var out any
	switch any(*new(T)).(type) {
	case float32:
		out = float32(real(v))
	case float64:
		out = real(v)
	case complex64:
		out = complex64(v)
	case complex128:
		out = v
	}
	return out.(T)
}
