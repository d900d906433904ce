package partition

import (
	"fmt"
	"math/bits"

	"github.com/bandsolve/bandsolve/tridiag/internal/tri"
)

// DefaultChunk returns the rows per chunk p that the tridiag devices use
// for systems of n rows, in both precisions: 16. (On an H100, 2^24-row
// batches of N = 64 … 4096 ran fastest with 16 rows per GPU thread in
// FP32, and within 1% of the fastest in FP64.) It is the single source of
// p for the CPU device and the GPU launch (package tuning), so that the
// two compute the same bits.
func DefaultChunk(n int) int {
	return 16
}

// Chunks returns T = ⌈n/p⌉, the number of chunks of an n-row system.
func Chunks(n, p int) int {
	if n <= 0 {
		return 0
	}
	return (n + p - 1) / p
}

// ReducedSize returns R, the number of rows of the reduced system: two per
// chunk (its first and last row), one for a chunk of one row.
func ReducedSize(n, p int) int {
	if n <= 0 {
		return 0
	}
	if p == 1 {
		return n
	}
	t := Chunks(n, p)
	if n-(t-1)*p == 1 {
		return 2*t - 1
	}
	return 2 * t
}

// Steps returns the number of PCR steps of the reduced system, ⌈log2 R⌉
// (SolvePCR; Solve does Levels).
func Steps(n, p int) int {
	r := ReducedSize(n, p)
	if r <= 1 {
		return 0
	}
	return bits.Len(uint(r - 1))
}

// Workspace is the scratch memory of Solve for systems of up to a fixed
// number of rows, with any chunk size: the interior coefficients γ, α, δ
// of every row (Stage 1 to Stage 3), two level buffers of the reduced
// system used alternately by the PCR steps, the reciprocals of one step
// and the reduced solution. It can be reused for any number of calls;
// Solve allocates nothing. It must not be used by two calls at once.
type Workspace[T tri.Float] struct {
	n          int
	g, al, dl  []T // γ_j, α_j, δ_j by original row
	A, B, C, D [2][]T
	q          []T // 1/B of the current level
	xr         []T // reduced solution
}

// NewWorkspace returns a workspace for systems of up to n rows (n ≥ 0).
func NewWorkspace[T tri.Float](n int) *Workspace[T] {
	if n < 0 {
		panic(fmt.Sprintf("partition: negative workspace size %d", n))
	}
	buf := make([]T, 13*n)
	next := func() []T {
		s := buf[:n:n]
		buf = buf[n:]
		return s
	}
	w := &Workspace[T]{n: n, g: next(), al: next(), dl: next(), q: next(), xr: next()}
	for l := range 2 {
		w.A[l], w.B[l], w.C[l], w.D[l] = next(), next(), next(), next()
	}
	return w
}

// Cap returns the largest number of rows the workspace can serve.
func (w *Workspace[T]) Cap() int { return w.n }

// Levels returns the number of cyclic-reduction levels of the reduced
// system that Solve does, ⌊log2 R⌋ (0 for R ≤ 1).
func Levels(n, p int) int { return crLevels(ReducedSize(n, p)) }

// crLevels is the number of cyclic-reduction levels of r reduced rows,
// ⌊log2 r⌋ (0 for r ≤ 1).
func crLevels(r int) int {
	if r <= 1 {
		return 0
	}
	return bits.Len(uint(r)) - 1
}

// Solve solves one tridiagonal system by the partition method with chunks
// of p rows (p ≥ 1; p ≥ n is a single chunk, p = 1 is cyclic reduction on
// the whole system): Stage 1 eliminates every chunk, Stage 2 solves the
// reduced system of the chunks' first and last unknowns by cyclic
// reduction, Stage 3 recovers every chunk's interior (see the package
// documentation for the formulas). Its backward error stays near the
// unit roundoff where Thomas's does (see "Stability" in the package
// documentation); SolvePCR, which solves the reduced system by PCR, does
// not.
//
// a, b, c, d and x must all have length n = len(b); a[0] and c[n−1] are
// ignored. The inputs are not modified and x may alias d. ws must have
// capacity ≥ n (a nil ws makes Solve allocate a temporary one). Solve
// panics if p < 1, the lengths differ or ws is too small.
//
// When a divisor is zero or not finite Solve returns a *tri.PivotError
// wrapping tri.ErrZeroPivot (see "Breakdown" in the package
// documentation); x is not modified then.
func Solve[T tri.Float](a, b, c, d, x []T, p int, ws *Workspace[T]) error {
	return solve(a, b, c, d, x, p, ws, false)
}

// SolvePCR is Solve with the reduced system solved by parallel cyclic
// reduction (⌈log2 R⌉ steps, every reduced row's unknown found on its
// own; p = 1 is plain PCR, bit for bit pcr.Solve but for the
// reciprocals), as every partition kernel of the GPU did until the
// reduced system went to cyclic reduction; no kernel twins it now. It
// stays for comparison (TestBackwardStable). On
// weakly diagonally dominant matrices its backward error grows with
// the size of the reduced system (see "Stability" in the package
// documentation).
func SolvePCR[T tri.Float](a, b, c, d, x []T, p int, ws *Workspace[T]) error {
	return solve(a, b, c, d, x, p, ws, true)
}

// checkSolve panics, as Solve documents, when p < 1, the lengths differ
// or a workspace of that capacity (< 0: none given) is too small; it
// returns n = len(b).
func checkSolve[E any](a, b, c, d, x []E, p, capacity int) int {
	n := len(b)
	if p < 1 {
		panic(fmt.Sprintf("partition: chunk size %d < 1", p))
	}
	if len(a) != n || len(c) != n || len(d) != n || len(x) != n {
		panic(fmt.Sprintf("partition: slice lengths a=%d b=%d c=%d d=%d x=%d differ", len(a), n, len(c), len(d), len(x)))
	}
	if capacity >= 0 && n > capacity {
		panic(fmt.Sprintf("partition: system of %d rows exceeds workspace capacity %d", n, capacity))
	}
	return n
}

func solve[T tri.Float](a, b, c, d, x []T, p int, ws *Workspace[T], usePCR bool) error {
	capacity := -1
	if ws != nil {
		capacity = ws.n
	}
	n := checkSolve(a, b, c, d, x, p, capacity)
	if ws == nil {
		ws = NewWorkspace[T](n)
	}
	if n == 0 {
		return nil
	}
	nch := Chunks(n, p)
	R := ReducedSize(n, p)
	per := min(p, 2) // reduced rows per (full) chunk

	rowOf := func(j int) int { return ReducedRow(j, n, p) }

	// Stage 1, for every chunk in parallel: the reduced rows F_k (and L_k).
	A, B, C, D := ws.A[0], ws.B[0], ws.C[0], ws.D[0]
	bad := -1
	for k := range nch {
		s := k * p
		m := min(p, n-s)
		f := k * per
		if row := eliminate(a, b, c, d, s, m, n, ws, A, B, C, D, f); row >= 0 && (bad < 0 || row < bad) {
			bad = row
		}
	}
	if bad >= 0 {
		return &tri.PivotError{Row: bad, Err: tri.ErrZeroPivot}
	}

	// Stage 2: the reduced system.
	xr := ws.xr[:R]
	if usePCR {
		bad = reducedPCR(ws, R, Steps(n, p), rowOf)
	} else {
		bad = reducedCR(A[:R], B[:R], C[:R], D[:R], ws.q[:R], xr, rowOf)
	}
	if bad >= 0 {
		return &tri.PivotError{Row: bad, Err: tri.ErrZeroPivot}
	}

	// Stage 3, for every chunk in parallel: the interior from x_s, x_e.
	// d is not read any more, so x may alias it.
	for k := range nch {
		s := k * p
		m := min(p, n-s)
		f := k * per
		var xe T
		if m > 1 {
			xe = xr[f+1]
		}
		recoverChunk(x, ws, s, m, xr[f], xe)
	}
	return nil
}

// reducedCR solves the R reduced rows A, B, C, D (overwritten) into xr by
// cyclic reduction with reciprocals q (see "Stage 2" in the package
// documentation). It returns the original row (rowOf) of the first bad
// divisor, level by level, or −1.
func reducedCR[T tri.Float](A, B, C, D, q, xr []T, rowOf func(int) int) int {
	R := len(B)
	K := crLevels(R)
	// Reduction: level k keeps the rows j ≡ 2u−1 (mod 2u), u = 2^(k−1),
	// and eliminates the rows j ≡ u−1 (mod 2u) into them; a kept row
	// changes in place, an eliminated row keeps its equation for the
	// substitution.
	for k := 1; k <= K; k++ {
		u := 1 << (k - 1)
		for j := u - 1; j < R; j += 2 * u {
			if tri.BadDivisor(B[j]) {
				return rowOf(j)
			}
			q[j] = 1 / B[j]
		}
		for j := 2*u - 1; j < R; j += 2 * u {
			var ar, cr, dr, qr T = 0, 0, 0, 1
			if j+u < R {
				ar, cr, dr, qr = A[j+u], C[j+u], D[j+u], q[j+u]
			}
			A[j], B[j], C[j], D[j] = reduceRow(A[j], B[j], C[j], D[j], A[j-u], C[j-u], D[j-u], q[j-u], ar, cr, dr, qr)
		}
	}
	// The last row standing, 2^K − 1.
	top := 1<<K - 1
	if tri.BadDivisor(B[top]) {
		return rowOf(top)
	}
	xr[top] = D[top] / B[top]
	// Substitution, level K … 1: every row eliminated at level k from its
	// equation of that level and its neighbours j ± u (0 when missing).
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
	return -1
}

// reduceRow is one reduction step of the row (a, b, c, d) with its left
// and right neighbours' a, c, d and reciprocal 1/b (the identity 0, 0, 0,
// 1 for a missing one), every operation rounded on its own (the GPU's
// part_upd).
func reduceRow[T tri.Float](a, b, c, d, al, cl, dl, ql, ar, cr, dr, qr T) (T, T, T, T) {
	s1 := T(a * ql)
	s2 := T(c * qr)
	return -T(al * s1), T(b-T(cl*s1)) - T(ar*s2), -T(cr * s2), reduceRHS(d, dl, dr, s1, s2)
}

// reduceRHS is a right-hand side's part of a reduction step with the
// factors s1 = a·(1/b_left), s2 = c·(1/b_right): (d − d_left·s1) −
// d_right·s2.
func reduceRHS[T tri.Float](d, dl, dr, s1, s2 T) T { return T(d-T(dl*s1)) - T(dr*s2) }

// reducedPCR solves the R reduced rows in ws.A[0] … by PCR (steps
// steps, levels in ws's two buffers alternately) into ws.xr. It returns
// the original row (rowOf) of the first bad divisor, step by step, or −1.
func reducedPCR[T tri.Float](ws *Workspace[T], R, steps int, rowOf func(int) int) int {
	bad := -1
	cur := 0
	q := ws.q[:R]
	for k := 1; k <= steps; k++ {
		u := 1 << (k - 1)
		sA, sB, sC, sD := ws.A[cur][:R], ws.B[cur][:R], ws.C[cur][:R], ws.D[cur][:R]
		tA, tB, tC, tD := ws.A[1-cur][:R], ws.B[1-cur][:R], ws.C[1-cur][:R], ws.D[1-cur][:R]
		// Every row's reciprocal; its B is a divisor of this step when it
		// is the neighbour of an existing row.
		for j := range R {
			q[j] = 1 / sB[j]
			if (j-u >= 0 || j+u < R) && tri.BadDivisor(sB[j]) && (bad < 0 || rowOf(j) < bad) {
				bad = rowOf(j)
			}
		}
		if bad >= 0 {
			return bad
		}
		for i := range R {
			var al, cl, dl, ql T = 0, 0, 0, 1
			if i-u >= 0 {
				al, cl, dl, ql = sA[i-u], sC[i-u], sD[i-u], q[i-u]
			}
			var ar, cr, dr, qr T = 0, 0, 0, 1
			if i+u < R {
				ar, cr, dr, qr = sA[i+u], sC[i+u], sD[i+u], q[i+u]
			}
			tA[i], tB[i], tC[i], tD[i] = reduceRow(sA[i], sB[i], sC[i], sD[i], al, cl, dl, ql, ar, cr, dr, qr)
		}
		cur = 1 - cur
	}
	// Every reduced row is now decoupled: x = D/B.
	lB, lD := ws.B[cur][:R], ws.D[cur][:R]
	for j := range R {
		if tri.BadDivisor(lB[j]) {
			return rowOf(j)
		}
	}
	xr := ws.xr[:R]
	for j := range R {
		xr[j] = lD[j] / lB[j]
	}
	return -1
}

// recoverChunk is Stage 3 for the chunk of m rows starting at row s: x_s
// and x_e (unused when m = 1) are its boundary values, γ, α, δ of its
// interior are in ws.
func recoverChunk[T tri.Float](x []T, ws *Workspace[T], s, m int, xs, xe T) {
	x[s] = xs
	if m == 1 {
		return
	}
	x[s+m-1] = xe
	xn := xe
	for j := m - 2; j >= 1; j-- {
		i := s + j
		xi := T(ws.dl[i]-T(ws.al[i]*xs)) - T(ws.g[i]*xn)
		x[i] = xi
		xn = xi
	}
}

// ReducedRow is the original row that reduced row j of an n-row system in
// chunks (or segments) of p rows stands for: a chunk's first row (even j)
// or last row (odd j); row j itself when p = 1.
func ReducedRow(j, n, p int) int {
	if p == 1 {
		return j
	}
	k := j / 2
	if j%2 == 0 {
		return k * p
	}
	return min(k*p+p, n) - 1
}

// eliminate is Stage 1 for the chunk of m rows starting at row s: it
// stores γ, α, δ of its rows in ws (by original row) and writes its
// reduced rows at index f (F) and f+1 (L) of A, B, C, D. It returns the
// first row whose pivot is a bad divisor, or −1.
func eliminate[T tri.Float](a, b, c, d []T, s, m, n int, ws *Workspace[T], A, B, C, D []T, f int) int {
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
		return -1
	}
	bad := -1
	// Downward sweep: row j to x_j + α_j x_s + γ_j x_{j+1} = δ_j.
	var gp, ap, dp T = 0, -1, 0
	for j := 1; j < m; j++ {
		i := s + j
		aj, bj, cj, dj := load(i)
		piv := bj - T(aj*gp)
		if bad < 0 && tri.BadDivisor(piv) {
			bad = i
		}
		r := 1 / piv
		gp = T(cj * r)
		ap = -T(T(aj*ap) * r)
		dp = T(dj-T(aj*dp)) * r
		ws.g[i], ws.al[i], ws.dl[i] = gp, ap, dp
	}
	// L: the last row's equation (1).
	A[f+1], B[f+1], C[f+1], D[f+1] = ap, 1, gp, dp
	// Upward sweep: x_1 = y − v x_s − w x_e.
	var y, v, w T = 0, 0, -1
	for j := m - 2; j >= 1; j-- {
		i := s + j
		y = ws.dl[i] - T(ws.g[i]*y)
		v = ws.al[i] - T(ws.g[i]*v)
		w = -T(ws.g[i] * w)
	}
	// F: the first row with x_1 substituted.
	A[f], B[f], C[f], D[f] = a0, b0-T(c0*v), -T(c0*w), d0-T(c0*y)
	return bad
}
