package banded

import (
	"errors"
	"fmt"
)

// Sentinel errors wrapped by the factorizations. Test them with errors.Is;
// the row (and column) are in the *RowError that wraps them.
var (
	// ErrNonFinite: a NaN or ±Inf entry in the input, or a pivot that
	// became non-finite during elimination (overflow).
	ErrNonFinite = errors.New("banded: non-finite value")
	// ErrZeroPivot: a zero pivot met by a factorization without pivoting
	// whose boosting is off (FactorOptions.BoostTol < 0).
	ErrZeroPivot = errors.New("banded: zero pivot")
	// ErrSingular: LU with partial pivoting met a pivot column whose
	// candidates are all zero, so the matrix is exactly singular.
	ErrSingular = errors.New("banded: singular matrix")
	// ErrOption: an options field out of range (RefineOptions).
	ErrOption = errors.New("banded: invalid option")
)

// RowError says where a factorization failed: Row and Col are absolute
// indices in the matrix (for a pivot failure Col = Row, the pivot's
// position). Err is one of the sentinels above. Callers that own several
// systems (batches, SPIKE partitions) wrap a RowError with their system
// index; errors.As finds it through their wrapping.
type RowError struct {
	Row, Col int
	Err      error
}

// Error says what failed and where.
func (e *RowError) Error() string {
	return fmt.Sprintf("%v at row %d, column %d", e.Err, e.Row, e.Col)
}

// Unwrap returns the sentinel.
func (e *RowError) Unwrap() error { return e.Err }

// shapeErr builds an error wrapping ErrShape.
func shapeErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrShape}, args...)...)
}

// checkBand reports a Band whose fields are inconsistent.
func checkBand[T Scalar](m *Band[T]) error {
	if m == nil {
		return shapeErr("nil band matrix")
	}
	if err := CheckShape(m.N, m.K); err != nil {
		return err
	}
	if want := (2*m.K + 1) * m.N; len(m.Data) != want {
		return shapeErr("len(Data)=%d, want (2K+1)·N=%d for N=%d, K=%d", len(m.Data), want, m.N, m.K)
	}
	return nil
}

// checkRange reports a bad row range [r0, r1) of m.
func checkRange[T Float](m *Band[T], r0, r1 int) error {
	if err := checkBand(m); err != nil {
		return err
	}
	if r0 < 0 || r1 > m.N || r0 > r1 {
		return shapeErr("row range [%d, %d) outside [0, %d)", r0, r1, m.N)
	}
	return nil
}
