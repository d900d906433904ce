package wangmou

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/bandsolve/bandsolve/tridiag/internal/tri"
	"github.com/bandsolve/bandsolve/tridiag/internal/tritest"
)

func BenchmarkSolve(b *testing.B) {
	for _, n := range []int{1024, 65536} {
		b.Run(fmt.Sprintf("n=%d/float64", n), func(b *testing.B) { benchSolve[float64](b, n) })
		b.Run(fmt.Sprintf("n=%d/float32", n), func(b *testing.B) { benchSolve[float32](b, n) })
	}
}

func benchSolve[T tri.Float](b *testing.B, n int) {
	sys := randSystem(rand.New(rand.NewPCG(1, 2)), n)
	a, bb, c, d := tritest.Conv[T](sys.a), tritest.Conv[T](sys.b), tritest.Conv[T](sys.c), tritest.Conv[T](sys.d)
	x := make([]T, n)
	ws := NewWorkspace[T](n)
	b.SetBytes(int64(5 * n * int(sizeOf[T]())))
	b.ReportAllocs()
	for b.Loop() {
		if err := Solve(a, bb, c, d, x, ws); err != nil {
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
