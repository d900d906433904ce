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
// x may be d (solve in place). A solve of m ≥ 2 columns moves the rows
// through tile (TileLen(m) values) TileRows at a time, each column's rows
// read and written as runs, and applies each row's factors to all m
// columns at once: the factors are read once for all the columns, and
// columns far apart in memory (a batch's length apart) do not evict one
// another from the cache row after row. Every column gets the operations
// of the one-column solve, in the same order: the results depend neither
// on m nor on the strides.

// TileRows is the number of rows a multi-column solve moves through its
// tile at a time.
const TileRows = 64

// TileLen is the length of the tile a solve of m columns needs.
func TileLen(m int) int { return (TileRows + 2) * m }

// gatherRows copies rows i0 … i0+h−1 of the m columns of v into tile
// rows t0 … t0+h−1 (row t of the tile at tile[t·m:]).
func gatherRows[T Float](tile, v []T, i0, h, t0, rs, cs, m int) {
	for j, k0 := 0, i0*rs; j < m; j, k0 = j+1, k0+cs {
		for t, k := t0*m+j, k0; t < (t0+h)*m; t, k = t+m, k+rs {
			tile[t] = v[k]
		}
	}
}

// scatterRows copies tile rows t0 … t0+h−1 to rows i0 … i0+h−1 of the m
// columns of v.
func scatterRows[T Float](v, tile []T, i0, h, t0, rs, cs, m int) {
	for j, k0 := 0, i0*rs; j < m; j, k0 = j+1, k0+cs {
		for t, k := t0*m+j, k0; t < (t0+h)*m; t, k = t+m, k+rs {
			v[k] = tile[t]
		}
	}
}

// forwardTiles runs a forward sweep whose step i (0 ≤ i < n−1) reads and
// writes rows i and i+1 only, after which row i is final: rows of d
// enter the tile TileRows at a time behind the one pending row, step
// runs on the tile's consecutive rows (top, bottom, each m values), and
// the final rows go to x.
func forwardTiles[T Float](n int, d, x []T, rs, cs, m int, tile []T, step func(i int, top, bot []T)) {
	h := 0 // pending rows at the top of the tile (0 or 1)
	for i0 := 0; i0 < n; i0 += TileRows {
		i1 := min(n, i0+TileRows)
		gatherRows(tile, d, i0, i1-i0, h, rs, cs, m)
		rows := h + i1 - i0
		s := i0 - h // the row in tile row 0
		for t := 0; t+1 < rows; t++ {
			step(s+t, tile[t*m:(t+1)*m], tile[(t+1)*m:(t+2)*m])
		}
		if i1 == n {
			scatterRows(x, tile, s, rows, 0, rs, cs, m)
			return
		}
		scatterRows(x, tile, s, rows-1, 0, rs, cs, m)
		copy(tile[:m], tile[(rows-1)*m:rows*m])
		h = 1
	}
}

// backTiles runs a back substitution whose row i (from n−1 down to 0)
// is computed from rows i, i+1 and i+2 of x: row computes the row in cur
// (m values, holding the forward sweep's) from the two below, next and
// next2 (nil past the last row).
func backTiles[T Float](n int, x []T, rs, cs, m int, tile []T, row func(i int, cur, next, next2 []T)) {
	for i0 := ((n - 1) / TileRows) * TileRows; i0 >= 0; i0 -= TileRows {
		h := min(n, i0+TileRows) - i0
		// Tile rows 0 … h−1 hold rows i0 …; rows h and h+1 the two rows
		// below the chunk, already final.
		gatherRows(tile, x, i0, h, 0, rs, cs, m)
		for t := h - 1; t >= 0; t-- {
			i := i0 + t
			var next, next2 []T
			if i+1 < n {
				next = tile[(t+1)*m : (t+2)*m]
			}
			if i+2 < n {
				next2 = tile[(t+2)*m : (t+3)*m]
			}
			row(i, tile[t*m:(t+1)*m], next, next2)
		}
		scatterRows(x, tile, i0, h, 0, rs, cs, m)
		// The two rows below the next chunk up (with h = 1 the second
		// is past the last row, and not read).
		copy(tile[TileRows*m:(TileRows+2)*m], tile[:2*m])
	}
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
// y[i] = d[i] − l[i]·y[i−1], then x[i] = y[i]·r[i] − cp[i]·x[i+1]. tile
// holds TileLen(m) values (unused when m = 1).
func LUSolve[T Float](l, r, cp, d, x []T, rs, cs, m int, tile []T) {
	n := len(r)
	if n == 0 || m == 0 {
		return
	}
	if m == 1 {
		luSolve1(l, r, cp, d, x, rs)
		return
	}
	forwardTiles(n, d, x, rs, cs, m, tile, func(i int, top, bot []T) {
		li := l[i+1]
		for j, y := range top {
			bot[j] -= T(li * y)
		}
	})
	backTiles(n, x, rs, cs, m, tile, func(i int, cur, next, _ []T) {
		ri := r[i]
		if next == nil {
			for j, y := range cur {
				cur[j] = T(y * ri)
			}
			return
		}
		ci := cp[i]
		for j, y := range cur {
			cur[j] = T(y*ri) - T(ci*next[j])
		}
	})
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
// with U. Each column's result is GTSV's, bit for bit. tile holds
// TileLen(m) values (unused when m = 1).
func GTTRS[T Float](dl, dd, du, du2 []T, ipiv []uint8, d, x []T, rs, cs, m int, tile []T) {
	n := len(dd)
	if n == 0 || m == 0 {
		return
	}
	if m == 1 {
		gttrs1(dl, dd, du, du2, ipiv, d, x, rs)
		return
	}
	forwardTiles(n, d, x, rs, cs, m, tile, func(i int, top, bot []T) {
		f := dl[i]
		if ipiv[i] == 0 {
			for j, v := range top {
				bot[j] -= T(f * v)
			}
			return
		}
		for j, v := range bot {
			t := top[j]
			top[j] = v
			bot[j] = t - T(f*v)
		}
	})
	backTiles(n, x, rs, cs, m, tile, func(i int, cur, next, next2 []T) {
		di := dd[i]
		switch {
		case next == nil:
			for j, v := range cur {
				cur[j] = v / di
			}
		case next2 == nil:
			ui := du[i]
			for j, v := range cur {
				cur[j] = (v - T(ui*next[j])) / di
			}
		default:
			ui, u2 := du[i], du2[i]
			for j, v := range cur {
				cur[j] = (v - T(ui*next[j]) - T(u2*next2[j])) / di
			}
		}
	})
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
// x[i] = y[i]/dd[i] − x[i+1]·e[i]. tile holds TileLen(m) values (unused
// when m = 1).
func PTTRS[T Float](dd, e, d, x []T, rs, cs, m int, tile []T) {
	n := len(dd)
	if n == 0 || m == 0 {
		return
	}
	if m == 1 {
		pttrs1(dd, e, d, x, rs)
		return
	}
	forwardTiles(n, d, x, rs, cs, m, tile, func(i int, top, bot []T) {
		ei := e[i]
		for j, y := range top {
			bot[j] -= T(y * ei)
		}
	})
	backTiles(n, x, rs, cs, m, tile, func(i int, cur, next, _ []T) {
		di := dd[i]
		if next == nil {
			for j, y := range cur {
				cur[j] = y / di
			}
			return
		}
		ei := e[i]
		for j, y := range cur {
			cur[j] = y/di - T(next[j]*ei)
		}
	})
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
