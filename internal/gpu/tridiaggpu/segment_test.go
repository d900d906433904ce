//go:build cuda

package tridiaggpu

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gorgonia.org/cu"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tridiag/partition"
	"github.com/bandsolve/bandsolve/tuning"
)

// The segment kernel does partition.SolveSegmented's operations in the
// same order: the results agree bit for bit with the twin built from the
// plan's configuration (segments, one pass or the nested plan), and a
// breakdown is reported at the twin's row.

// planTwin returns the CPU twin of a partition-family kernel plan, for
// its constant solves when constant.
func planTwin[T tridiag.Float](t *testing.T, kp kernelPlan, constant bool) func(a, b, c, d, x []T) error {
	switch p := kp.(type) {
	case *streamPlan:
		if constant {
			return planTwin[T](t, p.other, true)
		}
		return partitionTwin[T](16, nil)
	case *partitionPlan:
		if constant && p.chunk16 != nil {
			return partitionTwin[T](16, nil)
		}
		return partitionTwin[T](p.cfg.Chunk, nil)
	case *transposePlan:
		return planTwin[T](t, p.inner, constant)
	case *lanesStreamPlan:
		if constant {
			return planTwin[T](t, p.lanes, true)
		}
		return partitionTwin[T](16, nil)
	case *lanesSegPlan:
		if constant && p.constPlan != nil {
			return planTwin[T](t, p.constPlan, true)
		}
		return segmentedTwin[T](t, p.cfg.OnePass, p.nested, p.cfg.Rows)
	case *segmentPlan:
		if constant && p.constWhole != nil {
			return planTwin[T](t, p.constWhole, true)
		}
		return segmentedTwin[T](t, p.cfg.OnePass, p.nested, p.cfg.Rows)
	}
	t.Fatalf("no twin for %T", kp)
	return nil
}

// segmentedTwin is the twin of a segmented plan with segments of m rows:
// SolveSegmented with ReducedCR in one pass, else with the nested plan's
// twin.
func segmentedTwin[T tridiag.Float](t *testing.T, onePass bool, nested kernelPlan, m int) func(a, b, c, d, x []T) error {
	red := partition.ReducedCR[T]
	if !onePass {
		nt := planTwin[T](t, nested, false)
		red = func(a, b, c, d, x []T) error { return nt(a, b, c, d, x) }
	}
	return func(a, b, c, d, x []T) error {
		return partition.SolveSegmented(a, b, c, d, x, tuning.SegmentChunk, m, nil, red)
	}
}

// segmentCase solves bt with the plan of opts (solves times on the same
// plan: the kernel's control words carry over) and compares every solve
// with the plan's twin bit for bit, with the failed systems.
func segmentCase[T tridiag.Float](t *testing.T, bt batch[T], opts tridiag.Options, constant bool, solves int, name string) (kp kernelPlan, failed map[int]int) {
	t.Helper()
	return segmentCaseConfig(t, config{}, bt, opts, constant, solves, name)
}

// segmentCaseConfig is segmentCase with the plan's switches cfg.
func segmentCaseConfig[T tridiag.Float](t *testing.T, cfg config, bt batch[T], opts tridiag.Options, constant bool, solves int, name string) (kp kernelPlan, failed map[int]int) {
	t.Helper()
	gp, err := newPlan[T](dev, bt.shape, opts, cfg)
	require.NoError(t, err, name)
	defer gp.Close()
	twin := planTwin[T](t, gp.kp, constant)
	ca, cb, cc := T(-0.4), T(2.1), T(-0.6)
	cpu, cf := cpuSystems(bt, constant, ca, cb, cc, twin)
	x := make([]T, len(bt.d))
	for k := range solves {
		for i := range x {
			x[i] = T(math.NaN())
		}
		if constant {
			err = gp.SolveConst(context.Background(), ca, cb, cc, bt.d, x)
		} else {
			err = gp.Solve(context.Background(), bt.a, bt.b, bt.c, bt.d, x)
		}
		gf := map[int]int{}
		if err != nil {
			var be *tridiag.BatchError
			require.ErrorAs(t, err, &be, name)
			for _, f := range be.Failed {
				gf[f.System] = f.Row
			}
		}
		what := fmt.Sprintf("%s/solve %d", name, k)
		assert.Equal(t, cf, gf, what)
		if !sameBits(t, bt.shape, x, cpu, what) {
			break
		}
	}
	return gp.kp, cf
}

func TestSegmentBitExact(t *testing.T) {
	t.Run("float32", testSegmentBitExact[float32])
	t.Run("float64", testSegmentBitExact[float64])
}

// testSegmentBitExact: segment sizes asked for and chosen, one pass and
// three, last segments and chunks short (n ≡ 1 mod 16), layouts, constant
// coefficients, several solves on one plan.
func testSegmentBitExact[T tridiag.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for _, c := range []struct {
		n, g, rows int
		onePass    bool
	}{
		{3000, 7, 1024, true}, // Q = 3, a short last segment
		{4096, 3, 1024, true}, // Q = 4 exactly
		{4113, 4, 1024, true}, // a last segment of 17 rows: a last chunk of one row
		{5000, 2, 1536, true}, // M not a power of two
		{20000, 3, 0, true},   // the tuning's choice
		{65536, 2, 0, true},
		{131072, 1, 4096, true},   // 32 segments: the most in one pass
		{131072, 1, 2048, false},  // 64: three passes, the reduced systems in one block
		{200001, 2, 1024, false},  // 196 segments: three passes
		{1 << 20, 1, 1024, false}, // 1024 segments
	} {
		for lname, l := range layouts(c.n, c.g) {
			if lname == "interleaved" && c.n*c.g > 1<<15 {
				continue // a segment per block does not coalesce there: small cases only
			}
			shape := tridiag.Shape{N: c.n, G: c.g, Layout: l}
			bt := newBatch[T](r, shape, 4)
			opts := tridiag.Options{Algorithm: tridiag.Partition, SegmentRows: c.rows}
			for _, constant := range []bool{false, true} {
				name := fmt.Sprintf("N=%d/G=%d/M=%d/%s/const=%v", c.n, c.g, c.rows, lname, constant)
				kp, failed := segmentCase(t, bt, opts, constant, 3, name)
				sp, ok := kp.(*segmentPlan)
				require.True(t, ok, "%s: %T", name, kp)
				assert.Equal(t, c.onePass, sp.cfg.OnePass, name)
				if c.rows > 0 {
					assert.Equal(t, c.rows, sp.cfg.Rows, name)
				}
				assert.Empty(t, failed, name)
				t.Logf("%s: M=%d Q=%d one pass %v", name, sp.cfg.Rows, sp.cfg.Segments, sp.cfg.OnePass)
			}
		}
	}
}

// TestSegmentNested: a system long enough that its reduced system is cut
// into segments too (three passes around a one-pass nested plan).
func TestSegmentNested(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	shape := tridiag.Shape{N: 1 << 24, G: 1}
	bt := newBatch[float32](r, shape, 4)
	kp, failed := segmentCase(t, bt, tridiag.Options{Algorithm: tridiag.Partition}, false, 2, "N=2^24")
	assert.Empty(t, failed)
	sp := kp.(*segmentPlan)
	require.False(t, sp.cfg.OnePass)
	require.IsType(t, &segmentPlan{}, sp.nested, "the reduced system of %d rows", 2*sp.cfg.Segments)
	assert.True(t, sp.nested.(*segmentPlan).cfg.OnePass)
}

// TestSegmentLargeBatch: many more blocks than the device holds at once
// (the one-pass kernel's blocks wait for one another within a system).
func TestSegmentLargeBatch(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 36))
	shape := tridiag.Shape{N: 4096, G: 4096}
	bt := newBatch[float64](r, shape, 4)
	// Auto takes the streaming kernel here (TestPartitionStreamAuto);
	// without it, segments.
	kp, failed := segmentCaseConfig(t, config{noStreamKernel: true}, bt, tridiag.Options{}, false, 2, "FP64 4096×4096 auto")
	assert.Empty(t, failed)
	assert.IsType(t, &segmentPlan{}, kp, "FP64 N = 4096 holds one block per SM whole: segments")
}

func TestSegmentBreakdown(t *testing.T) {
	t.Run("float32", testSegmentBreakdown[float32])
	t.Run("float64", testSegmentBreakdown[float64])
}

// testSegmentBreakdown plants zero pivots in some systems (chunk pivots,
// a segment's PCR, the reduced system of the segments, in one pass and in
// three) and an overflow; exactly those fail, at the twin's rows, with NaN
// in their rows; the others are bit for bit the twin's.
func testSegmentBreakdown[T tridiag.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(37, 38))
	for _, c := range []struct{ n, rows int }{{5000, 1024}, {8192, 1024}, {70001, 1024}} {
		g := 10
		shape := tridiag.Shape{N: c.n, G: g}.Normalize()
		bt := newBatch[T](r, shape, 4)
		m := c.rows
		bt.zero(1, m+77, false)           // Stage 1 in segment 1
		bt.zero(2, 2*m+40, false)         // two segments: the smaller row wins
		bt.zero(2, m+300, false)          //
		bt.zero(3, 2*m+16*5, true)        // a chunk's first row: segment 2's PCR …
		bt.zero(3, 3*m+5, false)          // … loses to Stage 1 in segment 3
		bt.zero(4, 3*m, true)             // a segment's first row: the reduced system of the segments
		bt.zero(5, 0, true)               // the very first row
		bt.zero(6, c.n-1, false)          // the last row
		bt.zero(7, m-1, false)            // a segment's last row
		k := shape.Layout.Index(c.n/2, 8) // system 8 overflows: x = d/b in a decoupled row
		big, tiny := math.MaxFloat32, 1e-30
		if isF64[T]() {
			big, tiny = math.MaxFloat64, 1e-300
		}
		bt.a[k], bt.b[k], bt.c[k], bt.d[k] = 0, T(tiny), 0, T(big)
		name := fmt.Sprintf("N=%d/M=%d", c.n, m)
		kp, failed := segmentCase(t, bt, tridiag.Options{Algorithm: tridiag.Partition, SegmentRows: m}, false, 2, name)
		for _, sys := range []int{1, 2, 3, 4, 5, 6, 7, 8} {
			assert.Contains(t, failed, sys, name)
		}
		assert.NotContains(t, failed, 0, name)
		assert.NotContains(t, failed, 9, name)
		t.Logf("%s (%s): failed %v", name, kp.(*segmentPlan).describe(), failed)
	}
}

// TestSegmentAuto: Auto takes the partition method for long systems
// stored rows first: segments, the streaming kernel where N fits it and
// tuning.PreferStream says so, else one block per system where that keeps
// two blocks on an SM.
func TestSegmentAuto(t *testing.T) {
	for _, c := range []struct {
		n, g int
		f64  bool
		kind string
	}{{1 << 20, 1, false, "seg"}, {65536, 256, true, "seg"}, {16384, 1024, false, "seg"}, {8192, 2048, false, "stream"}, {8192, 2048, true, "seg"},
		{4096, 4096, true, "stream"}, {4096, 4096, false, "stream"}, {4096, 64, false, "whole"}, {3072, 5000, true, "whole"},
		{1024, 16384, true, "whole"}} {
		spec := tridiag.Spec{Shape: tridiag.Shape{N: c.n, G: c.g}.Normalize()}
		alg, kp, err := buildKernelPlan(gdev, spec, c.f64)
		require.NoError(t, err)
		assert.Equal(t, tridiag.Partition, alg, "%+v", c)
		kind := "whole"
		switch kp.(type) {
		case *segmentPlan:
			kind = "seg"
		case *streamPlan:
			kind = "stream"
		}
		assert.Equal(t, c.kind, kind, "%+v", c)
	}
	// FP64 N = 4096: the streaming kernel, whose constant solves go to
	// segments, which run them one block per system (the constant kernel
	// keeps two blocks per SM), bit for bit partition.Solve on constant
	// arrays.
	r := rand.New(rand.NewPCG(43, 44))
	shape := tridiag.Shape{N: 4096, G: 300}.Normalize()
	bt := newBatch[float64](r, shape, 4)
	gp, err := NewPlan[float64](dev, shape, tridiag.Options{})
	require.NoError(t, err)
	defer gp.Close()
	st, ok := gp.kp.(*streamPlan)
	require.True(t, ok, "%T", gp.kp)
	sp, ok := st.other.(*segmentPlan)
	require.True(t, ok)
	require.NotNil(t, sp.constWhole, gp.Describe())
	x := make([]float64, len(bt.d))
	require.NoError(t, gp.SolveConst(t.Context(), -0.4, 2.1, -0.6, bt.d, x))
	cpu, cf := partitionCPU(bt, true, -0.4, 2.1, -0.6, 16)
	require.Empty(t, cf)
	sameBits(t, shape, x, cpu, "FP64 N=4096 constant")
	// Asked-for sizes a GPU cannot take.
	spec := tridiag.Spec{Shape: tridiag.Shape{N: 10000, G: 1}.Normalize(), Options: tridiag.Options{Algorithm: tridiag.Partition, SegmentRows: 1040}}
	_, err = newPartitionPlan(gdev, spec, false)
	require.ErrorIs(t, err, tridiag.ErrOptions)
}

func TestSegmentCluster(t *testing.T) {
	if dev.Properties().Major < 9 {
		t.Skip("thread-block clusters need compute capability 9.0")
	}
	t.Run("float32", testSegmentCluster[float32])
	t.Run("float64", testSegmentCluster[float64])
}

// testSegmentCluster: every cluster size, layouts, constant coefficients,
// several solves, bit for bit the twin's, and the same bits as the
// global-memory kernel; the driver sees each kernel's cluster width.
func testSegmentCluster[T tridiag.Float](t *testing.T) {
	sizes, regs := func() ([]int, int) {
		var s []int
		var r int
		require.NoError(t, dev.Enqueue(func() error { s, r = gdev.clusterSizes(isF64[T]()); return nil }))
		return s, r
	}()
	t.Logf("cluster sizes %v, %d registers", sizes, regs)
	require.Subset(t, sizes, []int{2, 4, 8}, "the portable sizes")
	for _, q := range sizes {
		k, err := clusterKernel(q, isF64[T]())
		require.NoError(t, err)
		var w int
		require.NoError(t, dev.Enqueue(func() error {
			var err error
			w, err = dev.KernelAttr(k.Kernel().Name(), cu.FunctionAttribute(funcAttrRequiredClusterWidth))
			return err
		}))
		assert.Equal(t, q, w, "REQUIRED_CLUSTER_WIDTH of %s", k.Kernel())
	}
	r := rand.New(rand.NewPCG(39, 40))
	clustered := false
	defer func() { assert.True(t, clustered, "no case ran on clusters") }()
	for _, c := range []struct{ n, g, rows, q int }{
		{2048, 9, 1024, 2}, {3000, 5, 2048, 2}, {4081, 3, 1024, 4}, {8192, 4, 1024, 8}, {16384, 3, 2048, 8},
		{32768, 2, 4096, 8}, {20000, 3, 2560, 8},
	} {
		if !slices.Contains(sizes, c.q) {
			t.Logf("N=%d: no cluster of %d on this device", c.n, c.q)
			continue
		}
		for lname, l := range layouts(c.n, c.g) {
			shape := tridiag.Shape{N: c.n, G: c.g, Layout: l}
			bt := newBatch[T](r, shape, 4)
			opts := tridiag.Options{Algorithm: tridiag.Partition, SegmentRows: c.rows}
			for _, constant := range []bool{false, true} {
				name := fmt.Sprintf("N=%d/G=%d/M=%d/%s/const=%v", c.n, c.g, c.rows, lname, constant)
				kp, failed := segmentCase(t, bt, opts, constant, 3, name)
				sp := kp.(*segmentPlan)
				// A cluster needs two blocks of its segments per SM
				// (FP64 segments of 4096 rows take one).
				assert.Equal(t, sp.cfg.BlocksPerSM >= 2, sp.cfg.Cluster, "%s: %s", name, sp.describe())
				clustered = clustered || sp.cfg.Cluster
				assert.Equal(t, c.q, sp.cfg.Segments, name)
				assert.Empty(t, failed, name)
			}
			// The global-memory kernel gives the same bits.
			x1, f1 := gpuOpts(t, bt, opts, false, 0, 0, 0, nil)
			x2, f2 := gpuConfig(t, config{noClusters: true}, bt, opts, false, 0, 0, 0, nil)
			assert.Equal(t, f1, f2)
			sameBits(t, shape, x1, x2, fmt.Sprintf("N=%d/%s: cluster vs global", c.n, lname))
		}
	}
}

// funcAttrRequiredClusterWidth is CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH
// (CUDA 12's cuda.h).
const funcAttrRequiredClusterWidth = 11

// TestSegmentNonFiniteEntry: an infinite diagonal entry is a Stage 1
// breakdown (1/Inf = 0 keeps the segment's own values finite), yet every
// row of the system must be NaN: with clusters and with the global-memory
// kernel (whose last block once cleared the key before every thread had
// read it; found by internal/partemu).
func TestSegmentNonFiniteEntry(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	shape := tridiag.Shape{N: 3372, G: 3}.Normalize()
	bt := newBatch[float32](r, shape, 4)
	bt.b[shape.Layout.Index(1101, 1)] = float32(math.Inf(1))
	opts := tridiag.Options{Algorithm: tridiag.Partition, SegmentRows: 1024, SkipFiniteCheck: true}
	for _, clusters := range []bool{true, false} {
		x, failed := gpuConfig(t, config{noClusters: !clusters}, bt, opts, false, 0, 0, 0, nil)
		assert.Equal(t, map[int]int{1: 1101}, failed, "clusters %v", clusters)
		for i := 0; i < shape.N; i++ {
			require.True(t, math.IsNaN(float64(x[shape.Layout.Index(i, 1)])), "clusters %v: row %d of the failed system", clusters, i)
		}
	}
}

// weakBatch is newBatch with barely dominant rows: a, c from U(−1, −0.1),
// b = 1.001·(|a| + |c|), d from U(−1, 1). The cyclic reduction's upper
// levels still change the result's bits there (with b ≈ 4 the reduced
// rows' couplings fall below the rounding of d after a few levels, and an
// error in those levels would not show).
func weakBatch[T tridiag.Float](r *rand.Rand, shape tridiag.Shape) batch[T] {
	bt := newBatch[T](r, shape, 4)
	sh := bt.shape
	for g := 0; g < sh.G; g++ {
		for i := 0; i < sh.N; i++ {
			k := sh.Layout.Index(i, g)
			a, c := T(-0.1-0.9*r.Float64()), T(-0.1-0.9*r.Float64())
			bt.a[k], bt.c[k], bt.b[k] = a, c, T(1.001)*(-a-c)
		}
	}
	return bt
}

// TestAutoWeaklyDominant: Auto's plans of contiguous batches — one block a
// system, the streaming kernel, segments, a single system in three passes
// — on barely dominant systems, twice on one plan, bit for bit their twins,
// whose backward error is a few unit roundoffs (package partition,
// TestBackwardStable).
func TestAutoWeaklyDominant(t *testing.T) {
	t.Run("float32", testAutoWeaklyDominant[float32])
	t.Run("float64", testAutoWeaklyDominant[float64])
}

func testAutoWeaklyDominant[T tridiag.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(91, 92))
	for _, c := range []sizeCase{{1024, 64}, {4096, 600}, {8192, 300}, {16384, 8}, {1 << 20, 1}} {
		bt := weakBatch[T](r, tridiag.Shape{N: c.n, G: c.g})
		kp, failed := segmentCase(t, bt, tridiag.Options{}, false, 2, fmt.Sprintf("N=%d G=%d", c.n, c.g))
		assert.Empty(t, failed, "N=%d G=%d", c.n, c.g)
		t.Logf("N=%d G=%d: %T", c.n, c.g, kp)
	}
}
