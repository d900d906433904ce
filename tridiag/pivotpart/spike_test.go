package pivotpart

import (
	"github.com/bandsolve/bandsolve/tridiag/internal/tri"
)

// spikeSolve solves a system of more than m rows by the partition method
// with the coarse rows formed from spikes, the formulation Stage 1 does
// not use (see "Accuracy" in the package documentation): every partition
// solves its own block T_k (couplings a_s and c_{e−1} dropped) by the
// pivoted LU for y = T_k⁻¹·d, v = T_k⁻¹·a_s·e_0 and w = T_k⁻¹·c_{e−1}·e_{m−1},
// so that x = y − v·x_{s−1} − w·x_e; its coarse rows are the
// division-free combinations of its first and last rows that are free of
// x_e and of x_{s−1} (identity rows at the two ends of the system); the
// coarse system is solved by SolveDirect, and x is formed from the
// spikes. It returns the coarse system too.
func spikeSolve[T tri.Float](a, b, c, d, x []T, m int) (A, B, C, D []T, err error) {
	n := len(b)
	P := Partitions(n, m)
	R := CoarseSize(n, m)
	A, B, C, D = make([]T, R), make([]T, R), make([]T, R), make([]T, R)
	X := make([]T, R)
	y, v, w := make([]T, n), make([]T, n), make([]T, n)
	l := newLU[T](m)
	for k := range P {
		s, e := Bounds(n, m, k)
		if e-s == 1 {
			A[2*k], B[2*k], C[2*k], D[2*k] = a[s], b[s], 0, d[s]
			continue
		}
		copy(y[s:e], d[s:e])
		if s > 0 {
			v[s] = a[s]
		}
		if e < n {
			w[e-1] = c[e-1]
		}
		for _, col := range [][]T{y[s:e], v[s:e], w[s:e]} {
			if bad := l.solve(a[s:e], b[s:e], c[s:e], col); bad >= 0 {
				return nil, nil, nil, nil, &tri.PivotError{Row: s + bad, Err: tri.ErrZeroPivot}
			}
		}
		y0, y1, v0, v1, w0, w1 := y[s], y[e-1], v[s], v[e-1], w[s], w[e-1]
		al, be := T(1), T(0)
		if sg := max(abs(w0), abs(w1)); sg != 0 {
			al, be = w1/sg, -w0/sg
		}
		ga, de := T(0), T(1)
		if ta := max(abs(v0), abs(v1)); ta != 0 {
			ga, de = v1/ta, -v0/ta
		}
		A[2*k], B[2*k], C[2*k], D[2*k] = T(al*v0)+T(be*v1), al, be, T(al*y0)+T(be*y1)
		A[2*k+1], B[2*k+1], C[2*k+1], D[2*k+1] = ga, de, T(ga*w0)+T(de*w1), T(ga*y0)+T(de*y1)
		if k == 0 {
			A[0], B[0], C[0], D[0] = 0, 1, 0, 0
		}
		if k == P-1 {
			A[2*k+1], B[2*k+1], C[2*k+1], D[2*k+1] = 0, 1, 0, 0
		}
	}
	if err := SolveDirect(A, B, C, D, X, nil); err != nil {
		return nil, nil, nil, nil, err
	}
	for k := range P {
		s, e := Bounds(n, m, k)
		if e-s == 1 {
			x[s] = X[2*k]
			continue
		}
		var xl, xr T
		if k > 0 {
			xl = X[2*k-1]
		}
		if k < P-1 {
			xr = X[2*k+2]
		}
		for i := s; i < e; i++ {
			x[i] = T(y[i]-T(v[i]*xl)) - T(w[i]*xr)
		}
	}
	return A, B, C, D, nil
}
