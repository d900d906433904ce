//go:build cuda

package tridiaggpu

import (
	"fmt"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tuning"
)

func init() { algorithms[tridiag.CR] = newCRPlan }

// crPlan runs cyclic reduction with each system in shared memory, every
// level in place (kernel cr_*, ptx/src/cr.cuh), bit for bit cr.Solve,
// with the launch of tuning.CRLaunch. Systems larger than tuning.CRMaxN
// are not supported.
type crPlan struct {
	cfg tuning.ReductionLaunch
}

func newCRPlan(d *gpu, spec tridiag.Spec, f64 bool) (kernelPlan, error) {
	cfg, err := tuning.CRLaunch(d.props, spec.N, reductionElem(f64))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", tridiag.ErrShape, err)
	}
	return &crPlan{cfg: cfg}, nil
}

// workBytes: everything is in shared memory.
func (p *crPlan) workBytes() int64 { return 0 }

func (p *crPlan) launch(d *gpu, s cu.Stream, a *launchArgs) error {
	sp := a.spec
	return d.Launch("cr"+a.suffix(), cuda.Dim3{X: p.cfg.Blocks(sp.G)}, cuda.Dim3{X: p.cfg.Threads}, p.cfg.SharedBytes, s,
		a.a, a.b, a.c, a.d, a.x, int32(sp.N), int32(sp.G),
		int64(sp.Layout.ElemStride), int64(sp.Layout.BatchStride),
		a.scalar(a.ca), a.scalar(a.cb), a.scalar(a.cc), a.isConst(), a.status, int32(p.cfg.SystemsPerBlock))
}
