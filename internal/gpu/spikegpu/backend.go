//go:build cuda

package spikegpu

import (
	"context"
	"sync"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/spike"
	"github.com/bandsolve/bandsolve/tridiag"
)

var registerOnce sync.Once

// Register adds the GPU SPIKE solver to package spike: a spike.Plan on a
// *cuda.Device then factors and solves with a Plan. It is safe to call
// more than once.
func Register() {
	registerOnce.Do(func() {
		spike.RegisterBackend(func(dev tridiag.Device) (spike.Backend, bool) {
			d, ok := dev.(*cuda.Device)
			if !ok || d == nil {
				return nil, false
			}
			return backend{d}, true
		})
	})
}

// backend builds spike.Solvers on one device.
type backend struct{ dev *cuda.Device }

func (b backend) NewSolver32(spec spike.Spec) (spike.Solver[float32], error) {
	return newSolver[float32](b.dev, spec)
}

func (b backend) NewSolver64(spec spike.Spec) (spike.Solver[float64], error) {
	return newSolver[float64](b.dev, spec)
}

// solver is a Plan factoring and solving host data for spike.Plan.
type solver[T tridiag.Float] struct{ p *Plan[T] }

func newSolver[T tridiag.Float](d *cuda.Device, spec spike.Spec) (*solver[T], error) {
	p, err := NewPlan[T](d, spec.N, spec.K, spec.Options)
	if err != nil {
		return nil, err
	}
	return &solver[T]{p}, nil
}

func (s *solver[T]) Factor(ctx context.Context, A *banded.Band[T]) error {
	return s.p.FactorBand(ctx, A)
}

func (s *solver[T]) Solve(ctx context.Context, b, x []T) error { return s.p.SolveHost(ctx, b, x) }

func (s *solver[T]) Bounds() []int { return s.p.Bounds() }

func (s *solver[T]) Boosts() []spike.Boost { return s.p.Boosts() }

func (s *solver[T]) ReducedBoosts() []int { return s.p.ReducedBoosts() }

func (s *solver[T]) Describe() string { return s.p.Describe() }

func (s *solver[T]) Close() error { return s.p.Close() }
