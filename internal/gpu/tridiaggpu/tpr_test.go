//go:build cuda

package tridiaggpu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tridiag/tpr"
	"github.com/bandsolve/bandsolve/tridiag/wangmou"
	"github.com/bandsolve/bandsolve/tuning"
)

// The TPR and Wang–Mou kernels do the CPU twins' operations in the same
// order (PTX built with -fmad=false), so every stage's output, the
// solution and the reported breakdown rows agree bit for bit with
// tpr.Stage1/Stage2/Stage3, tpr.Solve and wangmou.Solve, on every path
// (slices in shared memory or in the workspace, the reduced system in one
// block or after global levels, Wang–Mou in one launch or in chunks).

// tprRun holds the device buffers of one batch for running a kernel plan's
// launches one by one.
type tprRun[T tridiag.Float] struct {
	t            *testing.T
	spec         tridiag.Spec
	a, b, c, d   *cuda.Buffer[T]
	x            *cuda.Buffer[T]
	work, status cu.DevicePtr
	stream       cu.Stream
	la           launchArgs
}

func newTPRRun[T tridiag.Float](t *testing.T, spec tridiag.Spec, bt batch[T], constant bool, ca, cb, cc T, workBytes int64) *tprRun[T] {
	t.Helper()
	r := &tprRun[T]{t: t, spec: spec}
	var err error
	up := func(v []T) *cuda.Buffer[T] {
		b, err := cuda.Upload(dev, v)
		require.NoError(t, err)
		return b
	}
	r.a, r.b, r.c, r.d = up(bt.a), up(bt.b), up(bt.c), up(bt.d)
	r.x = up(bt.d) // rows outside the batch keep their NaN
	r.work, err = dev.AllocBytes(max(workBytes, 8))
	require.NoError(t, err)
	r.status, err = dev.AllocBytes(4 * int64(spec.G+1))
	require.NoError(t, err)
	require.NoError(t, dev.Enqueue(func() error {
		var e error
		if r.stream, e = cu.MakeStream(cu.DefaultStream); e != nil {
			return e
		}
		return cu.MemsetD32(r.status, 0, int64(spec.G+1))
	}))
	r.la = launchArgs{spec: spec, f64: elemSize[T]() == 8, a: r.a.Ptr(), b: r.b.Ptr(), c: r.c.Ptr(), d: r.d.Ptr(), x: r.x.Ptr(),
		work: r.work, status: r.status}
	if constant {
		r.la.a, r.la.b, r.la.c = 0, 0, 0
		r.la.ca, r.la.cb, r.la.cc, r.la.constant = float64(ca), float64(cb), float64(cc), true
	}
	return r
}

// exec runs f on the device thread and waits for the stream.
func (r *tprRun[T]) exec(f func(s cu.Stream, la *launchArgs) error) {
	r.t.Helper()
	require.NoError(r.t, dev.Enqueue(func() error {
		if err := f(r.stream, &r.la); err != nil {
			return err
		}
		return r.stream.Synchronize()
	}))
}

func tprRead[E any](t *testing.T, p cu.DevicePtr, n int) []E {
	t.Helper()
	out := make([]E, n)
	if n > 0 {
		var e E
		require.NoError(t, dev.Enqueue(func() error {
			return cu.MemcpyDtoH(unsafe.Pointer(&out[0]), p, int64(n)*int64(unsafe.Sizeof(e)))
		}))
	}
	return out
}

func (r *tprRun[T]) result() ([]T, map[int]int) {
	x := tprRead[T](r.t, r.x.Ptr(), r.x.Len())
	st := tprRead[int32](r.t, r.status, r.spec.G+1)
	failed := map[int]int{}
	for g, code := range st[:r.spec.G] {
		if code != 0 {
			failed[g] = int(code) - 1
		}
	}
	assert.Equal(r.t, len(failed) > 0, st[r.spec.G] != 0, "status flag")
	return x, failed
}

func (r *tprRun[T]) close() {
	for _, b := range []*cuda.Buffer[T]{r.a, r.b, r.c, r.d, r.x} {
		_ = b.Free()
	}
	_ = dev.Enqueue(func() error {
		_ = cu.MemFree(r.work)
		_ = cu.MemFree(r.status)
		return r.stream.Destroy()
	})
}

// tprRunPlan runs kp on the batch and returns x and the failed rows.
func tprRunPlan[T tridiag.Float](t *testing.T, kp kernelPlan, spec tridiag.Spec, bt batch[T], constant bool, ca, cb, cc T) ([]T, map[int]int) {
	t.Helper()
	r := newTPRRun(t, spec, bt, constant, ca, cb, cc, kp.workBytes())
	defer r.close()
	r.exec(func(s cu.Stream, la *launchArgs) error { return kp.launch(gdev, s, la) })
	return r.result()
}

// tprSystem gathers system g of the batch.
func tprSystem[T tridiag.Float](bt batch[T], g int, constant bool, ca, cb, cc T) (a, b, c, d []T) {
	n := bt.shape.N
	a, b, c, d = make([]T, n), make([]T, n), make([]T, n), make([]T, n)
	for i := range n {
		k := bt.shape.Layout.Index(i, g)
		if constant {
			a[i], b[i], c[i] = ca, cb, cc
		} else {
			a[i], b[i], c[i] = bt.a[k], bt.b[k], bt.c[k]
		}
		d[i] = bt.d[k]
	}
	return a, b, c, d
}

// tprCPU solves every system with solve, NaN-filling failed ones; it
// returns x in the batch layout and the failed rows.
func tprCPU[T tridiag.Float](bt batch[T], constant bool, ca, cb, cc T, solve func(a, b, c, d, x []T) error) ([]T, map[int]int) {
	x := append([]T(nil), bt.d...)
	failed := map[int]int{}
	for g := 0; g < bt.shape.G; g++ {
		a, b, c, d := tprSystem(bt, g, constant, ca, cb, cc)
		xs := make([]T, len(b))
		if err := solve(a, b, c, d, xs); err != nil {
			var pe *tridiag.PivotError
			row := -1
			if errors.As(err, &pe) {
				row = pe.Row
			}
			failed[g] = row
			for i := range xs {
				xs[i] = T(math.NaN())
			}
		}
		for i, v := range xs {
			x[bt.shape.Layout.Index(i, g)] = v
		}
	}
	return x, failed
}

func tprSame[T tridiag.Float](x, y T) bool {
	a, b := float64(x), float64(y)
	return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
}

// tprDiff counts bit differences, reporting the first few.
type tprDiff struct {
	t    *testing.T
	what string
	n    int
}

func (d *tprDiff) check(ok bool, format string, args ...any) {
	d.t.Helper()
	if ok {
		return
	}
	if d.n < 5 {
		d.t.Errorf("%s: "+format, append([]any{d.what}, args...)...)
	}
	d.n++
}

func (d *tprDiff) done() bool {
	d.t.Helper()
	if d.n > 0 {
		d.t.Errorf("%s: %d values differ", d.what, d.n)
	}
	return d.n == 0
}

func tprPlane[T tridiag.Float](e tpr.Eqs[T], p int) []T {
	return [][]T{e.A, e.B, e.C, e.D}[p]
}

// checkTPRStages runs the three stages one by one and compares each
// output with the CPU twin's stage, bit for bit.
func checkTPRStages[T tridiag.Float](t *testing.T, bt batch[T], s int, o tuning.TPROptions, constant bool, what string) bool {
	t.Helper()
	ca, cb, cc := T(-0.4), T(2.1), T(-0.6)
	spec := tridiag.Spec{Shape: bt.shape, Options: tridiag.Options{Algorithm: tridiag.TPR, SliceSize: s}}
	p, err := newTPRPlanWith(gdev, spec, elemSize[T]() == 8, o)
	require.NoError(t, err, what)
	cfg := p.cfg
	what = fmt.Sprintf("%s (S=%d M=%d glob1=%v glob3=%v t0=%d)", what, cfg.S, cfg.M, cfg.Stage1.Global, cfg.Stage3.Global, cfg.Stage2.GlobalLevels)
	r := newTPRRun(t, spec, bt, constant, ca, cb, cc, p.workBytes())
	defer r.close()
	b := p.bufs(r.work)
	G, M, MP, n := cfg.G, cfg.M, cfg.MP, cfg.N

	r.exec(func(s cu.Stream, la *launchArgs) error {
		if err := p.clear(s, b); err != nil {
			return err
		}
		return p.stage1(gdev, s, la, b)
	})
	bnd := tprRead[T](t, b.bnd, int(8*p.w.bndPlane))
	eqg := tprRead[T](t, b.eq, int(4*p.w.eqPlane))
	r.exec(func(s cu.Stream, la *launchArgs) error { return p.stage2(gdev, s, la, b) })
	xb := tprRead[T](t, b.xb, G*MP)
	r.exec(func(s cu.Stream, la *launchArgs) error { return p.stage3(gdev, s, la, b) })
	x, failed := r.result()
	keys := tprRead[uint64](t, b.keys, G)
	assert.Empty(t, failed, what)

	lay, err := tpr.NewLayout(n, cfg.S)
	require.NoError(t, err)
	d1 := &tprDiff{t: t, what: what + " stage 1"}
	d2 := &tprDiff{t: t, what: what + " stage 2"}
	d3 := &tprDiff{t: t, what: what + " stage 3"}
	for g := 0; g < G; g++ {
		assert.Zero(t, keys[g], "%s: key of system %d", what, g)
		a, bb, c, d := tprSystem(bt, g, constant, ca, cb, cc)
		eq, bc := tpr.NewEqs[T](n), tpr.NewEqs[T](2*M)
		xbc, xc := make([]T, M), make([]T, n)
		require.NoError(t, tpr.Stage1(lay, a, bb, c, d, eq, bc, nil))
		require.NoError(t, tpr.Stage2(lay, bc, xbc, nil))
		require.NoError(t, tpr.Stage3(lay, a, bb, c, d, eq, xbc, xc, nil))
		bp := int(p.w.bndPlane)
		for j := 0; j < M; j++ {
			for pl := 0; pl < 4; pl++ {
				gf, gl := bnd[pl*bp+g*M+j], bnd[(4+pl)*bp+g*M+j]
				cf, cl := tprPlane(bc, pl)[2*j], tprPlane(bc, pl)[2*j+1]
				d1.check(tprSame(gf, cf), "system %d slice %d first' coefficient %d: GPU %v CPU %v", g, j, pl, gf, cf)
				d1.check(tprSame(gl, cl), "system %d slice %d last coefficient %d: GPU %v CPU %v", g, j, pl, gl, cl)
			}
		}
		for i := 1; i < n; i++ {
			if (i%cfg.S)%2 == 0 {
				continue
			}
			at := int(p.w.eqPlane)
			idx := g*int(p.w.eqPitch) + i>>p.w.eqShift
			for pl := 0; pl < 4; pl++ {
				gv, cv := eqg[pl*at+idx], tprPlane(eq, pl)[i]
				d1.check(tprSame(gv, cv), "system %d row %d eq coefficient %d: GPU %v CPU %v", g, i, pl, gv, cv)
			}
		}
		for j := 0; j < M; j++ {
			d2.check(tprSame(xb[g*MP+j], xbc[j]), "system %d X_%d: GPU %v CPU %v", g, j, xb[g*MP+j], xbc[j])
		}
		for i := 0; i < n; i++ {
			gv := x[bt.shape.Layout.Index(i, g)]
			d3.check(tprSame(gv, xc[i]), "system %d x_%d: GPU %v CPU %v", g, i, gv, xc[i])
		}
	}
	return d1.done() && d2.done() && d3.done()
}

func TestTPRStagesBitExact(t *testing.T) {
	t.Run("float32", testTPRStages[float32])
	t.Run("float64", testTPRStages[float64])
}

func testTPRStages[T tridiag.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	names := []string{"contiguous", "interleaved", "strided"}
	forced := tuning.TPROptions{GlobalStage1: true, GlobalStage3: true, Stage2GlobalLevels: 2}
	k := 0
	for _, n := range []int{1, 2, 3, 100, 1000, 4097, 65536, 1 << 20} {
		for _, s := range []int{2, 8, 128, 2048, 0} {
			for _, g := range []int{1, 7, 64} {
				// Larger batches are covered by TestTPRSolveBitExact and
				// the generic tests; here the host twin's stages are slow.
				if n*g > 1<<21 {
					continue
				}
				k++
				lname := names[k%3]
				if n*g > 1<<20 && lname == "strided" {
					lname = "contiguous"
				}
				shape := tridiag.Shape{N: n, G: g, Layout: layouts(n, g)[lname]}.Normalize()
				bt := newBatch[T](r, shape, 4)
				name := fmt.Sprintf("N=%d/S=%d/G=%d/%s", n, s, g, lname)
				if !checkTPRStages(t, bt, s, tuning.TPROptions{}, false, name) {
					return
				}
				if g == 7 || n == 1<<20 {
					if !checkTPRStages(t, bt, s, forced, false, name+"/forced") {
						return
					}
					if !checkTPRStages(t, bt, s, tuning.TPROptions{}, true, name+"/const") {
						return
					}
				}
			}
		}
	}
}

// TestTPRLargePaths: the default slices of N = 2^24 (S = 8192: global
// slices in FP64 on H100/H200) and slices too large for shared memory in
// stage 3 as well.
func TestTPRLargePaths(t *testing.T) {
	t.Run("float32", func(t *testing.T) {
		testTPRLarge[float32](t, []int{0, 1 << 14})
	})
	t.Run("float64", func(t *testing.T) {
		testTPRLarge[float64](t, []int{0, 1 << 15})
	})
}

func testTPRLarge[T tridiag.Float](t *testing.T, slices []int) {
	r := rand.New(rand.NewPCG(23, 24))
	shape := tridiag.Shape{N: 1 << 24, G: 1}.Normalize()
	bt := newBatch[T](r, shape, 4)
	for _, s := range slices {
		cfg, err := tuning.TPRLaunchFor(dev.Properties(), shape.N, 1, s, int(elemSize[T]()), tuning.TPROptions{})
		require.NoError(t, err)
		t.Logf("N=2^24 S=%d: stage 1 global %v, stage 3 global %v, stage 2 global levels %d",
			cfg.S, cfg.Stage1.Global, cfg.Stage3.Global, cfg.Stage2.GlobalLevels)
		if !checkTPRStages(t, bt, s, tuning.TPROptions{}, false, fmt.Sprintf("N=2^24/S=%d", s)) {
			return
		}
	}
}

// TestTPRSolveBitExact: plans of tridiag.TPR (through Plan.Solve and
// SolveConst, in place too) against tpr.Solve.
func TestTPRSolveBitExact(t *testing.T) {
	t.Run("float32", testTPRSolve[float32])
	t.Run("float64", testTPRSolve[float64])
}

func testTPRSolve[T tridiag.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	for _, n := range []int{1, 2, 3, 5, 17, 100, 1000, 4097, 65536} {
		for _, s := range []int{0, 2, 8, 128, 2048} {
			sz := s
			if sz == 0 {
				sz = tpr.DefaultSliceSize(n)
			}
			ws := tpr.NewWorkspace[T](n, sz)
			solve := func(a, b, c, d, x []T) error { return tpr.Solve(a, b, c, d, x, sz, ws) }
			for _, g := range []int{1, 7, 64} {
				for lname, l := range layouts(n, g) {
					if n*g > 1<<20 && lname == "strided" {
						continue
					}
					shape := tridiag.Shape{N: n, G: g, Layout: l}.Normalize()
					name := fmt.Sprintf("N=%d/S=%d/G=%d/%s", n, s, g, lname)
					gp, err := NewPlan[T](dev, shape, tridiag.Options{Algorithm: tridiag.TPR, SliceSize: s})
					require.NoError(t, err, name)
					bt := newBatch[T](r, shape, 4)
					x := append([]T(nil), bt.d...)
					require.NoError(t, gp.Solve(context.Background(), bt.a, bt.b, bt.c, bt.d, x), name)
					want, _ := tprCPU(bt, false, 0, 0, 0, solve)
					ok := tprBatchSame(t, shape, x, want, name)
					if g == 7 {
						ca, cb, cc := T(-0.4), T(2.1), T(-0.6)
						require.NoError(t, gp.SolveConst(context.Background(), ca, cb, cc, bt.d, x), name)
						want, _ = tprCPU(bt, true, ca, cb, cc, solve)
						ok = ok && tprBatchSame(t, shape, x, want, name+"/const")
						// In place: x = d on the device.
						a, b, c, d := tprUpload(t, bt.a), tprUpload(t, bt.b), tprUpload(t, bt.c), tprUpload(t, bt.d)
						require.NoError(t, gp.SolveDevice(context.Background(), a, b, c, d, d), name)
						require.NoError(t, d.CopyTo(x))
						want, _ = tprCPU(bt, false, 0, 0, 0, solve)
						ok = ok && tprBatchSame(t, shape, x, want, name+"/in-place")
						for _, bf := range []*cuda.Buffer[T]{a, b, c, d} {
							require.NoError(t, bf.Free())
						}
					}
					require.NoError(t, gp.Close())
					if !ok {
						return
					}
				}
			}
		}
	}
}

func tprUpload[T tridiag.Float](t *testing.T, v []T) *cuda.Buffer[T] {
	b, err := cuda.Upload(dev, v)
	require.NoError(t, err)
	return b
}

func tprBatchSame[T tridiag.Float](t *testing.T, shape tridiag.Shape, gpu, cpu []T, what string) bool {
	t.Helper()
	d := &tprDiff{t: t, what: what}
	for g := 0; g < shape.G; g++ {
		for i := 0; i < shape.N; i++ {
			k := shape.Layout.Index(i, g)
			d.check(tprSame(gpu[k], cpu[k]), "system %d row %d: GPU %v CPU %v", g, i, gpu[k], cpu[k])
		}
	}
	return d.done()
}

// tprBreakdownBatch: diagonally dominant systems, with, in system 1, b = 0
// everywhere; 2–4: a zero, NaN or −Inf on the diagonal at rows 0, n/2 and
// n−1; 5: two zeros; 6: a = b = c = 0 (as cuda_test's breakdown test).
func tprBreakdownBatch(r *rand.Rand, n int) batch[float64] {
	g := 12
	shape := tridiag.Shape{N: n, G: g, Layout: tridiag.Interleaved(g)}.Normalize()
	bt := newBatch[float64](r, shape, 4)
	set := func(sys, row int, val float64) {
		if row < n {
			bt.b[shape.Layout.Index(row, sys)] = val
		}
	}
	for i := 0; i < n; i++ {
		set(1, i, 0)
		k := shape.Layout.Index(i, 6)
		bt.a[k], bt.b[k], bt.c[k] = 0, 0, 0
	}
	set(2, 0, 0)
	set(3, n/2, math.NaN())
	set(4, n-1, math.Inf(-1))
	set(5, n-1, 0)
	set(5, n/3, 0)
	return bt
}

// tprSmallIntBatch: entries from {−1, 0, 1, 2} (b from {−1, 1, 2}), so that
// exact cancellations give zero divisors at every stage of the algorithms.
func tprSmallIntBatch(r *rand.Rand, n, g int) batch[float64] {
	shape := tridiag.Shape{N: n, G: g}.Normalize()
	bt := newBatch[float64](r, shape, 0)
	pick := func(v []float64) float64 { return v[r.IntN(len(v))] }
	for k := range bt.b {
		bt.a[k] = pick([]float64{-1, 0, 1, 2})
		bt.b[k] = pick([]float64{-1, 1, 2})
		bt.c[k] = pick([]float64{-1, 0, 1, 2})
		bt.d[k] = pick([]float64{-1, 0, 1, 2})
	}
	return bt
}

// TestTPRBreakdownRows: failed systems are reported at the CPU twin's row,
// NaN-filled, and the others solved, on every path.
func TestTPRBreakdownRows(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 28))
	variants := []tuning.TPROptions{{}, {GlobalStage1: true, GlobalStage3: true, Stage2GlobalLevels: 2}}
	check := func(bt batch[float64], s int, o tuning.TPROptions, name string) bool {
		spec := tridiag.Spec{Shape: bt.shape, Options: tridiag.Options{Algorithm: tridiag.TPR, SliceSize: s}}
		p, err := newTPRPlanWith(gdev, spec, true, o)
		require.NoError(t, err)
		x, gf := tprRunPlan[float64](t, p, spec, bt, false, 0, 0, 0)
		want, cf := tprCPU(bt, false, 0, 0, 0, func(a, b, c, d, x []float64) error { return tpr.Solve(a, b, c, d, x, p.cfg.S, nil) })
		return assert.Equal(t, cf, gf, name) && tprBatchSame(t, bt.shape, x, want, name)
	}
	for vi, o := range variants {
		for _, n := range []int{1, 2, 3, 16, 100, 1000, 3000} {
			for _, s := range []int{2, 8, 128} {
				bt := tprBreakdownBatch(r, n)
				if !check(bt, s, o, fmt.Sprintf("designed/variant %d/N=%d/S=%d", vi, n, s)) {
					return
				}
			}
		}
		for _, n := range []int{4, 5, 16, 33, 100, 257} {
			for _, s := range []int{2, 4, 8, 32} {
				bt := tprSmallIntBatch(r, n, 300)
				if !check(bt, s, o, fmt.Sprintf("small integers/variant %d/N=%d/S=%d", vi, n, s)) {
					return
				}
			}
		}
	}
}

// TestWMBitExact: the one-launch and the chunked paths against
// wangmou.Solve, with breakdowns.
func TestWMBitExact(t *testing.T) {
	t.Run("float32", testWM[float32])
	t.Run("float64", testWM[float64])
}

func testWM[T tridiag.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(29, 30))
	ws := wangmou.NewWorkspace[T](0)
	solve := func(a, b, c, d, x []T) error { return wangmou.Solve(a, b, c, d, x, ws) }
	maxSingle := wmMaxSingle(t, int(elemSize[T]()))
	ns := []int{1, 2, 3, 5, 7, 8, 9, 100, 1000, 2047, 2048, 2049, 4096, 4097, maxSingle, maxSingle + 1, 65536}
	for _, n := range ns {
		for _, g := range []int{1, 7, 33} {
			for lname, l := range layouts(n, g) {
				shape := tridiag.Shape{N: n, G: g, Layout: l}.Normalize()
				spec := tridiag.Spec{Shape: shape, Options: tridiag.Options{Algorithm: tridiag.WangMou}}
				bt := newBatch[T](r, shape, 4)
				want, cf := tprCPU(bt, false, 0, 0, 0, solve)
				require.Empty(t, cf)
				for _, chunk := range []int{0, 4, 64} {
					if chunk > 0 && (g != 7 || n > 5000) {
						continue
					}
					name := fmt.Sprintf("N=%d/G=%d/%s/chunk≤%d", n, g, lname, chunk)
					p, err := newWMPlanChunk(gdev, spec, elemSize[T]() == 8, chunk)
					require.NoError(t, err, name)
					x, gf := tprRunPlan(t, p, spec, bt, false, 0, 0, 0)
					assert.Empty(t, gf, name)
					if !tprBatchSame(t, shape, x, want, fmt.Sprintf("%s (single=%v)", name, p.cfg.Single)) {
						return
					}
				}
				if g == 7 {
					ca, cb, cc := T(-0.4), T(2.1), T(-0.6)
					p, err := newWMPlanChunk(gdev, spec, elemSize[T]() == 8, 0)
					require.NoError(t, err)
					x, gf := tprRunPlan(t, p, spec, bt, true, ca, cb, cc)
					assert.Empty(t, gf)
					wantc, _ := tprCPU(bt, true, ca, cb, cc, solve)
					if !tprBatchSame(t, shape, x, wantc, fmt.Sprintf("N=%d/G=%d/%s/const", n, g, lname)) {
						return
					}
				}
			}
		}
	}
	// A large system: the chunked path with 2^20/chunk-size global steps.
	shape := tridiag.Shape{N: 1<<20 + 3, G: 2}.Normalize()
	bt := newBatch[T](r, shape, 4)
	gp, err := NewPlan[T](dev, shape, tridiag.Options{Algorithm: tridiag.WangMou})
	require.NoError(t, err)
	defer gp.Close()
	x := make([]T, len(bt.d))
	require.NoError(t, gp.Solve(context.Background(), bt.a, bt.b, bt.c, bt.d, x))
	want, _ := tprCPU(bt, false, 0, 0, 0, solve)
	tprBatchSame(t, shape, x, want, "N=2^20+3")
}

func TestWMBreakdownRows(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	solve := func(a, b, c, d, x []float64) error { return wangmou.Solve(a, b, c, d, x, nil) }
	check := func(bt batch[float64], chunk int, name string) bool {
		spec := tridiag.Spec{Shape: bt.shape, Options: tridiag.Options{Algorithm: tridiag.WangMou}}
		p, err := newWMPlanChunk(gdev, spec, true, chunk)
		require.NoError(t, err)
		x, gf := tprRunPlan[float64](t, p, spec, bt, false, 0, 0, 0)
		want, cf := tprCPU(bt, false, 0, 0, 0, solve)
		return assert.Equal(t, cf, gf, name) && tprBatchSame(t, bt.shape, x, want, name)
	}
	for _, chunk := range []int{0, 2, 8} {
		for _, n := range []int{1, 2, 3, 16, 100, 1000, 3000} {
			if !check(tprBreakdownBatch(r, n), chunk, fmt.Sprintf("designed/N=%d/chunk≤%d", n, chunk)) {
				return
			}
		}
		for _, n := range []int{4, 5, 16, 33, 100} {
			if !check(tprSmallIntBatch(r, n, 300), chunk, fmt.Sprintf("small integers/N=%d/chunk≤%d", n, chunk)) {
				return
			}
		}
	}
}

// TestTPRWMLimits: N beyond tuning.TPRMaxN is a shape error; Wang–Mou's
// one-launch limit is reported by tuning and larger N still solve.
func TestTPRWMLimits(t *testing.T) {
	for _, alg := range []tridiag.Algorithm{tridiag.TPR, tridiag.WangMou} {
		_, err := NewPlan[float32](dev, tridiag.Shape{N: tuning.TPRMaxN + 1, G: 1}, tridiag.Options{Algorithm: alg})
		require.ErrorIs(t, err, tridiag.ErrShape, alg.String())
		assert.ErrorIs(t, err, tuning.ErrTPRShape)
	}
	_, err := NewPlan[float32](dev, tridiag.Shape{N: 100, G: 1}, tridiag.Options{Algorithm: tridiag.TPR, SliceSize: 6})
	require.ErrorIs(t, err, tridiag.ErrOptions)
	t.Logf("Wang–Mou in one launch on %s: N ≤ %d (FP32), %d (FP64)", dev.Name(),
		wmMaxSingle(t, 4), wmMaxSingle(t, 8))
}

// wmMaxSingle is the largest N that Wang–Mou solves in one launch on dev
// for elements of elem bytes.
func wmMaxSingle(t *testing.T, elem int) int {
	l, err := tuning.WMLaunchFor(dev.Properties(), 1, 1, elem, 0)
	require.NoError(t, err)
	return l.MaxSingleN
}
