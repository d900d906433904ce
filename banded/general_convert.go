package banded

import (
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// ToGeneral returns a copy of m as a General with KL = KU = K. The two
// types share their storage layout, so the copy is Data itself.
func (m *Band[T]) ToGeneral() *General[T] {
	return &General[T]{N: m.N, KL: m.K, KU: m.K, Data: append([]T(nil), m.Data...)}
}

// ToBand returns a copy of m as a Band of half-bandwidth K = max(KL, KU),
// the diagonals that m does not have (on its narrower side) zero. It
// fails with an error wrapping ErrMemory when the (2K+1)·N elements do
// not fit the memory the process can have.
func (m *General[T]) ToBand() (*Band[T], error) {
	out, err := New[T](m.N, max(m.KL, m.KU))
	if err != nil {
		return nil, err
	}
	n := m.N
	for s := 0; s <= m.KL+m.KU; s++ {
		d, j0, j1 := m.diagRange(s)
		row := (out.K + d) * n
		copy(out.Data[row+j0:row+j1], m.Data[s*n+j0:s*n+j1])
	}
	return out, nil
}

// ToDense returns m as an N×N row-major dense slice (a_ij at [i·N+j]).
func (m *General[T]) ToDense() []T {
	n := m.N
	d := make([]T, n*n)
	for i := 0; i < n; i++ {
		for j := max(0, i-m.KL); j <= min(n-1, i+m.KU); j++ {
			d[i*n+j] = m.Data[m.Index(i, j)]
		}
	}
	return d
}

// GeneralFromDense copies an n×n dense matrix given row-major
// (a_ij = a[i·n+j]) into a General whose KL is the largest i−j and KU the
// largest j−i of a nonzero entry (0 when there is none). It fails with
// ErrShape when n < 1 or len(a) ≠ n², and with ErrMemory as NewGeneral.
func GeneralFromDense[T Scalar](n int, a []T) (*General[T], error) {
	if n < 1 || len(a) != n*n {
		return nil, shapeErr("dense matrix of length %d for order %d", len(a), n)
	}
	kl, ku := 0, 0
	for i := 0; i < n; i++ {
		for j, v := range a[i*n : (i+1)*n] {
			if v != 0 {
				kl, ku = max(kl, i-j), max(ku, j-i)
			}
		}
	}
	m, err := NewGeneral[T](n, kl, ku)
	if err != nil {
		return nil, err
	}
	for i := 0; i < n; i++ {
		for j := max(0, i-kl); j <= min(n-1, i+ku); j++ {
			m.Data[m.Index(i, j)] = a[i*n+j]
		}
	}
	return m, nil
}

// GeneralFromCOO builds an n×n General from coordinate triplets
// (rows[e], cols[e], vals[e]); duplicate coordinates are summed. A
// negative kl (ku) takes the lower (upper) bandwidth from the entries:
// the largest row−col (col−row) among them, stored zeros included; a
// bandwidth ≥ 0 is used as given, and an entry outside that band is an
// error naming the entry, its row and column. Errors wrap ErrShape:
// slices of different lengths, an index outside [0, n), an entry outside
// the band, a bad n, kl or ku.
func GeneralFromCOO[T Scalar](n int, rows, cols []int, vals []T, kl, ku int) (*General[T], error) {
	if len(rows) != len(vals) || len(cols) != len(vals) {
		return nil, shapeErr("COO slices of lengths %d, %d, %d", len(rows), len(cols), len(vals))
	}
	givenL, givenU := kl >= 0, ku >= 0
	kl, ku = max(kl, 0), max(ku, 0)
	for e := range vals {
		i, j := rows[e], cols[e]
		if i < 0 || j < 0 || i >= n || j >= n {
			return nil, shapeErr("COO entry %d at row %d, column %d outside a %d×%d matrix", e, i, j, n, n)
		}
		switch {
		case i-j > kl && givenL:
			return nil, shapeErr("COO entry %d at row %d, column %d outside the band: %d below the diagonal, KL=%d", e, i, j, i-j, kl)
		case j-i > ku && givenU:
			return nil, shapeErr("COO entry %d at row %d, column %d outside the band: %d above the diagonal, KU=%d", e, i, j, j-i, ku)
		}
		kl, ku = max(kl, i-j), max(ku, j-i)
	}
	m, err := NewGeneral[T](n, kl, ku)
	if err != nil {
		return nil, err
	}
	for e, v := range vals {
		m.Data[m.Index(rows[e], cols[e])] += v
	}
	return m, nil
}

// GeneralFromBanded copies a square gonum banded matrix (*mat.BandDense,
// or any mat.Banded) into a General with its bandwidths (each at most
// N−1). It fails with ErrShape for a non-square or empty matrix.
func GeneralFromBanded(a mat.Banded) (*General[float64], error) {
	r, c := a.Dims()
	if r != c {
		return nil, shapeErr("gonum banded matrix is %d×%d, want square", r, c)
	}
	kl, ku := a.Bandwidth()
	kl, ku = min(kl, max(r-1, 0)), min(ku, max(r-1, 0))
	m, err := NewGeneral[float64](r, kl, ku)
	if err != nil {
		return nil, err
	}
	for i := 0; i < r; i++ {
		for j := max(0, i-kl); j <= min(r-1, i+ku); j++ {
			m.Data[m.Index(i, j)] = a.At(i, j)
		}
	}
	return m, nil
}

// ToBandDense copies m into a gonum *mat.BandDense with the same
// bandwidths (converting to float64). Gonum has no complex band matrix:
// it panics for a complex m.
func (m *General[T]) ToBandDense() *mat.BandDense {
	if isComplex[T]() {
		panic(fmt.Sprintf("banded: ToBandDense of a %s matrix: gonum's BandDense is real", typeName(*new(T))))
	}
	n, kl, ku := m.N, m.KL, m.KU
	w := kl + ku + 1
	data := make([]float64, n*w) // gonum's row-major band: a_ij at i·w + (j−i+KL)
	for i := 0; i < n; i++ {
		for j := max(0, i-kl); j <= min(n-1, i+ku); j++ {
			data[i*w+j-i+kl] = real(toC128(m.Data[m.Index(i, j)]))
		}
	}
	return mat.NewBandDense(n, n, kl, ku, data)
}
