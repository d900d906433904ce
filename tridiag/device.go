package tridiag

import (
	"context"
)

// Float is the element type: float32 or float64.
type Float interface {
	float32 | float64
}

// Device builds solvers. The CPU device (NewCPU) is always available;
// package cuda provides a GPU device when built with the cuda tag. Users
// call NewPlan rather than these methods.
type Device interface {
	// Name describes the device, e.g. "cpu (8 workers)".
	Name() string
	// NewSolver32 and NewSolver64 build a solver for a validated spec.
	NewSolver32(spec Spec) (Solver[float32], error)
	NewSolver64(spec Spec) (Solver[float64], error)
}

// Batch is the data of one solve. Either A, B and C hold one coefficient
// per row in the plan's layout, or Constant is true and ConstA, ConstB and
// ConstC hold the coefficients of every row of every system. X may be the
// same slice as D (solve in place).
type Batch[T Float] struct {
	A, B, C                []T
	ConstA, ConstB, ConstC T
	Constant               bool
	D, X                   []T
}

// Solver solves batches of one spec. Implementations receive input that
// Plan has already checked (lengths, and finiteness unless the spec says
// to skip it).
type Solver[T Float] interface {
	Solve(ctx context.Context, b Batch[T]) error
	Close() error
}

// Describer is implemented by solvers that can say how they run: the
// algorithm Auto resolved to and, where the device has choices, how it
// launches it. Plan.Describe uses it.
type Describer interface {
	Describe() string
}
