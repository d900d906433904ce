package tridiag

import (
	"context"
	"fmt"

	"github.com/bandsolve/bandsolve/internal/registry"
)

// Float is the real element type: float32 or float64.
type Float interface {
	float32 | float64
}

// Complex is the complex element type: complex64 or complex128.
type Complex interface {
	complex64 | complex128
}

// Scalar is the element type of a Plan: a Float or a Complex. Real and
// complex systems share the Plan API; which algorithms and devices solve
// complex ones is said in the package documentation ("Complex systems").
type Scalar interface {
	float32 | float64 | complex64 | complex128
}

// Device is where solves run: the CPU (NewCPU, DefaultCPU) or a GPU
// (cuda.Device, built with the cuda tag, with package
// github.com/bandsolve/bandsolve/gpu imported to bring in the GPU
// solvers). Every domain of the module (tridiag, banded, spike, krylov)
// takes a Device, so that moving to a GPU is changing one argument.
type Device interface {
	// Name describes the device, e.g. "cpu (8 workers)".
	Name() string
}

// Backend builds the solvers of one device. The CPU is its own backend;
// other devices get theirs from the backends registered with
// RegisterBackend. Users call NewPlan rather than these methods.
type Backend interface {
	// NewSolver32 and NewSolver64 build a solver for a validated spec.
	NewSolver32(spec Spec) (Solver[float32], error)
	NewSolver64(spec Spec) (Solver[float64], error)
}

// ComplexBackend is implemented by backends that solve complex systems.
// The CPU does; a device whose backend does not implement it makes
// NewPlan[complex64] and NewPlan[complex128] fail with an error wrapping
// ErrOptions that names the device.
type ComplexBackend interface {
	// NewSolverC64 and NewSolverC128 build a solver for a validated spec.
	NewSolverC64(spec Spec) (Solver[complex64], error)
	NewSolverC128(spec Spec) (Solver[complex128], error)
}

var backends registry.Registry[Backend]

// RegisterBackend adds the solvers of another kind of device: open
// returns the backend of dev, or false when dev is not of its kind. The
// GPU solvers register themselves when package
// github.com/bandsolve/bandsolve/gpu is imported.
func RegisterBackend(open func(dev Device) (Backend, bool)) {
	backends.Add(func(dev any) (Backend, bool) {
		d, ok := dev.(Device)
		if !ok {
			return nil, false
		}
		return open(d)
	})
}

// BackendOf returns the backend that solves on dev: dev itself when it is
// one (the CPU), else the registered backend that serves it.
func BackendOf(dev Device) (Backend, error) {
	if b, ok := dev.(Backend); ok {
		return b, nil
	}
	if b, ok := backends.Find(dev); ok {
		return b, nil
	}
	return nil, fmt.Errorf("%w: no tridiagonal solvers for device %s (%T): for a GPU, build with -tags cuda and import github.com/bandsolve/bandsolve/gpu", ErrOptions, dev.Name(), dev)
}

// Batch is the data of one solve. Either A, B and C hold one coefficient
// per row in the plan's layout, or Constant is true and ConstA, ConstB and
// ConstC hold the coefficients of every row of every system. X may be the
// same slice as D (solve in place).
type Batch[T Scalar] struct {
	A, B, C                []T
	ConstA, ConstB, ConstC T
	Constant               bool
	D, X                   []T
}

// Solver solves batches of one spec. Implementations receive input that
// Plan has already checked (lengths, and finiteness unless the spec says
// to skip it).
type Solver[T Scalar] interface {
	Solve(ctx context.Context, b Batch[T]) error
	Close() error
}

// Describer is implemented by solvers that can say how they run: the
// algorithm Auto resolved to and, where the device has choices, how it
// launches it. Plan.Describe uses it.
type Describer interface {
	Describe() string
}
