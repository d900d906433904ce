//go:build cuda

package cuda_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/spikegpu"
	"github.com/bandsolve/bandsolve/krylov"
	"github.com/bandsolve/bandsolve/sparse"
	"github.com/bandsolve/bandsolve/spike"
	"github.com/bandsolve/bandsolve/tridiag"
)

// A batch of tridiagonal systems solved again and again with the data
// resident on the GPU, as a time-stepper does.
func ExampleNewPlan() {
	dev, err := cuda.Open(0)
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	const n, g = 1000, 64
	shape := tridiag.Shape{N: n, G: g} // contiguous: system j at rows j·n … j·n+n−1
	plan, err := cuda.NewPlan[float64](dev, shape, tridiag.Options{})
	if err != nil {
		panic(err)
	}
	defer plan.Close()
	// −x_{i−1} + 4x_i − x_{i+1} = d_i, with d made from x_i = 1.
	a, b, c, d := make([]float64, n*g), make([]float64, n*g), make([]float64, n*g), make([]float64, n*g)
	for r := range d {
		i := r % n
		b[r], d[r] = 4, 2
		if i > 0 {
			a[r] = -1
		} else {
			d[r]++
		}
		if i < n-1 {
			c[r] = -1
		} else {
			d[r]++
		}
	}
	da, _ := cuda.Upload(dev, a)
	db, _ := cuda.Upload(dev, b)
	dc, _ := cuda.Upload(dev, c)
	dd, _ := cuda.Upload(dev, d)
	dx, _ := cuda.Alloc[float64](dev, n*g)
	for _, buf := range []*cuda.Buffer[float64]{da, db, dc, dd, dx} {
		defer buf.Free()
	}
	for step := 0; step < 3; step++ { // no host copies between the solves
		if err := plan.SolveDevice(context.Background(), da, db, dc, dd, dx); err != nil {
			panic(err)
		}
	}
	x := make([]float64, n*g)
	if err := dx.CopyTo(x); err != nil {
		panic(err)
	}
	var e float64
	for _, v := range x {
		e = math.Max(e, math.Abs(v-1))
	}
	fmt.Println("max error below 1e-14:", e < 1e-14)
	// Output:
	// max error below 1e-14: true
}

// Timing a solve of data already on the GPU with CUDA events, as the bench
// does: the timed repetitions are queued behind a gate and released
// together, so the events hold the GPU's work only; d is restored from a
// saved copy before each repetition, outside the events.
func ExamplePlan_Time() {
	dev, err := cuda.Open(0)
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	const n, g = 512, 8
	plan, err := cuda.NewPlan[float32](dev, tridiag.Shape{N: n, G: g}, tridiag.Options{})
	if err != nil {
		panic(err)
	}
	defer plan.Close()
	fill := func(v float32) *cuda.Buffer[float32] {
		h := make([]float32, n*g)
		for i := range h {
			h[i] = v
		}
		buf, err := cuda.Upload(dev, h)
		if err != nil {
			panic(err)
		}
		return buf
	}
	a, b, c, d, x, saved := fill(-1), fill(4), fill(-1), fill(1), fill(0), fill(1)
	for _, buf := range []*cuda.Buffer[float32]{a, b, c, d, x, saved} {
		defer buf.Free()
	}
	times, err := plan.Time(context.Background(), a, b, c, d, x, saved, 2, 11)
	if err != nil {
		panic(err)
	}
	positive := true
	for _, t := range times {
		positive = positive && t > 0
	}
	fmt.Println("timed solves:", len(times), "all positive:", positive, "gated:", !dev.HostPaced())
	// Output:
	// timed solves: 11 all positive: true gated: true
}

// Which plan Auto makes for a shape on this device, without allocating
// (AutoAlgorithm), and how a plan runs its solves (Describe). Not run by
// go test: the answer depends on the GPU.
func ExampleAutoAlgorithm() {
	dev, err := cuda.Open(0)
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	shape := tridiag.Shape{N: 4096, G: 4096, Layout: tridiag.Interleaved(4096)}
	alg, err := cuda.AutoAlgorithm[float32](dev, shape, tridiag.Options{})
	if err != nil {
		panic(err)
	}
	plan, err := cuda.NewPlan[float32](dev, shape, tridiag.Options{})
	if err != nil {
		panic(err)
	}
	defer plan.Close()
	fmt.Println(alg, "→", plan.Describe())
}

// A plan made resident for a burst of small solves: a persistent grid
// takes each solve from mapped host memory instead of a launch. Not run by
// go test (it needs a GPU).
func ExamplePlan_SetResident() {
	dev, err := cuda.Open(0)
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	const n, g = 128, 8
	plan, err := cuda.NewPlan[float64](dev, tridiag.Shape{N: n, G: g}, tridiag.Options{})
	if err != nil {
		panic(err)
	}
	defer plan.Close()
	// Solves without a launch each: a persistent grid takes them from
	// mapped host memory, and stops after 10 ms without one.
	if err := plan.SetResident(10 * time.Millisecond); err != nil {
		panic(err)
	}
	d := make([]float64, n*g)
	for i := range d {
		d[i] = 2
	}
	dd, _ := cuda.Upload(dev, d)
	dx, _ := cuda.Alloc[float64](dev, n*g)
	defer dd.Free()
	defer dx.Free()
	for step := 0; step < 1000; step++ {
		// 4x_i − x_{i−1} − x_{i+1} = d_i in every system
		if err := plan.SolveDeviceConst(context.Background(), -1, 4, -1, dd, dx); err != nil {
			panic(err)
		}
	}
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
	p32, err := spikegpu.NewPlan[float32](dev, n, k, opts)
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
