package tridiag_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/lapack/gonum"

	"github.com/bandsolve/bandsolve/tridiag"
)

// factorMode is a plan's options for the factorization tests, and
// whether Factors.Solve performs Plan.Solve's operations (bit for bit).
type factorMode struct {
	name    string
	opts    tridiag.Options
	bitwise bool
}

var factorModes = []factorMode{
	{"thomas", tridiag.Options{Algorithm: tridiag.Thomas}, false},
	{"gtsv", tridiag.Options{Algorithm: tridiag.GTSV}, true},
	{"auto", tridiag.Options{}, false},
	{"auto-never", tridiag.Options{Pivoting: tridiag.PivotNever}, false},
	{"auto-always", tridiag.Options{Pivoting: tridiag.PivotAlways}, true},
	{"ldlt", tridiag.Options{Algorithm: tridiag.LDLT}, true},
}

// randomRHS fills the rows of d (one batch in shape's layout) with new
// values from r and returns them per system, rounded to T.
func randomRHS[T tridiag.Float](r *rand.Rand, shape tridiag.Shape, d []T) [][]float64 {
	shape = shape.Normalize()
	out := make([][]float64, shape.G)
	for g := range out {
		out[g] = make([]float64, shape.N)
		for i := range out[g] {
			v := T(r.Float64()*2 - 1)
			d[shape.Layout.Index(i, g)] = v
			out[g][i] = float64(v)
		}
	}
	return out
}

// nanBatch returns k batches of shape, NaN everywhere (the gaps of a
// strided layout keep it).
func nanBatch[T tridiag.Float](shape tridiag.Shape, k int) []T {
	v := make([]T, k*shape.Normalize().Len())
	for i := range v {
		v[i] = T(math.NaN())
	}
	return v
}

// roundSystems rounds the coefficients of sys to T, as the oracle must
// see them.
func roundSystems[T tridiag.Float](sys []system) {
	for g := range sys {
		for i := range sys[g].b {
			sys[g].a[i], sys[g].b[i], sys[g].c[i] = float64(T(sys[g].a[i])), float64(T(sys[g].b[i])), float64(T(sys[g].c[i]))
		}
	}
}

// reference solves one system with gonum: LAPACK's Dgtsv, or a dense LU
// with partial pivoting for a periodic one.
func reference(s system, d []float64, cyclic bool) []float64 {
	s.d = d
	if cyclic {
		return cyclicOracle(s)
	}
	n := len(s.b)
	s.a = append([]float64(nil), s.a...)
	s.c = append([]float64(nil), s.c...)
	s.a[0], s.c[n-1] = 0, 0
	return oracle(s)
}

// testFactorSolve: for every factoring mode, N, G, layout and cyclic
// setting, Factor then several Solves with new right-hand sides give
// Plan.Solve's solutions (bit for bit where the operations are the same,
// else to within tol) and the reference's to within tol; the gaps of a
// strided x are not written; a solve in place gives the same bits.
func testFactorSolve[T tridiag.Float](t *testing.T, tol float64) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(31, 32))
	for _, mode := range factorModes {
		for _, n := range []int{1, 2, 3, 5, 64, 1000} {
			for _, g := range []int{1, 3, 8} {
				for lname, l := range layoutsFor(n, g) {
					for _, cyclic := range []bool{false, true} {
						name := fmt.Sprintf("%s/N=%d/G=%d/%s/cyclic=%v", mode.name, n, g, lname, cyclic)
						shape := tridiag.Shape{N: n, G: g, Layout: l}
						sys := make([]system, g)
						for k := range sys {
							sys[k] = randSystem(r, n, 4)
							if mode.opts.Algorithm.SPD() {
								sys[k].symmetrize()
							}
						}
						roundSystems[T](sys)
						a, b, c, _ := pack[T](shape, sys)
						if mode.opts.Algorithm.SPD() {
							a = nil // LDLT reads b and c only
						}
						opts := mode.opts
						opts.Cyclic = cyclic
						p, err := tridiag.NewPlan[T](nil, shape, opts)
						require.NoError(t, err, name)
						f, err := p.Factor(ctx, a, b, c)
						require.NoError(t, err, name)
						assert.Equal(t, p.Shape(), f.Shape(), name)
						d := nanBatch[T](shape, 1)
						for solve := range 3 {
							rhs := randomRHS(r, shape, d)
							// The dense periodic reference is O(N³): once for N = 1000.
							withRef := solve == 0 && (!cyclic || n < 1000 || g == 1)
							x := make([]T, len(d))
							require.NoError(t, f.Solve(ctx, d, x), name)
							want := make([]T, len(d))
							require.NoError(t, p.Solve(ctx, a, b, c, d, want), name)
							if mode.bitwise {
								assert.Equal(t, asBits(shape, want), asBits(shape, x), "%s: Plan.Solve's bits", name)
							}
							for k := range sys {
								got := unpack(shape, x, k)
								assert.LessOrEqual(t, relDiff(got, unpack(shape, want, k)), tol, "%s system %d: against Plan.Solve", name, k)
								if withRef {
									assert.LessOrEqual(t, relDiff(got, reference(sys[k], rhs[k], cyclic)), 10*tol, "%s system %d: against the reference", name, k)
								}
							}
							written := 0
							for _, v := range x {
								if v != 0 {
									written++
								}
							}
							assert.Equal(t, n*g, written, "%s: rows written, gaps not", name)
							require.NoError(t, f.Solve(ctx, d, d), name)
							assert.Equal(t, asBits(shape, x), asBits(shape, d), "%s: in place", name)
						}
						require.NoError(t, f.Close())
						require.NoError(t, p.Close())
					}
				}
			}
		}
	}
}

func TestFactorSolveF64(t *testing.T) { testFactorSolve[float64](t, 1e-12) }
func TestFactorSolveF32(t *testing.T) { testFactorSolve[float32](t, 1e-5) }

// testSolveMany: Factors.SolveMany with nrhs columns gives, column by
// column, the bits of Factors.Solve on that column, and Plan.SolveMany
// the same bits; in place too. Every mode, layout, cyclic or not.
func testSolveMany[T tridiag.Float](t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(41, 42))
	for _, mode := range factorModes {
		// 65 and 128 put one row, and none, past the tiles of 64 rows.
		for _, n := range []int{1, 2, 3, 5, 64, 65, 128, 1000} {
			g := 5
			for lname, l := range layoutsFor(n, g) {
				for _, cyclic := range []bool{false, true} {
					shape := tridiag.Shape{N: n, G: g, Layout: l}
					L := shape.Normalize().Len()
					sys := make([]system, g)
					for k := range sys {
						sys[k] = randSystem(r, n, 4)
						if mode.opts.Algorithm.SPD() {
							sys[k].symmetrize()
						}
					}
					a, b, c, _ := pack[T](shape, sys)
					opts := mode.opts
					opts.Cyclic = cyclic
					p, err := tridiag.NewPlan[T](nil, shape, opts)
					require.NoError(t, err)
					f, err := p.Factor(ctx, a, b, c)
					require.NoError(t, err)
					for _, nrhs := range []int{1, 2, 4, 16} {
						name := fmt.Sprintf("%s/N=%d/%s/cyclic=%v/nrhs=%d", mode.name, n, lname, cyclic, nrhs)
						d := nanBatch[T](shape, nrhs)
						for j := range nrhs {
							randomRHS(r, shape, d[j*L:(j+1)*L])
						}
						x := make([]T, len(d))
						require.NoError(t, f.SolveMany(ctx, nrhs, d, x), name)
						for j := range nrhs {
							xj := make([]T, L)
							require.NoError(t, f.Solve(ctx, d[j*L:(j+1)*L], xj), name)
							assert.Equal(t, asBits(shape, xj), asBits(shape, x[j*L:(j+1)*L]), "%s column %d: Factors.Solve's bits", name, j)
						}
						x2 := make([]T, len(d))
						require.NoError(t, p.SolveMany(ctx, nrhs, a, b, c, d, x2), name)
						assert.Equal(t, x, x2, "%s: Plan.SolveMany is Factor then SolveMany", name)
						dc := append([]T(nil), d...)
						require.NoError(t, f.SolveMany(ctx, nrhs, dc, dc), name)
						assert.Equal(t, columnBits(shape, x, nrhs), columnBits(shape, dc, nrhs), "%s: in place", name)
						dc = append(dc[:0], d...)
						require.NoError(t, p.SolveMany(ctx, nrhs, a, b, c, dc, dc), name)
						assert.Equal(t, columnBits(shape, x, nrhs), columnBits(shape, dc, nrhs), "%s: Plan.SolveMany in place", name)
					}
					require.NoError(t, f.Close())
					require.NoError(t, p.Close())
				}
			}
		}
	}
}

// columnBits is the bits of the rows of the nrhs batches in x (not the
// gaps of a strided layout).
func columnBits[T tridiag.Float](shape tridiag.Shape, x []T, nrhs int) []uint64 {
	L := shape.Normalize().Len()
	var out []uint64
	for j := range nrhs {
		for _, v := range asBits(shape, x[j*L:(j+1)*L]) {
			out = append(out, math.Float64bits(v))
		}
	}
	return out
}

// bitsOf maps x to its bits, so that NaN compares equal to NaN.
func bitsOf[T tridiag.Float](x []T) []uint64 {
	out := make([]uint64, len(x))
	for i, v := range x {
		out[i] = math.Float64bits(float64(v))
	}
	return out
}

func TestSolveManyF64(t *testing.T) { testSolveMany[float64](t) }
func TestSolveManyF32(t *testing.T) { testSolveMany[float32](t) }

// TestSolveManyAgainstSolve: Plan.SolveMany's columns are Plan.Solve's
// bit for bit where the operations are the same (GTSV, LDLT, and the
// algorithms that do not factor, which solve column by column), and to
// within rounding for Thomas's factors.
func TestSolveManyAgainstSolve(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(51, 52))
	n, g, nrhs := 100, 6, 4
	shape := tridiag.Shape{N: n, G: g, Layout: tridiag.Interleaved(g)}
	L := shape.Len()
	sys := make([]system, g)
	for k := range sys {
		sys[k] = randSystem(r, n, 4)
		sys[k].symmetrize() // every algorithm solves it, LDLT too
	}
	a, b, c, _ := pack[float64](shape, sys)
	d := nanBatch[float64](shape, nrhs)
	for j := range nrhs {
		randomRHS(r, shape, d[j*L:(j+1)*L])
	}
	for _, alg := range append(tridiag.Algorithms(), tridiag.Auto) {
		p, err := tridiag.NewPlan[float64](nil, shape, tridiag.Options{Algorithm: alg, Cyclic: true})
		require.NoError(t, err)
		x := make([]float64, len(d))
		require.NoError(t, p.SolveMany(ctx, nrhs, a, b, c, d, x), alg.String())
		for j := range nrhs {
			want := make([]float64, L)
			require.NoError(t, p.Solve(ctx, a, b, c, d[j*L:(j+1)*L], want))
			got := x[j*L : (j+1)*L]
			if alg == tridiag.Thomas || alg == tridiag.Auto {
				assert.InDeltaSlice(t, want, got, 1e-13, "%s column %d", alg, j)
			} else {
				assert.Equal(t, want, got, "%s column %d", alg, j)
			}
		}
		require.NoError(t, p.Close())
	}
}

// TestFactorAutoChoosesPerSystem: on a batch where some systems need
// pivoting, Auto's factors send to gttrf the systems Plan.Solve sends to
// GTSV (their solutions are GTSV's, bit for bit), PivotNever those where
// Thomas breaks down, and Describe counts them.
func TestFactorAutoChoosesPerSystem(t *testing.T) {
	ctx := context.Background()
	n, g := 64, 12
	sys := mixedBatch(n, g)
	r := rand.New(rand.NewPCG(61, 62))
	for lname, l := range layoutsFor(n, g) {
		for _, cyclic := range []bool{false, true} {
			for _, piv := range []tridiag.Pivoting{tridiag.PivotAuto, tridiag.PivotNever} {
				name := fmt.Sprintf("%s/cyclic=%v/%s", lname, cyclic, piv)
				shape := tridiag.Shape{N: n, G: g, Layout: l}
				a, b, c, d := pack[float64](shape, sys)
				randomRHS(r, shape, d)
				gp, err := tridiag.NewPlan[float64](nil, shape, tridiag.Options{Algorithm: tridiag.GTSV, Cyclic: cyclic})
				require.NoError(t, err)
				xg := make([]float64, len(d))
				errG := gp.Solve(ctx, a, b, c, d, xg)
				p, err := tridiag.NewPlan[float64](nil, shape, tridiag.Options{Pivoting: piv, Cyclic: cyclic})
				require.NoError(t, err)
				xa := make([]float64, len(d))
				errA := p.Solve(ctx, a, b, c, d, xa)
				assert.Equal(t, errG, errA, name)
				tp, err := tridiag.NewPlan[float64](nil, shape, tridiag.Options{Algorithm: tridiag.Thomas, Cyclic: cyclic})
				require.NoError(t, err)
				thomasFailed := map[int]bool{}
				var be *tridiag.BatchError
				if errors.As(tp.Solve(ctx, a, b, c, d, make([]float64, len(d))), &be) {
					for _, f := range be.Failed {
						thomasFailed[f.System] = true
					}
				}
				f, err := p.Factor(ctx, a, b, c)
				assert.Equal(t, errA, err, "%s: Factor reports what Solve reports", name)
				require.NotNil(t, f, name)
				x := make([]float64, len(d))
				assert.Equal(t, errA, f.Solve(ctx, d, x), name)
				pivoted := 0
				for k := range g {
					gtsv := k%2 == 1 // not dominant: fails the growth test
					if piv == tridiag.PivotNever {
						gtsv = thomasFailed[k]
					}
					if gtsv {
						pivoted++
						assert.Equal(t, unpack(shape, xg, k), unpack(shape, x, k), "%s system %d: GTSV's bits", name, k)
					} else {
						// Not dominant under PivotNever: Thomas's rounding grows.
						assert.LessOrEqual(t, relDiff(unpack(shape, x, k), unpack(shape, xa, k)), 1e-9, "%s system %d", name, k)
					}
				}
				assert.Equal(t, fmt.Sprintf("thomas (lu without pivoting), gtsv (gttrf) for %d of %d systems", pivoted, g), f.Describe(), name)
				require.NoError(t, f.Close())
				assert.Equal(t, "auto", f.Describe(), "closed")
				require.NoError(t, p.Close())
				require.NoError(t, gp.Close())
			}
		}
	}
}

// TestFactorBreakdowns: Factor reports each system that breaks down with
// its row, exactly as Plan.Solve does (a zero pivot in Thomas, a
// singular matrix in GTSV, a pivot that is not positive in LDLT); the
// factors solve the other systems, report the failed ones again at every
// solve and leave NaN in their rows, for one column or several.
func TestFactorBreakdowns(t *testing.T) {
	ctx := context.Background()
	n, g := 6, 4
	r := rand.New(rand.NewPCG(71, 72))
	sym := func() system {
		s := randSystem(r, n, 4)
		s.symmetrize()
		return s
	}
	cases := []struct {
		alg  tridiag.Algorithm
		want error
		bad  map[int]int // system → row (−1: the row Solve names)
		mk   func(k int) system
	}{
		{tridiag.Thomas, tridiag.ErrZeroPivot, map[int]int{1: 0, 3: 2}, func(k int) system {
			s := randSystem(r, n, 4)
			switch k {
			case 1:
				s.b[0] = 0
			case 3: // u[2] = b[2] − a[2]·c[1]/u[1] = 0
				s.a[1], s.c[0] = 0, 0
				s.b[1], s.c[1], s.a[2], s.b[2] = 1, 1, 1, 1
			}
			return s
		}},
		{tridiag.GTSV, tridiag.ErrSingular, map[int]int{2: -1}, func(k int) system {
			s := randSystem(r, n, 4)
			if k == 2 { // rows 0 and 1 are both [1 1 0 …]
				s.b[0], s.c[0], s.a[1], s.b[1], s.c[1] = 1, 1, 1, 1, 0
			}
			return s
		}},
		{tridiag.Auto, tridiag.ErrSingular, map[int]int{0: -1}, func(k int) system {
			s := randSystem(r, n, 4)
			if k == 0 {
				s.b[0], s.c[0], s.a[1], s.b[1], s.c[1] = 1, 1, 1, 1, 0
			}
			return s
		}},
		{tridiag.LDLT, tridiag.ErrNotPositiveDefinite, map[int]int{0: 0, 2: 3}, func(k int) system {
			s := sym()
			switch k {
			case 0:
				s.b[0] = -1
			case 2: // d[3] = b[3] − c[2]²/d[2] < 0
				s.b[3] = 0.1
				s.c[2] = 1
				s.symmetrize()
			}
			return s
		}},
	}
	for _, tc := range cases {
		for lname, l := range layoutsFor(n, g) {
			name := fmt.Sprintf("%s/%s", tc.alg, lname)
			sys := make([]system, g)
			for k := range sys {
				sys[k] = tc.mk(k)
			}
			shape := tridiag.Shape{N: n, G: g, Layout: l}
			a, b, c, d := pack[float64](shape, sys)
			p, err := tridiag.NewPlan[float64](nil, shape, tridiag.Options{Algorithm: tc.alg})
			require.NoError(t, err)
			want := make([]float64, len(d))
			solveErr := p.Solve(ctx, a, b, c, d, want)
			var be *tridiag.BatchError
			require.ErrorAs(t, solveErr, &be, name)
			f, err := p.Factor(ctx, a, b, c)
			require.NotNil(t, f, name)
			assert.Equal(t, solveErr, err, "%s: Factor reports what Solve reports", name)
			require.ErrorIs(t, err, tc.want, name)
			var fe *tridiag.BatchError
			require.ErrorAs(t, err, &fe, name)
			require.Len(t, fe.Failed, len(tc.bad), "%s: %v", name, err)
			for _, sf := range fe.Failed {
				row, ok := tc.bad[sf.System]
				assert.True(t, ok, "%s: system %d", name, sf.System)
				if row < 0 {
					row = sf.Row
					assert.GreaterOrEqual(t, row, 0, name)
				}
				assert.Equal(t, row, sf.Row, "%s: system %d", name, sf.System)
				assert.Contains(t, sf.Error(), fmt.Sprintf("system %d, row %d: ", sf.System, row), name)
			}
			x := make([]float64, len(d))
			assert.Equal(t, solveErr, f.Solve(ctx, d, x), "%s: Solve reports them again", name)
			for k := range g {
				if _, bad := tc.bad[k]; bad {
					for _, v := range unpack(shape, x, k) {
						assert.True(t, math.IsNaN(v), "%s system %d: NaN", name, k)
					}
					continue
				}
				assert.InDeltaSlice(t, unpack(shape, want, k), unpack(shape, x, k), 1e-13, "%s system %d", name, k)
			}
			// Several columns: the same systems, named once each.
			L := shape.Len()
			dm := append(append([]float64(nil), d...), d...)
			xm := make([]float64, 2*L)
			err = f.SolveMany(ctx, 2, dm, xm)
			require.ErrorAs(t, err, &fe, name)
			assert.Equal(t, be.Systems(), fe.Systems(), name)
			assert.Equal(t, be.Status(), fe.Status(), name)
			assert.Equal(t, bitsOf(x), bitsOf(xm[L:]), name)
			xm2 := make([]float64, 2*L)
			assert.Equal(t, err, p.SolveMany(ctx, 2, a, b, c, dm, xm2), "%s: Plan.SolveMany", name)
			assert.Equal(t, bitsOf(xm), bitsOf(xm2), name)
			require.NoError(t, p.Close())
		}
	}
}

// TestFactorsNonFiniteResult: a factored system whose solution
// overflows for one right-hand side is reported for that column, which
// gets NaN; the other columns keep their solution.
func TestFactorsNonFiniteResult(t *testing.T) {
	ctx := context.Background()
	n := 4
	p, err := tridiag.NewPlan[float32](nil, tridiag.Shape{N: n, G: 1}, tridiag.Options{Algorithm: tridiag.Thomas})
	require.NoError(t, err)
	f, err := p.FactorConst(ctx, 0, 1e-30, 0)
	require.NoError(t, err)
	d := []float32{1, 1, 1, 1, 1e10, 1e10, 1e10, 1e10, 2, 2, 2, 2}
	x := make([]float32, len(d))
	err = f.SolveMany(ctx, 3, d, x)
	var be *tridiag.BatchError
	require.ErrorAs(t, err, &be)
	require.Len(t, be.Failed, 1)
	assert.Equal(t, 0, be.Failed[0].Row)
	require.ErrorIs(t, err, tridiag.ErrNonFiniteResult)
	assert.Contains(t, err.Error(), "system 0, row 0: right-hand side 1: ")
	for i := range n {
		assert.InDelta(t, 1e30, x[i], 1e24)
		assert.True(t, math.IsNaN(float64(x[n+i])))
		assert.InDelta(t, 2e30, x[2*n+i], 2e24)
	}
}

// TestFactorOptions: the algorithms that do not factor are refused with
// ErrOptions naming those that do, while their SolveMany solves column by
// column; a device whose solver does not factor is refused too; bad
// right-hand sides, closed plans and closed factors are reported.
func TestFactorOptions(t *testing.T) {
	ctx := context.Background()
	shape := tridiag.Shape{N: 8, G: 2}
	ones := func(k int) []float64 {
		v := make([]float64, k*shape.Len())
		for i := range v {
			v[i] = 1
		}
		return v
	}
	fours := ones(1)
	for i := range fours {
		fours[i] = 4
	}
	for _, alg := range tridiag.Algorithms() {
		p, err := tridiag.NewPlan[float64](nil, shape, tridiag.Options{Algorithm: alg})
		require.NoError(t, err)
		f, err := p.Factor(ctx, ones(1), fours, ones(1))
		switch alg {
		case tridiag.Thomas, tridiag.GTSV, tridiag.LDLT:
			require.NoError(t, err, alg.String())
			require.NoError(t, f.Close())
		default:
			require.ErrorIs(t, err, tridiag.ErrOptions, alg.String())
			assert.Nil(t, f)
			assert.Contains(t, err.Error(), "algorithm "+alg.String()+" does not factor (Factor takes auto, thomas, gtsv or ldlt)")
		}
		x := make([]float64, 3*shape.Len())
		require.NoError(t, p.SolveMany(ctx, 3, ones(1), fours, ones(1), ones(3), x), alg.String())
		for _, v := range x {
			assert.InDelta(t, x[0], v, 0.2, alg.String()) // rows of (1, 4, 1)·x = 1 are near 1/6
		}
		require.NoError(t, p.Close())
	}

	p, err := tridiag.NewPlan[float64](nil, shape, tridiag.Options{})
	require.NoError(t, err)
	f, err := p.Factor(ctx, ones(1), fours, ones(1))
	require.NoError(t, err)
	for _, nrhs := range []int{0, -1} {
		require.ErrorIs(t, f.SolveMany(ctx, nrhs, ones(1), ones(1)), tridiag.ErrShape)
		require.ErrorIs(t, p.SolveMany(ctx, nrhs, ones(1), fours, ones(1), ones(1), ones(1)), tridiag.ErrShape)
	}
	err = f.SolveMany(ctx, 2, ones(1), ones(2))
	require.ErrorIs(t, err, tridiag.ErrLength)
	assert.Contains(t, err.Error(), "d has 16 elements, 2 right-hand sides of the 2×8 batch need 32")
	bad := ones(3)
	bad[2*shape.Len()+8+5] = math.Inf(-1)
	err = f.SolveMany(ctx, 3, bad, ones(3))
	require.ErrorIs(t, err, tridiag.ErrNonFinite)
	assert.Contains(t, err.Error(), "d of right-hand side 2, system 1, row 5 is -Inf")
	err = p.SolveMany(ctx, 3, ones(1), fours, ones(1), bad, ones(3))
	require.ErrorIs(t, err, tridiag.ErrNonFinite)
	_, err = p.Factor(ctx, ones(1)[:15], fours, ones(1))
	require.ErrorIs(t, err, tridiag.ErrLength)
	nan := ones(1)
	nan[3] = math.NaN()
	_, err = p.Factor(ctx, ones(1), fours, nan)
	require.ErrorIs(t, err, tridiag.ErrNonFinite)
	assert.Contains(t, err.Error(), "c of system 0, row 3")
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = p.Factor(cancelled, ones(1), fours, ones(1))
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, f.Solve(cancelled, ones(1), ones(1)), context.Canceled)

	// The factors outlive the plan.
	require.NoError(t, p.Close())
	_, err = p.Factor(ctx, ones(1), fours, ones(1))
	require.ErrorIs(t, err, tridiag.ErrClosed)
	require.ErrorIs(t, p.SolveMany(ctx, 1, ones(1), fours, ones(1), ones(1), ones(1)), tridiag.ErrClosed)
	x := make([]float64, shape.Len())
	require.NoError(t, f.Solve(ctx, ones(1), x))
	require.NoError(t, f.Close())
	require.NoError(t, f.Close(), "twice")
	require.ErrorIs(t, f.Solve(ctx, ones(1), x), tridiag.ErrClosed)

	// A device whose solver does not factor.
	dev := &plainDevice{}
	p, err = tridiag.NewPlan[float64](dev, shape, tridiag.Options{})
	require.NoError(t, err)
	_, err = p.Factor(ctx, ones(1), fours, ones(1))
	require.ErrorIs(t, err, tridiag.ErrOptions)
	assert.Contains(t, err.Error(), "the auto solver of plain device does not factor")
	x = make([]float64, 2*shape.Len())
	require.NoError(t, p.SolveMany(ctx, 2, ones(1), fours, ones(1), ones(2), x))
	assert.Equal(t, 2, dev.solves, "SolveMany solves column by column")
}

// plainDevice solves on the CPU through a solver that implements Solver
// only (no Factorer, no ManySolver), as a device without factorizations.
type plainDevice struct{ solves int }

func (d *plainDevice) Name() string { return "plain device" }

func (d *plainDevice) NewSolver32(spec tridiag.Spec) (tridiag.Solver[float32], error) {
	s, err := tridiag.NewCPU(1).NewSolver32(spec)
	return &plainSolver[float32]{s, &d.solves}, err
}

func (d *plainDevice) NewSolver64(spec tridiag.Spec) (tridiag.Solver[float64], error) {
	s, err := tridiag.NewCPU(1).NewSolver64(spec)
	return &plainSolver[float64]{s, &d.solves}, err
}

type plainSolver[T tridiag.Float] struct {
	s      tridiag.Solver[T]
	solves *int
}

func (p *plainSolver[T]) Solve(ctx context.Context, b tridiag.Batch[T]) error {
	*p.solves++
	return p.s.Solve(ctx, b)
}

func (p *plainSolver[T]) Close() error { return p.s.Close() }

// TestFactorCheck: with Options.Check the factors check every solve, in
// place too: a singular (Neumann) system is flagged ill-conditioned in
// its column, the others pass; with several columns it is listed once.
func TestFactorCheck(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(81, 82))
	n, g := 24, 4
	sys := make([]system, g)
	for k := range sys {
		sys[k] = randSystem(r, n, 4)
	}
	sys[2] = neumann(r, n)
	shape := tridiag.Shape{N: n, G: g}
	a, b, c, d := pack[float64](shape, sys)
	for _, alg := range []tridiag.Algorithm{tridiag.GTSV, tridiag.Auto} {
		p, err := tridiag.NewPlan[float64](nil, shape, tridiag.Options{Algorithm: alg, Check: true})
		require.NoError(t, err)
		f, err := p.Factor(ctx, a, b, c)
		if err != nil { // a zero pivot in a singular system is fine too
			var be *tridiag.BatchError
			require.ErrorAs(t, err, &be)
			assert.Equal(t, []int{2}, be.Systems())
		}
		for _, inPlace := range []bool{false, true} {
			dc := append([]float64(nil), d...)
			x := make([]float64, len(d))
			if inPlace {
				x = dc
			}
			err = f.Solve(ctx, dc, x)
			var be *tridiag.BatchError
			require.ErrorAs(t, err, &be, alg.String())
			assert.Equal(t, []int{2}, be.Systems(), "%s: %v", alg, err)
			assert.True(t, be.Failed[0].Status.Failed())
			assert.NotZero(t, be.Failed[0].Status.Flags&(tridiag.IllConditioned|tridiag.Singular), "%v", be.Failed[0].Status)
		}
		dm := append(append([]float64(nil), d...), d...)
		err = f.SolveMany(ctx, 2, dm, make([]float64, len(dm)))
		var be *tridiag.BatchError
		require.ErrorAs(t, err, &be, alg.String())
		assert.Equal(t, []int{2}, be.Systems())
		err = p.SolveMany(ctx, 2, a, b, c, dm, dm)
		require.ErrorAs(t, err, &be, alg.String())
		assert.Equal(t, []int{2}, be.Systems())
		require.NoError(t, f.Close())
		require.NoError(t, p.Close())
	}
}

// TestFactorConst: FactorConst factors constant coefficients as
// SolveConst solves them.
func TestFactorConst(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(91, 92))
	n, g := 50, 6
	for _, mode := range factorModes {
		for _, cyclic := range []bool{false, true} {
			shape := tridiag.Shape{N: n, G: g, Layout: tridiag.Interleaved(g)}
			opts := mode.opts
			opts.Cyclic = cyclic
			p, err := tridiag.NewPlan[float64](nil, shape, opts)
			require.NoError(t, err)
			f, err := p.FactorConst(ctx, -1, 2.5, -1)
			require.NoError(t, err)
			d := make([]float64, shape.Len())
			randomRHS(r, shape, d)
			want, x := make([]float64, len(d)), make([]float64, len(d))
			require.NoError(t, p.SolveConst(ctx, -1, 2.5, -1, d, want))
			require.NoError(t, f.Solve(ctx, d, x))
			if mode.bitwise {
				assert.Equal(t, want, x, mode.name)
			} else {
				assert.InDeltaSlice(t, want, x, 1e-13, mode.name)
			}
			require.NoError(t, p.Close())
		}
	}
}

// TestFactorConstBreakdown: constant coefficients are factored once for
// every system; a breakdown of that one matrix fails every system at the
// row SolveConst names, and the factors still solve nothing but NaN.
func TestFactorConstBreakdown(t *testing.T) {
	ctx := context.Background()
	const n, g = 5, 4
	p, err := tridiag.NewPlan[float64](nil, tridiag.Shape{N: n, G: g}, tridiag.Options{Algorithm: tridiag.Thomas})
	require.NoError(t, err)
	defer p.Close()
	f, ferr := p.FactorConst(ctx, 1, 0, 1)
	d, x := make([]float64, n*g), make([]float64, n*g)
	serr := p.SolveConst(ctx, 1, 0, 1, d, x)
	var fbe, sbe *tridiag.BatchError
	require.ErrorAs(t, ferr, &fbe)
	require.ErrorAs(t, serr, &sbe)
	require.Len(t, fbe.Failed, g)
	for i := range g {
		assert.Equal(t, sbe.Failed[i].System, fbe.Failed[i].System)
		assert.Equal(t, sbe.Failed[i].Row, fbe.Failed[i].Row)
	}
	require.NotNil(t, f)
	require.Error(t, f.Solve(ctx, d, x))
	for _, v := range x {
		assert.True(t, math.IsNaN(v))
	}
}

// ulps is the distance between x and y in units in the last place of
// the larger.
func ulps(x, y float64) float64 {
	if x == y {
		return 0
	}
	return math.Abs(x-y) / (math.Nextafter(math.Max(math.Abs(x), math.Abs(y)), math.Inf(1)) - math.Max(math.Abs(x), math.Abs(y)))
}

// TestLDLTMatchesDpttrs: LDLT's solutions, from Plan.Solve, Factor and
// Solve, and SolveMany, are those of gonum's Dpttrf and Dpttrs to within
// a few ulps, for one right-hand side and several.
func TestLDLTMatchesDpttrs(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(101, 102))
	impl := gonum.Implementation{}
	for _, n := range []int{1, 2, 3, 5, 64, 1000} {
		g, nrhs := 3, 4
		shape := tridiag.Shape{N: n, G: g}
		b, c := make([]float64, n*g), make([]float64, n*g)
		for k := range b {
			b[k], c[k] = 2+r.Float64(), r.Float64()*2-1
		}
		d := make([]float64, nrhs*n*g)
		for k := range d {
			d[k] = r.Float64()*2 - 1
		}
		p, err := tridiag.NewPlan[float64](nil, shape, tridiag.Options{Algorithm: tridiag.LDLT})
		require.NoError(t, err)
		f, err := p.Factor(ctx, nil, b, c)
		require.NoError(t, err)
		x := make([]float64, len(d))
		require.NoError(t, f.SolveMany(ctx, nrhs, d, x))
		xs := make([]float64, len(d))
		for j := range nrhs {
			o := j * n * g
			require.NoError(t, p.Solve(ctx, nil, b, c, d[o:o+n*g], xs[o:o+n*g]))
		}
		assert.Equal(t, xs, x, "N=%d: Plan.Solve's bits", n)
		worst := 0.0
		for k := range g {
			dd := append([]float64(nil), b[k*n:(k+1)*n]...)
			e := append([]float64(nil), c[k*n:k*n+n-1]...)
			require.True(t, impl.Dpttrf(n, dd, e))
			// Dpttrs's B is n×nrhs row-major.
			bm := make([]float64, n*nrhs)
			for j := range nrhs {
				for i := range n {
					bm[i*nrhs+j] = d[j*n*g+k*n+i]
				}
			}
			impl.Dpttrs(n, nrhs, dd, e, bm, nrhs)
			for j := range nrhs {
				for i := range n {
					worst = math.Max(worst, ulps(x[j*n*g+k*n+i], bm[i*nrhs+j]))
				}
			}
		}
		assert.LessOrEqual(t, worst, 4.0, "N=%d", n)
		require.NoError(t, p.Close())
	}
}

// TestLDLTNotPositiveDefinite: LDLT names the system and row of the
// first pivot that is not positive, wrapping ErrNotPositiveDefinite, with
// the ZeroPivot flag under Options.Check, where GTSV solves the
// (indefinite, non-singular) system; cyclic plans too.
func TestLDLTNotPositiveDefinite(t *testing.T) {
	ctx := context.Background()
	n, g := 5, 3
	b := []float64{4, 4, 4, 4, 4, 4, -4, 4, 4, 4, 4, 4, 4, 4, 4}
	c := []float64{1, 1, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1, 0}
	d := make([]float64, n*g)
	for i := range d {
		d[i] = 1
	}
	for _, cyclic := range []bool{false, true} {
		p, err := tridiag.NewPlan[float64](nil, tridiag.Shape{N: n, G: g}, tridiag.Options{Algorithm: tridiag.LDLT, Check: true, Cyclic: cyclic})
		require.NoError(t, err)
		x := make([]float64, n*g)
		err = p.Solve(ctx, nil, b, c, d, x)
		var be *tridiag.BatchError
		require.ErrorAs(t, err, &be)
		require.Equal(t, []int{1}, be.Systems())
		assert.Equal(t, 1, be.Failed[0].Row)
		require.ErrorIs(t, err, tridiag.ErrNotPositiveDefinite)
		assert.Contains(t, err.Error(), "system 1, row 1: not positive definite at row 1")
		assert.NotZero(t, be.Failed[0].Status.Flags&tridiag.ZeroPivot)
		_, ferr := p.Factor(ctx, nil, b, c)
		assert.Equal(t, err.Error(), ferr.Error())
		require.NoError(t, p.Close())
		a := make([]float64, n*g)
		for i := range a {
			if i%n > 0 {
				a[i] = c[i-1]
			} else {
				a[i] = c[i+n-1]
			}
		}
		gp, err := tridiag.NewPlan[float64](nil, tridiag.Shape{N: n, G: g}, tridiag.Options{Algorithm: tridiag.GTSV, Cyclic: cyclic})
		require.NoError(t, err)
		require.NoError(t, gp.Solve(ctx, a, b, c, d, x))
	}
	// N = 1, cyclic: b + 2c.
	p, err := tridiag.NewPlan[float64](nil, tridiag.Shape{N: 1, G: 2}, tridiag.Options{Algorithm: tridiag.LDLT, Cyclic: true})
	require.NoError(t, err)
	x := make([]float64, 2)
	err = p.Solve(ctx, nil, []float64{1, 1}, []float64{1, -1}, []float64{3, 3}, x)
	require.ErrorIs(t, err, tridiag.ErrNotPositiveDefinite)
	assert.Equal(t, 1.0, x[0])
	_, ferr := p.Factor(ctx, nil, []float64{1, 1}, []float64{1, -1})
	assert.Equal(t, err, ferr)
}

// TestLDLTIgnoresA: LDLT reads b and c only: a may be nil, or hold
// anything, NaN included.
func TestLDLTIgnoresA(t *testing.T) {
	ctx := context.Background()
	shape := tridiag.Shape{N: 4, G: 1}
	p, err := tridiag.NewPlan[float64](nil, shape, tridiag.Options{Algorithm: tridiag.LDLT, Check: true})
	require.NoError(t, err)
	b, c, d := []float64{2, 2, 2, 2}, []float64{-1, -1, -1, 0}, []float64{1, 0, 0, 1}
	want := make([]float64, 4)
	require.NoError(t, p.Solve(ctx, nil, b, c, d, want))
	assert.InDeltaSlice(t, []float64{1, 1, 1, 1}, want, 1e-15)
	nan := math.NaN()
	x := make([]float64, 4)
	require.NoError(t, p.Solve(ctx, []float64{nan, 7, nan, 1e300}, b, c, d, x))
	assert.Equal(t, want, x)
	require.NoError(t, p.SolveConst(ctx, nan, 2, -1, d, x))
	assert.Equal(t, want, x)
	st, err := p.Check([]float64{nan}, b, c, d, x)
	require.NoError(t, err)
	assert.Less(t, st[0].BackwardError, 1e-15)
}

// TestFactorsErrorsName: the errors of Factor and of the factors' solves
// match errors.Is as Solve's do.
func TestFactorsErrorsName(t *testing.T) {
	assert.True(t, errors.Is(&tridiag.PivotError{Row: 2, Err: tridiag.ErrNotPositiveDefinite}, tridiag.ErrNotPositiveDefinite))
	assert.Equal(t, tridiag.ZeroPivot, tridiag.FlagsOf(fmt.Errorf("x: %w", tridiag.ErrNotPositiveDefinite)))
}
