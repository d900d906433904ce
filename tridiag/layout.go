package tridiag

import (
	"fmt"
)

// Layout says where row i of system g lives in the batch arrays: at index
// i·ElemStride + g·BatchStride. Both strides are at least 1, and no two
// (i, g) pairs may share an index.
type Layout struct {
	ElemStride  int // distance between consecutive rows of one system
	BatchStride int // distance between the first rows of consecutive systems
}

// Contiguous is the layout of G systems of n rows stored one after the
// other: row i of system g at g·n + i.
func Contiguous(n int) Layout { return Layout{ElemStride: 1, BatchStride: n} }

// Interleaved is the layout of g systems stored row by row: row i of
// system s at i·g + s. On a GPU it makes one-thread-per-system
// access coalesced.
func Interleaved(g int) Layout { return Layout{ElemStride: g, BatchStride: 1} }

// Strided is a general layout: row i of system g at i·elem + g·batch.
//
// For a row-major ny×nx array u (u[y·nx+x]), the systems along x are
// Strided(1, nx) with N = nx, G = ny; the systems along y are
// Strided(nx, 1) with N = ny, G = nx. For a row-major nz×ny×nx array, x is
// Strided(1, nx) with G = ny·nz and z is Strided(nx·ny, 1) with G = nx·ny;
// y is Strided(nx, 1) with G = nx on each z-slab (offset the slices by
// z·nx·ny).
func Strided(elem, batch int) Layout { return Layout{ElemStride: elem, BatchStride: batch} }

// Index returns the array index of row i of system g.
func (l Layout) Index(i, g int) int { return i*l.ElemStride + g*l.BatchStride }

// IsContiguous reports whether the layout is Contiguous(n).
func (l Layout) IsContiguous(n int) bool { return l.ElemStride == 1 && (l.BatchStride == n) }

// IsInterleaved reports whether the layout is Interleaved(g).
func (l Layout) IsInterleaved(g int) bool { return l.BatchStride == 1 && l.ElemStride == g }

// Shape is the size of a batch and where its rows live.
type Shape struct {
	N      int    // rows per system, ≥ 1
	G      int    // systems in the batch, ≥ 1
	Layout Layout // zero value means Contiguous(N)
}

// Len returns the smallest array length that holds every row of the batch.
func (s Shape) Len() int {
	l := s.layout()
	return (s.N-1)*l.ElemStride + (s.G-1)*l.BatchStride + 1
}

// layout returns the layout with the zero value resolved to Contiguous.
func (s Shape) layout() Layout {
	if s.Layout == (Layout{}) {
		return Contiguous(s.N)
	}
	return s.Layout
}

// Normalize returns s with a zero Layout replaced by Contiguous(N).
func (s Shape) Normalize() Shape {
	s.Layout = s.layout()
	return s
}

// Validate checks the shape: N ≥ 1, G ≥ 1, strides ≥ 1, and no two rows of
// the batch at the same index.
func (s Shape) Validate() error {
	if s.N < 1 {
		return fmt.Errorf("%w: N = %d, need N ≥ 1", ErrShape, s.N)
	}
	if s.G < 1 {
		return fmt.Errorf("%w: G = %d, need G ≥ 1", ErrShape, s.G)
	}
	l := s.layout()
	if l.ElemStride < 1 || l.BatchStride < 1 {
		return fmt.Errorf("%w: strides (%d, %d) must be ≥ 1", ErrShape, l.ElemStride, l.BatchStride)
	}
	// i·e + g·b = i'·e + g'·b has a solution with 0 < |i−i'| < N or
	// 0 < |g−g'| < G exactly when the smallest one, Δi = b/gcd and
	// Δg = e/gcd, fits: Δi < N and Δg < G.
	if s.N > 1 && s.G > 1 {
		g := gcd(l.ElemStride, l.BatchStride)
		if l.BatchStride/g < s.N && l.ElemStride/g < s.G {
			return fmt.Errorf("%w: layout %+v maps two rows of the %d×%d batch to one index", ErrShape, l, s.G, s.N)
		}
	}
	const maxLen = 1 << 62
	if float64(s.N-1)*float64(l.ElemStride)+float64(s.G-1)*float64(l.BatchStride) >= maxLen {
		return fmt.Errorf("%w: batch too large to index", ErrShape)
	}
	return nil
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
