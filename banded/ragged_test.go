package banded

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/tridiag"
)

// raggedCase fills a ragged batch of half-bandwidth k: orders k+1, k+2,
// k+3 and g more drawn from k+1 … 600, systems of every kind by index
// mod 6: dominant (0), weakly dominant (1), a zero leading pivot (2,
// boosted without pivoting), a zero column (3, singular), a NaN entry
// (4), not dominant (5).
func raggedCase[T Float](t *testing.T, rng *rand.Rand, k, g int) (*RaggedBatch[T], []T) {
	t.Helper()
	lengths := []int{k + 1, k + 2, k + 3}
	for range g {
		lengths = append(lengths, k+1+rng.IntN(600-k))
	}
	rng.Shuffle(len(lengths), func(i, j int) { lengths[i], lengths[j] = lengths[j], lengths[i] })
	b, err := NewRaggedBatch[T](k, lengths)
	require.NoError(t, err)
	for s, n := range lengths {
		var m *Band[T]
		switch s % 6 {
		case 0:
			m = Random[T](n, k, 2, rng)
		case 1:
			m = Random[T](n, k, 1, rng)
		case 2:
			m = Random[T](n, k, 1.5, rng)
			m.Set(0, 0, 0)
		case 3:
			m = Random[T](n, k, 1.5, rng)
			j := rng.IntN(n)
			for i := max(0, j-k); i <= min(n-1, j+k); i++ {
				m.Set(i, j, 0)
			}
		case 4:
			m = Random[T](n, k, 2, rng)
			i := rng.IntN(n)
			m.Set(i, i, T(math.NaN()))
		default:
			m = Random[T](n, k, 0.3, rng)
		}
		require.NoError(t, b.SetSystem(s, m))
	}
	return b, randVec[T](b.Rows(), rng)
}

// solveEachAlone solves every system of b with SolveBatch on a batch of
// that one system, and returns what each gave: x, the boosts and the
// failures, with the system's index in b.
func solveEachAlone[T Float](t *testing.T, b *RaggedBatch[T], rhs []T, opt BatchOptions) ([]T, BatchResult, []SystemError) {
	t.Helper()
	x := make([]T, len(rhs))
	var res BatchResult
	var failed []SystemError
	off := b.Offsets()
	for g, n := range b.Lengths() {
		one, err := NewBatch[T](n, b.K(), 1, Contiguous)
		require.NoError(t, err)
		require.NoError(t, one.SetSystem(0, b.System(g)))
		r, err := SolveBatch(context.Background(), one, rhs[off[g]:off[g+1]], x[off[g]:off[g+1]], opt)
		for _, sb := range r.Boosted {
			sb.System = g
			res.Boosted = append(res.Boosted, sb)
		}
		if err != nil {
			var be *BatchError
			require.ErrorAs(t, err, &be)
			require.Len(t, be.Failed, 1)
			f := be.Failed[0]
			f.System = g
			failed = append(failed, f)
		}
	}
	return x, res, failed
}

func f64bits[T Float](v []T) []uint64 {
	out := make([]uint64, len(v))
	for i, x := range v {
		out[i] = math.Float64bits(float64(x))
	}
	return out
}

// TestSolveRaggedLikeSolveBatch: every system of a ragged batch gets what
// SolveBatch gives a batch of that one system, bit for bit: solution,
// boosts and refinement, failures with their row, column and status, for
// both factorizations, refinement modes, boosting off and the check, in
// place or not.
func TestSolveRaggedLikeSolveBatch(t *testing.T) {
	t.Run("float64", testSolveRaggedLikeSolveBatch[float64])
	t.Run("float32", testSolveRaggedLikeSolveBatch[float32])
}

func testSolveRaggedLikeSolveBatch[T Float](t *testing.T) {
	rng := newRNG(77)
	opts := map[string]BatchOptions{
		"lu":          {},
		"pivot":       {Pivot: true},
		"lu/check":    {Check: true},
		"pivot/check": {Pivot: true, Check: true},
		"lu/always":   {Refine: RefineOptions{Mode: RefineAlways}},
		"lu/off":      {Refine: RefineOptions{Mode: RefineOff}},
		"lu/noboost":  {Factor: FactorOptions{BoostTol: -1}},
		// A tolerance no refinement reaches: every system fails it.
		"lu/unreachable/check": {Refine: RefineOptions{Mode: RefineAlways, Tol: 1e-300, MaxIter: 1}, Check: true},
	}
	sawFailed, sawBoosted, sawRefined := map[string]bool{}, 0, 0
	for _, k := range []int{0, 1, 3, 8} {
		b, rhs := raggedCase[T](t, rng, k, 15)
		data := f64bits(b.Data)
		for name, opt := range opts {
			for _, inPlace := range []bool{false, true} {
				name := fmt.Sprintf("K=%d/%s/in-place=%v", k, name, inPlace)
				wantX, wantRes, wantFailed := solveEachAlone(t, b, rhs, opt)
				for _, f := range wantFailed {
					for _, e := range []error{ErrNonFinite, ErrSingular, ErrZeroPivot, ErrNotRefined, tridiag.ErrIllConditioned} {
						if errors.Is(f.Err, e) {
							sawFailed[e.Error()] = true
						}
					}
				}
				for _, sb := range wantRes.Boosted {
					sawBoosted++
					if sb.Refine.Refined() {
						sawRefined++
					}
				}
				opt.Workers = 3
				x := make([]T, len(rhs))
				r := rhs
				if inPlace {
					r = append([]T(nil), rhs...)
					x = r
				}
				res, err := SolveRagged(context.Background(), b, r, x, opt)
				require.Equal(t, f64bits(wantX), f64bits(x), name)
				assert.Equal(t, wantRes, res, name)
				if len(wantFailed) == 0 {
					require.NoError(t, err, name)
				} else {
					var be *BatchError
					require.ErrorAs(t, err, &be, name)
					assert.Equal(t, b.Systems(), be.G, name)
					require.Len(t, be.Failed, len(wantFailed), name)
					for i, f := range wantFailed {
						got := be.Failed[i]
						assert.Equal(t, [3]int{f.System, f.Row, f.Col}, [3]int{got.System, got.Row, got.Col}, name)
						assert.Equal(t, f.Err.Error(), got.Err.Error(), name)
						assert.Equal(t, f.Status, got.Status, name)
					}
				}
				assert.Equal(t, data, f64bits(b.Data), "%s: the batch is not modified", name)
			}
		}
	}
	t.Logf("failures seen: %v; %d systems boosted, %d of them refined", sawFailed, sawBoosted, sawRefined)
	assert.Len(t, sawFailed, 5, "the cases cover every kind of failure")
	assert.Positive(t, sawRefined)
}

// TestSolveRaggedFailures names the system and its row: a NaN entry and a
// singular column under pivoting.
func TestSolveRaggedFailures(t *testing.T) {
	lengths := []int{4, 9, 3, 12, 5}
	b, err := NewRaggedBatch[float64](2, lengths)
	require.NoError(t, err)
	rng := newRNG(5)
	for g, n := range lengths {
		require.NoError(t, b.SetSystem(g, Random[float64](n, 2, 2, rng)))
	}
	b.System(1).Set(6, 5, math.NaN())
	sing := b.System(3)
	for i := 5; i <= 9; i++ {
		sing.Set(i, 7, 0)
	}
	rhs := randVec[float64](b.Rows(), rng)
	x := make([]float64, len(rhs))
	_, err = SolveRagged(context.Background(), b, rhs, x, BatchOptions{Pivot: true})
	var be *BatchError
	require.ErrorAs(t, err, &be)
	require.Len(t, be.Failed, 2)
	assert.Equal(t, [3]int{1, 6, 5}, [3]int{be.Failed[0].System, be.Failed[0].Row, be.Failed[0].Col})
	assert.ErrorIs(t, be.Failed[0].Err, ErrNonFinite)
	assert.Equal(t, [3]int{3, 7, 7}, [3]int{be.Failed[1].System, be.Failed[1].Row, be.Failed[1].Col})
	assert.ErrorIs(t, be.Failed[1].Err, ErrSingular)
	assert.Equal(t, []int{0, 7, 0, 8, 0}, be.Status())
	off := b.Offsets()
	for g := range lengths {
		for i := off[g]; i < off[g+1]; i++ {
			assert.Equal(t, g == 1 || g == 3, math.IsNaN(x[i]), "system %d, row %d", g, i-off[g])
		}
		if g != 1 && g != 3 {
			m := b.System(g)
			assert.Less(t, relResidual(m, x[off[g]:off[g+1]], rhs[off[g]:off[g+1]]), 1e-14, "system %d", g)
		}
	}
}

func TestRaggedBatchShape(t *testing.T) {
	b, err := NewRaggedBatch[float32](1, []int{2, 5, 3})
	require.NoError(t, err)
	assert.Equal(t, []int{0, 2, 7, 10}, b.Offsets())
	assert.Equal(t, []int{2, 5, 3}, b.Lengths())
	assert.Equal(t, 10, b.Rows())
	assert.Equal(t, 3, b.Systems())
	assert.Equal(t, 1, b.K())
	assert.Equal(t, 8, b.VecIndex(2, 1))
	require.Len(t, b.Data, 30)
	s := b.System(1)
	s.Set(3, 4, 42)
	assert.Equal(t, float32(42), b.Data[3*2+s.Index(3, 4)], "System is a view")
	m, _ := New[float32](3, 1)
	m.Set(2, 2, 7)
	require.NoError(t, b.SetSystem(2, m))
	assert.Equal(t, float32(7), b.System(2).At(2, 2))
	assert.ErrorIs(t, b.SetSystem(1, m), ErrShape, "order differs")
	assert.ErrorIs(t, b.SetSystem(3, m), ErrShape)
	assert.Panics(t, func() { b.System(3) })

	for _, tc := range []struct {
		k       int
		lengths []int
		msg     string
	}{
		{-1, []int{3}, "half-bandwidth K=-1"},
		{1, nil, "no systems"},
		{2, []int{5, 3, 2, 6}, "system 2 of the ragged batch"},
		{0, []int{4, 0}, "system 1 of the ragged batch"},
		{3, []int{math.MaxInt / 8, math.MaxInt / 8}, "systems 0…1 of the ragged batch"},
	} {
		_, err := NewRaggedBatch[float64](tc.k, tc.lengths)
		require.ErrorIs(t, err, ErrShape, tc.msg)
		assert.Contains(t, err.Error(), tc.msg)
	}
	_, err = NewRaggedBatch[float64](1, []int{1 << 40, 1 << 40})
	assert.ErrorIs(t, err, ErrMemory)

	ctx := context.Background()
	rhs := make([]float32, 10)
	_, err = SolveRagged(ctx, b, rhs[:9], rhs, BatchOptions{})
	assert.ErrorIs(t, err, ErrShape)
	_, err = SolveRagged(ctx, b, rhs, rhs, BatchOptions{CheckFinite: true})
	assert.ErrorIs(t, err, ErrOption)
	_, err = SolveRagged(ctx, b, rhs, rhs, BatchOptions{Refine: RefineOptions{Tol: -1}})
	assert.ErrorIs(t, err, ErrOption)
	_, err = SolveRagged(ctx, &RaggedBatch[float32]{}, rhs, rhs, BatchOptions{})
	assert.ErrorIs(t, err, ErrShape)
	b.Data = b.Data[:29]
	_, err = SolveRagged(ctx, b, rhs, rhs, BatchOptions{})
	assert.ErrorIs(t, err, ErrShape)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	b.Data = make([]float32, 30)
	_, err = SolveRagged(cctx, b, rhs, rhs, BatchOptions{})
	assert.ErrorIs(t, err, context.Canceled)
}

// BenchmarkSolveRagged: 512 pentadiagonal float32 systems of orders drawn
// from U(10, 4096), as a ragged batch and padded with identity rows to the
// longest order in one Batch (rows/s count the systems' own rows), and,
// for comparison, a Batch of one order with the same rows in all.
func BenchmarkSolveRagged(b *testing.B) {
	const k, G = 2, 512
	rng := newRNG(3)
	lengths := make([]int, G)
	longest := 0
	for g := range lengths {
		lengths[g] = 10 + rng.IntN(4096-10+1)
		longest = max(longest, lengths[g])
	}
	rb, err := NewRaggedBatch[float32](k, lengths)
	require.NoError(b, err)
	padded, err := NewBatch[float32](longest, k, G, Contiguous)
	require.NoError(b, err)
	for g, n := range lengths {
		m := Random[float32](n, k, 1, rng)
		require.NoError(b, rb.SetSystem(g, m))
		p, _ := New[float32](longest, k)
		for j := range n {
			for i := max(0, j-k); i <= min(n-1, j+k); i++ {
				p.Set(i, j, m.At(i, j))
			}
		}
		for i := n; i < longest; i++ {
			p.Set(i, i, 1)
		}
		require.NoError(b, padded.SetSystem(g, p))
	}
	rows := rb.Rows()
	rhs := randVec[float32](rows, rng)
	x := make([]float32, rows)
	prhs, px := make([]float32, longest*G), make([]float32, longest*G)
	run := func(b *testing.B, solve func() error) {
		for b.Loop() {
			if err := solve(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds()/1e6, "MRows/s")
	}
	b.Run("ragged", func(b *testing.B) {
		run(b, func() error { _, err := SolveRagged(context.Background(), rb, rhs, x, BatchOptions{}); return err })
	})
	b.Run("padded", func(b *testing.B) {
		run(b, func() error { _, err := SolveBatch(context.Background(), padded, prhs, px, BatchOptions{}); return err })
	})
	uniform, err := NewBatch[float32](rows/G, k, G, Contiguous)
	require.NoError(b, err)
	for g := range G {
		require.NoError(b, uniform.SetSystem(g, Random[float32](rows/G, k, 1, rng)))
	}
	urhs, ux := randVec[float32](rows/G*G, rng), make([]float32, rows/G*G)
	b.Run("uniform", func(b *testing.B) {
		run(b, func() error {
			_, err := SolveBatch(context.Background(), uniform, urhs, ux, BatchOptions{})
			return err
		})
	})
}
