package krylov

import (
	"context"
	"fmt"
	"math"
)

// Jacobi is the diagonal preconditioner M = diag(A) on the host: Apply
// sets zᵢ = rᵢ/aᵢᵢ. It is a Preconditioner[[]float64] for CG (where it is
// symmetric positive definite when A is), BiCGStab and BiCGStab2.
type Jacobi struct {
	inv []float64 // 1/aᵢᵢ
}

var _ Preconditioner[[]float64] = (*Jacobi)(nil)

// NewJacobi takes the diagonal of the square matrix a (a *sparse.CSR, for
// instance). A zero, missing or non-finite diagonal entry is an error
// wrapping ErrInvalidOption that names the row; inconsistent arrays wrap
// ErrDimension.
func NewJacobi(a CSRMatrix) (*Jacobi, error) {
	if err := checkCSRMatrix(a); err != nil {
		return nil, err
	}
	n, _, rowPtr, col, val := a.CSRArrays()
	inv := make([]float64, n)
	for i := range n {
		d := 0.0
		for p := rowPtr[i]; p < rowPtr[i+1]; p++ {
			if int(col[p]) == i {
				d = val[p]
			}
		}
		if d == 0 || math.IsNaN(d) || math.IsInf(d, 0) {
			return nil, fmt.Errorf("%w: Jacobi preconditioner of the %d×%d matrix: row %d has diagonal entry %g", ErrInvalidOption, n, n, i, d)
		}
		inv[i] = 1 / d
	}
	return &Jacobi{inv: inv}, nil
}

// Apply sets z = diag(A)⁻¹·r.
func (j *Jacobi) Apply(_ context.Context, r, z []float64) error {
	if len(r) != len(j.inv) || len(z) != len(j.inv) {
		return fmt.Errorf("%w: Jacobi preconditioner of order %d given vectors of length %d and %d", ErrDimension, len(j.inv), len(r), len(z))
	}
	inv := j.inv
	parallelFor(len(inv), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			z[i] = r[i] * inv[i]
		}
	})
	return nil
}
