//go:build cuda

package cuda_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/krylov"
	"github.com/bandsolve/bandsolve/sparse"
	"github.com/bandsolve/bandsolve/spike"
)

// Truncated SPIKE on the GPU as a direct solver for one banded system of a
// million rows and half-bandwidth 16.
func ExampleNewSpikePlan() {
	dev, err := cuda.Open(0)
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
	plan, err := cuda.NewSpikePlan[float64](dev, n, k, spike.Options{})
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
// banded.SolveBatch bit for bit. Not run by go test (it needs a GPU).
func ExampleNewBandBatchPlan() {
	dev, err := cuda.Open(0)
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
	plan, err := cuda.NewBandBatchPlan[float32](dev, n, k, g, banded.Interleaved, cuda.BandBatchOptions{})
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
	sp, err := cuda.NewSpace(dev, n) // vectors of n float64 on the device
	if err != nil {
		panic(err)
	}
	defer sp.Close()
	dA, err := cuda.UploadSparse(dev, csr)
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
	p32, err := cuda.NewSpikePlan[float32](dev, n, k, opts)
	if err != nil {
		panic(err)
	}
	defer p32.Close()
	if err := p32.FactorBand(ctx, banded.Convert[float32](A)); err != nil {
		panic(err)
	}
	M, err := cuda.NewMixedPrecision(sp, p32.Solve)
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
