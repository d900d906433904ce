//go:build cuda

package tridiaggpu_test

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/tridiaggpu"
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
	plan, err := tridiaggpu.NewPlan[float64](dev, shape, tridiag.Options{})
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

// Timing a solve of data already on the GPU with CUDA events: d is
// restored from a saved copy before each repetition, outside the events.
// cuda.EventTimer(nil) launches each repetition while the GPU waits for
// it; a timer with a gate (cuda.EventTimer(g)) queues them behind it, so
// that the events hold the GPU's work only.
func ExamplePlan_Time() {
	dev, err := cuda.Open(0)
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	const n, g = 512, 8
	plan, err := tridiaggpu.NewPlan[float32](dev, tridiag.Shape{N: n, G: g}, tridiag.Options{})
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
	times, err := plan.Time(context.Background(), cuda.EventTimer(nil), a, b, c, d, x, saved, 2, 11)
	if err != nil {
		panic(err)
	}
	positive := true
	for _, t := range times {
		positive = positive && t > 0
	}
	fmt.Println("timed solves:", len(times), "all positive:", positive)
	// Output:
	// timed solves: 11 all positive: true
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
	alg, err := tridiaggpu.AutoAlgorithm[float32](dev, shape, tridiag.Options{})
	if err != nil {
		panic(err)
	}
	plan, err := tridiaggpu.NewPlan[float32](dev, shape, tridiag.Options{})
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
	plan, err := tridiaggpu.NewPlan[float64](dev, tridiag.Shape{N: n, G: g}, tridiag.Options{})
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

// A plan that queues its solves on a stream of the caller's, so that they
// are ordered with the caller's own kernels and copies: here one made by
// Device.NewStream; cuda.WrapStream takes the CUstream handle of another
// CUDA library (CuPy's stream.ptr, PyTorch's cuda_stream). Not run by go
// test (it needs a GPU).
func ExamplePlan_SetStream() {
	dev, err := cuda.Open(0)
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	const n, g = 256, 32
	plan, err := tridiaggpu.NewPlan[float32](dev, tridiag.Shape{N: n, G: g}, tridiag.Options{})
	if err != nil {
		panic(err)
	}
	defer plan.Close()
	s, err := dev.NewStream()
	if err != nil {
		panic(err)
	}
	defer s.Close()
	if err := plan.SetStream(s); err != nil {
		panic(err)
	}
	d := make([]float32, n*g)
	for i := range d {
		d[i] = 1
	}
	dd, _ := cuda.Upload(dev, d)
	dx, _ := cuda.Alloc[float32](dev, n*g)
	defer dd.Free()
	defer dx.Free()
	pending, err := plan.StartConst(context.Background(), -1, 4, -1, dd, dx)
	if err != nil {
		panic(err)
	}
	// ... queue more work on s, or work on the host ...
	if err := pending.Wait(); err != nil {
		panic(err)
	}
	x := make([]float32, n*g)
	if err := dx.CopyTo(x); err != nil {
		panic(err)
	}
	fmt.Println(x[0] > 0)
}
