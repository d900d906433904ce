//go:build cuda

package tridiaggpu

import (
	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
	"github.com/bandsolve/bandsolve/tridiag"
)

func init() {
	algorithms[tridiag.Thomas] = func(d *gpu, spec tridiag.Spec, f64 bool) (kernelPlan, error) {
		p, err := newPerSystemPlan(false, spec, f64)
		if err != nil {
			return nil, err
		}
		return p, nil
	}
	algorithms[tridiag.GTSV] = func(d *gpu, spec tridiag.Spec, f64 bool) (kernelPlan, error) {
		p, err := newPerSystemPlan(true, spec, f64)
		if err != nil {
			return nil, err
		}
		return p, nil
	}
}

// perSystemPlan runs a sequential algorithm with one thread per system:
// Thomas (kernel thomas_*, ptx/src/thomas.cuh) or Gaussian elimination
// with partial pivoting (gtsv_*, ptx/src/gtsv.cuh). It suits large batches
// of small systems, above all in the interleaved layout where a warp's
// loads are coalesced. The workspace holds planes arrays of N·G elements
// in the interleaved layout (Thomas: c'; gtsv: the upper factor's three
// diagonals).
type perSystemPlan struct {
	pivot  bool           // gtsv's kernel, else thomas's
	thomas kernels.Thomas // without pivot
	gtsv   kernels.Gtsv   // with pivot: the parameters of thomas (ThomasArgs)
	planes int64
	spec   tridiag.Spec
	elem   int64
}

// newPerSystemPlan is the plan of Gaussian elimination with partial
// pivoting (pivot) or of the Thomas algorithm.
func newPerSystemPlan(pivot bool, spec tridiag.Spec, f64 bool) (*perSystemPlan, error) {
	elem := int64(4)
	if f64 {
		elem = 8
	}
	p := &perSystemPlan{pivot: pivot, planes: 1, spec: spec, elem: elem}
	var err error
	if pivot {
		p.planes = 3
		p.gtsv, err = kernels.GtsvFor(f64)
	} else {
		p.thomas, err = kernels.ThomasFor(f64)
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

func (p *perSystemPlan) workBytes() int64 {
	return p.planes * int64(p.spec.N) * int64(p.spec.G) * p.elem
}

const perSystemBlock = 128

func (p *perSystemPlan) launch(d *gpu, s cu.Stream, a *launchArgs) error {
	sp := a.spec
	grid, block := cuda.Dim3{X: (sp.G + perSystemBlock - 1) / perSystemBlock}, cuda.Dim3{X: perSystemBlock}
	args := &kernels.ThomasArgs{A: a.a, B: a.b, C: a.c, D: a.d, X: a.x, Work: a.work, N: int32(sp.N), G: int32(sp.G),
		ES: int64(sp.Layout.ElemStride), BS: int64(sp.Layout.BatchStride),
		CA: a.ca, CB: a.cb, CC: a.cc, IsConst: a.isConst(), Status: a.status}
	if p.pivot {
		return p.gtsv.Launch(d.Device, grid, block, 0, s, args)
	}
	return p.thomas.Launch(d.Device, grid, block, 0, s, args)
}
