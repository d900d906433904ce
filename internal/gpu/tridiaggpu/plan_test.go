//go:build cuda

package tridiaggpu

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

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/gpuclock"
	"github.com/bandsolve/bandsolve/internal/gpu/gputest"
	"github.com/bandsolve/bandsolve/tridiag"
)

// dev is the GPU of the tests, gdev the same as the kernel plans see it
// with the default switches (newGPU).
var (
	dev  *cuda.Device
	gdev *gpu
)

// clk times the tests' and benchmarks' timed solves behind its gate.
var clk *gpuclock.Clock

func TestMain(m *testing.M) {
	Register()
	dev = gputest.Open("tridiaggpu")
	gdev = newGPU(dev, config{})
	var err error
	if clk, err = gpuclock.New(dev); err != nil {
		gputest.Abort(dev, fmt.Errorf("timing clock: %w", err))
	}
	gputest.Run(m, dev, clk)
}

// batch is a random diagonally dominant batch in a layout.
type batch[T tridiag.Float] struct {
	shape      tridiag.Shape
	a, b, c, d []T
}

// zero plants a breakdown at row i of system sys: a = b = 0, and c = 0
// too when withC (a first row: no coupling to the right either).
func (bt batch[T]) zero(sys, i int, withC bool) {
	k := bt.shape.Layout.Index(i, sys)
	bt.a[k], bt.b[k] = 0, 0
	if withC {
		bt.c[k] = 0
	}
}

func newBatch[T tridiag.Float](r *rand.Rand, shape tridiag.Shape, dom float64) batch[T] {
	shape = shape.Normalize()
	n := shape.Len()
	bt := batch[T]{shape: shape, a: make([]T, n), b: make([]T, n), c: make([]T, n), d: make([]T, n)}
	for k := range n {
		// Rows outside the batch (gaps of strided layouts) get NaN so
		// that a kernel reading them is caught.
		bt.a[k], bt.b[k], bt.c[k], bt.d[k] = T(math.NaN()), T(math.NaN()), T(math.NaN()), T(math.NaN())
	}
	for g := 0; g < shape.G; g++ {
		for i := 0; i < shape.N; i++ {
			k := shape.Layout.Index(i, g)
			bt.a[k] = T(r.Float64()*2 - 1)
			bt.b[k] = T(r.Float64()*2 - 1 + dom)
			bt.c[k] = T(r.Float64()*2 - 1)
			bt.d[k] = T(r.Float64()*2 - 1)
		}
	}
	return bt
}

func layouts(n, g int) map[string]tridiag.Layout {
	return map[string]tridiag.Layout{
		"contiguous":  tridiag.Contiguous(n),
		"interleaved": tridiag.Interleaved(g),
		// Rows two apart, systems padded: gaps hold NaN.
		"strided": tridiag.Strided(2, 2*n+3),
	}
}

type sizeCase struct{ n, g int }

var sizes = []sizeCase{
	{1, 1}, {2, 5}, {3, 1}, {7, 33}, {64, 64}, {100, 17}, {257, 3}, {513, 200},
	{1000, 1}, {1024, 130}, {4096, 16}, {4097, 3}, {65536, 2}, {1 << 20, 1}, {32, 65536},
}

// cpuSolve solves bt on the CPU with the same algorithm and options.
func cpuSolve[T tridiag.Float](t *testing.T, bt batch[T], opts tridiag.Options, constant bool, ca, cb, cc T) ([]T, error) {
	p, err := tridiag.NewPlan[T](tridiag.DefaultCPU(), bt.shape, opts)
	require.NoError(t, err)
	defer p.Close()
	x := make([]T, len(bt.d))
	if constant {
		err = p.SolveConst(context.Background(), ca, cb, cc, bt.d, x)
	} else {
		err = p.Solve(context.Background(), bt.a, bt.b, bt.c, bt.d, x)
	}
	return x, err
}

// compare checks the rows of the batch: GPU against the CPU twin (within
// twinTol relative to the largest |x|) and against the pivoting reference.
func compare[T tridiag.Float](t *testing.T, shape tridiag.Shape, gpu, cpu, ref []T, twinTol, refTol float64, what string) {
	t.Helper()
	var scale, dTwin, dRef float64
	for g := 0; g < shape.G; g++ {
		for i := 0; i < shape.N; i++ {
			k := shape.Layout.Index(i, g)
			scale = math.Max(scale, math.Abs(float64(ref[k])))
			dTwin = math.Max(dTwin, math.Abs(float64(gpu[k]-cpu[k])))
			dRef = math.Max(dRef, math.Abs(float64(gpu[k]-ref[k])))
			if math.IsNaN(float64(gpu[k])) {
				dTwin, dRef = math.Inf(1), math.Inf(1)
			}
		}
	}
	scale = math.Max(scale, 1e-300)
	assert.LessOrEqual(t, dTwin/scale, twinTol, "%s: GPU vs CPU twin", what)
	assert.LessOrEqual(t, dRef/scale, refTol, "%s: GPU vs pivoting reference", what)
}

func eps[T tridiag.Float]() float64 {
	var v T
	if _, ok := any(v).(float32); ok {
		return 0x1p-23
	}
	return 0x1p-52
}

// registered lists the GPU's algorithms for general systems: LDLT,
// which solves symmetric positive definite ones, is tested with them in
// package gpu (TestLDLTSolveOnGPU).
func registered() []tridiag.Algorithm {
	var algs []tridiag.Algorithm
	for a := range algorithms {
		if a != tridiag.LDLT {
			algs = append(algs, a)
		}
	}
	sort.Slice(algs, func(i, j int) bool { return algs[i] < algs[j] })
	return append(algs, tridiag.Auto)
}

func testAlgorithms[T tridiag.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, alg := range registered() {
		solved := 0
		for _, sc := range sizes {
			for lname, l := range layouts(sc.n, sc.g) {
				if sc.n*sc.g > 1<<20 && lname == "strided" {
					continue
				}
				shape := tridiag.Shape{N: sc.n, G: sc.g, Layout: l}
				name := fmt.Sprintf("%s/N=%d/G=%d/%s", alg, sc.n, sc.g, lname)
				opts := tridiag.Options{Algorithm: alg}
				gp, err := NewPlan[T](dev, shape, opts)
				if err != nil && alg != tridiag.Auto {
					t.Logf("%s: not supported: %v", name, err)
					continue
				}
				require.NoError(t, err, name)
				bt := newBatch[T](r, shape, 4)
				x := make([]T, len(bt.d))
				require.NoError(t, gp.Solve(context.Background(), bt.a, bt.b, bt.c, bt.d, x), name)
				opts.Algorithm = gp.Algorithm()
				cpu, err := cpuSolve(t, bt, opts, false, 0, 0, 0)
				require.NoError(t, err, name)
				ref, err := cpuSolve(t, bt, tridiag.Options{Algorithm: tridiag.GTSV}, false, 0, 0, 0)
				require.NoError(t, err, name)
				compare(t, bt.shape, x, cpu, ref, 64*eps[T](), 1e4*eps[T](), name)
				require.NoError(t, gp.Close())
				solved++
			}
		}
		assert.Positive(t, solved, "%s solved no case", alg)
	}
}

func TestAlgorithmsF32(t *testing.T) { testAlgorithms[float32](t) }
func TestAlgorithmsF64(t *testing.T) { testAlgorithms[float64](t) }

// TestPerSystemBitExact: the Thomas and GTSV kernels do the CPU's
// operations in the same order (PTX built with -fmad=false), so results
// are identical; GTSV also on systems with a zero diagonal, which need
// its row interchanges.
func TestPerSystemBitExact(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, alg := range []tridiag.Algorithm{tridiag.Thomas, tridiag.GTSV} {
		for _, dom := range []float64{3, 0} {
			if alg == tridiag.Thomas && dom == 0 {
				continue
			}
			for _, l := range layouts(778, 257) {
				shape := tridiag.Shape{N: 778, G: 257, Layout: l}
				bt := newBatch[float32](r, shape, dom)
				gp, err := NewPlan[float32](dev, shape, tridiag.Options{Algorithm: alg})
				require.NoError(t, err)
				x := make([]float32, len(bt.d))
				require.NoError(t, gp.Solve(context.Background(), bt.a, bt.b, bt.c, bt.d, x))
				cpu, err := cpuSolve(t, bt, tridiag.Options{Algorithm: alg}, false, 0, 0, 0)
				require.NoError(t, err)
				for g := 0; g < shape.G; g++ {
					for i := 0; i < shape.N; i++ {
						k := shape.Layout.Index(i, g)
						require.Equal(t, cpu[k], x[k], "%s dom=%v system %d row %d", alg, dom, g, i)
					}
				}
				require.NoError(t, gp.Close())
			}
		}
	}
}

func testConstAndCyclic[T tridiag.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, alg := range registered() {
		for _, cyclic := range []bool{false, true} {
			for _, sc := range []sizeCase{{3, 1}, {5, 7}, {64, 100}, {1000, 9}, {4096, 4}} {
				for lname, l := range layouts(sc.n, sc.g) {
					shape := tridiag.Shape{N: sc.n, G: sc.g, Layout: l}
					name := fmt.Sprintf("%s/cyclic=%v/N=%d/G=%d/%s", alg, cyclic, sc.n, sc.g, lname)
					opts := tridiag.Options{Algorithm: alg, Cyclic: cyclic}
					gp, err := NewPlan[T](dev, shape, opts)
					if err != nil && alg != tridiag.Auto {
						continue
					}
					require.NoError(t, err, name)
					opts.Algorithm = gp.Algorithm()
					bt := newBatch[T](r, shape, 4)
					// Arrays.
					x := make([]T, len(bt.d))
					require.NoError(t, gp.Solve(context.Background(), bt.a, bt.b, bt.c, bt.d, x), name)
					cpu, err := cpuSolve(t, bt, opts, false, 0, 0, 0)
					require.NoError(t, err, name)
					ref, err := cpuSolve(t, bt, tridiag.Options{Algorithm: tridiag.GTSV, Cyclic: cyclic}, false, 0, 0, 0)
					require.NoError(t, err, name)
					compare(t, bt.shape, x, cpu, ref, 256*eps[T](), 1e4*eps[T](), name)
					// Constant coefficients: a heat-equation row.
					ca, cb, cc := T(-0.4), T(2.1), T(-0.6)
					require.NoError(t, gp.SolveConst(context.Background(), ca, cb, cc, bt.d, x), name+"/const")
					cpu, err = cpuSolve(t, bt, opts, true, ca, cb, cc)
					require.NoError(t, err, name)
					ref, err = cpuSolve(t, bt, tridiag.Options{Algorithm: tridiag.GTSV, Cyclic: cyclic}, true, ca, cb, cc)
					require.NoError(t, err, name)
					compare(t, bt.shape, x, cpu, ref, 256*eps[T](), 1e4*eps[T](), name+"/const")
					require.NoError(t, gp.Close())
				}
			}
		}
	}
}

func TestConstAndCyclicF32(t *testing.T) { testConstAndCyclic[float32](t) }
func TestConstAndCyclicF64(t *testing.T) { testConstAndCyclic[float64](t) }

// TestBreakdownReported: a system with a zero pivot is reported with its
// index and its rows are NaN; the others are solved.
func TestBreakdownReported(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, alg := range registered() {
		if alg == tridiag.Auto {
			continue
		}
		shape := tridiag.Shape{N: 64, G: 10}.Normalize()
		gp, err := NewPlan[float64](dev, shape, tridiag.Options{Algorithm: alg})
		require.NoError(t, err)
		bt := newBatch[float64](r, shape, 4)
		// System 6: b = 0 everywhere, a = c = 1: zero pivots.
		for i := 0; i < 64; i++ {
			k := shape.Layout.Index(i, 6)
			bt.b[k], bt.a[k], bt.c[k] = 0, 0, 0
		}
		x := make([]float64, len(bt.d))
		err = gp.Solve(context.Background(), bt.a, bt.b, bt.c, bt.d, x)
		var be *tridiag.BatchError
		require.ErrorAs(t, err, &be, alg.String())
		require.Len(t, be.Failed, 1, alg.String())
		assert.Equal(t, 6, be.Failed[0].System)
		assert.True(t, errors.Is(err, tridiag.ErrZeroPivot))
		for i := 0; i < 64; i++ {
			require.True(t, math.IsNaN(x[shape.Normalize().Layout.Index(i, 6)]), "%s: row %d of the failed system is not NaN", alg, i)
			require.False(t, math.IsNaN(x[shape.Normalize().Layout.Index(i, 5)]), "%s: row %d of a good system is NaN", alg, i)
		}
		require.NoError(t, gp.Close())
	}
}

// TestDeviceResident: buffers stay on the device across solves.
func TestDeviceResident(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	shape := tridiag.Shape{N: 300, G: 50}
	bt := newBatch[float64](r, shape, 4)
	up := func(v []float64) *cuda.Buffer[float64] {
		b, err := cuda.Upload(dev, v)
		require.NoError(t, err)
		return b
	}
	a, b, c, d := up(bt.a), up(bt.b), up(bt.c), up(bt.d)
	x, err := cuda.Alloc[float64](dev, len(bt.d))
	require.NoError(t, err)
	gp, err := NewPlan[float64](dev, shape, tridiag.Options{})
	require.NoError(t, err)
	ref, err := cpuSolve(t, bt, tridiag.Options{Algorithm: tridiag.GTSV}, false, 0, 0, 0)
	require.NoError(t, err)
	for range 3 {
		require.NoError(t, gp.SolveDevice(context.Background(), a, b, c, d, x))
	}
	// In place: x = d.
	require.NoError(t, gp.SolveDevice(context.Background(), a, b, c, d, d))
	got, gotInPlace := make([]float64, len(bt.d)), make([]float64, len(bt.d))
	require.NoError(t, x.CopyTo(got))
	require.NoError(t, d.CopyTo(gotInPlace))
	assert.InDeltaSlice(t, ref, got, 1e-12)
	assert.InDeltaSlice(t, ref, gotInPlace, 1e-12)
	short, err := cuda.Alloc[float64](dev, 10)
	require.NoError(t, err)
	require.ErrorIs(t, gp.SolveDevice(context.Background(), a, b, c, short, x), tridiag.ErrLength)
	for _, bf := range []*cuda.Buffer[float64]{a, b, c, d, x, short} {
		require.NoError(t, bf.Free())
	}
	require.NoError(t, gp.Close())
}

// TestTridiagPlanOnGPU: the generic tridiag.Plan runs on the CUDA device
// and checks the input as on the CPU.
func TestTridiagPlanOnGPU(t *testing.T) {
	shape := tridiag.Shape{N: 10, G: 2}
	p, err := tridiag.NewPlan[float32](dev, shape, tridiag.Options{})
	require.NoError(t, err)
	defer p.Close()
	bt := newBatch[float32](rand.New(rand.NewPCG(1, 1)), shape, 4)
	bt.b[13] = float32(math.Inf(1))
	err = p.Solve(context.Background(), bt.a, bt.b, bt.c, bt.d, bt.d)
	require.ErrorIs(t, err, tridiag.ErrNonFinite)
	assert.Contains(t, err.Error(), "system 1, row 3")
}

// TestStartWait: a started solve overlaps with host work and gives the
// same result as SolveDevice.
func TestStartWait(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	shape := tridiag.Shape{N: 1000, G: 64}
	bt := newBatch[float64](r, shape, 4)
	var bufs []*cuda.Buffer[float64]
	for _, v := range [][]float64{bt.a, bt.b, bt.c, bt.d, bt.d} {
		b, err := cuda.Upload(dev, v)
		require.NoError(t, err)
		bufs = append(bufs, b)
	}
	gp, err := NewPlan[float64](dev, shape, tridiag.Options{})
	require.NoError(t, err)
	pend, err := gp.Start(context.Background(), bufs[0], bufs[1], bufs[2], bufs[3], bufs[4])
	require.NoError(t, err)
	ref, err := cpuSolve(t, bt, tridiag.Options{Algorithm: tridiag.GTSV}, false, 0, 0, 0) // host work meanwhile
	require.NoError(t, err)
	require.NoError(t, pend.Wait())
	require.NoError(t, pend.Wait())
	got := make([]float64, len(bt.d))
	require.NoError(t, bufs[4].CopyTo(got))
	assert.InDeltaSlice(t, ref, got, 1e-12)
	require.NoError(t, gp.Close())
	for _, b := range bufs {
		require.NoError(t, b.Free())
	}
}

// TestMulDevice: y = T·x on the GPU against a host product, every layout,
// cyclic or not, arrays and constants; and T·(T⁻¹d) = d.
func TestMulDevice(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, cyclic := range []bool{false, true} {
		for _, sc := range []sizeCase{{1, 3}, {2, 5}, {3, 1}, {100, 7}, {1000, 33}} {
			for lname, l := range layouts(sc.n, sc.g) {
				shape := tridiag.Shape{N: sc.n, G: sc.g, Layout: l}.Normalize()
				name := fmt.Sprintf("cyclic=%v/N=%d/G=%d/%s", cyclic, sc.n, sc.g, lname)
				bt := newBatch[float64](r, shape, 4)
				gp, err := NewPlan[float64](dev, shape, tridiag.Options{Cyclic: cyclic, Algorithm: tridiag.GTSV})
				require.NoError(t, err, name)
				up := func(v []float64) *cuda.Buffer[float64] {
					b, err := cuda.Upload(dev, v)
					require.NoError(t, err)
					return b
				}
				a, b, c, x := up(bt.a), up(bt.b), up(bt.c), up(bt.d)
				y, err := cuda.Alloc[float64](dev, len(bt.d))
				require.NoError(t, err)
				got := make([]float64, len(bt.d))
				for _, constant := range []bool{false, true} {
					if constant {
						require.NoError(t, gp.MulDeviceConst(context.Background(), -1, 3, 0.5, x, y), name)
					} else {
						require.NoError(t, gp.MulDevice(context.Background(), a, b, c, x, y), name)
					}
					require.NoError(t, y.CopyTo(got))
					for g := 0; g < sc.g; g++ {
						for i := 0; i < sc.n; i++ {
							k := shape.Layout.Index(i, g)
							ai, bi, ci := bt.a[k], bt.b[k], bt.c[k]
							if constant {
								ai, bi, ci = -1, 3, 0.5
							}
							want := bi * bt.d[k]
							if i > 0 {
								want += ai * bt.d[shape.Layout.Index(i-1, g)]
							} else if cyclic {
								want += ai * bt.d[shape.Layout.Index(sc.n-1, g)]
							}
							if i < sc.n-1 {
								want += ci * bt.d[shape.Layout.Index(i+1, g)]
							} else if cyclic {
								want += ci * bt.d[shape.Layout.Index(0, g)]
							}
							require.InDelta(t, want, got[k], 1e-12, "%s const=%v g=%d i=%d", name, constant, g, i)
						}
					}
				}
				// Solve then multiply: back to d.
				require.NoError(t, gp.SolveDevice(context.Background(), a, b, c, x, x), name)
				require.NoError(t, gp.MulDevice(context.Background(), a, b, c, x, y), name)
				require.NoError(t, y.CopyTo(got))
				for g := 0; g < sc.g; g++ {
					for i := 0; i < sc.n; i++ {
						k := shape.Layout.Index(i, g)
						require.InDelta(t, bt.d[k], got[k], 1e-11, "%s T·T⁻¹d g=%d i=%d", name, g, i)
					}
				}
				require.ErrorIs(t, gp.MulDevice(context.Background(), a, b, c, x, x), tridiag.ErrLength)
				for _, bf := range []*cuda.Buffer[float64]{a, b, c, x, y} {
					require.NoError(t, bf.Free())
				}
				require.NoError(t, gp.Close())
			}
		}
	}
}

// TestHostSolveKeepsGaps: a host-slice solve of a layout with gaps between
// its rows writes the rows of x and keeps x's other elements, real and
// complex, array and constant coefficients.
func TestHostSolveKeepsGaps(t *testing.T) {
	const n, g, sentinel = 37, 5, 7
	shape := tridiag.Shape{N: n, G: g, Layout: tridiag.Strided(g+3, 1)}
	rows := map[int]bool{}
	for s := 0; s < g; s++ {
		for i := 0; i < n; i++ {
			rows[shape.Layout.Index(i, s)] = true
		}
	}
	check := func(x []float64, what string) {
		for k, v := range x {
			if !rows[k] {
				require.Equal(t, float64(sentinel), v, "%s: element %d between rows", what, k)
			}
		}
	}
	m := shape.Len()
	a, b, c, d := make([]float64, m), make([]float64, m), make([]float64, m), make([]float64, m)
	for k := range b {
		a[k], b[k], c[k], d[k] = -1, 4, -1, float64(k%7)
	}
	p, err := tridiag.NewPlan[float64](dev, shape, tridiag.Options{})
	require.NoError(t, err)
	defer p.Close()
	for _, constant := range []bool{false, true} {
		x := make([]float64, m)
		for k := range x {
			x[k] = sentinel
		}
		if constant {
			require.NoError(t, p.SolveConst(context.Background(), -1, 4, -1, d, x))
		} else {
			require.NoError(t, p.Solve(context.Background(), a, b, c, d, x))
		}
		check(x, fmt.Sprintf("real, constant %t", constant))
	}
	pc, err := tridiag.NewPlan[complex128](dev, shape, tridiag.Options{})
	require.NoError(t, err)
	defer pc.Close()
	ca, cb, cc, cd := make([]complex128, m), make([]complex128, m), make([]complex128, m), make([]complex128, m)
	for k := range cb {
		ca[k], cb[k], cc[k], cd[k] = -1, 4+1i, -1, complex(float64(k%5), 1)
	}
	x := make([]complex128, m)
	for k := range x {
		x[k] = sentinel
	}
	require.NoError(t, pc.Solve(context.Background(), ca, cb, cc, cd, x))
	for k, v := range x {
		if !rows[k] {
			require.Equal(t, complex128(sentinel), v, "complex: element %d between rows", k)
		}
	}
}
