//go:build cuda

package bandedgpu

import (
	"context"
	"sync"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/tridiag"
)

var registerOnce sync.Once

// Register adds the GPU batch solver to package banded: a
// banded.BatchPlan on a *cuda.Device then solves with a BatchPlan. It is
// safe to call more than once.
func Register() {
	registerOnce.Do(func() {
		banded.RegisterBackend(func(dev tridiag.Device) (banded.BatchBackend, bool) {
			d, ok := dev.(*cuda.Device)
			if !ok || d == nil {
				return nil, false
			}
			return backend{d}, true
		})
	})
}

// backend builds banded.BatchSolvers on one device, real
// (banded.BatchBackend) and complex (banded.ComplexBatchBackend).
type backend struct{ dev *cuda.Device }

var _ banded.ComplexBatchBackend = backend{}

func (b backend) NewBatchSolver32(spec banded.BatchSpec) (banded.BatchSolver[float32], error) {
	return newSolver[float32](b.dev, spec)
}

func (b backend) NewBatchSolver64(spec banded.BatchSpec) (banded.BatchSolver[float64], error) {
	return newSolver[float64](b.dev, spec)
}

// NewBatchSolverC64 solves complex64 batches with partial pivoting
// (band_batch_cpivot_f32_k*; banded.NewBatchPlan has checked Pivot).
func (b backend) NewBatchSolverC64(spec banded.BatchSpec) (banded.BatchSolver[complex64], error) {
	return newSolver[complex64](b.dev, spec)
}

// NewBatchSolverC128 solves complex128 batches with partial pivoting
// (band_batch_cpivot_f64_k*).
func (b backend) NewBatchSolverC128(spec banded.BatchSpec) (banded.BatchSolver[complex128], error) {
	return newSolver[complex128](b.dev, spec)
}

// OptionsFor translates banded.BatchOptions to the plan's Options. Refine
// and Check are banded.BatchPlan's (on the host); Workers tunes the CPU
// only.
func OptionsFor(d *cuda.Device, o banded.BatchOptions) (Options, error) {
	return Options{Pivot: o.Pivot, Factor: o.Factor, CheckFinite: o.CheckFinite}, nil
}

// solver is a BatchPlan solving host slices for banded.BatchPlan.
type solver[T banded.Scalar] struct{ p *BatchPlan[T] }

func newSolver[T banded.Scalar](d *cuda.Device, spec banded.BatchSpec) (*solver[T], error) {
	opts, err := OptionsFor(d, spec.Options)
	if err != nil {
		return nil, err
	}
	p, err := NewBatchPlan[T](d, spec.N, spec.K, spec.G, spec.Layout, opts)
	if err != nil {
		return nil, err
	}
	return &solver[T]{p}, nil
}

func (s *solver[T]) Solve(ctx context.Context, a, rhs, x []T) (banded.BatchResult, error) {
	return s.p.Solve(ctx, a, rhs, x)
}

func (s *solver[T]) Describe() string { return s.p.Describe() }

func (s *solver[T]) Close() error { return s.p.Close() }
