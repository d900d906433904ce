package tuning

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/tridiag/partition"
)

// cstreamBound is the launch bound of the constant streaming kernels but
// for the rows kernels (.maxntid 256).
const cstreamBound = 256

// TestConstStreamLaunch: two arrays of the block's units, the Stage 1
// table, 3·spb keys and the factor table; warp kernels up to 32 threads a
// system (at most 6 levels), the shared-memory kernel up to 9; blocks
// of 16 KiB of d; whole sectors for interleaved batches; the grid is every
// block the SMs hold or every group.
func TestConstStreamLaunch(t *testing.T) {
	// 4096 FP32 rows: 1024 units; the table is 3·16 floats and a mask;
	// the factors of 9 levels of 256 threads, four floats each, 16-byte
	// aligned.
	base := 2*1024*16 + 196 + 12
	assert.Equal(t, (base+15)&^15+9*256*16, partitionConstStreamSharedBytes(4096, 4, 1, false))
	// 2048 FP64 rows: 1024 units, 8 levels of 128 threads, four doubles
	// each; FP64 takes N ≤ 2048.
	base = 2*1024*16 + 392 + 12
	assert.Equal(t, (base+15)&^15+8*128*32, partitionConstStreamSharedBytes(2048, 8, 1, false))
	assert.Equal(t, 4096, PartitionConstStreamMaxN(4))
	assert.Equal(t, 2048, PartitionConstStreamMaxN(8))
	// 64 FP64 rows, 8 systems: 8·32 units; the table 3·16 doubles and a
	// mask, rounded to 8 bytes; 3 levels of 4 threads, four doubles each.
	base = 2*256*16 + 392 + 96
	assert.Equal(t, (base+15)&^15+3*4*32, partitionConstStreamSharedBytes(64, 8, 8, false))

	for n := 1; n <= PartitionConstStreamMaxN(4); n += 15 {
		k := partition.Levels(n, 16)
		tps := partitionThreads(n, 16)
		assert.Equal(t, tps <= 32, PartitionConstStreamWarp(n), "N=%d", n)
		if tps <= 32 {
			assert.LessOrEqual(t, k, 6, "N=%d", n)
		}
		assert.LessOrEqual(t, k, 9, "N=%d", n)
		for _, elem := range []int{4, 8} {
			l, err := PartitionConstStreamLaunchFor(H100, n, elem, 1<<20, false, cstreamBound, 128, 0)
			if n > PartitionConstStreamMaxN(elem) {
				assert.ErrorIs(t, err, ErrTooLargeForShared, "N=%d elem %d", n, elem)
				continue
			}
			require.NoError(t, err, "N=%d elem %d", n, elem)
			assert.LessOrEqual(t, l.Threads, cstreamBound)
			assert.LessOrEqual(t, l.SharedBytes, H100.MaxShared())
			assert.GreaterOrEqual(t, l.BlocksPerSM, 1)
		}
	}
	assert.Equal(t, 0, partition.Levels(1, 16))
	assert.Equal(t, 1, partition.Levels(16, 16)) // one chunk: F and L
	assert.Equal(t, 1, partition.Levels(17, 16)) // F, L and the one-row chunk's F
	assert.Equal(t, 9, partition.Levels(4096, 16))
	assert.True(t, PartitionConstStreamWarp(512))
	assert.False(t, PartitionConstStreamWarp(513))

	_, err := PartitionConstStreamLaunchFor(H100, 4097, 4, 1000, false, cstreamBound, 0, 0)
	assert.ErrorIs(t, err, ErrTooLargeForShared)
	_, err = PartitionConstStreamLaunchFor(H100, 2049, 8, 1000, false, cstreamBound, 0, 0)
	assert.ErrorIs(t, err, ErrTooLargeForShared)
	_, err = PartitionConstStreamLaunchFor(H100, 64, 4, 0, false, cstreamBound, 0, 0)
	assert.Error(t, err)
	_, err = PartitionConstStreamLaunchFor(H100, 64, 4, 1000, false, 0, 0, 0)
	assert.Error(t, err, "no launch bound")

	// 16 KiB of d a block: 64 FP32 systems of 64 rows (256 threads), 32
	// FP64 ones (128 threads); FP32 systems of 1024 rows or more get half
	// as much (two of 1024 rows, one of 2048: 128 threads); two systems of
	// 2048 FP64 rows (one would hold 16 KiB, but three blocks of 128
	// threads an SM are fewer threads than two of 256).
	for _, c := range []struct{ n, elem, spb, threads int }{
		{64, 4, 64, 256}, {64, 8, 32, 128}, {256, 4, 16, 256}, {256, 8, 8, 128},
		{1024, 4, 2, 128}, {1024, 8, 2, 128}, {2048, 4, 1, 128}, {2048, 8, 2, 256}, {4096, 4, 1, 256},
	} {
		l, err := PartitionConstStreamLaunchFor(H100, c.n, c.elem, 1<<18, false, cstreamBound, 80, 0)
		require.NoError(t, err)
		assert.Equal(t, c.spb, l.SystemsPerBlock, "N=%d elem %d", c.n, c.elem)
		assert.Equal(t, c.threads, l.Threads, "N=%d elem %d", c.n, c.elem)
		assert.Equal(t, l.Threads <= 32*l.SystemsPerBlock, l.Warp)
		assert.Equal(t, (1<<18+l.SystemsPerBlock-1)/l.SystemsPerBlock, l.Groups)
		assert.Equal(t, l.BlocksPerSM*132, l.Grid)
	}
	// 96 registers: 640 threads an SM at most (20 warps of 3072).
	l, err := PartitionConstStreamLaunchFor(H100, 64, 4, 1<<18, false, cstreamBound, 96, 0)
	require.NoError(t, err)
	assert.LessOrEqual(t, l.BlocksPerSM*l.Threads, 640)

	// FP64 N = 2048, 126 registers: one system a block (128 threads, 64
	// KB of shared memory) would give three blocks an SM, 384 threads;
	// two (256 threads, 96 KB) give two, 512 threads. A batch smaller
	// than the grid: 3 groups, 3 blocks.
	l, err = PartitionConstStreamLaunchFor(H100, 2048, 8, 5, false, cstreamBound, 126, 0)
	require.NoError(t, err)
	assert.False(t, l.Warp)
	assert.Equal(t, 256, l.Threads)
	assert.Equal(t, 2, l.SystemsPerBlock)
	assert.Equal(t, 98720, l.SharedBytes)
	assert.Equal(t, 2, l.BlocksPerSM)
	assert.Equal(t, 3, l.Grid)
	one, err := PartitionConstStreamLaunchFor(H100, 2048, 8, 5, false, cstreamBound, 126, 1)
	require.NoError(t, err)
	assert.Equal(t, 65952, one.SharedBytes)
	assert.Equal(t, 3, one.BlocksPerSM)
	assert.Equal(t, 5, one.Grid)

	// A forced block size, and ones the kernel cannot take.
	l, err = PartitionConstStreamLaunchFor(H100, 1024, 4, 1000, false, cstreamBound, 78, 2)
	require.NoError(t, err)
	assert.Equal(t, 128, l.Threads)
	_, err = PartitionConstStreamLaunchFor(H100, 1024, 4, 1000, false, cstreamBound, 78, 8)
	assert.Error(t, err, "8 systems of 64 threads: above 256")
	_, err = PartitionConstStreamLaunchFor(H100, 1024, 4, 1000, false, cstreamBound, 78, 3)
	assert.Error(t, err, "not a power of two")

	// Systems first: whole 32-byte sectors of a row, or no launch; the
	// warp rows kernels (64 registers in FP32, 96 in FP64, up to 1024 /
	// 640 threads) read 128 bytes of a row or more where the threads
	// allow, the other rows kernels (up to 512 threads) what 512 threads
	// take.
	for _, c := range []struct{ n, elem, maxT, regs, spb int }{
		{64, 4, 1024, 64, 64}, {256, 4, 1024, 64, 32}, {512, 4, 1024, 64, 32}, {512, 4, 1024, 80, 16},
		{64, 8, 640, 96, 32}, {256, 8, 640, 96, 16}, {512, 8, 640, 96, 16},
		{1024, 4, 512, 106, 8}, {1024, 8, 512, 126, 8}, {2048, 8, 512, 126, 4},
	} {
		l, err = PartitionConstStreamLaunchFor(H100, c.n, c.elem, 1<<14, true, c.maxT, c.regs, 0)
		require.NoError(t, err, "N=%d elem %d", c.n, c.elem)
		assert.Equal(t, c.spb, l.SystemsPerBlock, "N=%d elem %d regs %d", c.n, c.elem, c.regs)
		assert.GreaterOrEqual(t, l.SystemsPerBlock*c.elem, 32)
		assert.LessOrEqual(t, l.Threads, c.maxT)
	}
	for _, c := range []struct{ n, elem int }{{1025, 4}, {2048, 4}, {4096, 4}} {
		_, err = PartitionConstStreamLaunchFor(H100, c.n, c.elem, 1<<14, true, 512, 80, 0)
		assert.ErrorIs(t, err, ErrTooLargeForShared, "N=%d elem %d", c.n, c.elem)
	}
}

// TestPreferConstStream: only batches that give every block two groups.
func TestPreferConstStream(t *testing.T) {
	l, err := PartitionConstStreamLaunchFor(H100, 1024, 4, 1<<14, false, cstreamBound, 78, 0)
	require.NoError(t, err)
	assert.True(t, PreferConstStream(H100, l))
	small, err := PartitionConstStreamLaunchFor(H100, 1024, 4, 64, false, cstreamBound, 78, 0)
	require.NoError(t, err)
	assert.False(t, PreferConstStream(H100, small))
	edge, err := PartitionConstStreamLaunchFor(H100, 1024, 4, 2*l.BlocksPerSM*132*l.SystemsPerBlock, false, cstreamBound, 78, 0)
	require.NoError(t, err)
	assert.True(t, PreferConstStream(H100, edge))
	edge, err = PartitionConstStreamLaunchFor(H100, 1024, 4, 2*l.BlocksPerSM*132*l.SystemsPerBlock-l.SystemsPerBlock, false, cstreamBound, 78, 0)
	require.NoError(t, err)
	assert.False(t, PreferConstStream(H100, edge))
	tab, err := PartitionConstStreamLaunchFor(H100, 2048, 8, 1<<13, false, cstreamBound, 126, 0)
	require.NoError(t, err)
	assert.True(t, PreferConstStream(H100, tab))
}
