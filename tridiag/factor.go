package tridiag

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
)

// Factorer is implemented by solvers that factor a batch once for many
// solves (Plan.Factor). The CPU solver implements it; a solver that does
// not makes Plan.Factor fail with an error wrapping ErrOptions.
type Factorer[T Scalar] interface {
	// Factor factors the systems of b: A, B and C, or the constants (D
	// and X are unused), already checked by Plan. When some systems
	// break down it returns the factors of the others together with a
	// *BatchError naming each failed system and row, as Solve would
	// report them; any other error comes with nil factors.
	Factor(ctx context.Context, b Batch[T]) (FactorSolver[T], error)
}

// FactorSolver solves with the stored factors of one batch.
type FactorSolver[T Scalar] interface {
	// SolveMany solves the factored batch for nrhs right-hand sides:
	// column r is a whole batch in the plan's layout at d[r·L : (r+1)·L],
	// L = Shape.Len(), and its solution goes to the same place in x (x
	// may be d). The input is already checked by Factors. The systems
	// that broke down in Factor, and those whose solution is not finite,
	// are reported in a *BatchError, one entry per system, with NaN in
	// their rows.
	SolveMany(ctx context.Context, nrhs int, d, x []T) error
	// Close releases the factors.
	Close() error
}

// ManySolver is implemented by solvers that solve a batch for several
// right-hand sides in one call (Plan.SolveMany), b.D and b.X holding
// nrhs batches one after the other as FactorSolver.SolveMany says. Plan
// solves the columns one by one with Solve on a solver that does not
// implement it.
type ManySolver[T Scalar] interface {
	SolveMany(ctx context.Context, nrhs int, b Batch[T]) error
}

// Factors is the factorization of one batch, made once by Plan.Factor
// and used for any number of solves with new right-hand sides, as a
// time-stepper whose matrix does not change needs: each solve costs a
// forward and a back substitution instead of a whole elimination (with
// Thomas's factors, not one division).
//
// Which factorization a system gets follows the plan's options:
//
//   - Thomas, and Auto with PivotNever: LU without pivoting (Thomas's
//     elimination), A = L·U with L unit lower bidiagonal. Each row keeps
//     three values: the multiplier l[i] = a[i]/u[i−1], the reciprocal
//     1/u[i] of the pivot and c[i]/u[i] (the super-diagonal of U scaled
//     by its pivot, Thomas's modified coefficient): a solve reads 24
//     bytes a row in float64, 12 in float32, besides d and x. The pivots
//     are Thomas's, bit for bit; the solution differs from Plan.Solve's
//     in the last bits (multiplications by 1/u where Thomas divides).
//   - GTSV, and Auto with PivotAlways: LU with partial pivoting as
//     LAPACK's gttrf computes it, solved as gttrs does: four values a
//     row (the multipliers dl, U's diagonal d and super-diagonals du and
//     du2) and one byte for the interchange (ipiv): 33 bytes a row in
//     float64, 17 in float32. The solution is GTSV's (Plan.Solve), bit
//     for bit.
//   - Auto with PivotAuto: each system as Plan.Solve chooses it, with
//     the same test in the same sweep: LU without pivoting where Thomas's
//     pivot growth test passes and no pivot is zero, gttrf for the others
//     (where Thomas meets a zero pivot only, with PivotNever).
//   - LDLT: A = L·D·Lᵀ as LAPACK's pttrf computes it, solved as pttrs
//     does: two values a row (D's diagonal and L's sub-diagonal), 16
//     bytes in float64, 8 in float32.
//
// A cyclic plan factors the matrix T of the Sherman–Morrison splitting
// A = T + u·vᵀ (see the cyclic solve) and keeps z = T⁻¹u (one more value
// a row) and two scalars a system: a solve is one factored solve with T
// and an O(N) update, x = y − z·(vᵀy)/(1 + vᵀz).
//
// Factors hold their storage, not the plan's: on the CPU they stay valid
// after the plan is closed, and Close drops them. Their solves run one at
// a time; a Factors may be used from several goroutines.
type Factors[T Scalar] struct {
	spec Spec
	mu   sync.Mutex
	fs   FactorSolver[T]
	// Options.Check: copies of the coefficients, and of d for in-place
	// solves.
	coef  Batch[T]
	dcopy []T
}

// Factor factors the batch with coefficient arrays a, b and c (each of
// Shape().Len() elements at least; a is ignored by LDLT and may be nil)
// for solves with Factors.Solve and Factors.SolveMany. The factorization
// follows the plan's algorithm and pivoting (see Factors): Auto, Thomas,
// GTSV and LDLT factor; the other algorithms, and a device whose solver
// does not implement Factorer, give an error wrapping ErrOptions. When
// some systems break down (a zero pivot without pivoting, a singular
// matrix with it, a pivot that is not positive in LDLT, a zero
// Sherman–Morrison denominator) the error is a *BatchError naming each
// system and row as Solve names them, and the returned Factors solve the
// other systems (and report the failed ones again, with NaN in their
// rows). With Options.Check the factors keep a copy of a, b and c for the
// accuracy check of their solves.
func (p *Plan[T]) Factor(ctx context.Context, a, b, c []T) (*Factors[T], error) {
	return p.factor(ctx, Batch[T]{A: a, B: b, C: c})
}

// FactorConst is Factor for a batch whose systems all have the constant
// coefficients a, b and c, as SolveConst takes them.
func (p *Plan[T]) FactorConst(ctx context.Context, a, b, c T) (*Factors[T], error) {
	return p.factor(ctx, Batch[T]{ConstA: a, ConstB: b, ConstC: c, Constant: true})
}

func (p *Plan[T]) factor(ctx context.Context, bt Batch[T]) (*Factors[T], error) {
	if err := checkInput(p.spec, bt, true, 0); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.solver == nil {
		return nil, ErrClosed
	}
	fz, ok := p.solver.(Factorer[T])
	if !ok {
		return nil, fmt.Errorf("%w: the %s solver of %s does not factor (Factorer)", ErrOptions, p.spec.Algorithm, p.dev.Name())
	}
	fs, err := fz.Factor(ctx, bt)
	if fs == nil {
		if err == nil {
			err = fmt.Errorf("tridiag: %s returned no factors", p.dev.Name())
		}
		return nil, err
	}
	f := &Factors[T]{spec: p.spec, fs: fs}
	if p.spec.Check {
		f.coef = copyCoefficients(p.spec, bt)
	}
	return f, err
}

// copyCoefficients copies the coefficients of bt (the constants, or the
// first Len() elements of a, b and c; a is left nil for LDLT).
func copyCoefficients[T Scalar](spec Spec, bt Batch[T]) Batch[T] {
	c := Batch[T]{ConstA: bt.ConstA, ConstB: bt.ConstB, ConstC: bt.ConstC, Constant: bt.Constant}
	if bt.Constant {
		return c
	}
	n := spec.Len()
	if spec.Algorithm != LDLT {
		c.A = append([]T(nil), bt.A[:n]...)
	}
	c.B = append([]T(nil), bt.B[:n]...)
	c.C = append([]T(nil), bt.C[:n]...)
	return c
}

// Shape returns the shape of the factored batch (layout resolved).
func (f *Factors[T]) Shape() Shape { return f.spec.Shape }

// Describe says which factorization the systems got, e.g. "thomas (lu
// without pivoting), gtsv (gttrf) for 3 of 64 systems" for Auto on the
// CPU; after Close, the plan's algorithm.
func (f *Factors[T]) Describe() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if d, ok := f.fs.(Describer); ok {
		return d.Describe()
	}
	return f.spec.Algorithm.String()
}

// Solve solves the factored batch for the right-hand sides d (one batch
// in the plan's layout), writing the solutions to x (x may be d). It is
// SolveMany with one right-hand side.
func (f *Factors[T]) Solve(ctx context.Context, d, x []T) error {
	return f.SolveMany(ctx, 1, d, x)
}

// SolveMany solves the factored batch for nrhs right-hand sides. They
// are stored column-major over batches: column r (0 ≤ r < nrhs) is a
// whole batch in the plan's layout at d[r·L : (r+1)·L], where L =
// Shape().Len() is the plan's storage length, so that d holds nrhs·L
// elements at least (cuSPARSE's gtsv2 takes its n columns so, with L =
// its leading dimension). The solutions are written to x in the same
// places; x may be d (solve in place), and must not otherwise overlap it.
// The factors of a system are read once for all its columns.
//
// Each column's solution is the one Solve gives for it, bit for bit. When
// some systems fail (they broke down in Factor, or their solution is not
// finite) the error is a *BatchError with one entry per system (naming
// the first failed right-hand side when nrhs > 1), the rows of the failed
// columns of those systems hold NaN, and the other solutions are valid.
// With Options.Check every column is checked (see Plan.Check), and the
// systems that fail the check in some column are listed too.
func (f *Factors[T]) SolveMany(ctx context.Context, nrhs int, d, x []T) error {
	if err := checkNRHS(f.spec, nrhs); err != nil {
		return err
	}
	if err := checkInput(f.spec, Batch[T]{D: d, X: x}, false, nrhs); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fs == nil {
		return ErrClosed
	}
	if !f.spec.Check {
		return f.fs.SolveMany(ctx, nrhs, d, x)
	}
	orig := keepRHS(nrhs*f.spec.Len(), d, x, &f.dcopy)
	err := f.fs.SolveMany(ctx, nrhs, d, x)
	return checkColumns(f.spec, f.coef, nrhs, orig, x, err)
}

// Close releases the factors. They cannot be used after.
func (f *Factors[T]) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fs == nil {
		return nil
	}
	err := f.fs.Close()
	f.fs = nil
	f.coef = Batch[T]{}
	f.dcopy = nil
	return err
}

// SolveMany solves the batch with coefficient arrays a, b and c for nrhs
// right-hand sides, stored column-major over batches as
// Factors.SolveMany says (column r at d[r·L : (r+1)·L], L =
// Shape().Len()), writing the solutions to x (x may be d). Where the
// plan factors (Auto, Thomas, GTSV, LDLT on the CPU) each system is
// factored once, in the worker's cache, and solved for all its columns:
// the results are those of Factor followed by Factors.SolveMany, bit for
// bit, without storing the factors of the whole batch. Other algorithms
// solve column by column with Solve. Failures are reported as
// Factors.SolveMany reports them; Options.Check checks every column.
func (p *Plan[T]) SolveMany(ctx context.Context, nrhs int, a, b, c, d, x []T) error {
	bt := Batch[T]{A: a, B: b, C: c, D: d, X: x}
	if err := checkNRHS(p.spec, nrhs); err != nil {
		return err
	}
	if err := checkInput(p.spec, bt, true, nrhs); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.solver == nil {
		return ErrClosed
	}
	if !p.spec.Check {
		return p.solveMany(ctx, nrhs, bt)
	}
	orig := keepRHS(nrhs*p.spec.Len(), d, x, &p.dcopy)
	err := p.solveMany(ctx, nrhs, bt)
	return checkColumns(p.spec, bt, nrhs, orig, x, err)
}

func (p *Plan[T]) solveMany(ctx context.Context, nrhs int, bt Batch[T]) error {
	if ms, ok := p.solver.(ManySolver[T]); ok {
		return ms.SolveMany(ctx, nrhs, bt)
	}
	return solveColumns(ctx, p.solver, p.spec, nrhs, bt)
}

// solveColumns solves the nrhs columns of bt one by one with s.Solve and
// merges their failures (mergeColumnErrors).
func solveColumns[T Scalar](ctx context.Context, s Solver[T], spec Spec, nrhs int, bt Batch[T]) error {
	L := spec.Len()
	errs := make([]error, nrhs)
	for r := range nrhs {
		col := bt
		col.D, col.X = bt.D[r*L:(r+1)*L], bt.X[r*L:(r+1)*L]
		err := s.Solve(ctx, col)
		var be *BatchError
		if err != nil && !errors.As(err, &be) {
			return err
		}
		errs[r] = err
	}
	return mergeColumnErrors(spec.G, nrhs, errs)
}

// columnError names right-hand side r in the error of a system when
// there are several.
func columnError(r, nrhs int, err error) error {
	if nrhs == 1 {
		return err
	}
	return fmt.Errorf("right-hand side %d: %w", r, err)
}

// mergeColumnErrors merges the *BatchError (or nil) of each column into
// one with an entry per failed system: its first failed column, named.
func mergeColumnErrors(G, nrhs int, errs []error) error {
	seen := map[int]bool{}
	var failed []SystemError
	for r, err := range errs {
		var be *BatchError
		if !errors.As(err, &be) {
			continue
		}
		for _, f := range be.Failed {
			if seen[f.System] {
				continue
			}
			seen[f.System] = true
			f.Err = columnError(r, nrhs, f.Err)
			failed = append(failed, f)
		}
	}
	if len(failed) == 0 {
		return nil
	}
	sort.Slice(failed, func(i, j int) bool { return failed[i].System < failed[j].System })
	return &BatchError{G: G, Failed: failed}
}

// keepRHS returns d, or a copy of its first n elements in *buf when the
// solve is in place (x is d), for the accuracy check after the solve.
func keepRHS[T Scalar](n int, d, x []T, buf *[]T) []T {
	if &x[0] != &d[0] {
		return d
	}
	if len(*buf) < n {
		*buf = make([]T, n)
	}
	copy(*buf, d[:n])
	return *buf
}

// solveChecked solves bt with s and, where check, measures the solutions
// against the right-hand sides as they were (the first n elements of d,
// kept in *dcopy when the solve is in place) with measure, and merges its
// verdicts for the g systems with the solve's failures (Plan.Solve's and
// RaggedPlan.Solve's Options.Check).
func solveChecked[T Scalar](ctx context.Context, s Solver[T], check bool, n, g int, dcopy *[]T, bt Batch[T], measure func(Batch[T]) ([]Status, error)) error {
	if !check {
		return s.Solve(ctx, bt)
	}
	orig := bt
	orig.D = keepRHS(n, bt.D, bt.X, dcopy)
	err := s.Solve(ctx, bt)
	var be *BatchError
	if err != nil && !errors.As(err, &be) {
		return err
	}
	st, cerr := measure(orig)
	return mergeCheck(g, be, st, cerr)
}

// checkColumns runs the accuracy check on every column of a solve with
// the coefficients of coef, d the right-hand sides as they were, and
// merges its verdicts with the solve's error solveErr: for one column as
// Plan.Solve does; for several, each system that broke down keeps its
// error with the worst Status of its columns, and each system that fails
// the check in some column is listed once, naming its first such column.
func checkColumns[T Scalar](spec Spec, coef Batch[T], nrhs int, d, x []T, solveErr error) error {
	var be *BatchError
	if solveErr != nil && !errors.As(solveErr, &be) {
		return solveErr
	}
	L, G := spec.Len(), spec.G
	tol := specTol[T](spec)
	sts := make([][]Status, nrhs)
	cerrs := make([]error, nrhs)
	for r := range nrhs {
		bt := coef
		bt.D, bt.X = d[r*L:(r+1)*L], x[r*L:(r+1)*L]
		sts[r], cerrs[r] = checkBatch(spec, tol, bt)
	}
	if nrhs == 1 {
		return mergeCheck(G, be, sts[0], cerrs[0])
	}
	worst := make([]Status, G)
	for g := range worst {
		for r := range nrhs {
			s := sts[r][g]
			if r == 0 || s.BackwardError > worst[g].BackwardError || math.IsNaN(s.BackwardError) {
				s.Flags |= worst[g].Flags
				worst[g] = s
			} else {
				worst[g].Flags |= s.Flags
			}
		}
	}
	errs := make([]error, nrhs)
	for r, cerr := range cerrs {
		errs[r] = cerr
	}
	checked := mergeColumnErrors(G, nrhs, errs)
	var ce *BatchError
	if be == nil {
		if errors.As(checked, &ce) {
			return ce
		}
		return nil
	}
	// The systems that broke down keep their error, with the worst
	// Status of their columns.
	failed := make([]SystemError, 0, len(be.Failed))
	seen := map[int]bool{}
	for _, f := range be.Failed {
		f.Status = worst[f.System]
		f.Status.Flags |= FlagsOf(f.Err)
		failed = append(failed, f)
		seen[f.System] = true
	}
	if errors.As(checked, &ce) {
		for _, f := range ce.Failed {
			if !seen[f.System] {
				failed = append(failed, f)
			}
		}
	}
	sort.Slice(failed, func(i, j int) bool { return failed[i].System < failed[j].System })
	return &BatchError{G: G, Failed: failed}
}
