package sptrsv_test

import (
	"context"
	"fmt"

	"github.com/bandsolve/bandsolve/sparse"
	"github.com/bandsolve/bandsolve/sptrsv"
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
