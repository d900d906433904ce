package wangmou

import (
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
		Grows:        true,
		Tol:          tritest.ByPrecision[T](1e-4, 1e-11),
		Stable:       true,
	}
}

// TestSolve runs the checks every solver shares (accuracy, aliasing,
// workspaces, ignored entries, breakdowns, allocation, backward
// stability).
func TestSolve(t *testing.T) {
	tritest.Both(t, solver[float32](), solver[float64]())
}

// The triads hold the invariants of the package documentation: after step k
// every equation of a block [lo, hi] is satisfied by the exact solution
// with its outside unknowns x_{lo−1} and x_{hi+1}.
func TestTriadInvariants(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{8, 13, 64} {
		s := tritest.RandSystem(r, n, 4)
		x := tritest.Reference(t, s)
		at := func(i int) float64 {
			if i < 0 || i >= n {
				return 0
			}
			return x[i]
		}
		N := padded(n)
		cur := make([]triad[float64], N)
		for i := range N {
			e := eqn[float64]{0, 1, 0, 0}
			if i < n {
				e = eqn[float64]{s.A[i], s.B[i], s.C[i], s.D[i]}
			}
			cur[i] = triad[float64]{e, e, e}
		}
		cur[0].l.a, cur[0].c.a, cur[0].r.a = 0, 0, 0
		cur[n-1].l.c, cur[n-1].c.c, cur[n-1].r.c = 0, 0, 0
		nxt := make([]triad[float64], N)
		for u := 1; u < N; u *= 2 {
			for lo := 0; lo < N; lo += 2 * u {
				for i := lo; i < lo+u; i++ {
					p, q, bad := merge(cur[i], cur[i+u])
					require.Zero(t, bad)
					nxt[i], nxt[i+u] = p, q
				}
			}
			cur, nxt = nxt, cur
			for i := range N {
				lo := i &^ (2*u - 1)
				hi := lo + 2*u - 1
				res := func(e eqn[float64], m int) float64 {
					return e.a*at(lo-1) + e.b*at(m) + e.c*at(hi+1) - e.d
				}
				assert.InDelta(t, 0, res(cur[i].l, lo), 1e-12, "L n=%d u=%d i=%d", n, u, i)
				assert.InDelta(t, 0, res(cur[i].c, i), 1e-12, "C n=%d u=%d i=%d", n, u, i)
				assert.InDelta(t, 0, res(cur[i].r, hi), 1e-12, "R n=%d u=%d i=%d", n, u, i)
				assert.Equal(t, cur[lo].l, cur[i].l, "L shared by the block")
				assert.Equal(t, cur[lo].r, cur[i].r, "R shared by the block")
			}
		}
	}
}

// A singular 2×2 block: the zero appears during the reduction. (Breakdowns
// at a bad diagonal entry are checked by the driver.)
func TestSingularBlock(t *testing.T) {
	t.Run("float64", testSingularBlock[float64])
	t.Run("float32", testSingularBlock[float32])
}

func testSingularBlock[T tri.Float](t *testing.T) {
	x := tritest.Fill[T](2, 7)
	assert.Equal(t, 1, tritest.PivotRow(t, Solve([]T{0, 1}, []T{1, 1}, []T{1, 0}, []T{1, 2}, x, nil)))
	assert.Equal(t, tritest.Fill[T](2, 7), x, "x written on error")
}
