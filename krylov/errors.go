package krylov

import "errors"

var (
	// ErrBreakdown reports a breakdown of the recurrences: for BiCGStab(2)
	// and BiCGStab ρ = (r, r̃₀) or σ = (v, r̃₀) vanishing (Lanczos
	// breakdown), ω ≈ 0 or a singular 2×2 minimal-residual system; for CG
	// (p, A·p) ≤ 0 (A not positive definite) or (r, M⁻¹r) ≤ 0 (M not
	// positive definite). The returned error wraps it together with the
	// step at which it happened and the reason.
	ErrBreakdown = errors.New("krylov: breakdown")

	// ErrNotConverged reports that the iteration limit was reached before
	// the stopping test was met. The Result that comes with it is complete
	// (Converged is false, Residual is the true relative residual).
	ErrNotConverged = errors.New("krylov: not converged")

	// ErrStagnation reports that the true residual ‖b − A·x‖ stopped
	// decreasing while the recursively updated one kept meeting the
	// tolerance: the attainable accuracy of the method, the operator or the
	// preconditioner lies above Options.Tol. The Result that comes with it
	// is complete (Converged is false, Residual is the true relative
	// residual).
	ErrStagnation = errors.New("krylov: stagnation")

	// ErrNonFinite reports a NaN or an infinity in the right-hand side, in
	// an inner product or in a recurrence coefficient, usually from an
	// operator or preconditioner that produced one.
	ErrNonFinite = errors.New("krylov: non-finite value")

	// ErrDimension reports a vector whose length does not match the space.
	ErrDimension = errors.New("krylov: vector length mismatch")

	// ErrInvalidOption reports an Options field out of range, or a device
	// argument of NewSpace or NewCSROperator that cannot be used: a device
	// with no Krylov backend, or a vector type the device does not take.
	ErrInvalidOption = errors.New("krylov: invalid option")
)
