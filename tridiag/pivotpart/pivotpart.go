package pivotpart

import (
	"errors"
	"fmt"

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

// Workspace is the scratch memory of Solve for systems of up to a fixed
// number of rows with a fixed partition size: the factor of one pivoted
// LU, every row's y, v, w (Stage 1 to Stage 3), the coarse system and its
// solution, and the
// workspace of the coarse system when Solve recurses on it. It can be
// reused for any number of calls; Solve allocates nothing. It must not be
// used by two calls at once.
type Workspace[T tri.Float] struct {
	n, m, direct int
	lu           lu[T]
	// y, v, w of every row, from Stage 1 to Stage 3.
	y, v, w []T
	// The coarse system of the largest n: rows A, B, C, right side D,
	// solution X.
	A, B, C, D, X []T
	inner         *Workspace[T] // for a coarse system above direct rows
}

// NewWorkspace returns a workspace for systems of up to n rows (n ≥ 0) in
// partitions of m rows (ValidRows), whose coarse systems of up to
// DefaultDirect(m) rows are solved directly and larger ones recursively.
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
	r := CoarseSize(n, m)
	// One LU serves a partition and a coarse system solved directly.
	rows := max(m, min(r, direct))
	w := &Workspace[T]{n: n, m: m, direct: direct, lu: newLU[T](rows)}
	buf := make([]T, 5*r+3*n)
	w.A, w.B, w.C, w.D, w.X = buf[:r:r], buf[r:2*r:2*r], buf[2*r:3*r:3*r], buf[3*r:4*r:4*r], buf[4*r:5*r:5*r]
	buf = buf[5*r:]
	w.y, w.v, w.w = buf[:n:n], buf[n:2*n:2*n], buf[2*n:]
	if r > direct {
		w.inner = NewWorkspaceDirect[T](r, m, direct)
	}
	return w
}

// WorkspaceLen returns the number of elements NewWorkspace(n, m)
// allocates, for sizing memory before allocating it.
func WorkspaceLen(n, m int) int {
	total := 0
	direct := DefaultDirect(m)
	for {
		r := CoarseSize(n, m)
		total += 5*max(m, min(r, direct)) + 5*r + 3*n
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

func checkRows(m int) {
	if !ValidRows(m) {
		panic(fmt.Sprintf("pivotpart: partition size %d: want 4, 8, 16 or 32", m))
	}
}

// lu is the scratch of one pivoted LU of up to len(dd) rows: the upper
// factor's three diagonals, the pivots' reciprocals and the column of a
// one-column solve (a partition's three columns are the workspace's y, v, w).
type lu[T tri.Float] struct {
	dd, du, du2 []T
	q           []T   // the pivots' reciprocals
	col         []T   // the right side of a one-column solve
	cols        [][]T // the columns of the current solve (cap 3)
}

func newLU[T tri.Float](rows int) lu[T] {
	buf := make([]T, 5*rows)
	next := func() []T {
		s := buf[:rows:rows]
		buf = buf[rows:]
		return s
	}
	l := lu[T]{dd: next(), du: next(), du2: next(), q: next()}
	l.col = next()
	l.cols = make([][]T, 0, 3)
	return l
}

// solve factors the tridiagonal matrix of rows s ≤ i < e of a, b, c (the
// couplings a[s] and c[e−1] to rows outside dropped) by Gaussian
// elimination with partial pivoting, LAPACK gtsv's rule, and solves it for
// every column of cols (each of length ≥ e − s, overwritten by the
// solution). It returns the local index of the first bad pivot, or −1.
//
// At step i the candidates are the diagonal entry dd_i of the current
// row i and the sub-diagonal entry a_{s+i+1} of row i+1; rows i and i+1
// are interchanged when |a_{s+i+1}| > |dd_i|, which puts fill into the
// second super-diagonal du2_i. Every product is rounded on its own.
func (l *lu[T]) solve(a, b, c []T, s, e int, cols [][]T) int {
	m := e - s
	dd, du, du2, q := l.dd[:m], l.du[:m], l.du2[:m], l.q[:m]
	copy(dd, b[s:e])
	for i := 0; i < m-1; i++ {
		du[i] = c[s+i]
		du2[i] = 0
	}
	du[m-1], du2[m-1] = 0, 0
	for i := 0; i < m-1; i++ {
		sub := a[s+i+1]
		if !(abs(sub) > abs(dd[i])) {
			// No interchange: dd_i is the pivot.
			if tri.BadDivisor(dd[i]) {
				return i
			}
			q[i] = 1 / dd[i]
			f := T(sub * q[i])
			dd[i+1] -= T(f * du[i])
			for _, x := range cols {
				x[i+1] -= T(f * x[i])
			}
		} else {
			// Interchange rows i and i+1: a_{s+i+1} is the pivot.
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
			for _, x := range cols {
				x[i], x[i+1] = x[i+1], x[i]-T(f*x[i+1])
			}
		}
	}
	if tri.BadDivisor(dd[m-1]) {
		return m - 1
	}
	q[m-1] = 1 / dd[m-1]
	// Back substitution with the upper factor (the pivots' reciprocals q,
	// du, du2).
	for _, x := range cols {
		x[m-1] = T(x[m-1] * q[m-1])
		if m > 1 {
			x[m-2] = T((x[m-2] - T(du[m-2]*x[m-1])) * q[m-2])
		}
		for i := m - 3; i >= 0; i-- {
			x[i] = T((x[i] - T(du[i]*x[i+1]) - T(du2[i]*x[i+2])) * q[i])
		}
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
// pivoting, the LU that Solve applies to every partition, here to the
// whole system: LAPACK gtsv's interchanges, with every division by a
// pivot done as a product by the pivot's reciprocal (one reciprocal a
// row; x agrees with tri.GTSV's to a few units of roundoff). a, b, c, d, x have length n
// = len(b) (a[0] and c[n−1] ignored); x may alias d; ws must have been
// made for n rows or more, or for a coarse system of n rows solved
// directly (nil allocates one). A zero or non-finite pivot (tri.BadDivisor)
// is reported as a *tri.PivotError wrapping tri.ErrZeroPivot at its row,
// and x is then not modified.
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
	l.cols = append(l.cols[:0], y)
	if bad := l.solve(a, b, c, 0, n, l.cols); bad >= 0 {
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

// Spikes are the boundary values of a partition's three solutions: y of
// T_k·y = d (the partition's right-hand side), v of T_k·v = a_s·e_0 (the
// coupling to x_{s−1}) and w of T_k·w = c_{e−1}·e_{m−1} (the coupling to
// x_e), each at the partition's first row (0) and last row (1). The
// partition's solution is x = y − v·x_{s−1} − w·x_e.
type Spikes[T tri.Float] struct {
	Y0, Y1, V0, V1, W0, W1 T
}

// Row is one row of the coarse system: A on the previous coarse unknown,
// B on its own, C on the next, D the right side.
type Row[T tri.Float] struct {
	A, B, C, D T
}

// FactorPartition is Stage 1's elimination of partition k (rows s ≤ i <
// e, e − s ≥ 2) of an n-row system: the pivoted LU of its block T_k
// applied to three right-hand sides, its rows of d, a_s·e_0 and
// c_{e−1}·e_{m−1} (a_s = 0 for the first partition, c_{e−1} = 0 for the
// last: their columns are then zero, computed as the others are). The
// solutions y, v, w of rows s … e−1 go to the workspace (Stage 3 combines
// them); it returns their boundary values and the original row of the
// first bad pivot, or −1.
func FactorPartition[T tri.Float](a, b, c, d []T, s, e int, ws *Workspace[T]) (Spikes[T], int) {
	n := len(b)
	y, v, w := ws.y[s:e], ws.v[s:e], ws.w[s:e]
	copy(y, d[s:e])
	clear(v)
	clear(w)
	if s > 0 {
		v[0] = a[s]
	}
	if e < n {
		w[len(w)-1] = c[e-1]
	}
	l := &ws.lu
	l.cols = append(l.cols[:0], y, v, w)
	if bad := l.solve(a, b, c, s, e, l.cols); bad >= 0 {
		return Spikes[T]{}, s + bad
	}
	m := e - s
	return Spikes[T]{Y0: y[0], Y1: y[m-1], V0: v[0], V1: v[m-1], W0: w[0], W1: w[m-1]}, -1
}

// CoarseRows returns partition k's two rows of the coarse system,
// combinations of its boundary equations x_s = y_0 − v_0·x_{s−1} −
// w_0·x_e and x_{e−1} = y_{m−1} − v_{m−1}·x_{s−1} − w_{m−1}·x_e that need no
// division by a spike: row 2k, free of x_e, with α = w_{m−1}/σ, β =
// −w_0/σ, σ = max(|w_0|, |w_{m−1}|) (α = 1, β = 0 when σ = 0), and row
// 2k+1, free of x_{s−1}, with γ = v_{m−1}/τ, δ = −v_0/τ, τ = max(|v_0|,
// |v_{m−1}|) (γ = 0, δ = 1 when τ = 0). The coupling each row is free of
// is zero in exact arithmetic and is not formed.
func CoarseRows[T tri.Float](sp Spikes[T]) (first, last Row[T]) {
	alpha, beta := T(1), T(0)
	if sigma := max(abs(sp.W0), abs(sp.W1)); sigma != 0 {
		alpha, beta = sp.W1/sigma, -sp.W0/sigma
	}
	first = Row[T]{
		A: T(alpha*sp.V0) + T(beta*sp.V1),
		B: alpha,
		C: beta,
		D: T(alpha*sp.Y0) + T(beta*sp.Y1),
	}
	gamma, delta := T(0), T(1)
	if tau := max(abs(sp.V0), abs(sp.V1)); tau != 0 {
		gamma, delta = sp.V1/tau, -sp.V0/tau
	}
	last = Row[T]{
		A: gamma,
		B: delta,
		C: T(gamma*sp.W0) + T(delta*sp.W1),
		D: T(gamma*sp.Y0) + T(delta*sp.Y1),
	}
	return first, last
}

// variant selects how Solve forms the coarse rows: the package's choice
// is the zero value; the others are kept for the comparison of
// TestCoarseRowChoices.
type variant struct {
	// scaled divides every coarse row by its largest coefficient.
	scaled bool
	// spikeEnds forms the first row of the first partition and the last
	// row of the last partition by CoarseRows, as the other rows, instead
	// of identity rows.
	spikeEnds bool
	// recompute solves every partition again in Stage 3 (RecoverPartition)
	// instead of combining its spikes.
	recompute bool
}

// scaleRow divides r by its largest coefficient in magnitude (scaled
// partial pivoting of the coarse solve); a zero row is left as it is.
func scaleRow[T tri.Float](r Row[T]) Row[T] {
	s := max(abs(r.A), abs(r.B), abs(r.C))
	if s == 0 {
		return r
	}
	return Row[T]{r.A / s, r.B / s, r.C / s, r.D / s}
}

// recoverPartition is the Stage 3 of variant.recompute for partition k (rows s ≤ i < e) of an
// n-row system: with xl = x_{s−1} and xr = x_e from the coarse solution
// (ignored for the first and the last partition), it solves T_k·x = d'
// by the same pivoted LU as FactorPartition, d' being d with a_s·xl taken
// from its first row and c_{e−1}·xr from its last, and writes x[s:e]. It
// returns the original row of the first bad pivot, or −1. d[s:e] is read
// before x[s:e] is written, so x may alias d.
func recoverPartition[T tri.Float](a, b, c, d, x []T, s, e int, xl, xr T, ws *Workspace[T]) int {
	n := len(b)
	m := e - s
	if m == 1 {
		return -1 // x[s] is the coarse solution's (Stage 3 of Solve)
	}
	l := &ws.lu
	y := l.col[:m]
	copy(y, d[s:e])
	if s > 0 {
		y[0] -= T(a[s] * xl)
	}
	if e < n {
		y[m-1] -= T(c[e-1] * xr)
	}
	l.cols = append(l.cols[:0], y)
	if bad := l.solve(a, b, c, s, e, l.cols); bad >= 0 {
		return s + bad
	}
	copy(x[s:e], y)
	return -1
}

// Solve solves one tridiagonal system by the partition method with
// partial pivoting, in partitions of m rows (ValidRows; DefaultRows gives
// the devices' m): Stage 1 eliminates every partition by a pivoted LU and
// forms its two coarse rows, Stage 2 solves the coarse system (directly
// up to the workspace's direct size, by Solve itself above it), Stage 3
// forms every partition's unknowns from its spikes and its neighbours'
// values (see the package documentation).
//
// a, b, c, d and x must all have length n = len(b); a[0] and c[n−1] are
// ignored. The inputs are not modified and x may alias d. ws must have
// been made for m and capacity ≥ n (nil allocates a temporary one). Solve
// panics if m is not valid, the lengths differ or ws does not fit.
//
// A zero or non-finite pivot of a partition's LU or of the coarse solve
// is reported as a *tri.PivotError wrapping tri.ErrZeroPivot whose Row is
// the original row (see "Breakdown" in the package documentation); x is
// not modified then.
func Solve[T tri.Float](a, b, c, d, x []T, m int, ws *Workspace[T]) error {
	return SolveWith(a, b, c, d, x, m, ws, nil)
}

// SolveWith is Solve with the coarse system solved by coarse (nil: as
// Solve does). A breakdown coarse reports at coarse row j is returned at
// the original row CoarseRow(n, m, j).
func SolveWith[T tri.Float](a, b, c, d, x []T, m int, ws *Workspace[T], coarse CoarseSolver[T]) error {
	checkRows(m)
	checkLengths(a, b, c, d, x)
	n := len(b)
	if ws == nil {
		ws = NewWorkspace[T](n, m)
	} else if n > ws.n || m != ws.m {
		panic(fmt.Sprintf("pivotpart: workspace for n≤%d m=%d used for n=%d m=%d", ws.n, ws.m, n, m))
	}
	return ws.solve(a, b, c, d, x, coarse, variant{})
}

// solve is SolveWith on ws (of ws.m rows per partition), its coarse rows
// formed as v says.
func (ws *Workspace[T]) solve(a, b, c, d, x []T, coarse CoarseSolver[T], v variant) error {
	n, m := len(b), ws.m
	if n == 0 {
		return nil
	}
	P := Partitions(n, m)
	R := CoarseSize(n, m)
	A, B, C, D, X := ws.A[:R], ws.B[:R], ws.C[:R], ws.D[:R], ws.X[:R]

	// Stage 1, for every partition in parallel: its spikes and coarse rows.
	bad := -1
	for k := range P {
		s, e := Bounds(n, m, k)
		if e-s == 1 {
			// A last partition of one row: its row is its coarse row.
			var as T
			if s > 0 {
				as = a[s]
			}
			A[2*k], B[2*k], C[2*k], D[2*k] = as, b[s], 0, d[s]
			continue
		}
		sp, row := FactorPartition(a, b, c, d, s, e, ws)
		if row >= 0 {
			if bad < 0 || row < bad {
				bad = row
			}
			continue
		}
		f, l := CoarseRows(sp)
		if !v.spikeEnds {
			if k == 0 {
				f = Row[T]{B: 1}
			}
			if k == P-1 {
				l = Row[T]{B: 1}
			}
		}
		if v.scaled {
			f, l = scaleRow(f), scaleRow(l)
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
		err = ws.inner.solve(A, B, C, D, X, nil, v)
	}
	if err != nil {
		var pe *tri.PivotError
		if errors.As(err, &pe) && pe.Row >= 0 && pe.Row < R {
			return &tri.PivotError{Row: CoarseRow(n, m, pe.Row), Err: pe.Err}
		}
		return fmt.Errorf("pivotpart: coarse system of %d rows: %w", R, err)
	}

	// Stage 3, for every partition in parallel: its rows from its
	// neighbours' boundary values, x = (y − v·x_{s−1}) − w·x_e (x_{s−1} =
	// 0 for the first partition, x_e = 0 for the last). d is not read.
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
		if v.recompute {
			if row := recoverPartition(a, b, c, d, x, s, e, xl, xr, ws); row >= 0 {
				return &tri.PivotError{Row: row, Err: tri.ErrZeroPivot}
			}
			continue
		}
		CombinePartition(x, s, e, xl, xr, ws)
	}
	return nil
}

// CombinePartition is Stage 3 for partition k (rows s ≤ i < e, e − s ≥ 2):
// x_i = (y_i − v_i·xl) − w_i·xr over FactorPartition's y, v, w, with xl
// = x_{s−1} and xr = x_e from the coarse solution (0 for the first and
// the last partition).
func CombinePartition[T tri.Float](x []T, s, e int, xl, xr T, ws *Workspace[T]) {
	for i := s; i < e; i++ {
		x[i] = T(ws.y[i]-T(ws.v[i]*xl)) - T(ws.w[i]*xr)
	}
}
