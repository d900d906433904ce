// Package tritest holds what the tests of the algorithm packages (cr, pcr,
// tpr, wangmou, partition) share: a driver that runs the checks every
// tridiagonal solver must pass (see Solver and Test, in the manner of
// gonum's testlapack), the test systems, the pivoting reference,
// conversions, comparisons and error measures.
package tritest

import (
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/tridiag/internal/tri"
)

// Sizes are the system sizes the driver's checks run: small n, powers of
// two and their neighbours, odd sizes and one large n.
var Sizes = []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 15, 16, 17, 23, 31, 32, 33, 47, 63, 64, 65, 100, 127, 128,
	129, 255, 256, 257, 333, 511, 512, 513, 1000, 1023, 1024, 1025, 2047, 2049, 3001, 4095, 4096, 4097, 5000, 70000}

// System is a test system in float64: a (sub-diagonal, A[0] unused), b
// (diagonal), c (super-diagonal, C[n−1] unused), d (right-hand side). The
// systems made here hold values exactly representable in float32, so that
// both precisions solve the same system.
type System struct{ A, B, C, D []float64 }

// NewSystem returns a zero system of n rows.
func NewSystem(n int) System {
	return System{make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)}
}

// Clone returns a deep copy of s.
func (s System) Clone() System { return System{Clone(s.A), Clone(s.B), Clone(s.C), Clone(s.D)} }

// RandSystem returns a system of n rows with a, c, d from U(−1,1) and b
// from U(−1,1)+dom. a[0] and c[n−1] are left random: the solvers must
// ignore them.
func RandSystem(r *rand.Rand, n int, dom float64) System {
	s := NewSystem(n)
	u := func() float64 { return float64(float32(r.Float64()*2 - 1)) }
	for i := range n {
		s.A[i], s.B[i], s.C[i], s.D[i] = u(), u()+dom, u(), u()
	}
	return s
}

// Toeplitz returns the n-row system tridiag(lo, diag, up) with d from
// U(−1,1).
func Toeplitz(r *rand.Rand, n int, lo, diag, up float64) System {
	s := NewSystem(n)
	for i := range n {
		s.A[i], s.B[i], s.C[i], s.D[i] = lo, diag, up, float64(float32(r.Float64()*2-1))
	}
	return s
}

// WeakSystem returns an n-row weakly diagonally dominant system (condition
// ~n²) with d from U(−1,1): the Poisson matrix tridiag(−1, 2, −1), or a
// variable diffusion coefficient k_{i+1/2} from U(0.5, 1.5) (a_i =
// −k_{i−1/2}, c_i = −k_{i+1/2}, b_i = k_{i−1/2} + k_{i+1/2}, the sum
// rounded to float32).
func WeakSystem(r *rand.Rand, n int, variable bool) System {
	s := NewSystem(n)
	kl := float32(1)
	for i := range n {
		kr := float32(1)
		if variable {
			kr = float32(0.5 + r.Float64())
		}
		s.A[i], s.B[i], s.C[i], s.D[i] = float64(-kl), float64(kl+kr), float64(-kr), float64(float32(2*r.Float64()-1))
		kl = kr
	}
	return s
}

// Reference solves s with the pivoting oracle tri.GTSV in float64.
func Reference(t testing.TB, s System) []float64 {
	n := len(s.B)
	x := make([]float64, n)
	require.NoError(t, tri.GTSV(s.A, s.B, s.C, s.D, x, tri.NewPivotWork[float64](n)))
	return x
}

// As returns the four slices of s converted to T.
func As[T tri.Float](s System) (a, b, c, d []T) {
	return Conv[T](s.A), Conv[T](s.B), Conv[T](s.C), Conv[T](s.D)
}

// Conv converts s to T.
func Conv[T tri.Float](s []float64) []T {
	out := make([]T, len(s))
	for i, v := range s {
		out[i] = T(v)
	}
	return out
}

// Clone returns a copy of s.
func Clone[T tri.Float](s []T) []T { return append([]T(nil), s...) }

// Fill returns a slice of n copies of v.
func Fill[T tri.Float](n int, v T) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// ByPrecision returns f32 when T is float32 and f64 when it is float64.
func ByPrecision[T tri.Float](f32, f64 float64) float64 {
	var z T
	if _, ok := any(z).(float32); ok {
		return f32
	}
	return f64
}

// UnitRoundoff returns the unit roundoff of T: 2^−24 or 2^−53.
func UnitRoundoff[T tri.Float]() float64 { return ByPrecision[T](0x1p-24, 0x1p-53) }

// ElemSize returns the size of T in bytes.
func ElemSize[T tri.Float]() int {
	var z T
	return int(unsafe.Sizeof(z))
}

// RelErr returns ‖x − want‖₂ / ‖want‖₂ (‖x − want‖₂ when want is zero).
func RelErr[T tri.Float](x []T, want []float64) float64 {
	var num, den float64
	for i, w := range want {
		e := float64(x[i]) - w
		num += e * e
		den += w * w
	}
	if den == 0 {
		return math.Sqrt(num)
	}
	return math.Sqrt(num / den)
}

// SameBits reports whether x and y hold identical bit patterns.
func SameBits[T tri.Float](x, y []T) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if math.Float64bits(float64(x[i])) != math.Float64bits(float64(y[i])) {
			return false
		}
	}
	return true
}

// BitsEqual is SameBits, except that any two NaNs count as equal.
func BitsEqual[T tri.Float](x, y []T) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if math.Float64bits(float64(x[i])) != math.Float64bits(float64(y[i])) && !(x[i] != x[i] && y[i] != y[i]) {
			return false
		}
	}
	return true
}

// AllFinite reports whether x holds no NaN or ±Inf.
func AllFinite[T tri.Float](x []T) bool {
	for _, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return false
		}
	}
	return true
}

// BackwardError is the normwise backward error of x for the system a, b,
// c, d (a[0] and c[n−1] ignored), in float64: ‖d − A·x‖₂ / ‖|A|·|x| +
// |d|‖₂ with the sums taken row by row.
func BackwardError[T tri.Float](a, b, c, d, x []T) float64 {
	n := len(b)
	var num, den float64
	for i := range n {
		r := float64(b[i]) * float64(x[i])
		s := math.Abs(r) + math.Abs(float64(d[i]))
		if i > 0 {
			v := float64(a[i]) * float64(x[i-1])
			r += v
			s += math.Abs(v)
		}
		if i < n-1 {
			v := float64(c[i]) * float64(x[i+1])
			r += v
			s += math.Abs(v)
		}
		r -= float64(d[i])
		num += r * r
		den += s * s
	}
	return math.Sqrt(num / den)
}

// PivotRow asserts that err is a *tri.PivotError wrapping tri.ErrZeroPivot
// and returns its row.
func PivotRow(t testing.TB, err error, msgAndArgs ...any) int {
	t.Helper()
	var pe *tri.PivotError
	require.ErrorAs(t, err, &pe, msgAndArgs...)
	require.ErrorIs(t, err, tri.ErrZeroPivot, msgAndArgs...)
	return pe.Row
}
