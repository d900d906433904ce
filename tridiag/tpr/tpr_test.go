package tpr

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/tridiag/internal/tri"
	"github.com/bandsolve/bandsolve/tridiag/internal/tritest"
)

// sliceSizes are the slice sizes tested with every n up to 70000.
var sliceSizes = []int{2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048}

// slicesFor returns the slice sizes the driver runs on an n-row system:
// sliceSizes up to 70000 rows; beyond, the smallest slice and the paper's
// fastest and stable configurations.
func slicesFor(n int) []int {
	if n <= 70000 {
		return sliceSizes
	}
	return []int{2, DefaultSliceSize(n), StableSliceSize(n)}
}

// solver is Solve under the driver of package tritest, its option the
// slice size (slicesFor).
func solver[T tri.Float]() tritest.Solver[T, *Workspace[T]] {
	return tritest.Solver[T, *Workspace[T]]{
		Solve:        Solve[T],
		NewWorkspace: NewWorkspace[T],
		Opts:         slicesFor,
		Grows:        true,
		Tol:          tritest.ByPrecision[T](1e-4, 1e-11),
		Stable:       true,
	}
}

// TestSolve runs the checks every solver shares (accuracy, aliasing,
// workspaces, ignored entries, breakdowns, allocation, backward
// stability) with every slice size.
func TestSolve(t *testing.T) {
	tritest.Both(t, solver[float32](), solver[float64]())
}

// A slice size beyond the next power of two ≥ n is clamped to it.
func TestLargeSliceSize(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{1, 3, 100, 128, 129, 1000} {
		s := tritest.RandSystem(r, n, 4)
		want := make([]float64, n)
		require.NoError(t, Solve(s.A, s.B, s.C, s.D, want, max(2, nextPow2(n)), nil))
		for _, sl := range []int{4096, 1 << 20} {
			x := make([]float64, n)
			require.NoError(t, Solve(s.A, s.B, s.C, s.D, x, sl, nil))
			assert.True(t, tritest.SameBits(x, want), "n=%d s=%d", n, sl)
		}
	}
}

func TestInvalidSliceSize(t *testing.T) {
	s := tritest.RandSystem(rand.New(rand.NewPCG(1, 1)), 10, 4)
	x := tritest.Fill(10, 7.0)
	for _, sl := range []int{-4, 0, 1, 3, 6, 100, 1000} {
		err := Solve(s.A, s.B, s.C, s.D, x, sl, nil)
		assert.ErrorIs(t, err, ErrSliceSize, "s=%d", sl)
		_, err = NewLayout(10, sl)
		assert.ErrorIs(t, err, ErrSliceSize, "s=%d", sl)
	}
	assert.Equal(t, tritest.Fill(10, 7.0), x, "x written")
	_, err := NewLayout(-1, 2)
	assert.Error(t, err)
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
		a, b, c, d := tritest.As[T](tritest.RandSystem(r, n, 4))
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
		sys := tritest.RandSystem(r, n, 4)
		x := tritest.Reference(t, sys)
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
			require.NoError(t, Stage1(lay, sys.A, sys.B, sys.C, sys.D, eq, bnd, nil))
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

// A singular 2×2 block: the zero appears during the reduction, in Stage 2.
// (Breakdowns at a bad diagonal entry are checked by the driver.)
func TestSingularBlock(t *testing.T) {
	t.Run("float64", testSingularBlock[float64])
	t.Run("float32", testSingularBlock[float32])
}

func testSingularBlock[T tri.Float](t *testing.T) {
	a, b, c, d := []T{0, 1}, []T{1, 1}, []T{1, 0}, []T{1, 2}
	for _, sl := range sliceSizes {
		x := tritest.Fill[T](2, 7)
		assert.Equal(t, 1, tritest.PivotRow(t, Solve(a, b, c, d, x, sl, nil)), "s=%d: R_0 (row 1) is singular in Stage 2", sl)
		assert.Equal(t, tritest.Fill[T](2, 7), x, "s=%d: x written on error", sl)
	}
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
