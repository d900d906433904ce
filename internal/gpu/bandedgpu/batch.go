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
	stream     cu.Stream
	work       cu.DevicePtr
	status     cu.DevicePtr
	codes      []int32
	ha, hd, hx *cuda.Buffer[T]
	// Options.Check: the copy of d kept for in-place solves, and the host
	// copies of the batch, made on first use.
	dkeep          *cuda.Buffer[T]
	checkBatch     *banded.Batch[T]
	checkR, checkX []T
	closed         bool
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
	p := &BatchPlan[T]{dev: d, n: n, k: k, g: g, layout: layout, opts: opts}
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
	if err = d.Enqueue(func() error { return cu.MemsetD32(p.status, 0, int64(4*g+1)) }); err != nil {
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
		p.stream, e = cu.MakeStream(cu.DefaultStream)
		return e
	}); err != nil {
		_ = p.Close()
		return nil, fmt.Errorf("cuda: creating a stream: %w", err)
	}
	return p, nil
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

// launch enqueues the kernel (device thread).
func (p *BatchPlan[T]) launch(a, d, x cu.DevicePtr) error {
	aes, abs, des, dbs := p.strides()
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

func (p *BatchPlan[T]) check(bufs ...*cuda.Buffer[T]) error {
	coef := int64(2*p.k+1) * int64(p.n) * int64(p.g)
	vec := int64(p.n) * int64(p.g)
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
	var res banded.BatchResult
	if err := p.check(a, d, x); err != nil {
		return res, err
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return res, tridiag.ErrClosed
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
	var st []int32
	err := p.dev.Enqueue(func() error {
		if rhs != d {
			if err := cu.MemcpyDtoDAsync(rhs.Ptr(), d.Ptr(), int64(d.Len())*elemBytes[T](), p.stream); err != nil {
				return err
			}
		}
		if err := p.launch(a.Ptr(), d.Ptr(), x.Ptr()); err != nil {
			_ = p.stream.Synchronize()
			return err
		}
		var err error
		st, err = p.readStatus()
		return err
	})
	if err != nil {
		return res, err
	}
	if st != nil {
		res, err = p.report(a, st)
	}
	if !p.opts.Check {
		return res, err
	}
	return res, p.checkSolutions(a, rhs, x, res, err)
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
	if err := cu.MemsetD32(p.status, 0, int64(4*p.g+1)); err != nil {
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
	if err := p.check(a, d, x); err != nil {
		return err
	}
	return p.launch(a.Ptr(), d.Ptr(), x.Ptr())
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
	if err := p.check(a, d, x); err != nil {
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
		times, err = timer(p.stream, warmup, reps, nil, func() error { return p.launch(a.Ptr(), d.Ptr(), x.Ptr()) })
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
	for _, b := range []*cuda.Buffer[T]{p.ha, p.hd, p.hx, p.dkeep} {
		if b != nil {
			_ = b.Free()
		}
	}
	return p.dev.Enqueue(func() error {
		if p.piv != 0 {
			_ = cu.MemFree(p.piv)
		}
		if p.work != 0 {
			_ = cu.MemFree(p.work)
		}
		if p.status != 0 {
			_ = cu.MemFree(p.status)
		}
		if p.stream != (cu.Stream{}) {
			_ = p.stream.Destroy()
		}
		return nil
	})
}
