//go:build cuda

package gpu_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/gpu"
	"github.com/bandsolve/bandsolve/tridiag"
)

// gpuFactorModes are the options whose plans factor on the GPU.
var gpuFactorModes = []struct {
	name string
	opts tridiag.Options
}{
	{"thomas", tridiag.Options{Algorithm: tridiag.Thomas}},
	{"gtsv", tridiag.Options{Algorithm: tridiag.GTSV}},
	{"auto", tridiag.Options{}},
	{"auto-never", tridiag.Options{Pivoting: tridiag.PivotNever}},
	{"auto-always", tridiag.Options{Pivoting: tridiag.PivotAlways}},
	{"ldlt", tridiag.Options{Algorithm: tridiag.LDLT}},
}

// factorLayouts are the layouts of the GPU factorization tests for g
// systems of n rows.
func factorLayouts(n, g int) map[string]tridiag.Layout {
	return map[string]tridiag.Layout{
		"contiguous":  tridiag.Contiguous(n),
		"interleaved": tridiag.Interleaved(g),
		"strided":     tridiag.Strided(g+3, 1),
		"padded":      tridiag.Strided(1, n+5),
	}
}

// factorBatch fills a, b, c (one batch of shape) with systems of several
// kinds, by system: diagonally dominant, with tiny pivots (which Auto's
// growth test sends to gttrf and gttrf pivots), and with a diagonal of
// either sign; symmetric positive definite ones for LDLT (a is nil then).
func factorBatch[T tridiag.Float](r *rand.Rand, shape tridiag.Shape, spd bool) (a, b, c []T) {
	l := shape.Normalize().Layout
	L := shape.Normalize().Len()
	a, b, c = make([]T, L), make([]T, L), make([]T, L)
	for g := range shape.G {
		for i := range shape.N {
			k := l.Index(i, g)
			a[k], c[k] = T(r.Float64()*2-1), T(r.Float64()*2-1)
			switch {
			case spd:
				b[k] = T(2.5 + r.Float64())
			case g%5 == 3:
				b[k] = T(1e-3 * (r.Float64() - 0.5))
			case g%5 == 4:
				b[k] = T(r.Float64()*2 - 1)
			default:
				b[k] = T(4 + r.Float64())
			}
		}
	}
	if spd {
		a = nil
	}
	return a, b, c
}

// rhs returns nrhs batches of shape with random rows and NaN-free gaps.
func rhs[T tridiag.Float](r *rand.Rand, shape tridiag.Shape, nrhs int) []T {
	d := make([]T, nrhs*shape.Normalize().Len())
	for i := range d {
		d[i] = T(r.Float64()*2 - 1)
	}
	return d
}

// sameBits reports the first index where got and want differ in their
// bits, or −1.
func sameBits[T tridiag.Float](got, want []T) int {
	for i := range want {
		if got[i] != want[i] && !(got[i] != got[i] && want[i] != want[i]) {
			return i
		}
	}
	return -1
}

// sameFailures asserts that two solves failed alike: the same error text
// (systems, rows and right-hand sides named alike) and the same causes.
func sameFailures(t *testing.T, cpuErr, gpuErr error, msg string) {
	t.Helper()
	if cpuErr == nil {
		assert.NoError(t, gpuErr, msg)
		return
	}
	require.Error(t, gpuErr, msg)
	var cb, gb *tridiag.BatchError
	require.True(t, errors.As(cpuErr, &cb), msg)
	require.True(t, errors.As(gpuErr, &gb), "%s: %v", msg, gpuErr)
	require.Len(t, gb.Failed, len(cb.Failed), msg)
	for i, f := range cb.Failed {
		gf := gb.Failed[i]
		assert.Equal(t, f.System, gf.System, msg)
		assert.Equal(t, f.Row, gf.Row, msg)
		assert.Equal(t, f.Err.Error(), gf.Err.Error(), msg)
		for _, cause := range []error{tridiag.ErrZeroPivot, tridiag.ErrSingular, tridiag.ErrNotPositiveDefinite, tridiag.ErrNonFiniteResult} {
			assert.Equal(t, errors.Is(f.Err, cause), errors.Is(gf.Err, cause), "%s: system %d: %v", msg, f.System, cause)
		}
	}
}

// factorBoth factors a batch on the CPU and on dev with the same options,
// and checks that both factor alike (the same failures, the same
// description).
func factorBoth[T tridiag.Float](t *testing.T, dev *cuda.Device, shape tridiag.Shape, opts tridiag.Options, constant bool, ca, cb, cc T, a, b, c []T) (cpu, gpu *tridiag.Factors[T], cpuErr, gpuErr error) {
	t.Helper()
	ctx := context.Background()
	mk := func(d tridiag.Device) (*tridiag.Factors[T], error) {
		p, err := tridiag.NewPlan[T](d, shape, opts)
		require.NoError(t, err)
		defer p.Close()
		if constant {
			return p.FactorConst(ctx, ca, cb, cc)
		}
		return p.Factor(ctx, a, b, c)
	}
	cpu, cpuErr = mk(tridiag.DefaultCPU())
	gpu, gpuErr = mk(dev)
	require.NotNil(t, cpu)
	require.NotNil(t, gpu, "%v", gpuErr)
	sameFailures(t, cpuErr, gpuErr, "factor")
	assert.Equal(t, cpu.Describe(), gpu.Describe())
	return cpu, gpu, cpuErr, gpuErr
}

// testFactorMatchesCPU: the GPU's factors solve every column exactly as
// the CPU's, bit for bit, for every factoring algorithm, layout and
// number of right-hand sides, and the plan's SolveMany too.
func testFactorMatchesCPU[T tridiag.Float](t *testing.T, dev *cuda.Device) {
	const n, g = 37, 45
	ctx := context.Background()
	r := rand.New(rand.NewPCG(3, 4))
	for _, m := range gpuFactorModes {
		for lname, l := range factorLayouts(n, g) {
			shape := tridiag.Shape{N: n, G: g, Layout: l}
			spd := m.opts.Algorithm == tridiag.LDLT
			a, b, c := factorBatch[T](r, shape, spd)
			cpu, gpu, _, _ := factorBoth(t, dev, shape, m.opts, false, 0, 0, 0, a, b, c)
			for _, nrhs := range []int{1, 4, 9, 16} {
				name := fmt.Sprintf("%s %s nrhs=%d", m.name, lname, nrhs)
				d := rhs[T](r, shape, nrhs)
				want, got := make([]T, len(d)), make([]T, len(d))
				cerr := cpu.SolveMany(ctx, nrhs, d, want)
				gerr := gpu.SolveMany(ctx, nrhs, d, got)
				sameFailures(t, cerr, gerr, name)
				assert.Equal(t, -1, sameBits(got, want), "%s: factored solve", name)

				// In place: the rows as above, the gaps of d kept as the
				// CPU keeps them.
				inPlace, cpuInPlace := append([]T(nil), d...), append([]T(nil), d...)
				cerr = cpu.SolveMany(ctx, nrhs, cpuInPlace, cpuInPlace)
				gerr = gpu.SolveMany(ctx, nrhs, inPlace, inPlace)
				sameFailures(t, cerr, gerr, name)
				assert.Equal(t, -1, sameBits(inPlace, cpuInPlace), "%s: in place", name)

				// The plan's SolveMany factors and solves in one call.
				p, err := tridiag.NewPlan[T](dev, shape, m.opts)
				require.NoError(t, err)
				many := make([]T, len(d))
				gerr = p.SolveMany(ctx, nrhs, a, b, c, d, many)
				require.NoError(t, p.Close())
				sameFailures(t, cerr, gerr, name)
				assert.Equal(t, -1, sameBits(many, want), "%s: Plan.SolveMany", name)
			}
			require.NoError(t, cpu.Close())
			require.NoError(t, gpu.Close())
		}
	}
}

func TestFactorOnGPUMatchesCPU(t *testing.T) {
	dev, err := gpu.Open(0)
	require.NoError(t, err)
	defer dev.Close()
	t.Run("float32", func(t *testing.T) { testFactorMatchesCPU[float32](t, dev) })
	t.Run("float64", func(t *testing.T) { testFactorMatchesCPU[float64](t, dev) })
}

// testFactorConst: constant coefficients are factored once on the GPU and
// every system solved with them, as the CPU does, bit for bit.
func testFactorConst[T tridiag.Float](t *testing.T, dev *cuda.Device) {
	const n, g = 29, 67
	ctx := context.Background()
	r := rand.New(rand.NewPCG(5, 6))
	for _, m := range gpuFactorModes {
		for lname, l := range factorLayouts(n, g) {
			shape := tridiag.Shape{N: n, G: g, Layout: l}
			cpu, gpu, _, _ := factorBoth[T](t, dev, shape, m.opts, true, -1, 2.5, -1.25, nil, nil, nil)
			for _, nrhs := range []int{1, 4, 16} {
				name := fmt.Sprintf("%s %s nrhs=%d", m.name, lname, nrhs)
				d := rhs[T](r, shape, nrhs)
				want, got := make([]T, len(d)), make([]T, len(d))
				sameFailures(t, cpu.SolveMany(ctx, nrhs, d, want), gpu.SolveMany(ctx, nrhs, d, got), name)
				assert.Equal(t, -1, sameBits(got, want), name)
			}
			require.NoError(t, cpu.Close())
			require.NoError(t, gpu.Close())
		}
	}
}

func TestFactorConstOnGPU(t *testing.T) {
	dev, err := gpu.Open(0)
	require.NoError(t, err)
	defer dev.Close()
	t.Run("float32", func(t *testing.T) { testFactorConst[float32](t, dev) })
	t.Run("float64", func(t *testing.T) { testFactorConst[float64](t, dev) })
}

// Breakdowns are reported as the CPU reports them: a zero pivot of LU
// without pivoting, a singular system with pivoting, a symmetric system
// that is not positive definite (naming the system and the row), and a
// right-hand side whose solution is not finite (naming the column); the
// failed systems get NaN and the others their solutions.
func TestFactorBreakdownOnGPU(t *testing.T) {
	dev, err := gpu.Open(0)
	require.NoError(t, err)
	defer dev.Close()
	const n, g, nrhs = 33, 19, 4
	ctx := context.Background()
	r := rand.New(rand.NewPCG(7, 8))
	for _, m := range gpuFactorModes {
		for lname, l := range factorLayouts(n, g) {
			shape := tridiag.Shape{N: n, G: g, Layout: l}
			spd := m.opts.Algorithm == tridiag.LDLT
			a, b, c := factorBatch[float64](r, shape, spd)
			// System 4: a zero pivot at row 0 (LU, LDLT); system 7: row
			// and column 6 all zero (singular with or without pivoting);
			// system 11: a negative diagonal entry at row 9 (not positive
			// definite).
			b[l.Index(0, 4)] = 0
			b[l.Index(6, 7)], c[l.Index(6, 7)], c[l.Index(5, 7)] = 0, 0, 0
			if a != nil {
				a[l.Index(6, 7)], a[l.Index(7, 7)] = 0, 0
			}
			b[l.Index(9, 11)] = -3
			opts := m.opts
			opts.SkipFiniteCheck = true
			cpu, gpu, cerr, _ := factorBoth(t, dev, shape, opts, false, 0, 0, 0, a, b, c)
			name := m.name + " " + lname
			require.Error(t, cerr, name)
			d := rhs[float64](r, shape, nrhs)
			// Column 2 of system 1: an infinite right-hand side.
			d[2*shape.Normalize().Len()+l.Index(3, 1)] = math.Inf(1)
			want, got := make([]float64, len(d)), make([]float64, len(d))
			cserr := cpu.SolveMany(ctx, nrhs, d, want)
			gserr := gpu.SolveMany(ctx, nrhs, d, got)
			require.Error(t, cserr, name)
			sameFailures(t, cserr, gserr, name)
			assert.Equal(t, -1, sameBits(got, want), name)
			require.NoError(t, cpu.Close())
			require.NoError(t, gpu.Close())
		}
	}
}

// An LDLT plan refuses a matrix that is not positive definite on the GPU
// as on the CPU: the error names the system and the row.
func TestLDLTRefusesNotPositiveDefiniteOnGPU(t *testing.T) {
	dev, err := gpu.Open(0)
	require.NoError(t, err)
	defer dev.Close()
	const n, g = 40, 9
	shape := tridiag.Shape{N: n, G: g}
	r := rand.New(rand.NewPCG(1, 2))
	_, b, c := factorBatch[float32](r, shape, true)
	b[5*n+17] = -1
	p, err := tridiag.NewPlan[float32](dev, shape, tridiag.Options{Algorithm: tridiag.LDLT})
	require.NoError(t, err)
	defer p.Close()
	f, err := p.Factor(context.Background(), nil, b, c)
	require.NotNil(t, f)
	defer f.Close()
	var be *tridiag.BatchError
	require.ErrorAs(t, err, &be)
	require.Len(t, be.Failed, 1)
	assert.Equal(t, 5, be.Failed[0].System)
	assert.Equal(t, 17, be.Failed[0].Row)
	assert.ErrorIs(t, be.Failed[0].Err, tridiag.ErrNotPositiveDefinite)

	// The one-shot solve refuses it too.
	d := rhs[float32](r, shape, 1)
	x := make([]float32, len(d))
	err = p.Solve(context.Background(), nil, b, c, d, x)
	require.ErrorAs(t, err, &be)
	require.Len(t, be.Failed, 1)
	assert.Equal(t, 5, be.Failed[0].System)
	assert.Equal(t, 17, be.Failed[0].Row)
	assert.ErrorIs(t, be.Failed[0].Err, tridiag.ErrNotPositiveDefinite)
}

// An LDLT plan's Solve on the GPU is the CPU's, bit for bit, in every
// layout and precision (a is not read and may be nil).
func TestLDLTSolveOnGPU(t *testing.T) {
	dev, err := gpu.Open(0)
	require.NoError(t, err)
	defer dev.Close()
	const n, g = 53, 31
	r := rand.New(rand.NewPCG(11, 12))
	for lname, l := range factorLayouts(n, g) {
		shape := tridiag.Shape{N: n, G: g, Layout: l}
		_, b, c := factorBatch[float64](r, shape, true)
		d := rhs[float64](r, shape, 1)
		solve := func(dev tridiag.Device) []float64 {
			p, err := tridiag.NewPlan[float64](dev, shape, tridiag.Options{Algorithm: tridiag.LDLT})
			require.NoError(t, err)
			defer p.Close()
			x := make([]float64, len(d))
			require.NoError(t, p.Solve(context.Background(), nil, b, c, d, x))
			return x
		}
		// The rows only: a GPU plan's Solve does not keep x's gaps.
		got, want := solve(dev), solve(tridiag.DefaultCPU())
		for s := range g {
			for i := range n {
				k := l.Index(i, s)
				require.Equal(t, want[k], got[k], "%s: system %d row %d", lname, s, i)
			}
		}
	}
}

// The GPU refuses to factor cyclic plans and algorithms without a stored
// factorization with ErrOptions; their SolveMany solves the columns one
// after another, each as Solve solves it (bit for bit).
func TestFactorRefusedOnGPU(t *testing.T) {
	dev, err := gpu.Open(0)
	require.NoError(t, err)
	defer dev.Close()
	ctx := context.Background()
	const n, g, nrhs = 300, 17, 3
	shape := tridiag.Shape{N: n, G: g}
	r := rand.New(rand.NewPCG(3, 4))
	a, b, c := factorBatch[float64](r, shape, false)
	for i := range b {
		b[i] = 3 + math.Abs(b[i])
	}
	for _, opts := range []tridiag.Options{{Cyclic: true}, {Algorithm: tridiag.Partition}, {Algorithm: tridiag.PCR}} {
		p, err := tridiag.NewPlan[float64](dev, shape, opts)
		require.NoError(t, err)
		_, err = p.Factor(ctx, a, b, c)
		assert.ErrorIs(t, err, tridiag.ErrOptions, "%+v", opts)

		d := rhs[float64](r, shape, nrhs)
		x := make([]float64, len(d))
		require.NoError(t, p.SolveMany(ctx, nrhs, a, b, c, d, x))
		L := shape.Len()
		for col := range nrhs {
			one := make([]float64, L)
			require.NoError(t, p.Solve(ctx, a, b, c, d[col*L:(col+1)*L], one))
			assert.Equal(t, one, x[col*L:(col+1)*L], "column %d", col)
		}
		require.NoError(t, p.Close())
	}
}

// A GPU has no ragged batches yet: NewRaggedPlan refuses the device with
// ErrOptions.
func TestRaggedOnGPU(t *testing.T) {
	dev, err := gpu.Open(0)
	require.NoError(t, err)
	defer dev.Close()
	_, err = tridiag.NewRaggedPlan[float32](dev, []int{3, 100, 7}, tridiag.Options{})
	assert.ErrorIs(t, err, tridiag.ErrOptions)
}
