package banded

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkFactorSolve times factorization plus one solve of an N = 10⁵
// system with degree of dominance 1 (the shape of the LAPACK gbsv anchors
// in bench/anchors/banded-h200.csv), LU without pivoting and with partial
// pivoting. K = 100 is skipped under -short.
func BenchmarkFactorSolve(b *testing.B) {
	const n = 100_000
	for _, k := range []int{2, 16, 100} {
		a := Random[float64](n, k, 1, newRNG(uint64(k)))
		rhs := randVec[float64](n, newRNG(7))
		x := make([]float64, n)
		b.Run(fmt.Sprintf("LU/N=%d/K=%d", n, k), func(b *testing.B) {
			if testing.Short() && k > 16 {
				b.Skip("-short")
			}
			f := a.Clone()
			for b.Loop() {
				copy(f.Data, a.Data)
				if _, err := FactorLU(f, FactorOptions{}); err != nil {
					b.Fatal(err)
				}
				copy(x, rhs)
				SolveLU(f, x)
			}
		})
		b.Run(fmt.Sprintf("Pivot/N=%d/K=%d", n, k), func(b *testing.B) {
			if testing.Short() && k > 16 {
				b.Skip("-short")
			}
			for b.Loop() {
				f, err := FactorPivot(a)
				if err != nil {
					b.Fatal(err)
				}
				copy(x, rhs)
				f.Solve(x)
			}
		})
	}
}

// BenchmarkCholesky times factorization plus one solve of symmetric
// positive definite bands (N = 10⁵), by Cholesky's method (pbsv: K+1
// values a row, no pivot search) and by LU with partial pivoting (gbsv)
// on the same matrices. K = 100 is skipped under -short.
func BenchmarkCholesky(b *testing.B) {
	const n = 100_000
	for _, k := range []int{2, 16, 100} {
		a := spdBand(newRNG(uint64(k)), n, k, 0.5)
		rhs := randVec[float64](n, newRNG(7))
		x := make([]float64, n)
		for _, m := range []string{"Cholesky", "Pivot"} {
			b.Run(fmt.Sprintf("%s/N=%d/K=%d", m, n, k), func(b *testing.B) {
				if testing.Short() && k > 16 {
					b.Skip("-short")
				}
				for b.Loop() {
					copy(x, rhs)
					if m == "Cholesky" {
						f, err := FactorCholesky(a)
						if err != nil {
							b.Fatal(err)
						}
						f.Solve(x)
						continue
					}
					f, err := FactorPivot(a)
					if err != nil {
						b.Fatal(err)
					}
					f.Solve(x)
				}
			})
		}
	}
}

// BenchmarkSolveBatch: G = 4096 pentadiagonal systems of N = 256.
func BenchmarkSolveBatch(b *testing.B) {
	const n, k, g = 256, 2, 4096
	for _, lay := range []Layout{Contiguous, Interleaved} {
		batch, _ := NewBatch[float32](n, k, g, lay)
		rng := newRNG(9)
		for s := 0; s < g; s++ {
			_ = batch.SetSystem(s, Random[float32](n, k, 1, rng))
		}
		rhs := randVec[float32](n*g, rng)
		x := make([]float32, n*g)
		b.Run(lay.String(), func(b *testing.B) {
			for b.Loop() {
				if _, err := SolveBatch(context.Background(), batch, rhs, x, BatchOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n*g)*float64(b.N)/b.Elapsed().Seconds()/1e6, "MRows/s")
		})
	}
}

// BenchmarkFactorSolveGeneral times LU with partial pivoting plus one
// solve of an N = 10⁵ system with KL ≠ KU (degree of dominance 1 by
// rows): FactorPivotGeneral on its General, and FactorPivot on the same
// matrix padded to a Band of K = max(KL, KU).
func BenchmarkFactorSolveGeneral(b *testing.B) {
	const n = 100_000
	for _, sh := range [][2]int{{1, 4}, {2, 16}, {16, 2}, {4, 32}} {
		kl, ku := sh[0], sh[1]
		g := randomGeneral[float64](n, kl, ku, 1, newRNG(uint64(kl*100+ku)))
		a, err := g.ToBand()
		if err != nil {
			b.Fatal(err)
		}
		rhs := randVec[float64](n, newRNG(7))
		x := make([]float64, n)
		b.Run(fmt.Sprintf("General/N=%d/KL=%d/KU=%d", n, kl, ku), func(b *testing.B) {
			for b.Loop() {
				f, err := FactorPivotGeneral(g)
				if err != nil {
					b.Fatal(err)
				}
				copy(x, rhs)
				f.Solve(x)
			}
		})
		b.Run(fmt.Sprintf("PaddedBand/N=%d/KL=%d/KU=%d", n, kl, ku), func(b *testing.B) { // K = max(KL, KU)
			if testing.Short() {
				b.Skip("-short")
			}
			for b.Loop() {
				f, err := FactorPivot(a)
				if err != nil {
					b.Fatal(err)
				}
				copy(x, rhs)
				f.Solve(x)
			}
		})
	}
}
