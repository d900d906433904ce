package tridiag

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

var (
	// ErrInaccurate reports a system whose computed solution x̂ has a
	// normwise backward error ‖d − A·x̂‖∞ / (‖A‖∞·‖x̂‖∞ + ‖d‖∞) above the
	// tolerance of the accuracy check (see Status).
	ErrInaccurate = errors.New("backward error above tolerance")
	// ErrIllConditioned reports a system whose estimated condition number
	// κ̂∞ makes the solution meaningless: κ̂·ε ≥ 1/2, ε the machine
	// epsilon of the solve's precision (+Inf for a matrix that is
	// singular to working precision).
	ErrIllConditioned = errors.New("ill-conditioned: κ̂·ε ≥ 1/2")
)

// Flags are the findings about one solved system, a bit set. The package
// may add bits (tiny pivots, pivot growth); String names the unknown ones
// by value.
type Flags uint32

const (
	// ZeroPivot: an algorithm without pivoting met a zero or non-finite
	// pivot (ErrZeroPivot), or LDLT a pivot that is not positive
	// (ErrNotPositiveDefinite).
	ZeroPivot Flags = 1 << iota
	// Singular: the matrix is singular to working precision: a pivoting
	// factorization met an all-zero pivot column (ErrSingular), in the
	// solver or in the condition estimate.
	Singular
	// NonFinite: the solution holds NaN or ±Inf.
	NonFinite
	// BackwardErrorTooLarge: the normwise backward error exceeds the
	// tolerance (ErrInaccurate).
	BackwardErrorTooLarge
	// IllConditioned: κ̂·ε ≥ 1/2 (ErrIllConditioned).
	IllConditioned
	// Boosted: a factorization without pivoting replaced a small pivot
	// by a larger one (diagonal boosting, package banded); informational,
	// the solution may still be accurate (see Status.BackwardError).
	Boosted
	// NotConverged: an iteration (refinement, BiCGStab(2)) stopped
	// before it reached its tolerance.
	NotConverged
)

// failMask are the flags that make a solution unusable.
const failMask = ZeroPivot | Singular | NonFinite | BackwardErrorTooLarge | IllConditioned | NotConverged

var flagNames = [...]string{"zero-pivot", "singular", "non-finite", "backward-error", "ill-conditioned", "boosted", "not-converged"}

// Failed reports whether any flag says the solution is unusable: every
// flag but Boosted.
func (f Flags) Failed() bool { return f&failMask != 0 }

// String lists the flags by name, "|"-separated ("ok" for none).
func (f Flags) String() string {
	if f == 0 {
		return "ok"
	}
	var parts []string
	for i, n := range flagNames {
		if f&(1<<i) != 0 {
			parts = append(parts, n)
		}
	}
	if rest := f &^ (1<<len(flagNames) - 1); rest != 0 {
		parts = append(parts, fmt.Sprintf("%#x", uint32(rest)))
	}
	return strings.Join(parts, "|")
}

// Status is what the accuracy check measured on one system.
type Status struct {
	// Flags are the findings; Flags.Failed() is the verdict.
	Flags Flags
	// BackwardError is the normwise backward error
	//
	//	η = ‖d − A·x̂‖∞ / (‖A‖∞·‖x̂‖∞ + ‖d‖∞),
	//
	// computed in float64: the smallest relative perturbation of A and d
	// of which x̂ is the exact solution (Rigal and Gaches). +Inf when x̂ is
	// not finite; 0 when the check did not run.
	BackwardError float64
	// Cond is κ̂∞, an estimate (a lower bound, almost always within a
	// factor of 3) of ‖A‖∞·‖A⁻¹‖∞; +Inf when A is singular to working
	// precision; 0 when not estimated.
	Cond float64
}

// Failed reports whether the system fails the check.
func (s Status) Failed() bool { return s.Flags.Failed() }

// String prints the flags and the measures.
func (s Status) String() string {
	return fmt.Sprintf("%v, backward error %.2e, κ̂ %.2e", s.Flags, s.BackwardError, s.Cond)
}

// Err returns the error that describes a failed check (nil when the
// status passes): it wraps ErrIllConditioned, ErrInaccurate or both, with
// the measures and the tolerance. The caller adds the system index.
func (s Status) Err(tol float64) error {
	var cond, acc error
	if s.Flags&(IllConditioned|Singular) != 0 {
		cond = fmt.Errorf("%w (κ̂ = %.2e)", ErrIllConditioned, s.Cond)
	}
	if s.Flags&(BackwardErrorTooLarge|NonFinite|NotConverged) != 0 {
		acc = fmt.Errorf("%w (%.2e > %.2e)", ErrInaccurate, s.BackwardError, tol)
	}
	switch {
	case cond != nil && acc != nil:
		return fmt.Errorf("%w; %w", cond, acc)
	case cond != nil:
		return cond
	}
	return acc
}

// Epsilon is the machine epsilon of T: 2⁻²³ for float32 and complex64,
// 2⁻⁵² for float64 and complex128.
func Epsilon[T Scalar]() float64 {
	switch any(T(0)).(type) {
	case float32, complex64:
		return 0x1p-23
	}
	return 0x1p-52
}

// DefaultTol is the default backward error tolerance of the accuracy
// check for precision T: 10³·Epsilon[T]() (1.2e-4 for float32, 2.2e-13
// for float64; the same for complex64 and complex128).
func DefaultTol[T Scalar]() float64 { return 1e3 * Epsilon[T]() }

// NormwiseBackwardError is ‖d − A·x‖∞ / (‖A‖∞·‖x‖∞ + ‖d‖∞) from the four
// norms: 0 when the residual norm rn is 0, NaN when it is NaN (a caller
// whose x holds NaN or ±Inf reports +Inf instead).
func NormwiseBackwardError(rn, an, xn, dn float64) float64 {
	switch {
	case math.IsNaN(rn):
		return math.NaN()
	case rn == 0:
		return 0
	}
	return rn / (an*xn + dn)
}

// Judge sets the verdict flags of s from its measures: BackwardErrorTooLarge
// when BackwardError > tol (or is NaN), NonFinite when it is +Inf or NaN,
// IllConditioned when Cond·eps ≥ 1/2. Other flags are kept.
func (s *Status) Judge(tol, eps float64) {
	if !(s.BackwardError <= tol) {
		s.Flags |= BackwardErrorTooLarge
	}
	if math.IsInf(s.BackwardError, 0) || math.IsNaN(s.BackwardError) {
		s.Flags |= NonFinite
	}
	if !(s.Cond*eps < 0.5) {
		s.Flags |= IllConditioned
	}
}

// FlagsOf maps a solver's error for one system to flags: ZeroPivot for
// ErrZeroPivot and ErrNotPositiveDefinite, Singular for ErrSingular,
// NonFinite for ErrNonFiniteResult (a GPU's ErrBreakdown gives
// ZeroPivot|NonFinite).
func FlagsOf(err error) Flags {
	var f Flags
	if errors.Is(err, ErrZeroPivot) || errors.Is(err, ErrNotPositiveDefinite) {
		f |= ZeroPivot
	}
	if errors.Is(err, ErrSingular) {
		f |= Singular
	}
	if errors.Is(err, ErrNonFiniteResult) {
		f |= NonFinite
	}
	return f
}
