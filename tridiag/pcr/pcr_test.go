package pcr

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/tridiag/internal/tri"
	"github.com/bandsolve/bandsolve/tridiag/internal/tritest"
)

// solver is Solve under the driver of package tritest.
func solver[T tri.Float]() tritest.Solver[T, *Workspace[T]] {
	return tritest.Solver[T, *Workspace[T]]{
		Solve:        func(a, b, c, d, x []T, _ int, ws *Workspace[T]) error { return Solve(a, b, c, d, x, ws) },
		NewWorkspace: func(n, _ int) *Workspace[T] { return NewWorkspace[T](n) },
		Tol:          tritest.ByPrecision[T](1e-5, 1e-12),
	}
}

// hybridSteps are the step counts of SolveHybrid that the tests run on
// systems of up to 5000 rows: a negative count (plain Thomas, as 0),
// 0 … 12, and 20 (more than any system here needs: plain PCR).
// largeSteps are those run on larger systems.
var (
	hybridSteps = []int{-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 20}
	largeSteps  = []int{0, 1, 5, 12, 20}
)

// hybrid is SolveHybrid under the driver, its option the number of PCR
// steps.
func hybrid[T tri.Float]() tritest.Solver[T, *Workspace[T]] {
	s := solver[T]()
	s.Solve = func(a, b, c, d, x []T, steps int, ws *Workspace[T]) error {
		return SolveHybrid(a, b, c, d, x, steps, ws)
	}
	s.Opts = func(n int) []int {
		if n > 5000 {
			return largeSteps
		}
		return hybridSteps
	}
	return s
}

// TestSolve runs the checks every solver shares (accuracy, aliasing,
// workspaces, ignored entries, breakdowns, allocation) on Solve and on
// SolveHybrid with every step count. PCR is not backward stable (see the
// package documentation), so that check is not run.
func TestSolve(t *testing.T) {
	tritest.Both(t, solver[float32](), solver[float64]())
}

func TestSolveHybrid(t *testing.T) {
	tritest.Both(t, hybrid[float32](), hybrid[float64]())
}

func TestSteps(t *testing.T) {
	for n, want := range map[int]int{0: 0, 1: 0, 2: 1, 3: 2, 4: 2, 5: 3, 8: 3, 9: 4, 1024: 10, 1025: 11, 4097: 13} {
		assert.Equal(t, want, Steps(n), "n=%d", n)
	}
}

func TestHybridEnds(t *testing.T) {
	t.Run("float32", testHybridEnds[float32])
	t.Run("float64", testHybridEnds[float64])
}

// testHybridEnds checks that SolveHybrid with steps ≤ 0 is tri.Thomas and
// with steps ≥ ⌈log2 n⌉ is Solve, bit for bit.
func testHybridEnds[T tri.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	ws := NewWorkspace[T](70000)
	for _, n := range tritest.Sizes {
		a, b, c, d := tritest.As[T](tritest.RandSystem(r, n, 4))
		thomas := make([]T, n)
		require.NoError(t, tri.Thomas(a, b, c, d, thomas, make([]T, n)))
		pcr := make([]T, n)
		require.NoError(t, Solve(a, b, c, d, pcr, ws))
		for _, steps := range hybridSteps {
			if steps > 0 && steps < Steps(n) {
				continue
			}
			x := make([]T, n)
			require.NoError(t, SolveHybrid(a, b, c, d, x, steps, ws), "n=%d steps=%d", n, steps)
			if steps <= 0 {
				assert.True(t, tritest.BitsEqual(x, thomas), "n=%d steps=%d: not Thomas", n, steps)
			}
			if steps >= Steps(n) {
				assert.True(t, tritest.BitsEqual(x, pcr), "n=%d steps=%d: not PCR", n, steps)
			}
		}
	}
}

func TestZeroPivot(t *testing.T) {
	t.Run("float32", testZeroPivot[float32])
	t.Run("float64", testZeroPivot[float64])
}

func testZeroPivot[T tri.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	// b all zero, a and c nonzero: b_0 is a divisor of the first step (and
	// the first Thomas pivot) for every n ≥ 2. The result is an error, not
	// NaN, and x is left alone.
	for _, n := range tritest.Sizes {
		a, _, c, d := tritest.As[T](tritest.RandSystem(r, n, 4))
		b := make([]T, n)
		x := tritest.Fill[T](n, 42)
		msg := fmt.Sprint("n=", n)
		assert.Equal(t, 0, tritest.PivotRow(t, Solve(a, b, c, d, x, nil), msg))
		for _, steps := range []int{0, 1, 2, 5, 12} {
			assert.Equal(t, 0, tritest.PivotRow(t, SolveHybrid(a, b, c, d, x, steps, nil), msg))
		}
		assert.Equal(t, tritest.Fill[T](n, 42), x, "n=%d: x modified on error", n)
	}

	// A single zero divisor in a random system is reported at its row, by
	// Solve and by every hybrid with at least one step (at step 1 every b_j
	// is a divisor).
	n := 16
	for _, row := range []int{0, 3, 8, 15} {
		a, b, c, d := tritest.As[T](tritest.RandSystem(r, n, 4))
		b[row] = 0
		msg := fmt.Sprint("row=", row)
		assert.Equal(t, row, tritest.PivotRow(t, Solve(a, b, c, d, make([]T, n), nil), msg))
		for _, steps := range []int{1, 2, 4} {
			assert.Equal(t, row, tritest.PivotRow(t, SolveHybrid(a, b, c, d, make([]T, n), steps, nil), msg))
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
		assert.Equal(t, 1, tritest.PivotRow(t, Solve(a, b, c, d, make([]T, 4), nil), "step 2"))
		assert.Equal(t, 1, tritest.PivotRow(t, SolveHybrid(a, b, c, d, make([]T, 4), 1, nil), "hybrid 1"))
	}
}

func TestWorkspace(t *testing.T) {
	assert.Equal(t, 4097, NewWorkspace[float64](4097).Cap())
	assert.Panics(t, func() { NewWorkspace[float32](-1) })
}

func BenchmarkSolve(b *testing.B) {
	b.Run("float32", func(b *testing.B) { tritest.Bench(b, solver[float32](), 1024, 0) })
	b.Run("float64", func(b *testing.B) { tritest.Bench(b, solver[float64](), 1024, 0) })
}

// BenchmarkSolveHybrid measures the PCR→Thomas hybrid, n = 1024, for a
// few step counts.
func BenchmarkSolveHybrid(b *testing.B) {
	for _, steps := range []int{0, 3, 6} {
		b.Run(fmt.Sprintf("float32/steps=%d", steps), func(b *testing.B) { tritest.Bench(b, hybrid[float32](), 1024, steps) })
		b.Run(fmt.Sprintf("float64/steps=%d", steps), func(b *testing.B) { tritest.Bench(b, hybrid[float64](), 1024, steps) })
	}
}
