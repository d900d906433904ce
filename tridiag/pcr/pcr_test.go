package pcr

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/bandsolve/bandsolve/tridiag/internal/tri"
	"github.com/bandsolve/bandsolve/tridiag/internal/tritest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSteps(t *testing.T) {
	for n, want := range map[int]int{0: 0, 1: 0, 2: 1, 3: 2, 4: 2, 5: 3, 8: 3, 9: 4, 1024: 10, 1025: 11, 4097: 13} {
		assert.Equal(t, want, Steps(n), "n=%d", n)
	}
}

func TestSolve(t *testing.T) {
	t.Run("float32", testSolve[float32])
	t.Run("float64", testSolve[float64])
}

// testSolve compares Solve with tri.GTSV for every size, checks that the
// inputs are unchanged and that x may alias d.
func testSolve[T tri.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	ws := NewWorkspace[T](maxSize)
	for _, n := range sizes {
		s := randSystem(r, n)
		want := reference(t, s)
		a, b, c, d := tritest.Conv[T](s.a), tritest.Conv[T](s.b), tritest.Conv[T](s.c), tritest.Conv[T](s.d)
		a0, b0, c0, d0 := tritest.Clone(a), tritest.Clone(b), tritest.Clone(c), tritest.Clone(d)

		x := make([]T, n)
		require.NoError(t, Solve(a, b, c, d, x, ws), "n=%d", n)
		assert.LessOrEqual(t, tritest.RelErr(x, want), tol[T](), "n=%d", n)
		assert.True(t, tritest.BitsEqual(a, a0) && tritest.BitsEqual(b, b0) && tritest.BitsEqual(c, c0) && tritest.BitsEqual(d, d0),
			"n=%d: inputs modified", n)

		// x aliasing d gives the same bits.
		dx := tritest.Clone(d)
		require.NoError(t, Solve(a, b, c, dx, dx, ws), "n=%d", n)
		assert.True(t, tritest.BitsEqual(dx, x), "n=%d: aliased result differs", n)

		// A workspace of exactly n rows, and a nil one, give the same bits.
		y := make([]T, n)
		require.NoError(t, Solve(a, b, c, d, y, NewWorkspace[T](n)))
		assert.True(t, tritest.BitsEqual(y, x), "n=%d: exact workspace differs", n)
		require.NoError(t, Solve(a, b, c, d, y, nil))
		assert.True(t, tritest.BitsEqual(y, x), "n=%d: nil workspace differs", n)
	}
}

func TestSolveHybrid(t *testing.T) {
	t.Run("float32", testSolveHybrid[float32])
	t.Run("float64", testSolveHybrid[float64])
}

// testSolveHybrid checks SolveHybrid for steps 0 … 12 on every size against
// tri.GTSV; steps = 0 must be tri.Thomas and steps ≥ ⌈log2 n⌉ must be Solve,
// bit for bit.
func testSolveHybrid[T tri.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	ws := NewWorkspace[T](maxSize)
	for _, n := range sizes {
		s := randSystem(r, n)
		want := reference(t, s)
		a, b, c, d := tritest.Conv[T](s.a), tritest.Conv[T](s.b), tritest.Conv[T](s.c), tritest.Conv[T](s.d)
		a0, b0, c0, d0 := tritest.Clone(a), tritest.Clone(b), tritest.Clone(c), tritest.Clone(d)

		thomas := make([]T, n)
		require.NoError(t, tri.Thomas(a, b, c, d, thomas, make([]T, n)))
		pcr := make([]T, n)
		require.NoError(t, Solve(a, b, c, d, pcr, ws))

		for steps := -1; steps <= 12; steps++ {
			x := make([]T, n)
			require.NoError(t, SolveHybrid(a, b, c, d, x, steps, ws), "n=%d steps=%d", n, steps)
			assert.LessOrEqual(t, tritest.RelErr(x, want), tol[T](), "n=%d steps=%d", n, steps)
			if steps <= 0 {
				assert.True(t, tritest.BitsEqual(x, thomas), "n=%d steps=%d: not Thomas", n, steps)
			}
			if steps >= Steps(n) {
				assert.True(t, tritest.BitsEqual(x, pcr), "n=%d steps=%d: not PCR", n, steps)
			}
			dx := tritest.Clone(d)
			require.NoError(t, SolveHybrid(a, b, c, dx, dx, steps, ws))
			assert.True(t, tritest.BitsEqual(dx, x), "n=%d steps=%d: aliased result differs", n, steps)
		}
		assert.True(t, tritest.BitsEqual(a, a0) && tritest.BitsEqual(b, b0) && tritest.BitsEqual(c, c0) && tritest.BitsEqual(d, d0),
			"n=%d: inputs modified", n)
	}
}

func TestIgnoredEntries(t *testing.T) {
	t.Run("float32", testIgnoredEntries[float32])
	t.Run("float64", testIgnoredEntries[float64])
}

// testIgnoredEntries checks that a[0] and c[n−1] are never read.
func testIgnoredEntries[T tri.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for _, n := range sizes {
		s := randSystem(r, n)
		a, b, c, d := tritest.Conv[T](s.a), tritest.Conv[T](s.b), tritest.Conv[T](s.c), tritest.Conv[T](s.d)
		for _, steps := range []int{0, 1, 3, 20} {
			a[0], c[n-1] = 0, 0
			x := make([]T, n)
			require.NoError(t, SolveHybrid(a, b, c, d, x, steps, nil))
			nan := T(math.NaN())
			a[0], c[n-1] = nan, nan
			y := make([]T, n)
			require.NoError(t, SolveHybrid(a, b, c, d, y, steps, nil))
			assert.True(t, tritest.BitsEqual(x, y), "n=%d steps=%d", n, steps)
		}
	}
}

func TestWorkspaceReuse(t *testing.T) {
	t.Run("float32", testWorkspaceReuse[float32])
	t.Run("float64", testWorkspaceReuse[float64])
}

// testWorkspaceReuse solves systems of many sizes, in a shuffled order,
// with one workspace, and compares with fresh workspaces bit for bit.
func testWorkspaceReuse[T tri.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	ws := NewWorkspace[T](maxSize)
	assert.Equal(t, maxSize, ws.Cap())
	order := append(append([]int(nil), sizes...), sizes...)
	r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	for _, n := range order {
		s := randSystem(r, n)
		a, b, c, d := tritest.Conv[T](s.a), tritest.Conv[T](s.b), tritest.Conv[T](s.c), tritest.Conv[T](s.d)
		x, y := make([]T, n), make([]T, n)
		require.NoError(t, Solve(a, b, c, d, x, ws))
		require.NoError(t, Solve(a, b, c, d, y, NewWorkspace[T](n)))
		assert.True(t, tritest.BitsEqual(x, y), "n=%d", n)
		steps := r.IntN(6)
		require.NoError(t, SolveHybrid(a, b, c, d, x, steps, ws))
		require.NoError(t, SolveHybrid(a, b, c, d, y, steps, NewWorkspace[T](n)))
		assert.True(t, tritest.BitsEqual(x, y), "n=%d steps=%d", n, steps)
	}
}

func TestNoAllocation(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	s := randSystem(r, 1025)
	ws := NewWorkspace[float64](2000)
	x := make([]float64, 1025)
	allocs := testing.AllocsPerRun(10, func() {
		if err := Solve(s.a, s.b, s.c, s.d, x, ws); err != nil {
			t.Fatal(err)
		}
		if err := SolveHybrid(s.a, s.b, s.c, s.d, x, 3, ws); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs)
}

func TestZeroPivot(t *testing.T) {
	t.Run("float32", testZeroPivot[float32])
	t.Run("float64", testZeroPivot[float64])
}

// pivotRow asserts that err is a *tri.PivotError wrapping tri.ErrZeroPivot
// and returns its row.
func pivotRow(t *testing.T, err error, msg string) int {
	t.Helper()
	var pe *tri.PivotError
	require.ErrorAs(t, err, &pe, msg)
	require.ErrorIs(t, err, tri.ErrZeroPivot, msg)
	return pe.Row
}

func testZeroPivot[T tri.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	// b all zero, a and c nonzero: b_0 is a divisor of the first step (and
	// the first Thomas pivot) for every n ≥ 2. The result is an error, not
	// NaN, and x is left alone.
	for _, n := range sizes {
		s := randSystem(r, n)
		a, c, d := tritest.Conv[T](s.a), tritest.Conv[T](s.c), tritest.Conv[T](s.d)
		b := make([]T, n)
		x := tritest.Fill[T](n, 42)
		msg := fmt.Sprint("n=", n)
		assert.Equal(t, 0, pivotRow(t, Solve(a, b, c, d, x, nil), msg))
		for _, steps := range []int{0, 1, 2, 5, 12} {
			assert.Equal(t, 0, pivotRow(t, SolveHybrid(a, b, c, d, x, steps, nil), msg))
		}
		assert.Equal(t, tritest.Fill[T](n, 42), x, "n=%d: x modified on error", n)
	}

	// A single bad divisor is reported at its row, by Solve and by every
	// hybrid (at step 1 every b_j is a divisor; with steps = 0 it is the
	// Thomas pivot of that row, or an earlier one made non-finite by it).
	n := 16
	for _, bad := range []T{0, T(math.NaN()), T(math.Inf(1))} {
		for _, row := range []int{0, 3, 8, 15} {
			s := randSystem(r, n)
			a, b, c, d := tritest.Conv[T](s.a), tritest.Conv[T](s.b), tritest.Conv[T](s.c), tritest.Conv[T](s.d)
			b[row] = bad
			msg := fmt.Sprint("row=", row, " bad=", bad)
			assert.Equal(t, row, pivotRow(t, Solve(a, b, c, d, make([]T, n), nil), msg))
			for _, steps := range []int{1, 2, 4} {
				assert.Equal(t, row, pivotRow(t, SolveHybrid(a, b, c, d, make([]T, n), steps, nil), msg))
			}
		}
	}

	// A zero divisor created by the reduction, at step 2 (stride 2):
	// b'_1 = b_1 − c_0·a_1/b_0 − a_2·c_1/b_2 = 1 − 0.5 − 0.5 = 0, and, in
	// the hybrid with one step, a zero Thomas pivot in both subsystems
	// {0, 2} (at row 2) and {1, 3} (at row 1): the smallest row is named.
	{
		a := []T{7, 1, 0.5, 0}
		b := []T{2, 1, 1, 1}
		c := []T{1, 1, 0, 7}
		d := []T{1, 1, 1, 1}
		assert.Equal(t, 1, pivotRow(t, Solve(a, b, c, d, make([]T, 4), nil), "step 2"))
		assert.Equal(t, 1, pivotRow(t, SolveHybrid(a, b, c, d, make([]T, 4), 1, nil), "hybrid 1"))
	}

	// n = 1 with b = 0.
	assert.Equal(t, 0, pivotRow(t, Solve([]T{1}, []T{0}, []T{1}, []T{1}, []T{0}, nil), "n=1"))
	assert.Equal(t, 0, pivotRow(t, SolveHybrid([]T{1}, []T{0}, []T{1}, []T{1}, []T{0}, 0, nil), "n=1"))
}

func TestProperty(t *testing.T) {
	t.Run("float32", testProperty[float32])
	t.Run("float64", testProperty[float64])
}

// testProperty solves 200 systems of random size in [1, 3000] by Solve
// and by SolveHybrid with a random number of steps.
func testProperty[T tri.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	ws := NewWorkspace[T](3000)
	for range 200 {
		n := 1 + r.IntN(3000)
		steps := r.IntN(14)
		s := randSystem(r, n)
		want := reference(t, s)
		a, b, c, d := tritest.Conv[T](s.a), tritest.Conv[T](s.b), tritest.Conv[T](s.c), tritest.Conv[T](s.d)
		x := make([]T, n)
		require.NoError(t, Solve(a, b, c, d, x, ws), "n=%d", n)
		require.LessOrEqual(t, tritest.RelErr(x, want), tol[T](), "n=%d", n)
		require.NoError(t, SolveHybrid(a, b, c, d, x, steps, ws), "n=%d steps=%d", n, steps)
		require.LessOrEqual(t, tritest.RelErr(x, want), tol[T](), "n=%d steps=%d", n, steps)
	}
}

func TestPanics(t *testing.T) {
	s := randSystem(rand.New(rand.NewPCG(8, 8)), 10)
	x := make([]float64, 10)
	assert.Panics(t, func() { _ = Solve(s.a, s.b, s.c, s.d, x, NewWorkspace[float64](9)) })
	assert.Panics(t, func() { _ = SolveHybrid(s.a, s.b, s.c, s.d, x, 2, NewWorkspace[float64](9)) })
	assert.Panics(t, func() { _ = Solve(s.a[:9], s.b, s.c, s.d, x, nil) })
	assert.Panics(t, func() { _ = SolveHybrid(s.a, s.b, s.c, s.d, x[:9], 1, nil) })
	assert.Panics(t, func() { NewWorkspace[float32](-1) })
	assert.NoError(t, Solve[float64](nil, nil, nil, nil, nil, NewWorkspace[float64](0)))
	assert.NoError(t, SolveHybrid[float64](nil, nil, nil, nil, nil, 3, nil))
}

func BenchmarkSolve(b *testing.B) {
	b.Run("float32", benchSolve[float32])
	b.Run("float64", benchSolve[float64])
}

func benchSolve[T tri.Float](b *testing.B) {
	const n = 1024
	s := randSystem(rand.New(rand.NewPCG(9, 9)), n)
	a, bb, c, d := tritest.Conv[T](s.a), tritest.Conv[T](s.b), tritest.Conv[T](s.c), tritest.Conv[T](s.d)
	x := make([]T, n)
	ws := NewWorkspace[T](n)
	b.ReportAllocs()
	for b.Loop() {
		if err := Solve(a, bb, c, d, x, ws); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e6, "MRows/s")
}

// BenchmarkSolveHybrid measures the PCR→Thomas hybrid, n = 1024, for a
// few step counts.
func BenchmarkSolveHybrid(b *testing.B) {
	for _, steps := range []int{0, 3, 6} {
		b.Run(fmt.Sprintf("float32/steps=%d", steps), func(b *testing.B) { benchHybrid[float32](b, steps) })
		b.Run(fmt.Sprintf("float64/steps=%d", steps), func(b *testing.B) { benchHybrid[float64](b, steps) })
	}
}

func benchHybrid[T tri.Float](b *testing.B, steps int) {
	const n = 1024
	s := randSystem(rand.New(rand.NewPCG(9, 9)), n)
	a, bb, c, d := tritest.Conv[T](s.a), tritest.Conv[T](s.b), tritest.Conv[T](s.c), tritest.Conv[T](s.d)
	x := make([]T, n)
	ws := NewWorkspace[T](n)
	b.ReportAllocs()
	for b.Loop() {
		if err := SolveHybrid(a, bb, c, d, x, steps, ws); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e6, "MRows/s")
}
