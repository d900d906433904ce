//go:build cuda

package tridiaggpu

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tuning"
)

func TestPartitionStream(t *testing.T) {
	t.Run("float32", testPartitionStream[float32])
	t.Run("float64", testPartitionStream[float64])
}

// streamBound is the launch bound (threads a block) of the streaming
// kernel.
func streamBound(t testing.TB, f64 bool) int {
	t.Helper()
	k, err := kernels.PartitionStreamPFor(16, f64)
	require.NoError(t, err)
	return k.Kernel().Info().MaxThreads
}

// streamKernelPlan is the streaming plan of spec with the shared-memory
// partition plan (chunks of 16) for its constant solves.
func streamKernelPlan(spec tridiag.Spec, f64 bool) (kernelPlan, error) {
	other, err := newSharedPartitionPlan(gdev, spec, f64, 16)
	if err != nil {
		return nil, err
	}
	return newStreamPlan(gdev, spec, f64, other)
}

// testPartitionStream: the streaming kernel (a persistent grid, one
// system a block, the next one loading) is bit for bit partition.Solve
// with chunks of 16, for N from 2 to its largest, one-row last chunks,
// batches smaller than the grid and batches that give every block
// several systems and some one more, rows-first layouts with gaps (NaN
// there), breakdowns in some systems (NaN in theirs, the others exact) and
// a non-finite solution, and repeated solves on one plan (the block's two
// keys alternate).
func testPartitionStream[T tridiag.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	f64 := isF64[T]()
	elem := reductionElem(f64)
	maxN := tuning.PartitionStreamMaxN(dev.Properties(), elem, streamBound(t, f64))
	require.Greater(t, maxN, 2048)
	for _, n := range []int{2, 17, 1000, 2049, maxN/2 + 1, maxN - 15, maxN} {
		// The grid of a large batch: G = 2·grid + 5 gives every block two
		// or three systems.
		big, err := streamKernelPlan(tridiag.Spec{Shape: tridiag.Shape{N: n, G: 1 << 20, Layout: tridiag.Contiguous(n)}.Normalize()}, f64)
		require.NoError(t, err, "N=%d", n)
		grid := big.(*streamPlan).cfg.Grid
		require.Greater(t, grid, 0)
		for _, g := range []int{1, 5, 2*grid + 5} {
			ls := map[string]tridiag.Layout{"contiguous": tridiag.Contiguous(n)}
			if g == 5 {
				ls["padded"] = tridiag.Strided(1, n+5)
				ls["strided"] = tridiag.Strided(2, 2*n+3)
			}
			for ln, l := range ls {
				shape := tridiag.Shape{N: n, G: g, Layout: l}
				name := fmt.Sprintf("N=%d/G=%d/%s", n, g, ln)
				bt := newBatch[T](r, shape, 4)
				if g >= 5 {
					// Breakdowns: a Stage 1 pivot, a reduced-system
					// divisor (a chunk's first row), the last row (a
					// one-row chunk when n%16 == 1), an overflow.
					bt.zero(0, min(n-1, 5), true)
					bt.zero(1, min(n-1, 16), true)
					bt.zero(g-1, n-1, true)
					bt.d[shape.Layout.Index(n/2, 3)] = T(math.Inf(1))
				}
				cpu, cf := partitionCPU(bt, false, 0, 0, 0, 16)
				if g >= 5 {
					assert.Len(t, cf, 4, name)
				}
				x, gf := gpuWith(t, bt, tridiag.Thomas, false, 0, 0, 0, streamKernelPlan)
				assert.Equal(t, cf, gf, name)
				if !sameBits(t, shape, x, cpu, name) {
					return
				}
				for sys := range gf {
					for i := 0; i < n; i++ {
						require.True(t, math.IsNaN(float64(x[shape.Layout.Index(i, sys)])), "%s: system %d row %d", name, sys, i)
					}
				}
				ca, cb, cc := T(-0.4), T(2.1), T(-0.6)
				cpu, cf = partitionCPU(bt, true, ca, cb, cc, 16)
				x, gf = gpuWith(t, bt, tridiag.Thomas, true, ca, cb, cc, streamKernelPlan)
				assert.Equal(t, cf, gf, name+"/const")
				sameBits(t, shape, x, cpu, name+"/const")
			}
		}
	}
}

// TestPartitionStreamAuto: Auto takes the streaming kernel for contiguous
// batches whose systems leave one partition block per SM, solves them
// (and their constant solves, through the plan it would have made
// otherwise) bit for bit with the twins, several times on one plan, and
// keeps it out of the systems-first layouts.
func TestPartitionStreamAuto(t *testing.T) {
	t.Run("float32", testPartitionStreamAuto[float32])
	t.Run("float64", testPartitionStreamAuto[float64])
}

func testPartitionStreamAuto[T tridiag.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	n := tuning.PartitionStreamMaxN(dev.Properties(), int(elemSize[T]()), streamBound(t, isF64[T]()))
	shape := tridiag.Shape{N: n, G: 600, Layout: tridiag.Contiguous(n)}
	bt := newBatch[T](r, shape, 4)
	bt.zero(7, 100, true)
	gp, err := NewPlan[T](dev, shape, tridiag.Options{})
	require.NoError(t, err)
	defer gp.Close()
	sp, ok := gp.kp.(*streamPlan)
	require.True(t, ok, "%T: %s", gp.kp, gp.Describe())
	assert.Contains(t, gp.Describe(), "streaming")
	cpu, cf := partitionCPU(bt, false, 0, 0, 0, 16)
	require.Equal(t, map[int]int{7: 100}, cf)
	ca, cb, cc := T(-0.4), T(2.1), T(-0.6)
	cpuC, cfC := cpuSystems(bt, true, ca, cb, cc, planTwin[T](t, sp.other, true))
	x := make([]T, len(bt.d))
	for k := range 3 {
		for i := range x {
			x[i] = T(math.NaN())
		}
		err := gp.Solve(context.Background(), bt.a, bt.b, bt.c, bt.d, x)
		var be *tridiag.BatchError
		require.ErrorAs(t, err, &be)
		require.Len(t, be.Failed, 1)
		assert.Equal(t, 7, be.Failed[0].System)
		assert.Equal(t, 100, be.Failed[0].Row)
		sameBits(t, shape, x, cpu, fmt.Sprintf("solve %d", k))
		require.NoError(t, gp.SolveConst(context.Background(), ca, cb, cc, bt.d, x))
		assert.Empty(t, cfC)
		sameBits(t, shape, x, cpuC, fmt.Sprintf("const solve %d", k))
	}
	spec := tridiag.Spec{Shape: tridiag.Shape{N: n, G: 64, Layout: tridiag.Interleaved(64)}.Normalize()}
	kp, err := newPartitionPlan(gdev, spec, isF64[T]())
	require.NoError(t, err)
	_, isStream := kp.(*streamPlan)
	assert.False(t, isStream, "interleaved: %T", kp)
	kp, err = newPartitionPlan(newGPU(dev, config{noStreamKernel: true}), tridiag.Spec{Shape: shape.Normalize()}, isF64[T]())
	require.NoError(t, err)
	_, isStream = kp.(*streamPlan)
	assert.False(t, isStream, "switched off: %T", kp)
}
