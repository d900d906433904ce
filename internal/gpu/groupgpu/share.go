package groupgpu

import (
	"fmt"

	"github.com/bandsolve/bandsolve/tridiag"
)

// Share is the part of a group plan's batch that one GPU solves: the
// systems [Start, Start+G) of the batch, held on the GPU in Shape.
//
// Shape's layout follows the batch's (Split): where every system's rows
// come before the next system's first row (contiguous and padded
// layouts, Layout.ElemStride·(N−1) < Layout.BatchStride), the share is
// the sub-array of the batch's arrays from index Offset, in the batch's
// layout; where every row's systems come before the next row
// (interleaved: Layout.BatchStride·(G−1) < Layout.ElemStride), it is
// Interleaved(G), a block of columns of the batch; other layouts are
// Contiguous(N). A batch that is one share keeps its layout.
type Share struct {
	// Index is the position of the share's GPU in the group.
	Index int
	// Start is the batch index of the share's first system; G the
	// number of its systems (≥ 1).
	Start, G int
	// Shape is the share as its GPU holds it (N, G and layout).
	Shape tridiag.Shape
	// Direct is true when the share is the sub-array [Offset,
	// Offset+Shape.Len()) of the batch's arrays in the batch's layout;
	// false when its rows are gathered into Shape (Pack).
	Direct bool
	// Offset is the index of the share's first row in the batch's
	// arrays (Direct shares).
	Offset int
}

// Split cuts the G systems of batch shape into contiguous shares for
// parts GPUs, as equal as they can be (the first G mod parts shares one
// system larger); a GPU left without systems (G < parts) gets no share.
// The shape must be valid (tridiag.Shape.Validate).
func Split(shape tridiag.Shape, parts int) ([]Share, error) {
	if parts < 1 {
		return nil, fmt.Errorf("%w: splitting a batch over %d GPUs", tridiag.ErrOptions, parts)
	}
	if err := shape.Validate(); err != nil {
		return nil, err
	}
	shape = shape.Normalize()
	var shares []Share
	start := 0
	for k := range parts {
		g := shape.G / parts
		if k < shape.G%parts {
			g++
		}
		if g == 0 {
			break
		}
		shares = append(shares, shareOf(shape, k, start, g))
		start += g
	}
	return shares, nil
}

// shareOf is the share of systems [start, start+g) of shape on GPU k.
func shareOf(shape tridiag.Shape, k, start, g int) Share {
	l := shape.Layout
	sh := Share{Index: k, Start: start, G: g, Shape: tridiag.Shape{N: shape.N, G: g, Layout: l}}
	switch {
	case g == shape.G, l.ElemStride*(shape.N-1) < l.BatchStride:
		sh.Direct, sh.Offset = true, start*l.BatchStride
	case shape.G == 1 || l.BatchStride*(shape.G-1) < l.ElemStride:
		sh.Shape.Layout = tridiag.Interleaved(g)
	default:
		sh.Shape.Layout = tridiag.Contiguous(shape.N)
	}
	return sh
}

// Pack copies the rows of the share's systems from src, arrays in the
// batch's layout (batch, normalised), into dst in the share's layout
// (dst holds Shape.Len() elements at least). Rows outside the systems
// are not read.
func Pack[T any](sh Share, batch tridiag.Shape, src, dst []T) {
	copyRows(sh, batch, src, dst, true)
}

// Unpack copies the rows of the share's systems from src, in the share's
// layout, into dst in the batch's layout; other elements of dst are left
// as they are.
func Unpack[T any](sh Share, batch tridiag.Shape, src, dst []T) {
	copyRows(sh, batch, dst, src, false)
}

// copyRows moves the share's rows between full (the batch's layout) and
// part (the share's): full to part when in, part to full otherwise.
func copyRows[T any](sh Share, batch tridiag.Shape, full, part []T, in bool) {
	bl, sl := batch.Normalize().Layout, sh.Shape.Layout
	n := batch.N
	if bl.BatchStride == 1 && sl.BatchStride == 1 {
		// A block of columns: G adjacent elements a row.
		for i := range n {
			f := full[i*bl.ElemStride+sh.Start : i*bl.ElemStride+sh.Start+sh.G]
			p := part[i*sl.ElemStride : i*sl.ElemStride+sh.G]
			if in {
				copy(p, f)
			} else {
				copy(f, p)
			}
		}
		return
	}
	if bl.ElemStride == 1 && sl.ElemStride == 1 {
		// Each system's rows adjacent.
		for s := range sh.G {
			f := full[(sh.Start+s)*bl.BatchStride : (sh.Start+s)*bl.BatchStride+n]
			p := part[s*sl.BatchStride : s*sl.BatchStride+n]
			if in {
				copy(p, f)
			} else {
				copy(f, p)
			}
		}
		return
	}
	for s := range sh.G {
		for i := range n {
			fi, pi := bl.Index(i, sh.Start+s), sl.Index(i, s)
			if in {
				part[pi] = full[fi]
			} else {
				full[fi] = part[pi]
			}
		}
	}
}
