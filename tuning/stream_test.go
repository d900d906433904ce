package tuning

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// streamBound is the launch bound of the streaming kernel for elements of
// elem bytes (.maxntid: 512 in FP32, 256 in FP64).
func streamBound(elem int) int { return map[int]int{4: 512, 8: 256}[elem] }

// TestPartitionStreamLaunch: five arrays of the system's units and two
// keys; the largest N by threads and shared memory; the grid is every
// block the SMs hold, or the batch when smaller.
func TestPartitionStreamLaunch(t *testing.T) {
	assert.Equal(t, 5*2048*16+8, partitionStreamSharedBytes(8192, 4))
	assert.Equal(t, 5*2048*16+8, partitionStreamSharedBytes(4096, 8))
	assert.Equal(t, 5*1504*16+8, partitionStreamSharedBytes(6000, 4)) // 375 chunks of 4 units: 1500 → 1504
	assert.Equal(t, 8192, PartitionStreamMaxN(H100, 4, streamBound(4)))
	assert.Equal(t, 4096, PartitionStreamMaxN(H100, 8, streamBound(8)))
	assert.Less(t, PartitionStreamMaxN(GTX980, 4, streamBound(4)), 8192, "48 KiB of shared memory")
	for _, d := range recorded {
		for _, elem := range []int{4, 8} {
			mx := PartitionStreamMaxN(d, elem, streamBound(elem))
			if mx == 0 {
				continue
			}
			assert.LessOrEqual(t, partitionStreamSharedBytes(mx, elem), d.MaxShared(), d.Name)
			_, err := PartitionStreamLaunchFor(d, mx+1, elem, 100, streamBound(elem), 0)
			assert.ErrorIs(t, err, ErrTooLargeForShared, d.Name)
		}
	}

	l, err := PartitionStreamLaunchFor(H100, 8192, 4, 2048, streamBound(4), 109)
	require.NoError(t, err)
	assert.Equal(t, 512, l.Threads)
	assert.Equal(t, 1, l.BlocksPerSM) // 109 registers × 512 threads
	assert.Equal(t, 132, l.Grid)
	l, err = PartitionStreamLaunchFor(H100, 2048, 4, 8192, streamBound(4), 109)
	require.NoError(t, err)
	assert.Equal(t, 128, l.Threads)
	assert.Equal(t, 4, l.BlocksPerSM) // registers: 4 × 128 × 112
	assert.Equal(t, 528, l.Grid)
	l, err = PartitionStreamLaunchFor(H100, 4000, 8, 7, streamBound(8), 160)
	require.NoError(t, err)
	assert.Equal(t, 256, l.Threads) // 250 chunks
	assert.Equal(t, 7, l.Grid)
	_, err = PartitionStreamLaunchFor(H100, 1, 4, 7, streamBound(4), 0)
	assert.Error(t, err)
	_, err = PartitionStreamLaunchFor(H100, 64, 4, 7, 0, 0)
	assert.Error(t, err, "no launch bound")
}

// TestPreferStream: PreferStream's rules on an H100 (its
// comment): large batches only; always where the one-block kernel leaves
// one block an SM; else blocks of 128 threads or more, two an SM.
func TestPreferStream(t *testing.T) {
	launch := func(n, elem, g, regs int) (PartitionLaunch, StreamLaunch) {
		w, err := partitionLaunchFor(H100, n, elem, g, false, 64)
		require.NoError(t, err)
		s, err := PartitionStreamLaunchFor(H100, n, elem, g, streamBound(elem), regs)
		require.NoError(t, err)
		return w, s
	}
	for _, c := range []struct {
		n, elem, g, regs int
		want             bool
	}{
		{8192, 4, 2048, 109, true},   // whole: one block an SM
		{4096, 8, 4096, 160, true},   // the same
		{4096, 8, 200, 160, false},   // fewer than two systems a block
		{2048, 4, 8192, 109, true},   // 128 threads, four blocks an SM
		{2048, 8, 8192, 160, true},   // 128 threads, two blocks an SM
		{4096, 4, 4096, 109, true},   // 256 threads, two blocks an SM
		{1024, 4, 16384, 109, false}, // 64 threads
		{2048, 4, 64, 109, false},    // a small call
	} {
		w, s := launch(c.n, c.elem, c.g, c.regs)
		assert.Equal(t, c.want, PreferStream(H100, w, s, c.g), "%+v: whole %d blocks an SM, stream %d", c, w.BlocksPerSM, s.BlocksPerSM)
	}
}

// TestPartitionLaunchTwoBlocks: with equal resident threads, two blocks
// an SM win over one block of two systems (FP64 N = 3072: 192 threads and
// 96 KiB a system).
func TestPartitionLaunchTwoBlocks(t *testing.T) {
	l, err := partitionLaunchFor(H100, 3072, 8, 5000, false, 64)
	require.NoError(t, err)
	assert.Equal(t, 1, l.SystemsPerBlock)
	assert.Equal(t, 2, l.BlocksPerSM)
	assert.Equal(t, 192, l.Threads)
}
