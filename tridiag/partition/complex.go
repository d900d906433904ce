package partition

import (
	"fmt"

	"github.com/bandsolve/bandsolve/tridiag/internal/tri"
)

// WorkspaceC is the scratch memory of SolveC and SolveBoundedC for complex
// systems of up to a fixed number of rows: γ, α, δ of every row, the
// reduced system (A, B, C, D), the reciprocals of its eliminated rows and
// its solution. It can be reused for any number of calls; the solves
// allocate nothing. It must not be used by two calls at once.
type WorkspaceC[T tri.Complex] struct {
	n          int
	g, al, dl  []T
	A, B, C, D []T
	q, xr      []T
}

// NewWorkspaceC returns a complex workspace for systems of up to n rows
// (n ≥ 0).
func NewWorkspaceC[T tri.Complex](n int) *WorkspaceC[T] {
	if n < 0 {
		panic(fmt.Sprintf("partition: negative workspace size %d", n))
	}
	buf := make([]T, 9*n)
	next := func() []T {
		s := buf[:n:n]
		buf = buf[n:]
		return s
	}
	return &WorkspaceC[T]{n: n, g: next(), al: next(), dl: next(), A: next(), B: next(), C: next(), D: next(), q: next(), xr: next()}
}

// Cap returns the largest number of rows the workspace can serve.
func (w *WorkspaceC[T]) Cap() int { return w.n }

// SolveC is Solve for a complex system (complex64 or complex128), with
// Go's complex arithmetic: Stage 1 eliminates every chunk of p rows,
// Stage 2 solves the reduced system of the chunks' first and last
// unknowns by cyclic reduction, Stage 3 recovers every chunk's interior,
// with the formulas of Solve (the reciprocals 1/u are complex divisions,
// every product is rounded to T before it is used). The GPU's complex
// partition kernels (ptx/src/cpart.cuh) do the same operations in the
// same order, so their results are SolveC's bit for bit.
//
// The arguments and panics are Solve's. When a divisor is zero or has a
// non-finite part SolveC returns a *tri.PivotError wrapping
// tri.ErrZeroPivot at its row: the smallest such row of Stage 1, else the
// smallest of the first level of the reduction that has one, else the
// reduced system's last row; x is not modified then. SolveC does not test
// x: a finite system may still give a non-finite x.
func SolveC[T tri.Complex](a, b, c, d, x []T, p int, ws *WorkspaceC[T]) error {
	return solveC(a, b, c, d, x, p, ws, false)
}

// SolveBoundedC is SolveC with a pivot growth test on every elimination,
// the test of tri.ThomasBoundedC carried to the partition method: every
// fill f subtracted from a diagonal entry e must have Cabs1(f) ≤
// tri.PivotGrowthBound·Cabs1(e), where Cabs1(v) = |re v| + |im v|. The
// fills are a_j·γ_{j−1} of the chunks' pivots and c_s·v of their first
// rows in Stage 1, and the two fills of every row that a level of the
// cyclic reduction keeps. Matrices diagonally dominant by rows in
// Cabs1 pass it. A failed test is reported as a *tri.PivotError wrapping
// tri.ErrPivotGrowth, ordered with the zero pivots: Stage 1's smallest
// failed row, then level by level (the divisors of a level before its
// fills), then the last row. Where the test passes, x is SolveC's bit
// for bit.
func SolveBoundedC[T tri.Complex](a, b, c, d, x []T, p int, ws *WorkspaceC[T]) error {
	return solveC(a, b, c, d, x, p, ws, true)
}

func solveC[T tri.Complex](a, b, c, d, x []T, p int, ws *WorkspaceC[T], bounded bool) error {
	capacity := -1
	if ws != nil {
		capacity = ws.n
	}
	n := checkSolve(a, b, c, d, x, p, capacity)
	if ws == nil {
		ws = NewWorkspaceC[T](n)
	}
	if n == 0 {
		return nil
	}
	nch := Chunks(n, p)
	R := ReducedSize(n, p)
	per := min(p, 2)
	A, B, C, D := ws.A[:R], ws.B[:R], ws.C[:R], ws.D[:R]

	// Stage 1, every chunk: its smallest failed row, the smallest over
	// the chunks.
	bad := -1
	var why error
	for k := range nch {
		s := k * p
		m := min(p, n-s)
		if row, e := eliminateC(a, b, c, d, s, m, n, ws, A, B, C, D, k*per, bounded); row >= 0 && (bad < 0 || row < bad) {
			bad, why = row, e
		}
	}
	if bad >= 0 {
		return &tri.PivotError{Row: bad, Err: why}
	}

	// Stage 2.
	xr := ws.xr[:R]
	if row, e := reducedCRC(A, B, C, D, ws.q[:R], xr, func(j int) int { return ReducedRow(j, n, p) }, bounded); row >= 0 {
		return &tri.PivotError{Row: row, Err: e}
	}

	// Stage 3.
	for k := range nch {
		s := k * p
		m := min(p, n-s)
		f := k * per
		xs := xr[f]
		x[s] = xs
		if m == 1 {
			continue
		}
		xe := xr[f+1]
		x[s+m-1] = xe
		xn := xe
		for j := m - 2; j >= 1; j-- {
			i := s + j
			xi := T(ws.dl[i]-T(ws.al[i]*xs)) - T(ws.g[i]*xn)
			x[i] = xi
			xn = xi
		}
	}
	return nil
}

// grows reports whether the fill f fails the growth test against the
// diagonal entry e.
func grows[T tri.Complex](f, e T) bool {
	return !(tri.Cabs1(f) <= tri.PivotGrowthBound*tri.Cabs1(e))
}

// eliminateC is Stage 1 for the complex chunk of m rows at row s (the
// operations of eliminate): γ, α, δ of its rows into ws, its reduced rows
// at f (F) and f+1 (L). It returns the chunk's smallest failed row and
// why, or −1: the first row whose fill fails the test (bounded) or whose
// pivot is a bad divisor, or the chunk's first row where its fill c_s·v
// fails the test.
func eliminateC[T tri.Complex](a, b, c, d []T, s, m, n int, ws *WorkspaceC[T], A, B, C, D []T, f int, bounded bool) (int, error) {
	load := func(i int) (ai, bi, ci, di T) {
		ai, bi, ci, di = a[i], b[i], c[i], d[i]
		if i == 0 {
			ai = 0
		}
		if i == n-1 {
			ci = 0
		}
		return
	}
	a0, b0, c0, d0 := load(s)
	if m == 1 {
		A[f], B[f], C[f], D[f] = a0, b0, c0, d0
		return -1, nil
	}
	bad := -1
	var why error
	var gp, ap, dp T = 0, -1, 0
	var one T = 1
	for j := 1; j < m; j++ {
		i := s + j
		aj, bj, cj, dj := load(i)
		fill := T(aj * gp)
		piv := bj - fill
		if bad < 0 {
			if bounded && grows(fill, bj) {
				bad, why = i, tri.ErrPivotGrowth
			} else if tri.BadDivisorC(piv) {
				bad, why = i, tri.ErrZeroPivot
			}
		}
		r := one / piv
		gp = T(cj * r)
		ap = -T(T(aj*ap) * r)
		dp = T(dj-T(aj*dp)) * r
		ws.g[i], ws.al[i], ws.dl[i] = gp, ap, dp
	}
	A[f+1], B[f+1], C[f+1], D[f+1] = ap, 1, gp, dp
	var y, v, w T = 0, 0, -1
	for j := m - 2; j >= 1; j-- {
		i := s + j
		y = ws.dl[i] - T(ws.g[i]*y)
		v = ws.al[i] - T(ws.g[i]*v)
		w = -T(ws.g[i] * w)
	}
	fill := T(c0 * v)
	if bounded && grows(fill, b0) {
		bad, why = s, tri.ErrPivotGrowth
	}
	A[f], B[f], C[f], D[f] = a0, b0-fill, -T(c0*w), d0-T(c0*y)
	return bad, why
}

// reducedCRC is reducedCR for complex rows, with the growth test of
// every kept row's two fills where bounded. It returns the original row
// (rowOf) of the first failure and why, or −1.
func reducedCRC[T tri.Complex](A, B, C, D, q, xr []T, rowOf func(int) int, bounded bool) (int, error) {
	R := len(B)
	K := crLevels(R)
	var one T = 1
	for k := 1; k <= K; k++ {
		u := 1 << (k - 1)
		for j := u - 1; j < R; j += 2 * u {
			if tri.BadDivisorC(B[j]) {
				return rowOf(j), tri.ErrZeroPivot
			}
			q[j] = one / B[j]
		}
		for j := 2*u - 1; j < R; j += 2 * u {
			var ar, cr, dr, qr T = 0, 0, 0, 1
			if j+u < R {
				ar, cr, dr, qr = A[j+u], C[j+u], D[j+u], q[j+u]
			}
			s1 := T(A[j] * q[j-u])
			s2 := T(C[j] * qr)
			f1 := T(C[j-u] * s1)
			f2 := T(ar * s2)
			if bounded && (grows(f1, B[j]) || grows(f2, B[j])) {
				return rowOf(j), tri.ErrPivotGrowth
			}
			A[j], B[j], C[j], D[j] = -T(A[j-u]*s1), T(B[j]-f1)-f2, -T(cr*s2), T(D[j]-T(D[j-u]*s1))-T(dr*s2)
		}
	}
	top := 1<<K - 1
	if tri.BadDivisorC(B[top]) {
		return rowOf(top), tri.ErrZeroPivot
	}
	xr[top] = D[top] / B[top]
	for k := K; k >= 1; k-- {
		u := 1 << (k - 1)
		for j := u - 1; j < R; j += 2 * u {
			var xl, xn T
			if j-u >= 0 {
				xl = xr[j-u]
			}
			if j+u < R {
				xn = xr[j+u]
			}
			xr[j] = T(T(D[j]-T(A[j]*xl))-T(C[j]*xn)) * q[j]
		}
	}
	return -1, nil
}
