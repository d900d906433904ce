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
	return factorPivotGeneralRef(m.ToGeneral())
}

// factorPivotGeneralRef is gbtf2 on a General, one rank-1 update per step;
// FactorPivotGeneral must match it bit for bit.
func factorPivotGeneralRef[T Float](m *General[T]) (*PivotLU[T], error) {
	n, kl, ku := m.N, m.KL, m.KU
	dc := kl + ku
	f := &PivotLU[T]{N: n, KL: kl, KU: ku, Data: make([]T, (dc+kl+1)*n), Piv: make([]int, n)}
	for i := 0; i < n; i++ {
		for j := max(0, i-kl); j <= min(n-1, i+ku); j++ {
			f.Data[(dc+i-j)*n+j] = m.At(i, j)
		}
	}
	a := f.Data
	cbuf, rbuf := make([]T, kl), make([]T, dc)
	ju := 0 // last column that U's rows 0…j may reach
	for j := 0; j < n; j++ {
		km := min(kl, n-1-j)
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
		ju = max(ju, min(p+ku, n-1))
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
