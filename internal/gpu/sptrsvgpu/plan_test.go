//go:build cuda

package sptrsvgpu

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/gputest"
	"github.com/bandsolve/bandsolve/sparse"
	"github.com/bandsolve/bandsolve/sptrsv"
	"github.com/bandsolve/bandsolve/sptrsv/suite"
)

// dev is the GPU of the tests.
var dev *cuda.Device

func TestMain(m *testing.M) {
	dev = gputest.Open("sptrsvgpu")
	gputest.Run(m, dev)
}

// rhs returns a right-hand side with entries in [−1, 1).
func rhs(n int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 7))
	b := make([]float64, n)
	for i := range b {
		b[i] = 2*rng.Float64() - 1
	}
	return b
}

func convert[T Float](v []float64) []T {
	out := make([]T, len(v))
	for i, x := range v {
		out[i] = T(x)
	}
	return out
}

// relErr is ‖x − ref‖∞ / ‖ref‖∞.
func relErr[T Float](x, ref []T) float64 {
	num, den := 0.0, 0.0
	for i := range x {
		num = max(num, math.Abs(float64(x[i])-float64(ref[i])))
		den = max(den, math.Abs(float64(ref[i])))
	}
	return num / den
}

// config is one way of solving on the GPU.
type config struct {
	name string
	opts Options
}

var configs = []config{
	{"levelset", Options{Algorithm: sptrsv.LevelSet}},
	{"levelset-wide", Options{Algorithm: sptrsv.LevelSet, ChainRows: -1}},
	{"levelset-chains", Options{Algorithm: sptrsv.LevelSet, ChainRows: math.MaxInt32}},
	{"syncfree", Options{Algorithm: sptrsv.SyncFree}},
	{"syncfree-csr", Options{Algorithm: sptrsv.SyncFreeCSR}},
	{"syncfree-csr-warp", Options{Algorithm: sptrsv.SyncFreeCSR, Lanes: 32}},
	{"syncfree-csr-thread", Options{Algorithm: sptrsv.SyncFreeCSR, Lanes: 1}},
	{"locality", Options{Algorithm: sptrsv.LocalityAware}},
	{"levelset-warp-levels", Options{Algorithm: sptrsv.LevelSet, Lanes: 32}},
	{"auto", Options{}},
}

// checkCase solves the triangle of a on the GPU in every configuration
// and compares with the sequential reference on the CPU: bit for bit
// where a row is solved by one lane (level sets with lanesShift 0), else
// to a few units of rounding (the suite's triangles are well conditioned
// after diagonal scaling, see package suite).
func checkCase[T Float](t *testing.T, a *sparse.CSR, tri sptrsv.Options, tol float64) {
	an, err := sptrsv.Analyze(a, tri)
	require.NoError(t, err)
	b := convert[T](rhs(a.N, uint64(a.N)))
	ref := make([]T, a.N)
	require.NoError(t, sptrsv.SolveSequential(an, b, ref))
	loc, err := sptrsv.AnalyzeLocality(an, sptrsv.LocalityOptions{})
	require.NoError(t, err)
	locRef := make([]T, a.N)
	require.NoError(t, sptrsv.SolveLocality(context.Background(), loc, b, locRef))
	for _, c := range configs {
		p, err := NewPlan[T](dev, a, tri, c.opts)
		require.NoError(t, err, c.name)
		if c.opts.Algorithm == sptrsv.LevelSet || c.opts.Algorithm == sptrsv.Auto {
			require.Equal(t, an.Levels(), p.Stats().Levels, "%s: levels", c.name)
			require.Equal(t, an.Stats().MaxRowsPerLevel, p.Stats().MaxRowsPerLevel, c.name)
		}
		// Three solves in a row: the counters and partial sums of the
		// synchronization-free solve and the tickets start from zero again.
		for rep := range 3 {
			x := make([]T, a.N)
			require.NoError(t, p.Solve(b, x), c.name)
			if p.Algorithm() == sptrsv.LocalityAware {
				require.Equal(t, locRef, x, "%s: solve %d is not the CPU twin's bits", c.name, rep)
				require.LessOrEqual(t, relErr(x, ref), tol, c.name)
			} else if p.Algorithm() == sptrsv.LevelSet && p.lg == 0 || p.Algorithm() == sptrsv.SyncFreeCSR && p.rowLg == 0 {
				for i := range x {
					if x[i] != ref[i] {
						require.Failf(t, "not the sequential reference's bits", "%s: solve %d: row %d of %d: %g, want %g (relative error of x %.3g)",
							c.name, rep, i, len(x), x[i], ref[i], relErr(x, ref))
					}
				}
			} else {
				e := relErr(x, ref)
				require.LessOrEqual(t, e, tol, "%s (%s): solve %d", c.name, p.Algorithm(), rep)
			}
		}
		require.NoError(t, p.Close())
	}
}

// upperOf returns the transpose of a lower triangle: an upper one.
func upperOf(a *sparse.CSR) *sparse.CSR { return a.Transpose() }

func TestSolveSuite(t *testing.T) {
	for _, c := range suite.Structures() {
		a := c.Build()
		for _, up := range []bool{false, true} {
			m, tri := a, sptrsv.Options{}
			if up {
				m, tri = upperOf(a), sptrsv.Options{Triangle: sptrsv.Upper}
			}
			t.Run(fmt.Sprintf("%s/%s", c.Name, tri.Triangle), func(t *testing.T) {
				t.Run("f64", func(t *testing.T) { checkCase[float64](t, m, tri, 1e-13) })
				t.Run("f32", func(t *testing.T) { checkCase[float32](t, m, tri, 2e-5) })
			})
		}
	}
}

// TestUnitAndTrianglePart solves with the unit lower triangle and with
// the upper triangle of a general matrix (its other entries ignored).
func TestUnitAndTrianglePart(t *testing.T) {
	l := suite.PowerLaw(5000, 2.9, suite.Seed)
	// A general matrix: l + lᵀ − diag, whose triangles are l and lᵀ.
	coo := l.ToCOO()
	for k := range coo.Val {
		if coo.Row[k] != coo.Col[k] {
			coo.Add(coo.Col[k], coo.Row[k], 0.5*coo.Val[k])
		}
	}
	g, err := coo.ToCSR()
	require.NoError(t, err)
	for _, tri := range []sptrsv.Options{
		{UnitDiagonal: true},
		{Part: sptrsv.TrianglePart},
		{Part: sptrsv.TrianglePart, Triangle: sptrsv.Upper, UnitDiagonal: true},
	} {
		m := l
		if tri.Part == sptrsv.TrianglePart {
			m = g
		}
		t.Run(fmt.Sprintf("%s/unit=%t/part=%d", tri.Triangle, tri.UnitDiagonal, tri.Part), func(t *testing.T) {
			checkCase[float64](t, m, tri, 1e-12)
		})
	}
}

// TestErrorsNameTheRow: the device analysis reports what sptrsv.Analyze
// reports, with the same row.
func TestErrorsNameTheRow(t *testing.T) {
	base := suite.Banded(200, 3)
	cases := []struct {
		name   string
		mutate func(c *sparse.COO)
		tri    sptrsv.Options
		want   error
	}{
		{"zero diagonal", func(c *sparse.COO) { setEntry(c, 57, 57, 0) }, sptrsv.Options{}, sptrsv.ErrSingular},
		{"missing diagonal", func(c *sparse.COO) { dropEntry(c, 131, 131) }, sptrsv.Options{}, sptrsv.ErrSingular},
		{"wrong side", func(c *sparse.COO) { c.Add(90, 150, 1) }, sptrsv.Options{}, sptrsv.ErrNotTriangular},
		{"NaN diagonal", func(c *sparse.COO) { setEntry(c, 12, 12, math.NaN()) }, sptrsv.Options{}, sptrsv.ErrSingular},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			coo := base.ToCOO()
			tc.mutate(coo)
			a, err := coo.ToCSR()
			require.NoError(t, err)
			row := map[string]string{"zero diagonal": "row 57", "missing diagonal": "row 131", "wrong side": "row 90", "NaN diagonal": "row 12"}[tc.name]
			for _, alg := range []sptrsv.Algorithm{sptrsv.LevelSet, sptrsv.SyncFree, sptrsv.SyncFreeCSR} {
				_, err = NewPlan[float64](dev, a, tc.tri, Options{Algorithm: alg})
				require.ErrorIs(t, err, tc.want, alg)
				require.ErrorContains(t, err, row, alg)
			}
			if tc.name != "NaN diagonal" { // the CPU analysis refuses zeros only
				_, err = sptrsv.Analyze(a, tc.tri)
				require.ErrorIs(t, err, tc.want)
				if tc.want == sptrsv.ErrNotTriangular {
					row = "entry (90, 150)" // the CPU names the entry
				}
				require.ErrorContains(t, err, row)
			}
		})
	}
	// With a unit diagonal a missing or zero stored diagonal is no error.
	coo := base.ToCOO()
	setEntry(coo, 57, 57, 0)
	a, err := coo.ToCSR()
	require.NoError(t, err)
	p, err := NewPlan[float64](dev, a, sptrsv.Options{UnitDiagonal: true}, Options{})
	require.NoError(t, err)
	require.NoError(t, p.Close())
	_, err = NewPlan[float64](dev, a, sptrsv.Options{}, Options{Algorithm: sptrsv.Sequential})
	require.ErrorIs(t, err, sptrsv.ErrAlgorithm)
}

func setEntry(c *sparse.COO, i, j int, v float64) {
	for k := range c.Val {
		if c.Row[k] == i && c.Col[k] == j {
			c.Val[k] = v
		}
	}
}

func dropEntry(c *sparse.COO, i, j int) {
	k := 0
	for q := range c.Val {
		if c.Row[q] == i && c.Col[q] == j {
			continue
		}
		c.Row[k], c.Col[k], c.Val[k] = c.Row[q], c.Col[q], c.Val[q]
		k++
	}
	c.Row, c.Col, c.Val = c.Row[:k], c.Col[:k], c.Val[:k]
}

// TestUpdateValues: new values with the same structure give the solve of
// the new triangle, for both algorithms.
func TestUpdateValues(t *testing.T) {
	a := suite.FEMLike(60, suite.Seed)
	b := rhs(a.N, 3)
	for _, alg := range []sptrsv.Algorithm{sptrsv.LevelSet, sptrsv.SyncFree, sptrsv.SyncFreeCSR, sptrsv.LocalityAware} {
		p, err := NewPlan[float64](dev, a, sptrsv.Options{}, Options{Algorithm: alg})
		require.NoError(t, err)
		a2 := a.Clone()
		for k := range a2.Val {
			a2.Val[k] *= 1 + 0.25*math.Sin(float64(k))
		}
		require.NoError(t, p.UpdateValues(a2.Val))
		an, err := sptrsv.Analyze(a2, sptrsv.Options{})
		require.NoError(t, err)
		ref := make([]float64, a.N)
		require.NoError(t, sptrsv.SolveSequential(an, b, ref))
		x := make([]float64, a.N)
		require.NoError(t, p.Solve(b, x))
		require.LessOrEqual(t, relErr(x, ref), 1e-13, alg)
		bad := a2.Clone()
		for i := 0; i < bad.N; i++ {
			for k := bad.RowPtr[i]; k < bad.RowPtr[i+1]; k++ {
				if int(bad.Col[k]) == i && i == 77 {
					bad.Val[k] = 0
				}
			}
		}
		err = p.UpdateValues(bad.Val)
		require.ErrorIs(t, err, sptrsv.ErrSingular)
		require.ErrorContains(t, err, "row 77")
		require.NoError(t, p.Close())
	}
}

// TestSchedule: chains hold the runs of narrow levels, wide levels get a
// launch each.
func TestSchedule(t *testing.T) {
	ptrs := []int32{0, 1, 3, 5003, 5004, 5005, 9000, 9001}
	require.Equal(t, []Step{{0, 2, true}, {2, 3, false}, {3, 5, true}, {5, 6, false}, {6, 7, true}},
		Schedule(ptrs, 2048))
	require.Len(t, Schedule(ptrs, -1), 7)
	require.Equal(t, []Step{{0, 7, true}}, Schedule(ptrs, math.MaxInt32))
	require.Equal(t, 0, lanesShift(300, 100))
	require.Equal(t, 5, lanesShift(45150, 300))
}

// TestAutoLanesByDepth: the windows' depth that Auto measures on the
// device is the one computed from the CPU's levels, and it sets the lanes
// of the row-wise solve as AutoWarpDepth says.
func TestAutoLanesByDepth(t *testing.T) {
	pr := dev.Properties()
	window := pr.SMs * pr.MaxThreadsPerSM / 32
	for _, c := range []struct {
		name string
		a    *sparse.CSR
	}{{"lap2d-natural", suite.Laplacian2D(300, suite.Natural)}, {"power-law", suite.PowerLaw(100_000, 2.9, suite.Seed)}} {
		for _, tri := range []sptrsv.Options{{}, {Triangle: sptrsv.Upper}} {
			a := c.a
			if tri.Triangle == sptrsv.Upper {
				a = upperOf(a)
			}
			an, err := sptrsv.Analyze(a, tri)
			require.NoError(t, err)
			sum, nb := 0, 0
			for k0 := 0; k0 < a.N; k0 += window {
				lo, hi := math.MaxInt, 0
				for k := k0; k < min(a.N, k0+window); k++ {
					i := k
					if tri.Triangle == sptrsv.Upper {
						i = a.N - 1 - k
					}
					lo, hi = min(lo, an.Level(i)), max(hi, an.Level(i))
				}
				sum += hi - lo + 1
				nb++
			}
			p, err := NewPlan[float64](dev, a, tri, Options{})
			require.NoError(t, err)
			require.Equal(t, sptrsv.SyncFreeCSR, p.Algorithm(), c.name)
			require.Equal(t, float64(sum)/float64(nb), p.Depth(), "%s %s", c.name, tri.Triangle)
			want := 1
			if p.Depth() <= AutoWarpDepth {
				want = 32
			}
			require.Equal(t, want, p.Lanes(), "%s %s: depth %.1f", c.name, tri.Triangle, p.Depth())
			t.Logf("%s %s: depth %.1f, %d lanes", c.name, tri.Triangle, p.Depth(), p.Lanes())
			require.NoError(t, p.Close())
		}
	}
}
