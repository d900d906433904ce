package banded

import (
	"errors"
	"math"
	"math/cmplx"

	"github.com/bandsolve/bandsolve/internal/condest"
	"github.com/bandsolve/bandsolve/tridiag"
)

// BackwardError is the normwise backward error of x as a solution of
// A·x = b,
//
//	η = ‖b − A·x‖∞ / (‖A‖∞·‖x‖∞ + ‖b‖∞),
//
// computed in float64 (+Inf when x holds NaN or ±Inf, 0 when the residual
// is zero); for complex T in complex128, with the moduli of the entries
// in every norm. It panics with an error wrapping ErrShape on lengths
// other than N.
func BackwardError[T Scalar](A *Band[T], b, x []T) float64 {
	g := A.general()
	return BackwardErrorGeneral(&g, b, x)
}

// BackwardErrorGeneral is BackwardError for a General.
func BackwardErrorGeneral[T Scalar](A *General[T], b, x []T) float64 {
	if len(b) != A.N || len(x) != A.N {
		panic(shapeErr("BackwardError with len(b)=%d, len(x)=%d for N=%d", len(b), len(x), A.N))
	}
	switch A := any(A).(type) {
	case *General[float32]:
		return backwardError(A, any(b).([]float32), any(x).([]float32), make([]float64, A.N))
	case *General[float64]:
		return backwardError(A, any(b).([]float64), any(x).([]float64), make([]float64, A.N))
	}
	return backwardErrorComplex(A, b, x)
}

// backwardErrorComplex is BackwardErrorGeneral for a complex A, with the
// residual in complex128.
func backwardErrorComplex[T Scalar](A *General[T], b, x []T) float64 {
	n := A.N
	r := make([]complex128, n)
	var xn, bn float64
	for i := 0; i < n; i++ {
		if !finiteScalar(x[i]) {
			return math.Inf(1)
		}
		xn = max(xn, magnitude(x[i]))
		r[i] = toC128(b[i])
		bn = max(bn, cmplx.Abs(r[i]))
	}
	for s := 0; s <= A.KL+A.KU; s++ {
		d, j0, j1 := A.diagRange(s)
		col := A.Data[s*n:]
		for j := j0; j < j1; j++ {
			r[j+d] -= toC128(col[j]) * toC128(x[j])
		}
	}
	var rn float64
	for _, v := range r {
		rn = max(rn, cmplx.Abs(v))
	}
	return tridiag.NormwiseBackwardError(rn, A.NormInf(), xn, bn)
}

// backwardError is BackwardErrorGeneral with the residual b − A·x left in
// r.
func backwardError[T, U Float](A *General[T], b []T, x []U, r []float64) float64 {
	n := A.N
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
	// Diagonal by diagonal: storage row s holds a_ij with i − j = s − KU.
	for s := 0; s <= A.KL+A.KU; s++ {
		d, j0, j1 := A.diagRange(s)
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
func (f *PivotLU[T]) SolveTrans(b []T) { f.SolveTransMulti(b, 1) }

// SolveTransMulti is SolveTrans for nrhs right-hand sides stored
// column-major with leading dimension N in b, overwritten by the
// solutions. It panics with an error wrapping ErrShape unless
// len(b) = N·nrhs.
func (f *PivotLU[T]) SolveTransMulti(b []T, nrhs int) { f.solveTrans(b, nrhs, false) }

// SolveConjTrans solves Aᴴ·x = b in place with the factors (gbtrs with
// trans = 'C'), the conjugate transpose; for a real matrix it is
// SolveTrans. len(b) must be N; it panics with an error wrapping
// ErrShape otherwise.
func (f *PivotLU[T]) SolveConjTrans(b []T) { f.solveTrans(b, 1, isComplex[T]()) }

// SolveConjTransMulti is SolveConjTrans for nrhs right-hand sides stored
// column-major with leading dimension N in b, overwritten by the
// solutions. It panics with an error wrapping ErrShape unless
// len(b) = N·nrhs.
func (f *PivotLU[T]) SolveConjTransMulti(b []T, nrhs int) {
	f.solveTrans(b, nrhs, isComplex[T]())
}

// solveTrans solves Aᵀ·x = b, or Aᴴ·x = b when cj (the factors are read
// conjugated, never written), for nrhs right-hand sides.
func (f *PivotLU[T]) solveTrans(b []T, nrhs int, cj bool) {
	n, kl, ku := f.N, f.KL, f.KU
	if nrhs < 0 || len(b) != n*nrhs {
		panic(shapeErr("right-hand side of length %d, want N·nrhs = %d·%d", len(b), n, nrhs))
	}
	a, dc := f.Data, kl+ku
	at := func(i int) T { return a[i] }
	if cj {
		at = func(i int) T { return conj(a[i]) }
	}
	for c := 0; c < nrhs; c++ {
		x := b[c*n : (c+1)*n]
		for j := 0; j < n; j++ {
			s := x[j]
			for t := 1; t <= min(dc, j); t++ {
				s -= T(at((dc-t)*n+j) * x[j-t]) // u_{j−t, j}
			}
			x[j] = s / at(dc*n+j)
		}
		for j := n - 1; j >= 0; j-- {
			s := x[j]
			for t := 1; t <= min(kl, n-1-j); t++ {
				s -= T(at((dc+t)*n+j) * x[j+t]) // l_{j+t, j}
			}
			x[j] = s
			if p := f.Piv[j]; p != j {
				x[j], x[p] = x[p], x[j]
			}
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
//
// For a complex A it is zgbcon's estimate: LU with partial pivoting in
// complex128 and the complex Hager–Higham estimator on A⁻ᴴ (solves with A
// and its conjugate transpose), moduli in every norm.
func CondEst[T Scalar](A *Band[T]) (float64, error) {
	if err := checkBand(A); err != nil {
		return 0, err
	}
	g := A.general()
	return condEst(&g)
}

// CondEstGeneral is CondEst for a General: gbcon with its KL and KU
// (FactorPivotGeneral in float64, O(N·KL·(KL+KU))).
func CondEstGeneral[T Scalar](A *General[T]) (float64, error) {
	if err := checkGeneral(A); err != nil {
		return 0, err
	}
	return condEst(A)
}

// condEst is CondEstGeneral on a checked A.
func condEst[T Scalar](A *General[T]) (float64, error) {
	switch A := any(A).(type) {
	case *General[float32]:
		return condEstReal(A)
	case *General[float64]:
		return condEstReal(A)
	}
	m := &General[complex128]{N: A.N, KL: A.KL, KU: A.KU, Data: make([]complex128, len(A.Data))}
	for i, v := range A.Data {
		m.Data[i] = toC128(v)
	}
	var f PivotLU[complex128]
	if err := f.factorGeneral(m.N, m.KL, m.KU, m.Data); err != nil {
		return math.Inf(1), err
	}
	norm := m.NormInf()
	if norm == 0 {
		return math.Inf(1), &RowError{Row: 0, Col: 0, Err: ErrSingular}
	}
	return norm * condest.InvNormInfC(m.N, f.Solve, f.SolveConjTrans), nil
}

// condEstReal is condEst for a real A: LU and the estimator in float64.
func condEstReal[T Float](A *General[T]) (float64, error) {
	m, ok := any(A).(*General[float64])
	if !ok {
		m = ConvertGeneral[float64](A)
	}
	var f PivotLU[float64]
	if err := f.factorGeneral(m.N, m.KL, m.KU, m.Data); err != nil {
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
// A complex system is judged the same way, with the complex backward
// error and κ̂ (BackwardError, CondEst) and the epsilon of its parts.
func Check[T Scalar](A *Band[T], b, x []T, tol float64) (tridiag.Status, error) {
	if err := checkBand(A); err != nil {
		return tridiag.Status{}, err
	}
	g := A.general()
	return check(&g, b, x, tol)
}

// CheckGeneral is Check for a General (BackwardErrorGeneral and
// CondEstGeneral).
func CheckGeneral[T Scalar](A *General[T], b, x []T, tol float64) (tridiag.Status, error) {
	if err := checkGeneral(A); err != nil {
		return tridiag.Status{}, err
	}
	return check(A, b, x, tol)
}

// check is CheckGeneral on a checked A.
func check[T Scalar](A *General[T], b, x []T, tol float64) (tridiag.Status, error) {
	if len(b) != A.N || len(x) != A.N {
		return tridiag.Status{}, shapeErr("Check with len(b)=%d, len(x)=%d for N=%d", len(b), len(x), A.N)
	}
	if !(tol > 0) {
		tol = tridiag.DefaultTol[T]()
	}
	var s tridiag.Status
	s.BackwardError = BackwardErrorGeneral(A, b, x)
	cond, err := condEst(A)
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
