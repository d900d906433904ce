package krylov

import (
	"context"
	"fmt"
	"math"
)

// BiCGStab solves A·x = b by BiCGStab (van der Vorst, "Bi-CGSTAB: a fast
// and smoothly converging variant of Bi-CG for the solution of
// nonsymmetric linear systems", SIAM J. Sci. Stat. Comput. 13, 1992),
// right-preconditioned by M: it iterates on A·M⁻¹·y = b, x = M⁻¹y, the
// form of Naumov's preconditioned BiCGStab (sptrsv-levelset-naumov2012),
// with ILU(0) the preconditioner of package ilu. x holds the initial guess
// on entry and the solution on return (the latest iterate on error); b is
// not modified. b and x must be distinct vectors of sp. A nil M means no
// preconditioning. The solve allocates seven work vectors from sp (five
// without M) and frees them before it returns.
//
// # Algorithm
//
// With r = b − A·x₀, shadow residual r̃₀ = r, p = v = 0 and ρ = α = ω = 1,
// each iteration does
//
//	ρ' ← (r, r̃₀);  β ← (ρ'/ρ)·(α/ω);  ρ ← ρ'
//	p ← r + β·(p − ω·v)
//	p̂ ← M⁻¹p;  v ← A·p̂;  α ← ρ/(v, r̃₀)
//	x ← x + α·p̂;  s ← r − α·v
//	ŝ ← M⁻¹s;  t ← A·ŝ;  ω ← (t, s)/(t, t)
//	x ← x + ω·ŝ;  r ← s − ω·t
//
// The recursive r is the unpreconditioned residual. Result.Iterations
// counts iterations, two operator and two preconditioner applications
// each (as a BiCGStab2 step); History, the stopping test (‖r‖/‖b‖ ≤ Tol
// triggers the check of ‖b − A·x‖/‖b‖ ≤ Tol; a failed check replaces r by
// b − A·x), stagnation and errors follow CG. When ‖s‖/‖b‖ already meets
// Tol the true residual is checked after the half step x + α·p̂ and the
// solve may stop there.
//
// # Breakdowns
//
// When |ρ| ≤ 10⁻¹⁴·‖r‖·‖r̃₀‖ (r̃₀ nearly orthogonal to the residual) the
// iteration restarts with r̃₀ = r and p = r. ErrBreakdown, naming the
// step, when that happens again right after a restart, when |(v, r̃₀)| ≤ 10⁻¹⁴·‖v‖·‖r̃₀‖, t = A·ŝ = 0, or
// |ω|·‖t‖ ≤ 10⁻¹⁴·‖s‖ (the minimal-residual step stalls; BiCGStab2 is
// the remedy for operators with complex spectra). A breakdown whose true
// residual already meets Tol is a convergence.
func BiCGStab[V any](ctx context.Context, sp Space[V], A Operator[V], M Preconditioner[V], b, x V, opt Options) (Result, error) {
	s, maxIter, err := newSolver(ctx, sp, A, M, b, x, opt)
	if err != nil {
		return Result{}, err
	}
	vecs, free, res, finished, err := s.begin(5, 7)
	if finished {
		return res, err
	}
	defer free()
	tol := s.tol
	// r doubles as the scratch vector of the true residual, so a check
	// leaves b − A·x in it; s is r updated in place.
	r, rt, p, v, t := vecs[0], vecs[1], vecs[2], vecs[3], vecs[4]
	s.t = r
	ph, sh := p, r
	if M != nil {
		ph, sh = vecs[5], vecs[6]
	}
	var out [2]float64

	rel, err := s.trueResidual()
	if err != nil {
		return s.fail(0, err)
	}
	s.record(0, rel, true)
	if rel <= tol {
		return s.stop(0, rel, true, nil)
	}
	if err := sp.Copy(rt, r); err != nil {
		return s.fail(0, fmt.Errorf("krylov: space: %w", err))
	}
	rtNorm := rel * s.nb
	rNorm := rtNorm
	rhoNext := rtNorm * rtNorm // (r, r̃₀)
	rho, alpha, omega := 1.0, 1.0, 1.0
	restarted := -1 // the step of the latest restart
	chk := checker{window: opt.Stagnation}
	_ = chk.observe(0, rel, "BiCGStab")
	// check evaluates the true residual at step k: done, or an error, or
	// go on with r = b − A·x (then (r, r̃₀) and ‖r‖ are recomputed).
	// A half-step check (half) records the residual only when it stops.
	check := func(k int, half bool) (bool, Result, error) {
		rel, err := s.trueResidual()
		if err != nil {
			res, err := s.fail(k, err)
			return true, res, err
		}
		if !half {
			s.record(k, rel, true)
		}
		conv, err := chk.verdict(k, maxIter, rel, tol, "BiCGStab")
		if conv || err != nil {
			if half {
				s.record(k, rel, true)
			}
			res, err := s.stop(k, rel, conv, err)
			return true, res, err
		}
		if err := s.dots("(r, r̃₀)", []V{r, r}, []V{rt, r}, out[:2]); err != nil {
			res, err := s.fail(k, err)
			return true, res, err
		}
		rhoNext, rNorm = out[0], math.Sqrt(out[1])
		return false, Result{}, nil
	}

	for k := 0; ; {
		if err := ctx.Err(); err != nil {
			return s.fail(k, fmt.Errorf("krylov: BiCGStab stopped after %d iterations: %w", k, err))
		}
		rho1 := rhoNext
		fresh := k == 0
		if math.Abs(rho1) <= breakdownTol*rNorm*rtNorm {
			if restarted == k {
				return s.breakdown(k, fmt.Sprintf("ρ = (r, r̃₀) = %.3g ≈ 0 after a restart", rho1))
			}
			// Restart with the current residual as the shadow residual.
			if err := sp.Copy(rt, r); err != nil {
				return s.fail(k, fmt.Errorf("krylov: space: %w", err))
			}
			restarted, fresh = k, true
			rtNorm, rho1 = rNorm, rNorm*rNorm
		}
		if fresh {
			if err := sp.Copy(p, r); err != nil {
				return s.fail(k, fmt.Errorf("krylov: space: %w", err))
			}
		} else {
			beta := rho1 / rho * (alpha / omega)
			if err := finite("β", beta); err != nil {
				return s.fail(k, fmt.Errorf("%w (step %d)", err, k))
			}
			if err := s.axpy(-omega, v, p); err != nil {
				return s.fail(k, err)
			}
			if err := sp.Axpby(1, r, beta, p); err != nil {
				return s.fail(k, fmt.Errorf("krylov: space: %w", err))
			}
		}
		rho = rho1

		// p̂ = M⁻¹p, v = A·p̂, α = ρ/(v, r̃₀).
		if M != nil {
			if err := s.prec(p, ph); err != nil {
				return s.fail(k, err)
			}
		}
		s.res.OperatorApplies++
		if err := A.Apply(ctx, ph, v); err != nil {
			return s.fail(k, fmt.Errorf("krylov: operator: %w", err))
		}
		if err := s.dots("σ = (v, r̃₀)", []V{v, v}, []V{rt, v}, out[:2]); err != nil {
			return s.fail(k, fmt.Errorf("%w (step %d)", err, k))
		}
		sigma, vv := out[0], out[1]
		if math.Abs(sigma) <= breakdownTol*math.Sqrt(vv)*rtNorm {
			return s.breakdown(k, fmt.Sprintf("σ = (v, r̃₀) = %.3g ≈ 0", sigma))
		}
		alpha = rho / sigma
		if err := finite("α", alpha); err != nil {
			return s.fail(k, fmt.Errorf("%w (step %d)", err, k))
		}
		// x += α·p̂; s = r − α·v (in r).
		if err := s.axpy(alpha, ph, x); err != nil {
			return s.fail(k, err)
		}
		if err := s.axpy(-alpha, v, r); err != nil {
			return s.fail(k, err)
		}
		if err := s.dots("‖s‖²", []V{r}, []V{r}, out[:1]); err != nil {
			return s.fail(k, fmt.Errorf("%w (step %d)", err, k))
		}
		sNorm := math.Sqrt(out[0])
		if sNorm/s.nb <= tol {
			// The half step may finish the solve; if not, r is now the
			// true b − A·x and rNorm its norm.
			if stop, res, err := check(k+1, true); stop {
				return res, err
			}
			sNorm = rNorm
		}

		// ŝ = M⁻¹s, t = A·ŝ, ω = (t, s)/(t, t).
		if M != nil {
			if err := s.prec(r, sh); err != nil {
				return s.fail(k, err)
			}
		}
		s.res.OperatorApplies++
		if err := A.Apply(ctx, sh, t); err != nil {
			return s.fail(k, fmt.Errorf("krylov: operator: %w", err))
		}
		if err := s.dots("ω", []V{t, t}, []V{r, t}, out[:2]); err != nil {
			return s.fail(k, fmt.Errorf("%w (step %d)", err, k))
		}
		ts, tt := out[0], out[1]
		if tt == 0 {
			return s.breakdown(k, "t = A·M⁻¹s = 0")
		}
		omega = ts / tt
		if err := s.axpy(omega, sh, x); err != nil {
			return s.fail(k, err)
		}
		if err := s.axpy(-omega, t, r); err != nil {
			return s.fail(k, err)
		}
		k++

		if err := s.dots("ρ", []V{r, r}, []V{rt, r}, out[:2]); err != nil {
			return s.fail(k, fmt.Errorf("%w (step %d)", err, k))
		}
		rhoNext, rNorm = out[0], math.Sqrt(out[1])
		est := rNorm / s.nb
		s.record(k, est, false)
		if est <= tol || k >= maxIter {
			if stop, res, err := check(k, false); stop {
				return res, err
			}
		} else if err := chk.observe(k, est, "BiCGStab"); err != nil {
			return s.stagnated(k, err)
		}
		if math.Abs(omega)*math.Sqrt(tt) <= breakdownTol*sNorm {
			return s.breakdown(k, fmt.Sprintf("ω = %.3g ≈ 0", omega))
		}
	}
}
