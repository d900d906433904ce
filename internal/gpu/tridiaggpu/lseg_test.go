//go:build cuda

package tridiaggpu

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tuning"
)

func TestLanesSegments(t *testing.T) {
	t.Run("float32", testLanesSegments[float32])
	t.Run("float64", testLanesSegments[float64])
}

// testLanesSegments: interleaved batches beyond the lanes kernel take the
// lanes segment kernel (lanesSegPlan), in one pass and in three, with the
// segment size chosen and asked for, groups the batch fills in part, N
// not a multiple of the segment or the chunk (a one-row last chunk):
// every solve, general and constant, Auto (unless it gives a small batch
// short chunks) and tridiag.Partition, is bit
// for bit partition.SolveSegmented with the plan's segments, with the same
// failed systems and rows (a Stage 1 pivot, a segment's first row, the
// last row), and within 1e4 ε of the pivoting reference.
func testLanesSegments[T tridiag.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(93, 94))
	for _, c := range []struct {
		n, g, rows int
		onePass    bool
	}{
		{tuning.LanesSegmentMinN, 37, 0, true},
		{2049, 16, 0, true},
		{4*512 + 1, 9, 0, true}, // N ≡ 1 mod 512: segments of 448
		{5000, 21, 256, true},
		{32*512 - 16 + 1, 17, 0, true}, // Q = 32, a one-row last chunk
		{33 * 512, 5, 0, false},        // segments of 128 rows
		{70001, 3, 0, false},
	} {
		shape := tridiag.Shape{N: c.n, G: c.g, Layout: tridiag.Interleaved(c.g)}.Normalize()
		name := fmt.Sprintf("N=%d/G=%d/rows=%d", c.n, c.g, c.rows)
		bt := newBatch[T](r, shape, 4)
		latency := tuning.LatencyChunk(dev.Properties(), c.n, int(elemSize[T]()), c.g, true, true)
		for _, opts := range []tridiag.Options{{SegmentRows: c.rows}, {Algorithm: tridiag.Partition, SegmentRows: c.rows}} {
			for _, constant := range []bool{false, true} {
				what := fmt.Sprintf("%s/%s/const=%v", name, opts.Algorithm, constant)
				kp, failed := segmentCase(t, bt, opts, constant, 3, what)
				if opts.Algorithm == tridiag.Auto && latency > 0 && c.rows == 0 {
					// A small batch: Auto's short chunks (TestAutoSmallBatches).
					pp, ok := kp.(*partitionPlan)
					require.True(t, ok && pp.latency, "%s: %T", what, kp)
					assert.Empty(t, failed, what)
					continue
				}
				require.IsType(t, &lanesSegPlan{}, kp, what)
				lp := kp.(*lanesSegPlan)
				assert.Equal(t, c.onePass, lp.cfg.OnePass, what)
				if c.rows > 0 {
					assert.Equal(t, c.rows, lp.cfg.Rows, what)
				}
				assert.Empty(t, failed, what)
			}
		}
		// Against the pivoting reference.
		gp, err := NewPlan[T](dev, shape, tridiag.Options{Algorithm: tridiag.Partition, SegmentRows: c.rows})
		require.NoError(t, err, name)
		t.Logf("%s: %s", name, gp.Describe())
		x := make([]T, len(bt.d))
		require.NoError(t, gp.Solve(context.Background(), bt.a, bt.b, bt.c, bt.d, x), name)
		require.IsType(t, &lanesSegPlan{}, gp.kp, name)
		m := gp.kp.(*lanesSegPlan).cfg.Rows
		require.NoError(t, gp.Close())
		twin, _ := cpuSystems(bt, false, 0, 0, 0, planTwin[T](t, gp.kp, false))
		ref, err := cpuSolve(t, bt, tridiag.Options{Algorithm: tridiag.GTSV}, false, 0, 0, 0)
		require.NoError(t, err, name)
		compare(t, shape, x, twin, ref, 0, 1e4*eps[T](), name)
		// Breakdowns: reported at the twin's rows, the others untouched.
		bt.zero(1, m+77, false) // Stage 1, inside the second segment
		bt.zero(2, m, true)     // a segment's first row
		bt.zero(c.g-1, c.n-1, false)
		_, failed := segmentCase(t, bt, tridiag.Options{SegmentRows: c.rows}, false, 2, name+"/breakdown")
		for _, sys := range []int{1, 2, c.g - 1} {
			assert.Contains(t, failed, sys, name)
		}
		assert.NotContains(t, failed, 0, name)
	}
}

// TestLanesSegmentsAgainstGathered: the lanes segment plan and the
// gathering plan of the same interleaved batch agree with the pivoting
// reference (their bits differ: segments of other sizes), and SetResident
// on a batch the lanes segments take solves it one block a system.
func TestLanesSegmentsAgainstGathered(t *testing.T) {
	r := rand.New(rand.NewPCG(95, 96))
	n, g := 3000, 40
	shape := tridiag.Shape{N: n, G: g, Layout: tridiag.Interleaved(g)}.Normalize()
	bt := newBatch[float32](r, shape, 4)
	solve := func(lanes bool) []float32 {
		gp, err := newPlan[float32](dev, shape, tridiag.Options{}, config{noLanesSegments: !lanes})
		require.NoError(t, err)
		defer gp.Close()
		_, isLanes := gp.kp.(*lanesSegPlan)
		require.Equal(t, lanes, isLanes, "%T", gp.kp)
		x := make([]float32, len(bt.d))
		require.NoError(t, gp.Solve(context.Background(), bt.a, bt.b, bt.c, bt.d, x))
		return x
	}
	ref, err := cpuSolve(t, bt, tridiag.Options{Algorithm: tridiag.GTSV}, false, 0, 0, 0)
	require.NoError(t, err)
	xl, xg := solve(true), solve(false)
	compare(t, shape, xl, ref, ref, 1e4*eps[float32](), 1e4*eps[float32](), "lanes segments")
	compare(t, shape, xg, ref, ref, 1e4*eps[float32](), 1e4*eps[float32](), "gathered")

	gp, err := NewPlan[float32](dev, shape, tridiag.Options{})
	require.NoError(t, err)
	defer gp.Close()
	// Its constant solves: gathered, the workspace without copies of a, b, c.
	lp := gp.kp.(*lanesSegPlan)
	tp, ok := lp.constPlan.(*transposePlan)
	require.True(t, ok, "%T", lp.constPlan)
	assert.True(t, tp.constOnly)
	full, err := newTransposePlan(gdev, tridiag.Spec{Shape: shape}, false)
	require.NoError(t, err)
	assert.Equal(t, full.workBytes()-3*int64(n*g*4), tp.workBytes())
	x0 := make([]float32, len(bt.d))
	require.NoError(t, gp.SolveConst(context.Background(), -1, 2.5, -1, bt.d, x0))
	require.NoError(t, gp.SetResident(time.Second))
	x := make([]float32, len(bt.d))
	require.NoError(t, gp.Solve(context.Background(), bt.a, bt.b, bt.c, bt.d, x))
	compare(t, shape, x, ref, ref, 1e4*eps[float32](), 1e4*eps[float32](), "resident")
}
