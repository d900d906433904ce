//go:build cudaemu

package complexemu

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
)

// The complex pivoting band batch kernel against banded.SolveBatch with
// BatchOptions.Pivot: solutions bit for bit (signs of zeros included), the
// same failed systems at the same row and column with the same cause.

// bandFamily is entry (i, j) of family f (of 5) of a system: random
// complex entries with a weak diagonal (pivoting interchanges most rows);
// real entries of both signs with imaginary parts +0 and −0 (products
// and quotients make zeros of both signs); entries that are zero in
// half the slots (zero multipliers and rows of U); a dominant diagonal;
// entries of scales from 1e-150 to 1e150 (Go's scaled division, over- and
// underflow).
func bandFamily(r *rand.Rand, f, i, j int) complex128 {
	rnd := func() complex128 { return complex(r.Float64()*2-1, r.Float64()*2-1) }
	switch f % 5 {
	case 0:
		v := rnd()
		if i == j {
			v *= 0.3
		}
		return v
	case 1:
		return complex(float64(r.IntN(7)-3), math.Copysign(0, float64(r.IntN(2))-0.5))
	case 2:
		if r.IntN(2) == 0 {
			return complex(0, math.Copysign(0, float64(r.IntN(2))-0.5))
		}
		return rnd()
	case 3:
		if i == j {
			return rnd() + complex(float64(4*3), 1)
		}
		return rnd()
	}
	return rnd() * complex(math.Pow(10, float64(r.IntN(301)-150)), 0)
}

// bandBatchC is a batch of G systems of the families (system s of family
// fams[s mod len(fams)]), with NaN in the storage slots outside each
// matrix (the kernel must not read them), and random right-hand sides
// (real ones, with imaginary parts +0 and −0, for the real family).
func bandBatchC[T banded.Complex](r *rand.Rand, n, k, g int, fams []int, layout banded.Layout) (*banded.Batch[T], []T) {
	b, err := banded.NewBatch[T](n, k, g, layout)
	if err != nil {
		panic(err)
	}
	nan := T(complex(math.NaN(), math.NaN()))
	for s := 0; s < g; s++ {
		for st := 0; st <= 2*k; st++ {
			for j := 0; j < n; j++ {
				i := j + st - k
				e := st*n + j
				pos := s*(2*k+1)*n + e
				if layout == banded.Interleaved {
					pos = e*g + s
				}
				if i < 0 || i >= n {
					b.Data[pos] = nan
					continue
				}
				b.Data[pos] = T(bandFamily(r, fams[s%len(fams)], i, j))
			}
		}
	}
	rhs := make([]T, n*g)
	for s := 0; s < g; s++ {
		for i := 0; i < n; i++ {
			v := complex(r.Float64()*2-1, r.Float64()*2-1)
			if fams[s%len(fams)]%5 == 1 { // real: solutions whose imaginary parts are zeros of both signs
				v = complex(float64(r.IntN(7)-3), math.Copysign(0, float64(r.IntN(2))-0.5))
			}
			rhs[b.VecIndex(s, i)] = T(v)
		}
	}
	return b, rhs
}

// failure is a failed system as the kernel reports it: row, column and
// cause (banded.ErrNonFinite or banded.ErrSingular).
type failure struct {
	row, col int
	cause    error
}

func kernelFailures(t *testing.T, st []int32, g int) map[int]failure {
	t.Helper()
	out := map[int]failure{}
	for s := 0; s < g; s++ {
		kind := st[g+s]
		if kind == 0 {
			continue
		}
		f := failure{row: int(st[s]) - 1, col: int(st[2*g+s]) - 1}
		switch kind {
		case 1, 4:
			f.cause = banded.ErrNonFinite
		case 5:
			f.cause = banded.ErrSingular
		default:
			t.Fatalf("system %d: kind %d", s, kind)
		}
		out[s] = f
	}
	require.Equal(t, len(out) > 0, st[4*g]&1 != 0, "the flag word")
	return out
}

func cpuFailures(t *testing.T, err error) map[int]failure {
	t.Helper()
	out := map[int]failure{}
	if err == nil {
		return out
	}
	var be *banded.BatchError
	require.True(t, errors.As(err, &be), "%v", err)
	for _, f := range be.Failed {
		c := failure{row: f.Row, col: f.Col, cause: banded.ErrNonFinite}
		if errors.Is(f.Err, banded.ErrSingular) {
			c.cause = banded.ErrSingular
		}
		out[f.System] = c
	}
	return out
}

// checkBandPivot runs the kernel and the CPU twin on b and compares them;
// inPlace solves into the right-hand side. It returns the failures.
func checkBandPivot[T banded.Complex](t *testing.T, b *banded.Batch[T], rhs []T, inPlace bool, what string) map[int]failure {
	t.Helper()
	cx := make([]T, len(rhs))
	_, cerr := banded.SolveBatch(context.Background(), b, rhs, cx, banded.BatchOptions{Pivot: true, Workers: 2})
	x := make([]T, len(rhs))
	d := rhs
	if inPlace {
		d = append([]T(nil), rhs...)
		x = d
	}
	st, err := BandPivot(b, d, x, false)
	require.NoError(t, err, what)
	kf, cf := kernelFailures(t, st, b.G), cpuFailures(t, cerr)
	require.Equal(t, cf, kf, what)
	for i := range x {
		if !sameBits(x[i], cx[i]) {
			s, row := i%b.G, i/b.G
			if b.Layout == banded.Contiguous {
				s, row = i/b.N, i%b.N
			}
			t.Fatalf("%s: system %d row %d: kernel %v, CPU %v", what, s, row, x[i], cx[i])
		}
	}
	return kf
}

// TestBandPivot: every K of the kernel, orders from K+1 up (odd and even,
// so that the CPU's pairs of steps end both ways), batches that are not a
// multiple of the warp, both layouts and precisions, the five families.
func TestBandPivot(t *testing.T) {
	t.Run("complex64", testBandPivot[complex64])
	t.Run("complex128", testBandPivot[complex128])
}

func testBandPivot[T banded.Complex](t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	solved := 0
	for k := 1; k <= 8; k++ {
		for _, n := range []int{k + 1, k + 2, 2*k + 3, 40, 101} {
			for _, g := range []int{1, 7, 37} {
				for _, lay := range []banded.Layout{banded.Contiguous, banded.Interleaved} {
					b, rhs := bandBatchC[T](r, n, k, g, []int{0, 1, 2, 3, 4}, lay)
					what := fmt.Sprintf("K=%d N=%d G=%d %v", k, n, g, lay)
					f := checkBandPivot(t, b, rhs, g == 7, what)
					solved += g - len(f)
				}
			}
		}
	}
	assert.Greater(t, solved, 1000, "systems solved")
}

// TestBandPivotBreakdown: a zero column at an even and at an odd row (the
// first and the second step of the CPU's pair) fails the system with
// ErrSingular at that row, a NaN entry with ErrNonFinite at its row and
// column, as on the CPU; the others are solved.
func TestBandPivotBreakdown(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	const n, k, g = 50, 3, 6
	for _, lay := range []banded.Layout{banded.Contiguous, banded.Interleaved} {
		b, rhs := bandBatchC[complex128](r, n, k, g, []int{0, 3}, lay)
		for _, zc := range [][2]int{{1, 20}, {4, 33}} {
			for i := max(0, zc[1]-k); i <= min(n-1, zc[1]+k); i++ {
				b.Set(zc[0], i, zc[1], 0)
			}
		}
		b.Set(3, 7, 9, complex(1, math.NaN()))
		f := checkBandPivot(t, b, rhs, false, fmt.Sprintf("breakdowns %v", lay))
		assert.Equal(t, map[int]failure{
			1: {20, 20, banded.ErrSingular},
			3: {7, 9, banded.ErrNonFinite},
			4: {33, 33, banded.ErrSingular},
		}, f)
	}
}

// TestBandPivotCheckX: with BAND_CHECK_X a system whose solution is not
// finite (an Inf in its right-hand side) fails at the first such row; the
// others are the CPU's bit for bit.
func TestBandPivotCheckX(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 46))
	const n, k, g = 30, 2, 4
	b, rhs := bandBatchC[complex64](r, n, k, g, []int{3}, banded.Interleaved)
	rhs[b.VecIndex(2, 17)] = complex(float32(math.Inf(1)), 0)
	cx := make([]complex64, len(rhs))
	_, cerr := banded.SolveBatch(context.Background(), b, rhs, cx, banded.BatchOptions{Pivot: true})
	require.NoError(t, cerr)
	first := -1
	for i := n - 1; i >= 0; i-- {
		if v := complex128(cx[b.VecIndex(2, i)]); math.IsInf(real(v), 0) || math.IsNaN(real(v)) || math.IsInf(imag(v), 0) || math.IsNaN(imag(v)) {
			first = i
		}
	}
	require.GreaterOrEqual(t, first, 0, "the CPU's solution is finite")
	x := make([]complex64, len(rhs))
	st, err := BandPivot(b, rhs, x, true)
	require.NoError(t, err)
	assert.Equal(t, map[int]failure{2: {first, -1, banded.ErrNonFinite}}, kernelFailures(t, st, g))
	for s := 0; s < g; s++ {
		for i := 0; i < n; i++ {
			gx, c := x[b.VecIndex(s, i)], cx[b.VecIndex(s, i)]
			if s == 2 {
				require.True(t, math.IsNaN(float64(real(gx))), "system 2 row %d: %v", i, gx)
				continue
			}
			require.True(t, sameBits(gx, c), "system %d row %d: %v vs %v", s, i, gx, c)
		}
	}
}
