//go:build cuda

package tridiaggpu

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/tridiag"
)

// TestForeignMemoryAndStream: memory and a stream made with the driver
// API in the primary context, as another CUDA library makes them, wrapped
// (cuda.Wrap, cuda.WrapStream) and solved on by a plan given the stream
// (SetStream): the solution is the CPU's, the solve is ordered with the
// caller's copies on the stream, blocking and non-blocking streams, FP32
// and FP64.
func TestForeignMemoryAndStream(t *testing.T) {
	t.Run("float32", testForeignMemoryAndStream[float32])
	t.Run("float64", testForeignMemoryAndStream[float64])
}

func testForeignMemoryAndStream[T tridiag.Float](t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(101, 102))
	shape := tridiag.Shape{N: 300, G: 37} // G not a power of two
	for _, flags := range []cu.StreamFlags{cu.DefaultStream, cu.NonBlocking} {
		name := fmt.Sprintf("stream flags %d", flags)
		bt := newBatch[T](r, shape, 4)
		n := len(bt.d)
		bytes := int64(n) * elemSize[T]()
		// a, b, c, d, x and a copy of x the caller queues after the solve.
		var ptrs [6]cu.DevicePtr
		var s cu.Stream
		require.NoError(t, dev.Do(func() error {
			for i := range ptrs {
				p, err := cu.MemAlloc(bytes)
				if err != nil {
					return err
				}
				ptrs[i] = p
			}
			var err error
			if s, err = cu.MakeStream(flags); err != nil {
				return err
			}
			for i, h := range [][]T{bt.a, bt.b, bt.c, bt.d} {
				if err := cu.MemcpyHtoD(ptrs[i], unsafe.Pointer(&h[0]), bytes); err != nil {
					return err
				}
			}
			// A copy from pageable memory may return before its data
			// lands; a non-blocking stream is not ordered after it.
			return cu.Synchronize()
		}), name)
		t.Cleanup(func() {
			_ = dev.Do(func() error {
				for _, p := range ptrs {
					if p != 0 {
						_ = cu.MemFree(p)
					}
				}
				return s.Destroy()
			})
		})
		bufs := make([]*cuda.Buffer[T], len(ptrs))
		for i, p := range ptrs {
			var err error
			bufs[i], err = cuda.Wrap[T](dev, p, n)
			require.NoError(t, err, name)
		}
		stream := cuda.WrapStream(dev, *(*uintptr)(unsafe.Pointer(&s)))
		assert.Equal(t, s, stream.Handle(), name)

		gp, err := NewPlan[T](dev, shape, tridiag.Options{})
		require.NoError(t, err, name)
		defer gp.Close()
		require.NoError(t, gp.SetStream(stream), name)
		read := func(p cu.DevicePtr) []T {
			h := make([]T, n)
			require.NoError(t, dev.Do(func() error {
				if err := cu.MemcpyDtoHAsync(unsafe.Pointer(&h[0]), p, bytes, s); err != nil {
					return err
				}
				return s.Synchronize()
			}), name)
			return h
		}

		// Solved on the caller's stream, against the CPU (the plan's twin
		// algorithm and the pivoting reference).
		pend, err := gp.Start(ctx, bufs[0], bufs[1], bufs[2], bufs[3], bufs[4])
		require.NoError(t, err, name)
		// The caller's copy of x, queued after the solve on its stream.
		require.NoError(t, dev.Enqueue(func() error { return cu.MemcpyDtoDAsync(ptrs[5], ptrs[4], bytes, s) }), name)
		require.NoError(t, pend.Wait(), name)
		got := read(ptrs[4])
		twin, err := cpuSolve(t, bt, tridiag.Options{Algorithm: gp.Algorithm()}, false, 0, 0, 0)
		require.NoError(t, err, name)
		ref, err := cpuSolve(t, bt, tridiag.Options{Algorithm: tridiag.GTSV}, false, 0, 0, 0)
		require.NoError(t, err, name)
		compare(t, bt.shape, got, twin, ref, 64*eps[T](), 1e4*eps[T](), name)
		assert.Equal(t, got, read(ptrs[5]), "%s: the copy queued after the solve", name)

		// Constant coefficients, and host slices, on the same stream.
		ca, cb, cc := T(-0.4), T(2.1), T(-0.6)
		require.NoError(t, gp.SolveDeviceConst(ctx, ca, cb, cc, bufs[3], bufs[4]), name)
		gotC := read(ptrs[4])
		refC, err := cpuSolve(t, bt, tridiag.Options{Algorithm: tridiag.GTSV}, true, ca, cb, cc)
		require.NoError(t, err, name)
		twinC, err := cpuSolve(t, bt, tridiag.Options{Algorithm: gp.Algorithm()}, true, ca, cb, cc)
		require.NoError(t, err, name)
		compare(t, bt.shape, gotC, twinC, refC, 64*eps[T](), 1e4*eps[T](), name+"/const")
		x := make([]T, n)
		require.NoError(t, gp.Solve(ctx, bt.a, bt.b, bt.c, bt.d, x), name)
		assert.Equal(t, got, x, "%s: host slices on the caller's stream", name)

		// A resident plan takes no stream, and a plan on the caller's
		// stream cannot be resident.
		require.ErrorIs(t, gp.SetResident(time.Second), tridiag.ErrOptions, name)
		require.NoError(t, gp.SetStream(nil), name)
		if err := gp.SetResident(time.Second); err == nil {
			require.ErrorIs(t, gp.SetStream(stream), tridiag.ErrOptions, name)
			require.NoError(t, gp.SetResident(0), name)
		}
		// Back on its own stream (a resident grid may have given the plan
		// other chunks: against the reference).
		clear(x)
		require.NoError(t, gp.Solve(ctx, bt.a, bt.b, bt.c, bt.d, x), name)
		compare(t, bt.shape, x, ref, ref, 1e4*eps[T](), 1e4*eps[T](), name+"/own stream")
	}
}
