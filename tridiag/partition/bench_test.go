package partition

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/bandsolve/bandsolve/tridiag/internal/tri"
	"github.com/bandsolve/bandsolve/tridiag/internal/tritest"
)

func BenchmarkSolve(b *testing.B) {
	for _, n := range []int{1024, 65536} {
		for _, p := range []int{4, 8, 16} {
			b.Run(fmt.Sprintf("n=%d/p=%d/float64", n, p), func(b *testing.B) { benchSolve[float64](b, n, p) })
			b.Run(fmt.Sprintf("n=%d/p=%d/float32", n, p), func(b *testing.B) { benchSolve[float32](b, n, p) })
		}
	}
}

func benchSolve[T tri.Float](b *testing.B, n, p int) {
	sys := randSystem(rand.New(rand.NewPCG(1, 2)), n, 4)
	a, bb, c, d := tritest.Conv[T](sys.a), tritest.Conv[T](sys.b), tritest.Conv[T](sys.c), tritest.Conv[T](sys.d)
	x := make([]T, n)
	ws := NewWorkspace[T](n)
	b.SetBytes(int64(5 * n * int(sizeOf[T]())))
	b.ReportAllocs()
	for b.Loop() {
		if err := Solve(a, bb, c, d, x, p, ws); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrows/s")
}
