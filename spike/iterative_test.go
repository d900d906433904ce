package spike

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/krylov"
)

// manufactured returns b = A·x̃ for a random x̃.
func manufactured(A *banded.Band[float64], seed uint64) []float64 {
	xs := randVec[float64](A.N, newRNG(seed))
	b := make([]float64, A.N)
	A.MulVec(xs, b)
	return b
}

// trueResidual is ‖b − A·x‖₂/‖b‖₂.
func trueResidual(A Operator, b, x []float64) float64 {
	y := make([]float64, len(b))
	A.MulVec(x, y)
	var num, den float64
	for i := range b {
		num += (b[i] - y[i]) * (b[i] - y[i])
		den += b[i] * b[i]
	}
	return math.Sqrt(num / den)
}

// TestFig4Trend reproduces the trend of Fig. 4 of the paper on a smaller
// problem (N = 2000, K = 10, P = 40: partitions of 5K rows, as the paper's
// N = 100 000, K = 500, P = 40): truncated SPIKE needs fewer BiCGStab(2)
// iterations than the block-diagonal (block-Jacobi) preconditioner on the
// same partitions at every d, and both need fewer than no preconditioner.
func TestFig4Trend(t *testing.T) {
	n, k, p := 2000, 10, 40
	ds := []float64{0.3, 0.4, 0.5, 0.8, 1, 1.2}
	iters := map[string][]int{}
	for _, d := range ds {
		A := banded.Random[float64](n, k, d, newRNG(3))
		b := manufactured(A, 4)
		for _, c := range []struct {
			name string
			o    IterativeOptions
		}{
			{"spike", IterativeOptions{Options: Options{Partitions: p, ULBlock: PaperULBlock(k)}}},
			{"spike-mixed", IterativeOptions{Options: Options{Partitions: p, ULBlock: PaperULBlock(k)}, Precision: Mixed}},
			{"block-jacobi", IterativeOptions{Options: Options{Partitions: p, Method: BlockJacobi}}},
			{"none", IterativeOptions{NoPreconditioner: true, MaxIter: 300}},
		} {
			x := make([]float64, n)
			c.o.Tol = 1e-10
			r, err := SolveIterative(context.Background(), A, nil, b, x, c.o)
			it := r.Iterations
			if err != nil {
				require.NotEqual(t, "spike", c.name, "d=%g: %v", d, err)
				it = math.MaxInt // did not converge
			} else {
				assert.LessOrEqual(t, trueResidual(A, b, x), 1.01e-10, "%s d=%g", c.name, d)
			}
			iters[c.name] = append(iters[c.name], it)
		}
	}
	for _, name := range []string{"spike", "spike-mixed", "block-jacobi", "none"} {
		t.Logf("d=%v %-12s BiCG steps %v", ds, name, fmtIters(iters[name]))
	}
	for i, d := range ds {
		assert.Less(t, iters["spike"][i], iters["block-jacobi"][i], "d=%g: SPIKE vs block-Jacobi", d)
		assert.Less(t, iters["block-jacobi"][i], iters["none"][i], "d=%g: block-Jacobi vs none", d)
	}
	// Fewer iterations as d grows (Fig. 4), for the coupled and the
	// uncoupled preconditioner alike.
	last := len(ds) - 1
	assert.Greater(t, iters["spike"][0], iters["spike"][last])
	assert.Greater(t, iters["block-jacobi"][0], iters["block-jacobi"][last])
}

func fmtIters(v []int) string {
	s := "["
	for i, x := range v {
		if i > 0 {
			s += " "
		}
		if x == math.MaxInt {
			s += "—"
		} else {
			s += fmt.Sprint(x)
		}
	}
	return s + "]"
}

// TestNonDominant: d = 0.5, where truncated SPIKE alone is not a solver,
// converges with it as the preconditioner, in float64 and mixed precision,
// and the mixed one reaches float64 accuracy.
func TestNonDominant(t *testing.T) {
	n, k, p := 3001, 10, 40
	A := banded.Random[float64](n, k, 0.5, newRNG(8))
	b := manufactured(A, 9)
	for _, prec := range []Precision{F64, Mixed} {
		x := make([]float64, n)
		r, err := SolveIterative(context.Background(), A, nil, b, x, IterativeOptions{
			Options: Options{Partitions: p, ULBlock: 2 * k}, Precision: prec, Tol: 1e-12, History: true,
		})
		require.NoError(t, err, prec.String())
		assert.True(t, r.Converged)
		assert.LessOrEqual(t, r.Residual, 1e-12)
		assert.LessOrEqual(t, trueResidual(A, b, x), 1.01e-12, prec.String())
		assert.Len(t, r.History, r.Iterations+1)
		assert.Equal(t, Partitions(n, p), r.Bounds)
		assert.Positive(t, r.FactorTime)
		t.Logf("d=0.5 %s: %d BiCG steps, residual %.2e", prec, r.Iterations, r.Residual)
	}
	// Truncated SPIKE alone leaves an error there.
	f, err := Factor(A, Options{Partitions: p, ULBlock: 2 * k})
	require.NoError(t, err)
	x := make([]float64, n)
	require.NoError(t, f.Solve(b, x))
	res := trueResidual(A, b, x)
	t.Logf("d=0.5 direct truncated SPIKE: residual %.2e", res)
	assert.Greater(t, res, 1e-8)
}

// TestSparseLikeOperator: the operator A is wider than the band M the
// preconditioner factors (as after drop-off of a reordered sparse
// matrix), given as a function.
func TestSparseLikeOperator(t *testing.T) {
	n, k := 2500, 8
	A := banded.Random[float64](n, k, 1.2, newRNG(12))
	// M keeps the inner 4 diagonals on each side.
	M, err := banded.New[float64](n, 4)
	require.NoError(t, err)
	for i := 0; i < n; i++ {
		for j := max(0, i-4); j <= min(n-1, i+4); j++ {
			M.Set(i, j, A.At(i, j))
		}
	}
	b := manufactured(A, 13)
	op := MulVecFunc(A.MulVec)
	x := make([]float64, n)
	r, err := SolveIterative(context.Background(), op, M, b, x, IterativeOptions{Options: Options{Partitions: 5}, Tol: 1e-11})
	require.NoError(t, err)
	assert.LessOrEqual(t, trueResidual(A, b, x), 1.01e-11)
	x0 := make([]float64, n)
	r0, err := SolveIterative(context.Background(), op, M, b, x0, IterativeOptions{NoPreconditioner: true, Tol: 1e-11})
	require.NoError(t, err)
	assert.Less(t, r.Iterations, r0.Iterations)
	assert.Nil(t, r0.Bounds)

	_, err = SolveIterative(context.Background(), op, nil, b, x, IterativeOptions{})
	assert.ErrorIs(t, err, ErrOption)
	boom := errors.New("boom")
	_, err = SolveIterative(context.Background(), MulVecFunc(func(x, y []float64) { panic(boom) }), M, b, x, IterativeOptions{})
	assert.ErrorIs(t, err, boom)
	_, err = SolveIterative(context.Background(), A, nil, b[:10], x, IterativeOptions{})
	assert.ErrorIs(t, err, banded.ErrShape)
	_, err = SolveIterative(context.Background(), A, nil, b, x, IterativeOptions{Options: Options{Partitions: n}})
	assert.ErrorIs(t, err, ErrPartitions)
	_, err = SolveIterative(context.Background(), A, nil, b, x, IterativeOptions{MaxIter: 1, Tol: 1e-15, NoPreconditioner: true})
	assert.ErrorIs(t, err, krylov.ErrNotConverged)
}

// TestPreconditionerApply: Apply leaves r unchanged, matches Solve in
// float64 and is close to it in mixed precision, and honours ctx.
func TestPreconditionerApply(t *testing.T) {
	n := 1500
	A := banded.Random[float64](n, 6, 1, newRNG(21))
	r := randVec[float64](n, newRNG(22))
	keep := append([]float64(nil), r...)
	p64, err := NewPreconditioner(A, Options{Partitions: 3}, F64)
	require.NoError(t, err)
	p32, err := NewPreconditioner(A, Options{Partitions: 3}, Mixed)
	require.NoError(t, err)
	assert.Equal(t, F64, p64.Precision())
	assert.Equal(t, Mixed, p32.Precision())
	require.NotNil(t, p64.Float64())
	require.NotNil(t, p32.Float32())
	assert.Nil(t, p64.Float32())
	assert.Equal(t, p64.Bounds(), p32.Bounds())

	z64, z32 := make([]float64, n), make([]float64, n)
	require.NoError(t, p64.Apply(context.Background(), r, z64))
	require.NoError(t, p32.Apply(context.Background(), r, z32))
	assert.Equal(t, keep, r)
	want := make([]float64, n)
	require.NoError(t, p64.Float64().Solve(r, want))
	assert.Equal(t, want, z64)
	assert.Less(t, relErr(z32, z64), 1e-5)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, p64.Apply(ctx, r, z64), context.Canceled)
}
