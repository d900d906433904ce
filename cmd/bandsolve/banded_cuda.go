//go:build cuda

package main

import (
	"context"
	"fmt"
	"time"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/gpu"
	"github.com/bandsolve/bandsolve/krylov"
	"github.com/bandsolve/bandsolve/sparse"
	"github.com/bandsolve/bandsolve/spike"
	"github.com/bandsolve/bandsolve/tridiag"
)

// solveBandedCUDA solves pb on the GPU with ordinal idx: truncated SPIKE
// on the device (spikegpu.Plan) as a direct solver, or as the
// preconditioner of BiCGStab(2) iterating on device vectors with CSR
// products (gpu.Space). The solution, in the solver's ordering, goes to
// y. The error is the solver's (for iterative, krylov.ErrNotConverged and
// krylov.ErrBreakdown leave y and rep filled in; so does
// banded.ErrNotRefined for direct, whose refinement runs on the host
// with the GPU's factorization as preconditioner).
func solveBandedCUDA(ctx context.Context, idx int, pb *bandedProblem, method, prec string, opts spike.IterativeOptions, y []float64, rep *bandedReport) error {
	if method == "pivot" {
		return usageErrorf("-method pivot runs on the CPU only (banded LU with partial pivoting is the host reference); use -device cpu")
	}
	d, err := cuda.Open(idx)
	if err != nil {
		return fmt.Errorf("device cuda:%d: %w", idx, err)
	}
	defer func() { _ = d.Close() }()
	rep.device = fmt.Sprintf("cuda:%d (%s)", idx, d.Properties().Name)
	if method == "direct" {
		if prec == "f32" {
			return spikeDirectCUDA(ctx, d, banded.Convert[float32](pb.band), opts.Options, pb, y, rep)
		}
		return spikeDirectCUDA(ctx, d, pb.band, opts.Options, pb, y, rep)
	}
	return spikeIterativeCUDA(ctx, d, pb, opts, y, rep)
}

// spikeDirectCUDA uploads A and b, then factors and solves on the device;
// the factor and solve times exclude the uploads (reported apart).
func spikeDirectCUDA[T tridiag.Float](ctx context.Context, d *cuda.Device, A *banded.Band[T], opts spike.Options, pb *bandedProblem, y []float64, rep *bandedReport) error {
	b := pb.b
	plan, err := gpu.NewSpikePlan[T](d, A.N, A.K, opts)
	if err != nil {
		return err
	}
	defer func() { _ = plan.Close() }()
	x := convertVec[T](b)
	start := time.Now()
	da, err := cuda.Upload(d, A.Data)
	if err != nil {
		return err
	}
	defer func() { _ = da.Free() }()
	db, err := cuda.Upload(d, x)
	if err != nil {
		return err
	}
	defer func() { _ = db.Free() }()
	rep.upload = time.Since(start)
	start = time.Now()
	err = plan.Factor(ctx, da)
	rep.factor = time.Since(start)
	if err != nil {
		return err
	}
	rep.bounds, rep.boosts = plan.Bounds(), plan.BoostCount()+len(plan.ReducedBoosts())
	start = time.Now()
	serr := plan.Solve(ctx, db, db)
	rep.solve = time.Since(start)
	if err := db.CopyTo(x); err != nil {
		return err
	}
	copyVec(y, x)
	if serr != nil {
		return serr
	}
	start = time.Now()
	err = refineDirect(pb, func(r []T) error { return plan.SolveHost(ctx, r, r) }, y, rep)
	rep.solve += time.Since(start)
	return err
}

// spikeIterativeCUDA runs BiCGStab(2) on the device: the operator is the
// CSR of the reordered sparse matrix (-mtx) or of the band, the
// preconditioner a float64 spikegpu.Plan, or a float32 one wrapped by
// gpu.MixedPrecision (-precision mixed). The factor time includes the
// band's upload; the solve time is the whole iteration.
func spikeIterativeCUDA(ctx context.Context, d *cuda.Device, pb *bandedProblem, opts spike.IterativeOptions, y []float64, rep *bandedReport) error {
	A := pb.band
	n := A.N
	start := time.Now()
	var a *sparse.CSR
	var err error
	if pb.reorder != nil {
		a = pb.reorder.Matrix
	} else if a, err = sparse.FromBand(A); err != nil {
		return err
	}
	sp, err := gpu.NewSpace(d, n)
	if err != nil {
		return err
	}
	defer func() { _ = sp.Close() }()
	da, err := gpu.UploadSparse(d, a)
	if err != nil {
		return err
	}
	defer func() { _ = da.Close() }()
	op, err := sp.Operator(da)
	if err != nil {
		return err
	}
	db, err := cuda.Upload(d, pb.b)
	if err != nil {
		return err
	}
	defer func() { _ = db.Free() }()
	dx, err := sp.New()
	if err != nil {
		return err
	}
	defer sp.Free(dx)
	rep.upload = time.Since(start)

	var pc krylov.Preconditioner[*cuda.Buffer[float64]]
	if !opts.NoPreconditioner {
		start = time.Now()
		if opts.Precision == spike.Mixed {
			p32, err := factoredSpikePlan(ctx, d, banded.Convert[float32](A), opts.Options, rep)
			if err != nil {
				return err
			}
			defer func() { _ = p32.Close() }()
			mp, err := gpu.NewMixedPrecision(sp, p32.Solve)
			if err != nil {
				return err
			}
			defer func() { _ = mp.Close() }()
			pc = mp
		} else {
			p64, err := factoredSpikePlan(ctx, d, A, opts.Options, rep)
			if err != nil {
				return err
			}
			defer func() { _ = p64.Close() }()
			pc = p64
		}
		rep.factor = time.Since(start)
	}
	start = time.Now()
	res, serr := krylov.BiCGStab2(ctx, sp, op, pc, db, dx, krylov.Options{Tol: opts.Tol, MaxIter: opts.MaxIter})
	rep.solve = time.Since(start)
	rep.iterations, rep.converged, rep.iterative = res.Iterations, res.Converged, true
	if err := dx.CopyTo(y); err != nil {
		return err
	}
	return serr
}

// factoredSpikePlan makes a SPIKE plan for A on d and factors A with it,
// recording the partitions and boosted pivots in rep.
func factoredSpikePlan[T tridiag.Float](ctx context.Context, d *cuda.Device, A *banded.Band[T], opts spike.Options, rep *bandedReport) (*gpu.SpikePlan[T], error) {
	p, err := gpu.NewSpikePlan[T](d, A.N, A.K, opts)
	if err != nil {
		return nil, err
	}
	if err := p.FactorBand(ctx, A); err != nil {
		_ = p.Close()
		return nil, err
	}
	rep.bounds, rep.boosts = p.Bounds(), p.BoostCount()
	return p, nil
}
