//go:build cuda

package tridiaggpu

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tuning"
)

// Auto solves small batches (tuning.LatencyChunk) with short chunks, one
// block per system: bit for bit partition.Solve with the rule's chunk, in
// every layout, general and constant solves, two solves on one plan, and
// breakdowns reported at the twin's row; without the rule Auto keeps its
// plan of chunks of 16.
func TestAutoSmallBatches(t *testing.T) {
	t.Run("float32", testAutoSmallBatches[float32])
	t.Run("float64", testAutoSmallBatches[float64])
}

func testAutoSmallBatches[T tridiag.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(95, 96))
	elem := int(elemSize[T]())
	for _, n := range []int{1, 3, 100, 128, 513, 1000, 2048, 3001, 4096} {
		for _, g := range []int{1, 7, 64, 300} {
			for lname, l := range layouts(n, g) {
				// Interleaved batches of 129 … 1023 rows and other
				// systems-first layouts keep lanes, segments or gathering.
				want := tuning.LatencyChunk(dev.Properties(), n, elem, g, sysFirst(l), l.BatchStride == 1)
				if sysFirst(l) && (l.BatchStride != 1 || n > 128 && n < 1024) {
					require.Zero(t, want, "%s/N=%d/G=%d", lname, n, g)
				}
				shape := tridiag.Shape{N: n, G: g, Layout: l}
				bt := newBatch[T](r, shape, 4)
				if g == 7 && n > 4 {
					bt.zero(3, n/2, false) // a breakdown in system 3
				}
				name := fmt.Sprintf("N=%d/G=%d/%s", n, g, lname)
				for _, constant := range []bool{false, true} {
					kp, _ := segmentCase(t, bt, tridiag.Options{}, constant, 2, fmt.Sprintf("%s/const=%v", name, constant))
					pp, ok := kp.(*partitionPlan)
					if want == 0 {
						assert.False(t, ok && pp.latency, "%s: %T", name, kp)
						continue
					}
					require.True(t, ok, "%s: Auto took %T", name, kp)
					assert.True(t, pp.latency, name)
					assert.Equal(t, want, pp.cfg.Chunk, name)
				}
			}
		}
	}
	// Without the rule: chunks of 16 (or segments).
	bt := newBatch[T](r, tridiag.Shape{N: 128, G: 8}, 4)
	kp, failed := segmentCaseConfig(t, config{noLatencyChunks: true}, bt, tridiag.Options{}, false, 1, "N=128/G=8/no rule")
	assert.Empty(t, failed)
	pp, ok := kp.(*partitionPlan)
	require.True(t, ok, "%T", kp)
	assert.False(t, pp.latency)
	assert.Equal(t, 16, pp.cfg.Chunk)
}

// Options.SegmentRows keeps the plan it asks for; a resident plan of a
// small batch runs its own chunks (partition_resident_p4/p8): the same
// bits resident and launched.
func TestAutoSmallBatchesOptions(t *testing.T) {
	r := rand.New(rand.NewPCG(97, 98))
	bt := newBatch[float32](r, tridiag.Shape{N: 1000, G: 4}, 4)
	kp, failed := segmentCase(t, bt, tridiag.Options{SegmentRows: 1024}, false, 1, "SegmentRows")
	assert.Empty(t, failed)
	pp, ok := kp.(*partitionPlan)
	require.True(t, ok, "%T", kp)
	assert.False(t, pp.latency)
	assert.Equal(t, 16, pp.cfg.Chunk)

	t.Run("resident/float32", func(t *testing.T) {
		testAutoSmallResident[float32](t, r, []sizeCase{{128, 8}, {1000, 4}, {2048, 1}})
	})
	t.Run("resident/float64", func(t *testing.T) {
		testAutoSmallResident[float64](t, r, []sizeCase{{128, 8}, {1000, 4}, {3000, 2}, {4096, 1}})
	})
	// Batches of more systems than half the SMs and rows than 1024 an SM
	// (tuning.LatencyConstChunk16): the launched plan runs short chunks
	// for general solves and chunks of 16 for constant ones (the twin of
	// each); made resident, it takes chunks of 16 for both, launched
	// solves too. FP32 1024×512: for the constant solves alone; FP64
	// 2048×300: chunks of 8 (256 threads a block, two blocks an SM on an
	// H100) would not all fit at once either.
	t.Run("resident/chunks16", func(t *testing.T) {
		testAutoResidentChunks16[float32](t, r, tridiag.Shape{N: 1024, G: 512}, 8)
		testAutoResidentChunks16[float64](t, r, tridiag.Shape{N: 2048, G: 300}, 8)
	})
}

func testAutoResidentChunks16[T tridiag.Float](t *testing.T, r *rand.Rand, shape tridiag.Shape, chunk int) {
	name := fmt.Sprintf("N=%d/G=%d", shape.N, shape.G)
	gp, err := NewPlan[T](dev, shape, tridiag.Options{})
	require.NoError(t, err, name)
	defer gp.Close()
	pp := gp.kp.(*partitionPlan)
	require.True(t, pp.latency, name)
	require.Equal(t, chunk, pp.cfg.Chunk, name)
	require.NotNil(t, pp.chunk16, name)
	bt := newBatch[T](r, shape, 4)
	ca, cb, cc := T(-0.4), T(2.1), T(-0.6)
	x := make([]T, shape.N*shape.G)
	check := func(what string, p int) {
		cpu, cf := partitionCPU(bt, false, 0, 0, 0, p)
		require.Empty(t, cf, name)
		require.NoError(t, gp.Solve(t.Context(), bt.a, bt.b, bt.c, bt.d, x), name)
		sameBits(t, shape, x, cpu, name+"/"+what)
		cpu, _ = partitionCPU(bt, true, ca, cb, cc, 16)
		require.NoError(t, gp.SolveConst(t.Context(), ca, cb, cc, bt.d, x), name)
		sameBits(t, shape, x, cpu, name+"/"+what+"/const")
	}
	check("launched", chunk)
	require.NoError(t, gp.SetResident(time.Second), name)
	require.NotNil(t, gp.res, name)
	assert.Contains(t, gp.Describe(), "chunks of 16", name)
	check("resident", 16)
	require.NoError(t, gp.SetResident(0), name)
	check("launched after", 16)
}

func testAutoSmallResident[T tridiag.Float](t *testing.T, r *rand.Rand, cases []sizeCase) {
	for _, c := range cases {
		shape := tridiag.Shape{N: c.n, G: c.g}
		name := fmt.Sprintf("N=%d/G=%d", c.n, c.g)
		p := tuning.LatencyChunk(dev.Properties(), c.n, int(elemSize[T]()), c.g, false, false)
		require.NotZero(t, p, name)
		gp, err := NewPlan[T](dev, shape, tridiag.Options{})
		require.NoError(t, err, name)
		require.True(t, gp.kp.(*partitionPlan).latency, name)
		assert.Contains(t, gp.Describe(), fmt.Sprintf("chunks of %d", p), name)
		require.NoError(t, gp.SetResident(time.Second), name)
		require.NotNil(t, gp.res, name)
		x := make([]T, c.n*c.g)
		for k := range 2 {
			bt := newBatch[T](r, shape, 4)
			if k == 1 {
				// A breakdown in the last system (a chunk's second row:
				// a zero pivot for every chunk size).
				bt.zero(c.g-1, c.n/2+1, false)
			}
			cpu, cf := partitionCPU(bt, false, 0, 0, 0, p)
			err := gp.Solve(t.Context(), bt.a, bt.b, bt.c, bt.d, x)
			if k == 1 {
				require.Equal(t, map[int]int{c.g - 1: c.n/2 + 1}, cf, name)
				var be *tridiag.BatchError
				require.ErrorAs(t, err, &be, name)
				require.Len(t, be.Failed, 1, name)
				assert.Equal(t, cf, map[int]int{be.Failed[0].System: be.Failed[0].Row}, name)
			} else {
				require.NoError(t, err, name)
				assert.Empty(t, cf, name)
			}
			sameBits(t, shape, x, cpu, fmt.Sprintf("%s/resident %d", name, k))
			require.True(t, gp.res.running, name)
		}
		require.NoError(t, gp.SetResident(0), name)
		bt := newBatch[T](r, shape, 4)
		cpu, _ := partitionCPU(bt, false, 0, 0, 0, p)
		require.NoError(t, gp.Solve(t.Context(), bt.a, bt.b, bt.c, bt.d, x), name)
		sameBits(t, shape, x, cpu, name+"/launched after resident")
		require.NoError(t, gp.Close())
	}
}

// TestHostPlanDescribe checks that a tridiag.Plan on the GPU says what
// Auto chose, as the Plan of the same shape does.
func TestHostPlanDescribe(t *testing.T) {
	for _, shape := range []tridiag.Shape{{N: 256, G: 64}, {N: 1 << 16, G: 4}, {N: 512, G: 512, Layout: tridiag.Interleaved(512)}} {
		p, err := tridiag.NewPlan[float32](dev, shape, tridiag.Options{})
		require.NoError(t, err)
		cp, err := NewPlan[float32](dev, shape, tridiag.Options{})
		require.NoError(t, err)
		assert.Equal(t, cp.Describe(), p.Describe(), "N=%d G=%d", shape.N, shape.G)
		assert.NotEqual(t, tridiag.Auto, cp.Algorithm())
		assert.NotContains(t, p.Describe(), "auto")
		require.NoError(t, p.Close())
		require.NoError(t, cp.Close())
	}
}
