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
	// (the latency variant of route.Partition).
	latency bool
	// chunk16, on such a plan where tuning.LatencyConstChunk16 says so:
	// the plan with chunks of 16 whose constant kernels its constant
	// solves run, and which a resident grid of it takes (SetResident).
	chunk16 *partitionPlan
}

// newPartitionPlan makes the plan of tridiag.Partition: the route of
// route.Partition (one block per system, segments, the lanes or
// streaming kernels, or gathered) built into launches.
func newPartitionPlan(d *gpu, spec tridiag.Spec, f64 bool) (kernelPlan, error) {
	return d.routePlan(spec, f64, false, route.Options{})
}

// newPartitionPlanChunk makes a partition plan with chunks of p rows, one
// of tuning.PartitionChunks (the GPU results are partition.Solve's with
// the same p): the lanes kernel where it applies, else the kernel with the
// systems in shared memory.
func newPartitionPlanChunk(d *gpu, spec tridiag.Spec, f64 bool, p int) (kernelPlan, error) {
	return d.routePlan(spec, f64, false, route.Options{Chunk: p})
}

// newSharedPartitionPlan makes the plan of partition_p<p>_*: the block's
// systems in shared memory.
func newSharedPartitionPlan(d *gpu, spec tridiag.Spec, f64 bool, p int) (*partitionPlan, error) {
	return forcedPlan[*partitionPlan](d, spec, f64, route.Options{Force: route.PlanShared, Chunk: p})
}

// newLanesPlan is the partition plan of the lanes kernel
// (partition_lanes_p16_*: chunks of 16, a thread a chunk, for batches of
// adjacent systems; tuning.PartitionLanesLaunch; spb > 0: that many
// systems a block, and constant solves in the lanes kernel too).
func newLanesPlan(d *gpu, spec tridiag.Spec, f64 bool, spb int) (*partitionPlan, error) {
	return forcedPlan[*partitionPlan](d, spec, f64, route.Options{Force: route.PlanLanes, Systems: spb})
}

// partitionFromRoute builds the plan of a route.PlanShared or
// route.PlanLanes route: its kernel, its constant kernels where the
// route has them, the plan of chunks of 16 that runs its constant solves
// where the route names one (device thread).
func (d *gpu) partitionFromRoute(spec tridiag.Spec, f64 bool, r *route.Route) (*partitionPlan, error) {
	if r.Partition == nil {
		return nil, fmt.Errorf("cuda: partition route %s without a launch", r.Plan)
	}
	var kernel kernels.PartitionPLauncher
	if r.Plan == route.PlanLanes {
		k, err := kernels.PartitionLanesPFor(16, f64)
		if err != nil {
			return nil, err
		}
		kernel = k
	} else {
		k, err := kernels.PartitionPFor(r.Chunk, f64)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", tridiag.ErrOptions, err)
		}
		kernel = k
	}
	cfg := *r.Partition
	pp := &partitionPlan{cfg: cfg, kernel: kernel, latency: r.Latency}
	var err error
	if pp.direct, err = d.prepareDirect(kernel.Kernel(), cfg.Blocks(spec.G), cfg.Threads, cfg.SharedBytes); err != nil {
		return nil, err
	}
	if c := r.ConstPartition; c != nil {
		ck, err := kernels.PartitionConstPFor(16, f64)
		if err != nil {
			return nil, err
		}
		cc := *c
		pp.constCfg, pp.constKernel = &cc, ck
		if pp.constDirect, err = d.prepareDirect(ck.Kernel(), cc.Blocks(spec.G), cc.Threads, cc.SharedBytes); err != nil {
			return nil, err
		}
	}
	if r.ConstStream != nil {
		k, err := constStreamLauncher(r.ConstStreamKernel, f64)
		if err != nil {
			return nil, err
		}
		if err := pp.setConstStream(d, *r.ConstStream, k); err != nil {
			return nil, err
		}
	}
	if r.Constant != nil {
		if pp.chunk16, err = d.partitionFromRoute(spec, f64, r.Constant); err != nil {
			return nil, err
		}
	}
	return pp, nil
}

// constStreamFamily is route.ConstStreamFamily's kernel as its typed
// launcher.
func constStreamFamily(warp, rows, f64 bool) (kernels.PartitionConstPLauncher, error) {
	k, err := route.ConstStreamFamily(warp, rows, f64)
	if err != nil {
		return nil, err
	}
	return k.(kernels.PartitionConstPLauncher), nil
}

// constStreamLauncher is the typed launcher of the constant streaming
// kernel k of a route.
func constStreamLauncher(k kernels.Kernel, f64 bool) (kernels.PartitionConstPLauncher, error) {
	for _, warp := range []bool{false, true} {
		for _, rows := range []bool{false, true} {
			if l, err := constStreamFamily(warp, rows, f64); err == nil && l.Kernel() == k {
				return l, nil
			}
		}
	}
	return nil, fmt.Errorf("%w: %s is no constant streaming kernel", kernels.ErrNoKernel, k)
}

// constStreamLaunch is the launch of the constant streaming kernel for
// spec (spb > 0: that many systems a block) and the kernel, as the
// partition family's route of a shared-memory plan forced to take it
// (device thread).
func constStreamLaunch(d *gpu, spec tridiag.Spec, f64 bool, spb int) (tuning.ConstStreamLaunch, kernels.PartitionConstPLauncher, error) {
	o := d.cfg.partitionOptions()
	o.Force, o.Chunk, o.ConstStream, o.ConstStreamSystems = route.PlanShared, 16, true, spb
	r, err := d.routeLocked(spec, f64, false, o)
	if err != nil {
		return tuning.ConstStreamLaunch{}, nil, err
	}
	k, err := constStreamLauncher(r.ConstStreamKernel, f64)
	if err != nil {
		return tuning.ConstStreamLaunch{}, nil, err
	}
	return *r.ConstStream, k, nil
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
