//go:build cuda

package tridiaggpu

import (
	"fmt"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tuning"
)

// streamKernel is the streaming partition kernel (ptx/src/stream.cuh):
// one system a block in a persistent grid that loads the next system
// while it solves the current one.
const streamKernel = "partition_stream_p16"

// streamPlan runs partition_stream_p16_* (tuning.PartitionStreamLaunchFor)
// for the solves with general coefficients: the results are
// partition.Solve's with chunks of 16, as partitionPlan's. Constant solves
// go to other, the plan Auto would have made without the streaming kernel.
type streamPlan struct {
	cfg    tuning.StreamLaunch
	kernel string // with the precision suffix
	other  kernelPlan
}

// newStreamPlan makes the streaming plan for spec (rows first in memory),
// other serving its constant solves; it fails with tridiag.ErrShape when N
// does not fit the kernel.
func newStreamPlan(d *gpu, spec tridiag.Spec, f64 bool, other kernelPlan) (*streamPlan, error) {
	l := spec.Layout
	if l.BatchStride < l.ElemStride {
		return nil, fmt.Errorf("%w: the streaming partition kernel takes layouts with the rows first in memory", tridiag.ErrShape)
	}
	sp := &streamPlan{kernel: streamKernel + suffixOf(f64), other: other}
	err := d.Enqueue(func() error {
		regs, err := d.KernelAttr(sp.kernel, cu.NumRegs)
		if err != nil {
			return err
		}
		if sp.cfg, err = tuning.PartitionStreamLaunchFor(d.props, spec.N, reductionElem(f64), spec.G, regs); err != nil {
			return fmt.Errorf("%w: %w", tridiag.ErrShape, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
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
	return d.Launch(p.kernel, cuda.Dim3{X: p.cfg.Grid}, cuda.Dim3{X: p.cfg.Threads}, p.cfg.SharedBytes, s,
		a.a, a.b, a.c, a.d, a.x, int32(sp.N), int32(sp.G),
		int64(sp.Layout.ElemStride), int64(sp.Layout.BatchStride), a.status, a.word, int32(a.seq))
}
