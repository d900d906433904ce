//go:build cuda

package tridiaggpu

import (
	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
	"github.com/bandsolve/bandsolve/tridiag"
)

// cyclicPlan solves periodic systems with Sherman–Morrison around any
// inner algorithm (ptx/src/cyclic.cuh): prepare the modified coefficients
// and the second right-hand side u, solve for d into x and for u into z,
// then combine.
type cyclicPlan struct {
	prep    kernels.CyclicPrep
	combine kernels.CyclicCombine
	inner   kernelPlan
	spec    tridiag.Spec
	elem    int64
}

func newCyclicPlan(d *gpu, spec tridiag.Spec, f64 bool, inner kernelPlan) (kernelPlan, error) {
	elem := int64(4)
	if f64 {
		elem = 8
	}
	p := &cyclicPlan{inner: inner, spec: spec, elem: elem}
	var err error
	if p.prep, err = kernels.CyclicPrepFor(f64); err != nil {
		return nil, err
	}
	if p.combine, err = kernels.CyclicCombineFor(f64); err != nil {
		return nil, err
	}
	return p, nil
}

// workBytes: a2, b2, c2, u, z (one batch each), then the inner workspace.
func (p *cyclicPlan) arrBytes() int64 { return int64(p.spec.Len()) * p.elem }
func (p *cyclicPlan) workBytes() int64 {
	return 5*p.arrBytes() + p.inner.workBytes()
}

func (p *cyclicPlan) launch(d *gpu, s cu.Stream, a *launchArgs) error {
	sp := a.spec
	ab := cu.DevicePtr(p.arrBytes())
	a2, b2, c2, u, z := a.work, a.work+ab, a.work+2*ab, a.work+3*ab, a.work+4*ab
	es, bs := int64(sp.Layout.ElemStride), int64(sp.Layout.BatchStride)
	rows := sp.N * sp.G
	const blk = 256
	if err := p.prep.Launch(d.Device, cuda.Dim3{X: (rows + blk - 1) / blk}, cuda.Dim3{X: blk}, 0, s, &kernels.CyclicPrepArgs{
		A: a.a, B: a.b, C: a.c, CA: a.ca, CB: a.cb, CC: a.cc, IsConst: a.isConst(),
		A2: a2, B2: b2, C2: c2, U: u, N: int32(sp.N), G: int32(sp.G), ES: es, BS: bs}); err != nil {
		return err
	}
	in := *a
	in.a, in.b, in.c, in.constant = a2, b2, c2, false
	in.work = a.work + 5*ab
	if err := p.inner.launch(d, s, &in); err != nil {
		return err
	}
	if sp.N <= 2 {
		// The corners were folded into the matrix: no correction.
		return nil
	}
	in.d, in.x = u, z
	if err := p.inner.launch(d, s, &in); err != nil {
		return err
	}
	return p.combine.Launch(d.Device, cuda.Dim3{X: (sp.G + blk - 1) / blk}, cuda.Dim3{X: blk}, 0, s, &kernels.CyclicCombineArgs{
		A: a.a, B: a.b, C: a.c, CA: a.ca, CB: a.cb, CC: a.cc, IsConst: a.isConst(),
		X: a.x, Z: z, N: int32(sp.N), G: int32(sp.G), ES: es, BS: bs, Status: a.status})
}
