package tridiag

import (
	"errors"
	"fmt"
	"strings"

	"github.com/bandsolve/bandsolve/internal/memguard"
	"github.com/bandsolve/bandsolve/tridiag/internal/tri"
)

var (
	// ErrShape reports a bad shape or layout.
	ErrShape = errors.New("tridiag: bad shape")
	// ErrLength reports an array too short for the plan's shape.
	ErrLength = errors.New("tridiag: bad array length")
	// ErrNonFinite reports NaN or ±Inf in the input.
	ErrNonFinite = errors.New("tridiag: non-finite input")
	// ErrZeroPivot reports that an algorithm without pivoting met a zero
	// or non-finite divisor. A pivoting algorithm (GTSV) may still solve
	// the system.
	ErrZeroPivot = tri.ErrZeroPivot
	// ErrSingular reports a matrix that is singular to working precision,
	// found by the pivoting solver.
	ErrSingular = tri.ErrSingular
	// ErrNotPositiveDefinite reports that LDLT met a pivot that is not
	// positive (or not finite): the symmetric matrix it read is not
	// positive definite. Thomas or GTSV may still solve the system.
	ErrNotPositiveDefinite = tri.ErrNotPositiveDefinite
	// ErrNonFiniteResult reports a system whose solution overflowed (or
	// became NaN) although every pivot was non-zero: the algorithm is not
	// stable enough for the matrix, or the matrix is too ill-conditioned.
	ErrNonFiniteResult = errors.New("tridiag: non-finite result")
	// ErrBreakdown is what GPU solves report for a failed system: the
	// kernels flag a zero pivot and a non-finite result alike, so it
	// matches both ErrZeroPivot and ErrNonFiniteResult.
	ErrBreakdown = fmt.Errorf("%w or %w", ErrZeroPivot, ErrNonFiniteResult)
	// ErrOptions reports an invalid option (algorithm, slice size, …).
	ErrOptions = errors.New("tridiag: bad options")
	// ErrMemory reports a plan whose workspace does not fit the memory
	// the process can have (physical memory, cgroup limit, RLIMIT_AS). It
	// is the same value as npy.ErrMemory, sparse.ErrMemory and
	// banded.ErrMemory.
	ErrMemory = memguard.ErrTooLarge
	// ErrClosed reports use of a plan, or of Factors, after Close.
	ErrClosed = errors.New("tridiag: used after Close")
)

// PivotError reports the row at which one system's elimination broke down.
type PivotError = tri.PivotError

// SystemError is the failure of one system of a batch. Package banded
// reports its batches with the same type (banded.SystemError is an alias).
type SystemError struct {
	System int // index g of the system in the batch
	Row    int // row of the system where it failed, −1 if unknown
	// Col is the column of the failed entry where the solver names one
	// (the banded factorizations, −1 there when unknown); tridiagonal
	// solvers leave it 0.
	Col int
	Err error // ErrZeroPivot, ErrSingular, ErrInaccurate, …
	// Status holds the findings of the accuracy check (Options.Check,
	// Plan.Check) or of refinement; the zero value when none ran.
	Status Status
}

func (e SystemError) Error() string {
	if e.Row >= 0 {
		return fmt.Sprintf("system %d, row %d: %v", e.System, e.Row, e.Err)
	}
	return fmt.Sprintf("system %d: %v", e.System, e.Err)
}

// Unwrap returns the cause.
func (e SystemError) Unwrap() error { return e.Err }

// BatchError lists the systems of a batch that failed, like LAPACK's info
// for each one. The solutions of the other systems are valid; the rows of
// a system that broke down are set to NaN so that they cannot be mistaken
// for a solution (a system that only fails the accuracy check keeps its
// computed solution). Package banded uses the same type
// (banded.BatchError is an alias).
type BatchError struct {
	G      int           // systems in the batch (0 when the reporter does not say)
	Failed []SystemError // in increasing System order
}

func (e *BatchError) Error() string {
	var sb strings.Builder
	if e.G > 0 {
		fmt.Fprintf(&sb, "%d of %d systems failed", len(e.Failed), e.G)
	} else {
		fmt.Fprintf(&sb, "%d system(s) of the batch failed", len(e.Failed))
	}
	for i, f := range e.Failed {
		if i == 3 {
			fmt.Fprintf(&sb, "; … (%d more)", len(e.Failed)-3)
			break
		}
		sb.WriteString("; ")
		sb.WriteString(f.Error())
	}
	return sb.String()
}

// Systems returns the indices of the failed systems, in increasing order.
func (e *BatchError) Systems() []int {
	s := make([]int, len(e.Failed))
	for i, f := range e.Failed {
		s[i] = f.System
	}
	return s
}

// Unwrap returns the causes, so that errors.Is(err, ErrZeroPivot) works.
func (e *BatchError) Unwrap() []error {
	errs := make([]error, len(e.Failed))
	for i, f := range e.Failed {
		errs[i] = f
	}
	return errs
}

// Status returns one code per system, LAPACK style: 0 for success, i+1
// when the system failed at row i, −1 when it failed at an unknown row.
// Its length is G (or one past the last failed system when G is 0).
func (e *BatchError) Status() []int {
	g := e.G
	for _, f := range e.Failed {
		g = max(g, f.System+1)
	}
	st := make([]int, g)
	for _, f := range e.Failed {
		if f.Row >= 0 {
			st[f.System] = f.Row + 1
		} else {
			st[f.System] = -1
		}
	}
	return st
}
