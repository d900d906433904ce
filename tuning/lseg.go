package tuning

import (
	"fmt"
	"slices"

	"github.com/bandsolve/bandsolve/tridiag/partition"
)

// The lanes segment kernel (lseg_p16_*, ptx/src/lseg.cuh) is the
// segmented partition method with the systems across the lanes: for
// batches whose systems are adjacent in memory (batch stride 1, the
// interleaved layout) and longer than one block of the lanes kernel
// holds. A block takes S adjacent systems (64 bytes of a row: 16 in FP32,
// 8 in FP64) and one segment of M rows of each, S·M/16 threads (a chunk of
// 16 rows a thread, in registers). With Q = ⌈N/M⌉ ≤ segmentOnePassMax one
// self-signalling launch reads a, b, c, d once and writes x once; beyond,
// three launches (reduce, the reduced systems of 2Q rows by a nested
// plan, expand) read them twice.

// lanesSegmentRows lists the segment sizes LanesSegmentLaunchFor tries
// for one pass, preferred first: the largest block the kernel's bound
// allows, then smaller ones for N ≡ 1 (mod 512), which would leave a
// one-row segment. Where none gives one pass (Q ≤ segmentOnePassMax), it
// takes lanesSegmentRowsThreePass: small blocks there, which leave more
// warps in flight while others wait.
//
// H200, FP32 N = 32768 interleaved in three passes: 55 300 MRows/s with
// segments of 128 rows against 44 800 with 512 (go test -tags cuda -run
// '^$' -bench LanesSegments ./internal/gpu/tridiaggpu).
var lanesSegmentRows = []int{512, 448, 384, 256}

// lanesSegmentRowsThreePass lists the segment sizes for systems longer
// than one pass takes, preferred first.
var lanesSegmentRowsThreePass = []int{128, 192}

// lanesSegmentMaxThreads is the kernel's __launch_bounds__ for elements of
// elem bytes: 512 in FP32, 256 in FP64.
func lanesSegmentMaxThreads(elem int) int { return partitionLanesMaxThreads(elem) }

// lanesSegmentSystems is the number of systems a block takes: 64 bytes of
// a row (16 in FP32, 8 in FP64).
func lanesSegmentSystems(elem int) int { return 64 / max(elem, 1) }

// LanesSegmentSharedBytes is the dynamic shared memory of a block with
// segments of m rows of elem bytes and spb systems: the exchange (12
// values a chunk of 16 rows of each system), spb LsegSys of 8 + 24·elem
// bytes and the block's 16 bytes (lseg.cuh).
func LanesSegmentSharedBytes(m, elem, spb int) int {
	return 12*(m/SegmentChunk)*spb*elem + spb*(8+24*elem) + 16
}

// LanesSegmentRowsOK reports whether the kernel runs segments of m rows
// with elements of elem bytes: whole chunks, and S·m/16 threads a whole
// number of warps within the kernel's bound.
func LanesSegmentRowsOK(m, elem int) bool {
	if m < SegmentChunk || m%SegmentChunk != 0 {
		return false
	}
	th := lanesSegmentSystems(elem) * m / SegmentChunk
	return th%32 == 0 && th <= lanesSegmentMaxThreads(elem)
}

// LanesSegmentLaunch is a launch of the lanes segment kernel.
type LanesSegmentLaunch struct {
	N, G, ElemSize int
	Rows           int  // M, rows a segment
	Segments       int  // Q = ⌈N/M⌉
	Systems        int  // S, systems a block
	Groups         int  // ⌈G/S⌉
	Threads        int  // S·M/16
	SharedBytes    int  // dynamic shared memory of a block
	OnePass        bool // Q ≤ 32 with every block of a group resident: one launch
	BlocksPerSM    int  // the residency the launch expects
}

// Blocks is the grid: Groups·Segments blocks.
func (l LanesSegmentLaunch) Blocks() int { return l.Groups * l.Segments }

// WithSystems is l with spb systems a block instead of the choice's (a
// forced choice, for benchmarks): the groups, threads and shared memory
// follow spb, the residency and the passes stay l's. It fails where spb
// is not in 1…32 or the block is not a whole number of warps within the
// kernel's bound.
func (l LanesSegmentLaunch) WithSystems(spb int) (LanesSegmentLaunch, error) {
	if spb < 1 {
		return l, fmt.Errorf("tuning: %d systems a block of the lanes segment kernel", spb)
	}
	l.Systems, l.Groups = spb, (l.G+spb-1)/spb
	l.Threads = spb * l.Rows / SegmentChunk
	l.SharedBytes = LanesSegmentSharedBytes(l.Rows, l.ElemSize, spb)
	if l.Threads%32 != 0 || l.Threads > lanesSegmentMaxThreads(l.ElemSize) || spb > 32 {
		return l, fmt.Errorf("tuning: %d systems a block of segments of %d rows: %d threads, want a multiple of 32 up to %d",
			spb, l.Rows, l.Threads, lanesSegmentMaxThreads(l.ElemSize))
	}
	return l, nil
}

// LanesSegmentLaunchFor is the launch for g systems of n rows of elem
// bytes: segments of rows rows (0: the first of the preferred sizes that
// suits n: 512 rows, or smaller for N ≡ 1 mod 512, in one pass; 128 in
// three). regs is the kernel's registers per thread (0: the most its
// bound allows). It fails when no segment size suits n (n ≤ M or n ≡ 1
// mod M), or when the block does not fit an SM.
func LanesSegmentLaunchFor(d Device, n, elem, g, rows, regs int) (LanesSegmentLaunch, error) {
	l := LanesSegmentLaunch{N: n, G: g, ElemSize: elem}
	if n < 2 || g < 1 || (elem != 4 && elem != 8) {
		return l, fmt.Errorf("tuning: lanes segment launch for N=%d G=%d, element size %d", n, g, elem)
	}
	ok := func(m int) bool {
		return LanesSegmentRowsOK(m, elem) && n > m && partition.SegmentOK(n, m, SegmentChunk)
	}
	onePass := func(m int) bool { return ok(m) && partition.Segments(n, m) <= segmentOnePassMax }
	cands := lanesSegmentRows
	i := slices.IndexFunc(cands, onePass)
	if i < 0 {
		cands = lanesSegmentRowsThreePass
		i = slices.IndexFunc(cands, ok)
	}
	if rows > 0 {
		cands = []int{rows}
		i = slices.IndexFunc(cands, ok)
	}
	if i < 0 {
		return l, fmt.Errorf("%w: no segment size of %v cuts N=%d for the lanes segment kernel (%d-byte elements)",
			ErrTooLargeForShared, cands, n, elem)
	}
	m := cands[i]
	if regs <= 0 {
		regs = 65536 / lanesSegmentMaxThreads(elem)
	}
	l.Rows, l.Segments = m, partition.Segments(n, m)
	l.Systems = lanesSegmentSystems(elem)
	l.Groups = (g + l.Systems - 1) / l.Systems
	l.Threads = l.Systems * m / SegmentChunk
	l.SharedBytes = LanesSegmentSharedBytes(m, elem, l.Systems)
	l.BlocksPerSM, _ = partitionResidency(d, l.Threads, l.SharedBytes, regs)
	if l.BlocksPerSM < 1 {
		return l, fmt.Errorf("%w: a block of the lanes segment kernel (%d threads, %d registers, %d bytes of shared memory) does not fit an SM",
			ErrTooLargeForShared, l.Threads, regs, l.SharedBytes)
	}
	// One pass needs the Q blocks of a group on the device at once.
	l.OnePass = l.Segments <= segmentOnePassMax && l.Segments <= l.BlocksPerSM*max(d.SMs, 1)
	return l, nil
}

// LanesSegmentMinN is the smallest N at which partition plans of batches
// of adjacent systems (batch stride 1) with elements of elem bytes take the
// lanes segment kernel for their general solves: above 1024 rows in both
// precisions.
//
// H200, FP32 N = 2048 interleaved: 62 700 MRows/s in lanes segments
// against 57 200 for the best other plan (go test -tags cuda -run '^$'
// -bench LanesSegments ./internal/gpu/tridiaggpu).
const LanesSegmentMinN = 1025
