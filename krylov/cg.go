package krylov

import (
	"context"
	"fmt"
	"math"
)

// stagnationChecks is the number of consecutive failed convergence checks
// (the recursive residual met the tolerance, the true one did not) without
// the true residual halving after which CG and BiCGStab stop with
// ErrStagnation.
const stagnationChecks = 3

// alloc returns k work vectors of sp and a function that frees them.
func (s *solver[V]) alloc(k int) ([]V, func(), error) {
	vecs := make([]V, 0, k)
	free := func() {
		for _, v := range vecs {
			s.sp.Free(v)
		}
	}
	for range k {
		v, err := s.sp.New()
		if err != nil {
			free()
			return nil, nil, fmt.Errorf("krylov: space: %w", err)
		}
		vecs = append(vecs, v)
	}
	return vecs, free, nil
}

// start computes ‖b‖ and reports done when b = 0 (x is then set to 0).
func (s *solver[V]) start() (done bool, err error) {
	var out [1]float64
	if err := s.dots("‖b‖²", []V{s.b}, []V{s.b}, out[:]); err != nil {
		return false, err
	}
	if out[0] == 0 {
		if err := s.sp.Zero(s.x); err != nil {
			return false, fmt.Errorf("krylov: space: %w", err)
		}
		s.record(0, 0, true)
		return true, nil
	}
	s.nb = math.Sqrt(out[0])
	return false, nil
}

// checker runs the convergence checks of CG and BiCGStab: the true
// residual, evaluated when the recursive one meets the tolerance or the
// iteration cap is reached, and the count of failed checks that detects
// stagnation.
type checker struct {
	failed  int     // consecutive failed checks without progress
	lastRel float64 // true relative residual at the latest failed check

	window  int     // Options.Stagnation
	minEst  float64 // smallest residual estimate so far
	minStep int     // the step where it was reached
}

// observe watches the residual estimate est at step k and reports
// ErrStagnation when it has not reached a new minimum for window steps.
func (c *checker) observe(k int, est float64, method string) error {
	if c.window == 0 {
		return nil
	}
	if k == 0 || est < 0.999*c.minEst {
		c.minEst, c.minStep = est, k
		return nil
	}
	if k-c.minStep >= c.window {
		return fmt.Errorf("%w: %s at step %d: the residual estimate %.3g has not gone below %.3g (step %d) for %d steps",
			ErrStagnation, method, k, est, c.minEst, c.minStep, k-c.minStep)
	}
	return nil
}

// verdict says what a check at step k with true relative residual rel
// means: converged, out of steps (ErrNotConverged), stagnating
// (ErrStagnation), or go on (nil error, false) after the caller replaced
// the recursive residual by the true one.
func (c *checker) verdict(k, maxIter int, rel, tol float64, method string) (bool, error) {
	if rel <= tol {
		return true, nil
	}
	if k >= maxIter {
		return false, fmt.Errorf("%w: %s: relative residual %.3g > %.3g after %d steps", ErrNotConverged, method, rel, tol, k)
	}
	if c.failed > 0 && rel > c.lastRel/2 {
		c.failed++
	} else {
		c.failed = 1
	}
	c.lastRel = rel
	if c.failed >= stagnationChecks {
		return false, fmt.Errorf("%w: %s at step %d: the true relative residual stays at %.3g > %.3g while the recursive one meets the tolerance (%d checks)",
			ErrStagnation, method, k, rel, tol, c.failed)
	}
	return false, nil
}

// CG solves A·x = b for a symmetric positive definite A by the conjugate
// gradient method (Hestenes and Stiefel 1952), preconditioned by a
// symmetric positive definite M: the iteration of Naumov's preconditioned
// CG (sptrsv-levelset-naumov2012), with IC(0) the preconditioner of
// package ilu. x holds the initial guess on entry and the solution on
// return (the latest iterate on error); b is not modified. b and x must
// be distinct vectors of sp. A nil M means no preconditioning. The solve
// allocates four work vectors from sp (three without M) and frees them
// before it returns.
//
// # Algorithm
//
// With r = b − A·x₀, z = M⁻¹r, p = z and ρ = (r, z), each iteration does
//
//	q ← A·p;  α ← ρ/(p, q)
//	x ← x + α·p;  r ← r − α·q
//	z ← M⁻¹r;  ρ' ← (r, z);  β ← ρ'/ρ;  ρ ← ρ'
//	p ← z + β·p
//
// with the inner products of one point batched in one Space.Dots call
// ((p, q); then (r, r) with (r, z)). Result.Iterations counts iterations,
// one operator and one preconditioner application each; Result.History
// follows BiCGStab2's conventions with the recursive ‖r‖/‖b‖ as the
// estimate.
//
// # Stopping test
//
// The recursive residual r is the unpreconditioned one, so ‖r‖/‖b‖ ≤ Tol
// (or the iteration cap) triggers an explicit check of ‖b − A·x‖/‖b‖ ≤
// Tol, which decides. A failed check replaces r by b − A·x and goes on
// (residual replacement, keeping p); three failed checks in a row without
// the true residual halving stop the solve with ErrStagnation.
//
// # Errors
//
// As BiCGStab2's, with these breakdowns (ErrBreakdown, naming the step):
// (p, A·p) ≤ 0, so A is not positive definite (or not symmetric), and
// (r, M⁻¹r) ≤ 0 for r ≠ 0, so M is not positive definite.
func CG[V any](ctx context.Context, sp Space[V], A Operator[V], M Preconditioner[V], b, x V, opt Options) (Result, error) {
	s, maxIter, err := newSolver(ctx, sp, A, M, b, x, opt)
	if err != nil {
		return Result{}, err
	}
	vecs, free, res, finished, err := s.begin(3, 4)
	if finished {
		return res, err
	}
	defer free()
	tol := s.tol
	s.t = vecs[0]
	r, p, q := vecs[0], vecs[1], vecs[2] // r is t: the true residual lands in r
	z := r
	if M != nil {
		z = vecs[3]
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
	// precDot sets z = M⁻¹r and returns ρ = (r, z) > 0.
	precDot := func(k int) (float64, bool, error) {
		if M != nil {
			if err := s.prec(r, z); err != nil {
				return 0, false, err
			}
		}
		if err := s.dots("ρ = (r, M⁻¹r)", []V{r}, []V{z}, out[:1]); err != nil {
			return 0, false, fmt.Errorf("%w (step %d)", err, k)
		}
		return out[0], out[0] > 0, nil
	}
	rho, ok, err := precDot(0)
	if err != nil {
		return s.fail(0, err)
	}
	if !ok {
		return s.breakdown(0, fmt.Sprintf("ρ = (r, M⁻¹r) = %.3g ≤ 0: the preconditioner is not positive definite", rho))
	}
	if err := sp.Copy(p, z); err != nil {
		return s.fail(0, fmt.Errorf("krylov: space: %w", err))
	}
	chk := checker{window: opt.Stagnation}
	_ = chk.observe(0, rel, "CG")
	for k := 0; ; {
		if err := ctx.Err(); err != nil {
			return s.fail(k, fmt.Errorf("krylov: CG stopped after %d iterations: %w", k, err))
		}
		s.res.OperatorApplies++
		if err := A.Apply(ctx, p, q); err != nil {
			return s.fail(k, fmt.Errorf("krylov: operator: %w", err))
		}
		if err := s.dots("(p, A·p)", []V{p}, []V{q}, out[:1]); err != nil {
			return s.fail(k, fmt.Errorf("%w (step %d)", err, k))
		}
		pq := out[0]
		if !(pq > 0) {
			return s.breakdown(k, fmt.Sprintf("(p, A·p) = %.3g ≤ 0: the matrix is not positive definite", pq))
		}
		alpha := rho / pq
		if err := finite("α", alpha); err != nil {
			return s.fail(k, fmt.Errorf("%w (step %d)", err, k))
		}
		if err := s.axpy(alpha, p, x); err != nil {
			return s.fail(k, err)
		}
		if err := s.axpy(-alpha, q, r); err != nil {
			return s.fail(k, err)
		}
		k++

		// Recursive residual; on its say-so (or at the cap) the true one.
		if err := s.dots("‖r‖²", []V{r}, []V{r}, out[:1]); err != nil {
			return s.fail(k, fmt.Errorf("%w (step %d)", err, k))
		}
		est := math.Sqrt(out[0]) / s.nb
		s.record(k, est, false)
		if est <= tol || k >= maxIter {
			rel, err := s.trueResidual() // r = b − A·x
			if err != nil {
				return s.fail(k, err)
			}
			s.record(k, rel, true)
			conv, err := chk.verdict(k, maxIter, rel, tol, "CG")
			if conv || err != nil {
				return s.stop(k, rel, conv, err)
			}
		} else if err := chk.observe(k, est, "CG"); err != nil {
			return s.stagnated(k, err)
		}

		rhoNew, ok, err := precDot(k)
		if err != nil {
			return s.fail(k, err)
		}
		if !ok {
			return s.breakdown(k, fmt.Sprintf("ρ = (r, M⁻¹r) = %.3g ≤ 0: the preconditioner is not positive definite", rhoNew))
		}
		beta := rhoNew / rho
		rho = rhoNew
		if err := sp.Axpby(1, z, beta, p); err != nil {
			return s.fail(k, fmt.Errorf("krylov: space: %w", err))
		}
	}
}

// stagnated ends the solve on the stagnation error err at step k, with the
// true residual.
func (s *solver[V]) stagnated(k int, err error) (Result, error) {
	rel, terr := s.trueResidual()
	if terr != nil {
		return s.fail(k, terr)
	}
	s.record(k, rel, true)
	if rel <= s.tol {
		return s.stop(k, rel, true, nil)
	}
	return s.stop(k, rel, false, fmt.Errorf("%w (true relative residual %.3g)", err, rel))
}

// newSolver resolves opt and makes the state of one solve of CG or
// BiCGStab; it returns the iteration cap too.
func newSolver[V any](ctx context.Context, sp Space[V], A Operator[V], M Preconditioner[V], b, x V, opt Options) (*solver[V], int, error) {
	tol, maxIter, err := opt.resolve()
	if err != nil {
		return nil, 0, err
	}
	return &solver[V]{ctx: ctx, sp: sp, A: A, M: M, b: b, x: x, tol: tol, history: opt.History}, maxIter, nil
}

// begin checks the start (b = 0, or an x that already meets the
// tolerance) and allocates the work vectors: nv without a preconditioner,
// nvM with one. finished says the solve ended there, with res and err.
func (s *solver[V]) begin(nv, nvM int) (vecs []V, free func(), res Result, finished bool, err error) {
	done, err := s.start()
	if err != nil {
		res, err = s.fail(0, err)
		return nil, nil, res, true, err
	}
	if done {
		res, err = s.stop(0, 0, true, nil)
		return nil, nil, res, true, err
	}
	if s.M != nil {
		nv = nvM
	}
	if vecs, free, err = s.alloc(nv); err != nil {
		res, err = s.fail(0, err)
		return nil, nil, res, true, err
	}
	return vecs, free, Result{}, false, nil
}
