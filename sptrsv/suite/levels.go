package suite

import "github.com/bandsolve/bandsolve/sparse"

// LevelSizes returns the number of rows on each level of the lower
// triangle a: sizes[l] rows have level l+1, where the level of row i is 1
// + the largest level of the rows j < i in its stored off-diagonal
// columns (1 when there is none). Entries with j ≥ i are not looked at.
// The work is O(n + nnz).
func LevelSizes(a *sparse.CSR) []int {
	level := make([]int32, a.N)
	var sizes []int
	for i := range a.N {
		l := int32(0)
		for _, j := range a.Col[a.RowPtr[i]:a.RowPtr[i+1]] {
			if int(j) < i {
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
	return sizes
}

// Levels returns the number of levels of the lower triangle a (see
// LevelSizes): the number of steps of a level-scheduled solve, 0 for an
// empty matrix.
func Levels(a *sparse.CSR) int {
	return len(LevelSizes(a))
}
