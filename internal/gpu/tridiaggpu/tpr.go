//go:build cuda

package tridiaggpu

import (
	"errors"
	"fmt"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tridiag/tpr"
	"github.com/bandsolve/bandsolve/tuning"
)

func init() { algorithms[tridiag.TPR] = newTPRPlan }

// tprPlan runs tree partitioning reduction in the three stages of the TPR
// paper's §4.3 (kernels tpr_*, ptx/src/tpr.cuh) with the launch of
// tuning.TPRLaunchFor and the plan's slice size S (Options.SliceSize, 0:
// tpr.DefaultSliceSize(N)). Every kernel does the operations of the CPU
// twin's stages (tpr.Stage1, Stage2, Stage3) in the same order, so the
// solution is bit for bit tpr.Solve's, and a breakdown is reported at the
// twin's row.
//
// Launches per solve: stage 1, stage 2 (one kernel; for a reduced system
// too large for shared memory also 1 + 2·GlobalLevels one-level kernels),
// stage 3. The breakdown keys and counters in the workspace are zeroed by
// one memset when a workspace is first used; afterwards the kernels leave
// them zero (the plan remembers the workspace by address: a workspace must
// not be freed and another given to the same tprPlan at that address).
// N ≤ tuning.TPRMaxN (2^26); S any power of two (slices larger than a
// block's shared memory run in the workspace).
type tprPlan struct {
	spec tridiag.Spec
	cfg  tuning.TPRLaunch
	elem int64
	w    tprWork
	// zeroed holds the workspaces (aligned bases) whose keys and counters
	// are known to be zero before the next launch.
	zeroed map[cu.DevicePtr]bool
	k      tprKernels
}

// tprKernels are a TPR plan's kernels in its precision. Stages 1 and 3
// run the kernel with the slices in shared memory or, where
// cfg.Stage1.Global (cfg.Stage3.Global), the one with them in the
// workspace; their parameters are the same.
type tprKernels struct {
	stage1   kernels.TprStage1
	stage1g  kernels.TprStage1g
	stage2   kernels.TprStage2
	s2inter  kernels.TprS2inter
	s2reduce kernels.TprS2reduce
	s2subst  kernels.TprS2subst
	stage3   kernels.TprStage3
	stage3g  kernels.TprStage3g
}

// newTPRKernels resolves the TPR kernels of a precision.
func newTPRKernels(f64 bool) (tprKernels, error) {
	var k tprKernels
	var errs [8]error
	k.stage1, errs[0] = kernels.TprStage1For(f64)
	k.stage1g, errs[1] = kernels.TprStage1gFor(f64)
	k.stage2, errs[2] = kernels.TprStage2For(f64)
	k.s2inter, errs[3] = kernels.TprS2interFor(f64)
	k.s2reduce, errs[4] = kernels.TprS2reduceFor(f64)
	k.s2subst, errs[5] = kernels.TprS2substFor(f64)
	k.stage3, errs[6] = kernels.TprStage3For(f64)
	k.stage3g, errs[7] = kernels.TprStage3gFor(f64)
	return k, errors.Join(errs[:]...)
}

// tprWork is the workspace layout: byte offsets from a 256-byte aligned
// base, and the element strides the kernels get.
type tprWork struct {
	keys, cnt, bnd, xb, eq, r, xs int64
	total                         int64 // bytes from the aligned base
	eqPitch, eqPlane              int64 // eq: elements per system, per plane
	bndPlane, rPlane              int64
	eqShift                       int32
}

const tprAlign = 256

func alignUp(v, a int64) int64 { return (v + a - 1) / a * a }

// packer places the buffers of a workspace one after another, each at a
// multiple of tprAlign bytes from the base.
type packer struct{ off int64 }

// take places a buffer of bytes and returns its offset.
func (p *packer) take(bytes int64) int64 {
	at := p.off
	p.off = alignUp(p.off+bytes, tprAlign)
	return at
}

func newTPRPlan(d *gpu, spec tridiag.Spec, f64 bool) (kernelPlan, error) {
	return newTPRPlanWith(d, spec, f64, tuning.TPROptions{})
}

// newTPRPlanWith makes a TPR plan with tuning overrides (tests).
func newTPRPlanWith(d *gpu, spec tridiag.Spec, f64 bool, o tuning.TPROptions) (*tprPlan, error) {
	elem := int64(4)
	if f64 {
		elem = 8
	}
	cfg, err := tuning.TPRLaunchFor(d.props, spec.N, spec.G, spec.SliceSize, int(elem), o)
	if err != nil {
		if errors.Is(err, tpr.ErrSliceSize) {
			return nil, fmt.Errorf("%w: %w", tridiag.ErrOptions, err)
		}
		return nil, fmt.Errorf("%w: %w", tridiag.ErrShape, err)
	}
	k, err := newTPRKernels(f64)
	if err != nil {
		return nil, err
	}
	p := &tprPlan{spec: spec, cfg: cfg, elem: elem, zeroed: map[cu.DevicePtr]bool{}, k: k}
	p.w = p.layout()
	return p, nil
}

// layout places the buffers of the workspace (see ptx/src/tpr.cuh):
// keys and cnt first (cleared together), then bnd, xb, eq, R (large-M
// stage 2 only) and xs (stage 3 with global slices only).
func (p *tprPlan) layout() tprWork {
	c := p.cfg
	G, M, MP, S := int64(c.G), int64(c.M), int64(c.MP), int64(c.S)
	var w tprWork
	var pk packer
	take := pk.take
	w.keys = take(12 * G) // G keys of 8 bytes, then G counters of 4
	w.cnt = w.keys + 8*G
	w.bndPlane = G * M
	w.bnd = take(8 * w.bndPlane * p.elem)
	w.xb = take(G * MP * p.elem)
	w.eqPitch, w.eqShift = M*S/2, 1
	if c.Stage1.Global {
		w.eqPitch, w.eqShift = M*S, 0
	}
	w.eqPlane = G * w.eqPitch
	w.eq = take(4 * w.eqPlane * p.elem)
	if c.Stage2.GlobalLevels > 0 {
		w.rPlane = G * MP
		w.r = take(4 * w.rPlane * p.elem)
	}
	if c.Stage3.Global {
		w.xs = take(G * M * (S + 1) * p.elem)
	}
	w.total = pk.off
	return w
}

// workBytes: the layout plus room to align the base (the cyclic wrapper
// hands an offset workspace).
func (p *tprPlan) workBytes() int64 { return p.w.total + tprAlign }

// tprBufs are the workspace buffers of one launch.
type tprBufs struct {
	keys, cnt, bnd, xb, eq, r, xs cu.DevicePtr
}

func (p *tprPlan) bufs(work cu.DevicePtr) tprBufs {
	base := cu.DevicePtr(alignUp(int64(work), tprAlign))
	b := tprBufs{keys: base + cu.DevicePtr(p.w.keys), cnt: base + cu.DevicePtr(p.w.cnt),
		bnd: base + cu.DevicePtr(p.w.bnd), xb: base + cu.DevicePtr(p.w.xb), eq: base + cu.DevicePtr(p.w.eq)}
	if p.cfg.Stage2.GlobalLevels > 0 {
		b.r = base + cu.DevicePtr(p.w.r)
	}
	if p.cfg.Stage3.Global {
		b.xs = base + cu.DevicePtr(p.w.xs)
	}
	return b
}

func (p *tprPlan) launch(d *gpu, s cu.Stream, a *launchArgs) error {
	b := p.bufs(a.work)
	if !p.zeroed[b.keys] {
		if err := p.clear(s, b); err != nil {
			return err
		}
	}
	// Until stage 3 is enqueued the keys may be left set.
	p.zeroed[b.keys] = false
	if err := p.stage1(d, s, a, b); err != nil {
		return err
	}
	if err := p.stage2(d, s, a, b); err != nil {
		return err
	}
	if err := p.stage3(d, s, a, b); err != nil {
		return err
	}
	p.zeroed[b.keys] = true
	return nil
}

// clear zeroes the breakdown keys and the stage-3 counters.
func (p *tprPlan) clear(s cu.Stream, b tprBufs) error {
	if err := cu.MemsetD32Async(b.keys, 0, int64(3*p.cfg.G), s); err != nil {
		return fmt.Errorf("cuda: clearing the TPR keys: %w", err)
	}
	return nil
}

func (p *tprPlan) stage1(d *gpu, s cu.Stream, a *launchArgs, b tprBufs) error {
	c, sp := p.cfg, a.spec
	grid, block := cuda.Dim3{X: c.Stage1.Blocks(c.G * c.M)}, cuda.Dim3{X: c.Stage1.Threads}
	args := &kernels.TprStage1Args{A: a.a, B: a.b, C: a.c, D: a.d, CA: a.ca, CB: a.cb, CC: a.cc, IsConst: a.isConst(),
		EQ: b.eq, Bnd: b.bnd, Keys: b.keys, N: int32(c.N), G: int32(c.G),
		ES: int64(sp.Layout.ElemStride), BS: int64(sp.Layout.BatchStride),
		S: int32(c.S), M: int32(c.M), Spb: int32(c.Stage1.SlicesPerBlock), Tps: int32(c.Stage1.ThreadsPerSlice),
		EqPitch: p.w.eqPitch, EqPlane: p.w.eqPlane, BndPlane: p.w.bndPlane}
	if c.Stage1.Global {
		return p.k.stage1g.Launch(d.Device, grid, block, c.Stage1.SharedBytes, s, args)
	}
	return p.k.stage1.Launch(d.Device, grid, block, c.Stage1.SharedBytes, s, args)
}

func globalBlocks(work int64) int {
	return int((work + tuning.TPRGlobalBlock - 1) / tuning.TPRGlobalBlock)
}

func (p *tprPlan) stage2(d *gpu, s cu.Stream, a *launchArgs, b tprBufs) error {
	c := p.cfg
	t0 := c.Stage2.GlobalLevels
	G, MP := int64(c.G), int64(c.MP)
	blk := cuda.Dim3{X: tuning.TPRGlobalBlock}
	if t0 > 0 {
		if err := p.k.s2inter.Launch(d.Device, cuda.Dim3{X: globalBlocks(G * MP)}, blk, 0, s, &kernels.TprS2interArgs{
			Bnd: b.bnd, R: b.r, Keys: b.keys, N: int32(c.N), G: int32(c.G), S: int32(c.S), M: int32(c.M), MP: int32(c.MP),
			BndPlane: p.w.bndPlane, RPlane: p.w.rPlane}); err != nil {
			return err
		}
		for t := 1; t <= t0; t++ {
			if err := p.k.s2reduce.Launch(d.Device, cuda.Dim3{X: globalBlocks(G * (MP >> t))}, blk, 0, s, &kernels.TprS2reduceArgs{
				R: b.r, Keys: b.keys, N: int32(c.N), G: int32(c.G), S: int32(c.S), MP: int32(c.MP), T: int32(t), RPlane: p.w.rPlane}); err != nil {
				return err
			}
		}
	}
	if err := p.k.stage2.Launch(d.Device, cuda.Dim3{X: c.Stage2.Blocks(c.G)}, cuda.Dim3{X: c.Stage2.Threads}, c.Stage2.SharedBytes, s, &kernels.TprStage2Args{
		Bnd: b.bnd, R: b.r, XB: b.xb, Keys: b.keys, N: int32(c.N), G: int32(c.G), S: int32(c.S), M: int32(c.M), MP: int32(c.MP), T0: int32(t0),
		Spb: int32(c.Stage2.SystemsPerBlock), Tps: int32(c.Stage2.ThreadsPerSystem), BndPlane: p.w.bndPlane, RPlane: p.w.rPlane}); err != nil {
		return err
	}
	for t := t0; t >= 1; t-- {
		if err := p.k.s2subst.Launch(d.Device, cuda.Dim3{X: globalBlocks(G * (MP >> t))}, blk, 0, s, &kernels.TprS2substArgs{
			R: b.r, XB: b.xb, Keys: b.keys, N: int32(c.N), G: int32(c.G), S: int32(c.S), MP: int32(c.MP), T: int32(t), RPlane: p.w.rPlane}); err != nil {
			return err
		}
	}
	return nil
}

func (p *tprPlan) stage3(d *gpu, s cu.Stream, a *launchArgs, b tprBufs) error {
	c, sp := p.cfg, a.spec
	grid, block := cuda.Dim3{X: c.Stage3.Blocks(c.G * c.M)}, cuda.Dim3{X: c.Stage3.Threads}
	args := &kernels.TprStage3Args{A: a.a, B: a.b, C: a.c, D: a.d, CA: a.ca, CB: a.cb, CC: a.cc, IsConst: a.isConst(),
		X: a.x, EQ: b.eq, XB: b.xb, XS: b.xs, Keys: b.keys, Cnt: b.cnt, Status: a.status, N: int32(c.N), G: int32(c.G),
		ES: int64(sp.Layout.ElemStride), BS: int64(sp.Layout.BatchStride),
		S: int32(c.S), M: int32(c.M), MP: int32(c.MP), Spb: int32(c.Stage3.SlicesPerBlock), Tps: int32(c.Stage3.ThreadsPerSlice),
		EqPitch: p.w.eqPitch, EqPlane: p.w.eqPlane, EqShift: p.w.eqShift}
	if c.Stage3.Global {
		return p.k.stage3g.Launch(d.Device, grid, block, c.Stage3.SharedBytes, s, args)
	}
	return p.k.stage3.Launch(d.Device, grid, block, c.Stage3.SharedBytes, s, args)
}
