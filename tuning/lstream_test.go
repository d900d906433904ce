package tuning

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLanesStreamLaunchFor(t *testing.T) {
	// FP32 N = 1024: 512 threads, 155 KB of shared memory, one block an SM.
	l, err := LanesStreamLaunchFor(H100, 1024, 4, 16384, 110)
	require.NoError(t, err)
	assert.Equal(t, 512, l.Threads)
	assert.Equal(t, 4*64*17*8*4+4*128*8*4+256, l.SharedBytes)
	assert.Equal(t, 1, l.BlocksPerSM)
	assert.Equal(t, 132, l.Grid)
	// FP32 N = 256: 128 threads; registers allow four blocks.
	l, err = LanesStreamLaunchFor(H100, 256, 4, 65536, 110)
	require.NoError(t, err)
	assert.Equal(t, 128, l.Threads)
	assert.Equal(t, 4, l.BlocksPerSM)
	// Few systems: no more blocks than groups.
	l, err = LanesStreamLaunchFor(H100, 256, 4, 20, 110)
	require.NoError(t, err)
	assert.Equal(t, 3, l.Grid)
	// FP64 N = 512: 256 threads; 1024 too long.
	l, err = LanesStreamLaunchFor(H100, 512, 8, 1000, 167)
	require.NoError(t, err)
	assert.Equal(t, 256, l.Threads)
	_, err = LanesStreamLaunchFor(H100, 1024, 8, 1000, 167)
	assert.ErrorIs(t, err, ErrTooLargeForShared)
	_, err = LanesStreamLaunchFor(H100, 100, 2, 1000, 0)
	assert.Error(t, err)
}
