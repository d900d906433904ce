//go:build cuda

package tridiaggpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tuning"
)

// constStreamPlan makes the shared-memory partition plan of spec (chunks
// of 16) with the constant streaming kernel forced on its constant solves
// (spb > 0: that many systems a block), whatever PreferConstStream says.
func constStreamPlan(spb int) func(spec tridiag.Spec, f64 bool) (kernelPlan, error) {
	return func(spec tridiag.Spec, f64 bool) (kernelPlan, error) {
		pp, err := newSharedPartitionPlan(gdev, spec, f64, 16)
		if err != nil {
			return nil, err
		}
		err = dev.Enqueue(func() error {
			cs, k, err := constStreamLaunch(gdev, spec, f64, spb)
			if err != nil {
				return err
			}
			return pp.setConstStream(gdev, cs, k)
		})
		return pp, err
	}
}

// cstreamBound is the launch bound (threads a block) of the constant
// streaming kernel for systems of n rows, the rows kernel where rows.
func cstreamBound(t testing.TB, n int, rows, f64 bool) int {
	t.Helper()
	k, err := constStreamFamily(tuning.PartitionConstStreamWarp(n), rows, f64)
	require.NoError(t, err)
	return k.Kernel().Info().MaxThreads
}

func TestConstStream(t *testing.T) {
	t.Run("float32", testConstStream[float32])
	t.Run("float64", testConstStream[float64])
}

// testConstStream: the constant streaming kernels (exchanges by shuffles
// and through shared memory) are bit for bit partition.Solve (chunks of
// 16) on constant arrays, and report the same failures, for N = 1 … 4096
// (FP64: 2048; no launch above) (one-row last chunks,
// N not a multiple of 16), batches smaller than the grid, batches that
// give every block several groups and a partial last group, every layout
// (NaN in the gaps), systems a block from the smallest to the largest, a
// breakdown of the matrix (every system fails at the same row), a
// non-finite x in one system, through the direct and the enqueued launch.
func testConstStream[T tridiag.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	f64 := isF64[T]()
	elem := reductionElem(f64)
	props := dev.Properties()
	for _, n := range []int{1, 2, 3, 16, 17, 33, 64, 100, 257, 512, 513, 1000, 2047, 2048, 2049, 4081, 4096} {
		// The grid of a large batch with the default choice: G = 2·grid·spb
		// + spb/2 + 3 gives every block two or three groups, the last one
		// partial.
		cs, err := tuning.PartitionConstStreamLaunchFor(props, n, elem, 1<<22, false, cstreamBound(t, n, false, f64), 0, 0)
		if n > tuning.PartitionConstStreamMaxN(elem) {
			require.ErrorIs(t, err, tuning.ErrTooLargeForShared, "N=%d", n)
			continue
		}
		require.NoError(t, err, "N=%d", n)
		big := 2*cs.Grid*cs.SystemsPerBlock + cs.SystemsPerBlock/2 + 3
		// bigAligned: interleaved rows of whole 16-byte units, which the
		// row-major kernels copy and store as units (but in the partial
		// last group).
		bigAligned := (big + 7) &^ 7
		for _, g := range []int{1, 5, big, bigAligned} {
			for lname, l := range layouts(n, g) {
				if g == big && lname == "strided" && n > 1000 {
					continue // the large strided batches take long on the host
				}
				if g == bigAligned && lname != "interleaved" {
					continue
				}
				spec := tridiag.Spec{Shape: tridiag.Shape{N: n, G: g, Layout: l}.Normalize()}
				if err := dev.Enqueue(func() error { _, _, err := constStreamLaunch(gdev, spec, f64, 0); return err }); err != nil {
					// Only interleaved batches of longer systems: rows of
					// whole 32-byte sectors take 8 FP32 systems (4 FP64)
					// a block, above the rows kernel's 512 threads.
					require.ErrorIs(t, err, tridiag.ErrShape, "N=%d/G=%d/%s", n, g, lname)
					require.True(t, lname == "interleaved" && g > 1 && n > 256*elem, "N=%d/G=%d/%s: %v", n, g, lname, err)
					continue
				}
				shape := tridiag.Shape{N: n, G: g, Layout: l}
				bt := newBatch[T](r, shape, 4)
				if g >= 5 {
					bt.d[shape.Layout.Index(n/2, 3)] = T(math.Inf(1))
				}
				for _, k := range [][3]T{{-0.4, 2.1, -0.6}, {1, 0, 1}, {0.5, 4, 0.25}} {
					name := fmt.Sprintf("N=%d/G=%d/%s/%v", n, g, lname, k)
					cpu, cf := partitionCPU(bt, true, k[0], k[1], k[2], 16)
					if k[1] == 0 && n > 1 {
						require.Len(t, cf, g, name) // b = 0: every system breaks down
					}
					x, gf := gpuWith(t, bt, tridiag.Thomas, true, k[0], k[1], k[2], constStreamPlan(0))
					assert.Equal(t, cf, gf, name)
					if !sameBits(t, shape, x, cpu, name) {
						return
					}
					for sys := range gf {
						for i := 0; i < n; i++ {
							require.True(t, math.IsNaN(float64(x[shape.Layout.Index(i, sys)])), "%s: system %d row %d", name, sys, i)
						}
					}
					if g < big || k[1] == 0 {
						continue
					}
					x2, gf2 := gpuConfig(t, config{noDirectLaunch: true}, bt, tridiag.Options{Algorithm: tridiag.Thomas}, true, k[0], k[1], k[2], constStreamPlan(0))
					assert.Equal(t, cf, gf2, name+"/enqueued")
					sameBits(t, shape, x2, cpu, name+"/enqueued")
				}
			}
		}
	}
	// Every block size the kernels take, on a batch of several groups a
	// block.
	for _, n := range []int{64, 300, 1024} {
		for spb := 1; spb <= cstreamBound(t, n, false, f64); spb *= 2 {
			if _, err := tuning.PartitionConstStreamLaunchFor(props, n, elem, 1, false, cstreamBound(t, n, false, f64), 0, spb); err != nil {
				continue // not a block size of this N
			}
			g := 3*props.SMs*spb + 7
			shape := tridiag.Shape{N: n, G: g, Layout: tridiag.Contiguous(n)}
			bt := newBatch[T](r, shape, 4)
			name := fmt.Sprintf("N=%d/G=%d/spb=%d", n, g, spb)
			ca, cb, cc := T(-1), T(2.5), T(-1)
			cpu, cf := partitionCPU(bt, true, ca, cb, cc, 16)
			x, gf := gpuWith(t, bt, tridiag.Thomas, true, ca, cb, cc, constStreamPlan(spb))
			assert.Equal(t, cf, gf, name)
			sameBits(t, shape, x, cpu, name)
		}
	}
}

// TestConstStreamAuto: Auto's plans of large batches run their constant
// solves on the constant streaming kernel (one block per system, segments,
// streaming and lanes plans alike; interleaved batches where a block takes
// whole sectors of a row), bit for bit with the twin, several times on one
// plan; small batches keep the one-shot constant kernel; N above its limit,
// FP64 N > 2048 (no launch) and interleaved batches of longer
// systems do not take it.
func TestConstStreamAuto(t *testing.T) {
	t.Run("float32", testConstStreamAuto[float32])
	t.Run("float64", testConstStreamAuto[float64])
}

func testConstStreamAuto[T tridiag.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(53, 54))
	f64 := isF64[T]()
	elem := reductionElem(f64)
	for _, c := range []struct {
		n           int
		interleaved bool
	}{{64, false}, {1024, false}, {2048, false}, {4096, false}, {64, true}, {256, true}, {512, true}, {1024, true}} {
		n := c.n
		// 2^23 rows: every block of the grid gets two groups or more
		// (tuning.PreferConstStream) with up to five blocks an SM of 132
		// SMs (FP32 N = 64: 64 systems a block, 2048 groups).
		g := (1 << 23) / n
		l := tridiag.Contiguous(n)
		if c.interleaved {
			l = tridiag.Interleaved(g)
		}
		shape := tridiag.Shape{N: n, G: g, Layout: l}
		name := fmt.Sprintf("N=%d interleaved=%v", n, c.interleaved)
		gp, err := NewPlan[T](dev, shape, tridiag.Options{})
		require.NoError(t, err)
		pp := constWholeOf(gp.kp)
		if c.interleaved && n > 256*elem || n > tuning.PartitionConstStreamMaxN(elem) {
			// Whole sectors of a row would take blocks above 512 threads;
			// FP64 takes N ≤ 2048.
			if pp != nil {
				assert.Nil(t, pp.cstream, "%s: %s", name, gp.Describe())
			}
			gp.Close()
			continue
		}
		assert.Contains(t, gp.Describe(), "streaming through the batch", name)
		require.NotNil(t, pp, "%s: %s", name, gp.Describe())
		require.NotNil(t, pp.cstream, "%s: %s", name, gp.Describe())
		bt := newBatch[T](r, shape, 4)
		ca, cb, cc := T(-1), T(2), T(-1)
		cpu, cf := partitionCPU(bt, true, ca, cb, cc, 16)
		require.Empty(t, cf)
		x := make([]T, len(bt.d))
		for k := range 3 {
			for i := range x {
				x[i] = T(math.NaN())
			}
			require.NoError(t, gp.SolveConst(t.Context(), ca, cb, cc, bt.d, x))
			sameBits(t, shape, x, cpu, fmt.Sprintf("%s: const solve %d", name, k))
		}
		gp.Close()

		small, err := newPartitionPlan(gdev, tridiag.Spec{Shape: tridiag.Shape{N: n, G: 64}.Normalize()}, f64)
		require.NoError(t, err)
		if sp := constWholeOf(small); sp != nil {
			assert.Nil(t, sp.cstream, "N=%d, G=64", n)
		}
	}
	big, err := newPartitionPlan(gdev, tridiag.Spec{Shape: tridiag.Shape{N: 8192, G: 4096}.Normalize()}, f64)
	require.NoError(t, err)
	if sp := constWholeOf(big); sp != nil {
		assert.Nil(t, sp.cstream, "N=8192")
	}
}

// constWholeOf is the partition plan that runs kp's constant solves, or
// nil.
func constWholeOf(kp kernelPlan) *partitionPlan {
	switch p := kp.(type) {
	case *partitionPlan:
		return p
	case *segmentPlan:
		return p.constWhole
	case *streamPlan:
		return constWholeOf(p.other)
	case *lanesSegPlan:
		return constWholeOf(p.constPlan)
	case *lanesStreamPlan:
		return p.lanes
	}
	return nil
}
