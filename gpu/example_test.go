//go:build cuda

package gpu_test

import (
	"context"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/gpu"
	"github.com/bandsolve/bandsolve/krylov"
	"github.com/bandsolve/bandsolve/sparse"
	"github.com/bandsolve/bandsolve/spike"
	"github.com/bandsolve/bandsolve/tridiag"
)

// The same calls as on the CPU, with a GPU as the device: a batch of
// tridiagonal systems from host slices.
func ExampleOpen() {
	dev, err := gpu.Open(0)
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	const n, g = 1000, 64
	plan, err := tridiag.NewPlan[float64](dev, tridiag.Shape{N: n, G: g}, tridiag.Options{})
	if err != nil {
		panic(err)
	}
	defer plan.Close()
	x := make([]float64, n*g)
	d := make([]float64, n*g)
	for i := range d {
		d[i] = 2
	}
	if err := plan.SolveConst(context.Background(), -1, 4, -1, d, x); err != nil {
		panic(err)
	}
	// Row 500 of system 7: −x[499] + 4x[500] − x[501] = 2.
	r := x[7*n+499:]
	fmt.Printf("%.12f\n", -r[0]+4*r[1]-r[2])
	// Output: 2.000000000000
}

// Complex systems kept on the GPU: a Crank–Nicolson step of the
// Schrödinger equation i·u_t = −u_xx has the matrix (1 + iρ), −iρ/2 on
// the off-diagonals (ρ = Δt/Δx²), solved with constant coefficients.
// Auto runs the partition kernels on this contiguous batch.
func ExampleNewComplexTridiagPlan() {
	dev, err := gpu.Open(0)
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	const n, g, rho = 256, 32, 0.5
	plan, err := gpu.NewComplexTridiagPlan[complex128](dev, tridiag.Shape{N: n, G: g}, tridiag.Options{})
	if err != nil {
		panic(err)
	}
	defer plan.Close()
	d := make([]complex128, n*g)
	for i := range d {
		d[i] = complex(math.Sin(float64(i%n)), 0)
	}
	buf, err := cuda.Upload(dev, d)
	if err != nil {
		panic(err)
	}
	defer buf.Free()
	off, diag := complex(0, -rho/2), complex(1, rho)
	if err := plan.SolveDeviceConst(context.Background(), off, diag, off, buf, buf); err != nil {
		panic(err)
	}
	x := make([]complex128, n*g)
	if err := buf.CopyTo(x); err != nil {
		panic(err)
	}
	// Row 100 of system 3 holds its equation.
	r := x[3*n+99:]
	res := off*r[0] + diag*r[1] + off*r[2] - d[3*n+100]
	fmt.Println(plan.Algorithm(), cmplx.Abs(res) < 1e-13)
	// Output: partition true
}

// Batches of small banded systems on the GPU through banded.NewBatchPlan.
func Example_banded() {
	dev, err := gpu.Open(0)
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	const n, k, g = 100, 2, 8
	rng := rand.New(rand.NewPCG(1, 2))
	batch, err := banded.NewBatch[float64](n, k, g, banded.Interleaved)
	if err != nil {
		panic(err)
	}
	for s := 0; s < g; s++ {
		if err := batch.SetSystem(s, banded.Random[float64](n, k, 1.5, rng)); err != nil {
			panic(err)
		}
	}
	plan, err := banded.NewBatchPlan[float64](dev, n, k, g, banded.Interleaved, banded.BatchOptions{})
	if err != nil {
		panic(err)
	}
	defer plan.Close()
	rhs := make([]float64, n*g)
	for i := range rhs {
		rhs[i] = 1
	}
	x := make([]float64, n*g)
	if _, err := plan.SolveBatch(context.Background(), batch, rhs, x); err != nil {
		panic(err)
	}
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = x[batch.VecIndex(3, i)]
	}
	ax := make([]float64, n)
	batch.System(3).MulVec(xs, ax)
	fmt.Printf("system 3, row 50 of A·x: %.12f\n", ax[50])
	// Output: system 3, row 50 of A·x: 1.000000000000
}

// Truncated SPIKE on the GPU through spike.NewPlan: factor once, solve
// for several right-hand sides.
func Example_spike() {
	dev, err := gpu.Open(0)
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	const n, k = 100_000, 8
	A := banded.Random[float64](n, k, 1.5, rand.New(rand.NewPCG(1, 2)))
	plan, err := spike.NewPlan[float64](dev, n, k, spike.Options{})
	if err != nil {
		panic(err)
	}
	defer plan.Close()
	ctx := context.Background()
	if err := plan.Factor(ctx, A); err != nil {
		panic(err)
	}
	b, x, r := make([]float64, n), make([]float64, n), make([]float64, n)
	for rhs := 1; rhs <= 2; rhs++ {
		for i := range b {
			b[i] = float64(rhs)
		}
		if err := plan.Solve(ctx, b, x); err != nil {
			panic(err)
		}
		A.MulVec(x, r)
		var e float64
		for i := range r {
			e = math.Max(e, math.Abs(r[i]-b[i]))
		}
		fmt.Printf("b = %d: residual below 1e-12: %v\n", rhs, e < 1e-12)
	}
	// Output:
	// b = 1: residual below 1e-12: true
	// b = 2: residual below 1e-12: true
}

// BiCGStab(2) on the GPU through krylov.NewSpace and
// krylov.NewCSROperator: the vectors are device buffers.
func Example_krylov() {
	dev, err := gpu.Open(0)
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	a := sparse.ConvectionDiffusion2D(50, 20, 10)
	type vec = *cuda.Buffer[float64]
	sp, err := krylov.NewSpace[vec](dev, a.N)
	if err != nil {
		panic(err)
	}
	defer sp.Close()
	A, err := krylov.NewCSROperator[vec](dev, a)
	if err != nil {
		panic(err)
	}
	defer A.Close()
	b := make([]float64, a.N)
	for i := range b {
		b[i] = 1
	}
	db, err := cuda.Upload(dev, b)
	if err != nil {
		panic(err)
	}
	defer db.Free()
	x, err := sp.New()
	if err != nil {
		panic(err)
	}
	defer sp.Free(x)
	res, err := krylov.BiCGStab2(context.Background(), sp, A, nil, db, x, krylov.Options{Tol: 1e-10})
	if err != nil {
		panic(err)
	}
	fmt.Println("converged:", res.Converged, "residual ≤ 1e-10:", res.Residual <= 1e-10)
	// Output: converged: true residual ≤ 1e-10: true
}

// Truncated SPIKE on the GPU as a direct solver for one banded system of a
// million rows and half-bandwidth 16.
func ExampleNewSpikePlan() {
	dev, err := gpu.Open(0)
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	const n, k = 1_000_000, 16
	A := banded.Random[float64](n, k, 1, rand.New(rand.NewPCG(1, 2))) // degree of dominance 1
	want := make([]float64, n)
	for i := range want {
		want[i] = math.Sin(float64(i))
	}
	b := make([]float64, n)
	A.MulVec(want, b)

	// P (the partitions) from the device's tuning; spike.Options also sets
	// P, the UL block (SPIKE::GPU's l = 2K), boosting and block-Jacobi.
	plan, err := gpu.NewSpikePlan[float64](dev, n, k, spike.Options{})
	if err != nil {
		panic(err)
	}
	defer plan.Close()
	ctx := context.Background()
	if err := plan.FactorBand(ctx, A); err != nil { // or Factor on a device buffer
		panic(err)
	}
	x := make([]float64, n)
	if err := plan.SolveHost(ctx, b, x); err != nil { // or Solve on device buffers
		panic(err)
	}
	var e float64
	for i := range x {
		e = math.Max(e, math.Abs(x[i]-want[i]))
	}
	fmt.Println("boosted pivots:", plan.BoostCount())
	fmt.Println("max error below 1e-10:", e < 1e-10)
	// Output:
	// boosted pivots: 0
	// max error below 1e-10: true
}

// A batch of pentadiagonal systems (K = 2), one GPU thread per system:
// LU without pivoting with diagonal boosting, the results of
// banded.SolveBatch (refinement off) bit for bit. Not run by go test (it
// needs a GPU).
func ExampleNewBandBatchPlan() {
	dev, err := gpu.Open(0)
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	const n, k, g = 1024, 2, 4096
	rng := rand.New(rand.NewPCG(1, 2))
	batch, err := banded.NewBatch[float32](n, k, g, banded.Interleaved)
	if err != nil {
		panic(err)
	}
	for s := 0; s < g; s++ {
		if err := batch.SetSystem(s, banded.Random[float32](n, k, 1.5, rng)); err != nil {
			panic(err)
		}
	}
	plan, err := gpu.NewBandBatchPlan[float32](dev, n, k, g, banded.Interleaved, gpu.BandBatchOptions{})
	if err != nil {
		panic(err)
	}
	defer plan.Close()
	rhs := make([]float32, n*g) // element i of system s at batch.VecIndex(s, i)
	for i := range rhs {
		rhs[i] = 1
	}
	x := make([]float32, n*g)
	res, err := plan.SolveBatch(context.Background(), batch, rhs, x)
	if err != nil {
		panic(err) // a *banded.BatchError names each failed system and row
	}
	fmt.Println("systems with boosted pivots:", len(res.Boosted))
}

// A batch of complex banded systems (K = 3) held in device buffers, one
// GPU thread per system: LU with partial pivoting by |re| + |im|, the
// results of banded.SolveBatch with BatchOptions.Pivot bit for bit. Not
// run by go test (it needs a GPU).
func ExampleNewBandBatchPlan_complex() {
	dev, err := gpu.Open(0)
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	const n, k, g = 500, 3, 2048
	batch, err := banded.NewBatch[complex128](n, k, g, banded.Interleaved)
	if err != nil {
		panic(err)
	}
	for s := 0; s < g; s++ {
		for i := 0; i < n; i++ {
			for j := max(0, i-k); j <= min(n-1, i+k); j++ {
				// a Helmholtz-like row: −1, 2 − κ² + 0.1i, −1 on the
				// nearest diagonals, 0.05 on the outer ones
				v := complex(0.05, 0)
				switch {
				case i == j:
					v = complex(2-1.2*float64(s%7)/7, 0.1)
				case i-j == 1 || j-i == 1:
					v = -1
				}
				batch.Set(s, i, j, v)
			}
		}
	}
	plan, err := gpu.NewBandBatchPlan[complex128](dev, n, k, g, banded.Interleaved, gpu.BandBatchOptions{Pivot: true})
	if err != nil {
		panic(err)
	}
	defer plan.Close()
	a, err := cuda.Upload(dev, batch.Data)
	if err != nil {
		panic(err)
	}
	defer a.Free()
	rhs := make([]complex128, n*g)
	for i := range rhs {
		rhs[i] = 1i
	}
	x, err := cuda.Upload(dev, rhs)
	if err != nil {
		panic(err)
	}
	defer x.Free()
	if _, err := plan.SolveDevice(context.Background(), a, x, x); err != nil {
		panic(err) // a *banded.BatchError names each failed system and row
	}
	out := make([]complex128, n*g)
	if err := x.CopyTo(out); err != nil {
		panic(err)
	}
	fmt.Printf("x_0 of system 0: %.4f\n", out[batch.VecIndex(0, 0)])
}

// BiCGStab(2) on device vectors, preconditioned by truncated SPIKE in
// float32 (mixed precision), with CSR products of the matrix. Not run by
// go test (it needs a GPU).
func ExampleNewSpace() {
	dev, err := gpu.Open(0)
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	ctx := context.Background()
	const n, k = 100_000, 10
	A := banded.Random[float64](n, k, 0.5, rand.New(rand.NewPCG(1, 2))) // not diagonally dominant
	csr, err := sparse.FromBand(A)
	if err != nil {
		panic(err)
	}
	sp, err := gpu.NewSpace(dev, n) // vectors of n float64 on the device
	if err != nil {
		panic(err)
	}
	defer sp.Close()
	dA, err := gpu.UploadSparse(dev, csr)
	if err != nil {
		panic(err)
	}
	defer dA.Close()
	op, err := sp.Operator(dA) // y = A·x by CSR products
	if err != nil {
		panic(err)
	}
	// The preconditioner: truncated SPIKE factored in float32 with long
	// partitions (spike.PreconditionerPartitions for d < 1), applied to
	// float64 residuals.
	opts := spike.Options{Partitions: spike.PreconditionerPartitions(n, k)}
	p32, err := gpu.NewSpikePlan[float32](dev, n, k, opts)
	if err != nil {
		panic(err)
	}
	defer p32.Close()
	if err := p32.FactorBand(ctx, banded.Convert[float32](A)); err != nil {
		panic(err)
	}
	M, err := gpu.NewMixedPrecision(sp, p32.Solve)
	if err != nil {
		panic(err)
	}
	defer M.Close()
	b := make([]float64, n)
	for i := range b {
		b[i] = 1
	}
	db, err := cuda.Upload(dev, b)
	if err != nil {
		panic(err)
	}
	defer db.Free()
	dx, err := sp.New() // the initial guess: 0
	if err != nil {
		panic(err)
	}
	defer sp.Free(dx)
	res, err := krylov.BiCGStab2(ctx, sp, op, M, db, dx, krylov.Options{Tol: 1e-10})
	if err != nil {
		panic(err)
	}
	fmt.Println("converged:", res.Converged, "BiCG steps:", res.Iterations)
}
