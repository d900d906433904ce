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

// streamPlan runs the streaming partition kernel partition_stream_p16_*
// (ptx/src/stream.cuh: one system a block in a persistent grid that loads
// the next system while it solves the current one;
// tuning.PartitionStreamLaunchFor)
// for the solves with general coefficients: the results are
// partition.Solve's with chunks of 16, as partitionPlan's. Constant solves
// go to other, the plan Auto would have made without the streaming kernel.
type streamPlan struct {
	cfg    tuning.StreamLaunch
	kernel kernels.PartitionStreamP
	other  kernelPlan
}

// newStreamPlan makes the streaming plan for spec (rows first in memory),
// other serving its constant solves; it fails with tridiag.ErrShape when N
// does not fit the kernel.
func newStreamPlan(d *gpu, spec tridiag.Spec, f64 bool, other kernelPlan) (*streamPlan, error) {
	sp, err := forcedPlan[*streamPlan](d, spec, f64, route.Options{Force: route.PlanStream})
	if err != nil {
		return nil, err
	}
	sp.other = other
	return sp, nil
}

func (p *streamPlan) describe() string {
	s := fmt.Sprintf("partition: one system a block, %d blocks streaming through the batch (chunks of 16)", p.cfg.Grid)
	if d, ok := p.other.(describer); ok {
		s += "; constant coefficients: " + d.describe()
	}
	return s
}

// workBytes: the constant solves' plan's.
func (p *streamPlan) workBytes() int64 { return p.other.workBytes() }

func (p *streamPlan) launch(d *gpu, s cu.Stream, a *launchArgs) error {
	if a.constant {
		return p.other.launch(d, s, a)
	}
	sp := a.spec
	return p.kernel.Launch(d.Device, cuda.Dim3{X: p.cfg.Grid}, cuda.Dim3{X: p.cfg.Threads}, p.cfg.SharedBytes, s, &kernels.PartitionStreamPArgs{
		A: a.a, B: a.b, C: a.c, D: a.d, X: a.x, N: int32(sp.N), G: int32(sp.G),
		ES: int64(sp.Layout.ElemStride), BS: int64(sp.Layout.BatchStride), Status: a.status, Word: a.word, Seq: a.seq})
}
