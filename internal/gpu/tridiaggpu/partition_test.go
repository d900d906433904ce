//go:build cuda

package tridiaggpu

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tridiag/partition"
	"github.com/bandsolve/bandsolve/tuning"
)

// The partition kernels do partition.Solve's operations in the same order,
// so the results agree bit for bit, whatever the launch (systems per
// block, shuffles or shared memory), and a breakdown is reported at the
// twin's row. The GPU also reports a non-finite solution (at its smallest
// row), which partition.Solve leaves to its caller: partitionCPU adds that
// check.

// partitionCPU solves every system of bt with partition.Solve and chunks
// of p rows, as cpuSystems does, and fails a system whose x is not finite
// at its first non-finite row.
func partitionCPU[T tridiag.Float](bt batch[T], constant bool, ca, cb, cc T, p int) ([]T, map[int]int) {
	return cpuSystems(bt, constant, ca, cb, cc, partitionTwin(p, partition.NewWorkspace[T](bt.shape.N)))
}

// partitionTwin is partition.Solve with chunks of p rows and the GPU's
// check of the solution (its first non-finite row is a breakdown).
func partitionTwin[T tridiag.Float](p int, ws *partition.Workspace[T]) func(a, b, c, d, x []T) error {
	return func(a, b, c, d, x []T) error {
		if err := partition.Solve(a, b, c, d, x, p, ws); err != nil {
			return err
		}
		for i, v := range x {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return &tridiag.PivotError{Row: i, Err: tridiag.ErrNonFiniteResult}
			}
		}
		return nil
	}
}

// partitionGPU solves bt on the GPU with chunks of p rows (p = 0: the plan
// of tridiag.Partition with one block per system, SegmentRows ≥ N).
func partitionGPU[T tridiag.Float](t *testing.T, bt batch[T], constant bool, ca, cb, cc T, p int) ([]T, map[int]int) {
	t.Helper()
	return partitionGPUConfig(t, config{}, bt, constant, ca, cb, cc, p)
}

// partitionGPUConfig is partitionGPU with the plan's switches cfg.
func partitionGPUConfig[T tridiag.Float](t *testing.T, cfg config, bt batch[T], constant bool, ca, cb, cc T, p int) ([]T, map[int]int) {
	t.Helper()
	if p == 0 {
		whole := tridiag.Options{Algorithm: tridiag.Partition, SegmentRows: (bt.shape.N + 15) / 16 * 16}
		return gpuConfig(t, cfg, bt, whole, constant, ca, cb, cc, nil)
	}
	// The host plan is a Thomas plan (the default chunk may not fit N, a
	// forced one may), whose kernel plan is replaced.
	return gpuConfig(t, cfg, bt, tridiag.Options{Algorithm: tridiag.Thomas}, constant, ca, cb, cc, func(spec tridiag.Spec, f64 bool) (kernelPlan, error) {
		return newPartitionPlanChunk(newGPU(dev, cfg), spec, f64, p)
	})
}

// partitionMaxN is the largest N of the default chunk size for systems
// stored rows first (sysFirst false) or systems first.
func partitionMaxN[T tridiag.Float](sysFirst bool) int {
	return tuning.PartitionMaxN(dev.Properties(), int(elemSize[T]()), 0, sysFirst)
}

func sysFirst(l tridiag.Layout) bool { return l.BatchStride < l.ElemStride }

func TestPartitionBitExact(t *testing.T) {
	t.Run("float32", testPartitionBitExact[float32])
	t.Run("float64", testPartitionBitExact[float64])
}

// testPartitionBitExact: the plan of tridiag.Partition against
// partition.Solve with partition.DefaultChunk, for every size, batch size
// and layout, with arrays and with constant coefficients.
func testPartitionBitExact[T tridiag.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	maxN := partitionMaxN[T](false)
	t.Logf("%s: largest N %d (systems first in memory: %d)", dev.Name(), maxN, partitionMaxN[T](true))
	for _, n := range []int{1, 2, 3, 5, 31, 64, 100, 256, 1000, 1024, 4096, maxN} {
		if n > maxN {
			continue
		}
		p := partition.DefaultChunk(n)
		for _, g := range []int{1, 7, 300} {
			for lname, l := range layouts(n, g) {
				if n > partitionMaxN[T](sysFirst(l)) {
					continue
				}
				shape := tridiag.Shape{N: n, G: g, Layout: l}
				bt := newBatch[T](r, shape, 4)
				name := fmt.Sprintf("N=%d/G=%d/%s", n, g, lname)
				for _, constant := range []bool{false, true} {
					ca, cb, cc := T(-0.4), T(2.1), T(-0.6)
					x, gf := partitionGPU(t, bt, constant, ca, cb, cc, 0)
					cpu, cf := partitionCPU(bt, constant, ca, cb, cc, p)
					assert.Equal(t, cf, gf, name)
					if !sameBits(t, bt.shape, x, cpu, fmt.Sprintf("%s/const=%v", name, constant)) {
						return
					}
				}
			}
		}
	}
}

func TestPartitionChunks(t *testing.T) {
	t.Run("float32", testPartitionChunks[float32])
	t.Run("float64", testPartitionChunks[float64])
}

// testPartitionChunks: every kernel (chunk size), on sizes that take the
// warp path and the shared-memory path (with its single- and
// double-buffered exchanges), against partition.Solve with that chunk.
func testPartitionChunks[T tridiag.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, p := range tuning.PartitionChunks {
		if !tuning.PartitionKernelBuilt(p, int(elemSize[T]())) {
			_, err := newPartitionPlanChunk(gdev, tridiag.Spec{Shape: tridiag.Shape{N: 64, G: 1}.Normalize()}, isF64[T](), p)
			require.ErrorIs(t, err, tridiag.ErrOptions, "p=%d", p)
			continue
		}
		maxN := tuning.PartitionMaxN(dev.Properties(), int(elemSize[T]()), p, false)
		for _, n := range []int{1, 4, p - 1, p, p + 1, 2*p + 1, 32 * p, 32*p + 1, 100, 777, 1024, 2049, 4096, maxN} {
			if n < 1 || n > maxN {
				continue
			}
			for _, g := range []int{3, 130} {
				for lname, l := range layouts(n, g) {
					if (n*g > 1<<21 && lname != "contiguous") || n > tuning.PartitionMaxN(dev.Properties(), int(elemSize[T]()), p, sysFirst(l)) {
						continue
					}
					shape := tridiag.Shape{N: n, G: g, Layout: l}
					bt := newBatch[T](r, shape, 4)
					name := fmt.Sprintf("p=%d/N=%d/G=%d/%s", p, n, g, lname)
					x, gf := partitionGPU(t, bt, false, 0, 0, 0, p)
					cpu, cf := partitionCPU(bt, false, 0, 0, 0, p)
					assert.Equal(t, cf, gf, name)
					if !sameBits(t, bt.shape, x, cpu, name) {
						return
					}
				}
			}
		}
		// One row more than fits is refused with ErrShape.
		shape := tridiag.Shape{N: maxN + 1, G: 1}.Normalize()
		_, err := newPartitionPlanChunk(gdev, tridiag.Spec{Shape: shape}, elemSize[T]() == 8, p)
		require.ErrorIs(t, err, tridiag.ErrShape, "p=%d", p)
		assert.Contains(t, err.Error(), fmt.Sprintf("N=%d", maxN))
	}
}

// TestPartitionTooLarge: beyond PartitionMaxN a system stored rows first
// is cut into segments; adjacent systems (interleaved) into segments with
// the systems across the lanes (lanesSegPlan); stored systems first
// otherwise (where a segment's loads would not coalesce) gathered into
// contiguous systems (transposePlan) whose plan cuts them into segments.
// With the gathering switched off the factory fails with ErrShape naming
// the largest N, and Auto falls back to another algorithm.
func TestPartitionTooLarge(t *testing.T) {
	for _, f64 := range []bool{false, true} {
		elem := reductionElem(f64)
		maxN := tuning.PartitionMaxN(dev.Properties(), elem, 0, true)
		spec := tridiag.Spec{Shape: tridiag.Shape{N: maxN + 1, G: 2, Layout: tridiag.Interleaved(2)}.Normalize(), Options: tridiag.Options{Algorithm: tridiag.Partition}}
		kp, err := newPartitionPlan(gdev, spec, f64)
		require.NoError(t, err)
		require.IsType(t, &lanesSegPlan{}, kp, "adjacent systems: segments across the lanes")
		noLanes := newGPU(dev, config{noLanesSegments: true})
		kp, err = newPartitionPlan(noLanes, spec, f64)
		require.NoError(t, err)
		require.IsType(t, &transposePlan{}, kp)
		assert.IsType(t, &segmentPlan{}, kp.(*transposePlan).inner)
		assert.Contains(t, kp.(*transposePlan).describe(), "gathered into contiguous")
		spec.Algorithm = tridiag.Auto
		alg, _, err := buildKernelPlan(noLanes, spec, f64)
		require.NoError(t, err)
		assert.Equal(t, tridiag.Partition, alg)
		noGather := newGPU(dev, config{noLanesSegments: true, noTranspose: true})
		spec.Algorithm = tridiag.Partition
		_, err = newPartitionPlan(noGather, spec, f64)
		require.ErrorIs(t, err, tridiag.ErrShape)
		assert.Contains(t, err.Error(), fmt.Sprintf("N=%d", maxN))
		spec.Algorithm = tridiag.Auto
		alg, _, err = buildKernelPlan(noGather, spec, f64)
		require.NoError(t, err)
		assert.NotEqual(t, tridiag.Partition, alg)
		spec.N = maxN
		alg, kp, err = buildKernelPlan(noGather, spec, f64)
		require.NoError(t, err)
		assert.Equal(t, tridiag.Partition, alg)
		assert.IsType(t, &partitionPlan{}, kp, "N = PartitionMaxN fits one block")
		// Gathered from N = tuning.GatherMinN on, one block a system below.
		for _, n := range []int{tuning.GatherMinN - 1, tuning.GatherMinN} {
			spec.N = n
			kp, err = newPartitionPlan(noLanes, spec, f64)
			require.NoError(t, err)
			_, gathered := kp.(*transposePlan)
			assert.Equal(t, n >= tuning.GatherMinN, gathered, "N=%d: %T", n, kp)
		}
		// Adjacent systems: the lanes kernel up to its largest N, then
		// segments across the lanes.
		for _, n := range []int{tuning.LanesSegmentMinN - 1, tuning.LanesSegmentMinN, tuning.GatherMinN} {
			spec.N = n
			kp, err = newPartitionPlan(gdev, spec, f64)
			require.NoError(t, err)
			_, lseg := kp.(*lanesSegPlan)
			assert.Equal(t, n >= tuning.LanesSegmentMinN, lseg, "N=%d: %T", n, kp)
		}
		// Rows first: segments.
		spec = tridiag.Spec{Shape: tridiag.Shape{N: maxN + 1, G: 2}.Normalize(), Options: tridiag.Options{Algorithm: tridiag.Partition}}
		kp, err = newPartitionPlan(gdev, spec, f64)
		require.NoError(t, err)
		assert.IsType(t, &segmentPlan{}, kp)
	}
}

func TestPartitionBreakdown(t *testing.T) {
	t.Run("float32", testPartitionBreakdown[float32])
	t.Run("float64", testPartitionBreakdown[float64])
}

// testPartitionBreakdown plants zero pivots (interior rows: Stage 1; first
// rows: the reduced system; a one-row last chunk) and an overflow in some
// systems, and checks that exactly those fail, at the twin's rows, with
// NaN in their rows, the others bit for bit.
func testPartitionBreakdown[T tridiag.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	for _, p := range tuning.PartitionChunks {
		if !tuning.PartitionKernelBuilt(p, int(elemSize[T]())) {
			continue
		}
		for _, n := range []int{3, 2*p + 1, 100, 1025} {
			g := 12
			for lname, l := range layouts(n, g) {
				shape := tridiag.Shape{N: n, G: g, Layout: l}.Normalize()
				bt := newBatch[T](r, shape, 4)
				bt.zero(1, 1, false)                // interior (or last) row of chunk 0
				bt.zero(3, min(n-1, p+1), false)    // a row of chunk 1
				bt.zero(3, min(n-1, 2*p+2), false)  // and of chunk 2: the smaller wins
				bt.zero(5, min(n-1, p), true)       // a first row: reduced system
				bt.zero(6, 0, true)                 // the very first row
				bt.zero(7, n-1, n%p == 1 || n == 1) // the last row (a one-row chunk when n%p == 1)
				bt.zero(8, min(n-1, p), true)       // a first row (reduced, step 1) …
				bt.zero(8, min(n-1, 3*p+1), false)  // … loses to an interior pivot (Stage 1)
				k := shape.Layout.Index(n/2, 10)    // overflow: a huge right-hand side
				big := math.MaxFloat32
				if isF64[T]() {
					big = math.MaxFloat64
				}
				bt.d[k] = T(big)
				for i := 0; i < n; i++ {
					bt.b[shape.Layout.Index(i, 10)] = 0.25 + T(i%3)
				}
				name := fmt.Sprintf("p=%d/N=%d/%s", p, n, lname)
				x, gf := partitionGPU(t, bt, false, 0, 0, 0, p)
				cpu, cf := partitionCPU(bt, false, 0, 0, 0, p)
				assert.Equal(t, cf, gf, name)
				assert.Contains(t, gf, 1, name)
				assert.NotContains(t, gf, 0, name)
				assert.NotContains(t, gf, 11, name)
				sameBits(t, shape, x, cpu, name)
				for sys := range gf {
					for i := 0; i < n; i++ {
						require.True(t, math.IsNaN(float64(x[shape.Layout.Index(i, sys)])), "%s: system %d row %d", name, sys, i)
					}
				}
			}
		}
	}
	// The plan reports ErrBreakdown with the row.
	shape := tridiag.Shape{N: 64, G: 4}
	bt := newBatch[float64](r, shape, 4)
	bt.a[2*64+17], bt.b[2*64+17] = 0, 0
	gp, err := NewPlan[float64](dev, shape, tridiag.Options{Algorithm: tridiag.Partition})
	require.NoError(t, err)
	defer gp.Close()
	x := make([]float64, len(bt.d))
	err = gp.Solve(t.Context(), bt.a, bt.b, bt.c, bt.d, x)
	var be *tridiag.BatchError
	require.ErrorAs(t, err, &be)
	require.Len(t, be.Failed, 1)
	assert.Equal(t, tridiag.SystemError{System: 2, Row: 17, Err: ErrBreakdown}, be.Failed[0])
	assert.True(t, errors.Is(err, tridiag.ErrZeroPivot))
}

// TestPartitionLaunchOnDevice: the launch the plan takes stays within the
// device's limits for every N up to the largest, in both precisions, and
// one block a system keeps two blocks on an SM (else segments or the
// streaming kernel).
func TestPartitionLaunchOnDevice(t *testing.T) {
	props := dev.Properties()
	for _, f64 := range []bool{false, true} {
		elem := reductionElem(f64)
		for n := 1; n <= tuning.PartitionMaxN(props, elem, 0, false); n += 1 + n/16 {
			spec := tridiag.Spec{Shape: tridiag.Shape{N: n, G: 1 << 16}.Normalize()}
			kp, err := newPartitionPlan(gdev, spec, f64)
			require.NoError(t, err, "N=%d", n)
			switch p := kp.(type) {
			case *partitionPlan:
				require.LessOrEqual(t, p.cfg.Threads, props.MaxThreadsPerBlock)
				require.LessOrEqual(t, p.cfg.SharedBytes, props.MaxShared())
				require.GreaterOrEqual(t, p.cfg.BlocksPerSM, 2, "N=%d: %+v (one block per SM takes segments)", n, p.cfg)
			case *segmentPlan:
				require.LessOrEqual(t, p.cfg.Threads, props.MaxThreadsPerBlock)
				require.LessOrEqual(t, p.cfg.SharedBytes, props.MaxShared())
				require.Positive(t, p.cfg.BlocksPerSM, "N=%d: %+v", n, p.cfg)
			case *streamPlan:
				require.LessOrEqual(t, p.cfg.Threads, props.MaxThreadsPerBlock)
				require.LessOrEqual(t, p.cfg.SharedBytes, props.MaxShared())
				require.Positive(t, p.cfg.BlocksPerSM, "N=%d: %+v", n, p.cfg)
				require.Equal(t, p.cfg.BlocksPerSM*props.SMs, p.cfg.Grid, "N=%d: %+v", n, p.cfg)
			default:
				t.Fatalf("N=%d: %T", n, kp)
			}
		}
	}
}

func TestPartitionConst(t *testing.T) {
	t.Run("float32", testPartitionConst[float32])
	t.Run("float64", testPartitionConst[float64])
}

// testPartitionConst: constant solves run the constant-coefficient kernel
// (d alone in shared memory, Stage 1 from a table): bit for bit
// partition.Solve on constant arrays and the general kernel, through the
// direct launch and the enqueued one, in every layout, with breakdowns (b
// = 0: every chunk's first pivot) and a short last chunk.
func testPartitionConst[T tridiag.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(27, 28))
	for _, n := range []int{1, 2, 17, 100, 1000, 1025, 4096, 8192} {
		for _, g := range []int{1, 5, 300} {
			for lname, l := range layouts(n, g) {
				if n > partitionMaxN[T](sysFirst(l)) {
					continue
				}
				shape := tridiag.Shape{N: n, G: g, Layout: l}
				bt := newBatch[T](r, shape, 4)
				whole := tridiag.Options{Algorithm: tridiag.Partition, SegmentRows: (n + 15) / 16 * 16, SkipFiniteCheck: true}
				for _, k := range [][3]T{{-0.4, 2.1, -0.6}, {1, 0, 1}, {0.5, 4, 0.25}} {
					name := fmt.Sprintf("N=%d/G=%d/%s/%v", n, g, lname, k)
					cpu, cf := partitionCPU(bt, true, k[0], k[1], k[2], 16)
					x, gf := gpuOpts(t, bt, whole, true, k[0], k[1], k[2], nil)
					assert.Equal(t, cf, gf, name)
					if !sameBits(t, shape, x, cpu, name) {
						return
					}
					x2, _ := gpuConfig(t, config{noDirectLaunch: true}, bt, whole, true, k[0], k[1], k[2], nil)
					sameBits(t, shape, x2, cpu, name+"/enqueued")
					x3, f3 := gpuConfig(t, config{noConstKernel: true}, bt, whole, true, k[0], k[1], k[2], nil)
					assert.Equal(t, cf, f3, name)
					sameBits(t, shape, x3, cpu, name+"/general kernel")
				}
			}
		}
	}
	gp, err := NewPlan[T](dev, tridiag.Shape{N: 1024, G: 64}, tridiag.Options{Algorithm: tridiag.Partition})
	require.NoError(t, err)
	defer gp.Close()
	assert.Contains(t, gp.Describe(), "constant coefficients")
}

func TestPartitionLanes(t *testing.T) {
	t.Run("float32", testPartitionLanes[float32])
	t.Run("float64", testPartitionLanes[float64])
}

// testPartitionLanes: batches of adjacent systems (interleaved) up to
// tuning.PartitionLanesMaxN run the lanes kernel (8 to 32 systems across
// a block's lanes, a thread a chunk): bit for bit partition.Solve and the
// shared-memory kernel, with arrays and constants, batches that leave
// lanes idle, one-row last chunks, breakdowns in some systems (NaN in
// theirs, the others exact) and a non-finite solution; above the largest
// N the shared-memory kernel takes over.
func testPartitionLanes[T tridiag.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	elem := reductionElem(isF64[T]())
	maxN := tuning.PartitionLanesMaxN(elem)
	for _, n := range []int{2, 16, 17, 33, 64, 100, 129, 256, 300, maxN - 15, maxN} {
		if n > maxN {
			continue
		}
		for _, g := range []int{2, 7, 31, 32, 100, 1000} {
			shape := tridiag.Shape{N: n, G: g, Layout: tridiag.Interleaved(g)}
			spec := tridiag.Spec{Shape: shape.Normalize(), Options: tridiag.Options{Algorithm: tridiag.Partition}}
			kp, err := newPartitionPlan(gdev, spec, isF64[T]())
			require.NoError(t, err)
			pp, ok := kp.(*partitionPlan)
			require.True(t, ok, "N=%d G=%d: %T", n, g, kp)
			require.True(t, pp.lanes(), "N=%d G=%d: the lanes kernel", n, g)
			require.Equal(t, pp.cfg.SystemsPerBlock*partition.Chunks(n, 16), pp.cfg.Threads)

			bt := newBatch[T](r, shape, 4)
			if g >= 32 {
				// Breakdowns: a Stage 1 pivot, a reduced-system divisor,
				// the last row (a one-row chunk when n%16 == 1), an
				// overflow.
				bt.zero(3, min(n-1, 5), true)
				bt.zero(9, min(n-1, 16), true)
				bt.zero(30, n-1, true)
				k := shape.Layout.Index(n/2, 31)
				bt.d[k] = T(math.Inf(1))
			}
			name := fmt.Sprintf("N=%d/G=%d", n, g)
			cpu, cf := partitionCPU(bt, false, 0, 0, 0, 16)
			x, gf := partitionGPU(t, bt, false, 0, 0, 0, 0)
			assert.Equal(t, cf, gf, name)
			if !sameBits(t, shape, x, cpu, name) {
				return
			}
			for sys := range gf {
				for i := 0; i < n; i++ {
					require.True(t, math.IsNaN(float64(x[shape.Layout.Index(i, sys)])), "%s: system %d row %d", name, sys, i)
				}
			}
			if g >= 32 {
				assert.Len(t, gf, 4, name)
			}
			x2, f2 := partitionGPUConfig(t, config{noLanesKernel: true}, bt, false, 0, 0, 0, 0)
			assert.Equal(t, cf, f2, name)
			sameBits(t, shape, x2, x, name+"/shared-memory kernel")
			for _, spb := range tuning.PartitionLanesSystems {
				if _, err := tuning.PartitionLanesLaunch(gdev.props, n, elem, spb, g, 0); spb == pp.cfg.SystemsPerBlock || err != nil {
					continue
				}
				x3, f3 := gpuWith(t, bt, tridiag.Thomas, false, 0, 0, 0, func(spec tridiag.Spec, f64 bool) (kernelPlan, error) {
					return newLanesPlan(gdev, spec, f64, spb)
				})
				assert.Equal(t, cf, f3, name)
				sameBits(t, shape, x3, x, fmt.Sprintf("%s/%d systems a block", name, spb))
			}
			ca, cb, cc := T(-0.4), T(2.1), T(-0.6)
			cpu, cf = partitionCPU(bt, true, ca, cb, cc, 16)
			x, gf = partitionGPU(t, bt, true, ca, cb, cc, 0)
			assert.Equal(t, cf, gf, name+"/const")
			sameBits(t, shape, x, cpu, name+"/const")
		}
	}
	spec := tridiag.Spec{Shape: tridiag.Shape{N: maxN + 1, G: 64, Layout: tridiag.Interleaved(64)}.Normalize()}
	kp, err := newPartitionPlan(gdev, spec, isF64[T]())
	require.NoError(t, err)
	if maxN+1 >= tuning.LanesSegmentMinN {
		assert.IsType(t, &lanesSegPlan{}, kp, "beyond the lanes kernel: segments across the lanes")
	} else {
		pp, ok := kp.(*partitionPlan)
		require.True(t, ok, "below tuning.LanesSegmentMinN: one block a system, %T", kp)
		assert.True(t, pp.sharedChunk(16), "the kernel with the systems in shared memory, chunks of 16")
	}
}
