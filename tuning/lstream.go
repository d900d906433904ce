package tuning

import (
	"fmt"

	"github.com/bandsolve/bandsolve/tridiag/partition"
)

// The streamed lanes kernel (partition_lanes_stream_p16_s8_*,
// ptx/src/lstream.cuh) is the lanes kernel as a persistent grid: a block
// copies its next group of LanesStreamSystems adjacent systems into shared
// memory (cp.async) while it solves the current one, so that an SM keeps
// loading while it computes. It takes the N the lanes kernel takes.

// LanesStreamSystems is the number of systems a block of the streamed
// lanes kernel takes: 8 (the kernel is built for that number; with 16 the
// FP32 kernel would spill registers).
const LanesStreamSystems = 8

// lanesStreamSharedBytes is the dynamic shared memory of a block for
// systems of n rows of elem bytes: four arrays of ⌈n/16⌉ chunks of 17 rows
// (16 and one of padding) of 8 systems, the exchange of the cyclic
// reduction (four values of 2⌈n/16⌉ rows of 8 systems), two sets of 32
// keys.
func lanesStreamSharedBytes(n, elem int) int {
	nch := partition.Chunks(n, 16)
	return 4*nch*17*LanesStreamSystems*elem + 4*2*nch*LanesStreamSystems*elem + 2*32*4
}

// LanesStreamLaunch is a launch of the streamed lanes kernel.
type LanesStreamLaunch struct {
	N, G, ElemSize int
	Threads        int // 8·⌈N/16⌉
	SharedBytes    int
	BlocksPerSM    int
	Grid           int // blocks: every one the device holds at once, at most the groups
}

// LanesStreamLaunchFor is the launch for g systems of n rows of elem bytes
// (regs: the kernel's registers per thread, 0: the most its bound
// allows). It fails where the lanes kernel does not take n, or a block
// does not fit an SM.
func LanesStreamLaunchFor(d Device, n, elem, g, regs int) (LanesStreamLaunch, error) {
	l := LanesStreamLaunch{N: n, G: g, ElemSize: elem}
	if n < 1 || g < 1 || (elem != 4 && elem != 8) {
		return l, fmt.Errorf("tuning: streamed lanes launch for N=%d G=%d, element size %d", n, g, elem)
	}
	l.Threads = LanesStreamSystems * partition.Chunks(n, 16)
	if l.Threads > partitionLanesMaxThreads(elem) {
		return l, fmt.Errorf("%w: the streamed lanes kernel takes N ≤ %d (%d-byte elements), not %d",
			ErrTooLargeForShared, partitionLanesMaxThreads(elem)/LanesStreamSystems*16, elem, n)
	}
	l.SharedBytes = lanesStreamSharedBytes(n, elem)
	if regs <= 0 {
		regs = 65536 / partitionLanesMaxThreads(elem)
	}
	l.BlocksPerSM, _ = partitionResidency(d, l.Threads, l.SharedBytes, regs)
	if l.BlocksPerSM < 1 || (d.SharedPerBlockOptin > 0 && l.SharedBytes > d.SharedPerBlockOptin) {
		return l, fmt.Errorf("%w: a block of the streamed lanes kernel (%d threads, %d bytes of shared memory) does not fit an SM",
			ErrTooLargeForShared, l.Threads, l.SharedBytes)
	}
	groups := (g + LanesStreamSystems - 1) / LanesStreamSystems
	l.Grid = min(groups, l.BlocksPerSM*max(d.SMs, 1))
	return l, nil
}

// PreferLanesStream says whether a batch of the lanes kernel takes the
// streamed lanes kernel of launch l for its general solves: FP64 systems
// of more than 256 rows (the lanes kernel's block of 256 threads and 177
// registers is then alone on an SM, 8 warps), where every block of the
// persistent grid has at least two groups of systems to solve (one
// loading while the other computes). Elsewhere the lanes kernel is the
// faster (blocks of 8 systems are too small).
//
// H200, FP64 N = 512 interleaved: 54 800 MRows/s streamed against 45 300
// for the lanes kernel (go test -tags cuda -run '^$' -bench LanesStream
// ./internal/gpu/tridiaggpu).
func PreferLanesStream(l LanesStreamLaunch) bool {
	groups := (l.G + LanesStreamSystems - 1) / LanesStreamSystems
	return l.Grid > 0 && groups >= 2*l.Grid && l.ElemSize == 8 && l.N > 256
}
