package banded_test

import (
	"fmt"

	"github.com/bandsolve/bandsolve/banded"
)

// A symmetric positive definite pentadiagonal matrix (K = 2) factored once
// by Cholesky's method (K+1 values a row, no pivoting) and solved for two
// right-hand sides.
func ExampleFactorCholesky() {
	const n, k = 6, 2
	m, err := banded.New[float64](n, k)
	if err != nil {
		panic(err)
	}
	// 6 on the diagonal, −2 and 1 on the sub-diagonals; the upper
	// triangle is not read.
	for j := range n {
		m.Data[k*n+j] = 6
		if j+1 < n {
			m.Data[(k+1)*n+j] = -2 // a_{j+1, j}
		}
		if j+2 < n {
			m.Data[(k+2)*n+j] = 1 // a_{j+2, j}
		}
	}
	f, err := banded.FactorCholesky(m)
	if err != nil {
		panic(err)
	}
	// Two columns: A·1 (row sums of the symmetric matrix), and e_0.
	b := []float64{5, 3, 4, 4, 3, 5, 1, 0, 0, 0, 0, 0}
	f.SolveMulti(b, 2)
	fmt.Printf("%.12f\n", b[:6])
	fmt.Printf("%.4f\n", b[6:])
	// Output:
	// [1.000000000000 1.000000000000 1.000000000000 1.000000000000 1.000000000000 1.000000000000]
	// [0.1896 0.0604 -0.0167 -0.0167 -0.0021 0.0021]
}
