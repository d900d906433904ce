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
	segStagePCR     = 1  // + k: step k of a segment's PCR (k ≤ 15)
	segStageFinal   = 17 // a segment's reduced rows' final divisors
	segStageReduced = 18 // the reduced system of the segments
	segStageResult  = 19 // a non-finite solution
)

// ReducedSolver solves the reduced system of the segments, a tridiagonal
// system of 2Q rows (a[0] = c[2Q−1] = 0), into x. It reports a breakdown
// as a *tri.PivotError whose Row is a row of that system.
type ReducedSolver[T tri.Float] func(a, b, c, d, x []T) error

// ReducedPCR solves the reduced system by PCR with reciprocals (Solve with
// chunks of one row), as the GPU's one-pass segment kernel does in one
// warp.
func ReducedPCR[T tri.Float](a, b, c, d, x []T) error { return SolvePCR(a, b, c, d, x, 1, nil) }

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
	// One segment's PCR levels, three right-hand sides (y, v, w).
	A, B, C, Dy, Dv, Dw [2][]T
	q                   []T
	// Every segment's reduced rows after its PCR: B and the three
	// right-hand sides, at the segment's first reduced row + j.
	fb, fy, fv, fw []T
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
	for l := range 2 {
		ws.A[l], ws.B[l], ws.C[l] = make([]T, rs), make([]T, rs), make([]T, rs)
		ws.Dy[l], ws.Dv[l], ws.Dw[l] = make([]T, rs), make([]T, rs), make([]T, rs)
	}
	ws.q = make([]T, rs)
	all := 2*Chunks(n, p) + 1
	ws.fb, ws.fy, ws.fv, ws.fw = make([]T, all), make([]T, all), make([]T, all), make([]T, all)
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
// (ptx/src/segment.cuh): with reduced = ReducedPCR for the one-pass kernel,
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

	// Every segment: Stage 1 on its chunks, PCR with three right-hand
	// sides, its two reduced rows.
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

// segX is the solution of a segment's reduced row f: ((y + v·x_first) +
// w·x_last) / B over its final B and right-hand sides.
func segX[T tri.Float](ws *SegmentWorkspace[T], f int, xf, xl T) T {
	return T(T(ws.fy[f]+T(ws.fv[f]*xf))+T(ws.fw[f]*xl)) / ws.fb[f]
}

// reduceSegment is the first part for segment sg of ns rows from row s0:
// Stage 1 on its chunks (γ, α, δ into ws.w), PCR with the right-hand sides
// y, v, w on its RR reduced rows with the first and last replaced by
// identities, the final rows into ws.fb… at base, and the segment's two
// reduced rows into ws.ra… at 2sg, 2sg+1.
func reduceSegment[T tri.Float](a, b, c, d []T, n, s0, ns, p int, ws *SegmentWorkspace[T], base, sg int,
	note func(stage, row int)) {
	RR := ReducedSize(ns, p)
	per := min(p, 2)
	rowOf := func(j int) int { return s0 + reducedRow(j, ns, p) }
	A, B, C, D := ws.A[0][:RR], ws.B[0][:RR], ws.C[0][:RR], ws.Dy[0][:RR]
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
	Dv, Dw := ws.Dv[0][:RR], ws.Dw[0][:RR]
	for j := range RR {
		Dv[j], Dw[j] = 0, 0
	}
	A[0], B[0], C[0], D[0], Dv[0] = 0, 1, 0, 0, 1
	A[RR-1], B[RR-1], C[RR-1], D[RR-1], Dw[RR-1] = 0, 1, 0, 0, 1

	// PCR, level in buffer cur.
	cur := 0
	q := ws.q[:RR]
	for k := 1; k <= Steps(ns, p); k++ {
		u := 1 << (k - 1)
		sA, sB, sC := ws.A[cur][:RR], ws.B[cur][:RR], ws.C[cur][:RR]
		sY, sV, sW := ws.Dy[cur][:RR], ws.Dv[cur][:RR], ws.Dw[cur][:RR]
		tA, tB, tC := ws.A[1-cur][:RR], ws.B[1-cur][:RR], ws.C[1-cur][:RR]
		tY, tV, tW := ws.Dy[1-cur][:RR], ws.Dv[1-cur][:RR], ws.Dw[1-cur][:RR]
		bad = -1
		for j := range RR {
			q[j] = 1 / sB[j]
			if (j-u >= 0 || j+u < RR) && tri.BadDivisor(sB[j]) && bad < 0 {
				bad = rowOf(j)
			}
		}
		if bad >= 0 {
			note(segStagePCR+k, bad)
		}
		for i := range RR {
			var al, cl, yl, vl, wl, ql T = 0, 0, 0, 0, 0, 1
			if i-u >= 0 {
				al, cl, yl, vl, wl, ql = sA[i-u], sC[i-u], sY[i-u], sV[i-u], sW[i-u], q[i-u]
			}
			var ar, cr, yr, vr, wr, qr T = 0, 0, 0, 0, 0, 1
			if i+u < RR {
				ar, cr, yr, vr, wr, qr = sA[i+u], sC[i+u], sY[i+u], sV[i+u], sW[i+u], q[i+u]
			}
			s1 := T(sA[i] * ql)
			s2 := T(sC[i] * qr)
			tA[i] = -T(al * s1)
			tB[i] = T(sB[i]-T(cl*s1)) - T(ar*s2)
			tC[i] = -T(cr * s2)
			tY[i] = T(sY[i]-T(yl*s1)) - T(yr*s2)
			tV[i] = T(sV[i]-T(vl*s1)) - T(vr*s2)
			tW[i] = T(sW[i]-T(wl*s1)) - T(wr*s2)
		}
		cur = 1 - cur
	}
	fB, fY, fV, fW := ws.B[cur][:RR], ws.Dy[cur][:RR], ws.Dv[cur][:RR], ws.Dw[cur][:RR]
	for j := range RR {
		if tri.BadDivisor(fB[j]) {
			note(segStageFinal, rowOf(j))
			break
		}
	}
	copy(ws.fb[base:base+RR], fB)
	copy(ws.fy[base:base+RR], fY)
	copy(ws.fv[base:base+RR], fV)
	copy(ws.fw[base:base+RR], fW)

	// The segment's rows in the reduced system of the segments: its first
	// row with row 1 substituted, its last with row RR−2 substituted.
	y1, v1, w1 := fY[1]/fB[1], fV[1]/fB[1], fW[1]/fB[1]
	yl, vl, wl := fY[RR-2]/fB[RR-2], fV[RR-2]/fB[RR-2], fW[RR-2]/fB[RR-2]
	f, l := 2*sg, 2*sg+1
	ws.ra[f], ws.rb[f], ws.rc[f], ws.rd[f] = a0, b0+T(c0*v1), T(c0*w1), d0-T(c0*y1)
	ws.ra[l], ws.rb[l], ws.rc[l], ws.rd[l] = T(ae*vl), be+T(ae*wl), ce, de-T(ae*yl)
}
