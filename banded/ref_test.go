package banded

import "math"

// factorLURef and factorULRef are the plain one-step-at-a-time
// factorizations (rank-1 update per step); the fused production code must
// give bit-identical factors and boosts.
func factorLURef[T Float](m *Band[T], r0, r1 int, opt FactorOptions) (Boosts, error) {
	var b Boosts
	if err := checkRange(m, r0, r1); err != nil {
		return b, err
	}
	norm, err := scanBlock(m, r0, r1)
	if err != nil {
		return b, err
	}
	tau := boostTau[T](norm, opt)
	b.Tau = tau
	boost := opt.BoostTol >= 0
	n, k, a := m.N, m.K, m.Data
	cbuf, rbuf := make([]T, k), make([]T, k)
	for j := r0; j < r1; j++ {
		p, err := pivotAt(a[k*n+j], tau, boost, j, &b)
		if err != nil {
			return b, err
		}
		a[k*n+j] = p
		w := min(k, r1-1-j)
		for t := 1; t <= w; t++ {
			li := (k+t)*n + j
			l := a[li] / p
			a[li] = l
			cbuf[t-1] = l
			rbuf[t-1] = a[(k-t)*n+j+t]
		}
		if w > 0 {
			rank1(a, n, k, j+1, w, w, cbuf, rbuf)
		}
	}
	return b, nil
}

func factorULRef[T Float](m *Band[T], r0, r1 int, opt FactorOptions) (Boosts, error) {
	var b Boosts
	if err := checkRange(m, r0, r1); err != nil {
		return b, err
	}
	norm, err := scanBlock(m, r0, r1)
	if err != nil {
		return b, err
	}
	tau := boostTau[T](norm, opt)
	b.Tau = tau
	boost := opt.BoostTol >= 0
	n, k, a := m.N, m.K, m.Data
	cbuf, rbuf := make([]T, k), make([]T, k)
	for j := r1 - 1; j >= r0; j-- {
		p, err := pivotAt(a[k*n+j], tau, boost, j, &b)
		if err != nil {
			reverse(b.Rows)
			return b, err
		}
		a[k*n+j] = p
		w := min(k, j-r0)
		o := j - w
		for q := 0; q < w; q++ {
			t := w - q
			ui := (k-t)*n + j
			u := a[ui] / p
			a[ui] = u
			cbuf[q] = u
			rbuf[q] = a[(k+t)*n+o+q]
		}
		if w > 0 {
			rank1(a, n, k, o, w, w, cbuf, rbuf)
		}
	}
	reverse(b.Rows)
	return b, nil
}

// factorPivotRef is the plain one-step-at-a-time banded LU with partial
// pivoting (gbtf2); FactorPivot must match it bit for bit.
func factorPivotRef[T Float](m *Band[T]) (*PivotLU[T], error) {
	n, k := m.N, m.K
	f := &PivotLU[T]{N: n, K: k, Data: make([]T, (3*k+1)*n), Piv: make([]int, n)}
	copy(f.Data[k*n:], m.Data)
	a, dc := f.Data, 2*k
	cbuf, rbuf := make([]T, k), make([]T, 2*k)
	ju := 0 // last column that U's rows 0…j may reach
	for j := 0; j < n; j++ {
		km := min(k, n-1-j)
		p, best := j, math.Abs(float64(a[dc*n+j]))
		for t := 1; t <= km; t++ {
			if v := math.Abs(float64(a[(dc+t)*n+j])); v > best {
				p, best = j+t, v
			}
		}
		f.Piv[j] = p
		if best == 0 {
			return nil, &RowError{Row: j, Col: j, Err: ErrSingular}
		}
		ju = max(ju, min(p+k, n-1))
		if p != j {
			for c := j; c <= ju; c++ {
				x, y := (dc+j-c)*n+c, (dc+p-c)*n+c
				a[x], a[y] = a[y], a[x]
			}
		}
		piv := a[dc*n+j]
		for t := 1; t <= km; t++ {
			li := (dc+t)*n + j
			l := a[li] / piv
			a[li] = l
			cbuf[t-1] = l
		}
		w := ju - j
		for t := 1; t <= w; t++ {
			rbuf[t-1] = a[(dc-t)*n+j+t] // u_{j, j+t}
		}
		if km > 0 && w > 0 {
			rank1(a, n, dc, j+1, km, w, cbuf, rbuf)
		}
	}
	return f, nil
}
