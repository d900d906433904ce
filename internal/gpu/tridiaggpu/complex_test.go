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
	"github.com/bandsolve/bandsolve/tridiag"
)

// sameComplexBits reports whether x and y have the same parts bit for
// bit, any NaN matching any NaN.
func sameComplexBits[T tridiag.Complex](x, y T) bool {
	same := func(a, b float64) bool {
		if a != a && b != b {
			return true
		}
		return math.Float64bits(a) == math.Float64bits(b)
	}
	// Widening to complex128 keeps every float32 value and its sign.
	p, q := complex128(x), complex128(y)
	return same(real(p), real(q)) && same(imag(p), imag(q))
}

// cbatch is a complex batch in a layout: the systems take the complex
// test families in turn (see cfamily).
type cbatch[T tridiag.Complex] struct {
	shape      tridiag.Shape
	a, b, c, d []T
}

// cfamily fills row i of a system of family f (of 5) with r: dominant by
// modulus, random (pivoting needed), the complex shifted Laplacian
// −1, 2 + ½i, −1, and Helmholtz-like −1, 2 − (kh)²(1 + ½ sin i) + iε, −1,
// damped (kh = 1.2, ε = 0.2) and nearly undamped indefinite (kh = 1,
// ε = 10⁻³), where Thomas meets tiny pivots.
func cfamily(r *rand.Rand, f, i int) (a, b, c, d complex128) {
	rnd := func() complex128 { return complex(r.Float64()*2-1, r.Float64()*2-1) }
	d = rnd()
	switch f % 5 {
	case 0:
		return rnd(), rnd() + 4 + 1i, rnd(), d
	case 1:
		return rnd(), rnd(), rnd(), d
	case 2:
		return -1, complex(2, 0.5), -1, d
	case 3:
		k2 := 1.44 * (1 + 0.5*math.Sin(float64(i)))
		return -1, complex(2-k2, 0.2), -1, d
	}
	k2 := 1 + 0.5*math.Sin(float64(i))
	return -1, complex(2-k2, 1e-3), -1, d
}

func newCBatch[T tridiag.Complex](r *rand.Rand, shape tridiag.Shape) cbatch[T] {
	m := shape.Len()
	bt := cbatch[T]{shape: shape, a: make([]T, m), b: make([]T, m), c: make([]T, m), d: make([]T, m)}
	for g := range shape.G {
		for i := range shape.N {
			k := shape.Layout.Index(i, g)
			a, b, c, d := cfamily(r, g, i)
			bt.a[k], bt.b[k], bt.c[k], bt.d[k] = T(a), T(b), T(c), T(d)
		}
	}
	return bt
}

// failures lists a solve's failed systems as "system:row", sorted; a
// failure without a row (the CPU's zero Sherman–Morrison denominator) is
// at row n−1, where the kernels report it.
func failures(t *testing.T, err error, n int) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	var be *tridiag.BatchError
	require.True(t, errors.As(err, &be), "not a batch error: %v", err)
	var out []string
	for _, f := range be.Failed {
		row := f.Row
		if row < 0 {
			row = n - 1
		}
		out = append(out, fmt.Sprintf("%d:%d", f.System, row))
	}
	sort.Strings(out)
	return out
}

// solveComplex solves bt on dev with array coefficients and then with
// the constant coefficients of its first row, returning both solutions
// and errors.
func solveComplex[T tridiag.Complex](t *testing.T, on tridiag.Device, bt cbatch[T], opts tridiag.Options) (x, xc []T, err, errc error) {
	t.Helper()
	p, perr := tridiag.NewPlan[T](on, bt.shape, opts)
	require.NoError(t, perr)
	defer p.Close()
	x, xc = make([]T, bt.shape.Len()), make([]T, bt.shape.Len())
	err = p.Solve(context.Background(), bt.a, bt.b, bt.c, bt.d, x)
	k := bt.shape.Layout.Index(0, 0)
	errc = p.SolveConst(context.Background(), bt.a[k], bt.b[k], bt.c[k], bt.d, xc)
	return x, xc, err, errc
}

// complexOptions are the option sets of the complex GPU plans.
var complexOptions = map[string]tridiag.Options{
	"thomas":       {Algorithm: tridiag.Thomas},
	"gtsv":         {Algorithm: tridiag.GTSV},
	"auto":         {},
	"auto-never":   {Pivoting: tridiag.PivotNever},
	"auto-always":  {Pivoting: tridiag.PivotAlways},
	"auto-skipfin": {SkipFiniteCheck: true},
}

func complexLayouts(n, g int) map[string]tridiag.Layout {
	return map[string]tridiag.Layout{
		"contiguous":  tridiag.Contiguous(n),
		"interleaved": tridiag.Interleaved(g),
		"rows-gaps":   tridiag.Strided(g+3, 1), // interleaved with gaps between rows
		"sys-gaps":    tridiag.Strided(1, n+5), // contiguous with gaps between systems
	}
}

// TestComplexBitExact solves the complex families with every algorithm,
// in every layout, with constant coefficients and cyclic systems, on the
// GPU and the CPU (complexWant: the CPU's solver, or the partition twin
// where Auto runs the partition kernels): x must agree bit for bit and
// the failed systems (the Thomas plans break down on the random systems)
// at the same rows.
func TestComplexBitExact(t *testing.T) {
	testComplexBitExact[complex64](t)
	testComplexBitExact[complex128](t)
}

func testComplexBitExact[T tridiag.Complex](t *testing.T) {
	for _, n := range []int{1, 2, 3, 5, 37, 300} {
		for _, g := range []int{1, 7, 133} {
			for lname, l := range complexLayouts(n, g) {
				r := rand.New(rand.NewPCG(uint64(n), uint64(g)))
				bt := newCBatch[T](r, tridiag.Shape{N: n, G: g, Layout: l})
				for oname, opts := range complexOptions {
					for _, cyclic := range []bool{false, true} {
						name := fmt.Sprintf("%T/N=%d/G=%d/%s/%s/cyclic=%t", T(0), n, g, lname, oname, cyclic)
						opts.Cyclic = cyclic
						want, wantc, wf, wfc := complexWant(t, bt, opts)
						got, gotc, gerr, gerrc := solveComplex(t, dev, bt, opts)
						require.Equal(t, wf, failures(t, gerr, n), name)
						require.Equal(t, wfc, failures(t, gerrc, n), name+"/const")
						for k := range bt.shape.Len() {
							if !sameComplexBits(got[k], want[k]) {
								require.Failf(t, "not bit for bit", "%s: x[%d] = %v on the GPU, %v on the CPU", name, k, got[k], want[k])
							}
							if !sameComplexBits(gotc[k], wantc[k]) {
								require.Failf(t, "not bit for bit", "%s/const: x[%d] = %v on the GPU, %v on the CPU", name, k, gotc[k], wantc[k])
							}
						}
					}
				}
			}
		}
	}
}

// TestComplexZeroPivot plants zero pivots and requires the GPU to name
// the system and row the CPU names, with NaN in the failed system and
// the others solved.
func TestComplexZeroPivot(t *testing.T) {
	for _, alg := range []tridiag.Algorithm{tridiag.Thomas, tridiag.GTSV, tridiag.Auto, tridiag.Partition} {
		for _, l := range []string{"contiguous", "interleaved"} {
			n, g := 9, 5
			r := rand.New(rand.NewPCG(3, 4))
			shape := tridiag.Shape{N: n, G: g, Layout: complexLayouts(n, g)[l]}
			bt := newCBatch[complex128](r, shape)
			for k := range bt.b {
				bt.b[k] += 6 // all dominant
			}
			// System 2: row 4 decoupled from the left with a zero
			// diagonal, a zero pivot for every algorithm.
			k := shape.Layout.Index(4, 2)
			bt.a[k], bt.b[k] = 0, 0
			k1 := shape.Layout.Index(5, 2)
			bt.a[k1] = 0 // row 5 does not pivot into column 4
			want, _, wf, _ := complexWant(t, bt, tridiag.Options{Algorithm: alg})
			got, _, gerr, _ := solveComplex(t, dev, bt, tridiag.Options{Algorithm: alg})
			require.Error(t, gerr, "%s %s", alg, l)
			assert.Equal(t, []string{"2:4"}, failures(t, gerr, n), "%s %s", alg, l)
			assert.Equal(t, wf, failures(t, gerr, n), "%s %s", alg, l)
			assert.True(t, errors.Is(gerr, tridiag.ErrBreakdown), "%v", gerr)
			for i := range n {
				assert.True(t, math.IsNaN(real(got[shape.Layout.Index(i, 2)])))
				for _, s := range []int{0, 1, 3, 4} {
					k := shape.Layout.Index(i, s)
					require.True(t, sameComplexBits(got[k], want[k]), "%s %s system %d row %d", alg, l, s, i)
				}
			}
		}
	}
}

// TestComplexRefused: the algorithms other than Auto, Thomas, GTSV and
// Partition are refused for complex plans, as on the CPU.
func TestComplexRefused(t *testing.T) {
	for _, alg := range []tridiag.Algorithm{tridiag.PCR, tridiag.CR, tridiag.LDLT} {
		_, err := tridiag.NewPlan[complex64](dev, tridiag.Shape{N: 8, G: 4}, tridiag.Options{Algorithm: alg})
		require.ErrorIs(t, err, tridiag.ErrOptions, "%s", alg)
		_, err = NewComplexPlan[complex128](dev, tridiag.Shape{N: 8, G: 4}, tridiag.Options{Algorithm: alg})
		require.ErrorIs(t, err, tridiag.ErrOptions, "%s", alg)
	}
}

// TestComplexDevice solves device buffers, in place and not, with array
// and constant coefficients, and compares with the host-slice solves.
func TestComplexDevice(t *testing.T) {
	n, g := 100, 257
	r := rand.New(rand.NewPCG(5, 6))
	shape := tridiag.Shape{N: n, G: g, Layout: tridiag.Interleaved(g)}
	bt := newCBatch[complex64](r, shape)
	p, err := NewComplexPlan[complex64](dev, shape, tridiag.Options{Cyclic: true})
	require.NoError(t, err)
	defer p.Close()
	want := make([]complex64, shape.Len())
	errHost := p.Solve(context.Background(), bt.a, bt.b, bt.c, bt.d, want)
	var bufs []*cuda.Buffer[complex64]
	for _, v := range [][]complex64{bt.a, bt.b, bt.c, bt.d} {
		b, err := cuda.Upload(dev, v)
		require.NoError(t, err)
		defer b.Free()
		bufs = append(bufs, b)
	}
	x, err := cuda.Alloc[complex64](dev, shape.Len())
	require.NoError(t, err)
	defer x.Free()
	check := func(buf *cuda.Buffer[complex64], ref []complex64) {
		got := make([]complex64, shape.Len())
		require.NoError(t, buf.CopyTo(got))
		for k := range got {
			require.True(t, sameComplexBits(got[k], ref[k]), "x[%d] = %v, want %v", k, got[k], ref[k])
		}
	}
	err1 := p.SolveDevice(context.Background(), bufs[0], bufs[1], bufs[2], bufs[3], x)
	check(x, want)
	// In place: x is d.
	err2 := p.SolveDevice(context.Background(), bufs[0], bufs[1], bufs[2], bufs[3], bufs[3])
	check(bufs[3], want)
	assert.Equal(t, failures(t, errHost, n), failures(t, err1, n))
	assert.Equal(t, failures(t, err1, n), failures(t, err2, n))
	require.NoError(t, bufs[3].CopyFrom(bt.d))
	require.NoError(t, p.SolveConst(context.Background(), -1, 2+0.5i, -1, bt.d, want))
	require.NoError(t, p.SolveDeviceConst(context.Background(), -1, 2+0.5i, -1, bufs[3], x))
	check(x, want)
}
