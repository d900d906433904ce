//go:build cudaemu

package bandemu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLayoutF32(t *testing.T) { testLayout[float32](t) }
func TestLayoutF64(t *testing.T) { testLayout[float64](t) }

// testLayout: the layout kernels move every row of every system to its
// place and write nothing else, for sizes that are not multiples of the
// 32×32 tiles, grids smaller than the tiles (the blocks loop), one to
// four arrays, interleaved and systems-first strided layouts with gaps.
func testLayout[T Float](t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, c := range []struct{ n, g, pad, grid, count int }{
		{1, 1, 0, 1, 1}, {33, 5, 0, 3, 4}, {100, 37, 3, 7, 4}, {64, 64, 0, 4, 1}, {1000, 3, 1, 1000, 2}, {45, 200, 5, 2, 3},
	} {
		es, bs := int64(c.g+c.pad), int64(1) // systems first: the interleaved layout, padded
		if c.pad > 0 {
			es, bs = int64(2*c.g+c.pad), 2 // systems two apart, gaps between and after them
		}
		strided := int(int64(c.n-1)*es+int64(c.g-1)*bs) + 1
		name := fmt.Sprintf("N=%d/G=%d/es=%d/bs=%d/grid=%d/arrays=%d", c.n, c.g, es, bs, c.grid, c.count)
		fill := func(size int, v float64) [][]T {
			out := make([][]T, c.count)
			for k := range out {
				out[k] = make([]T, size)
				for i := range out[k] {
					out[k][i] = T(v)
					if math.IsNaN(v) {
						continue
					}
					out[k][i] = T(r.Float64())
				}
			}
			return out
		}
		// Gather.
		src, dst := fill(strided, 0), fill(c.n*c.g+7, math.NaN())
		require.NoError(t, Layout(true, src, dst, c.n, c.g, es, bs, c.grid), name)
		for k := range src {
			for g := range c.g {
				for i := range c.n {
					require.Equal(t, src[k][int64(i)*es+int64(g)*bs], dst[k][g*c.n+i], "%s: gather array %d system %d row %d", name, k, g, i)
				}
			}
			for i := c.n * c.g; i < len(dst[k]); i++ {
				require.True(t, math.IsNaN(float64(dst[k][i])), "%s: gather wrote %d past the batch", name, i)
			}
		}
		// Scatter: the batch's entries, and nothing in the gaps.
		src, dst = fill(c.n*c.g, 0), fill(strided+5, math.NaN())
		require.NoError(t, Layout(false, src, dst, c.n, c.g, es, bs, c.grid), name)
		for k := range src {
			in := make([]bool, len(dst[k]))
			for g := range c.g {
				for i := range c.n {
					at := int64(i)*es + int64(g)*bs
					in[at] = true
					require.Equal(t, src[k][g*c.n+i], dst[k][at], "%s: scatter array %d system %d row %d", name, k, g, i)
				}
			}
			for i, own := range in {
				if !own {
					assert.True(t, math.IsNaN(float64(dst[k][i])), "%s: scatter wrote the gap at %d", name, i)
				}
			}
		}
	}
	assert.Error(t, Layout[T](true, nil, nil, 1, 1, 1, 1, 1))
}
