package wangmou

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/bandsolve/bandsolve/tridiag/internal/tri"
	"github.com/bandsolve/bandsolve/tridiag/internal/tritest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSolveMatchesGTSV(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range sizes {
		s := randSystem(r, n)
		want := reference(t, s)
		t.Run(fmt.Sprint("n=", n), func(t *testing.T) {
			t.Run("float64", func(t *testing.T) { checkSolve[float64](t, s, want) })
			t.Run("float32", func(t *testing.T) { checkSolve[float32](t, s, want) })
		})
	}
}

func checkSolve[T tri.Float](t *testing.T, s system, want []float64) {
	n := len(s.b)
	x := make([]T, n)
	require.NoError(t, Solve(tritest.Conv[T](s.a), tritest.Conv[T](s.b), tritest.Conv[T](s.c), tritest.Conv[T](s.d), x, NewWorkspace[T](n)))
	assert.Less(t, tritest.RelErr(x, want), tol[T]())
}

func TestSolveRandomSizes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	ws64, ws32 := NewWorkspace[float64](0), NewWorkspace[float32](0)
	for range 200 {
		n := 1 + r.IntN(5000)
		s := randSystem(r, n)
		want := reference(t, s)
		x64 := make([]float64, n)
		require.NoError(t, Solve(s.a, s.b, s.c, s.d, x64, ws64))
		assert.Less(t, tritest.RelErr(x64, want), tol[float64](), "n=%d", n)
		x32 := make([]float32, n)
		require.NoError(t, Solve(tritest.Conv[float32](s.a), tritest.Conv[float32](s.b), tritest.Conv[float32](s.c), tritest.Conv[float32](s.d), x32, ws32))
		assert.Less(t, tritest.RelErr(x32, want), tol[float32](), "n=%d", n)
	}
}

func TestAliasInputsAndWorkspace(t *testing.T) {
	t.Run("float64", testAliasInputsAndWorkspace[float64])
	t.Run("float32", testAliasInputsAndWorkspace[float32])
}

func testAliasInputsAndWorkspace[T tri.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	shared := NewWorkspace[T](3) // too small for most: must grow
	for _, n := range []int{1, 2, 3, 17, 100, 1025, 4097, 9} {
		sys := randSystem(r, n)
		a, b, c, d := tritest.Conv[T](sys.a), tritest.Conv[T](sys.b), tritest.Conv[T](sys.c), tritest.Conv[T](sys.d)
		a0, b0, c0, d0 := tritest.Clone(a), tritest.Clone(b), tritest.Clone(c), tritest.Clone(d)
		want := make([]T, n)
		require.NoError(t, Solve(a, b, c, d, want, NewWorkspace[T](n)))
		assert.True(t, tritest.SameBits(a, a0) && tritest.SameBits(b, b0) && tritest.SameBits(c, c0) && tritest.SameBits(d, d0), "inputs changed, n=%d", n)
		x := make([]T, n)
		require.NoError(t, Solve(a, b, c, d, x, nil))
		assert.True(t, tritest.SameBits(x, want), "nil ws n=%d", n)
		require.NoError(t, Solve(a, b, c, d, x, shared))
		assert.True(t, tritest.SameBits(x, want), "shared ws n=%d", n)
		dx := tritest.Clone(d)
		require.NoError(t, Solve(a, b, c, dx, dx, shared))
		assert.True(t, tritest.SameBits(dx, want), "alias n=%d", n)
	}
}

func TestIgnoredCoefficients(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 2, 5, 64, 1000} {
		s := randSystem(r, n)
		x1, x2 := make([]float64, n), make([]float64, n)
		s.a[0], s.c[n-1] = 1e30, -1e30
		require.NoError(t, Solve(s.a, s.b, s.c, s.d, x1, nil))
		s.a[0], s.c[n-1] = 0, 0
		require.NoError(t, Solve(s.a, s.b, s.c, s.d, x2, nil))
		assert.True(t, tritest.SameBits(x1, x2), "n=%d", n)
	}
}

func TestEmptyAndBadLengths(t *testing.T) {
	assert.NoError(t, Solve[float64](nil, nil, nil, nil, nil, nil))
	s := randSystem(rand.New(rand.NewPCG(1, 1)), 10)
	assert.Panics(t, func() { _ = Solve(s.a, s.b, s.c, s.d, make([]float64, 9), nil) })
}

// The triads hold the invariants of the package documentation: after step k
// every equation of a block [lo, hi] is satisfied by the exact solution
// with its outside unknowns x_{lo−1} and x_{hi+1}.
func TestTriadInvariants(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{8, 13, 64} {
		s := randSystem(r, n)
		x := reference(t, s)
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
				e = eqn[float64]{s.a[i], s.b[i], s.c[i], s.d[i]}
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

func TestZeroPivot(t *testing.T) {
	t.Run("float64", testZeroPivot[float64])
	t.Run("float32", testZeroPivot[float32])
}

func testZeroPivot[T tri.Float](t *testing.T) {
	// A diagonal matrix with one zero on the diagonal must name that row.
	for _, n := range []int{1, 2, 3, 9, 100} {
		for _, k := range []int{0, n / 2, n - 1} {
			b := make([]T, n)
			for i := range b {
				b[i] = 2
			}
			b[k] = 0
			a, c, d := make([]T, n), make([]T, n), make([]T, n)
			for i := range d {
				d[i] = 1
			}
			x := make([]T, n)
			for i := range x {
				x[i] = 7
			}
			err := Solve(a, b, c, d, x, nil)
			var pe *tri.PivotError
			require.True(t, errors.As(err, &pe), "n=%d k=%d: %v", n, k, err)
			assert.ErrorIs(t, err, tri.ErrZeroPivot)
			assert.Equal(t, k, pe.Row, "n=%d", n)
			for i := range x {
				require.Equal(t, T(7), x[i], "x must not be written on error")
			}
		}
	}
	// A singular 2×2 block: the zero appears during the reduction.
	err := Solve([]T{0, 1}, []T{1, 1}, []T{1, 0}, []T{1, 2}, make([]T, 2), nil)
	var pe *tri.PivotError
	require.True(t, errors.As(err, &pe), "%v", err)
	assert.Equal(t, 1, pe.Row)
	// Zero diagonal (matrix 16 of the stability suite).
	r := rand.New(rand.NewPCG(15, 16))
	for _, n := range []int{4, 64, 1000} {
		s := randSystem(r, n)
		for i := range s.b {
			s.b[i] = 0
		}
		err := Solve(tritest.Conv[T](s.a), tritest.Conv[T](s.b), tritest.Conv[T](s.c), tritest.Conv[T](s.d), make([]T, n), nil)
		require.True(t, errors.As(err, &pe), "n=%d: %v", n, err)
		assert.True(t, pe.Row >= 0 && pe.Row < n)
	}
}

// Small systems with entries in {−1, 0, 1} meet exact zero divisors often;
// Solve must then report them, and otherwise return finite values.
func TestNeverSilentNaN(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	pick := func() float64 { return float64(r.IntN(3) - 1) }
	failures := 0
	for range 2000 {
		n := 1 + r.IntN(40)
		s := system{make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)}
		for i := range n {
			s.a[i], s.b[i], s.c[i], s.d[i] = pick(), pick(), pick(), pick()
		}
		x64, x32 := make([]float64, n), make([]float32, n)
		err64 := Solve(s.a, s.b, s.c, s.d, x64, nil)
		err32 := Solve(tritest.Conv[float32](s.a), tritest.Conv[float32](s.b), tritest.Conv[float32](s.c), tritest.Conv[float32](s.d), x32, nil)
		for _, c := range []struct {
			err    error
			finite bool
		}{{err64, tritest.AllFinite(x64)}, {err32, tritest.AllFinite(x32)}} {
			if c.err == nil {
				require.True(t, c.finite, "n=%d: non-finite solution without an error\n%v", n, s)
				continue
			}
			var pe *tri.PivotError
			require.True(t, errors.As(c.err, &pe), "%v", c.err)
			require.ErrorIs(t, c.err, tri.ErrZeroPivot)
			require.True(t, pe.Row >= 0 && pe.Row < n, "row %d of %d", pe.Row, n)
			failures++
		}
	}
	assert.Greater(t, failures, 100, "the test should meet many breakdowns")
}
