package tpr

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/bandsolve/bandsolve/tridiag/internal/tri"
	"github.com/bandsolve/bandsolve/tridiag/internal/tritest"
)

func BenchmarkSolve(b *testing.B) {
	for _, n := range []int{1024, 65536} {
		for _, s := range []int{DefaultSliceSize(n), StableSliceSize(n)} {
			b.Run(fmt.Sprintf("n=%d/s=%d/float64", n, s), func(b *testing.B) { benchSolve[float64](b, n, s) })
			b.Run(fmt.Sprintf("n=%d/s=%d/float32", n, s), func(b *testing.B) { benchSolve[float32](b, n, s) })
		}
	}
}

func benchSolve[T tri.Float](b *testing.B, n, s int) {
	sys := randSystem(rand.New(rand.NewPCG(1, 2)), n)
	a, bb, c, d := tritest.Conv[T](sys.a), tritest.Conv[T](sys.b), tritest.Conv[T](sys.c), tritest.Conv[T](sys.d)
	x := make([]T, n)
	ws := NewWorkspace[T](n, s)
	b.SetBytes(int64(5 * n * int(sizeOf[T]())))
	b.ReportAllocs()
	for b.Loop() {
		if err := Solve(a, bb, c, d, x, s, ws); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrows/s")
}

func sizeOf[T tri.Float]() uintptr {
	var z T
	if _, ok := any(z).(float32); ok {
		return 4
	}
	return 8
}
