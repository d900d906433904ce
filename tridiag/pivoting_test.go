package tridiag_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/stability"
	"github.com/bandsolve/bandsolve/tridiag"
)

// solveOne solves one system alone (G = 1) with opts on the CPU and
// returns x, or nil when the solve failed.
func solveOne[T tridiag.Float](t *testing.T, opts tridiag.Options, a, b, c, d []T) []T {
	t.Helper()
	p, err := tridiag.NewPlan[T](tridiag.NewCPU(1), tridiag.Shape{N: len(b), G: 1}, opts)
	require.NoError(t, err)
	defer p.Close()
	x := make([]T, len(b))
	if p.Solve(context.Background(), a, b, c, d, x) != nil {
		return nil
	}
	return x
}

// testAutoOnSuite holds Auto's relative error within 10× of GTSV's (which
// is LAPACK gtsv's) on every type of the stability suite at N = 512,
// wherever GTSV's error is below 1, and Auto to a solution wherever GTSV
// finds one. It logs GTSV's, PivotNever's and Auto's errors (go test -v).
func testAutoOnSuite[T float32 | float64](t *testing.T) {
	const n = 512
	for _, seed := range []uint64{1, 2, 3} {
		for _, ty := range stability.Types(true) {
			p, err := stability.NewProblem[T](ty, n, seed)
			if err != nil {
				continue // singular or no reference: nothing to compare
			}
			name := fmt.Sprintf("type %d (%v) seed %d", ty, ty, seed)
			xg := solveOne(t, tridiag.Options{Algorithm: tridiag.GTSV}, p.A, p.B, p.C, p.D)
			if xg == nil {
				continue
			}
			eg := stability.RelError(xg, p.X)
			xa := solveOne(t, tridiag.Options{}, p.A, p.B, p.C, p.D)
			require.NotNil(t, xa, "%s: Auto fails where GTSV solves", name)
			ea := stability.RelError(xa, p.X)
			en := math.NaN()
			if xn := solveOne(t, tridiag.Options{Pivoting: tridiag.PivotNever}, p.A, p.B, p.C, p.D); xn != nil {
				en = stability.RelError(xn, p.X)
			}
			t.Logf("%-36s gtsv %.2e  never %.2e  auto %.2e", name, eg, en, ea)
			if eg < 1 {
				assert.LessOrEqual(t, ea, 10*eg, "%s: Auto's error against GTSV's", name)
			}
		}
	}
}

func TestAutoOnSuiteF64(t *testing.T) { testAutoOnSuite[float64](t) }
func TestAutoOnSuiteF32(t *testing.T) { testAutoOnSuite[float32](t) }

// TestAutoOnTinyDiagonal: tridiag(1, 1e−8, 1) is well conditioned
// (κ ≈ 330) but Thomas's fill grows by 1e8 at row 1: PivotNever loses
// seven digits, Auto takes GTSV and stays at GTSV's error.
func TestAutoOnTinyDiagonal(t *testing.T) {
	p, err := stability.NewProblem[float64](stability.TypeKS16, 512, 1)
	require.NoError(t, err)
	eg := stability.RelError(solveOne(t, tridiag.Options{Algorithm: tridiag.GTSV}, p.A, p.B, p.C, p.D), p.X)
	ea := stability.RelError(solveOne(t, tridiag.Options{}, p.A, p.B, p.C, p.D), p.X)
	en := stability.RelError(solveOne(t, tridiag.Options{Pivoting: tridiag.PivotNever}, p.A, p.B, p.C, p.D), p.X)
	assert.Less(t, eg, 1e-14)
	assert.LessOrEqual(t, ea, 10*eg)
	assert.Greater(t, en, 1e3*eg, "PivotNever is Thomas, which loses digits here")
}

// mixedBatch is a batch of G systems of N rows: even systems diagonally
// dominant, systems 1 mod 4 random and not dominant, systems 3 mod 4 with
// a zero diagonal (Thomas breaks down at row 0, GTSV solves them for N
// even).
func mixedBatch(n, g int) []system {
	r := rand.New(rand.NewPCG(21, 22))
	sys := make([]system, g)
	for k := range sys {
		switch k % 4 {
		case 0, 2:
			sys[k] = randSystem(r, n, 4)
		case 1:
			sys[k] = randSystem(r, n, 0)
		case 3:
			sys[k] = randSystem(r, n, 0)
			for i := range n {
				sys[k].b[i] = 0
			}
		}
	}
	return sys
}

// solveBatch solves the batch with opts and returns x, the error and
// the plan's description after the solve.
func solveBatch[T tridiag.Float](t *testing.T, shape tridiag.Shape, sys []system, opts tridiag.Options) ([]T, error, string) {
	t.Helper()
	a, b, c, d := pack[T](shape, sys)
	p, err := tridiag.NewPlan[T](tridiag.NewCPU(2), shape, opts)
	require.NoError(t, err)
	defer p.Close()
	x := make([]T, len(d))
	err = p.Solve(context.Background(), a, b, c, d, x)
	return x, err, p.Describe()
}

// testPivotingModes: PivotAlways is GTSV bit for bit; PivotNever is Thomas
// with GTSV for the systems where Thomas breaks down, bit for bit, system
// by system; Auto is Thomas on the dominant systems and GTSV on the
// others, and says how many took GTSV. Every layout, cyclic or not.
func testPivotingModes[T tridiag.Float](t *testing.T) {
	n, g := 64, 12
	sys := mixedBatch(n, g)
	for lname, l := range layoutsFor(n, g) {
		for _, cyclic := range []bool{false, true} {
			name := fmt.Sprintf("%s/cyclic=%v", lname, cyclic)
			shape := tridiag.Shape{N: n, G: g, Layout: l}
			opts := func(alg tridiag.Algorithm, piv tridiag.Pivoting) tridiag.Options {
				return tridiag.Options{Algorithm: alg, Pivoting: piv, Cyclic: cyclic}
			}
			xg, errG, _ := solveBatch[T](t, shape, sys, opts(tridiag.GTSV, tridiag.PivotAuto))
			xt, errT, _ := solveBatch[T](t, shape, sys, opts(tridiag.Thomas, tridiag.PivotAuto))
			if !cyclic {
				require.Error(t, errT, name)
			}
			xAlways, errAlways, dAlways := solveBatch[T](t, shape, sys, opts(tridiag.Auto, tridiag.PivotAlways))
			assert.Equal(t, errG, errAlways, name)
			assert.Equal(t, asBits(shape, xg), asBits(shape, xAlways), "%s: PivotAlways is GTSV", name)
			assert.Equal(t, "gtsv", dAlways, name)

			xNever, errNever, dNever := solveBatch[T](t, shape, sys, opts(tridiag.Auto, tridiag.PivotNever))
			xAuto, errAuto, dAuto := solveBatch[T](t, shape, sys, opts(tridiag.Auto, tridiag.PivotAuto))
			assert.Equal(t, errG, errNever, name)
			assert.Equal(t, errG, errAuto, name)
			thomasFailed := map[int]bool{}
			if errT != nil {
				var be *tridiag.BatchError
				require.ErrorAs(t, errT, &be)
				for _, f := range be.Failed {
					thomasFailed[f.System] = true
				}
			}
			autoGTSV := 0
			for k := range g {
				wantNever := unpack(shape, xt, k)
				if thomasFailed[k] {
					wantNever = unpack(shape, xg, k)
				}
				assert.Equal(t, wantNever, unpack(shape, xNever, k), "%s system %d: PivotNever", name, k)
				wantAuto := unpack(shape, xt, k)
				if k%2 == 1 {
					wantAuto = unpack(shape, xg, k)
					autoGTSV++
				}
				assert.Equal(t, wantAuto, unpack(shape, xAuto, k), "%s system %d: Auto", name, k)
			}
			assert.Equal(t, fmt.Sprintf("thomas, gtsv for the systems where thomas breaks down; last solve: gtsv for %d of %d systems", len(thomasFailed), g), dNever, name)
			assert.Equal(t, fmt.Sprintf("thomas, gtsv for the systems that fail its pivot growth test or break down; last solve: gtsv for %d of %d systems", autoGTSV, g), dAuto, name)
		}
	}
}

func TestPivotingModesF64(t *testing.T) { testPivotingModes[float64](t) }
func TestPivotingModesF32(t *testing.T) { testPivotingModes[float32](t) }

// TestAutoDominantTakesThomas: a dominant batch is solved by Thomas
// alone, and Describe says so after the solve.
func TestAutoDominantTakesThomas(t *testing.T) {
	n, g := 300, 64
	r := rand.New(rand.NewPCG(5, 5))
	sys := make([]system, g)
	for k := range sys {
		sys[k] = randSystem(r, n, 2) // |b| ≥ 1 ≥ … weakly: b ∈ [1, 3), |a|+|c| < 2
		for i := range n {
			sys[k].b[i] = 2 + math.Abs(sys[k].b[i]-2) // |b| ≥ 2 > |a| + |c|
		}
	}
	shape := tridiag.Shape{N: n, G: g}
	x, err, desc := solveBatch[float64](t, shape, sys, tridiag.Options{})
	require.NoError(t, err)
	xt, err, _ := solveBatch[float64](t, shape, sys, tridiag.Options{Algorithm: tridiag.Thomas})
	require.NoError(t, err)
	assert.Equal(t, xt, x)
	assert.Equal(t, "thomas, gtsv for the systems that fail its pivot growth test or break down; last solve: gtsv for 0 of 64 systems", desc)
}

// TestPivotingOptions: PivotAlways with an algorithm that does not pivot
// is refused, naming both; with GTSV, PartitionPivot or Auto it is
// accepted, as every
// algorithm is with PivotAuto and PivotNever; an unknown mode is refused.
func TestPivotingOptions(t *testing.T) {
	shape := tridiag.Shape{N: 8, G: 2}
	for _, alg := range tridiag.Algorithms() {
		_, err := tridiag.NewPlan[float64](nil, shape, tridiag.Options{Algorithm: alg, Pivoting: tridiag.PivotAlways})
		if alg == tridiag.GTSV || alg == tridiag.PartitionPivot {
			require.True(t, alg.Pivots(), alg.String())
			require.NoError(t, err)
		} else {
			require.False(t, alg.Pivots(), alg.String())
			require.ErrorIs(t, err, tridiag.ErrOptions, alg.String())
			assert.Contains(t, err.Error(), "pivoting always with algorithm "+alg.String(), alg.String())
		}
		for _, piv := range []tridiag.Pivoting{tridiag.PivotAuto, tridiag.PivotNever} {
			p, err := tridiag.NewPlan[float64](nil, shape, tridiag.Options{Algorithm: alg, Pivoting: piv})
			require.NoError(t, err, "%s %s", alg, piv)
			assert.Equal(t, alg.String(), p.Describe(), "an explicit algorithm runs as chosen")
			require.NoError(t, p.Close())
		}
	}
	for _, piv := range []tridiag.Pivoting{-1, 3} {
		_, err := tridiag.NewPlan[float32](nil, shape, tridiag.Options{Pivoting: piv})
		require.ErrorIs(t, err, tridiag.ErrOptions)
		assert.Contains(t, err.Error(), "unknown pivoting")
	}
	for _, piv := range []tridiag.Pivoting{tridiag.PivotAuto, tridiag.PivotAlways, tridiag.PivotNever} {
		got, err := tridiag.ParsePivoting(piv.String())
		require.NoError(t, err)
		assert.Equal(t, piv, got)
	}
	got, err := tridiag.ParsePivoting("ALWAYS")
	require.NoError(t, err)
	assert.Equal(t, tridiag.PivotAlways, got)
	_, err = tridiag.ParsePivoting("sometimes")
	require.ErrorIs(t, err, tridiag.ErrOptions)
	assert.Equal(t, "Pivoting(9)", tridiag.Pivoting(9).String())
}

// specDevice is a device that is its own backend and records the spec
// its solvers are built for, as a GPU backend receives it.
type specDevice struct{ got []tridiag.Spec }

func (d *specDevice) Name() string { return "spec recorder" }

func (d *specDevice) NewSolver32(spec tridiag.Spec) (tridiag.Solver[float32], error) {
	d.got = append(d.got, spec)
	return nil, fmt.Errorf("recorded")
}

func (d *specDevice) NewSolver64(spec tridiag.Spec) (tridiag.Solver[float64], error) {
	d.got = append(d.got, spec)
	return nil, fmt.Errorf("recorded")
}

// TestPivotAlwaysOnOtherDevices: a device other than the CPU gets Auto
// with the Pivoting asked for, and chooses its pivoting solver itself.
func TestPivotAlwaysOnOtherDevices(t *testing.T) {
	dev := &specDevice{}
	shape := tridiag.Shape{N: 8, G: 2}
	for _, piv := range []tridiag.Pivoting{tridiag.PivotAlways, tridiag.PivotAuto, tridiag.PivotNever} {
		_, err := tridiag.NewPlan[float32](dev, shape, tridiag.Options{Pivoting: piv})
		require.Error(t, err)
	}
	require.Len(t, dev.got, 3)
	assert.Equal(t, tridiag.Auto, dev.got[0].Algorithm)
	assert.Equal(t, tridiag.PivotAlways, dev.got[0].Pivoting)
	assert.Equal(t, tridiag.Auto, dev.got[1].Algorithm)
	assert.Equal(t, tridiag.Auto, dev.got[2].Algorithm)
	assert.Equal(t, tridiag.PivotNever, dev.got[2].Pivoting)
}

// BenchmarkCPUAutoDominant times Auto on diagonally dominant batches
// (float32, contiguous: 4096 systems of 256 rows, 256 systems of 4096
// rows) with the pivot growth test (PivotAuto), without it (PivotNever)
// and with GTSV for every system (PivotAlways).
func BenchmarkCPUAutoDominant(b *testing.B) {
	for _, sz := range []struct{ n, g int }{{256, 4096}, {4096, 256}} {
		for _, piv := range []tridiag.Pivoting{tridiag.PivotNever, tridiag.PivotAuto, tridiag.PivotAlways} {
			b.Run(fmt.Sprintf("N=%d/%s", sz.n, piv), func(b *testing.B) { benchCPUOpts(b, tridiag.Options{Pivoting: piv}, sz.n, sz.g, false) })
		}
	}
}
