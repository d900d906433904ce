//go:build cuda

package groupgpu

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
	"github.com/bandsolve/bandsolve/tridiag"
)

// whole is a batch of G systems of N rows, row i of system g at i·G + g
// (float64; the parts are made from it in T), diagonally dominant with
// random signs; a of row 0 and c of row N−1 are NaN (never read).
type whole struct {
	n, g       int
	a, b, c, d []float64
}

func newWhole(r *rand.Rand, n, g int) whole {
	w := whole{n: n, g: g, a: make([]float64, n*g), b: make([]float64, n*g), c: make([]float64, n*g), d: make([]float64, n*g)}
	for k := range w.a {
		w.a[k], w.c[k], w.d[k] = r.Float64()*2-1, r.Float64()*2-1, r.Float64()*2-1
		w.b[k] = math.Abs(w.a[k]) + math.Abs(w.c[k]) + 0.5 + r.Float64()
		if r.IntN(2) == 0 {
			w.b[k] = -w.b[k]
		}
	}
	for s := range g {
		w.a[s], w.c[(n-1)*g+s] = math.NaN(), math.NaN()
	}
	return w
}

// solve is x of every system by Thomas's algorithm in float64 (the
// reference).
func (w whole) solve() []float64 {
	x := make([]float64, len(w.d))
	cp, dp := make([]float64, w.n), make([]float64, w.n)
	for s := range w.g {
		at := func(i int) int { return i*w.g + s }
		for i := range w.n {
			a := 0.0
			if i > 0 {
				a = w.a[at(i)]
			}
			c := 0.0
			if i < w.n-1 {
				c = w.c[at(i)]
			}
			den := w.b[at(i)]
			num := w.d[at(i)]
			if i > 0 {
				den -= a * cp[i-1]
				num -= a * dp[i-1]
			}
			cp[i], dp[i] = c/den, num/den
		}
		x[at(w.n-1)] = dp[w.n-1]
		for i := w.n - 2; i >= 0; i-- {
			x[at(i)] = dp[i] - cp[i]*x[at(i+1)]
		}
	}
	return x
}

// splitCase is a split of the rows (rows[k] a part) with each part's
// layout ("i" interleaved, "c" contiguous, "p" padded: element stride 2).
type splitCase struct {
	rows    []int
	layouts string
	g       int
}

func (c splitCase) String() string {
	return fmt.Sprintf("rows=%v layouts=%s G=%d", c.rows, c.layouts, c.g)
}

func (c splitCase) shapes() []tridiag.Shape {
	out := make([]tridiag.Shape, len(c.rows))
	for k, n := range c.rows {
		l := tridiag.Contiguous(n)
		switch c.layouts[k] {
		case 'i':
			l = tridiag.Interleaved(c.g)
		case 'p':
			l = tridiag.Strided(2, 2*n+3)
		}
		out[k] = tridiag.Shape{N: n, G: c.g, Layout: l}
	}
	return out
}

// solveSplit solves w split as c with part k on devs[k], and returns x
// in w's layout and the solve's error.
func solveSplit[T tridiag.Float](t *testing.T, devs []*cuda.Device, c splitCase, w whole) ([]float64, error) {
	t.Helper()
	shapes := c.shapes()
	p, err := newSplitPlan[T](devs, shapes)
	require.NoError(t, err)
	defer p.Close()
	var bufs [5][]*cuda.Buffer[T]
	start := 0
	for k, sh := range shapes {
		for i, src := range [][]float64{w.a, w.b, w.c, w.d, nil} {
			host := make([]T, sh.Len())
			if src != nil {
				for s := range sh.G {
					for r := range sh.N {
						host[sh.Layout.Index(r, s)] = T(src[(start+r)*w.g+s])
					}
				}
			}
			buf, err := cuda.Upload(devs[k], host)
			require.NoError(t, err)
			defer buf.Free()
			bufs[i] = append(bufs[i], buf)
		}
		start += sh.N
	}
	solveErr := p.SolveDevice(context.Background(), bufs[0], bufs[1], bufs[2], bufs[3], bufs[4])
	x := make([]float64, w.n*w.g)
	start = 0
	for k, sh := range shapes {
		host := make([]T, sh.Len())
		require.NoError(t, bufs[4][k].CopyTo(host))
		for s := range sh.G {
			for r := range sh.N {
				x[(start+r)*w.g+s] = float64(host[sh.Layout.Index(r, s)])
			}
		}
		start += sh.N
	}
	return x, solveErr
}

var splitCases = []splitCase{
	{rows: []int{1000}, layouts: "i", g: 37},
	{rows: []int{2048, 2048}, layouts: "ii", g: 256},
	{rows: []int{2048, 2048}, layouts: "cc", g: 5},
	{rows: []int{700, 1333, 1200}, layouts: "ici", g: 33},
	{rows: []int{1024, 1024, 1024, 1024}, layouts: "iiii", g: 100},
	{rows: []int{3000, 5001}, layouts: "cc", g: 1},
	{rows: []int{4096, 4096, 3000}, layouts: "ccc", g: 2},
	{rows: []int{100, 37, 500}, layouts: "ici", g: 17},
	{rows: []int{900, 2100}, layouts: "pi", g: 6},
	{rows: []int{2, 3000, 2}, layouts: "cpc", g: 3},
}

func TestSplitSolvesF32(t *testing.T) { testSplit[float32](t, 2e-5) }
func TestSplitSolvesF64(t *testing.T) { testSplit[float64](t, 1e-12) }

// testSplit solves every case with its parts on one GPU against Thomas
// in float64, and, on a host of several GPUs, with part k on GPU k mod
// P: the same bits.
func testSplit[T tridiag.Float](t *testing.T, tol float64) {
	for ci, c := range splitCases {
		t.Run(c.String(), func(t *testing.T) {
			w := newWhole(rand.New(rand.NewPCG(uint64(ci), 11)), sum(c.rows), c.g)
			one := make([]*cuda.Device, len(c.rows))
			for k := range one {
				one[k] = dev
			}
			x, err := solveSplit[T](t, one, c, w)
			require.NoError(t, err)
			want := w.solve()
			worst, scale := 0.0, 0.0
			for k := range want {
				worst = math.Max(worst, math.Abs(x[k]-want[k]))
				scale = math.Max(scale, math.Abs(want[k]))
			}
			assert.LessOrEqual(t, worst/scale, tol, "max |x − x_ref| / max |x_ref|")
			if all.Len() < 2 || len(c.rows) < 2 {
				return
			}
			spread := make([]*cuda.Device, len(c.rows))
			for k := range spread {
				spread[k] = all.Device(k % all.Len())
			}
			y, err := solveSplit[T](t, spread, c, w)
			require.NoError(t, err)
			for k := range x {
				if math.Float64bits(x[k]) != math.Float64bits(y[k]) {
					require.Failf(t, "GPUs differ", "row %d system %d: %v on %d GPUs, %v on one", k/c.g, k%c.g, y[k], all.Len(), x[k])
				}
			}
		})
	}
}

func sum(v []int) int {
	s := 0
	for _, x := range v {
		s += x
	}
	return s
}

// TestSplitBreakdown: a system singular in its second part is reported
// once, at a row of that part, with NaN in every part; the others are
// solved.
func TestSplitBreakdown(t *testing.T) {
	c := splitCase{rows: []int{1500, 1500, 1000}, layouts: "ici", g: 9}
	w := newWhole(rand.New(rand.NewPCG(3, 3)), sum(c.rows), c.g)
	const bad, row = 4, 2222
	w.a[row*c.g+bad], w.b[row*c.g+bad], w.c[row*c.g+bad] = 0, 0, 0
	devs := []*cuda.Device{dev, all.Device(1 % all.Len()), dev}
	x, err := solveSplit[float64](t, devs, c, w)
	var be *tridiag.BatchError
	require.True(t, errors.As(err, &be), "want a *tridiag.BatchError, have %v", err)
	require.Len(t, be.Failed, 1, "%v", err)
	f := be.Failed[0]
	assert.Equal(t, bad, f.System)
	assert.True(t, f.Row >= 1500 && f.Row < 3000, "row %d is not in the second part [1500, 3000)", f.Row)
	assert.ErrorIs(t, err, tridiag.ErrBreakdown)
	want := w.solve()
	for k := range x {
		if k%c.g == bad {
			assert.True(t, math.IsNaN(x[k]), "row %d of the singular system: %v, want NaN", k/c.g, x[k])
			continue
		}
		assert.InDelta(t, want[k], x[k], 1e-12*math.Max(1, math.Abs(want[k])), "row %d system %d", k/c.g, k%c.g)
	}
}

// TestSplitRefused: parts that are not one batch, or whose layout no part
// kernel takes, and buffers that do not match the parts.
func TestSplitRefused(t *testing.T) {
	_, err := newSplitPlan[float64]([]*cuda.Device{dev, dev}, []tridiag.Shape{{N: 100, G: 4}, {N: 100, G: 5}})
	assert.ErrorIs(t, err, tridiag.ErrShape)
	_, err = newSplitPlan[float64]([]*cuda.Device{dev, dev}, []tridiag.Shape{{N: 100, G: 4}, {N: 1, G: 4}})
	assert.ErrorIs(t, err, tridiag.ErrShape, "a part of one row")
	_, err = NewSplitPlan[float64](all, make([]tridiag.Shape, all.Len()+1))
	assert.ErrorIs(t, err, tridiag.ErrShape)

	p, err := newSplitPlan[float32]([]*cuda.Device{dev, dev}, []tridiag.Shape{{N: 600, G: 3}, {N: 700, G: 3}})
	require.NoError(t, err)
	defer p.Close()
	assert.Equal(t, 1300, p.Rows())
	assert.Equal(t, 600, p.Start(1))
	buf, err := cuda.Alloc[float32](dev, 1800)
	require.NoError(t, err)
	defer buf.Free()
	one := []*cuda.Buffer[float32]{buf}
	err = p.SolveDevice(context.Background(), one, one, one, one, one)
	assert.ErrorIs(t, err, tridiag.ErrLength)
	two := []*cuda.Buffer[float32]{buf, buf}
	err = p.SolveDevice(context.Background(), two, two, two, two, two)
	assert.ErrorIs(t, err, tridiag.ErrShape, "part 1 has 2100 elements, the buffer 1800")
}
