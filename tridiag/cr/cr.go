// Package cr solves a tridiagonal system by cyclic reduction (CR), following
// Diéguez et al., "Tree Partitioning Reduction" (2019), §2.2.1, Fig. 1,
// Eq. 1–2 (after Hockney 1965).
//
// The implementation is the step-faithful CPU twin of a GPU kernel: every
// reduction or substitution step is written as "for every active equation,
// in parallel: read the previous level, write the next level", with one
// array per level (never an in-place update a parallel kernel could not
// do), and every floating-point operation is rounded separately in a fixed
// order, so a kernel doing the same operations in the same order (without
// contracting a*b+c into a fused multiply-add) reproduces the result bit for
// bit.
//
// # Indexing
//
// The paper numbers rows 1…N and keeps the even-numbered equations at every
// reduction step. With 0-based rows that is the odd rows: at level k
// (stride u = 2^k) the active equations are the rows r = j·u − 1 for
// j = 1 … ⌊n/u⌋, and level k+1 keeps those with j even. Each level is stored
// compactly: compact index m at level k is row (m+1)·2^k − 1, so the
// neighbours r ± u of a row are the compact indices m ± 1.
//
// # Any n
//
// Nothing needs n to be a power of two. Reduction goes on while a level has
// more than two equations; level k has exactly ⌊n/2^k⌋ of them, so the last
// level has one or two, which are solved directly (two by Eq. 6 of §3.2,
// Cramer's rule, the same formula as Eq. 3). A neighbour row r − u < 0 or
// r + u ≥ n does not exist; it is read as the identity equation a = c = 0,
// b = 1, d = 0 (whose solution is x = 0), which couples to nothing, so the
// update of Eq. 1 and the substitution of Eq. 2 reduce exactly to the
// formulas without that neighbour.
package cr

import (
	"fmt"
	"math/bits"

	"github.com/bandsolve/bandsolve/tridiag/internal/tri"
)

// maxLevels bounds the number of reduction levels: level k exists only
// while 2^k ≤ n, and n fits in an int.
const maxLevels = bits.UintSize + 1

// Workspace is the scratch memory of Solve for systems of up to a fixed
// number of rows. It holds one compact coefficient array per reduction
// level (level 0 is the loaded input). A Workspace can be reused for any
// number of Solve calls with n up to its capacity; Solve allocates nothing.
// It must not be used by two Solve calls at the same time.
type Workspace[T tri.Float] struct {
	n          int // capacity in rows
	a, b, c, d []T // all levels, back to back: level k is [off[k], off[k]+cnt[k])
	off, cnt   [maxLevels]int
}

// NewWorkspace returns a workspace for systems of up to n rows (n ≥ 0).
func NewWorkspace[T tri.Float](n int) *Workspace[T] {
	if n < 0 {
		panic(fmt.Sprintf("cr: negative workspace size %d", n))
	}
	// Σ_k ⌊n/2^k⌋ < 2n entries cover every level.
	size := 0
	for m := n; m > 0; m /= 2 {
		size += m
	}
	buf := make([]T, 4*size)
	return &Workspace[T]{
		n: n,
		a: buf[0*size : 1*size],
		b: buf[1*size : 2*size],
		c: buf[2*size : 3*size],
		d: buf[3*size : 4*size],
	}
}

// Cap returns the largest number of rows the workspace can serve.
func (w *Workspace[T]) Cap() int { return w.n }

// level returns the compact arrays of level k.
func (w *Workspace[T]) level(k int) (a, b, c, d []T) {
	lo, hi := w.off[k], w.off[k]+w.cnt[k]
	return w.a[lo:hi], w.b[lo:hi], w.c[lo:hi], w.d[lo:hi]
}

// Solve solves one tridiagonal system by cyclic reduction: forward reduction
// (Eq. 1) halving the system at each level until one or two equations
// remain, which are solved directly (Eq. 6), then backward substitution
// (Eq. 2) down to level 0.
//
// a, b, c, d and x must all have length n = len(b); a[0] and c[n−1] are
// ignored. The inputs are not modified and x may alias d. ws must have
// capacity ≥ n (a nil ws makes Solve allocate a temporary one). Solve
// panics if the lengths differ or ws is too small.
//
// CR does not pivot. When a divisor is zero or not finite Solve returns a
// *tri.PivotError wrapping tri.ErrZeroPivot whose Row is the original row of
// the equation owning that divisor: the smallest such row of the first level
// where one occurs (for the final two-equation system, whose divisor is its
// determinant, the second row of that system). x is not modified on error.
func Solve[T tri.Float](a, b, c, d, x []T, ws *Workspace[T]) error {
	n := len(b)
	if len(a) != n || len(c) != n || len(d) != n || len(x) != n {
		panic(fmt.Sprintf("cr: slice lengths a=%d b=%d c=%d d=%d x=%d differ", len(a), n, len(c), len(d), len(x)))
	}
	if n == 0 {
		return nil
	}
	if ws == nil {
		ws = NewWorkspace[T](n)
	} else if n > ws.n {
		panic(fmt.Sprintf("cr: system of %d rows exceeds workspace capacity %d", n, ws.n))
	}

	// Plan the levels: level 0 has n equations, level k+1 has ⌊cnt_k/2⌋;
	// reduce while a level has more than two. top is the last level.
	top := 0
	ws.off[0], ws.cnt[0] = 0, n
	for ws.cnt[top] > 2 {
		ws.off[top+1] = ws.off[top] + ws.cnt[top]
		ws.cnt[top+1] = ws.cnt[top] / 2
		top++
	}

	// Load (level 0): for every row i in parallel, copy E_i. The unused
	// a[0] and c[n−1] are loaded as 0: x_{-1} and x_n do not exist.
	{
		la, lb, lc, ld := ws.level(0)
		for i := 0; i < n; i++ {
			ai, ci := a[i], c[i]
			if i == 0 {
				ai = 0
			}
			if i == n-1 {
				ci = 0
			}
			la[i], lb[i], lc[i], ld[i] = ai, b[i], ci, d[i]
		}
	}

	// Forward reduction, Eq. 1, one step per level k = 0 … top−1, stride
	// u = 2^k. Level k+1 keeps the odd compact indices i = 2j+1 of level k
	// (the paper's even-numbered equations); the even ones (2j, 2j+2) are
	// eliminated into them.
	for k := 0; k < top; k++ {
		u := 1 << k
		sa, sb, sc, sd := ws.level(k)
		ta, tb, tc, td := ws.level(k + 1)
		cnt := ws.cnt[k]

		// Divisor check: the eliminated equations (even compact indices)
		// are the divisors b^k_{i±u} of Eq. 1 (and of Eq. 2 later).
		for m := 0; m < cnt; m += 2 {
			if tri.BadDivisor(sb[m]) {
				return &tri.PivotError{Row: (m+1)*u - 1, Err: tri.ErrZeroPivot}
			}
		}

		// Eq. 1: for every kept equation j in parallel, read E_{i-u},
		// E_i, E_{i+u} from level k and write E_j of level k+1.
		for j := range ws.cnt[k+1] {
			i, l, r := 2*j+1, 2*j, 2*j+2
			// E_{i−u} always exists (l ≥ 0).
			al, bl, cl, dl := sa[l], sb[l], sc[l], sd[l]
			// E_{i+u} may lie beyond the last row: identity equation.
			var ar, br, cr, dr T = 0, 1, 0, 0
			if r < cnt {
				ar, br, cr, dr = sa[r], sb[r], sc[r], sd[r]
			}
			s1 := sa[i] / bl // s1 = a_i / b_{i−u}
			s2 := sc[i] / br // s2 = c_i / b_{i+u} (the paper's Eq. 1 prints b_{i−u}: a typo, cf. Eq. 5)
			ta[j] = -T(al * s1)
			tb[j] = T(sb[i]-T(cl*s1)) - T(ar*s2)
			tc[j] = -T(cr * s2)
			td[j] = T(sd[i]-T(dl*s1)) - T(dr*s2)
		}
	}

	// Top level: one or two equations, stride u = 2^top, rows u−1 (and
	// 2u−1). Their outer couplings (to x_{-1} and to x_{3u−1} ≥ n) are zero.
	{
		u := 1 << top
		la, lb, lc, ld := ws.level(top)
		if ws.cnt[top] == 1 {
			if tri.BadDivisor(lb[0]) {
				return &tri.PivotError{Row: u - 1, Err: tri.ErrZeroPivot}
			}
			x[u-1] = ld[0] / lb[0]
		} else {
			// Eq. 6 (the first step of the backward substitution): the
			// two-unknown two-equation system E_p, E_q with q = p + u.
			bp, cp, dp := lb[0], lc[0], ld[0]
			aq, bq, dq := la[1], lb[1], ld[1]
			det := T(bq*bp) - T(cp*aq)
			if tri.BadDivisor(det) {
				return &tri.PivotError{Row: 2*u - 1, Err: tri.ErrZeroPivot}
			}
			xp := (T(bq*dp) - T(cp*dq)) / det
			xq := (T(dq*bp) - T(dp*aq)) / det
			x[u-1], x[2*u-1] = xp, xq
		}
	}

	// Backward substitution, Eq. 2, levels k = top−1 … 0, stride u = 2^k:
	// for every equation eliminated at level k (even compact index m, row
	// (m+1)u − 1) in parallel, read x_{r−u} and x_{r+u} (solved at higher
	// levels; a missing neighbour is the identity equation, x = 0) and
	// write x_r. The rows read and the rows written are disjoint.
	for k := top - 1; k >= 0; k-- {
		u := 1 << k
		la, lb, lc, ld := ws.level(k)
		cnt := ws.cnt[k]
		for m := 0; m < cnt; m += 2 {
			r := (m+1)*u - 1
			var xl, xr T
			if m > 0 {
				xl = x[r-u]
			}
			if m+1 < cnt {
				xr = x[r+u]
			}
			x[r] = T(T(ld[m]-T(la[m]*xl))-T(lc[m]*xr)) / lb[m]
		}
	}
	return nil
}
