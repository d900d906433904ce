package stability

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// dense returns m as a gonum dense matrix.
func dense(m Matrix) *mat.Dense {
	n := m.N()
	d := mat.NewDense(n, n, nil)
	for i := range n {
		d.Set(i, i, m.B[i])
		if i > 0 {
			d.Set(i, i-1, m.A[i])
		}
		if i < n-1 {
			d.Set(i, i+1, m.C[i])
		}
	}
	return d
}

// singularValues returns the singular values of a, largest first.
func singularValues(a mat.Matrix) []float64 {
	var svd mat.SVD
	if !svd.Factorize(a, mat.SVDNone) {
		panic("svd failed")
	}
	return svd.Values(nil)
}

// toF64 converts a slice to float64.
func toF64[T float32 | float64](s []T) []float64 {
	out := make([]float64, len(s))
	for i, v := range s {
		out[i] = float64(v)
	}
	return out
}

func equalSlices(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func equalMatrices(a, b Matrix) bool {
	return equalSlices(a.A, b.A) && equalSlices(a.B, b.B) && equalSlices(a.C, b.C)
}

// condInf returns the condition number ‖A‖_∞·‖A⁻¹‖_∞ of m, with the
// columns of A⁻¹ computed by the big.Float elimination at prec bits (exact
// to far below the leading digits when 2^prec ≫ the condition number). It
// returns +Inf when the elimination meets a zero pivot.
func condInf(m Matrix, prec uint) float64 {
	n := m.N()
	normA := 0.0
	for i := range n {
		normA = math.Max(normA, math.Abs(m.A[i])+math.Abs(m.B[i])+math.Abs(m.C[i]))
	}
	rowSums := make([]float64, n)
	e := make([]float64, n)
	for j := range n {
		e[j] = 1
		x, ok := gepp(m.A, m.B, m.C, e, prec)
		e[j] = 0
		if !ok {
			return math.Inf(1)
		}
		for i := range x {
			v, _ := x[i].Float64()
			rowSums[i] += math.Abs(v)
		}
	}
	normInv := 0.0
	for _, s := range rowSums {
		normInv = math.Max(normInv, s)
	}
	return normA * normInv
}
