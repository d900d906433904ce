package sparse

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/internal/condest"
	"github.com/bandsolve/bandsolve/krylov"
)

// CondEstTol is the relative residual CondEst asks of each of its solves.
const CondEstTol = 1e-10

// ErrCondEst is wrapped when CondEst cannot estimate: one of its solves
// did not converge (the matrix is too ill-conditioned for the band to
// precondition it, or singular).
var ErrCondEst = errors.New("sparse: condition estimate failed")

// CondEst returns κ̂∞, an estimate of ‖A‖∞·‖A⁻¹‖∞ of the square sparse
// matrix A, when the band M approximates A (the reordered band of
// Reorder, which may drop entries of A): the Hager–Higham estimator of
// LAPACK's gbcon (a lower bound, almost always within a factor of 3) with
// its solves by BiCGStab(2) on A and Aᵀ, preconditioned by M's LU with
// partial pivoting and its transpose, each to a relative residual of
// CondEstTol. It costs about eleven such solves. A solve that does not
// converge gives +Inf and an error wrapping ErrCondEst; an exactly
// singular M, FactorPivot's error (wrapping banded.ErrSingular).
func CondEst(ctx context.Context, A *CSR, M *banded.Band[float64]) (float64, error) {
	if err := A.Check(); err != nil {
		return 0, err
	}
	n := A.N
	if A.M != n || M.N != n {
		return 0, fmt.Errorf("%w: A is %d×%d, the band %d×%d", ErrShape, A.N, A.M, M.N, M.N)
	}
	lu, err := banded.FactorPivot(M)
	if err != nil {
		return math.Inf(1), err
	}
	norm := A.NormInf()
	if norm == 0 {
		return math.Inf(1), fmt.Errorf("%w: A is zero", ErrCondEst)
	}
	at := A.Transpose()
	sp := krylov.HostSpace{N: n}
	var failed error
	solver := func(a *CSR, precond func([]float64), what string) func(v []float64) {
		op := krylov.OperatorFunc[[]float64](func(_ context.Context, x, y []float64) error { return a.MulVec(x, y) })
		pc := krylov.PreconditionerFunc[[]float64](func(_ context.Context, r, z []float64) error {
			copy(z, r)
			precond(z)
			return nil
		})
		x := make([]float64, n)
		return func(v []float64) {
			if failed != nil {
				return
			}
			clear(x)
			res, err := krylov.BiCGStab2(ctx, sp, op, pc, v, x, krylov.Options{Tol: CondEstTol})
			if err != nil || !res.Converged {
				failed = fmt.Errorf("%w: the solve with %s reached a relative residual of %.2g after %d steps: %v", ErrCondEst, what, res.Residual, res.Iterations, err)
				return
			}
			copy(v, x)
		}
	}
	inv := condest.InvNormInf(n, solver(A, lu.Solve, "A"), solver(at, lu.SolveTrans, "Aᵀ"))
	if failed != nil {
		return math.Inf(1), failed
	}
	return norm * inv, nil
}
