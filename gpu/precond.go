//go:build cuda

package gpu

import (
	"context"
	"errors"
	"fmt"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/ilu"
	"github.com/bandsolve/bandsolve/internal/gpu/sptrsvgpu"
	"github.com/bandsolve/bandsolve/krylov"
	"github.com/bandsolve/bandsolve/sptrsv"
)

// ILUPreconditioner applies M⁻¹ = U⁻¹L⁻¹ of an ILU(0) or IC(0)
// factorization (U = Lᵀ for IC(0)) to device vectors with two sparse
// triangular solves on the GPU: the krylov.Preconditioner of krylov.CG,
// BiCGStab and BiCGStab2 on a Space. It holds its own copy of the
// factors' values (after Factors.Refactor, make a new one). Its Apply
// calls are not safe for concurrent use.
type ILUPreconditioner struct {
	lower, upper *sptrsvgpu.Plan[float64]
	tmp          *cuda.Buffer[float64]
}

var _ krylov.Preconditioner[*cuda.Buffer[float64]] = (*ILUPreconditioner)(nil)

// NewILUPreconditioner analyses the two triangles of f on dev for solves
// by opts (Auto by default; see TrsvOptions).
func NewILUPreconditioner(dev *cuda.Device, f *ilu.Factors, opts TrsvOptions) (*ILUPreconditioner, error) {
	if f == nil {
		return nil, errors.New("gpu: ILU preconditioner of nil factors")
	}
	lower, lo, upper, up := f.Triangles()
	p := &ILUPreconditioner{}
	var err error
	if p.lower, err = sptrsvgpu.NewPlan[float64](dev, lower, lo, opts); err != nil {
		return nil, fmt.Errorf("gpu: %s preconditioner of order %d: lower triangle: %w", f.Kind(), f.N(), err)
	}
	if p.upper, err = sptrsvgpu.NewPlan[float64](dev, upper, up, opts); err != nil {
		_ = p.Close()
		return nil, fmt.Errorf("gpu: %s preconditioner of order %d: upper triangle: %w", f.Kind(), f.N(), err)
	}
	if p.tmp, err = cuda.Alloc[float64](dev, f.N()); err != nil {
		_ = p.Close()
		return nil, err
	}
	return p, nil
}

// Apply sets z = U⁻¹(L⁻¹r); r is not changed.
func (p *ILUPreconditioner) Apply(ctx context.Context, r, z *cuda.Buffer[float64]) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := p.lower.SolveDevice(r, p.tmp); err != nil {
		return err
	}
	return p.upper.SolveDevice(p.tmp, z)
}

// Algorithms returns the solves Auto chose for the two triangles.
func (p *ILUPreconditioner) Algorithms() (lower, upper sptrsv.Algorithm) {
	return p.lower.Algorithm(), p.upper.Algorithm()
}

// Close frees the plans and the scratch vector.
func (p *ILUPreconditioner) Close() error {
	var errs []error
	for _, pl := range []*sptrsvgpu.Plan[float64]{p.lower, p.upper} {
		if pl != nil {
			errs = append(errs, pl.Close())
		}
	}
	if p.tmp != nil {
		errs = append(errs, p.tmp.Free())
	}
	return errors.Join(errs...)
}
