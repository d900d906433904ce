//go:build cuda

package tridiaggpu

import (
	"fmt"

	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tuning"
)

// The complex partition kernels (cpart_p16_*, ptx/src/cpart.cuh): chunks
// of cpartChunk rows (partition.DefaultChunk), a thread a chunk, the
// block's systems staged in shared memory, at most cpartMaxThreads
// threads a block (the kernels' launch bounds).
const (
	cpartChunk      = 16
	cpartMaxThreads = 512
	// cpartAutoMaxStridedBatch: complex Auto gives a batch stored
	// systems first (BatchStride < ElemStride, as interleaved) to the
	// partition kernels below this many systems, and keeps the kernels
	// of a thread a system from it on, which fill the GPU there and read
	// such batches coalesced. A first guess from the one-thread kernels'
	// figures (interleaved N = 256, G = 65536: 32% of the memory limit in
	// complex64; G = 4096 leaves most of an H100 idle), to be measured
	// (BenchmarkComplexPartition).
	cpartAutoMaxStridedBatch = 1 << 16
)

// cpartLaunch is the launch of cpart_p16_* for a batch: spb systems a
// block of spb·tps threads, tps = ⌈N/16⌉ (a thread a chunk), shared
// bytes a block, blocks in the grid.
type cpartLaunch struct {
	spb, tps, shared, blocks int
}

// cpartStride is the kernels' system stride in shared memory, in
// elements (cpart_ss): P+1 slots a chunk, odd.
func cpartStride(n int) int { return ((n+cpartChunk-1)/cpartChunk*(cpartChunk+1) | 1) }

// cpartSharedBytes is the dynamic shared memory of a block of spb
// systems of n rows of complex elements of elem bytes: four arrays of
// spb·cpartStride(n) elements and spb int keys.
func cpartSharedBytes(n, spb int, elem int64) int {
	return 4*spb*cpartStride(n)*int(elem) + 4*spb
}

// cpartLaunchFor is the launch for g systems of n rows (elem bytes an
// element) on a device with props: as many systems a block as fit a
// quarter of an SM's shared memory (at least one, so that about four
// blocks share an SM), within cpartMaxThreads threads and g. It fails
// with tridiag.ErrShape where one system does not fit a block's shared
// memory or needs more than cpartMaxThreads chunks.
func cpartLaunchFor(props tuning.Device, n, g int, elem int64) (cpartLaunch, error) {
	tps := (n + cpartChunk - 1) / cpartChunk
	maxShared := props.SharedPerBlockOptin
	if maxShared <= 0 {
		maxShared = max(props.SharedPerBlock, 48<<10)
	}
	one := cpartSharedBytes(n, 1, elem)
	if tps > cpartMaxThreads || one > maxShared {
		return cpartLaunch{}, fmt.Errorf("%w: complex partition: N=%d needs %d B of shared memory and %d threads a system, a block has %d B and %d threads", tridiag.ErrShape, n, one, tps, maxShared, cpartMaxThreads)
	}
	budget := max(props.SharedPerSM/4, one)
	spb := max(1, min(budget/one, cpartMaxThreads/tps, g))
	return cpartLaunch{spb: spb, tps: tps, shared: cpartSharedBytes(n, spb, elem), blocks: (g + spb - 1) / spb}, nil
}

// complexAutoPartition reports whether complex Auto runs the partition
// kernels for spec (with GTSV for the systems that fail): not cyclic,
// not PivotAlways, systems that fit a block, and either rows closer in
// memory than systems (contiguous batches) or fewer than
// cpartAutoMaxStridedBatch systems (long systems in small batches, which
// a thread a system cannot fill the GPU with).
func complexAutoPartition(props tuning.Device, spec tridiag.Spec, elem int64) bool {
	if spec.Cyclic || spec.Pivoting == tridiag.PivotAlways {
		return false
	}
	if _, err := cpartLaunchFor(props, spec.N, spec.G, elem); err != nil {
		return false
	}
	l := spec.Layout
	return l.ElemStride <= l.BatchStride || spec.G < cpartAutoMaxStridedBatch
}
