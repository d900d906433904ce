package tuning

import (
	"fmt"

	"github.com/bandsolve/bandsolve/tridiag/partition"
)

// The constant-coefficient streaming kernels (partition_cstream_p16_* and
// partition_cstream_warp_p16_*, ptx/src/cstream.cuh) solve large batches
// of systems that share constant a, b, c: a persistent grid whose blocks
// compute what depends on the matrix once (Stage 1's table, the factors
// and divisors of every level of the cyclic reduction of the reduced
// rows, in a shared-memory table) and then loop over groups of spb systems,
// loading the next group's d while they solve the current one with d
// alone. Auto's rule is PreferConstStream.

// PartitionConstStreamMaxN is the largest N of the constant streaming
// kernels for elements of elem bytes: 4096 in FP32 (at most 9 levels,
// 2·⌈N/16⌉ ≤ 512 reduced rows, the most the kernels unroll, and at most
// 256 threads a system), 2048 in FP64, where the factor table of 9 levels
// would take 73 KB and leave one block an SM; longer FP64 systems keep
// the one-shot constant kernel.
//
// H100, FP64 N = 4096, 2^24 rows: the one-shot constant kernel at 61.2%
// of the limit, streaming with the factors in registers at 56.7% (go test
// -tags cuda -run '^$' -bench ConstStream ./internal/gpu/tridiaggpu).
func PartitionConstStreamMaxN(elem int) int {
	if elem == 8 {
		return 2048
	}
	return 4096
}

// PartitionConstStreamWarp reports whether a system of n rows takes at most
// a warp (⌈n/16⌉ ≤ 32 threads, at most 6 levels): the kernels that
// exchange by shuffles (partition_cstream_warp_p16_*) serve it.
func PartitionConstStreamWarp(n int) bool { return partitionThreads(n, 16) <= 32 }

// partitionConstStreamRowBytes is the bytes of each row that a block of
// the warp rows kernels reads where its threads allow: a block of
// interleaved systems reads spb·elem bytes of a row, and the fraction of
// the limit follows them whatever N.
//
// H100, 2^24 rows: 75–82% of the limit with 128 bytes a row against
// 68–74% with 64 (the cstream-spb cases of go test -tags cuda -run '^$'
// -bench ConstStream ./internal/gpu/tridiaggpu).
const partitionConstStreamRowBytes = 128

// partitionConstStreamBlockBytes is the bytes of d that a block of the
// constant streaming kernels is given when its systems are shorter (the
// smallest number of systems that hold as much, one system when one holds
// more): blocks of 256 threads in FP32 and 128 in FP64 for N ≤ 1024.
// PartitionConstStreamLaunchFor halves it for FP32 N ≥ 1024 and doubles
// it where that keeps more threads on an SM.
//
// H100: the best block or within 2 points of it at every N from 64 to
// 4096 (the cstream-spb cases of go test -tags cuda -run '^$' -bench
// ConstStream ./internal/gpu/tridiaggpu).
const partitionConstStreamBlockBytes = 16 << 10

// partitionConstStreamSharedBytes is the dynamic shared memory of a block
// of spb systems of n rows: two arrays (d, and the exchange where x also
// passes) of the systems' units of 16 bytes in whole groups of 8, Stage 1's
// table (r, γ, α for 16 rows and a bit mask), 3·spb int32 keys, and,
// 16-byte aligned, the factor table: a level's entries of four values for
// every thread of a system. With sysFirst (the _rows_ kernels), d and x
// pass row by row (cs_rows in ptx/src/cstream.cuh): ⌈n/16⌉ chunks of 16
// rows of spb elements and 16 bytes of padding, where that is more.
func partitionConstStreamSharedBytes(n, elem, spb int, sysFirst bool) int {
	units := (spb*partitionStride(n, 16, elem, false) + 7) &^ 7
	if sysFirst {
		r := 16 / elem
		e := partition.Chunks(n, 16) * (16*spb + r)
		units = max(units, ((e+r-1)/r+7)&^7)
	}
	table := (3*16*elem + 4 + elem - 1) / elem * elem
	b := 2*units*16 + table + 12*spb
	return (b+15)&^15 + partition.Levels(n, 16)*partitionThreads(n, 16)*4*elem
}

// ConstStreamLaunch is the launch of a constant streaming kernel: Grid
// blocks (at most one a group, at most BlocksPerSM on every SM) of
// Threads = SystemsPerBlock·ThreadsPerSystem threads, SharedBytes of
// dynamic shared memory; Warp kernels (ThreadsPerSystem ≤ 32) exchange
// by shuffles.
type ConstStreamLaunch struct {
	N, ElemSize      int
	ThreadsPerSystem int
	SystemsPerBlock  int
	Threads          int
	SharedBytes      int
	Warp             bool
	BlocksPerSM      int
	Groups           int // ⌈G/SystemsPerBlock⌉, the blocks' units of work
	Grid             int
}

// PartitionConstStreamLaunchFor is the launch of a constant streaming
// kernel for g systems of n rows of elem bytes (sysFirst: the systems are
// closer together in memory than the rows, the _rows_ kernels);
// maxThreads is the kernel's launch bound (its .maxntid; the rows
// kernels' larger bounds let their blocks take whole 32-byte sectors of a
// row); regs is the kernel's registers per thread (0: the most its launch
// bounds allow); spb > 0 forces the systems a block (benchmarks), else the block holds
// 16 KiB of d (fewer systems if that many do not fit an SM, twice as many
// if that keeps more threads on an SM; half as many for FP32 systems of
// 1024 rows or more; with sysFirst at least 128 bytes of each row where
// the kernel's threads allow). With sysFirst the block must take whole
// 32-byte sectors of a row (spb·elem ≥ 32); the launch fails where it
// cannot (FP32 N > 1024), or for N above PartitionConstStreamMaxN, or
// when no block fits an SM.
//
// H100, FP32 N = 1024 interleaved, constant: 105 µs with the rows kernels
// against 150 µs without (bandsolve bench -device cuda -grid
// 1024x16384:interleaved:const).
func PartitionConstStreamLaunchFor(d Device, n, elem, g int, sysFirst bool, maxThreads, regs, spb int) (ConstStreamLaunch, error) {
	l := ConstStreamLaunch{N: n, ElemSize: elem}
	if n < 1 || g < 1 || (elem != 4 && elem != 8) || maxThreads < 1 {
		return l, fmt.Errorf("tuning: constant streaming launch for N=%d G=%d, element size %d, at most %d threads", n, g, elem, maxThreads)
	}
	if mx := PartitionConstStreamMaxN(elem); n > mx {
		return l, fmt.Errorf("%w: the constant streaming kernel takes N ≤ %d (%d-byte elements); N=%d", ErrTooLargeForShared, mx, elem, n)
	}
	maxT := maxThreads
	if d.MaxThreadsPerBlock > 0 {
		maxT = min(maxT, d.MaxThreadsPerBlock)
	}
	if regs <= 0 {
		regs = 65536 / maxT
	}
	tps := partitionThreads(n, 16)
	l.ThreadsPerSystem, l.Warp = tps, PartitionConstStreamWarp(n)
	lo := max(1, 32/tps) // a warp's worth of threads
	if sysFirst {
		lo = max(lo, 32/elem)
	}
	want := max(lo, partitionConstStreamBlockBytes/(n*elem))
	if sysFirst {
		want = max(want, partitionConstStreamRowBytes/elem)
	}
	if elem == 4 && n >= 1024 {
		// FP32 systems of 64 threads or more: half as much d, blocks of
		// 128 threads (two systems of N = 1024, one of 2048).
		// H100, FP32 N = 1024: 69.6% of the limit against 67.1% with 256
		// threads (the cstream-spb cases of go test -tags cuda -run '^$'
		// -bench ConstStream ./internal/gpu/tridiaggpu).
		want = max(lo, want/2)
	}
	if spb > 0 {
		want = spb
	}
	best := 0
	for s := lo; s*tps <= maxT && s <= want; s *= 2 {
		sh := partitionConstStreamSharedBytes(n, elem, s, sysFirst)
		if blocks, _ := partitionResidency(d, s*tps, sh, regs); blocks < 1 || sh > d.MaxShared() {
			continue
		}
		best = s
	}
	if best == 0 || spb > 0 && best != spb {
		return l, fmt.Errorf("%w: no block of the constant streaming kernel for N=%d (%d systems a block asked, %d registers a thread, sectors whole: %v) fits an SM of %s", ErrTooLargeForShared, n, spb, regs, sysFirst, d.Name)
	}
	if s := 2 * best; spb == 0 && s*tps <= maxT {
		// Twice the systems where that keeps more threads on an SM.
		// H100, FP64 N = 2048: two blocks of 256 threads an SM at 81.7% of
		// the limit against three of 128 at 75.1% (the cstream-spb cases of
		// go test -tags cuda -run '^$' -bench ConstStream ./internal/gpu/tridiaggpu).
		sh := partitionConstStreamSharedBytes(n, elem, s, sysFirst)
		_, now := partitionResidency(d, best*tps, partitionConstStreamSharedBytes(n, elem, best, sysFirst), regs)
		if _, more := partitionResidency(d, s*tps, sh, regs); sh <= d.MaxShared() && more > now {
			best = s
		}
	}
	l.SystemsPerBlock, l.Threads = best, best*tps
	l.SharedBytes = partitionConstStreamSharedBytes(n, elem, best, sysFirst)
	l.BlocksPerSM, _ = partitionResidency(d, l.Threads, l.SharedBytes, regs)
	l.Groups = (g + best - 1) / best
	l.Grid = min(l.Groups, l.BlocksPerSM*max(d.SMs, 1))
	return l, nil
}

// PreferConstStream reports whether a constant solve of g systems takes
// the streaming kernel (launch s): when every block gets two groups of
// systems or more (the gain is the next group's copy; a smaller batch
// keeps the one-shot kernel, which signals its own completion).
func PreferConstStream(d Device, s ConstStreamLaunch) bool {
	return s.BlocksPerSM >= 1 && s.Groups >= 2*s.BlocksPerSM*max(d.SMs, 1)
}
