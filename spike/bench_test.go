package spike

import (
	"fmt"
	"runtime"
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
		p := ChoosePartitions(n, k, 0)
		name := func(s string) string { return fmt.Sprintf("K=%d/%s", k, s) }
		for _, l := range []int{0, 2 * k} {
			b.Run(name(fmt.Sprintf("spike-f64-P=%d-l=%d", p, l)), func(b *testing.B) {
				for b.Loop() {
					f, err := Factor(A, Options{ULBlock: l})
					if err != nil {
						b.Fatal(err)
					}
					if err := f.Solve(rhs, x); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		b.Run(name(fmt.Sprintf("spike-f32-P=%d-l=%d", p, 2*k)), func(b *testing.B) {
			for b.Loop() {
				f, err := Factor(A32, Options{ULBlock: 2 * k})
				if err != nil {
					b.Fatal(err)
				}
				if err := f.Solve(rhs32, x32); err != nil {
					b.Fatal(err)
				}
			}
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
		b.Run(name(fmt.Sprintf("spike-solve-only-f64-P=%d", p)), func(b *testing.B) {
			f, err := Factor(A, Options{ULBlock: 2 * k})
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if err := f.Solve(rhs, x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	_ = runtime.GOMAXPROCS(0)
}
