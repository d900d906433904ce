package tuning

import "github.com/bandsolve/bandsolve/internal/gpu/kernels"

// PivotLaunch chooses the launch of the pivoting partition kernel
// (partition_pivot_p16_*: one block holds its systems, with the layout of
// partition_p16_* and the rules of PartitionLaunchChunk, within its own
// launch bound) for a batch of g systems of n rows of elem bytes; regs is
// the kernel's registers per thread. It fails with ErrTooLargeForShared
// when one system does not fit a block.
func PivotLaunch(d Device, n, elem, g int, sysFirst bool, regs int) (PartitionLaunch, error) {
	return partitionLaunch(d, n, elem, 16, g, sysFirst, regs, partPivot, pivotThreads(elem))
}

// PivotMaxN is the largest N the pivoting partition kernel holds in one
// block, for systems stored rows first (sysFirst false) or systems first.
func PivotMaxN(d Device, elem int, sysFirst bool) int {
	return partitionMaxN(d, elem, 16, sysFirst, partPivot, pivotThreads(elem))
}

// pivotThreads is the pivoting partition kernel's launch bound.
func pivotThreads(elem int) int { return bound(kernels.PartitionPivotPFor(16, elem == 8)) }

// PivotBlockRows is the longest system the pivoting partition kernel holds
// in one block whatever its shared memory: 4096 rows, 256 chunks of 16,
// whose coarse system of at most 512 rows is solved by chunks of 16 coarse
// rows with a coarse system of at most 64 rows (PPART_DIRECT in
// ptx/src/ppart.cuh), which one thread solves.
const PivotBlockRows = 4096

// PivotSharedBytes is the dynamic shared memory of a block of the pivoting
// partition kernels for spb systems of n rows (elem bytes an element):
// eight arrays of the partition kernels' units (a, b, c, d, the solution
// before refinement, three of scratch) in whole groups of 8, two int32 a
// system.
func PivotSharedBytes(n, elem, spb int, sysFirst bool) int {
	units := (spb*partitionStride(n, 16, elem, sysFirst) + 7) &^ 7
	return 8*units*16 + 8*spb
}

// PivotSegmentRows is the segment size, in rows, of the pivoting partition
// method for systems longer than a block holds (the passes of
// partition_pivot_{reduce,expand,correct}_p16, a thread per chunk of 16
// rows): 2048 in FP32, 1024 in FP64, 64 KiB of shared memory a block
// (PivotSharedBytes), three blocks an SM on an H100.
func PivotSegmentRows(elem int) int {
	if elem == 8 {
		return 1024
	}
	return 2048
}
