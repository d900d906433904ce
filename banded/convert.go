package banded

import "gonum.org/v1/gonum/mat"

// FromBanded copies a square gonum banded matrix (*mat.BandDense, or any
// mat.Banded) into a Band with K = max(kl, ku); the extra diagonals on the
// narrower side are zero. It fails with ErrShape for a non-square or empty
// matrix.
func FromBanded(a mat.Banded) (*Band[float64], error) {
	r, c := a.Dims()
	if r != c {
		return nil, shapeErr("gonum banded matrix is %d×%d, want square", r, c)
	}
	kl, ku := a.Bandwidth()
	k := min(max(kl, ku), max(r-1, 0))
	m, err := New[float64](r, k)
	if err != nil {
		return nil, err
	}
	for i := 0; i < r; i++ {
		for j := max(0, i-min(kl, k)); j <= min(r-1, i+min(ku, k)); j++ {
			m.Data[m.Index(i, j)] = a.At(i, j)
		}
	}
	return m, nil
}

// ToBandDense copies m into a gonum *mat.BandDense with kl = ku = K
// (converting to float64).
func ToBandDense[T Float](m *Band[T]) *mat.BandDense {
	k, n := m.K, m.N
	w := 2*k + 1
	data := make([]float64, n*w) // row-major: a_ij at i·w + (j−i+K)
	for i := 0; i < n; i++ {
		for j := max(0, i-k); j <= min(n-1, i+k); j++ {
			data[i*w+j-i+k] = float64(m.Data[m.Index(i, j)])
		}
	}
	return mat.NewBandDense(n, n, k, k, data)
}

// FromDense copies an n×n dense matrix given row-major (a_ij = a[i·n+j])
// into a Band whose K is the largest |i−j| of a nonzero entry (0 for a
// diagonal or zero matrix). It fails with ErrShape when len(a) ≠ n².
func FromDense[T Float](n int, a []T) (*Band[T], error) {
	if n < 1 || len(a) != n*n {
		return nil, shapeErr("dense matrix of length %d for order %d", len(a), n)
	}
	k := 0
	for i := 0; i < n; i++ {
		for j, v := range a[i*n : (i+1)*n] {
			if v != 0 {
				k = max(k, i-j, j-i)
			}
		}
	}
	m, _ := New[T](n, k)
	for i := 0; i < n; i++ {
		for j := max(0, i-k); j <= min(n-1, i+k); j++ {
			m.Data[m.Index(i, j)] = a[i*n+j]
		}
	}
	return m, nil
}

// FromMatrix copies a square gonum matrix into a Band whose K is the
// largest |i−j| of a nonzero entry. It reads every entry (use FromBanded
// for banded gonum types). It fails with ErrShape for a non-square matrix.
func FromMatrix(a mat.Matrix) (*Band[float64], error) {
	if b, ok := a.(mat.Banded); ok {
		return FromBanded(b)
	}
	r, c := a.Dims()
	if r != c {
		return nil, shapeErr("gonum matrix is %d×%d, want square", r, c)
	}
	d := make([]float64, r*c)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			d[i*c+j] = a.At(i, j)
		}
	}
	return FromDense(r, d)
}

// ToDense returns m as an N×N row-major dense slice (a_ij at [i·N+j]).
func (m *Band[T]) ToDense() []T {
	n := m.N
	d := make([]T, n*n)
	for i := 0; i < n; i++ {
		for j := max(0, i-m.K); j <= min(n-1, i+m.K); j++ {
			d[i*n+j] = m.Data[m.Index(i, j)]
		}
	}
	return d
}

// FromCOO builds an n×n Band from coordinate triplets (rows[e], cols[e],
// vals[e]); duplicate coordinates are summed. With k < 0 the half-bandwidth
// is the largest |row−col| among the entries (stored zeros count); with
// k ≥ 0 it is k, and an entry outside that band is an error naming the
// entry. Errors wrap ErrShape: slices of different lengths, an index
// outside [0, n), an entry outside the band, a bad n or k.
func FromCOO[T Float](n int, rows, cols []int, vals []T, k int) (*Band[T], error) {
	if len(rows) != len(vals) || len(cols) != len(vals) {
		return nil, shapeErr("COO slices of lengths %d, %d, %d", len(rows), len(cols), len(vals))
	}
	given := k >= 0
	if !given {
		k = 0
	}
	for e := range vals {
		i, j := rows[e], cols[e]
		if i < 0 || j < 0 || i >= n || j >= n {
			return nil, shapeErr("COO entry %d at (%d, %d) outside a %d×%d matrix", e, i, j, n, n)
		}
		if d := max(i-j, j-i); d > k {
			if given {
				return nil, shapeErr("COO entry %d at (%d, %d) outside the band K=%d", e, i, j, k)
			}
			k = d
		}
	}
	m, err := New[T](n, k)
	if err != nil {
		return nil, err
	}
	for e, v := range vals {
		m.Data[m.Index(rows[e], cols[e])] += v
	}
	return m, nil
}
