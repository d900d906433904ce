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

func TestLanesStream(t *testing.T) {
	t.Run("float32", testLanesStream[float32])
	t.Run("float64", testLanesStream[float64])
}

// testLanesStream: large interleaved batches of systems the lanes kernel
// takes run the streamed lanes kernel (lanesStreamPlan): its solves, with
// rows of whole 16-byte units (G a multiple of 4) and not (G odd), N not a
// multiple of 16, breakdowns in some systems (Stage 1, the reduced rows,
// the last row, an overflow), are bit for bit the lanes kernel's and
// partition.Solve's, with the same failed systems; constant solves are the
// lanes plan's.
func testLanesStream[T tridiag.Float](t *testing.T) {
	force := config{forceLanesStream: true} // FP32 too (tuning.PreferLanesStream takes FP64 only)
	r := rand.New(rand.NewPCG(97, 98))
	elem := reductionElem(isF64[T]())
	for _, n := range []int{257, 300, 512, 1024} {
		if n > tuning.PartitionLanesMaxN(elem) {
			continue
		}
		for _, g := range []int{(1 << 22) / n, (1<<22)/n + 3} {
			shape := tridiag.Shape{N: n, G: g, Layout: tridiag.Interleaved(g)}
			name := fmt.Sprintf("N=%d/G=%d", n, g)
			bt := newBatch[T](r, shape, 4)
			bt.zero(3, 5, true)
			bt.zero(9, 16, true)
			bt.zero(g-1, n-1, true)
			bt.d[shape.Layout.Index(n/2, 31)] = T(math.Inf(1))
			for _, constant := range []bool{false, true} {
				what := fmt.Sprintf("%s/const=%v", name, constant)
				kp, failed := segmentCaseConfig(t, force, bt, tridiag.Options{}, constant, 2, what)
				require.IsType(t, &lanesStreamPlan{}, kp, what)
				if !constant {
					assert.Len(t, failed, 4, what)
				}
			}
			// Bit for bit the lanes kernel's.
			xs, fs := partitionGPUConfig(t, force, bt, false, 0, 0, 0, 0)
			xl, fl := partitionGPUConfig(t, config{noLanesStream: true}, bt, false, 0, 0, 0, 0)
			assert.Equal(t, fl, fs, name)
			sameBits(t, shape.Normalize(), xs, xl, name+"/against the lanes kernel")
		}
	}
	// Small batches and short systems keep the lanes kernel, and FP32.
	for _, sh := range []tridiag.Shape{{N: 256, G: 64}, {N: 64, G: 1 << 16}, {N: 512, G: 1 << 15}} {
		sh.Layout = tridiag.Interleaved(sh.G)
		kp, err := newPartitionPlan(gdev, tridiag.Spec{Shape: sh.Normalize()}, isF64[T]())
		require.NoError(t, err)
		if sh.N == 512 && isF64[T]() {
			assert.IsType(t, &lanesStreamPlan{}, kp, "N=%d G=%d", sh.N, sh.G)
			continue
		}
		assert.IsType(t, &partitionPlan{}, kp, "N=%d G=%d", sh.N, sh.G)
	}
}
