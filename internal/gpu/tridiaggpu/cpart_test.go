//go:build cuda

package tridiaggpu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tridiag/partition"
)

// cpartTwin solves bt (constant: with the coefficients of its first
// row) system by system on the CPU as the complex partition plans do on
// the GPU: partition.SolveC (explicit Partition), or for Auto
// partition.SolveBoundedC (SolveC under PivotNever) with GTSV for every
// system where it fails or gives a non-finite x. It returns x in bt's
// layout and the failures as failures lists them.
func cpartTwin[T tridiag.Complex](t *testing.T, bt cbatch[T], constant bool, opts tridiag.Options) ([]T, []string) {
	t.Helper()
	sh := bt.shape
	n, l := sh.N, sh.Layout
	k0 := l.Index(0, 0)
	x := make([]T, sh.Len())
	var fails []string
	gtsv, err := tridiag.NewPlan[T](tridiag.NewCPU(1), tridiag.Shape{N: n, G: 1}, tridiag.Options{Algorithm: tridiag.GTSV})
	require.NoError(t, err)
	defer gtsv.Close()
	a, b, c, d, xs := make([]T, n), make([]T, n), make([]T, n), make([]T, n), make([]T, n)
	ws := partition.NewWorkspaceC[T](n)
	nan := T(complex(math.NaN(), math.NaN()))
	for g := range sh.G {
		for i := range n {
			k := l.Index(i, g)
			if constant {
				a[i], b[i], c[i] = bt.a[k0], bt.b[k0], bt.c[k0]
			} else {
				a[i], b[i], c[i] = bt.a[k], bt.b[k], bt.c[k]
			}
			d[i] = bt.d[k]
		}
		var err error
		switch {
		case opts.Algorithm == tridiag.Partition:
			err = partition.SolveC(a, b, c, d, xs, partition.DefaultChunk(n), ws)
		case opts.Pivoting == tridiag.PivotNever:
			err = partition.SolveC(a, b, c, d, xs, partition.DefaultChunk(n), ws)
		default:
			err = partition.SolveBoundedC(a, b, c, d, xs, partition.DefaultChunk(n), ws)
		}
		row := -1
		var pe *tridiag.PivotError
		if errors.As(err, &pe) {
			row = pe.Row
		} else {
			require.NoError(t, err)
			for i, v := range xs {
				if !(cmplx.IsInf(complex128(v)) || cmplx.IsNaN(complex128(v))) {
					continue
				}
				row = i
				break
			}
		}
		if row >= 0 && opts.Algorithm == tridiag.Auto {
			row = -1
			if err := gtsv.Solve(context.Background(), a, b, c, d, xs); err != nil {
				f := failures(t, err, n)
				require.Len(t, f, 1)
				_, err := fmt.Sscanf(f[0], "0:%d", &row)
				require.NoError(t, err)
			}
		}
		if row >= 0 {
			fails = append(fails, fmt.Sprintf("%d:%d", g, row))
			for i := range xs {
				xs[i] = nan
			}
		}
		for i := range n {
			x[l.Index(i, g)] = xs[i]
		}
	}
	sort.Strings(fails)
	return x, fails
}

// autoPartition reports whether the GPU's complex Auto runs the partition
// kernels for the shape and options.
func autoPartition[T tridiag.Complex](shape tridiag.Shape, opts tridiag.Options) bool {
	if opts.Algorithm != tridiag.Auto {
		return false
	}
	return complexAutoPartition(dev.Properties(), tridiag.Spec{Shape: shape.Normalize(), Options: opts}, 2*complexPartSize[T]())
}

// complexWant is the CPU twin's solve of bt with opts, array and constant
// coefficients: cpartTwin where the GPU plan runs the partition kernels,
// else the CPU's complex solver. The failures are failures'.
func complexWant[T tridiag.Complex](t *testing.T, bt cbatch[T], opts tridiag.Options) (x, xc []T, f, fc []string) {
	t.Helper()
	if opts.Algorithm == tridiag.Partition || autoPartition[T](bt.shape, opts) {
		x, f = cpartTwin(t, bt, false, opts)
		xc, fc = cpartTwin(t, bt, true, opts)
		return
	}
	x, xc, err, errc := solveComplex(t, tridiag.NewCPU(0), bt, opts)
	return x, xc, failures(t, err, bt.shape.N), failures(t, errc, bt.shape.N)
}

// TestComplexPartitionBitExact solves the complex families with the
// partition kernels (Partition, and Auto, PivotNever, on the shapes where
// Auto takes them) in every layout, with array and constant
// coefficients, and requires the CPU twin's bits and failed rows. Systems
// that do not fit a block are refused with tridiag.ErrShape.
func TestComplexPartitionBitExact(t *testing.T) {
	testComplexPartitionBitExact[complex64](t)
	testComplexPartitionBitExact[complex128](t)
}

func testComplexPartitionBitExact[T tridiag.Complex](t *testing.T) {
	optsets := map[string]tridiag.Options{
		"partition":  {Algorithm: tridiag.Partition},
		"auto":       {},
		"auto-never": {Pivoting: tridiag.PivotNever},
	}
	for _, n := range []int{1, 2, 3, 16, 17, 37, 1000, 4097, 65537} {
		for _, g := range []int{1, 7, 133} {
			if n*g > 1<<20 {
				continue
			}
			for lname, l := range complexLayouts(n, g) {
				shape := tridiag.Shape{N: n, G: g, Layout: l}
				r := rand.New(rand.NewPCG(uint64(n), uint64(g)))
				bt := newCBatch[T](r, shape)
				for oname, opts := range optsets {
					name := fmt.Sprintf("%T/N=%d/G=%d/%s/%s", T(0), n, g, lname, oname)
					if _, err := cpartLaunchFor(dev.Properties(), n, g, 2*complexPartSize[T]()); err != nil {
						_, perr := NewComplexPlan[T](dev, shape, opts)
						if opts.Algorithm == tridiag.Partition {
							require.ErrorIs(t, perr, tridiag.ErrShape, name)
						} else {
							require.NoError(t, perr, name) // Auto: a thread a system
						}
						continue
					}
					want, wantc, wf, wfc := complexWant(t, bt, opts)
					got, gotc, gerr, gerrc := solveComplex(t, dev, bt, opts)
					require.Equal(t, wf, failures(t, gerr, n), name)
					require.Equal(t, wfc, failures(t, gerrc, n), name+"/const")
					for k := range shape.Len() {
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

// TestComplexPartitionAccuracy compares the partition kernels with the
// CPU's GTSV (an independent reference) on systems dominant by modulus
// and complex shifted Laplacians, contiguous and interleaved.
func TestComplexPartitionAccuracy(t *testing.T) {
	testComplexPartitionAccuracy[complex64](t, 1e-4)
	testComplexPartitionAccuracy[complex128](t, 1e-12)
}

func testComplexPartitionAccuracy[T tridiag.Complex](t *testing.T, tol float64) {
	for _, n := range []int{37, 1000, 3000} {
		g := 64
		for _, l := range []tridiag.Layout{tridiag.Contiguous(n), tridiag.Interleaved(g)} {
			shape := tridiag.Shape{N: n, G: g, Layout: l}
			r := rand.New(rand.NewPCG(uint64(n), 9))
			bt := newCBatch[T](r, shape)
			for s := range g {
				if s%5 == 1 || s%5 >= 3 { // dominant (0) and shifted Laplacian (2) only
					for i := range n {
						k := l.Index(i, s)
						bt.a[k], bt.b[k], bt.c[k] = -1, 2+0.5i, -1
					}
				}
			}
			got, _, gerr, _ := solveComplex(t, dev, bt, tridiag.Options{Algorithm: tridiag.Partition})
			require.NoError(t, gerr)
			want, _, werr, _ := solveComplex(t, tridiag.NewCPU(0), bt, tridiag.Options{Algorithm: tridiag.GTSV})
			require.NoError(t, werr)
			for s := range g {
				var num, den float64
				for i := range n {
					k := l.Index(i, s)
					num = max(num, cmplx.Abs(complex128(got[k])-complex128(want[k])))
					den = max(den, cmplx.Abs(complex128(want[k])))
				}
				require.Less(t, num/den, tol, "%T N=%d system %d", T(0), n, s)
			}
		}
	}
}

// TestComplexPartitionBreakdown plants a zero pivot that the partition
// method meets and partial pivoting does not (b = 0 in a chunk's second
// row): Partition reports the system and row with NaN in its rows; Auto
// solves it by GTSV (the CPU's GTSV bits), the other systems by the
// partition kernels.
func TestComplexPartitionBreakdown(t *testing.T) {
	for _, l := range []string{"contiguous", "interleaved"} {
		n, g := 40, 5
		shape := tridiag.Shape{N: n, G: g, Layout: complexLayouts(n, g)[l]}
		r := rand.New(rand.NewPCG(3, 4))
		bt := newCBatch[complex128](r, shape)
		for k := range bt.b {
			bt.b[k] += 6 // all dominant
		}
		bt.b[shape.Layout.Index(17, 2)] = 0 // row 1 of chunk 1: pivot b = 0
		got, _, gerr, _ := solveComplex(t, dev, bt, tridiag.Options{Algorithm: tridiag.Partition})
		require.ErrorIs(t, gerr, tridiag.ErrBreakdown, l)
		assert.Equal(t, []string{"2:17"}, failures(t, gerr, n), l)
		want, wf := cpartTwin(t, bt, false, tridiag.Options{Algorithm: tridiag.Partition})
		assert.Equal(t, wf, failures(t, gerr, n), l)
		for i := range n {
			assert.True(t, math.IsNaN(real(got[shape.Layout.Index(i, 2)])), l)
		}
		for k := range got {
			require.True(t, sameComplexBits(got[k], want[k]), "%s x[%d]", l, k)
		}

		require.True(t, autoPartition[complex128](shape, tridiag.Options{}), l)
		got, _, gerr, _ = solveComplex(t, dev, bt, tridiag.Options{})
		require.NoError(t, gerr, l)
		want, _ = cpartTwin(t, bt, false, tridiag.Options{})
		ref, _, _, _ := solveComplex(t, tridiag.NewCPU(0), bt, tridiag.Options{Algorithm: tridiag.GTSV})
		for i := range n {
			k := shape.Layout.Index(i, 2)
			require.True(t, sameComplexBits(got[k], ref[k]), "%s: system 2 row %d is GTSV's", l, i)
		}
		for k := range got {
			require.True(t, sameComplexBits(got[k], want[k]), "%s x[%d]", l, k)
		}
		p, err := NewComplexPlan[complex128](dev, shape, tridiag.Options{})
		require.NoError(t, err)
		assert.Equal(t, tridiag.Partition, p.Algorithm())
		assert.Contains(t, p.Describe(), "gtsv for the systems that fail")
		require.NoError(t, p.Close())
	}
}

// TestComplexPartitionDevice solves device buffers in place (x = d) with
// the partition kernels, Partition and Auto with a fallback, and
// requires the host solve's bits.
func TestComplexPartitionDevice(t *testing.T) {
	n, g := 300, 41
	shape := tridiag.Shape{N: n, G: g}
	r := rand.New(rand.NewPCG(5, 6))
	bt := newCBatch[complex64](r, shape)
	for _, opts := range []tridiag.Options{{Algorithm: tridiag.Partition}, {}} {
		p, err := NewComplexPlan[complex64](dev, shape, opts)
		require.NoError(t, err)
		want := make([]complex64, shape.Len())
		errHost := p.Solve(context.Background(), bt.a, bt.b, bt.c, bt.d, want)
		var bufs []*cuda.Buffer[complex64]
		for _, v := range [][]complex64{bt.a, bt.b, bt.c, bt.d} {
			b, err := cuda.Upload(dev, v)
			require.NoError(t, err)
			bufs = append(bufs, b)
		}
		errDev := p.SolveDevice(context.Background(), bufs[0], bufs[1], bufs[2], bufs[3], bufs[3])
		assert.Equal(t, failures(t, errHost, n), failures(t, errDev, n))
		got := make([]complex64, shape.Len())
		require.NoError(t, bufs[3].CopyTo(got))
		for k := range got {
			require.True(t, sameComplexBits(got[k], want[k]), "%v x[%d]", opts.Algorithm, k)
		}
		for _, b := range bufs {
			require.NoError(t, b.Free())
		}
		require.NoError(t, p.Close())
	}
}

// TestComplexPartitionRefused: complex Partition is refused for cyclic
// systems, and Auto keeps a thread a system for them.
func TestComplexPartitionRefused(t *testing.T) {
	shape := tridiag.Shape{N: 64, G: 8}
	_, err := NewComplexPlan[complex64](dev, shape, tridiag.Options{Algorithm: tridiag.Partition, Cyclic: true})
	require.ErrorIs(t, err, tridiag.ErrOptions)
	p, err := NewComplexPlan[complex64](dev, shape, tridiag.Options{Cyclic: true})
	require.NoError(t, err)
	assert.Equal(t, tridiag.Auto, p.Algorithm())
	require.NoError(t, p.Close())
	p, err = NewComplexPlan[complex64](dev, shape, tridiag.Options{})
	require.NoError(t, err)
	assert.Equal(t, tridiag.Partition, p.Algorithm())
	require.NoError(t, p.Close())
}
