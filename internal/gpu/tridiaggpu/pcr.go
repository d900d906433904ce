//go:build cuda

package tridiaggpu

import (
	"fmt"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tridiag/pcr"
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
	pcr    kernels.Pcr       // plain PCR
	hyb    kernels.PcrHybrid // the hybrid
	steps  int               // PCR steps of the hybrid before its Thomas stage
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
	k, err := kernels.PcrFor(f64)
	if err != nil {
		return nil, err
	}
	return &pcrPlan{cfg: cfg, pcr: k}, nil
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
	k, err := kernels.PcrHybridFor(f64)
	if err != nil {
		return nil, err
	}
	return &pcrPlan{cfg: cfg, hybrid: true, hyb: k, steps: min(steps, pcr.Steps(spec.N))}, nil
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
	grid, block := cuda.Dim3{X: p.cfg.Blocks(sp.G)}, cuda.Dim3{X: p.cfg.Threads}
	args := kernels.PcrHybridArgs{A: a.a, B: a.b, C: a.c, D: a.d, X: a.x, N: int32(sp.N), G: int32(sp.G),
		ES: int64(sp.Layout.ElemStride), BS: int64(sp.Layout.BatchStride),
		CA: a.ca, CB: a.cb, CC: a.cc, IsConst: a.isConst(), Status: a.status, Spb: int32(p.cfg.SystemsPerBlock),
		Steps: int32(p.steps)}
	if p.hybrid {
		return p.hyb.Launch(d.Device, grid, block, p.cfg.SharedBytes, s, &args)
	}
	return p.pcr.Launch(d.Device, grid, block, p.cfg.SharedBytes, s, &kernels.PcrArgs{A: args.A, B: args.B, C: args.C, D: args.D, X: args.X,
		N: args.N, G: args.G, ES: args.ES, BS: args.BS, CA: args.CA, CB: args.CB, CC: args.CC, IsConst: args.IsConst,
		Status: args.Status, Spb: args.Spb})
}
