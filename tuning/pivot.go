package tuning

import "github.com/bandsolve/bandsolve/internal/gpu/kernels"

// PivotLaunch chooses the launch of the pivoting partition kernel
// (partition_pivot_p16_*: one block holds its systems, with the layout of
// partition_p16_* and the rules of PartitionLaunchChunk, within its own
// launch bound) for a batch of g systems of n rows of elem bytes; regs is
// the kernel's registers per thread. It fails with ErrTooLargeForShared
// when one system does not fit a block.
func PivotLaunch(d Device, n, elem, g int, sysFirst bool, regs int) (PartitionLaunch, error) {
	return partitionLaunch(d, n, elem, 16, g, sysFirst, regs, false, pivotThreads(elem))
}

// PivotMaxN is the largest N the pivoting partition kernel holds in one
// block, for systems stored rows first (sysFirst false) or systems first.
func PivotMaxN(d Device, elem int, sysFirst bool) int {
	return partitionMaxN(d, elem, 16, sysFirst, false, pivotThreads(elem))
}

// pivotThreads is the pivoting partition kernel's launch bound.
func pivotThreads(elem int) int { return bound(kernels.PartitionPivotPFor(16, elem == 8)) }

// PivotSegmentRows is the segment size, in rows, of the pivoting partition
// method for systems longer than a block holds (the three passes of
// partition_pivot_{reduce,expand}_p16, a thread per chunk of 16 rows):
// 2048 in FP32, 1024 in FP64, 32 KiB of a, b, c, d in shared memory a
// block, six blocks an SM on an H100.
func PivotSegmentRows(elem int) int {
	if elem == 8 {
		return 1024
	}
	return 2048
}
