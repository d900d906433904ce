//go:build cuda

package tridiaggpu

import (
	"fmt"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/tridiag"
)

// staging holds the device copies of a host-slice solve's arrays (the
// coefficients, d and x), made on first use and kept for the next solves.
// Plan and ComplexPlan share it.
type staging[T cuda.Elem] struct {
	a, b, c, d, x *cuda.Buffer[T]
}

// in copies a host solve of spec to the device: the coefficients a, b
// and c when coeffs (a nil a is skipped when skipA: an LDLT plan does not
// read it), d, and x where the layout leaves gaps between its rows (Len
// > N·G), so that the copy back keeps x's elements there. It allocates
// the buffers it lacks on dev and checks the lengths.
func (s *staging[T]) in(dev *cuda.Device, spec tridiag.Spec, coeffs, skipA bool, a, b, c, d, x []T) error {
	n := spec.Len()
	var err error
	get := func(buf **cuda.Buffer[T]) {
		if *buf == nil && err == nil {
			*buf, err = cuda.Alloc[T](dev, n)
		}
	}
	if coeffs {
		get(&s.a)
		get(&s.b)
		get(&s.c)
	}
	get(&s.d)
	get(&s.x)
	if err != nil {
		return err
	}
	type copyIn struct {
		buf *cuda.Buffer[T]
		v   []T
	}
	var ins []copyIn
	if coeffs {
		if !(skipA && a == nil) {
			ins = append(ins, copyIn{s.a, a})
		}
		ins = append(ins, copyIn{s.b, b}, copyIn{s.c, c})
	}
	ins = append(ins, copyIn{s.d, d})
	for _, h := range ins {
		if len(h.v) < n {
			return fmt.Errorf("%w: array of %d elements, need %d", tridiag.ErrLength, len(h.v), n)
		}
		if err := h.buf.CopyFrom(h.v[:n]); err != nil {
			return err
		}
	}
	if len(x) < n {
		return fmt.Errorf("%w: x has %d elements, need %d", tridiag.ErrLength, len(x), n)
	}
	if spec.Len() == spec.N*spec.G {
		return nil
	}
	return s.x.CopyFrom(x[:n])
}

// out copies the solution to x unless the solve failed other than by
// breakdowns (solveErr a *tridiag.BatchError: the failed systems' rows
// hold NaN), and returns the solve's error.
func (s *staging[T]) out(solveErr error, x []T) error {
	if solveErr != nil && !isBatch(solveErr) {
		return solveErr
	}
	if err := s.x.CopyTo(x[:s.x.Len()]); err != nil {
		return err
	}
	return solveErr
}

// free releases the buffers.
func (s *staging[T]) free() {
	for _, b := range []*cuda.Buffer[T]{s.a, s.b, s.c, s.d, s.x} {
		if b != nil {
			_ = b.Free()
		}
	}
	*s = staging[T]{}
}
