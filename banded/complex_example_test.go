package banded_test

import (
	"context"
	"fmt"
	"math"

	"github.com/bandsolve/bandsolve/banded"
)

// A complex system with KL = 1 and KU = 2, solved by LU with partial
// pivoting (zgbtrf's choice of pivots by |re| + |im|) and checked.
func ExampleFactorPivotGeneral_complex() {
	a, _ := banded.NewGeneral[complex128](5, 1, 2)
	for i := 0; i < 5; i++ {
		a.Set(i, i, complex(1, float64(i))) // a small diagonal: rows interchange
		if i > 0 {
			a.Set(i, i-1, 4-2i)
		}
		if i+1 < 5 {
			a.Set(i, i+1, 1i)
		}
		if i+2 < 5 {
			a.Set(i, i+2, 0.5)
		}
	}
	want := []complex128{1, 1i, 2, -1i, 1 + 1i}
	b := make([]complex128, 5)
	a.MulVec(want, b)

	f, err := banded.FactorPivotGeneral(a)
	if err != nil {
		fmt.Println(err)
		return
	}
	x := append([]complex128(nil), b...)
	f.Solve(x)
	fmt.Println("interchanges:", f.Piv)
	for _, v := range x {
		// +0 turns a −0 from rounding into 0.
		fmt.Println(complex(math.Round(real(v)*1e6)/1e6+0, math.Round(imag(v)*1e6)/1e6+0))
	}
	st, _ := banded.CheckGeneral(a, b, x, 0)
	fmt.Println("failed:", st.Failed())
	// Output:
	// interchanges: [1 2 3 4 4]
	// (1+0i)
	// (0+1i)
	// (2+0i)
	// (0-1i)
	// (1+1i)
	// failed: false
}

// A batch of complex systems in the interleaved layout, solved with
// pivoting; a singular system is reported with its row.
func ExampleSolveBatch_complex() {
	const n, k, g = 4, 1, 3
	b, _ := banded.NewBatch[complex64](n, k, g, banded.Interleaved)
	for s := 0; s < g; s++ {
		for i := 0; i < n; i++ {
			if s != 2 || i != 1 { // system 2 gets a zero column 1 below
				b.Set(s, i, i, complex(float32(s+1), 1))
			}
			if i > 0 {
				b.Set(s, i, i-1, 1i)
			}
			if i+1 < n && !(s == 2 && i == 0) {
				b.Set(s, i, i+1, 1)
			}
		}
	}
	b.Set(2, 2, 1, 0)
	rhs := make([]complex64, n*g)
	for i := range rhs {
		rhs[i] = 1
	}
	x := make([]complex64, n*g)
	_, err := banded.SolveBatch(context.Background(), b, rhs, x, banded.BatchOptions{Pivot: true})
	fmt.Println(err)
	for s := 0; s < 2; s++ {
		xs, bs := make([]complex64, n), make([]complex64, n)
		for i := range xs {
			xs[i], bs[i] = x[b.VecIndex(s, i)], rhs[b.VecIndex(s, i)]
		}
		fmt.Printf("system %d: backward error below 1e-6: %v\n", s, banded.BackwardError(b.System(s), bs, xs) < 1e-6)
	}
	// Output:
	// 1 of 3 systems failed; system 2, row 1: banded: singular matrix at row 1, column 1
	// system 0: backward error below 1e-6: true
	// system 1: backward error below 1e-6: true
}
