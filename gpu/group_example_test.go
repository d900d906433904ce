//go:build cuda

package gpu_test

import (
	"context"
	"fmt"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/gpu"
	"github.com/bandsolve/bandsolve/tridiag"
)

// A batch split across every GPU of the host: tridiag.NewPlan on a group
// gives each GPU a contiguous share of the systems, solved at once; a
// GroupPlan keeps each share in its GPU's memory between solves.
func ExampleOpenGroup() {
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
	const rows, systems = 1000, 301
	shape := tridiag.Shape{N: rows, G: systems, Layout: tridiag.Interleaved(systems)}
	d := make([]float64, shape.Len())
	for i := range d {
		d[i] = 2
	}

	// Host slices, as on one device.
	plan, err := tridiag.NewPlan[float64](group, shape, tridiag.Options{})
	if err != nil {
		panic(err)
	}
	defer plan.Close()
	x := make([]float64, len(d))
	if err := plan.SolveConst(context.Background(), -1, 4, -1, d, x); err != nil {
		panic(err)
	}
	// Row 500 of system 300: −x[499] + 4x[500] − x[501] = 2.
	at := func(i int) float64 { return x[shape.Layout.Index(i, 300)] }
	fmt.Printf("%.12f\n", -at(499)+4*at(500)-at(501))

	// Each GPU's share resident in its memory.
	gp, err := gpu.NewGroupPlan[float64](group, shape, tridiag.Options{})
	if err != nil {
		panic(err)
	}
	defer gp.Close()
	db, err := gp.Scatter(d)
	if err != nil {
		panic(err)
	}
	defer func() {
		for _, b := range db {
			_ = b.Free()
		}
	}()
	if err := gp.SolveDeviceConst(context.Background(), -1, 4, -1, db, db); err != nil {
		panic(err)
	}
	if err := gp.Gather(db, x); err != nil {
		panic(err)
	}
	fmt.Printf("%.12f\n", -at(499)+4*at(500)-at(501))
	// Output:
	// 2.000000000000
	// 2.000000000000
}
