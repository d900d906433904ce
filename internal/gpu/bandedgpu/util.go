//go:build cuda

package bandedgpu

import (
	"fmt"
	"unsafe"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/tridiag"
)

// ElemSize is the size in bytes of an element of type T.
func ElemSize[T tridiag.Float]() int64 {
	var z T
	if _, ok := any(z).(float64); ok {
		return 8
	}
	return 4
}

// BoostTol resolves banded.FactorOptions.BoostTol as the kernels take it:
// 0 is the machine epsilon of T, a negative value (boosting off) is −1.
func BoostTol[T tridiag.Float](tol float64) float64 {
	switch {
	case tol == 0 && ElemSize[T]() == 8:
		return 0x1p-52
	case tol == 0:
		return 0x1p-23
	case tol < 0:
		return -1
	}
	return tol
}

// CheckBand reports a band buffer that cannot hold a matrix of order n and
// half-bandwidth k in tall-and-thin storage ((2K+1)·N elements): nil or
// freed, or shorter; exact also refuses a longer one. The error wraps
// banded.ErrShape.
func CheckBand[T tridiag.Float](band *cuda.Buffer[T], n, k int, exact bool) error {
	if band == nil || band.Ptr() == 0 {
		return fmt.Errorf("%w: nil or freed band buffer", banded.ErrShape)
	}
	need := (2*k + 1) * n
	switch {
	case exact && band.Len() != need:
		return fmt.Errorf("%w: band buffer of %d elements, N=%d K=%d needs (2K+1)·N=%d", banded.ErrShape, band.Len(), n, k, need)
	case band.Len() < need:
		return fmt.Errorf("%w: band buffer of %d elements, N=%d K=%d needs %d", banded.ErrShape, band.Len(), n, k, need)
	}
	return nil
}

// elemBytes is the size in bytes of an element of T (a complex element
// holds two parts).
func elemBytes[T banded.Scalar]() int64 {
	var z T
	return int64(unsafe.Sizeof(z))
}

// partF64 reports whether T's parts are float64 (float64, complex128):
// the kernels' f64 variants.
func partF64[T banded.Scalar]() bool {
	switch any(*new(T)).(type) {
	case float64, complex128:
		return true
	}
	return false
}

// isComplex reports whether T is complex64 or complex128.
func isComplex[T banded.Scalar]() bool {
	switch any(*new(T)).(type) {
	case complex64, complex128:
		return true
	}
	return false
}

// typeName is T's Go name.
func typeName[T banded.Scalar]() string { return fmt.Sprintf("%T", *new(T)) }

// boostTolOf is BoostTol for a real T; a complex plan pivots and does not
// boost (−1).
func boostTolOf[T banded.Scalar](tol float64) float64 {
	switch any(*new(T)).(type) {
	case float32:
		return BoostTol[float32](tol)
	case float64:
		return BoostTol[float64](tol)
	}
	return -1
}

// factorBoosts is banded.FactorLU of a real m (its boosted pivots); a
// complex m is never factored without pivoting (no boosts).
func factorBoosts[T banded.Scalar](m *banded.Band[T], opt banded.FactorOptions) (banded.Boosts, error) {
	switch m := any(m).(type) {
	case *banded.Band[float32]:
		return banded.FactorLU(m, opt)
	case *banded.Band[float64]:
		return banded.FactorLU(m, opt)
	}
	return banded.Boosts{}, nil
}
