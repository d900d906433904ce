package banded

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/tridiag"
)

func TestBatchLayout(t *testing.T) {
	for _, lay := range []Layout{Contiguous, Interleaved} {
		b, err := NewBatch[float64](7, 2, 5, lay)
		require.NoError(t, err)
		require.Len(t, b.Data, 5*5*7)
		b.Set(3, 4, 2, 42)
		b.Set(1, 0, 2, -1)
		switch lay {
		case Contiguous:
			assert.Equal(t, 42.0, b.Data[3*5*7+(2+4-2)*7+2])
			assert.Equal(t, 3*7+4, b.VecIndex(3, 4))
		case Interleaved:
			assert.Equal(t, 42.0, b.Data[((2+4-2)*7+2)*5+3])
			assert.Equal(t, 4*5+3, b.VecIndex(3, 4))
		}
		assert.Equal(t, 42.0, b.At(3, 4, 2))
		assert.Equal(t, 0.0, b.At(3, 6, 0), "outside the band")
		s := b.System(3)
		assert.Equal(t, 42.0, s.At(4, 2))
		assert.Equal(t, 0.0, s.At(0, 2))
		s.Set(4, 2, 7)
		if lay == Contiguous {
			assert.Equal(t, 7.0, b.At(3, 4, 2), "contiguous System is a view")
		} else {
			assert.Equal(t, 42.0, b.At(3, 4, 2), "interleaved System is a copy")
		}
		require.NoError(t, b.SetSystem(0, s))
		assert.Equal(t, 7.0, b.At(0, 4, 2))
		assert.Equal(t, lay.String(), []string{"contiguous", "interleaved"}[lay])
		assert.Panics(t, func() { b.Set(0, 6, 0, 1) })
		assert.Panics(t, func() { b.At(5, 0, 0) })
	}
	for _, bad := range [][4]int{{0, 0, 1, 0}, {3, 3, 1, 0}, {3, 1, 0, 0}, {3, 1, 1, 2}} {
		_, err := NewBatch[float32](bad[0], bad[1], bad[2], Layout(bad[3]))
		assert.ErrorIs(t, err, ErrShape, "%v", bad)
	}
	b, _ := NewBatch[float64](4, 1, 2, Contiguous)
	m, _ := New[float64](4, 2)
	assert.ErrorIs(t, b.SetSystem(0, m), ErrShape)
}

func TestSolveBatch(t *testing.T) {
	t.Run("float64", testSolveBatch[float64])
	t.Run("float32", testSolveBatch[float32])
}

func testSolveBatch[T Float](t *testing.T) {
	rng := newRNG(21)
	for _, lay := range []Layout{Contiguous, Interleaved} {
		for _, pivot := range []bool{false, true} {
			for _, sh := range [][3]int{{33, 2, 19}, {10, 9, 3}, {1, 0, 4}, {50, 5, 1}} {
				n, k, g := sh[0], sh[1], sh[2]
				t.Run(fmt.Sprintf("%v/pivot=%v/N=%d/K=%d/G=%d", lay, pivot, n, k, g), func(t *testing.T) {
					b, err := NewBatch[T](n, k, g, lay)
					require.NoError(t, err)
					sys := make([]*Band[T], g)
					for s := range sys {
						sys[s] = Random[T](n, k, 1.3, rng)
						require.NoError(t, b.SetSystem(s, sys[s]))
					}
					before := append([]T(nil), b.Data...)
					rhs := randVec[T](n*g, rng)
					x := make([]T, n*g)
					res, err := SolveBatch(context.Background(), b, rhs, x, BatchOptions{Pivot: pivot, Workers: 3})
					require.NoError(t, err)
					assert.Empty(t, res.Boosted)
					assert.Equal(t, before, b.Data, "the batch is not modified")
					for s := 0; s < g; s++ {
						xs, bs := make([]T, n), make([]T, n)
						for i := 0; i < n; i++ {
							xs[i], bs[i] = x[b.VecIndex(s, i)], rhs[b.VecIndex(s, i)]
						}
						assert.Less(t, relResidual(sys[s], xs, bs), 10*eps[T](), "system %d", s)
					}
					// in place: x = rhs
					y := append([]T(nil), rhs...)
					_, err = SolveBatch(context.Background(), b, y, y, BatchOptions{Pivot: pivot})
					require.NoError(t, err)
					assert.Equal(t, x, y)
				})
			}
		}
	}
}

// Per-system failures and boosts are reported with the system index and
// row; the other systems are still solved.
func TestSolveBatchFailures(t *testing.T) {
	for _, lay := range []Layout{Contiguous, Interleaved} {
		const n, k, g = 40, 3, 6
		b, err := NewBatch[float64](n, k, g, lay)
		require.NoError(t, err)
		rng := newRNG(22)
		for s := 0; s < g; s++ {
			m := Random[float64](n, k, 1.5, rng)
			switch s {
			case 2:
				m = zeroPivotMatrix[float64](n, k, 11, false, 23) // zero LU pivot at row 11
			case 4:
				m.Set(7, 9, math.NaN())
			}
			require.NoError(t, b.SetSystem(s, m))
		}
		rhs := randVec[float64](n*g, rng)
		x := make([]float64, n*g)

		// default boosting: system 2 boosted at row 11, system 4 fails
		res, err := SolveBatch(context.Background(), b, rhs, x, BatchOptions{})
		var be *BatchError
		require.ErrorAs(t, err, &be)
		require.Len(t, be.Failed, 1)
		assert.Equal(t, 4, be.Failed[0].System)
		assert.Equal(t, [2]int{7, 9}, [2]int{be.Failed[0].Row, be.Failed[0].Col})
		assert.ErrorIs(t, err, ErrNonFinite)
		assert.Contains(t, err.Error(), "system 4")
		require.Len(t, res.Boosted, 1)
		assert.Equal(t, 2, res.Boosted[0].System)
		assert.Equal(t, []int{11}, res.Boosted[0].Rows)
		assert.True(t, math.IsNaN(x[b.VecIndex(4, 0)]))
		assert.False(t, math.IsNaN(x[b.VecIndex(3, 0)]))

		// no boosting: system 2 fails at row 11 too
		_, err = SolveBatch(context.Background(), b, rhs, x, BatchOptions{Factor: FactorOptions{BoostTol: -1}})
		require.ErrorAs(t, err, &be)
		require.Len(t, be.Failed, 2)
		assert.Equal(t, 2, be.Failed[0].System)
		assert.Equal(t, 11, be.Failed[0].Row)
		assert.ErrorIs(t, be.Failed[0], ErrZeroPivot)
		var re *RowError
		require.True(t, errors.As(err, &re))
		assert.Equal(t, 11, re.Row)

		// pivoting solves system 2 exactly
		_, err = SolveBatch(context.Background(), b, rhs, x, BatchOptions{Pivot: true})
		require.ErrorAs(t, err, &be)
		require.Len(t, be.Failed, 1)
		assert.Equal(t, 4, be.Failed[0].System)
		xs, bs := make([]float64, n), make([]float64, n)
		for i := 0; i < n; i++ {
			xs[i], bs[i] = x[b.VecIndex(2, i)], rhs[b.VecIndex(2, i)]
		}
		assert.Less(t, relResidual(b.System(2), xs, bs), 1e-14)
	}
}

func TestSolveBatchErrors(t *testing.T) {
	b, _ := NewBatch[float64](5, 1, 3, Interleaved)
	_, err := SolveBatch(context.Background(), b, make([]float64, 14), make([]float64, 15), BatchOptions{})
	assert.ErrorIs(t, err, ErrShape)
	b.Data = b.Data[:10]
	_, err = SolveBatch(context.Background(), b, make([]float64, 15), make([]float64, 15), BatchOptions{})
	assert.ErrorIs(t, err, ErrShape)

	b, _ = NewBatch[float64](5, 1, 300, Contiguous)
	for s := 0; s < 300; s++ {
		require.NoError(t, b.SetSystem(s, Random[float64](5, 1, 2, newRNG(uint64(s)))))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = SolveBatch(ctx, b, make([]float64, 1500), make([]float64, 1500), BatchOptions{})
	assert.ErrorIs(t, err, context.Canceled)
}

// TestCheckBatch: a device's solutions checked on the host: an accurate
// solution passes, a perturbed one fails with its backward error, a
// skipped system is not checked, a boosted one carries the flag; both
// layouts.
func TestCheckBatch(t *testing.T) {
	rng := newRNG(23)
	for _, lay := range []Layout{Contiguous, Interleaved} {
		const n, k, g = 41, 3, 6
		b, err := NewBatch[float64](n, k, g, lay)
		require.NoError(t, err)
		for s := 0; s < g; s++ {
			require.NoError(t, b.SetSystem(s, Random[float64](n, k, 1.3, rng)))
		}
		rhs := randVec[float64](n*g, rng)
		x := make([]float64, n*g)
		_, err = SolveBatch(context.Background(), b, rhs, x, BatchOptions{Pivot: true})
		require.NoError(t, err)
		failed, err := CheckBatch(b, rhs, x, 0, nil, nil)
		require.NoError(t, err)
		assert.Empty(t, failed, "%v", lay)

		x[b.VecIndex(2, 7)] += 1e-3
		x[b.VecIndex(4, 0)] += 1e-3
		failed, err = CheckBatch(b, rhs, x, 0, func(s int) bool { return s == 4 }, func(s int) bool { return s == 2 })
		require.NoError(t, err)
		require.Len(t, failed, 1, "%v", lay)
		assert.Equal(t, 2, failed[0].System)
		assert.ErrorIs(t, failed[0].Err, tridiag.ErrInaccurate)
		assert.Greater(t, failed[0].Status.BackwardError, 1e-8)
		assert.NotZero(t, failed[0].Status.Flags&tridiag.Boosted)

		_, err = CheckBatch(b, rhs[:n], x, 0, nil, nil)
		assert.ErrorIs(t, err, ErrShape)
	}
}
