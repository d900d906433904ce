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

// TestSegmentLaunch: on the H100 with the kernels' registers (sm_90: 81
// FP32, 110 FP64) the choice keeps one pass up to N = 32·4096 with 2048
// rows when it can, three passes with 1024, and avoids one-row segments.
func TestSegmentLaunch(t *testing.T) {
	for _, c := range []struct {
		n, elem, regs int
		rows, q       int
		onePass       bool
	}{
		{8192, 4, 81, 2048, 4, true},
		{4096, 8, 110, 2048, 2, true},
		{16384, 8, 110, 2048, 8, true},
		{65536, 4, 81, 2048, 32, true},
		{131072, 4, 81, 4096, 32, true},      // the one-pass limit: only 4096 (3 blocks per SM)
		{131072, 8, 110, 4096, 32, true},     // FP64 4096-row segments: one block per SM, but 8 systems take two waves
		{131073, 4, 81, 1536, 86, false},     // 1 mod 1024, 2048, 4096; three passes, 1024 impossible
		{1 << 24, 4, 81, 1024, 16384, false}, // one large system
		{1 << 24, 8, 110, 1024, 16384, false},
		{2049, 4, 81, 1536, 2, true}, // 2048 would leave a one-row segment
	} {
		l, err := SegmentLaunchFor(H100, c.n, c.elem, 8, SegmentOptions{Regs: c.regs})
		require.NoError(t, err, "%+v", c)
		assert.Equal(t, c.rows, l.Rows, "%+v", c)
		assert.Equal(t, c.q, l.Segments, "%+v", c)
		assert.Equal(t, c.onePass, l.OnePass, "%+v", c)
		assert.False(t, l.Cluster)
		assert.Equal(t, l.Rows/16, l.Threads)
		assert.True(t, partition.SegmentOK(c.n, l.Rows, 16))
		assert.LessOrEqual(t, l.SharedBytes, H100.MaxShared())
		assert.GreaterOrEqual(t, l.BlocksPerSM, 1)
		assert.Equal(t, 8*l.Segments, l.Blocks(8))
	}
	_, err := SegmentLaunchFor(H100, 430081, 4, 1, SegmentOptions{Regs: 81})
	assert.ErrorIs(t, err, ErrTooLargeForShared, "1 mod every segment size")
}

// TestSegmentLaunchFewWaves: FP64 N = 131072 has one pass only with
// 4096-row segments, one block per SM; small batches (at most two waves of
// blocks) take it, larger ones three passes of 1024 rows.
func TestSegmentLaunchFewWaves(t *testing.T) {
	for _, c := range []struct {
		g       int
		onePass bool
	}{{1, true}, {4, true}, {8, true}, {9, false}, {128, false}} {
		l, err := SegmentLaunchFor(H100, 131072, 8, c.g, SegmentOptions{Regs: 110})
		require.NoError(t, err)
		assert.Equal(t, c.onePass, l.OnePass, "G=%d", c.g)
		if c.onePass {
			assert.Equal(t, 4096, l.Rows, "G=%d", c.g)
			assert.Equal(t, 1, l.BlocksPerSM, "G=%d", c.g)
		} else {
			assert.Equal(t, 1024, l.Rows, "G=%d", c.g)
		}
	}
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

// TestSegmentLaunchCluster: with cluster kernels a cluster per system wins
// when Q can be a cluster size with two blocks per SM, 2048 rows first.
func TestSegmentLaunchCluster(t *testing.T) {
	for _, c := range []struct {
		n, elem, rows, q int
		cluster          bool
	}{
		{2048 + 512, 4, 2048, 2, true},
		{8192, 4, 2048, 4, true},
		{16384, 4, 2048, 8, true},
		{16384, 8, 2048, 8, true},
		{20000, 4, 2560, 8, true},   // 2048 would need 10 segments
		{32768, 4, 4096, 8, true},   // FP32 4096 rows: 3 blocks per SM
		{32768, 8, 2048, 16, false}, // FP64 4096 rows: one block per SM; global, 2048
		{131072, 4, 4096, 32, false},
	} {
		regs, cregs := 81, 72
		if c.elem == 8 {
			regs, cregs = 110, 103
		}
		o := SegmentOptions{Regs: regs, ClusterSizes: SegmentClusterSizes, ClusterRegs: cregs}
		l, err := SegmentLaunchFor(H100, c.n, c.elem, 64, o)
		require.NoError(t, err, "%+v", c)
		assert.Equal(t, c.rows, l.Rows, "%+v", c)
		assert.Equal(t, c.q, l.Segments, "%+v", c)
		assert.Equal(t, c.cluster, l.Cluster, "%+v", c)
		assert.True(t, l.OnePass, "%+v", c)
	}
}
