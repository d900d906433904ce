//go:build cuda

package gpu

import (
	"context"
	"errors"
	"fmt"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/ilu"
	"github.com/bandsolve/bandsolve/internal/gpu/ilugpu"
	"github.com/bandsolve/bandsolve/internal/gpu/sptrsvgpu"
	"github.com/bandsolve/bandsolve/krylov"
	"github.com/bandsolve/bandsolve/sparse"
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

	// The factorization on the device (FactorILU) and, for IC(0), the
	// positions in L's values of the entries of Lᵀ.
	fact   *ilugpu.Factorization
	gather *cuda.Buffer[int32]
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

// FactorILU computes the ILU(0) or IC(0) factorization of a on dev (the
// analysis on the host, the factorization on the GPU, bit for bit the
// CPU's ilu.ILU0/ilu.IC0 with the same options) and analyses its two
// triangles for solves by topts. The factors stay on the device; Refactor
// recomputes them for new values. The errors are the CPU factorization's
// (ilu.ErrZeroPivot, ilu.ErrNotPositive naming the row, ilu.ErrShape,
// ilu.ErrMissingDiagonal).
func FactorILU(dev *cuda.Device, a *sparse.CSR, kind ilu.Kind, fopts ilu.Options, topts TrsvOptions) (*ILUPreconditioner, error) {
	pat, err := ilu.Analyze(a, kind)
	if err != nil {
		return nil, err
	}
	p := &ILUPreconditioner{}
	if p.fact, err = ilugpu.New(dev, pat, fopts); err != nil {
		return nil, err
	}
	if err = p.fact.Factor(a.Val); err != nil {
		_ = p.Close()
		return nil, err
	}
	if err = p.triangles(dev, pat, topts); err != nil {
		_ = p.Close()
		return nil, fmt.Errorf("gpu: %s preconditioner of order %d: %w", kind, pat.N, err)
	}
	if p.tmp, err = cuda.Alloc[float64](dev, pat.N); err != nil {
		_ = p.Close()
		return nil, err
	}
	return p, nil
}

// triangles analyses the two triangles of the pattern (with unit values)
// and gives them the factors' values.
func (p *ILUPreconditioner) triangles(dev *cuda.Device, pat *ilu.Pattern, topts TrsvOptions) error {
	ones := make([]float64, len(pat.Col))
	for k := range ones {
		ones[k] = 1
	}
	lu := &sparse.CSR{N: pat.N, M: pat.N, RowPtr: pat.RowPtr, Col: pat.Col, Val: ones}
	lower, lo, upper, up := lu, sptrsv.Options{Triangle: sptrsv.Lower}, lu, sptrsv.Options{Triangle: sptrsv.Upper}
	if pat.Kind == ilu.KindILU0 {
		lo.Part, lo.UnitDiagonal, up.Part = sptrsv.TrianglePart, true, sptrsv.TrianglePart
	} else {
		// Lᵀ with the position in L's values of each entry as its value.
		pos := &sparse.CSR{N: pat.N, M: pat.N, RowPtr: pat.RowPtr, Col: pat.Col, Val: make([]float64, len(pat.Col))}
		for k := range pos.Val {
			pos.Val[k] = float64(k)
		}
		t := pos.Transpose()
		gather := make([]int32, len(t.Val))
		for k, v := range t.Val {
			gather[k] = int32(v)
		}
		g, err := cuda.Upload(dev, gather)
		if err != nil {
			return err
		}
		p.gather = g
		upper = &sparse.CSR{N: pat.N, M: pat.N, RowPtr: t.RowPtr, Col: t.Col, Val: ones}
	}
	var err error
	if p.lower, err = sptrsvgpu.NewPlan[float64](dev, lower, lo, topts); err != nil {
		return fmt.Errorf("lower triangle: %w", err)
	}
	if p.upper, err = sptrsvgpu.NewPlan[float64](dev, upper, up, topts); err != nil {
		return fmt.Errorf("upper triangle: %w", err)
	}
	return p.values()
}

// values copies the device factors into the two triangular plans.
func (p *ILUPreconditioner) values() error {
	if err := p.lower.UpdateValuesDevice(p.fact.Values(), 0); err != nil {
		return fmt.Errorf("lower triangle: %w", err)
	}
	var gather cu.DevicePtr
	if p.gather != nil {
		gather = p.gather.Ptr()
	}
	if err := p.upper.UpdateValuesDevice(p.fact.Values(), gather); err != nil {
		return fmt.Errorf("upper triangle: %w", err)
	}
	return nil
}

// Refactor recomputes the factors on the device for new values of the
// matrix given to FactorILU (same pattern, its order of entries), with
// the options given there, and passes them to the triangular solves. It
// is for preconditioners made by FactorILU.
func (p *ILUPreconditioner) Refactor(val []float64) error {
	if p.fact == nil {
		return errors.New("gpu: Refactor of a preconditioner made from host factors: make a new one, or use FactorILU")
	}
	if err := p.fact.Factor(val); err != nil {
		return err
	}
	return p.values()
}

// Shift returns the relative diagonal shift of the factors that FactorILU
// or Refactor computed (0 for a preconditioner made from host factors:
// see their Shift).
func (p *ILUPreconditioner) Shift() float64 {
	if p.fact == nil {
		return 0
	}
	return p.fact.Shift()
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
	if p.gather != nil {
		errs = append(errs, p.gather.Free())
	}
	if p.fact != nil {
		errs = append(errs, p.fact.Close())
	}
	return errors.Join(errs...)
}
