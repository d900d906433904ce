package pivotpart

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/lapack/gonum"

	"github.com/bandsolve/bandsolve/stability"
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

// testRandom solves random systems (entries from U(−1,1), not diagonally
// dominant: the partitions pivot) and holds the error against a refined
// reference (gonum's Dgtsv and exact residuals) within 10 times
// tri.GTSV's plus 16 unit roundoffs, with every partition size; up to m
// rows (one partition) Solve must be SolveDirect bit for bit. go test -v
// logs the worst ratio and backward error per partition size, and those
// of Solve without refinement (RefineNever).
func testRandom[T tri.Float](t *testing.T) {
	u := tritest.UnitRoundoff[T]()
	r := rand.New(rand.NewPCG(11, 12))
	pw := tri.NewPivotWork[T](5000)
	for _, m := range sizes {
		ws := NewWorkspace[T](5000, m)
		never := NewWorkspace[T](5000, m)
		never.SetRefine(RefineNever)
		worst, worstBE, worstNever, worstNeverBE := 0.0, 0.0, 0.0, 0.0
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
				xn := make([]T, n)
				require.NoError(t, Solve(a, b, c, d, xn, m, never), what)
				eg, e, en := tritest.RelErr(xg, ref), tritest.RelErr(x, ref), tritest.RelErr(xn, ref)
				ratio := e / (eg + 16*u)
				worst = max(worst, ratio)
				worstBE = max(worstBE, tritest.BackwardError(a, b, c, d, x)/u)
				worstNever = max(worstNever, en/(eg+16*u))
				worstNeverBE = max(worstNeverBE, tritest.BackwardError(a, b, c, d, xn)/u)
				assert.LessOrEqual(t, ratio, 10.0, "%s: error %.2e, GTSV's %.2e", what, e, eg)
			}
		}
		t.Logf("m=%2d: worst error/(GTSV's + 16u) %.3g, backward error %.3g u; without refinement %.3g, %.3g u", m, worst, worstBE, worstNever, worstNeverBE)
	}
}

func TestRandom(t *testing.T) {
	t.Run("float32", testRandom[float32])
	t.Run("float64", testRandom[float64])
}

// TestStages checks the stage functions on their own against a dense
// reference, on a random non-dominant system with partitions of 8 rows
// and a last one of 3: the coarse rows of PartitionRows hold for the
// exact solution (first.A = 0 in the first partition, last.C = 0 in the
// last); SolvePartition with the exact coarse values gives the
// partition's rows of the exact solution, x_s and x_{e−1} as given, also
// when x aliases d.
func TestStages(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	const m = 8
	n := 5*m + 3
	sys := tritest.RandSystem(r, n, 0)
	x := reference(t, sys)
	ws := NewWorkspace[float64](n, m)
	P := Partitions(n, m)
	for k := range P {
		s, e := Bounds(n, m, k)
		first, last, bad := PartitionRows(sys.A, sys.B, sys.C, sys.D, s, e)
		require.Equal(t, -1, bad)
		var xl, xr float64
		if k > 0 {
			xl = x[s-1]
		} else {
			assert.Zero(t, first.A, "k=%d", k)
		}
		if k < P-1 {
			xr = x[e]
		} else {
			assert.Zero(t, last.C, "k=%d", k)
		}
		scale := func(r Row[float64]) float64 { return max(math.Abs(r.A), math.Abs(r.B), math.Abs(r.C)) }
		assert.InDelta(t, first.D, first.A*xl+first.B*x[s]+first.C*x[e-1], 1e-13*scale(first), "k=%d row 2k", k)
		assert.InDelta(t, last.D, last.A*x[s]+last.B*x[e-1]+last.C*xr, 1e-13*scale(last), "k=%d row 2k+1", k)
		got := tritest.Fill[float64](n, 42)
		require.Equal(t, -1, SolvePartition(sys.A, sys.B, sys.C, sys.D, got, s, e, xl, x[s], x[e-1], xr, ws))
		assert.Equal(t, x[s], got[s], "k=%d: x_s as given", k)
		assert.Equal(t, x[e-1], got[e-1], "k=%d: x_{e−1} as given", k)
		for i := range n {
			if i >= s && i < e {
				assert.InDelta(t, x[i], got[i], 1e-12, "k=%d row %d", k, i)
			} else {
				assert.Equal(t, 42.0, got[i], "k=%d: row %d outside the partition written", k, i)
			}
		}
		alias := tritest.Clone(sys.D)
		require.Equal(t, -1, SolvePartition(sys.A, sys.B, sys.C, alias, alias, s, e, xl, x[s], x[e-1], xr, ws))
		assert.True(t, tritest.SameBits(alias[s:e], got[s:e]), "k=%d: x aliasing d differs", k)
	}
}

// exactResidual returns d_i − (A·x)_i in exact arithmetic, rounded to
// float64.
func exactResidual[T tri.Float](a, b, c, d, x []T, i int) float64 {
	n := len(b)
	acc := new(big.Float).SetPrec(2200).SetFloat64(float64(d[i]))
	sub := func(u, v T) {
		p := new(big.Float).SetPrec(2200).SetFloat64(float64(u))
		p.Mul(p, new(big.Float).SetFloat64(float64(v)))
		acc.Sub(acc, p)
	}
	sub(b[i], x[i])
	if i > 0 {
		sub(a[i], x[i-1])
	}
	if i < n-1 {
		sub(c[i], x[i+1])
	}
	f, _ := acc.Float64()
	return f
}

// testResidual: on a random system at a solution accurate to working
// precision (where the residual cancels to a few unit roundoffs of the
// row's terms) and at a perturbed one, Residual is within one rounding of
// the exact residual plus 8u² of the row's |A|·|x| + |d| (float64), or
// 4·2^−53 of it (float32), and reports small exactly where the exact
// test |r| ≤ RefineTol·u·(|A|·|x| + |d|) holds, up to that margin.
func testResidual[T tri.Float](t *testing.T) {
	u := tritest.UnitRoundoff[T]()
	slack := tritest.ByPrecision[T](4*0x1p-53, 8*u*u)
	r := rand.New(rand.NewPCG(23, 24))
	const n = 2000
	sys := tritest.RandSystem(r, n, 0)
	a, b, c, d := tritest.As[T](sys)
	x := make([]T, n)
	require.NoError(t, tri.GTSV(a, b, c, d, x, tri.NewPivotWork[T](n)))
	near, far := 0, 0
	for _, perturb := range []bool{false, true} {
		if perturb {
			for i := range x {
				x[i] += T(float64(x[i]) * 1e3 * u * (r.Float64() - 0.5))
			}
		}
		for i := range n {
			got, small := Residual(a, b, c, d, x, i)
			want := exactResidual(a, b, c, d, x, i)
			scale := math.Abs(float64(d[i])) + math.Abs(float64(b[i])*float64(x[i]))
			if i > 0 {
				scale += math.Abs(float64(a[i]) * float64(x[i-1]))
			}
			if i < n-1 {
				scale += math.Abs(float64(c[i]) * float64(x[i+1]))
			}
			require.InDelta(t, want, float64(got), u*math.Abs(want)+slack*scale, "row %d perturbed=%v", i, perturb)
			bound := RefineTol * u * scale
			switch {
			case math.Abs(want) < bound*(1-1e-6):
				assert.True(t, small, "row %d perturbed=%v: |r| %.3g < bound %.3g", i, perturb, want, bound)
				near++
			case math.Abs(want) > bound*(1+1e-6):
				assert.False(t, small, "row %d perturbed=%v: |r| %.3g > bound %.3g", i, perturb, want, bound)
				far++
			}
		}
	}
	assert.Greater(t, near, n/2, "rows within the bound")
	assert.Greater(t, far, n/2, "rows beyond the bound")
}

func TestResidual(t *testing.T) {
	t.Run("float32", testResidual[float32])
	t.Run("float64", testResidual[float64])
}

// TestRecursion solves systems of 2^16 and 2^18 rows with coarse systems
// solved directly only up to 64 rows, so that Stage 2 recurses (four and
// five levels with m = 8, two and three with m = 16), and holds the error
// within 10× of GTSV's on a random non-dominant system; SolveWith's
// coarse solver receives the coarse system.
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
			assert.LessOrEqual(t, e, 10*eg, "n=%d m=%d", n, m)

			// The default workspace solves directly: the same system, the
			// same accuracy bound.
			y := make([]float64, n)
			require.NoError(t, Solve(sys.A, sys.B, sys.C, sys.D, y, m, nil))
			assert.LessOrEqual(t, tritest.RelErr(y, ref), 10*eg, "n=%d m=%d direct", n, m)

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
				got += 5*len(w.lu.dd) + 5*len(w.piv) + 5*len(w.A) + len(w.xh) + len(w.r)
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
// to the reference for even n; for odd n the matrix is singular, GTSV
// fails, and Solve reports a zero pivot without writing x.
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
			assert.True(t, row >= 0 && row < n, "n=%d m=%d: row %d", n, m, row)
			assert.True(t, tritest.SameBits(x, tritest.Fill[float64](n, 42)), "n=%d m=%d: x written on error", n, m)
		}
	}
}

// TestSingularPartitionParts: systems that GTSV solves although a part of
// a partition is singular, with m = 4 (partition 1 holds rows 4..7):
// its block T_1 (b[4] = 0, a[5] = 0: column 4 of the block is zero, c[3]
// lies outside it), on which the coarse rows formed from spikes
// (spikeSolve) break down; and its rows 5..7 on its interior unknowns
// (b[5] = 0, a[6] = 0: x_5 appears in row 4 alone), where Stage 1's
// elimination of rows 5..7 meets a step with two zero candidates. Solve
// solves both to GTSV's accuracy, with and without refinement.
func TestSingularPartitionParts(t *testing.T) {
	const m = 4
	for _, n := range []int{16, 17, 40} {
		for _, part := range []string{"block", "interior"} {
			r := rand.New(rand.NewPCG(41, uint64(n)))
			sys := tritest.RandSystem(r, n, 3)
			if part == "block" {
				sys.B[4], sys.A[5] = 0, 0
			} else {
				sys.B[5], sys.A[6] = 0, 0
			}
			ref := reference(t, sys)
			xg := dgtsv(t, sys)
			require.True(t, tritest.AllFinite(xg), "GTSV solves the system")
			what := fmt.Sprintf("n=%d %s", n, part)
			if part == "block" {
				_, _, _, _, err := spikeSolve(sys.A, sys.B, sys.C, sys.D, make([]float64, n), m)
				assert.Equal(t, 4, tritest.PivotRow(t, err, what), "%s: the block's zero column", what)
			}
			for _, pol := range []Refine{RefineAlways, RefineNever} {
				ws := NewWorkspace[float64](n, m)
				ws.SetRefine(pol)
				x := make([]float64, n)
				require.NoError(t, Solve(sys.A, sys.B, sys.C, sys.D, x, m, ws), "%s %s", what, pol)
				assert.LessOrEqual(t, tritest.RelErr(x, ref), 10*tritest.RelErr(xg, ref)+1e-15, "%s %s", what, pol)
			}
		}
	}
}

// TestRefine checks the policies: RefineNever returns Stages 1–3's
// solution; RefineAuto returns it too (the same bits) on a diagonally
// dominant system, whose every residual Residual finds small, and
// RefineAlways's (the same bits) on type 1 of the stability suite at
// N = 2^14, which it refines; RefineAlways's solution differs from
// Never's there. SetRefine rejects other values; a workspace's default
// is RefineAlways, and a coarse system's workspace never refines.
func TestRefine(t *testing.T) {
	const m = 16
	solve := func(sys tritest.System, r Refine) []float64 {
		n := len(sys.B)
		ws := NewWorkspace[float64](n, m)
		ws.SetRefine(r)
		assert.Equal(t, r, ws.Refine())
		x := make([]float64, n)
		require.NoError(t, Solve(sys.A, sys.B, sys.C, sys.D, x, m, ws), "%s", r)
		return x
	}
	dom := tritest.RandSystem(rand.New(rand.NewPCG(51, 52)), 5000, 4)
	never := solve(dom, RefineNever)
	for i := range never {
		_, small := Residual(dom.A, dom.B, dom.C, dom.D, never, i)
		require.True(t, small, "dominant system, row %d", i)
	}
	assert.True(t, tritest.SameBits(never, solve(dom, RefineAuto)), "dominant system: auto refines nothing")

	p, err := stability.NewProblem[float64](1, 1<<14, 1)
	require.NoError(t, err)
	sys := tritest.System{A: p.A, B: p.B, C: p.C, D: p.D}
	never, auto, always := solve(sys, RefineNever), solve(sys, RefineAuto), solve(sys, RefineAlways)
	assert.True(t, tritest.SameBits(auto, always), "type 1: auto refines")
	assert.False(t, tritest.SameBits(never, always), "type 1: refinement changes x")

	ws := NewWorkspaceDirect[float64](1<<14, m, 64)
	assert.Equal(t, RefineAlways, ws.Refine())
	require.NotNil(t, ws.inner)
	assert.Equal(t, RefineNever, ws.inner.Refine())
	assert.Panics(t, func() { ws.SetRefine(Refine(3)) })
	assert.Panics(t, func() { ws.SetRefine(Refine(-1)) })
	assert.Equal(t, "always", RefineAlways.String())
	assert.Equal(t, "auto", RefineAuto.String())
	assert.Equal(t, "never", RefineNever.String())
	assert.Equal(t, "Refine(7)", Refine(7).String())
}

// BenchmarkSolve times Solve on a random non-dominant system (entries
// from U(−1,1)) of 2^20 rows, m = 16, with each refinement policy, and
// tri.GTSV on it.
func BenchmarkSolve(b *testing.B) {
	const n, m = 1 << 20, 16
	sys := tritest.RandSystem(rand.New(rand.NewPCG(61, 62)), n, 0)
	x := make([]float64, n)
	for _, r := range []Refine{RefineNever, RefineAuto, RefineAlways} {
		b.Run(r.String(), func(b *testing.B) {
			ws := NewWorkspace[float64](n, m)
			ws.SetRefine(r)
			b.SetBytes(5 * 8 * n)
			for b.Loop() {
				if err := Solve(sys.A, sys.B, sys.C, sys.D, x, m, ws); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("gtsv", func(b *testing.B) {
		pw := tri.NewPivotWork[float64](n)
		b.SetBytes(5 * 8 * n)
		for b.Loop() {
			if err := tri.GTSV(sys.A, sys.B, sys.C, sys.D, x, pw); err != nil {
				b.Fatal(err)
			}
		}
	})
}
