package tridiag_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/bandsolve/bandsolve/tridiag"
)

// denseOf builds the matrix of a system: tridiagonal, or periodic with
// the corners a[0] at (0, n−1) and c[n−1] at (n−1, 0).
func denseOf(s system, cyclic bool) *mat.Dense {
	n := len(s.b)
	A := mat.NewDense(n, n, nil)
	for i := range n {
		A.Set(i, i, A.At(i, i)+s.b[i])
		if i > 0 || cyclic {
			j := (i + n - 1) % n
			A.Set(i, j, A.At(i, j)+s.a[i])
		}
		if i < n-1 || cyclic {
			j := (i + 1) % n
			A.Set(i, j, A.At(i, j)+s.c[i])
		}
	}
	return A
}

// exactCondInf is ‖A‖∞·‖A⁻¹‖∞ with the inverse computed densely.
func exactCondInf(A *mat.Dense) float64 {
	var inv mat.Dense
	if err := inv.Inverse(A); err != nil {
		return math.Inf(1) // singular, or too ill-conditioned for a reference
	}
	return mat.Norm(A, math.Inf(1)) * mat.Norm(&inv, math.Inf(1))
}

// condCases are systems of several kinds: dominant, random, graded,
// Toeplitz, and from the stability suite (lesp, KMS inverse, Clement).
func condCases(r *rand.Rand, n int) map[string]system {
	cs := map[string]system{
		"dominant": randSystem(r, n, 4),
		"random":   randSystem(r, n, 0),
	}
	graded := randSystem(r, n, 0)
	for i := range n {
		s := math.Pow(10, float64(i%7)-3)
		graded.a[i] *= s
		graded.b[i] *= s
		graded.c[i] *= s
	}
	cs["graded rows"] = graded
	toe := randSystem(r, n, 0)
	for i := range n {
		toe.a[i], toe.b[i], toe.c[i] = 1, 1e-3, -1
	}
	cs["toeplitz"] = toe
	lesp := randSystem(r, n, 0)
	for i := range n {
		lesp.a[i] = 1 / float64(i+1)
		lesp.b[i] = -(2*float64(i+2) + 1)
		lesp.c[i] = float64(i + 2)
	}
	cs["lesp"] = lesp
	kms := randSystem(r, n, 0)
	rho := 0.5
	for i := range n {
		kms.a[i], kms.c[i] = -rho/(1-rho*rho), -rho/(1-rho*rho)
		kms.b[i] = (1 + rho*rho) / (1 - rho*rho)
		if i == 0 || i == n-1 {
			kms.b[i] = 1 / (1 - rho*rho)
		}
	}
	cs["kms inverse"] = kms
	if n%2 == 0 { // Clement is singular for odd n
		cl := randSystem(r, n, 0)
		for i := range n {
			cl.b[i] = 0
			cl.c[i] = float64(i + 1)
			cl.a[i] = float64(n - i)
		}
		cs["clement"] = cl
	}
	return cs
}

// TestCondEstimateVsDense: κ̂ of Plan.Check against ‖A‖∞·‖A⁻¹‖∞ from
// gonum's dense inverse, for tridiagonal and periodic matrices: never
// above the exact value (it is a lower bound), never below a tenth of it,
// and most often within a few percent.
func TestCondEstimateVsDense(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	var ratios []float64
	for _, cyclic := range []bool{false, true} {
		for _, n := range []int{1, 2, 3, 4, 7, 16, 50, 120} {
			for name, s := range condCases(r, n) {
				what := fmt.Sprintf("%s n=%d cyclic=%v", name, n, cyclic)
				exact := exactCondInf(denseOf(s, cyclic))
				if math.IsInf(exact, 0) || exact > 1e14 {
					continue // singular or too close for a dense reference
				}
				p, err := tridiag.NewPlan[float64](nil, tridiag.Shape{N: n, G: 1}, tridiag.Options{Cyclic: cyclic})
				require.NoError(t, err)
				x := make([]float64, n)
				st, _ := p.Check(s.a, s.b, s.c, s.d, x)
				require.Len(t, st, 1)
				est := st[0].Cond
				assert.LessOrEqual(t, est, exact*(1+1e-8), what)
				assert.GreaterOrEqual(t, est, exact/10, what)
				ratios = append(ratios, est/exact)
			}
		}
	}
	sort.Float64s(ratios)
	med := ratios[len(ratios)/2]
	t.Logf("%d matrices: κ̂/κ from %.3f to %.3f, median %.3f", len(ratios), ratios[0], ratios[len(ratios)-1], med)
	assert.Greater(t, med, 0.9, "the estimate is usually within 10%")
}

// neumann is a variable-coefficient diffusion operator with zero-flux
// ends: every row sums to zero, so it is singular (constants span its
// null space).
func neumann(r *rand.Rand, n int) system {
	s := randSystem(r, n, 0)
	k := make([]float64, n+1)
	for i := range k {
		k[i] = 0.5 + r.Float64()*3
	}
	for i := range n {
		s.a[i], s.c[i] = -k[i], -k[i+1]
		s.b[i] = k[i] + k[i+1]
		if i == 0 {
			s.a[i], s.b[i] = 0, k[i+1]
		}
		if i == n-1 {
			s.c[i], s.b[i] = 0, k[i]
		}
	}
	return s
}

// TestCheckPeriodicPoisson: the periodic Poisson matrix tridiag(−1, 2, −1)
// with corners is singular; every algorithm returns a huge x with a small
// backward error, and the check says that κ̂·ε ≥ 1/2.
func TestCheckPeriodicPoisson(t *testing.T) {
	ctx := context.Background()
	for _, n := range []int{8, 64, 1000} {
		d := make([]float64, n)
		for i := range d {
			d[i] = math.Sin(float64(i + 1))
		}
		for _, alg := range append(tridiag.Algorithms(), tridiag.Auto) {
			p, err := tridiag.NewPlan[float64](nil, tridiag.Shape{N: n, G: 1}, tridiag.Options{Algorithm: alg, Cyclic: true, Check: true})
			require.NoError(t, err)
			x := make([]float64, n)
			err = p.SolveConst(ctx, -1, 2, -1, d, x)
			what := fmt.Sprintf("n=%d %v", n, alg)
			var be *tridiag.BatchError
			require.ErrorAs(t, err, &be, what)
			require.Len(t, be.Failed, 1, what)
			f := be.Failed[0]
			assert.Equal(t, 0, f.System, what)
			assert.True(t, f.Status.Flags&tridiag.IllConditioned != 0, "%s: %v", what, f.Status)
			// The solver may have seen it first (a zero Sherman–Morrison
			// denominator); the check's verdict is there either way.
			assert.True(t, errors.Is(err, tridiag.ErrIllConditioned) || errors.Is(err, tridiag.ErrSingular), "%s: %v", what, err)
			assert.GreaterOrEqual(t, f.Status.Cond*tridiag.Epsilon[float64](), 0.5, what)
			// The same through Plan.CheckConst after a solve without it.
			q, err := tridiag.NewPlan[float64](nil, tridiag.Shape{N: n, G: 1}, tridiag.Options{Algorithm: alg, Cyclic: true})
			require.NoError(t, err)
			_ = q.SolveConst(ctx, -1, 2, -1, d, x)
			st, err := q.CheckConst(-1, 2, -1, d, x)
			require.Error(t, err, what)
			assert.True(t, st[0].Failed(), what)
		}
	}
	// Batches of periodic systems in every layout: the singular constant
	// matrix fails in every system, a non-singular one in none.
	const n, g = 30, 5
	for lname, lay := range layoutsFor(n, g) {
		shape := tridiag.Shape{N: n, G: g, Layout: lay}
		p, err := tridiag.NewPlan[float32](nil, shape, tridiag.Options{Cyclic: true})
		require.NoError(t, err)
		d := make([]float32, shape.Len())
		for i := range d {
			d[i] = float32(math.Sin(float64(i)))
		}
		x := make([]float32, len(d))
		_ = p.SolveConst(ctx, -1, 2, -1, d, x)
		st, err := p.CheckConst(-1, 2, -1, d, x)
		var be *tridiag.BatchError
		require.ErrorAs(t, err, &be, lname)
		assert.Equal(t, []int{0, 1, 2, 3, 4}, be.Systems(), lname)
		require.Len(t, st, g)
		require.NoError(t, p.SolveConst(ctx, -1, 3, -1, d, x), lname)
		st, err = p.CheckConst(-1, 3, -1, d, x)
		require.NoError(t, err, lname)
		for _, s := range st {
			assert.Less(t, s.Cond, 10.0, lname)
			assert.LessOrEqual(t, s.BackwardError, 10*tridiag.Epsilon[float32](), lname)
		}
	}

	// A non-singular periodic system passes.
	p, err := tridiag.NewPlan[float64](nil, tridiag.Shape{N: 64, G: 1}, tridiag.Options{Cyclic: true, Check: true})
	require.NoError(t, err)
	d := make([]float64, 64)
	for i := range d {
		d[i] = math.Cos(float64(i))
	}
	require.NoError(t, p.SolveConst(ctx, -1, 2.5, -1, d, make([]float64, 64)))
}

// TestCheckPartlySingularBatch: in a batch where some systems are
// singular (Neumann operators, a zero row) the check names exactly those,
// for every algorithm and layout, both precisions, and in place.
func TestCheckPartlySingularBatch(t *testing.T) {
	t.Run("float64", testCheckPartlySingular[float64])
	t.Run("float32", testCheckPartlySingular[float32])
}

func testCheckPartlySingular[T tridiag.Float](t *testing.T) {
	ctx := context.Background()
	const n, g = 24, 9
	bad := []int{1, 4, 8}
	r := rand.New(rand.NewPCG(7, 8))
	sys := make([]system, g)
	for k := range sys {
		sys[k] = randSystem(r, n, 4)
	}
	sys[1] = neumann(r, n)
	sys[4] = neumann(r, n)
	for i := range n { // system 8: row 5 is zero
		sys[8].b[i] += 1
	}
	sys[8].a[5], sys[8].b[5], sys[8].c[5] = 0, 0, 0
	for lname, lay := range layoutsFor(n, g) {
		shape := tridiag.Shape{N: n, G: g, Layout: lay}
		a, b, c, d := pack[T](shape, sys)
		for _, alg := range append(tridiag.Algorithms(), tridiag.Auto) {
			if alg.SPD() {
				continue // the systems are not symmetric (TestLDLTNotPositiveDefinite covers LDLT)
			}
			what := fmt.Sprintf("%s %v", lname, alg)
			p, err := tridiag.NewPlan[T](nil, shape, tridiag.Options{Algorithm: alg, Check: true})
			require.NoError(t, err)
			x := make([]T, len(d))
			err = p.Solve(ctx, a, b, c, d, x)
			var be *tridiag.BatchError
			require.ErrorAs(t, err, &be, what)
			assert.Equal(t, bad, be.Systems(), "%s: %v", what, err)
			assert.Equal(t, g, be.G)
			for _, f := range be.Failed {
				assert.True(t, f.Status.Failed(), "%s: system %d: %v", what, f.System, f.Status)
			}

			// Plan.Check on the same x: one status per system, the
			// good ones with a small backward error.
			st, err := p.Check(a, b, c, d, x)
			require.Error(t, err, what)
			require.Len(t, st, g)
			for s := range g {
				isBad := s == 1 || s == 4 || s == 8
				assert.Equal(t, isBad, st[s].Failed(), "%s: system %d: %v", what, s, st[s])
				if !isBad {
					assert.LessOrEqual(t, st[s].BackwardError, 100*tridiag.Epsilon[T](), "%s: system %d", what, s)
					assert.Less(t, st[s].Cond, 100.0, "%s: system %d", what, s)
				}
			}

			// In place: d is kept for the check.
			xd := append([]T(nil), d...)
			err = p.Solve(ctx, a, b, c, xd, xd)
			require.ErrorAs(t, err, &be, what)
			assert.Equal(t, bad, be.Systems(), "%s in place: %v", what, err)
		}
	}
}

// TestCheckOff: without Options.Check a singular system that an
// algorithm gets through without a zero pivot passes silently, as the
// check is opt-in; with it, it fails. The tolerance option is validated.
func TestCheckOptions(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(3, 4))
	s := neumann(r, 40)
	x := make([]float64, 40)
	p, err := tridiag.NewPlan[float64](nil, tridiag.Shape{N: 40, G: 1}, tridiag.Options{Algorithm: tridiag.GTSV})
	require.NoError(t, err)
	errOff := p.Solve(ctx, s.a, s.b, s.c, s.d, x)
	st, errCheck := p.Check(s.a, s.b, s.c, s.d, x)
	require.Error(t, errCheck)
	assert.True(t, st[0].Failed(), "%v (solve said %v)", st[0], errOff)

	_, err = tridiag.NewPlan[float64](nil, tridiag.Shape{N: 4, G: 1}, tridiag.Options{Tol: -1})
	assert.ErrorIs(t, err, tridiag.ErrOptions)
	_, err = tridiag.NewPlan[float64](nil, tridiag.Shape{N: 4, G: 1}, tridiag.Options{Tol: math.NaN()})
	assert.ErrorIs(t, err, tridiag.ErrOptions)

	// A loose tolerance accepts what the default rejects: a solution
	// perturbed by 1e-9 relative.
	good := randSystem(r, 40, 4)
	p, err = tridiag.NewPlan[float64](nil, tridiag.Shape{N: 40, G: 1}, tridiag.Options{})
	require.NoError(t, err)
	require.NoError(t, p.Solve(ctx, good.a, good.b, good.c, good.d, x))
	for i := range x {
		x[i] *= 1 + 1e-9
	}
	st, err = p.Check(good.a, good.b, good.c, good.d, x)
	require.ErrorIs(t, err, tridiag.ErrInaccurate)
	assert.Equal(t, tridiag.BackwardErrorTooLarge, st[0].Flags)
	loose, err := tridiag.NewPlan[float64](nil, tridiag.Shape{N: 40, G: 1}, tridiag.Options{Tol: 1e-6})
	require.NoError(t, err)
	_, err = loose.Check(good.a, good.b, good.c, good.d, x)
	require.NoError(t, err)
}

func TestFlags(t *testing.T) {
	assert.Equal(t, "ok", tridiag.Flags(0).String())
	assert.Equal(t, "zero-pivot|ill-conditioned", (tridiag.ZeroPivot | tridiag.IllConditioned).String())
	assert.False(t, tridiag.Boosted.Failed())
	assert.True(t, (tridiag.Boosted | tridiag.NotConverged).Failed())
	assert.Contains(t, tridiag.Flags(1<<20).String(), "0x100000")
	assert.Equal(t, tridiag.ZeroPivot|tridiag.NonFinite, tridiag.FlagsOf(tridiag.ErrBreakdown))
	assert.Equal(t, tridiag.Singular, tridiag.FlagsOf(fmt.Errorf("x: %w", tridiag.ErrSingular)))
	var s tridiag.Status
	s.BackwardError, s.Cond = 1e-10, 1e17
	s.Judge(1e-12, 0x1p-52)
	assert.Equal(t, tridiag.BackwardErrorTooLarge|tridiag.IllConditioned, s.Flags)
	err := s.Err(1e-12)
	assert.ErrorIs(t, err, tridiag.ErrInaccurate)
	assert.ErrorIs(t, err, tridiag.ErrIllConditioned)
	assert.NotContains(t, err.Error(), "\n")
}

// BenchmarkCheck compares Plan.Check with the solve it checks (Auto,
// that is Thomas, on dominant systems): the check costs a few solves with
// pivoting per system.
func BenchmarkCheck(b *testing.B) {
	const n, g = 256, 16384
	r := rand.New(rand.NewPCG(1, 2))
	sys := make([]system, g)
	for k := range sys {
		sys[k] = randSystem(r, n, 4)
	}
	shape := tridiag.Shape{N: n, G: g}
	a, bb, c, d := pack[float64](shape, sys)
	x := make([]float64, len(d))
	p, _ := tridiag.NewPlan[float64](nil, shape, tridiag.Options{})
	b.Run("solve", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			_ = p.Solve(context.Background(), a, bb, c, d, x)
		}
	})
	b.Run("check", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			_, _ = p.Check(a, bb, c, d, x)
		}
	})
}

// TestMergeChecks: the verdict of a device's check merged with the
// solve's breakdowns: a breakdown keeps its error and gets its measures, a
// system above the tolerance, with a non-finite x, with κ̂·ε ≥ 1/2 or
// found singular is added, one within every bound is not; an error that is
// no *BatchError passes through.
func TestMergeChecks(t *testing.T) {
	measured := func() []tridiag.Status {
		return []tridiag.Status{
			{BackwardError: 1e-18, Cond: 10},
			{BackwardError: 0.5},
			{BackwardError: math.Inf(1)},
			{BackwardError: 1e-3},
			{BackwardError: 1e-17, Cond: 1e17},
			{BackwardError: 1e-17, Cond: math.Inf(1), Flags: tridiag.Singular},
		}
	}
	solveErr := &tridiag.BatchError{G: 6, Failed: []tridiag.SystemError{{System: 1, Row: 7, Err: tridiag.ErrZeroPivot}}}
	st, err := tridiag.MergeChecks(solveErr, measured(), 1e-12, 0x1p-52)
	require.Len(t, st, 6)
	assert.False(t, st[0].Failed())
	assert.Equal(t, 10.0, st[0].Cond)
	var be *tridiag.BatchError
	require.ErrorAs(t, err, &be)
	require.Len(t, be.Failed, 5)
	assert.Equal(t, 1, be.Failed[0].System)
	assert.ErrorIs(t, be.Failed[0].Err, tridiag.ErrZeroPivot)
	assert.Equal(t, 0.5, be.Failed[0].Status.BackwardError)
	assert.NotZero(t, be.Failed[1].Status.Flags&tridiag.NonFinite)
	assert.ErrorIs(t, be.Failed[2].Err, tridiag.ErrInaccurate)
	assert.Equal(t, 3, be.Failed[2].System)
	assert.Equal(t, 4, be.Failed[3].System)
	assert.NotZero(t, be.Failed[3].Status.Flags&tridiag.IllConditioned)
	assert.Equal(t, 5, be.Failed[4].System)
	assert.NotZero(t, be.Failed[4].Status.Flags&tridiag.Singular)

	other := errors.New("driver")
	_, err = tridiag.MergeChecks(other, measured(), 1e-12, 0x1p-52)
	assert.Equal(t, other, err)
	_, err = tridiag.MergeChecks(nil, []tridiag.Status{{BackwardError: 1e-17, Cond: 3}}, 1e-12, 0x1p-52)
	assert.NoError(t, err)
}
