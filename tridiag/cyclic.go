package tridiag

import (
	"fmt"
)

// solveCyclic solves one periodic system by the Sherman–Morrison formula.
// The corners are a[0] = A[0][N−1] = α and c[N−1] = A[N−1][0] = β. With
// γ = −b[0] (or −1 when b[0] = 0), A = T + u·vᵀ where T is the
// non-periodic matrix with b[0] − γ and b[N−1] − (α/γ)·β on its ends
// (α/γ first: α·β overflows or underflows where the corners and b[0] are
// huge or tiny together, as in a periodic spline on knots 1e160 apart),
// u = (γ, 0, …, 0, β) and v = (1, 0, …, 0, α/γ). Solving T·y = d and
// T·z = u gives x = y − z·(v·y)/(1 + v·z).
//
// a, b, c and d are the worker's own copies (solveSystem gathered them),
// so they may be changed here. For LDLT, a holds c shifted (symmetrize):
// α = β, and T stays symmetric.
func (s *cpuSolver[T]) solveCyclic(w *cpuWorker[T], a, b, c, d, x []T) error {
	n := len(b)
	switch n {
	case 1:
		// Both corners sit on the diagonal.
		p := a[0] + b[0] + c[0]
		if s.spec.Algorithm == LDLT && !(p > 0 && finite(p)) {
			return &PivotError{Row: 0, Err: ErrNotPositiveDefinite}
		}
		if p == 0 {
			return &PivotError{Row: 0, Err: ErrSingular}
		}
		x[0] = d[0] / p
		return nil
	case 2:
		// The corners add to the off-diagonals.
		c[0] += a[0]
		a[1] += c[1]
		a[0], c[1] = 0, 0
		return s.solveOne(w, a, b, c, d, x)
	}
	// None of u, y, z aliases another, so Auto needs no scratch copy.
	return shermanMorrison(a, b, c, d, x, w.u, w.y, w.z, func(rhs, sol []T) error {
		return s.solveOne(w, a, b, c, rhs, sol)
	})
}

// shermanMorrison solves the periodic system (a, b, c) of n ≥ 3 rows (the
// worker's copies, changed here) for d into x, as solveCyclic says:
// solve solves T for a right-hand side; u, y and z are n elements of
// scratch that alias nothing else.
func shermanMorrison[T Scalar](a, b, c, d, x, u, y, z []T, solve func(rhs, sol []T) error) error {
	n := len(b)
	alpha, beta, gamma := splitCorners(a, b, c)
	clear(u)
	u[0], u[n-1] = gamma, beta
	if err := solve(d, y); err != nil {
		return err
	}
	if err := solve(u, z); err != nil {
		return err
	}
	ag := alpha / gamma
	vy := y[0] + T(ag*y[n-1])
	den := 1 + z[0] + T(ag*z[n-1])
	if den == 0 || !finiteScalar(den) {
		return fmt.Errorf("%w: Sherman–Morrison denominator is %v", ErrSingular, den)
	}
	f := vy / den
	for i := range x {
		x[i] = y[i] - T(f*z[i])
	}
	return nil
}

// splitCorners takes the corners α = a[0] and β = c[N−1] (N ≥ 3) out of
// a periodic system for Sherman–Morrison, leaving in a, b, c the
// non-periodic matrix T of solveCyclic: it clears the corners and
// subtracts γ from b[0] and (α/γ)·β from b[N−1], and returns α, β, γ.
func splitCorners[T Scalar](a, b, c []T) (alpha, beta, gamma T) {
	n := len(b)
	alpha, beta = a[0], c[n-1]
	gamma = -b[0]
	if gamma == 0 {
		gamma = -1
	}
	a[0], c[n-1] = 0, 0
	b[0] -= gamma
	b[n-1] -= T(alpha/gamma) * beta
	return alpha, beta, gamma
}
