//go:build cuda

package tridiaggpu

import (
	"errors"
	"fmt"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tridiag/pivotpart"
	"github.com/bandsolve/bandsolve/tuning"
)

func init() { algorithms[tridiag.PartitionPivot] = newPivotPlanFor }

// newPivotPlanFor makes the plan of tridiag.PartitionPivot: one block per
// system (pivotPlan) where a system fits one, segments in three passes
// (pivotSegPlan) otherwise.
func newPivotPlanFor(d *gpu, spec tridiag.Spec, f64 bool) (kernelPlan, error) {
	kp, err := newPivotPlan(d, spec, f64)
	if err == nil || !errors.Is(err, tridiag.ErrShape) {
		return kp, err
	}
	return newPivotSegPlan(d, spec, f64, 0)
}

// pivotPlan runs the partition method with partial pivoting (kernels
// partition_pivot_p16_*, ptx/src/ppart.cuh; the CPU twin is package
// tridiag/pivotpart): one thread per chunk of 16 rows, the systems of a
// block in shared memory, with partition_p16_*'s layout
// (tuning.PivotLaunch).
// Constant coefficients run in the same kernel. Systems that do not fit a
// block fail with tridiag.ErrShape.
type pivotPlan struct {
	*partitionPlan
}

// newPivotPlan makes the plan of tridiag.PartitionPivot for spec.
func newPivotPlan(d *gpu, spec tridiag.Spec, f64 bool) (kernelPlan, error) {
	p := pivotpart.DefaultRows(spec.N)
	kernel, err := kernels.PartitionPivotPFor(p, f64)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", tridiag.ErrOptions, err)
	}
	l := spec.Layout
	pp := &partitionPlan{kernel: kernel}
	if err := d.Enqueue(func() error {
		// The kernel's registers per thread enter the occupancy.
		regs, err := d.KernelAttr(kernel.Kernel().Name(), cu.NumRegs)
		if err != nil {
			return err
		}
		if pp.cfg, err = tuning.PivotLaunch(d.props, spec.N, reductionElem(f64), spec.G, l.BatchStride < l.ElemStride, regs); err != nil {
			return fmt.Errorf("%w: %w", tridiag.ErrShape, err)
		}
		pp.direct, err = d.prepareDirect(kernel.Kernel(), pp.cfg.Blocks(spec.G), pp.cfg.Threads, pp.cfg.SharedBytes)
		return err
	}); err != nil {
		return nil, err
	}
	return &pivotPlan{pp}, nil
}

func (p *pivotPlan) describe() string {
	return fmt.Sprintf("partition with partial pivoting: one block per system (%d systems per block, chunks of %d)", p.cfg.SystemsPerBlock, p.cfg.Chunk)
}

// pivotSegPlan solves systems too long for one block by the pivoting
// partition method in three passes over segments of seg rows (kernels
// partition_pivot_{reduce,expand,finish}_p16_*): reduce writes every
// chunk's coarse rows, coarse (this plan's kind again, or the one-block
// plan when the coarse systems fit a block) solves the coarse systems,
// expand recomputes each chunk's elimination (the same bits) and forms
// its rows, finish reports breakdowns and fills failed systems with NaN.
// The results are pivotpart.Solve's whose coarse systems are solved the
// same way, bit for bit.
type pivotSegPlan struct {
	seg, segs, rows int // segment rows, segments a system, coarse rows a system
	threads, shared int
	reduce          kernels.PartitionPivotReduceP
	expand          kernels.PartitionPivotExpandP
	finish          kernels.PartitionPivotFinishP
	cspec           tridiag.Spec // the coarse systems
	coarse          kernelPlan
	w               struct{ keys, ra, rb, rc, rd, rx, cstatus, inner, total int64 }
}

// newPivotSegPlan makes the segmented plan for spec (segments of seg
// rows, 0: tuning.PivotSegmentRows).
func newPivotSegPlan(d *gpu, spec tridiag.Spec, f64 bool, seg int) (*pivotSegPlan, error) {
	p := pivotpart.DefaultRows(spec.N)
	elem := reductionElem(f64)
	if seg == 0 {
		seg = tuning.PivotSegmentRows(elem)
	}
	sp := &pivotSegPlan{seg: seg, segs: (spec.N + seg - 1) / seg, threads: seg / p}
	var err error
	if sp.reduce, err = kernels.PartitionPivotReducePFor(p, f64); err != nil {
		return nil, err
	}
	if sp.expand, err = kernels.PartitionPivotExpandPFor(p, f64); err != nil {
		return nil, err
	}
	if sp.finish, err = kernels.PartitionPivotFinishPFor(p, f64); err != nil {
		return nil, err
	}
	if bound := min(sp.reduce.Kernel().Info().MaxThreads, sp.expand.Kernel().Info().MaxThreads); seg%p != 0 || seg < p || sp.threads > bound {
		return nil, fmt.Errorf("%w: segments of %d rows: want a multiple of %d, at most %d (the kernels' %d threads)", tridiag.ErrOptions, seg, p, bound*p, bound)
	}
	sp.shared = tuning.PartitionSharedBytes(seg, p, elem, 1, false)
	sp.rows = pivotpart.CoarseSize(spec.N, p)
	sp.cspec = spec
	sp.cspec.Shape = tridiag.Shape{N: sp.rows, G: spec.G, Layout: tridiag.Contiguous(sp.rows)}
	if sp.coarse, err = newPivotPlanFor(d, sp.cspec, f64); err != nil {
		return nil, fmt.Errorf("coarse systems of %d rows: %w", sp.rows, err)
	}
	var pk packer
	g, r := int64(spec.G), int64(sp.rows)*int64(spec.G)*int64(elem)
	sp.w.keys = pk.take(8 * g)
	sp.w.ra, sp.w.rb, sp.w.rc, sp.w.rd, sp.w.rx = pk.take(r), pk.take(r), pk.take(r), pk.take(r), pk.take(r)
	sp.w.cstatus = pk.take(4 * (g + 2))
	sp.w.inner = pk.take(sp.coarse.workBytes())
	sp.w.total = pk.off
	return sp, nil
}

func (p *pivotSegPlan) describe() string {
	in := "partition with partial pivoting"
	if d, ok := p.coarse.(describer); ok {
		in = d.describe()
	}
	return fmt.Sprintf("partition with partial pivoting: segments of %d rows in three passes; coarse systems of %d rows: %s", p.seg, p.rows, in)
}

// workBytes: the keys, the coarse systems and their solution, the coarse
// plan's status and workspace, room to align.
func (p *pivotSegPlan) workBytes() int64 { return p.w.total + tprAlign }

func (p *pivotSegPlan) launch(d *gpu, s cu.Stream, a *launchArgs) error {
	base := cu.DevicePtr(alignUp(int64(a.work), tprAlign))
	at := func(off int64) cu.DevicePtr { return base + cu.DevicePtr(off) }
	sp := a.spec
	g := int64(sp.G)
	if err := cu.MemsetD32Async(at(p.w.keys), 0xffffffff, 2*g, s); err != nil {
		return err
	}
	if err := cu.MemsetD32Async(at(p.w.cstatus), 0, g+2, s); err != nil {
		return err
	}
	grid, block := cuda.Dim3{X: sp.G * p.segs}, cuda.Dim3{X: p.threads}
	es, bs := int64(sp.Layout.ElemStride), int64(sp.Layout.BatchStride)
	if err := p.reduce.Launch(d.Device, grid, block, p.shared, s, &kernels.PartitionPivotReducePArgs{
		A: a.a, B: a.b, C: a.c, D: a.d, N: int32(sp.N), G: int32(sp.G), ES: es, BS: bs,
		CA: a.ca, CB: a.cb, CC: a.cc, IsConst: a.isConst(), Seg: int32(p.seg),
		RA: at(p.w.ra), RB: at(p.w.rb), RC: at(p.w.rc), RD: at(p.w.rd), Keys: at(p.w.keys)}); err != nil {
		return err
	}
	in := launchArgs{spec: p.cspec, f64: a.f64, a: at(p.w.ra), b: at(p.w.rb), c: at(p.w.rc), d: at(p.w.rd), x: at(p.w.rx),
		work: at(p.w.inner), status: at(p.w.cstatus)}
	if err := p.coarse.launch(d, s, &in); err != nil {
		return err
	}
	if err := p.expand.Launch(d.Device, grid, block, p.shared, s, &kernels.PartitionPivotExpandPArgs{
		A: a.a, B: a.b, C: a.c, D: a.d, X: a.x, N: int32(sp.N), G: int32(sp.G), ES: es, BS: bs,
		CA: a.ca, CB: a.cb, CC: a.cc, IsConst: a.isConst(), Seg: int32(p.seg), RX: at(p.w.rx), Keys: at(p.w.keys)}); err != nil {
		return err
	}
	return p.finish.Launch(d.Device, cuda.Dim3{X: sp.G}, cuda.Dim3{X: 256}, 0, s, &kernels.PartitionPivotFinishPArgs{
		X: a.x, N: int32(sp.N), G: int32(sp.G), ES: es, BS: bs, Keys: at(p.w.keys), Cstatus: at(p.w.cstatus), Status: a.status})
}
