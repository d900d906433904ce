//go:build cuda

package bandedgpu_test

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/bandedgpu"
)

// A batch of pentadiagonal systems (K = 2), one GPU thread per system:
// LU without pivoting with diagonal boosting, the results of
// banded.SolveBatch (refinement off) bit for bit. Not run by go test (it
// needs a GPU).
func ExampleNewBatchPlan() {
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
	plan, err := bandedgpu.NewBatchPlan[float32](dev, n, k, g, banded.Interleaved, bandedgpu.Options{})
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

// The device-neutral plan of package banded on the GPU: the same call as
// on the CPU with the device as its argument, once Register has added the
// GPU backend. Boosted systems are refined on the host, so the results are
// banded.SolveBatch's with the same options. Not run by go test (it needs
// a GPU).
func ExampleRegister() {
	bandedgpu.Register()
	dev, err := cuda.Open(0)
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	const n, k, g = 512, 3, 1000
	rng := rand.New(rand.NewPCG(3, 4))
	batch, err := banded.NewBatch[float64](n, k, g, banded.Contiguous)
	if err != nil {
		panic(err)
	}
	for s := 0; s < g; s++ {
		if err := batch.SetSystem(s, banded.Random[float64](n, k, 1, rng)); err != nil {
			panic(err)
		}
	}
	plan, err := banded.NewBatchPlan[float64](dev, n, k, g, banded.Contiguous, banded.BatchOptions{})
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
	fmt.Println(plan.Describe())
}
