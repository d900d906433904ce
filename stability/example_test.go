package stability_test

import (
	"fmt"

	"github.com/bandsolve/bandsolve/stability"
)

// thomas solves a tridiagonal system without pivoting (the Thomas
// algorithm), in the precision of its inputs.
func thomas(a, b, c, d []float32) []float32 {
	n := len(b)
	cp := make([]float32, n)
	x := make([]float32, n)
	cp[0] = c[0] / b[0]
	x[0] = d[0] / b[0]
	for i := 1; i < n; i++ {
		den := b[i] - a[i]*cp[i-1]
		cp[i] = c[i] / den
		x[i] = (d[i] - a[i]*x[i-1]) / den
	}
	for i := n - 2; i >= 0; i-- {
		x[i] -= cp[i] * x[i+1]
	}
	return x
}

func ExampleNewProblem() {
	for _, t := range []stability.Type{19, 16} {
		p, err := stability.NewProblem[float32](t, 512, 1)
		if err != nil {
			fmt.Println(err)
			return
		}
		e := stability.RelError(thomas(p.A, p.B, p.C, p.D), p.X)
		fmt.Printf("type %d (%v): n=%d, error below 1e-6: %v, NaN: %v\n", t, t, p.N(), e < 1e-6, e != e)
	}
	_, err := stability.NewProblem[float64](stability.Type(15), 513, 1)
	fmt.Println(err)
	// Output:
	// type 19 (tridiag(-1,4,1)): n=512, error below 1e-6: true, NaN: false
	// type 16 (diag 0): n=512, error below 1e-6: false, NaN: true
	// type 15 (clement), n = 513, seed 1: stability: matrix is exactly singular
}
