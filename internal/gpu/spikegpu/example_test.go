//go:build cuda

package spikegpu_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/spikegpu"
	"github.com/bandsolve/bandsolve/spike"
)

// Truncated SPIKE on the GPU as a direct solver for one banded system of a
// million rows and half-bandwidth 16.
func ExampleNewPlan() {
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
	plan, err := spikegpu.NewPlan[float64](dev, n, k, spike.Options{})
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

// The device-neutral plan of package spike on the GPU: the same calls as
// on the CPU with the device as the argument, once Register has added the
// GPU backend. Not run by go test (it needs a GPU).
func ExampleRegister() {
	spikegpu.Register()
	dev, err := cuda.Open(0)
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	const n, k = 200_000, 8
	A := banded.Random[float64](n, k, 1.5, rand.New(rand.NewPCG(5, 6)))
	b := make([]float64, n)
	for i := range b {
		b[i] = 1
	}
	plan, err := spike.NewPlan[float64](dev, n, k, spike.Options{})
	if err != nil {
		panic(err)
	}
	defer plan.Close()
	ctx := context.Background()
	if err := plan.Factor(ctx, A); err != nil {
		panic(err)
	}
	x := make([]float64, n)
	if err := plan.Solve(ctx, b, x); err != nil {
		panic(err)
	}
	fmt.Println(plan.Describe())
}
