//go:build cuda

package tridiaggpu

import (
	"fmt"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tuning"
)

func init() { algorithms[tridiag.CR] = newCRPlan }

// crPlan runs cyclic reduction with each system in shared memory, every
// level in place (kernel cr_*, ptx/src/cr.cuh), bit for bit cr.Solve,
// with the launch of tuning.CRLaunch. Systems larger than tuning.CRMaxN
// are not supported.
type crPlan struct {
	cfg    tuning.ReductionLaunch
	kernel kernels.Cr
}

func newCRPlan(d *gpu, spec tridiag.Spec, f64 bool) (kernelPlan, error) {
	cfg, err := tuning.CRLaunch(d.props, spec.N, reductionElem(f64))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", tridiag.ErrShape, err)
	}
	k, err := kernels.CrFor(f64)
	if err != nil {
		return nil, err
	}
	return &crPlan{cfg: cfg, kernel: k}, nil
}

// workBytes: everything is in shared memory.
func (p *crPlan) workBytes() int64 { return 0 }

func (p *crPlan) launch(d *gpu, s cu.Stream, a *launchArgs) error {
	sp := a.spec
	return p.kernel.Launch(d.Device, cuda.Dim3{X: p.cfg.Blocks(sp.G)}, cuda.Dim3{X: p.cfg.Threads}, p.cfg.SharedBytes, s, &kernels.CrArgs{
		A: a.a, B: a.b, C: a.c, D: a.d, X: a.x, N: int32(sp.N), G: int32(sp.G),
		ES: int64(sp.Layout.ElemStride), BS: int64(sp.Layout.BatchStride),
		CA: a.ca, CB: a.cb, CC: a.cc, IsConst: a.isConst(), Status: a.status, Spb: int32(p.cfg.SystemsPerBlock)})
}
