//go:build cuda

package tridiaggpu

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/tridiag"
)

// TestMulAddDevice: y = α·T·x + β·y against the host, for both precisions,
// strided layouts (gaps must keep their NaN), β = 0 with NaN in y (y not
// read), and T = I as an axpy.
func TestMulAddDevice(t *testing.T) {
	testMulAdd[float32](t, 1e-5)
	testMulAdd[float64](t, 1e-13)
}

func testMulAdd[T tridiag.Float](t *testing.T, tol float64) {
	r := rand.New(rand.NewPCG(21, 22))
	ctx := context.Background()
	for _, sc := range []sizeCase{{1, 1}, {5, 3}, {100, 7}, {1001, 3}} {
		for lname, l := range layouts(sc.n, sc.g) {
			shape := tridiag.Shape{N: sc.n, G: sc.g, Layout: l}.Normalize()
			bt := newBatch[T](r, shape, 4)
			p, err := NewPlan[T](dev, shape, tridiag.Options{Algorithm: tridiag.GTSV})
			require.NoError(t, err)
			x, err := cuda.Upload(dev, bt.d)
			require.NoError(t, err)
			a, err := cuda.Upload(dev, bt.a)
			require.NoError(t, err)
			y0 := make([]T, len(bt.d))
			for k := range y0 {
				y0[k] = T(math.NaN())
			}
			for g := 0; g < sc.g; g++ {
				for i := 0; i < sc.n; i++ {
					y0[shape.Layout.Index(i, g)] = T(r.Float64()*2 - 1)
				}
			}
			for _, c := range []struct {
				alpha, beta  T
				ca, cb, cc   T
				arrays, nanY bool
				name         string
			}{
				{2, 0, -1, 3, 0.5, false, true, "α=2,β=0,const,y=NaN"},
				{-0.5, 1, -1, 3, 0.5, false, false, "α=-½,β=1,const"},
				{1, 1, 0, 1, 0, false, false, "axpy"},
				{1.5, -2, 0, 0, 0, true, false, "α=1.5,β=-2,arrays(a,a,a)"},
			} {
				name := fmt.Sprintf("%T/N=%d/G=%d/%s/%s", T(0), sc.n, sc.g, lname, c.name)
				start := append([]T(nil), y0...)
				if c.nanY {
					for g := 0; g < sc.g; g++ {
						for i := 0; i < sc.n; i++ {
							start[shape.Layout.Index(i, g)] = T(math.NaN())
						}
					}
				}
				y, err := cuda.Upload(dev, start)
				require.NoError(t, err)
				if c.arrays {
					require.NoError(t, p.MulAddDevice(ctx, c.alpha, a, a, a, x, c.beta, y), name)
				} else {
					require.NoError(t, p.MulAddDeviceConst(ctx, c.alpha, c.ca, c.cb, c.cc, x, c.beta, y), name)
				}
				got := make([]T, len(start))
				require.NoError(t, y.CopyTo(got))
				require.NoError(t, y.Free())
				for k := range got {
					if math.IsNaN(float64(y0[k])) {
						require.True(t, math.IsNaN(float64(got[k])), "%s: gap %d written", name, k)
					}
				}
				for g := 0; g < sc.g; g++ {
					for i := 0; i < sc.n; i++ {
						k := shape.Layout.Index(i, g)
						ai, bi, ci := float64(c.ca), float64(c.cb), float64(c.cc)
						if c.arrays {
							ai, bi, ci = float64(bt.a[k]), float64(bt.a[k]), float64(bt.a[k])
						}
						v := bi * float64(bt.d[k])
						if i > 0 {
							v += ai * float64(bt.d[shape.Layout.Index(i-1, g)])
						}
						if i < sc.n-1 {
							v += ci * float64(bt.d[shape.Layout.Index(i+1, g)])
						}
						want := float64(c.alpha) * v
						if c.beta != 0 {
							want += float64(c.beta) * float64(start[k])
						}
						require.InDelta(t, want, float64(got[k]), tol*(1+math.Abs(want)), "%s g=%d i=%d", name, g, i)
					}
				}
			}
			require.ErrorIs(t, p.MulAddDeviceConst(ctx, 1, 0, 1, 0, x, 1, x), tridiag.ErrLength)
			require.NoError(t, x.Free())
			require.NoError(t, a.Free())
			require.NoError(t, p.Close())
		}
	}
}

// TestSliceView: a plan working on a view solves exactly the elements of
// the view, and equals the same solve on a buffer of its own.
func TestSliceView(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	ctx := context.Background()
	const n, g, off = 37, 5, 11
	shape := tridiag.Shape{N: n, G: g}
	bt := newBatch[float64](r, shape, 4)
	whole := make([]float64, off+n*g+7)
	for k := range whole {
		whole[k] = 1e300
	}
	copy(whole[off:], bt.d)
	wb, err := cuda.Upload(dev, whole)
	require.NoError(t, err)
	defer wb.Free()
	v, err := wb.Slice(off, n*g)
	require.NoError(t, err)
	assert.Equal(t, n*g, v.Len())
	assert.ErrorIs(t, v.Free(), cuda.ErrView)
	_, err = wb.Slice(off, len(whole))
	assert.ErrorIs(t, err, cuda.ErrRange)
	_, err = wb.Slice(-1, 3)
	assert.ErrorIs(t, err, cuda.ErrRange)

	p, err := NewPlan[float64](dev, shape, tridiag.Options{})
	require.NoError(t, err)
	defer p.Close()
	a, _ := cuda.Upload(dev, bt.a)
	b, _ := cuda.Upload(dev, bt.b)
	c, _ := cuda.Upload(dev, bt.c)
	d, _ := cuda.Upload(dev, bt.d)
	defer a.Free()
	defer b.Free()
	defer c.Free()
	defer d.Free()
	require.NoError(t, p.SolveDevice(ctx, a, b, c, v, v))
	require.NoError(t, p.SolveDevice(ctx, a, b, c, d, d))
	got := make([]float64, len(whole))
	require.NoError(t, wb.CopyTo(got))
	want := make([]float64, n*g)
	require.NoError(t, d.CopyTo(want))
	assert.Equal(t, want, got[off:off+n*g])
	for k := range got {
		if k < off || k >= off+n*g {
			require.Equal(t, 1e300, got[k], "element %d outside the view changed", k)
		}
	}
}

// TestCompletionAfterFailure: the completion word keeps working across a
// solve that breaks down (flag set, codes read and cleared) and the good
// solves around it.
func TestCompletionAfterFailure(t *testing.T) {
	ctx := context.Background()
	shape := tridiag.Shape{N: 64, G: 4}
	p, err := NewPlan[float32](dev, shape, tridiag.Options{Algorithm: tridiag.Thomas})
	require.NoError(t, err)
	defer p.Close()
	for round := range 3 {
		bt := newBatch[float32](rand.New(rand.NewPCG(uint64(round), 5)), shape, 4)
		if round == 1 {
			bt.b[2*64+10] = 0
			bt.a[2*64+10] = 0
			bt.c[2*64+9] = 0 // row 10 of system 2: pivot exactly 0
		}
		bufs := make([]*cuda.Buffer[float32], 4)
		for i, h := range [][]float32{bt.a, bt.b, bt.c, bt.d} {
			bufs[i], err = cuda.Upload(dev, h)
			require.NoError(t, err)
		}
		err := p.SolveDevice(ctx, bufs[0], bufs[1], bufs[2], bufs[3], bufs[3])
		if round == 1 {
			var be *tridiag.BatchError
			require.ErrorAs(t, err, &be)
			require.Len(t, be.Failed, 1)
			assert.Equal(t, 2, be.Failed[0].System)
		} else {
			require.NoError(t, err, "round %d", round)
		}
		for _, b := range bufs {
			require.NoError(t, b.Free())
		}
	}
}
