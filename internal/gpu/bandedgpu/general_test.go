//go:build cuda

package bandedgpu

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/tridiag"
)

// generalBatch draws G systems of bandwidths (kl, ku) in banded.General's
// storage laid out as the layout says (NaN in the slots outside each
// matrix), with a weak diagonal, and nrhs right-hand sides a system, row by
// row; system 1 is singular (a zero column) and system 2 has a NaN in
// its last right-hand side when the batch has them.
func generalBatch[T tridiag.Float](r *rand.Rand, n, kl, ku, g, nrhs int, layout banded.Layout) (ab, d []T, ms []*banded.General[T]) {
	rows := kl + ku + 1
	ab = make([]T, rows*n*g)
	d = make([]T, n*nrhs*g)
	for s := range g {
		m, err := banded.NewGeneral[T](n, kl, ku)
		if err != nil {
			panic(err)
		}
		for e := range m.Data {
			if i := e%n + e/n - ku; i < 0 || i >= n {
				m.Data[e] = T(math.NaN())
			} else {
				m.Data[e] = T(2*r.Float64() - 1)
			}
		}
		weakDiagonal(m, r)
		for e, v := range m.Data {
			if s == 1 && e%n == n/2 && !math.IsNaN(float64(v)) {
				v = 0
				m.Data[e] = 0
			}
			if layout == banded.Interleaved {
				ab[e*g+s] = v
			} else {
				ab[s*rows*n+e] = v
			}
		}
		ms = append(ms, m)
		for i := range n {
			for c := range nrhs {
				v := T(2*r.Float64() - 1)
				if s == 2 && c == nrhs-1 && i == n/3 {
					v = T(math.NaN())
				}
				d[rhsIndex(layout, n, g, nrhs, s, i, c)] = v
			}
		}
	}
	return ab, d, ms
}

// weakDiagonal sets each diagonal entry of m to ±0.3 times the sum of
// the magnitudes of its row's other entries: partial pivoting
// interchanges rows at most steps, while the solutions stay far from
// overflow in float32 (a random band without any dominance may not).
func weakDiagonal[T tridiag.Float](m *banded.General[T], r *rand.Rand) {
	for i := range m.N {
		var off float64
		for j := max(0, i-m.KL); j <= min(m.N-1, i+m.KU); j++ {
			if j != i {
				off += math.Abs(float64(m.At(i, j)))
			}
		}
		v := 0.3 * off
		if off == 0 {
			v = 1
		}
		if r.IntN(2) == 0 {
			v = -v
		}
		m.Set(i, i, T(v))
	}
}

// rhsIndex is where row i, column c of system s of nrhs right-hand sides
// is (SolveDeviceGeneral's layout).
func rhsIndex(layout banded.Layout, n, g, nrhs, s, i, c int) int {
	if layout == banded.Interleaved {
		return (i*nrhs+c)*g + s
	}
	return s*n*nrhs + i*nrhs + c
}

// TestBandBatchGeneral: SolveDeviceGeneral against banded.FactorPivotGeneral
// and PivotLU.SolveMulti on each system: bandwidths equal to the plan's K
// and smaller (padded), both layouts and precisions, several right-hand
// sides, in place, on the plan's stream and on a caller's; the same
// solutions (up to the sign of a zero), the same failed systems with NaN
// in all their columns.
func TestBandBatchGeneral(t *testing.T) {
	t.Run("float32", testBandBatchGeneral[float32])
	t.Run("float64", testBandBatchGeneral[float64])
}

func testBandBatchGeneral[T tridiag.Float](t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(51, 52))
	s, err := dev.NewStream()
	require.NoError(t, err)
	defer s.Close()
	for _, c := range []struct{ n, k, kl, ku, g, nrhs int }{
		{9, 1, 1, 1, 5, 1},
		{10, 2, 2, 1, 6, 2},
		{12, 3, 0, 3, 40, 3},
		{12, 3, 3, 0, 4, 1},
		{7, 1, 0, 0, 5, 2},
		{50, 8, 8, 8, 70, 2},
		{50, 8, 2, 7, 33, 1},
		{300, 4, 1, 4, 200, 2},
	} {
		for _, lay := range bandLayouts {
			p, err := NewBatchPlan[T](dev, c.n, c.k, c.g, lay, Options{Pivot: true, CheckFinite: true})
			require.NoError(t, err)
			for _, inPlace := range []bool{false, true} {
				for _, stream := range []*cuda.Stream{nil, s} {
					what := fmt.Sprintf("N=%d K=%d KL=%d KU=%d G=%d nrhs=%d %v in place %v stream %v", c.n, c.k, c.kl, c.ku, c.g, c.nrhs, lay, inPlace, stream != nil)
					ab, d, ms := generalBatch[T](r, c.n, c.kl, c.ku, c.g, c.nrhs, lay)
					want := make([]T, len(d))
					failed := map[int]int{} // system → info
					for sys, m := range ms {
						col := make([]T, c.n*c.nrhs)
						bad := false
						for i := range c.n {
							for k := range c.nrhs {
								v := d[rhsIndex(lay, c.n, c.g, c.nrhs, sys, i, k)]
								bad = bad || math.IsNaN(float64(v))
								col[k*c.n+i] = v
							}
						}
						lu, err := banded.FactorPivotGeneral(m)
						var re *banded.RowError
						switch {
						case err != nil:
							require.ErrorAs(t, err, &re, what)
							failed[sys] = re.Row + 1
						case bad:
							failed[sys] = -1 // the GPU names the first row of x that is not finite
						default:
							lu.SolveMulti(col, c.nrhs)
						}
						for i := range c.n {
							for k := range c.nrhs {
								v := col[k*c.n+i]
								if _, ok := failed[sys]; ok {
									v = T(math.NaN())
								}
								want[rhsIndex(lay, c.n, c.g, c.nrhs, sys, i, k)] = v
							}
						}
					}
					da, err := cuda.Upload(dev, ab)
					require.NoError(t, err, what)
					dd, err := cuda.Upload(dev, d)
					require.NoError(t, err, what)
					dx := dd
					if !inPlace {
						dx, err = cuda.Alloc[T](dev, len(d))
						require.NoError(t, err, what)
					}
					require.NoError(t, p.SetStream(stream), what)
					_, gerr := p.SolveDeviceGeneral(ctx, c.kl, c.ku, da, dd, dx, c.nrhs)
					require.NoError(t, p.SetStream(nil), what)
					if len(failed) == 0 {
						require.NoError(t, gerr, what)
					} else {
						var be *banded.BatchError
						require.ErrorAs(t, gerr, &be, what)
						got := map[int]int{}
						for _, f := range be.Failed {
							got[f.System] = f.Row + 1
						}
						require.Len(t, got, len(failed), "%s: %v", what, gerr)
						for sys, info := range failed {
							require.Contains(t, got, sys, what)
							if info > 0 {
								assert.Equal(t, info, got[sys], "%s: system %d's row", what, sys)
							}
						}
					}
					x := make([]T, len(d))
					require.NoError(t, dx.CopyTo(x), what)
					for i := range want {
						if math.IsNaN(float64(want[i])) {
							require.True(t, math.IsNaN(float64(x[i])), "%s: x[%d] = %v, want NaN", what, i, x[i])
							continue
						}
						require.True(t, want[i] == x[i], "%s: x[%d] = %v, CPU %v", what, i, x[i], want[i])
					}
					back := make([]T, len(ab))
					require.NoError(t, da.CopyTo(back), what)
					for i := range ab {
						require.Equal(t, f64bits(ab[i]), f64bits(back[i]), "%s: ab[%d] is only read", what, i)
					}
					require.NoError(t, da.Free())
					require.NoError(t, dd.Free())
					if !inPlace {
						require.NoError(t, dx.Free())
					}
				}
			}
			require.NoError(t, p.Close())
		}
	}
}

// TestBandBatchGeneralReuse: one plan solving batches of different
// bandwidths in turn (the padding rows are cleared when they change), and
// the arguments it refuses.
func TestBandBatchGeneralReuse(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(53, 54))
	const n, k, g = 20, 3, 4
	p, err := NewBatchPlan[float64](dev, n, k, g, banded.Contiguous, Options{Pivot: true})
	require.NoError(t, err)
	defer p.Close()
	for _, bw := range [][2]int{{3, 1}, {1, 3}, {3, 3}, {0, 2}, {3, 1}} {
		kl, ku := bw[0], bw[1]
		ab, d, ms := generalBatch[float64](r, n, kl, ku, 1, 1, banded.Contiguous)
		ab = append(ab, make([]float64, (g-1)*len(ab))...)
		d = append(d, make([]float64, (g-1)*len(d))...)
		for s := 1; s < g; s++ { // the same system again
			copy(ab[s*(kl+ku+1)*n:], ab[:(kl+ku+1)*n])
			copy(d[s*n:], d[:n])
		}
		lu, err := banded.FactorPivotGeneral(ms[0])
		require.NoError(t, err)
		want := append([]float64(nil), d[:n]...)
		lu.Solve(want)
		da, err := cuda.Upload(dev, ab)
		require.NoError(t, err)
		dd, err := cuda.Upload(dev, d)
		require.NoError(t, err)
		_, err = p.SolveDeviceGeneral(ctx, kl, ku, da, dd, dd, 1)
		require.NoError(t, err, "KL=%d KU=%d", kl, ku)
		x := make([]float64, len(d))
		require.NoError(t, dd.CopyTo(x))
		for s := range g {
			for i := range n {
				require.True(t, want[i] == x[s*n+i], "KL=%d KU=%d: system %d x[%d] = %v, CPU %v", kl, ku, s, i, x[s*n+i], want[i])
			}
		}
		require.NoError(t, da.Free())
		require.NoError(t, dd.Free())
	}

	buf, err := cuda.Alloc[float64](dev, (2*k+1)*n*g*2)
	require.NoError(t, err)
	defer buf.Free()
	_, err = p.SolveDeviceGeneral(ctx, 4, 1, buf, buf, buf, 1)
	assert.ErrorIs(t, err, banded.ErrShape, "KL > K")
	_, err = p.SolveDeviceGeneral(ctx, 1, -1, buf, buf, buf, 1)
	assert.ErrorIs(t, err, banded.ErrShape, "KU < 0")
	_, err = p.SolveDeviceGeneral(ctx, 1, 1, buf, buf, buf, 0)
	assert.ErrorIs(t, err, banded.ErrShape, "nrhs = 0")
	short, err := buf.Slice(0, n*g)
	require.NoError(t, err)
	_, err = p.SolveDeviceGeneral(ctx, 1, 1, buf, buf, short, 2)
	assert.ErrorIs(t, err, banded.ErrShape, "x too short for two columns")
	checked, err := NewBatchPlan[float64](dev, n, k, g, banded.Contiguous, Options{Pivot: true, Check: true})
	require.NoError(t, err)
	defer checked.Close()
	_, err = checked.SolveDeviceGeneral(ctx, 1, 1, buf, buf, buf, 2)
	assert.ErrorIs(t, err, banded.ErrOption, "Check with two columns")
}
