package spike

import (
	"context"
	"fmt"
	"time"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/krylov"
)

// Operator is a float64 matrix the iteration multiplies by: MulVec sets
// y = A·x (x and y distinct, both of length N). *banded.Band[float64]
// implements it; a sparse matrix can through MulVecFunc (for instance
// *sparse.CSR, whose MulVec returns an error: panic with it, and
// SolveIterative returns it). A panic in MulVec ends the solve with an
// error that wraps the panic value when it is an error.
type Operator interface {
	MulVec(x, y []float64)
}

// MulVecFunc adapts a function to Operator.
type MulVecFunc func(x, y []float64)

// MulVec calls f(x, y).
func (f MulVecFunc) MulVec(x, y []float64) { f(x, y) }

// IterativeOptions configure SolveIterative. The zero value is truncated
// SPIKE in float64 with ChoosePartitions, krylov's default tolerance and
// iteration limit.
type IterativeOptions struct {
	// Options configure the preconditioner's factorization (Method
	// BlockJacobi gives the block-diagonal preconditioner).
	Options
	// Precision of the preconditioner: F64 or Mixed.
	Precision Precision
	// NoPreconditioner runs BiCGStab(2) without preconditioner (M = I);
	// the band M is then not factored.
	NoPreconditioner bool
	// Tol is the target relative residual ‖b − A·x‖₂/‖b‖₂ (0: krylov's
	// DefaultTol); MaxIter bounds the BiCG steps (0: krylov's
	// DefaultMaxIter); History records the residual after every step.
	Tol     float64
	MaxIter int
	History bool
}

// IterativeResult describes a SolveIterative run.
type IterativeResult struct {
	// Result is BiCGStab2's: Iterations (BiCG steps, two per BiCGStab(2)
	// cycle), Residual (true relative residual of the returned x),
	// History, Converged and the operator/preconditioner application
	// counts.
	krylov.Result
	// Bounds are the partition bounds of the preconditioner (nil without
	// one); Boosts the number of boosted pivots in its factorization.
	Bounds []int
	Boosts int
	// FactorTime is the time to factor the preconditioner, SolveTime the
	// time of the iteration.
	FactorTime, SolveTime time.Duration
}

// SolveIterative solves A·x = b by BiCGStab(2) (krylov.BiCGStab2, left
// preconditioned) with the truncated SPIKE factorization of the band M as
// preconditioner (Li et al. §3): A is the operator of the system, M its
// banded approximation. When M is nil, A must be a *banded.Band[float64]
// and is used for both. x holds the initial guess on entry and the
// solution on return. Errors are those of NewPreconditioner and of
// krylov.BiCGStab2 (ErrNotConverged comes with a complete result).
func SolveIterative(ctx context.Context, A Operator, M *banded.Band[float64], b, x []float64, opts IterativeOptions) (IterativeResult, error) {
	var res IterativeResult
	if M == nil {
		band, ok := A.(*banded.Band[float64])
		if !ok {
			return res, fmt.Errorf("%w: SolveIterative needs a band M when A is a %T", ErrOption, A)
		}
		M = band
	}
	n := M.N
	if len(b) != n || len(x) != n {
		return res, fmt.Errorf("%w: SolveIterative with len(b)=%d, len(x)=%d for N=%d", banded.ErrShape, len(b), len(x), n)
	}
	var prec krylov.Preconditioner[[]float64]
	if !opts.NoPreconditioner {
		start := time.Now()
		p, err := NewPreconditioner(M, opts.Options, opts.Precision)
		res.FactorTime = time.Since(start)
		if err != nil {
			return res, err
		}
		res.Bounds, res.Boosts = p.Bounds(), p.BoostCount()
		prec = p
	}
	op := krylov.OperatorFunc[[]float64](func(_ context.Context, x, y []float64) (err error) {
		defer func() {
			if p := recover(); p != nil {
				if e, ok := p.(error); ok {
					err = fmt.Errorf("spike: operator: %w", e)
				} else {
					err = fmt.Errorf("spike: operator: %v", p)
				}
			}
		}()
		A.MulVec(x, y)
		return nil
	})
	start := time.Now()
	r, err := krylov.BiCGStab2[[]float64](ctx, krylov.HostSpace{N: n}, op, prec, b, x,
		krylov.Options{Tol: opts.Tol, MaxIter: opts.MaxIter, History: opts.History})
	res.SolveTime = time.Since(start)
	res.Result = r
	return res, err
}
