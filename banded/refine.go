package banded

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/bandsolve/bandsolve/krylov"
	"github.com/bandsolve/bandsolve/tridiag"
)

// ErrNotRefined reports that refinement stopped before the normwise
// backward error of the solution reached its tolerance: the matrix is
// singular or too ill-conditioned for the perturbed factors to be a
// useful preconditioner. The error names the backward error reached.
var ErrNotRefined = errors.New("banded: refinement did not reach the tolerance")

// RefineMode says when a solve with factors without pivoting is refined.
type RefineMode int

const (
	// RefineBoosted, the default, refines the solution when the
	// factorization boosted a pivot (diagonal boosting makes the factors
	// those of a perturbed matrix A + δA): the backward error of the
	// solution is measured (one product with A) and, when above the
	// tolerance, refined.
	RefineBoosted RefineMode = iota
	// RefineAlways measures the backward error after every solve and
	// refines when it is above the tolerance, boosts or not: it also
	// catches the truncation error of SPIKE and the growth of
	// elimination without pivoting on matrices that are not diagonally
	// dominant.
	RefineAlways
	// RefineOff never refines: the solve returns what the factors give.
	RefineOff
)

var refineNames = [...]string{"boosted", "always", "off"}

// String returns "boosted", "always" or "off".
func (m RefineMode) String() string {
	if m >= 0 && int(m) < len(refineNames) {
		return refineNames[m]
	}
	return fmt.Sprintf("RefineMode(%d)", int(m))
}

// ParseRefineMode reads a mode as String prints it.
func ParseRefineMode(s string) (RefineMode, bool) {
	for i, n := range refineNames {
		if s == n {
			return RefineMode(i), true
		}
	}
	return 0, false
}

// DefaultRefineMaxIter is the default bound on the BiCGStab(2) steps of
// Refine.
const DefaultRefineMaxIter = 40

// refineSteps bounds the steps of plain iterative refinement before
// Refine turns to BiCGStab(2).
const refineSteps = 4

// RefineOptions configure refinement. The zero value refines boosted
// solves to 10³·ε.
type RefineOptions struct {
	// Mode says when to refine.
	Mode RefineMode
	// Tol is the normwise backward error to reach (see BackwardError);
	// 0 means tridiag.DefaultTol of the element type, 10³·ε.
	Tol float64
	// MaxIter bounds the BiCG steps of the BiCGStab(2) stage; 0 means
	// DefaultRefineMaxIter.
	MaxIter int
}

// Check reports an invalid field.
func (o RefineOptions) Check() error {
	switch {
	case o.Mode < RefineBoosted || o.Mode > RefineOff:
		return fmt.Errorf("%w: unknown refinement mode %d", ErrOption, int(o.Mode))
	case !(o.Tol >= 0) || math.IsInf(o.Tol, 0):
		return fmt.Errorf("%w: refinement tolerance %g: want 0 (the default) or a finite value > 0", ErrOption, o.Tol)
	case o.MaxIter < 0:
		return fmt.Errorf("%w: refinement MaxIter %d: want ≥ 0", ErrOption, o.MaxIter)
	}
	return nil
}

// RefineResult says what Refine did.
type RefineResult struct {
	// Steps are the steps of iterative refinement and Iterations the BiCG
	// steps of BiCGStab(2) (two per cycle); both 0 when the first
	// solution already met the tolerance.
	Steps, Iterations int
	// BackwardError is the normwise backward error of the returned x
	// (0 when the solve was not measured).
	BackwardError float64
	// Tol is the tolerance that was applied.
	Tol float64
}

// Refined reports whether refinement changed the solution.
func (r RefineResult) Refined() bool { return r.Steps+r.Iterations > 0 }

// Status is the result as the per-system status of package tridiag: the
// backward error, with BackwardErrorTooLarge and NotConverged when it is
// above the tolerance.
func (r RefineResult) Status() tridiag.Status {
	s := tridiag.Status{BackwardError: r.BackwardError}
	if !(r.BackwardError <= r.Tol) {
		s.Flags |= tridiag.BackwardErrorTooLarge | tridiag.NotConverged
	}
	return s
}

// Refine improves x, a solution of A·x = b computed with approximate
// factors M ≈ A (factors with boosted pivots, truncated SPIKE, float32
// factors), until its normwise backward error η = ‖b − A·x‖∞ /
// (‖A‖∞·‖x‖∞ + ‖b‖∞) is at most opt.Tol. solve must overwrite its
// argument r with M⁻¹·r. Residuals are computed in float64 from A's
// entries; M⁻¹ is applied in T to residuals scaled by a power of two
// (so that they neither underflow nor overflow in float32).
//
// It measures η first (one product with A) and returns at once when it
// meets the tolerance. Otherwise it runs up to four steps of iterative
// refinement, x ← x + M⁻¹·(b − A·x), while each step at least halves η;
// then, where that did not suffice, BiCGStab(2) on A·x = b preconditioned
// by M from the best x so far (package krylov), at most opt.MaxIter BiCG
// steps, whose target relative residual is derived from the tolerance
// and tightened once if η still misses it. A boosted pivot perturbs the
// factors by a matrix of small rank, whose few outlying eigenvalues of
// M⁻¹A a Krylov method removes in few steps where iterative refinement
// can stall.
//
// When η stays above the tolerance, x holds the best solution found and
// the error wraps ErrNotRefined with the backward error reached (and the
// iteration's own error, such as krylov.ErrNotConverged or
// krylov.ErrBreakdown, where there is one). The mode in opt is not
// consulted: callers decide whether to refine.
func Refine[T Float](A *Band[T], solve func(r []T) error, b, x []T, opt RefineOptions) (RefineResult, error) {
	res := RefineResult{Tol: opt.Tol}
	if err := checkBand(A); err != nil {
		return res, err
	}
	if err := opt.Check(); err != nil {
		return res, err
	}
	n := A.N
	if len(b) != n || len(x) != n {
		return res, shapeErr("Refine with len(b)=%d, len(x)=%d for N=%d", len(b), len(x), n)
	}
	if res.Tol == 0 {
		res.Tol = tridiag.DefaultTol[T]()
	}
	maxIter := opt.MaxIter
	if maxIter == 0 {
		maxIter = DefaultRefineMaxIter
	}
	r := make([]float64, n)
	ga := A.general()
	zeroB := true
	for _, v := range b {
		zeroB = zeroB && v == 0
	}
	if zeroB { // x = 0 is exact
		clear(x)
		return res, nil
	}
	eta := backwardError(&ga, b, x, r)
	res.BackwardError = eta
	if eta <= res.Tol {
		return res, nil
	}

	// The iterate in float64; x holds it rounded to T, which is what η
	// measures.
	xf := make([]float64, n)
	for i, v := range x {
		xf[i] = float64(v)
	}
	if math.IsInf(eta, 0) || math.IsNaN(eta) { // start again from 0
		clear(xf)
		clear(x)
		eta = backwardError(&ga, b, x, r)
	}
	best := append([]T(nil), x...)
	bestEta := eta
	tmp := make([]T, n)
	applyM := func(rr, z []float64) error {
		amax := 0.0
		for _, v := range rr {
			amax = max(amax, math.Abs(v))
		}
		if amax == 0 || math.IsNaN(amax) || math.IsInf(amax, 0) {
			clear(z)
			if amax != 0 {
				return fmt.Errorf("%w: residual", ErrNonFinite)
			}
			return nil
		}
		_, e := math.Frexp(amax)
		down, up := math.Ldexp(1, -e), math.Ldexp(1, e)
		for i, v := range rr {
			tmp[i] = T(v * down)
		}
		if err := solve(tmp); err != nil {
			return err
		}
		for i, v := range tmp {
			z[i] = float64(v) * up
			if math.IsNaN(z[i]) || math.IsInf(z[i], 0) {
				return fmt.Errorf("%w: correction at row %d", ErrNonFinite, i)
			}
		}
		return nil
	}
	// measure rounds xf into x and returns its backward error, keeping
	// the best x.
	measure := func() float64 {
		for i, v := range xf {
			x[i] = T(v)
		}
		e := backwardError(&ga, b, x, r)
		if e < bestEta {
			bestEta = e
			copy(best, x)
		}
		return e
	}
	finish := func(iterErr error) (RefineResult, error) {
		copy(x, best)
		res.BackwardError = bestEta
		if bestEta <= res.Tol {
			return res, nil
		}
		msg := fmt.Sprintf("backward error %.2e > %.2e after %d refinement steps and %d BiCGStab(2) steps",
			bestEta, res.Tol, res.Steps, res.Iterations)
		if iterErr != nil {
			return res, fmt.Errorf("%w: %s: %w", ErrNotRefined, msg, iterErr)
		}
		return res, fmt.Errorf("%w: %s", ErrNotRefined, msg)
	}

	// Iterative refinement while it converges fast.
	z := make([]float64, n)
	for res.Steps < refineSteps {
		if err := applyM(r, z); err != nil {
			break
		}
		for i := range xf {
			xf[i] += z[i]
		}
		res.Steps++
		prev := eta
		eta = measure()
		if eta <= res.Tol {
			return finish(nil)
		}
		if !(eta < prev/2) {
			break
		}
	}

	// BiCGStab(2) from the best x, preconditioned by M.
	for i, v := range best {
		xf[i] = float64(v)
	}
	eta = bestEta
	b64 := make([]float64, n)
	var bn2 float64
	for i, v := range b {
		b64[i] = float64(v)
		bn2 += b64[i] * b64[i]
	}
	bn2 = math.Sqrt(bn2)
	op := krylov.OperatorFunc[[]float64](func(_ context.Context, v, y []float64) error {
		mulVec64(A, v, y)
		return nil
	})
	prec := krylov.PreconditionerFunc[[]float64](func(_ context.Context, rr, zz []float64) error {
		return applyM(rr, zz)
	})
	normA := A.NormInf()
	var iterErr error
	for round := 0; round < 3 && res.Iterations < maxIter; round++ {
		// Target: ‖r‖∞ ≤ Tol·(‖A‖∞‖x‖∞ + ‖b‖∞). BiCGStab(2) stops on
		// ‖r‖₂/‖b‖₂, so convert with the spread ‖r‖₂/‖r‖∞ of the current
		// residual, with a margin that each round tightens.
		var xn, bn, rn2, rnInf float64
		for i := range xf {
			xn = max(xn, math.Abs(xf[i]))
			bn = max(bn, math.Abs(b64[i]))
		}
		mulVec64(A, xf, z)
		for i := range z {
			d := b64[i] - z[i]
			rn2 += d * d
			rnInf = max(rnInf, math.Abs(d))
		}
		spread := 1.0
		if rnInf > 0 {
			spread = math.Sqrt(rn2) / rnInf
		}
		target := res.Tol * (normA*xn + bn) * spread / bn2 / math.Pow(4, float64(round+1))
		target = max(target, 1e-15)
		kres, kerr := krylov.BiCGStab2[[]float64](context.Background(), krylov.HostSpace{N: n}, op, prec, b64, xf,
			krylov.Options{Tol: target, MaxIter: maxIter - res.Iterations})
		res.Iterations += kres.Iterations
		iterErr = kerr
		eta = measure()
		if eta <= res.Tol {
			return finish(nil)
		}
		if kerr != nil && !errors.Is(kerr, krylov.ErrNotConverged) {
			break // breakdown, non-finite values
		}
		if errors.Is(kerr, krylov.ErrNotConverged) {
			break // out of steps
		}
		if target <= 1e-15 {
			break
		}
	}
	return finish(iterErr)
}

// mulVec64 sets y = A·x in float64 from A's entries.
func mulVec64[T Float](A *Band[T], x, y []float64) {
	n, k := A.N, A.K
	clear(y)
	for s := 0; s <= 2*k; s++ {
		d := s - k
		j0, j1 := max(0, -d), min(n, n-d)
		col := A.Data[s*n:]
		for j := j0; j < j1; j++ {
			y[j+d] += float64(col[j]) * x[j]
		}
	}
}
