package sptrsv

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/bandsolve/bandsolve/sparse"
	"github.com/bandsolve/bandsolve/sptrsv/suite"
)

// layered is a lower triangle of n rows in levels of width rows: every
// row past the first level depends on three random rows of the level
// before.
func layered(n, width int) *sparse.CSR {
	rng := rand.New(rand.NewPCG(uint64(n), uint64(width)))
	c := sparse.NewCOO(n, n, 4*n)
	for i := range n {
		if l := i / width; l > 0 {
			for range 3 {
				c.Add(i, (l-1)*width+rng.IntN(width), 0.1)
			}
		}
		c.Add(i, i, 2)
	}
	return must(c.ToCSR())
}

// BenchmarkLevelThreshold solves triangles whose levels all have the same
// width, each level done serially on the calling goroutine or by the
// workers: the width where the workers win is the level size from which
// handing a level to them pays (DefaultSerialLevelRows).
func BenchmarkLevelThreshold(b *testing.B) {
	const n = 1 << 18
	for _, width := range []int{256, 1024, 2048, 4096, 16384} {
		a := layered(n, width)
		for _, mode := range []string{"serial", "workers"} {
			serial := width + 1
			if mode == "workers" {
				serial = -1
			}
			an := must(Analyze(a, Options{SerialLevelRows: serial}))
			rhs, x := make([]float64, n), make([]float64, n)
			for i := range rhs {
				rhs[i] = 1
			}
			b.Run(fmt.Sprintf("width%d/%s", width, mode), func(b *testing.B) {
				for b.Loop() {
					if err := Solve(context.Background(), an, rhs, x); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(an.Levels()), "levels")
			})
		}
	}
}

// BenchmarkSolve compares the analysis and the three solves on the lower
// triangle of the 5-point Laplacian of a 500×500 grid (999 levels) and on
// a layered triangle with 64 wide levels.
func BenchmarkSolve(b *testing.B) {
	mats := map[string]*sparse.CSR{"laplace2d-500": laplacian2D(500), "layered-64x4096": layered(64*4096, 4096)}
	for _, name := range []string{"laplace2d-500", "layered-64x4096"} {
		a := mats[name]
		opts := Options{Part: TrianglePart}
		b.Run(name+"/analyze", func(b *testing.B) {
			for b.Loop() {
				must(Analyze(a, opts))
			}
		})
		an := must(Analyze(a, opts))
		rhs, x := make([]float64, a.N), make([]float64, a.N)
		for i := range rhs {
			rhs[i] = 1
		}
		for _, m := range []struct {
			name  string
			solve func() error
		}{
			{"sequential", func() error { return SolveSequential(an, rhs, x) }},
			{"levelset", func() error { return Solve(context.Background(), an, rhs, x) }},
			{"syncfree", func() error { return SolveSyncFree(context.Background(), an, rhs, x) }},
		} {
			b.Run(name+"/"+m.name, func(b *testing.B) {
				for b.Loop() {
					if err := m.solve(); err != nil {
						b.Fatal(err)
					}
				}
				st := an.Stats()
				b.ReportMetric(2*float64(st.NNZ)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkSuite times the analyses (Analyze, and AnalyzeLocality on top
// of it with the default capacity) and the level-set, synchronization-free
// and locality solves in float64 on matrices of suite.Small, and reports
// the statistics each method runs by: levels, sub-graphs, sub-graph
// levels and critical slots.
//
//	go test ./sptrsv/ -run '^$' -bench Suite
func BenchmarkSuite(b *testing.B) {
	for _, name := range []string{"lap2d-5pt-natural", "lap3d-7pt-natural", "dense-lower", "power-law", "two-level", "road-like"} {
		c, err := suite.Small().Lookup(name)
		if err != nil {
			b.Fatal(err)
		}
		a := c.Build()
		an := must(Analyze(a, Options{}))
		b.Run(name+"/analyze", func(b *testing.B) {
			for b.Loop() {
				must(Analyze(a, Options{}))
			}
			b.ReportMetric(float64(an.Levels()), "levels")
		})
		loc := must(AnalyzeLocality(an, LocalityOptions{}))
		b.Run(name+"/analyze-locality", func(b *testing.B) {
			for b.Loop() {
				must(AnalyzeLocality(an, LocalityOptions{}))
			}
			st := loc.Stats()
			b.ReportMetric(float64(st.Subgraphs), "subgraphs")
			b.ReportMetric(float64(st.Levels), "sublevels")
			b.ReportMetric(float64(st.CriticalSlots), "critslots")
		})
		rhs, x := make([]float64, a.N), make([]float64, a.N)
		for i := range rhs {
			rhs[i] = 1
		}
		ctx := context.Background()
		for _, m := range []struct {
			name  string
			solve func() error
		}{
			{"levelset", func() error { return Solve(ctx, an, rhs, x) }},
			{"syncfree", func() error { return SolveSyncFree(ctx, an, rhs, x) }},
			{"locality", func() error { return SolveLocality(ctx, loc, rhs, x) }},
		} {
			b.Run(name+"/"+m.name, func(b *testing.B) {
				for b.Loop() {
					if err := m.solve(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(2*float64(an.Stats().NNZ)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
