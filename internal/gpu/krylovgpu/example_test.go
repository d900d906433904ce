//go:build cuda

package krylovgpu_test

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/krylovgpu"
	"github.com/bandsolve/bandsolve/internal/gpu/spikegpu"
	"github.com/bandsolve/bandsolve/krylov"
	"github.com/bandsolve/bandsolve/sparse"
	"github.com/bandsolve/bandsolve/spike"
)

// BiCGStab(2) on device vectors, preconditioned by truncated SPIKE in
// float32 (mixed precision), with CSR products of the matrix. Not run by
// go test (it needs a GPU).
func ExampleNewSpace() {
	dev, err := cuda.Open(0)
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
	sp, err := krylovgpu.NewSpace(dev, n) // vectors of n float64 on the device
	if err != nil {
		panic(err)
	}
	defer sp.Close()
	dA, err := krylovgpu.UploadSparse(dev, csr)
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
	p32, err := spikegpu.NewPlan[float32](dev, n, k, opts)
	if err != nil {
		panic(err)
	}
	defer p32.Close()
	if err := p32.FactorBand(ctx, banded.Convert[float32](A)); err != nil {
		panic(err)
	}
	M, err := krylovgpu.NewMixedPrecision(sp, p32.Solve)
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

// The device-neutral entry points of package krylov on a GPU: the solve of
// krylov's ExampleNewSpace with the GPU as the device and
// *cuda.Buffer[float64] as the vector type. Not run by go test (it needs a
// GPU).
func ExampleRegister() {
	krylovgpu.Register() // package github.com/bandsolve/bandsolve/gpu does this
	dev, err := cuda.Open(0)
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	ctx := context.Background()
	a := sparse.ConvectionDiffusion2D(50, 20, 10)
	n := a.N

	sp, err := krylov.NewSpace[*cuda.Buffer[float64]](dev, n)
	if err != nil {
		panic(err)
	}
	defer sp.Close()
	A, err := krylov.NewCSROperator[*cuda.Buffer[float64]](dev, a)
	if err != nil {
		panic(err)
	}
	defer A.Close()
	b := make([]float64, n)
	for i := range b {
		b[i] = 1
	}
	db, err := cuda.Upload(dev, b)
	if err != nil {
		panic(err)
	}
	defer db.Free()
	x, err := sp.New() // the initial guess: 0
	if err != nil {
		panic(err)
	}
	defer sp.Free(x)
	res, err := krylov.BiCGStab2(ctx, sp, A, nil, db, x, krylov.Options{Tol: 1e-10})
	if err != nil {
		panic(err)
	}
	fmt.Println("converged:", res.Converged)
	fmt.Println("‖b − A·x‖/‖b‖ ≤ 1e-10:", res.Residual <= 1e-10)
}
