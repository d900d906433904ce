package groupgpu

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/tridiag"
)

// shareLayouts are batch layouts of every kind Split tells apart.
func shareLayouts(n, g int) map[string]tridiag.Layout {
	return map[string]tridiag.Layout{
		"contiguous":  tridiag.Contiguous(n),
		"interleaved": tridiag.Interleaved(g),
		"padded":      tridiag.Strided(2, 2*n+3),
		"columns":     tridiag.Strided(g+5, 1),
		"rows-apart":  tridiag.Strided(3*g+1, 3),
		"mixed":       tridiag.Strided(g, n), // neither systems nor rows first when g, n > 1
	}
}

// TestSplit: the shares cover the batch in order, differ by at most one
// system, and a GPU left without systems gets none.
func TestSplit(t *testing.T) {
	for _, g := range []int{1, 2, 3, 7, 64, 1000, 1023} {
		for _, parts := range []int{1, 2, 3, 4, 8} {
			shares, err := Split(tridiag.Shape{N: 5, G: g}, parts)
			require.NoError(t, err)
			require.Len(t, shares, min(g, parts), "G=%d parts=%d", g, parts)
			next, lo, hi := 0, g, 0
			for k, sh := range shares {
				assert.Equal(t, k, sh.Index)
				assert.Equal(t, next, sh.Start)
				assert.Equal(t, sh.G, sh.Shape.G)
				next += sh.G
				lo, hi = min(lo, sh.G), max(hi, sh.G)
			}
			assert.Equal(t, g, next, "G=%d parts=%d", g, parts)
			assert.LessOrEqual(t, hi-lo, 1, "G=%d parts=%d", g, parts)
		}
	}
	_, err := Split(tridiag.Shape{N: 5, G: 4}, 0)
	require.ErrorIs(t, err, tridiag.ErrOptions)
	_, err = Split(tridiag.Shape{N: 0, G: 4}, 2)
	require.ErrorIs(t, err, tridiag.ErrShape)
}

// TestShareLayouts: systems-first batches give direct shares that are
// disjoint sub-arrays in the batch's layout; interleaved ones blocks of
// columns; a batch of one share keeps its layout.
func TestShareLayouts(t *testing.T) {
	const n, g = 6, 11
	want := map[string]string{"contiguous": "direct", "padded": "direct", "interleaved": "interleaved",
		"columns": "interleaved", "rows-apart": "interleaved", "mixed": "contiguous"}
	for name, l := range shareLayouts(n, g) {
		batch := tridiag.Shape{N: n, G: g, Layout: l}
		require.NoError(t, batch.Validate(), name)
		shares, err := Split(batch, 3)
		require.NoError(t, err)
		end := 0
		for _, sh := range shares {
			require.NoError(t, sh.Shape.Validate(), name)
			kind := "contiguous"
			switch {
			case sh.Direct:
				kind = "direct"
				assert.Equal(t, l, sh.Shape.Layout, name)
				assert.GreaterOrEqual(t, sh.Offset, end, "%s: direct shares overlap", name)
				end = sh.Offset + sh.Shape.Len()
				for s := range sh.G {
					for i := range n {
						require.Equal(t, l.Index(i, sh.Start+s), sh.Offset+sh.Shape.Layout.Index(i, s), name)
					}
				}
			case sh.Shape.Layout == tridiag.Interleaved(sh.G):
				kind = "interleaved"
			default:
				assert.Equal(t, tridiag.Contiguous(n), sh.Shape.Layout, name)
			}
			assert.Equal(t, want[name], kind, name)
		}
		one, err := Split(batch, 1)
		require.NoError(t, err)
		require.Len(t, one, 1)
		assert.True(t, one[0].Direct, name)
		assert.Equal(t, l, one[0].Shape.Layout, name)
	}
}

// TestPackUnpack: Pack puts each row of the share's systems at its place
// in the share's layout and Unpack puts it back, leaving the elements
// outside the batch's rows alone.
func TestPackUnpack(t *testing.T) {
	for _, sz := range []struct{ n, g, parts int }{{1, 1, 1}, {5, 9, 2}, {7, 3, 4}, {16, 33, 3}} {
		for name, l := range shareLayouts(sz.n, sz.g) {
			batch := tridiag.Shape{N: sz.n, G: sz.g, Layout: l}
			if batch.Validate() != nil {
				continue
			}
			what := fmt.Sprintf("%s N=%d G=%d", name, sz.n, sz.g)
			src := make([]float64, batch.Len())
			for k := range src {
				src[k] = -1 // not a row of the batch
			}
			for s := range sz.g {
				for i := range sz.n {
					src[l.Index(i, s)] = float64(1000*s + i)
				}
			}
			shares, err := Split(batch, sz.parts)
			require.NoError(t, err)
			out := make([]float64, len(src))
			for k := range out {
				out[k] = -2
			}
			for _, sh := range shares {
				part := make([]float64, sh.Shape.Len())
				Pack(sh, batch, src, part)
				for s := range sh.G {
					for i := range sz.n {
						require.Equal(t, float64(1000*(sh.Start+s)+i), part[sh.Shape.Layout.Index(i, s)], what)
					}
				}
				Unpack(sh, batch, part, out)
			}
			for k := range out {
				if src[k] == -1 {
					require.Equal(t, -2.0, out[k], "%s: element %d is outside the rows", what, k)
				} else {
					require.Equal(t, src[k], out[k], "%s: element %d", what, k)
				}
			}
		}
	}
}
