package banded

import (
	"errors"
	"math"

	"github.com/bandsolve/bandsolve/internal/condest"
	"github.com/bandsolve/bandsolve/tridiag"
)

// BackwardError is the normwise backward error of x as a solution of
// A·x = b,
//
//	η = ‖b − A·x‖∞ / (‖A‖∞·‖x‖∞ + ‖b‖∞),
//
// computed in float64 (+Inf when x holds NaN or ±Inf, 0 when the residual
// is zero). It panics with an error wrapping ErrShape on lengths other
// than N.
func BackwardError[T Float](A *Band[T], b, x []T) float64 {
	if len(b) != A.N || len(x) != A.N {
		panic(shapeErr("BackwardError with len(b)=%d, len(x)=%d for N=%d", len(b), len(x), A.N))
	}
	r := make([]float64, A.N)
	return backwardError(A, b, x, r)
}

// backwardError is BackwardError with the residual b − A·x left in r.
func backwardError[T, U Float](A *Band[T], b []T, x []U, r []float64) float64 {
	n, k := A.N, A.K
	var xn, bn float64
	for i := 0; i < n; i++ {
		v := float64(x[i])
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return math.Inf(1)
		}
		xn = max(xn, math.Abs(v))
		r[i] = float64(b[i])
		bn = max(bn, math.Abs(r[i]))
	}
	// Diagonal by diagonal: storage column s holds a_ij with i − j = s − K.
	for s := 0; s <= 2*k; s++ {
		d := s - k
		j0, j1 := max(0, -d), min(n, n-d)
		col := A.Data[s*n:]
		for j := j0; j < j1; j++ {
			r[j+d] -= float64(col[j]) * float64(x[j])
		}
	}
	var rn float64
	for _, v := range r {
		rn = max(rn, math.Abs(v))
	}
	return tridiag.NormwiseBackwardError(rn, A.NormInf(), xn, bn)
}

// SolveTrans solves Aᵀ·x = b in place with the factors (gbtrs with
// trans = 'T'): Uᵀ forward, then the steps of L transposed and the
// interchanges, last step first. len(b) must be N; it panics with an
// error wrapping ErrShape otherwise.
func (f *PivotLU[T]) SolveTrans(b []T) {
	n, k := f.N, f.K
	if len(b) != n {
		panic(shapeErr("right-hand side of length %d, want N = %d", len(b), n))
	}
	a, dc := f.Data, 2*k
	for j := 0; j < n; j++ {
		s := b[j]
		for t := 1; t <= min(2*k, j); t++ {
			s -= T(a[(dc-t)*n+j] * b[j-t]) // u_{j−t, j}
		}
		b[j] = s / a[dc*n+j]
	}
	for j := n - 1; j >= 0; j-- {
		s := b[j]
		for t := 1; t <= min(k, n-1-j); t++ {
			s -= T(a[(dc+t)*n+j] * b[j+t]) // l_{j+t, j}
		}
		b[j] = s
		if p := f.Piv[j]; p != j {
			b[j], b[p] = b[p], b[j]
		}
	}
}

// CondEst returns κ̂∞, an estimate of the condition number
// ‖A‖∞·‖A⁻¹‖∞ of A, as LAPACK's gbcon computes it: the LU factorization
// with partial pivoting of A in float64 (FactorPivot, O(N·K²)) and the
// Hager–Higham 1-norm estimator on A⁻ᵀ (at most eleven solves with A and
// Aᵀ, O(N·K) each). The estimate is a lower bound, almost always within a
// factor of 3. A matrix that is exactly singular in float64 (an all-zero
// pivot column) gives +Inf and an error wrapping ErrSingular; a bad shape
// or a non-finite entry gives FactorPivot's error.
func CondEst[T Float](A *Band[T]) (float64, error) {
	var m *Band[float64]
	if a64, ok := any(A).(*Band[float64]); ok {
		m = a64
	} else {
		if err := checkBand(A); err != nil {
			return 0, err
		}
		m = Convert[float64](A)
	}
	f, err := FactorPivot(m)
	if err != nil {
		return math.Inf(1), err
	}
	norm := m.NormInf()
	if norm == 0 {
		return math.Inf(1), &RowError{Row: 0, Col: 0, Err: ErrSingular}
	}
	return norm * condest.InvNormInf(m.N, f.Solve, f.SolveTrans), nil
}

// Check measures x as a solution of A·x = b and judges it, like
// tridiag's Plan.Check: the normwise backward error (BackwardError), κ̂
// (CondEst) and the verdict flags for the tolerance tol (0:
// tridiag.DefaultTol[T]()) and the machine epsilon of T. A singular A
// gives Cond = +Inf with the Singular flag. A tol ≤ 0 means the default.
func Check[T Float](A *Band[T], b, x []T, tol float64) (tridiag.Status, error) {
	if err := checkBand(A); err != nil {
		return tridiag.Status{}, err
	}
	if len(b) != A.N || len(x) != A.N {
		return tridiag.Status{}, shapeErr("Check with len(b)=%d, len(x)=%d for N=%d", len(b), len(x), A.N)
	}
	if !(tol > 0) {
		tol = tridiag.DefaultTol[T]()
	}
	var s tridiag.Status
	s.BackwardError = BackwardError(A, b, x)
	cond, err := CondEst(A)
	switch {
	case err == nil:
	case errors.Is(err, ErrSingular):
		s.Flags |= tridiag.Singular
	default:
		return s, err
	}
	s.Cond = cond
	s.Judge(tol, tridiag.Epsilon[T]())
	return s, nil
}
