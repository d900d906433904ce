//go:build cuda

package tridiaggpu

import (
	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/tridiag"
)

func init() {
	algorithms[tridiag.Thomas] = func(d *gpu, spec tridiag.Spec, f64 bool) (kernelPlan, error) {
		return newPerSystemPlan("thomas", 1, spec, f64), nil
	}
	algorithms[tridiag.GTSV] = func(d *gpu, spec tridiag.Spec, f64 bool) (kernelPlan, error) {
		return newPerSystemPlan("gtsv", 3, spec, f64), nil
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
	kernel string
	planes int64
	spec   tridiag.Spec
	elem   int64
}

func newPerSystemPlan(kernel string, planes int64, spec tridiag.Spec, f64 bool) *perSystemPlan {
	elem := int64(4)
	if f64 {
		elem = 8
	}
	return &perSystemPlan{kernel: kernel, planes: planes, spec: spec, elem: elem}
}

func (p *perSystemPlan) workBytes() int64 {
	return p.planes * int64(p.spec.N) * int64(p.spec.G) * p.elem
}

const perSystemBlock = 128

func (p *perSystemPlan) launch(d *gpu, s cu.Stream, a *launchArgs) error {
	sp := a.spec
	grid := cuda.Dim3{X: (sp.G + perSystemBlock - 1) / perSystemBlock}
	return d.Launch(p.kernel+a.suffix(), grid, cuda.Dim3{X: perSystemBlock}, 0, s,
		a.a, a.b, a.c, a.d, a.x, a.work, int32(sp.N), int32(sp.G),
		int64(sp.Layout.ElemStride), int64(sp.Layout.BatchStride),
		a.scalar(a.ca), a.scalar(a.cb), a.scalar(a.cc), a.isConst(), a.status)
}
