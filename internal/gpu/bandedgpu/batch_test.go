//go:build cuda

package bandedgpu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
	"github.com/bandsolve/bandsolve/tridiag"
)

// The banded kernels are tested against their CPU twins in package banded
// (the same algorithm: results bit for bit), against LU with partial
// pivoting (banded.FactorPivot) through the backward error, and on
// breakdowns. internal/bandemu runs the same kernels on the CPU.

func bandEps[T tridiag.Float]() float64 {
	if ElemSize[T]() == 8 {
		return 0x1p-52
	}
	return 0x1p-23
}

func f64bits[T tridiag.Float](v T) uint64 {
	if ElemSize[T]() == 8 {
		return math.Float64bits(float64(v))
	}
	return uint64(math.Float32bits(float32(v)))
}

// bandBatch builds G random systems of dominance dom in a layout, with NaN
// in the storage slots outside each matrix (no kernel may read them).
func bandBatch[T tridiag.Float](r *rand.Rand, n, k, g int, layout banded.Layout, dom float64) (*banded.Batch[T], []T) {
	b, err := banded.NewBatch[T](n, k, g, layout)
	if err != nil {
		panic(err)
	}
	w := (2*k + 1) * n
	for s := 0; s < g; s++ {
		if err := b.SetSystem(s, banded.Random[T](n, k, dom, r)); err != nil {
			panic(err)
		}
		for c := 0; c <= 2*k; c++ {
			for j := 0; j < n; j++ {
				if i := j + c - k; i < 0 || i >= n {
					e := c*n + j
					if layout == banded.Interleaved {
						b.Data[e*g+s] = T(math.NaN())
					} else {
						b.Data[s*w+e] = T(math.NaN())
					}
				}
			}
		}
	}
	rhs := make([]T, n*g)
	for i := range rhs {
		rhs[i] = T(r.Float64()*2 - 1)
	}
	return b, rhs
}

// backwardError is ‖A·x − d‖∞ / (‖A‖∞·‖x‖∞ + ‖d‖∞) in float64.
func backwardError[T tridiag.Float](m *banded.Band[T], x, d []T) float64 {
	var rn, an, xn, dn float64
	for i := 0; i < m.N; i++ {
		var s, a float64
		for j := max(0, i-m.K); j <= min(m.N-1, i+m.K); j++ {
			v := float64(m.At(i, j))
			s += v * float64(x[j])
			a += math.Abs(v)
		}
		rn = math.Max(rn, math.Abs(s-float64(d[i])))
		an = math.Max(an, a)
		xn = math.Max(xn, math.Abs(float64(x[i])))
		dn = math.Max(dn, math.Abs(float64(d[i])))
	}
	return rn / (an*xn + dn)
}

func vecOf[T tridiag.Float](b *banded.Batch[T], v []T, s int) []T {
	out := make([]T, b.N)
	for i := range out {
		out[i] = v[b.VecIndex(s, i)]
	}
	return out
}

// sameFailures requires the GPU's error gerr to fail the systems the CPU
// twin's error cerr fails, at the same row and column, with the same of
// the sentinels as cause.
func sameFailures(t *testing.T, cerr, gerr error, what string, sentinels ...error) {
	t.Helper()
	if cerr == nil {
		require.NoError(t, gerr, what)
		return
	}
	var cbe, gbe *banded.BatchError
	require.ErrorAs(t, cerr, &cbe, what)
	require.ErrorAs(t, gerr, &gbe, "%s: the CPU failed with %v", what, cerr)
	require.Equal(t, len(cbe.Failed), len(gbe.Failed), "%s: failed systems", what)
	for i, cf := range cbe.Failed {
		gf := gbe.Failed[i]
		assert.Equal(t, cf.System, gf.System, what)
		assert.Equal(t, [2]int{cf.Row, cf.Col}, [2]int{gf.Row, gf.Col}, "%s: system %d: %v vs %v", what, cf.System, cf.Err, gf.Err)
		for _, sentinel := range sentinels {
			assert.Equal(t, errors.Is(cf.Err, sentinel), errors.Is(gf.Err, sentinel), "%s: system %d: %v vs %v", what, cf.System, cf.Err, gf.Err)
		}
	}
}

// sameSolutions fails unless the GPU's x is the CPU twin's cx bit for bit
// (NaN for NaN), naming the first system and row that differ.
func sameSolutions[T tridiag.Float](t *testing.T, b *banded.Batch[T], x, cx []T, what string) {
	t.Helper()
	for i := range x {
		if f64bits(x[i]) != f64bits(cx[i]) && !(math.IsNaN(float64(x[i])) && math.IsNaN(float64(cx[i]))) {
			g, row := i%b.G, i/b.G
			if b.Layout == banded.Contiguous {
				g, row = i/b.N, i%b.N
			}
			t.Fatalf("%s: system %d row %d: GPU %v, CPU twin %v", what, g, row, x[i], cx[i])
		}
	}
}

// checkBandBatch solves on the GPU and on the CPU twin and compares
// solutions bit for bit, failures and boosts; for a sample of solved
// systems it also checks the backward error and the distance to the
// pivoting LU's solution.
func checkBandBatch[T tridiag.Float](t *testing.T, b *banded.Batch[T], rhs []T, opts Options, what string) {
	t.Helper()
	ctx := context.Background()
	p, err := NewBatchPlan[T](dev, b.N, b.K, b.G, b.Layout, opts)
	require.NoError(t, err, what)
	defer p.Close()
	x := make([]T, len(rhs))
	res, gerr := p.SolveBatch(ctx, b, rhs, x)
	cx := make([]T, len(rhs))
	// The twin is the plain factor-and-solve: refinement off.
	cres, cerr := banded.SolveBatch(ctx, b, rhs, cx, banded.BatchOptions{Factor: opts.Factor, Refine: banded.RefineOptions{Mode: banded.RefineOff}})
	sameFailures(t, cerr, gerr, what, banded.ErrNonFinite, banded.ErrZeroPivot)
	require.Equal(t, len(cres.Boosted), len(res.Boosted), "%s: boosted systems", what)
	for i := range cres.Boosted {
		assert.Equal(t, cres.Boosted[i].System, res.Boosted[i].System, what)
		assert.Equal(t, cres.Boosted[i].Rows, res.Boosted[i].Rows, what)
	}
	sameSolutions(t, b, x, cx, what)
	// Against the pivoting reference on a few solved systems.
	failed := map[int]bool{}
	var be *banded.BatchError
	if errors.As(gerr, &be) {
		for _, f := range be.Failed {
			failed[f.System] = true
		}
	}
	for _, s := range []int{0, b.G / 2, b.G - 1} {
		if failed[s] {
			continue
		}
		m := b.System(s)
		xs, ds := vecOf(b, x, s), vecOf(b, rhs, s)
		tol := 64 * float64(b.K+1) * bandEps[T]()
		assert.LessOrEqual(t, backwardError(m, xs, ds), tol, "%s: system %d backward error", what, s)
		f, err := banded.FactorPivot(m)
		if err != nil {
			// Exactly singular (weakly dominant random systems can be):
			// the twin comparison above is the check.
			t.Logf("%s: system %d: pivoting reference: %v", what, s, err)
			continue
		}
		ref := append([]T(nil), ds...)
		f.Solve(ref)
		var dx, xn float64
		for i := range ref {
			dx = math.Max(dx, math.Abs(float64(xs[i]-ref[i])))
			xn = math.Max(xn, math.Abs(float64(ref[i])))
		}
		if len(res.Boosted) == 0 {
			// Diagonally dominant (or at least well conditioned) systems:
			// the two solutions agree to a modest multiple of eps.
			assert.LessOrEqual(t, dx/math.Max(xn, 1e-300), 1e4*bandEps[T](), "%s: system %d vs pivoting LU", what, s)
		}
	}
}

var bandLayouts = []banded.Layout{banded.Interleaved, banded.Contiguous}

func testBandBatch[T tridiag.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, k := range []int{1, 2, 3, 5} {
		for _, n := range []int{2, 3, 7, 100, 1000, 4099} {
			if k >= n {
				continue
			}
			for _, g := range []int{1, 3, 1000} {
				if n*g > 1<<21 && k > 2 {
					continue
				}
				for _, lay := range bandLayouts {
					b, rhs := bandBatch[T](r, n, k, g, lay, 1.5)
					what := fmt.Sprintf("K=%d N=%d G=%d %v", k, n, g, lay)
					checkBandBatch(t, b, rhs, Options{}, what)
				}
			}
		}
	}
}

func TestBandBatchF32(t *testing.T) { testBandBatch[float32](t) }
func TestBandBatchF64(t *testing.T) { testBandBatch[float64](t) }

// Every kernel, K = 1…8, and the K = 2 kernels of other prefetch depths,
// on weakly dominant systems (d = 0.6, where some pivots get small).
func testBandBatchKernels[T tridiag.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	f64 := ElemSize[T]() == 8
	depths := []int{4, 24}
	if f64 {
		depths = []int{4}
	}
	for k := 1; k <= MaxBatchK; k++ {
		for _, lay := range bandLayouts {
			n, g := 77+k, 129
			b, rhs := bandBatch[T](r, n, k, g, lay, 0.6)
			fam, err := kernels.BandBatchKFor(k, f64)
			require.NoError(t, err)
			name := fam.Kernel().Name()
			requireBatchKernel[T](t, b, Options{}, name)
			checkBandBatch(t, b, rhs, Options{}, name+" "+lay.String())
		}
	}
	for _, v := range depths {
		for _, lay := range bandLayouts {
			for _, n := range []int{3, 64, 301} {
				b, rhs := bandBatch[T](r, n, 2, 1000, lay, 1.5)
				fam, err := kernels.BandBatchKDFor(2, v, f64)
				require.NoError(t, err)
				name := fam.Kernel().Name()
				requireBatchKernel[T](t, b, Options{depth: v}, name)
				checkBandBatch(t, b, rhs, Options{depth: v}, fmt.Sprintf("%s N=%d %v", name, n, lay))
			}
		}
	}
}

// requireBatchKernel checks that a plan for b's shape with opts launches
// the kernel named want.
func requireBatchKernel[T tridiag.Float](t *testing.T, b *banded.Batch[T], opts Options, want string) {
	t.Helper()
	p, err := NewBatchPlan[T](dev, b.N, b.K, b.G, b.Layout, opts)
	require.NoError(t, err, want)
	defer p.Close()
	require.Equal(t, want, p.Kernel())
}

func TestBandBatchKernelsF32(t *testing.T) { testBandBatchKernels[float32](t) }
func TestBandBatchKernelsF64(t *testing.T) { testBandBatchKernels[float64](t) }

// Zero pivots (boosted, or failing with boosting off), NaN and Inf entries,
// a NaN right-hand side, an overflowing pivot, and CheckFinite.
func testBandBatchBreakdown[T tridiag.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, k := range []int{1, 2, 5} {
		for _, lay := range bandLayouts {
			n, g := 50, 40
			b, rhs := bandBatch[T](r, n, k, g, lay, 2)
			b.Set(1, 0, 0, 0)                 // zero first pivot
			b.Set(2, 17, 17, 0)               // zero diagonal entry: pivot 17 is small, not zero
			b.Set(3, 20, 20-k, T(math.NaN())) // NaN entry
			b.Set(4, 3, 3+k, T(math.Inf(1)))  // Inf entry
			rhs[b.VecIndex(5, 11)] = T(math.NaN())
			b.Set(6, 0, 0, 0) // zero pivot and a later NaN: the NaN is reported
			b.Set(6, 30, 30, T(math.NaN()))
			mf := math.MaxFloat32
			if ElemSize[T]() == 8 {
				mf = math.MaxFloat64
			}
			b.Set(7, 10, 10, T(mf)) // the next pivot overflows
			b.Set(7, 11, 10, T(mf))
			b.Set(7, 10, 11, T(-mf))
			// A pivot below τ only through the norm of a large entry near the
			// end (the first sweep does not know it yet when it meets it).
			b.Set(8, 0, 0, T(100*bandEps[T]()))
			b.Set(8, n-1, n-1, 1e3)
			for _, tol := range []float64{0, -1, 1e-3} {
				what := fmt.Sprintf("breakdown K=%d %v tol=%g", k, lay, tol)
				checkBandBatch(t, b, rhs, Options{Factor: banded.FactorOptions{BoostTol: tol}}, what)
			}
			// Boosting off: system 1 fails at row 0 with ErrZeroPivot.
			p, err := NewBatchPlan[T](dev, n, k, g, lay, Options{Factor: banded.FactorOptions{BoostTol: -1}, CheckFinite: true})
			require.NoError(t, err)
			x := make([]T, n*g)
			_, err = p.SolveBatch(context.Background(), b, rhs, x)
			var be *banded.BatchError
			require.ErrorAs(t, err, &be)
			got := map[int]banded.SystemError{}
			for _, f := range be.Failed {
				got[f.System] = f
			}
			require.Contains(t, got, 1)
			assert.ErrorIs(t, got[1].Err, banded.ErrZeroPivot)
			assert.Equal(t, 0, got[1].Row)
			var re *banded.RowError
			require.ErrorAs(t, got[3].Err, &re)
			assert.Equal(t, [2]int{20, 20 - k}, [2]int{re.Row, re.Col})
			assert.ErrorIs(t, got[3].Err, banded.ErrNonFinite)
			// CheckFinite: the NaN right-hand side fails system 5 at row ≤ 11.
			require.Contains(t, got, 5)
			assert.ErrorIs(t, got[5].Err, banded.ErrNonFinite)
			assert.LessOrEqual(t, got[5].Row, 11)
			assert.NotContains(t, got, 0)
			for i := 0; i < n; i++ {
				assert.True(t, math.IsNaN(float64(x[b.VecIndex(1, i)])), "failed system's x must be NaN")
				assert.False(t, math.IsNaN(float64(x[b.VecIndex(0, i)])))
			}
			require.NoError(t, p.Close())
		}
	}
}

func TestBandBatchBreakdownF32(t *testing.T) { testBandBatchBreakdown[float32](t) }
func TestBandBatchBreakdownF64(t *testing.T) { testBandBatchBreakdown[float64](t) }

// Device-resident solves, x aliasing d, repeated solves (the status must
// be cleared between them), shapes that are refused.
func TestBandBatchDevice(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(17, 18))
	n, k, g := 300, 2, 777
	b, rhs := bandBatch[float64](r, n, k, g, banded.Interleaved, 1)
	want := make([]float64, n*g)
	_, err := banded.SolveBatch(ctx, b, rhs, want, banded.BatchOptions{Refine: banded.RefineOptions{Mode: banded.RefineOff}})
	require.NoError(t, err)
	p, err := NewBatchPlan[float64](dev, n, k, g, banded.Interleaved, Options{})
	require.NoError(t, err)
	defer p.Close()
	a, err := cuda.Upload(dev, b.Data)
	require.NoError(t, err)
	defer a.Free()
	for rep := 0; rep < 3; rep++ {
		d, err := cuda.Upload(dev, rhs)
		require.NoError(t, err)
		_, err = p.SolveDevice(ctx, a, d, d) // in place
		require.NoError(t, err)
		got := make([]float64, n*g)
		require.NoError(t, d.CopyTo(got))
		require.Equal(t, want, got)
		require.NoError(t, d.Free())
	}
	// A failing solve, then a good one: no stale status.
	bad := append([]float64(nil), b.Data...)
	bad[b.Index(5, 0, 0)] = math.NaN()
	ab, err := cuda.Upload(dev, bad)
	require.NoError(t, err)
	defer ab.Free()
	d, err := cuda.Upload(dev, rhs)
	require.NoError(t, err)
	defer d.Free()
	x, err := cuda.Alloc[float64](dev, n*g)
	require.NoError(t, err)
	defer x.Free()
	_, err = p.SolveDevice(ctx, ab, d, x)
	var be *banded.BatchError
	require.ErrorAs(t, err, &be)
	require.Len(t, be.Failed, 1)
	assert.Equal(t, 5, be.Failed[0].System)
	_, err = p.SolveDevice(ctx, a, d, x)
	require.NoError(t, err)
	times, err := p.Time(ctx, cuda.EventTimer(nil), a, d, x, 1, 3)
	require.NoError(t, err)
	require.Len(t, times, 3)
	moved, floor := p.Bytes()
	assert.Equal(t, int64(n*g*7*8), floor)
	assert.Greater(t, moved, floor)

	for _, c := range []struct{ n, k, g int }{{1, 1, 1}, {5, 0, 1}, {5, 9, 1}, {20, 9, 1}, {5, 2, 0}} {
		_, err := NewBatchPlan[float32](dev, c.n, c.k, c.g, banded.Interleaved, Options{})
		assert.ErrorIs(t, err, banded.ErrShape, "N=%d K=%d G=%d", c.n, c.k, c.g)
	}
	short, err := cuda.Alloc[float64](dev, 10)
	require.NoError(t, err)
	defer short.Free()
	_, err = p.SolveDevice(ctx, short, d, x)
	assert.ErrorIs(t, err, banded.ErrShape)
}

// partitionBounds splits [0, n) into p nearly equal partitions (as SPIKE
// does, Li et al. §4), larger ones first.
func partitionBounds(n, p int) []int {
	b := []int{0}
	q, rem := n/p, n%p
	for i := 0; i < p; i++ {
		l := q
		if i < rem {
			l++
		}
		b = append(b, b[i]+l)
	}
	return b
}

func testBandPartitions[T tridiag.Float](t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(19, 20))
	for _, k := range []int{1, 2, 8, 33, 64} {
		for _, c := range []struct{ n, p int }{{k + 1, 1}, {3*k + 2, 2}, {1000, 3}, {4099, 7}} {
			if c.n/c.p <= k && c.p > 1 {
				continue
			}
			n := c.n
			for _, dom := range []float64{2, 0.3} {
				m := banded.Random[T](n, k, dom, r)
				bounds := partitionBounds(n, c.p)
				if c.p > 1 {
					m.Set(bounds[1], bounds[1], 0) // a zero pivot at the top of partition 1
				}
				if c.p > 2 {
					m.Set(bounds[2]+k, bounds[2]+k, 0)
				}
				for _, ul := range []bool{false, true} {
					for _, tol := range []float64{0, -1} {
						what := fmt.Sprintf("K=%d N=%d P=%d dom=%g ul=%v tol=%g", k, n, c.p, dom, ul, tol)
						opt := banded.FactorOptions{BoostTol: tol}
						cpu := m.Clone()
						cpuErr := make([]error, c.p)
						boosts := make([]int, c.p)
						for q := 0; q < c.p; q++ {
							var bs banded.Boosts
							if ul {
								bs, cpuErr[q] = banded.FactorULRange(cpu, bounds[q], bounds[q+1], opt)
							} else {
								bs, cpuErr[q] = banded.FactorLURange(cpu, bounds[q], bounds[q+1], opt)
							}
							boosts[q] = bs.Count()
						}
						band, err := cuda.Upload(dev, m.Data)
						require.NoError(t, err)
						pp, err := NewPartitions[T](dev, n, k, bounds)
						require.NoError(t, err)
						var res PartitionResult
						if ul {
							res, err = pp.FactorUL(ctx, band, opt)
						} else {
							res, err = pp.FactorLU(ctx, band, opt)
						}
						assert.Equal(t, boosts, res.Boosts, what)
						var be *banded.BatchError
						failed := map[int]bool{}
						if errors.As(err, &be) {
							for _, f := range be.Failed {
								failed[f.System] = true
								require.Error(t, cpuErr[f.System], "%s: partition %d failed on the GPU only: %v", what, f.System, f.Err)
								var re *banded.RowError
								require.ErrorAs(t, cpuErr[f.System], &re)
								assert.Equal(t, [2]int{re.Row, re.Col}, [2]int{f.Row, f.Col}, what)
								assert.Equal(t, errors.Is(cpuErr[f.System], banded.ErrZeroPivot), errors.Is(f.Err, banded.ErrZeroPivot), what)
							}
						} else {
							require.NoError(t, err, what)
						}
						for q, e := range cpuErr {
							assert.Equal(t, e != nil, failed[q], "%s: partition %d: CPU %v", what, q, e)
						}
						got := make([]T, len(m.Data))
						require.NoError(t, band.CopyTo(got))
						for i := range got {
							if f64bits(got[i]) != f64bits(cpu.Data[i]) {
								t.Fatalf("%s: storage column %d row %d: GPU %v, CPU twin %v", what, i/n, i%n, got[i], cpu.Data[i])
							}
						}
						// Solves with 1 and K right-hand sides: whole, and in two
						// sweeps.
						for _, nrhs := range []int{1, k} {
							ldb := n + 5
							b0 := make([]T, ldb*nrhs)
							for i := range b0 {
								b0[i] = T(r.Float64()*2 - 1)
							}
							want := append([]T(nil), b0...)
							for q := 0; q < c.p; q++ {
								if failed[q] {
									continue
								}
								seg := make([]T, 0, (bounds[q+1]-bounds[q])*nrhs)
								for col := 0; col < nrhs; col++ {
									seg = append(seg, want[col*ldb+bounds[q]:col*ldb+bounds[q+1]]...)
								}
								if ul {
									banded.SolveULRangeMulti(cpu, bounds[q], bounds[q+1], seg, nrhs)
								} else {
									banded.SolveLURangeMulti(cpu, bounds[q], bounds[q+1], seg, nrhs)
								}
								l := bounds[q+1] - bounds[q]
								for col := 0; col < nrhs; col++ {
									copy(want[col*ldb+bounds[q]:col*ldb+bounds[q+1]], seg[col*l:(col+1)*l])
								}
							}
							for _, split := range []bool{false, true} {
								bb, err := cuda.Upload(dev, b0)
								require.NoError(t, err)
								solve := pp.SolveLU
								if ul {
									solve = pp.SolveUL
								}
								if split {
									require.NoError(t, solve(ctx, band, bb, nrhs, ldb, SweepForward))
									require.NoError(t, solve(ctx, band, bb, nrhs, ldb, SweepBackward))
								} else {
									require.NoError(t, solve(ctx, band, bb, nrhs, ldb, SweepBoth))
								}
								gotb := make([]T, len(b0))
								require.NoError(t, bb.CopyTo(gotb))
								require.NoError(t, bb.Free())
								for q := 0; q < c.p; q++ {
									if failed[q] {
										continue
									}
									for col := 0; col < nrhs; col++ {
										for i := bounds[q]; i < bounds[q+1]; i++ {
											if f64bits(gotb[col*ldb+i]) != f64bits(want[col*ldb+i]) {
												t.Fatalf("%s nrhs=%d split=%v: column %d row %d: GPU %v, CPU twin %v", what, nrhs, split, col, i, gotb[col*ldb+i], want[col*ldb+i])
											}
										}
									}
								}
								for col := 0; col < nrhs; col++ {
									for i := n; i < ldb; i++ {
										require.Equal(t, f64bits(b0[col*ldb+i]), f64bits(gotb[col*ldb+i]), "%s: padding touched", what)
									}
								}
								// Backward error of the block solves of partition 0
								// (dominant, unboosted case).
								if dom > 1 && !failed[0] && boosts[0] == 0 && !split {
									blk := &banded.Band[T]{N: bounds[1], K: min(k, bounds[1]-1)}
									blk.Data = make([]T, (2*blk.K+1)*blk.N)
									for i := 0; i < blk.N; i++ {
										for j := max(0, i-blk.K); j <= min(blk.N-1, i+blk.K); j++ {
											blk.Set(i, j, m.At(i, j))
										}
									}
									assert.LessOrEqual(t, backwardError(blk, gotb[:blk.N], b0[:blk.N]), 64*float64(k+1)*bandEps[T](), what)
								}
							}
						}
						require.NoError(t, pp.Close())
						require.NoError(t, band.Free())
					}
				}
			}
		}
	}
}

func TestBandPartitionsF32(t *testing.T) { testBandPartitions[float32](t) }
func TestBandPartitionsF64(t *testing.T) { testBandPartitions[float64](t) }

// NaN input to the partition factorization; the one-call helpers; refused
// shapes.
func TestBandPartitionsErrors(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(21, 22))
	n, k := 200, 4
	m := banded.Random[float64](n, k, 2, r)
	m.Set(150, 147, math.NaN())
	bounds := []int{0, 100, 200}
	band, err := cuda.Upload(dev, m.Data)
	require.NoError(t, err)
	defer band.Free()
	res, err := FactorLUPartitions(ctx, band, n, k, bounds, banded.FactorOptions{})
	var be *banded.BatchError
	require.ErrorAs(t, err, &be)
	require.Len(t, be.Failed, 1)
	assert.Equal(t, 1, be.Failed[0].System)
	assert.Equal(t, [2]int{150, 147}, [2]int{be.Failed[0].Row, be.Failed[0].Col})
	assert.ErrorIs(t, be.Failed[0].Err, banded.ErrNonFinite)
	assert.Equal(t, []int{0, 0}, res.Boosts)
	// Partition 1 is untouched (the scan comes first), partition 0 factored.
	got := make([]float64, len(m.Data))
	require.NoError(t, band.CopyTo(got))
	cpu := m.Clone()
	_, err = banded.FactorLURange(cpu, 0, 100, banded.FactorOptions{})
	require.NoError(t, err)
	for i := range got {
		if !(math.IsNaN(got[i]) && math.IsNaN(cpu.Data[i])) {
			require.Equal(t, cpu.Data[i], got[i], "storage %d", i)
		}
	}
	b := make([]float64, n)
	for i := range b {
		b[i] = 1
	}
	db, err := cuda.Upload(dev, b)
	require.NoError(t, err)
	defer db.Free()
	require.NoError(t, SolveLUPartitions(ctx, band, db, n, k, bounds, 1, n, SweepBoth))
	_, err = FactorULPartitions(ctx, band, n, k, []int{0, 200}, banded.FactorOptions{})
	require.Error(t, err)
	require.NoError(t, SolveULPartitions(ctx, band, db, n, k, []int{0, 200}, 1, n, SweepForward))

	for _, c := range []struct {
		n, k   int
		bounds []int
	}{{200, 65, []int{0, 200}}, {200, 0, []int{0, 200}}, {200, 4, []int{0, 100}}, {200, 4, []int{0, 100, 100, 200}}, {200, 4, []int{1, 200}}} {
		_, err := NewPartitions[float64](dev, c.n, c.k, c.bounds)
		assert.ErrorIs(t, err, banded.ErrShape, "%+v", c)
	}
}

// TestBandBatchCheck: Options.Check on device buffers, in place and not,
// both layouts: a dominant batch passes; a system whose zero pivot was
// boosted (BoostTol 1e−3: the solution is far off) fails with its backward
// error and the Boosted flag; a system with a NaN entry fails once, with
// the solve's error; the other systems pass.
func TestBandBatchCheck(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(19, 20))
	for _, lay := range bandLayouts {
		n, k, g := 97, 3, 31
		b, rhs := bandBatch[float64](r, n, k, g, lay, 2)
		p, err := NewBatchPlan[float64](dev, n, k, g, lay, Options{Check: true, Factor: banded.FactorOptions{BoostTol: 1e-3}})
		require.NoError(t, err)
		a, err := cuda.Upload(dev, b.Data)
		require.NoError(t, err)
		d, err := cuda.Upload(dev, rhs)
		require.NoError(t, err)
		_, err = p.SolveDevice(ctx, a, d, d)
		require.NoError(t, err, "%v: dominant batch", lay)
		require.NoError(t, a.Free())
		require.NoError(t, d.Free())

		b.Set(4, 0, 0, 0) // boosted to τ = 1e−3·max|a|: an inaccurate x
		b.Set(9, 5, 5, math.NaN())
		a, err = cuda.Upload(dev, b.Data)
		require.NoError(t, err)
		for _, inPlace := range []bool{false, true} {
			d, err := cuda.Upload(dev, rhs)
			require.NoError(t, err)
			x := d
			if !inPlace {
				x, err = cuda.Alloc[float64](dev, n*g)
				require.NoError(t, err)
			}
			res, err := p.SolveDevice(ctx, a, d, x)
			require.Len(t, res.Boosted, 1)
			var be *banded.BatchError
			require.ErrorAs(t, err, &be, "%v in place %t", lay, inPlace)
			require.Len(t, be.Failed, 2, "%v in place %t: %v", lay, inPlace, err)
			assert.Equal(t, 4, be.Failed[0].System)
			assert.ErrorIs(t, be.Failed[0].Err, tridiag.ErrInaccurate)
			assert.NotZero(t, be.Failed[0].Status.Flags&tridiag.Boosted)
			assert.Greater(t, be.Failed[0].Status.BackwardError, 1e-13)
			assert.Equal(t, 9, be.Failed[1].System)
			assert.ErrorIs(t, be.Failed[1].Err, banded.ErrNonFinite)
			if !inPlace {
				require.NoError(t, x.Free())
			}
			require.NoError(t, d.Free())
		}
		require.NoError(t, a.Free())
		require.NoError(t, p.Close())
	}
}
