package krylov

import (
	"context"
	"fmt"
)

// Space is the vector arithmetic BiCGStab2 needs. V is a vector handle
// (a []float64 on the host, a device buffer on a GPU); every vector of one
// solve has the problem's length. The set is kept small: an
// implementation for a new kind of memory writes six methods.
//
// Methods never see aliased arguments unless stated: the solver passes
// distinct vectors to x and y.
type Space[V any] interface {
	// New returns a zero vector of the problem's length.
	New() (V, error)
	// Free releases a vector obtained from New (a no-op on the host).
	Free(v V)
	// Copy sets dst = src.
	Copy(dst, src V) error
	// Zero sets every entry of v to 0 (also where v held NaN).
	Zero(v V) error
	// Axpby sets y = α·x + β·y. With β = 1 it is the BLAS axpy and should
	// take that fast path; with β = 0, y is overwritten without being read
	// (so NaN in y does not propagate).
	Axpby(alpha float64, x V, beta float64, y V) error
	// Dots sets out[k] = xs[k]·ys[k] for every k (len(xs) == len(ys) ==
	// len(out)). Pairs may share vectors (a Gram matrix) and xs[k] may be
	// ys[k] (a squared norm). A device
	// implementation should compute them all in one pass and one transfer:
	// the solver batches every inner product it needs at a given point.
	Dots(xs, ys []V, out []float64) error
}

// Operator applies the matrix: Apply sets y = A·x. x and y are distinct.
type Operator[V any] interface {
	Apply(ctx context.Context, x, y V) error
}

// Preconditioner applies an approximate inverse: Apply sets z ≈ M⁻¹·r.
// r and z are distinct; r must be left unchanged. The solver assumes M⁻¹ is
// (close to) a fixed linear map: a float32 solve is fine, an inner iterative
// solve with a varying number of steps is not (that needs a flexible
// method).
type Preconditioner[V any] interface {
	Apply(ctx context.Context, r, z V) error
}

// OperatorFunc adapts a function to the Operator interface.
type OperatorFunc[V any] func(ctx context.Context, x, y V) error

// Apply calls f(ctx, x, y).
func (f OperatorFunc[V]) Apply(ctx context.Context, x, y V) error { return f(ctx, x, y) }

// PreconditionerFunc adapts a function to the Preconditioner interface.
type PreconditionerFunc[V any] func(ctx context.Context, r, z V) error

// Apply calls f(ctx, r, z).
func (f PreconditionerFunc[V]) Apply(ctx context.Context, r, z V) error { return f(ctx, r, z) }

// IdentityPreconditioner is M = I: Apply copies r to z. Passing a nil
// Preconditioner to BiCGStab2 has the same effect without the copies.
type IdentityPreconditioner[V any] struct {
	Space Space[V]
}

// Apply sets z = r.
func (p IdentityPreconditioner[V]) Apply(_ context.Context, r, z V) error {
	return p.Space.Copy(z, r)
}

// Dot returns x·y through sp.Dots.
func Dot[V any](sp Space[V], x, y V) (float64, error) {
	var out [1]float64
	err := sp.Dots([]V{x}, []V{y}, out[:])
	return out[0], err
}

// checkDots validates the argument lengths of a Dots call.
func checkDots(nx, ny, nout int) error {
	if nx != ny || nx != nout {
		return fmt.Errorf("%w: Dots with %d, %d vectors and %d results", ErrDimension, nx, ny, nout)
	}
	return nil
}
