package pivotpart

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/lapack/gonum"

	"github.com/bandsolve/bandsolve/tridiag/internal/tri"
	"github.com/bandsolve/bandsolve/tridiag/internal/tritest"
)

// dgtsv solves s in float64 with gonum's LAPACK Dgtsv, an implementation
// independent of this module's.
func dgtsv(t testing.TB, s tritest.System) []float64 {
	n := len(s.B)
	x := tritest.Clone(s.D)
	if n == 0 {
		return x
	}
	require.True(t, (gonum.Implementation{}).Dgtsv(n, 1, tritest.Clone(s.A[1:]), tritest.Clone(s.B), tritest.Clone(s.C[:n-1]), x, 1), "dgtsv: singular")
	return x
}

// reference returns the solution of s to about working precision squared
// times the condition number: Dgtsv's solution refined twice, with the
// residual d − A·x formed exactly (math/big) and rounded.
func reference(t testing.TB, s tritest.System) []float64 {
	n := len(s.B)
	x := dgtsv(t, s)
	for range 2 {
		r := tritest.System{A: s.A, B: s.B, C: s.C, D: make([]float64, n)}
		for i := range n {
			acc := new(big.Float).SetPrec(2200).SetFloat64(s.D[i])
			sub := func(u, v float64) {
				p := new(big.Float).SetPrec(2200).SetFloat64(u)
				p.Mul(p, new(big.Float).SetFloat64(v))
				acc.Sub(acc, p)
			}
			sub(s.B[i], x[i])
			if i > 0 {
				sub(s.A[i], x[i-1])
			}
			if i < n-1 {
				sub(s.C[i], x[i+1])
			}
			r.D[i], _ = acc.Float64()
		}
		dx := dgtsv(t, r)
		for i := range x {
			x[i] += dx[i]
		}
	}
	return x
}

// randomSizes are the orders of TestRandom: the brief's list and, for
// every partition size m, 2m, 3m and 3m + r for every remainder r.
func randomSizes(m int) []int {
	ns := []int{2, 3, 5, 31, 33, 47, 100, 257, 1000, 4097, 2 * m, 3 * m}
	for r := 1; r < m; r++ {
		ns = append(ns, 3*m+r)
	}
	return ns
}

// TestPartitions checks the partitioning: the partitions tile the rows,
// all have m rows but the last, which has the 1 to m rows left, and the
// coarse system has two rows a partition, one for a last partition of one
// row.
func TestPartitions(t *testing.T) {
	assert.Equal(t, 0, Partitions(0, 16))
	assert.Equal(t, 0, CoarseSize(0, 16))
	for _, m := range sizes {
		for n := 1; n <= 5*m+3; n++ {
			P := Partitions(n, m)
			want := 2 * P
			if n%m == 1 {
				want--
			}
			require.Equal(t, want, CoarseSize(n, m), "n=%d m=%d", n, m)
			next := 0
			for k := range P {
				s, e := Bounds(n, m, k)
				require.Equal(t, next, s, "n=%d m=%d k=%d", n, m, k)
				if k < P-1 || n%m == 0 {
					require.Equal(t, m, e-s, "n=%d m=%d k=%d", n, m, k)
				} else {
					require.Equal(t, n%m, e-s, "n=%d m=%d last", n, m)
				}
				assert.Equal(t, s, CoarseRow(n, m, 2*k))
				assert.Equal(t, e-1, CoarseRow(n, m, 2*k+1))
				next = e
			}
			require.Equal(t, n, next, "n=%d m=%d", n, m)
		}
	}
	for _, m := range []int{0, 1, 2, 3, 5, 12, 64} {
		assert.False(t, ValidRows(m))
		assert.Panics(t, func() { NewWorkspace[float64](10, m) }, "m=%d", m)
		assert.Panics(t, func() { _ = Solve[float64](nil, nil, nil, nil, nil, m, nil) }, "m=%d", m)
	}
	assert.Equal(t, 16, DefaultRows(1000))
	assert.True(t, ValidRows(DefaultRows(1000)))
}

// randomBound is the largest ratio of Solve's error to GTSV's error plus
// 16 unit roundoffs that TestRandom accepts, by partition size: 100 for
// the devices' 16 rows (up to 12 seen), more for the partition sizes that
// do worse on random non-dominant systems (see "Accuracy" in the package
// documentation).
var randomBound = map[int]float64{4: 1e6, 8: 1e4, 16: 100, 32: 1e3}

// testRandom solves random systems (entries from U(−1,1), not diagonally
// dominant: the partitions pivot) and holds the error against a refined
// reference (gonum's Dgtsv and exact residuals) within randomBound[m]
// times tri.GTSV's plus 16 unit roundoffs; up to m rows (one partition)
// Solve must be SolveDirect bit for bit. go test -v logs the worst ratio and the worst
// backward error per partition size.
func testRandom[T tri.Float](t *testing.T) {
	u := tritest.UnitRoundoff[T]()
	r := rand.New(rand.NewPCG(11, 12))
	pw := tri.NewPivotWork[T](5000)
	for _, m := range sizes {
		ws := NewWorkspace[T](5000, m)
		worst, worstBE, over10 := 0.0, 0.0, 0
		for _, n := range randomSizes(m) {
			for rep := range 3 {
				sys := tritest.RandSystem(r, n, 0)
				what := fmt.Sprintf("n=%d m=%d rep %d", n, m, rep)
				ref := reference(t, sys)
				a, b, c, d := tritest.As[T](sys)
				xg := make([]T, n)
				require.NoError(t, tri.GTSV(a, b, c, d, xg, pw), what)
				x := make([]T, n)
				require.NoError(t, Solve(a, b, c, d, x, m, ws), what)
				if n <= m {
					xd := make([]T, n)
					require.NoError(t, SolveDirect(a, b, c, d, xd, nil), what)
					require.True(t, tritest.SameBits(x, xd), "%s: one partition is SolveDirect", what)
					continue
				}
				eg, e := tritest.RelErr(xg, ref), tritest.RelErr(x, ref)
				ratio := e / (eg + 16*u)
				if ratio > 10 {
					over10++
				}
				worst = max(worst, ratio)
				worstBE = max(worstBE, tritest.BackwardError(a, b, c, d, x)/u)
				assert.LessOrEqual(t, ratio, randomBound[m], "%s: error %.2e, GTSV's %.2e", what, e, eg)
			}
		}
		t.Logf("m=%2d: worst error/(GTSV's + 16u) %.3g, %d systems over 10; worst backward error %.3g u", m, worst, over10, worstBE)
	}
}

func TestRandom(t *testing.T) {
	t.Run("float32", testRandom[float32])
	t.Run("float64", testRandom[float64])
}

// TestStages checks the stage functions on their own against a dense
// reference: the spikes of FactorPartition solve T_k·y = d, T_k·v =
// a_s·e_0, T_k·w = c_{e−1}·e_{m−1}; the coarse rows of CoarseRows hold for
// the exact solution; CombinePartition with the exact neighbours gives the
// partition's rows of the exact solution.
func TestStages(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	const m = 8
	n := 5*m + 3
	sys := tritest.RandSystem(r, n, 0)
	x := dgtsv(t, sys)
	ws := NewWorkspace[float64](n, m)
	P := Partitions(n, m)
	for k := range P {
		s, e := Bounds(n, m, k)
		sp, bad := FactorPartition(sys.A, sys.B, sys.C, sys.D, s, e, ws)
		require.Equal(t, -1, bad)
		var xl, xr float64
		if k > 0 {
			xl = x[s-1]
		} else {
			assert.Zero(t, sp.V0)
			assert.Zero(t, sp.V1)
		}
		if k < P-1 {
			xr = x[e]
		} else {
			assert.Zero(t, sp.W0)
			assert.Zero(t, sp.W1)
		}
		// x = y − v·L − w·R at the partition's first and last rows.
		assert.InDelta(t, x[s], sp.Y0-sp.V0*xl-sp.W0*xr, 1e-10, "k=%d first", k)
		assert.InDelta(t, x[e-1], sp.Y1-sp.V1*xl-sp.W1*xr, 1e-10, "k=%d last", k)
		f, l := CoarseRows(sp)
		assert.Equal(t, 1.0, max(math.Abs(f.B), math.Abs(f.C)), "k=%d: α or β is ±1", k)
		assert.Equal(t, 1.0, max(math.Abs(l.A), math.Abs(l.B)), "k=%d: γ or δ is ±1", k)
		assert.InDelta(t, f.D, f.A*xl+f.B*x[s]+f.C*x[e-1], 1e-10, "k=%d row 2k", k)
		assert.InDelta(t, l.D, l.A*x[s]+l.B*x[e-1]+l.C*xr, 1e-10, "k=%d row 2k+1", k)
		got := make([]float64, n)
		CombinePartition(got, s, e, xl, xr, ws)
		for i := s; i < e; i++ {
			assert.InDelta(t, x[i], got[i], 1e-10, "k=%d row %d", k, i)
		}
	}
}

// TestRecursion solves systems of 2^16 and 2^18 rows with coarse systems
// solved directly only up to 64 rows, so that Stage 2 recurses (four and
// five levels with m = 8, two and three with m = 16), and holds the error
// within 100× of GTSV's on a random non-dominant system and on type 1
// (U(−1,1)); SolveWith's coarse solver receives the coarse system.
func TestRecursion(t *testing.T) {
	for _, n := range []int{1 << 16, 1 << 18} {
		for _, m := range []int{8, 16} {
			sys := tritest.RandSystem(rand.New(rand.NewPCG(31, uint64(n))), n, 0)
			ref := reference(t, sys)
			xg := make([]float64, n)
			require.NoError(t, tri.GTSV(sys.A, sys.B, sys.C, sys.D, xg, tri.NewPivotWork[float64](n)))
			ws := NewWorkspaceDirect[float64](n, m, 64)
			depth := 0
			for w := ws.inner; w != nil; w = w.inner {
				depth++
			}
			require.GreaterOrEqual(t, depth, 2, "n=%d m=%d: Stage 2 recurses", n, m)
			x := make([]float64, n)
			require.NoError(t, Solve(sys.A, sys.B, sys.C, sys.D, x, m, ws))
			eg, e := tritest.RelErr(xg, ref), tritest.RelErr(x, ref)
			t.Logf("n=%d m=%d depth %d: error %.2e, GTSV's %.2e", n, m, depth, e, eg)
			assert.LessOrEqual(t, e, 100*eg, "n=%d m=%d", n, m)

			// The default workspace solves directly: the same system, the
			// same accuracy bound.
			y := make([]float64, n)
			require.NoError(t, Solve(sys.A, sys.B, sys.C, sys.D, y, m, nil))
			assert.LessOrEqual(t, tritest.RelErr(y, ref), 100*eg, "n=%d m=%d direct", n, m)

			// A coarse solver given to SolveWith sees 2P rows.
			rows := 0
			coarse := func(a, b, c, d, x []float64) error {
				rows = len(b)
				return SolveDirect(a, b, c, d, x, nil)
			}
			require.NoError(t, SolveWith(sys.A, sys.B, sys.C, sys.D, y, m, nil, coarse))
			assert.Equal(t, CoarseSize(n, m), rows)
		}
	}
}

// TestWorkspaceLen holds WorkspaceLen to what NewWorkspace allocates.
func TestWorkspaceLen(t *testing.T) {
	for _, m := range sizes {
		for _, n := range []int{0, 1, 7, 2 * m, 1000, 1 << 16} {
			ws := NewWorkspace[float64](n, m)
			got := 0
			for w := ws; w != nil; w = w.inner {
				got += 5*len(w.lu.dd) + 5*len(w.A) + 3*len(w.y)
			}
			assert.Equal(t, got, WorkspaceLen(n, m), "n=%d m=%d", n, m)
		}
	}
}

// zeroDiagonal returns the n-row system tridiag(1, 0, 1): nonsingular
// (determinant ±1) for even n, singular for odd n, as is every block of
// it of odd order.
func zeroDiagonal(n int) tritest.System {
	s := tritest.NewSystem(n)
	for i := range n {
		s.A[i], s.C[i], s.D[i] = 1, 1, float64(i%7)-3
	}
	return s
}

// TestZeroDiagonal: tridiag(1, 0, 1), where every step pivots, is solved
// to the reference for even n, whose partitions all have an even number
// of rows; for odd n the matrix is singular, GTSV fails, and Solve
// reports the zero pivot of the last partition (the one of odd order)
// without writing x.
func TestZeroDiagonal(t *testing.T) {
	for _, m := range sizes {
		for _, n := range []int{4 * m, 4*m + 2, 4*m + 6} {
			sys := zeroDiagonal(n)
			x := make([]float64, n)
			require.NoError(t, Solve(sys.A, sys.B, sys.C, sys.D, x, m, nil), "n=%d m=%d", n, m)
			assert.Less(t, tritest.RelErr(x, dgtsv(t, sys)), 1e-14, "n=%d m=%d", n, m)
		}
		for _, n := range []int{4*m + 1, 4*m + 3} {
			sys := zeroDiagonal(n)
			require.Error(t, tri.GTSV(sys.A, sys.B, sys.C, sys.D, make([]float64, n), tri.NewPivotWork[float64](n)))
			x := tritest.Fill[float64](n, 42)
			err := Solve(sys.A, sys.B, sys.C, sys.D, x, m, nil)
			row := tritest.PivotRow(t, err, "n=%d m=%d", n, m)
			s, e := Bounds(n, m, Partitions(n, m)-1)
			assert.True(t, row >= s && row < e, "n=%d m=%d: row %d outside the last partition [%d, %d)", n, m, row, s, e)
			assert.True(t, tritest.SameBits(x, tritest.Fill[float64](n, 42)), "n=%d m=%d: x written on error", n, m)
		}
	}
}

// TestBlockSingularGlobalRegular: a system whose global matrix is
// nonsingular but one partition block is singular. With m = 4 and rows
// 4..7 forming tridiag(1, 0, 1) coupled only through its boundary entries
// to its neighbours while its own block has a zero column: b[4] = 0,
// a[5] = 0 (column 4 of the block is zero: c[3], the coupling from row 3,
// lies outside the block). GTSV solves the system; Solve reports the
// block's zero pivot at row 4 as a breakdown, without writing x.
func TestBlockSingularGlobalRegular(t *testing.T) {
	const m = 4
	for _, n := range []int{16, 17, 40} {
		r := rand.New(rand.NewPCG(41, uint64(n)))
		sys := tritest.RandSystem(r, n, 3)
		sys.B[4], sys.A[5] = 0, 0
		ref := dgtsv(t, sys)
		require.True(t, tritest.AllFinite(ref), "GTSV solves the system")
		x := tritest.Fill[float64](n, 42)
		err := Solve(sys.A, sys.B, sys.C, sys.D, x, m, nil)
		var pe *tri.PivotError
		require.ErrorAs(t, err, &pe, "n=%d", n)
		require.True(t, errors.Is(err, tri.ErrZeroPivot))
		assert.Equal(t, 4, pe.Row, "n=%d: the block's zero column", n)
		assert.True(t, tritest.SameBits(x, tritest.Fill[float64](n, 42)), "n=%d: x written on error", n)
	}
}
