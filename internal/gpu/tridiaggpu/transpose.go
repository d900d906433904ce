//go:build cuda

package tridiaggpu

import (
	"fmt"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tuning/route"
)

// transposePlan solves batches stored systems first (interleaved, or any
// layout with BatchStride < ElemStride) of at least tuning.GatherMinN rows,
// or too long for one block:
// layout_gather_* copies a, b, c, d (d alone for constant coefficients)
// into contiguous systems in the workspace, inner (a contiguous partition
// plan: segments, the streaming kernel, …) solves them into a contiguous
// x, and layout_scatter_* writes x back in the caller's layout. The
// results are inner's bit for bit (the copies are exact); system and row
// numbers in the status are the caller's (the rows keep their numbers).
//
// The price: five arrays of the batch's size in the workspace, and the
// bytes of a, b, c, d and x moved twice more than a solve in place
// (against the kernels that read the strided layout directly, one thread
// a system or TPR's strided loads, it is still several times faster:
// thomas-interleaved against partition-interleaved in go test -tags cuda
// -run '^$' -bench '^BenchmarkBatch$' ./internal/gpu/tridiaggpu).
type transposePlan struct {
	ispec     tridiag.Spec // the systems stored contiguously
	inner     kernelPlan
	grid      int // blocks of the layout kernels
	gather    kernels.LayoutGather
	scatter   kernels.LayoutScatter // its parameters are gather's
	size      int64                 // bytes of an array of the batch
	constOnly bool                  // constant solves only (forConstantOnly)
	w         struct{ a, b, c, d, x, inner, total int64 }
}

// newTransposePlan makes the gathering plan for spec (systems first): its
// inner plan is the partition plan of the same systems stored
// contiguously.
func newTransposePlan(d *gpu, spec tridiag.Spec, f64 bool) (*transposePlan, error) {
	return forcedPlan[*transposePlan](d, spec, f64, route.Options{Force: route.PlanGather})
}

// transposeFromRoute builds the plan of a route.PlanGather route (device
// thread).
func (d *gpu) transposeFromRoute(spec tridiag.Spec, f64 bool, r *route.Route) (*transposePlan, error) {
	ispec := spec
	ispec.Layout = tridiag.Contiguous(spec.N)
	inner, err := d.fromRoute(ispec, f64, r.Inner)
	if err != nil {
		return nil, err
	}
	p := &transposePlan{ispec: ispec, inner: inner, grid: r.GatherGrid}
	if p.gather, err = kernels.LayoutGatherFor(f64); err != nil {
		return nil, err
	}
	if p.scatter, err = kernels.LayoutScatterFor(f64); err != nil {
		return nil, err
	}
	p.size = int64(spec.N) * int64(spec.G) * int64(reductionElem(f64))
	p.layout()
	if r.ConstOnly {
		p.forConstantOnly()
	}
	return p, nil
}

// layout places the workspace's arrays: a, b, c, d, x of the batch's size
// (d and x alone for a plan of constant solves), then inner's workspace.
func (p *transposePlan) layout() {
	var pk packer
	if !p.constOnly {
		p.w.a, p.w.b, p.w.c = pk.take(p.size), pk.take(p.size), pk.take(p.size)
	}
	p.w.d, p.w.x = pk.take(p.size), pk.take(p.size)
	p.w.inner = pk.take(p.inner.workBytes())
	p.w.total = pk.off
}

// forConstantOnly makes p a plan of constant solves only (another plan
// runs the general ones): its workspace drops the copies of a, b, c.
func (p *transposePlan) forConstantOnly() {
	p.constOnly = true
	p.layout()
}

func (p *transposePlan) describe() string {
	in := "partition"
	if d, ok := p.inner.(describer); ok {
		in = d.describe()
	}
	return "batches stored systems first gathered into contiguous ones, then " + in + ", x scattered back"
}

// workBytes: the five contiguous arrays, inner's workspace, room to align.
func (p *transposePlan) workBytes() int64 { return p.w.total + tprAlign }

func (p *transposePlan) launch(d *gpu, s cu.Stream, a *launchArgs) error {
	base := cu.DevicePtr(alignUp(int64(a.work), tprAlign))
	at := func(off int64) cu.DevicePtr { return base + cu.DevicePtr(off) }
	sp := a.spec
	// move runs the gather kernel (gather) or the scatter kernel on z
	// arrays.
	move := func(gather bool, z int, in, out [4]cu.DevicePtr) error {
		grid, block := cuda.Dim3{X: p.grid, Z: z}, cuda.Dim3{X: 32, Y: 8}
		args := &kernels.LayoutGatherArgs{I0: in[0], I1: in[1], I2: in[2], I3: in[3], O0: out[0], O1: out[1], O2: out[2], O3: out[3],
			N: int32(sp.N), G: int32(sp.G), ES: int64(sp.Layout.ElemStride), BS: int64(sp.Layout.BatchStride)}
		if gather {
			return p.gather.Launch(d.Device, grid, block, 0, s, args)
		}
		return p.scatter.Launch(d.Device, grid, block, 0, s, args)
	}
	in := *a
	in.spec, in.work, in.word, in.seq = p.ispec, at(p.w.inner), 0, 0
	in.d, in.x = at(p.w.d), at(p.w.x)
	var err error
	switch {
	case a.constant:
		err = move(true, 1, [4]cu.DevicePtr{a.d}, [4]cu.DevicePtr{in.d})
	case p.constOnly:
		return fmt.Errorf("cuda: a gathering plan of constant solves given coefficient arrays")
	default:
		in.a, in.b, in.c = at(p.w.a), at(p.w.b), at(p.w.c)
		err = move(true, 4, [4]cu.DevicePtr{a.a, a.b, a.c, a.d}, [4]cu.DevicePtr{in.a, in.b, in.c, in.d})
	}
	if err != nil {
		return fmt.Errorf("cuda: gathering the systems: %w", err)
	}
	if err := p.inner.launch(d, s, &in); err != nil {
		return err
	}
	if err := move(false, 1, [4]cu.DevicePtr{in.x}, [4]cu.DevicePtr{a.x}); err != nil {
		return fmt.Errorf("cuda: scattering x: %w", err)
	}
	return nil
}
