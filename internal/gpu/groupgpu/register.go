//go:build cuda

package groupgpu

import (
	"context"
	"sync"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/tridiag"
)

// Register adds the group solvers to tridiag: tridiag.NewPlan then
// solves on a *cuda.Group, each GPU copying its share of the host slices
// in and out. Calls after the first do nothing.
func Register() {
	register.Do(func() {
		tridiag.RegisterBackend(func(dev tridiag.Device) (tridiag.Backend, bool) {
			g, ok := dev.(*cuda.Group)
			if !ok || g == nil {
				return nil, false
			}
			return backend{g}, true
		})
	})
}

var register sync.Once

// backend builds the host-slice solvers of tridiag.NewPlan on a group.
type backend struct{ g *cuda.Group }

// NewSolver32 is a group plan for float32 host slices.
func (b backend) NewSolver32(spec tridiag.Spec) (tridiag.Solver[float32], error) {
	p, err := NewPlan[float32](b.g, spec.Shape, spec.Options)
	if err != nil {
		return nil, err
	}
	return hostSolver[float32]{p}, nil
}

// NewSolver64 is a group plan for float64 host slices.
func (b backend) NewSolver64(spec tridiag.Spec) (tridiag.Solver[float64], error) {
	p, err := NewPlan[float64](b.g, spec.Shape, spec.Options)
	if err != nil {
		return nil, err
	}
	return hostSolver[float64]{p}, nil
}

// hostSolver solves host slices with a group plan (tridiag.Solver).
type hostSolver[T tridiag.Float] struct{ p *Plan[T] }

func (h hostSolver[T]) Solve(ctx context.Context, b tridiag.Batch[T]) error {
	if b.Constant {
		return h.p.SolveConst(ctx, b.ConstA, b.ConstB, b.ConstC, b.D, b.X)
	}
	return h.p.Solve(ctx, b.A, b.B, b.C, b.D, b.X)
}

func (h hostSolver[T]) Close() error { return h.p.Close() }

// Describe says how the group plan runs (Plan.Describe).
func (h hostSolver[T]) Describe() string { return h.p.Describe() }

var (
	_ tridiag.Backend   = backend{}
	_ tridiag.Describer = hostSolver[float32]{}
	_ tridiag.Device    = (*cuda.Group)(nil)
)
