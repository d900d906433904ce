package spike

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/bandsolve/bandsolve/banded"
)

func TestPartitions(t *testing.T) {
	for _, c := range []struct{ n, p int }{{1, 1}, {10, 1}, {10, 3}, {1001, 7}, {1297, 16}, {16, 16}, {17, 16}} {
		b := Partitions(c.n, c.p)
		require.Len(t, b, c.p+1)
		assert.Equal(t, 0, b[0])
		assert.Equal(t, c.n, b[c.p])
		q, r := c.n/c.p, c.n%c.p
		for i := 0; i < c.p; i++ {
			want := q
			if i < r {
				want++
			}
			assert.Equal(t, want, b[i+1]-b[i], "n=%d p=%d partition %d", c.n, c.p, i)
		}
	}
	assert.Panics(t, func() { Partitions(5, 0) })
	assert.Panics(t, func() { Partitions(5, 6) })
}

func TestCheckPartitions(t *testing.T) {
	require.NoError(t, CheckPartitions(40, 5, 4)) // 10 rows each = 2K
	require.NoError(t, CheckPartitions(41, 5, 4)) // 11, 10, 10, 10
	require.NoError(t, CheckPartitions(10, 9, 1)) // P = 1: any K < N
	err := CheckPartitions(39, 5, 4)              // 10, 10, 10, 9
	require.ErrorIs(t, err, ErrPartitions)
	assert.Contains(t, err.Error(), "9 rows")
	assert.Contains(t, err.Error(), "2K=10")
	assert.Contains(t, err.Error(), "at most P=3")
	require.ErrorIs(t, CheckPartitions(10, 2, 0), ErrPartitions)
	require.ErrorIs(t, CheckPartitions(10, 2, 11), ErrPartitions)
	require.ErrorIs(t, CheckPartitions(10, 10, 1), banded.ErrShape)
}

func TestChoosePartitions(t *testing.T) {
	assert.Equal(t, 1, ChoosePartitions(1_000_000, 10, 1))
	assert.Equal(t, 1, ChoosePartitions(1000, 2, 8)) // too short to split
	assert.Equal(t, 8, ChoosePartitions(1_000_000, 10, 8))
	assert.Equal(t, 4, ChoosePartitions(4*MinPartitionRowsPerK*500, 500, 16))
	for _, c := range [][3]int{{100, 0, 4}, {5000, 3, 3}, {100000, 200, 64}, {7, 3, 2}} {
		p := ChoosePartitions(c[0], c[1], c[2])
		assert.GreaterOrEqual(t, p, 1)
		require.NoError(t, CheckPartitions(c[0], c[1], p), "%v", c)
	}
	assert.GreaterOrEqual(t, ChoosePartitions(1<<22, 2, 0), 1)
}

// stepCases are (N, K, P) with N not a power of two and K, P over the
// values the brief names.
var stepCases = [][3]int{
	{37, 1, 1}, {101, 1, 7}, {203, 2, 3}, {77, 2, 16}, {111, 5, 2}, {1003, 5, 16},
	{1001, 16, 7}, {517, 16, 16}, {517, 40, 3}, {1297, 40, 16}, {163, 40, 2},
}

// TestSpikesAgainstDense compares V_i⁽ᵇ⁾ and W_{i+1}⁽ᵗ⁾ (exact, and with
// the top 2K×2K block only) with dense solves.
func TestSpikesAgainstDense(t *testing.T) {
	testSpikes[float64](t, 1e-12)
	testSpikes[float32](t, 2e-5)
}

func testSpikes[T Float](t *testing.T, tol float64) {
	for ci, c := range stepCases {
		n, k, p := c[0], c[1], c[2]
		A := banded.Random[T](n, k, 2, newRNG(uint64(ci)))
		for _, l := range []int{0, 2 * k} {
			name := fmt.Sprintf("%T/N=%d/K=%d/P=%d/l=%d", T(0), n, k, p, l)
			f, err := Factor(A, Options{Partitions: p, ULBlock: l})
			require.NoError(t, err, name)
			require.Equal(t, Partitions(n, p), f.Bounds(), name)
			for i := 0; i+1 < p; i++ {
				v, w := f.Spikes(i)
				vr, wr := refSpikes(t, A, f.Bounds(), i, l)
				assert.Less(t, maxDiff(v, colMajor(vr)), tol, "%s V_%d^(b)", name, i)
				assert.Less(t, maxDiff(w, colMajor(wr)), tol, "%s W_%d^(t)", name, i+1)
			}
		}
	}
}

// TestULBlockApproximation: with l = 2K the left spike's top block is that
// of the truncated block, close to the exact one for dominant matrices and
// closer as l grows.
func TestULBlockApproximation(t *testing.T) {
	n, k, p := 1200, 8, 4
	A := banded.Random[float64](n, k, 1.5, newRNG(11))
	exact, err := Factor(A, Options{Partitions: p})
	require.NoError(t, err)
	prev := math.Inf(1)
	for _, l := range []int{k + 1, 2 * k, 4 * k, 8 * k, 300} {
		f, err := Factor(A, Options{Partitions: p, ULBlock: l})
		require.NoError(t, err)
		var worst float64
		for i := 0; i+1 < p; i++ {
			_, w0 := exact.Spikes(i)
			_, w := f.Spikes(i)
			worst = math.Max(worst, maxDiff(w, w0))
		}
		t.Logf("l=%d: max |W_l^(t) − W^(t)| = %.2e", l, worst)
		assert.Less(t, worst, prev, "l=%d", l)
		if l == 2*k {
			assert.Less(t, worst, 1e-2)
			assert.Greater(t, worst, 1e-12, "l = 2K should differ from the exact spike")
		}
		prev = worst
	}
	assert.Less(t, prev, 1e-12, "l = 300 = the whole partition is exact")
}

// TestSolveAgainstDenseTruncated: Solve agrees with truncated SPIKE done
// step by step with dense matrices (Eq. 4, 11, 12), for every case, both
// precisions and both UL variants.
func TestSolveAgainstDenseTruncated(t *testing.T) {
	testSolveDense[float64](t, 1e-11)
	testSolveDense[float32](t, 1e-4)
}

func testSolveDense[T Float](t *testing.T, tol float64) {
	for ci, c := range stepCases {
		n, k, p := c[0], c[1], c[2]
		for _, d := range []float64{1} {
			rng := newRNG(uint64(100 + ci))
			A := banded.Random[T](n, k, d, rng)
			b := randVec[T](n, rng)
			for _, l := range []int{0, 2 * k} {
				name := fmt.Sprintf("%T/N=%d/K=%d/P=%d/d=%g/l=%d", T(0), n, k, p, d, l)
				f, err := Factor(A, Options{Partitions: p, ULBlock: l})
				require.NoError(t, err, name)
				x := make([]T, n)
				require.NoError(t, f.Solve(b, x), name)
				ref := refTruncated(t, A, f.Bounds(), l, toF64(b))
				assert.Less(t, relErr(x, ref), tol, name)
			}
		}
	}
}

func TestReducedMatrixAndDenseLU(t *testing.T) {
	rng := newRNG(5)
	for _, k := range []int{1, 2, 5, 16, 40} {
		w, v := randVec[float64](k*k, rng), randVec[float64](k*k, rng)
		r := make([]float64, k*k)
		reducedMatrix(w, v, k, r)
		W := mat.NewDense(k, k, nil)
		V := mat.NewDense(k, k, nil)
		for q := 0; q < k; q++ {
			for p := 0; p < k; p++ {
				W.Set(p, q, w[q*k+p])
				V.Set(p, q, v[q*k+p])
			}
		}
		var R mat.Dense
		R.Mul(W, V)
		R.Scale(-1, &R)
		for q := 0; q < k; q++ {
			R.Set(q, q, R.At(q, q)+1)
		}
		require.Less(t, maxDiff(r, colMajor(&R)), 1e-13, "K=%d", k)

		piv := make([]int, k)
		boosted, _, ok := denseLU(r, k, piv, 1e-16)
		require.True(t, ok)
		require.Empty(t, boosted)
		b := randVec[float64](k, rng)
		x := append([]float64(nil), b...)
		denseLUSolve(r, k, piv, x)
		ref := solveDense(t, &R, mat.NewVecDense(k, append([]float64(nil), b...)))
		assert.Less(t, relErr(x, ref.RawMatrix().Data), 1e-10, "K=%d", k)
	}
	// An exactly singular matrix gets a boosted pivot, reported.
	a := []float64{1, 2, 2, 4} // columns (1,2) and (2,4)
	piv := make([]int, 2)
	boosted, _, ok := denseLU(a, 2, piv, 1e-8)
	require.True(t, ok)
	assert.Equal(t, []int{1}, boosted)
	a = []float64{1, math.NaN(), 0, 1}
	_, bad, ok := denseLU(a, 2, piv, 1e-8)
	assert.False(t, ok)
	assert.Equal(t, 0, bad)
}

// TestOnePartitionIsLU: P = 1 is the plain banded LU solve, bit for bit.
func TestOnePartitionIsLU(t *testing.T) {
	for _, k := range []int{0, 1, 5, 40} {
		n := 301
		rng := newRNG(uint64(k))
		A := banded.Random[float64](n, k, 0.7, rng)
		b := randVec[float64](n, rng)
		f, err := Factor(A, Options{Partitions: 1})
		require.NoError(t, err)
		x := make([]float64, n)
		require.NoError(t, f.Solve(b, x))
		lu := A.Clone()
		_, err = banded.FactorLU(lu, banded.FactorOptions{})
		require.NoError(t, err)
		y := append([]float64(nil), b...)
		banded.SolveLU(lu, y)
		assert.Equal(t, y, x, "K=%d", k)
	}
}

// TestBlockJacobi: Method BlockJacobi solves each diagonal block alone.
func TestBlockJacobi(t *testing.T) {
	n, k, p := 1001, 5, 7
	rng := newRNG(9)
	A := banded.Random[float64](n, k, 1, rng)
	b := randVec[float64](n, rng)
	f, err := Factor(A, Options{Partitions: p, Method: BlockJacobi})
	require.NoError(t, err)
	assert.Equal(t, BlockJacobi, f.Method())
	v, w := f.Spikes(0)
	assert.Nil(t, v)
	assert.Nil(t, w)
	x := make([]float64, n)
	require.NoError(t, f.Solve(b, x))
	bounds := f.Bounds()
	for i := 0; i < p; i++ {
		r0, r1 := bounds[i], bounds[i+1]
		ref := solveDense(t, sub(A, r0, r1, r0, r1), mat.NewVecDense(r1-r0, append([]float64(nil), b[r0:r1]...)))
		assert.Less(t, relErr(x[r0:r1], ref.RawMatrix().Data), 1e-12, "partition %d", i)
	}
}

// TestDiagonal: K = 0 splits into any number of partitions.
func TestDiagonal(t *testing.T) {
	A, _ := banded.New[float32](10, 0)
	b := make([]float32, 10)
	for i := range b {
		A.Set(i, i, float32(i+1))
		b[i] = float32(2 * (i + 1))
	}
	f, err := Factor(A, Options{Partitions: 10})
	require.NoError(t, err)
	require.NoError(t, f.Solve(b, b))
	for i := range b {
		assert.Equal(t, float32(2), b[i])
	}
}

// TestDirectAccuracy: on diagonally dominant matrices truncated SPIKE is a
// direct solver: small error against LU with partial pivoting.
func TestDirectAccuracy(t *testing.T) {
	n := 3001
	for _, k := range []int{1, 2, 5, 16} {
		for _, d := range []float64{1, 2} {
			rng := newRNG(uint64(31 * k))
			A := banded.Random[float64](n, k, d, rng)
			xs := randVec[float64](n, rng)
			b := make([]float64, n)
			A.MulVec(xs, b)
			ref := pivotSolve(t, A, b)
			for _, p := range []int{2, 3, 7, 16} {
				for _, l := range []int{0, 2 * k} {
					f, err := Factor(A, Options{Partitions: p, ULBlock: l})
					require.NoError(t, err)
					x := make([]float64, n)
					require.NoError(t, f.Solve(b, x))
					e := relErr(x, ref)
					t.Logf("K=%2d d=%g P=%2d l=%2d: ‖x−x_pivot‖/‖x_pivot‖ = %.2e", k, d, p, l, e)
					if l == 0 {
						assert.Less(t, e, 1e-12, "K=%d d=%g P=%d exact UL", k, d, p)
					} else {
						assert.Less(t, e, 1e-2, "K=%d d=%g P=%d l=2K", k, d, p)
					}
				}
				// float32 too: a few float32 unit roundoffs.
				f, err := Factor(banded.Convert[float32](A), Options{Partitions: p})
				require.NoError(t, err)
				x := make([]float32, n)
				require.NoError(t, f.Solve(toF32(b), x))
				assert.Less(t, relErr(x, ref), 1e-5, "float32 K=%d d=%g P=%d", k, d, p)
			}
		}
	}
}

func toF32(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

// increasing asserts that errs grow overall (last ≥ 100·first) and never
// fall by more than a factor 4 from one entry to the next (rounding noise
// at the small end).
func increasing(t *testing.T, errs []float64, what string) {
	t.Helper()
	for i := 1; i < len(errs); i++ {
		assert.GreaterOrEqual(t, errs[i], errs[i-1]/4, "%s: entry %d", what, i)
	}
	assert.Greater(t, errs[len(errs)-1], 100*errs[0], "%s", what)
}

// TestErrorTrends: the truncation error grows as d falls below 1 and as P
// grows (partitions shrink relative to K), as the decay of the spikes says
// (§2.2). Measured against LU with partial pivoting.
func TestErrorTrends(t *testing.T) {
	n, k := 2000, 16
	type problem struct {
		A      *banded.Band[float64]
		b, ref []float64
	}
	problems := map[float64]problem{}
	solveErr := func(d float64, p, l int) float64 {
		pr, ok := problems[d]
		if !ok {
			rng := newRNG(77)
			pr.A = banded.Random[float64](n, k, d, rng)
			xs := randVec[float64](n, rng)
			pr.b = make([]float64, n)
			pr.A.MulVec(xs, pr.b)
			pr.ref = pivotSolve(t, pr.A, pr.b)
			problems[d] = pr
		}
		f, err := Factor(pr.A, Options{Partitions: p, ULBlock: l})
		require.NoError(t, err)
		x := make([]float64, n)
		require.NoError(t, f.Solve(pr.b, x))
		return relErr(x, pr.ref)
	}
	for _, l := range []int{0, 2 * k} {
		// Against d, 16 partitions of 125 rows (≈ 8K).
		ds := []float64{4, 2, 1.5, 1, 0.8, 0.5, 0.3}
		var errs []float64
		for _, d := range ds {
			errs = append(errs, solveErr(d, 16, l))
		}
		t.Logf("l=%d, P=16, d=%v: errors %.1e", l, ds, errs)
		increasing(t, errs, fmt.Sprintf("error vs falling d (l=%d)", l))
		// Against P, d = 1.
		ps := []int{2, 4, 8, 16, 32, 62}
		errs = errs[:0]
		for _, p := range ps {
			errs = append(errs, solveErr(1, p, l))
		}
		t.Logf("l=%d, d=1, P=%v: errors %.1e", l, ps, errs)
		increasing(t, errs, fmt.Sprintf("error vs growing P (l=%d)", l))
	}
}

// TestAliasAndConcurrency: x may be b; concurrent Solves share a
// factorization safely; A is not modified.
func TestAliasAndConcurrency(t *testing.T) {
	n, k, p := 2003, 4, 5
	rng := newRNG(3)
	A := banded.Random[float64](n, k, 1, rng)
	orig := A.Clone()
	f, err := Factor(A, Options{Partitions: p, Workers: 3})
	require.NoError(t, err)
	assert.Equal(t, orig.Data, A.Data, "Factor modified A")
	bs := make([][]float64, 6)
	want := make([][]float64, len(bs))
	for i := range bs {
		bs[i] = randVec[float64](n, rng)
		want[i] = make([]float64, n)
		require.NoError(t, f.Solve(bs[i], want[i]))
	}
	var wg sync.WaitGroup
	for i := range bs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for rep := 0; rep < 3; rep++ {
				x := append([]float64(nil), bs[i]...)
				assert.NoError(t, f.Solve(x, x))
				assert.Equal(t, want[i], x)
			}
		}()
	}
	wg.Wait()
}

// TestBoostReported: a zero pivot at the top of a partition is boosted in
// its LU, one at the bottom in its UL, and both are reported; with
// boosting off they are errors naming the row.
func TestBoostReported(t *testing.T) {
	n, k, p := 600, 3, 4 // partitions of 150 rows: [0,150) [150,300) [300,450) [450,600)
	A := banded.Random[float64](n, k, 2, newRNG(4))
	A.Set(300, 300, 0) // first pivot of partition 2's LU
	A.Set(299, 299, 0) // first pivot of partition 1's UL (bottom-up)
	f, err := Factor(A, Options{Partitions: p})
	require.NoError(t, err)
	boosts := f.Boosts()
	require.Len(t, boosts, 2)
	assert.Equal(t, 1, boosts[0].Partition)
	assert.Equal(t, []int{299}, boosts[0].UL.Rows)
	assert.True(t, boosts[1].LU.Boosted(300))
	assert.Equal(t, 2, boosts[1].Partition)
	assert.Equal(t, 2, f.BoostCount()+len(boosts[0].LU.Rows)-len(boosts[0].LU.Rows))
	assert.Empty(t, f.ReducedBoosts())
	// The factorization still solves (it preconditions A + δA).
	b := randVec[float64](n, newRNG(5))
	x := make([]float64, n)
	require.NoError(t, f.Solve(b, x))
	for _, v := range x {
		require.False(t, math.IsNaN(v))
	}

	_, err = Factor(A, Options{Partitions: p, BoostTol: -1})
	require.ErrorIs(t, err, banded.ErrZeroPivot)
	var re *banded.RowError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, 299, re.Row, "%v", err) // partition 1's UL, the first failure in partition order
	assert.Contains(t, err.Error(), "partition 1")
}

func TestBadInput(t *testing.T) {
	A := banded.Random[float64](100, 5, 1, newRNG(1))

	_, err := Factor[float64](nil, Options{})
	assert.ErrorIs(t, err, banded.ErrShape)
	_, err = Factor(&banded.Band[float64]{N: 5, K: 5, Data: make([]float64, 55)}, Options{})
	assert.ErrorIs(t, err, banded.ErrShape, "K ≥ N")
	_, err = Factor(&banded.Band[float64]{N: 5, K: 1, Data: make([]float64, 14)}, Options{})
	assert.ErrorIs(t, err, banded.ErrShape, "short Data")

	_, err = Factor(A, Options{Partitions: 11}) // 100/11 = 9 rows < 2K = 10
	require.ErrorIs(t, err, ErrPartitions)
	assert.Contains(t, err.Error(), "9 rows")
	assert.Contains(t, err.Error(), "2K=10")
	_, err = Factor(A, Options{Partitions: 10})
	assert.NoError(t, err)

	for _, o := range []Options{{Partitions: -1}, {ULBlock: -1}, {ULBlock: 5}, {Method: 7}, {Workers: -2}} {
		_, err = Factor(A, o)
		assert.ErrorIs(t, err, ErrOption, "%+v", o)
	}
	_, err = NewPreconditioner(A, Options{}, Precision(9))
	assert.ErrorIs(t, err, ErrOption)

	B := A.Clone()
	B.Set(37, 40, math.NaN())
	_, err = Factor(B, Options{Partitions: 4})
	require.ErrorIs(t, err, banded.ErrNonFinite)
	var re *banded.RowError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, 37, re.Row)
	assert.Equal(t, 40, re.Col)
	assert.Contains(t, err.Error(), "row 37")
	B = A.Clone()
	B.Set(60, 60, math.Inf(-1))
	_, err = Factor(B, Options{Partitions: 1})
	require.ErrorAs(t, err, &re)
	assert.Equal(t, 60, re.Row)

	f, err := Factor(A, Options{Partitions: 4})
	require.NoError(t, err)
	b := make([]float64, 100)
	assert.ErrorIs(t, f.Solve(b[:99], b[:99]), banded.ErrShape)
	b[42] = math.NaN()
	err = f.Solve(b, make([]float64, 100))
	require.ErrorIs(t, err, banded.ErrNonFinite)
	assert.Contains(t, err.Error(), "row 42")
	assert.True(t, errors.Is(err, banded.ErrNonFinite))
}

func TestPreconditionerPartitions(t *testing.T) {
	assert.Equal(t, 488, PreconditionerPartitions(1_000_000, 2))
	assert.Equal(t, 312, PreconditionerPartitions(1_000_000, 200)) // 3200 rows: 16K
	assert.Equal(t, 1, PreconditionerPartitions(3000, 2))
	assert.Equal(t, 1, PreconditionerPartitions(10, 9))
}

// The reason for PreconditionerPartitions: at d = 0.2 truncated SPIKE
// with short partitions (67 rows) does not make BiCGStab(2) converge,
// with the partitions it gives it converges in a few steps.
func TestPreconditionerPartitionsConverge(t *testing.T) {
	const n, k = 200_000, 2
	A := banded.Random[float64](n, k, 0.2, rand.New(rand.NewPCG(1, 0xba4d)))
	b := make([]float64, n)
	for i := range b {
		b[i] = math.Sin(float64(i))
	}
	solve := func(p int) IterativeResult {
		x := make([]float64, n)
		res, _ := SolveIterative(context.Background(), A, nil, b, x, IterativeOptions{
			Options: Options{Partitions: p}, Precision: Mixed, Tol: 1e-10, MaxIter: 100,
		})
		return res
	}
	good := solve(PreconditionerPartitions(n, k))
	assert.True(t, good.Converged, "partitions of %d rows", n/PreconditionerPartitions(n, k))
	assert.LessOrEqual(t, good.Iterations, 20)
	short := solve(n / 67)
	assert.False(t, short.Converged, "partitions of 67 rows: %d steps, residual %g", short.Iterations, short.Residual)
}
