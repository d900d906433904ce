//go:build cuda

package spikegpu

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/bandedgpu"
	"github.com/bandsolve/bandsolve/spike"
	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tuning"
)

// The GPU SPIKE plan is checked against package spike on the same matrix
// and partitions. Every step is the CPU's loop in the CPU's order with
// separately rounded operations (the PTX is built with -fmad=false, and
// Go on amd64 does not fuse either), so the spike blocks V_i⁽ᵇ⁾, W_{i+1}⁽ᵗ⁾
// and the solution are expected bit for bit; the tests say where they are
// not, with the largest difference in units of the last place. The
// solutions are also checked against LU with partial pivoting
// (banded.FactorPivot) where truncated SPIKE is accurate (d ≥ 1,
// partitions ≥ 16K rows). internal/spikeemu runs the same kernels on the
// CPU.

// ulps is the largest distance between a and b in units in the last
// place of the larger magnitude (0 when bit for bit equal; +Inf for a
// NaN on one side only).
func ulps[T tridiag.Float](a, b []T) float64 {
	worst := 0.0
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		if f64bits(a[i]) == f64bits(b[i]) {
			continue
		}
		if math.IsNaN(x) || math.IsNaN(y) {
			return math.Inf(1)
		}
		m := math.Max(math.Abs(x), math.Abs(y))
		if m == 0 {
			continue // +0 and −0
		}
		e := math.Ldexp(1, math.Ilogb(m)) * bandEps[T]()
		worst = math.Max(worst, math.Abs(x-y)/e)
	}
	return worst
}

// spikeCase factors m on the GPU and the CPU with the same options and
// compares spikes and solutions; it returns the GPU plan (closed by the
// caller) and the CPU factorization.
func spikeCase[T tridiag.Float](t *testing.T, what string, m *banded.Band[T], opts spike.Options, kern tuning.SpikeKernel, r *rand.Rand) {
	t.Helper()
	ctx := context.Background()
	p, err := newPlan[T](dev, m.N, m.K, opts, kern)
	require.NoError(t, err, what)
	defer p.Close()
	opts.Partitions = p.P()
	opts.Refine.Mode = banded.RefineOff // the twin is the plain SPIKE solve
	f, cerr := spike.Factor(m, opts)
	gerr := p.FactorBand(ctx, m)
	if cerr != nil || gerr != nil {
		require.Error(t, gerr, "%s: CPU failed with %v", what, cerr)
		require.Error(t, cerr, "%s: GPU failed with %v", what, gerr)
		assert.Equal(t, cerr.Error(), gerr.Error(), what)
		return
	}
	assert.Equal(t, f.Bounds(), p.Bounds(), what)
	assert.Equal(t, f.Boosts(), p.Boosts(), "%s: boosts", what)
	assert.Equal(t, f.ReducedBoosts(), p.ReducedBoosts(), "%s: reduced boosts", what)
	var worstV, worstW float64
	for i := 0; i < f.P()-1; i++ {
		cv, cw := f.Spikes(i)
		gv, gw, err := p.Spikes(i)
		require.NoError(t, err, what)
		worstV, worstW = math.Max(worstV, ulps(gv, cv)), math.Max(worstW, ulps(gw, cw))
	}
	assert.Zero(t, worstV, "%s: V blocks differ from the CPU's by up to %g ulp", what, worstV)
	assert.Zero(t, worstW, "%s: W blocks differ from the CPU's by up to %g ulp", what, worstW)

	b := make([]T, m.N)
	for i := range b {
		b[i] = T(r.Float64()*2 - 1)
	}
	cx := make([]T, m.N)
	require.NoError(t, f.Solve(b, cx), what)
	gx := make([]T, m.N)
	require.NoError(t, p.SolveHost(ctx, b, gx), what)
	assert.Zero(t, ulps(gx, cx), "%s: x differs from the CPU's by up to %g ulp", what, ulps(gx, cx))
	// In place, device-resident.
	db, err := cuda.Upload(dev, b)
	require.NoError(t, err)
	defer db.Free()
	require.NoError(t, p.Solve(ctx, db, db), what)
	ix := make([]T, m.N)
	require.NoError(t, db.CopyTo(ix))
	assert.Zero(t, ulps(ix, gx), "%s: in-place solve", what)

	// Against LU with partial pivoting where truncated SPIKE is exact to
	// round-off.
	d := banded.DiagonalDominance(m)
	if d >= 1 && (p.P() == 1 || m.N/p.P() >= max(16*m.K, 64)) { // the partition sizes of tuning.SpikePartitions
		lu, err := banded.FactorPivot(m.Clone())
		require.NoError(t, err)
		px := append([]T(nil), b...)
		lu.Solve(px)
		var num, den float64
		for i := range px {
			num = math.Max(num, math.Abs(float64(gx[i]-px[i])))
			den = math.Max(den, math.Abs(float64(px[i])))
		}
		tol := 1e-4
		if bandedgpu.ElemSize[T]() == 8 {
			tol = 1e-11
		}
		assert.LessOrEqual(t, num/den, tol, "%s: error against LU with pivoting", what)
	}
}

func testSpikeGPU[T tridiag.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(11, uint64(bandedgpu.ElemSize[T]())))
	type sc struct{ n, k int }
	cases := []sc{{1001, 1}, {1001, 2}, {1001, 5}, {1001, 16}, {1001, 33},
		{4099, 1}, {4099, 5}, {4099, 16}, {4099, 33}, {4099, 64}, {4099, 100},
		{100003, 2}, {100003, 16}, {100003, 64}}
	if bandedgpu.ElemSize[T]() == 4 {
		cases = append(cases, sc{100003, 100})
	}
	for _, c := range cases {
		for _, P := range []int{1, 2, 3, 16, 100} {
			if c.n/P < 2*c.k || (c.n > 5000 && P < 16) {
				continue
			}
			for _, d := range []float64{2, 1, 0.5} {
				if c.n > 5000 && d != 1 {
					continue
				}
				m := banded.Random[T](c.n, c.k, d, r)
				what := fmt.Sprintf("N=%d K=%d P=%d d=%g", c.n, c.k, P, d)
				spikeCase(t, what, m, spike.Options{Partitions: P}, tuning.SpikeKernelAuto, r)
			}
		}
	}
}

func TestSpikeGPUF32(t *testing.T) { testSpikeGPU[float32](t) }
func TestSpikeGPUF64(t *testing.T) { testSpikeGPU[float64](t) }

// The factorization kernel that is not the default for K (the wide one
// below K = 16, the window one from there to 64: tuning.SpikeKernel.Wide);
// ULBlock = 2K (SPIKE::GPU's UL of the top-left 2K×2K blocks) and block-Jacobi.
func TestSpikeGPUVariants(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 13))
	auto := tuning.SpikeKernelAuto
	for _, k := range []int{1, 5, 16, 33, 64} {
		n := 40*k + 17
		m := banded.Random[float64](n, k, 1, r)
		other, name := tuning.SpikeKernelWide, "wide"
		if auto.Wide(k) {
			other, name = tuning.SpikeKernelWindow, "window"
		}
		spikeCase(t, fmt.Sprintf("%s K=%d", name, k), m, spike.Options{Partitions: 7}, other, r)
		spikeCase(t, fmt.Sprintf("ULBlock=2K K=%d", k), m, spike.Options{Partitions: 7, ULBlock: 2 * k}, auto, r)
		m32 := banded.Convert[float32](m)
		spikeCase(t, fmt.Sprintf("f32 ULBlock=2K %s K=%d", name, k), m32, spike.Options{Partitions: 7, ULBlock: 2 * k}, other, r)
		spikeCase(t, fmt.Sprintf("block-Jacobi K=%d", k), m, spike.Options{Partitions: 7, Method: spike.BlockJacobi}, auto, r)
	}
	// Default P from package tuning.
	m := banded.Random[float64](200003, 8, 1, r)
	p, err := NewPlan[float64](dev, m.N, m.K, spike.Options{})
	require.NoError(t, err)
	t.Logf("N=%d K=%d: P=%d (%s)", m.N, m.K, p.P(), p.Kernel())
	assert.Greater(t, p.P(), 1)
	require.NoError(t, p.Close())
	spikeCase(t, "default P", m, spike.Options{}, auto, r)
}

func testSpikeGPUBreakdowns[T tridiag.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(14, uint64(bandedgpu.ElemSize[T]())))
	const n, k, P = 997, 5, 9
	bounds := spike.Partitions(n, P)
	ctx := context.Background()
	for _, kern := range []tuning.SpikeKernel{tuning.SpikeKernelWindow, tuning.SpikeKernelWide} {
		for _, tol := range []float64{0, -1} {
			base := fmt.Sprintf("kernel=%d BoostTol=%g", kern, tol)
			opts := spike.Options{Partitions: P, BoostTol: tol}
			// Zero pivots: the first row of partition 3 (LU), the last
			// of partition 5 (its UL's first pivot).
			m := banded.Random[T](n, k, 2, r)
			m.Set(bounds[3], bounds[3], 0)
			spikeCase(t, base+" zero LU pivot", m, opts, kern, r)
			m = banded.Random[T](n, k, 2, r)
			m.Set(bounds[6]-1, bounds[6]-1, 0)
			spikeCase(t, base+" zero UL pivot", m, opts, kern, r)
			if tol < 0 {
				// The error names the partition and the row.
				p, err := newPlan[T](dev, n, k, opts, kern)
				require.NoError(t, err)
				err = p.FactorBand(ctx, m)
				var re *banded.RowError
				require.ErrorAs(t, err, &re, base)
				assert.ErrorIs(t, err, banded.ErrZeroPivot)
				assert.Contains(t, err.Error(), "partition 5")
				assert.Equal(t, bounds[6]-1, re.Row)
				assert.ErrorIs(t, p.SolveHost(ctx, make([]T, n), make([]T, n)), ErrNotFactored)
				require.NoError(t, p.Close())
			}
		}
		// NaN in a block and ±Inf in a coupling block B_i: the error names
		// row and column.
		m := banded.Random[T](n, k, 2, r)
		m.Set(bounds[4]+2, bounds[4]+4, T(math.NaN()))
		spikeCase(t, "NaN in a block", m, spike.Options{Partitions: P}, kern, r)
		p, err := newPlan[T](dev, n, k, spike.Options{Partitions: P}, kern)
		require.NoError(t, err)
		err = p.FactorBand(ctx, m)
		var re *banded.RowError
		require.ErrorAs(t, err, &re)
		assert.ErrorIs(t, err, banded.ErrNonFinite)
		assert.Equal(t, [2]int{bounds[4] + 2, bounds[4] + 4}, [2]int{re.Row, re.Col})
		m = banded.Random[T](n, k, 2, r)
		m.Set(bounds[2]-1, bounds[2], T(math.Inf(-1)))
		spikeCase(t, "-Inf in B_1", m, spike.Options{Partitions: P}, kern, r)
		// After a failure the plan factors again.
		require.NoError(t, p.FactorBand(ctx, banded.Random[T](n, k, 2, r)))
		// NaN in b: an error naming the row, then the next solve is clean.
		b := make([]T, n)
		b[123], b[456] = T(math.NaN()), T(math.Inf(1))
		err = p.SolveHost(ctx, b, make([]T, n))
		assert.ErrorIs(t, err, banded.ErrNonFinite)
		assert.Contains(t, err.Error(), "row 123")
		b[123], b[456] = 0, 0
		assert.NoError(t, p.SolveHost(ctx, b, make([]T, n)))
		require.NoError(t, p.Close())
	}
}

func TestSpikeGPUBreakdownsF32(t *testing.T) { testSpikeGPUBreakdowns[float32](t) }
func TestSpikeGPUBreakdownsF64(t *testing.T) { testSpikeGPUBreakdowns[float64](t) }

func TestSpikeGPUShapes(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		n, k int
		opts spike.Options
		want error
	}{
		{0, 0, spike.Options{}, banded.ErrShape},
		{100, 0, spike.Options{}, banded.ErrShape},                   // K = 0: not on the GPU
		{100, 100, spike.Options{}, banded.ErrShape},                 // K ≥ N
		{10000, 718, spike.Options{}, banded.ErrShape},               // above tuning.SpikeMaxK (717 in FP64 on an H100)
		{100, 5, spike.Options{Partitions: 11}, spike.ErrPartitions}, // 9-row partitions < 2K
		{100, 5, spike.Options{Partitions: -1}, spike.ErrOption},
		{100, 5, spike.Options{Partitions: 2, ULBlock: 5}, spike.ErrOption},
		{100, 5, spike.Options{Method: 7}, spike.ErrOption},
	} {
		_, err := NewPlan[float64](dev, c.n, c.k, c.opts)
		assert.ErrorIs(t, err, c.want, "N=%d K=%d %+v", c.n, c.k, c.opts)
	}
	p, err := NewPlan[float32](dev, 100, 3, spike.Options{Partitions: 4})
	require.NoError(t, err)
	assert.ErrorIs(t, p.SolveHost(ctx, make([]float32, 100), make([]float32, 100)), ErrNotFactored)
	assert.ErrorIs(t, p.FactorBand(ctx, banded.Random[float32](101, 3, 1, rand.New(rand.NewPCG(1, 1)))), banded.ErrShape)
	short, err := cuda.Alloc[float32](dev, 7*100-1)
	require.NoError(t, err)
	defer short.Free()
	assert.ErrorIs(t, p.Factor(ctx, short), banded.ErrShape)
	require.NoError(t, p.FactorBand(ctx, banded.Random[float32](100, 3, 1, rand.New(rand.NewPCG(1, 1)))))
	assert.ErrorIs(t, p.SolveHost(ctx, make([]float32, 99), make([]float32, 100)), banded.ErrShape)
	v, err := cuda.Alloc[float32](dev, 150)
	require.NoError(t, err)
	defer v.Free()
	a, _ := v.Slice(0, 100)
	b, _ := v.Slice(50, 100)
	assert.ErrorIs(t, p.Solve(ctx, a, b), banded.ErrShape, "overlapping b and x")
	_, _, err = p.Spikes(3)
	assert.Error(t, err)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	assert.ErrorIs(t, p.Solve(cctx, a, a), context.Canceled)
	require.NoError(t, p.Close())
	assert.ErrorIs(t, p.Solve(ctx, a, a), tridiag.ErrClosed)
}
