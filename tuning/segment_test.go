package tuning

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/tridiag/partition"
)

// TestSegmentSharedBytes: four arrays of M rows (whole 8-unit groups) and
// the 256-byte block values.
func TestSegmentSharedBytes(t *testing.T) {
	assert.Equal(t, 4*1024*4+256, SegmentSharedBytes(1024, 4))
	assert.Equal(t, 4*4096*8+256, SegmentSharedBytes(4096, 8))
	assert.Equal(t, 4*2048*4+256, SegmentSharedBytes(2048, 4))
}

func TestSegmentRowsOK(t *testing.T) {
	for m, want := range map[int]bool{1024: true, 1536: true, 2048: true, 4096: true, 512: false, 8192: false, 1040: false, 1000: false} {
		assert.Equal(t, want, SegmentRowsOK(m), "m=%d", m)
	}
}

// TestSegmentLaunch: on the H100 with the kernels' registers (sm_90: 87
// FP32, 109 FP64) the choice keeps one pass up to N = 32·4096, fills the
// SM with the most useful rows (blocks × N/Q) and avoids one-row
// segments; every choice is valid for its N.
func TestSegmentLaunch(t *testing.T) {
	for _, c := range []struct {
		n, elem, regs int
		rows, q       int
		onePass       bool
	}{
		{8192, 4, 87, 1024, 8, true},         // 11 blocks of 1024 rows per SM
		{4096, 8, 109, 2048, 2, true},        // 3·2048 ties 6·1024: the larger
		{16384, 8, 109, 3584, 5, true},       // 2·16384/5 > 3·2048
		{65536, 4, 87, 3584, 19, true},       // 1024 would need 64 segments
		{131073, 4, 87, 1536, 86, false},     // 1 mod 1024, 2048, 4096; three passes beyond 32 segments
		{1 << 24, 4, 87, 1024, 16384, false}, // one large system
		{1025, 4, 87, 1536, 1, true},         // 1024 would leave a one-row segment
	} {
		l, err := SegmentLaunchFor(H100, c.n, c.elem, 8, SegmentOptions{Regs: c.regs})
		require.NoError(t, err, "%+v", c)
		assert.Equal(t, c.rows, l.Rows, "%+v", c)
		assert.Equal(t, c.q, l.Segments, "%+v", c)
		assert.Equal(t, c.onePass, l.OnePass, "%+v", c)
		assert.Equal(t, l.Rows/16, l.Threads)
		assert.True(t, partition.SegmentOK(c.n, l.Rows, 16))
		assert.LessOrEqual(t, l.SharedBytes, H100.MaxShared())
		assert.GreaterOrEqual(t, l.BlocksPerSM, 1)
		assert.Equal(t, 8*l.Segments, l.Blocks(8))
	}
	_, err := SegmentLaunchFor(H100, 430081, 4, 1, SegmentOptions{Regs: 87})
	assert.ErrorIs(t, err, ErrTooLargeForShared, "1 mod every segment size")
}

// TestSegmentLaunchRows: asked-for segment sizes are taken when valid and
// refused otherwise, with the reason.
func TestSegmentLaunchRows(t *testing.T) {
	l, err := SegmentLaunchFor(H100, 10000, 4, 1, SegmentOptions{Regs: 87, Rows: 4096})
	require.NoError(t, err)
	assert.Equal(t, 4096, l.Rows)
	assert.Equal(t, 3, l.Segments)
	_, err = SegmentLaunchFor(H100, 10000, 4, 1, SegmentOptions{Regs: 87, Rows: 3000})
	assert.ErrorIs(t, err, ErrTooLargeForShared)
	_, err = SegmentLaunchFor(H100, 4097, 4, 1, SegmentOptions{Regs: 87, Rows: 4096})
	assert.Error(t, err, "a one-row last segment")
	_, err = SegmentLaunchFor(H100, 1, 4, 1, SegmentOptions{Regs: 87})
	assert.Error(t, err)
	for _, d := range recorded {
		for _, elem := range []int{4, 8} {
			l, err := SegmentLaunchFor(d, 100000, elem, 4, SegmentOptions{})
			require.NoError(t, err, d.Name)
			assert.LessOrEqual(t, l.SharedBytes, d.MaxShared(), d.Name)
		}
	}
}

// TestSegmentLaunchCluster: with cluster kernels a segment size whose Q is
// a cluster size wins; without a fitting Q the global-memory kernels stay.
func TestSegmentLaunchCluster(t *testing.T) {
	o := SegmentOptions{Regs: 87, ClusterSizes: SegmentClusterSizes, ClusterRegs: 80}
	for _, c := range []struct {
		n, rows, q int
		cluster    bool
	}{
		{2048, 1024, 2, true},
		{8192, 4096, 2, true},     // ties again: the larger M
		{16384, 4096, 4, true},    // 1024·16, 2048·8, 4096·4 tie on resident rows: the larger M
		{20000, 2560, 8, true},    // 20000/2560 → 8 segments
		{65536, 4096, 16, true},   // the largest cluster
		{131072, 4096, 32, false}, // no cluster of 32: one pass in global memory
	} {
		l, err := SegmentLaunchFor(H100, c.n, 4, 64, o)
		require.NoError(t, err, "%+v", c)
		assert.Equal(t, c.rows, l.Rows, "%+v", c)
		assert.Equal(t, c.q, l.Segments, "%+v", c)
		assert.Equal(t, c.cluster, l.Cluster, "%+v", c)
		assert.True(t, l.OnePass, "%+v", c)
	}
	o.ClusterSizes = []int{2, 4, 8}
	l, err := SegmentLaunchFor(H100, 65536, 4, 64, o)
	require.NoError(t, err)
	assert.False(t, l.Cluster, "no cluster of 16 when the device refuses it")
}
