package spike

import (
	"fmt"
	"testing"

	"github.com/bandsolve/bandsolve/banded"
)

// BenchmarkFactorSolve times Factor followed by one Solve for N = 10⁵ and
// K = 2, 16, 100 (K = 100 skipped under -short), truncated SPIKE with the
// default partitioning (ChoosePartitions over GOMAXPROCS) and exact or
// l = 2K left spikes, and in float32, next to banded LU with partial
// pivoting (FactorPivot + Solve, the gbsv-like oracle).
func BenchmarkFactorSolve(b *testing.B) {
	const n = 100_000
	for _, k := range []int{2, 16, 100} {
		if k > 16 && testing.Short() {
			continue
		}
		A := banded.Random[float64](n, k, 1, newRNG(uint64(k)))
		A32 := banded.Convert[float32](A)
		rhs := randVec[float64](n, newRNG(1))
		rhs32 := toF32(rhs)
		x := make([]float64, n)
		x32 := make([]float32, n)
		// Warm up the heap (the first sub-benchmark would otherwise pay the
		// page faults of fresh memory for the copies of A).
		for range 2 {
			if f, err := Factor(A, Options{Partitions: 2}); err == nil {
				_ = f.Solve(rhs, x)
			}
		}
		name := func(s string) string { return fmt.Sprintf("K=%d/%s", k, s) }
		for _, l := range []int{0, 2 * k} {
			b.Run(name(fmt.Sprintf("spike-f64-l=%d", l)), func(b *testing.B) {
				var f *Factorization[float64]
				for b.Loop() {
					var err error
					if f, err = Factor(A, Options{ULBlock: l}); err != nil {
						b.Fatal(err)
					}
					if err := f.Solve(rhs, x); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(f.P()), "partitions")
			})
		}
		b.Run(name(fmt.Sprintf("spike-f32-l=%d", 2*k)), func(b *testing.B) {
			var f *Factorization[float32]
			for b.Loop() {
				var err error
				if f, err = Factor(A32, Options{ULBlock: 2 * k}); err != nil {
					b.Fatal(err)
				}
				if err := f.Solve(rhs32, x32); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(f.P()), "partitions")
		})
		b.Run(name("spike-f64-P=1"), func(b *testing.B) {
			for b.Loop() {
				f, err := Factor(A, Options{Partitions: 1})
				if err != nil {
					b.Fatal(err)
				}
				if err := f.Solve(rhs, x); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name("pivot-f64"), func(b *testing.B) {
			for b.Loop() {
				f, err := banded.FactorPivot(A)
				if err != nil {
					b.Fatal(err)
				}
				copy(x, rhs)
				f.Solve(x)
			}
		})
		b.Run(name("spike-solve-only-f64"), func(b *testing.B) {
			f, err := Factor(A, Options{ULBlock: 2 * k})
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if err := f.Solve(rhs, x); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(f.P()), "partitions")
		})
	}
}
