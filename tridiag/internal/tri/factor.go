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
// x may be d (solve in place). A solve of m ≥ 2 columns goes through the
// rows ChunkRows at a time, and through a chunk's columns four at a time,
// the four recurrences carried in registers from row to row: each row's
// factors are read from memory once for all the columns (from the cache
// for the groups after the first), each column's rows are read and
// written as runs, so that columns far apart in memory (a batch's length
// apart) do not evict one another from the cache row after row, and four
// independent recurrences are in flight where one column alone waits on
// each row's multiply and subtract. Every column gets the operations of
// the one-column solve, in the same order: the results depend neither on
// m nor on the strides.

// ChunkRows is the number of rows a multi-column solve takes at a time.
const ChunkRows = 64

// ScratchLen is the scratch a solve of m columns needs: the carries of
// its recurrences from one chunk of rows to the next.
func ScratchLen(m int) int {
	if m <= 1 {
		return 0
	}
	return 2 * m
}

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
// scratch holds ScratchLen(m) values.
func LUSolve[T Float](l, r, cp, d, x []T, rs, cs, m int, scratch []T) {
	n := len(r)
	if n == 0 || m == 0 {
		return
	}
	if m == 1 {
		luSolve1(l, r, cp, d, x, rs)
		return
	}
	carry := scratch[:m]
	lowerSolve(l[1:], n, d, x, rs, cs, m, carry)
	for i0 := (n - 1) / ChunkRows * ChunkRows; i0 >= 0; i0 -= ChunkRows {
		i1 := min(n, i0+ChunkRows)
		j := 0
		for ; j+4 <= m; j += 4 {
			c0 := j * cs
			c1, c2, c3 := c0+cs, c0+2*cs, c0+3*cs
			i := i1 - 1
			var x0, x1, x2, x3 T
			if i == n-1 {
				k, ri := i*rs, r[i]
				x0, x1, x2, x3 = T(x[k+c0]*ri), T(x[k+c1]*ri), T(x[k+c2]*ri), T(x[k+c3]*ri)
				x[k+c0], x[k+c1], x[k+c2], x[k+c3] = x0, x1, x2, x3
				i--
			} else {
				x0, x1, x2, x3 = carry[j], carry[j+1], carry[j+2], carry[j+3]
			}
			for k := i * rs; i >= i0; i, k = i-1, k-rs {
				ri, ci := r[i], cp[i]
				x0 = T(x[k+c0]*ri) - T(ci*x0)
				x1 = T(x[k+c1]*ri) - T(ci*x1)
				x2 = T(x[k+c2]*ri) - T(ci*x2)
				x3 = T(x[k+c3]*ri) - T(ci*x3)
				x[k+c0], x[k+c1], x[k+c2], x[k+c3] = x0, x1, x2, x3
			}
			carry[j], carry[j+1], carry[j+2], carry[j+3] = x0, x1, x2, x3
		}
		for ; j < m; j++ {
			c0 := j * cs
			i := i1 - 1
			var x0 T
			if i == n-1 {
				k := i * rs
				x0 = T(x[k+c0] * r[i])
				x[k+c0] = x0
				i--
			} else {
				x0 = carry[j]
			}
			for k := i * rs; i >= i0; i, k = i-1, k-rs {
				x0 = T(x[k+c0]*r[i]) - T(cp[i]*x0)
				x[k+c0] = x0
			}
			carry[j] = x0
		}
	}
}

// lowerSolve is the forward sweep of the multi-column solves, y[i] =
// d[i] − lo[i−1]·y[i−1] for the n rows of m columns into x, the columns
// four at a time through chunks of ChunkRows rows, their recurrences
// carried in carry (m values) from chunk to chunk. lo holds the unit lower
// factor's multipliers from row 1 (LUSolve's l[1:], PTTRS's e).
func lowerSolve[T Float](lo []T, n int, d, x []T, rs, cs, m int, carry []T) {
	for i0 := 0; i0 < n; i0 += ChunkRows {
		i1 := min(n, i0+ChunkRows)
		j := 0
		for ; j+4 <= m; j += 4 {
			c0 := j * cs
			c1, c2, c3 := c0+cs, c0+2*cs, c0+3*cs
			i := i0
			var y0, y1, y2, y3 T
			if i == 0 {
				y0, y1, y2, y3 = d[c0], d[c1], d[c2], d[c3]
				x[c0], x[c1], x[c2], x[c3] = y0, y1, y2, y3
				i++
			} else {
				y0, y1, y2, y3 = carry[j], carry[j+1], carry[j+2], carry[j+3]
			}
			for k := i * rs; i < i1; i, k = i+1, k+rs {
				li := lo[i-1]
				y0 = d[k+c0] - T(li*y0)
				y1 = d[k+c1] - T(li*y1)
				y2 = d[k+c2] - T(li*y2)
				y3 = d[k+c3] - T(li*y3)
				x[k+c0], x[k+c1], x[k+c2], x[k+c3] = y0, y1, y2, y3
			}
			carry[j], carry[j+1], carry[j+2], carry[j+3] = y0, y1, y2, y3
		}
		for ; j < m; j++ {
			c0 := j * cs
			i := i0
			var y0 T
			if i == 0 {
				y0 = d[c0]
				x[c0] = y0
				i++
			} else {
				y0 = carry[j]
			}
			for k := i * rs; i < i1; i, k = i+1, k+rs {
				y0 = d[k+c0] - T(lo[i-1]*y0)
				x[k+c0] = y0
			}
			carry[j] = y0
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
// with U. Each column's result is GTSV's, bit for bit. scratch holds
// ScratchLen(m) values.
func GTTRS[T Float](dl, dd, du, du2 []T, ipiv []uint8, d, x []T, rs, cs, m int, scratch []T) {
	n := len(dd)
	if n == 0 || m == 0 {
		return
	}
	if m == 1 {
		gttrs1(dl, dd, du, du2, ipiv, d, x, rs)
		return
	}
	// Forward: step i reads row i+1 of d, and makes row i final; the row
	// i+1 it leaves pending (u) is carried.
	u := scratch[:m]
	for j, k := 0, 0; j < m; j, k = j+1, k+cs {
		u[j] = d[k]
	}
	for i0 := 0; i0 < n-1; i0 += ChunkRows {
		i1 := min(n-1, i0+ChunkRows)
		j := 0
		for ; j+4 <= m; j += 4 {
			c0 := j * cs
			c1, c2, c3 := c0+cs, c0+2*cs, c0+3*cs
			u0, u1, u2, u3 := u[j], u[j+1], u[j+2], u[j+3]
			for i, k := i0, i0*rs; i < i1; i, k = i+1, k+rs {
				f := dl[i]
				v0, v1, v2, v3 := d[k+rs+c0], d[k+rs+c1], d[k+rs+c2], d[k+rs+c3]
				if ipiv[i] == 0 {
					x[k+c0], x[k+c1], x[k+c2], x[k+c3] = u0, u1, u2, u3
					u0, u1, u2, u3 = v0-T(f*u0), v1-T(f*u1), v2-T(f*u2), v3-T(f*u3)
				} else {
					x[k+c0], x[k+c1], x[k+c2], x[k+c3] = v0, v1, v2, v3
					u0, u1, u2, u3 = u0-T(f*v0), u1-T(f*v1), u2-T(f*v2), u3-T(f*v3)
				}
			}
			u[j], u[j+1], u[j+2], u[j+3] = u0, u1, u2, u3
		}
		for ; j < m; j++ {
			c0 := j * cs
			u0 := u[j]
			for i, k := i0, i0*rs; i < i1; i, k = i+1, k+rs {
				v0 := d[k+rs+c0]
				if ipiv[i] == 0 {
					x[k+c0] = u0
					u0 = v0 - T(dl[i]*u0)
				} else {
					x[k+c0] = v0
					u0 -= T(dl[i] * v0)
				}
			}
			u[j] = u0
		}
	}
	for j, k := 0, (n-1)*rs; j < m; j, k = j+1, k+cs {
		x[k] = u[j]
	}
	// Back substitution: rows i+1 and i+2 are carried.
	x1s, x2s := scratch[:m], scratch[m:2*m]
	for i0 := (n - 1) / ChunkRows * ChunkRows; i0 >= 0; i0 -= ChunkRows {
		i1 := min(n, i0+ChunkRows)
		j := 0
		for ; j+4 <= m; j += 4 {
			c0 := j * cs
			c1, c2, c3 := c0+cs, c0+2*cs, c0+3*cs
			i := i1 - 1
			var a0, a1, a2, a3, b0, b1, b2, b3 T // rows i+1 and i+2
			if i == n-1 {
				k, di := i*rs, dd[i]
				a0, a1, a2, a3 = x[k+c0]/di, x[k+c1]/di, x[k+c2]/di, x[k+c3]/di
				x[k+c0], x[k+c1], x[k+c2], x[k+c3] = a0, a1, a2, a3
				i--
				if i >= i0 {
					k, di, ui := i*rs, dd[i], du[i]
					a0, b0 = (x[k+c0]-T(ui*a0))/di, a0
					a1, b1 = (x[k+c1]-T(ui*a1))/di, a1
					a2, b2 = (x[k+c2]-T(ui*a2))/di, a2
					a3, b3 = (x[k+c3]-T(ui*a3))/di, a3
					x[k+c0], x[k+c1], x[k+c2], x[k+c3] = a0, a1, a2, a3
					i--
				}
			} else {
				a0, a1, a2, a3 = x1s[j], x1s[j+1], x1s[j+2], x1s[j+3]
				b0, b1, b2, b3 = x2s[j], x2s[j+1], x2s[j+2], x2s[j+3]
			}
			for k := i * rs; i >= i0; i, k = i-1, k-rs {
				di, ui, u2 := dd[i], du[i], du2[i]
				a0, b0 = (x[k+c0]-T(ui*a0)-T(u2*b0))/di, a0
				a1, b1 = (x[k+c1]-T(ui*a1)-T(u2*b1))/di, a1
				a2, b2 = (x[k+c2]-T(ui*a2)-T(u2*b2))/di, a2
				a3, b3 = (x[k+c3]-T(ui*a3)-T(u2*b3))/di, a3
				x[k+c0], x[k+c1], x[k+c2], x[k+c3] = a0, a1, a2, a3
			}
			x1s[j], x1s[j+1], x1s[j+2], x1s[j+3] = a0, a1, a2, a3
			x2s[j], x2s[j+1], x2s[j+2], x2s[j+3] = b0, b1, b2, b3
		}
		for ; j < m; j++ {
			c0 := j * cs
			i := i1 - 1
			var a0, b0 T
			if i == n-1 {
				k := i * rs
				a0 = x[k+c0] / dd[i]
				x[k+c0] = a0
				i--
				if i >= i0 {
					k -= rs
					a0, b0 = (x[k+c0]-T(du[i]*a0))/dd[i], a0
					x[k+c0] = a0
					i--
				}
			} else {
				a0, b0 = x1s[j], x2s[j]
			}
			for k := i * rs; i >= i0; i, k = i-1, k-rs {
				a0, b0 = (x[k+c0]-T(du[i]*a0)-T(du2[i]*b0))/dd[i], a0
				x[k+c0] = a0
			}
			x1s[j], x2s[j] = a0, b0
		}
	}
}

// gttrs1 is GTTRS for one column, rows rs apart.
func gttrs1[T Float](dl, dd, du, du2 []T, ipiv []uint8, d, x []T, rs int) {
	n := len(dd)
	cur := d[0]
	for i, k := 0, 0; i < n-1; i, k = i+1, k+rs {
		nxt := d[k+rs]
		if ipiv[i] == 0 {
			x[k] = cur
			cur = nxt - T(dl[i]*cur)
		} else {
			x[k] = nxt
			cur -= T(dl[i] * nxt)
		}
	}
	k := (n - 1) * rs
	x1 := cur / dd[n-1]
	x[k] = x1
	if n == 1 {
		return
	}
	k -= rs
	x0 := (x[k] - T(du[n-2]*x1)) / dd[n-2]
	x[k] = x0
	for i := n - 3; i >= 0; i-- {
		k -= rs
		x0, x1 = (x[k]-T(du[i]*x0)-T(du2[i]*x1))/dd[i], x0
		x[k] = x0
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
// x[i] = y[i]/dd[i] − x[i+1]·e[i]. scratch holds ScratchLen(m) values.
func PTTRS[T Float](dd, e, d, x []T, rs, cs, m int, scratch []T) {
	n := len(dd)
	if n == 0 || m == 0 {
		return
	}
	if m == 1 {
		pttrs1(dd, e, d, x, rs)
		return
	}
	carry := scratch[:m]
	lowerSolve(e, n, d, x, rs, cs, m, carry)
	for i0 := (n - 1) / ChunkRows * ChunkRows; i0 >= 0; i0 -= ChunkRows {
		i1 := min(n, i0+ChunkRows)
		j := 0
		for ; j+4 <= m; j += 4 {
			c0 := j * cs
			c1, c2, c3 := c0+cs, c0+2*cs, c0+3*cs
			i := i1 - 1
			var x0, x1, x2, x3 T
			if i == n-1 {
				k, di := i*rs, dd[i]
				x0, x1, x2, x3 = x[k+c0]/di, x[k+c1]/di, x[k+c2]/di, x[k+c3]/di
				x[k+c0], x[k+c1], x[k+c2], x[k+c3] = x0, x1, x2, x3
				i--
			} else {
				x0, x1, x2, x3 = carry[j], carry[j+1], carry[j+2], carry[j+3]
			}
			for k := i * rs; i >= i0; i, k = i-1, k-rs {
				di, ei := dd[i], e[i]
				x0 = x[k+c0]/di - T(x0*ei)
				x1 = x[k+c1]/di - T(x1*ei)
				x2 = x[k+c2]/di - T(x2*ei)
				x3 = x[k+c3]/di - T(x3*ei)
				x[k+c0], x[k+c1], x[k+c2], x[k+c3] = x0, x1, x2, x3
			}
			carry[j], carry[j+1], carry[j+2], carry[j+3] = x0, x1, x2, x3
		}
		for ; j < m; j++ {
			c0 := j * cs
			i := i1 - 1
			var x0 T
			if i == n-1 {
				k := i * rs
				x0 = x[k+c0] / dd[i]
				x[k+c0] = x0
				i--
			} else {
				x0 = carry[j]
			}
			for k := i * rs; i >= i0; i, k = i-1, k-rs {
				x0 = x[k+c0]/dd[i] - T(x0*e[i])
				x[k+c0] = x0
			}
			carry[j] = x0
		}
	}
}

// pttrs1 is PTTRS for one column, rows rs apart.
func pttrs1[T Float](dd, e, d, x []T, rs int) {
	n := len(dd)
	y := d[0]
	x[0] = y
	for i, k := 1, rs; i < n; i, k = i+1, k+rs {
		y = d[k] - T(y*e[i-1])
		x[k] = y
	}
	k := (n - 1) * rs
	xi := x[k] / dd[n-1]
	x[k] = xi
	for i := n - 2; i >= 0; i-- {
		k -= rs
		xi = x[k]/dd[i] - T(xi*e[i])
		x[k] = xi
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
