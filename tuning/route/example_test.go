package route_test

import (
	"fmt"

	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tuning"
	"github.com/bandsolve/bandsolve/tuning/route"
)

// The algorithms tridiag.Auto tries on an H100 for a small contiguous
// batch and for a large interleaved one.
func ExampleAutoOrder() {
	small := route.Problem{N: 1000, G: 10, Elem: 8, ElemStride: 1, BatchStride: 1000}
	fmt.Println(route.AutoOrder(tuning.H100, small))

	l := tridiag.Interleaved(1 << 16)
	large := route.Problem{N: 512, G: 1 << 16, Elem: 4, ElemStride: l.ElemStride, BatchStride: l.BatchStride}
	fmt.Println(route.AutoOrder(tuning.H100, large))
	// Output:
	// [partition pcr tpr thomas]
	// [partition thomas]
}
