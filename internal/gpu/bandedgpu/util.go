//go:build cuda

package bandedgpu

import (
	"fmt"

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
