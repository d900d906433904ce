//go:build cuda

package bandedgpu

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/tridiag"
)

// The pivoting batch kernel (Options.Pivot) is banded.SolveBatch with
// BatchOptions.Pivot on every system: the same solutions bit for bit, the
// same failed systems with the same row, column and cause.

// checkPivotBatch solves b on the GPU with pivoting and on the CPU twin
// and compares them; it returns the GPU's solution and error.
func checkPivotBatch[T tridiag.Float](t *testing.T, b *banded.Batch[T], rhs []T, what string) ([]T, error) {
	t.Helper()
	ctx := context.Background()
	p, err := NewBatchPlan[T](dev, b.N, b.K, b.G, b.Layout, Options{Pivot: true})
	require.NoError(t, err, what)
	defer p.Close()
	require.Contains(t, p.Kernel(), "band_batch_pivot", what)
	x := make([]T, len(rhs))
	_, gerr := p.SolveBatch(ctx, b, rhs, x)
	cx := make([]T, len(rhs))
	_, cerr := banded.SolveBatch(ctx, b, rhs, cx, banded.BatchOptions{Pivot: true})
	sameFailures(t, cerr, gerr, what, banded.ErrNonFinite, banded.ErrSingular)
	sameSolutions(t, b, x, cx, what)
	return x, gerr
}

// TestBandBatchPivot: every half-bandwidth of the kernels, orders around
// K, batches that leave a block partly empty, both layouts and
// precisions, on systems that are not diagonally dominant (d = 0.3: the
// elimination interchanges rows in most steps), against the twin bit for
// bit and, in FP64, with a backward error of a few ε.
func TestBandBatchPivot(t *testing.T) {
	t.Run("float32", testBandBatchPivot[float32])
	t.Run("float64", testBandBatchPivot[float64])
}

func testBandBatchPivot[T tridiag.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for k := 1; k <= MaxBatchK; k++ {
		for _, n := range []int{k + 1, 2*k + 3, 100, 1000} {
			for _, g := range []int{1, 37, 300} {
				for _, lay := range bandLayouts {
					b, rhs := bandBatch[T](r, n, k, g, lay, 0.3)
					what := fmt.Sprintf("K=%d N=%d G=%d %v", k, n, g, lay)
					x, err := checkPivotBatch(t, b, rhs, what)
					if err != nil || ElemSize[T]() != 8 {
						continue
					}
					for _, s := range []int{0, g - 1} {
						be := backwardError(b.System(s), vecOf(b, x, s), vecOf(b, rhs, s))
						assert.LessOrEqual(t, be, 64*float64(k+1)*bandEps[T](), "%s: system %d backward error", what, s)
					}
				}
			}
		}
	}
}

// TestBandBatchPivotBreakdown: a system with a zero column fails with
// ErrSingular at that row, one with a NaN entry with ErrNonFinite at its
// row and column, as on the CPU; the others are solved.
func TestBandBatchPivotBreakdown(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	const n, k, g = 50, 3, 5
	for _, lay := range bandLayouts {
		b, rhs := bandBatch[float64](r, n, k, g, lay, 0.3)
		for i := max(0, 20-k); i <= min(n-1, 20+k); i++ {
			b.Set(1, i, 20, 0) // column 20 of system 1
		}
		b.Set(3, 7, 9, math.NaN())
		_, err := checkPivotBatch(t, b, rhs, fmt.Sprintf("breakdowns %v", lay))
		var be *banded.BatchError
		require.ErrorAs(t, err, &be)
		require.Len(t, be.Failed, 2)
		assert.Equal(t, 1, be.Failed[0].System)
		assert.ErrorIs(t, be.Failed[0].Err, banded.ErrSingular)
		assert.Equal(t, 3, be.Failed[1].System)
		assert.ErrorIs(t, be.Failed[1].Err, banded.ErrNonFinite)
		assert.Equal(t, [2]int{7, 9}, [2]int{be.Failed[1].Row, be.Failed[1].Col})
	}
}
