//go:build cuda

package spikegpu

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/internal/gpu/bandedgpu"
	"github.com/bandsolve/bandsolve/spike"
	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tuning"
)

// The blocked path (ptx/src/band_blocked.cuh) for K above the
// shared-memory kernels' limit (tuning.SpikeWideMaxK: 167 in FP64, 238 in
// FP32 on an H100), checked like the other kernels by spikeCase: spikes
// and solutions bit for bit against package spike, and against LU with
// partial pivoting where the partitions have at least 16K rows.

func testSpikeGPUBlocked[T tridiag.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(21, uint64(bandedgpu.ElemSize[T]())))
	elem := int(bandedgpu.ElemSize[T]())
	type sc struct {
		k, p int
		long bool // partitions of 16K rows: also against LU with pivoting
		ul   bool // ULBlock = 2K
	}
	for _, c := range []sc{{168, 3, true, false}, {200, 7, false, false}, {200, 2, false, true},
		{256, 2, false, true}, {256, 5, false, false}, {333, 4, true, false}, {333, 3, false, true},
		{512, 2, false, false}, {512, 3, false, true}} {
		n := c.p*(2*c.k+c.k/2) + 13
		if c.long {
			n = c.p*16*c.k + 11
		}
		m := banded.Random[T](n, c.k, 1, r)
		opts := spike.Options{Partitions: c.p}
		if c.ul {
			opts.ULBlock = 2 * c.k
		}
		p, err := NewPlan[T](dev, n, c.k, opts)
		require.NoError(t, err)
		blocked := p.Blocked()
		require.NoError(t, p.Close())
		assert.Equal(t, c.k > tuning.SpikeWideMaxK(dev.Properties(), elem), blocked, "K=%d: the path", c.k)
		what := fmt.Sprintf("N=%d K=%d P=%d ULBlock=%d blocked=%v", n, c.k, c.p, opts.ULBlock, blocked)
		spikeCase(t, what, m, opts, tuning.SpikeKernelAuto, r)
		if !blocked { // FP32 below 239: the blocked path forced too
			spikeCase(t, what+" forced", m, opts, tuning.SpikeKernelBlocked, r)
		}
	}
	// Block-Jacobi and d = 2 / 0.5.
	m := banded.Random[T](7*2*200+5, 200, 1, r)
	spikeCase(t, "block-Jacobi K=200", m, spike.Options{Partitions: 7, Method: spike.BlockJacobi}, tuning.SpikeKernelBlocked, r)
	for _, d := range []float64{2, 0.5} {
		m := banded.Random[T](4*2*256+3, 256, d, r)
		spikeCase(t, fmt.Sprintf("K=256 d=%g", d), m, spike.Options{Partitions: 4}, tuning.SpikeKernelBlocked, r)
	}
}

func TestSpikeGPUBlockedF32(t *testing.T) { testSpikeGPUBlocked[float32](t) }
func TestSpikeGPUBlockedF64(t *testing.T) { testSpikeGPUBlocked[float64](t) }

// The blocked path at small K (forced) against the shared-memory kernels
// and the CPU, partial last panels included.
func TestSpikeGPUBlockedSmallK(t *testing.T) {
	r := rand.New(rand.NewPCG(22, 23))
	for _, k := range []int{1, 5, 16, 33, 100} {
		n := 7*(2*k+9) + 3
		m := banded.Random[float64](n, k, 1, r)
		spikeCase(t, fmt.Sprintf("forced blocked K=%d", k), m, spike.Options{Partitions: 7}, tuning.SpikeKernelBlocked, r)
		m32 := banded.Convert[float32](m)
		spikeCase(t, fmt.Sprintf("forced blocked f32 ULBlock=2K K=%d", k), m32, spike.Options{Partitions: 7, ULBlock: 2 * k}, tuning.SpikeKernelBlocked, r)
	}
}

// Breakdowns on the blocked path: zero pivots with boosting off (the
// error names partition and row) and on (Boosts), non-finite entries (row
// and column), and K above the path's limit.
func testSpikeGPUBlockedBreakdowns[T tridiag.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(24, uint64(bandedgpu.ElemSize[T]())))
	const k, P = 250, 5
	n := P*(3*k) + 7
	bounds := spike.Partitions(n, P)
	ctx := context.Background()
	kern := tuning.SpikeKernelBlocked
	for _, tol := range []float64{0, -1} {
		base := fmt.Sprintf("blocked BoostTol=%g", tol)
		opts := spike.Options{Partitions: P, BoostTol: tol}
		m := banded.Random[T](n, k, 2, r)
		m.Set(bounds[3]+37, bounds[3]+37, 0)
		spikeCase(t, base+" zero LU pivot", m, opts, kern, r)
		m = banded.Random[T](n, k, 2, r)
		m.Set(bounds[3]-1, bounds[3]-1, 0)
		spikeCase(t, base+" zero UL pivot", m, opts, kern, r)
		// A pivot that is exactly zero when its step comes: the first row
		// of a partition.
		m = banded.Random[T](n, k, 2, r)
		m.Set(bounds[2], bounds[2], 0)
		spikeCase(t, base+" zero first pivot", m, opts, kern, r)
		p, err := newPlan[T](dev, n, k, opts, kern)
		require.NoError(t, err)
		err = p.FactorBand(ctx, m)
		if tol < 0 {
			var re *banded.RowError
			require.ErrorAs(t, err, &re, base)
			assert.ErrorIs(t, err, banded.ErrZeroPivot)
			assert.Contains(t, err.Error(), "partition 2")
			assert.Equal(t, bounds[2], re.Row)
			assert.ErrorIs(t, p.SolveHost(ctx, make([]T, n), make([]T, n)), ErrNotFactored)
		} else {
			require.NoError(t, err, base)
			require.NotEmpty(t, p.Boosts(), base)
			assert.Equal(t, 2, p.Boosts()[0].Partition, base)
			assert.Contains(t, p.Boosts()[0].LU.Rows, bounds[2], base)
		}
		require.NoError(t, p.Close())
	}
	m := banded.Random[T](n, k, 2, r)
	m.Set(bounds[4]+2, bounds[4]+200, T(math.NaN()))
	spikeCase(t, "blocked NaN", m, spike.Options{Partitions: P}, kern, r)
	p, err := newPlan[T](dev, n, k, spike.Options{Partitions: P}, kern)
	require.NoError(t, err)
	err = p.FactorBand(ctx, m)
	var re *banded.RowError
	require.ErrorAs(t, err, &re)
	assert.ErrorIs(t, err, banded.ErrNonFinite)
	assert.Equal(t, [2]int{bounds[4] + 2, bounds[4] + 200}, [2]int{re.Row, re.Col})
	require.NoError(t, p.FactorBand(ctx, banded.Random[T](n, k, 2, r)), "factors again after a failure")
	require.NoError(t, p.Close())

	maxK := tuning.SpikeMaxK(dev.Properties(), int(bandedgpu.ElemSize[T]()))
	_, err = NewPlan[T](dev, 4*(maxK+1), maxK+1, spike.Options{})
	require.ErrorIs(t, err, banded.ErrShape)
	assert.Contains(t, err.Error(), fmt.Sprintf("K ≤ %d", maxK))
}

func TestSpikeGPUBlockedBreakdownsF32(t *testing.T) { testSpikeGPUBlockedBreakdowns[float32](t) }
func TestSpikeGPUBlockedBreakdownsF64(t *testing.T) { testSpikeGPUBlockedBreakdowns[float64](t) }
