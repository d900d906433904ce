package krylov_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/bandsolve/bandsolve/ilu"
	"github.com/bandsolve/bandsolve/krylov"
	"github.com/bandsolve/bandsolve/krylov/problems"
	"github.com/bandsolve/bandsolve/sparse"
	"github.com/bandsolve/bandsolve/sptrsv"
)

// BenchmarkPreconditioned solves the 2-D Poisson problem (CG) and the
// convection–diffusion problem with Péclet 100 (BiCGStab) on a 300×300
// grid to a relative residual of 10⁻⁸, b = A·e, with each preconditioner:
//
//	go test ./krylov/ -run '^$' -bench Preconditioned -benchtime 3x
//
// It reports the iterations, the set-up time (factorization and the
// triangular analysis, ms) and the time per iteration (ms); ns/op is the
// solve without the set-up.
func BenchmarkPreconditioned(b *testing.B) {
	const m = 300
	cases := []struct {
		name   string
		a      *sparse.CSR
		method method
		precs  []string
	}{
		{"poisson2d-300/cg", problems.Poisson2D(m), krylov.CG[[]float64], []string{"none", "jacobi", "ic0"}},
		{"convdiff2d-300-pe100/bicgstab", problems.ConvectionDiffusion2D(m, 100), krylov.BiCGStab[[]float64], []string{"none", "ilu0"}},
	}
	for _, c := range cases {
		rhs := problems.OnesRHS(c.a)
		op, err := krylov.NewCSROperator[[]float64](nil, c.a)
		if err != nil {
			b.Fatal(err)
		}
		for _, pn := range c.precs {
			b.Run(fmt.Sprintf("%s/%s", c.name, pn), func(b *testing.B) {
				t0 := time.Now()
				var M krylov.Preconditioner[[]float64]
				switch pn {
				case "jacobi":
					M, err = krylov.NewJacobi(c.a)
				case "ic0", "ilu0":
					var f *ilu.Factors
					if pn == "ic0" {
						f, err = ilu.IC0(c.a, ilu.Options{})
					} else {
						f, err = ilu.ILU0(c.a, ilu.Options{})
					}
					if err == nil {
						M, err = ilu.NewPreconditioner[float64](f, nil, sptrsv.Auto)
					}
				}
				if err != nil {
					b.Fatal(err)
				}
				setup := time.Since(t0)
				var res krylov.Result
				b.ResetTimer()
				for range b.N {
					x := make([]float64, c.a.N)
					res, err = c.method(context.Background(), krylov.HostSpace{N: c.a.N}, op, M, rhs, x, krylov.Options{Tol: 1e-8, MaxIter: 10000})
					if err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				perSolve := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
				b.ReportMetric(float64(res.Iterations), "iters")
				b.ReportMetric(float64(setup.Microseconds())/1e3, "setup-ms")
				b.ReportMetric(perSolve/float64(res.Iterations)/1e6, "ms/iter")
			})
		}
	}
}

// BenchmarkFactor times ILU(0) and IC(0) of the 2-D Poisson matrix
// 300×300 (numeric factorization with the analysis, then Refactor alone).
func BenchmarkFactor(b *testing.B) {
	a := problems.Poisson2D(300)
	for _, kind := range []string{"ilu0", "ic0"} {
		factor := ilu.ILU0
		if kind == "ic0" {
			factor = ilu.IC0
		}
		b.Run(kind+"/analyse+factor", func(b *testing.B) {
			for range b.N {
				if _, err := factor(a, ilu.Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(kind+"/refactor", func(b *testing.B) {
			f, err := factor(a, ilu.Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if err := f.Refactor(a.Val); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
