//go:build cuda

package bandedgpu

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
	"github.com/bandsolve/bandsolve/tridiag"
)

// MaxBatchK is the largest half-bandwidth of BatchPlan (its kernels keep
// a (K+1)×(K+1) window of the matrix in registers).
const MaxBatchK = 8

// Status kinds written by the banded kernels (ptx/src/band_common.cuh).
const (
	bandNonFiniteEntry = 1
	bandNonFinitePivot = 2
	bandZeroPivot      = 3
	bandNonFiniteX     = 4
	bandSingular       = 5

	bandFlagFail  = 1
	bandFlagBoost = 2

	bandCheckX = 1 // kernel flag: report non-finite solutions
)

// Options configure a BatchPlan.
type Options struct {
	// Pivot factors with partial pivoting (gbtrf/gbtrs: banded.FactorPivot
	// and PivotLU.Solve on each system, bit for bit) instead of LU without
	// pivoting: the kernel band_batch_pivot_* (band_batch_cpivot_* for a
	// complex plan, pivoting by |re| + |im| as the CPU does), a thread a
	// system, keeps each system's factors in the workspace. Factor is then
	// unused, and a system whose pivot column is zero fails with
	// banded.ErrSingular. A complex plan needs it (as banded.SolveBatch
	// does for complex batches).
	Pivot bool
	// Factor sets the diagonal boosting of the LU factorization without
	// pivoting, exactly as for banded.FactorLU: a pivot p with |p| < τ =
	// BoostTol·max|a_ij| of its system becomes sign(p)·τ; 0 means the
	// machine epsilon of the element type, a negative value turns
	// boosting off (a zero pivot then fails the system).
	Factor banded.FactorOptions
	// CheckFinite also fails systems whose solution holds a NaN or Inf
	// (from a right-hand side that is not finite, or overflow), naming the
	// first such row. banded.SolveBatch does not check this, so it is off
	// by default.
	CheckFinite bool
	// Check measures every solution of SolveDevice and Solve as
	// banded.Check does (normwise backward error and κ̂, on the host, from
	// copies of the batch: banded.CheckBatch) and fails the systems whose
	// backward error exceeds Tol or whose κ̂·ε ≥ 1/2, with their
	// tridiag.Status; boosted systems carry the Boosted flag. It keeps a
	// device copy of d for in-place solves (x = d). Off by default: it
	// costs more than the solve.
	Check bool
	// Tol is the largest backward error Check accepts (0:
	// tridiag.DefaultTol of T).
	Tol float64
	// depth, when not 0, launches the kernel of that prefetch depth
	// (kernels.BandBatchKDFor) instead of the default one for K (tests
	// and benchmarks of variants).
	depth int
}

// newBatchKernel returns the kernel a BatchPlan launches: the default one
// for K (kernels.BandBatchK) or, when depth is set, the variant of that
// prefetch depth (kernels.BandBatchKD, the same parameters).
func newBatchKernel(k, depth int, f64 bool) (kernels.BandBatchKLauncher, error) {
	var (
		bk  kernels.BandBatchKLauncher
		err error
	)
	if depth == 0 {
		bk, err = kernels.BandBatchKFor(k, f64)
	} else {
		bk, err = kernels.BandBatchKDFor(k, depth, f64)
	}
	if err != nil {
		return nil, fmt.Errorf("bandedgpu: batch kernel for K=%d: %w", k, err)
	}
	return bk, nil
}

// BatchPlan solves batches of G banded systems of order N and
// half-bandwidth K (1 ≤ K ≤ MaxBatchK) on the GPU with one thread per
// system: LU without pivoting with diagonal boosting, fused with the
// forward and backward sweeps in one kernel, or, with Options.Pivot, LU
// with partial pivoting. T is float32, float64, or complex64 or
// complex128 with Options.Pivot (complex systems pivot by |re| + |im|, as
// banded.FactorPivot does; Go's complex arithmetic, so that the results
// are banded.SolveBatch's bit for bit). The results are bit for bit
// those of banded.SolveBatch with the same FactorOptions and refinement
// off (banded.FactorLU and banded.SolveLU on each system), failures and
// boosts included: the GPU does not refine boosted systems (see
// banded.Refine to refine them on the host).
//
// The batch is in a banded.Layout: Interleaved (element e of system g's
// tall-and-thin storage at e·G + g; right-hand sides and solutions at
// i·G + g), where a warp's loads are coalesced, or Contiguous. The matrices
// and right-hand sides are only read; the plan keeps a workspace of
// (K+1)·N·G elements (the upper factor's rows and the eliminated
// right-hand side, always interleaved). Solves of one plan run one at a
// time.
type BatchPlan[T banded.Scalar] struct {
	dev        *cuda.Device
	n, k, g    int
	gp         int // G rounded up to the block size
	threads    int
	layout     banded.Layout
	opts       Options
	tol        float64 // resolved BoostTol; < 0: off
	kern       kernels.BandBatchKLauncher
	pkern      kernels.BandBatchPivotK  // the kernel with Options.Pivot
	cpkern     kernels.BandBatchCpivotK // a complex plan's kernel
	piv        cu.DevicePtr             // its interchanges, N·Gp int32
	mu         sync.Mutex
	stream     cu.Stream    // the stream solves queue on: own or the caller's
	own        cu.Stream    // the plan's own stream
	ext        *cuda.Stream // the caller's stream (SetStream), or nil
	work       cu.DevicePtr
	status     cu.DevicePtr
	codes      []int32
	ha, hd, hx *cuda.Buffer[T]
	// Options.Check: the copy of d kept for in-place solves, and the host
	// copies of the batch, made on first use.
	dkeep          *cuda.Buffer[T]
	checkBatch     *banded.Batch[T]
	checkR, checkX []T
	// SolveDeviceGeneral: the matrices padded to the plan's 2K+1
	// diagonals, and the bandwidths whose rows it holds (-1: none yet).
	padded       *cuda.Buffer[T]
	padKL, padKU int
	closed       bool
}

// NewBatchPlan makes a plan for batches of g systems of order n and
// half-bandwidth k in the given layout. Shapes outside 1 ≤ k ≤ MaxBatchK,
// k < n, g ≥ 1 give an error wrapping banded.ErrShape; a complex T
// without opts.Pivot an error wrapping banded.ErrOption.
func NewBatchPlan[T banded.Scalar](d *cuda.Device, n, k, g int, layout banded.Layout, opts Options) (*BatchPlan[T], error) {
	if err := banded.CheckShape(n, k); err != nil {
		return nil, err
	}
	if k < 1 || k > MaxBatchK {
		return nil, fmt.Errorf("%w: the GPU batch solver takes 1 ≤ K ≤ %d, got K=%d", banded.ErrShape, MaxBatchK, k)
	}
	if g < 1 {
		return nil, fmt.Errorf("%w: batch of G=%d systems", banded.ErrShape, g)
	}
	if layout != banded.Contiguous && layout != banded.Interleaved {
		return nil, fmt.Errorf("%w: unknown layout %v", banded.ErrShape, layout)
	}
	if int64(2*k+1)*int64(n)*int64(g) > 1<<40 {
		return nil, fmt.Errorf("%w: batch too large", banded.ErrShape)
	}
	cplx := isComplex[T]()
	if cplx && !opts.Pivot {
		return nil, fmt.Errorf("%w: bandedgpu: a %s batch needs Options.Pivot (LU without pivoting and boosting are real only)", banded.ErrOption, typeName[T]())
	}
	p := &BatchPlan[T]{dev: d, n: n, k: k, g: g, layout: layout, opts: opts, padKL: -1, padKU: -1}
	p.tol = boostTolOf[T](opts.Factor.BoostTol)
	// Blocks of 64 threads while they fill the GPU twice over, else of 32
	// (one warp) to spread small batches over every multiprocessor.
	p.threads = 32
	if (g+63)/64 >= 2*d.Properties().SMs {
		p.threads = 64
	}
	p.gp = (g + p.threads - 1) / p.threads * p.threads
	// One kernel per K, with the deepest prefetch that fits in registers:
	// on an H100 it is the fastest for small and full batches alike
	// (go test -tags cuda -run '^$' -bench '^BenchmarkBandBatch$'
	// ./internal/gpu/bandedgpu).
	var err error
	wrows := int64(k + 1) // the workspace's rows a system row (Bytes)
	switch {
	case cplx:
		if p.cpkern, err = kernels.BandBatchCpivotKFor(k, partF64[T]()); err != nil {
			return nil, fmt.Errorf("bandedgpu: complex pivoting batch kernel for K=%d: %w", k, err)
		}
		wrows = int64(3*k + 1)
	case opts.Pivot:
		if p.pkern, err = kernels.BandBatchPivotKFor(k, partF64[T]()); err != nil {
			return nil, fmt.Errorf("bandedgpu: pivoting batch kernel for K=%d: %w", k, err)
		}
		wrows = int64(3*k + 1) // gbtrf's rows of the factors
	default:
		p.kern, err = newBatchKernel(k, opts.depth, partF64[T]())
	}
	if err != nil {
		return nil, err
	}
	if p.status, err = d.AllocBytes(int64(4*g+1) * 4); err != nil {
		return nil, err
	}
	// The clear lands before the first solve, which may run on a caller's
	// stream that does not wait for the legacy default one (SetStream).
	if err = d.Enqueue(func() error {
		if err := cu.MemsetD32(p.status, 0, int64(4*g+1)); err != nil {
			return err
		}
		return (cu.Stream{}).Synchronize()
	}); err != nil {
		_ = p.Close()
		return nil, fmt.Errorf("cuda: clearing status: %w", err)
	}
	if p.work, err = d.AllocBytes(wrows * int64(n) * int64(p.gp) * elemBytes[T]()); err != nil {
		_ = p.Close()
		return nil, fmt.Errorf("cuda: banded batch workspace: %w", err)
	}
	if opts.Pivot {
		if p.piv, err = d.AllocBytes(4 * int64(n) * int64(p.gp)); err != nil {
			_ = p.Close()
			return nil, fmt.Errorf("cuda: banded batch interchanges: %w", err)
		}
	}
	if err = d.Enqueue(func() error {
		var e error
		p.own, e = cu.MakeStream(cu.DefaultStream)
		p.stream = p.own
		return e
	}); err != nil {
		_ = p.Close()
		return nil, fmt.Errorf("cuda: creating a stream: %w", err)
	}
	return p, nil
}

// SetStream makes the plan queue its solves on s, a stream of the plan's
// device made by other CUDA code in the device's primary context
// (cuda.WrapStream) or by Device.NewStream; nil returns the plan to its
// own stream. A solve on s runs after the work queued on s before it;
// the solve functions return when it is done (they synchronize s, which
// also waits for work queued on s meanwhile by other threads). Work of
// other streams on the buffers is the caller's to order (Solve waits for
// its own copies). The plan first waits for the work it queued on its
// previous stream. s must stay valid until the plan is closed or given
// another stream; Close does not destroy it.
func (p *BatchPlan[T]) SetStream(s *cuda.Stream) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return tridiag.ErrClosed
	}
	if s != nil && s.Device() != p.dev {
		return fmt.Errorf("%w: the stream belongs to another device than the plan's (%s)", banded.ErrOption, p.dev.Name())
	}
	next := p.own
	if s != nil {
		next = s.Handle()
	}
	if err := p.dev.Enqueue(func() error { return p.stream.Synchronize() }); err != nil {
		return fmt.Errorf("cuda: banded batch N=%d K=%d G=%d: waiting for the plan's stream: %w", p.n, p.k, p.g, err)
	}
	p.stream, p.ext = next, s
	return nil
}

// Shape returns N, K and G.
func (p *BatchPlan[T]) Shape() (n, k, g int) { return p.n, p.k, p.g }

// Kernel names the kernel the plan launches.
func (p *BatchPlan[T]) Kernel() string {
	if isComplex[T]() {
		return p.cpkern.Kernel().Name()
	}
	if p.opts.Pivot {
		return p.pkern.Kernel().Name()
	}
	return p.kern.Kernel().Name()
}

// Bytes returns the device-memory traffic of one solve as the kernel
// issues it (bytes read plus written; lines that stay in L2 may spare some)
// and the floor: reading the (2K+1)·N·G coefficients and N·G right-hand
// sides and writing N·G solutions once. Per row the kernel reads the 2K+1
// entries and d_j, writes and reads back K+1 workspace values (the row of
// U without its last entry, which is read again from the matrix, and the
// eliminated right-hand side), reads that last entry and writes x_j:
// 4K+6 elements against 2K+3. With Options.Pivot the kernel copies the
// 2K+1 entries into the 3K+1 rows of the factors, which the factorization
// reads and writes once more (a window that stays in cache) and the
// solve reads again, with the interchange of each row written and read
// (4 bytes each way), d read once and x written three times and read
// twice: about 11K+11 elements and 8 bytes a row (a complex element is
// two parts).
func (p *BatchPlan[T]) Bytes() (moved, floor int64) {
	rows := int64(p.n) * int64(p.g)
	e := elemBytes[T]()
	k := int64(p.k)
	floor = rows * (2*k + 3) * e
	if p.opts.Pivot {
		return rows * ((11*k+11)*e + 8), floor
	}
	tail := int64(p.k) * int64(p.g) // rows whose u_{j,j+K} is outside the matrix
	return (rows*(4*k+6) - tail) * e, floor
}

func (p *BatchPlan[T]) strides() (aes, abs, des, dbs int64) {
	if p.layout == banded.Interleaved {
		return int64(p.g), 1, int64(p.g), 1
	}
	return 1, int64(2*p.k+1) * int64(p.n), 1, int64(p.n)
}

// launch enqueues the kernel (device thread) on the right-hand sides and
// solutions at i·des + g·dbs of d and x.
func (p *BatchPlan[T]) launch(a, d, x cu.DevicePtr, des, dbs int64) error {
	aes, abs, _, _ := p.strides()
	flags := int32(0)
	if p.opts.CheckFinite {
		flags |= bandCheckX
	}
	if isComplex[T]() {
		return p.cpkern.Launch(p.dev, cuda.Dim3{X: p.gp / p.threads}, cuda.Dim3{X: p.threads}, 0, p.stream, &kernels.BandBatchCpivotKArgs{
			A: a, D: d, X: x, W: p.work, Piv: p.piv,
			N: int32(p.n), G: int32(p.g), GP: int32(p.gp),
			Aes: aes, Abs: abs, Des: des, Dbs: dbs,
			Flags: flags, Status: p.status,
		})
	}
	if p.opts.Pivot {
		return p.pkern.Launch(p.dev, cuda.Dim3{X: p.gp / p.threads}, cuda.Dim3{X: p.threads}, 0, p.stream, &kernels.BandBatchPivotKArgs{
			A: a, D: d, X: x, W: p.work, Piv: p.piv,
			N: int32(p.n), G: int32(p.g), GP: int32(p.gp),
			Aes: aes, Abs: abs, Des: des, Dbs: dbs,
			Flags: flags, Status: p.status,
		})
	}
	return p.kern.Launch(p.dev, cuda.Dim3{X: p.gp / p.threads}, cuda.Dim3{X: p.threads}, 0, p.stream, &kernels.BandBatchKArgs{
		A: a, D: d, X: x, W: p.work,
		N: int32(p.n), G: int32(p.g), GP: int32(p.gp),
		Aes: aes, Abs: abs, Des: des, Dbs: dbs,
		Tol: p.tol, Flags: flags, Status: p.status,
	})
}

// check checks the buffers of a solve: a of coef elements, then d and x
// of N·G·nrhs.
func (p *BatchPlan[T]) check(coef int64, nrhs int, bufs ...*cuda.Buffer[T]) error {
	vec := int64(p.n) * int64(p.g) * int64(nrhs)
	for i, b := range bufs {
		if b == nil || b.Ptr() == 0 {
			return fmt.Errorf("%w: nil or freed buffer", banded.ErrShape)
		}
		need := vec
		if i == 0 {
			need = coef
		}
		if int64(b.Len()) < need {
			return fmt.Errorf("%w: buffer of %d elements, need %d", banded.ErrShape, b.Len(), need)
		}
	}
	return nil
}

// coef is the number of elements of the plan's matrices.
func (p *BatchPlan[T]) coef() int64 { return int64(2*p.k+1) * int64(p.n) * int64(p.g) }

// SolveDevice solves the batch held in device buffers: a holds the G
// matrices ((2K+1)·N·G elements), d the right-hand sides, x receives the
// solutions (N·G elements each, in the plan's layout); x may be d. It
// returns when the solve is done, with the boosted pivots in the result
// (the kernel counts them; the plan then copies the matrices back and
// lists the rows of the boosted systems with banded.FactorLU).
// Systems that failed (a NaN/Inf entry, a zero pivot with boosting off, a
// pivot that overflowed) get x = NaN and are listed in a
// *banded.BatchError, with the row and column of banded's *RowError.
func (p *BatchPlan[T]) SolveDevice(ctx context.Context, a, d, x *cuda.Buffer[T]) (banded.BatchResult, error) {
	if err := p.check(p.coef(), 1, a, d, x); err != nil {
		return banded.BatchResult{}, err
	}
	return p.solveDevice(ctx, a, p.k, p.k, d, x, 1)
}

// SolveDeviceGeneral solves a batch whose matrices have kl sub-diagonals
// and ku super-diagonals (0 ≤ kl, ku ≤ K) in banded.General's storage,
// which is SciPy's solve_banded((kl, ku), ab, b) array ab: a_ij of a
// system at row ku + i − j, column j of its (kl+ku+1)×N block (slots
// outside the matrix are not read), the G blocks in the plan's layout
// (Contiguous: system g's block at g·(kl+ku+1)·N; Interleaved: element e
// of the block at e·G + g). d and x hold nrhs right-hand sides and
// solutions a system, row by row: row i, column r of system g at
// g·N·nrhs + i·nrhs + r (Contiguous) or (i·nrhs + r)·G + g
// (Interleaved); x may be d. ab is only read.
//
// With kl = ku = K the kernel reads ab as it is (SolveDevice's storage);
// otherwise the plan first copies ab into a buffer of its own with 2K+1
// diagonals, the others zero (made on first use, (2K+1)·N·G elements),
// which gives the factorization with partial pivoting the same pivots,
// operations and results as with (kl, ku). The columns are solved one
// after the other, each with the whole factorization. A system that
// fails in any column is listed once in the *banded.BatchError, at the
// row and column of its first failing column, and all of its columns of
// x are NaN. Options.Check takes nrhs = 1 only. It returns when the
// solve is done.
func (p *BatchPlan[T]) SolveDeviceGeneral(ctx context.Context, kl, ku int, ab, d, x *cuda.Buffer[T], nrhs int) (banded.BatchResult, error) {
	if kl < 0 || ku < 0 || kl > p.k || ku > p.k {
		return banded.BatchResult{}, fmt.Errorf("%w: bandwidths KL=%d KU=%d on a plan of K=%d", banded.ErrShape, kl, ku, p.k)
	}
	if nrhs < 1 {
		return banded.BatchResult{}, fmt.Errorf("%w: nrhs = %d, want ≥ 1", banded.ErrShape, nrhs)
	}
	if p.opts.Check && nrhs > 1 {
		return banded.BatchResult{}, fmt.Errorf("%w: Options.Check with %d right-hand sides (it checks one)", banded.ErrOption, nrhs)
	}
	if err := p.check(int64(kl+ku+1)*int64(p.n)*int64(p.g), nrhs, ab, d, x); err != nil {
		return banded.BatchResult{}, err
	}
	return p.solveDevice(ctx, ab, kl, ku, d, x, nrhs)
}

// solveDevice solves nrhs right-hand sides with the matrices a of
// bandwidths (kl, ku), padded to the plan's K unless they are K.
func (p *BatchPlan[T]) solveDevice(ctx context.Context, a *cuda.Buffer[T], kl, ku int, d, x *cuda.Buffer[T], nrhs int) (banded.BatchResult, error) {
	var res banded.BatchResult
	if err := ctx.Err(); err != nil {
		return res, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return res, tridiag.ErrClosed
	}
	pad := kl != p.k || ku != p.k
	if pad && p.padded == nil {
		var err error
		if p.padded, err = cuda.Alloc[T](p.dev, int(p.coef())); err != nil {
			return res, fmt.Errorf("cuda: the padded copy of the matrices: %w", err)
		}
	}
	mat := a
	if pad {
		mat = p.padded
	}
	rhs := d
	if p.opts.Check && x.Ptr() == d.Ptr() {
		if p.dkeep == nil {
			var err error
			if p.dkeep, err = cuda.Alloc[T](p.dev, d.Len()); err != nil {
				return res, fmt.Errorf("cuda: the copy of d for the check: %w", err)
			}
		}
		rhs = p.dkeep
	}
	e := elemBytes[T]()
	des, dbs := int64(nrhs), int64(p.n)*int64(nrhs) // row i, column r of system g: g·dbs + i·des + r·off
	off := int64(1)
	if p.layout == banded.Interleaved {
		des, dbs, off = int64(nrhs)*int64(p.g), 1, int64(p.g)
	}
	var st []int32
	err := p.dev.Enqueue(func() error {
		if pad {
			if err := p.padMatrices(a, kl, ku); err != nil {
				_ = p.stream.Synchronize()
				return err
			}
		}
		if rhs != d {
			if err := cu.MemcpyDtoDAsync(rhs.Ptr(), d.Ptr(), int64(d.Len())*e, p.stream); err != nil {
				return err
			}
		}
		for r := range int64(nrhs) {
			at := cu.DevicePtr(r * off * e)
			if err := p.launch(mat.Ptr(), d.Ptr()+at, x.Ptr()+at, des, dbs); err != nil {
				_ = p.stream.Synchronize()
				return err
			}
		}
		var err error
		st, err = p.readStatus()
		return err
	})
	if err != nil {
		return res, err
	}
	if st != nil {
		res, err = p.report(mat, st)
	}
	var be *banded.BatchError
	if nrhs > 1 && errors.As(err, &be) {
		if nerr := p.nanSystems(x, nrhs, be); nerr != nil {
			return res, nerr
		}
	}
	if !p.opts.Check {
		return res, err
	}
	return res, p.checkSolutions(mat, rhs, x, res, err)
}

// nanSystems writes NaN to every column of x of the failed systems (a
// system may fail in some columns only: a right-hand side that is not
// finite, with Options.CheckFinite). The 16-bit word 0x7ff8 repeated is
// a quiet NaN in float32 and float64 alike.
func (p *BatchPlan[T]) nanSystems(x *cuda.Buffer[T], nrhs int, be *banded.BatchError) error {
	const nan16 = 0x7ff8
	e := elemBytes[T]()
	rows := int64(p.n) * int64(nrhs) // the elements of a system
	return p.dev.Enqueue(func() error {
		for _, f := range be.Failed {
			var err error
			if p.layout == banded.Interleaved {
				err = cu.MemsetD2D16Async(x.Ptr()+cu.DevicePtr(int64(f.System)*e), int64(p.g)*e, nan16, e/2, rows, p.stream)
			} else {
				err = cu.MemsetD16Async(x.Ptr()+cu.DevicePtr(int64(f.System)*rows*e), nan16, rows*e/2, p.stream)
			}
			if err != nil {
				_ = p.stream.Synchronize()
				return fmt.Errorf("cuda: writing NaN to the solutions of system %d: %w", f.System, err)
			}
		}
		if err := p.stream.Synchronize(); err != nil {
			return fmt.Errorf("cuda: banded batch solve N=%d K=%d G=%d: %w", p.n, p.k, p.g, err)
		}
		return nil
	})
}

// checkSolutions checks the solutions x of the batch a for the
// right-hand sides rhs on the host (Options.Check) and merges the
// failures with the solve's, solveErr (a *banded.BatchError or nil).
func (p *BatchPlan[T]) checkSolutions(a, rhs, x *cuda.Buffer[T], res banded.BatchResult, solveErr error) error {
	var be *banded.BatchError
	if solveErr != nil && !errors.As(solveErr, &be) {
		return solveErr
	}
	if p.checkBatch == nil {
		vec := p.n * p.g
		p.checkBatch = &banded.Batch[T]{N: p.n, K: p.k, G: p.g, Layout: p.layout, Data: make([]T, (2*p.k+1)*vec)}
		p.checkR, p.checkX = make([]T, vec), make([]T, vec)
	}
	host, hr, hx := p.checkBatch, p.checkR, p.checkX
	for _, c := range []struct {
		dst []T
		src *cuda.Buffer[T]
	}{{host.Data, a}, {hr, rhs}, {hx, x}} {
		if err := c.src.CopyTo(c.dst); err != nil {
			return err
		}
	}
	failedSolve := map[int]bool{}
	if be != nil {
		for _, f := range be.Failed {
			failedSolve[f.System] = true
		}
	}
	boosted := map[int]bool{}
	for _, b := range res.Boosted {
		boosted[b.System] = true
	}
	failed, err := banded.CheckBatch(host, hr, hx, p.opts.Tol, func(s int) bool { return failedSolve[s] }, func(s int) bool { return boosted[s] })
	if err != nil {
		return err
	}
	if be == nil && len(failed) == 0 {
		return nil
	}
	if be == nil {
		be = &banded.BatchError{G: p.g}
	}
	be.Failed = append(be.Failed, failed...)
	sort.SliceStable(be.Failed, func(i, j int) bool { return be.Failed[i].System < be.Failed[j].System })
	return be
}

// readStatus waits for the solve and returns the status arrays when the
// flag is set, clearing them on the device (device thread).
func (p *BatchPlan[T]) readStatus() ([]int32, error) {
	if err := p.stream.Synchronize(); err != nil {
		return nil, fmt.Errorf("cuda: banded batch solve N=%d K=%d G=%d: %w", p.n, p.k, p.g, err)
	}
	var flag int32
	if err := cu.MemcpyDtoH(unsafe.Pointer(&flag), p.status+cu.DevicePtr(16*p.g), 4); err != nil {
		return nil, fmt.Errorf("cuda: reading status: %w", err)
	}
	if flag == 0 {
		return nil, nil
	}
	if p.codes == nil {
		p.codes = make([]int32, 4*p.g+1)
	}
	if err := cu.MemcpyDtoH(unsafe.Pointer(&p.codes[0]), p.status, int64(4*(4*p.g+1))); err != nil {
		return nil, fmt.Errorf("cuda: reading status: %w", err)
	}
	// On the plan's stream, so that the next solve there runs after it
	// (a caller's stream may not wait for the legacy default one).
	if err := cu.MemsetD32Async(p.status, 0, int64(4*p.g+1), p.stream); err != nil {
		return nil, fmt.Errorf("cuda: clearing status: %w", err)
	}
	return p.codes, nil
}

// report turns the status arrays into banded's result and errors.
func (p *BatchPlan[T]) report(a *cuda.Buffer[T], st []int32) (banded.BatchResult, error) {
	var res banded.BatchResult
	g := p.g
	flag := st[4*g]
	var be *banded.BatchError
	if flag&bandFlagFail != 0 {
		be = &banded.BatchError{G: g}
		for s := 0; s < g; s++ {
			kind := st[g+s]
			if kind == 0 {
				continue
			}
			row, col := int(st[s])-1, int(st[2*g+s])-1
			var cause error
			switch kind {
			case bandNonFiniteEntry, bandNonFinitePivot, bandNonFiniteX:
				cause = banded.ErrNonFinite
			case bandZeroPivot:
				cause = banded.ErrZeroPivot
			case bandSingular:
				cause = banded.ErrSingular
			default:
				cause = fmt.Errorf("cuda: unknown status %d", kind)
			}
			re := &banded.RowError{Row: row, Col: col, Err: cause}
			be.Failed = append(be.Failed, banded.SystemError{System: s, Row: row, Col: col, Err: re})
		}
	}
	if flag&bandFlagBoost != 0 {
		var host *banded.Batch[T]
		for s := 0; s < g; s++ {
			cnt := int(st[3*g+s])
			if cnt == 0 {
				continue
			}
			// The kernel counts the boosts; the rows come from the CPU
			// twin on the boosted systems (rare), so that the result is
			// banded.SolveBatch's.
			if host == nil {
				host = &banded.Batch[T]{N: p.n, K: p.k, G: g, Layout: p.layout, Data: make([]T, (2*p.k+1)*p.n*g)}
				if err := a.CopyTo(host.Data); err != nil {
					return res, err
				}
			}
			b, err := factorBoosts(host.System(s), p.opts.Factor)
			if err != nil || b.Count() != cnt {
				return res, fmt.Errorf("cuda: system %d: the GPU boosted %d pivots, the CPU %d (%v)", s, cnt, b.Count(), err)
			}
			res.Boosted = append(res.Boosted, banded.SystemBoosts{System: s, Boosts: b})
		}
	}
	if be != nil {
		return res, be
	}
	return res, nil
}

// Solve copies host slices to the device, solves and copies x back: a
// holds the G matrices in the plan's layout (as banded.Batch.Data), rhs
// and x the right-hand sides and solutions (x may be rhs).
func (p *BatchPlan[T]) Solve(ctx context.Context, a, rhs, x []T) (banded.BatchResult, error) {
	coef, vec := (2*p.k+1)*p.n*p.g, p.n*p.g
	if len(a) != coef || len(rhs) != vec || len(x) != vec {
		return banded.BatchResult{}, fmt.Errorf("%w: len(a)=%d, len(rhs)=%d, len(x)=%d, want %d, %d, %d", banded.ErrShape, len(a), len(rhs), len(x), coef, vec, vec)
	}
	var err error
	get := func(b **cuda.Buffer[T], n int) {
		if *b == nil && err == nil {
			*b, err = cuda.Alloc[T](p.dev, n)
		}
	}
	p.mu.Lock()
	get(&p.ha, coef)
	get(&p.hd, vec)
	get(&p.hx, vec)
	p.mu.Unlock()
	if err != nil {
		return banded.BatchResult{}, err
	}
	if err := p.ha.CopyFrom(a); err != nil {
		return banded.BatchResult{}, err
	}
	if err := p.hd.CopyFrom(rhs); err != nil {
		return banded.BatchResult{}, err
	}
	if err := p.syncCopies(); err != nil {
		return banded.BatchResult{}, err
	}
	res, err := p.SolveDevice(ctx, p.ha, p.hd, p.hx)
	var be *banded.BatchError
	if err != nil && !errors.As(err, &be) {
		return res, err
	}
	if cerr := p.hx.CopyTo(x); cerr != nil {
		return res, cerr
	}
	return res, err
}

// syncCopies waits for the input copies of Solve (the legacy default
// stream's: from pageable memory they may return before the data lands)
// when the plan runs on the caller's stream, which may not wait for them.
func (p *BatchPlan[T]) syncCopies() error {
	p.mu.Lock()
	ext := p.ext != nil
	p.mu.Unlock()
	if !ext {
		return nil
	}
	return p.dev.Enqueue(func() error {
		if err := (cu.Stream{}).Synchronize(); err != nil {
			return fmt.Errorf("cuda: banded batch N=%d K=%d G=%d: waiting for the input copies: %w", p.n, p.k, p.g, err)
		}
		return nil
	})
}

// SolveBatch solves a banded.Batch of the plan's shape and layout, like
// banded.SolveBatch.
func (p *BatchPlan[T]) SolveBatch(ctx context.Context, b *banded.Batch[T], rhs, x []T) (banded.BatchResult, error) {
	if err := b.Check(); err != nil {
		return banded.BatchResult{}, err
	}
	if b.N != p.n || b.K != p.k || b.G != p.g || b.Layout != p.layout {
		return banded.BatchResult{}, fmt.Errorf("%w: batch N=%d K=%d G=%d %v, plan N=%d K=%d G=%d %v", banded.ErrShape,
			b.N, b.K, b.G, b.Layout, p.n, p.k, p.g, p.layout)
	}
	return p.Solve(ctx, b.Data, rhs, x)
}

// Stream is the stream the plan's kernels run on.
func (p *BatchPlan[T]) Stream() cu.Stream { return p.stream }

// EnqueueSolve queues one solve of the batch held in device buffers on
// the plan's stream (as SolveDevice, without waiting or reading the
// status): for timing instruments. Call it on the device thread (inside
// cuda.Device.Enqueue or Do); the next SolveDevice or Time reports the
// failures of the solves queued before it.
func (p *BatchPlan[T]) EnqueueSolve(a, d, x *cuda.Buffer[T]) error {
	if err := p.check(p.coef(), 1, a, d, x); err != nil {
		return err
	}
	_, _, des, dbs := p.strides()
	return p.launch(a.Ptr(), d.Ptr(), x.Ptr(), des, dbs)
}

// Time measures the solve of the batch held in device buffers with
// timer (nil: cuda.EventTimer(nil), CUDA events without a gate): warmup
// untimed solves, then reps timed ones (the kernel only, not the status
// readback). The inputs are not modified, so nothing is restored between
// solves; x must not be d. The status is checked once at the end.
func (p *BatchPlan[T]) Time(ctx context.Context, timer cuda.Timer, a, d, x *cuda.Buffer[T], warmup, reps int) ([]time.Duration, error) {
	if reps < 1 {
		return nil, fmt.Errorf("cuda: timing needs reps ≥ 1, got %d", reps)
	}
	if err := p.check(p.coef(), 1, a, d, x); err != nil {
		return nil, err
	}
	if d.Ptr() == x.Ptr() {
		return nil, errors.New("cuda: timing needs x apart from d")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if timer == nil {
		timer = cuda.EventTimer(nil)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, tridiag.ErrClosed
	}
	var times []time.Duration
	var st []int32
	err := p.dev.Enqueue(func() error {
		var err error
		_, _, des, dbs := p.strides()
		times, err = timer(p.stream, warmup, reps, nil, func() error { return p.launch(a.Ptr(), d.Ptr(), x.Ptr(), des, dbs) })
		if err != nil {
			_ = p.stream.Synchronize()
			return fmt.Errorf("cuda: banded batch solve: %w", err)
		}
		st, err = p.readStatus()
		return err
	})
	if err != nil {
		return nil, err
	}
	if st != nil && st[4*p.g]&bandFlagFail != 0 {
		_, rerr := p.report(a, st)
		return times, rerr
	}
	return times, nil
}

// Describe says how the plan solves: its kernel, block size and device.
func (p *BatchPlan[T]) Describe() string {
	return fmt.Sprintf("%s, %d threads per block, one thread per system, on %s", p.Kernel(), p.threads, p.dev.Name())
}

// Close frees the plan's device memory.
func (p *BatchPlan[T]) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	for _, b := range []*cuda.Buffer[T]{p.ha, p.hd, p.hx, p.dkeep, p.padded} {
		if b != nil {
			_ = b.Free()
		}
	}
	return p.dev.Enqueue(func() error {
		if p.stream != (cu.Stream{}) {
			_ = p.stream.Synchronize() // the status clear of the last solve
		}
		if p.piv != 0 {
			_ = cu.MemFree(p.piv)
		}
		if p.work != 0 {
			_ = cu.MemFree(p.work)
		}
		if p.status != 0 {
			_ = cu.MemFree(p.status)
		}
		if p.own != (cu.Stream{}) {
			_ = p.own.Destroy()
		}
		return nil
	})
}
