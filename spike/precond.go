package spike

import (
	"context"
	"fmt"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/krylov"
)

// Precision selects the arithmetic of the preconditioner.
type Precision int

const (
	// F64 factors and applies the preconditioner in float64.
	F64 Precision = iota
	// Mixed factors in float32 (the float64 band rounded by
	// banded.Convert) and applies the float32 factors to float64
	// residuals through krylov.MixedPrecision: the mixed-precision
	// strategy of SPIKE::GPU (§4), with the outer iteration in float64.
	Mixed
)

// String returns "f64" or "mixed".
func (p Precision) String() string {
	switch p {
	case F64:
		return "f64"
	case Mixed:
		return "mixed"
	}
	return fmt.Sprintf("Precision(%d)", int(p))
}

// Preconditioner is the truncated SPIKE (or block-Jacobi) factorization of
// a band used as the preconditioner M of krylov.BiCGStab2: Apply sets
// z = M⁻¹·r by Factorization.Solve. It implements
// krylov.Preconditioner[[]float64] and is safe for concurrent use.
type Preconditioner struct {
	prec  Precision
	f64   *Factorization[float64]
	f32   *Factorization[float32]
	mixed *krylov.MixedPrecision
}

var _ krylov.Preconditioner[[]float64] = (*Preconditioner)(nil)

// NewPreconditioner factors M (usually A itself, or the band kept after
// reordering and drop-off of a sparse A) with Factor in the precision
// prec, with opts.Refine set to banded.RefineOff (the outer iteration
// corrects the approximation). M is not modified. Errors are Factor's.
func NewPreconditioner(M *banded.Band[float64], opts Options, prec Precision) (*Preconditioner, error) {
	p := &Preconditioner{prec: prec}
	// M⁻¹ is applied inside the outer iteration: no refinement of its own.
	opts.Refine.Mode = banded.RefineOff
	switch prec {
	case F64:
		f, err := Factor(M, opts)
		if err != nil {
			return nil, err
		}
		p.f64 = f
	case Mixed:
		if M == nil {
			return nil, fmt.Errorf("%w: nil band matrix", banded.ErrShape)
		}
		f, err := Factor(banded.Convert[float32](M), opts)
		if err != nil {
			return nil, err
		}
		p.f32 = f
		p.mixed = krylov.NewMixedPrecision(M.N, func(_ context.Context, r, z []float32) error {
			return f.Solve(r, z)
		})
	default:
		return nil, fmt.Errorf("%w: unknown precision %d", ErrOption, int(prec))
	}
	return p, nil
}

// Apply sets z = M⁻¹·r (r is left unchanged). It checks ctx once.
func (p *Preconditioner) Apply(ctx context.Context, r, z []float64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if p.mixed != nil {
		return p.mixed.Apply(ctx, r, z)
	}
	return p.f64.Solve(r, z)
}

// Precision is the precision the preconditioner was built in.
func (p *Preconditioner) Precision() Precision { return p.prec }

// Float64 returns the float64 factorization (nil for Mixed).
func (p *Preconditioner) Float64() *Factorization[float64] { return p.f64 }

// Float32 returns the float32 factorization (nil for F64).
func (p *Preconditioner) Float32() *Factorization[float32] { return p.f32 }

// Bounds returns the partition bounds of the factorization.
func (p *Preconditioner) Bounds() []int {
	if p.f32 != nil {
		return p.f32.Bounds()
	}
	return p.f64.Bounds()
}

// BoostCount is the number of boosted pivots of the factorization.
func (p *Preconditioner) BoostCount() int {
	if p.f32 != nil {
		return p.f32.BoostCount()
	}
	return p.f64.BoostCount()
}
