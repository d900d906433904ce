package tpr

import (
	"fmt"
	"testing"

	"github.com/bandsolve/bandsolve/tridiag/internal/tritest"
)

func BenchmarkSolve(b *testing.B) {
	for _, n := range []int{1024, 65536} {
		for _, s := range []int{DefaultSliceSize(n), StableSliceSize(n)} {
			b.Run(fmt.Sprintf("n=%d/s=%d/float64", n, s), func(b *testing.B) { tritest.Bench(b, solver[float64](), n, s) })
			b.Run(fmt.Sprintf("n=%d/s=%d/float32", n, s), func(b *testing.B) { tritest.Bench(b, solver[float32](), n, s) })
		}
	}
}
