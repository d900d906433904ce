package partition

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/tridiag/internal/tri"
)

// system is a test system in float64; the values are exactly representable
// in float32, so both precisions solve the same system.
type system struct{ a, b, c, d []float64 }

// randSystem returns a diagonally dominant system: a, c, d from U(−1,1), b
// from U(−1,1)+dom. a[0] and c[n−1] are left random (they must be ignored).
func randSystem(r *rand.Rand, n int, dom float64) system {
	s := system{make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)}
	u := func() float64 { return float64(float32(r.Float64()*2 - 1)) }
	for i := range n {
		s.a[i], s.b[i], s.c[i], s.d[i] = u(), u()+dom, u(), u()
	}
	return s
}

func conv[T tri.Float](s []float64) []T {
	out := make([]T, len(s))
	for i, v := range s {
		out[i] = T(v)
	}
	return out
}

func clone[T tri.Float](s []T) []T { return append([]T(nil), s...) }

// reference solves s with the pivoting oracle tri.GTSV in float64.
func reference(t testing.TB, s system) []float64 {
	n := len(s.b)
	x := make([]float64, n)
	require.NoError(t, tri.GTSV(s.a, s.b, s.c, s.d, x, tri.NewPivotWork[float64](n)))
	return x
}

// relErr returns ‖x − want‖₂ / ‖want‖₂.
func relErr[T tri.Float](x []T, want []float64) float64 {
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

// tol is the relative tolerance of precision T.
func tol[T tri.Float]() float64 {
	var z T
	if _, ok := any(z).(float32); ok {
		return 1e-5
	}
	return 1e-13
}

// bitsEqual reports whether x and y hold identical bit patterns (NaN
// equals NaN).
func bitsEqual[T tri.Float](x, y []T) bool {
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

func sizeOf[T tri.Float]() uintptr {
	var z T
	if _, ok := any(z).(float32); ok {
		return 4
	}
	return 8
}
