package tuning

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLanesSegmentLaunchFor(t *testing.T) {
	// FP32: 16 systems a block, segments of 512 rows, 512 threads.
	l, err := LanesSegmentLaunchFor(H100, 16384, 4, 1024, 0, 0)
	require.NoError(t, err)
	assert.Equal(t, 512, l.Rows)
	assert.Equal(t, 32, l.Segments)
	assert.Equal(t, 16, l.Systems)
	assert.Equal(t, 64, l.Groups)
	assert.Equal(t, 512, l.Threads)
	assert.Equal(t, 64*32, l.Blocks())
	assert.True(t, l.OnePass)
	assert.Equal(t, LanesSegmentSharedBytes(512, 4, 16), l.SharedBytes)
	assert.GreaterOrEqual(t, l.BlocksPerSM, 1)

	// FP64: 8 systems a block; beyond 32 segments of 512 rows, three
	// passes with segments of 128 rows (64 threads).
	l, err = LanesSegmentLaunchFor(H100, 33*512-3, 8, 100, 0, 0)
	require.NoError(t, err)
	assert.Equal(t, 8, l.Systems)
	assert.Equal(t, 13, l.Groups)
	assert.Equal(t, 128, l.Rows)
	assert.Equal(t, 64, l.Threads)
	assert.Equal(t, 132, l.Segments)
	assert.False(t, l.OnePass)
	// Segments of 512 rows asked for: 33, three passes.
	l, err = LanesSegmentLaunchFor(H100, 33*512-3, 8, 100, 512, 0)
	require.NoError(t, err)
	assert.Equal(t, 256, l.Threads)
	assert.Equal(t, 33, l.Segments)
	assert.False(t, l.OnePass)
	// 32 segments of 512 rows: one pass; N ≡ 1 (mod 128) beyond: 192.
	l, err = LanesSegmentLaunchFor(H100, 32*512, 4, 100, 0, 0)
	require.NoError(t, err)
	assert.True(t, l.OnePass)
	assert.Equal(t, 512, l.Rows)
	l, err = LanesSegmentLaunchFor(H100, 40*512+1, 4, 100, 0, 0)
	require.NoError(t, err)
	assert.Equal(t, 192, l.Rows)

	// N ≡ 1 (mod 512): the next size.
	l, err = LanesSegmentLaunchFor(H100, 4*512+1, 4, 16, 0, 0)
	require.NoError(t, err)
	assert.Equal(t, 448, l.Rows)
	assert.NotEqual(t, 1, l.N%l.Rows)

	// Asked sizes: valid ones taken, others refused.
	l, err = LanesSegmentLaunchFor(H100, 4096, 4, 16, 256, 0)
	require.NoError(t, err)
	assert.Equal(t, 256, l.Rows)
	assert.Equal(t, 16, l.Segments)
	_, err = LanesSegmentLaunchFor(H100, 4096, 8, 16, 1024, 0)
	assert.ErrorIs(t, err, ErrTooLargeForShared, "1024 rows: 512 FP64 threads, above the bound")
	_, err = LanesSegmentLaunchFor(H100, 128, 4, 16, 0, 0)
	assert.Error(t, err, "no size below N = 128")
	_, err = LanesSegmentLaunchFor(H100, 4096, 2, 16, 0, 0)
	assert.Error(t, err, "element size")
}

func TestLanesSegmentRowsOK(t *testing.T) {
	assert.True(t, LanesSegmentRowsOK(512, 4))
	assert.True(t, LanesSegmentRowsOK(512, 8))
	assert.True(t, LanesSegmentRowsOK(64, 4))
	assert.False(t, LanesSegmentRowsOK(32, 8), "8 systems of 2 chunks: 16 threads")
	assert.False(t, LanesSegmentRowsOK(520, 4), "not whole warps")
	assert.False(t, LanesSegmentRowsOK(1024, 4), "1024 threads: above the bound")
	for _, m := range append(lanesSegmentRows, lanesSegmentRowsThreePass...) {
		assert.True(t, LanesSegmentRowsOK(m, 4), "M=%d", m)
		assert.True(t, LanesSegmentRowsOK(m, 8), "M=%d", m)
	}
}
