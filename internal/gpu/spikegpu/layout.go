// Package spikegpu is truncated SPIKE on the GPU. Plan, Register and the
// backend of spike.Plan need the driver (tag cuda); the rest needs none:
// the plan's layout (partitions, launch sizes, where each status word
// lives) and the decoding of the kernels' status words into package
// spike's errors and boost reports. Plan (tag cuda) and the CPU emulation
// of the kernels (internal/spikeemu, tag cudaemu) share it, so the
// emulated pipeline tests the same decoding as the GPU one.
package spikegpu

import (
	"errors"
	"fmt"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/spike"
	"github.com/bandsolve/bandsolve/tuning"
)

// MaxN is the largest order the kernels index with 32-bit rows.
const MaxN = 1 << 30

// Status kinds of the partition factorizations (ptx/src/band_common.cuh).
const (
	kindNonFiniteEntry = 1
	kindNonFinitePivot = 2
	kindZeroPivot      = 3

	flagFail  = 1
	flagBoost = 2
)

// Bits of the header word written by band_spike_flags.
const (
	HdrLU      = 3 << 0 // the LU factorizations' flag bits
	HdrUL      = 3 << 2 // the UL factorizations'
	HdrReduced = 3 << 4 // the reduced systems'
	HdrBadA    = 1 << 6 // a non-finite entry of A
)

// Layout is everything about a SPIKE plan that the host decides: the
// partitions, which factorizations run on which band, the launch sizes and
// the status words. Status words are int32 in one device array of StLen
// words; a 64-bit index takes two words (low first).
type Layout struct {
	N, K, P int
	Elem    int          // element size in bytes
	Bounds  []int        // P+1 partition bounds (spike.Partitions)
	Method  spike.Method // Truncated or BlockJacobi
	// Coupled: truncated SPIKE with P > 1 (spikes, reduced systems,
	// purification); otherwise a solve is one sweep of the partitions.
	Coupled bool
	// ULBlock is spike.Options.ULBlock as given; Compact is set when it
	// is below the partitions' size, so that the UL factorizations work
	// on a compact band of order ULN = (P−1)·ULBlock holding the top-left
	// ULBlock×ULBlock block of partitions 1…P−1 (block q = partition
	// q+1). Otherwise the UL factorizations work on a full copy of A
	// (ULN = N) over partitions 1…P−1.
	ULBlock int
	Compact bool
	ULN     int
	// ULBounds are the P bounds of the P−1 UL blocks in their band.
	ULBounds []int
	// Factor is the launch of the partition factorizations; Factor.Blocked
	// selects the blocked path (tuning.SpikeBlocked) for the spikes and
	// the reduced systems too.
	Factor tuning.SpikeFactor
	// ReducedThreads is the block size of band_spike_reduced (of
	// band_spike_rlu on the blocked path).
	ReducedThreads int
	// Tol is the resolved BoostTol of the block factorizations as the
	// kernels take it (the machine epsilon for 0, −1 when off); Tau the
	// pivot given to an exactly singular reduced matrix.
	Tol, Tau float64
	// Status words: LU (4P+1), UL (4(P−1)+1), reduced (2(P−1)+1), the
	// header, A's first non-finite index (2 words), b's (2 words) and b's
	// flag.
	StLU, StUL, StRed, StHdr, StBad, StBadB, StFlagB, StLen int
}

// NewLayout checks a plan's shape and options like spike.Factor (with the
// same errors) plus the GPU's limits — 1 ≤ K ≤ tuning.SpikeMaxK of the
// device (the blocked path's limit), N ≤ MaxN — and lays the plan out. P = 0 in opts takes
// tuning.SpikePartitions with the given kernel registers (0 if unknown).
// kern chooses the factorization kernel (tuning.SpikeKernelAuto but in
// tests).
func NewLayout(n, k, elem int, opts spike.Options, dev tuning.Device, factorRegs, solveRegs int, kern tuning.SpikeKernel) (*Layout, error) {
	if err := banded.CheckShape(n, k); err != nil {
		return nil, err
	}
	if elem != 4 && elem != 8 {
		return nil, fmt.Errorf("%w: element size %d", banded.ErrShape, elem)
	}
	if maxK := tuning.SpikeMaxK(dev, elem); k < 1 || k > maxK {
		return nil, fmt.Errorf("%w: SPIKE on %s takes 1 ≤ K ≤ %d for %d-byte elements, got K=%d", banded.ErrShape, dev.Name, maxK, elem, k)
	}
	if n > MaxN {
		return nil, fmt.Errorf("%w: N=%d exceeds the GPU limit %d", banded.ErrShape, n, MaxN)
	}
	switch {
	case opts.Partitions < 0:
		return nil, fmt.Errorf("%w: Partitions=%d, want ≥ 0", spike.ErrOption, opts.Partitions)
	case opts.ULBlock < 0:
		return nil, fmt.Errorf("%w: ULBlock=%d, want 0 (whole partition) or l > K", spike.ErrOption, opts.ULBlock)
	case opts.ULBlock > 0 && opts.ULBlock <= k:
		return nil, fmt.Errorf("%w: ULBlock=%d must exceed K=%d (or be 0 for the whole partition)", spike.ErrOption, opts.ULBlock, k)
	case opts.Method != spike.Truncated && opts.Method != spike.BlockJacobi:
		return nil, fmt.Errorf("%w: unknown method %d", spike.ErrOption, int(opts.Method))
	case opts.Workers < 0:
		return nil, fmt.Errorf("%w: Workers=%d, want ≥ 0", spike.ErrOption, opts.Workers)
	}
	p := opts.Partitions
	if p == 0 {
		p = tuning.SpikePartitions(dev, tuning.SpikeShape{N: n, K: k, Elem: elem, FactorRegs: factorRegs, SolveRegs: solveRegs, Kernel: kern})
	}
	if err := spike.CheckPartitions(n, k, p); err != nil {
		return nil, err
	}
	l := &Layout{N: n, K: k, P: p, Elem: elem, Bounds: spike.Partitions(n, p), Method: opts.Method, ULBlock: opts.ULBlock}
	l.Coupled = p > 1 && opts.Method == spike.Truncated
	l.Factor = tuning.SpikeFactorFor(dev, k, elem, kern)
	if f := l.Factor; f.Shared+f.Static > dev.MaxShared() {
		return nil, fmt.Errorf("%w: the factorization of K=%d needs %d B of shared memory, %s allows %d", banded.ErrShape, k, f.Shared+f.Static, dev.Name, dev.MaxShared())
	}
	l.ReducedThreads = min(1024, max(32, (k*k+31)/32*32))
	if l.Factor.Blocked {
		if sh := l.Factor.TipsShared; sh > dev.MaxShared() {
			return nil, fmt.Errorf("%w: the spikes of K=%d need %d B of shared memory, %s allows %d", banded.ErrShape, k, sh, dev.Name, dev.MaxShared())
		}
		l.ReducedThreads = 1024
	}
	if l.Coupled {
		largest := l.Bounds[1] - l.Bounds[0] // the first partitions are the longest
		if u := opts.ULBlock; u > 0 && u < largest {
			l.Compact, l.ULN = true, (p-1)*u
			l.ULBounds = make([]int, p)
			for q := range l.ULBounds {
				l.ULBounds[q] = q * u
			}
		} else {
			l.ULN = n
			l.ULBounds = append([]int(nil), l.Bounds[1:]...)
		}
	}
	l.Tol = opts.BoostTol
	switch {
	case l.Tol == 0 && elem == 8:
		l.Tol = 0x1p-52
	case l.Tol == 0:
		l.Tol = 0x1p-23
	case l.Tol < 0:
		l.Tol = -1
	}
	l.Tau = opts.BoostTol // spike.boostTol: the given tolerance, else ε
	if l.Tau <= 0 {
		l.Tau = 0x1p-52
		if elem == 4 {
			l.Tau = 0x1p-23
		}
	}
	l.StLU = 0
	l.StUL = 4*p + 1
	l.StRed = l.StUL + 4*p + 1
	l.StHdr = l.StRed + 2*p + 1
	l.StBad = (l.StHdr + 2) &^ 1
	l.StBadB = l.StBad + 2
	l.StFlagB = l.StBadB + 2
	l.StLen = l.StFlagB + 1
	return l, nil
}

// Interfaces is P−1, the number of reduced systems.
func (l *Layout) Interfaces() int { return l.P - 1 }

// SpikeBlocks is the number of K×K blocks of V, W and R̄ storage each:
// P−1 when coupled, else 0.
func (l *Layout) SpikeBlocks() int {
	if !l.Coupled {
		return 0
	}
	return l.P - 1
}

// ULRows returns the rows [r0, r0+m) of partition i (1 ≤ i < P) that its
// UL factorization covers.
func (l *Layout) ULRows(i int) (r0, m int) {
	r0 = l.Bounds[i]
	if l.Compact {
		return r0, l.ULBlock
	}
	return r0, l.Bounds[i+1] - r0
}

// U64 reads the 64-bit word at st[i], st[i+1] (low word first).
func U64(st []int32, i int) uint64 { return uint64(uint32(st[i])) | uint64(uint32(st[i+1]))<<32 }

// BadIndex returns the storage index of A's first non-finite entry, if
// any.
func (l *Layout) BadIndex(st []int32) (int, bool) {
	v := U64(st, l.StBad)
	if v == ^uint64(0) {
		return 0, false
	}
	return int(v), true
}

func cause(kind int32) error {
	switch kind {
	case kindZeroPivot:
		return banded.ErrZeroPivot
	case kindNonFiniteEntry, kindNonFinitePivot:
		return banded.ErrNonFinite
	}
	return fmt.Errorf("spikegpu: unknown status kind %d", kind)
}

// FactorError returns the error of a factorization from its status words
// exactly as spike.Factor words it (nil when none failed): a non-finite
// entry of A first, then the first partition whose LU or (after it) UL
// failed, then the first reduced system with a non-finite pivot.
func (l *Layout) FactorError(st []int32) error {
	if idx, ok := l.BadIndex(st); ok {
		s, j := idx/l.N, idx%l.N
		return fmt.Errorf("spike: %w", &banded.RowError{Row: j + s - l.K, Col: j, Err: banded.ErrNonFinite})
	}
	for i := 0; i < l.P; i++ {
		r0, r1 := l.Bounds[i], l.Bounds[i+1]
		if w := st[l.StLU+4*i:]; w[0] != 0 {
			re := &banded.RowError{Row: int(w[1]) - 1, Col: int(w[2]) - 1, Err: cause(w[0])}
			return fmt.Errorf("spike: partition %d (rows %d–%d), LU: %w", i, r0, r1-1, re)
		}
		if !l.Coupled || i == 0 {
			continue
		}
		if w := st[l.StUL+4*(i-1):]; w[0] != 0 {
			row, col := int(w[1])-1, int(w[2])-1
			if l.Compact { // rows of the compact band → rows of A
				off := r0 - l.ULBounds[i-1]
				row, col = row+off, col+off
			}
			re := &banded.RowError{Row: row, Col: col, Err: cause(w[0])}
			return fmt.Errorf("spike: partition %d (rows %d–%d), UL: %w", i, r0, r1-1, re)
		}
	}
	if l.Coupled {
		for i := 0; i < l.P-1; i++ {
			if step := st[l.StRed+2*i]; step != 0 {
				return fmt.Errorf("spike: reduced system %d (between partitions %d and %d): %w at step %d",
					i, i, i+1, banded.ErrNonFinite, step-1)
			}
		}
	}
	return nil
}

// BoostCounts returns the boosted pivots the kernels counted: per
// partition for LU and UL (UL of partition 0 is always 0) and the
// interfaces whose reduced matrix got a boosted pivot.
func (l *Layout) BoostCounts(st []int32) (lu, ul []int, reduced []int) {
	lu, ul = make([]int, l.P), make([]int, l.P)
	for i := 0; i < l.P; i++ {
		lu[i] = int(st[l.StLU+4*i+3])
		if l.Coupled && i > 0 {
			ul[i] = int(st[l.StUL+4*(i-1)+3])
		}
	}
	if l.Coupled {
		for i := 0; i < l.P-1; i++ {
			if st[l.StRed+2*i+1] != 0 {
				reduced = append(reduced, i)
			}
		}
	}
	return lu, ul, reduced
}

// ErrBoostMismatch reports a partition where the GPU and its CPU twin
// boosted different numbers of pivots (they should agree bit for bit).
var ErrBoostMismatch = errors.New("spikegpu: GPU and CPU boost counts differ")

// Boosts lists the boosted pivots as spike.Factorization.Boosts does, for
// the partitions where the kernels counted any: the rows come from the
// CPU twins (banded.FactorLURange and FactorULRange) on those partitions
// of a, the matrix that was factored. The counts must agree.
func Boosts[T banded.Float](l *Layout, lu, ul []int, a *banded.Band[T], opts spike.Options) ([]spike.Boost, error) {
	var out []spike.Boost
	fo := banded.FactorOptions{BoostTol: opts.BoostTol}
	for i := 0; i < l.P; i++ {
		if lu[i] == 0 && ul[i] == 0 {
			continue
		}
		b := spike.Boost{Partition: i}
		r0, r1 := l.Bounds[i], l.Bounds[i+1]
		blk := Block(a, r0, r1)
		bs, err := banded.FactorLURange(blk, 0, r1-r0, fo)
		if err != nil {
			return nil, fmt.Errorf("spikegpu: CPU twin of partition %d: %w", i, err)
		}
		b.LU = shift(bs, r0)
		if l.Coupled && i > 0 {
			u0, m := l.ULRows(i)
			blk := Block(a, u0, u0+m)
			bs, err := banded.FactorULRange(blk, 0, m, fo)
			if err != nil {
				return nil, fmt.Errorf("spikegpu: CPU twin of partition %d (UL): %w", i, err)
			}
			b.UL = shift(bs, u0)
		}
		if b.LU.Count() != lu[i] || b.UL.Count() != ul[i] {
			return nil, fmt.Errorf("%w: partition %d: GPU LU %d, UL %d; CPU LU %d, UL %d", ErrBoostMismatch, i, lu[i], ul[i], b.LU.Count(), b.UL.Count())
		}
		out = append(out, b)
	}
	return out, nil
}

func shift(b banded.Boosts, off int) banded.Boosts {
	var rows []int
	for _, r := range b.Rows {
		rows = append(rows, r+off)
	}
	return banded.Boosts{Rows: rows, Tau: b.Tau}
}

// Block returns A[r0:r1, r0:r1] of a as a band of order r1−r0 (entries
// coupling it to other rows dropped).
func Block[T banded.Float](a *banded.Band[T], r0, r1 int) *banded.Band[T] {
	n, k, m := a.N, a.K, r1-r0
	out := &banded.Band[T]{N: m, K: k, Data: make([]T, (2*k+1)*m)}
	for s := 0; s <= 2*k; s++ {
		d := s - k
		j0, j1 := max(0, -d), min(m, m-d)
		if j1 > j0 {
			copy(out.Data[s*m+j0:s*m+j1], a.Data[s*n+r0+j0:s*n+r0+j1])
		}
	}
	return out
}

// SolveError returns the error of a solve whose right-hand side had a
// non-finite entry (st holds the status words; nil if none), as
// spike.Factorization.Solve words it.
func (l *Layout) SolveError(st []int32) error {
	v := U64(st, l.StBadB)
	if v == ^uint64(0) {
		return nil
	}
	return fmt.Errorf("spike: %w in b at row %d", banded.ErrNonFinite, v)
}
