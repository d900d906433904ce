//go:build cuda

package tridiaggpu

import (
	"fmt"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tuning"
)

// lanesStreamPlan runs the general solves of a batch of adjacent systems
// (batch stride 1) that the lanes kernel takes with the streamed lanes
// kernel (partition_lanes_stream_p16_s8_*, ptx/src/lstream.cuh): a
// persistent grid of tuning.LanesStreamLaunchFor, each block copying its
// next group of 8 systems while it solves the current one. The results
// are the lanes kernel's, partition.Solve's with chunks of 16, bit for
// bit. Constant solves, and the plan's twin for them, are lanes's.
type lanesStreamPlan struct {
	cfg    tuning.LanesStreamLaunch
	kernel string
	lanes  *partitionPlan // the lanes kernel's plan of the same batch
}

// newLanesStreamPlan makes the streamed plan of the batch lanes (a plan of
// the lanes kernel) solves. It fails with tridiag.ErrShape where the
// kernel does not take the batch.
func newLanesStreamPlan(d *gpu, spec tridiag.Spec, f64 bool, lanes *partitionPlan) (*lanesStreamPlan, error) {
	if l := spec.Layout; l.BatchStride != 1 || l.ElemStride <= 1 {
		return nil, fmt.Errorf("%w: the streamed lanes kernel takes batches of adjacent systems (batch stride 1)", tridiag.ErrShape)
	}
	kernel := fmt.Sprintf("partition_lanes_stream_p16_s%d%s", tuning.LanesStreamSystems, suffixOf(f64))
	regs, err := d.KernelRegs(kernel)
	if err != nil {
		return nil, err
	}
	cfg, err := tuning.LanesStreamLaunchFor(d.props, spec.N, reductionElem(f64), spec.G, regs)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", tridiag.ErrShape, err)
	}
	return &lanesStreamPlan{cfg: cfg, kernel: kernel, lanes: lanes}, nil
}

func (p *lanesStreamPlan) describe() string {
	return fmt.Sprintf("partition: %d systems across the lanes of a block, %d blocks streaming through the batch (chunks of 16); constant coefficients: %s",
		tuning.LanesStreamSystems, p.cfg.Grid, p.lanes.describe())
}

// workBytes: everything is in shared memory.
func (p *lanesStreamPlan) workBytes() int64 { return 0 }

// signalsItself: both kernels end with block_done_signal.
func (p *lanesStreamPlan) signalsItself() bool { return true }

func (p *lanesStreamPlan) launch(d *gpu, s cu.Stream, a *launchArgs) error {
	if a.constant {
		return p.lanes.launch(d, s, a)
	}
	sp := a.spec
	return d.Launch(p.kernel, cuda.Dim3{X: p.cfg.Grid}, cuda.Dim3{X: p.cfg.Threads}, p.cfg.SharedBytes, s,
		a.a, a.b, a.c, a.d, a.x, int32(sp.N), int32(sp.G),
		int64(sp.Layout.ElemStride), int64(sp.Layout.BatchStride),
		a.scalar(a.ca), a.scalar(a.cb), a.scalar(a.cc), a.isConst(), a.status,
		int32(tuning.LanesStreamSystems), int32(p.cfg.Threads/tuning.LanesStreamSystems), a.word, int32(a.seq))
}
