package partition

import (
	"math/rand/v2"
	"testing"

	"github.com/bandsolve/bandsolve/tridiag/internal/tri"
	"github.com/bandsolve/bandsolve/tridiag/internal/tritest"
)

// system is a test system in float64; the values are exactly representable
// in float32, so both precisions solve the same system.
type system struct{ a, b, c, d []float64 }

// randSystem returns a diagonally dominant system: a, c, d from U(−1,1), b
// from U(−1,1)+dom. a[0] and c[n−1] are left random (they must be ignored).
func randSystem(r *rand.Rand, n int, dom float64) system {
	s := tritest.RandSystem(r, n, dom)
	return system{s.A, s.B, s.C, s.D}
}

// reference solves s with the pivoting oracle tri.GTSV in float64.
func reference(t testing.TB, s system) []float64 {
	return tritest.Reference(t, tritest.System{A: s.a, B: s.b, C: s.c, D: s.d})
}

// tol is the relative tolerance of precision T.
func tol[T tri.Float]() float64 {
	var z T
	if _, ok := any(z).(float32); ok {
		return 1e-5
	}
	return 1e-13
}

func sizeOf[T tri.Float]() uintptr {
	var z T
	if _, ok := any(z).(float32); ok {
		return 4
	}
	return 8
}
