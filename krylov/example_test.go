package krylov_test

import (
	"context"
	"fmt"
	"math"

	"github.com/bandsolve/bandsolve/ilu"
	"github.com/bandsolve/bandsolve/krylov"
	"github.com/bandsolve/bandsolve/krylov/problems"
	"github.com/bandsolve/bandsolve/sparse"
	"github.com/bandsolve/bandsolve/sptrsv"
	"github.com/bandsolve/bandsolve/tridiag"
)

// Solve −u″ + 40u′ = 1 on (0, 1) with u(0) = u(1) = 0 (central
// differences on 999 interior points) by BiCGStab(2) in float64 on the
// host, preconditioned by a float32 tridiagonal solve: the mixed-precision
// set-up of SPIKE::GPU, where the float32 truncated-SPIKE solve takes the
// place of the Thomas algorithm used here.
func ExampleBiCGStab2() {
	const n = 999
	h := 1.0 / (n + 1)
	// Row i, scaled by h²: lo·u[i−1] + di·u[i] + up·u[i+1].
	lo, di, up := -1-20*h, 2.0, -1+20*h

	A := krylov.OperatorFunc[[]float64](func(_ context.Context, x, y []float64) error {
		for i := range x {
			v := di * x[i]
			if i > 0 {
				v += lo * x[i-1]
			}
			if i < n-1 {
				v += up * x[i+1]
			}
			y[i] = v
		}
		return nil
	})

	// M⁻¹ by the Thomas algorithm in float32.
	cp := make([]float32, n)
	M := krylov.NewMixedPrecision(n, func(_ context.Context, r, z []float32) error {
		a, b, c := float32(lo), float32(di), float32(up)
		cp[0], z[0] = c/b, r[0]/b
		for i := 1; i < n; i++ {
			den := b - a*cp[i-1]
			cp[i], z[i] = c/den, (r[i]-a*z[i-1])/den
		}
		for i := n - 2; i >= 0; i-- {
			z[i] -= cp[i] * z[i+1]
		}
		return nil
	})

	b := make([]float64, n)
	for i := range b {
		b[i] = h * h
	}
	x := make([]float64, n) // the initial guess: 0
	res, err := krylov.BiCGStab2(context.Background(), krylov.HostSpace{N: n}, A, M, b, x, krylov.Options{Tol: 1e-10})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println("converged:", res.Converged)
	fmt.Println("‖b − A·x‖/‖b‖ ≤ 1e-10:", res.Residual <= 1e-10)
	fmt.Println("fewer than 10 BiCG steps:", res.Iterations < 10)
	// u(1/2) is x[499]; the ODE's exact solution for comparison.
	exact := (0.5 - math.Expm1(20)/math.Expm1(40)) / 40
	fmt.Printf("u(1/2) = %.6f (exact %.6f)\n", x[499], exact)
	// Output:
	// converged: true
	// ‖b − A·x‖/‖b‖ ≤ 1e-10: true
	// fewer than 10 BiCG steps: true
	// u(1/2) = 0.012500 (exact 0.012500)
}

// Solve a convection–diffusion problem, the 5-point operator on a 50×50
// grid, by BiCGStab(2) through the device-neutral entry points: the
// vectors come from NewSpace and the products from NewCSROperator. On the
// CPU (nil, or a *tridiag.CPU) the vectors are []float64; with a GPU
// (built with -tags cuda, package github.com/bandsolve/bandsolve/gpu
// imported) the same code runs with the GPU as dev and V =
// *cuda.Buffer[float64], b and x uploaded to the device.
func ExampleNewSpace() {
	ctx := context.Background()
	a := sparse.ConvectionDiffusion2D(50, 20, 10)
	n := a.N
	var dev tridiag.Device // nil: the CPU

	sp, err := krylov.NewSpace[[]float64](dev, n)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer sp.Close()
	A, err := krylov.NewCSROperator[[]float64](dev, a)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer A.Close()

	b := make([]float64, n)
	for i := range b {
		b[i] = 1
	}
	x, err := sp.New() // the initial guess: 0
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer sp.Free(x)
	res, err := krylov.BiCGStab2(ctx, sp, A, nil, b, x, krylov.Options{Tol: 1e-10})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println("converged:", res.Converged)
	fmt.Println("‖b − A·x‖/‖b‖ ≤ 1e-10:", res.Residual <= 1e-10)
	// Output:
	// converged: true
	// ‖b − A·x‖/‖b‖ ≤ 1e-10: true
}

// Solve the 2-D Poisson problem on a 100×100 grid by CG, without a
// preconditioner and with IC(0) (two triangular solves a step through
// sptrsv plans): the incomplete Cholesky factor cuts the iterations by
// more than half.
func ExampleCG() {
	a := problems.Poisson2D(100)
	b := problems.OnesRHS(a) // the solution is (1, …, 1)
	op, err := krylov.NewCSROperator[[]float64](nil, a)
	if err != nil {
		fmt.Println(err)
		return
	}
	f, err := ilu.IC0(a, ilu.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	ic0, err := ilu.NewPreconditioner[float64](f, nil, sptrsv.Auto)
	if err != nil {
		fmt.Println(err)
		return
	}
	sp := krylov.HostSpace{N: a.N}
	for _, m := range []struct {
		name string
		M    krylov.Preconditioner[[]float64]
	}{{"none", nil}, {"IC(0)", ic0}} {
		x := make([]float64, a.N)
		res, err := krylov.CG(context.Background(), sp, op, m.M, b, x, krylov.Options{Tol: 1e-8})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%-5s %3d iterations, residual < 1e-8: %v, x[0] = %.6f\n", m.name, res.Iterations, res.Residual < 1e-8, x[0])
	}
	// Output:
	// none  183 iterations, residual < 1e-8: true, x[0] = 1.000000
	// IC(0)  78 iterations, residual < 1e-8: true, x[0] = 1.000000
}
