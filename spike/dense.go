package spike

import "math"

// Small dense K×K kernels for the reduced systems. Every K×K block in this
// package is stored column-major with leading dimension K: entry (p, q)
// at [q·K + p].

// denseLU factors the k×k column-major matrix a in place by Gaussian
// elimination with partial pivoting, P·a = L·U (L unit lower triangular
// below the diagonal, U on and above it, as LAPACK's getrf): piv[j] is the
// row interchanged with row j at step j. A pivot column whose candidates
// are all zero (an exactly singular matrix) gets the pivot tau instead (a
// diagonal boost, as for the banded blocks); its step index is returned in
// boosted. A non-finite pivot returns ok = false with the step in bad.
func denseLU[T Float](a []T, k int, piv []int, tau T) (boosted []int, bad int, ok bool) {
	for j := 0; j < k; j++ {
		col := a[j*k : (j+1)*k]
		// Pivot: the entry of largest magnitude in column j, rows j…k−1.
		p, best := j, math.Abs(float64(col[j]))
		for i := j + 1; i < k && !math.IsNaN(best); i++ {
			if v := math.Abs(float64(col[i])); v > best || math.IsNaN(v) {
				p, best = i, v
			}
		}
		if math.IsNaN(best) || math.IsInf(best, 0) {
			return boosted, j, false
		}
		piv[j] = p
		if p != j {
			for c := 0; c < k; c++ {
				a[c*k+j], a[c*k+p] = a[c*k+p], a[c*k+j]
			}
		}
		if col[j] == 0 {
			col[j] = tau
			boosted = append(boosted, j)
		}
		d := col[j]
		for i := j + 1; i < k; i++ {
			col[i] /= d
		}
		// Rank-1 update of the trailing block.
		for c := j + 1; c < k; c++ {
			cc := a[c*k : (c+1)*k]
			u := cc[j]
			if u == 0 {
				continue
			}
			for i := j + 1; i < k; i++ {
				cc[i] -= col[i] * u
			}
		}
	}
	return boosted, 0, true
}

// denseLUSolve solves a·x = b in place (x holds b on entry) with the
// factors and interchanges of denseLU.
func denseLUSolve[T Float](a []T, k int, piv []int, x []T) {
	for j := 0; j < k; j++ {
		if p := piv[j]; p != j {
			x[j], x[p] = x[p], x[j]
		}
	}
	for j := 0; j < k; j++ { // L, unit diagonal
		v := x[j]
		if v == 0 {
			continue
		}
		col := a[j*k : (j+1)*k]
		for i := j + 1; i < k; i++ {
			x[i] -= col[i] * v
		}
	}
	for j := k - 1; j >= 0; j-- { // U
		col := a[j*k : (j+1)*k]
		v := x[j] / col[j]
		x[j] = v
		for i := 0; i < j; i++ {
			x[i] -= col[i] * v
		}
	}
}

// subMatVec sets y = y − a·x for the k×k column-major matrix a.
func subMatVec[T Float](a []T, k int, x, y []T) {
	for q := 0; q < k; q++ {
		v := x[q]
		if v == 0 {
			continue
		}
		col := a[q*k : (q+1)*k]
		for p := range col {
			y[p] -= col[p] * v
		}
	}
}
