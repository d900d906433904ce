package banded

import (
	"errors"
	"fmt"

	"github.com/bandsolve/bandsolve/internal/memguard"
)

// Float is the element type of every banded matrix and solver: float32 or
// float64.
type Float interface {
	float32 | float64
}

// ErrShape is wrapped by every error about sizes: a non-positive order, a
// negative half-bandwidth, K ≥ N, a slice of the wrong length.
var ErrShape = errors.New("banded: bad shape")

// ErrMemory is wrapped by the errors of constructors and factorizations
// that refuse to allocate more than the process can have (physical
// memory, cgroup limit, RLIMIT_AS). It is the same value as
// npy.ErrMemory, sparse.ErrMemory and tridiag.ErrMemory.
var ErrMemory = memguard.ErrTooLarge

// Band is one N×N matrix with half-bandwidth K (a_ij = 0 for |i−j| > K), in
// the "tall and thin" column-major storage of SPIKE::GPU (Li et al. 2014,
// §4): an N×(2K+1) array stored column by column, whose row j holds column
// j of A from a_{j−K,j} to a_{j+K,j}. So the main diagonal is storage
// column K, storage column c holds the diagonal of offset K−c (column 0 the
// K-th super-diagonal, column 2K the K-th sub-diagonal), and
//
//	a_ij is Data[(K+i−j)·N + j]   for |i−j| ≤ K.
//
// The 2K·(K+1)/2·2 corner slots that fall outside the matrix (the * in the
// paper's picture) are kept zero by the constructors and ignored by solvers.
// This is the storage of a General with KL = KU = K (separate lower and
// upper bandwidths, solved by LU with partial pivoting). T is real or
// complex; a complex Band is solved by LU with partial pivoting only
// (FactorPivot, SolveBatch with BatchOptions.Pivot).
type Band[T Scalar] struct {
	N, K int
	Data []T // length (2K+1)·N
}

// New returns a zero N×N band matrix of half-bandwidth K. It fails with
// ErrShape unless N ≥ 1 and 0 ≤ K < N (K = N−1 is a dense matrix), and
// with an error wrapping ErrMemory when the (2K+1)·N elements do not fit
// the memory the process can have.
func New[T Scalar](n, k int) (*Band[T], error) {
	if err := CheckShape(n, k); err != nil {
		return nil, err
	}
	if err := CheckMemory[T](n, k, 1); err != nil {
		return nil, err
	}
	return &Band[T]{N: n, K: k, Data: make([]T, (2*k+1)*n)}, nil
}

// CheckMemory reports, with an error wrapping ErrMemory that names the
// sizes, whether copies band matrices of order N and half-bandwidth K fit
// the memory the process can have. Shapes are not checked (CheckShape).
func CheckMemory[T Scalar](n, k, copies int) error {
	var zero T
	what := fmt.Sprintf("banded: a %s band of N=%d, K=%d", typeName(zero), n, k)
	if copies != 1 {
		what = fmt.Sprintf("banded: %d %s bands of N=%d, K=%d", copies, typeName(zero), n, k)
	}
	return memguard.Check(what, memguard.Bytes(sizeOf(zero), 2*k+1, n, copies))
}

func typeName[T Scalar](T) string {
	switch any(*new(T)).(type) {
	case float32:
		return "float32"
	case complex64:
		return "complex64"
	case complex128:
		return "complex128"
	}
	return "float64"
}

func sizeOf[T Scalar](T) int {
	switch any(*new(T)).(type) {
	case float32:
		return 4
	case complex128:
		return 16
	}
	return 8
}

// CheckShape reports whether an N×N matrix of half-bandwidth K can be
// stored: N ≥ 1 and 0 ≤ K < N, else an error wrapping ErrShape.
func CheckShape(n, k int) error {
	switch {
	case n < 1:
		return fmt.Errorf("%w: order N=%d, want ≥ 1", ErrShape, n)
	case k < 0:
		return fmt.Errorf("%w: half-bandwidth K=%d, want ≥ 0", ErrShape, k)
	case k >= n:
		return fmt.Errorf("%w: half-bandwidth K=%d must be < N=%d", ErrShape, k, n)
	}
	return nil
}

// Width is the number of storage columns, 2K+1.
func (m *Band[T]) Width() int { return 2*m.K + 1 }

// InBand reports whether (i, j) lies inside the matrix and its band.
func (m *Band[T]) InBand(i, j int) bool {
	return i >= 0 && j >= 0 && i < m.N && j < m.N && i-j <= m.K && j-i <= m.K
}

// Index is the position of a_ij in Data; (i, j) must be InBand.
func (m *Band[T]) Index(i, j int) int { return (m.K+i-j)*m.N + j }

// At returns a_ij: zero outside the band; it panics outside the matrix.
func (m *Band[T]) At(i, j int) T {
	if i < 0 || j < 0 || i >= m.N || j >= m.N {
		panic(fmt.Sprintf("banded: At(%d, %d) outside a %d×%d matrix", i, j, m.N, m.N))
	}
	if !m.InBand(i, j) {
		return 0
	}
	return m.Data[m.Index(i, j)]
}

// Set sets a_ij; it panics when (i, j) is outside the matrix or its band.
func (m *Band[T]) Set(i, j int, v T) {
	if !m.InBand(i, j) {
		panic(fmt.Sprintf("banded: Set(%d, %d) outside the band K=%d of a %d×%d matrix", i, j, m.K, m.N, m.N))
	}
	m.Data[m.Index(i, j)] = v
}
