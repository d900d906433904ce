//go:build cuda

package cuda

import (
	"fmt"

	"gorgonia.org/cu"

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
// tridiag.ErrShape (Auto then tries the next algorithm).
type partitionPlan struct {
	cfg    tuning.PartitionLaunch
	kernel string // without the precision suffix
}

func newPartitionPlan(d *Device, spec tridiag.Spec, f64 bool) (kernelPlan, error) {
	return newPartitionPlanChunk(d, spec, f64, partition.DefaultChunk(spec.N))
}

// newPartitionPlanChunk makes a partition plan with chunks of p rows, one
// of tuning.PartitionChunks (the GPU results are partition.Solve's with
// the same p).
func newPartitionPlanChunk(d *Device, spec tridiag.Spec, f64 bool, p int) (kernelPlan, error) {
	kernel := fmt.Sprintf("partition_p%d", p)
	suffix := "_f32"
	if f64 {
		suffix = "_f64"
	}
	elem := reductionElem(f64)
	if !tuning.PartitionKernelBuilt(p, elem) {
		return nil, fmt.Errorf("%w: no partition kernel for chunks of %d %d-byte rows (chunks: %v)", tridiag.ErrOptions, p, elem, tuning.PartitionChunks)
	}
	// The kernel's registers per thread enter the occupancy of the choice.
	var regs int
	if err := d.do(func() error {
		var err error
		regs, err = d.kernelAttr(kernel+suffix, cu.NumRegs)
		return err
	}); err != nil {
		return nil, err
	}
	l := spec.Layout
	cfg, err := tuning.PartitionLaunchChunk(d.props, spec.N, elem, p, spec.G, l.BatchStride < l.ElemStride, regs)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", tridiag.ErrShape, err)
	}
	return &partitionPlan{cfg: cfg, kernel: kernel}, nil
}

// workBytes: everything is in shared memory.
func (p *partitionPlan) workBytes() int64 { return 0 }

func (p *partitionPlan) launch(d *Device, s cu.Stream, a *launchArgs) error {
	sp := a.spec
	return d.launch(p.kernel+a.suffix(), dim3{X: p.cfg.Blocks(sp.G)}, dim3{X: p.cfg.Threads}, p.cfg.SharedBytes, s,
		a.a, a.b, a.c, a.d, a.x, int32(sp.N), int32(sp.G),
		int64(sp.Layout.ElemStride), int64(sp.Layout.BatchStride),
		a.scalar(a.ca), a.scalar(a.cb), a.scalar(a.cc), a.isConst(), a.status,
		int32(p.cfg.SystemsPerBlock), int32(p.cfg.ThreadsPerSystem), a.word, int32(a.seq))
}

// signalsItself: the partition kernel ends with block_done_signal.
func (p *partitionPlan) signalsItself() bool { return true }
