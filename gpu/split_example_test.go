//go:build cuda

package gpu_test

import (
	"context"
	"fmt"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/gpu"
	"github.com/bandsolve/bandsolve/tridiag"
)

// Systems split by rows across every GPU of the host, as a grid
// decomposed along z holds its z-lines: GPU k keeps its rows of each of
// the 300 systems (interleaved, as a z-slab stores them) and solves with
// the others through a SplitPlan; no row leaves its GPU.
func ExampleNewSplitPlan() {
	n, err := cuda.Count()
	if err != nil {
		panic(err)
	}
	ordinals := make([]int, n)
	for i := range ordinals {
		ordinals[i] = i
	}
	group, err := gpu.OpenGroup(ordinals...)
	if err != nil {
		panic(err)
	}
	defer group.Close()
	const rows, systems = 3001, 300
	parts := make([]tridiag.Shape, n)
	for k := range parts {
		parts[k] = tridiag.Shape{N: rows*(k+1)/n - rows*k/n, G: systems, Layout: tridiag.Interleaved(systems)}
	}
	plan, err := gpu.NewSplitPlan[float64](group, parts)
	if err != nil {
		panic(err)
	}
	defer plan.Close()

	// −x[i−1] + 4x[i] − x[i+1] = 2 on every part's rows, in each GPU's
	// memory.
	var a, b, c, dx []*cuda.Buffer[float64]
	fill := func(dev *cuda.Device, m int, v float64) *cuda.Buffer[float64] {
		h := make([]float64, m)
		for i := range h {
			h[i] = v
		}
		buf, err := cuda.Upload(dev, h)
		if err != nil {
			panic(err)
		}
		return buf
	}
	for k, sh := range parts {
		dev := group.Device(k)
		a = append(a, fill(dev, sh.Len(), -1))
		b = append(b, fill(dev, sh.Len(), 4))
		c = append(c, fill(dev, sh.Len(), -1))
		dx = append(dx, fill(dev, sh.Len(), 2))
	}
	for _, l := range [][]*cuda.Buffer[float64]{a, b, c, dx} {
		defer func() {
			for _, buf := range l {
				_ = buf.Free()
			}
		}()
	}
	if err := plan.SolveDevice(context.Background(), a, b, c, dx, dx); err != nil {
		panic(err)
	}
	// A row of system 7 in the middle of the last GPU's part.
	k := n - 1
	x := make([]float64, parts[k].Len())
	if err := dx[k].CopyTo(x); err != nil {
		panic(err)
	}
	i := parts[k].N / 2
	at := func(i int) float64 { return x[parts[k].Layout.Index(i, 7)] }
	fmt.Printf("%.12f\n", -at(i-1)+4*at(i)-at(i+1))
	// Output:
	// 2.000000000000
}
