package pivotpart

import (
	"testing"

	"github.com/bandsolve/bandsolve/tridiag/internal/tri"
	"github.com/bandsolve/bandsolve/tridiag/internal/tritest"
)

// sizes are the partition sizes every test runs.
var sizes = []int{4, 8, 16, 32}

// solver is Solve under the driver of package tritest, its option the
// partition size.
func solver[T tri.Float]() tritest.Solver[T, *Workspace[T]] {
	return tritest.Solver[T, *Workspace[T]]{
		Solve:        Solve[T],
		NewWorkspace: func(n, m int) *Workspace[T] { return NewWorkspace[T](n, m) },
		Opts:         func(int) []int { return sizes },
		Tol:          tritest.ByPrecision[T](1e-5, 1e-13),
		Stable:       true,
		Pivots:       true,
	}
}

// TestDriver runs the checks every solver shares (accuracy, aliasing,
// workspaces, ignored entries, breakdowns, allocation, backward
// stability) with every partition size.
func TestDriver(t *testing.T) {
	tritest.Both(t, solver[float32](), solver[float64]())
}
