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

// lanesSegPlan runs the segmented partition method with the systems across
// the lanes (kernel lseg_p16_*, ptx/src/lseg.cuh) with the launch of
// tuning.LanesSegmentLaunchFor: S adjacent systems and one segment of M
// rows of each a block, the batch read in place. With Q ≤ 32
// (tuning.LanesSegmentLaunch.OnePass) one self-signalling kernel does it all;
// otherwise three steps as segmentPlan's: reduce, a nested partition plan
// on the G reduced systems of 2Q rows, expand. The results are
// partition.SolveSegmented's with chunks of 16, segments of M rows and
// ReducedCR (one pass) or the nested plan's method, as segmentPlan's.
//
// Workspace: the control words (the ticket, four a group of S systems, a
// breakdown key a system; zeroed when a workspace is first used, never
// reset), the reduced rows RA … RD and their solution XR, the nested
// plan's status codes and workspace.
type lanesSegPlan struct {
	cfg    tuning.LanesSegmentLaunch
	nested kernelPlan // three steps only
	nspec  tridiag.Spec
	w      segWork
	zeroed map[cu.DevicePtr]bool
	kernel kernels.LsegP
	// constPlan, when set (Auto's choice), runs the constant solves: the
	// plan the batch had without the lanes segments.
	constPlan kernelPlan
}

// newLanesSegPlan makes the plan with segments of rows rows (0: the
// tuning's choice). It fails with tridiag.ErrShape when the layout is not
// one of adjacent systems or no segment size suits N.
func newLanesSegPlan(d *gpu, spec tridiag.Spec, f64 bool, rows int) (*lanesSegPlan, error) {
	return newLanesSegPlanWith(d, spec, f64, rows, 0, false)
}

// newLanesSegPlanWith is newLanesSegPlan with spb systems a block (0: the
// tuning's) and, when threePass, three passes whatever Q (benchmarks).
func newLanesSegPlanWith(d *gpu, spec tridiag.Spec, f64 bool, rows, spb int, threePass bool) (*lanesSegPlan, error) {
	spec.SegmentRows = rows
	return forcedPlan[*lanesSegPlan](d, spec, f64, route.Options{Force: route.PlanLanesSegments, Systems: spb, ThreePass: threePass})
}

// lanesSegFromRoute builds the plan of a route.PlanLanesSegments route
// (device thread).
func (d *gpu) lanesSegFromRoute(spec tridiag.Spec, f64 bool, r *route.Route) (*lanesSegPlan, error) {
	kernel, err := kernels.LsegPFor(16, f64)
	if err != nil {
		return nil, err
	}
	cfg := *r.LanesSegment
	p := &lanesSegPlan{cfg: cfg, zeroed: map[cu.DevicePtr]bool{}, kernel: kernel}
	if !cfg.OnePass {
		if p.nested, p.nspec, err = d.nestedFromRoute(spec, f64, cfg.Segments, r.Nested); err != nil {
			return nil, err
		}
	}
	if r.Constant != nil {
		if p.constPlan, err = d.fromRoute(spec, f64, r.Constant); err != nil {
			return nil, err
		}
	}
	p.w = newSegWork(1+4*int64(cfg.Groups)+int64(spec.G), spec.G, cfg.Segments, int64(reductionElem(f64)), p.nested)
	return p, nil
}

func (p *lanesSegPlan) describe() string {
	s := p.describeSegments()
	if p.constPlan != nil {
		c := "partition"
		if d, ok := p.constPlan.(describer); ok {
			c = d.describe()
		}
		s += "; constant coefficients: " + c
	}
	return s
}

func (p *lanesSegPlan) describeSegments() string {
	s := fmt.Sprintf("partition: %d systems across the lanes of a block, %d segments of %d rows", p.cfg.Systems, p.cfg.Segments, p.cfg.Rows)
	if p.cfg.OnePass {
		return s + ", one pass"
	}
	nd := "partition"
	if d, ok := p.nested.(describer); ok {
		nd = d.describe()
	}
	return s + ", three passes (reduced systems: " + nd + ")"
}

// workBytes: the layout plus room to align the base, or the constant
// plan's workspace where it is larger (a solve runs one of them).
func (p *lanesSegPlan) workBytes() int64 {
	w := p.w.total + tprAlign
	if p.constPlan != nil {
		w = max(w, p.constPlan.workBytes())
	}
	return w
}

// signalsItself: the one-pass kernel ends with block_done_signal; so must
// the constant plan's kernel, else Plan.enqueue adds the signal.
func (p *lanesSegPlan) signalsItself() bool {
	if !p.cfg.OnePass {
		return false
	}
	ss, ok := p.constPlan.(selfSignaler)
	return p.constPlan == nil || ok && ss.signalsItself()
}

func (p *lanesSegPlan) launch(d *gpu, s cu.Stream, a *launchArgs) error {
	if a.constant && p.constPlan != nil {
		return p.constPlan.launch(d, s, a)
	}
	base, err := p.w.base(a.work, p.zeroed, s)
	if err != nil {
		return err
	}
	at := func(off int64) cu.DevicePtr { return base + cu.DevicePtr(off) }
	sp := a.spec
	run := func(mode int32, word cu.DevicePtr, seq uint32) error {
		return p.kernel.Launch(d.Device, cuda.Dim3{X: p.cfg.Blocks()}, cuda.Dim3{X: p.cfg.Threads}, p.cfg.SharedBytes, s, &kernels.LsegPArgs{
			A: a.a, B: a.b, C: a.c, D: a.d, X: a.x, N: int32(sp.N), G: int32(sp.G),
			ES: int64(sp.Layout.ElemStride), BS: int64(sp.Layout.BatchStride),
			CA: a.ca, CB: a.cb, CC: a.cc, IsConst: a.isConst(), Status: a.status,
			M: int32(p.cfg.Rows), Q: int32(p.cfg.Segments), Spb: int32(p.cfg.Systems), Mode: mode, Ctl: at(p.w.ctl),
			RA: at(p.w.ra), RB: at(p.w.rb), RC: at(p.w.rc), RD: at(p.w.rd), XR: at(p.w.xr), Nst: at(p.w.nst), Word: word, Seq: seq})
	}
	return p.w.runPasses(d, s, a, base, p.cfg.OnePass, p.nested, p.nspec, run)
}
