//go:build cuda

package tridiaggpu

import (
	"errors"
	"fmt"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tuning"
)

func init() { algorithms[tridiag.WangMou] = newWMPlan }

// wmPlan runs the Wang & Mou algorithm (kernels wm_*,
// ptx/src/wangmou.cuh), bit for bit wangmou.Solve, with the launch of
// tuning.WMLaunchFor. A system whose triads fit in one block's shared
// memory (N ≤ tuning.WMLaunch.MaxSingleN: 4096 in FP32 and 2048 in FP64 on
// H100/H200, 2048/1024 on A100) is solved by one launch of wm_local, one
// block per system (several per block for small N), with no workspace.
// Larger systems, up to tuning.TPRMaxN rows, do the first merge steps in
// shared memory by chunks, then one wm_step launch per remaining step on
// the triads in the workspace (12 values per padded row and system) and
// wm_final; that path moves 24 values per row and step through global
// memory, the cost of WM that the TPR paper's §2.3 points out.
type wmPlan struct {
	spec tridiag.Spec
	cfg  tuning.WMLaunch
	elem int64
	// zeroed: workspaces whose keys and counters are zero (see tprPlan).
	zeroed map[cu.DevicePtr]bool
	local  kernels.WmLocal
	step   kernels.WmStep
	final  kernels.WmFinal
}

func newWMPlan(d *gpu, spec tridiag.Spec, f64 bool) (kernelPlan, error) {
	return newWMPlanChunk(d, spec, f64, 0)
}

// newWMPlanChunk makes a plan whose chunks hold at most maxChunk elements
// (0: tuning's choice), to test the multi-launch path on small systems.
func newWMPlanChunk(d *gpu, spec tridiag.Spec, f64 bool, maxChunk int) (*wmPlan, error) {
	elem := int64(4)
	if f64 {
		elem = 8
	}
	cfg, err := tuning.WMLaunchFor(d.props, spec.N, spec.G, int(elem), maxChunk)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", tridiag.ErrShape, err)
	}
	p := &wmPlan{spec: spec, cfg: cfg, elem: elem, zeroed: map[cu.DevicePtr]bool{}}
	var errs [3]error
	p.local, errs[0] = kernels.WmLocalFor(f64)
	p.step, errs[1] = kernels.WmStepFor(f64)
	p.final, errs[2] = kernels.WmFinalFor(f64)
	if err := errors.Join(errs[:]...); err != nil {
		return nil, err
	}
	return p, nil
}

// wmLayout: G keys (8 bytes) and G counters (4 bytes), then 12 planes of
// G·NP triad values, from a 256-byte aligned base.
func (p *wmPlan) wmLayout() (triads, total int64) {
	if p.cfg.Single {
		return 0, 0
	}
	triads = alignUp(12*int64(p.cfg.G), tprAlign)
	return triads, triads + 12*p.plane()*p.elem
}

func (p *wmPlan) plane() int64 { return int64(p.cfg.G) * int64(p.cfg.NP) }

func (p *wmPlan) workBytes() int64 {
	if _, total := p.wmLayout(); total > 0 {
		return total + tprAlign
	}
	return 0
}

func (p *wmPlan) launch(d *gpu, s cu.Stream, a *launchArgs) error {
	c, sp := p.cfg, a.spec
	es, bs := int64(sp.Layout.ElemStride), int64(sp.Layout.BatchStride)
	var keys, cnt, w cu.DevicePtr
	if !c.Single {
		base := cu.DevicePtr(alignUp(int64(a.work), tprAlign))
		triads, _ := p.wmLayout()
		keys, cnt, w = base, base+cu.DevicePtr(8*c.G), base+cu.DevicePtr(triads)
		if !p.zeroed[keys] {
			if err := cu.MemsetD32Async(keys, 0, int64(3*c.G), s); err != nil {
				return fmt.Errorf("cuda: clearing the Wang–Mou keys: %w", err)
			}
		}
		// wm_final leaves them zero; until it is enqueued they may be set.
		p.zeroed[keys] = false
	}
	if err := p.local.Launch(d.Device, cuda.Dim3{X: c.Blocks()}, cuda.Dim3{X: c.Threads}, c.SharedBytes, s, &kernels.WmLocalArgs{
		A: a.a, B: a.b, C: a.c, D: a.d, CA: a.ca, CB: a.cb, CC: a.cc, IsConst: a.isConst(),
		X: a.x, W: w, Keys: keys, Status: a.status, N: int32(c.N), G: int32(c.G), ES: es, BS: bs,
		NP: int32(c.NP), C_: int32(c.Chunk), Cpb: int32(c.ChunksPerBlock), Tpc: int32(c.ThreadsPerChunk), WPlane: p.plane()}); err != nil {
		return err
	}
	if c.Single {
		return nil
	}
	pairs := p.plane() / 2
	for u := c.Chunk; u < c.NP; u *= 2 {
		if err := p.step.Launch(d.Device, cuda.Dim3{X: globalBlocks(pairs)}, cuda.Dim3{X: tuning.TPRGlobalBlock}, 0, s, &kernels.WmStepArgs{
			W: w, Keys: keys, G: int32(c.G), NP: int32(c.NP), U: int32(u), WPlane: p.plane()}); err != nil {
			return err
		}
	}
	parts := (c.N + tuning.WMFinalBlock - 1) / tuning.WMFinalBlock
	if err := p.final.Launch(d.Device, cuda.Dim3{X: c.G * parts}, cuda.Dim3{X: tuning.WMFinalBlock}, 0, s, &kernels.WmFinalArgs{
		W: w, X: a.x, Keys: keys, Cnt: cnt, Status: a.status, N: int32(c.N), G: int32(c.G), ES: es, BS: bs,
		NP: int32(c.NP), WPlane: p.plane()}); err != nil {
		return err
	}
	p.zeroed[keys] = true
	return nil
}
