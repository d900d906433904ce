//go:build cuda

package tridiaggpu

import (
	"fmt"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
	"github.com/bandsolve/bandsolve/tridiag"
)

func init() {
	algorithms[tridiag.LDLT] = newLDLTPlan
}

// errLDLTBreakdown is the cause of each failed system of an LDLT solve:
// a pivot that is not positive or a solution that is not finite, which
// the kernel reports alike.
var errLDLTBreakdown = fmt.Errorf("%w or %w", tridiag.ErrNotPositiveDefinite, tridiag.ErrNonFiniteResult)

// ldltPlan solves symmetric positive definite systems by L·D·Lᵀ, one
// thread per system (kernel ptsv_*, ptx/src/factor.cuh, the twin of
// tri.PTSV): it reads b and c, never a. The workspace holds D and L's
// multipliers, two planes of N·G elements in the interleaved layout.
type ldltPlan struct {
	k    kernels.Ptsv
	spec tridiag.Spec
	elem int64
}

// newLDLTPlan is the LDLT plan of spec. Cyclic LDLT and Options.Check
// (whose device check reads a) have no GPU kernel: both are refused with
// tridiag.ErrOptions.
func newLDLTPlan(d *gpu, spec tridiag.Spec, f64 bool) (kernelPlan, error) {
	if spec.Cyclic {
		return nil, fmt.Errorf("%w: cyclic %s has no GPU kernel (solve it on the CPU)", tridiag.ErrOptions, tridiag.LDLT)
	}
	if spec.Check {
		return nil, fmt.Errorf("%w: Options.Check with %s has no GPU kernel (check with Plan.Check on the host)", tridiag.ErrOptions, tridiag.LDLT)
	}
	k, err := kernels.PtsvFor(f64)
	if err != nil {
		return nil, err
	}
	elem := int64(4)
	if f64 {
		elem = 8
	}
	return &ldltPlan{k: k, spec: spec, elem: elem}, nil
}

func (p *ldltPlan) workBytes() int64 { return 2 * int64(p.spec.N) * int64(p.spec.G) * p.elem }

func (p *ldltPlan) launch(d *gpu, s cu.Stream, a *launchArgs) error {
	sp := a.spec
	grid, block := cuda.Dim3{X: (sp.G + perSystemBlock - 1) / perSystemBlock}, cuda.Dim3{X: perSystemBlock}
	coef := a.a
	if coef == 0 {
		coef = a.b
	}
	args := &kernels.PtsvArgs{A: coef, B: a.b, C: a.c, D: a.d, X: a.x, Work: a.work, N: int32(sp.N), G: int32(sp.G),
		ES: int64(sp.Layout.ElemStride), BS: int64(sp.Layout.BatchStride),
		CA: a.ca, CB: a.cb, CC: a.cc, IsConst: a.isConst(), Status: a.status}
	return p.k.Launch(d.Device, grid, block, 0, s, args)
}
