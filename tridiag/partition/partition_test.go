package partition

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/tridiag/internal/tri"
	"github.com/bandsolve/bandsolve/tridiag/internal/tritest"
	"github.com/bandsolve/bandsolve/tridiag/pcr"
)

var chunkSizes = []int{1, 2, 3, 4, 8, 16, 32}

// chunksFor returns the chunk sizes the driver runs on an n-row system:
// every size of chunkSizes, the whole system (n) and more (n + 5) up to
// 70000 rows; beyond, chunks of 1, 3 and 16 rows and the whole system.
func chunksFor(n int) []int {
	if n > 70000 {
		return []int{1, 3, 16, n}
	}
	return append(slices.Clone(chunkSizes), n, n+5)
}

// solver is Solve under the driver of package tritest, its option the
// chunk size (chunksFor).
func solver[T tri.Float]() tritest.Solver[T, *Workspace[T]] {
	return tritest.Solver[T, *Workspace[T]]{
		Solve:        Solve[T],
		NewWorkspace: func(n, _ int) *Workspace[T] { return NewWorkspace[T](n) },
		Opts:         chunksFor,
		Tol:          tritest.ByPrecision[T](1e-5, 1e-13),
		Stable:       true,
	}
}

// solverPCR is SolvePCR under the driver: as solver, but not backward
// stable (see "Stability" in the package documentation).
func solverPCR[T tri.Float]() tritest.Solver[T, *Workspace[T]] {
	s := solver[T]()
	s.Solve = SolvePCR[T]
	s.Stable = false
	return s
}

// TestSolve runs the checks every solver shares (accuracy, aliasing,
// workspaces, ignored entries, breakdowns, allocation, backward
// stability) with every chunk size.
func TestSolve(t *testing.T) {
	tritest.Both(t, solver[float32](), solver[float64]())
}

func TestSolvePCR(t *testing.T) {
	tritest.Both(t, solverPCR[float32](), solverPCR[float64]())
}

func TestSizes(t *testing.T) {
	// levels: ⌊log2 R⌋ of cyclic reduction (Solve); steps: ⌈log2 R⌉ of PCR
	// (SolvePCR).
	for _, c := range []struct{ n, p, chunks, reduced, levels, steps int }{
		{0, 4, 0, 0, 0, 0}, {1, 1, 1, 1, 0, 0}, {1, 8, 1, 1, 0, 0}, {2, 8, 1, 2, 1, 1}, {8, 8, 1, 2, 1, 1},
		{9, 8, 2, 3, 1, 2}, {10, 8, 2, 4, 2, 2}, {16, 8, 2, 4, 2, 2}, {17, 8, 3, 5, 2, 3}, {7, 1, 7, 7, 2, 3},
		{7, 2, 4, 7, 2, 3}, {8, 2, 4, 8, 3, 3}, {64, 8, 8, 16, 4, 4}, {1024, 8, 128, 256, 8, 8},
		{4096, 4, 1024, 2048, 11, 11}, {1000, 3, 334, 667, 9, 10},
	} {
		assert.Equal(t, c.chunks, Chunks(c.n, c.p), "chunks n=%d p=%d", c.n, c.p)
		assert.Equal(t, c.reduced, ReducedSize(c.n, c.p), "reduced n=%d p=%d", c.n, c.p)
		assert.Equal(t, c.levels, Levels(c.n, c.p), "levels n=%d p=%d", c.n, c.p)
		assert.Equal(t, c.steps, Steps(c.n, c.p), "steps n=%d p=%d", c.n, c.p)
	}
}

func TestDefaultChunk(t *testing.T) {
	for n := 1; n <= 1<<15; n++ {
		p := DefaultChunk(n)
		require.GreaterOrEqual(t, p, 4, "n=%d", n)
		require.LessOrEqual(t, p, 16, "n=%d", n)
		// A GPU block of 1024 threads holds every chunk of one system up
		// to n = 16384, of 512 threads up to 8192.
		if n <= 16384 {
			require.LessOrEqual(t, Chunks(n, p), 1024, "n=%d", n)
		}
		if n <= 8192 {
			require.LessOrEqual(t, Chunks(n, p), 512, "n=%d", n)
		}
		if n > 1 {
			require.GreaterOrEqual(t, p, DefaultChunk(n-1), "n=%d: not monotone", n)
		}
	}
}

// TestWeakDominance: with |b| only slightly above |a| + |c| the method
// stays accurate (the reduced system is a Schur complement and inherits
// diagonal dominance).
func TestWeakDominance(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for _, n := range []int{100, 1000, 4096} {
		s := tritest.RandSystem(r, n, 0)
		for i := range n {
			s.B[i] = math.Abs(s.A[i]) + math.Abs(s.C[i]) + 0.01
			if r.IntN(2) == 0 {
				s.B[i] = -s.B[i]
			}
		}
		want := tritest.Reference(t, s)
		for _, p := range chunkSizes {
			x := make([]float64, n)
			require.NoError(t, Solve(s.A, s.B, s.C, s.D, x, p, nil))
			assert.LessOrEqual(t, tritest.RelErr(x, want), 1e-11, "n=%d p=%d", n, p)
		}
	}
}

// TestP1IsPCR: SolvePCR with p = 1 is PCR on the whole system (with
// reciprocals): it agrees with pcr.Solve to rounding.
func TestP1IsPCR(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	for _, n := range []int{1, 2, 3, 17, 100, 1025} {
		s := tritest.RandSystem(r, n, 4)
		x, y := make([]float64, n), make([]float64, n)
		require.NoError(t, SolvePCR(s.A, s.B, s.C, s.D, x, 1, nil))
		require.NoError(t, pcr.Solve(s.A, s.B, s.C, s.D, y, nil))
		want := make([]float64, n)
		copy(want, y)
		assert.LessOrEqual(t, tritest.RelErr(x, want), 1e-14, "n=%d", n)
	}
}

// TestBackwardStable: on weakly dominant systems (condition ~n²) Solve's
// normwise backward error stays at a few unit roundoffs, as Thomas's does,
// for every size; SolvePCR's grows with the reduced system (the reason
// Stage 2 is cyclic reduction), which this test also checks, so that it
// would notice a Stage 2 that lost the property. It logs the errors of
// Solve, SolvePCR, Thomas and PCR on the whole system (pcr.Solve): the
// figures of the package documentation ("Stability") come from
// go test -run TestBackwardStable -v.
func TestBackwardStable(t *testing.T) {
	const u = 6e-8 // float32 unit roundoff
	for _, variable := range []bool{false, true} {
		for _, n := range []int{300, 4096, 1 << 16, 1 << 20} {
			r := rand.New(rand.NewPCG(9, uint64(n)))
			a, b, c, d := tritest.As[float32](tritest.WeakSystem(r, n, variable))
			x := make([]float32, n)
			require.NoError(t, Solve(a, b, c, d, x, 16, nil))
			eCR := tritest.BackwardError(a, b, c, d, x)
			assert.Less(t, eCR, 4*u, "n=%d variable=%v", n, variable)
			require.NoError(t, tri.Thomas(a, b, c, d, x, make([]float32, n)))
			eThomas := tritest.BackwardError(a, b, c, d, x)
			assert.Less(t, eThomas, 4*u, "Thomas n=%d variable=%v", n, variable)
			require.NoError(t, SolvePCR(a, b, c, d, x, 16, nil))
			ePCR := tritest.BackwardError(a, b, c, d, x)
			if n >= 4096 {
				assert.Greater(t, ePCR, 100*u, "PCR n=%d variable=%v", n, variable)
			}
			require.NoError(t, pcr.Solve(a, b, c, d, x, nil))
			ePlain := tritest.BackwardError(a, b, c, d, x)
			t.Logf("variable=%-5v n=%7d: Solve %.1e, SolvePCR %.1e, Thomas %.1e, pcr.Solve %.1e", variable, n, eCR, ePCR, eThomas, ePlain)
		}
	}
}

func TestBreakdown(t *testing.T) {
	t.Run("float32", testBreakdown[float32])
	t.Run("float64", testBreakdown[float64])
}

// testBreakdown plants zero pivots and checks the reported row: the
// smallest bad row of the first stage that meets one; x untouched.
func testBreakdown[T tri.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	n := 100
	base := tritest.RandSystem(r, n, 4)
	type plant struct {
		rows []int // rows whose a and b are set to 0 (a zero pivot in Stage 1 when interior)
		p    int
		want int
	}
	for _, c := range []plant{
		{[]int{13}, 8, 13},          // interior row of chunk 1: Stage 1
		{[]int{23, 13}, 8, 13},      // two chunks: the smaller row
		{[]int{15}, 8, 15},          // last row of a chunk: its pivot is Stage 1 too
		{[]int{16, 45}, 8, 45},      // first row of chunk 2 is not divided in Stage 1: 45 (Stage 1) wins
		{[]int{16}, 8, 16},          // only a first row: F's B = 0 − 0·v = 0, PCR step 1
		{[]int{0}, 8, 0},            // the very first row
		{[]int{99}, 3, 99},          // the last chunk has one row (99 = 33·3): its F at PCR step 1
		{[]int{57}, 1, 57},          // p = 1: plain PCR
		{[]int{0, 41, 42}, 100, 41}, // one chunk: row 0 (F, PCR) loses to Stage 1's 41
	} {
		s := base.Clone()
		for _, i := range c.rows {
			s.B[i] = 0
			s.A[i] = 0
			if i%c.p == 0 || c.p == 1 {
				s.C[i] = 0 // a first row: make F's B exactly 0
			}
		}
		a, b, cc, d := tritest.As[T](s)
		x := tritest.Fill[T](n, 42)
		assert.Equal(t, c.want, tritest.PivotRow(t, Solve(a, b, cc, d, x, c.p, nil), "rows %v p=%d", c.rows, c.p), "rows %v p=%d", c.rows, c.p)
		require.Equal(t, tritest.Fill[T](n, 42), x, "x modified on error")
	}
}

// TestPanics: a chunk size below 1 and a negative workspace size panic.
// (Slice lengths and workspace sizes are checked by the driver.)
func TestPanics(t *testing.T) {
	v := []float64{1, 2, 3}
	assert.Panics(t, func() { _ = Solve(v, v, v, v, v, 0, nil) })
	assert.Panics(t, func() { _ = SolvePCR(v, v, v, v, v, -1, nil) })
	assert.Panics(t, func() { NewWorkspace[float32](-1) })
	assert.Equal(t, 7, NewWorkspace[float32](7).Cap())
}
