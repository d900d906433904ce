//go:build cuda

package tridiaggpu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tridiag/cr"
	"github.com/bandsolve/bandsolve/tridiag/pcr"
	"github.com/bandsolve/bandsolve/tuning"
)

// The shared-memory reduction kernels (PCR, its PCR→Thomas hybrid, CR)
// do the CPU twins' operations in the same order, so their results agree
// bit for bit, and a breakdown is reported at the twin's row.

var reductionSizes = []int{1, 2, 3, 31, 64, 100, 1000, 1025, 4096}

// cpuSystems solves every system of bt with solve (one contiguous system
// at a time, as the CPU device does), NaN-filling failed ones. It returns
// x in the batch layout and the failed rows by system.
func cpuSystems[T tridiag.Float](bt batch[T], constant bool, ca, cb, cc T,
	solve func(a, b, c, d, x []T) error) ([]T, map[int]int) {
	sh := bt.shape
	n := sh.N
	a, b, c, d, x := make([]T, n), make([]T, n), make([]T, n), make([]T, n), make([]T, n)
	out := make([]T, len(bt.d))
	failed := map[int]int{}
	for g := 0; g < sh.G; g++ {
		for i := 0; i < n; i++ {
			k := sh.Layout.Index(i, g)
			if constant {
				a[i], b[i], c[i] = ca, cb, cc
			} else {
				a[i], b[i], c[i] = bt.a[k], bt.b[k], bt.c[k]
			}
			d[i] = bt.d[k]
		}
		if err := solve(a, b, c, d, x); err != nil {
			var pe *tridiag.PivotError
			row := -1
			if errors.As(err, &pe) {
				row = pe.Row
			}
			failed[g] = row
			for i := range x {
				x[i] = T(math.NaN())
			}
		}
		for i := 0; i < n; i++ {
			out[sh.Layout.Index(i, g)] = x[i]
		}
	}
	return out, failed
}

// gpuWith solves bt on the GPU with a plan whose kernel plan is made by
// mk (nil: the algorithm's own). It returns x and the failed rows.
func gpuWith[T tridiag.Float](t *testing.T, bt batch[T], alg tridiag.Algorithm, constant bool, ca, cb, cc T,
	mk func(spec tridiag.Spec, f64 bool) (kernelPlan, error)) ([]T, map[int]int) {
	t.Helper()
	return gpuOpts(t, bt, tridiag.Options{Algorithm: alg}, constant, ca, cb, cc, mk)
}

// gpuOpts is gpuWith with the plan's options.
func gpuOpts[T tridiag.Float](t *testing.T, bt batch[T], opts tridiag.Options, constant bool, ca, cb, cc T,
	mk func(spec tridiag.Spec, f64 bool) (kernelPlan, error)) ([]T, map[int]int) {
	t.Helper()
	return gpuConfig(t, config{}, bt, opts, constant, ca, cb, cc, mk)
}

// gpuConfig is gpuOpts with the plan's switches cfg.
func gpuConfig[T tridiag.Float](t *testing.T, cfg config, bt batch[T], opts tridiag.Options, constant bool, ca, cb, cc T,
	mk func(spec tridiag.Spec, f64 bool) (kernelPlan, error)) ([]T, map[int]int) {
	t.Helper()
	gp, err := newPlan[T](dev, bt.shape, opts, cfg)
	require.NoError(t, err)
	defer gp.Close()
	if mk != nil {
		kp, err := mk(gp.spec, elemSize[T]() == 8)
		require.NoError(t, err)
		require.Zero(t, kp.workBytes())
		gp.kp = kp
	}
	x := make([]T, len(bt.d))
	if constant {
		err = gp.SolveConst(context.Background(), ca, cb, cc, bt.d, x)
	} else {
		err = gp.Solve(context.Background(), bt.a, bt.b, bt.c, bt.d, x)
	}
	failed := map[int]int{}
	if err != nil {
		var be *tridiag.BatchError
		require.ErrorAs(t, err, &be)
		for _, f := range be.Failed {
			failed[f.System] = f.Row
		}
	}
	return x, failed
}

// sameBits compares the batch's rows bit for bit (NaN equals NaN).
func sameBits[T tridiag.Float](t *testing.T, shape tridiag.Shape, gpu, cpu []T, what string) bool {
	t.Helper()
	bad := 0
	for g := 0; g < shape.G; g++ {
		for i := 0; i < shape.N; i++ {
			k := shape.Layout.Index(i, g)
			x, y := float64(gpu[k]), float64(cpu[k])
			if math.Float64bits(x) != math.Float64bits(y) && !(math.IsNaN(x) && math.IsNaN(y)) {
				if bad < 3 {
					t.Errorf("%s: system %d row %d: GPU %v (%#x), CPU %v (%#x)", what, g, i, x, math.Float64bits(x), y, math.Float64bits(y))
				}
				bad++
			}
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d rows differ", what, bad)
	}
	return bad == 0
}

func isF64[T tridiag.Float]() bool { return elemSize[T]() == 8 }

func reductionFits[T tridiag.Float](n int, alg tridiag.Algorithm) bool {
	e := int(elemSize[T]())
	if alg == tridiag.CR {
		return n <= tuning.CRMaxN(dev.Properties(), e)
	}
	return n <= tuning.PCRMaxN(dev.Properties(), e)
}

func TestPCRHybridBitExact(t *testing.T) {
	t.Run("float32", testPCRHybridBitExact[float32])
	t.Run("float64", testPCRHybridBitExact[float64])
}

// testPCRHybridBitExact runs pcr_hybrid_* for steps 0, 1, 3, 5, ⌈log2 N⌉
// (plain PCR), beyond it, and tuning's choice, against pcr.SolveHybrid.
func testPCRHybridBitExact[T tridiag.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, n := range reductionSizes {
		if !reductionFits[T](n, tridiag.PCR) {
			t.Logf("N=%d: larger than PCRMaxN on %s", n, dev.Name())
			continue
		}
		cfg, err := tuning.PCRLaunch(dev.Properties(), n, int(elemSize[T]()))
		require.NoError(t, err)
		stepsList := []int{0, 1, 3, 5, pcr.Steps(n), pcr.Steps(n) + 3, -1}
		ws := pcr.NewWorkspace[T](n)
		for _, g := range []int{1, 7, 130} {
			for lname, l := range layouts(n, g) {
				shape := tridiag.Shape{N: n, G: g, Layout: l}
				bt := newBatch[T](r, shape, 4)
				for _, steps := range stepsList {
					want := steps
					if steps < 0 {
						want = cfg.HybridSteps
					}
					name := fmt.Sprintf("N=%d/G=%d/%s/steps=%d", n, g, lname, want)
					mk := func(spec tridiag.Spec, f64 bool) (kernelPlan, error) {
						return newPCRHybridPlan(gdev, spec, f64, steps)
					}
					for _, constant := range []bool{false, true} {
						if constant && (g != 7 || steps != 3) {
							continue
						}
						ca, cb, cc := T(-0.4), T(2.1), T(-0.6)
						x, gf := gpuWith(t, bt, tridiag.PCR, constant, ca, cb, cc, mk)
						cpu, cf := cpuSystems(bt, constant, ca, cb, cc, func(a, b, c, d, x []T) error {
							return pcr.SolveHybrid(a, b, c, d, x, want, ws)
						})
						assert.Equal(t, cf, gf, name)
						if !sameBits(t, bt.shape, x, cpu, fmt.Sprintf("%s/const=%v", name, constant)) {
							return
						}
					}
				}
			}
		}
	}
}

func TestReductionBitExact(t *testing.T) {
	t.Run("float32", testReductionBitExact[float32])
	t.Run("float64", testReductionBitExact[float64])
}

// testReductionBitExact: the plans of tridiag.PCR and tridiag.CR against
// pcr.Solve and cr.Solve.
func testReductionBitExact[T tridiag.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, alg := range []tridiag.Algorithm{tridiag.PCR, tridiag.CR} {
		for _, n := range append(reductionSizes, 5, 7, 8, 9, 17, 127, 129, 257, 2047, 2049) {
			if !reductionFits[T](n, alg) {
				continue
			}
			pw, cw := pcr.NewWorkspace[T](n), cr.NewWorkspace[T](n)
			solve := func(a, b, c, d, x []T) error {
				if alg == tridiag.CR {
					return cr.Solve(a, b, c, d, x, cw)
				}
				return pcr.Solve(a, b, c, d, x, pw)
			}
			for _, g := range []int{1, 33, 300} {
				for lname, l := range layouts(n, g) {
					shape := tridiag.Shape{N: n, G: g, Layout: l}
					bt := newBatch[T](r, shape, 3)
					for _, constant := range []bool{false, true} {
						name := fmt.Sprintf("%s/N=%d/G=%d/%s/const=%v", alg, n, g, lname, constant)
						ca, cb, cc := T(-0.4), T(2.1), T(-0.6)
						x, gf := gpuWith(t, bt, alg, constant, ca, cb, cc, nil)
						cpu, cf := cpuSystems(bt, constant, ca, cb, cc, solve)
						assert.Equal(t, cf, gf, name)
						if !sameBits(t, bt.shape, x, cpu, name) {
							return
						}
					}
				}
			}
		}
	}
}

// TestReductionBreakdownRows: systems with bad divisors are reported at
// the CPU twin's row (first failing step or level, smallest row there),
// NaN-filled, and the others solved.
func TestReductionBreakdownRows(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	type variant struct {
		name  string
		alg   tridiag.Algorithm
		steps int // hybrid steps, -2: the algorithm's own plan
	}
	variants := []variant{{"pcr", tridiag.PCR, -2}, {"cr", tridiag.CR, -2},
		{"hybrid0", tridiag.PCR, 0}, {"hybrid2", tridiag.PCR, 2}, {"hybrid5", tridiag.PCR, 5}}
	for _, v := range variants {
		for _, n := range []int{1, 2, 3, 16, 100, 1000, 3000} {
			g := 12
			shape := tridiag.Shape{N: n, G: g, Layout: tridiag.Interleaved(g)}
			bt := newBatch[float64](r, shape, 4)
			set := func(sys, row int, val float64) {
				if row < n {
					bt.b[shape.Layout.Index(row, sys)] = val
				}
			}
			// System 1: b = 0 everywhere; 2–4: one zero, NaN or Inf on the
			// diagonal at rows 0, n/2 and n−1; 5: two bad rows; 7: a
			// level-1 zero of PCR (b'_1 = 1 − 0.5 − 0.5).
			for i := 0; i < n; i++ {
				set(1, i, 0)
			}
			set(2, 0, 0)
			set(3, n/2, math.NaN())
			set(4, n-1, math.Inf(-1))
			set(5, n-1, 0)
			set(5, n/3, 0)
			if n >= 8 {
				L := shape.Layout
				for i, row := range [][3]float64{{0, 2, 1}, {1, 1, 1}, {0.5, 1, 0.5}} {
					k := L.Index(i, 7)
					bt.a[k], bt.b[k], bt.c[k] = row[0], row[1], row[2]
				}
				for i := 3; i < n; i++ {
					k := L.Index(i, 7)
					bt.a[k], bt.b[k], bt.c[k] = 0.5, 4, 0.5
				}
			}
			name := fmt.Sprintf("%s/N=%d", v.name, n)
			var mk func(tridiag.Spec, bool) (kernelPlan, error)
			solve := func(a, b, c, d, x []float64) error {
				if v.alg == tridiag.CR {
					return cr.Solve(a, b, c, d, x, nil)
				}
				return pcr.Solve(a, b, c, d, x, nil)
			}
			if v.steps >= 0 {
				mk = func(spec tridiag.Spec, f64 bool) (kernelPlan, error) {
					return newPCRHybridPlan(gdev, spec, f64, v.steps)
				}
				solve = func(a, b, c, d, x []float64) error { return pcr.SolveHybrid(a, b, c, d, x, v.steps, nil) }
			}
			x, gf := gpuWith(t, bt, v.alg, false, 0, 0, 0, mk)
			cpu, cf := cpuSystems(bt, false, 0, 0, 0, solve)
			assert.Equal(t, cf, gf, name)
			assert.NotContains(t, gf, 0, name)
			sameBits(t, bt.shape, x, cpu, name)
		}
	}
}

// TestReductionMaxN: systems of the largest supported N solve on the
// device (shared memory opted into up to its limit); one row more is a
// shape error naming the limit.
func TestReductionMaxN(t *testing.T) {
	t.Run("float32", testReductionMaxN[float32])
	t.Run("float64", testReductionMaxN[float64])
}

func testReductionMaxN[T tridiag.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	e := int(elemSize[T]())
	for _, alg := range []tridiag.Algorithm{tridiag.PCR, tridiag.CR} {
		maxN := tuning.PCRMaxN(dev.Properties(), e)
		if alg == tridiag.CR {
			maxN = tuning.CRMaxN(dev.Properties(), e)
		}
		t.Logf("%s on %s: largest N %d for %d-byte elements", alg, dev.Name(), maxN, e)
		shape := tridiag.Shape{N: maxN, G: 3}
		bt := newBatch[T](r, shape, 4)
		x, gf := gpuWith(t, bt, alg, false, 0, 0, 0, nil)
		assert.Empty(t, gf)
		cpu, err := cpuSolve(t, bt, tridiag.Options{Algorithm: alg}, false, 0, 0, 0)
		require.NoError(t, err)
		sameBits(t, bt.shape, x, cpu, fmt.Sprintf("%s/N=%d", alg, maxN))
		if alg == tridiag.PCR {
			// The hybrid with tuning's steps at the largest N.
			x, gf = gpuWith(t, bt, alg, false, 0, 0, 0, func(spec tridiag.Spec, f64 bool) (kernelPlan, error) {
				return newPCRHybridPlan(gdev, spec, f64, -1)
			})
			assert.Empty(t, gf)
			cfg, err := tuning.PCRLaunch(dev.Properties(), maxN, e)
			require.NoError(t, err)
			cpu, _ = cpuSystems(bt, false, 0, 0, 0, func(a, b, c, d, x []T) error {
				return pcr.SolveHybrid(a, b, c, d, x, cfg.HybridSteps, nil)
			})
			sameBits(t, bt.shape, x, cpu, fmt.Sprintf("hybrid/N=%d/steps=%d", maxN, cfg.HybridSteps))
		}
		_, err = NewPlan[T](dev, tridiag.Shape{N: maxN + 1, G: 1}, tridiag.Options{Algorithm: alg})
		require.ErrorIs(t, err, tridiag.ErrShape)
		assert.ErrorIs(t, err, tuning.ErrTooLargeForShared)
		assert.Contains(t, err.Error(), fmt.Sprintf("N=%d", maxN))
	}
}
