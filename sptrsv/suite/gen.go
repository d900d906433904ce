package suite

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/bandsolve/bandsolve/sparse"
)

// Order is the ordering of the unknowns of a grid matrix.
type Order int

const (
	// Natural numbers the grid points lexicographically, x fastest.
	Natural Order = iota
	// RCM applies sparse.RCM (reverse Cuthill–McKee) to the whole
	// symmetric matrix before its lower triangle is taken.
	RCM
)

// String names the order: "natural" or "rcm".
func (o Order) String() string {
	switch o {
	case Natural:
		return "natural"
	case RCM:
		return "rcm"
	}
	return fmt.Sprintf("Order(%d)", int(o))
}

// maxRows is the largest order a generator makes: int32 indices.
const maxRows = 1<<31 - 1

// builder appends the rows of a lower triangle in order.
type builder struct {
	a *sparse.CSR
}

func newBuilder(n, nnz int) *builder {
	if n < 0 || n > maxRows || nnz > maxRows {
		panic(fmt.Sprintf("suite: %d rows with about %d entries do not fit int32 indices", n, nnz))
	}
	return &builder{a: &sparse.CSR{N: n, M: n, RowPtr: make([]int32, 1, n+1),
		Col: make([]int32, 0, nnz), Val: make([]float64, 0, nnz)}}
}

// row appends the row with the given sorted off-diagonal columns (all
// below the row's index) and values, and the diagonal entry d.
func (b *builder) row(cols []int32, vals []float64, d float64) {
	i := int32(len(b.a.RowPtr) - 1)
	b.a.Col = append(b.a.Col, cols...)
	b.a.Val = append(b.a.Val, vals...)
	b.a.Col = append(b.a.Col, i)
	b.a.Val = append(b.a.Val, d)
	b.a.RowPtr = append(b.a.RowPtr, int32(len(b.a.Col)))
}

// randomRow appends a row with the distinct off-diagonal columns cols (in
// any order; sorted in place), values drawn from U(−1, 1) and the
// diagonal 1 + 2·Σ|l_ij|.
func (b *builder) randomRow(cols []int32, rng *rand.Rand, vals []float64) []float64 {
	slices.Sort(cols)
	vals = vals[:0]
	s := 0.0
	for range cols {
		v := 2*rng.Float64() - 1
		vals = append(vals, v)
		s += abs(v)
	}
	b.row(cols, vals, 1+2*s)
	return vals
}

func (b *builder) done() *sparse.CSR { return b.a }

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func newRNG(seed uint64, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream))
}

// lower returns the lower triangle (diagonal included) of a.
func lower(a *sparse.CSR) *sparse.CSR {
	b := &sparse.CSR{N: a.N, M: a.M, RowPtr: make([]int32, a.N+1)}
	b.Col = make([]int32, 0, (a.NNZ()+a.N)/2)
	b.Val = make([]float64, 0, (a.NNZ()+a.N)/2)
	for i := range a.N {
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			if int(a.Col[p]) <= i {
				b.Col = append(b.Col, a.Col[p])
				b.Val = append(b.Val, a.Val[p])
			}
		}
		b.RowPtr[i+1] = int32(len(b.Col))
	}
	return b
}

// ordered returns the lower triangle of the symmetric grid matrix a in
// the given order, the diagonal raised where needed to keep the ratio 2
// of diagonal dominance (see the package comment).
func ordered(a *sparse.CSR, order Order) *sparse.CSR {
	switch order {
	case Natural:
	case RCM:
		perm, err := sparse.RCM(a)
		if err != nil {
			panic(fmt.Sprintf("suite: %v", err))
		}
		if a, err = a.Permute(perm, perm); err != nil {
			panic(fmt.Sprintf("suite: %v", err))
		}
	default:
		panic(fmt.Sprintf("suite: unknown order %v", order))
	}
	l := lower(a)
	// Rows with more than half of their neighbours ordered before them
	// get a larger diagonal: l_ii = max(centre, 2·Σ_{j<i}|l_ij|).
	for i := range l.N {
		lo, hi := l.RowPtr[i], l.RowPtr[i+1]-1
		s := 0.0
		for _, v := range l.Val[lo:hi] {
			s += abs(v)
		}
		l.Val[hi] = max(l.Val[hi], 2*s)
	}
	return l
}

// stencilMatrix returns the whole symmetric grid matrix of the given
// neighbour offsets (dx, dy, dz), each listed once with its opposite, on
// an mx×my×mz grid numbered x fastest: −1 for each neighbour inside the
// grid and centre on the diagonal.
func stencilMatrix(mx, my, mz int, offsets [][3]int, centre float64) *sparse.CSR {
	n := mx * my * mz
	// The offsets sorted by their index shift keep every row's columns
	// sorted.
	shift := func(o [3]int) int { return (o[2]*my+o[1])*mx + o[0] }
	offsets = slices.Clone(offsets)
	offsets = append(offsets, [3]int{})
	slices.SortFunc(offsets, func(p, q [3]int) int { return shift(p) - shift(q) })
	b := newBuilder(n, n*len(offsets))
	a := b.a
	for z := range mz {
		for y := range my {
			for x := range mx {
				for _, o := range offsets {
					u, v, w := x+o[0], y+o[1], z+o[2]
					if u < 0 || u >= mx || v < 0 || v >= my || w < 0 || w >= mz {
						continue
					}
					a.Col = append(a.Col, int32((w*my+v)*mx+u))
					if o == [3]int{} {
						a.Val = append(a.Val, centre)
					} else {
						a.Val = append(a.Val, -1)
					}
				}
				a.RowPtr = append(a.RowPtr, int32(len(a.Col)))
			}
		}
	}
	return a
}

// Laplacian2D returns the lower triangle, diagonal included, of the 2-D
// 5-point Laplacian on an m×m grid (Dirichlet boundary: 4 on the
// diagonal, −1 for each of the up to four neighbours) in the given order.
// In natural order row (x, y) depends on (x−1, y) and (x, y−1): n = m²,
// nnz = m² + 2m(m−1) and 2m−1 levels (the anti-diagonals x + y). At
// m = 1000: n = 10⁶, nnz = 2,998,000, 1999 levels, in natural order and
// in RCM order alike (RCM orders the grid by breadth-first fronts, the
// anti-diagonals from a corner). It panics for m < 1 or an unknown order.
func Laplacian2D(m int, order Order) *sparse.CSR {
	if m < 1 {
		panic(fmt.Sprintf("suite: Laplacian2D of a %d×%d grid", m, m))
	}
	if order == Natural {
		b := newBuilder(m*m, m*m+2*m*(m-1))
		cols := make([]int32, 0, 2)
		vals := make([]float64, 0, 2)
		for y := range m {
			for x := range m {
				k := int32(y*m + x)
				cols, vals = cols[:0], vals[:0]
				if y > 0 {
					cols, vals = append(cols, k-int32(m)), append(vals, -1)
				}
				if x > 0 {
					cols, vals = append(cols, k-1), append(vals, -1)
				}
				b.row(cols, vals, 4)
			}
		}
		return b.done()
	}
	five := [][3]int{{-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}}
	return ordered(stencilMatrix(m, m, 1, five, 4), order)
}

// Laplacian3D returns the lower triangle, diagonal included, of the 3-D
// Laplacian on an m×m×m grid (Dirichlet boundary) with a 7-point stencil
// (6 on the diagonal, −1 for the six face neighbours) or a 27-point one
// (26 on the diagonal, −1 for the 26 neighbours of the 3×3×3 cube), in
// the given order.
//
// 7-point, natural order: row (x, y, z) depends on its three lower face
// neighbours; n = m³, nnz = m³ + 3m²(m−1) and 3m−2 levels (the planes
// x + y + z). At m = 100: n = 10⁶, nnz = 3,970,000, 298 levels.
//
// 27-point, natural order: an interior row depends on 13 neighbours (the
// 9 of plane z−1, the 3 of row y−1 and (x−1, y, z)); nnz = m³ + 3m²(m−1) +
// 6m(m−1)² + 4(m−1)³ and 7m−6 levels: the longest chain follows x + 2y +
// 4z, which (x+1, y−1, z) and (x+1, y+1, z−1) decrease by one. At
// m = 100: n = 10⁶, nnz = 13,731,796, 694 levels.
//
// It panics for m < 1, a stencil other than 7 or 27, or an unknown order.
func Laplacian3D(m, stencil int, order Order) *sparse.CSR {
	if m < 1 {
		panic(fmt.Sprintf("suite: Laplacian3D of a %d³ grid", m))
	}
	var offsets [][3]int
	var centre float64
	switch stencil {
	case 7:
		offsets = [][3]int{{-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}, {0, 0, -1}, {0, 0, 1}}
		centre = 6
	case 27:
		for dz := -1; dz <= 1; dz++ {
			for dy := -1; dy <= 1; dy++ {
				for dx := -1; dx <= 1; dx++ {
					if dx != 0 || dy != 0 || dz != 0 {
						offsets = append(offsets, [3]int{dx, dy, dz})
					}
				}
			}
		}
		centre = 26
	default:
		panic(fmt.Sprintf("suite: Laplacian3D with a %d-point stencil (7 or 27)", stencil))
	}
	if order == Natural {
		// Only the lower half of the stencil: the offsets of negative shift.
		lowerOffsets := offsets[:0:0]
		for _, o := range offsets {
			if (o[2]*m+o[1])*m+o[0] < 0 {
				lowerOffsets = append(lowerOffsets, o)
			}
		}
		return stencilMatrix(m, m, m, lowerOffsets, centre)
	}
	return ordered(stencilMatrix(m, m, m, offsets, centre), order)
}

// DenseLower returns the dense n×n lower triangle: every l_ij with j < i
// drawn from U(−1, 1) (PCG seeded with n), l_ii = 1 + 2·Σ_{j<i}|l_ij|.
// nnz = n(n+1)/2 and n levels (row i depends on every earlier row). At
// n = 2000: nnz = 2,001,000, 2000 levels. It panics for n < 0.
func DenseLower(n int) *sparse.CSR {
	if n < 0 {
		panic(fmt.Sprintf("suite: DenseLower(%d)", n))
	}
	rng := newRNG(uint64(n), 0x64656e7365)
	b := newBuilder(n, n*(n+1)/2)
	cols := make([]int32, 0, n)
	var vals []float64
	for i := range n {
		cols = cols[:0]
		for j := range i {
			cols = append(cols, int32(j))
		}
		vals = b.randomRow(cols, rng, vals)
	}
	return b.done()
}

// Banded returns the n×n lower band with k subdiagonals, all stored: row
// i depends on rows max(0, i−k) … i−1, each entry −1, diagonal 2k+1. nnz
// = (k+1)n − k(k+1)/2 for k < n, and n levels for k ≥ 1 (1 for k = 0).
// It panics for n < 0 or k < 0.
func Banded(n, k int) *sparse.CSR {
	if n < 0 || k < 0 {
		panic(fmt.Sprintf("suite: Banded(%d, %d)", n, k))
	}
	k = min(k, max(n-1, 0))
	b := newBuilder(n, (k+1)*n-k*(k+1)/2)
	cols := make([]int32, 0, k)
	vals := make([]float64, 0, k)
	for i := range n {
		cols, vals = cols[:0], vals[:0]
		for j := max(0, i-k); j < i; j++ {
			cols, vals = append(cols, int32(j)), append(vals, -1)
		}
		b.row(cols, vals, float64(2*k+1))
	}
	return b.done()
}
