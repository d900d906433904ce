package tri

import (
	"errors"
	"math"
)

// ErrNotPositiveDefinite is wrapped by a PivotError from the L·D·Lᵀ
// factorization (PTTRF, PTSV): the pivot of that row is not positive (or
// not finite), so the symmetric matrix is not positive definite.
var ErrNotPositiveDefinite = errors.New("not positive definite")

// The factorizations below store one system's factors in slices of
// length n, and their solves take the right-hand sides of several
// columns: row i of column j at index i·rs + j·cs of d and x (rs, cs ≥ 1),
// so that the rows of a batch in any layout are solved where they are.
// x may be d (solve in place); the solves read each row's factors once
// for all m columns. Every solve of one column performs the operations of
// the one-column solve, in the same order: the results do not depend on m
// nor on the strides.

// LUFactor computes Thomas's factorization A = L·U without pivoting of
// one system, stored as l[i] = a[i]/u[i−1] (the multipliers of the unit
// lower bidiagonal L; l[0] = 0), r[i] = 1/u[i] (the reciprocal pivots) and
// cp[i] = c[i]/u[i] (the super-diagonal of D⁻¹U, which is Thomas's
// modified coefficient; cp[n−1] = 0). The pivots u[i] = b[i] − a[i]·cp[i−1]
// are those of Thomas, bit for bit, and where bounded the rows pass or
// fail ThomasBounded's test exactly as Thomas's sweep does. It fails with
// a PivotError wrapping ErrZeroPivot at a zero or non-finite pivot, or
// ErrPivotGrowth (bounded) at the first row that fails the test.
func LUFactor[T Float](a, b, c, l, r, cp []T, bounded bool) error {
	n := len(b)
	if n == 0 {
		return nil
	}
	l, r, cp = l[:n], r[:n], cp[:n]
	piv := b[0]
	if BadDivisor(piv) {
		return &PivotError{Row: 0, Err: ErrZeroPivot}
	}
	l[0] = 0
	r[0] = 1 / piv
	cp[0] = c[0] / piv
	for i := 1; i < n; i++ {
		f := T(a[i] * cp[i-1])
		if bounded && !(math.Abs(float64(f)) <= PivotGrowthBound*math.Abs(float64(b[i]))) {
			return &PivotError{Row: i, Err: ErrPivotGrowth}
		}
		prev := piv
		piv = b[i] - f
		if BadDivisor(piv) {
			return &PivotError{Row: i, Err: ErrZeroPivot}
		}
		l[i] = a[i] / prev
		r[i] = 1 / piv
		cp[i] = c[i] / piv
	}
	cp[n-1] = 0
	return nil
}

// LUSolve solves L·U·x = d for m columns with the factors of LUFactor:
// y[i] = d[i] − l[i]·y[i−1], then x[i] = y[i]·r[i] − cp[i]·x[i+1].
func LUSolve[T Float](l, r, cp, d, x []T, rs, cs, m int) {
	n := len(r)
	if n == 0 || m == 0 {
		return
	}
	if m == 1 {
		luSolve1(l, r, cp, d, x, rs)
		return
	}
	for j, k := 0, 0; j < m; j, k = j+1, k+cs {
		x[k] = d[k]
	}
	for i := 1; i < n; i++ {
		li := l[i]
		for j, k := 0, i*rs; j < m; j, k = j+1, k+cs {
			x[k] = d[k] - T(li*x[k-rs])
		}
	}
	ri := r[n-1]
	for j, k := 0, (n-1)*rs; j < m; j, k = j+1, k+cs {
		x[k] = T(x[k] * ri)
	}
	for i := n - 2; i >= 0; i-- {
		ri, ci := r[i], cp[i]
		for j, k := 0, i*rs; j < m; j, k = j+1, k+cs {
			x[k] = T(x[k]*ri) - T(ci*x[k+rs])
		}
	}
}

func luSolve1[T Float](l, r, cp, d, x []T, rs int) {
	n := len(r)
	if rs == 1 {
		d, x = d[:n], x[:n]
		y := d[0]
		x[0] = y
		for i := 1; i < n; i++ {
			y = d[i] - T(l[i]*y)
			x[i] = y
		}
		xi := T(x[n-1] * r[n-1])
		x[n-1] = xi
		for i := n - 2; i >= 0; i-- {
			xi = T(x[i]*r[i]) - T(cp[i]*xi)
			x[i] = xi
		}
		return
	}
	y := d[0]
	x[0] = y
	for i, k := 1, rs; i < n; i, k = i+1, k+rs {
		y = d[k] - T(l[i]*y)
		x[k] = y
	}
	k := (n - 1) * rs
	xi := T(x[k] * r[n-1])
	x[k] = xi
	for i := n - 2; i >= 0; i-- {
		k -= rs
		xi = T(x[k]*r[i]) - T(cp[i]*xi)
		x[k] = xi
	}
}

// GTTRF computes the LU factorization with partial pivoting (row
// interchanges) of one system as LAPACK's gttrf does, with the operations
// of GTSV: dl[i] the multiplier of step i, dd the diagonal of U, du and
// du2 its first and second super-diagonals, and ipiv[i] = 1 when rows i
// and i+1 were interchanged at step i (LAPACK's ipiv(i) = i+1), else 0.
// It fails with a PivotError wrapping ErrSingular at the first row whose
// pivot is exactly zero, the row GTSV names.
func GTTRF[T Float](a, b, c, dl, dd, du, du2 []T, ipiv []uint8) error {
	n := len(b)
	if n == 0 {
		return nil
	}
	dl, dd, du, du2, ipiv = dl[:n], dd[:n], du[:n], du2[:n], ipiv[:n]
	copy(dd, b)
	for i := 0; i < n-1; i++ {
		dl[i] = a[i+1]
		du[i] = c[i]
		du2[i] = 0
	}
	dl[n-1], du[n-1], du2[n-1], ipiv[n-1] = 0, 0, 0, 0
	for i := 0; i < n-1; i++ {
		if abs(dd[i]) >= abs(dl[i]) {
			if dd[i] == 0 {
				return &PivotError{Row: i, Err: ErrSingular}
			}
			f := dl[i] / dd[i]
			dd[i+1] -= T(f * du[i])
			dl[i] = f
			ipiv[i] = 0
		} else {
			f := dd[i] / dl[i]
			dd[i] = dl[i]
			tmp := dd[i+1]
			dd[i+1] = du[i] - T(f*tmp)
			if i < n-2 {
				du2[i] = du[i+1]
				du[i+1] = -f * du2[i]
			}
			du[i] = tmp
			dl[i] = f
			ipiv[i] = 1
		}
	}
	if dd[n-1] == 0 {
		return &PivotError{Row: n - 1, Err: ErrSingular}
	}
	return nil
}

// GTTRS solves A·x = d for m columns with the factors of GTTRF, as
// LAPACK's gttrs does: the row interchanges and L, then back substitution
// with U. Each column's result is GTSV's, bit for bit.
func GTTRS[T Float](dl, dd, du, du2 []T, ipiv []uint8, d, x []T, rs, cs, m int) {
	n := len(dd)
	if n == 0 || m == 0 {
		return
	}
	for j, k := 0, 0; j < m; j, k = j+1, k+cs {
		x[k] = d[k]
	}
	// Forward: at step i, row i+1 of x still holds d's.
	for i := 0; i < n-1; i++ {
		f := dl[i]
		if ipiv[i] == 0 {
			for j, k := 0, i*rs; j < m; j, k = j+1, k+cs {
				x[k+rs] = d[k+rs] - T(f*x[k])
			}
		} else {
			for j, k := 0, i*rs; j < m; j, k = j+1, k+cs {
				t, v := x[k], d[k+rs]
				x[k] = v
				x[k+rs] = t - T(f*v)
			}
		}
	}
	dn := dd[n-1]
	for j, k := 0, (n-1)*rs; j < m; j, k = j+1, k+cs {
		x[k] /= dn
	}
	if n > 1 {
		di, ui := dd[n-2], du[n-2]
		for j, k := 0, (n-2)*rs; j < m; j, k = j+1, k+cs {
			x[k] = (x[k] - T(ui*x[k+rs])) / di
		}
	}
	for i := n - 3; i >= 0; i-- {
		di, ui, u2 := dd[i], du[i], du2[i]
		for j, k := 0, i*rs; j < m; j, k = j+1, k+cs {
			x[k] = (x[k] - T(ui*x[k+rs]) - T(u2*x[k+2*rs])) / di
		}
	}
}

// PTTRF computes the factorization A = L·D·Lᵀ of one symmetric system
// with diagonal b and off-diagonal c (c[i] = A[i][i+1] = A[i+1][i];
// c[n−1] unused), as LAPACK's pttrf does: dd the diagonal of D and e[i]
// the sub-diagonal entry L[i+1][i] (e[n−1] = 0). It fails with a
// PivotError wrapping ErrNotPositiveDefinite at the first row whose pivot
// dd[i] is not positive (or not finite).
func PTTRF[T Float](b, c, dd, e []T) error {
	n := len(b)
	if n == 0 {
		return nil
	}
	dd, e = dd[:n], e[:n]
	copy(dd, b)
	for i := 0; i < n-1; i++ {
		if !positive(dd[i]) {
			return &PivotError{Row: i, Err: ErrNotPositiveDefinite}
		}
		ei := c[i]
		e[i] = ei / dd[i]
		dd[i+1] -= T(e[i] * ei)
	}
	if !positive(dd[n-1]) {
		return &PivotError{Row: n - 1, Err: ErrNotPositiveDefinite}
	}
	e[n-1] = 0
	return nil
}

// positive reports whether a pivot of L·D·Lᵀ is usable: > 0 and finite.
func positive[T Float](v T) bool {
	return v > 0 && !math.IsInf(float64(v), 1)
}

// PTTRS solves A·x = d for m columns with the factors of PTTRF, as
// LAPACK's pttrs does: y[i] = d[i] − y[i−1]·e[i−1], then
// x[i] = y[i]/dd[i] − x[i+1]·e[i].
func PTTRS[T Float](dd, e, d, x []T, rs, cs, m int) {
	n := len(dd)
	if n == 0 || m == 0 {
		return
	}
	for j, k := 0, 0; j < m; j, k = j+1, k+cs {
		x[k] = d[k]
	}
	for i := 1; i < n; i++ {
		ei := e[i-1]
		for j, k := 0, i*rs; j < m; j, k = j+1, k+cs {
			x[k] = d[k] - T(x[k-rs]*ei)
		}
	}
	dn := dd[n-1]
	for j, k := 0, (n-1)*rs; j < m; j, k = j+1, k+cs {
		x[k] /= dn
	}
	for i := n - 2; i >= 0; i-- {
		di, ei := dd[i], e[i]
		for j, k := 0, i*rs; j < m; j, k = j+1, k+cs {
			x[k] = x[k]/di - T(x[k+rs]*ei)
		}
	}
}

// PTSV solves one symmetric positive definite system (diagonal b,
// off-diagonal c, c[n−1] unused) by the L·D·Lᵀ factorization: the
// operations of PTTRF then PTTRS, in one forward sweep. work must have
// length ≥ 2n; x may alias d. It fails as PTTRF does.
func PTSV[T Float](b, c, d, x, work []T) error {
	n := len(b)
	if n == 0 {
		return nil
	}
	dd, e := work[:n], work[n:2*n]
	d, x = d[:n], x[:n]
	p := b[0]
	if !positive(p) {
		return &PivotError{Row: 0, Err: ErrNotPositiveDefinite}
	}
	dd[0] = p
	y := d[0]
	x[0] = y
	for i := 1; i < n; i++ {
		ci := c[i-1]
		ei := ci / p
		e[i-1] = ei
		p = b[i] - T(ei*ci)
		if !positive(p) {
			return &PivotError{Row: i, Err: ErrNotPositiveDefinite}
		}
		dd[i] = p
		y = d[i] - T(y*ei)
		x[i] = y
	}
	xi := x[n-1] / dd[n-1]
	x[n-1] = xi
	for i := n - 2; i >= 0; i-- {
		xi = x[i]/dd[i] - T(xi*e[i])
		x[i] = xi
	}
	return nil
}
