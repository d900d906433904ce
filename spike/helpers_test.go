package spike

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/bandsolve/bandsolve/banded"
)

func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5bd1e995)) }

func randVec[T Float](n int, rng *rand.Rand) []T {
	v := make([]T, n)
	for i := range v {
		v[i] = T(2*rng.Float64() - 1)
	}
	return v
}

// sub copies A[r0:r1, c0:c1] (any precision) into a float64 gonum matrix.
func sub[T Float](A *banded.Band[T], r0, r1, c0, c1 int) *mat.Dense {
	d := mat.NewDense(r1-r0, c1-c0, nil)
	for i := r0; i < r1; i++ {
		for j := c0; j < c1; j++ {
			if A.InBand(i, j) {
				d.Set(i-r0, j-c0, float64(A.At(i, j)))
			}
		}
	}
	return d
}

// solveDense returns a⁻¹·b by gonum's LU with partial pivoting.
func solveDense(t testing.TB, a, b mat.Matrix) *mat.Dense {
	t.Helper()
	var x mat.Dense
	require.NoError(t, x.Solve(a, b))
	return &x
}

// colMajor turns a K×K gonum matrix into this package's column-major block.
func colMajor(m mat.Matrix) []float64 {
	r, c := m.Dims()
	out := make([]float64, r*c)
	for q := 0; q < c; q++ {
		for p := 0; p < r; p++ {
			out[q*r+p] = m.At(p, q)
		}
	}
	return out
}

// refSpikes computes with dense matrices, for the interface after partition
// i of bounds, V_i⁽ᵇ⁾ (the bottom K rows of A_i⁻¹·[0; B_i]) and W_{i+1}⁽ᵗ⁾
// (the top K rows of Ã⁻¹·[C_{i+1}; 0], Ã the top-left l×l block of A_{i+1},
// the whole block for l = 0).
func refSpikes[T Float](t testing.TB, A *banded.Band[T], bounds []int, i, l int) (v, w *mat.Dense) {
	k := A.K
	r0, r1, r2 := bounds[i], bounds[i+1], bounds[i+2]
	m := r1 - r0
	rhs := mat.NewDense(m, k, nil)
	rhs.Slice(m-k, m, 0, k).(*mat.Dense).Copy(sub(A, r1-k, r1, r1, r1+k))
	V := solveDense(t, sub(A, r0, r1, r0, r1), rhs)
	m2 := r2 - r1
	if l > 0 && l < m2 {
		m2 = l
	}
	rhs = mat.NewDense(m2, k, nil)
	rhs.Slice(0, k, 0, k).(*mat.Dense).Copy(sub(A, r1, r1+k, r1-k, r1))
	W := solveDense(t, sub(A, r1, r1+m2, r1, r1+m2), rhs)
	return mat.DenseCopyOf(V.Slice(m-k, m, 0, k)), mat.DenseCopyOf(W.Slice(0, k, 0, k))
}

// refTruncated is truncated SPIKE done with dense matrices in float64, Eq.
// 4, 11 and 12 written out: the reference for Solve.
func refTruncated[T Float](t testing.TB, A *banded.Band[T], bounds []int, l int, b []float64) []float64 {
	k, p := A.K, len(bounds)-1
	blocks := make([]*mat.Dense, p)
	g := make([]float64, len(b))
	for i := 0; i < p; i++ {
		r0, r1 := bounds[i], bounds[i+1]
		blocks[i] = sub(A, r0, r1, r0, r1)
		gi := solveDense(t, blocks[i], mat.NewVecDense(r1-r0, append([]float64(nil), b[r0:r1]...)))
		copy(g[r0:r1], gi.RawMatrix().Data)
	}
	xt := make([]*mat.VecDense, p) // xt[i+1] = x_{i+1}⁽ᵗ⁾
	xb := make([]*mat.VecDense, p) // xb[i] = x_i⁽ᵇ⁾
	for i := 0; i+1 < p; i++ {
		r1 := bounds[i+1]
		V, W := refSpikes(t, A, bounds, i, l)
		R := mat.NewDense(k, k, nil)
		R.Mul(W, V)
		R.Scale(-1, R)
		for q := 0; q < k; q++ {
			R.Set(q, q, R.At(q, q)+1) // Eq. 11a
		}
		gb := mat.NewVecDense(k, append([]float64(nil), g[r1-k:r1]...))
		gt := mat.NewVecDense(k, append([]float64(nil), g[r1:r1+k]...))
		rhs := mat.NewVecDense(k, nil)
		rhs.MulVec(W, gb)
		rhs.SubVec(gt, rhs) // Eq. 11b
		var x mat.VecDense
		require.NoError(t, x.SolveVec(R, rhs))
		xt[i+1] = &x
		var y mat.VecDense
		y.MulVec(V, &x)
		y.SubVec(gb, &y) // Eq. 11c
		xb[i] = &y
	}
	out := make([]float64, len(b))
	for i := 0; i < p; i++ {
		r0, r1 := bounds[i], bounds[i+1]
		bt := mat.NewVecDense(r1-r0, append([]float64(nil), b[r0:r1]...))
		if i > 0 { // − [C_i·x_{i−1}⁽ᵇ⁾; 0]
			var c mat.VecDense
			c.MulVec(sub(A, r0, r0+k, r0-k, r0), xb[i-1])
			for q := 0; q < k; q++ {
				bt.SetVec(q, bt.AtVec(q)-c.AtVec(q))
			}
		}
		if i < p-1 { // − [0; B_i·x_{i+1}⁽ᵗ⁾]
			var c mat.VecDense
			c.MulVec(sub(A, r1-k, r1, r1, r1+k), xt[i+1])
			for q := 0; q < k; q++ {
				bt.SetVec(r1-r0-k+q, bt.AtVec(r1-r0-k+q)-c.AtVec(q))
			}
		}
		x := solveDense(t, blocks[i], bt)
		copy(out[r0:r1], x.RawMatrix().Data)
	}
	return out
}

// maxDiff is max |a − b| / max(1, max |b|) over two same-size blocks.
func maxDiff[T Float](a []T, b []float64) float64 {
	var d, s float64
	for i := range b {
		d = math.Max(d, math.Abs(float64(a[i])-b[i]))
		s = math.Max(s, math.Abs(b[i]))
	}
	return d / math.Max(1, s)
}

// relErr is ‖x − y‖₂ / ‖y‖₂.
func relErr[T Float](x []T, y []float64) float64 {
	var num, den float64
	for i := range y {
		e := float64(x[i]) - y[i]
		num += e * e
		den += y[i] * y[i]
	}
	return math.Sqrt(num / den)
}

// pivotSolve is the reference solution by banded LU with partial pivoting.
func pivotSolve(t testing.TB, A *banded.Band[float64], b []float64) []float64 {
	t.Helper()
	f, err := banded.FactorPivot(A)
	require.NoError(t, err)
	x := append([]float64(nil), b...)
	f.Solve(x)
	return x
}

func eps[T Float]() float64 {
	var z T
	if _, ok := any(z).(float32); ok {
		return 0x1p-23
	}
	return 0x1p-52
}

func toF64[T Float](v []T) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}
