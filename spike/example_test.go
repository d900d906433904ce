package spike_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/spike"
)

// Truncated SPIKE as a direct solver for a diagonally dominant band.
func ExampleFactor() {
	const n, k = 10_000, 8
	rng := rand.New(rand.NewPCG(1, 2))
	A := banded.Random[float64](n, k, 1.5, rng) // degree of dominance 1.5
	want := make([]float64, n)
	for i := range want {
		want[i] = math.Sin(float64(i))
	}
	b := make([]float64, n)
	A.MulVec(want, b)

	f, err := spike.Factor(A, spike.Options{Partitions: 4})
	if err != nil {
		panic(err)
	}
	x := make([]float64, n)
	if err := f.Solve(b, x); err != nil {
		panic(err)
	}
	var e float64
	for i := range x {
		e = math.Max(e, math.Abs(x[i]-want[i]))
	}
	fmt.Println("partitions:", f.Bounds())
	fmt.Println("max error below 1e-12:", e < 1e-12)
	// Output:
	// partitions: [0 2500 5000 7500 10000]
	// max error below 1e-12: true
}

// Truncated SPIKE in mixed precision as the preconditioner of BiCGStab(2)
// for a band that is not diagonally dominant.
func ExampleSolveIterative() {
	const n, k = 5000, 10
	rng := rand.New(rand.NewPCG(3, 4))
	A := banded.Random[float64](n, k, 0.4, rng) // d = 0.4
	b := make([]float64, n)
	for i := range b {
		b[i] = 1
	}
	x := make([]float64, n) // initial guess 0
	res, err := spike.SolveIterative(context.Background(), A, nil, b, x, spike.IterativeOptions{
		Options:   spike.Options{Partitions: 20, ULBlock: spike.PaperULBlock(k)},
		Precision: spike.Mixed,
		Tol:       1e-10,
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("converged:", res.Converged, "residual below 1e-10:", res.Residual <= 1e-10)
	// Output:
	// converged: true residual below 1e-10: true
}

// A plan factors once and solves for several right-hand sides. nil is the
// CPU; the same calls with a GPU as the device (gpu package imported,
// built with -tags cuda) run on the GPU, bit for bit alike.
func ExampleNewPlan() {
	const n, k = 10_000, 8
	A := banded.Random[float64](n, k, 1.5, rand.New(rand.NewPCG(1, 2)))
	plan, err := spike.NewPlan[float64](nil, n, k, spike.Options{Partitions: 4})
	if err != nil {
		panic(err)
	}
	defer plan.Close()
	ctx := context.Background()
	if err := plan.Factor(ctx, A); err != nil {
		panic(err)
	}
	b, x := make([]float64, n), make([]float64, n)
	for rhs := 1; rhs <= 2; rhs++ {
		for i := range b {
			b[i] = float64(rhs)
		}
		if err := plan.Solve(ctx, b, x); err != nil {
			panic(err)
		}
		r := make([]float64, n)
		A.MulVec(x, r)
		var e float64
		for i := range r {
			e = math.Max(e, math.Abs(r[i]-b[i]))
		}
		fmt.Printf("b = %d: residual below 1e-12: %v\n", rhs, e < 1e-12)
	}
	fmt.Println("partitions:", plan.P(), "boosted pivots:", plan.BoostCount())
	// Output:
	// b = 1: residual below 1e-12: true
	// b = 2: residual below 1e-12: true
	// partitions: 4 boosted pivots: 0
}
