package sptrsv_test

import (
	"context"
	"fmt"

	"github.com/bandsolve/bandsolve/sparse"
	"github.com/bandsolve/bandsolve/sptrsv"
	"github.com/bandsolve/bandsolve/tridiag"
)

// Example solves with the lower triangle of a small general matrix and
// prints its level sets.
func Example() {
	c := sparse.NewCOO(4, 4, 0)
	for _, e := range []struct {
		i, j int
		v    float64
	}{{0, 0, 2}, {0, 3, 9}, {1, 0, 1}, {1, 1, 1}, {2, 2, 4}, {3, 1, -1}, {3, 2, 1}, {3, 3, 2}} {
		c.Add(e.i, e.j, e.v)
	}
	a, err := c.ToCSR()
	if err != nil {
		panic(err)
	}
	if _, err := sptrsv.Analyze(a, sptrsv.Options{}); err != nil {
		fmt.Println(err)
	}
	an, err := sptrsv.Analyze(a, sptrsv.Options{Triangle: sptrsv.Lower, Part: sptrsv.TrianglePart})
	if err != nil {
		panic(err)
	}
	fmt.Println("levels:", an.Levels(), "rows per level:", an.LevelSizes())
	b := []float64{2, 3, 8, 5}
	x := make([]float64, 4)
	if err := sptrsv.Solve(context.Background(), an, b, x); err != nil {
		panic(err)
	}
	fmt.Println("x =", x)
	// Output:
	// sptrsv: wrong triangle: not lower triangular: entry (0, 3)
	// levels: 3 rows per level: [2 1 1]
	// x = [1 2 2 2.5]
}

// ExampleSolveLocality cuts a triangle of 5 rows into sub-graphs of at
// most 2 rows, prints the partition and its schedule, and solves.
func ExampleSolveLocality() {
	// Rows 0, 1 and 2 depend on none, row 3 on rows 0, 1 and 2, row 4 on
	// rows 0 and 3.
	c := sparse.NewCOO(5, 5, 0)
	for _, e := range []struct {
		i, j int
		v    float64
	}{{0, 0, 2}, {1, 1, 4}, {2, 2, 8}, {3, 0, 1}, {3, 1, 1}, {3, 2, 1}, {3, 3, 2}, {4, 0, -1}, {4, 3, 1}, {4, 4, 4}} {
		c.Add(e.i, e.j, e.v)
	}
	a, err := c.ToCSR()
	if err != nil {
		panic(err)
	}
	an, err := sptrsv.Analyze(a, sptrsv.Options{})
	if err != nil {
		panic(err)
	}
	loc, err := sptrsv.AnalyzeLocality(an, sptrsv.LocalityOptions{Capacity: 2})
	if err != nil {
		panic(err)
	}
	st := loc.Stats()
	fmt.Printf("%d sub-graphs in %d levels, %d internal and %d external entries\n", st.Subgraphs, st.Levels, st.InternalEdges, st.ExternalEdges)
	p := sptrsv.LocalityArrays[float64](loc)
	fmt.Println("rows of each sub-graph:", p.RowPtr, p.Rows)
	fmt.Println("external slots:", p.ExtSlotPtr, "edges:", p.ExtPtr, "from", p.ExtCol, "to local", p.ExtDst)
	fmt.Println("steps:", p.StepPtr, "divisions:", p.StepRowPtr, "internal edges:", p.EdgePtr)
	b := []float64{2, 4, 8, 5, 4}
	x := make([]float64, 5)
	if err := sptrsv.SolveLocality(context.Background(), loc, b, x); err != nil {
		panic(err)
	}
	fmt.Println("x =", x)
	// Output:
	// 3 sub-graphs in 3 levels, 1 internal and 4 external entries
	// rows of each sub-graph: [0 2 4 5] [0 1 2 3 4]
	// external slots: [0 0 2 4] edges: [0 1 2 3 4] from [0 1 0 3] to local [1 1 0 0]
	// steps: [0 1 3 4] divisions: [0 2 3 4 5] internal edges: [0 0 1 1 1]
	// x = [1 1 1 1 1]
}

// ExampleNewPlan analyses a lower bidiagonal triangle once for the CPU
// (a *cuda.Device, with package gpu imported, solves on the GPU instead)
// and solves with it.
func ExampleNewPlan() {
	c := sparse.NewCOO(4, 4, 0)
	for i := range 4 {
		c.Add(i, i, 2)
		if i > 0 {
			c.Add(i, i-1, -1)
		}
	}
	a, err := c.ToCSR()
	if err != nil {
		panic(err)
	}
	var dev tridiag.Device // nil: the CPU
	b := []float64{2, 1, 1, 1}
	x := make([]float64, 4)
	ctx := context.Background()
	plan, err := sptrsv.NewPlan[float64](dev, a, sptrsv.Options{Triangle: sptrsv.Lower}, sptrsv.Auto)
	// dev: nil or a *tridiag.CPU, or a *cuda.Device with package gpu imported
	if err != nil {
		panic(err)
	}
	err = plan.Solve(ctx, b, x)
	if err != nil {
		panic(err)
	}
	fmt.Println(plan.Algorithm(), x)
	// Output:
	// sequential [1 1 1 1]
}
