package tuning

import (
	"fmt"

	"github.com/bandsolve/bandsolve/tridiag/partition"
)

// The streaming partition kernel (partition_stream_p16_*,
// ptx/src/stream.cuh) is the partition kernel for one system a block in a
// persistent grid: each block loops over systems blockIdx, +grid, …, and
// loads its next system (cp.async) while it solves the current one: for
// large batches of systems so long that an SM holds one or two blocks,
// where the one-shot kernel leaves the memory idle while it computes.
// Rows first in memory (element stride ≤ batch stride). Auto's rule is
// PreferStream.

// partitionStreamSharedBytes is the dynamic shared memory of a block of
// the streaming kernel for systems of n rows: five arrays (a, b, c, d and
// the exchange, where x also passes) of the system's units of 16 bytes in
// whole groups of 8, then two int32 keys.
func partitionStreamSharedBytes(n, elem int) int {
	units := (partitionStride(n, 16, elem, false) + 7) &^ 7
	return 5*units*16 + 8
}

// PartitionStreamMaxN is the largest N the streaming kernel takes on d:
// 16 rows a thread of at most maxThreads, the kernel's launch bound (its
// .maxntid: 512 in FP32, 256 in FP64, where a thread keeps 42 values of
// its chunk in registers), within the shared memory a block may opt in
// to.
func PartitionStreamMaxN(d Device, elem, maxThreads int) int {
	n := max(maxThreads, 0) * 16
	for n > 0 && partitionStreamSharedBytes(n, elem) > d.MaxShared() {
		n -= 16 * 32
	}
	return max(n, 0)
}

// StreamLaunch is the launch of the streaming kernel: Grid blocks (at most
// one a system, at most BlocksPerSM on every SM) of Threads threads,
// SharedBytes of dynamic shared memory.
type StreamLaunch struct {
	N, ElemSize int
	Threads     int // a multiple of 32, 16 rows each
	SharedBytes int
	BlocksPerSM int
	Grid        int
}

// PartitionStreamLaunchFor is the launch of the streaming kernel for g
// systems of n rows of elem bytes; maxThreads is the kernel's launch
// bound (PartitionStreamMaxN), regs its registers per thread (0: the most
// its launch bounds allow). It fails when N is above PartitionStreamMaxN
// or no block fits an SM.
func PartitionStreamLaunchFor(d Device, n, elem, g, maxThreads, regs int) (StreamLaunch, error) {
	l := StreamLaunch{N: n, ElemSize: elem}
	if n < 2 || g < 1 || (elem != 4 && elem != 8) || maxThreads < 1 {
		return l, fmt.Errorf("tuning: streaming launch for N=%d G=%d, element size %d, at most %d threads", n, g, elem, maxThreads)
	}
	if mx := PartitionStreamMaxN(d, elem, maxThreads); n > mx {
		return l, fmt.Errorf("%w: the streaming partition kernel takes N ≤ %d on %s (%d-byte elements); N=%d", ErrTooLargeForShared, mx, d.Name, elem, n)
	}
	if regs <= 0 {
		regs = 65536 / maxThreads
	}
	l.Threads = (partition.Chunks(n, 16) + 31) / 32 * 32
	l.SharedBytes = partitionStreamSharedBytes(n, elem)
	l.BlocksPerSM, _ = partitionResidency(d, l.Threads, l.SharedBytes, regs)
	if l.BlocksPerSM < 1 {
		return l, fmt.Errorf("%w: a streaming block for N=%d (%d threads, %d bytes of shared memory, %d registers a thread) does not fit an SM of %s", ErrTooLargeForShared, n, l.Threads, l.SharedBytes, regs, d.Name)
	}
	l.Grid = min(g, l.BlocksPerSM*max(d.SMs, 1))
	return l, nil
}

// PreferStream reports whether a batch of g systems takes the streaming
// kernel (launch s) rather than the one-block-per-system partition
// kernel (launch whole, for the same systems; its fallback for one block
// an SM is segments): only when every block gets at least two systems on
// average (g ≥ 2·BlocksPerSM·SMs; the gain is the next system's copy, and
// a smaller batch keeps the self-signalling one-shot kernel), and then
// where whole leaves one block an SM, or where the streaming blocks have
// at least 128 threads and two of them fit an SM.
//
// H100, FP64 N = 4096, 2^24 rows: 81% of the limit streamed against 67%
// in segments and 62% one block an SM (go test -tags cuda -run '^$'
// -bench Stream ./internal/gpu/tridiaggpu).
func PreferStream(d Device, whole PartitionLaunch, s StreamLaunch, g int) bool {
	if s.BlocksPerSM < 1 || g < 2*s.BlocksPerSM*max(d.SMs, 1) {
		return false
	}
	if whole.BlocksPerSM < 2 {
		return true
	}
	return s.Threads >= 128 && s.BlocksPerSM >= 2
}
