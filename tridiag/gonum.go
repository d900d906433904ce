package tridiag

import (
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// FromGonum returns the coefficient arrays of a gonum tridiagonal matrix
// in this package's convention (a[0] = 0, c[n−1] = 0).
func FromGonum(t *mat.Tridiag) (a, b, c []float64) {
	raw := t.RawTridiagonal()
	n := raw.N
	a, b, c = make([]float64, n), make([]float64, n), make([]float64, n)
	copy(a[1:], raw.DL)
	copy(b, raw.D)
	copy(c, raw.DU)
	return a, b, c
}

// ToGonum builds a gonum tridiagonal matrix from one system's
// coefficients (a[0] and c[n−1] are dropped).
func ToGonum(a, b, c []float64) (*mat.Tridiag, error) {
	n := len(b)
	if n < 1 || len(a) != n || len(c) != n {
		return nil, fmt.Errorf("%w: len(a), len(b), len(c) = %d, %d, %d: need equal lengths ≥ 1", ErrLength, len(a), len(b), len(c))
	}
	dl := append([]float64(nil), a[1:]...)
	du := append([]float64(nil), c[:n-1]...)
	return mat.NewTridiag(n, dl, append([]float64(nil), b...), du), nil
}
