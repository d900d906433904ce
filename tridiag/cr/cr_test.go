package cr

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

func TestIgnoredEntries(t *testing.T) {
	t.Run("float32", testIgnoredEntries[float32])
	t.Run("float64", testIgnoredEntries[float64])
}

// testIgnoredEntries checks that a[0] and c[n−1] are never read.
func testIgnoredEntries[T tri.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	for _, n := range sizes {
		s := randSystem(r, n)
		a, b, c, d := tritest.Conv[T](s.a), tritest.Conv[T](s.b), tritest.Conv[T](s.c), tritest.Conv[T](s.d)
		a[0], c[n-1] = 0, 0
		x := make([]T, n)
		require.NoError(t, Solve(a, b, c, d, x, nil))
		nan := T(math.NaN())
		a[0], c[n-1] = nan, nan
		y := make([]T, n)
		require.NoError(t, Solve(a, b, c, d, y, nil))
		assert.True(t, tritest.BitsEqual(x, y), "n=%d", n)
	}
}

func TestWorkspaceReuse(t *testing.T) {
	t.Run("float32", testWorkspaceReuse[float32])
	t.Run("float64", testWorkspaceReuse[float64])
}

// testWorkspaceReuse solves systems of many sizes, in a shuffled order,
// with one workspace, and compares with fresh workspaces bit for bit.
func testWorkspaceReuse[T tri.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
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
	}
}

func TestNoAllocation(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	s := randSystem(r, 1025)
	ws := NewWorkspace[float64](2000)
	x := make([]float64, 1025)
	allocs := testing.AllocsPerRun(10, func() {
		if err := Solve(s.a, s.b, s.c, s.d, x, ws); err != nil {
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
	r := rand.New(rand.NewPCG(5, 5))
	// b all zero, a and c nonzero: the first eliminated equation (row 0)
	// is a zero divisor for every n ≥ 3. The result is an error, not NaN,
	// and x is left alone.
	for _, n := range sizes {
		if n < 3 {
			continue
		}
		s := randSystem(r, n)
		a, c, d := tritest.Conv[T](s.a), tritest.Conv[T](s.c), tritest.Conv[T](s.d)
		b := make([]T, n)
		x := tritest.Fill[T](n, 42)
		row := pivotRow(t, Solve(a, b, c, d, x, nil), fmt.Sprint("n=", n))
		assert.Equal(t, 0, row, "n=%d", n)
		assert.Equal(t, tritest.Fill[T](n, 42), x, "n=%d: x modified on error", n)
	}

	// A single bad divisor in an eliminated equation (rows 0, 2, 4, … are
	// eliminated at level 0) is reported at its row.
	n := 16
	for _, bad := range []T{0, T(math.NaN()), T(math.Inf(-1))} {
		for _, row := range []int{0, 4, 10, 14} {
			s := randSystem(r, n)
			a, b, c, d := tritest.Conv[T](s.a), tritest.Conv[T](s.b), tritest.Conv[T](s.c), tritest.Conv[T](s.d)
			b[row] = bad
			x := make([]T, n)
			assert.Equal(t, row, pivotRow(t, Solve(a, b, c, d, x, nil), fmt.Sprint(row)))
		}
	}

	// A zero divisor at level 1: row 1 (kept at level 0, eliminated at
	// level 1) becomes b' = b1 − c0·a1/b0 − a2·c1/b2 = 1 − 0.5 − 0.5 = 0.
	{
		a := []T{0, 1, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5}
		b := []T{2, 1, 1, 4, 4, 4, 4, 4}
		c := []T{1, 1, 0.5, 0.5, 0.5, 0.5, 0.5, 0}
		d := tritest.Fill[T](8, 1)
		assert.Equal(t, 1, pivotRow(t, Solve(a, b, c, d, make([]T, 8), nil), "level 1"))
	}

	// n = 1 with b = 0.
	assert.Equal(t, 0, pivotRow(t, Solve([]T{1}, []T{0}, []T{1}, []T{1}, []T{0}, nil), "n=1"))

	// n = 2, singular: the determinant of the final two-equation system is
	// zero, reported at its second row.
	assert.Equal(t, 1, pivotRow(t, Solve([]T{0, 1}, []T{1, 1}, []T{1, 0}, []T{1, 2}, []T{0, 0}, nil), "n=2"))

	// n = 2 with b = 0 is regular and solved exactly: x = (d1/a1, d0/c0).
	x := make([]T, 2)
	require.NoError(t, Solve([]T{0, 2}, []T{0, 0}, []T{4, 0}, []T{1, 1}, x, nil))
	assert.Equal(t, []T{0.5, 0.25}, x)
}

func TestProperty(t *testing.T) {
	t.Run("float32", testProperty[float32])
	t.Run("float64", testProperty[float64])
}

// testProperty solves 200 systems of random size in [1, 3000].
func testProperty[T tri.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	ws := NewWorkspace[T](3000)
	for range 200 {
		n := 1 + r.IntN(3000)
		s := randSystem(r, n)
		want := reference(t, s)
		x := make([]T, n)
		require.NoError(t, Solve(tritest.Conv[T](s.a), tritest.Conv[T](s.b), tritest.Conv[T](s.c), tritest.Conv[T](s.d), x, ws), "n=%d", n)
		require.LessOrEqual(t, tritest.RelErr(x, want), tol[T](), "n=%d", n)
	}
}

func TestPanics(t *testing.T) {
	s := randSystem(rand.New(rand.NewPCG(7, 7)), 10)
	x := make([]float64, 10)
	assert.Panics(t, func() { _ = Solve(s.a, s.b, s.c, s.d, x, NewWorkspace[float64](9)) })
	assert.Panics(t, func() { _ = Solve(s.a[:9], s.b, s.c, s.d, x, nil) })
	assert.Panics(t, func() { _ = Solve(s.a, s.b, s.c, s.d, x[:9], nil) })
	assert.Panics(t, func() { NewWorkspace[float32](-1) })
	assert.NoError(t, Solve[float64](nil, nil, nil, nil, nil, NewWorkspace[float64](0)))
}

func BenchmarkSolve(b *testing.B) {
	b.Run("float32", benchSolve[float32])
	b.Run("float64", benchSolve[float64])
}

func benchSolve[T tri.Float](b *testing.B) {
	const n = 1024
	s := randSystem(rand.New(rand.NewPCG(8, 8)), n)
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
