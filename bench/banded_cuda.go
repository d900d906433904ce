//go:build cuda

package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/bandedgpu"
	"github.com/bandsolve/bandsolve/internal/gpu/gpuclock"
	"github.com/bandsolve/bandsolve/internal/gpu/krylovgpu"
	"github.com/bandsolve/bandsolve/internal/gpu/spikegpu"
	"github.com/bandsolve/bandsolve/krylov"
	"github.com/bandsolve/bandsolve/spike"
	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tuning"
)

var (
	_ bandGPU    = (*cudaBackend)(nil)
	_ cuda.Timer = gpuclock.BackToBack
)

// BandMaxK is tuning.SpikeMaxK for the device.
func (b *cudaBackend) BandMaxK(elem int) int { return tuning.SpikeMaxK(b.dev.Properties(), elem) }

// RunBand times the GPU solver of a single banded system: truncated SPIKE
// (spikegpu.Plan) in the case's precision for d ≥ Direct, BiCGStab(2) on
// device vectors with the band's CSR product and an FP32 spikegpu.Plan wrapped
// by krylovgpu.NewMixedPrecision below. Factor and Solve are synchronous calls
// timed with the wall clock, the band and b already on the device.
func (b *cudaBackend) RunBand(ctx context.Context, c BandCase, a *banded.Band[float64], rhs []float64, br bandRun) BandResult {
	switch {
	case c.Iterative():
		return runBandIterative(ctx, b, c, a, rhs, br)
	case c.Precision == F32:
		return runBandDirect[float32](ctx, b, c, a, rhs, br)
	default:
		return runBandDirect[float64](ctx, b, c, a, rhs, br)
	}
}

// fits says why a case needing need bytes of device memory cannot run
// ("" when it fits in 90% of the free memory).
func (b *cudaBackend) fits(need int64) string {
	free := b.FreeBytes()
	if need > free/10*9 {
		return fmt.Sprintf("skipped: needs %s of device memory, %s free", fmtBytes(need), fmtBytes(free))
	}
	return ""
}

// timeSplit runs one warm-up (or br.warmup) and then the repetitions of
// one, which returns the factor and solve times of a call.
func timeSplit(br bandRun, one func() (tf, ts time.Duration, err error)) (fts, sts []time.Duration, err error) {
	var first time.Duration
	for i := 0; i < max(1, br.warmup); i++ {
		tf, ts, err := one()
		if err != nil {
			return nil, nil, err
		}
		first = tf + ts
		if br.budget > 0 && first > br.budget/4 {
			break
		}
	}
	reps := br.repsFor(first)
	for i := 0; i < reps; i++ {
		tf, ts, err := one()
		if err != nil {
			return fts, sts, err
		}
		fts, sts = append(fts, tf), append(sts, ts)
	}
	return fts, sts, nil
}

func runBandDirect[T tridiag.Float](ctx context.Context, be *cudaBackend, c BandCase, a *banded.Band[float64], rhs []float64, br bandRun) BandResult {
	r := BandResult{BandCase: c, Solver: "gpu:spike", Iter: -1, Resid: -1}
	n := c.N
	// The band, the plan's LU and UL copies, b, x and g, the spike blocks.
	if why := be.fits(3*c.BandBytes() + 3*int64(n)*c.ElemSize() + 64<<20); why != "" {
		r.Err = why
		return r
	}
	fail := func(err error) BandResult {
		r.Err = shortErr(err)
		return r
	}
	plan, err := spikegpu.NewPlan[T](be.dev, n, c.K, spike.Options{})
	if err != nil {
		return fail(err)
	}
	defer func() { _ = plan.Close() }()
	da, err := cuda.Upload(be.dev, banded.Convert[T](a).Data)
	if err != nil {
		return fail(err)
	}
	defer func() { _ = da.Free() }()
	b32 := make([]T, n)
	for i, v := range rhs {
		b32[i] = T(v)
	}
	db, err := cuda.Upload(be.dev, b32)
	if err != nil {
		return fail(err)
	}
	defer func() { _ = db.Free() }()
	dx, err := cuda.Alloc[T](be.dev, n)
	if err != nil {
		return fail(err)
	}
	defer func() { _ = dx.Free() }()
	fts, sts, err := timeSplit(br, func() (tf, ts time.Duration, err error) {
		t0 := time.Now()
		if err = plan.Factor(ctx, da); err != nil {
			return 0, 0, err
		}
		tf = time.Since(t0)
		t0 = time.Now()
		err = plan.Solve(ctx, db, dx)
		return tf, time.Since(t0), err
	})
	if err != nil {
		return fail(err)
	}
	r.Factor, r.Solve, r.Total = summarizeSplit(fts, sts)
	r.Reps, r.P = len(fts), plan.P()
	r.MRows = float64(n) / r.Total.Seconds() / 1e6
	r.Note = "kernel " + plan.Kernel()
	if nb := plan.BoostCount(); nb > 0 {
		r.Note += fmt.Sprintf(", %d boosted pivots", nb)
	}
	x := make([]T, n)
	if err := dx.CopyTo(x); err != nil {
		return fail(err)
	}
	x64 := make([]float64, n)
	for i, v := range x {
		x64[i] = float64(v)
	}
	r.Resid = bandResidual(a, rhs, x64)
	return r
}

func runBandIterative(ctx context.Context, be *cudaBackend, c BandCase, a *banded.Band[float64], rhs []float64, br bandRun) BandResult {
	r := BandResult{BandCase: c, Solver: "gpu:bicgstab2+spike32", Iter: -1, Resid: -1}
	n := c.N
	band32 := int64(2*c.K+1) * int64(n) * 4
	nnz := int64(2*c.K+1) * int64(n)
	// CSR (8 B values, 4 B columns), the FP32 band and its two factor
	// copies, about a dozen FP64 vectors.
	if why := be.fits(12*nnz + 3*band32 + 16*int64(n)*8 + 64<<20); why != "" {
		r.Err = why
		return r
	}
	fail := func(err error) BandResult {
		r.Err = shortErr(err)
		return r
	}
	sp, err := krylovgpu.NewSpace(be.dev, n)
	if err != nil {
		return fail(err)
	}
	defer func() { _ = sp.Close() }()
	rowPtr, col, val := bandCSR(a)
	dA, err := krylovgpu.UploadCSR(be.dev, rowPtr, col, val)
	if err != nil {
		return fail(err)
	}
	defer func() { _ = dA.Close() }()
	op, err := sp.Operator(dA)
	if err != nil {
		return fail(err)
	}
	db, err := cuda.Upload(be.dev, rhs)
	if err != nil {
		return fail(err)
	}
	defer func() { _ = db.Free() }()
	dx, err := sp.New()
	if err != nil {
		return fail(err)
	}
	defer sp.Free(dx)
	p32, err := spikegpu.NewPlan[float32](be.dev, n, c.K, spike.Options{})
	if err != nil {
		return fail(err)
	}
	if pmax := iterPartitions(n, c.K); p32.P() > pmax {
		// Larger partitions than tuning's (which picks P for speed): the
		// truncated preconditioner of a matrix that is not diagonally
		// dominant is poor when partitions are short.
		_ = p32.Close()
		if p32, err = spikegpu.NewPlan[float32](be.dev, n, c.K, spike.Options{Partitions: pmax}); err != nil {
			return fail(err)
		}
	}
	defer func() { _ = p32.Close() }()
	da32, err := cuda.Upload(be.dev, banded.Convert[float32](a).Data)
	if err != nil {
		return fail(err)
	}
	defer func() { _ = da32.Free() }()
	mp, err := krylovgpu.NewMixedPrecision(sp, p32.Solve)
	if err != nil {
		return fail(err)
	}
	defer func() { _ = mp.Close() }()
	var res krylov.Result
	var iterErr error
	fts, sts, err := timeSplit(br, func() (tf, ts time.Duration, err error) {
		if err = sp.Zero(dx); err != nil {
			return 0, 0, err
		}
		if err = sp.Sync(); err != nil {
			return 0, 0, err
		}
		t0 := time.Now()
		if err = p32.Factor(ctx, da32); err != nil {
			return 0, 0, err
		}
		tf = time.Since(t0)
		t0 = time.Now()
		res, iterErr = krylov.BiCGStab2(ctx, sp, op, mp, db, dx, krylov.Options{Tol: BandTol, MaxIter: BandMaxIter})
		if err = sp.Sync(); err != nil {
			return 0, 0, err
		}
		ts = time.Since(t0)
		if iterErr != nil && !errors.Is(iterErr, krylov.ErrNotConverged) {
			return 0, 0, iterErr
		}
		return tf, ts, nil
	})
	if err != nil {
		return fail(err)
	}
	r.Factor, r.Solve, r.Total = summarizeSplit(fts, sts)
	r.Reps, r.P, r.Iter = len(fts), p32.P(), res.Iterations
	r.MRows = float64(n) / r.Total.Seconds() / 1e6
	r.Note = fmt.Sprintf("kernel %s, BiCGStab(2) estimate %.1e", p32.Kernel(), res.Residual)
	if nb := p32.BoostCount(); nb > 0 {
		r.Note += fmt.Sprintf(", %d boosted pivots", nb)
	}
	if iterErr != nil {
		r.Err = shortErr(iterErr)
	}
	x := make([]float64, n)
	if err := dx.CopyTo(x); err != nil {
		return fail(err)
	}
	r.Resid = bandResidual(a, rhs, x)
	return r
}

// RunPenta times bandsolve's batched banded kernels (bandedgpu.BatchPlan,
// one thread per system, without pivoting and with partial pivoting) and
// cuSPARSE's gpsvInterleavedBatch (no pivoting) on the same
// interleaved pentadiagonal batch, CUDA events around each call, median
// of the repetitions after the warm-ups; cuSPARSE's six arrays are
// restored before each of its calls outside the timed region.
func (b *cudaBackend) RunPenta(ctx context.Context, c BandCase, br bandRun) []BandResult {
	if c.Precision == F32 {
		return runPenta[float32](ctx, b, c, br)
	}
	return runPenta[float64](ctx, b, c, br)
}

func runPenta[T tridiag.Float](ctx context.Context, be *cudaBackend, c BandCase, br bandRun) []BandResult {
	n, g := c.N, c.G
	plain := BandResult{BandCase: c, Solver: "gpu:bandbatch", Iter: -1, Resid: -1}
	pivot := BandResult{BandCase: c, Solver: "gpu:bandbatch-pivot", Iter: -1, Resid: -1}
	peer := BandResult{BandCase: c, Solver: "cusparse:gpsvInterleavedBatch", Iter: -1, Resid: -1}
	elem := c.ElemSize()
	arr := int64(n) * int64(g) * elem
	// Ours: band, d, x and the pivoting workspace ((3K+1)·N·G elements,
	// N·G interchanges); the peer: six arrays and their saved copies.
	if why := be.fits(max(int64(5*c.K+5)*arr, 12*arr) + 64<<20); why != "" {
		plain.Err, pivot.Err, peer.Err = why, why, why
		return []BandResult{plain, pivot, peer}
	}
	band, diags, rhs := pentaBatch(n, g, br.seed)
	conv := func(v []float64) []T {
		out := make([]T, len(v))
		for i, x := range v {
			out[i] = T(x)
		}
		return out
	}
	rhsT := conv(rhs)
	var bufs []*cuda.Buffer[T]
	defer func() {
		for _, b := range bufs {
			_ = b.Free()
		}
	}()
	up := func(v []T) (*cuda.Buffer[T], error) {
		b, err := cuda.Upload(be.dev, v)
		if err == nil {
			bufs = append(bufs, b)
		}
		return b, err
	}
	figures := func(r *BandResult, ts []time.Duration, x []T) {
		r.Total, _, _ = summarize(ts)
		r.Reps = len(ts)
		r.MRows = float64(c.Rows()) / r.Total.Seconds() / 1e6
		if br.bandwidth > 0 {
			r.Fraction = float64(c.BytesMoved()) / r.Total.Seconds() / br.bandwidth
		}
		x64 := make([]float64, len(x))
		for i, v := range x {
			x64[i] = float64(v)
		}
		r.Resid = pentaResidual(n, g, rhs, x64)
	}
	// ours times bandedgpu.BatchPlan with opts into r.
	ours := func(r *BandResult, opts bandedgpu.Options) {
		br.progress(r.Solver)
		da, err := up(conv(band))
		if err != nil {
			r.Err = shortErr(err)
			return
		}
		dd, err := up(rhsT)
		if err != nil {
			r.Err = shortErr(err)
			return
		}
		dx, err := cuda.Alloc[T](be.dev, n*g)
		if err != nil {
			r.Err = shortErr(err)
			return
		}
		bufs = append(bufs, dx)
		p, err := bandedgpu.NewBatchPlan[T](be.dev, n, c.K, g, banded.Interleaved, opts)
		if err != nil {
			r.Err = shortErr(err)
			return
		}
		defer func() { _ = p.Close() }()
		ts, err := p.Time(ctx, gpuclock.BackToBack, da, dd, dx, br.warmup, max(br.reps, 3))
		if err != nil {
			r.Err = shortErr(err)
			return
		}
		x := make([]T, n*g)
		if err := dx.CopyTo(x); err != nil {
			r.Err = shortErr(err)
			return
		}
		figures(r, ts, x)
		r.Note = "kernel " + p.Kernel()
	}
	free := func() {
		for _, b := range bufs {
			_ = b.Free()
		}
		bufs = nil
	}
	ours(&plain, bandedgpu.Options{})
	free()
	ours(&pivot, bandedgpu.Options{Pivot: true})
	for _, b := range bufs {
		_ = b.Free()
	}
	bufs = nil
	func() {
		if be.peer == nil {
			peer.Err = "no cuSPARSE"
			if be.peerErr != nil {
				peer.Err += ": " + be.peerErr.Error()
			}
			return
		}
		br.progress("cusparse:gpsvInterleavedBatch")
		host := [][]T{conv(diags[0]), conv(diags[1]), conv(diags[2]), conv(diags[3]), conv(diags[4]), rhsT}
		var work []*cuda.Buffer[T]
		var restores []devCopy
		for _, h := range host {
			w, err := up(h)
			if err != nil {
				peer.Err = shortErr(err)
				return
			}
			s, err := up(h)
			if err != nil {
				peer.Err = shortErr(err)
				return
			}
			work = append(work, w)
			restores = append(restores, devCopy{dst: w.Ptr(), src: s.Ptr(), bytes: arr})
		}
		call := &gpsvCall{f64: elem == 8, ds: work[0].Ptr(), dl: work[1].Ptr(), d: work[2].Ptr(), du: work[3].Ptr(),
			dw: work[4].Ptr(), x: work[5].Ptr(), m: n, batch: g}
		ts, err := be.peer.gpsvTime(call, restores, br.warmup, max(br.reps, 3))
		if err != nil {
			peer.Err = shortErr(err)
			return
		}
		x := make([]T, n*g)
		if err := work[5].CopyTo(x); err != nil {
			peer.Err = shortErr(err)
			return
		}
		figures(&peer, ts, x)
		peer.Note = "cuSPARSE " + be.peer.versionString()
	}()
	return []BandResult{plain, pivot, peer}
}
