// Package condest estimates the norm of a matrix inverse from solves with
// the matrix and its transpose, as LAPACK's ?lacn2 does for ?gtcon and
// ?gbcon: the 1-norm power method of Hager (1984) with Higham's
// refinements ("FORTRAN codes for estimating the one-norm of a real or
// complex matrix", ACM TOMS 14, 1988, Algorithm 4.1). Every package that
// reports a condition number estimate (tridiag, banded) shares it.
package condest

import "math"

// maxIter bounds the power iterations, as ?lacn2's ITMAX.
const maxIter = 5

// InvNormInf estimates ‖A⁻¹‖∞ of an n×n matrix A from two solvers:
// solve overwrites v with A⁻¹·v and solveT overwrites v with A⁻ᵀ·v. It
// returns a lower bound that is almost always within a factor of 3 of the
// true value (Higham 1988), at the cost of at most 2·maxIter+1 solves.
//
// Since ‖A⁻¹‖∞ = ‖A⁻ᵀ‖₁, it runs the 1-norm estimator on B = A⁻ᵀ, whose
// products are B·v = solveT(v) and Bᵀ·v = solve(v). A non-finite
// intermediate result means a solve overflowed: the estimate is then +Inf.
func InvNormInf(n int, solve, solveT func(v []float64)) float64 {
	if n <= 0 {
		return 0
	}
	x := make([]float64, n)
	xi := make([]float64, n) // sign vector ξ
	for i := range x {
		x[i] = 1 / float64(n)
	}
	solveT(x) // x = B·x
	if n == 1 {
		return finiteOrInf(math.Abs(x[0]))
	}
	est := norm1(x)
	if !isFinite(est) {
		return math.Inf(1)
	}
	for i, v := range x {
		xi[i] = sign(v)
	}
	copy(x, xi)
	solve(x) // z = Bᵀ·ξ
	j := argmaxAbs(x)
	for iter := 2; ; iter++ {
		// x = e_j, y = B·e_j.
		clear(x)
		x[j] = 1
		solveT(x)
		old := est
		est = norm1(x)
		if !isFinite(est) {
			return math.Inf(1)
		}
		same := true
		for i, v := range x {
			if sign(v) != xi[i] {
				same = false
				break
			}
		}
		if same || est <= old {
			est = max(est, old)
			break
		}
		for i, v := range x {
			xi[i] = sign(v)
		}
		copy(x, xi)
		solve(x)
		jlast := j
		j = argmaxAbs(x)
		if math.Abs(x[jlast]) == math.Abs(x[j]) || iter >= maxIter {
			break
		}
	}
	// Higham's extra vector with alternating signs guards against the
	// cases where the power method is fooled.
	for i := range x {
		s := 1.0
		if i%2 == 1 {
			s = -1
		}
		x[i] = s * (1 + float64(i)/float64(n-1))
	}
	solveT(x)
	if alt := 2 * norm1(x) / float64(3*n); alt > est || !isFinite(alt) {
		est = alt
	}
	return finiteOrInf(est)
}

func sign(v float64) float64 {
	if v < 0 {
		return -1
	}
	return 1
}

func norm1(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += math.Abs(x)
	}
	return s
}

func argmaxAbs(v []float64) int {
	j, m := 0, -1.0
	for i, x := range v {
		if a := math.Abs(x); a > m {
			j, m = i, a
		}
	}
	return j
}

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func finiteOrInf(v float64) float64 {
	if !isFinite(v) {
		return math.Inf(1)
	}
	return v
}
