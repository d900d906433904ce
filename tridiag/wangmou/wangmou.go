// Package wangmou solves a tridiagonal system by the divide-and-conquer
// algorithm of Wang and Mou (1991) as described by Diéguez, Amor and
// Doallo, "Tree Partitioning Reduction" (ACM TOMS, 2019), §2.2.3, Figs. 3–4,
// Eq. 4 (after Lobeiras et al., the paper's ref. [15]).
//
// The implementation is the step-faithful CPU twin of a GPU kernel: every
// step is written as "for every pair of elements, in parallel: read both
// triads of the previous level, write both triads of the next level", with
// two level buffers used alternately, and every floating-point operation is
// rounded separately in a fixed order (products are converted explicitly,
// so Go never contracts a*b+c into a fused multiply-add). A kernel doing the
// same operations in the same order, compiled with -fmad=false (or with
// __fmul_rn/__fadd_rn), reproduces the results bit for bit.
//
// # Triads
//
// Every element E_i carries a triad of three equations, Left, Center and
// Right (§2.2.3). Rows are 0-based. After step k the elements form blocks
// of 2^k consecutive rows [lo, hi]; every equation of a block couples only
// the unknown just left of the block, x_{lo−1}, one unknown of the block and
// the unknown just right of it, x_{hi+1}, stored as
// a·x_{lo−1} + b·x_centre + c·x_{hi+1} = d:
//
//	L_i: centre x_lo  (the block's first unknown; the same for the whole block)
//	C_i: centre x_i   (the element's own unknown)
//	R_i: centre x_hi  (the block's last unknown; the same for the whole block)
//
// Initially (blocks of one row) each row is "triplicated": L_i = C_i = R_i
// = row i.
//
// # Step k (Fig. 3, Fig. 4)
//
// With u = 2^(k−1), blocks A = [lo, lo+u−1] and B = [lo+u, lo+2u−1] merge;
// element i of A is paired with element i+u of B, and the pair is updated
// from E_i and E_{i+u} of the previous level (Fig. 4):
//
//  1. the middle term of R_i (x_mid, mid = lo+u−1) reduces the first term
//     (also x_mid) of the three equations of E_{i+u}: Y ← Y − (Y.a/R_i.b)·R_i
//     for Y = L_{i+u}, C_{i+u}, R_{i+u}. They now couple x_{lo−1} and
//     x_{mid+1} as well; for L_{i+u}, whose centre is x_{mid+1}, the
//     x_{mid+1} term adds to its diagonal, so L_{i+u} becomes the
//     three-term equation of x_{mid+1} in x_{lo−1}, x_{hi+1};
//  2. the middle term of the new L_{i+u} (x_{mid+1}) reduces all the other
//     coefficients on x_{mid+1}: in C_{i+u} and R_{i+u} (the term created in
//     part 1) and in L_i and C_i (their right term c).
//
// The new L_i and L_{i+u} are both the reduced L_i and the new R_i and
// R_{i+u} both the reduced R_{i+u} ("at the end of the sequence, both left
// equations will be identical, and the same happens with both right
// equations"); the reduced R_i and L_{i+u} are not needed and not formed.
// After log2 N steps the block is the whole system, whose outside unknowns
// x_{−1}, x_N have zero coefficients, and Eq. 4 gives x_i = d_i/b_i from C_i.
//
// # Any n
//
// The algorithm pairs element i with element i+u, so the elements must
// number a power of two: the system is padded to N = 2^⌈log2 n⌉ rows with
// virtual identity rows a = c = 0, b = 1, d = 0 (solution 0). a[0] and
// c[n−1] are read as 0, so no real row couples to a virtual one; the
// virtual rows' multipliers are exactly 0 and they never change a real
// equation (this is the paper's end-of-§3.1 remark on arbitrary N, with
// identity rows instead of copies of the last equation).
//
// # Breakdown
//
// WM does not pivot. The divisors are R_i.b (the pivot of x_mid) and the
// reduced L_{i+u}.b (the pivot of x_{mid+1}) in each step, and C_i.b in
// Eq. 4. When one is zero or not finite Solve returns a *tri.PivotError
// wrapping tri.ErrZeroPivot whose Row is mid, mid+1 or i respectively.
package wangmou

import (
	"fmt"
	"math/bits"

	"github.com/bandsolve/bandsolve/tridiag/internal/tri"
)

// eqn is one equation a·x_left + b·x_centre + c·x_right = d.
type eqn[T tri.Float] struct{ a, b, c, d T }

// triad is one element E_i: its Left, Center and Right equations.
type triad[T tri.Float] struct{ l, c, r eqn[T] }

// Workspace holds the two level buffers of triads (12 values per padded
// row each, the "huge memory bandwidth" of WM that §2.3 mentions). A
// Workspace serves any number of sequential calls; it grows when a call
// needs more room, so calls that fit allocate nothing. It must not be used
// by two calls at the same time.
type Workspace[T tri.Float] struct {
	lv [2][]triad[T]
}

// NewWorkspace returns a workspace for systems of up to n rows (n ≥ 0).
func NewWorkspace[T tri.Float](n int) *Workspace[T] {
	w := &Workspace[T]{}
	w.fit(padded(max(n, 0)))
	return w
}

func (w *Workspace[T]) fit(np int) *Workspace[T] {
	if w == nil {
		w = &Workspace[T]{}
	}
	if len(w.lv[0]) < np {
		w.lv[0] = make([]triad[T], np)
		w.lv[1] = make([]triad[T], np)
	}
	return w
}

// padded returns the number of elements WM works on for n rows: the next
// power of two ≥ n (0 for n = 0).
func padded(n int) int {
	if n == 0 {
		return 0
	}
	return 1 << bits.Len(uint(n-1))
}

// Solve solves one tridiagonal system by the Wang & Mou algorithm: log2 N
// merge steps on triads (Fig. 3, Fig. 4), N the next power of two ≥ n, then
// x_i = d_i/b_i from every Center equation (Eq. 4).
//
// a, b, c, d and x must all have length n = len(b) (Solve panics
// otherwise); a[0] and c[n−1] are ignored. The inputs are not modified and
// x may alias d. A nil ws makes Solve allocate a temporary workspace.
//
// When a divisor is zero or not finite Solve returns a *tri.PivotError
// wrapping tri.ErrZeroPivot naming the original row whose pivot went bad
// (the first met in the order of the loops) and leaves x unmodified.
func Solve[T tri.Float](a, b, c, d, x []T, ws *Workspace[T]) error {
	n := len(b)
	for _, v := range [][]T{a, c, d, x} {
		if len(v) != n {
			panic(fmt.Sprintf("wangmou: slice of length %d for a system of %d rows", len(v), n))
		}
	}
	if n == 0 {
		return nil
	}
	N := padded(n)
	ws = ws.fit(N)
	cur, nxt := ws.lv[0][:N], ws.lv[1][:N]

	// Initialisation (§2.2.3): for every element, in parallel, the triad is
	// the original equation three times; rows ≥ n are identity rows.
	for i := range N {
		e := eqn[T]{0, 1, 0, 0}
		if i < n {
			e = eqn[T]{a[i], b[i], c[i], d[i]}
			if i == 0 {
				e.a = 0
			}
			if i == n-1 {
				e.c = 0
			}
		}
		cur[i] = triad[T]{e, e, e}
	}

	// Steps k = 1 … log2 N (Fig. 3), u = 2^(k−1): for every pair (i, i+u)
	// with i in the left half of a block of 2u rows, in parallel, read E_i
	// and E_{i+u} of level k−1 and write both at level k (Fig. 4).
	for u := 1; u < N; u *= 2 {
		for lo := 0; lo < N; lo += 2 * u {
			mid := lo + u - 1
			for i := lo; i <= mid; i++ {
				p, q, bad := merge(cur[i], cur[i+u])
				if bad != 0 {
					return &tri.PivotError{Row: mid + bad - 1, Err: tri.ErrZeroPivot}
				}
				nxt[i], nxt[i+u] = p, q
			}
		}
		cur, nxt = nxt, cur
	}

	// Last step (Eq. 4): every C_i couples x_i alone. Check every divisor
	// before writing, so that x (and d, when aliased) is kept on error.
	for i := range n {
		if tri.BadDivisor(cur[i].c.b) {
			return &tri.PivotError{Row: i, Err: tri.ErrZeroPivot}
		}
	}
	for i := range n {
		x[i] = cur[i].c.d / cur[i].c.b
	}
	return nil
}

// merge is the node computation of Fig. 4: it reduces the triads p = E_i
// (block A, last unknown x_mid) and q = E_{i+u} (block B, first unknown
// x_{mid+1}) into the triads of the merged block. bad is 1 when R_i.b (row
// mid) is a bad divisor, 2 when the reduced L_{i+u}.b (row mid+1) is.
func merge[T tri.Float](p, q triad[T]) (np, nq triad[T], bad int) {
	rp := p.r
	if tri.BadDivisor(rp.b) {
		return np, nq, 1
	}

	// Part 1: the middle term of R_i (x_mid) reduces the first term of
	// L_{i+u}, C_{i+u}, R_{i+u}. Y − m·R_i with m = Y.a/R_i.b has
	// x_{lo−1}: −m·R_i.a, x_mid: 0, x_{mid+1}: −m·R_i.c, centre: Y.b,
	// x_{hi+1}: Y.c, rhs: Y.d − m·R_i.d.
	m := q.l.a / rp.b
	lq := eqn[T]{ // L_{i+u}: its centre is x_{mid+1}
		a: -T(m * rp.a),
		b: q.l.b - T(m*rp.c),
		c: q.l.c,
		d: q.l.d - T(m*rp.d),
	}
	mc := q.c.a / rp.b
	cq := eqn[T]{a: -T(mc * rp.a), b: q.c.b, c: q.c.c, d: q.c.d - T(mc*rp.d)}
	ec := -T(mc * rp.c) // C_{i+u}'s new coefficient on x_{mid+1}
	mr := q.r.a / rp.b
	rq := eqn[T]{a: -T(mr * rp.a), b: q.r.b, c: q.r.c, d: q.r.d - T(mr*rp.d)}
	er := -T(mr * rp.c) // R_{i+u}'s new coefficient on x_{mid+1}

	if tri.BadDivisor(lq.b) {
		return np, nq, 2
	}

	// Part 2: the middle term of the new L_{i+u} (x_{mid+1}) reduces the
	// x_{mid+1} terms: Y − m·L_{i+u}.
	m = ec / lq.b
	cq.a = cq.a - T(m*lq.a)
	cq.c = cq.c - T(m*lq.c)
	cq.d = cq.d - T(m*lq.d)
	m = er / lq.b
	rq.a = rq.a - T(m*lq.a)
	rq.c = rq.c - T(m*lq.c)
	rq.d = rq.d - T(m*lq.d)
	m = p.l.c / lq.b
	lp := eqn[T]{a: p.l.a - T(m*lq.a), b: p.l.b, c: -T(m * lq.c), d: p.l.d - T(m*lq.d)}
	m = p.c.c / lq.b
	cp := eqn[T]{a: p.c.a - T(m*lq.a), b: p.c.b, c: -T(m * lq.c), d: p.c.d - T(m*lq.d)}

	// Both left equations become the reduced L_i, both right ones the
	// reduced R_{i+u}.
	return triad[T]{lp, cp, rq}, triad[T]{lp, cq, rq}, 0
}
