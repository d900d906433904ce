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

// The relative error of a complex64 solve of a complex shifted
// Laplacian, measured against the right-hand side's generating vector.
func ExampleRelErrorC() {
	m, err := stability.GenerateComplex(stability.ShiftedLaplacian, 100, 1)
	if err != nil {
		panic(err)
	}
	x := make([]complex128, m.N())
	for i := range x {
		x[i] = complex(float64(i%3), 1)
	}
	d := m.MulVec(x)
	// Thomas in complex64.
	n := m.N()
	cp, xh := make([]complex64, n), make([]complex64, n)
	piv := complex64(m.B[0])
	cp[0], xh[0] = complex64(m.C[0])/piv, complex64(d[0])/piv
	for i := 1; i < n; i++ {
		piv = complex64(m.B[i]) - complex64(m.A[i])*cp[i-1]
		cp[i] = complex64(m.C[i]) / piv
		xh[i] = (complex64(d[i]) - complex64(m.A[i])*xh[i-1]) / piv
	}
	for i := n - 2; i >= 0; i-- {
		xh[i] -= cp[i] * xh[i+1]
	}
	e := stability.RelErrorC(xh, x)
	fmt.Println(e > 0, e < 1e-5)
	// Output: true true
}
