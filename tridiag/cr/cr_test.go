package cr

import (
	"fmt"
	"math/bits"
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
		PivotRow:     func(n, k, _ int) int { return pivotRow(n, k) },
		Stable:       true,
	}
}

// pivotRow is the row Solve names when b[k] is the only bad divisor of an
// n-row system: k, unless row k survives to a last level of two equations,
// whose determinant is named at the second row of that level.
func pivotRow(n, k int) int {
	top, cnt := 0, n
	for cnt > 2 {
		cnt /= 2
		top++
	}
	if cnt == 2 && bits.TrailingZeros(uint(k+1)) >= top {
		return 2<<top - 1
	}
	return k
}

// TestSolve runs the checks every solver shares (accuracy, aliasing,
// workspaces, ignored entries, breakdowns, allocation, backward stability).
func TestSolve(t *testing.T) {
	tritest.Both(t, solver[float32](), solver[float64]())
}

func TestPivotRowRule(t *testing.T) {
	// n = 2: one level of two equations, rows 0 and 1.
	assert.Equal(t, 1, pivotRow(2, 0))
	// n = 4: level 1 holds rows 1 and 3; rows 0 and 2 are eliminated at
	// level 0.
	assert.Equal(t, []int{0, 3, 2, 3}, []int{pivotRow(4, 0), pivotRow(4, 1), pivotRow(4, 2), pivotRow(4, 3)})
	// n = 7: level 1 has rows 1, 3, 5 and level 2 row 3 alone.
	for k := range 7 {
		assert.Equal(t, k, pivotRow(7, k))
	}
}

func TestZeroPivot(t *testing.T) {
	t.Run("float32", testZeroPivot[float32])
	t.Run("float64", testZeroPivot[float64])
}

func testZeroPivot[T tri.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	// b all zero, a and c nonzero: the first eliminated equation (row 0)
	// is a zero divisor for every n ≥ 3. The result is an error, not NaN,
	// and x is left alone.
	for _, n := range tritest.Sizes {
		if n < 3 {
			continue
		}
		a, _, c, d := tritest.As[T](tritest.RandSystem(r, n, 4))
		b := make([]T, n)
		x := tritest.Fill[T](n, 42)
		assert.Equal(t, 0, tritest.PivotRow(t, Solve(a, b, c, d, x, nil), "n=%d", n), "n=%d", n)
		assert.Equal(t, tritest.Fill[T](n, 42), x, "n=%d: x modified on error", n)
	}

	// A single zero divisor in a random system, in an eliminated equation
	// (rows 0, 2, 4, … are eliminated at level 0), is reported at its row.
	n := 16
	for _, row := range []int{0, 4, 10, 14} {
		a, b, c, d := tritest.As[T](tritest.RandSystem(r, n, 4))
		b[row] = 0
		assert.Equal(t, row, tritest.PivotRow(t, Solve(a, b, c, d, make([]T, n), nil), fmt.Sprint(row)))
	}

	// A zero divisor at level 1: row 1 (kept at level 0, eliminated at
	// level 1) becomes b' = b1 − c0·a1/b0 − a2·c1/b2 = 1 − 0.5 − 0.5 = 0.
	{
		a := []T{0, 1, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5}
		b := []T{2, 1, 1, 4, 4, 4, 4, 4}
		c := []T{1, 1, 0.5, 0.5, 0.5, 0.5, 0.5, 0}
		d := tritest.Fill[T](8, 1)
		assert.Equal(t, 1, tritest.PivotRow(t, Solve(a, b, c, d, make([]T, 8), nil), "level 1"))
	}

	// n = 2, singular: the determinant of the final two-equation system is
	// zero, reported at its second row.
	assert.Equal(t, 1, tritest.PivotRow(t, Solve([]T{0, 1}, []T{1, 1}, []T{1, 0}, []T{1, 2}, []T{0, 0}, nil), "n=2"))

	// n = 2 with b = 0 is regular and solved exactly: x = (d1/a1, d0/c0).
	x := make([]T, 2)
	require.NoError(t, Solve([]T{0, 2}, []T{0, 0}, []T{4, 0}, []T{1, 1}, x, nil))
	assert.Equal(t, []T{0.5, 0.25}, x)
}

func TestWorkspace(t *testing.T) {
	assert.Equal(t, 4097, NewWorkspace[float64](4097).Cap())
	assert.Panics(t, func() { NewWorkspace[float32](-1) })
}

func BenchmarkSolve(b *testing.B) {
	b.Run("float32", func(b *testing.B) { tritest.Bench(b, solver[float32](), 1024, 0) })
	b.Run("float64", func(b *testing.B) { tritest.Bench(b, solver[float64](), 1024, 0) })
}
