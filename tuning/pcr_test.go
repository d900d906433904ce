package tuning

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var recorded = []Device{H100, H200, A100, GTX980}

func TestPCRSteps(t *testing.T) {
	for n, want := range map[int]int{0: 0, 1: 0, 2: 1, 3: 2, 4: 2, 5: 3, 1024: 10, 1025: 11, 4096: 12, 4097: 13} {
		assert.Equal(t, want, pcrSteps(n), "n=%d", n)
	}
}

// TestReductionMaxN: the largest N follows from the shared memory a block
// may opt into (227 KiB on H100/H200, 163 KiB on A100, 48 KiB on the
// GTX 980), 6 arrays of N elements for PCR, 4 for CR, 4 bytes of key.
func TestReductionMaxN(t *testing.T) {
	for _, c := range []struct {
		d            Device
		pcr64, pcr32 int
		cr64, cr32   int
	}{
		{H100, 4842, 9685, 7263, 14527},
		{H200, 4842, 9685, 7263, 14527},
		{A100, 3477, 6954, 5215, 10431},
		{GTX980, 1023, 2047, 1535, 3071},
	} {
		assert.Equal(t, c.pcr64, PCRMaxN(c.d, 8), "%s PCR fp64", c.d.Name)
		assert.Equal(t, c.pcr32, PCRMaxN(c.d, 4), "%s PCR fp32", c.d.Name)
		assert.Equal(t, c.cr64, CRMaxN(c.d, 8), "%s CR fp64", c.d.Name)
		assert.Equal(t, c.cr32, CRMaxN(c.d, 4), "%s CR fp32", c.d.Name)
	}
	// The common N = 4096 fits in FP64 PCR on Hopper, not on A100.
	_, err := PCRLaunch(H100, 4096, 8)
	assert.NoError(t, err)
	_, err = PCRLaunch(A100, 4096, 8)
	assert.ErrorIs(t, err, ErrTooLargeForShared)
}

// TestReductionMaxNBoundary: MaxN fits exactly and MaxN+1 does not.
func TestReductionMaxNBoundary(t *testing.T) {
	for _, d := range recorded {
		for _, elem := range []int{4, 8} {
			for _, k := range kinds {
				m := k.maxN(d, elem)
				assert.LessOrEqual(t, k.shared(m, elem, 1), d.MaxShared(), "%s %s elem %d", d.Name, k.name, elem)
				assert.Greater(t, k.shared(m+1, elem, 1), d.MaxShared(), "%s %s elem %d", d.Name, k.name, elem)
				l, err := k.launch(d, m, elem)
				require.NoError(t, err)
				assert.Equal(t, m, l.MaxN)
				_, err = k.launch(d, m+1, elem)
				require.ErrorIs(t, err, ErrTooLargeForShared)
				assert.Contains(t, err.Error(), fmt.Sprintf("N=%d", m))
			}
		}
	}
}

type kind struct {
	name   string
	launch func(Device, int, int) (ReductionLaunch, error)
	maxN   func(Device, int) int
	shared func(n, elem, spb int) int
	work   func(n int) int // rows a level has to update
}

var kinds = []kind{
	{"PCR", PCRLaunch, PCRMaxN, PCRSharedBytes, func(n int) int { return n }},
	{"CR", CRLaunch, CRMaxN, crSharedBytes, func(n int) int { return (n + 1) / 2 }},
}

// TestReductionLaunchLimits: for every N up to the largest, on every
// recorded device, the launch stays within the device's limits and the
// kernels' (1024 threads), packs small systems, and is deterministic.
func TestReductionLaunchLimits(t *testing.T) {
	for _, d := range recorded {
		for _, elem := range []int{4, 8} {
			for _, k := range kinds {
				maxN := k.maxN(d, elem)
				for n := 1; n <= maxN; n++ {
					l, err := k.launch(d, n, elem)
					require.NoError(t, err, "%s %s n=%d", d.Name, k.name, n)
					what := fmt.Sprintf("%s %s elem %d n=%d: %+v", d.Name, k.name, elem, n, l)
					require.Equal(t, l.ThreadsPerSystem*l.SystemsPerBlock, l.Threads, what)
					require.LessOrEqual(t, l.Threads, d.MaxThreadsPerBlock, what)
					require.LessOrEqual(t, l.Threads, 1024, what)
					require.LessOrEqual(t, l.SharedBytes, d.MaxShared(), what)
					require.Equal(t, k.shared(n, elem, l.SystemsPerBlock), l.SharedBytes, what)
					require.Positive(t, l.SystemsPerBlock, what)
					// A power of two, ≥ the rows of the first level up to 1024.
					tps := l.ThreadsPerSystem
					require.Equal(t, 0, tps&(tps-1), what)
					require.GreaterOrEqual(t, tps, min(k.work(n), 1024), what)
					require.Less(t, tps/2, max(1, k.work(n)), what)
					// Small systems are packed to blocks of ≥ 128 threads.
					require.GreaterOrEqual(t, l.Threads, 128, what)
					if tps >= 128 {
						require.Equal(t, 1, l.SystemsPerBlock, what)
					}
					require.Equal(t, 0, l.Blocks(1)-1, what)
					require.Equal(t, (1000+l.SystemsPerBlock-1)/l.SystemsPerBlock, l.Blocks(1000), what)
					// Hybrid steps: one subsystem per thread, at most plain PCR.
					if k.name == "PCR" {
						require.LessOrEqual(t, l.HybridSteps, pcrSteps(n), what)
						require.LessOrEqual(t, 1<<l.HybridSteps, tps, what)
						if n <= 1024 {
							require.Equal(t, pcrSteps(n), l.HybridSteps, what)
						}
					}
					l2, _ := k.launch(d, n, elem)
					require.Equal(t, l, l2, what)
				}
			}
		}
	}
}

func TestReductionLaunchExamples(t *testing.T) {
	for _, c := range []struct {
		n, elem        int
		tps, spb, step int
	}{
		{1, 8, 1, 128, 0},
		{2, 8, 2, 64, 1},
		{31, 4, 32, 4, 5},
		{64, 8, 64, 2, 6},
		{100, 8, 128, 1, 7},
		{1000, 8, 1024, 1, 10},
		{1025, 4, 1024, 1, 10},
		{4096, 8, 1024, 1, 10},
	} {
		l, err := PCRLaunch(H100, c.n, c.elem)
		require.NoError(t, err)
		assert.Equal(t, c.tps, l.ThreadsPerSystem, "n=%d", c.n)
		assert.Equal(t, c.spb, l.SystemsPerBlock, "n=%d", c.n)
		assert.Equal(t, c.step, l.HybridSteps, "n=%d", c.n)
		assert.Equal(t, PCRSharedBytes(c.n, c.elem, c.spb), l.SharedBytes)
	}
	// N = 4096 in FP64: 6·4096·8 + 4 bytes, over the default 48 KiB
	// (the launcher opts in).
	l, _ := PCRLaunch(H100, 4096, 8)
	assert.Equal(t, 196612, l.SharedBytes)
	// CR: threads for the first level's ⌈n/2⌉ rows.
	l, err := CRLaunch(H200, 64, 4)
	require.NoError(t, err)
	assert.Equal(t, 32, l.ThreadsPerSystem)
	assert.Equal(t, 4, l.SystemsPerBlock)
	l, err = CRLaunch(H200, 7000, 8)
	require.NoError(t, err)
	assert.Equal(t, 1024, l.ThreadsPerSystem)
	assert.Equal(t, 1, l.SystemsPerBlock)
}

func TestReductionLaunchBadArgs(t *testing.T) {
	for _, c := range [][2]int{{0, 8}, {-1, 4}, {10, 2}} {
		_, err := PCRLaunch(H100, c[0], c[1])
		assert.Error(t, err)
		assert.False(t, errors.Is(err, ErrTooLargeForShared))
		_, err = CRLaunch(H100, c[0], c[1])
		assert.Error(t, err)
	}
	// A device with a small thread limit and no opt-in still gets a
	// consistent launch.
	small := GTX980
	small.MaxThreadsPerBlock = 256
	l, err := PCRLaunch(small, 1000, 4)
	require.NoError(t, err)
	assert.Equal(t, 256, l.Threads)
	assert.Equal(t, 8, l.HybridSteps)
}
