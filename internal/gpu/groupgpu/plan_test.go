//go:build cuda

package groupgpu

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/gputest"
	"github.com/bandsolve/bandsolve/internal/gpu/tridiaggpu"
	"github.com/bandsolve/bandsolve/tridiag"
)

// dev is GPU 0; all is the group of every GPU of the host, dev first.
var (
	dev *cuda.Device
	all *cuda.Group
)

func TestMain(m *testing.M) {
	tridiaggpu.Register()
	Register()
	dev = gputest.Open("groupgpu")
	n, err := cuda.Count()
	if err != nil {
		gputest.Abort(dev, err)
	}
	devs := []*cuda.Device{dev}
	var closers []io.Closer
	for o := 1; o < n; o++ {
		d, err := cuda.Open(o)
		if err != nil {
			gputest.Abort(dev, err)
		}
		devs = append(devs, d)
	}
	if all, err = cuda.NewGroup(devs...); err != nil {
		gputest.Abort(dev, err)
	}
	fmt.Fprintln(os.Stderr, "group:", all.Name())
	closers = append(closers, all)
	for _, d := range devs[1:] {
		closers = append(closers, d)
	}
	gputest.Run(m, dev, closers...)
}

// needGPUs skips t on a host of fewer than n GPUs.
func needGPUs(t *testing.T, n int) {
	if all.Len() < n {
		t.Skipf("needs %d GPUs, the host has %d", n, all.Len())
	}
}

// batch is a random diagonally dominant batch in a layout, NaN outside
// its rows.
type batch[T tridiag.Float] struct {
	shape      tridiag.Shape
	a, b, c, d []T
}

func newBatch[T tridiag.Float](r *rand.Rand, shape tridiag.Shape) batch[T] {
	shape = shape.Normalize()
	n := shape.Len()
	bt := batch[T]{shape: shape, a: make([]T, n), b: make([]T, n), c: make([]T, n), d: make([]T, n)}
	for k := range n {
		bt.a[k], bt.b[k], bt.c[k], bt.d[k] = T(math.NaN()), T(math.NaN()), T(math.NaN()), T(math.NaN())
	}
	for g := range shape.G {
		for i := range shape.N {
			k := shape.Layout.Index(i, g)
			bt.a[k] = T(r.Float64()*2 - 1)
			bt.b[k] = T(r.Float64()*2 + 3)
			bt.c[k] = T(r.Float64()*2 - 1)
			bt.d[k] = T(r.Float64()*2 - 1)
		}
	}
	return bt
}

// layouts are batch layouts of every kind Split tells apart.
func layouts(n, g int) map[string]tridiag.Layout {
	return map[string]tridiag.Layout{
		"contiguous":  tridiag.Contiguous(n),
		"interleaved": tridiag.Interleaved(g),
		"padded":      tridiag.Strided(2, 2*n+3),
		"columns":     tridiag.Strided(g+5, 1),
		"mixed":       tridiag.Strided(g, n),
	}
}

// sizes have G not divisible by 2, 3 or 4 GPUs, G smaller than the GPU
// count, and N not a power of two.
var sizes = []struct{ n, g int }{{1, 1}, {5, 3}, {100, 7}, {257, 3}, {64, 1}, {1000, 33}, {33, 1001}, {3000, 5}}

// sameRows requires got and want equal bit for bit on every row of shape.
func sameRows[T tridiag.Float](t *testing.T, shape tridiag.Shape, want, got []T, what string) {
	t.Helper()
	for g := range shape.G {
		for i := range shape.N {
			k := shape.Layout.Index(i, g)
			if math.Float64bits(float64(want[k])) != math.Float64bits(float64(got[k])) {
				require.Failf(t, "rows differ", "%s: system %d row %d: %v, want %v", what, g, i, got[k], want[k])
			}
		}
	}
}

// solveHost solves bt with tridiag.NewPlan on device d (constant
// coefficients when constant).
func solveHost[T tridiag.Float](t *testing.T, d tridiag.Device, bt batch[T], opts tridiag.Options, constant bool) ([]T, error) {
	p, err := tridiag.NewPlan[T](d, bt.shape, opts)
	require.NoError(t, err)
	defer p.Close()
	x := make([]T, len(bt.d))
	if constant {
		err = p.SolveConst(context.Background(), -0.4, 2.1, -0.6, bt.d, x)
	} else {
		err = p.Solve(context.Background(), bt.a, bt.b, bt.c, bt.d, x)
	}
	return x, err
}

// perShare solves each share of bt by a single-GPU plan of the share's
// shape on the share's GPU, from the share's rows, and returns the
// solutions in the batch's layout: what the group must give bit for bit.
func perShare[T tridiag.Float](t *testing.T, g *cuda.Group, bt batch[T], opts tridiag.Options, constant bool) []T {
	shares, err := Split(bt.shape, g.Len())
	require.NoError(t, err)
	x := make([]T, len(bt.d))
	for _, sh := range shares {
		m := sh.Shape.Len()
		part := [4][]T{make([]T, m), make([]T, m), make([]T, m), make([]T, m)}
		for i, v := range [][]T{bt.a, bt.b, bt.c, bt.d} {
			Pack(sh, bt.shape, v, part[i])
		}
		p, err := tridiaggpu.NewPlan[T](g.Device(sh.Index), sh.Shape, opts)
		require.NoError(t, err)
		px := make([]T, m)
		if constant {
			err = p.SolveConst(context.Background(), -0.4, 2.1, -0.6, part[3], px)
		} else {
			err = p.Solve(context.Background(), part[0], part[1], part[2], part[3], px)
		}
		require.NoError(t, err)
		require.NoError(t, p.Close())
		Unpack(sh, bt.shape, px, x)
	}
	return x
}

// TestGroupRefused: a group naming one GPU twice, or none, is refused.
func TestGroupRefused(t *testing.T) {
	_, err := cuda.OpenGroup(0, 0)
	require.ErrorIs(t, err, cuda.ErrGroup)
	_, err = cuda.OpenGroup()
	require.ErrorIs(t, err, cuda.ErrGroup)
	_, err = cuda.NewGroup(dev, dev)
	require.ErrorIs(t, err, cuda.ErrGroup)
	_, err = cuda.NewGroup(nil)
	require.ErrorIs(t, err, cuda.ErrGroup)
	_, err = NewPlan[float32](nil, tridiag.Shape{N: 4, G: 4}, tridiag.Options{})
	require.ErrorIs(t, err, tridiag.ErrOptions)
}

// TestGroupOfOne: a group of one GPU solves as that GPU's plan, bit for
// bit, in every layout.
func TestGroupOfOne(t *testing.T) {
	one, err := cuda.NewGroup(dev)
	require.NoError(t, err)
	defer one.Close()
	assert.Contains(t, one.Name(), dev.Name())
	assert.Equal(t, 1, one.Len())
	r := rand.New(rand.NewPCG(1, 2))
	for _, sz := range sizes {
		for lname, l := range layouts(sz.n, sz.g) {
			shape := tridiag.Shape{N: sz.n, G: sz.g, Layout: l}
			if shape.Validate() != nil {
				continue
			}
			bt := newBatch[float64](r, shape)
			what := fmt.Sprintf("N=%d G=%d %s", sz.n, sz.g, lname)
			want, err := solveHost(t, dev, bt, tridiag.Options{}, false)
			require.NoError(t, err, what)
			got, err := solveHost(t, one, bt, tridiag.Options{}, false)
			require.NoError(t, err, what)
			sameRows(t, bt.shape, want, got, what)
		}
	}
}

// TestGroupBitExactF32 and F64: on every GPU of the host, host and
// device solves give each system the bits of the single-GPU plan of its
// share, and those of the single-GPU plan of the whole batch where the
// per-system arithmetic does not depend on the batch (Thomas); general
// and constant coefficients, cyclic too.
func TestGroupBitExactF32(t *testing.T) { testBitExact[float32](t) }
func TestGroupBitExactF64(t *testing.T) { testBitExact[float64](t) }

func testBitExact[T tridiag.Float](t *testing.T) {
	needGPUs(t, 2)
	r := rand.New(rand.NewPCG(3, 4))
	for _, sz := range sizes {
		for lname, l := range layouts(sz.n, sz.g) {
			shape := tridiag.Shape{N: sz.n, G: sz.g, Layout: l}
			if shape.Validate() != nil {
				continue
			}
			bt := newBatch[T](r, shape)
			for _, cyclic := range []bool{false, true} {
				if cyclic && sz.n < 3 {
					continue // a periodic system has three rows at least
				}
				for _, constant := range []bool{false, true} {
					what := fmt.Sprintf("N=%d G=%d %s cyclic=%v const=%v", sz.n, sz.g, lname, cyclic, constant)
					// Thomas: the whole batch's bits.
					opts := tridiag.Options{Algorithm: tridiag.Thomas, Cyclic: cyclic}
					want, err := solveHost(t, dev, bt, opts, constant)
					require.NoError(t, err, what)
					got, err := solveHost(t, all, bt, opts, constant)
					require.NoError(t, err, what)
					sameRows(t, bt.shape, want, got, what+" thomas")
					// Auto: each share's bits, through host and device
					// solves.
					opts.Algorithm = tridiag.Auto
					want = perShare(t, all, bt, opts, constant)
					got, err = solveHost(t, all, bt, opts, constant)
					require.NoError(t, err, what)
					sameRows(t, bt.shape, want, got, what+" auto host")
					got = solveResident(t, all, bt, opts, constant)
					sameRows(t, bt.shape, want, got, what+" auto device")
				}
			}
		}
	}
}

// solveResident solves bt on group g from device buffers: Scatter,
// SolveDevice (in place) or SolveDeviceConst, Gather.
func solveResident[T tridiag.Float](t *testing.T, g *cuda.Group, bt batch[T], opts tridiag.Options, constant bool) []T {
	p, err := NewPlan[T](g, bt.shape, opts)
	require.NoError(t, err)
	defer p.Close()
	var bufs [4][]*cuda.Buffer[T]
	for i, v := range [][]T{bt.a, bt.b, bt.c, bt.d} {
		bufs[i], err = p.Scatter(v)
		require.NoError(t, err)
		defer Free(bufs[i])
	}
	if constant {
		require.NoError(t, p.SolveDeviceConst(context.Background(), -0.4, 2.1, -0.6, bufs[3], bufs[3]))
	} else {
		require.NoError(t, p.SolveDevice(context.Background(), bufs[0], bufs[1], bufs[2], bufs[3], bufs[3]))
	}
	x := make([]T, len(bt.d))
	require.NoError(t, p.Gather(bufs[3], x))
	return x
}

// TestGroupBreakdown: systems that break down in several shares are
// listed once, numbered in the whole batch, their rows NaN; host and
// device solves alike.
func TestGroupBreakdown(t *testing.T) {
	needGPUs(t, 2)
	r := rand.New(rand.NewPCG(5, 6))
	for lname, l := range layouts(50, 37) {
		shape := tridiag.Shape{N: 50, G: 37, Layout: l}
		if shape.Validate() != nil {
			continue
		}
		bt := newBatch[float64](r, shape)
		shares, err := Split(bt.shape, all.Len())
		require.NoError(t, err)
		// The last system of the first share, the first of the second and
		// the batch's last.
		bad := []int{shares[0].G - 1, shares[1].Start, shape.G - 1}
		for _, g := range bad {
			for i := range shape.N {
				k := bt.shape.Layout.Index(i, g)
				bt.a[k], bt.b[k], bt.c[k] = 0, 0, 0
			}
		}
		check := func(x []float64, err error, how string) {
			var be *tridiag.BatchError
			require.ErrorAs(t, err, &be, "%s %s", lname, how)
			assert.Equal(t, bad, be.Systems(), "%s %s", lname, how)
			assert.Equal(t, shape.G, be.G, "%s %s", lname, how)
			assert.True(t, errors.Is(err, tridiag.ErrZeroPivot), "%s %s", lname, how)
			for _, g := range bad {
				assert.True(t, math.IsNaN(x[bt.shape.Layout.Index(0, g)]), "%s %s: system %d", lname, how, g)
			}
			assert.False(t, math.IsNaN(x[bt.shape.Layout.Index(0, 1)]), "%s %s: system 1", lname, how)
		}
		x, err := solveHost(t, all, bt, tridiag.Options{Algorithm: tridiag.Thomas}, false)
		check(x, err, "host")

		p, err := NewPlan[float64](all, bt.shape, tridiag.Options{})
		require.NoError(t, err)
		var bufs [5][]*cuda.Buffer[float64]
		for i, v := range [][]float64{bt.a, bt.b, bt.c, bt.d} {
			bufs[i], err = p.Scatter(v)
			require.NoError(t, err)
		}
		bufs[4], err = p.Alloc()
		require.NoError(t, err)
		err = p.SolveDevice(context.Background(), bufs[0], bufs[1], bufs[2], bufs[3], bufs[4])
		xd := make([]float64, len(bt.d))
		require.NoError(t, p.Gather(bufs[4], xd))
		check(xd, err, "device")
		for _, b := range bufs {
			Free(b)
		}
		require.NoError(t, p.Close())
	}
}

// TestGroupBuffersChecked: SolveDevice wants one buffer a share, each
// on its share's GPU.
func TestGroupBuffersChecked(t *testing.T) {
	needGPUs(t, 2)
	shape := tridiag.Shape{N: 16, G: 8}
	p, err := NewPlan[float32](all, shape, tridiag.Options{})
	require.NoError(t, err)
	defer p.Close()
	bufs, err := p.Alloc()
	require.NoError(t, err)
	defer Free(bufs)
	ctx := context.Background()
	err = p.SolveDevice(ctx, bufs, bufs, bufs, bufs[:1], bufs)
	require.ErrorIs(t, err, tridiag.ErrLength)
	swapped := append([]*cuda.Buffer[float32](nil), bufs...)
	swapped[0], swapped[1] = swapped[1], swapped[0]
	err = p.SolveDeviceConst(ctx, -1, 4, -1, swapped, swapped)
	require.ErrorIs(t, err, tridiag.ErrOptions)
	require.NoError(t, p.Close())
	err = p.SolveDeviceConst(ctx, -1, 4, -1, bufs, bufs)
	require.ErrorIs(t, err, tridiag.ErrClosed)
}

// TestGroupCopyPeer: a buffer copied from one GPU to another and back
// keeps its values.
func TestGroupCopyPeer(t *testing.T) {
	needGPUs(t, 2)
	t.Logf("peer access 0→1: %v, 1→0: %v", all.Peer(0, 1), all.Peer(1, 0))
	host := []float64{1, 2, 3, 4, 5, 6, 7}
	src, err := cuda.Upload(all.Device(0), host)
	require.NoError(t, err)
	defer src.Free()
	mid, err := cuda.Alloc[float64](all.Device(1), len(host))
	require.NoError(t, err)
	defer mid.Free()
	back, err := cuda.Alloc[float64](all.Device(0), len(host))
	require.NoError(t, err)
	defer back.Free()
	require.NoError(t, cuda.CopyPeer(mid, src))
	require.NoError(t, cuda.CopyPeer(back, mid))
	got := make([]float64, len(host))
	require.NoError(t, back.CopyTo(got))
	assert.Equal(t, host, got)
}
