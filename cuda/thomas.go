//go:build cuda

package cuda

import (
	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/tridiag"
)

func init() { algorithms[tridiag.Thomas] = newThomasPlan }

// thomasPlan runs the Thomas algorithm with one thread per system
// (kernel thomas_*, ptx/src/thomas.cuh). It suits large batches of small
// systems, above all in the interleaved layout where a warp's loads are
// coalesced.
type thomasPlan struct {
	spec tridiag.Spec
	elem int64
}

func newThomasPlan(d *Device, spec tridiag.Spec, f64 bool) (kernelPlan, error) {
	elem := int64(4)
	if f64 {
		elem = 8
	}
	return &thomasPlan{spec: spec, elem: elem}, nil
}

// workBytes is c' for every row of every system.
func (p *thomasPlan) workBytes() int64 { return int64(p.spec.N) * int64(p.spec.G) * p.elem }

const thomasBlock = 128

func (p *thomasPlan) launch(d *Device, s cu.Stream, a *launchArgs) error {
	sp := a.spec
	grid := dim3{X: (sp.G + thomasBlock - 1) / thomasBlock}
	return d.launch("thomas"+a.suffix(), grid, dim3{X: thomasBlock}, 0, s,
		a.a, a.b, a.c, a.d, a.x, a.work, int32(sp.N), int32(sp.G),
		int64(sp.Layout.ElemStride), int64(sp.Layout.BatchStride),
		a.scalar(a.ca), a.scalar(a.cb), a.scalar(a.cc), a.isConst(), a.status)
}
