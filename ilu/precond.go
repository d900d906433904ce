package ilu

import (
	"context"
	"errors"
	"fmt"

	"github.com/bandsolve/bandsolve/krylov"
	"github.com/bandsolve/bandsolve/sparse"
	"github.com/bandsolve/bandsolve/sptrsv"
	"github.com/bandsolve/bandsolve/tridiag"
)

// Preconditioner applies M⁻¹ = U⁻¹L⁻¹ (ILU(0)) or L⁻ᵀL⁻¹ (IC(0)) by two
// triangular solves through sptrsv plans, in precision T. A
// Preconditioner[float64] is a krylov.Preconditioner[[]float64]; the Apply
// method of a Preconditioner[float32] is the float32 solve that
// krylov.NewMixedPrecision takes. The plans hold their own copy of the
// factors' values: after Factors.Refactor, make a new Preconditioner.
// Concurrent Apply calls are safe on the CPU.
type Preconditioner[T sptrsv.Float] struct {
	n            int
	kind         Kind
	lower, upper *sptrsv.Plan[T]
}

var _ krylov.Preconditioner[[]float64] = (*Preconditioner[float64])(nil)

// NewPreconditioner analyses the two triangles of f for solves with
// algorithm alg on dev (nil: the CPU; see sptrsv.NewPlan). For ILU(0) both
// solves read f's combined factors (the lower one with a unit diagonal);
// for IC(0) the upper solve is with Lᵀ, built once here. The errors are
// sptrsv.NewPlan's, naming the triangle.
func NewPreconditioner[T sptrsv.Float](f *Factors, dev tridiag.Device, alg sptrsv.Algorithm) (*Preconditioner[T], error) {
	if f == nil {
		return nil, errors.New("ilu: preconditioner of nil factors")
	}
	lower, lo, upper, up := f.Triangles()
	pl, err := sptrsv.NewPlan[T](dev, lower, lo, alg)
	if err != nil {
		return nil, fmt.Errorf("ilu: %s preconditioner of order %d: lower triangle: %w", f.pat.Kind, f.pat.N, err)
	}
	pu, err := sptrsv.NewPlan[T](dev, upper, up, alg)
	if err != nil {
		_ = pl.Close()
		return nil, fmt.Errorf("ilu: %s preconditioner of order %d: upper triangle: %w", f.pat.Kind, f.pat.N, err)
	}
	return &Preconditioner[T]{n: f.pat.N, kind: f.pat.Kind, lower: pl, upper: pu}, nil
}

// Triangles returns the two triangular solves of M⁻¹ = U⁻¹L⁻¹ as sptrsv
// takes them: for ILU(0) both triangles of the combined factors LU() (the
// lower one with a unit diagonal), for IC(0) L and Lᵀ (U(), built once).
func (f *Factors) Triangles() (lower *sparse.CSR, lo sptrsv.Options, upper *sparse.CSR, up sptrsv.Options) {
	if f.pat.Kind == KindILU0 {
		a := f.LU()
		return a, sptrsv.Options{Triangle: sptrsv.Lower, Part: sptrsv.TrianglePart, UnitDiagonal: true},
			a, sptrsv.Options{Triangle: sptrsv.Upper, Part: sptrsv.TrianglePart}
	}
	return f.LU(), sptrsv.Options{Triangle: sptrsv.Lower}, f.U(), sptrsv.Options{Triangle: sptrsv.Upper}
}

// Apply sets z = M⁻¹·r: z = L⁻¹r, then z = U⁻¹z (Lᵀ for IC(0)). r is not
// modified; r and z must not overlap.
func (p *Preconditioner[T]) Apply(ctx context.Context, r, z []T) error {
	if len(r) != p.n || len(z) != p.n {
		return fmt.Errorf("%w: %s preconditioner of order %d with len(r) = %d, len(z) = %d", ErrShape, p.kind, p.n, len(r), len(z))
	}
	if err := p.lower.Solve(ctx, r, z); err != nil {
		return fmt.Errorf("ilu: %s preconditioner: lower solve: %w", p.kind, err)
	}
	if err := p.upper.Solve(ctx, z, z); err != nil {
		return fmt.Errorf("ilu: %s preconditioner: upper solve: %w", p.kind, err)
	}
	return nil
}

// Algorithms returns the solves the two plans run (Auto's choices when
// asked), lower first.
func (p *Preconditioner[T]) Algorithms() (lower, upper sptrsv.Algorithm) {
	return p.lower.Algorithm(), p.upper.Algorithm()
}

// Close releases what a device holds for the two plans (nothing on the
// CPU).
func (p *Preconditioner[T]) Close() error {
	return errors.Join(p.lower.Close(), p.upper.Close())
}
