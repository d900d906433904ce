package banded

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

// shapes are the (N, K) pairs most tests run: sizes that are not powers of
// two, K = 0, 1, 2, 5, 17, 64 and K = N−1.
func shapes() [][2]int {
	var out [][2]int
	for _, n := range []int{1, 3, 7, 31, 100, 131} {
		ks := []int{0, 1, 2, 5, 17, 64, n - 1}
		seen := map[int]bool{}
		for _, k := range ks {
			if k < 0 || k >= n || seen[k] {
				continue
			}
			seen[k] = true
			out = append(out, [2]int{n, k})
		}
	}
	return out
}

func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)) }

// dense copies a band matrix (any precision) into a float64 gonum matrix.
func dense[T Float](m *Band[T]) *mat.Dense {
	d := mat.NewDense(m.N, m.N, nil)
	for i := 0; i < m.N; i++ {
		for j := max(0, i-m.K); j <= min(m.N-1, i+m.K); j++ {
			d.Set(i, j, float64(m.At(i, j)))
		}
	}
	return d
}

// denseSolve solves A·x = b in float64 with gonum's dense LU (partial
// pivoting), the reference.
func denseSolve(t testing.TB, a *mat.Dense, b []float64) []float64 {
	t.Helper()
	var lu mat.LU
	lu.Factorize(a)
	x := mat.NewVecDense(len(b), nil)
	require.NoError(t, lu.SolveVecTo(x, false, mat.NewVecDense(len(b), append([]float64(nil), b...))))
	return x.RawVector().Data
}

func randVec[T Float](n int, rng *rand.Rand) []T {
	v := make([]T, n)
	for i := range v {
		v[i] = T(2*rng.Float64() - 1)
	}
	return v
}

// relResidual is ‖A·x − b‖∞ / (‖A‖∞·‖x‖∞ + ‖b‖∞), computed in float64.
func relResidual[T Float](m *Band[T], x, b []T) float64 {
	m64 := Convert[float64](m)
	x64, b64 := toF64(x), toF64(b)
	y := make([]float64, m.N)
	m64.MulVec(x64, y)
	var r float64
	for i := range y {
		r = math.Max(r, math.Abs(y[i]-b64[i]))
	}
	return r / (m64.NormInf()*normInf(x64) + normInf(b64))
}

func toF64[T Float](v []T) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

func normInf(v []float64) float64 {
	var r float64
	for _, x := range v {
		r = math.Max(r, math.Abs(x))
	}
	return r
}

// relDiff is ‖x − y‖∞ / ‖y‖∞.
func relDiff[T Float](x []T, y []float64) float64 {
	var d float64
	for i := range x {
		d = math.Max(d, math.Abs(float64(x[i])-y[i]))
	}
	return d / normInf(y)
}

func eps[T Float]() float64 { return epsilon[T]() }
