package tridiag_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/bandsolve/bandsolve/tridiag"
)

// benchBatch is a float64 batch of g symmetric, diagonally dominant
// systems of n rows (every algorithm, LDLT included, solves it) with
// nrhs right-hand sides, in the given layout.
type benchBatch struct {
	shape      tridiag.Shape
	a, b, c, d []float64
	x          []float64
}

func newBenchBatch(n, g, nrhs int, interleaved bool) *benchBatch {
	shape := tridiag.Shape{N: n, G: g}
	if interleaved {
		shape.Layout = tridiag.Interleaved(g)
	}
	r := rand.New(rand.NewPCG(1, 1))
	sys := make([]system, g)
	for k := range sys {
		sys[k] = randSystem(r, n, 4)
		sys[k].symmetrize()
	}
	a, b, c, _ := pack[float64](shape, sys)
	L := shape.Normalize().Len()
	d := make([]float64, nrhs*L)
	for i := range d {
		d[i] = r.Float64()*2 - 1
	}
	return &benchBatch{shape: shape, a: a, b: b, c: c, d: d, x: make([]float64, len(d))}
}

func benchPlan(b *testing.B, shape tridiag.Shape, alg tridiag.Algorithm) *tridiag.Plan[float64] {
	p, err := tridiag.NewPlan[float64](nil, shape, tridiag.Options{Algorithm: alg, SkipFiniteCheck: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.Close() })
	return p
}

// reportRows reports the rows solved (all columns) per second.
func reportRows(b *testing.B, rows int) {
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds()/1e6, "MRows/s")
}

// BenchmarkFactor times Plan.Factor of 1024 float64 systems of 256 rows
// (contiguous) by Thomas's LU, gttrf and L·D·Lᵀ, against one Plan.Solve.
func BenchmarkFactor(b *testing.B) {
	const n, g = 256, 1024
	bt := newBenchBatch(n, g, 1, false)
	ctx := context.Background()
	for _, alg := range []tridiag.Algorithm{tridiag.Thomas, tridiag.GTSV, tridiag.LDLT} {
		p := benchPlan(b, bt.shape, alg)
		b.Run(alg.String()+"/factor", func(b *testing.B) {
			for b.Loop() {
				f, err := p.Factor(ctx, bt.a, bt.b, bt.c)
				if err != nil {
					b.Fatal(err)
				}
				f.Close()
			}
			reportRows(b, n*g)
		})
		b.Run(alg.String()+"/plan-solve", func(b *testing.B) {
			for b.Loop() {
				if err := p.Solve(ctx, bt.a, bt.b, bt.c, bt.d, bt.x); err != nil {
					b.Fatal(err)
				}
			}
			reportRows(b, n*g)
		})
	}
}

// BenchmarkFactorsSolve times one right-hand side of 1024 float64
// systems of 256 rows: Plan.Solve (elimination every time) against
// Factors.Solve (stored factors), contiguous and interleaved, for Thomas,
// GTSV and LDLT.
func BenchmarkFactorsSolve(b *testing.B) {
	const n, g = 256, 1024
	ctx := context.Background()
	for _, interleaved := range []bool{false, true} {
		lay := "contiguous"
		if interleaved {
			lay = "interleaved"
		}
		bt := newBenchBatch(n, g, 1, interleaved)
		for _, alg := range []tridiag.Algorithm{tridiag.Thomas, tridiag.GTSV, tridiag.LDLT} {
			p := benchPlan(b, bt.shape, alg)
			f, err := p.Factor(ctx, bt.a, bt.b, bt.c)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%s/%s/plan-solve", lay, alg), func(b *testing.B) {
				for b.Loop() {
					if err := p.Solve(ctx, bt.a, bt.b, bt.c, bt.d, bt.x); err != nil {
						b.Fatal(err)
					}
				}
				reportRows(b, n*g)
			})
			b.Run(fmt.Sprintf("%s/%s/factors-solve", lay, alg), func(b *testing.B) {
				for b.Loop() {
					if err := f.Solve(ctx, bt.d, bt.x); err != nil {
						b.Fatal(err)
					}
				}
				reportRows(b, n*g)
			})
			f.Close()
		}
	}
}

// BenchmarkSolveMany times nrhs = 4 and 16 right-hand sides of 1024
// float64 systems of 256 rows (contiguous): nrhs separate Plan.Solve
// calls, one Plan.SolveMany (each system factored once in cache) and one
// Factors.SolveMany (stored factors), for Thomas and LDLT.
func BenchmarkSolveMany(b *testing.B) {
	const n, g = 256, 1024
	ctx := context.Background()
	for _, nrhs := range []int{4, 16} {
		bt := newBenchBatch(n, g, nrhs, false)
		L := bt.shape.Len()
		for _, alg := range []tridiag.Algorithm{tridiag.Thomas, tridiag.LDLT} {
			p := benchPlan(b, bt.shape, alg)
			f, err := p.Factor(ctx, bt.a, bt.b, bt.c)
			if err != nil {
				b.Fatal(err)
			}
			name := fmt.Sprintf("nrhs=%d/%s", nrhs, alg)
			b.Run(name+"/plan-solve-each", func(b *testing.B) {
				for b.Loop() {
					for r := range nrhs {
						if err := p.Solve(ctx, bt.a, bt.b, bt.c, bt.d[r*L:(r+1)*L], bt.x[r*L:(r+1)*L]); err != nil {
							b.Fatal(err)
						}
					}
				}
				reportRows(b, n*g*nrhs)
			})
			b.Run(name+"/plan-solvemany", func(b *testing.B) {
				for b.Loop() {
					if err := p.SolveMany(ctx, nrhs, bt.a, bt.b, bt.c, bt.d, bt.x); err != nil {
						b.Fatal(err)
					}
				}
				reportRows(b, n*g*nrhs)
			})
			b.Run(name+"/factors-solvemany", func(b *testing.B) {
				for b.Loop() {
					if err := f.SolveMany(ctx, nrhs, bt.d, bt.x); err != nil {
						b.Fatal(err)
					}
				}
				reportRows(b, n*g*nrhs)
			})
			f.Close()
		}
	}
}
