package partition

import (
	"errors"
	"fmt"
	"math"

	"github.com/bandsolve/bandsolve/tridiag/internal/tri"
)

// Segments returns Q = ⌈n/m⌉, the number of segments of m rows of an
// n-row system (0 for n ≤ 0).
func Segments(n, m int) int {
	if n <= 0 {
		return 0
	}
	return (n + m - 1) / m
}

// SegmentOK reports whether segments of m rows can cut systems of n rows
// in chunks of p: m a positive multiple of p, at least 2, and no segment
// of a single row (n mod m ≠ 1, so n ≥ 2).
func SegmentOK(n, m, p int) bool {
	return p >= 1 && m >= 2 && m%p == 0 && n >= 2 && n%m != 1
}

// Stages of SolveSegmented's breakdown keys (see "Segments" in the package
// documentation): a key orders breakdowns by (stage, row).
const (
	segStagePivot   = 1  // chunk pivots
	segStageLevel   = 1  // + k: the rows level k of a segment's cyclic reduction eliminates (k ≤ 15)
	segStageFinal   = 17 // the divisor of a segment's last row standing
	segStageReduced = 18 // the reduced system of the segments
	segStageResult  = 19 // a non-finite solution
)

// ReducedSolver solves the reduced system of the segments, a tridiagonal
// system of 2Q rows (a[0] = c[2Q−1] = 0), into x. It reports a breakdown
// as a *tri.PivotError whose Row is a row of that system.
type ReducedSolver[T tri.Float] func(a, b, c, d, x []T) error

// ReducedCR solves the reduced system by cyclic reduction with
// reciprocals (Solve with chunks of one row), as the GPU's one-pass
// segment kernels do in one warp.
func ReducedCR[T tri.Float](a, b, c, d, x []T) error { return Solve(a, b, c, d, x, 1, nil) }

// ReducedPartition returns the solver that runs Solve with chunks of p
// rows on the reduced system, as the GPU's three-pass path does when the
// reduced system fits one block.
func ReducedPartition[T tri.Float](p int) ReducedSolver[T] {
	return func(a, b, c, d, x []T) error { return Solve(a, b, c, d, x, p, nil) }
}

// SegmentWorkspace is the scratch memory of SolveSegmented for systems of
// up to a fixed number of rows with given chunk and segment sizes. It can
// be reused; it must not be used by two calls at once.
type SegmentWorkspace[T tri.Float] struct {
	n, p, m int
	w       Workspace[T] // γ, α, δ by original row (g, al, dl only)
	// One segment's reduced rows during its cyclic reduction, three
	// right-hand sides (y, v, w), and their reciprocals.
	A, B, C, Dy, Dv, Dw []T
	q                   []T
	// Every segment's reduced unknowns as y + v·x_first + w·x_last, at the
	// segment's first reduced row + j.
	fy, fv, fw []T
	// The reduced system of the segments and its solution.
	ra, rb, rc, rd, rx []T
}

// NewSegmentWorkspace returns a workspace for systems of up to n rows in
// chunks of p rows and segments of m rows.
func NewSegmentWorkspace[T tri.Float](n, p, m int) *SegmentWorkspace[T] {
	if n < 0 || p < 1 || m < 2 || m%p != 0 {
		panic(fmt.Sprintf("partition: segment workspace n=%d p=%d m=%d", n, p, m))
	}
	ws := &SegmentWorkspace[T]{n: n, p: p, m: m}
	ws.w = Workspace[T]{n: n, g: make([]T, n), al: make([]T, n), dl: make([]T, n)}
	rs := 2 * Chunks(m, p) // reduced rows of one segment, at most
	ws.A, ws.B, ws.C = make([]T, rs), make([]T, rs), make([]T, rs)
	ws.Dy, ws.Dv, ws.Dw = make([]T, rs), make([]T, rs), make([]T, rs)
	ws.q = make([]T, rs)
	all := 2*Chunks(n, p) + 1
	ws.fy, ws.fv, ws.fw = make([]T, all), make([]T, all), make([]T, all)
	q := 2 * Segments(n, m)
	ws.ra, ws.rb, ws.rc, ws.rd, ws.rx = make([]T, q), make([]T, q), make([]T, q), make([]T, q), make([]T, q)
	return ws
}

// segKey is a breakdown key: stage in the high bits, the original row in
// the low 32.
func segKey(stage, row int) uint64 { return uint64(stage)<<32 | uint64(row) }

// SolveSegmented solves one tridiagonal system by the partition method
// cut into segments of m rows (see "Segments" in the package
// documentation): every segment is reduced on its own to two equations in
// its first and last unknowns and its neighbours', the 2Q equations are
// solved by reduced, and every segment's rows are recovered from its two
// boundary values. It is the CPU twin of the GPU's segment kernels
// (ptx/src/segment.cuh): with reduced = ReducedCR for the one-pass kernel,
// with the GPU's solver of the reduced system for the three-pass path; the
// results agree bit for bit.
//
// a, b, c, d and x have length n = len(b) (a[0], c[n−1] ignored); the
// inputs are not modified; x may alias d. SegmentOK(n, m, p) must hold
// and ws must serve n, p, m (nil: a temporary one); Solve panics
// otherwise. A zero or non-finite divisor, or a non-finite solution, is
// returned as a *tri.PivotError wrapping tri.ErrZeroPivot at the row of
// the first (stage, row) that broke down; x holds no solution then.
func SolveSegmented[T tri.Float](a, b, c, d, x []T, p, m int, ws *SegmentWorkspace[T], reduced ReducedSolver[T]) error {
	n := len(b)
	if len(a) != n || len(c) != n || len(d) != n || len(x) != n {
		panic(fmt.Sprintf("partition: slice lengths a=%d b=%d c=%d d=%d x=%d differ", len(a), n, len(c), len(d), len(x)))
	}
	if !SegmentOK(n, m, p) {
		panic(fmt.Sprintf("partition: segments of %d rows cannot cut %d rows in chunks of %d", m, n, p))
	}
	if ws == nil {
		ws = NewSegmentWorkspace[T](n, p, m)
	} else if n > ws.n || p != ws.p || m != ws.m {
		panic(fmt.Sprintf("partition: workspace for n≤%d p=%d m=%d used for n=%d p=%d m=%d", ws.n, ws.p, ws.m, n, p, m))
	}
	Q := Segments(n, m)
	key := uint64(math.MaxUint64)
	note := func(stage, row int) { key = min(key, segKey(stage, row)) }

	// Every segment: Stage 1 on its chunks, cyclic reduction with three
	// right-hand sides, its two reduced rows.
	base := 0 // the segment's first reduced row in fb, fy, fv, fw
	for sg := range Q {
		s0 := sg * m
		ns := min(m, n-s0)
		RR := ReducedSize(ns, p)
		reduceSegment(a, b, c, d, n, s0, ns, p, ws, base, sg, note)
		base += RR
	}

	// The reduced system of the segments.
	R2 := 2 * Q
	ra, rb, rc, rd, rx := ws.ra[:R2], ws.rb[:R2], ws.rc[:R2], ws.rd[:R2], ws.rx[:R2]
	if err := reduced(ra, rb, rc, rd, rx); err != nil {
		var pe *tri.PivotError
		if !errors.As(err, &pe) {
			return err
		}
		j := pe.Row
		row := j / 2 * m
		if j%2 == 1 {
			row += min(m, n-j/2*m) - 1
		}
		note(segStageReduced, row)
	}

	// Every segment: its reduced rows from x_first, x_last, then Stage 3.
	per := min(p, 2)
	base = 0
	for sg := range Q {
		s0 := sg * m
		ns := min(m, n-s0)
		RR := ReducedSize(ns, p)
		xf, xl := rx[2*sg], rx[2*sg+1]
		nch := Chunks(ns, p)
		for k := range nch {
			s := s0 + k*p
			mc := min(p, s0+ns-s)
			f := base + k*per
			xs := segX(ws, f, xf, xl)
			var xe T
			if mc > 1 {
				xe = segX(ws, f+1, xf, xl)
			}
			recoverChunk(x, &ws.w, s, mc, xs, xe)
		}
		base += RR
	}
	if key == math.MaxUint64 {
		for i := range n {
			if f := float64(x[i]); math.IsNaN(f) || math.IsInf(f, 0) {
				note(segStageResult, i)
				break
			}
		}
	}
	if key != math.MaxUint64 {
		return &tri.PivotError{Row: int(key & math.MaxUint32), Err: tri.ErrZeroPivot}
	}
	return nil
}

// segX is the solution of a segment's reduced row f: (y + v·x_first) +
// w·x_last.
func segX[T tri.Float](ws *SegmentWorkspace[T], f int, xf, xl T) T {
	return T(ws.fy[f]+T(ws.fv[f]*xf)) + T(ws.fw[f]*xl)
}

// reduceSegment is the first part for segment sg of ns rows from row s0:
// Stage 1 on its chunks (γ, α, δ into ws.w), cyclic reduction with the
// right-hand sides y, v, w on its RR reduced rows with the first and last
// replaced by identities, every reduced unknown's (y, v, w) into ws.fy…
// at base, and the segment's two reduced rows into ws.ra… at 2sg, 2sg+1.
func reduceSegment[T tri.Float](a, b, c, d []T, n, s0, ns, p int, ws *SegmentWorkspace[T], base, sg int,
	note func(stage, row int)) {
	RR := ReducedSize(ns, p)
	per := min(p, 2)
	rowOf := func(j int) int { return s0 + ReducedRow(j, ns, p) }
	A, B, C, D := ws.A[:RR], ws.B[:RR], ws.C[:RR], ws.Dy[:RR]
	bad := -1
	for k := range Chunks(ns, p) {
		s := s0 + k*p
		if row := eliminate(a, b, c, d, s, min(p, s0+ns-s), n, &ws.w, A, B, C, D, k*per); row >= 0 && (bad < 0 || row < bad) {
			bad = row
		}
	}
	if bad >= 0 {
		note(segStagePivot, bad)
	}
	// The first and last reduced rows, kept; identities in their place,
	// with the right-hand sides (y, v, w) = (0, 1, 0) and (0, 0, 1).
	a0, b0, c0, d0 := A[0], B[0], C[0], D[0]
	ae, be, ce, de := A[RR-1], B[RR-1], C[RR-1], D[RR-1]
	Dv, Dw := ws.Dv[:RR], ws.Dw[:RR]
	for j := range RR {
		Dv[j], Dw[j] = 0, 0
	}
	A[0], B[0], C[0], D[0], Dv[0] = 0, 1, 0, 0, 1
	A[RR-1], B[RR-1], C[RR-1], D[RR-1], Dw[RR-1] = 0, 1, 0, 0, 1

	// Cyclic reduction (reducedCR's steps, three right-hand sides): level
	// k eliminates the rows j ≡ u−1 (mod 2u), u = 2^(k−1), into the rows
	// j ≡ 2u−1 (mod 2u).
	q := ws.q[:RR]
	K := crLevels(RR)
	for k := 1; k <= K; k++ {
		u := 1 << (k - 1)
		bad = -1
		for j := u - 1; j < RR; j += 2 * u {
			q[j] = 1 / B[j]
			if tri.BadDivisor(B[j]) && bad < 0 {
				bad = rowOf(j)
			}
		}
		if bad >= 0 {
			note(segStageLevel+k, bad)
		}
		for j := 2*u - 1; j < RR; j += 2 * u {
			l := j - u
			var ar, cr, yr, vr, wr, qr T = 0, 0, 0, 0, 0, 1
			if j+u < RR {
				r := j + u
				ar, cr, yr, vr, wr, qr = A[r], C[r], D[r], Dv[r], Dw[r], q[r]
			}
			s1 := T(A[j] * q[l])
			s2 := T(C[j] * qr)
			A[j] = -T(A[l] * s1)
			B[j] = T(B[j]-T(C[l]*s1)) - T(ar*s2)
			C[j] = -T(cr * s2)
			D[j] = reduceRHS(D[j], D[l], yr, s1, s2)
			Dv[j] = reduceRHS(Dv[j], Dv[l], vr, s1, s2)
			Dw[j] = reduceRHS(Dw[j], Dw[l], wr, s1, s2)
		}
	}
	fy, fv, fw := ws.fy[base:base+RR], ws.fv[base:base+RR], ws.fw[base:base+RR]
	top := 1<<K - 1
	if tri.BadDivisor(B[top]) {
		note(segStageFinal, rowOf(top))
	}
	fy[top], fv[top], fw[top] = D[top]/B[top], Dv[top]/B[top], Dw[top]/B[top]
	// Substitution, level K … 1, each of y, v, w: ((d − a·x_left) −
	// c·x_right)·(1/b), a missing neighbour's 0.
	for k := K; k >= 1; k-- {
		u := 1 << (k - 1)
		for j := u - 1; j < RR; j += 2 * u {
			var yl, vl, wl, yr, vr, wr T
			if j-u >= 0 {
				yl, vl, wl = fy[j-u], fv[j-u], fw[j-u]
			}
			if j+u < RR {
				yr, vr, wr = fy[j+u], fv[j+u], fw[j+u]
			}
			fy[j] = T(T(D[j]-T(A[j]*yl))-T(C[j]*yr)) * q[j]
			fv[j] = T(T(Dv[j]-T(A[j]*vl))-T(C[j]*vr)) * q[j]
			fw[j] = T(T(Dw[j]-T(A[j]*wl))-T(C[j]*wr)) * q[j]
		}
	}

	// The segment's rows in the reduced system of the segments: its first
	// row with row 1 substituted, its last with row RR−2.
	y1, v1, w1 := fy[1], fv[1], fw[1]
	yl, vl, wl := fy[RR-2], fv[RR-2], fw[RR-2]
	f, l := 2*sg, 2*sg+1
	ws.ra[f], ws.rb[f], ws.rc[f], ws.rd[f] = a0, b0+T(c0*v1), T(c0*w1), d0-T(c0*y1)
	ws.ra[l], ws.rb[l], ws.rc[l], ws.rd[l] = T(ae*vl), be+T(ae*wl), ce, de-T(ae*yl)
}
