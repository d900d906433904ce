package wangmou

import (
	"fmt"
	"testing"

	"github.com/bandsolve/bandsolve/tridiag/internal/tritest"
)

func BenchmarkSolve(b *testing.B) {
	for _, n := range []int{1024, 65536} {
		b.Run(fmt.Sprintf("n=%d/float64", n), func(b *testing.B) { tritest.Bench(b, solver[float64](), n, 0) })
		b.Run(fmt.Sprintf("n=%d/float32", n), func(b *testing.B) { tritest.Bench(b, solver[float32](), n, 0) })
	}
}
