// Package pcr solves a tridiagonal system by parallel cyclic reduction (PCR),
// following Diéguez et al., "Tree Partitioning Reduction" (2019), §2.2.2,
// Fig. 2, Eq. 3 (after Hockney and Jesshope), and by the PCR→Thomas hybrid
// that GPU kernels use: a few PCR steps split the system into independent
// interleaved subsystems, each then solved by the Thomas algorithm.
//
// The implementation is the step-faithful CPU twin of a GPU kernel: every
// reduction step is written as "for every equation i, in parallel: read
// E_{i−u}, E_i, E_{i+u} from the previous level, write E_i of the next
// level", with two level buffers used alternately (never an in-place update
// a parallel kernel could not do), and every floating-point operation is
// rounded separately in a fixed order, so a kernel doing the same operations
// in the same order (without contracting a*b+c into a fused multiply-add)
// reproduces the result bit for bit.
//
// # Stability
//
// PCR finds every unknown on its own (x_i = d_i/b_i after the last step),
// so on weakly diagonally dominant matrices, whose condition grows like
// n², the unknowns' rounding errors do not fit together and the backward
// error grows with n: FP32, a diffusion matrix with a variable
// coefficient in [0.5, 1.5], n = 2^20: 1.0 (Thomas 1.5e-8, the partition
// method 1.9e-8; go test -run TestBackwardStable -v
// ./tridiag/partition). Cyclic reduction and the partition method do not
// have this weakness.
//
// # Reduction step
//
// Step k = 1, 2, … uses stride u = 2^(k−1) and updates every equation i by
// the coefficient formulas of the paper's Eq. 1 / Eq. 5:
//
//	s1 = a_i/b_{i−u},  s2 = c_i/b_{i+u}
//	a'_i = −a_{i−u}·s1,  c'_i = −c_{i+u}·s2
//	b'_i = b_i − c_{i−u}·s1 − a_{i+u}·s2,  d'_i = d_i − d_{i−u}·s1 − d_{i+u}·s2
//
// after which E_i couples x_{i−2u}, x_i, x_{i+2u}. After s steps the rows
// split into 2^s independent subsystems {r, r+2^s, r+2·2^s, …}.
//
// # Any n
//
// Nothing needs n to be a power of two. A neighbour i − u < 0 or i + u ≥ n
// does not exist; it is read as the identity equation a = c = 0, b = 1,
// d = 0 (whose solution is x = 0), which couples to nothing, so the update
// reduces exactly to the formula without that neighbour. After
// ⌈log2 n⌉ steps 2u ≥ n, every equation couples only to itself, and
// x_i = d_i/b_i.
//
// The paper stops one step earlier, at n/2 two-unknown systems {i, i+n/2},
// and solves them by Cramer's rule (Eq. 3). Solve instead performs that last
// step as one more reduction step (stride n/2) and divides: the same
// elimination, written in the same per-equation form as every other step,
// but rounded differently from Eq. 3; a kernel twin must do the same.
package pcr

import (
	"fmt"
	"math/bits"

	"github.com/bandsolve/bandsolve/tridiag/internal/tri"
)

// Workspace is the scratch memory of Solve and SolveHybrid for systems of
// up to a fixed number of rows: two level buffers (a, b, c, d) used
// alternately by the reduction steps, and the Thomas scratch of the
// hybrid. A Workspace can be reused for any number of calls with n up to
// its capacity; Solve and SolveHybrid allocate nothing. It must not be used
// by two calls at the same time.
type Workspace[T tri.Float] struct {
	n          int
	a, b, c, d [2][]T
	work       []T
}

// NewWorkspace returns a workspace for systems of up to n rows (n ≥ 0).
func NewWorkspace[T tri.Float](n int) *Workspace[T] {
	if n < 0 {
		panic(fmt.Sprintf("pcr: negative workspace size %d", n))
	}
	buf := make([]T, 9*n)
	w := &Workspace[T]{n: n, work: buf[8*n:]}
	for s := range 2 {
		base := 4 * n * s
		w.a[s] = buf[base+0*n : base+1*n]
		w.b[s] = buf[base+1*n : base+2*n]
		w.c[s] = buf[base+2*n : base+3*n]
		w.d[s] = buf[base+3*n : base+4*n]
	}
	return w
}

// Cap returns the largest number of rows the workspace can serve.
func (w *Workspace[T]) Cap() int { return w.n }

// Steps returns ⌈log2 n⌉, the number of PCR steps after which every
// equation of an n-row system is decoupled (0 for n ≤ 1).
func Steps(n int) int {
	if n <= 1 {
		return 0
	}
	return bits.Len(uint(n - 1))
}

// Solve solves one tridiagonal system by parallel cyclic reduction: the
// forward reduction (the coefficient update of Eq. 1/Eq. 5, applied to all
// equations) for ⌈log2 n⌉ steps, until every equation is decoupled, then
// x_i = d_i/b_i (instead of Eq. 3's two-by-two solve; see the package
// documentation).
//
// a, b, c, d and x must all have length n = len(b); a[0] and c[n−1] are
// ignored. The inputs are not modified and x may alias d. ws must have
// capacity ≥ n (a nil ws makes Solve allocate a temporary one). Solve
// panics if the lengths differ or ws is too small.
//
// PCR does not pivot. When a divisor is zero or not finite Solve returns a
// *tri.PivotError wrapping tri.ErrZeroPivot whose Row is the original row i
// whose b_i (at that step) was the bad divisor: the smallest such row of the
// first step where one occurs. x is not modified on error.
func Solve[T tri.Float](a, b, c, d, x []T, ws *Workspace[T]) error {
	n, ws := prepare(a, b, c, d, x, ws)
	if n == 0 {
		return nil
	}
	cur, err := reduce(a, b, c, d, ws, Steps(n))
	if err != nil {
		return err
	}
	return divide(x, ws, cur)
}

// SolveHybrid solves one tridiagonal system by `steps` PCR steps, which
// split it into 2^steps independent interleaved subsystems (rows r,
// r+2^steps, r+2·2^steps, … for r = 0 … 2^steps−1), each then solved by
// the Thomas algorithm (tri.Thomas on a gathered copy). This is the
// PCR→Thomas hybrid a GPU kernel uses. steps = 0 is plain Thomas; steps ≥
// ⌈log2 n⌉ is plain PCR, identical to Solve; steps < 0 counts as 0.
//
// Arguments, aliasing and errors are as for Solve. A breakdown inside the
// Thomas stage names the original row of the bad pivot, the smallest such
// row over all subsystems.
func SolveHybrid[T tri.Float](a, b, c, d, x []T, steps int, ws *Workspace[T]) error {
	n, ws := prepare(a, b, c, d, x, ws)
	if n == 0 {
		return nil
	}
	steps = max(0, min(steps, Steps(n)))
	cur, err := reduce(a, b, c, d, ws, steps)
	if err != nil {
		return err
	}
	if steps == Steps(n) {
		return divide(x, ws, cur)
	}

	// Thomas stage: the current level holds 2^steps decoupled subsystems,
	// one per thread of a kernel. For each subsystem r (in parallel):
	// gather its rows into the free level buffer, solve in place with
	// tri.Thomas, and scatter the solution into the current level's d.
	// Its first a couples to a row < 0 and its last c to a row ≥ n, both
	// zero (and ignored by Thomas anyway).
	p := 1 << steps
	ca, cb, cc, cd := ws.a[cur], ws.b[cur], ws.c[cur], ws.d[cur]
	ga, gb, gc, gd := ws.a[1-cur], ws.b[1-cur], ws.c[1-cur], ws.d[1-cur]
	bad := -1
	for r := 0; r < p; r++ {
		m := (n - r + p - 1) / p // rows r, r+p, … < n
		for l := 0; l < m; l++ {
			i := r + l*p
			ga[l], gb[l], gc[l], gd[l] = ca[i], cb[i], cc[i], cd[i]
		}
		if err := tri.Thomas(ga[:m], gb[:m], gc[:m], gd[:m], gd[:m], ws.work[:m]); err != nil {
			pe, ok := err.(*tri.PivotError)
			if !ok {
				return err
			}
			if row := r + pe.Row*p; bad < 0 || row < bad {
				bad = row
			}
			continue
		}
		for l := 0; l < m; l++ {
			cd[r+l*p] = gd[l]
		}
	}
	if bad >= 0 {
		return &tri.PivotError{Row: bad, Err: tri.ErrZeroPivot}
	}
	copy(x[:n], cd[:n])
	return nil
}

// prepare checks the arguments and returns n and a usable workspace.
func prepare[T tri.Float](a, b, c, d, x []T, ws *Workspace[T]) (int, *Workspace[T]) {
	n := len(b)
	if len(a) != n || len(c) != n || len(d) != n || len(x) != n {
		panic(fmt.Sprintf("pcr: slice lengths a=%d b=%d c=%d d=%d x=%d differ", len(a), n, len(c), len(d), len(x)))
	}
	if ws == nil {
		ws = NewWorkspace[T](n)
	} else if n > ws.n {
		panic(fmt.Sprintf("pcr: system of %d rows exceeds workspace capacity %d", n, ws.n))
	}
	return n, ws
}

// reduce loads the system into level buffer 0 and performs `steps` PCR
// reduction steps. It returns the index of the buffer holding the last
// level.
func reduce[T tri.Float](a, b, c, d []T, ws *Workspace[T], steps int) (int, error) {
	n := len(b)

	// Load (level 0): for every row i in parallel, copy E_i. The unused
	// a[0] and c[n−1] are loaded as 0: x_{-1} and x_n do not exist.
	{
		la, lb, lc, ld := ws.a[0][:n], ws.b[0][:n], ws.c[0][:n], ws.d[0][:n]
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

	cur := 0
	// Forward reduction, step k = 1 … steps, stride u = 2^(k−1): level
	// k−1 in buffer cur, level k written to buffer 1−cur.
	for k := 1; k <= steps; k++ {
		u := 1 << (k - 1)
		sa, sb, sc, sd := ws.a[cur][:n], ws.b[cur][:n], ws.c[cur][:n], ws.d[cur][:n]
		ta, tb, tc, td := ws.a[1-cur][:n], ws.b[1-cur][:n], ws.c[1-cur][:n], ws.d[1-cur][:n]

		// Divisor check: b_j is a divisor of this step when E_j is the
		// E_{i−u} or E_{i+u} of some existing equation i.
		for j := 0; j < n; j++ {
			if (j-u >= 0 || j+u < n) && tri.BadDivisor(sb[j]) {
				return 0, &tri.PivotError{Row: j, Err: tri.ErrZeroPivot}
			}
		}

		// Eq. 1 coefficient update on every equation i in parallel.
		for i := 0; i < n; i++ {
			// Missing neighbours are the identity equation (see the
			// package documentation).
			var al, bl, cl, dl T = 0, 1, 0, 0
			if i-u >= 0 {
				al, bl, cl, dl = sa[i-u], sb[i-u], sc[i-u], sd[i-u]
			}
			var ar, br, cr, dr T = 0, 1, 0, 0
			if i+u < n {
				ar, br, cr, dr = sa[i+u], sb[i+u], sc[i+u], sd[i+u]
			}
			s1 := sa[i] / bl // s1 = a_i / b_{i−u}
			s2 := sc[i] / br // s2 = c_i / b_{i+u} (the paper's Eq. 1 prints b_{i−u}: a typo, cf. Eq. 5)
			ta[i] = -T(al * s1)
			tb[i] = T(sb[i]-T(cl*s1)) - T(ar*s2)
			tc[i] = -T(cr * s2)
			td[i] = T(sd[i]-T(dl*s1)) - T(dr*s2)
		}
		cur = 1 - cur
	}
	return cur, nil
}

// divide is the substitution of fully reduced PCR: every equation is
// b_i x_i = d_i, so for every i in parallel x_i = d_i/b_i.
func divide[T tri.Float](x []T, ws *Workspace[T], cur int) error {
	n := len(x)
	lb, ld := ws.b[cur][:n], ws.d[cur][:n]
	for i := 0; i < n; i++ {
		if tri.BadDivisor(lb[i]) {
			return &tri.PivotError{Row: i, Err: tri.ErrZeroPivot}
		}
	}
	for i := 0; i < n; i++ {
		x[i] = ld[i] / lb[i]
	}
	return nil
}
