package suite

import (
	"fmt"
	"slices"

	"github.com/bandsolve/bandsolve/sparse"
)

// powerLawWindow is the number of rows of a PowerLaw matrix per unit of
// its locality window: row i's local dependency lies among the
// n/powerLawWindow rows before it.
const powerLawWindow = 200

// PowerLaw returns an n×n lower triangle whose dependency graph grows by
// preferential attachment with locality, like the web and communication
// graphs of the papers' suites (webbase-1M, wiki-Talk). Row i (i ≥ 1) has
// about avgOffDiag off-diagonal entries (⌊avgOffDiag⌋ or ⌈avgOffDiag⌉,
// never more than i, the fraction drawn so that the mean is avgOffDiag):
// the first among the w = max(1, n/200) rows before it (uniformly), each
// other one, with probability 1/2, the end of a uniformly drawn earlier
// dependency (preferential attachment: a row is drawn in proportion to
// the number of rows that depend on it, so these in-degrees follow a
// power law with hubs) and otherwise a uniformly drawn earlier row. The
// local dependencies chain the rows into about 2.5n/w levels, so a few
// hundred whatever n is (from 10⁴ rows up); the hubs are early rows on low
// levels.
//
// The window is tuned to the measured power-law input: at n = 10⁶
// and avgOffDiag = 2.9 (seed 1), nnz = 3,899,870 and 492 levels; at
// n = 2·10⁴, 441 levels. It panics for n < 0 or avgOffDiag < 0.
func PowerLaw(n int, avgOffDiag float64, seed uint64) *sparse.CSR {
	if n < 0 || avgOffDiag < 0 {
		panic(fmt.Sprintf("suite: PowerLaw(%d, %g)", n, avgOffDiag))
	}
	rng := newRNG(seed, 0x706f776572)
	w := max(1, n/powerLawWindow)
	b := newBuilder(n, int(float64(n)*(1+avgOffDiag))+16)
	base := int(avgOffDiag)
	frac := avgOffDiag - float64(base)
	ends := make([]int32, 0, int(float64(n)*avgOffDiag)+16) // every dependency's column
	cols := make([]int32, 0, base+1)
	var vals []float64
	for i := range n {
		d := base
		if rng.Float64() < frac {
			d++
		}
		d = min(d, i)
		cols = cols[:0]
		for len(cols) < d {
			var j int32
			switch {
			case len(cols) == 0:
				j = int32(i - 1 - rng.IntN(min(w, i)))
			case len(ends) > 0 && rng.IntN(2) == 0:
				j = ends[rng.IntN(len(ends))]
			default:
				j = int32(rng.IntN(i))
			}
			if !slices.Contains(cols, j) {
				cols = append(cols, j)
			}
		}
		ends = append(ends, cols...)
		vals = b.randomRow(cols, rng, vals)
	}
	return b.done()
}

// levelRange is the first row and the number of rows of level l (0-based)
// when n rows are cut into levels near-equal contiguous ranges.
func levelRange(n, levels, l int) (first, size int) {
	first = l * n / levels
	return first, (l+1)*n/levels - first
}

// RoadLike returns an n×n lower triangle shaped like the factor of a road
// network (road_usa): the rows are cut into `levels` contiguous ranges of
// n/levels rows (near-equal), and every row of range l ≥ 1 depends on the
// row at the same relative place in range l−1 (±2 rows), and, with
// probability 1/4, on a second row near that place (±8 rows) in range l−1
// or l−2: a planar-like graph of average degree about 2.5, whose level
// sets are the ranges. So it has exactly `levels` levels of n/levels rows
// and nnz ≈ n·(2 + 1/4)·(1 − 1/levels). At n = 10⁷ and 60 levels: 60
// levels of 166,666 or 166,667 rows, nnz = 22,217,823 (seed 1).
// It panics unless 1 ≤ levels ≤ n.
func RoadLike(n, levels int, seed uint64) *sparse.CSR {
	if levels < 1 || levels > n {
		panic(fmt.Sprintf("suite: RoadLike(%d, %d): want 1 ≤ levels ≤ n", n, levels))
	}
	rng := newRNG(seed, 0x726f6164)
	b := newBuilder(n, n*9/4+16)
	// near returns a row of range l near relative place t ∈ [0, 1).
	near := func(l int, t float64, spread int) int32 {
		first, size := levelRange(n, levels, l)
		p := int(t*float64(size)) + rng.IntN(2*spread+1) - spread
		return int32(first + min(max(p, 0), size-1))
	}
	cols := make([]int32, 0, 2)
	var vals []float64
	for l := range levels {
		_, size := levelRange(n, levels, l)
		for p := range size {
			cols = cols[:0]
			if l > 0 {
				t := float64(p) / float64(size)
				cols = append(cols, near(l-1, t, 2))
				if rng.IntN(4) == 0 {
					back := 1
					if l > 1 && rng.IntN(2) == 0 {
						back = 2
					}
					if j := near(l-back, t, 8); j != cols[0] {
						cols = append(cols, j)
					}
				}
			}
			vals = b.randomRow(cols, rng, vals)
		}
	}
	return b.done()
}

// twoLevelWindow is the width of the range of first-level rows a
// second-level row of TwoLevel draws its dependencies from.
const twoLevelWindow = 64

// TwoLevel returns an n×n lower triangle of two wide levels, like the
// KKT matrices of the papers' suites (nlpkkt160): the first ⌈n/2⌉ rows are
// diagonal only; each of the other ⌊n/2⌋ rows depends on 4 distinct rows
// of the first level (fewer when it has fewer than 4 rows), drawn from a
// window of 64 rows around the row's relative place, as a constraint row
// couples nearby variables. So it has 2 levels (1 for n < 2) and nnz =
// n + 4⌊n/2⌋ for n ≥ 8. At n = 10⁷: nnz = 3·10⁷. It panics for n < 0.
func TwoLevel(n int, seed uint64) *sparse.CSR {
	if n < 0 {
		panic(fmt.Sprintf("suite: TwoLevel(%d)", n))
	}
	rng := newRNG(seed, 0x74776f)
	n1 := n - n/2
	b := newBuilder(n, n+4*(n/2))
	for range n1 {
		b.row(nil, nil, 1)
	}
	w := min(twoLevelWindow, n1)
	d := min(4, n1)
	cols := make([]int32, 0, 4)
	var vals []float64
	for p := range n / 2 {
		c := p * n1 / max(n/2, 1) // the relative place in the first level
		lo := min(max(c-w/2, 0), n1-w)
		cols = cols[:0]
		for len(cols) < d {
			j := int32(lo + rng.IntN(w))
			if !slices.Contains(cols, j) {
				cols = append(cols, j)
			}
		}
		vals = b.randomRow(cols, rng, vals)
	}
	return b.done()
}

// FEMLike returns the lower triangle of the stiffness pattern of linear
// (P1) finite elements on an m×m grid whose squares are each cut into two
// triangles along a randomly chosen diagonal: row (x, y) depends on
// (x−1, y), (x, y−1) and on (x−1, y−1) or (x+1, y−1), whichever shares a
// triangle with it, so the pattern is irregular like that of an
// unstructured mesh. Values: U(−1, 1) off the diagonal, 1 + 2·Σ|l_ij| on
// it. n = m², nnz = m² + 2m(m−1) + (m−1)², and the levels lie between
// 2m−1 and 3m−2 (the cut (x+1, y−1) adds a level per row of squares).
// It panics for m < 1.
func FEMLike(m int, seed uint64) *sparse.CSR {
	if m < 1 {
		panic(fmt.Sprintf("suite: FEMLike of a %d×%d grid", m, m))
	}
	rng := newRNG(seed, 0x66656d)
	// cut[s] for the square with lower-left corner (x, y), s = y(m−1)+x:
	// true for the diagonal from (x+1, y) to (x, y+1) ("anti"), false for
	// the one from (x, y) to (x+1, y+1).
	cut := make([]bool, (m-1)*(m-1))
	for s := range cut {
		cut[s] = rng.IntN(2) == 0
	}
	b := newBuilder(m*m, m*m+2*m*(m-1)+(m-1)*(m-1))
	cols := make([]int32, 0, 3)
	var vals []float64
	for y := range m {
		for x := range m {
			k := int32(y*m + x)
			cols = cols[:0]
			if y > 0 {
				// The square below-left of (x, y) has corners (x−1, y−1)…(x, y):
				// its "main" diagonal joins (x−1, y−1) and (x, y).
				if x > 0 && !cut[(y-1)*(m-1)+x-1] {
					cols = append(cols, k-int32(m)-1)
				}
				cols = append(cols, k-int32(m))
				// The square below-right has corners (x, y−1)…(x+1, y): its
				// "anti" diagonal joins (x+1, y−1) and (x, y).
				if x < m-1 && cut[(y-1)*(m-1)+x] {
					cols = append(cols, k-int32(m)+1)
				}
			}
			if x > 0 {
				cols = append(cols, k-1)
			}
			vals = b.randomRow(cols, rng, vals)
		}
	}
	return b.done()
}
