//go:build cuda

package tridiaggpu

import (
	"fmt"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tuning"
)

func init() { algorithms[tridiag.PCR] = newPCRPlan }

// pcrPlan runs parallel cyclic reduction with each system in shared
// memory (kernels pcr_* and pcr_hybrid_*, ptx/src/pcr.cuh), with the launch
// of tuning.PCRLaunch: several systems per block when N is small, one
// block per system otherwise. Systems larger than tuning.PCRMaxN (the
// device's shared memory per block) are not supported.
//
// The plan of tridiag.PCR runs plain PCR, bit for bit pcr.Solve (the
// CPU's tridiag.PCR). The PCR→Thomas hybrid (pcr.SolveHybrid) is made by
// newPCRHybridPlan, with the steps of tuning (ReductionLaunch.HybridSteps)
// or given ones.
type pcrPlan struct {
	cfg    tuning.ReductionLaunch
	hybrid bool
	steps  int // PCR steps of the hybrid before its Thomas stage
}

func reductionElem(f64 bool) int {
	if f64 {
		return 8
	}
	return 4
}

// newPCRPlan is the factory of tridiag.PCR: plain PCR.
func newPCRPlan(d *gpu, spec tridiag.Spec, f64 bool) (kernelPlan, error) {
	cfg, err := pcrLaunch(d, spec, f64)
	if err != nil {
		return nil, err
	}
	return &pcrPlan{cfg: cfg}, nil
}

// newPCRHybridPlan makes a PCR→Thomas hybrid plan: steps PCR steps, then
// Thomas on the 2^steps interleaved subsystems (steps ≥ ⌈log2 N⌉ is plain
// PCR). steps < 0 takes tuning's choice, cfg.HybridSteps.
func newPCRHybridPlan(d *gpu, spec tridiag.Spec, f64 bool, steps int) (kernelPlan, error) {
	cfg, err := pcrLaunch(d, spec, f64)
	if err != nil {
		return nil, err
	}
	if steps < 0 {
		steps = cfg.HybridSteps
	}
	return &pcrPlan{cfg: cfg, hybrid: true, steps: min(steps, tuning.PCRSteps(spec.N))}, nil
}

func pcrLaunch(d *gpu, spec tridiag.Spec, f64 bool) (tuning.ReductionLaunch, error) {
	cfg, err := tuning.PCRLaunch(d.props, spec.N, reductionElem(f64))
	if err != nil {
		return cfg, fmt.Errorf("%w: %w", tridiag.ErrShape, err)
	}
	return cfg, nil
}

// workBytes: everything is in shared memory.
func (p *pcrPlan) workBytes() int64 { return 0 }

func (p *pcrPlan) launch(d *gpu, s cu.Stream, a *launchArgs) error {
	sp := a.spec
	args := []any{a.a, a.b, a.c, a.d, a.x, int32(sp.N), int32(sp.G),
		int64(sp.Layout.ElemStride), int64(sp.Layout.BatchStride),
		a.scalar(a.ca), a.scalar(a.cb), a.scalar(a.cc), a.isConst(), a.status, int32(p.cfg.SystemsPerBlock)}
	name := "pcr"
	if p.hybrid {
		name = "pcr_hybrid"
		args = append(args, int32(p.steps))
	}
	return d.Launch(name+a.suffix(), cuda.Dim3{X: p.cfg.Blocks(sp.G)}, cuda.Dim3{X: p.cfg.Threads}, p.cfg.SharedBytes, s, args...)
}
