//go:build cuda

package bandedgpu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/cuda"
)

// Complex batches (complex64, complex128) pivot: the kernel
// band_batch_cpivot_* is banded.SolveBatch with BatchOptions.Pivot on
// every system, the same solutions bit for bit (signs of zeros included),
// the same failed systems with the same row, column and cause.
// internal/complexemu runs the same kernel on the CPU.

// cpivotEntry is entry (i, j) of a system of family f (of 5): random
// complex entries with a weak diagonal (most steps interchange rows);
// small integers with imaginary parts +0 and −0 (zeros of both signs in
// the factors and, with a real right-hand side, in the solution); entries
// that are zero in half the slots; a dominant diagonal; entries of scales
// 1e-150 … 1e150 (Go's scaled division, overflow and underflow).
func cpivotEntry(r *rand.Rand, f, i, j int) complex128 {
	rnd := func() complex128 { return complex(r.Float64()*2-1, r.Float64()*2-1) }
	switch f % 5 {
	case 0:
		if i == j {
			return 0.3 * rnd()
		}
		return rnd()
	case 1:
		return complex(float64(r.IntN(7)-3), math.Copysign(0, r.Float64()-0.5))
	case 2:
		if r.IntN(2) == 0 {
			return complex(0, math.Copysign(0, r.Float64()-0.5))
		}
		return rnd()
	case 3:
		if i == j {
			return rnd() + 12 + 1i
		}
		return rnd()
	}
	return rnd() * complex(math.Pow(10, float64(r.IntN(301)-150)), 0)
}

// cpivotBatch is a batch whose system s is of family fams[s mod
// len(fams)], with NaN in the storage slots outside each matrix (no kernel
// may read them), and its right-hand sides (real ones, imaginary parts of
// both signs, for family 1).
func cpivotBatch[T banded.Complex](r *rand.Rand, n, k, g int, fams []int, layout banded.Layout) (*banded.Batch[T], []T) {
	b, err := banded.NewBatch[T](n, k, g, layout)
	if err != nil {
		panic(err)
	}
	w := (2*k + 1) * n
	for s := 0; s < g; s++ {
		f := fams[s%len(fams)]
		for c := 0; c <= 2*k; c++ {
			for j := 0; j < n; j++ {
				e := c*n + j
				pos := s*w + e
				if layout == banded.Interleaved {
					pos = e*g + s
				}
				v := cmplx.NaN()
				if i := j + c - k; i >= 0 && i < n {
					v = cpivotEntry(r, f, i, j)
				}
				b.Data[pos] = T(v)
			}
		}
	}
	rhs := make([]T, n*g)
	for s := 0; s < g; s++ {
		for i := 0; i < n; i++ {
			v := complex(r.Float64()*2-1, r.Float64()*2-1)
			if fams[s%len(fams)]%5 == 1 {
				v = complex(float64(r.IntN(7)-3), math.Copysign(0, r.Float64()-0.5))
			}
			rhs[b.VecIndex(s, i)] = T(v)
		}
	}
	return b, rhs
}

// sameBitsC reports whether x and y agree part by part bit for bit, any
// NaN matching any NaN.
func sameBitsC[T banded.Complex](x, y T) bool {
	same := func(a, b float64) bool {
		return (a != a && b != b) || math.Float64bits(a) == math.Float64bits(b)
	}
	p, q := complex128(x), complex128(y)
	return same(real(p), real(q)) && same(imag(p), imag(q))
}

func sameSolutionsC[T banded.Complex](t *testing.T, b *banded.Batch[T], x, cx []T, what string) {
	t.Helper()
	for i := range x {
		if !sameBitsC(x[i], cx[i]) {
			g, row := i%b.G, i/b.G
			if b.Layout == banded.Contiguous {
				g, row = i/b.N, i%b.N
			}
			t.Fatalf("%s: system %d row %d: GPU %v, CPU twin %v", what, g, row, x[i], cx[i])
		}
	}
}

// checkCpivotBatch solves b on the GPU and on the CPU twin and compares
// them; it returns the GPU's solution and error.
func checkCpivotBatch[T banded.Complex](t *testing.T, b *banded.Batch[T], rhs []T, what string) ([]T, error) {
	t.Helper()
	ctx := context.Background()
	p, err := NewBatchPlan[T](dev, b.N, b.K, b.G, b.Layout, Options{Pivot: true})
	require.NoError(t, err, what)
	defer p.Close()
	require.Contains(t, p.Kernel(), "band_batch_cpivot", what)
	x := make([]T, len(rhs))
	_, gerr := p.SolveBatch(ctx, b, rhs, x)
	cx := make([]T, len(rhs))
	_, cerr := banded.SolveBatch(ctx, b, rhs, cx, banded.BatchOptions{Pivot: true})
	sameFailures(t, cerr, gerr, what, banded.ErrNonFinite, banded.ErrSingular)
	sameSolutionsC(t, b, x, cx, what)
	return x, gerr
}

// TestBandBatchCpivot: every half-bandwidth of the kernels, orders from
// K+1 (odd and even: the CPU's pairs of steps end both ways) to
// non-powers of two, batches that leave a block partly empty, both
// layouts and precisions, the five families.
func TestBandBatchCpivot(t *testing.T) {
	t.Run("complex64", testBandBatchCpivot[complex64])
	t.Run("complex128", testBandBatchCpivot[complex128])
}

func testBandBatchCpivot[T banded.Complex](t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	solved := 0
	for k := 1; k <= MaxBatchK; k++ {
		for _, n := range []int{k + 1, k + 2, 2*k + 3, 100, 1000} {
			for _, g := range []int{1, 37, 300} {
				for _, lay := range bandLayouts {
					b, rhs := cpivotBatch[T](r, n, k, g, []int{0, 1, 2, 3, 4}, lay)
					_, err := checkCpivotBatch(t, b, rhs, fmt.Sprintf("K=%d N=%d G=%d %v", k, n, g, lay))
					solved += g
					var be *banded.BatchError
					if errors.As(err, &be) {
						solved -= len(be.Failed)
					}
				}
			}
		}
	}
	assert.Greater(t, solved, 10000, "systems solved")
}

// TestBandBatchCpivotBreakdown: a zero column at an even and at an odd
// row (the first and the second step of the CPU's pair) fails the system
// with ErrSingular at that row, a NaN part of an entry with ErrNonFinite
// at its row and column, as on the CPU; the others are solved.
func TestBandBatchCpivotBreakdown(t *testing.T) {
	r := rand.New(rand.NewPCG(53, 54))
	const n, k, g = 50, 3, 6
	for _, lay := range bandLayouts {
		b, rhs := cpivotBatch[complex128](r, n, k, g, []int{0, 3}, lay)
		for _, zc := range [][2]int{{1, 20}, {4, 33}} {
			for i := max(0, zc[1]-k); i <= min(n-1, zc[1]+k); i++ {
				b.Set(zc[0], i, zc[1], 0)
			}
		}
		b.Set(3, 7, 9, complex(1, math.NaN()))
		_, err := checkCpivotBatch(t, b, rhs, fmt.Sprintf("breakdowns %v", lay))
		var be *banded.BatchError
		require.ErrorAs(t, err, &be)
		require.Len(t, be.Failed, 3)
		for i, want := range []struct {
			sys, row, col int
			cause         error
		}{{1, 20, 20, banded.ErrSingular}, {3, 7, 9, banded.ErrNonFinite}, {4, 33, 33, banded.ErrSingular}} {
			f := be.Failed[i]
			assert.Equal(t, [3]int{want.sys, want.row, want.col}, [3]int{f.System, f.Row, f.Col}, "%v", f.Err)
			assert.ErrorIs(t, f.Err, want.cause)
		}
	}
}

// TestBandBatchCpivotDevice: SolveDevice in place (x = d) and apart, with
// CheckFinite failing the system whose right-hand side holds an Inf at
// the first non-finite row of its solution; Options.Check passes the
// solved systems of a dominant batch.
func TestBandBatchCpivotDevice(t *testing.T) {
	r := rand.New(rand.NewPCG(55, 56))
	const n, k, g = 64, 2, 40
	ctx := context.Background()
	b, rhs := cpivotBatch[complex64](r, n, k, g, []int{3}, banded.Interleaved)
	rhs[b.VecIndex(5, 30)] = complex(float32(math.Inf(1)), 0)
	cx := make([]complex64, len(rhs))
	_, cerr := banded.SolveBatch(ctx, b, rhs, cx, banded.BatchOptions{Pivot: true})
	require.NoError(t, cerr)
	first := -1
	for i := n - 1; i >= 0; i-- {
		v := complex128(cx[b.VecIndex(5, i)])
		if cmplx.IsInf(v) || cmplx.IsNaN(v) {
			first = i
		}
	}
	require.GreaterOrEqual(t, first, 0)
	a, err := cuda.Upload(dev, b.Data)
	require.NoError(t, err)
	defer a.Free()
	for _, inPlace := range []bool{false, true} {
		p, err := NewBatchPlan[complex64](dev, n, k, g, b.Layout, Options{Pivot: true, CheckFinite: true})
		require.NoError(t, err)
		d, err := cuda.Upload(dev, rhs)
		require.NoError(t, err)
		x := d
		if !inPlace {
			x, err = cuda.Alloc[complex64](dev, n*g)
			require.NoError(t, err)
		}
		_, err = p.SolveDevice(ctx, a, d, x)
		var be *banded.BatchError
		require.ErrorAs(t, err, &be, "in place %v", inPlace)
		require.Len(t, be.Failed, 1)
		assert.Equal(t, [2]int{5, first}, [2]int{be.Failed[0].System, be.Failed[0].Row})
		assert.ErrorIs(t, be.Failed[0].Err, banded.ErrNonFinite)
		hx := make([]complex64, n*g)
		require.NoError(t, x.CopyTo(hx))
		for s := 0; s < g; s++ {
			for i := 0; i < n; i++ {
				v, c := hx[b.VecIndex(s, i)], cx[b.VecIndex(s, i)]
				if s == 5 {
					require.True(t, cmplx.IsNaN(complex128(v)), "row %d: %v", i, v)
					continue
				}
				require.True(t, sameBitsC(v, c), "in place %v: system %d row %d: %v vs %v", inPlace, s, i, v, c)
			}
		}
		if !inPlace {
			_ = x.Free()
		}
		_ = d.Free()
		require.NoError(t, p.Close())
	}
	pc, err := NewBatchPlan[complex128](dev, n, k, g, b.Layout, Options{Pivot: true, Check: true})
	require.NoError(t, err)
	defer pc.Close()
	b128, rhs128 := cpivotBatch[complex128](r, n, k, g, []int{3}, banded.Interleaved)
	x := make([]complex128, n*g)
	_, err = pc.SolveBatch(ctx, b128, rhs128, x)
	require.NoError(t, err)
}

// TestBandBatchCpivotPlan: banded.NewBatchPlan on the GPU solves complex
// batches as the CPU's plan does, bit for bit; without Pivot both
// constructors refuse a complex batch with ErrOption.
func TestBandBatchCpivotPlan(t *testing.T) {
	t.Run("complex64", testBandBatchCpivotPlan[complex64])
	t.Run("complex128", testBandBatchCpivotPlan[complex128])
}

func testBandBatchCpivotPlan[T banded.Complex](t *testing.T) {
	r := rand.New(rand.NewPCG(57, 58))
	ctx := context.Background()
	for _, lay := range bandLayouts {
		const n, k, g = 301, 5, 77
		b, rhs := cpivotBatch[T](r, n, k, g, []int{0, 1, 3, 4}, lay)
		opts := banded.BatchOptions{Pivot: true}
		gp, err := banded.NewBatchPlan[T](dev, n, k, g, lay, opts)
		require.NoError(t, err)
		assert.Contains(t, gp.Describe(), "band_batch_cpivot")
		cp, err := banded.NewBatchPlan[T](nil, n, k, g, lay, opts)
		require.NoError(t, err)
		x, cx := make([]T, n*g), make([]T, n*g)
		_, gerr := gp.Solve(ctx, b.Data, rhs, x)
		_, cerr := cp.Solve(ctx, b.Data, rhs, cx)
		sameFailures(t, cerr, gerr, lay.String(), banded.ErrNonFinite, banded.ErrSingular)
		sameSolutionsC(t, b, x, cx, lay.String())
		require.NoError(t, gp.Close())
		require.NoError(t, cp.Close())
	}
	_, err := banded.NewBatchPlan[T](dev, 10, 2, 3, banded.Interleaved, banded.BatchOptions{})
	assert.ErrorIs(t, err, banded.ErrOption)
	_, err = NewBatchPlan[T](dev, 10, 2, 3, banded.Interleaved, Options{})
	assert.ErrorIs(t, err, banded.ErrOption)
}
