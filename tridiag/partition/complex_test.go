package partition

import (
	"errors"
	"fmt"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/tridiag/internal/tri"
)

// csys is one complex system in complex128.
type csys struct{ a, b, c, d []complex128 }

// randomC is an n-row system with entries of modulus below √2 and b
// shifted by dom (dominant by rows in Cabs1 when Re dom ≥ 6).
func randomC(r *rand.Rand, n int, dom complex128) csys {
	rnd := func() complex128 { return complex(r.Float64()*2-1, r.Float64()*2-1) }
	s := csys{make([]complex128, n), make([]complex128, n), make([]complex128, n), make([]complex128, n)}
	for i := range n {
		s.a[i], s.b[i], s.c[i], s.d[i] = rnd(), rnd()+dom, rnd(), rnd()
	}
	return s
}

func convC[T tri.Complex](v []complex128) []T {
	out := make([]T, len(v))
	for i, z := range v {
		out[i] = T(z)
	}
	return out
}

// relErrC is max |x − y| / max |y|, in complex128.
func relErrC[T tri.Complex](x []T, y []complex128) float64 {
	var num, den float64
	for i := range y {
		num = max(num, cmplx.Abs(complex128(x[i])-y[i]))
		den = max(den, cmplx.Abs(y[i]))
	}
	return num / den
}

// gtsvRef solves s by tri.GTSVC in complex128: the independent reference.
func gtsvRef(t *testing.T, s csys) []complex128 {
	t.Helper()
	n := len(s.b)
	x := make([]complex128, n)
	require.NoError(t, tri.GTSVC(s.a, s.b, s.c, s.d, x, tri.NewPivotWork[complex128](n)))
	return x
}

// TestSolveC compares SolveC and SolveBoundedC with GTSV on systems
// dominant by modulus, for every chunk size and sizes around the chunk
// boundaries; SolveBoundedC must pass them and give SolveC's bits.
func TestSolveC(t *testing.T) {
	testSolveC[complex64](t, 2e-5)
	testSolveC[complex128](t, 1e-13)
}

func testSolveC[T tri.Complex](t *testing.T, tol float64) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 15, 16, 17, 33, 37, 256, 1000} {
		s := randomC(r, n, 6+2i)
		want := gtsvRef(t, s)
		a, b, c, d := convC[T](s.a), convC[T](s.b), convC[T](s.c), convC[T](s.d)
		for _, p := range append(chunkSizes, n, n+5) {
			name := fmt.Sprintf("%T/n=%d/p=%d", T(0), n, p)
			x := make([]T, n)
			require.NoError(t, SolveC(a, b, c, d, x, p, NewWorkspaceC[T](n)), name)
			assert.Less(t, relErrC(x, want), tol, name)
			xb := make([]T, n)
			require.NoError(t, SolveBoundedC(a, b, c, d, xb, p, nil), name)
			require.Equal(t, x, xb, name)
			// In place: x is d.
			dd := append([]T(nil), d...)
			require.NoError(t, SolveC(a, b, c, dd, dd, p, nil), name)
			require.Equal(t, x, dd, name)
		}
	}
}

// TestSolveCIgnoresEnds: a[0] and c[n−1] are not read.
func TestSolveCIgnoresEnds(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	s := randomC(r, 50, 6)
	x := make([]complex128, 50)
	require.NoError(t, SolveC(s.a, s.b, s.c, s.d, x, 16, nil))
	s.a[0], s.c[49] = cmplx.NaN(), cmplx.Inf()
	y := make([]complex128, 50)
	require.NoError(t, SolveC(s.a, s.b, s.c, s.d, y, 16, nil))
	require.Equal(t, x, y)
}

// TestSolveCBreakdown plants a zero pivot inside a chunk and one in the
// reduced system, and requires the rows and x untouched.
func TestSolveCBreakdown(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	s := randomC(r, 40, 6)
	// Row 21 (chunk 1, interior): a = c = 0 and b = 0, a zero pivot.
	s.a[21], s.b[21] = 0, 0
	x := make([]complex128, 40)
	for i := range x {
		x[i] = 7
	}
	err := SolveC(s.a, s.b, s.c, s.d, x, 16, nil)
	var pe *tri.PivotError
	require.True(t, errors.As(err, &pe), "%v", err)
	assert.Equal(t, 21, pe.Row)
	assert.ErrorIs(t, err, tri.ErrZeroPivot)
	for _, v := range x {
		require.Equal(t, complex128(7), v)
	}
	// A first row of a chunk (32) decoupled with a zero diagonal: the
	// reduced system's divisor.
	s = randomC(r, 40, 6)
	s.a[32], s.b[32], s.c[32] = 0, 0, 0
	err = SolveC(s.a, s.b, s.c, s.d, x, 16, nil)
	require.True(t, errors.As(err, &pe), "%v", err)
	assert.Equal(t, 32, pe.Row)
	assert.ErrorIs(t, err, tri.ErrZeroPivot)
}

// TestSolveBoundedCGrowth: a system that needs pivoting fails the growth
// test (tri.ErrPivotGrowth) where SolveC solves it inaccurately or not at
// all, and one failing in Stage 1 names the row of the fill.
func TestSolveBoundedCGrowth(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	s := randomC(r, 64, 6)
	// Row 5: b tiny against a·γ.
	s.b[5] = 1e-3
	err := SolveBoundedC(s.a, s.b, s.c, s.d, make([]complex128, 64), 16, nil)
	var pe *tri.PivotError
	require.True(t, errors.As(err, &pe), "%v", err)
	assert.ErrorIs(t, err, tri.ErrPivotGrowth)
	assert.Equal(t, 5, pe.Row)
	// Random systems, not dominant: most fail the test somewhere.
	failed := 0
	for k := range 20 {
		s := randomC(rand.New(rand.NewPCG(9, uint64(k))), 100, 0)
		if err := SolveBoundedC(s.a, s.b, s.c, s.d, make([]complex128, 100), 16, nil); errors.Is(err, tri.ErrPivotGrowth) {
			failed++
		}
	}
	assert.Greater(t, failed, 10)
}

// TestSolveCWorkspace: a workspace serves any smaller system and panics
// on a larger one.
func TestSolveCWorkspace(t *testing.T) {
	ws := NewWorkspaceC[complex64](10)
	assert.Equal(t, 10, ws.Cap())
	s := randomC(rand.New(rand.NewPCG(1, 1)), 7, 6)
	a, b, c, d := convC[complex64](s.a), convC[complex64](s.b), convC[complex64](s.c), convC[complex64](s.d)
	require.NoError(t, SolveC(a, b, c, d, make([]complex64, 7), 3, ws))
	big := make([]complex64, 11)
	assert.Panics(t, func() { _ = SolveC(big, big, big, big, big, 3, ws) })
	assert.Panics(t, func() { _ = SolveC(a, b, c, d, make([]complex64, 7), 0, ws) })
	require.NoError(t, SolveC[complex64](nil, nil, nil, nil, nil, 16, ws))
}
