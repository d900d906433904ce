//go:build cuda

package tridiaggpu

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
	"github.com/bandsolve/bandsolve/tridiag"
)

// factorVariantModes are the plans whose factors the variant tests solve.
var factorVariantModes = []struct {
	name string
	opts tridiag.Options
}{
	{"thomas", tridiag.Options{Algorithm: tridiag.Thomas}},
	{"gtsv", tridiag.Options{Algorithm: tridiag.GTSV}},
	{"auto", tridiag.Options{}},
	{"ldlt", tridiag.Options{Algorithm: tridiag.LDLT}},
}

// factorVariantLayouts are the layouts of the variant tests for g systems
// of n rows.
func factorVariantLayouts(n, g int) []struct {
	name string
	l    tridiag.Layout
} {
	return []struct {
		name string
		l    tridiag.Layout
	}{
		{"contiguous", tridiag.Contiguous(n)},
		{"interleaved", tridiag.Interleaved(g)},
		{"strided", tridiag.Strided(g+3, 1)},
		{"padded", tridiag.Strided(1, n+5)},
	}
}

// variantBatch fills a, b, c (one batch of shape): symmetric positive
// definite systems for spd (b above 2, a unused); otherwise diagonally
// dominant systems, and every fourth system with a tiny diagonal, which
// gttrf pivots and Auto's growth test sends to gttrf.
func variantBatch[T tridiag.Float](r *rand.Rand, shape tridiag.Shape, spd bool) (a, b, c []T) {
	shape = shape.Normalize()
	L := shape.Len()
	a, b, c = make([]T, L), make([]T, L), make([]T, L)
	for g := range shape.G {
		for i := range shape.N {
			k := shape.Layout.Index(i, g)
			a[k], c[k] = T(r.Float64()*2-1), T(r.Float64()*2-1)
			switch {
			case spd:
				b[k] = T(2.5 + r.Float64())
			case g%4 == 3:
				b[k] = T(1e-3 * (r.Float64() - 0.5))
			default:
				b[k] = T(4 + r.Float64())
			}
		}
	}
	return a, b, c
}

// failedRows lists the systems and rows a solve's error names, or nil.
func failedRows(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	var be *tridiag.BatchError
	require.True(t, errors.As(err, &be), "%v", err)
	var out []string
	for _, f := range be.Failed {
		out = append(out, fmt.Sprintf("system %d row %d: %v", f.System, f.Row, f.Err))
	}
	return out
}

// firstDiff is the first index where got and want differ in their bits
// (NaN equal to NaN), or −1.
func firstDiff[T tridiag.Float](got, want []T) int {
	for i := range want {
		if got[i] != want[i] && !(got[i] != got[i] && want[i] != want[i]) {
			return i
		}
	}
	return -1
}

// testFactorVariants: every solve kernel variant (columns a time, rows
// loaded ahead) and, where the rows are adjacent, the staged kernels
// solve with the GPU's factors exactly as the CPU's factors solve, bit
// for bit, for orders and numbers of right-hand sides that are not
// multiples of the variants' sizes, in every layout, into x and in
// place.
func testFactorVariants[T tridiag.Float](t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(29, 4))
	for _, n := range []int{1, 2, 3, 37, 1001} {
		g := 45
		if n > 100 {
			g = 19
		}
		for _, m := range factorVariantModes {
			for _, lay := range factorVariantLayouts(n, g) {
				shape := tridiag.Shape{N: n, G: g, Layout: lay.l}
				spec := tridiag.Spec{Shape: shape.Normalize(), Options: m.opts}
				mode, err := factorModeOf(spec, m.opts.Algorithm)
				require.NoError(t, err)
				spd := mode == modePT
				a, b, c := variantBatch[T](r, shape, spd)
				bt := tridiag.Batch[T]{A: a, B: b, C: c}

				cp, err := tridiag.NewPlan[T](tridiag.DefaultCPU(), shape, m.opts)
				require.NoError(t, err)
				cpu, cerr := cp.Factor(ctx, a, b, c)
				require.NoError(t, cp.Close())
				require.NotNil(t, cpu)
				f, err := newFactors[T](gdev, spec, mode, false)
				require.NoError(t, err)
				gerr := f.factorHost(bt)
				f.dropCoefficients()
				require.Equal(t, failedRows(t, cerr), failedRows(t, gerr), "N=%d %s %s: factor", n, m.name, lay.name)

				for _, nrhs := range []int{1, 3, 5, 17} {
					d := make([]T, nrhs*spec.Len())
					for i := range d {
						d[i] = T(r.Float64()*2 - 1)
					}
					want := make([]T, len(d))
					cerr := cpu.SolveMany(ctx, nrhs, d, want)
					wantInPlace := append([]T(nil), d...)
					require.Equal(t, failedRows(t, cerr), failedRows(t, cpu.SolveMany(ctx, nrhs, wantInPlace, wantInPlace)))
					variants := solveVariants(mode)
					if f.canStage() {
						// The staged kernels, by columns a time (depth
						// unused).
						variants = append(variants, solveVariant{1, -1}, solveVariant{4, -1}, solveVariant{8, -1})
					}
					for _, v := range variants {
						name := fmt.Sprintf("N=%d %s %s nrhs=%d p%d d%d", n, m.name, lay.name, nrhs, v.group, v.depth)
						f.group, f.depth, f.stage = v.group, v.depth, stageOff
						if v.depth < 0 {
							f.stage = stageOn
							name = fmt.Sprintf("N=%d %s %s nrhs=%d p%d staged", n, m.name, lay.name, nrhs, v.group)
						}
						got := make([]T, len(d))
						gerr := f.SolveMany(ctx, nrhs, d, got)
						assert.Equal(t, failedRows(t, cerr), failedRows(t, gerr), name)
						assert.Equal(t, -1, firstDiff(got, want), "%s: factored solve", name)

						inPlace := append([]T(nil), d...)
						gerr = f.SolveMany(ctx, nrhs, inPlace, inPlace)
						assert.Equal(t, failedRows(t, cerr), failedRows(t, gerr), name)
						assert.Equal(t, -1, firstDiff(inPlace, wantInPlace), "%s: in place", name)
					}
				}
				require.NoError(t, f.Close())
				require.NoError(t, cpu.Close())
			}
		}
	}
}

func TestFactorVariantsMatchCPU(t *testing.T) {
	t.Run("float32", testFactorVariants[float32])
	t.Run("float64", testFactorVariants[float64])
}

// The LDLT plan's one-shot solve (the ptsv kernel, loading rows ahead)
// is the CPU's, bit for bit, for short and odd orders in every layout.
func TestLDLTOneShotOddOrders(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(5, 29))
	for _, n := range []int{1, 2, 3, 37, 1001} {
		const g = 33
		for _, lay := range factorVariantLayouts(n, g) {
			shape := tridiag.Shape{N: n, G: g, Layout: lay.l}
			_, b, c := variantBatch[float32](r, shape, true)
			d := make([]float32, shape.Normalize().Len())
			for i := range d {
				d[i] = float32(r.Float64()*2 - 1)
			}
			opts := tridiag.Options{Algorithm: tridiag.LDLT}
			cp, err := tridiag.NewPlan[float32](tridiag.DefaultCPU(), shape, opts)
			require.NoError(t, err)
			want := make([]float32, len(d))
			require.NoError(t, cp.Solve(ctx, nil, b, c, d, want))
			require.NoError(t, cp.Close())
			gp, err := tridiag.NewPlan[float32](dev, shape, opts)
			require.NoError(t, err)
			got := make([]float32, len(d))
			require.NoError(t, gp.Solve(ctx, nil, b, c, d, got))
			inPlace := append([]float32(nil), d...)
			require.NoError(t, gp.Solve(ctx, nil, b, c, inPlace, inPlace))
			require.NoError(t, gp.Close())
			for s := range g {
				for i := range n {
					k := shape.Normalize().Layout.Index(i, s)
					require.Equal(t, want[k], got[k], "N=%d %s: system %d row %d", n, lay.name, s, i)
					require.Equal(t, want[k], inPlace[k], "N=%d %s in place: system %d row %d", n, lay.name, s, i)
				}
			}
		}
	}
}

// Every solve variant that solveVariants lists, every default that
// groupOf and depthOf choose, and the staged kernel of every group of the
// kinds that stage has a kernel in both precisions.
func TestSolveVariantsHaveKernels(t *testing.T) {
	for _, kind := range []int{solveLU, solveGT, solvePT} {
		for _, p := range []int{1, 4, 8} {
			for _, f64 := range []bool{false, true} {
				_, err := kernels.FacStagedKPDFor(kind, p, stagedRows(p), f64)
				assert.NoError(t, err, "staged kind %d p%d f64=%v", kind, p, f64)
			}
		}
	}
	for _, mode := range []factorMode{modeLU, modeGT, modePT, modeAuto, modeAutoNever} {
		vs := solveVariants(mode)
		for _, nrhs := range []int{1, 2, 4, 7, 8, 100} {
			p := groupOf(nrhs)
			assert.Contains(t, vs, solveVariant{p, depthOf(p)}, "mode %d nrhs %d", mode, nrhs)
		}
		for _, v := range vs {
			for _, f64 := range []bool{false, true} {
				_, err := kernels.FacSolveKPDFor(mode.solveKind(), v.group, v.depth, f64)
				assert.NoError(t, err, "mode %d p%d d%d f64=%v", mode, v.group, v.depth, f64)
			}
		}
	}
}
