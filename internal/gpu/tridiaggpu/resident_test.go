//go:build cuda

package tridiaggpu

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tridiag/partition"
)

// A resident plan runs the partition kernel's code (chunks of 16 rows) in
// a persistent grid: its results must be partition.Solve's bit for bit,
// solve after solve, with arguments that change or not, in every layout,
// and its breakdowns must be reported like a launched solve's.
func TestResident(t *testing.T) {
	t.Run("float32", testResident[float32])
	t.Run("float64", testResident[float64])
}

func testResident[T tridiag.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	ctx := t.Context()
	ca, cb, cc := T(-0.4), T(2.1), T(-0.6)
	for _, n := range []int{1, 2, 5, 31, 100, 128, 1000, 4096} {
		p := partition.DefaultChunk(n)
		for _, g := range []int{1, 3, 64} {
			for lname, l := range layouts(n, g) {
				name := fmt.Sprintf("N=%d/G=%d/%s", n, g, lname)
				shape := tridiag.Shape{N: n, G: g, Layout: l}
				gp, err := NewPlan[T](dev, shape, tridiag.Options{Algorithm: tridiag.Partition})
				require.NoError(t, err, name)
				if err := gp.SetResident(time.Second); err != nil {
					// Only launches of more than 512 threads are refused,
					// and plans whose systems span several blocks.
					require.ErrorIs(t, err, tridiag.ErrOptions, name)
					switch kp := gp.kp.(type) {
					case *partitionPlan:
						require.Greater(t, kp.cfg.Threads, residentMaxThreads, name)
					case *segmentPlan:
						assert.Contains(t, err.Error(), "segments", name)
					default:
						t.Fatalf("%s: %T refused: %v", name, kp, err)
					}
					require.NoError(t, gp.Close())
					continue
				}
				for _, constant := range []bool{false, true} {
					for rep := range 3 { // the same staging buffers: arguments unchanged after the first
						bt := newBatch[T](r, gp.spec.Shape, 4)
						x := make([]T, len(bt.d))
						if constant {
							err = gp.SolveConst(ctx, ca, cb, cc, bt.d, x)
						} else {
							err = gp.Solve(ctx, bt.a, bt.b, bt.c, bt.d, x)
						}
						require.NoError(t, err, name)
						cpu, cf := partitionCPU(bt, constant, ca, cb, cc, p)
						require.Empty(t, cf, name)
						if !sameBits(t, gp.spec.Shape, x, cpu, fmt.Sprintf("%s/const=%v/rep=%d", name, constant, rep)) {
							require.NoError(t, gp.Close())
							return
						}
					}
				}
				require.True(t, gp.res.running, name)
				require.NoError(t, gp.Close())
			}
		}
	}
}

// TestResidentDevice: resident solves on device buffers that change from
// solve to solve, x = d, a breakdown and the solve after it, the grid's
// idle stop and restart, and device calls that stop it.
func TestResidentDevice(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	ctx := t.Context()
	shape := tridiag.Shape{N: 300, G: 5}
	gp, err := NewPlan[float64](dev, shape, tridiag.Options{})
	require.NoError(t, err)
	defer gp.Close()
	// Auto's chunks: short ones for this small batch (tuning.LatencyChunk),
	// resident and launched alike.
	chunk := gp.kp.(*partitionPlan).cfg.Chunk
	require.NoError(t, gp.SetResident(time.Hour))
	upload := func(v []float64) *cuda.Buffer[float64] {
		b, err := cuda.Upload(dev, v)
		require.NoError(t, err)
		return b
	}
	solve := func(what string, x2d bool) {
		bt := newBatch[float64](r, gp.spec.Shape, 4)
		a, b, c, d := upload(bt.a), upload(bt.b), upload(bt.c), upload(bt.d)
		x := d
		if !x2d {
			x = upload(bt.d)
		}
		require.NoError(t, gp.SolveDevice(ctx, a, b, c, d, x), what)
		got := make([]float64, len(bt.d))
		require.NoError(t, x.CopyTo(got))
		cpu, cf := partitionCPU(bt, false, 0, 0, 0, chunk)
		require.Empty(t, cf)
		sameBits(t, gp.spec.Shape, got, cpu, what)
		for _, bf := range []*cuda.Buffer[float64]{a, b, c, d} {
			require.NoError(t, bf.Free()) // stops the grid
		}
		if !x2d {
			require.NoError(t, x.Free())
		}
		assert.False(t, gp.res.running, what)
	}
	solve("new buffers", false)
	solve("new buffers, x = d", true)

	// A breakdown: system 2, row 17; then a good solve.
	bt := newBatch[float64](r, gp.spec.Shape, 4)
	bt.a[2*300+17], bt.b[2*300+17] = 0, 0
	x := make([]float64, len(bt.d))
	err = gp.Solve(ctx, bt.a, bt.b, bt.c, bt.d, x)
	var be *tridiag.BatchError
	require.ErrorAs(t, err, &be)
	require.Len(t, be.Failed, 1)
	assert.Equal(t, tridiag.SystemError{System: 2, Row: 17, Err: ErrBreakdown}, be.Failed[0])
	bt = newBatch[float64](r, gp.spec.Shape, 4)
	require.NoError(t, gp.Solve(ctx, bt.a, bt.b, bt.c, bt.d, x))
	cpu, _ := partitionCPU(bt, false, 0, 0, 0, chunk)
	sameBits(t, gp.spec.Shape, x, cpu, "after the breakdown")

	// Device.Synchronize stops the grid; the next solve restarts it.
	require.True(t, gp.res.running)
	require.NoError(t, dev.Synchronize())
	require.False(t, gp.res.running)
	require.NoError(t, gp.Solve(ctx, bt.a, bt.b, bt.c, bt.d, x))
	sameBits(t, gp.spec.Shape, x, cpu, "after Synchronize")

	// Device.Do stops it too (f may wait for the device's work).
	require.True(t, gp.res.running)
	require.NoError(t, dev.Do(func() error { return nil }))
	require.False(t, gp.res.running)
	require.NoError(t, gp.Solve(ctx, bt.a, bt.b, bt.c, bt.d, x))
	sameBits(t, gp.spec.Shape, x, cpu, "after Do")

	// The idle stop.
	require.NoError(t, gp.SetResident(50*time.Microsecond))
	require.NoError(t, gp.Solve(ctx, bt.a, bt.b, bt.c, bt.d, x))
	require.Eventually(t, func() bool {
		gp.res.mu.Lock()
		defer gp.res.mu.Unlock()
		return !gp.res.running
	}, 2*time.Second, time.Millisecond)
	require.NoError(t, gp.Solve(ctx, bt.a, bt.b, bt.c, bt.d, x))
	sameBits(t, gp.spec.Shape, x, cpu, "after the idle stop")

	// Back to launches.
	require.NoError(t, gp.SetResident(0))
	require.Nil(t, gp.res)
	require.NoError(t, gp.Solve(ctx, bt.a, bt.b, bt.c, bt.d, x))
	sameBits(t, gp.spec.Shape, x, cpu, "launched again")

	// Plans of other kernels cannot be resident.
	tp, err := NewPlan[float64](dev, shape, tridiag.Options{Algorithm: tridiag.Thomas})
	require.NoError(t, err)
	defer tp.Close()
	require.ErrorIs(t, tp.SetResident(time.Second), tridiag.ErrOptions)
}

// A grid that cannot be on the device at once is refused (it would hang:
// block 0 relays the solves to blocks that are never scheduled).
func TestResidentTooManyBlocks(t *testing.T) {
	gp, err := NewPlan[float32](dev, tridiag.Shape{N: 64, G: 1 << 21}, tridiag.Options{})
	require.NoError(t, err)
	defer gp.Close()
	err = gp.SetResident(time.Second)
	require.ErrorIs(t, err, tridiag.ErrOptions)
	assert.Contains(t, err.Error(), "all its blocks on the device at once")
	assert.Nil(t, gp.res)
	small, err := NewPlan[float32](dev, tridiag.Shape{N: 64, G: 64}, tridiag.Options{})
	require.NoError(t, err)
	defer small.Close()
	require.NoError(t, small.SetResident(time.Second))
	require.NoError(t, small.SetResident(0))
}
