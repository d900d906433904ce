// Package tritest holds the helpers that the tests of the algorithm
// packages (cr, pcr, tpr, wangmou, partition) share: random systems, the
// pivoting reference, conversions and comparisons.
package tritest

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/tridiag/internal/tri"
)

// RandSystem returns a system of n rows with a, c, d from U(−1,1) and b
// from U(−1,1)+dom. Every value is exactly representable in float32, so
// both precisions solve the same system. a[0] and c[n−1] are left random:
// the solvers must ignore them.
func RandSystem(r *rand.Rand, n int, dom float64) (a, b, c, d []float64) {
	a, b, c, d = make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	u := func() float64 { return float64(float32(r.Float64()*2 - 1)) }
	for i := range n {
		a[i], b[i], c[i], d[i] = u(), u()+dom, u(), u()
	}
	return a, b, c, d
}

// Reference solves the system with the pivoting oracle tri.GTSV in float64.
func Reference(t testing.TB, a, b, c, d []float64) []float64 {
	n := len(b)
	x := make([]float64, n)
	require.NoError(t, tri.GTSV(a, b, c, d, x, tri.NewPivotWork[float64](n)))
	return x
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
