package banded_test

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/bandsolve/bandsolve/banded"
)

// A pentadiagonal system (K = 2) solved with partial pivoting.
func Example() {
	const n, k = 6, 2
	a, err := banded.New[float64](n, k)
	if err != nil {
		panic(err)
	}
	for i := 0; i < n; i++ {
		a.Set(i, i, 6)
		for t := 1; t <= k; t++ {
			if i+t < n {
				a.Set(i, i+t, -1)
				a.Set(i+t, i, -2)
			}
		}
	}
	// b = A·(1, 2, …, 6)
	x := []float64{1, 2, 3, 4, 5, 6}
	b := make([]float64, n)
	a.MulVec(x, b)

	f, err := banded.FactorPivot(a)
	if err != nil {
		panic(err)
	}
	f.Solve(b) // b now holds the solution
	for _, v := range b {
		fmt.Printf("%.6f ", v)
	}
	fmt.Println()
	// Output: 1.000000 2.000000 3.000000 4.000000 5.000000 6.000000
}

// LU without pivoting with diagonal boosting on a diagonal block, as SPIKE
// uses on its partitions: a zero pivot is boosted and reported; without
// boosting it is an error naming the row.
func ExampleFactorLURange() {
	a, _ := banded.New[float64](5, 1)
	for i := 0; i < 5; i++ {
		a.Set(i, i, 4)
		if i+1 < 5 {
			a.Set(i, i+1, 1)
			a.Set(i+1, i, 1)
		}
	}
	a.Set(2, 2, 0)
	a.Set(2, 1, 0) // row 2 decoupled from row 1: its pivot stays exactly 0
	a.Set(1, 2, 0)
	saved := a.Clone()

	// factor rows/columns 1…4 in place (row 0 and its couplings untouched)
	boosts, err := banded.FactorLURange(a, 1, 5, banded.FactorOptions{})
	fmt.Println(boosts.Rows, boosts.Tau == 0x1p-52*4, err)
	x := []float64{1, 1, 1, 1} // solve A[1:5, 1:5]·x = 1 with the boosted factors
	banded.SolveLURange(a, 1, 5, x)

	_, err = banded.FactorLURange(saved, 1, 5, banded.FactorOptions{BoostTol: -1})
	fmt.Println(err)
	// Output:
	// [2] true <nil>
	// banded: zero pivot at row 2, column 2
}

// A batch of 1000 random diagonally dominant systems in the interleaved
// layout (element i of system g's vectors at i·G + g), solved in parallel.
func ExampleSolveBatch() {
	const n, k, g = 100, 3, 1000
	rng := rand.New(rand.NewPCG(1, 2))
	batch, _ := banded.NewBatch[float32](n, k, g, banded.Interleaved)
	for s := 0; s < g; s++ {
		if err := batch.SetSystem(s, banded.Random[float32](n, k, 1.5, rng)); err != nil {
			panic(err)
		}
	}
	rhs := make([]float32, n*g)
	for i := range rhs {
		rhs[i] = 1
	}
	x := make([]float32, n*g)
	res, err := banded.SolveBatch(context.Background(), batch, rhs, x, banded.BatchOptions{})
	fmt.Println(len(res.Boosted), err)

	// residual of system 7, row 0
	var r float32
	for j := 0; j <= k; j++ {
		r += batch.At(7, 0, j) * x[batch.VecIndex(7, j)]
	}
	fmt.Printf("%.4f\n", r)
	// Output:
	// 0 <nil>
	// 1.0000
}

// A batch of pentadiagonal systems solved by a plan on the CPU; the same
// call with a GPU (gpu package imported, built with -tags cuda) as the
// device solves on the GPU with the same results.
func ExampleNewBatchPlan() {
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
	plan, err := banded.NewBatchPlan[float64](nil, n, k, g, banded.Interleaved, banded.BatchOptions{})
	if err != nil {
		panic(err)
	}
	defer plan.Close()
	rhs := make([]float64, n*g) // element i of system s at batch.VecIndex(s, i)
	for i := range rhs {
		rhs[i] = 1
	}
	x := make([]float64, n*g)
	res, err := plan.SolveBatch(context.Background(), batch, rhs, x)
	if err != nil {
		panic(err) // a *banded.BatchError names each failed system and row
	}
	ax := make([]float64, n)
	batch.System(3).MulVec(func() []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = x[batch.VecIndex(3, i)]
		}
		return xs
	}(), ax)
	fmt.Println("systems with boosted pivots:", len(res.Boosted))
	fmt.Printf("system 3, row 50 of A·x: %.12f\n", ax[50])
	// Output:
	// systems with boosted pivots: 0
	// system 3, row 50 of A·x: 1.000000000000
}

// A band with one sub-diagonal and two super-diagonals (KL = 1, KU = 2),
// filled from the array ab of scipy.linalg.solve_banded((1, 2), ab, b)
// (row KU+i−j, column j holds a_ij; the slots marked * lie outside the
// matrix), solved by LU with partial pivoting. The sub-diagonal outweighs
// the diagonal, so every step interchanges two rows.
func ExampleGeneral() {
	const n, kl, ku = 5, 1, 2
	ab := []float64{
		0, 0, 1, 1, 1, // 2nd super-diagonal (*, *, a_02, a_13, a_24)
		0, 2, 2, 2, 2, // 1st super-diagonal (*, a_01, a_12, …)
		1, 1, 1, 1, 1, // diagonal
		4, 4, 4, 4, 0, // sub-diagonal (a_10, a_21, a_32, a_43, *)
	}
	a, err := banded.NewGeneral[float64](n, kl, ku)
	if err != nil {
		panic(err)
	}
	copy(a.Data, ab)
	fmt.Println(a.At(1, 0), a.At(0, 2), a.At(0, 3))

	// b = A·(1, 2, 3, 4, 5)
	b := make([]float64, n)
	a.MulVec([]float64{1, 2, 3, 4, 5}, b)

	f, err := banded.FactorPivotGeneral(a)
	if err != nil {
		panic(err) // a *banded.RowError naming the row for a singular A
	}
	fmt.Println(f.Piv, len(f.Data) == (2*kl+ku+1)*n)
	f.Solve(b) // b now holds x
	fmt.Printf("%.6f\n", b)
	cond, _ := banded.CondEstGeneral(a)
	fmt.Printf("κ̂∞ = %.1f\n", cond)
	// Output:
	// 4 1 0
	// [1 2 3 4 4] true
	// [1.000000 2.000000 3.000000 4.000000 5.000000]
	// κ̂∞ = 86.6
}
