package sparse

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed5a115e)) }

// randomCOO returns an n×m COO with nnz random entries (repeats likely).
func randomCOO(n, m, nnz int, rng *rand.Rand) *COO {
	c := NewCOO(n, m, nnz)
	for range nnz {
		c.Add(rng.IntN(n), rng.IntN(m), 2*rng.Float64()-1)
	}
	return c
}

// denseOf returns the dense matrix of a COO, summing repeats.
func denseOf(c *COO) *mat.Dense {
	d := mat.NewDense(c.N, c.M, nil)
	for e, v := range c.Val {
		d.Set(c.Row[e], c.Col[e], d.At(c.Row[e], c.Col[e])+v)
	}
	return d
}

func mustCSR(t testing.TB, c *COO) *CSR {
	t.Helper()
	a, err := c.ToCSR()
	require.NoError(t, err)
	require.NoError(t, a.Check())
	return a
}

// requireDenseEqual compares two dense matrices entry by entry.
func requireDenseEqual(t testing.TB, want, got mat.Matrix, tol float64) {
	t.Helper()
	r, c := want.Dims()
	gr, gc := got.Dims()
	require.Equal(t, []int{r, c}, []int{gr, gc})
	for i := range r {
		for j := range c {
			require.InDelta(t, want.At(i, j), got.At(i, j), tol, "entry (%d, %d)", i, j)
		}
	}
}

// denseSolve solves a x = b densely with gonum's LU.
func denseSolve(t testing.TB, a mat.Matrix, b []float64) []float64 {
	t.Helper()
	n, _ := a.Dims()
	var x mat.VecDense
	require.NoError(t, x.SolveVec(a, mat.NewVecDense(n, append([]float64(nil), b...))))
	return x.RawVector().Data
}

// relResidual is ‖A x − b‖∞ / (‖A‖∞‖x‖∞ + ‖b‖∞).
func relResidual(t testing.TB, a *CSR, x, b []float64) float64 {
	t.Helper()
	y := make([]float64, a.N)
	require.NoError(t, a.MulVec(x, y))
	num, an, xn, bn := 0.0, 0.0, 0.0, 0.0
	for i := range a.N {
		num = math.Max(num, math.Abs(y[i]-b[i]))
		bn = math.Max(bn, math.Abs(b[i]))
		s := 0.0
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			s += math.Abs(a.Val[p])
		}
		an = math.Max(an, s)
	}
	for _, v := range x {
		xn = math.Max(xn, math.Abs(v))
	}
	return num / (an*xn + bn)
}

func randVec(n int, rng *rand.Rand) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = 2*rng.Float64() - 1
	}
	return v
}
