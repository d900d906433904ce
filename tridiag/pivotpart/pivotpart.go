package pivotpart

import (
	"errors"
	"fmt"
	"math"

	"github.com/bandsolve/bandsolve/tridiag/internal/tri"
)

// DefaultRows returns the rows per partition m that the tridiag devices
// use for systems of n rows, in both precisions: 16.
func DefaultRows(n int) int { return 16 }

// ValidRows reports whether m is a partition size Solve accepts: 4, 8, 16
// or 32 (the sizes a GPU thread can hold in registers).
func ValidRows(m int) bool { return m == 4 || m == 8 || m == 16 || m == 32 }

// DefaultDirect returns the largest coarse system, in rows, that Solve
// hands to the direct pivoting LU (SolveDirect) for partitions of m rows:
// 2·m². A larger coarse system is solved by Solve itself, recursively.
func DefaultDirect(m int) int { return 2 * m * m }

// Partitions returns P = ⌈n/m⌉, the number of partitions of an n-row
// system with partitions of m rows (0 for n ≤ 0): every partition has m
// rows but the last, which has the n − (P−1)·m rows left (1 to m).
func Partitions(n, m int) int {
	if n <= 0 {
		return 0
	}
	return (n + m - 1) / m
}

// Bounds returns the rows s ≤ i < e of partition k of an n-row system
// with partitions of m rows: s = k·m, e = min(s + m, n).
func Bounds(n, m, k int) (s, e int) {
	s = k * m
	return s, min(s+m, n)
}

// CoarseSize returns the number of rows of the coarse system: two a
// partition, one for a last partition of one row.
func CoarseSize(n, m int) int {
	p := Partitions(n, m)
	if p > 0 && n-(p-1)*m == 1 {
		return 2*p - 1
	}
	return 2 * p
}

// CoarseRow returns the original row that coarse row j stands for: the
// first row of partition j/2 for even j, its last row for odd j.
func CoarseRow(n, m, j int) int {
	s, e := Bounds(n, m, j/2)
	if j%2 == 0 {
		return s
	}
	return e - 1
}

// CoarseSolver solves a coarse system, a tridiagonal system of R rows
// (a[0] and c[R−1] are zero), into x. It reports a breakdown as a
// *tri.PivotError whose Row is a row of that system.
type CoarseSolver[T tri.Float] func(a, b, c, d, x []T) error

// Refine selects when Solve refines the solution of Stages 1–3 (Stage 4,
// see the package documentation). The zero value is RefineAlways.
type Refine int

const (
	// RefineAlways refines every solution once: the default.
	RefineAlways Refine = iota
	// RefineAuto refines a solution only where some row's residual
	// exceeds RefineTol unit roundoffs of the row's |A|·|x| + |d|
	// (Residual reports it).
	RefineAuto
	// RefineNever returns the solution of Stages 1–3.
	RefineNever
)

// RefineTol is the bound of RefineAuto's test, in unit roundoffs of the
// working precision (2^−24 for float32, 2^−53 for float64).
const RefineTol = 4

// String returns "always", "auto" or "never".
func (r Refine) String() string {
	switch r {
	case RefineAlways:
		return "always"
	case RefineAuto:
		return "auto"
	case RefineNever:
		return "never"
	}
	return fmt.Sprintf("Refine(%d)", int(r))
}

// Workspace is the scratch memory of Solve for systems of up to a fixed
// number of rows with a fixed partition size: the pivot rows of one
// partition's Stage 3, the coarse system and its solution, the solution
// of Stages 1–3 and the residual (Stage 4), the factor of a system solved
// directly, and the workspace of the coarse system when Solve recurses on
// it. It can be reused for any number of calls; Solve allocates nothing.
// It must not be used by two calls at once.
type Workspace[T tri.Float] struct {
	n, m, direct int
	refine       Refine
	lu           lu[T]
	piv          []pivotRow[T] // Stage 3's pivot rows of one partition
	// Stage 4: the solution of Stages 1–3, and the residual, then the
	// correction (nil in a workspace of a coarse system, which is not
	// refined).
	xh, r []T
	// The coarse system of the largest n: rows A, B, C, right side D,
	// solution X.
	A, B, C, D, X []T
	inner         *Workspace[T] // for a coarse system above direct rows
}

// NewWorkspace returns a workspace for systems of up to n rows (n ≥ 0) in
// partitions of m rows (ValidRows), whose coarse systems of up to
// DefaultDirect(m) rows are solved directly and larger ones recursively.
// It refines as RefineAlways says (SetRefine changes it).
func NewWorkspace[T tri.Float](n, m int) *Workspace[T] {
	return NewWorkspaceDirect[T](n, m, DefaultDirect(m))
}

// NewWorkspaceDirect is NewWorkspace with the largest coarse system
// solved directly set to direct rows (direct ≥ 2); Solve recurses on
// larger ones.
func NewWorkspaceDirect[T tri.Float](n, m, direct int) *Workspace[T] {
	if n < 0 {
		panic(fmt.Sprintf("pivotpart: negative workspace size %d", n))
	}
	checkRows(m)
	if direct < 2 {
		panic(fmt.Sprintf("pivotpart: direct coarse size %d < 2", direct))
	}
	return newWorkspace[T](n, m, direct, true)
}

// newWorkspace makes the workspace of NewWorkspaceDirect; a workspace of
// a coarse system (refined false) holds no Stage 4 arrays and never
// refines.
func newWorkspace[T tri.Float](n, m, direct int, refined bool) *Workspace[T] {
	r := CoarseSize(n, m)
	// One LU serves a system of at most m rows and a coarse system solved
	// directly.
	rows := max(m, min(r, direct))
	w := &Workspace[T]{n: n, m: m, direct: direct, lu: newLU[T](rows), piv: make([]pivotRow[T], m)}
	size := 5 * r
	if refined {
		size += 2 * n
	} else {
		w.refine = RefineNever
	}
	buf := make([]T, size)
	w.A, w.B, w.C, w.D, w.X = buf[:r:r], buf[r:2*r:2*r], buf[2*r:3*r:3*r], buf[3*r:4*r:4*r], buf[4*r:5*r:5*r]
	if refined {
		buf = buf[5*r:]
		w.xh, w.r = buf[:n:n], buf[n:]
	}
	if r > direct {
		w.inner = newWorkspace[T](r, m, direct, false)
	}
	return w
}

// WorkspaceLen returns the number of elements NewWorkspace(n, m)
// allocates, for sizing memory before allocating it.
func WorkspaceLen(n, m int) int {
	total := 2 * n
	direct := DefaultDirect(m)
	for {
		r := CoarseSize(n, m)
		total += 5*max(m, min(r, direct)) + 5*m + 5*r
		if r <= direct {
			break
		}
		n = r
	}
	return total
}

// Cap returns the largest number of rows the workspace can serve.
func (w *Workspace[T]) Cap() int { return w.n }

// Rows returns the partition size m the workspace was made for.
func (w *Workspace[T]) Rows() int { return w.m }

// SetRefine sets when Solve refines with this workspace (RefineAlways,
// RefineAuto or RefineNever; it panics on another value). The coarse
// systems Solve recurses on are never refined.
func (w *Workspace[T]) SetRefine(r Refine) {
	if r < RefineAlways || r > RefineNever {
		panic(fmt.Sprintf("pivotpart: %v", r))
	}
	w.refine = r
}

// Refine returns when Solve refines with this workspace.
func (w *Workspace[T]) Refine() Refine { return w.refine }

func checkRows(m int) {
	if !ValidRows(m) {
		panic(fmt.Sprintf("pivotpart: partition size %d: want 4, 8, 16 or 32", m))
	}
}

// lu is the scratch of one pivoted LU of up to len(dd) rows: the upper
// factor's three diagonals, the pivots' reciprocals and the column of the
// solve.
type lu[T tri.Float] struct {
	dd, du, du2 []T
	q           []T // the pivots' reciprocals
	col         []T // the right side, then the solution
}

func newLU[T tri.Float](rows int) lu[T] {
	buf := make([]T, 5*rows)
	next := func() []T {
		s := buf[:rows:rows]
		buf = buf[rows:]
		return s
	}
	return lu[T]{dd: next(), du: next(), du2: next(), q: next(), col: next()}
}

// solve factors the tridiagonal matrix a, b, c of n = len(b) rows by
// Gaussian elimination with partial pivoting, LAPACK gtsv's rule, and
// solves it for x (length n), which holds the right side on entry. It
// returns the first row whose pivot is a bad divisor, or −1.
//
// At step i the candidates are the diagonal entry dd_i of the current
// row i and the sub-diagonal entry a_{i+1} of row i+1; rows i and i+1
// are interchanged when |a_{i+1}| > |dd_i|, which puts fill into the
// second super-diagonal du2_i. Every product is rounded on its own.
func (l *lu[T]) solve(a, b, c, x []T) int {
	m := len(b)
	dd, du, du2, q := l.dd[:m], l.du[:m], l.du2[:m], l.q[:m]
	copy(dd, b)
	for i := 0; i < m-1; i++ {
		du[i] = c[i]
		du2[i] = 0
	}
	du[m-1], du2[m-1] = 0, 0
	for i := 0; i < m-1; i++ {
		sub := a[i+1]
		if !(abs(sub) > abs(dd[i])) {
			// No interchange: dd_i is the pivot.
			if tri.BadDivisor(dd[i]) {
				return i
			}
			q[i] = 1 / dd[i]
			f := T(sub * q[i])
			dd[i+1] -= T(f * du[i])
			x[i+1] -= T(f * x[i])
		} else {
			// Interchange rows i and i+1: a_{i+1} is the pivot.
			if tri.BadDivisor(sub) {
				return i
			}
			q[i] = 1 / sub
			f := T(dd[i] * q[i])
			dd[i] = sub
			tmp := dd[i+1]
			dd[i+1] = du[i] - T(f*tmp)
			if i < m-2 {
				du2[i] = du[i+1]
				du[i+1] = -T(f * du2[i])
			}
			du[i] = tmp
			x[i], x[i+1] = x[i+1], x[i]-T(f*x[i+1])
		}
	}
	if tri.BadDivisor(dd[m-1]) {
		return m - 1
	}
	q[m-1] = 1 / dd[m-1]
	// Back substitution with the upper factor (the pivots' reciprocals q,
	// du, du2).
	x[m-1] = T(x[m-1] * q[m-1])
	if m > 1 {
		x[m-2] = T((x[m-2] - T(du[m-2]*x[m-1])) * q[m-2])
	}
	for i := m - 3; i >= 0; i-- {
		x[i] = T((x[i] - T(du[i]*x[i+1]) - T(du2[i]*x[i+2])) * q[i])
	}
	return -1
}

func abs[T tri.Float](v T) T {
	if v < 0 {
		return -v
	}
	return v
}

// SolveDirect solves one system by Gaussian elimination with partial
// pivoting: LAPACK gtsv's interchanges, with every division by a pivot
// done as a product by the pivot's reciprocal (one reciprocal a row; x
// agrees with tri.GTSV's to a few units of roundoff). Solve uses it for a
// system of at most m rows and for a coarse system of at most the direct
// size. a, b, c, d, x have length n = len(b) (a[0] and c[n−1] ignored); x
// may alias d; ws must have been made for n rows or more, or for a coarse
// system of n rows solved directly (nil allocates one). A zero or
// non-finite pivot (tri.BadDivisor) is reported as a *tri.PivotError
// wrapping tri.ErrZeroPivot at its row, and x is then not modified.
func SolveDirect[T tri.Float](a, b, c, d, x []T, ws *Workspace[T]) error {
	n := len(b)
	checkLengths(a, b, c, d, x)
	if n == 0 {
		return nil
	}
	if ws == nil {
		ws = &Workspace[T]{lu: newLU[T](n)}
	} else if n > len(ws.lu.dd) {
		panic(fmt.Sprintf("pivotpart: direct solve of %d rows exceeds the workspace's %d", n, len(ws.lu.dd)))
	}
	return ws.lu.direct(a, b, c, d, x)
}

// direct is SolveDirect with its scratch.
func (l *lu[T]) direct(a, b, c, d, x []T) error {
	n := len(b)
	y := l.col[:n]
	copy(y, d)
	if bad := l.solve(a, b, c, y); bad >= 0 {
		return &tri.PivotError{Row: bad, Err: tri.ErrZeroPivot}
	}
	copy(x, y)
	return nil
}

func checkLengths[T tri.Float](a, b, c, d, x []T) {
	n := len(b)
	if len(a) != n || len(c) != n || len(d) != n || len(x) != n {
		panic(fmt.Sprintf("pivotpart: slice lengths a=%d b=%d c=%d d=%d x=%d differ", len(a), n, len(c), len(d), len(x)))
	}
}

// Row is one row of the coarse system: A on the previous coarse unknown,
// B on its own, C on the next, D the right side.
type Row[T tri.Float] struct {
	A, B, C, D T
}

// sweepRow is the carried row of a sweep: e on the kept unknown, p on the
// unknown the next step eliminates, q on the one after it, r the right
// side.
type sweepRow[T tri.Float] struct{ e, p, q, r T }

// sweep is one elimination of Stage 1 over the rows first, first+dir, …
// (count ≥ 1 rows) of a, b, c, d. A row's entries are read in the sweep's
// direction: lo (on the unknown before the row's own in that direction:
// a_i for dir = +1, c_i for dir = −1), b_i, and hi (on the unknown after
// it: c_i, or a_i), hi of the last row being hiLast instead. The first
// row's lo is on the kept unknown; step j (1 ≤ j < count) eliminates the
// unknown of row first+(j−1)·dir between the carried row (at first the
// first row) and row first+j·dir, the one with the larger entry on it
// the pivot (the carried row on a tie); both zero, the step eliminates
// nothing (its multiplier is 0). It returns the carried row at the end
// and the row whose unknown the first step with a non-finite pivot
// eliminated, or −1.
func sweep[T tri.Float](a, b, c, d []T, first, count, dir int, hiLast T) (sweepRow[T], int) {
	lo, hi := a, c
	if dir < 0 {
		lo, hi = c, a
	}
	i := first
	P := sweepRow[T]{e: lo[i], p: b[i], q: hiLast, r: d[i]}
	if count > 1 {
		P.q = hi[i]
	}
	bad := -1
	for j := 1; j < count; j++ {
		i += dir
		q0, q1, q2, qr := lo[i], b[i], hiLast, d[i]
		if j < count-1 {
			q2 = hi[i]
		}
		if abs(q0) > abs(P.p) {
			// The new row is the pivot: the carried row takes −P.p/q0 of it.
			if bad < 0 && !isFinite(q0) {
				bad = i - dir
			}
			f := P.p / q0
			P = sweepRow[T]{e: P.e, p: P.q - T(f*q1), q: -T(f * q2), r: P.r - T(f*qr)}
		} else {
			// The carried row is the pivot: the new row takes −q0/P.p of it.
			var f T
			if P.p != 0 {
				if bad < 0 && !isFinite(P.p) {
					bad = i - dir
				}
				f = q0 / P.p
			}
			P = sweepRow[T]{e: -T(f * P.e), p: q1 - T(f*P.q), q: q2, r: qr - T(f*P.r)}
		}
	}
	return P, bad
}

// checkPartition panics unless rows s ≤ i < e of an n-row system are a
// partition of two rows or more.
func checkPartition(n, s, e int) {
	if s < 0 || e > n || e-s < 2 {
		panic(fmt.Sprintf("pivotpart: rows [%d, %d) of %d: want a partition of two rows or more", s, e, n))
	}
}

func isFinite[T tri.Float](v T) bool {
	f := float64(v)
	return !math.IsNaN(f) && !math.IsInf(f, 0)
}

// PartitionRows is Stage 1 for partition k (rows s ≤ i < e, e − s ≥ 2)
// of an n-row system: its two rows of the coarse system, each found by
// eliminating the partition's interior unknowns x_{s+1} … x_{e−2} with
// partial pivoting (sweep), without a division by the last pivot:
//
//	first (row 2k, on x_{s−1}, x_s, x_{e−1}): rows e−2, e−3, …, s
//	last (row 2k+1, on x_s, x_{e−1}, x_e): rows s+1, s+2, …, e−1
//
// (first.A = 0 for the first partition and last.C = 0 for the last; a_0
// and c_{n−1} are not read). Both are combinations of the partition's
// equations, so they hold for the solution of the system. It also returns
// the row of the first non-finite pivot of either elimination (the row
// whose unknown that step eliminates; the smaller of the two), or −1. A
// step whose candidates are both zero eliminates nothing and is no
// breakdown: the coarse solve or Stage 3 reports a singular system.
func PartitionRows[T tri.Float](a, b, c, d []T, s, e int) (first, last Row[T], bad int) {
	n := len(b)
	checkPartition(n, s, e)
	var as, ce T
	if s > 0 {
		as = a[s]
	}
	if e < n {
		ce = c[e-1]
	}
	m := e - s
	up, bu := sweep(a, b, c, d, e-2, m-1, -1, as)
	lo, bl := sweep(a, b, c, d, s+1, m-1, +1, ce)
	bad = bu
	if bl >= 0 && (bad < 0 || bl < bad) {
		bad = bl
	}
	first = Row[T]{A: up.q, B: up.p, C: up.e, D: up.r}
	last = Row[T]{A: lo.e, B: lo.p, C: lo.q, D: lo.r}
	return first, last, bad
}

// pivotRow is a pivot row of Stage 3's elimination: u0 on the unknown it
// eliminates, u1 and u2 on the two after it, r the right side, q = 1/u0.
type pivotRow[T tri.Float] struct{ u0, u1, u2, r, q T }

// tallRow is a row of Stage 3's elimination that is not yet a pivot row:
// p on the unknown the next step eliminates, q on the one after it, r the
// right side, w the reciprocal of its original row's scale.
type tallRow[T tri.Float] struct{ p, q, r, w T }

// scaleRecip returns 1/max(|u|, |v|, |w|), or 1 for a zero row.
func scaleRecip[T tri.Float](u, v, w T) T {
	s := max(abs(u), abs(v), abs(w))
	if s == 0 {
		return 1
	}
	return 1 / s
}

// SolvePartition is Stage 3 for partition k (rows s ≤ i < e, e − s ≥ 2)
// of an n-row system: with the coarse solution's xl = x_{s−1}, xs = x_s,
// xe = x_{e−1} and xr = x_e (xl is not read for the first partition, nor
// xr for the last), it writes x[s] = xs, x[e−1] = xe and the interior
// unknowns x_{s+1} … x_{e−2}, found from all e − s rows of the partition
// with the known unknowns moved to the right side (e − s equations in
// e − s − 2 unknowns, consistent) by Gaussian elimination with scaled
// partial pivoting:
//
// Row i's scale is the largest |entry| of its row of the matrix (a_i,
// b_i, c_i; a_0 and c_{n−1} not read). The unknown x_j (j = s+1 … e−2)
// appears in at most three rows not yet pivot rows: the two left by the
// previous step (at first rows s and s+1) and row j+1; of these, in that
// order, the first with the largest |entry on x_j|/scale is the pivot
// row of x_j, and x_j is eliminated from the two others, which are left
// for the next step. After the last step the two rows left are dropped
// (the coarse solution satisfies them), and back substitution gives
// x_{e−2} … x_{s+1}. A division by a pivot is a product by its
// reciprocal.
//
// It reads d[s:e] before it writes x[s:e] (x may alias d), uses the
// workspace's pivot rows (ws made for partitions of e − s rows or more),
// and returns the row j of the first unknown whose pivot is zero or not
// finite (its column of the partition is zero: the system is singular),
// or −1; x is then partly written.
func SolvePartition[T tri.Float](a, b, c, d, x []T, s, e int, xl, xs, xe, xr T, ws *Workspace[T]) int {
	n := len(b)
	checkPartition(n, s, e)
	m := e - s
	if m > len(ws.piv) {
		panic(fmt.Sprintf("pivotpart: partition of %d rows exceeds the workspace's %d", m, len(ws.piv)))
	}
	if m == 2 {
		x[s], x[e-1] = xs, xe
		return -1
	}
	piv := ws.piv[:m-2]
	// Row s: c_s on x_{s+1}; row s+1: b on x_{s+1}, c on x_{s+2} (on
	// x_{e−1}, known, when m = 3).
	var as T
	if s > 0 {
		as = a[s]
	}
	r0 := d[s]
	if s > 0 {
		r0 -= T(a[s] * xl)
	}
	r0 -= T(b[s] * xs)
	l1 := tallRow[T]{p: c[s], r: r0, w: scaleRecip(as, b[s], c[s])}
	i := s + 1
	r1 := d[i] - T(a[i]*xs)
	q1 := c[i]
	if i+1 == e-1 {
		r1 -= T(c[i] * xe)
		q1 = 0
	}
	l2 := tallRow[T]{p: b[i], q: q1, r: r1, w: scaleRecip(a[i], b[i], c[i])}
	bad := -1
	for j := s + 1; j <= e-2; j++ {
		// Row j+1: a on x_j, b on x_{j+1}, c on x_{j+2}, the known ones
		// moved to the right side.
		i := j + 1
		var ci T
		if i < n-1 {
			ci = c[i]
		}
		w := scaleRecip(a[i], b[i], ci)
		nu0, nu1, nu2, nr := a[i], b[i], ci, d[i]
		if i == e-1 {
			nr -= T(b[i] * xe)
			if e < n {
				nr -= T(c[i] * xr)
			}
			nu1, nu2 = 0, 0
		} else if i+1 == e-1 {
			nr -= T(c[i] * xe)
			nu2 = 0
		}
		// The pivot: the first of l1, l2, row j+1 with the largest scaled
		// entry on x_j.
		g1, g2, g3 := T(abs(l1.p)*l1.w), T(abs(l2.p)*l2.w), T(abs(nu0)*w)
		var pr pivotRow[T]
		var o1, o2 tallRow[T]
		var o1u2, o2u2 T // the other rows' entries on x_{j+2}
		switch {
		case g3 > g1 && g3 > g2:
			pr = pivotRow[T]{u0: nu0, u1: nu1, u2: nu2, r: nr}
			o1, o2 = l1, l2
		case g2 > g1:
			pr = pivotRow[T]{u0: l2.p, u1: l2.q, r: l2.r}
			o1, o2 = l1, tallRow[T]{p: nu0, q: nu1, r: nr, w: w}
			o2u2 = nu2
		default:
			pr = pivotRow[T]{u0: l1.p, u1: l1.q, r: l1.r}
			o1, o2 = l2, tallRow[T]{p: nu0, q: nu1, r: nr, w: w}
			o2u2 = nu2
		}
		if tri.BadDivisor(pr.u0) {
			if bad < 0 {
				bad = j
			}
			pr.q = 0
		} else {
			pr.q = 1 / pr.u0
		}
		piv[j-s-1] = pr
		f1, f2 := T(o1.p*pr.q), T(o2.p*pr.q)
		l1 = tallRow[T]{p: o1.q - T(f1*pr.u1), q: o1u2 - T(f1*pr.u2), r: o1.r - T(f1*pr.r), w: o1.w}
		l2 = tallRow[T]{p: o2.q - T(f2*pr.u1), q: o2u2 - T(f2*pr.u2), r: o2.r - T(f2*pr.r), w: o2.w}
	}
	if bad >= 0 {
		return bad
	}
	// Back substitution, x_{e−2} … x_{s+1}; x[s] and x[e−1] last, so that
	// d[s:e] is read first when x aliases d.
	var x1, x2 T // x_{j+1}, x_{j+2} within the interior (0 beyond)
	for j := e - 2; j > s; j-- {
		pr := piv[j-s-1]
		v := T((pr.r - T(pr.u1*x1) - T(pr.u2*x2)) * pr.q)
		x[j] = v
		x2, x1 = x1, v
	}
	x[s], x[e-1] = xs, xe
	return -1
}

// Residual is Stage 4's residual of row i of the system a, b, c, d at x:
// r = d_i − b_i·x_i − a_i·x_{i−1} − c_i·x_{i+1} (a_0 and c_{n−1} not
// read), formed to about twice the working precision and rounded once,
// and whether |r| ≤ RefineTol·u·(|d_i| + |b_i·x_i| + |a_i·x_{i−1}| +
// |c_i·x_{i+1}|) (RefineAuto's test; false for a non-finite r). In
// float32 every product is exact in float64 and the sums are float64
// sums in that order; in float64 every product is split into its rounded
// value and its error by a fused multiply-add, and every difference is
// made exact as a sum and an error (Knuth's TwoSum), the errors summed in
// that order and added at the end.
func Residual[T tri.Float](a, b, c, d, x []T, i int) (r T, small bool) {
	n := len(b)
	var z T
	if _, f32 := any(z).(float32); f32 {
		v := float64(d[i]) - float64(float64(b[i])*float64(x[i]))
		scale := math.Abs(float64(d[i])) + math.Abs(float64(b[i])*float64(x[i]))
		if i > 0 {
			p := float64(float64(a[i]) * float64(x[i-1]))
			v -= p
			scale += math.Abs(p)
		}
		if i < n-1 {
			p := float64(float64(c[i]) * float64(x[i+1]))
			v -= p
			scale += math.Abs(p)
		}
		return T(v), math.Abs(v) <= RefineTol*0x1p-24*scale
	}
	s, err := float64(d[i]), 0.0
	scale := math.Abs(s)
	sub := func(u, v float64) {
		p := float64(u * v)
		pe := math.FMA(u, v, -p) // u·v = p + pe exactly
		t := float64(s - p)
		z := float64(t - s)
		// s − p = t + ((s − (t − z)) + (−p − z)) exactly.
		te := float64(s-float64(t-z)) + float64(-p-z)
		s = t
		err += float64(te - pe)
		scale += math.Abs(p)
	}
	sub(float64(b[i]), float64(x[i]))
	if i > 0 {
		sub(float64(a[i]), float64(x[i-1]))
	}
	if i < n-1 {
		sub(float64(c[i]), float64(x[i+1]))
	}
	v := float64(s + err)
	return T(v), math.Abs(v) <= RefineTol*0x1p-53*scale
}

// Solve solves one tridiagonal system by the partition method with
// partial pivoting, in partitions of m rows (ValidRows; DefaultRows gives
// the devices' m): Stage 1 forms every partition's two coarse rows by
// eliminating its interior unknowns with partial pivoting, Stage 2 solves
// the coarse system (directly up to the workspace's direct size, by the
// method itself above it), Stage 3 finds every partition's interior
// unknowns from its rows and the coarse solution, and Stage 4 refines the
// solution once, with a residual formed in about twice the working
// precision, as the workspace's Refine says (RefineAlways by default). A
// system of at most m rows is solved by SolveDirect. See the package
// documentation.
//
// a, b, c, d and x must all have length n = len(b); a[0] and c[n−1] are
// ignored. The inputs are not modified and x may alias d. ws must have
// been made for m and capacity ≥ n (nil allocates a temporary one). Solve
// panics if m is not valid, the lengths differ or ws does not fit.
//
// A zero or non-finite pivot is reported as a *tri.PivotError wrapping
// tri.ErrZeroPivot whose Row is the original row (see "Breakdown" in the
// package documentation); x is not modified then.
func Solve[T tri.Float](a, b, c, d, x []T, m int, ws *Workspace[T]) error {
	return SolveWith(a, b, c, d, x, m, ws, nil)
}

// SolveWith is Solve with the coarse system solved by coarse (nil: as
// Solve does), once for Stages 1–3 and once more for the refinement. A
// breakdown coarse reports at coarse row j is returned at the original
// row CoarseRow(n, m, j).
func SolveWith[T tri.Float](a, b, c, d, x []T, m int, ws *Workspace[T], coarse CoarseSolver[T]) error {
	checkRows(m)
	checkLengths(a, b, c, d, x)
	n := len(b)
	if ws == nil {
		ws = NewWorkspace[T](n, m)
	} else if n > ws.n || m != ws.m {
		panic(fmt.Sprintf("pivotpart: workspace for n≤%d m=%d used for n=%d m=%d", ws.n, ws.m, n, m))
	}
	return ws.solve(a, b, c, d, x, coarse)
}

// solve is SolveWith on ws (of ws.m rows per partition).
func (ws *Workspace[T]) solve(a, b, c, d, x []T, coarse CoarseSolver[T]) error {
	n := len(b)
	if n == 0 {
		return nil
	}
	if n <= ws.m {
		return ws.lu.direct(a, b, c, d, x)
	}
	if ws.xh == nil {
		// A coarse system: Stages 1–3 into x, which is the outer
		// workspace's.
		return ws.stages(a, b, c, d, x, coarse)
	}
	// Stages 1–3 into xh, so that x is written only on success.
	xh := ws.xh[:n]
	if err := ws.stages(a, b, c, d, xh, coarse); err != nil {
		return err
	}
	if ws.refine == RefineNever {
		copy(x, xh)
		return nil
	}
	// Stage 4: the residual; refine unless RefineAuto finds every row
	// within RefineTol, or a residual is not finite.
	r := ws.r[:n]
	refine := ws.refine == RefineAlways
	for i := range n {
		ri, small := Residual(a, b, c, d, xh, i)
		if !isFinite(ri) {
			copy(x, xh)
			return nil
		}
		r[i] = ri
		refine = refine || !small
	}
	if !refine {
		copy(x, xh)
		return nil
	}
	// The correction: the same pivots as the first solve, so it succeeds
	// where that one did.
	if err := ws.stages(a, b, c, r, r, coarse); err != nil {
		return err
	}
	for i := range n {
		x[i] = xh[i] + r[i]
	}
	return nil
}

// stages runs Stages 1–3 on a system of more than ws.m rows into x (x may
// alias d).
func (ws *Workspace[T]) stages(a, b, c, d, x []T, coarse CoarseSolver[T]) error {
	n, m := len(b), ws.m
	P := Partitions(n, m)
	R := CoarseSize(n, m)
	A, B, C, D, X := ws.A[:R], ws.B[:R], ws.C[:R], ws.D[:R], ws.X[:R]

	// Stage 1, for every partition in parallel: its coarse rows.
	bad := -1
	for k := range P {
		s, e := Bounds(n, m, k)
		if e-s == 1 {
			// A last partition of one row: its row is its coarse row.
			A[2*k], B[2*k], C[2*k], D[2*k] = a[s], b[s], 0, d[s]
			continue
		}
		f, l, row := PartitionRows(a, b, c, d, s, e)
		if row >= 0 && (bad < 0 || row < bad) {
			bad = row
		}
		A[2*k], B[2*k], C[2*k], D[2*k] = f.A, f.B, f.C, f.D
		A[2*k+1], B[2*k+1], C[2*k+1], D[2*k+1] = l.A, l.B, l.C, l.D
	}
	if bad >= 0 {
		return &tri.PivotError{Row: bad, Err: tri.ErrZeroPivot}
	}

	// Stage 2: the coarse system (its A[0] and C[R−1] are not read).
	var err error
	switch {
	case coarse != nil:
		err = coarse(A, B, C, D, X)
	case R <= ws.direct:
		err = ws.lu.direct(A, B, C, D, X)
	default:
		err = ws.inner.solve(A, B, C, D, X, nil)
	}
	if err != nil {
		var pe *tri.PivotError
		if errors.As(err, &pe) && pe.Row >= 0 && pe.Row < R {
			return &tri.PivotError{Row: CoarseRow(n, m, pe.Row), Err: pe.Err}
		}
		return fmt.Errorf("pivotpart: coarse system of %d rows: %w", R, err)
	}

	// Stage 3, for every partition in parallel: its rows from the coarse
	// solution (x_{s−1} = 0 for the first partition, x_e = 0 for the
	// last, not read).
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
		if row := SolvePartition(a, b, c, d, x, s, e, xl, X[2*k], X[2*k+1], xr, ws); row >= 0 {
			return &tri.PivotError{Row: row, Err: tri.ErrZeroPivot}
		}
	}
	return nil
}
