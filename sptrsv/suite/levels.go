package suite

import "github.com/bandsolve/bandsolve/sparse"

// LevelSizes returns the number of rows on each level of the lower
// triangle a: sizes[l] rows have level l+1, where the level of row i is 1
// + the largest level of the rows j < i in its stored off-diagonal
// columns (1 when there is none). Entries with j ≥ i are not looked at.
// The work is O(n + nnz).
func LevelSizes(a *sparse.CSR) []int {
	return levelSizes(a, Lower)
}

// Levels returns the number of levels of the lower triangle a (see
// LevelSizes): the number of steps of a level-scheduled solve, 0 for an
// empty matrix.
func Levels(a *sparse.CSR) int {
	return len(LevelSizes(a))
}

// levelSizes returns the level sizes of the triangle t of a: for Lower
// those of LevelSizes; for Upper the same with the rows j > i, the rows
// visited from the last.
func levelSizes(a *sparse.CSR, t Triangle) []int {
	level := make([]int32, a.N)
	var sizes []int
	visit := func(i int) {
		l := int32(0)
		for _, j := range a.Col[a.RowPtr[i]:a.RowPtr[i+1]] {
			if t == Lower && int(j) < i || t == Upper && int(j) > i {
				l = max(l, level[j])
			}
		}
		l++
		level[i] = l
		if int(l) > len(sizes) {
			sizes = append(sizes, 0)
		}
		sizes[l-1]++
	}
	if t == Lower {
		for i := range a.N {
			visit(i)
		}
	} else {
		for i := a.N - 1; i >= 0; i-- {
			visit(i)
		}
	}
	return sizes
}
