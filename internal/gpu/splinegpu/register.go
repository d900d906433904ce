//go:build cuda

package splinegpu

import (
	"sync"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/spline"
	"github.com/bandsolve/bandsolve/tridiag"
)

var (
	_ spline.Engine[float32] = (*Evaluator[float32])(nil)
	_ spline.Engine[float64] = (*Evaluator[float64])(nil)
)

var registerOnce sync.Once

// Register makes Evaluator the backend of spline.NewEvaluator for a
// *cuda.Device: Eval and Integrate of host slices on the GPU. Calling it
// again does nothing.
func Register() {
	registerOnce.Do(func() {
		spline.RegisterBackend(func(dev tridiag.Device) (spline.Backend, bool) {
			d, ok := dev.(*cuda.Device)
			if !ok || d == nil {
				return nil, false
			}
			return backend{d}, true
		})
	})
}

// backend builds the Evaluators of one device.
type backend struct{ d *cuda.Device }

func (b backend) NewEngine32() (spline.Engine[float32], error) { return NewEvaluator[float32](b.d) }

func (b backend) NewEngine64() (spline.Engine[float64], error) { return NewEvaluator[float64](b.d) }
