package spline

import (
	"context"

	"github.com/bandsolve/bandsolve/internal/registry"
	"github.com/bandsolve/bandsolve/tridiag"
)

// Backend builds the evaluators of one kind of device other than the CPU.
// The GPU's registers itself when package github.com/bandsolve/bandsolve/gpu
// is imported; users call NewEvaluator rather than these methods.
type Backend interface {
	NewEngine32() (Engine[float32], error)
	NewEngine64() (Engine[float64], error)
}

// Engine evaluates and integrates batches of curves on a device. Evaluator
// checks every call's shapes before handing it on, and runs the calls of
// one engine one at a time. An engine's results are the CPU evaluator's:
// Eval writes every quantity out names and Integrate every integral, as
// Evaluator documents them.
type Engine[T tridiag.Float] interface {
	Eval(ctx context.Context, cv *Curves[T], pts Points[T], out Out[T]) error
	Integrate(ctx context.Context, cv *Curves[T], a, b, out []T) error
	Close() error
}

var backends registry.Registry[Backend]

// RegisterBackend adds the evaluators of another kind of device: open
// returns the backend of dev, or false when dev is not of its kind.
func RegisterBackend(open func(dev tridiag.Device) (Backend, bool)) {
	backends.Add(func(dev any) (Backend, bool) {
		d, ok := dev.(tridiag.Device)
		if !ok {
			return nil, false
		}
		return open(d)
	})
}

// newEngine returns the engine of T on dev from its registered backend, or
// false when no backend serves dev.
func newEngine[T tridiag.Float](dev tridiag.Device) (Engine[T], bool, error) {
	b, ok := backends.Find(dev)
	if !ok {
		return nil, false, nil
	}
	var e any
	var err error
	if isFloat32[T]() {
		e, err = b.NewEngine32()
	} else {
		e, err = b.NewEngine64()
	}
	if err != nil {
		return nil, true, err
	}
	return e.(Engine[T]), true, nil
}
