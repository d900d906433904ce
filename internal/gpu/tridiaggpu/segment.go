//go:build cuda

package tridiaggpu

import (
	"fmt"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tuning"
	"github.com/bandsolve/bandsolve/tuning/route"
)

// Modes of the segment kernel (SEG_* in ptx/src/segment.cuh).
const (
	segOnePass = 0
	segReduce  = 1
	segExpand  = 2
)

// segmentPlan runs the segmented partition method (kernel segment_p16_*,
// ptx/src/segment.cuh) with the launch of tuning.SegmentLaunchFor: every
// system in Q segments of M rows, one block each. With Q ≤ 32 (or a
// cluster of Q blocks a system; tuning.SegmentLaunch.OnePass) one
// self-signalling kernel does it all (global memory read once, x written
// once); otherwise three steps: the reduce
// kernel writes the segments' reduced rows (G systems of 2Q rows), a
// nested partition plan solves them, the expand kernel recomputes every
// segment (the same bits) and finishes it. The results are
// partition.SolveSegmented's with chunks of 16, segments of M rows and
// ReducedCR (one pass) or the nested plan's method. On Hopper, when Q is
// a cluster size, the one-pass kernel is a cluster kernel (segc<Q>_p16_*,
// ptx/src/cluster.cu): one cluster of Q blocks per system.
//
// Workspace: the kernel's control words (ctl, zeroed by one memset when a
// workspace is first used; afterwards every launch adds the same amounts
// and the kernel leaves the keys zero), the reduced rows RA … RD and
// their solution XR, the nested plan's status codes and workspace.
type segmentPlan struct {
	spec   tridiag.Spec
	cfg    tuning.SegmentLaunch
	elem   int64
	nested kernelPlan // three steps only
	nspec  tridiag.Spec
	w      segWork
	zeroed map[cu.DevicePtr]bool
	epoch  uint32 // cluster kernels: the launch count, tag of the systems' key words
	// constWhole, when set (Auto only), runs the constant solves one
	// block per system (partitionPlan's constant kernel).
	constWhole *partitionPlan
	// kernel is the segment kernel of the plan's precision, cluster the
	// cluster kernel of cfg.Segments blocks when cfg.Cluster.
	kernel  kernels.SegmentP
	cluster kernels.SegcP
}

// segWork is the workspace layout: byte offsets from a 256-byte aligned
// base.
type segWork struct {
	ctl, ra, rb, rc, rd, xr, nst, nwork int64
	total                               int64
}

// newSegmentPlan makes a segmented plan with segments of rows rows (0:
// the tuning's choice). It fails with tridiag.ErrShape when no segment
// size suits N (N ≡ 1 mod every one).
func newSegmentPlan(d *gpu, spec tridiag.Spec, f64 bool, rows int) (*segmentPlan, error) {
	spec.SegmentRows = rows
	return forcedPlan[*segmentPlan](d, spec, f64, route.Options{Force: route.PlanSegments})
}

// segmentFromRoute builds the plan of a route.PlanSegments route (device
// thread).
func (d *gpu) segmentFromRoute(spec tridiag.Spec, f64 bool, r *route.Route) (*segmentPlan, error) {
	kernel, err := kernels.SegmentPFor(16, f64)
	if err != nil {
		return nil, err
	}
	cfg := *r.Segment
	p := &segmentPlan{spec: spec, cfg: cfg, elem: int64(reductionElem(f64)), zeroed: map[cu.DevicePtr]bool{}, kernel: kernel}
	if cfg.Cluster {
		if p.cluster, err = clusterKernel(cfg.Segments, f64); err != nil {
			return nil, err
		}
	}
	if !cfg.OnePass {
		if p.nested, p.nspec, err = d.nestedFromRoute(spec, f64, cfg.Segments, r.Nested); err != nil {
			return nil, err
		}
	}
	if r.Constant != nil {
		if p.constWhole, err = d.partitionFromRoute(spec, f64, r.Constant); err != nil {
			return nil, err
		}
	}
	p.w = p.layout()
	return p, nil
}

// clusterKernel is the cluster kernel for q segments a system.
func clusterKernel(q int, f64 bool) (kernels.SegcP, error) { return kernels.SegcPFor(q, 16, f64) }

// clusterSizes returns the cluster sizes of tuning.SegmentClusterSizes the
// device runs, and the cluster kernels' registers per thread (device
// thread). None before compute capability 9.0. The answer is kept with
// the device (Device.Value), per precision.
func (d *gpu) clusterSizes(f64 bool) ([]int, int) {
	if d.props.Major < 9 {
		return nil, 0
	}
	v, err := d.Value(clustersKey{}, func() (any, error) { return map[bool]clusterInfo{}, nil })
	if err != nil {
		return nil, 0
	}
	// Read and written on the device thread only, under the device's lock.
	clusters := v.(map[bool]clusterInfo)
	if c, ok := clusters[f64]; ok {
		return c.sizes, c.regs
	}
	var c clusterInfo
	for _, q := range tuning.SegmentClusterSizes {
		k, err := clusterKernel(q, f64)
		if err != nil {
			continue
		}
		fn, err := d.Kernel(k.Kernel().Name(), 0)
		if err != nil {
			continue
		}
		if r, err := fn.Attribute(cu.NumRegs); err == nil {
			c.regs = max(c.regs, r)
		}
		c.sizes = append(c.sizes, q)
	}
	clusters[f64] = c
	return c.sizes, c.regs
}

// clustersKey is the key of a device's cluster sizes (Device.Value): a
// map[bool]clusterInfo, per precision (f64).
type clustersKey struct{}

// clusterInfo is what clusterSizes found for one precision.
type clusterInfo struct {
	sizes []int
	regs  int
}

func (p *segmentPlan) layout() segWork {
	return newSegWork(1+4*int64(p.spec.G), p.spec.G, p.cfg.Segments, p.elem, p.nested)
}

// newSegWork lays out a segmented plan's workspace: ctlWords control words,
// the nested status of g systems, the reduced rows of g systems of 2q rows
// of elem bytes and their solution, the nested plan's workspace (when
// there is one).
func newSegWork(ctlWords int64, g, q int, elem int64, nested kernelPlan) segWork {
	G, R2 := int64(g), int64(2*q)
	var w segWork
	var pk packer
	take := pk.take
	w.ctl = take(8 * ctlWords)
	w.nst = take(4 * (G + 2))
	w.ra = take(G * R2 * elem)
	w.rb = take(G * R2 * elem)
	w.rc = take(G * R2 * elem)
	w.rd = take(G * R2 * elem)
	w.xr = take(G * R2 * elem)
	if nested != nil {
		w.nwork = take(nested.workBytes())
	}
	w.total = pk.off
	return w
}

// base is the workspace's aligned base for a launch with workspace work;
// the first time a workspace is used its control words and the nested
// status (adjacent) are zeroed on stream s.
func (w segWork) base(work cu.DevicePtr, zeroed map[cu.DevicePtr]bool, s cu.Stream) (cu.DevicePtr, error) {
	base := cu.DevicePtr(alignUp(int64(work), tprAlign))
	if !zeroed[base] {
		if err := cu.MemsetD32Async(base+cu.DevicePtr(w.ctl), 0, (w.ra-w.ctl)/4, s); err != nil {
			return 0, fmt.Errorf("cuda: clearing the segment control words: %w", err)
		}
		zeroed[base] = true
	}
	return base, nil
}

// runPasses runs a segmented solve: run in one pass (with the completion
// word), or reduce, the nested plan on the reduced systems (spec nspec),
// expand.
func (w segWork) runPasses(d *gpu, s cu.Stream, a *launchArgs, base cu.DevicePtr, onePass bool, nested kernelPlan,
	nspec tridiag.Spec, run func(mode int32, word cu.DevicePtr, seq uint32) error) error {
	if onePass {
		return run(segOnePass, a.word, a.seq)
	}
	if err := run(segReduce, 0, 0); err != nil {
		return err
	}
	at := func(off int64) cu.DevicePtr { return base + cu.DevicePtr(off) }
	in := launchArgs{spec: nspec, f64: a.f64, a: at(w.ra), b: at(w.rb), c: at(w.rc), d: at(w.rd),
		x: at(w.xr), work: at(w.nwork), status: at(w.nst)}
	if err := nested.launch(d, s, &in); err != nil {
		return err
	}
	return run(segExpand, 0, 0)
}

func (p *segmentPlan) describe() string {
	if p.constWhole != nil {
		if c := p.constWhole.cstream; c != nil {
			return p.describeSegments() + describeConstStream(c)
		}
		return p.describeSegments() + "; constant coefficients: one block per system"
	}
	return p.describeSegments()
}

func (p *segmentPlan) describeSegments() string {
	if p.cfg.Cluster {
		return fmt.Sprintf("partition: %d segments of %d rows, one cluster per system", p.cfg.Segments, p.cfg.Rows)
	}
	if p.cfg.OnePass {
		return fmt.Sprintf("partition: %d segments of %d rows, one pass", p.cfg.Segments, p.cfg.Rows)
	}
	nd := "partition"
	if d, ok := p.nested.(describer); ok {
		nd = d.describe()
	}
	return fmt.Sprintf("partition: %d segments of %d rows, three passes (reduced systems: %s)", p.cfg.Segments, p.cfg.Rows, nd)
}

// workBytes: the layout plus room to align the base.
func (p *segmentPlan) workBytes() int64 { return p.w.total + tprAlign }

// signalsItself: the one-pass kernel ends with block_done_signal.
func (p *segmentPlan) signalsItself() bool { return p.cfg.OnePass }

func (p *segmentPlan) launch(d *gpu, s cu.Stream, a *launchArgs) error {
	if a.constant && p.constWhole != nil {
		return p.constWhole.launch(d, s, a)
	}
	base, err := p.w.base(a.work, p.zeroed, s)
	if err != nil {
		return err
	}
	at := func(off int64) cu.DevicePtr { return base + cu.DevicePtr(off) }
	sp := a.spec
	run := func(mode int32, word cu.DevicePtr, seq uint32) error {
		return p.kernel.Launch(d.Device, cuda.Dim3{X: p.cfg.Blocks(sp.G)}, cuda.Dim3{X: p.cfg.Threads}, p.cfg.SharedBytes, s, &kernels.SegmentPArgs{
			A: a.a, B: a.b, C: a.c, D: a.d, X: a.x, N: int32(sp.N), G: int32(sp.G),
			ES: int64(sp.Layout.ElemStride), BS: int64(sp.Layout.BatchStride),
			CA: a.ca, CB: a.cb, CC: a.cc, IsConst: a.isConst(), Status: a.status,
			M: int32(p.cfg.Rows), Q: int32(p.cfg.Segments), Mode: mode, Ctl: at(p.w.ctl),
			RA: at(p.w.ra), RB: at(p.w.rb), RC: at(p.w.rc), RD: at(p.w.rd), XR: at(p.w.xr), Nst: at(p.w.nst), Word: word, Seq: seq})
	}
	if p.cfg.Cluster {
		// The systems' key words (the control words' place: a cluster
		// plan has no tickets), tagged with the launch's epoch.
		p.epoch++
		if p.epoch == 0 {
			p.epoch = 1
		}
		return p.cluster.Launch(d.Device, cuda.Dim3{X: p.cfg.Blocks(sp.G)}, cuda.Dim3{X: p.cfg.Threads}, p.cfg.SharedBytes, s, &kernels.SegcPArgs{
			A: a.a, B: a.b, C: a.c, D: a.d, X: a.x, N: int32(sp.N), G: int32(sp.G),
			ES: int64(sp.Layout.ElemStride), BS: int64(sp.Layout.BatchStride),
			CA: a.ca, CB: a.cb, CC: a.cc, IsConst: a.isConst(), Status: a.status,
			M: int32(p.cfg.Rows), Gkey: at(p.w.ctl), Epoch: p.epoch, Word: a.word, Seq: a.seq})
	}
	return p.w.runPasses(d, s, a, base, p.cfg.OnePass, p.nested, p.nspec, run)
}
