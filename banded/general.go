package banded

import (
	"fmt"
	"math"

	"github.com/bandsolve/bandsolve/internal/memguard"
)

// General is one N×N band matrix with separate lower and upper
// bandwidths: KL sub-diagonals and KU super-diagonals (a_ij = 0 for
// i − j > KL or j − i > KU), the general band matrix of LAPACK's gbsv and
// SciPy's solve_banded((KL, KU), ab, b). Data is an (KL+KU+1)×N array
// stored row by row,
//
//	a_ij is Data[(KU+i−j)·N + j]   for −KU ≤ i−j ≤ KL,
//
// so row KU is the main diagonal, row KU−t the t-th super-diagonal and
// row KU+t the t-th sub-diagonal, each contiguous, and entry j of a row
// belongs to column j of A. This is exactly SciPy's ab for
// solve_banded((KL, KU), ab, b), ab[KU + i − j, j] = a_ij, as NumPy
// keeps it (C order): the data of np.save("ab.npy", ab) is Data. It is
// also LAPACK's band storage AB(KU+1+i−j, j) read with the indices
// swapped (LAPACK keeps AB column-major, with each column of A
// contiguous).
//
// The slots of Data that fall outside the matrix (the first KU−t entries
// of super-diagonal row KU−t, the last t of sub-diagonal row KU+t) are
// kept zero by the constructors and never read by the operations and
// solvers of this package.
//
// A Band of half-bandwidth K has the same storage as a General with
// KL = KU = K (Band's documentation calls these rows of N the storage
// columns of its N×(2K+1) column-major view); ToGeneral and ToBand
// convert between them.
type General[T Scalar] struct {
	N, KL, KU int
	Data      []T // length (KL+KU+1)·N
}

// NewGeneral returns a zero N×N band matrix with KL sub-diagonals and KU
// super-diagonals. It fails with ErrShape unless N ≥ 1, 0 ≤ KL < N and
// 0 ≤ KU < N (CheckGeneralShape), and with an error wrapping ErrMemory
// when the (KL+KU+1)·N elements do not fit the memory the process can
// have.
func NewGeneral[T Scalar](n, kl, ku int) (*General[T], error) {
	if err := CheckGeneralShape(n, kl, ku); err != nil {
		return nil, err
	}
	if err := CheckGeneralMemory[T](n, kl, ku, 1); err != nil {
		return nil, err
	}
	return &General[T]{N: n, KL: kl, KU: ku, Data: make([]T, (kl+ku+1)*n)}, nil
}

// CheckGeneralShape reports whether an N×N matrix with KL sub-diagonals
// and KU super-diagonals can be stored in a General: N ≥ 1, 0 ≤ KL < N
// and 0 ≤ KU < N, else an error wrapping ErrShape.
func CheckGeneralShape(n, kl, ku int) error {
	switch {
	case n < 1:
		return fmt.Errorf("%w: order N=%d, want ≥ 1", ErrShape, n)
	case kl < 0:
		return fmt.Errorf("%w: lower bandwidth KL=%d, want ≥ 0", ErrShape, kl)
	case ku < 0:
		return fmt.Errorf("%w: upper bandwidth KU=%d, want ≥ 0", ErrShape, ku)
	case kl >= n:
		return fmt.Errorf("%w: lower bandwidth KL=%d must be < N=%d", ErrShape, kl, n)
	case ku >= n:
		return fmt.Errorf("%w: upper bandwidth KU=%d must be < N=%d", ErrShape, ku, n)
	}
	return nil
}

// CheckGeneralMemory reports, with an error wrapping ErrMemory that names
// the sizes, whether copies General matrices of order N with bandwidths
// KL and KU ((KL+KU+1)·N elements each) fit the memory the process can
// have, as CheckMemory does for Band. Shapes are not checked
// (CheckGeneralShape).
func CheckGeneralMemory[T Scalar](n, kl, ku, copies int) error {
	var zero T
	what := fmt.Sprintf("banded: a %s band of %s", typeName(zero), bandShape(n, kl, ku))
	if copies != 1 {
		what = fmt.Sprintf("banded: %d %s bands of %s", copies, typeName(zero), bandShape(n, kl, ku))
	}
	return memguard.Check(what, memguard.Bytes(sizeOf(zero), kl+ku+1, n, copies))
}

// bandShape names a shape in messages: "N=…, K=…" when the bandwidths
// are equal, else "N=…, KL=…, KU=…".
func bandShape(n, kl, ku int) string {
	if kl == ku {
		return fmt.Sprintf("N=%d, K=%d", n, kl)
	}
	return fmt.Sprintf("N=%d, KL=%d, KU=%d", n, kl, ku)
}

// checkGeneral reports a General whose fields are inconsistent.
func checkGeneral[T Scalar](m *General[T]) error {
	if m == nil {
		return shapeErr("nil band matrix")
	}
	if err := CheckGeneralShape(m.N, m.KL, m.KU); err != nil {
		return err
	}
	if want := (m.KL + m.KU + 1) * m.N; len(m.Data) != want {
		return shapeErr("len(Data)=%d, want (KL+KU+1)·N=%d for N=%d, KL=%d, KU=%d", len(m.Data), want, m.N, m.KL, m.KU)
	}
	return nil
}

// general is m seen as a General with KL = KU = K, sharing m's storage.
func (m *Band[T]) general() General[T] {
	return General[T]{N: m.N, KL: m.K, KU: m.K, Data: m.Data}
}

// Rows is the number of storage rows, KL+KU+1.
func (m *General[T]) Rows() int { return m.KL + m.KU + 1 }

// InBand reports whether (i, j) lies inside the matrix and its band.
func (m *General[T]) InBand(i, j int) bool {
	return i >= 0 && j >= 0 && i < m.N && j < m.N && i-j <= m.KL && j-i <= m.KU
}

// Index is the position of a_ij in Data; (i, j) must be InBand.
func (m *General[T]) Index(i, j int) int { return (m.KU+i-j)*m.N + j }

// At returns a_ij: zero outside the band; it panics outside the matrix.
func (m *General[T]) At(i, j int) T {
	if i < 0 || j < 0 || i >= m.N || j >= m.N {
		panic(fmt.Sprintf("banded: At(%d, %d) outside a %d×%d matrix", i, j, m.N, m.N))
	}
	if !m.InBand(i, j) {
		return 0
	}
	return m.Data[m.Index(i, j)]
}

// Set sets a_ij; it panics when (i, j) is outside the matrix or its band.
func (m *General[T]) Set(i, j int, v T) {
	if !m.InBand(i, j) {
		panic(fmt.Sprintf("banded: Set(%d, %d) outside the band KL=%d, KU=%d of a %d×%d matrix", i, j, m.KL, m.KU, m.N, m.N))
	}
	m.Data[m.Index(i, j)] = v
}

// Clone returns a deep copy of m.
func (m *General[T]) Clone() *General[T] {
	return &General[T]{N: m.N, KL: m.KL, KU: m.KU, Data: append([]T(nil), m.Data...)}
}

// diagRange returns, for storage row s (offset d = s−KU, a_ij with
// i = j+d), the range [j0, j1) of columns j inside the matrix.
func (m *General[T]) diagRange(s int) (d, j0, j1 int) {
	d = s - m.KU
	return d, max(0, -d), min(m.N, m.N-d)
}

// MulVec computes y = A·x (len(x) = len(y) = N; y must not overlap x),
// diagonal by diagonal. It panics with an error wrapping ErrShape on
// other lengths.
func (m *General[T]) MulVec(x, y []T) {
	if len(x) != m.N || len(y) != m.N {
		panic(shapeErr("MulVec: len(x)=%d, len(y)=%d, want N=%d", len(x), len(y), m.N))
	}
	clear(y)
	n := m.N
	for s := 0; s <= m.KL+m.KU; s++ {
		d, j0, j1 := m.diagRange(s)
		if j0 >= j1 {
			continue
		}
		a := m.Data[s*n+j0 : s*n+j1]
		xs := x[j0:j1]
		ys := y[j0+d : j1+d]
		xs, ys = xs[:len(a)], ys[:len(a)]
		for q, v := range a {
			ys[q] += T(v * xs[q])
		}
	}
}

// NormMax is max |a_ij| (moduli for a complex matrix, as in every norm
// of this package).
func (m *General[T]) NormMax() float64 {
	var mx float64
	for s := 0; s <= m.KL+m.KU; s++ {
		_, j0, j1 := m.diagRange(s)
		for j := j0; j < j1; j++ {
			mx = math.Max(mx, magnitude(m.Data[s*m.N+j]))
		}
	}
	return mx
}

// Norm1 is the 1-norm, the largest column sum of |a_ij|.
func (m *General[T]) Norm1() float64 {
	var mx float64
	for j := 0; j < m.N; j++ {
		var s float64
		for i := max(0, j-m.KU); i <= min(m.N-1, j+m.KL); i++ {
			s += magnitude(m.Data[m.Index(i, j)])
		}
		mx = math.Max(mx, s)
	}
	return mx
}

// NormInf is the ∞-norm, the largest row sum of |a_ij|.
func (m *General[T]) NormInf() float64 {
	var mx float64
	for i := 0; i < m.N; i++ {
		var s float64
		for j := max(0, i-m.KL); j <= min(m.N-1, i+m.KU); j++ {
			s += magnitude(m.Data[m.Index(i, j)])
		}
		mx = math.Max(mx, s)
	}
	return mx
}

// DiagonalDominanceGeneral is DiagonalDominance for a General: the
// largest d ≥ 0 with |a_ii| ≥ d·Σ_{j≠i}|a_ij| for every row i (+Inf when
// no row has an off-diagonal entry).
func DiagonalDominanceGeneral[T Scalar](m *General[T]) float64 {
	d := math.Inf(1)
	for i := 0; i < m.N; i++ {
		var off float64
		for j := max(0, i-m.KL); j <= min(m.N-1, i+m.KU); j++ {
			if j != i {
				off += magnitude(m.Data[m.Index(i, j)])
			}
		}
		if off > 0 {
			d = math.Min(d, magnitude(m.Data[m.Index(i, i)])/off)
		}
	}
	return d
}

// ConvertGeneral returns a copy of m in another precision (float64 →
// float32 rounds to nearest; values beyond float32's range become ±Inf).
func ConvertGeneral[T2, T1 Float](m *General[T1]) *General[T2] {
	out := &General[T2]{N: m.N, KL: m.KL, KU: m.KU, Data: make([]T2, len(m.Data))}
	for i, v := range m.Data {
		out.Data[i] = T2(v)
	}
	return out
}

// ConvertGeneralComplex is ConvertGeneral for complex matrices
// (complex128 → complex64 rounds each part to nearest).
func ConvertGeneralComplex[T2, T1 Complex](m *General[T1]) *General[T2] {
	out := &General[T2]{N: m.N, KL: m.KL, KU: m.KU, Data: make([]T2, len(m.Data))}
	for i, v := range m.Data {
		out.Data[i] = T2(v)
	}
	return out
}

// scanGeneral checks that every entry of the matrix stored in data
// (General's layout for N, KL, KU) is finite, storage row by storage row;
// the first NaN or ±Inf (in either part of a complex entry) gives a
// *RowError wrapping ErrNonFinite naming its row and column. The element
// type is resolved once, not per entry.
func scanGeneral[T Scalar](n, kl, ku int, data []T) error {
	switch d := any(data).(type) {
	case []float32:
		return scanWith(n, kl, ku, d, func(v float32) bool { f := float64(v); return f-f == 0 })
	case []float64:
		return scanWith(n, kl, ku, d, func(v float64) bool { return v-v == 0 })
	case []complex64:
		return scanWith(n, kl, ku, d, func(v complex64) bool {
			r, i := float64(real(v)), float64(imag(v))
			return r-r == 0 && i-i == 0
		})
	case []complex128:
		return scanWith(n, kl, ku, d, func(v complex128) bool { return real(v)-real(v) == 0 && imag(v)-imag(v) == 0 })
	}
	return nil
}

func scanWith[T Scalar](n, kl, ku int, data []T, ok func(T) bool) error {
	for s := 0; s <= kl+ku; s++ {
		d := s - ku
		j0, j1 := max(0, -d), min(n, n-d)
		for q, v := range data[s*n+j0 : s*n+j1] {
			if !ok(v) {
				j := j0 + q
				return &RowError{Row: j + d, Col: j, Err: ErrNonFinite}
			}
		}
	}
	return nil
}
