package tridiag_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/bandsolve/bandsolve/tridiag"
)

// BenchmarkCPUComplex times dominant batches of N = 256, G = 1024 in each
// element type, for Auto and GTSV: go test ./tridiag -run '^$' -bench CPUComplex.
func BenchmarkCPUComplex(b *testing.B) {
	benchComplexType[float64](b, "float64")
	benchComplexType[complex64](b, "complex64")
	benchComplexType[complex128](b, "complex128")
}

func benchComplexType[T tridiag.Scalar](b *testing.B, name string) {
	const n, G = 256, 1024
	shape := tridiag.Shape{N: n, G: G}
	r := rand.New(rand.NewPCG(1, 28))
	L := shape.Len()
	a, bb, c, d := make([]T, L), make([]T, L), make([]T, L), make([]T, L)
	for k := range L {
		a[k], bb[k], c[k], d[k] = scalar[T](r.Float64()-0.5, r.Float64()), 4, scalar[T](r.Float64()-0.5, r.Float64()-0.5), scalar[T](r.Float64(), r.Float64())
	}
	x := make([]T, L)
	for _, alg := range []tridiag.Algorithm{tridiag.Auto, tridiag.GTSV} {
		b.Run(fmt.Sprintf("%s/%s", name, alg), func(b *testing.B) {
			p, err := tridiag.NewPlan[T](nil, shape, tridiag.Options{Algorithm: alg, SkipFiniteCheck: true})
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			b.SetBytes(int64(5 * L * sizeOfScalar[T]()))
			for b.Loop() {
				if err := p.Solve(context.Background(), a, bb, c, d, x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// scalar is re (+ i·im when T is complex).
func scalar[T tridiag.Scalar](re, im float64) T {
	var v any
	switch any(*new(T)).(type) {
	case float32:
		v = float32(re)
	case float64:
		v = re
	case complex64:
		v = complex64(complex(re, im))
	case complex128:
		v = complex(re, im)
	}
	return v.(T)
}

func sizeOfScalar[T tridiag.Scalar]() int {
	switch any(*new(T)).(type) {
	case float32:
		return 4
	case complex128:
		return 16
	}
	return 8
}
