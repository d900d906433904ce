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

// lanesStreamPlan runs the general solves of a batch of adjacent systems
// (batch stride 1) that the lanes kernel takes with the streamed lanes
// kernel (partition_lanes_stream_p16_s8_*, ptx/src/lstream.cuh): a
// persistent grid of tuning.LanesStreamLaunchFor, each block copying its
// next group of 8 systems while it solves the current one. The results
// are the lanes kernel's, partition.Solve's with chunks of 16, bit for
// bit. Constant solves, and the plan's twin for them, are lanes's.
type lanesStreamPlan struct {
	cfg    tuning.LanesStreamLaunch
	kernel kernels.PartitionLanesStreamPS
	lanes  *partitionPlan // the lanes kernel's plan of the same batch
}

// newLanesStreamPlan makes the streamed plan of the batch lanes (a plan of
// the lanes kernel) solves. It fails with tridiag.ErrShape where the
// kernel does not take the batch.
func newLanesStreamPlan(d *gpu, spec tridiag.Spec, f64 bool, lanes *partitionPlan) (*lanesStreamPlan, error) {
	sp, err := forcedPlan[*lanesStreamPlan](d, spec, f64, route.Options{Force: route.PlanLanesStream})
	if err != nil {
		return nil, err
	}
	sp.lanes = lanes
	return sp, nil
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
	return p.kernel.Launch(d.Device, cuda.Dim3{X: p.cfg.Grid}, cuda.Dim3{X: p.cfg.Threads}, p.cfg.SharedBytes, s, &kernels.PartitionLanesStreamPSArgs{
		A: a.a, B: a.b, C: a.c, D: a.d, X: a.x, N: int32(sp.N), G: int32(sp.G),
		ES: int64(sp.Layout.ElemStride), BS: int64(sp.Layout.BatchStride),
		CA: a.ca, CB: a.cb, CC: a.cc, IsConst: a.isConst(), Status: a.status,
		Spb: int32(tuning.LanesStreamSystems), Tps: int32(p.cfg.Threads / tuning.LanesStreamSystems), Word: a.word, Seq: a.seq})
}
