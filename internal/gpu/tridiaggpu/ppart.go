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

func init() {
	algorithms[tridiag.PartitionPivot] = func(d *gpu, spec tridiag.Spec, f64 bool) (kernelPlan, error) {
		return newPivotPlanFor(d, spec, f64, true)
	}
}

// newPivotPlanFor makes a plan of the partition method with partial
// pivoting, refined once (pivotpart's Stage 4) where refine: one block per
// system (pivotPlan) where a system fits one, segments (pivotSegPlan)
// otherwise.
func newPivotPlanFor(d *gpu, spec tridiag.Spec, f64, refine bool) (kernelPlan, error) {
	kp, err := newPivotPlan(d, spec, f64, refine)
	if err == nil || !errors.Is(err, tridiag.ErrShape) {
		return kp, err
	}
	return newPivotSegPlan(d, spec, f64, 0, refine)
}

// pivotPlan runs the partition method with partial pivoting (kernels
// partition_pivot_p16_*, ptx/src/ppart.cuh; the CPU twin is package
// tridiag/pivotpart with coarse systems of up to 64 rows solved directly):
// one thread per chunk of 16 rows, the systems of a block in shared
// memory, with partition_p16_*'s layout (tuning.PivotLaunch). Constant
// coefficients run in the same kernel. Systems that do not fit a block
// fail with tridiag.ErrShape.
type pivotPlan struct {
	cfg    tuning.PartitionLaunch
	kernel kernels.PartitionPivotP
	refine bool
	direct *directKernel
	slots  [kernels.PartitionPivotPSlots]uint64
}

// newPivotPlan makes the one-block plan for spec.
func newPivotPlan(d *gpu, spec tridiag.Spec, f64, refine bool) (*pivotPlan, error) {
	kernel, err := kernels.PartitionPivotPFor(pivotpart.DefaultRows(spec.N), f64)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", tridiag.ErrOptions, err)
	}
	l := spec.Layout
	pp := &pivotPlan{kernel: kernel, refine: refine}
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
	return pp, nil
}

func (p *pivotPlan) describe() string {
	return fmt.Sprintf("partition with partial pivoting: one block per system (%d systems per block, chunks of %d)", p.cfg.SystemsPerBlock, p.cfg.Chunk)
}

func (p *pivotPlan) workBytes() int64 { return 0 }

// args are the kernel's parameters for the solve a.
func (p *pivotPlan) args(a *launchArgs) kernels.PartitionPivotPArgs {
	sp := a.spec
	return kernels.PartitionPivotPArgs{
		A: a.a, B: a.b, C: a.c, D: a.d, X: a.x, N: int32(sp.N), G: int32(sp.G),
		ES: int64(sp.Layout.ElemStride), BS: int64(sp.Layout.BatchStride),
		CA: a.ca, CB: a.cb, CC: a.cc, IsConst: a.isConst(), Status: a.status,
		Spb: int32(p.cfg.SystemsPerBlock), Tps: int32(p.cfg.ThreadsPerSystem), Refine: boolInt(p.refine),
		Word: a.word, Seq: a.seq}
}

func (p *pivotPlan) launch(d *gpu, s cu.Stream, a *launchArgs) error {
	args := p.args(a)
	return p.kernel.Launch(d.Device, cuda.Dim3{X: p.cfg.Blocks(a.spec.G)}, cuda.Dim3{X: p.cfg.Threads}, p.cfg.SharedBytes, s, &args)
}

// LaunchDirect enqueues the solve with Device.LaunchDirect (from any
// goroutine, outside Device.Enqueue).
func (p *pivotPlan) LaunchDirect(d *gpu, s cu.Stream, a *launchArgs) error {
	args := p.args(a)
	p.kernel.Pack(&args, p.slots[:])
	return d.LaunchDirect(p.direct.k, s, p.slots[:])
}

// signalsItself: the kernel ends with block_done_signal.
func (p *pivotPlan) signalsItself() bool { return true }

func boolInt(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

// pivotSegPlan solves systems too long for one block by the pivoting
// partition method in passes over segments of seg rows (kernels
// partition_pivot_{reduce,expand,correct,finish}_p16_*): reduce writes
// every chunk's coarse rows, coarse (this plan's kind again, or the
// one-block plan when the coarse systems fit a block, neither refined)
// solves the coarse systems, expand recomputes each chunk's elimination
// and forms its rows. With refinement expand keeps that solution, forms
// the residual and the coarse rows of the correction, coarse solves them,
// and correct adds the correction. finish reports breakdowns and fills
// failed systems with NaN. The results are pivotpart.SolveWith's with the
// coarse systems solved the same way, bit for bit.
type pivotSegPlan struct {
	seg, segs, rows int // segment rows, segments a system, coarse rows a system
	threads, shared int
	refine          bool
	reduce          kernels.PartitionPivotReduceP
	expand          kernels.PartitionPivotExpandP
	correct         kernels.PartitionPivotCorrectP
	finish          kernels.PartitionPivotFinishP
	cspec           tridiag.Spec // the coarse systems
	coarse          kernelPlan
	w               struct{ keys, ra, rb, rc, rd, rx, xh, flags, cstatus, cstatus2, inner, total int64 }
}

// newPivotSegPlan makes the segmented plan for spec (segments of seg
// rows, 0: tuning.PivotSegmentRows).
func newPivotSegPlan(d *gpu, spec tridiag.Spec, f64 bool, seg int, refine bool) (*pivotSegPlan, error) {
	p := pivotpart.DefaultRows(spec.N)
	elem := reductionElem(f64)
	if seg == 0 {
		seg = tuning.PivotSegmentRows(elem)
	}
	sp := &pivotSegPlan{seg: seg, segs: (spec.N + seg - 1) / seg, threads: seg / p, refine: refine}
	var err error
	if sp.reduce, err = kernels.PartitionPivotReducePFor(p, f64); err != nil {
		return nil, err
	}
	if sp.expand, err = kernels.PartitionPivotExpandPFor(p, f64); err != nil {
		return nil, err
	}
	if sp.correct, err = kernels.PartitionPivotCorrectPFor(p, f64); err != nil {
		return nil, err
	}
	if sp.finish, err = kernels.PartitionPivotFinishPFor(p, f64); err != nil {
		return nil, err
	}
	bound := min(sp.reduce.Kernel().Info().MaxThreads, sp.expand.Kernel().Info().MaxThreads, sp.correct.Kernel().Info().MaxThreads)
	if seg%p != 0 || seg < p || sp.threads > bound {
		return nil, fmt.Errorf("%w: segments of %d rows: want a multiple of %d, at most %d (the kernels' %d threads)", tridiag.ErrOptions, seg, p, bound*p, bound)
	}
	sp.shared = tuning.PivotSharedBytes(seg, elem, 1, false)
	sp.rows = pivotpart.CoarseSize(spec.N, p)
	sp.cspec = spec
	sp.cspec.Shape = tridiag.Shape{N: sp.rows, G: spec.G, Layout: tridiag.Contiguous(sp.rows)}
	if sp.coarse, err = newPivotPlanFor(d, sp.cspec, f64, false); err != nil {
		return nil, fmt.Errorf("coarse systems of %d rows: %w", sp.rows, err)
	}
	var pk packer
	g, r := int64(spec.G), int64(sp.rows)*int64(spec.G)*int64(elem)
	sp.w.keys = pk.take(8 * g)
	sp.w.ra, sp.w.rb, sp.w.rc, sp.w.rd, sp.w.rx = pk.take(r), pk.take(r), pk.take(r), pk.take(r), pk.take(r)
	if refine {
		sp.w.xh = pk.take(int64(spec.N) * g * int64(elem))
		sp.w.flags = pk.take(4 * g)
		sp.w.cstatus2 = pk.take(4 * (g + 2))
	}
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
	passes := "three passes"
	if p.refine {
		passes = "four passes and a refinement"
	}
	return fmt.Sprintf("partition with partial pivoting: segments of %d rows in %s; coarse systems of %d rows: %s", p.seg, passes, p.rows, in)
}

// workBytes: the keys, the coarse systems and their solution, the
// solution before refinement and the residual flags, the coarse plan's
// status and workspace, room to align.
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
	if p.refine {
		if err := cu.MemsetD32Async(at(p.w.flags), 0, g, s); err != nil {
			return err
		}
	}
	grid, block := cuda.Dim3{X: sp.G * p.segs}, cuda.Dim3{X: p.threads}
	es, bs := int64(sp.Layout.ElemStride), int64(sp.Layout.BatchStride)
	if err := p.reduce.Launch(d.Device, grid, block, p.shared, s, &kernels.PartitionPivotReducePArgs{
		A: a.a, B: a.b, C: a.c, D: a.d, N: int32(sp.N), G: int32(sp.G), ES: es, BS: bs,
		CA: a.ca, CB: a.cb, CC: a.cc, IsConst: a.isConst(), Seg: int32(p.seg),
		RA: at(p.w.ra), RB: at(p.w.rb), RC: at(p.w.rc), RD: at(p.w.rd), Keys: at(p.w.keys)}); err != nil {
		return err
	}
	coarse := func(status cu.DevicePtr) error {
		in := launchArgs{spec: p.cspec, f64: a.f64, a: at(p.w.ra), b: at(p.w.rb), c: at(p.w.rc), d: at(p.w.rd), x: at(p.w.rx),
			work: at(p.w.inner), status: status}
		return p.coarse.launch(d, s, &in)
	}
	if err := coarse(at(p.w.cstatus)); err != nil {
		return err
	}
	if err := p.expand.Launch(d.Device, grid, block, p.shared, s, &kernels.PartitionPivotExpandPArgs{
		A: a.a, B: a.b, C: a.c, D: a.d, X: a.x, N: int32(sp.N), G: int32(sp.G), ES: es, BS: bs,
		CA: a.ca, CB: a.cb, CC: a.cc, IsConst: a.isConst(), Seg: int32(p.seg),
		RA: at(p.w.ra), RB: at(p.w.rb), RC: at(p.w.rc), RD: at(p.w.rd), RX: at(p.w.rx),
		XH: at(p.w.xh), Flags: at(p.w.flags), Keys: at(p.w.keys), Refine: boolInt(p.refine)}); err != nil {
		return err
	}
	if p.refine {
		// The correction's coarse systems: the same pivots as the first
		// solve's, whose breakdowns cstatus holds.
		if err := cu.MemsetD32Async(at(p.w.cstatus2), 0, g+2, s); err != nil {
			return err
		}
		if err := coarse(at(p.w.cstatus2)); err != nil {
			return err
		}
		if err := p.correct.Launch(d.Device, grid, block, p.shared, s, &kernels.PartitionPivotCorrectPArgs{
			A: a.a, B: a.b, C: a.c, D: a.d, X: a.x, N: int32(sp.N), G: int32(sp.G), ES: es, BS: bs,
			CA: a.ca, CB: a.cb, CC: a.cc, IsConst: a.isConst(), Seg: int32(p.seg),
			RX: at(p.w.rx), XH: at(p.w.xh), Flags: at(p.w.flags), Keys: at(p.w.keys)}); err != nil {
			return err
		}
	}
	return p.finish.Launch(d.Device, cuda.Dim3{X: sp.G}, cuda.Dim3{X: 256}, 0, s, &kernels.PartitionPivotFinishPArgs{
		X: a.x, N: int32(sp.N), G: int32(sp.G), ES: es, BS: bs, Keys: at(p.w.keys), Cstatus: at(p.w.cstatus), Status: a.status})
}
