//go:build cuda

// Package sptrsvgpu solves sparse triangular systems on a GPU, the twins
// of package sptrsv's CPU solves (kernels in ptx/src/sptrsv.cuh): the
// level-set method of Naumov (wide levels one launch each, runs of narrow
// levels chained in one block), the synchronization-free method of Liu et
// al. (one warp a component, in-degree counters, atomic partial sums) and
// the synchronization-free solve on the rows (a thread or a warp a row,
// waiting on the ready flags of its dependencies).
// The analysis runs on the device: the checks and in-degrees, the level
// sets (one waiting warp a row in the order of a ticket counter), the
// counting sort of the rows by level, and the triangle by columns for the
// synchronization-free solve.
package sptrsvgpu

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
	"github.com/bandsolve/bandsolve/sparse"
	"github.com/bandsolve/bandsolve/sptrsv"
)

// Float is the element type of a plan.
type Float interface{ ~float32 | ~float64 }

// Launch geometry of the kernels of ptx/src/sptrsv.cuh.
const (
	block      = 256  // TRSV_BLOCK
	warps      = 8    // TRSV_WARPS: rows a block of the waiting kernels
	chainBlock = 1024 // TRSV_CHAIN_BLOCK
	scanBlock  = 1024 // TRSV_SCAN_BLOCK
)

// DefaultChainRows is the widest level that the level-set solve runs
// inside a chain (one block, levels separated by block barriers) rather
// than with a launch of its own.
const DefaultChainRows = 2048

// Options are the plan's choices beyond the triangle's.
type Options struct {
	// Algorithm is sptrsv.LevelSet, sptrsv.SyncFree, sptrsv.SyncFreeCSR
	// or sptrsv.Auto (the zero value), which chooses from the level
	// statistics (Choose).
	Algorithm sptrsv.Algorithm
	// Lanes is the number of lanes that solve one row in the row-wise
	// synchronization-free solve and compute its level in the analysis: 1
	// or 32; 0 chooses by the mean row length (DefaultLanes).
	Lanes int
	// ChainRows: levels of at most this many rows run in chains; 0 means
	// DefaultChainRows, a negative value gives every level a launch.
	ChainRows int
}

// Step is one launch of a pass over the level sets (the level-set solve,
// the incomplete factorizations): levels L0 … L1−1 in one block with
// barriers between them when Chain, else the single wide level L0.
type Step struct {
	L0, L1 int
	Chain  bool
}

// Plan is the analysis of one triangle on the device and the buffers of
// its solves. Its methods are not safe for concurrent use.
type Plan[T Float] struct {
	dev      *cuda.Device
	stream   cu.Stream
	tri      sptrsv.Options
	opts     Options
	alg      sptrsv.Algorithm
	n, nnz   int
	f64      bool
	lg       int     // log2 of the lanes a row of the level-set solves
	rowLg    int     // log2 of the lanes a row of the row-wise solve
	levelsLg int     // log2 of the lanes a row of the levels' computation
	depth    float64 // the mean levels a window of rows spans (Auto's lanes rule)
	gen      uint32

	rowPtr, col, val, deg, diag, errs cu.DevicePtr
	ticket, maxLevel, depthSum        cu.DevicePtr
	// Level sets.
	level, perm, levelPtr, scratch, sums cu.DevicePtr
	levelPtrHost                         []int32
	steps                                []Step
	// The level-ordered copy of the triangle that the chains read, and b
	// in level order (levelOrder).
	rowPtrL, colL, valL, diagL, levelEnt, bL cu.DevicePtr
	// Synchronization-free: by columns (Liu), and the ready flags of the
	// row-wise solve.
	cscPtr, cscRow, cscVal, left, done cu.DevicePtr
	ready                              cu.DevicePtr

	// Locality-aware: the host analysis's arrays on the device, and the
	// matrix it is made from (Analyze redoes it).
	loc  *localityPlan
	host *sparse.CSR

	hostVec *cuda.Buffer[T] // b and x of Solve

	stats  sptrsv.Stats
	allocs []cu.DevicePtr
	closed bool
}

// NewPlan uploads the triangle of a (a.Check'ed on the host) to d and
// analyses it there (Analyze). The errors are sptrsv.Analyze's: ErrShape,
// ErrNotTriangular and ErrSingular naming the row.
func NewPlan[T Float](d *cuda.Device, a *sparse.CSR, tri sptrsv.Options, opts Options) (*Plan[T], error) {
	if a == nil {
		return nil, fmt.Errorf("%w: nil matrix", sptrsv.ErrShape)
	}
	if err := a.Check(); err != nil {
		return nil, fmt.Errorf("sptrsv: %w", err)
	}
	if a.N != a.M {
		return nil, fmt.Errorf("%w: the matrix is %d×%d; a triangular solve needs a square one", sptrsv.ErrShape, a.N, a.M)
	}
	if tri.Triangle != sptrsv.Lower && tri.Triangle != sptrsv.Upper {
		return nil, fmt.Errorf("sptrsv: unknown triangle %d", int(tri.Triangle))
	}
	switch opts.Algorithm {
	case sptrsv.Auto, sptrsv.LevelSet, sptrsv.SyncFree, sptrsv.SyncFreeCSR, sptrsv.LocalityAware:
	default:
		return nil, fmt.Errorf("%w: the GPU solves by level sets or synchronization-free, not %s", sptrsv.ErrAlgorithm, opts.Algorithm)
	}
	if opts.Lanes != 0 && opts.Lanes != 1 && opts.Lanes != 32 {
		return nil, fmt.Errorf("%w: %d lanes a row (want 1 or 32)", sptrsv.ErrAlgorithm, opts.Lanes)
	}
	if a.N >= math.MaxInt32 || a.NNZ() >= math.MaxInt32 {
		return nil, fmt.Errorf("%w: order %d with %d entries: the GPU solves take 32-bit indices", sptrsv.ErrShape, a.N, a.NNZ())
	}
	var zero T
	_, f64 := any(zero).(float64)
	p := &Plan[T]{dev: d, tri: tri, opts: opts, n: a.N, nnz: a.NNZ(), f64: f64}
	if p.opts.ChainRows == 0 {
		p.opts.ChainRows = DefaultChainRows
	}
	if cmp.Or(p.opts.Lanes, DefaultLanes(p.nnz, p.n)) == 32 {
		p.levelsLg = 5
	}
	if err := p.upload(a); err != nil {
		_ = p.Close()
		return nil, err
	}
	if opts.Algorithm == sptrsv.LocalityAware {
		p.host = a
	}
	if err := p.Analyze(); err != nil {
		_ = p.Close()
		return nil, err
	}
	return p, nil
}

func (p *Plan[T]) elem() int64 { return int64(unsafe.Sizeof(T(0))) }

// alloc allocates bytes (at least 4) kept until Close.
func (p *Plan[T]) alloc(bytes int64) (cu.DevicePtr, error) {
	ptr, err := p.dev.AllocBytes(max(bytes, 4))
	if err != nil {
		return 0, err
	}
	p.allocs = append(p.allocs, ptr)
	return ptr, nil
}

// ensure allocates *ptr (bytes, kept until Close) unless it is already
// allocated. Call it outside Device.Enqueue.
func (p *Plan[T]) ensure(ptr *cu.DevicePtr, bytes int64) error {
	if *ptr != 0 {
		return nil
	}
	var err error
	*ptr, err = p.alloc(bytes)
	return err
}

// upload copies the matrix and allocates what every algorithm needs.
func (p *Plan[T]) upload(a *sparse.CSR) error {
	n, nnz := int64(p.n), int64(p.nnz)
	var err error
	for _, b := range []struct {
		ptr   *cu.DevicePtr
		bytes int64
	}{{&p.rowPtr, 4 * (n + 1)}, {&p.col, 4 * nnz}, {&p.val, p.elem() * nnz}, {&p.deg, 4 * n},
		{&p.diag, p.elem() * n}, {&p.errs, 12}, {&p.ticket, 4}, {&p.maxLevel, 4}, {&p.depthSum, 8}} {
		if *b.ptr, err = p.alloc(b.bytes); err != nil {
			return fmt.Errorf("sptrsv: a triangle of order %d with %d entries on the GPU: %w", p.n, p.nnz, err)
		}
	}
	return p.dev.Enqueue(func() error {
		var e error
		// A blocking stream: it waits for the uploads and copies that
		// package cuda makes on the legacy default stream.
		if p.stream, e = cu.MakeStream(cu.DefaultStream); e != nil {
			return fmt.Errorf("sptrsv: creating a stream: %w", e)
		}
		if e = cu.MemcpyHtoD(p.rowPtr, unsafe.Pointer(&a.RowPtr[0]), 4*(n+1)); e != nil {
			return e
		}
		if nnz > 0 {
			if e = cu.MemcpyHtoD(p.col, unsafe.Pointer(&a.Col[0]), 4*nnz); e != nil {
				return e
			}
		}
		if e = p.setValues(a.Val); e != nil {
			return e
		}
		return cu.MemsetD32Async(p.ticket, 0, 1, p.stream)
	})
}

// setValues copies the values in T (device thread).
func (p *Plan[T]) setValues(v []float64) error {
	if len(v) == 0 {
		return nil
	}
	if p.f64 {
		return cu.MemcpyHtoD(p.val, unsafe.Pointer(&v[0]), 8*int64(len(v)))
	}
	v32 := make([]float32, len(v))
	for k, x := range v {
		v32[k] = float32(x)
	}
	return cu.MemcpyHtoD(p.val, unsafe.Pointer(&v32[0]), 4*int64(len(v)))
}

func flag(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

func blocks(n, per int) cuda.Dim3 { return cuda.Dim3{X: max(1, (n+per-1)/per), Y: 1, Z: 1} }

var (
	threads      = cuda.Dim3{X: block, Y: 1, Z: 1}
	chainThreads = cuda.Dim3{X: chainBlock, Y: 1, Z: 1}
	scanThreads  = cuda.Dim3{X: scanBlock, Y: 1, Z: 1}
)

// Analyze runs the device analysis: the checks and in-degrees, the level
// sets when the algorithm is LevelSet or Auto (then the choice), the
// triangle by columns when it is SyncFree. It waits for the device. Call
// it again after UpdateValues only when the structure changed (it did
// not: UpdateValues keeps it).
func (p *Plan[T]) Analyze() error {
	var errRows [3]int32
	var nLevels int32
	upper := flag(p.tri.Triangle == sptrsv.Upper)
	levels := p.opts.Algorithm == sptrsv.Auto || p.opts.Algorithm == sptrsv.LevelSet
	if levels {
		if err := p.ensure(&p.level, 4*int64(p.n)); err != nil {
			return err
		}
	}
	err := p.dev.Enqueue(func() error {
		if e := cu.MemsetD32Async(p.errs, math.MaxInt32, 3, p.stream); e != nil {
			return e
		}
		if e := p.rows(); e != nil {
			return e
		}
		if levels {
			if e := cu.MemsetD32Async(p.maxLevel, 0, 1, p.stream); e != nil {
				return e
			}
			if e := cu.MemsetD32Async(p.level, 0, int64(p.n), p.stream); e != nil {
				return e
			}
			if e := (kernels.TrsvLevels{}).Launch(p.dev, blocks(p.n, block>>p.levelsLg), threads, 0, p.stream, &kernels.TrsvLevelsArgs{
				RowPtr: p.rowPtr, Col: p.col, N: int32(p.n), Upper: upper, LG: int32(p.levelsLg), Level: p.level, Ticket: p.ticket, MaxLevel: p.maxLevel,
			}); e != nil {
				return e
			}
			if e := cu.MemcpyDtoHAsync(unsafe.Pointer(&nLevels), p.maxLevel, 4, p.stream); e != nil {
				return e
			}
		}
		if e := cu.MemcpyDtoHAsync(unsafe.Pointer(&errRows[0]), p.errs, 12, p.stream); e != nil {
			return e
		}
		return p.stream.Synchronize()
	})
	if err != nil {
		return fmt.Errorf("sptrsv: analysing a triangle of order %d on the GPU: %w", p.n, err)
	}
	if err := p.rowError(errRows); err != nil {
		return err
	}
	p.stats = sptrsv.Stats{N: p.n, NNZ: p.nnz, Levels: int(nLevels)}
	p.alg = p.opts.Algorithm
	p.rowLg = p.levelsLg
	if levels {
		if err := p.sortLevels(int(nLevels)); err != nil {
			return err
		}
		if p.alg == sptrsv.Auto {
			p.alg = Choose(p.stats)
			if p.alg == sptrsv.SyncFreeCSR && p.opts.Lanes == 0 {
				if err := p.measureDepth(); err != nil {
					return err
				}
				if p.depth <= AutoWarpDepth {
					p.rowLg = 5
				}
			}
		}
	}
	switch p.alg {
	case sptrsv.SyncFree:
		return p.columns()
	case sptrsv.SyncFreeCSR:
		return p.readyFlags()
	case sptrsv.LocalityAware:
		return p.analyseLocality(p.host)
	case sptrsv.LevelSet:
		return p.levelOrder()
	}
	return nil
}

// levelOrder builds the level-ordered copy of the triangle (rows in the
// order of the level sets, each with its entries, divisors and the first
// entry of each level) that the chains of the level-set solve read.
func (p *Plan[T]) levelOrder() error {
	n, nnz, levels := int64(p.n), int64(p.nnz), len(p.levelPtrHost)-1
	for _, b := range []struct {
		ptr   *cu.DevicePtr
		bytes int64
	}{{&p.rowPtrL, 4 * (n + 1)}, {&p.colL, 4 * nnz}, {&p.valL, p.elem() * nnz}, {&p.diagL, p.elem() * n},
		{&p.levelEnt, 4 * (n + 1)}, {&p.bL, p.elem() * n}} {
		if err := p.ensure(b.ptr, b.bytes); err != nil {
			return err
		}
	}
	if err := p.scanBuffers(); err != nil {
		return err
	}
	err := p.dev.Enqueue(func() error {
		if e := (kernels.TrsvLoLen{}).Launch(p.dev, blocks(p.n+1, block), threads, 0, p.stream,
			&kernels.TrsvLoLenArgs{RowPtr: p.rowPtr, Perm: p.perm, N: int32(p.n), Len: p.rowPtrL}); e != nil {
			return e
		}
		if e := p.scan(p.rowPtrL, p.n+1); e != nil {
			return e
		}
		if e := p.fillLevelOrder(); e != nil {
			return e
		}
		if e := (kernels.TrsvLoLevels{}).Launch(p.dev, blocks(levels+1, block), threads, 0, p.stream,
			&kernels.TrsvLoLevelsArgs{RowPtrL: p.rowPtrL, LevelPtr: p.levelPtr, NLevels: int32(levels), LevelEnt: p.levelEnt}); e != nil {
			return e
		}
		return p.stream.Synchronize()
	})
	if err != nil {
		return fmt.Errorf("sptrsv: ordering a triangle of order %d by levels on the GPU: %w", p.n, err)
	}
	return nil
}

// fillLevelOrder copies the entries and divisors into the level-ordered
// copy (device thread).
func (p *Plan[T]) fillLevelOrder() error {
	k, err := kernels.TrsvLoFillFor(p.f64)
	if err != nil {
		return err
	}
	return k.Launch(p.dev, blocks(p.n, block), threads, 0, p.stream, &kernels.TrsvLoFillArgs{
		RowPtr: p.rowPtr, Col: p.col, Val: p.val, Diag: p.diag, Perm: p.perm, N: int32(p.n),
		RowPtrL: p.rowPtrL, ColL: p.colL, ValL: p.valL, DiagL: p.diagL,
	})
}

// readyFlags clears the ready flags of the row-wise solve (generation 0).
func (p *Plan[T]) readyFlags() error {
	if err := p.ensure(&p.ready, 4*int64(p.n)); err != nil {
		return err
	}
	p.gen = 0
	return p.dev.Enqueue(func() error {
		if e := cu.MemsetD32Async(p.ready, 0, int64(p.n), p.stream); e != nil {
			return e
		}
		return p.stream.Synchronize()
	})
}

// AutoWarpDepth is the most levels that the windows of logical rows may
// span on average (Depth) for Auto to solve a row with a warp rather than
// a thread in the row-wise solve. The windows hold as many rows as the
// GPU holds warps (multiprocessors × threads a multiprocessor / 32).
//
//	bandsolve bench -grid sptrsv -device cuda -peers cusparse
//
// on an H100 (windows of 8448 rows), FP32: the power-law triangle (35
// levels a window) takes 1.08 ms with a warp a row against 5.87 ms with a
// thread, the 2-D Laplacian in RCM order (18) 4.19 against 5.44 ms; the
// naturally ordered Laplacians (195 to 1006 levels a window) and the
// dense triangle (2000) are faster with a thread: 5.47 against 85 ms
// (2-D), 1.90 against 14.3 ms (7-point 3-D), 2.42 against 3.11 ms (dense).
const AutoWarpDepth = 64

// measureDepth computes the mean number of levels the windows of logical
// rows span (the levels must be computed).
func (p *Plan[T]) measureDepth() error {
	pr := p.dev.Properties()
	window := max(32, pr.SMs*pr.MaxThreadsPerSM/32)
	nb := (p.n + window - 1) / window
	var sum uint64
	err := p.dev.Enqueue(func() error {
		if e := cu.MemsetD32Async(p.depthSum, 0, 2, p.stream); e != nil {
			return e
		}
		if e := (kernels.TrsvLevelDepth{}).Launch(p.dev, cuda.Dim3{X: nb, Y: 1, Z: 1}, threads, 0, p.stream, &kernels.TrsvLevelDepthArgs{
			Level: p.level, N: int32(p.n), Upper: flag(p.tri.Triangle == sptrsv.Upper), Window: int32(window), Sum: p.depthSum,
		}); e != nil {
			return e
		}
		if e := cu.MemcpyDtoHAsync(unsafe.Pointer(&sum), p.depthSum, 8, p.stream); e != nil {
			return e
		}
		return p.stream.Synchronize()
	})
	if err != nil {
		return fmt.Errorf("sptrsv: the level windows of a triangle of order %d on the GPU: %w", p.n, err)
	}
	p.depth = float64(sum) / float64(nb)
	return nil
}

// Depth returns the mean number of levels a window of logical rows spans,
// as Auto measured it to choose the lanes of the row-wise solve (0 when it
// did not).
func (p *Plan[T]) Depth() float64 { return p.depth }

// Lanes returns the lanes that solve one row in the row-wise solve.
func (p *Plan[T]) Lanes() int { return 1 << p.rowLg }

// DefaultLanes is the lanes a row of the row-wise solve for a triangle of
// order n with nnz entries: a thread while rows hold at most 16
// off-diagonal entries on average, else a warp. A thread a row keeps 32
// times more rows in flight, which the long chains of naturally ordered
// meshes need: on an H100 (bandsolve bench -grid sptrsv -device cuda) the
// 2-D and 27-point 3-D Laplacians take 5.5 and 3.7 ms with a thread a row
// against 85 and 21 ms with a warp (FP32). Triangles whose levels are
// contiguous runs of rows do better with a warp (power-law: 1.08 against
// 5.87 ms); the levels' statistics do not tell them apart yet.
func DefaultLanes(nnz, n int) int {
	if float64(nnz-n) <= 16*float64(max(n, 1)) {
		return 1
	}
	return 32
}

// rows launches trsv_rows (device thread).
func (p *Plan[T]) rows() error {
	k, err := kernels.TrsvRowsFor(p.f64)
	if err != nil {
		return err
	}
	strict := flag(p.tri.Part == sptrsv.WholeMatrix)
	return k.Launch(p.dev, blocks(p.n, block), threads, 0, p.stream, &kernels.TrsvRowsArgs{
		RowPtr: p.rowPtr, Col: p.col, Val: p.val, N: int32(p.n), Upper: flag(p.tri.Triangle == sptrsv.Upper),
		Strict: strict, Unit: flag(p.tri.UnitDiagonal), Deg: p.deg, Diag: p.diag, Err: p.errs,
	})
}

// rowError turns trsv_rows's smallest bad rows into sptrsv's errors.
func (p *Plan[T]) rowError(rows [3]int32) error {
	first, kind := int32(math.MaxInt32), -1
	for k, r := range rows {
		if r < first {
			first, kind = r, k
		}
	}
	switch kind {
	case 0:
		return fmt.Errorf("%w: row %d has no diagonal entry", sptrsv.ErrSingular, first)
	case 1:
		return fmt.Errorf("%w: row %d has a zero or non-finite diagonal entry", sptrsv.ErrSingular, first)
	case 2:
		return fmt.Errorf("%w: not %s triangular: row %d has an entry on the other side", sptrsv.ErrNotTriangular, p.tri.Triangle, first)
	}
	return nil
}

// scan makes v[0 … length−1] (length ≤ n+1) its exclusive prefix sums on
// the device (device thread); p.sums (allocated by scanBuffers) holds the
// blocks' totals.
func (p *Plan[T]) scan(v cu.DevicePtr, length int) error {
	nb := (length + scanBlock - 1) / scanBlock
	args := kernels.TrsvScanLocalArgs{V: v, Len: int32(length), Sums: p.sums}
	if err := (kernels.TrsvScanLocal{}).Launch(p.dev, cuda.Dim3{X: nb, Y: 1, Z: 1}, scanThreads, 0, p.stream, &args); err != nil {
		return err
	}
	if nb == 1 {
		return nil
	}
	if err := (kernels.TrsvScanSums{}).Launch(p.dev, cuda.Dim3{X: 1, Y: 1, Z: 1}, scanThreads, 0, p.stream,
		&kernels.TrsvScanSumsArgs{Sums: p.sums, NB: int32(nb)}); err != nil {
		return err
	}
	return (kernels.TrsvScanAdd{}).Launch(p.dev, cuda.Dim3{X: nb, Y: 1, Z: 1}, scanThreads, 0, p.stream, &args)
}

// scanBuffers allocates the scratch of the counting sorts and the prefix
// sums. Call it outside Device.Enqueue.
func (p *Plan[T]) scanBuffers() error {
	if err := p.ensure(&p.sums, 4*int64((p.n+1+scanBlock-1)/scanBlock)); err != nil {
		return err
	}
	return p.ensure(&p.scratch, 4*int64(p.n+1))
}

// sortLevels sorts the rows by level (counting sort on the device), reads
// the level pointers back and plans the solve's launches.
func (p *Plan[T]) sortLevels(nLevels int) error {
	n := p.n
	ptrs := make([]int32, nLevels+1)
	if err := p.scanBuffers(); err != nil {
		return err
	}
	if err := p.ensure(&p.perm, 4*int64(n)); err != nil {
		return err
	}
	if err := p.ensure(&p.levelPtr, 4*int64(n+1)); err != nil {
		return err
	}
	err := p.dev.Enqueue(func() error {
		var e error
		if e = cu.MemsetD32Async(p.levelPtr, 0, int64(nLevels+1), p.stream); e != nil {
			return e
		}
		if e = (kernels.TrsvLevelCount{}).Launch(p.dev, blocks(n, block), threads, 0, p.stream,
			&kernels.TrsvLevelCountArgs{Level: p.level, N: int32(n), Count: p.levelPtr}); e != nil {
			return e
		}
		if e = p.scan(p.levelPtr, nLevels+1); e != nil {
			return e
		}
		if e = cu.MemsetD32Async(p.scratch, 0, int64(nLevels), p.stream); e != nil {
			return e
		}
		if e = (kernels.TrsvLevelScatter{}).Launch(p.dev, blocks(n, block), threads, 0, p.stream,
			&kernels.TrsvLevelScatterArgs{Level: p.level, N: int32(n), LevelPtr: p.levelPtr, Fill: p.scratch, Perm: p.perm}); e != nil {
			return e
		}
		if e = cu.MemcpyDtoHAsync(unsafe.Pointer(&ptrs[0]), p.levelPtr, 4*int64(nLevels+1), p.stream); e != nil {
			return e
		}
		return p.stream.Synchronize()
	})
	if err != nil {
		return fmt.Errorf("sptrsv: sorting the levels of a triangle of order %d on the GPU: %w", n, err)
	}
	if int(ptrs[nLevels]) != n {
		return fmt.Errorf("sptrsv: the GPU's level sets hold %d of %d rows", ptrs[nLevels], n)
	}
	p.levelPtrHost = ptrs
	p.stats = sptrsv.StatsOf(p.n, p.nnz, ptrs)
	p.lg = lanesShift(p.nnz, p.n)
	p.steps = Schedule(ptrs, p.opts.ChainRows)
	return nil
}

// lanesShift is log2 of the lanes that solve one row: one lane while rows
// hold at most 4 off-diagonal entries on average (then a row is solved as
// the sequential reference solves it), else the power of two nearest half
// the mean, at most a warp.
func lanesShift(nnz, n int) int {
	mean := float64(nnz-n) / float64(max(n, 1))
	if mean <= 4 {
		return 0
	}
	return min(5, bits.Len(uint(mean/2+0.5))-1)
}

// Schedule groups the levels of the level pointers ptrs into launches:
// runs of levels of at most chainRows rows each form chains, wider levels
// a launch each.
func Schedule(ptrs []int32, chainRows int) []Step {
	var steps []Step
	for l := 0; l+1 < len(ptrs); {
		if int(ptrs[l+1]-ptrs[l]) > chainRows {
			steps = append(steps, Step{L0: l, L1: l + 1})
			l++
			continue
		}
		e := l + 1
		for e+1 < len(ptrs) && int(ptrs[e+1]-ptrs[e]) <= chainRows {
			e++
		}
		steps = append(steps, Step{L0: l, L1: e, Chain: true})
		l = e
	}
	return steps
}

// columns builds the off-diagonal triangle by columns and the zeroed
// partial sums and counters of the synchronization-free solve.
func (p *Plan[T]) columns() error {
	n := p.n
	upper := flag(p.tri.Triangle == sptrsv.Upper)
	if err := p.scanBuffers(); err != nil {
		return err
	}
	offDiag := int64(p.nnz) // an upper bound of the off-diagonal entries
	for _, b := range []struct {
		ptr   *cu.DevicePtr
		bytes int64
	}{{&p.cscPtr, 4 * int64(n+1)}, {&p.cscRow, 4 * offDiag}, {&p.cscVal, p.elem() * offDiag},
		{&p.left, p.elem() * int64(n)}, {&p.done, 4 * int64(n)}} {
		if err := p.ensure(b.ptr, b.bytes); err != nil {
			return err
		}
	}
	err := p.dev.Enqueue(func() error {
		var e error
		if e = cu.MemsetD32Async(p.cscPtr, 0, int64(n+1), p.stream); e != nil {
			return e
		}
		if e = (kernels.TrsvCscCount{}).Launch(p.dev, blocks(n, block), threads, 0, p.stream,
			&kernels.TrsvCscCountArgs{RowPtr: p.rowPtr, Col: p.col, N: int32(n), Upper: upper, Cnt: p.cscPtr}); e != nil {
			return e
		}
		if e = p.scan(p.cscPtr, n+1); e != nil {
			return e
		}
		if e = cu.MemsetD32Async(p.scratch, 0, int64(n), p.stream); e != nil {
			return e
		}
		k, e := kernels.TrsvCscFillFor(p.f64)
		if e != nil {
			return e
		}
		if e = k.Launch(p.dev, blocks(n, block), threads, 0, p.stream, &kernels.TrsvCscFillArgs{
			RowPtr: p.rowPtr, Col: p.col, Val: p.val, N: int32(n), Upper: upper, CscPtr: p.cscPtr,
			Fill: p.scratch, CscRow: p.cscRow, CscVal: p.cscVal,
		}); e != nil {
			return e
		}
		if e = cu.MemsetD8Async(p.left, 0, p.elem()*int64(n), p.stream); e != nil {
			return e
		}
		if e = cu.MemsetD32Async(p.done, 0, int64(n), p.stream); e != nil {
			return e
		}
		return p.stream.Synchronize()
	})
	if err != nil {
		return fmt.Errorf("sptrsv: ordering a triangle of order %d by columns on the GPU: %w", n, err)
	}
	return nil
}

// Choose is Auto's choice from the level statistics: the level-set solve
// when its levels are wide enough to fill the GPU between launches, else
// the row-wise synchronization-free one.
func Choose(st sptrsv.Stats) sptrsv.Algorithm {
	if st.MeanRowsPerLevel >= sptrsv.AutoLevelSetRowsGPU {
		return sptrsv.LevelSet
	}
	return sptrsv.SyncFreeCSR
}

// Algorithm returns the algorithm the plan solves with (Auto's choice).
func (p *Plan[T]) Algorithm() sptrsv.Algorithm { return p.alg }

// Stats returns the level statistics (only N and NNZ for a plan made for
// SyncFree or SyncFreeCSR, which does not compute the levels).
func (p *Plan[T]) Stats() sptrsv.Stats { return p.stats }

// N returns the order.
func (p *Plan[T]) N() int { return p.n }

// Stream returns the plan's stream: its solves run on it.
func (p *Plan[T]) Stream() cu.Stream { return p.stream }

// UpdateValues replaces the matrix's values (same structure: len(val) =
// the entries of the matrix given to NewPlan, in its order) and redoes
// the parts of the analysis that hold values (divisors, the columns of a
// synchronization-free plan, the host analysis of a locality-aware one),
// as cuSPARSE's SpSV_updateMatrix.
func (p *Plan[T]) UpdateValues(val []float64) error {
	if len(val) != p.nnz {
		return fmt.Errorf("%w: %d values for a matrix of %d entries", sptrsv.ErrShape, len(val), p.nnz)
	}
	return p.refresh(func() error { return p.setValues(val) }, func() ([]float64, error) { return val, nil })
}

// UpdateValuesDevice is UpdateValues with the values in the device's
// memory, in FP64: entry k of the matrix takes val[gather[k]] (int32
// indices), or val[k] when gather is zero. Call it outside Device.Enqueue.
func (p *Plan[T]) UpdateValuesDevice(val, gather cu.DevicePtr) error {
	k, err := kernels.IluValuesFor(p.f64)
	if err != nil {
		return err
	}
	set := func() error {
		return k.Launch(p.dev, blocks(p.nnz, block), threads, 0, p.stream,
			&kernels.IluValuesArgs{Src: val, Gather: gather, Nnz: int32(p.nnz), Dst: p.val})
	}
	host := func() ([]float64, error) {
		v := make([]T, p.nnz)
		var e error
		if p.nnz > 0 {
			e = p.dev.Enqueue(func() error {
				return cu.MemcpyDtoH(unsafe.Pointer(&v[0]), p.val, p.elem()*int64(p.nnz))
			})
		}
		v64 := make([]float64, p.nnz)
		for k, x := range v {
			v64[k] = float64(x)
		}
		return v64, e
	}
	return p.refresh(set, host)
}

// refresh sets the values (set, on the device thread) and redoes the
// parts of the analysis that hold values; host gives the values on the
// host for the locality-aware analysis.
func (p *Plan[T]) refresh(set func() error, host func() ([]float64, error)) error {
	var errRows [3]int32
	err := p.dev.Enqueue(func() error {
		if e := set(); e != nil {
			return e
		}
		if e := cu.MemsetD32Async(p.errs, math.MaxInt32, 3, p.stream); e != nil {
			return e
		}
		if e := p.rows(); e != nil {
			return e
		}
		if e := cu.MemcpyDtoHAsync(unsafe.Pointer(&errRows[0]), p.errs, 12, p.stream); e != nil {
			return e
		}
		return p.stream.Synchronize()
	})
	if err != nil {
		return fmt.Errorf("sptrsv: updating the values of a triangle of order %d on the GPU: %w", p.n, err)
	}
	if err := p.rowError(errRows); err != nil {
		return err
	}
	switch p.alg {
	case sptrsv.SyncFree:
		return p.columns()
	case sptrsv.LevelSet:
		return p.dev.Enqueue(func() error {
			if e := p.fillLevelOrder(); e != nil {
				return e
			}
			return p.stream.Synchronize()
		})
	case sptrsv.LocalityAware:
		val, err := host()
		if err != nil {
			return err
		}
		h := p.host.Clone()
		copy(h.Val, val)
		p.host = h
		return p.analyseLocality(h)
	}
	return nil
}

// errClosed is returned by the methods of a closed plan.
var errClosed = errors.New("sptrsv: the GPU plan is closed")

// Enqueue queues the solve T x = b on s (the plan's stream when s is
// zero) without waiting; b and x are device arrays of n elements and may
// be the same. Call it on the device thread (inside Device.Enqueue or
// Do), as cuda.Timer bodies are.
func (p *Plan[T]) Enqueue(s cu.Stream, b, x cu.DevicePtr) error {
	if p.closed {
		return errClosed
	}
	if s == (cu.Stream{}) {
		s = p.stream
	}
	upper := flag(p.tri.Triangle == sptrsv.Upper)
	if p.alg == sptrsv.LocalityAware {
		return p.enqueueLocality(s, b, x)
	}
	if p.alg == sptrsv.SyncFreeCSR {
		k, err := kernels.TrsvRowsyncFor(p.f64)
		if err != nil {
			return err
		}
		p.gen++
		if p.gen == 0 { // the flags' generations wrapped: clear them
			if err := cu.MemsetD32Async(p.ready, 0, int64(p.n), s); err != nil {
				return err
			}
			p.gen = 1
		}
		return k.Launch(p.dev, blocks(p.n, block>>p.rowLg), threads, 0, s, &kernels.TrsvRowsyncArgs{
			RowPtr: p.rowPtr, Col: p.col, Val: p.val, Diag: p.diag, N: int32(p.n), Upper: upper, LG: int32(p.rowLg),
			B: b, X: x, Ready: p.ready, Gen: p.gen, Ticket: p.ticket,
		})
	}
	if p.alg == sptrsv.SyncFree {
		k, err := kernels.TrsvSyncfreeFor(p.f64)
		if err != nil {
			return err
		}
		return k.Launch(p.dev, blocks(p.n, warps), threads, 0, s, &kernels.TrsvSyncfreeArgs{
			CscPtr: p.cscPtr, CscRow: p.cscRow, CscVal: p.cscVal, Diag: p.diag, Deg: p.deg, N: int32(p.n),
			Upper: upper, B: b, X: x, Left: p.left, Done: p.done, Ticket: p.ticket,
		})
	}
	wide, err := kernels.TrsvLevelSolveFor(p.f64)
	if err != nil {
		return err
	}
	chain, err := kernels.TrsvChainSolveLoFor(p.f64)
	if err != nil {
		return err
	}
	gather, err := kernels.TrsvGatherFor(p.f64)
	if err != nil {
		return err
	}
	if err := gather.Launch(p.dev, blocks(p.n, block), threads, 0, s,
		&kernels.TrsvGatherArgs{B: b, Perm: p.perm, N: int32(p.n), BL: p.bL}); err != nil {
		return err
	}
	levels := int32(len(p.levelPtrHost) - 1)
	for _, st := range p.steps {
		if st.Chain {
			err = chain.Launch(p.dev, cuda.Dim3{X: 1, Y: 1, Z: 1}, chainThreads, 0, s, &kernels.TrsvChainSolveLoArgs{
				RowPtrL: p.rowPtrL, ColL: p.colL, ValL: p.valL, DiagL: p.diagL, Perm: p.perm, LevelPtr: p.levelPtr,
				LevelEnt: p.levelEnt, NLevels: levels, L0: int32(st.L0), L1: int32(st.L1), Upper: upper,
				Lgmax: int32(p.lg), BL: p.bL, X: x,
			})
		} else {
			lo, hi := p.levelPtrHost[st.L0], p.levelPtrHost[st.L0+1]
			err = wide.Launch(p.dev, blocks(int(hi-lo)<<p.lg, block), threads, 0, s, &kernels.TrsvLevelSolveArgs{
				RowPtr: p.rowPtr, Col: p.col, Val: p.val, Diag: p.diag, Perm: p.perm, LO: lo, HI: hi,
				Upper: upper, LG: int32(p.lg), B: b, X: x,
			})
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Launches returns the number of kernel launches of one solve.
func (p *Plan[T]) Launches() int {
	switch p.alg {
	case sptrsv.SyncFree, sptrsv.SyncFreeCSR:
		return 1
	case sptrsv.LocalityAware:
		return len(p.loc.levelPtr) - 1
	}
	return len(p.steps) + 1 // and the gather of b
}

// SolveDevice solves T x = b with b and x in the device's memory (n
// elements each; they may be the same buffer) and waits for it.
func (p *Plan[T]) SolveDevice(b, x *cuda.Buffer[T]) error {
	if b == nil || x == nil || b.Len() != p.n || x.Len() != p.n {
		return fmt.Errorf("%w: a triangle of order %d needs device vectors of %d elements", sptrsv.ErrShape, p.n, p.n)
	}
	return p.dev.Enqueue(func() error {
		if err := p.Enqueue(cu.Stream{}, b.Ptr(), x.Ptr()); err != nil {
			return err
		}
		return p.stream.Synchronize()
	})
}

// Solve solves T x = b with host vectors, copied to a device vector of
// the plan (allocated by the first Solve) and back.
func (p *Plan[T]) Solve(b, x []T) error {
	if len(b) != p.n || len(x) != p.n {
		return fmt.Errorf("%w: %s triangle of order %d with len(b) = %d, len(x) = %d", sptrsv.ErrShape, p.tri.Triangle, p.n, len(b), len(x))
	}
	if p.closed {
		return errClosed
	}
	if p.hostVec == nil {
		v, err := cuda.Alloc[T](p.dev, p.n)
		if err != nil {
			return err
		}
		p.hostVec = v
	}
	if err := p.hostVec.CopyFrom(b); err != nil {
		return err
	}
	if err := p.SolveDevice(p.hostVec, p.hostVec); err != nil {
		return err
	}
	return p.hostVec.CopyTo(x)
}

// Close frees the plan's device memory and stream.
func (p *Plan[T]) Close() error {
	if p.closed {
		return nil
	}
	p.closed = true
	if p.hostVec != nil {
		_ = p.hostVec.Free()
	}
	return p.dev.Enqueue(func() error {
		if p.stream != (cu.Stream{}) {
			_ = p.stream.Synchronize()
			_ = p.stream.Destroy()
		}
		for _, a := range p.allocs {
			_ = cu.MemFree(a)
		}
		p.allocs = nil
		return nil
	})
}
