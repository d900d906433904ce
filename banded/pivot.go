package banded

import (
	"fmt"
	"math"

	"github.com/bandsolve/bandsolve/internal/memguard"
)

// PivotLU is the LU factorization with partial pivoting of a band matrix,
// with the semantics of LAPACK's gbtrf/gbtrs (kl = ku = K): P·A = L·U,
// where U is upper triangular with up to 2K super-diagonals (K of them
// fill-in from row interchanges) and L is unit lower triangular with K
// sub-diagonals, kept as the product of the elimination steps.
//
// Storage follows Band with K more super-diagonal columns, like LAPACK's
// 2·KL+KU+1 rows: an N×(3K+1) column-major array where entry (i, j) of the
// factors is at
//
//	Data[(2K+i−j)·N + j]   for −2K ≤ i−j ≤ K,
//
// so storage column 2K holds the diagonal of U, columns 0…2K−1 the
// super-diagonals of U (column 0 the 2K-th), and columns 2K+1…3K the
// multipliers of L computed at step j (column 2K+t holds l_{j+t, j}),
// stored before later interchanges, exactly as gbtrf stores them.
type PivotLU[T Float] struct {
	N, K int
	Data []T
	// Piv[j] is the row (≥ j, 0-based) interchanged with row j at step j.
	Piv []int
}

// FactorPivot factors m (left unchanged) by Gaussian elimination with
// partial pivoting, choosing at each step the entry of largest magnitude
// of the pivot column (the first one on ties, as LAPACK's idamax). Errors:
// ErrShape for a bad m; a *RowError wrapping ErrNonFinite naming the row
// and column of a NaN/Inf entry of m; a *RowError wrapping ErrSingular
// naming the row j (Col = j) when all candidates of pivot column j are
// zero, so the matrix is exactly singular.
func FactorPivot[T Float](m *Band[T]) (*PivotLU[T], error) {
	f := new(PivotLU[T])
	if err := f.factor(m); err != nil {
		return nil, err
	}
	return f, nil
}

// factor refactors f from m, reusing f's slices when they are big enough.
func (f *PivotLU[T]) factor(m *Band[T]) error {
	if err := checkBand(m); err != nil {
		return err
	}
	if _, err := scanBlock(m, 0, m.N); err != nil {
		return err
	}
	n, k := m.N, m.K
	f.N, f.K = n, k
	size := (3*k + 1) * n
	if cap(f.Data) >= size {
		f.Data = f.Data[:size]
		clear(f.Data[:k*n])
	} else {
		var zero T
		if err := memguard.Check(fmt.Sprintf("banded: the pivoted LU factors of a %s band of N=%d, K=%d", typeName(zero), n, k),
			memguard.Add(memguard.Bytes(sizeOf(zero), 3*k+1, n), memguard.Bytes(8, n))); err != nil {
			return err
		}
		f.Data = make([]T, size)
	}
	copy(f.Data[k*n:], m.Data)
	if cap(f.Piv) >= n {
		f.Piv = f.Piv[:n]
	} else {
		f.Piv = make([]int, n)
	}
	a, dc := f.Data, 2*k
	// Steps go in pairs j, j+1 as in FactorLURange: step j's update is
	// applied to column j+1 (for the pivot search) and, after the
	// interchange, to the new row j+1; then both updates to the rest of
	// the window in one pass. Rows interchanged at step j+1 carry their
	// pending step-j multipliers along (in c1, not in the stored L), so
	// the rounding is exactly that of one step at a time.
	c1, r1 := make([]T, k+1), make([]T, 2*k+1) // zero-padded beyond km, w1
	c2, r2 := make([]T, k), make([]T, 2*k)
	ju := 0 // last column that U's rows 0…j may reach
	for j := 0; j < n; {
		km := min(k, n-1-j)
		if _, err := f.pivotSwap(j, km, &ju); err != nil {
			return err
		}
		piv := a[dc*n+j]
		for t := 1; t <= km; t++ {
			li := (dc+t)*n + j
			l := a[li] / piv
			a[li] = l
			c1[t-1] = l
		}
		if km == 0 { // K = 0, or j = N−1
			j++
			continue
		}
		c1[km] = 0
		ju1 := ju
		w1 := ju1 - j
		for t := 1; t <= w1; t++ {
			r1[t-1] = a[(dc-t)*n+j+t] // u_{j, j+t}
		}
		clear(r1[w1:])
		// step j on column j+1 (rows j+1 … j+km)
		for s := 0; s < km; s++ {
			a[(dc+s)*n+j+1] -= T(c1[s] * r1[0])
		}
		j1 := j + 1
		km2 := min(k, n-1-j1)
		p2, err := f.pivotSwap(j1, km2, &ju)
		if err != nil {
			return err
		}
		c1[0], c1[p2-j1] = c1[p2-j1], c1[0]
		// step j on the new row j+1 (columns j+2 … ju1)
		for c := j1 + 1; c <= ju1; c++ {
			a[(dc+j1-c)*n+c] -= T(c1[0] * r1[c-j1])
		}
		piv = a[dc*n+j1]
		for t := 1; t <= km2; t++ {
			li := (dc+t)*n + j1
			l := a[li] / piv
			a[li] = l
			c2[t-1] = l
		}
		w2 := ju - j1
		for t := 1; t <= w2; t++ {
			r2[t-1] = a[(dc-t)*n+j1+t]
		}
		if km2 > 0 && w2 > 0 {
			rank2(a, n, dc, j1+1, km2, w2, c1[1:1+km2], r1[1:1+w2], c2, r2)
		}
		j += 2
	}
	return nil
}

// pivotSwap does the pivot search of step j over rows j … j+km of column
// j, records it, widens ju and interchanges the rows over columns j … ju.
func (f *PivotLU[T]) pivotSwap(j, km int, ju *int) (int, error) {
	n, k, a, dc := f.N, f.K, f.Data, 2*f.K
	p, best := j, math.Abs(float64(a[dc*n+j]))
	for t := 1; t <= km; t++ {
		if v := math.Abs(float64(a[(dc+t)*n+j])); v > best {
			p, best = j+t, v
		}
	}
	f.Piv[j] = p
	if best == 0 {
		return p, &RowError{Row: j, Col: j, Err: ErrSingular}
	}
	*ju = max(*ju, min(p+k, n-1))
	if p != j {
		for c := j; c <= *ju; c++ {
			x, y := (dc+j-c)*n+c, (dc+p-c)*n+c
			a[x], a[y] = a[y], a[x]
		}
	}
	return p, nil
}

// Solve solves A·x = b in place with the factors (gbtrs, no transpose):
// the interchanges and L step by step, then U. len(b) must be N; it panics
// with an error wrapping ErrShape otherwise.
func (f *PivotLU[T]) Solve(b []T) { f.SolveMulti(b, 1) }

// SolveMulti solves for nrhs right-hand sides stored column-major with
// leading dimension N in b, overwritten by the solutions.
func (f *PivotLU[T]) SolveMulti(b []T, nrhs int) {
	n, k := f.N, f.K
	if nrhs < 0 || len(b) != n*nrhs {
		panic(shapeErr("right-hand side of length %d, want N·nrhs = %d·%d", len(b), n, nrhs))
	}
	a, dc := f.Data, 2*k
	for c := 0; c < nrhs; c++ {
		x := b[c*n : (c+1)*n]
		for j := 0; j < n; j++ {
			if p := f.Piv[j]; p != j {
				x[j], x[p] = x[p], x[j]
			}
			xj := x[j]
			for t := 1; t <= min(k, n-1-j); t++ {
				x[j+t] -= T(a[(dc+t)*n+j] * xj)
			}
		}
		for j := n - 1; j >= 0; j-- {
			xj := x[j] / a[dc*n+j]
			x[j] = xj
			for t := 1; t <= min(2*k, j); t++ {
				x[j-t] -= T(a[(dc-t)*n+j] * xj)
			}
		}
	}
}
