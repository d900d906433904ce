package tuning

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConstStreamLaunch: two arrays of the block's units, the table and
// 3·spb keys; warp kernels up to 32 threads a system (at most 6 PCR
// steps), the shared-memory kernel up to 9; the block with the most
// resident threads; the grid is every block the SMs hold or every group.
func TestConstStreamLaunch(t *testing.T) {
	// 4096 FP32 rows: 1024 units; the table is 3·16 floats and a mask.
	assert.Equal(t, 2*1024*16+196+12, PartitionConstStreamSharedBytes(4096, 4, 1, false))
	// 64 FP64 rows, 8 systems: 8·32 units; the table 3·16 doubles and a
	// mask, rounded to 8 bytes.
	assert.Equal(t, 2*256*16+392+96, PartitionConstStreamSharedBytes(64, 8, 8, false))

	for n := 1; n <= PartitionConstStreamMaxN; n += 15 {
		k := PartitionConstStreamSteps(n)
		tps := partitionThreads(n, 16)
		if tps <= 32 {
			assert.LessOrEqual(t, k, 6, "N=%d", n)
		}
		assert.LessOrEqual(t, k, 9, "N=%d", n)
	}
	assert.Equal(t, 0, PartitionConstStreamSteps(1))
	assert.Equal(t, 1, PartitionConstStreamSteps(16)) // one chunk: F and L
	assert.Equal(t, 2, PartitionConstStreamSteps(17)) // F, L and the one-row chunk's F
	assert.Equal(t, 9, PartitionConstStreamSteps(4096))

	_, err := PartitionConstStreamLaunchFor(H100, 4097, 4, 1000, false, 0, 0)
	assert.ErrorIs(t, err, ErrTooLargeForShared)
	_, err = PartitionConstStreamLaunchFor(H100, 64, 4, 0, false, 0, 0)
	assert.Error(t, err)

	l, err := PartitionConstStreamLaunchFor(H100, 64, 4, 1<<18, false, 96, 0)
	require.NoError(t, err)
	assert.True(t, l.Warp)
	assert.Equal(t, 4, l.ThreadsPerSystem)
	assert.Equal(t, l.SystemsPerBlock*4, l.Threads)
	assert.LessOrEqual(t, l.Threads, 512)
	assert.Equal(t, (1<<18+l.SystemsPerBlock-1)/l.SystemsPerBlock, l.Groups)
	assert.Equal(t, l.BlocksPerSM*132, l.Grid)
	// 96 registers: 640 threads an SM at most (20 warps of 3072).
	assert.LessOrEqual(t, l.BlocksPerSM*l.Threads, 672)

	l, err = PartitionConstStreamLaunchFor(H100, 4096, 8, 5, false, 210, 0)
	require.NoError(t, err)
	assert.False(t, l.Warp)
	assert.Equal(t, 256, l.Threads)
	assert.Equal(t, 1, l.SystemsPerBlock)
	assert.Equal(t, 1, l.BlocksPerSM) // 210 registers × 256 threads
	assert.Equal(t, 5, l.Grid)

	// A forced block size, and one the kernel cannot take.
	l, err = PartitionConstStreamLaunchFor(H100, 1024, 4, 1000, false, 116, 2)
	require.NoError(t, err)
	assert.Equal(t, 128, l.Threads)
	_, err = PartitionConstStreamLaunchFor(H100, 1024, 4, 1000, false, 116, 16)
	assert.Error(t, err, "16 systems of 64 threads: above 512")

	// Systems first: whole 32-byte sectors of a row.
	l, err = PartitionConstStreamLaunchFor(H100, 1024, 4, 1<<14, true, 116, 0)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, l.SystemsPerBlock*4, 32)
}

// TestPreferConstStream: only batches that give every block two groups.
func TestPreferConstStream(t *testing.T) {
	l, err := PartitionConstStreamLaunchFor(H100, 1024, 4, 1<<14, false, 116, 0)
	require.NoError(t, err)
	assert.True(t, PreferConstStream(H100, l))
	small, err := PartitionConstStreamLaunchFor(H100, 1024, 4, 64, false, 116, 0)
	require.NoError(t, err)
	assert.False(t, PreferConstStream(H100, small))
	edge, err := PartitionConstStreamLaunchFor(H100, 1024, 4, 2*l.BlocksPerSM*132*l.SystemsPerBlock, false, 116, 0)
	require.NoError(t, err)
	assert.True(t, PreferConstStream(H100, edge))
	edge, err = PartitionConstStreamLaunchFor(H100, 1024, 4, 2*l.BlocksPerSM*132*l.SystemsPerBlock-l.SystemsPerBlock, false, 116, 0)
	require.NoError(t, err)
	assert.False(t, PreferConstStream(H100, edge))
}
