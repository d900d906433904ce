package krylov

import (
	"context"
	"fmt"
	"math"
)

// Defaults used where Options leaves a field zero.
const (
	DefaultTol     = 1e-10
	DefaultMaxIter = 1000
)

// breakdownTol is the relative size below which ρ, σ, ω and the
// determinant of the 2×2 minimal-residual system count as zero:
//
//	|ρ| ≤ breakdownTol·‖r̂ⱼ‖·‖r̃₀‖        (ρ = (r̂ⱼ, r̃₀))
//	|σ| ≤ breakdownTol·‖ûⱼ₊₁‖·‖r̃₀‖      (σ = (ûⱼ₊₁, r̃₀))
//	|ω|·‖r̂₂‖ ≤ breakdownTol·‖r̂₀‖        (ω = γ₂, before the MR update)
//	1 − cos²∠(r̂₁, r̂₂) ≤ breakdownTol    (the 2×2 MR system, scaled)
//
// that is, a cosine (or for the MR system a squared sine) at the level of
// the rounding error of the inner products.
const breakdownTol = 1e-14

// reliableDrop triggers a residual replacement at a cycle boundary once
// ‖r̂₀‖ has dropped below reliableDrop times its largest value since the
// previous replacement (reliable updating, Sleijpen and van der Vorst
// 1996).
const reliableDrop = 1e-2

// restartGap is the relative distance ‖M⁻¹(b − A·x) − r̂₀‖/‖r̂₀‖ between
// the recomputed and the recursively updated preconditioned residual above
// which a residual replacement also restarts the recurrences (see
// BiCGStab2). Smaller values (1e-2) restart needlessly when the tolerance
// is near the attainable accuracy, where the gap is rounding noise in
// b − A·x.
const restartGap = 1

// Options controls BiCGStab2. The zero value gives the defaults.
type Options struct {
	// Tol is the target relative residual ‖b − A·x‖₂/‖b‖₂ (true,
	// unpreconditioned). 0 means DefaultTol; negative values are invalid.
	Tol float64
	// MaxIter bounds the number of BiCG steps (two per BiCGStab(2) cycle;
	// see Result.Iterations). 0 means DefaultMaxIter; negative values are
	// invalid.
	MaxIter int
	// History asks for Result.History.
	History bool
	// Stagnation > 0 stops CG and BiCGStab with ErrStagnation when the
	// residual estimate has not reached a new minimum (by a factor 0.999)
	// for Stagnation consecutive iterations. 0 disables the test (the
	// check of repeated failed convergence checks stays); negative values
	// are invalid. BiCGStab2 ignores it.
	Stagnation int
}

// Result describes a BiCGStab2 solve.
type Result struct {
	// Iterations is the number of BiCG steps done. One BiCGStab(2) cycle
	// is two steps followed by the minimal-residual (MR) update, and each
	// step applies M⁻¹A twice, so a full cycle costs four operator and four
	// preconditioner applications and counts 2. The count matches the
	// iteration count of BiCGStab(1) in cost and is odd when the solve
	// stops after the first step of a cycle. (The SPIKE::GPU code of Li et
	// al. reports one iteration per whole cycle, in quarters: halve this
	// count to compare with its figures.)
	Iterations int
	// Residual is the true relative residual ‖b − A·x‖₂/‖b‖₂ of the
	// returned x, recomputed from b − A·x at the end (0 when b = 0). When
	// the solve stops on cancellation, on a non-finite value or on an error
	// from the operator, preconditioner or space, it is not recomputed and
	// holds the latest estimate instead (History's last entry).
	Residual float64
	// History, when Options.History is set, has Iterations+1 entries:
	// History[k] is the relative residual after k steps, the true value
	// ‖b − A·x‖₂/‖b‖₂ where the solver evaluated it (k = 0, convergence
	// checks, residual replacements, the last entry) and otherwise the
	// estimate c·‖r̂₀‖₂/‖b‖₂ described at BiCGStab2.
	History []float64
	// Converged reports that the true relative residual met Options.Tol.
	Converged bool
	// OperatorApplies and PreconditionerApplies count the calls of A.Apply
	// and M.Apply, the extra ones of the convergence checks included.
	OperatorApplies, PreconditionerApplies int
}

// BiCGStab2 solves A·x = b by BiCGStab(ℓ) with ℓ = 2 (Sleijpen and
// Fokkema 1993), left-preconditioned by M: it iterates on
// M⁻¹A·x = M⁻¹b. x holds the initial guess on entry and the solution on
// return (the latest iterate on error); b is not modified. b and x must be
// distinct vectors of sp. A nil M means no preconditioning (M = I, without
// the copies of IdentityPreconditioner). The solve allocates eight work
// vectors from sp and frees them before it returns.
//
// # Algorithm
//
// With Ã = M⁻¹A, r̂₀ = M⁻¹(b − A·x₀), shadow residual r̃₀ = r̂₀, û₀ = 0,
// ρ₀ = 1, α = 0, ω = 1, each cycle does
//
//	ρ₀ ← −ω·ρ₀
//	BiCG part, for j = 0, 1:
//	    ρ₁ ← (r̂ⱼ, r̃₀);  β ← α·ρ₁/ρ₀;  ρ₀ ← ρ₁
//	    ûᵢ ← r̂ᵢ − β·ûᵢ           (i = 0…j)
//	    ûⱼ₊₁ ← Ã·ûⱼ
//	    σ ← (ûⱼ₊₁, r̃₀);  α ← ρ₀/σ
//	    r̂ᵢ ← r̂ᵢ − α·ûᵢ₊₁         (i = 0…j)
//	    r̂ⱼ₊₁ ← Ã·r̂ⱼ
//	    x ← x + α·û₀
//	MR part: (γ₁, γ₂) minimises ‖r̂₀ − γ₁r̂₁ − γ₂r̂₂‖₂
//	    x  ← x  + γ₁·r̂₀ + γ₂·r̂₁
//	    r̂₀ ← r̂₀ − γ₁·r̂₁ − γ₂·r̂₂
//	    û₀ ← û₀ − γ₁·û₁ − γ₂·û₂
//	    ω  ← γ₂
//
// After the BiCG part r̂ᵢ = Ãⁱr̂₀ and ûᵢ = Ãⁱû₀ (i = 0, 1, 2), so the MR part
// applies the same degree-2 polynomial 1 − γ₁t − γ₂t² to the residual and
// the search direction. This is Sleijpen and Fokkema's BiCGstab(ℓ) for
// ℓ = 2, except that the 2×2 least-squares problem is solved from its Gram
// matrix (normal equations, with r̂₁ and r̂₂ scaled to unit length) instead
// of by modified Gram–Schmidt: equal in exact arithmetic, adequate for
// ℓ = 2, and all six inner products come from one Space.Dots call. A cycle
// makes five Dots calls (plus two for a residual replacement).
//
// # Stopping test
//
// The iteration updates the preconditioned residual r̂₀ ≈ M⁻¹(b − A·x), but
// the solve stops on the true one. It converges when, at the start of a step
// (or on a breakdown),
//
//	‖b − A·x‖₂ ≤ Tol·‖b‖₂
//
// with b − A·x recomputed explicitly from the current x in float64 (one
// extra operator application). To avoid paying that every step, the solver
// watches the estimate est = c·‖r̂₀‖₂/‖b‖₂ at the start of every step (‖r̂₀‖
// comes with the inner products the step needs anyway), where c is the
// ratio ‖b − A·x‖/‖r̂₀‖ at the latest explicit evaluation (initially at x₀),
// and evaluates the true residual only when est ≤ Tol, when MaxIter steps
// are done, on a breakdown, or for a residual replacement. A failed check
// updates c; so est is a heuristic trigger, never the criterion.
//
// # Residual replacement
//
// Rounding makes the recursive r̂₀ drift from M⁻¹(b − A·x), by the unit
// roundoff of the preconditioner (about 1e-7 for a float32 one) times the
// largest residual met since r̂₀ was last recomputed. So at a cycle boundary
// where ‖r̂₀‖ has dropped a hundredfold below its largest value since the
// last replacement, or where a convergence check failed, the solver sets
// r̂₀ = M⁻¹(b − A·x) (reliable updating, Sleijpen and van der Vorst 1996;
// one operator and one preconditioner application), and if the two differ
// by more than ‖r̂₀‖ itself it also restarts the recurrences (û₀ = 0,
// r̃₀ = r̂₀, ρ₀ = 1, α = 0, ω = 1). This is what lets a float32
// preconditioner (MixedPrecision) reach float64 accuracy; in float64 it
// costs a few extra applications per solve.
//
// # Errors
//
//   - b = 0: x is set to 0 and the solve converges with 0 iterations.
//   - MaxIter steps without convergence: the Result (Converged false,
//     Residual true) and an error wrapping ErrNotConverged.
//   - A breakdown (see ErrBreakdown) whose true residual does not already
//     meet Tol: the Result and an error wrapping ErrBreakdown naming the
//     step.
//   - NaN or ±Inf in b, an inner product or a coefficient: an error
//     wrapping ErrNonFinite.
//   - ctx is checked before every step; when it is done the error wraps
//     ctx.Err().
//   - Errors from A, M and sp are returned wrapped.
func BiCGStab2[V any](ctx context.Context, sp Space[V], A Operator[V], M Preconditioner[V], b, x V, opt Options) (Result, error) {
	tol, maxIter, err := opt.resolve()
	if err != nil {
		return Result{}, err
	}
	s := &solver[V]{ctx: ctx, sp: sp, A: A, M: M, b: b, x: x, tol: tol, history: opt.History}
	return s.solve(maxIter)
}

// resolve returns the tolerance and iteration cap of opt, the defaults
// where it leaves them zero, or an error wrapping ErrInvalidOption.
func (opt Options) resolve() (tol float64, maxIter int, err error) {
	tol, maxIter = opt.Tol, opt.MaxIter
	if tol == 0 {
		tol = DefaultTol
	}
	if maxIter == 0 {
		maxIter = DefaultMaxIter
	}
	if !(tol > 0) || math.IsInf(tol, 0) {
		return 0, 0, fmt.Errorf("%w: Tol = %g", ErrInvalidOption, opt.Tol)
	}
	if maxIter < 0 {
		return 0, 0, fmt.Errorf("%w: MaxIter = %d", ErrInvalidOption, opt.MaxIter)
	}
	if opt.Stagnation < 0 {
		return 0, 0, fmt.Errorf("%w: Stagnation = %d", ErrInvalidOption, opt.Stagnation)
	}
	return tol, maxIter, nil
}

// solver holds one solve of BiCGStab2, BiCGStab or CG.
type solver[V any] struct {
	ctx     context.Context
	sp      Space[V]
	A       Operator[V]
	M       Preconditioner[V]
	b, x    V
	tol     float64
	history bool

	t    V       // scratch: A·v before M⁻¹, and b − A·x
	nb   float64 // ‖b‖₂
	res  Result
	last float64 // latest residual estimate
}

// record stores the relative residual after k steps in the history: a new
// entry, or a true value (exact) replacing an estimate.
func (s *solver[V]) record(k int, v float64, exact bool) {
	s.last = v
	if !s.history {
		return
	}
	switch {
	case k == len(s.res.History):
		s.res.History = append(s.res.History, v)
	case exact && k == len(s.res.History)-1:
		s.res.History[k] = v
	}
}

// precOp sets out = M⁻¹·A·v.
func (s *solver[V]) precOp(v, out V) error {
	if s.M == nil {
		s.res.OperatorApplies++
		if err := s.A.Apply(s.ctx, v, out); err != nil {
			return fmt.Errorf("krylov: operator: %w", err)
		}
		return nil
	}
	s.res.OperatorApplies++
	if err := s.A.Apply(s.ctx, v, s.t); err != nil {
		return fmt.Errorf("krylov: operator: %w", err)
	}
	return s.prec(s.t, out)
}

// prec sets z = M⁻¹·r (a copy when M is nil).
func (s *solver[V]) prec(r, z V) error {
	if s.M == nil {
		if err := s.sp.Copy(z, r); err != nil {
			return fmt.Errorf("krylov: space: %w", err)
		}
		return nil
	}
	s.res.PreconditionerApplies++
	if err := s.M.Apply(s.ctx, r, z); err != nil {
		return fmt.Errorf("krylov: preconditioner: %w", err)
	}
	return nil
}

// trueResidual sets t = b − A·x and returns ‖t‖₂/‖b‖₂.
func (s *solver[V]) trueResidual() (float64, error) {
	s.res.OperatorApplies++
	if err := s.A.Apply(s.ctx, s.x, s.t); err != nil {
		return 0, fmt.Errorf("krylov: operator: %w", err)
	}
	if err := s.sp.Axpby(1, s.b, -1, s.t); err != nil {
		return 0, fmt.Errorf("krylov: space: %w", err)
	}
	tt, err := Dot(s.sp, s.t, s.t)
	if err != nil {
		return 0, fmt.Errorf("krylov: space: %w", err)
	}
	if err := finite("‖b − A·x‖", tt); err != nil {
		return 0, err
	}
	return math.Sqrt(tt) / s.nb, nil
}

// dots computes out[k] = xs[k]·ys[k] and checks that they are finite.
func (s *solver[V]) dots(what string, xs, ys []V, out []float64) error {
	if err := s.sp.Dots(xs, ys, out); err != nil {
		return fmt.Errorf("krylov: space: %w", err)
	}
	return finite(what, out...)
}

func finite(what string, vs ...float64) error {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: %s = %g", ErrNonFinite, what, v)
		}
	}
	return nil
}

// axpy sets y += α·x.
func (s *solver[V]) axpy(alpha float64, x, y V) error {
	if err := s.sp.Axpby(alpha, x, 1, y); err != nil {
		return fmt.Errorf("krylov: space: %w", err)
	}
	return nil
}

// stop ends the solve: err == nil or wrapping ErrNotConverged/ErrBreakdown
// come with a true residual in rel; other errors with the latest estimate.
func (s *solver[V]) stop(k int, rel float64, converged bool, err error) (Result, error) {
	s.res.Iterations = k
	s.res.Residual = rel
	s.res.Converged = converged
	return s.res, err
}

// fail ends the solve on an error that leaves no true residual.
func (s *solver[V]) fail(k int, err error) (Result, error) {
	return s.stop(k, s.last, false, err)
}

// breakdown ends the solve after a breakdown at step k: converged if the
// true residual already meets the tolerance, an ErrBreakdown otherwise.
func (s *solver[V]) breakdown(k int, what string) (Result, error) {
	rel, err := s.trueResidual()
	if err != nil {
		return s.fail(k, err)
	}
	s.record(k, rel, true)
	if rel <= s.tol {
		return s.stop(k, rel, true, nil)
	}
	return s.stop(k, rel, false, fmt.Errorf("%w at step %d: %s (relative residual %.3g)", ErrBreakdown, k, what, rel))
}

func (s *solver[V]) solve(maxIter int) (Result, error) {
	sp := s.sp
	var out [6]float64

	// ‖b‖; b = 0 gives x = 0.
	if err := s.dots("‖b‖²", []V{s.b}, []V{s.b}, out[:1]); err != nil {
		return s.fail(0, err)
	}
	if out[0] == 0 {
		if err := sp.Zero(s.x); err != nil {
			return s.fail(0, fmt.Errorf("krylov: space: %w", err))
		}
		s.record(0, 0, true)
		return s.stop(0, 0, true, nil)
	}
	s.nb = math.Sqrt(out[0])

	// Work vectors: t (scratch), r̃₀ (rt), r̂₀…r̂₂, û₀…û₂.
	var vecs [8]V
	for i := range vecs {
		v, err := sp.New()
		if err != nil {
			for _, w := range vecs[:i] {
				sp.Free(w)
			}
			return s.fail(0, fmt.Errorf("krylov: space: %w", err))
		}
		vecs[i] = v
	}
	defer func() {
		for _, v := range vecs {
			sp.Free(v)
		}
	}()
	s.t = vecs[0]
	rt := vecs[1]
	r := [3]V{vecs[2], vecs[3], vecs[4]}
	u := [3]V{vecs[5], vecs[6], vecs[7]}

	// Initial true residual t = b − A·x₀.
	rel, err := s.trueResidual()
	if err != nil {
		return s.fail(0, err)
	}
	s.record(0, rel, true)
	if rel <= s.tol {
		return s.stop(0, rel, true, nil)
	}

	var (
		rho0, alpha, omega float64 // recurrence scalars
		rtNorm             float64 // ‖r̃₀‖
		c                  float64 // ‖b − A·x‖/‖r̂₀‖ at the latest explicit evaluation
		maxRR              float64 // largest ‖r̂₀‖² since the latest replacement
	)
	// restart starts the recurrences from r̂₀ (already M⁻¹(b − A·x), with
	// ‖b − A·x‖/‖b‖ = rel) and returns ‖r̂₀‖².
	restart := func(k int, rel float64) (float64, error) {
		if err := sp.Copy(rt, r[0]); err != nil {
			return 0, fmt.Errorf("krylov: space: %w", err)
		}
		if err := sp.Zero(u[0]); err != nil {
			return 0, fmt.Errorf("krylov: space: %w", err)
		}
		if err := s.dots("‖r̂₀‖²", []V{r[0]}, []V{r[0]}, out[:1]); err != nil {
			return 0, err
		}
		rr := out[0]
		if rr == 0 {
			return 0, fmt.Errorf("%w at step %d: the preconditioner mapped a nonzero residual to zero", ErrBreakdown, k)
		}
		rho0, alpha, omega = 1, 0, 1
		rtNorm = math.Sqrt(rr)
		maxRR = rr
		c = rel * s.nb / rtNorm
		return rr, nil
	}
	if err := s.prec(s.t, r[0]); err != nil {
		return s.fail(0, err)
	}
	if _, err := restart(0, rel); err != nil {
		return s.fail(0, err)
	}

	k := 0 // BiCG steps done
	for {
		// One BiCGStab(2) cycle.
		rho0 = -omega * rho0
		for j := 0; j < 2; j++ {
			if err := s.ctx.Err(); err != nil {
				return s.fail(k, fmt.Errorf("krylov: BiCGStab(2) stopped after %d steps: %w", k, err))
			}
			// ρ₁ = (r̂ⱼ, r̃₀), ‖r̂₀‖² (for the stopping test) and ‖r̂ⱼ‖²
			// (for the breakdown test) in one call.
			xs, ys := []V{r[j], r[0]}, []V{rt, r[0]}
			if j > 0 {
				xs, ys = append(xs, r[j]), append(ys, r[j])
			}
			if err := s.dots("ρ", xs, ys, out[:len(xs)]); err != nil {
				return s.fail(k, fmt.Errorf("%w (step %d)", err, k))
			}
			rho1, rr, rjrj := out[0], out[1], out[1]
			if j > 0 {
				rjrj = out[2]
			}
			est := c * math.Sqrt(rr) / s.nb
			s.record(k, est, false)
			maxRR = max(maxRR, rr)

			if est <= s.tol || k >= maxIter || (j == 0 && rr <= reliableDrop*reliableDrop*maxRR) {
				rel, err := s.trueResidual()
				if err != nil {
					return s.fail(k, err)
				}
				s.record(k, rel, true)
				if rel <= s.tol {
					return s.stop(k, rel, true, nil)
				}
				if k >= maxIter {
					return s.stop(k, rel, false, fmt.Errorf("%w: relative residual %.3g > %.3g after %d steps", ErrNotConverged, rel, s.tol, k))
				}
				if rr > 0 {
					c = rel * s.nb / math.Sqrt(rr)
				}
				if j == 0 {
					// Cycle boundary: compare r̂₀ with M⁻¹(b − A·x), using
					// r̂₁ (free here) for the latter, and replace r̂₀.
					if err := s.prec(s.t, r[1]); err != nil {
						return s.fail(k, err)
					}
					if err := s.dots("‖M⁻¹(b − A·x)‖²", []V{r[1], r[1], r[1]}, []V{r[1], r[0], rt}, out[:3]); err != nil {
						return s.fail(k, err)
					}
					zz, zr, zrt := out[0], out[1], out[2]
					gap2 := zz - 2*zr + rr
					if err := sp.Copy(r[0], r[1]); err != nil {
						return s.fail(k, fmt.Errorf("krylov: space: %w", err))
					}
					if gap2 > restartGap*restartGap*rr {
						zz, err = restart(k, rel)
						if err != nil {
							return s.fail(k, err)
						}
						rho0 = 1
						rho1 = zz // (r̂₀, r̃₀) with r̃₀ = r̂₀
					} else {
						if zz == 0 {
							return s.breakdown(k, "the preconditioner mapped a nonzero residual to zero")
						}
						c = rel * s.nb / math.Sqrt(zz)
						rho1 = zrt
						maxRR = zz
					}
					rjrj = zz
				}
			}

			if math.Abs(rho1) <= breakdownTol*math.Sqrt(rjrj)*rtNorm {
				return s.breakdown(k, fmt.Sprintf("ρ = (r̂%d, r̃₀) = %.3g ≈ 0", j, rho1))
			}
			beta := alpha * rho1 / rho0
			rho0 = rho1
			if err := finite("β", beta); err != nil {
				return s.fail(k, fmt.Errorf("%w (step %d)", err, k))
			}
			// ûᵢ ← r̂ᵢ − β·ûᵢ, i = 0…j.
			for i := 0; i <= j; i++ {
				if err := sp.Axpby(1, r[i], -beta, u[i]); err != nil {
					return s.fail(k, fmt.Errorf("krylov: space: %w", err))
				}
			}
			// ûⱼ₊₁ ← Ã·ûⱼ; σ = (ûⱼ₊₁, r̃₀).
			if err := s.precOp(u[j], u[j+1]); err != nil {
				return s.fail(k, err)
			}
			if err := s.dots("σ", []V{u[j+1], u[j+1]}, []V{rt, u[j+1]}, out[:2]); err != nil {
				return s.fail(k, fmt.Errorf("%w (step %d)", err, k))
			}
			sigma, uu := out[0], out[1]
			if math.Abs(sigma) <= breakdownTol*math.Sqrt(uu)*rtNorm {
				return s.breakdown(k, fmt.Sprintf("σ = (û%d, r̃₀) = %.3g ≈ 0", j+1, sigma))
			}
			alpha = rho0 / sigma
			if err := finite("α", alpha); err != nil {
				return s.fail(k, fmt.Errorf("%w (step %d)", err, k))
			}
			// r̂ᵢ ← r̂ᵢ − α·ûᵢ₊₁, i = 0…j; r̂ⱼ₊₁ ← Ã·r̂ⱼ; x ← x + α·û₀.
			for i := 0; i <= j; i++ {
				if err := s.axpy(-alpha, u[i+1], r[i]); err != nil {
					return s.fail(k, err)
				}
			}
			if err := s.precOp(r[j], r[j+1]); err != nil {
				return s.fail(k, err)
			}
			if err := s.axpy(alpha, u[0], s.x); err != nil {
				return s.fail(k, err)
			}
			k++
		}

		// MR part: the Gram matrix G of r̂₀, r̂₁, r̂₂ in one call, then the
		// normal equations [G₁₁ G₁₂; G₁₂ G₂₂]·γ = [G₀₁; G₀₂], solved by
		// Cramer's rule after scaling r̂₁ and r̂₂ to unit length (q₁, q₂):
		// with c₁₂ = (q₁, q₂), cᵢ = (r̂₀, qᵢ) and det = 1 − c₁₂²,
		// γ₁·‖r̂₁‖ = (c₁ − c₁₂c₂)/det and γ₂·‖r̂₂‖ = (c₂ − c₁₂c₁)/det.
		if err := s.dots("Gram matrix",
			[]V{r[0], r[0], r[0], r[1], r[1], r[2]},
			[]V{r[0], r[1], r[2], r[1], r[2], r[2]}, out[:6]); err != nil {
			return s.fail(k, fmt.Errorf("%w (step %d)", err, k))
		}
		g00, g01, g02, g11, g12, g22 := out[0], out[1], out[2], out[3], out[4], out[5]
		if !(g11 > 0 && g22 > 0) {
			return s.breakdown(k, "singular 2×2 MR system (Ã·r̂₀ = 0)")
		}
		n1, n2 := math.Sqrt(g11), math.Sqrt(g22)
		c12, c1, c2 := g12/n1/n2, g01/n1, g02/n2
		det := 1 - c12*c12
		var gamma1, gamma2 float64
		singular := !(det > breakdownTol)
		if singular {
			// r̂₂ ∥ r̂₁: minimise over γ₁ alone (γ₂ = ω = 0), which may
			// still finish the solve (r̂₀ an eigenvector of Ã); otherwise
			// it is a breakdown below.
			gamma1 = c1 / n1
		} else {
			gamma1 = (c1 - c12*c2) / det / n1
			gamma2 = (c2 - c12*c1) / det / n2
		}
		if err := finite("γ", gamma1, gamma2); err != nil {
			return s.fail(k, fmt.Errorf("%w (step %d)", err, k))
		}
		// x ← x + γ₁r̂₀ + γ₂r̂₁;  r̂₀ ← r̂₀ − γ₁r̂₁ − γ₂r̂₂;  û₀ ← û₀ − γ₁û₁ − γ₂û₂.
		for _, op := range [...]struct {
			a    float64
			x, y V
		}{
			{gamma1, r[0], s.x}, {gamma2, r[1], s.x},
			{-gamma1, r[1], r[0]}, {-gamma2, r[2], r[0]},
			{-gamma1, u[1], u[0]}, {-gamma2, u[2], u[0]},
		} {
			if err := s.axpy(op.a, op.x, op.y); err != nil {
				return s.fail(k, err)
			}
		}
		omega = gamma2
		if singular {
			return s.breakdown(k, fmt.Sprintf("singular 2×2 MR system (1 − cos²∠(r̂₁, r̂₂) = %.3g)", det))
		}
		if math.Abs(omega)*n2 <= breakdownTol*math.Sqrt(g00) {
			return s.breakdown(k, fmt.Sprintf("ω = %.3g ≈ 0", omega))
		}
	}
}
