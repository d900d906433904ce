package krylov

import (
	"context"
	"fmt"
	"reflect"

	"github.com/bandsolve/bandsolve/internal/registry"
	"github.com/bandsolve/bandsolve/tridiag"
)

// CSRMatrix is a sparse matrix in compressed sparse row form, as
// *sparse.CSR is. (Package sparse builds on package banded, which uses
// this package, so the matrix is named here by its methods.)
type CSRMatrix interface {
	// CSRArrays returns the order and the arrays of the matrix: the
	// entries of row i are at columns col[rowPtr[i]:rowPtr[i+1]], with
	// values val[rowPtr[i]:rowPtr[i+1]].
	CSRArrays() (rows, cols int, rowPtr, col []int32, val []float64)
	// MulVec sets y = A·x.
	MulVec(x, y []float64) error
}

// SpaceCloser is a Space made on a device by NewSpace. Close releases
// what the device holds for the space (a GPU's stream and scratch
// memory; nothing on the CPU), not its vectors: Free them first.
type SpaceCloser[V any] interface {
	Space[V]
	Close() error
}

// OperatorCloser is an Operator made on a device by NewCSROperator.
// Close releases the device's copy of the matrix (nothing on the CPU).
type OperatorCloser[V any] interface {
	Operator[V]
	Close() error
}

// Backend makes the Krylov spaces and sparse products of one kind of
// device. The CPU's is built in; others come from the backends registered
// with RegisterBackend. Users call NewSpace and NewCSROperator rather
// than these methods.
type Backend interface {
	// Vector is the device's vector type V, the type parameter of its
	// spaces and operators ([]float64 on the CPU).
	Vector() reflect.Type
	// NewSpace returns a SpaceCloser[V] of vectors of length n ≥ 1,
	// where V is Vector().
	NewSpace(n int) (any, error)
	// NewCSROperator returns an OperatorCloser[V] computing products with
	// a, a square matrix whose arrays are consistent, where V is
	// Vector().
	NewCSROperator(a CSRMatrix) (any, error)
}

var backends registry.Registry[Backend]

// RegisterBackend adds the Krylov spaces of another kind of device: open
// returns the backend of dev, or false when dev is not of its kind. The
// GPU's backend is registered by package github.com/bandsolve/bandsolve/gpu.
func RegisterBackend(open func(dev tridiag.Device) (Backend, bool)) {
	backends.Add(func(dev any) (Backend, bool) {
		d, ok := dev.(tridiag.Device)
		if !ok {
			return nil, false
		}
		return open(d)
	})
}

// BackendOf returns the backend that serves dev: the built-in one for the
// CPU (nil meaning tridiag.DefaultCPU()), else the registered backend of
// dev's kind. Without one, the error wraps ErrInvalidOption and names the
// device.
func BackendOf(dev tridiag.Device) (Backend, error) {
	if dev == nil {
		dev = tridiag.DefaultCPU()
	}
	if _, ok := dev.(*tridiag.CPU); ok {
		return cpuBackend{}, nil
	}
	if b, ok := backends.Find(dev); ok {
		return b, nil
	}
	return nil, fmt.Errorf("%w: no Krylov spaces for device %s (%T): for a GPU, build with -tags cuda and import github.com/bandsolve/bandsolve/gpu", ErrInvalidOption, dev.Name(), dev)
}

// NewSpace returns the space of float64 vectors of length n ≥ 1 on dev
// (nil meaning the CPU), for BiCGStab2. V is the device's vector type:
// []float64 on the CPU, where the space is HostSpace{N: n}, and
// *cuda.Buffer[float64] on a GPU. Another V fails with an error wrapping
// ErrInvalidOption that names the device and the type it takes. Close the
// space when done.
func NewSpace[V any](dev tridiag.Device, n int) (SpaceCloser[V], error) {
	if n < 1 {
		return nil, fmt.Errorf("%w: a space of length %d", ErrDimension, n)
	}
	dev, be, err := backendFor[V](dev)
	if err != nil {
		return nil, err
	}
	s, err := be.NewSpace(n)
	if err != nil {
		return nil, fmt.Errorf("krylov: a space of length %d on %s: %w", n, dev.Name(), err)
	}
	sp, ok := s.(SpaceCloser[V])
	if !ok {
		closeAny(s)
		return nil, fmt.Errorf("%w: the backend of %s made a %T, not a space of %v", ErrInvalidOption, dev.Name(), s, reflect.TypeFor[V]())
	}
	return sp, nil
}

// NewCSROperator returns the product y = A·x with the square sparse matrix
// a (a *sparse.CSR) on dev (nil meaning the CPU), for BiCGStab2 with a
// space of NewSpace on the same device: on the CPU, a.MulVec; on a GPU, CSR
// products with a copy of a in device memory, which Close frees. V is the
// device's vector type, as for NewSpace. A matrix that is not square or
// whose arrays are inconsistent fails with an error wrapping ErrDimension.
//
// On a GPU each product returns when y is complete, so the operator may be
// used with the (synchronous) space of NewSpace; package gpu's
// Space.Operator orders the products with a deferred space's work instead.
func NewCSROperator[V any](dev tridiag.Device, a CSRMatrix) (OperatorCloser[V], error) {
	if err := checkCSRMatrix(a); err != nil {
		return nil, err
	}
	dev, be, err := backendFor[V](dev)
	if err != nil {
		return nil, err
	}
	o, err := be.NewCSROperator(a)
	if err != nil {
		return nil, fmt.Errorf("krylov: a CSR operator on %s: %w", dev.Name(), err)
	}
	op, ok := o.(OperatorCloser[V])
	if !ok {
		closeAny(o)
		return nil, fmt.Errorf("%w: the backend of %s made a %T, not an operator on %v", ErrInvalidOption, dev.Name(), o, reflect.TypeFor[V]())
	}
	return op, nil
}

// backendFor returns dev (the default CPU for nil) and its backend,
// checking that the device's vectors are V.
func backendFor[V any](dev tridiag.Device) (tridiag.Device, Backend, error) {
	if dev == nil {
		dev = tridiag.DefaultCPU()
	}
	be, err := BackendOf(dev)
	if err != nil {
		return nil, nil, err
	}
	if want, got := be.Vector(), reflect.TypeFor[V](); want != got {
		return nil, nil, fmt.Errorf("%w: device %s takes vectors of type %v, not %v", ErrInvalidOption, dev.Name(), want, got)
	}
	return dev, be, nil
}

// closeAny closes x when it has a Close method.
func closeAny(x any) {
	if c, ok := x.(interface{ Close() error }); ok {
		_ = c.Close()
	}
}

// checkCSRMatrix checks that a is a square matrix with consistent arrays:
// rowPtr starts at 0, never decreases and ends at len(col) = len(val),
// and every column is in [0, n).
func checkCSRMatrix(a CSRMatrix) error {
	if a == nil {
		return fmt.Errorf("%w: nil matrix", ErrDimension)
	}
	if v := reflect.ValueOf(a); v.Kind() == reflect.Pointer && v.IsNil() {
		return fmt.Errorf("%w: nil matrix", ErrDimension)
	}
	n, m, rowPtr, col, val := a.CSRArrays()
	if n < 1 || n != m {
		return fmt.Errorf("%w: CSR matrix of order %d×%d: the operator needs a square matrix", ErrDimension, n, m)
	}
	if len(rowPtr) != n+1 || rowPtr[0] != 0 || int(rowPtr[n]) != len(col) || len(col) != len(val) {
		return fmt.Errorf("%w: CSR arrays inconsistent (n=%d, len(rowPtr)=%d, len(col)=%d, len(val)=%d)",
			ErrDimension, n, len(rowPtr), len(col), len(val))
	}
	for i := range n {
		if rowPtr[i+1] < rowPtr[i] {
			return fmt.Errorf("%w: CSR row pointers decrease at row %d", ErrDimension, i)
		}
	}
	for p, j := range col {
		if j < 0 || int(j) >= n {
			return fmt.Errorf("%w: CSR entry %d has column %d outside [0, %d)", ErrDimension, p, j, n)
		}
	}
	return nil
}

// cpuBackend is the CPU's: HostSpace and the matrix's own MulVec.
type cpuBackend struct{}

func (cpuBackend) Vector() reflect.Type { return reflect.TypeFor[[]float64]() }

func (cpuBackend) NewSpace(n int) (any, error) { return HostSpace{N: n}, nil }

func (cpuBackend) NewCSROperator(a CSRMatrix) (any, error) { return hostCSR{a}, nil }

// hostCSR is the product with a CSR matrix on the host.
type hostCSR struct{ a CSRMatrix }

// Apply sets y = A·x.
func (h hostCSR) Apply(ctx context.Context, x, y []float64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := h.a.MulVec(x, y); err != nil {
		return fmt.Errorf("%w: %w", ErrDimension, err)
	}
	return nil
}

// Close does nothing: the matrix stays its owner's.
func (hostCSR) Close() error { return nil }
