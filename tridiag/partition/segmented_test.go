package partition

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/tridiag/internal/tri"
	"github.com/bandsolve/bandsolve/tridiag/internal/tritest"
)

func TestSegmentOK(t *testing.T) {
	assert.True(t, SegmentOK(100, 32, 16))
	assert.True(t, SegmentOK(2, 32, 16), "one segment of two rows")
	assert.False(t, SegmentOK(97, 32, 16), "a last segment of one row")
	assert.False(t, SegmentOK(1, 32, 16), "a system of one row")
	assert.False(t, SegmentOK(100, 24, 16), "m not a multiple of p")
	assert.False(t, SegmentOK(100, 0, 16))
	assert.Equal(t, 4, Segments(100, 32))
	assert.Equal(t, 0, Segments(0, 32))
}

func TestSolveSegmented(t *testing.T) {
	t.Run("float32", testSolveSegmented[float32])
	t.Run("float64", testSolveSegmented[float64])
}

// reducedSolvers are the solvers of the segments' reduced system that the
// GPU uses: PCR in one warp, the partition method in one block, and the
// segmented method itself (nested segments).
func reducedSolvers[T tri.Float]() map[string]ReducedSolver[T] {
	return map[string]ReducedSolver[T]{
		"pcr":       ReducedCR[T],
		"partition": ReducedPartition[T](16),
		"nested": func(a, b, c, d, x []T) error {
			if !SegmentOK(len(b), 32, 16) {
				return Solve(a, b, c, d, x, 16, nil)
			}
			return SolveSegmented(a, b, c, d, x, 16, 32, nil, ReducedCR[T])
		},
	}
}

// testSolveSegmented compares SolveSegmented with the pivoting reference
// for sizes that are and are not multiples of the segment and chunk sizes,
// every reduced solver, and checks the inputs, aliasing and workspaces.
func testSolveSegmented[T tri.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(11, 11))
	for _, c := range []struct{ n, p, m int }{
		{2, 16, 32}, {17, 16, 32}, {32, 16, 32}, {33, 16, 32}, {34, 16, 32}, {48, 16, 32}, {63, 16, 32},
		{64, 16, 32}, {66, 16, 32}, {100, 16, 32}, {1000, 16, 64}, {1024, 16, 256}, {4097, 16, 1024},
		{5000, 16, 512}, {12345, 16, 2048}, {20000, 16, 4096}, {65536, 16, 2048}, {1000, 4, 8},
		{999, 8, 16}, {513, 2, 4}, {300, 1, 7}, {700, 3, 9},
	} {
		if !SegmentOK(c.n, c.m, c.p) {
			continue
		}
		s := tritest.RandSystem(r, c.n, 4)
		want := tritest.Reference(t, s)
		a, b, cc, d := tritest.As[T](s)
		a0, b0, c0, d0 := tritest.Clone(a), tritest.Clone(b), tritest.Clone(cc), tritest.Clone(d)
		ws := NewSegmentWorkspace[T](c.n, c.p, c.m)
		for name, red := range reducedSolvers[T]() {
			what := fmt.Sprintf("n=%d p=%d m=%d reduced=%s", c.n, c.p, c.m, name)
			x := make([]T, c.n)
			require.NoError(t, SolveSegmented(a, b, cc, d, x, c.p, c.m, ws, red), what)
			assert.LessOrEqual(t, tritest.RelErr(x, want), tritest.ByPrecision[T](1e-5, 1e-13), what)
			require.True(t, tritest.BitsEqual(a, a0) && tritest.BitsEqual(b, b0) && tritest.BitsEqual(cc, c0) && tritest.BitsEqual(d, d0),
				"%s: inputs modified", what)
			dx := tritest.Clone(d)
			require.NoError(t, SolveSegmented(a, b, cc, dx, dx, c.p, c.m, ws, red), what)
			assert.True(t, tritest.BitsEqual(dx, x), "%s: aliased result differs", what)
			y := make([]T, c.n)
			require.NoError(t, SolveSegmented(a, b, cc, d, y, c.p, c.m, nil, red), what)
			assert.True(t, tritest.BitsEqual(y, x), "%s: nil workspace differs", what)
		}
	}
}

// TestSegmentedPoisson: tridiag(−1, 2, −1), only weakly dominant and
// condition ~n²: the segmented method is as accurate as the partition
// method (the segments' reduced rows are a Schur complement too).
func TestSegmentedPoisson(t *testing.T) {
	for _, n := range []int{4096, 20000} {
		a, b, c, d := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
		r := rand.New(rand.NewPCG(3, 3))
		for i := range n {
			a[i], b[i], c[i], d[i] = -1, 2, -1, 2*r.Float64()-1
		}
		want := tritest.Reference(t, tritest.System{A: a, B: b, C: c, D: d})
		x, y := make([]float64, n), make([]float64, n)
		require.NoError(t, Solve(a, b, c, d, y, 16, nil))
		require.NoError(t, SolveSegmented(a, b, c, d, x, 16, 1024, nil, ReducedCR[float64]))
		ex, ey := tritest.RelErr(x, want), tritest.RelErr(y, want)
		assert.LessOrEqual(t, ex, 10*ey+1e-12, "n=%d: segmented %.2e, partition %.2e", n, ex, ey)
	}
}

// TestSegmentedQOne: one segment is the partition method with the reduced
// system of its first and last rows solved separately: accurate too.
func TestSegmentedQOne(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 12))
	s := tritest.RandSystem(r, 500, 4)
	want := tritest.Reference(t, s)
	x := make([]float64, 500)
	require.NoError(t, SolveSegmented(s.A, s.B, s.C, s.D, x, 16, 512, nil, ReducedCR[float64]))
	assert.LessOrEqual(t, tritest.RelErr(x, want), 1e-13)
}

func TestSegmentedBreakdown(t *testing.T) {
	t.Run("float32", testSegmentedBreakdown[float32])
	t.Run("float64", testSegmentedBreakdown[float64])
}

// testSegmentedBreakdown plants zero pivots and checks the reported row:
// the first (stage, row). n = 300 in segments of 64 rows, chunks of 16.
func testSegmentedBreakdown[T tri.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(13, 13))
	n, p, m := 300, 16, 64
	base := tritest.RandSystem(r, n, 4)
	for _, c := range []struct {
		rows  []int // rows whose a and b are set to 0
		first bool  // also zero c (a first row of a chunk: F's B exactly 0)
		want  int
	}{
		{[]int{77}, false, 77},               // interior of a chunk of segment 1: Stage 1
		{[]int{200, 77}, false, 77},          // two segments: the smaller row
		{[]int{130, 201}, false, 130},        // Stage 1 rows in two segments
		{[]int{144}, true, 144},              // a chunk's first row inside segment 2: its PCR
		{[]int{144, 290}, true, 290},         // Stage 1 (290) before segment 2's PCR (144)
		{[]int{0}, true, 0},                  // the very first row: the reduced system of the segments
		{[]int{128}, true, 128},              // a segment's first row: the reduced system of the segments
		{[]int{128, 250}, true, 250},         // Stage 1 first
		{[]int{128, 64 + 32}, true, 96},      // a chunk's first row (PCR of segment 1) before the segments' system
		{[]int{299}, false, 299},             // the last row: the last chunk's last pivot
		{[]int{63}, false, 63},               // a segment's last row: its chunk's last pivot
		{[]int{64 + 17, 64 + 18}, false, 81}, // two pivots of one chunk
	} {
		s := base.Clone()
		for _, i := range c.rows {
			s.B[i], s.A[i] = 0, 0
			if c.first {
				s.C[i] = 0
			}
		}
		a, b, cc, d := tritest.As[T](s)
		x := make([]T, n)
		err := SolveSegmented(a, b, cc, d, x, p, m, nil, ReducedCR[T])
		assert.Equal(t, c.want, tritest.PivotRow(t, err, "rows %v", c.rows), "rows %v", c.rows)
	}
}

// TestSegmentedOverflow: a finite system whose solution overflows is a
// breakdown at the first non-finite row of the solution (0·Inf in the
// reductions spreads NaN beyond the overflowing row, as in Solve).
func TestSegmentedOverflow(t *testing.T) {
	n := 100
	a, b, c, d := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range n {
		a[i], b[i], c[i], d[i] = 0, 1, 0, 1
	}
	b[70] = 1e-30 // x[70] = 1e30 · 1e10 overflows
	d[70] = 1e10
	x := make([]float32, n)
	err := SolveSegmented(a, b, c, d, x, 16, 32, nil, ReducedCR[float32])
	var pe *tri.PivotError
	require.ErrorAs(t, err, &pe)
	first := -1
	for i, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			first = i
			break
		}
	}
	require.GreaterOrEqual(t, first, 0, "no non-finite row")
	assert.Equal(t, first, pe.Row)
}

func TestSegmentedPanics(t *testing.T) {
	v := make([]float64, 97)
	assert.Panics(t, func() { _ = SolveSegmented(v, v, v, v, v, 16, 32, nil, ReducedCR[float64]) }, "one-row segment")
	w := make([]float64, 100)
	assert.Panics(t, func() {
		_ = SolveSegmented(w, w, w, w, w, 16, 32, NewSegmentWorkspace[float64](100, 16, 64), ReducedCR[float64])
	})
	assert.Panics(t, func() { _ = SolveSegmented(w, w, w, w[:99], w, 16, 32, nil, ReducedCR[float64]) })
	assert.Panics(t, func() { NewSegmentWorkspace[float32](10, 16, 24) })
}
