package tpr

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
			t.Run("float64", func(t *testing.T) { checkAllSliceSizes[float64](t, s, want) })
			t.Run("float32", func(t *testing.T) { checkAllSliceSizes[float32](t, s, want) })
		})
	}
}

func checkAllSliceSizes[T tri.Float](t *testing.T, s system, want []float64) {
	n := len(s.b)
	a, b, c, d := tritest.Conv[T](s.a), tritest.Conv[T](s.b), tritest.Conv[T](s.c), tritest.Conv[T](s.d)
	x := make([]T, n)
	ws := NewWorkspace[T](n, 2)
	for _, sl := range sliceSizes {
		require.NoError(t, Solve(a, b, c, d, x, sl, ws), "s=%d", sl)
		assert.Less(t, tritest.RelErr(x, want), tol[T](), "s=%d", sl)
	}
}

func TestSolveRandomSizes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	ws64, ws32 := NewWorkspace[float64](0, 2), NewWorkspace[float32](0, 2)
	for range 200 {
		n := 1 + r.IntN(5000)
		sl := 2 << r.IntN(11) // 2 … 2048
		s := randSystem(r, n)
		want := reference(t, s)
		x64 := make([]float64, n)
		require.NoError(t, Solve(s.a, s.b, s.c, s.d, x64, sl, ws64))
		assert.Less(t, tritest.RelErr(x64, want), tol[float64](), "n=%d s=%d", n, sl)
		a, b, c, d := tritest.Conv[float32](s.a), tritest.Conv[float32](s.b), tritest.Conv[float32](s.c), tritest.Conv[float32](s.d)
		x32 := make([]float32, n)
		require.NoError(t, Solve(a, b, c, d, x32, sl, ws32))
		assert.Less(t, tritest.RelErr(x32, want), tol[float32](), "n=%d s=%d", n, sl)
	}
}

func TestAliasInputsAndWorkspace(t *testing.T) {
	t.Run("float64", testAliasInputsAndWorkspace[float64])
	t.Run("float32", testAliasInputsAndWorkspace[float32])
}

func testAliasInputsAndWorkspace[T tri.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	shared := NewWorkspace[T](3, 2) // too small for most: must grow
	for _, n := range []int{1, 2, 3, 17, 100, 1025, 4097} {
		sys := randSystem(r, n)
		a, b, c, d := tritest.Conv[T](sys.a), tritest.Conv[T](sys.b), tritest.Conv[T](sys.c), tritest.Conv[T](sys.d)
		a0, b0, c0, d0 := tritest.Clone(a), tritest.Clone(b), tritest.Clone(c), tritest.Clone(d)
		for _, sl := range []int{2, 8, 128, 2048} {
			want := make([]T, n)
			require.NoError(t, Solve(a, b, c, d, want, sl, NewWorkspace[T](n, sl)))
			// Inputs unchanged.
			assert.True(t, tritest.SameBits(a, a0) && tritest.SameBits(b, b0) && tritest.SameBits(c, c0) && tritest.SameBits(d, d0), "n=%d s=%d", n, sl)
			// A nil workspace and a reused (growing, shrinking) one agree bit for bit.
			x := make([]T, n)
			require.NoError(t, Solve(a, b, c, d, x, sl, nil))
			assert.True(t, tritest.SameBits(x, want), "nil ws n=%d s=%d", n, sl)
			require.NoError(t, Solve(a, b, c, d, x, sl, shared))
			assert.True(t, tritest.SameBits(x, want), "shared ws n=%d s=%d", n, sl)
			// x aliasing d.
			dx := tritest.Clone(d)
			require.NoError(t, Solve(a, b, c, dx, dx, sl, shared))
			assert.True(t, tritest.SameBits(dx, want), "alias n=%d s=%d", n, sl)
		}
	}
}

func TestIgnoredCoefficients(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 2, 5, 64, 1000} {
		s := randSystem(r, n)
		x1, x2 := make([]float64, n), make([]float64, n)
		for _, sl := range []int{2, 4, 64, 2048} {
			s.a[0], s.c[n-1] = 1e30, -1e30
			require.NoError(t, Solve(s.a, s.b, s.c, s.d, x1, sl, nil))
			s.a[0], s.c[n-1] = 0, 0
			require.NoError(t, Solve(s.a, s.b, s.c, s.d, x2, sl, nil))
			assert.True(t, tritest.SameBits(x1, x2), "n=%d s=%d", n, sl)
		}
	}
}

// A slice size beyond the next power of two ≥ n is clamped to it.
func TestLargeSliceSize(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{1, 3, 100, 128, 129, 1000} {
		s := randSystem(r, n)
		want := make([]float64, n)
		require.NoError(t, Solve(s.a, s.b, s.c, s.d, want, max(2, nextPow2(n)), nil))
		for _, sl := range []int{4096, 1 << 20} {
			x := make([]float64, n)
			require.NoError(t, Solve(s.a, s.b, s.c, s.d, x, sl, nil))
			assert.True(t, tritest.SameBits(x, want), "n=%d s=%d", n, sl)
		}
	}
}

func TestInvalidSliceSize(t *testing.T) {
	s := randSystem(rand.New(rand.NewPCG(1, 1)), 10)
	x := make([]float64, 10)
	for _, sl := range []int{-4, 0, 1, 3, 6, 100, 1000} {
		err := Solve(s.a, s.b, s.c, s.d, x, sl, nil)
		assert.ErrorIs(t, err, ErrSliceSize, "s=%d", sl)
		_, err = NewLayout(10, sl)
		assert.ErrorIs(t, err, ErrSliceSize, "s=%d", sl)
	}
	assert.NoError(t, Solve[float64](nil, nil, nil, nil, nil, 4, nil), "n = 0")
	assert.Panics(t, func() { _ = Solve(s.a[:9], s.b, s.c, s.d, x, 4, nil) })
}

// Stage1, Stage2, Stage3 run by hand on separate buffers reproduce Solve bit
// for bit.
func TestStagesEqualSolve(t *testing.T) {
	t.Run("float64", testStagesEqualSolve[float64])
	t.Run("float32", testStagesEqualSolve[float32])
}

func testStagesEqualSolve[T tri.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{1, 2, 7, 64, 129, 1000, 4097} {
		sys := randSystem(r, n)
		a, b, c, d := tritest.Conv[T](sys.a), tritest.Conv[T](sys.b), tritest.Conv[T](sys.c), tritest.Conv[T](sys.d)
		for _, sl := range sliceSizes {
			want := make([]T, n)
			require.NoError(t, Solve(a, b, c, d, want, sl, nil))

			lay, err := NewLayout(n, sl)
			require.NoError(t, err)
			eq, bnd, xb := NewEqs[T](n), NewEqs[T](2*lay.M), make([]T, lay.M)
			require.NoError(t, Stage1(lay, a, b, c, d, eq, bnd, nil))
			require.NoError(t, Stage2(lay, bnd, xb, nil))
			x := make([]T, n)
			require.NoError(t, Stage3(lay, a, b, c, d, eq, xb, x, nil))
			require.True(t, tritest.SameBits(x, want), "n=%d s=%d", n, sl)

			// Stage 2's output is the last unknown of every slice.
			for j := range lay.M {
				if i := j*lay.S + lay.S - 1; i < n {
					assert.Equal(t, want[i], xb[j], "n=%d s=%d j=%d", n, sl, j)
				} else {
					assert.Zero(t, xb[j], "virtual last row, n=%d s=%d", n, sl)
				}
			}
		}
	}
}

// The boundary equations Stage 1 writes hold for the exact solution: first'_j
// couples x_{jS−1}, x_{jS}, x_{jS+S−1}; last_j couples x_{jS−1}, x_{jS+S−1},
// x_{jS+S}; and each equation of eq with odd l couples x_{i−2^k}, x_i,
// x_{i+2^k}.
func TestStage1Equations(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, n := range []int{8, 100, 1000} {
		sys := randSystem(r, n)
		x := reference(t, sys)
		at := func(i int) float64 {
			if i < 0 || i >= n {
				return 0
			}
			return x[i]
		}
		for _, sl := range []int{2, 4, 16, 64} {
			lay, err := NewLayout(n, sl)
			require.NoError(t, err)
			eq, bnd := NewEqs[float64](n), NewEqs[float64](2*lay.M)
			require.NoError(t, Stage1(lay, sys.a, sys.b, sys.c, sys.d, eq, bnd, nil))
			res := func(e eqn[float64], l, m, r int) float64 {
				return e.a*at(l) + e.b*at(m) + e.c*at(r) - e.d
			}
			S := lay.S
			for j := range lay.M {
				p := j * S
				assert.InDelta(t, 0, res(bnd.at(2*j), p-1, p, p+S-1), 1e-12, "first' n=%d s=%d j=%d", n, sl, j)
				assert.InDelta(t, 0, res(bnd.at(2*j+1), p-1, p+S-1, p+S), 1e-12, "last n=%d s=%d j=%d", n, sl, j)
				for l := 1; l < S-1 && p+l < n; l += 2 {
					w := 1
					for (l+1)%(2*w) == 0 {
						w *= 2
					}
					// Now w = 2^k with l ≡ 2^k−1 mod 2^(k+1): final stride 2^k.
					assert.InDelta(t, 0, res(eq.at(p+l), p+l-w, p+l, p+l+w), 1e-12, "eq n=%d s=%d i=%d", n, sl, p+l)
				}
			}
		}
	}
}

func TestZeroPivot(t *testing.T) {
	t.Run("float64", testZeroPivot[float64])
	t.Run("float32", testZeroPivot[float32])
}

func testZeroPivot[T tri.Float](t *testing.T) {
	// A diagonal matrix with one zero on the diagonal: every slice size
	// divides by b_k in the first step and must name row k.
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
			for _, sl := range sliceSizes {
				x := make([]T, n)
				for i := range x {
					x[i] = 7
				}
				err := Solve(a, b, c, d, x, sl, nil)
				var pe *tri.PivotError
				require.True(t, errors.As(err, &pe), "n=%d k=%d s=%d: %v", n, k, sl, err)
				assert.ErrorIs(t, err, tri.ErrZeroPivot)
				assert.Equal(t, k, pe.Row, "n=%d s=%d", n, sl)
				for i := range x {
					require.Equal(t, T(7), x[i], "x must not be written on error")
				}
			}
		}
	}
	// A singular 2×2 block: the zero appears during the reduction.
	a, b, c, d := []T{0, 1}, []T{1, 1}, []T{1, 0}, []T{1, 2}
	err := Solve(a, b, c, d, make([]T, 2), 2, nil)
	var pe *tri.PivotError
	require.True(t, errors.As(err, &pe), "%v", err)
	assert.Equal(t, 1, pe.Row, "R_0 (row 1) is singular in Stage 2")

	// Zero diagonal (matrix 16 of the stability suite): breakdown, reported.
	r := rand.New(rand.NewPCG(15, 16))
	for _, n := range []int{4, 64, 1000} {
		s := randSystem(r, n)
		for i := range s.b {
			s.b[i] = 0
		}
		err := Solve(tritest.Conv[T](s.a), tritest.Conv[T](s.b), tritest.Conv[T](s.c), tritest.Conv[T](s.d), make([]T, n), 16, nil)
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
		sl := 2 << r.IntN(6)
		for _, x := range []any{make([]float64, n), make([]float32, n)} {
			var err error
			var ok bool
			switch x := x.(type) {
			case []float64:
				err = Solve(s.a, s.b, s.c, s.d, x, sl, nil)
				ok = tritest.AllFinite(x)
			case []float32:
				err = Solve(tritest.Conv[float32](s.a), tritest.Conv[float32](s.b), tritest.Conv[float32](s.c), tritest.Conv[float32](s.d), x, sl, nil)
				ok = tritest.AllFinite(x)
			}
			if err != nil {
				var pe *tri.PivotError
				require.True(t, errors.As(err, &pe), "%v", err)
				require.ErrorIs(t, err, tri.ErrZeroPivot)
				require.True(t, pe.Row >= 0 && pe.Row < n, "row %d of %d", pe.Row, n)
				failures++
				continue
			}
			require.True(t, ok, "n=%d s=%d: non-finite solution without an error\n%v", n, sl, s)
		}
	}
	assert.Greater(t, failures, 100, "the test should meet many breakdowns")
}

func TestSliceSizes(t *testing.T) {
	for _, c := range []struct{ n, fast, stable int }{
		{0, 2, 2}, {1, 2, 2}, {2, 2, 2}, {3, 4, 4}, {100, 128, 128}, {128, 128, 128},
		{1000, 128, 1024}, {4097, 128, 2048}, {1 << 18, 128, 2048},
		{1 << 19, 256, 2048}, {1<<19 - 5, 256, 2048}, {1 << 20, 512, 2048},
		{1 << 21, 1024, 2048}, {1 << 22, 2048, 2048}, {1 << 23, 4096, 4096},
	} {
		assert.Equal(t, c.fast, DefaultSliceSize(c.n), "fastest, n=%d", c.n)
		assert.Equal(t, c.stable, StableSliceSize(c.n), "stable, n=%d", c.n)
	}
}

func TestLayout(t *testing.T) {
	for _, c := range []struct{ n, s, S, M, MPad int }{
		{0, 4, 2, 0, 0}, {1, 4, 2, 1, 1}, {5, 2, 2, 3, 4}, {5, 8, 8, 1, 1}, {5, 64, 8, 1, 1},
		{1000, 128, 128, 8, 8}, {1025, 128, 128, 9, 16}, {70000, 2, 2, 35000, 65536},
	} {
		l, err := NewLayout(c.n, c.s)
		require.NoError(t, err)
		assert.Equal(t, Layout{N: c.n, S: c.S, M: c.M, MPad: c.MPad}, l, "n=%d s=%d", c.n, c.s)
	}
}
