// Package tri holds what every tridiagonal algorithm package shares: the
// element-type constraint, the breakdown error, the sequential
// reference solvers (Thomas, and Gaussian elimination with partial pivoting
// in the manner of LAPACK's gtsv), and the factorizations that are stored
// and solved many times (Thomas's LU, gttrf/gttrs, pttrf/pttrs).
//
// Every product is converted to T explicitly (T(a*b)) so that Go never
// fuses a multiply and an add (it may on arm64 or with GOAMD64=v3): the GPU
// kernels are built with -fmad=false and must match these results bit for
// bit.
//
// A system of n rows is given by four slices of length n: a (sub-diagonal,
// a[0] unused), b (diagonal), c (super-diagonal, c[n-1] unused) and d (the
// right-hand side). Row i reads a[i]·x[i-1] + b[i]·x[i] + c[i]·x[i+1] = d[i].
package tri

import (
	"errors"
	"fmt"
	"math"
)

// Float is the element type of every solver: float32 or float64.
type Float interface {
	float32 | float64
}

// Scalar is the element type of the workspaces that real and complex
// solvers share: Float or Complex.
type Scalar interface {
	float32 | float64 | complex64 | complex128
}

// ErrZeroPivot is wrapped by a PivotError: an algorithm without pivoting met
// a zero (or non-finite) divisor, so it cannot go on.
var ErrZeroPivot = errors.New("zero pivot")

// ErrSingular is wrapped by a PivotError from a pivoting solver: the matrix
// is singular to working precision (a whole column was zero).
var ErrSingular = errors.New("singular matrix")

// ErrPivotGrowth is wrapped by a PivotError from ThomasBounded: at that
// row the elimination's fill |a[i]·c[i−1]/u[i−1]| exceeded PivotGrowthBound
// times |b[i]|, so Thomas is not known to be backward stable on the
// system.
var ErrPivotGrowth = errors.New("pivot growth")

// PivotGrowthBound is τ of ThomasBounded's test |a[i]·c[i−1]/u[i−1]| ≤
// τ·|b[i]|. Diagonally dominant (by rows or columns) and symmetric
// positive definite matrices pass it with τ = 1 in exact arithmetic; τ = 2
// leaves room for rounding on weakly dominant rows (the Poisson matrix,
// gallery('dorr')) and keeps |L|·|U| ≤ (1+2τ)·|A| = 5·|A|.
const PivotGrowthBound = 2

// PivotError reports the row at which an elimination broke down.
type PivotError struct {
	Row int   // row (0-based) whose pivot was zero or not finite
	Err error // ErrZeroPivot or ErrSingular
}

func (e *PivotError) Error() string { return fmt.Sprintf("%v at row %d", e.Err, e.Row) }

// Unwrap returns the sentinel error.
func (e *PivotError) Unwrap() error { return e.Err }

// BadDivisor reports whether v cannot be divided by: zero, NaN or ±Inf.
func BadDivisor[T Float](v T) bool {
	f := float64(v)
	return f == 0 || math.IsNaN(f) || math.IsInf(f, 0)
}

// Thomas solves one system with the Thomas algorithm (Gaussian elimination
// without pivoting, forward sweep then back substitution). work must have
// length ≥ n; x may alias d. It fails with a PivotError wrapping
// ErrZeroPivot at the first zero or non-finite pivot.
func Thomas[T Float](a, b, c, d, x, work []T) error { return thomas(a, b, c, d, x, work, false) }

// ThomasBounded is Thomas with a test, made in the same sweep, that
// proves the elimination backward stable: with u[i] the pivots and
// l[i] = a[i]/u[i−1] the multipliers, the fill of row i is
// t[i] = |l[i]·c[i−1]| = |a[i]·c[i−1]/u[i−1]|, and every row must have
// t[i] ≤ PivotGrowthBound·|b[i]|. The factors of Thomas satisfy
// |L|·|U| = |A| except on the diagonal, where (|L|·|U|)[i][i] =
// t[i] + |u[i]| ≤ |b[i]| + 2·t[i]; so the test gives |L|·|U| ≤
// (1+2τ)·|A| entry by entry, and with it the componentwise backward error
// bound |ΔA| ≤ (1+2τ)·γ(u)·|A| of LU without pivoting (Higham, Accuracy
// and Stability of Numerical Algorithms, 2nd ed., §9.5: (A+ΔA)x̂ = d with
// |ΔA| ≤ γ(u)·|L̂|·|Û| for a tridiagonal A). The test is invariant under
// row and column scaling, as Thomas is, and diagonally dominant (by rows:
// t[i] ≤ |a[i]| ≤ |b[i]|; by columns: t[i] ≤ |c[i−1]| ≤ |b[i]|) and
// symmetric positive definite (0 < t[i] < b[i]) matrices pass it.
//
// It returns a PivotError wrapping ErrPivotGrowth at the first row that
// fails the test, or ErrZeroPivot at a zero or non-finite pivot, and then
// x holds no solution; otherwise x is bit for bit what Thomas returns.
// work must have length ≥ n; x may alias d only where the caller need not
// solve again after a failure.
func ThomasBounded[T Float](a, b, c, d, x, work []T) error { return thomas(a, b, c, d, x, work, true) }

// thomas is Thomas, with ThomasBounded's test where bounded. The flag is a
// branch the processor predicts: Thomas takes the time it took as a loop
// of its own (go test ./tridiag -run '^$' -bench CPUAutoDominant/N=256/never:
// medians within 0.5% on a 2-core VM).
func thomas[T Float](a, b, c, d, x, work []T, bounded bool) error {
	n := len(b)
	if n == 0 {
		return nil
	}
	cp := work[:n]
	piv := b[0]
	if BadDivisor(piv) {
		return &PivotError{Row: 0, Err: ErrZeroPivot}
	}
	cp[0] = c[0] / piv
	x[0] = d[0] / piv
	for i := 1; i < n; i++ {
		f := T(a[i] * cp[i-1])
		// math.Abs clears the sign bit without a branch (abs branches,
		// and the signs of f are random); float64 holds T exactly.
		if bounded && !(math.Abs(float64(f)) <= PivotGrowthBound*math.Abs(float64(b[i]))) {
			return &PivotError{Row: i, Err: ErrPivotGrowth}
		}
		piv = b[i] - f
		if BadDivisor(piv) {
			return &PivotError{Row: i, Err: ErrZeroPivot}
		}
		if i < n-1 {
			cp[i] = c[i] / piv
		}
		x[i] = (d[i] - T(a[i]*x[i-1])) / piv
	}
	for i := n - 2; i >= 0; i-- {
		x[i] -= T(cp[i] * x[i+1])
	}
	return nil
}

// PivotWork is the workspace of GTSV (GTSVC for complex T) for systems of up to n rows.
type PivotWork[T Scalar] struct {
	dl, dd, du, du2 []T
}

// NewPivotWork returns a workspace for GTSV for systems of n rows.
func NewPivotWork[T Scalar](n int) *PivotWork[T] {
	buf := make([]T, 4*n)
	return &PivotWork[T]{dl: buf[:n], dd: buf[n : 2*n], du: buf[2*n : 3*n], du2: buf[3*n:]}
}

// GTSV solves one system by Gaussian elimination with partial pivoting
// (row interchanges), as LAPACK's gtsv does: at step i the row with the
// larger |entry| in column i becomes the pivot row, which may create fill in
// a second super-diagonal. The inputs are not modified; x may alias d. It
// fails with a PivotError wrapping ErrSingular when a pivot is exactly zero.
func GTSV[T Float](a, b, c, d, x []T, w *PivotWork[T]) error {
	n := len(b)
	if n == 0 {
		return nil
	}
	// Work on copies: dl[i] is the sub-diagonal entry of row i+1 (a[i+1]).
	dl, dd, du, du2 := w.dl[:n], w.dd[:n], w.du[:n], w.du2[:n]
	copy(dd, b)
	for i := 0; i < n-1; i++ {
		dl[i] = a[i+1]
		du[i] = c[i]
		du2[i] = 0
	}
	du2[n-1], du[n-1], dl[n-1] = 0, 0, 0
	if &x[0] != &d[0] {
		copy(x, d)
	}
	for i := 0; i < n-1; i++ {
		if abs(dd[i]) >= abs(dl[i]) {
			// No interchange.
			if dd[i] == 0 {
				return &PivotError{Row: i, Err: ErrSingular}
			}
			f := dl[i] / dd[i]
			dd[i+1] -= T(f * du[i])
			x[i+1] -= T(f * x[i])
			dl[i] = 0 // multiplier not kept: single right-hand side
		} else {
			// Interchange rows i and i+1.
			f := dd[i] / dl[i]
			dd[i] = dl[i]
			tmp := dd[i+1]
			dd[i+1] = du[i] - T(f*tmp)
			if i < n-2 {
				du2[i] = du[i+1]
				du[i+1] = -f * du2[i]
			}
			du[i] = tmp
			x[i], x[i+1] = x[i+1], x[i]-T(f*x[i+1])
		}
	}
	if dd[n-1] == 0 {
		return &PivotError{Row: n - 1, Err: ErrSingular}
	}
	// Back substitution with the upper factor (diagonal dd, du, du2).
	x[n-1] /= dd[n-1]
	if n > 1 {
		x[n-2] = (x[n-2] - T(du[n-2]*x[n-1])) / dd[n-2]
	}
	for i := n - 3; i >= 0; i-- {
		x[i] = (x[i] - T(du[i]*x[i+1]) - T(du2[i]*x[i+2])) / dd[i]
	}
	return nil
}

func abs[T Float](v T) T {
	if v < 0 {
		return -v
	}
	return v
}
