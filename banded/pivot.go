package banded

import (
	"fmt"
	"math"

	"github.com/bandsolve/bandsolve/internal/memguard"
)

// PivotLU is the LU factorization with partial pivoting of a band matrix
// with KL sub-diagonals and KU super-diagonals, with the semantics of
// LAPACK's gbtrf/gbtrs: P·A = L·U, where U is upper triangular with up to
// KL+KU super-diagonals (KL of them fill-in from row interchanges) and L
// is unit lower triangular with KL sub-diagonals, kept as the product of
// the elimination steps. FactorPivot makes it from a Band (KL = KU = K),
// FactorPivotGeneral from a General.
//
// Storage follows General with KL more super-diagonal rows, like
// LAPACK's 2·KL+KU+1 rows: an (2·KL+KU+1)×N array stored row by row where
// entry (i, j) of the factors is at
//
//	Data[(KL+KU+i−j)·N + j]   for −(KL+KU) ≤ i−j ≤ KL,
//
// so storage row KL+KU holds the diagonal of U, rows 0…KL+KU−1 the
// super-diagonals of U (row 0 the (KL+KU)-th), and rows KL+KU+1…2·KL+KU
// the multipliers of L computed at step j (row KL+KU+t holds l_{j+t, j}),
// stored before later interchanges, exactly as gbtrf stores them. For a
// Band (KL = KU = K) that is 3K+1 rows with the diagonal of U in row 2K.
// Slots outside the matrix are zero.
//
// T is real or complex. A complex matrix is pivoted as LAPACK's zgbtrf
// pivots: by the largest |re| + |im| of the candidates (izamax), not by
// the modulus; both are within a factor √2 of each other, so the growth
// bounds of partial pivoting hold up to that factor.
type PivotLU[T Scalar] struct {
	N, KL, KU int
	Data      []T
	// Piv[j] is the row (j ≤ Piv[j] ≤ j+KL, 0-based) interchanged with
	// row j at step j.
	Piv []int
}

// FactorPivot factors m (left unchanged) by Gaussian elimination with
// partial pivoting, choosing at each step the entry of largest magnitude
// of the pivot column (the first one on ties, as LAPACK's idamax; for a
// complex m the largest |re| + |im|, as izamax); the
// factors have KL = KU = K. Errors: ErrShape for a bad m; a *RowError
// wrapping ErrNonFinite naming the row and column of a NaN/Inf entry of
// m; a *RowError wrapping ErrSingular naming the row j (Col = j) when all
// candidates of pivot column j are zero, so the matrix is exactly
// singular; an error wrapping ErrMemory when the factors do not fit.
func FactorPivot[T Scalar](m *Band[T]) (*PivotLU[T], error) {
	f := new(PivotLU[T])
	if err := factorBand(f, m); err != nil {
		return nil, err
	}
	return f, nil
}

// FactorPivotGeneral factors a General (left unchanged) as FactorPivot
// does a Band: gbtrf with m's KL and KU, the same pivot choice and the
// same errors.
func FactorPivotGeneral[T Scalar](m *General[T]) (*PivotLU[T], error) {
	if err := checkGeneral(m); err != nil {
		return nil, err
	}
	f := new(PivotLU[T])
	if err := f.factorGeneral(m.N, m.KL, m.KU, m.Data); err != nil {
		return nil, err
	}
	return f, nil
}

// factorBand refactors f from m, reusing f's slices when they are big
// enough.
func factorBand[T Scalar](f *PivotLU[T], m *Band[T]) error {
	if err := checkBand(m); err != nil {
		return err
	}
	return f.factorGeneral(m.N, m.K, m.K, m.Data)
}

// factorGeneral refactors f from the matrix stored in src (General's
// layout for N, KL, KU; shapes already checked), reusing f's slices when
// they are big enough.
func (f *PivotLU[T]) factorGeneral(n, kl, ku int, src []T) error {
	if err := scanGeneral(n, kl, ku, src); err != nil {
		return err
	}
	f.N, f.KL, f.KU = n, kl, ku
	dc := kl + ku // storage row of the diagonal
	size := (dc + kl + 1) * n
	if cap(f.Data) >= size {
		f.Data = f.Data[:size]
	} else {
		var zero T
		if err := memguard.Check(fmt.Sprintf("banded: the pivoted LU factors of a %s band of %s", typeName(zero), bandShape(n, kl, ku)),
			memguard.Add(memguard.Bytes(sizeOf(zero), dc+kl+1, n), memguard.Bytes(8, n))); err != nil {
			return err
		}
		f.Data = make([]T, size)
	}
	// Rows 0…KL−1 (fill-in) start zero; the matrix goes to rows KL…,
	// with the slots outside the matrix zeroed.
	clear(f.Data[:kl*n])
	for s := 0; s <= dc; s++ {
		d := s - ku
		j0, j1 := max(0, -d), min(n, n-d)
		row := f.Data[(kl+s)*n : (kl+s+1)*n]
		clear(row[:j0])
		copy(row[j0:j1], src[s*n+j0:s*n+j1])
		clear(row[j1:])
	}
	if cap(f.Piv) >= n {
		f.Piv = f.Piv[:n]
	} else {
		f.Piv = make([]int, n)
	}
	a := f.Data
	// Steps go in pairs j, j+1 as in FactorLURange: step j's update is
	// applied to column j+1 (for the pivot search) and, after the
	// interchange, to the new row j+1; then both updates to the rest of
	// the window in one pass. Rows interchanged at step j+1 carry their
	// pending step-j multipliers along (in c1, not in the stored L), so
	// the rounding is exactly that of one step at a time.
	c1, r1 := make([]T, kl+1), make([]T, dc+1) // zero-padded beyond km, w1
	c2, r2 := make([]T, kl), make([]T, dc)
	ju := 0 // last column that U's rows 0…j may reach
	for j := 0; j < n; {
		km := min(kl, n-1-j)
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
		if km == 0 { // KL = 0, or j = N−1
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
		km2 := min(kl, n-1-j1)
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
	n, a, dc := f.N, f.Data, f.KL+f.KU
	p, best := pivotSearch(a, dc*n+j, n, km)
	p += j
	f.Piv[j] = p
	if best == 0 {
		return p, &RowError{Row: j, Col: j, Err: ErrSingular}
	}
	*ju = max(*ju, min(p+f.KU, n-1))
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
// leading dimension N in b (column c is b[c·N : (c+1)·N]), overwritten by
// the solutions. It panics with an error wrapping ErrShape unless
// len(b) = N·nrhs.
func (f *PivotLU[T]) SolveMulti(b []T, nrhs int) {
	n, kl, ku := f.N, f.KL, f.KU
	if nrhs < 0 || len(b) != n*nrhs {
		panic(shapeErr("right-hand side of length %d, want N·nrhs = %d·%d", len(b), n, nrhs))
	}
	a, dc := f.Data, kl+ku
	for c := 0; c < nrhs; c++ {
		x := b[c*n : (c+1)*n]
		for j := 0; j < n; j++ {
			if p := f.Piv[j]; p != j {
				x[j], x[p] = x[p], x[j]
			}
			xj := x[j]
			for t := 1; t <= min(kl, n-1-j); t++ {
				x[j+t] -= T(a[(dc+t)*n+j] * xj)
			}
		}
		for j := n - 1; j >= 0; j-- {
			xj := x[j] / a[dc*n+j]
			x[j] = xj
			for t := 1; t <= min(dc, j); t++ {
				x[j-t] -= T(a[(dc-t)*n+j] * xj)
			}
		}
	}
}

// pivotSearch returns the offset t ≤ km of the entry of largest cabs1
// among a[base + t·stride] (the first on ties) and that size; the element
// type is resolved once, not per entry.
func pivotSearch[T Scalar](a []T, base, stride, km int) (int, float64) {
	switch a := any(a).(type) {
	case []float32:
		return searchReal(a, base, stride, km)
	case []float64:
		return searchReal(a, base, stride, km)
	case []complex64:
		return searchComplex(a, base, stride, km)
	case []complex128:
		return searchComplex(a, base, stride, km)
	}
	return 0, 0
}

func searchReal[T Float](a []T, base, stride, km int) (int, float64) {
	p, best := 0, math.Abs(float64(a[base]))
	for t := 1; t <= km; t++ {
		if v := math.Abs(float64(a[base+t*stride])); v > best {
			p, best = t, v
		}
	}
	return p, best
}

func searchComplex[T Complex](a []T, base, stride, km int) (int, float64) {
	c := func(v T) float64 { z := complex128(v); return math.Abs(real(z)) + math.Abs(imag(z)) }
	p, best := 0, c(a[base])
	for t := 1; t <= km; t++ {
		if v := c(a[base+t*stride]); v > best {
			p, best = t, v
		}
	}
	return p, best
}
