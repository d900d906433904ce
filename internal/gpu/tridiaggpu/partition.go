//go:build cuda

package tridiaggpu

import (
	"errors"
	"fmt"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tridiag/partition"
	"github.com/bandsolve/bandsolve/tuning"
)

func init() { algorithms[tridiag.Partition] = newPartitionPlan }

// partitionPlan runs the partition method (kernels partition_p<P>_*,
// ptx/src/partition.cuh) with the launch of tuning.PartitionLaunchChunk:
// one thread per chunk of P rows, the systems of a block in shared memory,
// global memory read once and written once, no workspace. The plan of
// tridiag.Partition uses P = partition.DefaultChunk(N), the CPU device's
// choice, and so computes partition.Solve's bits. Systems larger than
// tuning.PartitionMaxN do not fit a block: the factory fails with
// tridiag.ErrShape (Auto then tries the next algorithm). Solves with
// constant coefficients run partition_const_p16_* (d alone in shared
// memory; the same bits) when the chunk is 16.
type partitionPlan struct {
	cfg tuning.PartitionLaunch
	// kernel runs the general solves: the kernel with the systems in
	// shared memory (kernels.PartitionP) or the lanes kernel
	// (kernels.PartitionLanesP).
	kernel kernels.PartitionPLauncher
	// direct is the kernel of the spec's precision resolved for
	// LaunchDirect, slots its parameter values (filled per solve; a
	// plan's solves run one at a time).
	direct *directKernel
	slots  [18]uint64
	// constCfg and constDirect: the launch of the constant-coefficient
	// kernel (chunks of 16; nil otherwise), used by constant solves.
	constCfg    *tuning.PartitionLaunch
	constKernel kernels.PartitionConstP
	constDirect *directKernel
	// cstream and cstreamDirect: the launch of the constant streaming
	// kernel (nil unless tuning.PreferConstStream chose it for the
	// batch), which constant solves then take instead of constCfg's.
	cstream       *tuning.ConstStreamLaunch
	cstreamKernel kernels.PartitionConstPLauncher
	cstreamDirect *directKernel
	// latency: Auto's plan of a small batch with short chunks
	// (latencyPlan).
	latency bool
	// chunk16, on such a plan where tuning.LatencyConstChunk16 says so:
	// the plan with chunks of 16 whose constant kernels its constant
	// solves run, and which a resident grid of it takes (SetResident).
	chunk16 *partitionPlan
}

// newPartitionPlan makes the plan of tridiag.Partition: one block per
// system (partitionPlan) or segments of several blocks (segmentPlan), as
// Options.SegmentRows asks or, when it is 0, as wantSegments decides;
// batches of adjacent systems (batch stride 1: interleaved) of at least
// tuning.LanesSegmentMinN rows are cut into segments with the systems
// across the lanes (lanesSegPlan), other batches stored systems first of
// at least tuning.GatherMinN rows are gathered into contiguous ones
// (transposePlan).
func newPartitionPlan(d *gpu, spec tridiag.Spec, f64 bool) (kernelPlan, error) {
	return newPartitionPlanLanes(d, spec, f64, !d.cfg.noLanesSegments)
}

// newPartitionPlanLanes is newPartitionPlan, with the lanes segment kernel
// or without it (the plan of its constant solves).
func newPartitionPlanLanes(d *gpu, spec tridiag.Spec, f64, lanesSegments bool) (kernelPlan, error) {
	l := spec.Layout
	sysFirst := l.BatchStride < l.ElemStride
	adjacent := sysFirst && l.BatchStride == 1 && lanesSegments
	if m := spec.SegmentRows; m > 0 {
		if spec.N <= m {
			return newPartitionPlanChunk(d, spec, f64, partition.DefaultChunk(spec.N))
		}
		if adjacent && tuning.LanesSegmentRowsOK(m, reductionElem(f64)) {
			return newLanesSegPlan(d, spec, f64, m)
		}
		if !tuning.SegmentRowsOK(m) {
			return nil, fmt.Errorf("%w: segments of %d rows: a GPU takes 16·t rows, t a multiple of 32 in %v", tridiag.ErrOptions, m, tuning.SegmentThreads)
		}
		return newSegmentPlan(d, spec, f64, m)
	}
	if adjacent && spec.N >= tuning.LanesSegmentMinN {
		// Long systems adjacent in memory: segments with the systems
		// across the lanes, in place (unless no segment size suits N).
		if lp, err := newLanesSegPlan(d, spec, f64, 0); err == nil {
			// Constant solves move two arrays, not five: the plan without
			// the lanes segments runs them faster (one block a system or
			// gathered; BenchmarkLanesSegments).
			if lp.constPlan, err = newPartitionPlanLanes(d, spec, f64, false); err != nil {
				return nil, err
			}
			if tp, ok := lp.constPlan.(*transposePlan); ok {
				tp.forConstantOnly() // no room for copies of a, b, c
			}
			return lp, nil
		}
	}
	if sysFirst && !d.cfg.noTranspose && spec.N >= tuning.GatherMinN {
		// Batches stored systems first, long: gathered into contiguous
		// systems (whose plan may cut them into segments).
		return newTransposePlan(d, spec, f64)
	}
	whole, err := newPartitionPlanChunk(d, spec, f64, partition.DefaultChunk(spec.N))
	kp := whole
	if wantSegments(d, spec, whole, err) {
		if kp, err = newSegmentsOrWhole(d, spec, f64, whole, err); err != nil {
			return nil, err
		}
	} else if err != nil {
		if sysFirst && !d.cfg.noTranspose && errors.Is(err, tridiag.ErrShape) {
			return newTransposePlan(d, spec, f64) // too long for one block on this device
		}
		return nil, err
	}
	// The streaming kernel, where tuning.PreferStream says so, solves the
	// general systems (one block a system, the next one loading while it
	// computes) and kp the constant ones.
	if pp, ok := whole.(*partitionPlan); ok && pp != nil && !d.cfg.noStreamKernel && pp.sharedChunk(16) && !sysFirst {
		if sp, serr := newStreamPlan(d, spec, f64, kp); serr == nil && tuning.PreferStream(d.props, pp.cfg, sp.cfg, spec.G) {
			return sp, nil
		}
	}
	return kp, nil
}

// newSegmentsOrWhole is the plan for systems that wantSegments sends to
// segments: the segment plan, or whole (with its error err) when no
// segment size suits N.
func newSegmentsOrWhole(d *gpu, spec tridiag.Spec, f64 bool, whole kernelPlan, err error) (kernelPlan, error) {
	seg, serr := newSegmentPlan(d, spec, f64, 0)
	if serr != nil {
		if err == nil {
			return whole, nil // no segment size suits N: one block per system
		}
		return nil, fmt.Errorf("%w; segments: %w", err, serr)
	}
	// Constant solves hold less per system: where the constant streaming
	// kernel takes the batch, or the constant kernel keeps two blocks on
	// an SM, they stay one block per system (FP64 N = 4096: 28% of the
	// limit in segments).
	if pp, ok := whole.(*partitionPlan); ok && err == nil && (pp.cstream != nil || pp.constCfg != nil && pp.constCfg.BlocksPerSM >= 2) {
		seg.constWhole = pp
	}
	return seg, nil
}

// wantSegments decides, for SegmentRows = 0, whether a partition plan cuts
// its systems into segments: only when the rows of a system are closer
// together in memory than the systems (a segment's loads are then
// coalesced), and then when one block per system does not fit (err) or
// leaves fewer than two blocks on an SM (one block computing while none
// loads: FP64 N = 4096 reaches 62% of the bandwidth limit that way on an
// H100, FP32 N = 8192 55%; the "whole" cases of go test -tags cuda -run
// '^$' -bench Stream ./internal/gpu/tridiaggpu).
func wantSegments(d *gpu, spec tridiag.Spec, whole kernelPlan, err error) bool {
	l := spec.Layout
	if l.BatchStride < l.ElemStride || spec.N < 2 {
		return false
	}
	if err != nil {
		return true
	}
	pp, ok := whole.(*partitionPlan)
	return ok && pp.cfg.BlocksPerSM < 2
}

// newPartitionPlanChunk makes a partition plan with chunks of p rows, one
// of tuning.PartitionChunks (the GPU results are partition.Solve's with
// the same p): the lanes kernel where it applies, else the kernel with the
// systems in shared memory.
func newPartitionPlanChunk(d *gpu, spec tridiag.Spec, f64 bool, p int) (kernelPlan, error) {
	l := spec.Layout
	if p == 16 && !d.cfg.noLanesKernel && l.BatchStride == 1 && l.ElemStride > 1 && spec.N <= tuning.PartitionLanesMaxN(reductionElem(f64)) {
		pp, err := newLanesPlan(d, spec, f64, 0)
		if err != nil || d.cfg.noLanesStream {
			return pp, err
		}
		// Large batches: the streamed lanes kernel for the general solves.
		if sp, serr := newLanesStreamPlan(d, spec, f64, pp); serr == nil && (tuning.PreferLanesStream(sp.cfg) || d.cfg.forceLanesStream && sp.cfg.G >= 16*sp.cfg.Grid) {
			return sp, nil
		}
		return pp, nil
	}
	return newSharedPartitionPlan(d, spec, f64, p)
}

// newSharedPartitionPlan makes the plan of partition_p<p>_*: the block's
// systems in shared memory.
func newSharedPartitionPlan(d *gpu, spec tridiag.Spec, f64 bool, p int) (*partitionPlan, error) {
	elem := reductionElem(f64)
	if !tuning.PartitionKernelBuilt(p, elem) {
		return nil, fmt.Errorf("%w: no partition kernel for chunks of %d %d-byte rows (chunks: %v)", tridiag.ErrOptions, p, elem, tuning.PartitionChunks)
	}
	kernel, err := kernels.PartitionPFor(p, f64)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", tridiag.ErrOptions, err)
	}
	// The kernel's registers per thread enter the occupancy of the choice.
	var regs int
	if err := d.Enqueue(func() error {
		var err error
		regs, err = d.KernelAttr(kernel.Kernel().Name(), cu.NumRegs)
		return err
	}); err != nil {
		return nil, err
	}
	l := spec.Layout
	cfg, err := tuning.PartitionLaunchChunk(d.props, spec.N, elem, p, spec.G, l.BatchStride < l.ElemStride, regs)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", tridiag.ErrShape, err)
	}
	pp := &partitionPlan{cfg: cfg, kernel: kernel}
	if err := d.Enqueue(func() error {
		var err error
		if pp.direct, err = d.prepareDirect(kernel.Kernel(), cfg.Blocks(spec.G), cfg.Threads, cfg.SharedBytes); err != nil {
			return err
		}
		if p != 16 || d.cfg.noConstKernel {
			return nil
		}
		// Solves with constant coefficients take the kernel that holds
		// only d (partition_const_p16_*), with its own launch.
		ck, err := kernels.PartitionConstPFor(16, f64)
		if err != nil {
			return err
		}
		cregs, err := d.KernelAttr(ck.Kernel().Name(), cu.NumRegs)
		if err != nil {
			return err
		}
		cc, err := tuning.PartitionLaunchConst(d.props, spec.N, elem, spec.G, l.BatchStride < l.ElemStride, cregs)
		if err != nil {
			return nil // the general kernel serves (it fits wherever this one does; kept for safety)
		}
		pp.constCfg, pp.constKernel = &cc, ck
		if pp.constDirect, err = d.prepareDirect(ck.Kernel(), cc.Blocks(spec.G), cc.Threads, cc.SharedBytes); err != nil {
			return err
		}
		return pp.attachConstStream(d, spec, f64)
	}); err != nil {
		return nil, err
	}
	return pp, nil
}

// constStreamFamily is the constant streaming kernel (chunks of 16) for
// systems of at most a warp (warp: partition_cstream_warp_p16_*, else
// partition_cstream_p16_*), with d and x row-major in shared memory where
// rows (the _rows_ kernels: the systems closer together in memory than
// their rows).
func constStreamFamily(warp, rows, f64 bool) (kernels.PartitionConstPLauncher, error) {
	var k kernels.PartitionConstPLauncher
	var err error
	switch {
	case warp && rows:
		k, err = kernels.PartitionCstreamWarpRowsPFor(16, f64)
	case warp:
		k, err = kernels.PartitionCstreamWarpPFor(16, f64)
	case rows:
		k, err = kernels.PartitionCstreamRowsPFor(16, f64)
	default:
		k, err = kernels.PartitionCstreamPFor(16, f64)
	}
	if err != nil {
		return nil, err
	}
	return k, nil
}

// constStreamLaunch is the launch of the constant streaming kernel for
// spec (spb > 0: that many systems a block) and the kernel
// (constStreamFamily), within the kernel's launch bounds (device thread).
func constStreamLaunch(d *gpu, spec tridiag.Spec, f64 bool, spb int) (tuning.ConstStreamLaunch, kernels.PartitionConstPLauncher, error) {
	elem := reductionElem(f64)
	l := spec.Layout
	sysFirst := l.BatchStride < l.ElemStride
	k, err := constStreamFamily(tuning.PartitionConstStreamWarp(spec.N), sysFirst, f64)
	if err != nil {
		return tuning.ConstStreamLaunch{}, nil, err
	}
	name := k.Kernel().Name()
	regs, err := d.KernelAttr(name, cu.NumRegs)
	if err != nil {
		return tuning.ConstStreamLaunch{}, nil, err
	}
	// The kernels' launch bounds differ (256, 512, 640 or 1024 threads);
	// the launch also keeps within the bound the driver reports for this
	// one.
	maxT, err := d.KernelAttr(name, cu.FnMaxThreadsPerBlock)
	if err != nil {
		return tuning.ConstStreamLaunch{}, nil, err
	}
	props := d.props
	props.MaxThreadsPerBlock = min(props.MaxThreadsPerBlock, maxT)
	cs, err := tuning.PartitionConstStreamLaunchFor(props, spec.N, elem, spec.G, sysFirst, k.Kernel().Info().MaxThreads, regs, spb)
	if err != nil {
		return cs, nil, fmt.Errorf("%w: %w", tridiag.ErrShape, err)
	}
	return cs, k, nil
}

// attachConstStream gives pp the constant streaming kernel for its
// constant solves where tuning.PreferConstStream takes it for spec (device
// thread); elsewhere pp keeps its own constant path.
func (pp *partitionPlan) attachConstStream(d *gpu, spec tridiag.Spec, f64 bool) error {
	if d.cfg.noConstStream {
		return nil
	}
	cs, k, err := constStreamLaunch(d, spec, f64, 0)
	if err != nil || !tuning.PreferConstStream(d.props, cs) {
		return nil // N too large for it, rows not in whole sectors, or a batch too small to gain
	}
	return pp.setConstStream(d, cs, k)
}

// setConstStream makes pp's constant solves run kernel k with launch cs
// (device thread).
func (pp *partitionPlan) setConstStream(d *gpu, cs tuning.ConstStreamLaunch, k kernels.PartitionConstPLauncher) error {
	direct, err := d.prepareDirect(k.Kernel(), cs.Grid, cs.Threads, cs.SharedBytes)
	if err != nil {
		return err
	}
	pp.cstream, pp.cstreamKernel, pp.cstreamDirect = &cs, k, direct
	return nil
}

// describeConstStream is the part of a plan's description that says how
// launch c runs its constant solves.
func describeConstStream(c *tuning.ConstStreamLaunch) string {
	return fmt.Sprintf("; constant coefficients: %d blocks of %d systems streaming through the batch", c.Grid, c.SystemsPerBlock)
}

// newLanesPlan is the partition plan of the lanes kernel
// (partition_lanes_p16_*: chunks of 16, a thread a chunk, for batches of
// adjacent systems; tuning.PartitionLanesLaunch; spb > 0: that many
// systems a block): the parameters of partition_p16_*, the constant
// solves in the same kernel (it loads d alone then).
func newLanesPlan(d *gpu, spec tridiag.Spec, f64 bool, spb int) (*partitionPlan, error) {
	lanes, err := kernels.PartitionLanesPFor(16, f64)
	if err != nil {
		return nil, err
	}
	pp := &partitionPlan{kernel: lanes}
	err = d.Enqueue(func() error {
		regs, err := d.KernelAttr(lanes.Kernel().Name(), cu.NumRegs)
		if err != nil {
			return err
		}
		if spb > 0 {
			pp.cfg, err = tuning.PartitionLanesLaunchSystems(d.props, spec.N, reductionElem(f64), spb, spec.G, regs)
		} else {
			pp.cfg, err = tuning.PartitionLanesLaunch(d.props, spec.N, reductionElem(f64), spec.G, regs)
		}
		if err != nil {
			return fmt.Errorf("%w: %w", tridiag.ErrShape, err)
		}
		if pp.direct, err = d.prepareDirect(lanes.Kernel(), pp.cfg.Blocks(spec.G), pp.cfg.Threads, pp.cfg.SharedBytes); err != nil {
			return err
		}
		if spb > 0 {
			return nil // a forced launch (benchmarks): constant solves in the lanes kernel too
		}
		return pp.attachConstStream(d, spec, f64)
	})
	if err != nil {
		return nil, err
	}
	return pp, nil
}

// lanes reports whether p runs the lanes kernel.
func (p *partitionPlan) lanes() bool {
	_, ok := p.kernel.(kernels.PartitionLanesP)
	return ok
}

// sharedChunk reports whether p runs the kernel with the systems in
// shared memory with chunks of c rows.
func (p *partitionPlan) sharedChunk(c int) bool {
	_, ok := p.kernel.(kernels.PartitionP)
	return ok && p.cfg.Chunk == c
}

func (p *partitionPlan) describe() string {
	s := fmt.Sprintf("partition: one block per system (%d systems per block, chunks of %d)", p.cfg.SystemsPerBlock, p.cfg.Chunk)
	if p.lanes() {
		s = fmt.Sprintf("partition: %d systems across the lanes of a block (chunks of %d, a thread a chunk)", p.cfg.SystemsPerBlock, p.cfg.Chunk)
	}
	if p.latency {
		s += ", short chunks for a small batch"
	}
	cp := p.constPlan()
	if c := cp.cstream; c != nil {
		s += describeConstStream(c)
	} else if cp.constCfg != nil {
		s += fmt.Sprintf("; constant coefficients: %d systems per block", cp.constCfg.SystemsPerBlock)
	}
	return s
}

// workBytes: everything is in shared memory.
func (p *partitionPlan) workBytes() int64 { return 0 }

func (p *partitionPlan) launch(d *gpu, s cu.Stream, a *launchArgs) error {
	if k, dk, spb, tps, ok := p.constLaunch(); a.constant && ok {
		args := constArgs(a, spb, tps)
		return k.Launch(d.Device, cuda.Dim3{X: dk.grid}, cuda.Dim3{X: dk.block}, dk.shmem, s, &args)
	}
	args := p.solveArgs(a)
	return p.kernel.Launch(d.Device, cuda.Dim3{X: p.cfg.Blocks(a.spec.G)}, cuda.Dim3{X: p.cfg.Threads}, p.cfg.SharedBytes, s, &args)
}

// solveArgs are the parameters of p's general kernel for the solve a.
func (p *partitionPlan) solveArgs(a *launchArgs) kernels.PartitionPArgs {
	sp := a.spec
	return kernels.PartitionPArgs{
		A: a.a, B: a.b, C: a.c, D: a.d, X: a.x, N: int32(sp.N), G: int32(sp.G),
		ES: int64(sp.Layout.ElemStride), BS: int64(sp.Layout.BatchStride),
		CA: a.ca, CB: a.cb, CC: a.cc, IsConst: a.isConst(), Status: a.status,
		Spb: int32(p.cfg.SystemsPerBlock), Tps: int32(p.cfg.ThreadsPerSystem), Word: a.word, Seq: a.seq}
}

// constArgs are the parameters of a constant kernel for the solve a, with
// spb systems a block and tps threads a system.
func constArgs(a *launchArgs, spb, tps int) kernels.PartitionConstPArgs {
	sp := a.spec
	return kernels.PartitionConstPArgs{
		D: a.d, X: a.x, N: int32(sp.N), G: int32(sp.G), ES: int64(sp.Layout.ElemStride), BS: int64(sp.Layout.BatchStride),
		CA: a.ca, CB: a.cb, CC: a.cc, Status: a.status,
		Spb: int32(spb), Tps: int32(tps), Word: a.word, Seq: a.seq}
}

// constPlan is the plan whose kernels run p's constant solves: chunk16
// where set (Auto's short chunks where tuning.LatencyConstChunk16 says
// so), else p.
func (p *partitionPlan) constPlan() *partitionPlan {
	if p.chunk16 != nil {
		return p.chunk16
	}
	return p
}

// constLaunch is the kernel of p's constant solves (constPlan's), resolved
// for its launch, with its systems a block and threads a system: the
// constant streaming kernel where attached, else the constant kernel; ok
// is false where the general kernel runs them.
func (p *partitionPlan) constLaunch() (k kernels.PartitionConstPLauncher, dk *directKernel, spb, tps int, ok bool) {
	p = p.constPlan()
	if c := p.cstream; c != nil {
		return p.cstreamKernel, p.cstreamDirect, c.SystemsPerBlock, c.ThreadsPerSystem, true
	}
	if c := p.constCfg; c != nil {
		return p.constKernel, p.constDirect, c.SystemsPerBlock, c.ThreadsPerSystem, true
	}
	return nil, nil, 0, 0, false
}

// LaunchDirect enqueues the solve with Device.LaunchDirect (from any
// goroutine, outside Device.Enqueue): launch's kernel and parameters,
// packed into the plan's slots.
func (p *partitionPlan) LaunchDirect(d *gpu, s cu.Stream, a *launchArgs) error {
	if k, dk, spb, tps, ok := p.constLaunch(); a.constant && ok {
		args := constArgs(a, spb, tps)
		sl := p.slots[:kernels.PartitionConstPSlots]
		k.Pack(&args, sl)
		return d.LaunchDirect(dk.k, s, sl)
	}
	args := p.solveArgs(a)
	sl := p.slots[:kernels.PartitionPSlots]
	p.kernel.Pack(&args, sl)
	return d.LaunchDirect(p.direct.k, s, sl)
}

// signalsItself: the partition kernel ends with block_done_signal.
func (p *partitionPlan) signalsItself() bool { return true }
