//go:build cuda

package krylovgpu

import (
	"reflect"
	"sync"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/krylov"
	"github.com/bandsolve/bandsolve/tridiag"
)

var (
	_ krylov.SpaceCloser[*cuda.Buffer[float64]]    = (*Space)(nil)
	_ krylov.OperatorCloser[*cuda.Buffer[float64]] = (*CSR)(nil)
)

// backend is the krylov.Backend of one GPU: Space and CSR on it.
type backend struct{ d *cuda.Device }

func (backend) Vector() reflect.Type { return reflect.TypeFor[*cuda.Buffer[float64]]() }

func (b backend) NewSpace(n int) (any, error) {
	sp, err := NewSpace(b.d, n)
	if err != nil {
		return nil, err
	}
	return sp, nil
}

func (b backend) NewCSROperator(a krylov.CSRMatrix) (any, error) {
	n, m, rowPtr, col, val := a.CSRArrays()
	g, err := uploadCSR(b.d, n, m, rowPtr, col, val)
	if err != nil {
		return nil, err
	}
	return g, nil
}

var registerOnce sync.Once

// Register makes Space and CSR the backend of krylov.NewSpace and
// krylov.NewCSROperator for a *cuda.Device: a space of
// *cuda.Buffer[float64] vectors (NewSpace, synchronous) and CSR products
// (UploadCSR's, each returning when y is complete). Calling it again does
// nothing.
func Register() {
	registerOnce.Do(func() {
		krylov.RegisterBackend(func(dev tridiag.Device) (krylov.Backend, bool) {
			d, ok := dev.(*cuda.Device)
			if !ok || d == nil {
				return nil, false
			}
			return backend{d}, true
		})
	})
}
