package banded

import (
	"math"
	"math/rand/v2"
)

// Clone returns a deep copy of m.
func (m *Band[T]) Clone() *Band[T] {
	return &Band[T]{N: m.N, K: m.K, Data: append([]T(nil), m.Data...)}
}

// diagRange returns, for storage column s (offset d = s−K, a_ij with
// i = j+d), the range [j0, j1) of columns j inside the matrix.
func (m *Band[T]) diagRange(s int) (d, j0, j1 int) {
	d = s - m.K
	return d, max(0, -d), min(m.N, m.N-d)
}

// MulVec computes y = A·x (len(x) = len(y) = N; y must not overlap x). It
// panics with an error wrapping ErrShape on other lengths.
func (m *Band[T]) MulVec(x, y []T) {
	g := m.general()
	g.MulVec(x, y)
}

// NormMax is max |a_ij| (the max-abs norm, which boosting scales with).
func (m *Band[T]) NormMax() float64 {
	g := m.general()
	return g.NormMax()
}

// Norm1 is the 1-norm, the largest column sum of |a_ij|.
func (m *Band[T]) Norm1() float64 {
	g := m.general()
	return g.Norm1()
}

// NormInf is the ∞-norm, the largest row sum of |a_ij|.
func (m *Band[T]) NormInf() float64 {
	g := m.general()
	return g.NormInf()
}

// NormFrob is the Frobenius norm, sqrt(Σ |a_ij|²).
func (m *Band[T]) NormFrob() float64 {
	var scale, ssq float64 = 0, 1
	for s := 0; s <= 2*m.K; s++ {
		_, j0, j1 := m.diagRange(s)
		for _, v := range m.Data[s*m.N+j0 : s*m.N+j1] {
			if v == 0 {
				continue
			}
			a := magnitude(v)
			if a > scale {
				ssq = 1 + ssq*(scale/a)*(scale/a)
				scale = a
			} else {
				ssq += (a / scale) * (a / scale)
			}
		}
	}
	return scale * math.Sqrt(ssq)
}

// DiagonalDominance returns the degree of diagonal dominance d of Li et al.
// (2014, footnote 2): the largest d ≥ 0 with |a_ii| ≥ d·Σ_{j≠i} |a_ij| for
// every row i, that is min_i |a_ii| / Σ_{j≠i}|a_ij|. Rows without
// off-diagonal entries impose nothing; when no row has any, it is +Inf.
// The matrix is diagonally dominant when d ≥ 1.
func DiagonalDominance[T Float](m *Band[T]) float64 {
	g := m.general()
	return DiagonalDominanceGeneral(&g)
}

// Random returns an N×N matrix of half-bandwidth K like the synthetic test
// matrices of Li et al. (2014, §5): every off-diagonal entry of the band
// independently uniform in (−1, 1), and the diagonal entry of row i set to
// a_ii = d·Σ_{j≠i}|a_ij| (positive), so every row has ratio exactly d and
// DiagonalDominance returns d (up to rounding in float32). A row whose
// off-diagonal entries are all zero (only possible for K = 0 or N = 1)
// gets a_ii = 1. Shapes as for New; it panics on a bad shape or d < 0.
func Random[T Float](n, k int, d float64, rng *rand.Rand) *Band[T] {
	m, err := New[T](n, k)
	if err != nil {
		panic(err)
	}
	if !(d >= 0) {
		panic("banded: Random with negative or NaN degree of dominance")
	}
	for s := 0; s <= 2*k; s++ {
		if s == k {
			continue
		}
		_, j0, j1 := m.diagRange(s)
		for j := j0; j < j1; j++ {
			m.Data[s*n+j] = T(2*rng.Float64() - 1) // [−1, 1); −1 has probability 2⁻⁵³
		}
	}
	setDominance(m, d)
	return m
}

// RandomSymmetric is Random with the upper triangle the transpose of the
// lower one (a_ij = a_ji, the lower triangle Random's), the diagonal set
// afterwards to d times each row's off-diagonal magnitudes: for d > 1 a
// symmetric positive definite band (FactorCholesky).
func RandomSymmetric[T Float](n, k int, d float64, rng *rand.Rand) *Band[T] {
	m := Random[T](n, k, d, rng)
	for t := 1; t <= k; t++ {
		for j := 0; j+t < n; j++ {
			m.Data[(k-t)*n+j+t] = m.Data[(k+t)*n+j] // a_{j, j+t} = a_{j+t, j}
		}
	}
	setDominance(m, d)
	return m
}

// setDominance sets each diagonal entry of m to d times its row's
// off-diagonal magnitudes (1 for a row without any).
func setDominance[T Float](m *Band[T], d float64) {
	n, k := m.N, m.K
	for i := 0; i < n; i++ {
		var off float64
		for j := max(0, i-k); j <= min(n-1, i+k); j++ {
			if j != i {
				off += math.Abs(float64(m.Data[m.Index(i, j)]))
			}
		}
		if off == 0 {
			m.Data[m.Index(i, i)] = 1
		} else {
			m.Data[m.Index(i, i)] = T(d * off)
		}
	}
}

// Convert returns a copy of m in another precision (float64 → float32
// rounds to nearest; values beyond float32's range become ±Inf).
func Convert[T2, T1 Float](m *Band[T1]) *Band[T2] {
	out := &Band[T2]{N: m.N, K: m.K, Data: make([]T2, len(m.Data))}
	for i, v := range m.Data {
		out.Data[i] = T2(v)
	}
	return out
}
