package partition

import (
	"fmt"
	"testing"

	"github.com/bandsolve/bandsolve/tridiag/internal/tritest"
)

func BenchmarkSolve(b *testing.B) {
	for _, n := range []int{1024, 65536} {
		for _, p := range []int{4, 8, 16} {
			b.Run(fmt.Sprintf("n=%d/p=%d/float64", n, p), func(b *testing.B) { tritest.Bench(b, solver[float64](), n, p) })
			b.Run(fmt.Sprintf("n=%d/p=%d/float32", n, p), func(b *testing.B) { tritest.Bench(b, solver[float32](), n, p) })
		}
	}
}
