//go:build cuda

package bandedgpu

import (
	"context"
	"fmt"
	"sync"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
	"github.com/bandsolve/bandsolve/tridiag"
)

// MaxWindowK is the largest half-bandwidth of the window-sliding kernels
// (Li et al. 2014 §4: min(K², 1024) threads per block; larger K needs the
// blocked factorization, not written yet).
const MaxWindowK = 64

// Sweeps select the triangular solves of Partitions.Solve.
type Sweeps int

const (
	// SweepForward solves with the first factor applied in a solve: the
	// unit lower L of LU (rows top to bottom), or the unit upper U of UL
	// (bottom to top).
	SweepForward Sweeps = 1 << iota
	// SweepBackward solves with the second: U of LU (bottom to top), L of
	// UL (top to bottom).
	SweepBackward
	// SweepBoth is a full solve with the factors.
	SweepBoth = SweepForward | SweepBackward
)

// PartitionResult reports what a partition factorization did besides
// factoring.
type PartitionResult struct {
	// Boosts is the number of boosted pivots of each partition.
	Boosts []int
}

// Partitions runs the window-sliding LU and UL factorizations and the
// triangular sweeps of truncated SPIKE on the diagonal blocks (partitions)
// of one band matrix of order N and half-bandwidth K ≤ MaxWindowK held on
// the device in banded.Band's tall-and-thin storage ((2K+1)·N elements,
// a_ij at (K+i−j)·N + j): partition p is rows and columns [bounds[p],
// bounds[p+1]). Each partition is one thread block; the factors replace
// the block's entries in place, as banded.FactorLURange and FactorULRange
// leave them, bit for bit, and entries coupling partitions are untouched.
// It holds the bounds and status on the device; calls of one value run
// one at a time, each returning when its kernel is done.
type Partitions[T tridiag.Float] struct {
	dev    *cuda.Device
	n, k   int
	bounds []int
	factK  kernels.BandFactorWindow
	solveK kernels.BandSolveWindow
	mu     sync.Mutex
	stream cu.Stream
	dbound cu.DevicePtr // int32 bounds
	status cu.DevicePtr // 4P+1 int32
	codes  []int32
	closed bool
}

// NewPartitions prepares partitioned work on band matrices of order n
// and half-bandwidth k (1 ≤ k ≤ MaxWindowK, k < n) split at bounds:
// bounds[0] = 0 < bounds[1] < … < bounds[P] = n.
func NewPartitions[T tridiag.Float](d *cuda.Device, n, k int, bounds []int) (*Partitions[T], error) {
	if err := banded.CheckShape(n, k); err != nil {
		return nil, err
	}
	if k < 1 || k > MaxWindowK {
		return nil, fmt.Errorf("%w: the window-sliding kernels take 1 ≤ K ≤ %d, got K=%d", banded.ErrShape, MaxWindowK, k)
	}
	if len(bounds) < 2 || bounds[0] != 0 || bounds[len(bounds)-1] != n {
		return nil, fmt.Errorf("%w: partition bounds must run from 0 to N=%d, got %v", banded.ErrShape, n, bounds)
	}
	if n > 1<<30 {
		return nil, fmt.Errorf("%w: N=%d too large", banded.ErrShape, n)
	}
	b32 := make([]int32, len(bounds))
	for i, b := range bounds {
		if i > 0 && b <= bounds[i-1] {
			return nil, fmt.Errorf("%w: partition bounds must increase, got %v", banded.ErrShape, bounds)
		}
		b32[i] = int32(b)
	}
	P := len(bounds) - 1
	p := &Partitions[T]{dev: d, n: n, k: k, bounds: append([]int(nil), bounds...)}
	f64 := ElemSize[T]() == 8
	var err error
	if p.factK, err = kernels.BandFactorWindowFor(f64); err != nil {
		return nil, err
	}
	if p.solveK, err = kernels.BandSolveWindowFor(f64); err != nil {
		return nil, err
	}
	if p.dbound, err = d.AllocBytes(int64(4 * len(b32))); err != nil {
		return nil, err
	}
	if p.status, err = d.AllocBytes(int64(4 * (4*P + 1))); err != nil {
		_ = p.Close()
		return nil, err
	}
	err = d.Enqueue(func() error {
		if err := cu.MemcpyHtoD(p.dbound, unsafe.Pointer(&b32[0]), int64(4*len(b32))); err != nil {
			return fmt.Errorf("cuda: copying partition bounds: %w", err)
		}
		if err := cu.MemsetD32(p.status, 0, int64(4*P+1)); err != nil {
			return fmt.Errorf("cuda: clearing status: %w", err)
		}
		var e error
		if p.stream, e = cu.MakeStream(cu.DefaultStream); e != nil {
			return fmt.Errorf("cuda: creating a stream: %w", e)
		}
		return nil
	})
	if err != nil {
		_ = p.Close()
		return nil, err
	}
	return p, nil
}

// P returns the number of partitions.
func (p *Partitions[T]) P() int { return len(p.bounds) - 1 }

// Bounds returns a copy of the partition bounds.
func (p *Partitions[T]) Bounds() []int { return append([]int(nil), p.bounds...) }

// FactorThreads is the block size of the factorization kernel for
// half-bandwidth k: min(K², 1024), at least one warp.
func FactorThreads(k int) int { return max(32, min(k*k, 1024)) }

// FactorLU factors each partition of band in place as L·U without
// pivoting (banded.FactorLURange on each partition), boosting pivots as
// opt says with τ from each partition's own max-abs norm. Partitions that
// fail (a NaN/Inf entry, found before anything is written; a zero pivot
// with boosting off; an overflowed pivot, leaving the block partly
// factored) are listed in a *banded.BatchError whose System is the
// partition index.
func (p *Partitions[T]) FactorLU(ctx context.Context, band *cuda.Buffer[T], opt banded.FactorOptions) (PartitionResult, error) {
	return p.factor(ctx, band, opt, false)
}

// FactorUL factors each partition in place as U·L without pivoting,
// eliminating from its bottom-right corner (banded.FactorULRange on each
// partition). Results and errors as for FactorLU.
func (p *Partitions[T]) FactorUL(ctx context.Context, band *cuda.Buffer[T], opt banded.FactorOptions) (PartitionResult, error) {
	return p.factor(ctx, band, opt, true)
}

func (p *Partitions[T]) factor(ctx context.Context, band *cuda.Buffer[T], opt banded.FactorOptions, ul bool) (PartitionResult, error) {
	var res PartitionResult
	if err := CheckBand(band, p.n, p.k, false); err != nil {
		return res, err
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	tol := BoostTol[T](opt.BoostTol)
	P := p.P()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return res, tridiag.ErrClosed
	}
	var st []int32
	err := p.dev.Enqueue(func() error {
		shmem := (p.k + 2) * (p.k + 2) * int(ElemSize[T]())
		if err := p.factK.Launch(p.dev, cuda.Dim3{X: P}, cuda.Dim3{X: FactorThreads(p.k)}, shmem, p.stream, &kernels.BandFactorWindowArgs{
			A: band.Ptr(), N: int32(p.n), K: int32(p.k), Bounds: p.dbound, P: int32(P), UL: boolInt(ul), Tol: tol, Status: p.status,
		}); err != nil {
			_ = p.stream.Synchronize()
			return err
		}
		if err := p.stream.Synchronize(); err != nil {
			return fmt.Errorf("cuda: window factorization N=%d K=%d P=%d: %w", p.n, p.k, P, err)
		}
		var flag int32
		if err := cu.MemcpyDtoH(unsafe.Pointer(&flag), p.status+cu.DevicePtr(16*P), 4); err != nil {
			return fmt.Errorf("cuda: reading status: %w", err)
		}
		if flag == 0 {
			return nil
		}
		if p.codes == nil {
			p.codes = make([]int32, 4*P+1)
		}
		if err := cu.MemcpyDtoH(unsafe.Pointer(&p.codes[0]), p.status, int64(4*(4*P+1))); err != nil {
			return fmt.Errorf("cuda: reading status: %w", err)
		}
		if err := cu.MemsetD32(p.status, 0, int64(4*P+1)); err != nil {
			return fmt.Errorf("cuda: clearing status: %w", err)
		}
		st = p.codes
		return nil
	})
	res.Boosts = make([]int, P)
	if err != nil || st == nil {
		return res, err
	}
	var be *banded.BatchError
	for q := 0; q < P; q++ {
		res.Boosts[q] = int(st[4*q+3])
		kind := st[4*q]
		if kind == 0 {
			continue
		}
		row, col := int(st[4*q+1])-1, int(st[4*q+2])-1
		cause := banded.ErrNonFinite
		if kind == bandZeroPivot {
			cause = banded.ErrZeroPivot
		}
		if be == nil {
			be = &banded.BatchError{}
		}
		be.Failed = append(be.Failed, banded.SystemError{System: q, Row: row, Col: col,
			Err: &banded.RowError{Row: row, Col: col, Err: cause}})
	}
	if be != nil {
		return res, be
	}
	return res, nil
}

func boolInt(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

// SolveLU solves each partition's block with its LU factors (left in band
// by FactorLU) for nrhs right-hand sides held in b, column-major: column c
// of the whole matrix starts at element c·ldb (ldb ≥ N), and partition p
// solves its rows [bounds[p], bounds[p+1]) of every column, in place
// (banded.SolveLURangeMulti on each partition). sweeps selects the forward
// sweep with L, the backward one with U, or both. Partitions whose
// factorization failed give NaN/Inf or garbage in their rows.
func (p *Partitions[T]) SolveLU(ctx context.Context, band, b *cuda.Buffer[T], nrhs, ldb int, sweeps Sweeps) error {
	return p.solve(ctx, band, b, nrhs, ldb, sweeps, false)
}

// SolveUL is SolveLU with the UL factors of FactorUL
// (banded.SolveULRangeMulti): the forward sweep is the one with the unit
// upper factor, bottom to top, the backward one with L, top to bottom.
func (p *Partitions[T]) SolveUL(ctx context.Context, band, b *cuda.Buffer[T], nrhs, ldb int, sweeps Sweeps) error {
	return p.solve(ctx, band, b, nrhs, ldb, sweeps, true)
}

// solveColumnsPerBlock is how many right-hand sides one block of the sweep
// kernel takes (K threads each, at most 1024 threads).
func solveColumnsPerBlock(k, nrhs int) int { return max(1, min(nrhs, 1024/k, 32)) }

func (p *Partitions[T]) solve(ctx context.Context, band, b *cuda.Buffer[T], nrhs, ldb int, sweeps Sweeps, ul bool) error {
	if err := CheckBand(band, p.n, p.k, false); err != nil {
		return err
	}
	if nrhs < 1 || ldb < p.n {
		return fmt.Errorf("%w: nrhs=%d, ldb=%d (N=%d)", banded.ErrShape, nrhs, ldb, p.n)
	}
	if b == nil || b.Ptr() == 0 || int64(b.Len()) < int64(nrhs-1)*int64(ldb)+int64(p.n) {
		return fmt.Errorf("%w: right-hand side buffer too small for nrhs=%d, ldb=%d", banded.ErrShape, nrhs, ldb)
	}
	if sweeps&SweepBoth == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return tridiag.ErrClosed
	}
	cpb := solveColumnsPerBlock(p.k, nrhs)
	return p.dev.Enqueue(func() error {
		grid := cuda.Dim3{X: p.P(), Y: (nrhs + cpb - 1) / cpb}
		shmem := (p.k + 1) * cpb * int(ElemSize[T]())
		if err := p.solveK.Launch(p.dev, grid, cuda.Dim3{X: p.k * cpb}, shmem, p.stream, &kernels.BandSolveWindowArgs{
			A: band.Ptr(), N: int32(p.n), K: int32(p.k), Bounds: p.dbound, UL: boolInt(ul),
			B: b.Ptr(), Nrhs: int32(nrhs), Ldb: int64(ldb), Sweeps: int32(sweeps & SweepBoth),
		}); err != nil {
			_ = p.stream.Synchronize()
			return err
		}
		if err := p.stream.Synchronize(); err != nil {
			return fmt.Errorf("cuda: window solve N=%d K=%d: %w", p.n, p.k, err)
		}
		return nil
	})
}

// Close frees the device memory.
func (p *Partitions[T]) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	return p.dev.Enqueue(func() error {
		if p.dbound != 0 {
			_ = cu.MemFree(p.dbound)
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

// FactorLUPartitions factors the partitions [bounds[p], bounds[p+1]) of
// the band matrix in band (order n, half-bandwidth k, tall-and-thin
// storage) in place with the window-sliding LU; see Partitions.FactorLU.
// For repeated work on the same partitions keep a Partitions instead.
func FactorLUPartitions[T tridiag.Float](ctx context.Context, band *cuda.Buffer[T], n, k int, bounds []int, opt banded.FactorOptions) (PartitionResult, error) {
	return withPartitions(band, n, k, bounds, func(p *Partitions[T]) (PartitionResult, error) {
		return p.FactorLU(ctx, band, opt)
	})
}

// FactorULPartitions is FactorLUPartitions with the UL factorization.
func FactorULPartitions[T tridiag.Float](ctx context.Context, band *cuda.Buffer[T], n, k int, bounds []int, opt banded.FactorOptions) (PartitionResult, error) {
	return withPartitions(band, n, k, bounds, func(p *Partitions[T]) (PartitionResult, error) {
		return p.FactorUL(ctx, band, opt)
	})
}

// SolveLUPartitions solves each partition with its LU factors for nrhs
// right-hand sides in b (column c at element c·ldb); see
// Partitions.SolveLU.
func SolveLUPartitions[T tridiag.Float](ctx context.Context, band, b *cuda.Buffer[T], n, k int, bounds []int, nrhs, ldb int, sweeps Sweeps) error {
	_, err := withPartitions(band, n, k, bounds, func(p *Partitions[T]) (PartitionResult, error) {
		return PartitionResult{}, p.SolveLU(ctx, band, b, nrhs, ldb, sweeps)
	})
	return err
}

// SolveULPartitions is SolveLUPartitions with the UL factors.
func SolveULPartitions[T tridiag.Float](ctx context.Context, band, b *cuda.Buffer[T], n, k int, bounds []int, nrhs, ldb int, sweeps Sweeps) error {
	_, err := withPartitions(band, n, k, bounds, func(p *Partitions[T]) (PartitionResult, error) {
		return PartitionResult{}, p.SolveUL(ctx, band, b, nrhs, ldb, sweeps)
	})
	return err
}

func withPartitions[T tridiag.Float](band *cuda.Buffer[T], n, k int, bounds []int, f func(*Partitions[T]) (PartitionResult, error)) (PartitionResult, error) {
	if band == nil || band.Device() == nil {
		return PartitionResult{}, fmt.Errorf("%w: nil band buffer", banded.ErrShape)
	}
	p, err := NewPartitions[T](band.Device(), n, k, bounds)
	if err != nil {
		return PartitionResult{}, err
	}
	defer p.Close()
	return f(p)
}
