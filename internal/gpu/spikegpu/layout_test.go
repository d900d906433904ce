package spikegpu

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/spike"
	"github.com/bandsolve/bandsolve/tuning"
)

func TestLayout(t *testing.T) {
	l, err := NewLayout(1000, 5, 8, spike.Options{Partitions: 7, ULBlock: 10}, tuning.H100, 0, 0, tuning.SpikeKernelAuto)
	require.NoError(t, err)
	assert.Equal(t, spike.Partitions(1000, 7), l.Bounds)
	assert.True(t, l.Coupled)
	assert.True(t, l.Compact)
	assert.Equal(t, 6*10, l.ULN)
	assert.Equal(t, []int{0, 10, 20, 30, 40, 50, 60}, l.ULBounds)
	assert.Zero(t, l.StBad%2, "64-bit words are aligned")
	assert.Equal(t, 0x1p-52, l.Tol)
	r0, m := l.ULRows(3)
	assert.Equal(t, [2]int{l.Bounds[3], 10}, [2]int{r0, m})

	// ULBlock at least the partitions' size: the whole partitions.
	l, err = NewLayout(1000, 5, 4, spike.Options{Partitions: 7, ULBlock: 143}, tuning.H100, 0, 0, tuning.SpikeKernelAuto)
	require.NoError(t, err)
	assert.False(t, l.Compact)
	assert.Equal(t, 1000, l.ULN)
	assert.Equal(t, l.Bounds[1:], l.ULBounds)
	assert.Equal(t, 0x1p-23, l.Tau)

	// P = 1 and block-Jacobi have no coupling.
	l, err = NewLayout(1000, 5, 8, spike.Options{Partitions: 1}, tuning.H100, 0, 0, tuning.SpikeKernelAuto)
	require.NoError(t, err)
	assert.False(t, l.Coupled)
	l, err = NewLayout(1000, 5, 8, spike.Options{Partitions: 3, Method: spike.BlockJacobi}, tuning.H100, 0, 0, tuning.SpikeKernelAuto)
	require.NoError(t, err)
	assert.False(t, l.Coupled)
	assert.Zero(t, l.SpikeBlocks())

	for _, c := range []struct {
		n, k int
		opts spike.Options
		want error
	}{
		{10, 0, spike.Options{}, banded.ErrShape},
		{5000, 1025, spike.Options{}, banded.ErrShape},
		{100, 5, spike.Options{Partitions: 11}, spike.ErrPartitions},
		{100, 5, spike.Options{ULBlock: 3}, spike.ErrOption},
	} {
		_, err := NewLayout(c.n, c.k, 8, c.opts, tuning.H100, 0, 0, tuning.SpikeKernelAuto)
		assert.ErrorIs(t, err, c.want, "%+v", c)
	}
}

// The blocked path above the shared-memory kernels' limit, up to its own.
func TestLayoutBlocked(t *testing.T) {
	for _, c := range []struct{ k, elem int }{{167, 8}, {168, 8}, {238, 4}, {239, 4}, {500, 8}, {717, 8}, {1024, 4}} {
		l, err := NewLayout(100*c.k, c.k, c.elem, spike.Options{}, tuning.H100, 0, 0, tuning.SpikeKernelAuto)
		require.NoError(t, err, "%+v", c)
		want := c.k > tuning.SpikeWideMaxK(tuning.H100, c.elem)
		assert.Equal(t, want, l.Factor.Blocked, "%+v", c)
		assert.Equal(t, want, !l.Factor.Wide, "%+v", c)
		if want {
			assert.Equal(t, 512, l.Factor.Threads, "band_spike_factor_blocked's block (SPIKE_BLK_THREADS)")
			assert.Equal(t, 1024, l.ReducedThreads)
			assert.GreaterOrEqual(t, l.Bounds[1]-l.Bounds[0], 16*c.k, "%+v", c)
		}
	}
	l, err := NewLayout(1000, 5, 8, spike.Options{Partitions: 3}, tuning.H100, 0, 0, tuning.SpikeKernelBlocked)
	require.NoError(t, err)
	assert.True(t, l.Factor.Blocked)
	_, err = NewLayout(5000, 718, 8, spike.Options{}, tuning.H100, 0, 0, tuning.SpikeKernelAuto)
	require.ErrorIs(t, err, banded.ErrShape)
	assert.Contains(t, err.Error(), "K ≤ 717")
	_, err = NewLayout(5000, 1025, 4, spike.Options{}, tuning.H100, 0, 0, tuning.SpikeKernelAuto)
	require.ErrorIs(t, err, banded.ErrShape)
	assert.Contains(t, err.Error(), "K ≤ 1024")
}

func TestFactorError(t *testing.T) {
	l, err := NewLayout(1000, 5, 8, spike.Options{Partitions: 4, ULBlock: 10}, tuning.H100, 0, 0, tuning.SpikeKernelAuto)
	require.NoError(t, err)
	st := make([]int32, l.StLen)
	st[l.StBad], st[l.StBad+1] = -1, -1
	st[l.StBadB], st[l.StBadB+1] = -1, -1
	require.NoError(t, l.FactorError(st))
	require.NoError(t, l.SolveError(st))

	// A zero pivot in the compact UL block of partition 2, at its row 3.
	w := st[l.StUL+4*1:]
	w[0], w[1], w[2] = kindZeroPivot, int32(l.ULBounds[1]+3+1), int32(l.ULBounds[1]+3+1)
	err = l.FactorError(st)
	var re *banded.RowError
	require.ErrorAs(t, err, &re)
	assert.ErrorIs(t, err, banded.ErrZeroPivot)
	assert.Equal(t, l.Bounds[2]+3, re.Row)
	assert.True(t, strings.Contains(err.Error(), "partition 2") && strings.Contains(err.Error(), "UL"), err.Error())

	// An LU failure of the same partition comes first.
	st[l.StLU+4*2], st[l.StLU+4*2+1], st[l.StLU+4*2+2] = kindNonFinitePivot, 601, 601
	err = l.FactorError(st)
	require.ErrorAs(t, err, &re)
	assert.ErrorIs(t, err, banded.ErrNonFinite)
	assert.Equal(t, 600, re.Row)
	assert.Contains(t, err.Error(), "LU")

	// A non-finite entry of A comes before everything: storage index
	// s·N + j is a_{j+s−K, j}.
	idx := uint64(3*1000 + 77)
	st[l.StBad], st[l.StBad+1] = int32(uint32(idx)), int32(idx>>32)
	err = l.FactorError(st)
	require.ErrorAs(t, err, &re)
	assert.Equal(t, [2]int{77 + 3 - 5, 77}, [2]int{re.Row, re.Col})

	// Reduced systems and b.
	st = make([]int32, l.StLen)
	st[l.StBad], st[l.StBad+1] = -1, -1
	st[l.StRed+2*1] = 4
	err = l.FactorError(st)
	assert.True(t, errors.Is(err, banded.ErrNonFinite))
	assert.Contains(t, err.Error(), "reduced system 1 (between partitions 1 and 2)")
	assert.Contains(t, err.Error(), "at step 3")
	st[l.StBadB], st[l.StBadB+1] = 42, 0
	assert.Contains(t, l.SolveError(st).Error(), "in b at row 42")

	// Boost counts and their rows from the CPU twins.
	st = make([]int32, l.StLen)
	st[l.StLU+4*1+3] = 1
	st[l.StRed+2*2+1] = 1
	lu, ul, red := l.BoostCounts(st)
	assert.Equal(t, []int{0, 1, 0, 0}, lu)
	assert.Equal(t, []int{0, 0, 0, 0}, ul)
	assert.Equal(t, []int{2}, red)
	a := banded.Random[float64](1000, 5, 2, rand.New(rand.NewPCG(1, 2)))
	a.Set(l.Bounds[1], l.Bounds[1], 0) // the first pivot: unmodified
	b, err := Boosts(l, lu, ul, a, spike.Options{})
	require.NoError(t, err)
	require.Len(t, b, 1)
	assert.Equal(t, []int{l.Bounds[1]}, b[0].LU.Rows)
	_, err = Boosts(l, []int{0, 2, 0, 0}, ul, a, spike.Options{})
	assert.ErrorIs(t, err, ErrBoostMismatch)
}
