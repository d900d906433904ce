package tri

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMultiColumnSolvesMatchOneColumn: the solves of m columns through
// chunks of rows give each column the bits of the one-column solve, for N
// around the chunks' rows (a last chunk of 1, 2 and ChunkRows rows), with
// the rows of each column contiguous or strided, in place or not.
func TestMultiColumnSolvesMatchOneColumn(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{1, 2, 3, ChunkRows - 1, ChunkRows, ChunkRows + 1, ChunkRows + 2, 2 * ChunkRows, 2*ChunkRows + 1, 300} {
		a, b, c, _ := randSystem(r, n, 0)
		for i := range n {
			b[i] = 3 + r.Float64() // dominant and, with c, SPD
		}
		l, rr, cp := make([]float64, n), make([]float64, n), make([]float64, n)
		require.NoError(t, LUFactor(a, b, c, l, rr, cp, true))
		dl, dd, du, du2, ipiv := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]uint8, n)
		a2, b2, c2, _ := randSystem(r, n, 0) // not dominant: interchanges
		require.NoError(t, GTTRF(a2, b2, c2, dl, dd, du, du2, ipiv))
		pd, pe := make([]float64, n), make([]float64, n)
		require.NoError(t, PTTRF(b, c, pd, pe))
		solvers := map[string]func(d, x []float64, rs, cs, m int, scratch []float64){
			"lu": func(d, x []float64, rs, cs, m int, scratch []float64) { LUSolve(l, rr, cp, d, x, rs, cs, m, scratch) },
			"gttrs": func(d, x []float64, rs, cs, m int, scratch []float64) {
				GTTRS(dl, dd, du, du2, ipiv, d, x, rs, cs, m, scratch)
			},
			"pttrs": func(d, x []float64, rs, cs, m int, scratch []float64) { PTTRS(pd, pe, d, x, rs, cs, m, scratch) },
		}
		for name, solve := range solvers {
			for _, m := range []int{2, 3, 4, 7, 9} {
				for _, rs := range []int{1, 3} {
					what := fmt.Sprintf("%s N=%d m=%d rs=%d", name, n, m, rs)
					cs := n*rs + 5 // columns apart, with a gap
					d := make([]float64, m*cs)
					for k := range d {
						d[k] = r.Float64()*2 - 1
					}
					x := make([]float64, len(d))
					solve(d, x, rs, cs, m, make([]float64, ScratchLen(m)))
					for j := range m {
						col := make([]float64, n)
						for i := range n {
							col[i] = d[j*cs+i*rs]
						}
						one := make([]float64, n)
						solve(col, one, 1, 0, 1, nil)
						for i := range n {
							require.Equal(t, math.Float64bits(one[i]), math.Float64bits(x[j*cs+i*rs]), "%s column %d row %d", what, j, i)
						}
					}
					for k := range x {
						if (k%cs)%rs != 0 || k%cs >= n*rs {
							assert.Zero(t, x[k], "%s: gap %d written", what, k)
						}
					}
					solve(d, d, rs, cs, m, make([]float64, ScratchLen(m)))
					for j := range m {
						for i := range n {
							require.Equal(t, x[j*cs+i*rs], d[j*cs+i*rs], "%s in place", what)
						}
					}
				}
			}
		}
	}
}

// TestPTSVMatchesPTTRFAndPTTRS: the one-sweep PTSV performs the
// operations of PTTRF then PTTRS, and fails at the same row.
func TestPTSVMatchesPTTRFAndPTTRS(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{1, 2, 5, 100} {
		_, b, c, d := randSystem(r, n, 3)
		x := make([]float64, n)
		require.NoError(t, PTSV(b, c, d, x, make([]float64, 2*n)))
		dd, e := make([]float64, n), make([]float64, n)
		require.NoError(t, PTTRF(b, c, dd, e))
		y := make([]float64, n)
		PTTRS(dd, e, d, y, 1, 0, 1, nil)
		assert.Equal(t, y, x)
		if n > 1 {
			b[n/2] = -b[n/2]
			err := PTSV(b, c, d, x, make([]float64, 2*n))
			var pe *PivotError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, n/2, pe.Row)
			require.ErrorIs(t, err, ErrNotPositiveDefinite)
			assert.Equal(t, err, PTTRF(b, c, dd, e))
		}
	}
}
