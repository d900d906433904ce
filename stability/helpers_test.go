package stability

import (
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
