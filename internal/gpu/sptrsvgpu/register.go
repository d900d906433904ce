//go:build cuda

package sptrsvgpu

import (
	"fmt"
	"sync"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/sparse"
	"github.com/bandsolve/bandsolve/sptrsv"
	"github.com/bandsolve/bandsolve/tridiag"
)

// backend is the sptrsv.Backend of one GPU.
type backend struct{ d *cuda.Device }

func (b backend) NewPlan(a *sparse.CSR, opts sptrsv.Options, alg sptrsv.Algorithm, f64 bool) (sptrsv.DevicePlan, error) {
	if f64 {
		p, err := NewPlan[float64](b.d, a, opts, Options{Algorithm: alg})
		if err != nil {
			return nil, err
		}
		return hostPlan[float64]{p}, nil
	}
	p, err := NewPlan[float32](b.d, a, opts, Options{Algorithm: alg})
	if err != nil {
		return nil, err
	}
	return hostPlan[float32]{p}, nil
}

// hostPlan is a Plan as an sptrsv.DevicePlan: solves with host vectors.
type hostPlan[T Float] struct{ *Plan[T] }

func (h hostPlan[T]) Solve(b, x any) error {
	bt, ok1 := b.([]T)
	xt, ok2 := x.([]T)
	if !ok1 || !ok2 {
		return fmt.Errorf("%w: vectors of type %T and %T for a plan of %T", sptrsv.ErrShape, b, x, T(0))
	}
	return h.Plan.Solve(bt, xt)
}

var registerOnce sync.Once

// Register makes the GPU plans the backend of sptrsv.NewPlan for a
// *cuda.Device. Calling it again does nothing.
func Register() {
	registerOnce.Do(func() {
		sptrsv.RegisterBackend(func(dev tridiag.Device) (sptrsv.Backend, bool) {
			d, ok := dev.(*cuda.Device)
			if !ok || d == nil {
				return nil, false
			}
			return backend{d}, true
		})
	})
}
