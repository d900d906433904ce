package wangmou

import (
	"math/rand/v2"
	"testing"

	"github.com/bandsolve/bandsolve/tridiag/internal/tri"
	"github.com/bandsolve/bandsolve/tridiag/internal/tritest"
)

// sizes are the system sizes every test runs: small n, powers of two and
// their neighbours, and one large n.
var sizes = []int{1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 100, 127, 128, 129,
	255, 256, 257, 1000, 1023, 1024, 1025, 4097, 70000}

// system is a test system in float64 whose values are exactly representable
// in float32, so that both precisions solve the same system.
type system struct{ a, b, c, d []float64 }

// randSystem returns a diagonally dominant system: a, c, d from U(−1,1), b
// from U(−1,1)+4. a[0] and c[n−1] are random too: Solve must ignore them.
func randSystem(r *rand.Rand, n int) system {
	s := tritest.RandSystem(r, n, 4)
	return system{s.A, s.B, s.C, s.D}
}

// reference solves s with the pivoting oracle tri.GTSV in float64.
func reference(t testing.TB, s system) []float64 {
	return tritest.Reference(t, tritest.System{A: s.a, B: s.b, C: s.c, D: s.d})
}

// tol is the relative tolerance of precision T for the diagonally dominant
// test systems.
func tol[T tri.Float]() float64 {
	var z T
	if _, ok := any(z).(float32); ok {
		return 1e-4
	}
	return 1e-11
}
