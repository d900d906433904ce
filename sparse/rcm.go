package sparse

import (
	"cmp"
	"fmt"
	"slices"
)

// graph is the adjacency structure of a symmetric pattern without its
// diagonal: the neighbours of node i are adj[ptr[i]:ptr[i+1]], sorted.
type graph struct {
	ptr []int
	adj []int32
}

func (g *graph) n() int { return len(g.ptr) - 1 }

func (g *graph) nbrs(i int) []int32 { return g.adj[g.ptr[i]:g.ptr[i+1]] }

func (g *graph) degree(i int) int { return g.ptr[i+1] - g.ptr[i] }

// symmetricGraph returns the graph of the pattern of A + Aᵀ (A square),
// the diagonal left out; stored zeros count as entries.
func symmetricGraph(a *CSR) *graph {
	t := a.Transpose()
	g := &graph{ptr: make([]int, a.N+1), adj: make([]int32, 0, 2*a.NNZ())}
	for i := range a.N {
		r := a.Col[a.RowPtr[i]:a.RowPtr[i+1]]
		c := t.Col[t.RowPtr[i]:t.RowPtr[i+1]]
		// Merge the two sorted lists, without repeats or i itself.
		for len(r) > 0 || len(c) > 0 {
			var x int32
			switch {
			case len(c) == 0 || (len(r) > 0 && r[0] < c[0]):
				x, r = r[0], r[1:]
			case len(r) == 0 || c[0] < r[0]:
				x, c = c[0], c[1:]
			default:
				x, r, c = r[0], r[1:], c[1:]
			}
			if int(x) != i {
				g.adj = append(g.adj, x)
			}
		}
		g.ptr[i+1] = len(g.adj)
	}
	return g
}

// RCM returns the reverse Cuthill–McKee ordering of the pattern of A + Aᵀ
// (for a symmetric A, of A itself), A square, as a gather list: perm[i] is
// the old index of the node placed at i, so A.Permute(perm, perm) has the
// reduced bandwidth. Each connected component is ordered from a
// pseudo-peripheral node found by the George–Liu algorithm (repeated
// breadth-first searches from a node of minimum degree in the last level
// until the eccentricity stops growing); the nodes of a level are visited
// by increasing degree (ties by index, so the result is deterministic), and
// the whole Cuthill–McKee order is reversed at the end. Components come
// one after the other. A non-square A fails with ErrShape.
func RCM(a *CSR) ([]int, error) {
	if a.N != a.M {
		return nil, fmt.Errorf("%w: RCM needs a square matrix, got %d×%d", ErrShape, a.N, a.M)
	}
	return rcm(symmetricGraph(a), -1), nil
}

// rcm orders the nodes of g by reverse Cuthill–McKee. When anchor ≥ 0,
// the component of anchor is ordered first, from anchor itself instead of
// a pseudo-peripheral node, so after the reversal anchor is the last node.
func rcm(g *graph, anchor int) []int {
	n := g.n()
	order := make([]int, 0, n)
	placed := make([]bool, n)
	mark := make([]int, n) // BFS stamps
	stamp := 0
	var levels []int // nodes of a level structure, level by level
	// bfs builds the rooted level structure of root inside the unplaced
	// part of the graph and returns its depth (number of levels) and the
	// start of the last level in levels.
	bfs := func(root int) (depth, last int) {
		stamp++
		levels = append(levels[:0], root)
		mark[root] = stamp
		start, end := 0, 1
		for start < end {
			depth++
			last = start
			for _, x := range levels[start:end] {
				for _, y := range g.nbrs(x) {
					if !placed[y] && mark[y] != stamp {
						mark[y] = stamp
						levels = append(levels, int(y))
					}
				}
			}
			start, end = end, len(levels)
		}
		return depth, last
	}
	minDegree := func(nodes []int) int {
		best := nodes[0]
		for _, x := range nodes[1:] {
			if g.degree(x) < g.degree(best) {
				best = x
			}
		}
		return best
	}
	// pseudoPeripheral finds a pseudo-peripheral node of the component of
	// s (George–Liu): from a node r of minimum degree, search again from
	// a node of minimum degree in the last level of r while that increases
	// the eccentricity.
	pseudoPeripheral := func(s int) int {
		bfs(s)
		root := minDegree(levels)
		depth, last := bfs(root)
		for {
			x := minDegree(levels[last:])
			dx, lx := bfs(x)
			if dx <= depth {
				return root
			}
			root, depth, last = x, dx, lx
		}
	}
	byDegree := func(x, y int) int {
		if c := cmp.Compare(g.degree(x), g.degree(y)); c != 0 {
			return c
		}
		return cmp.Compare(x, y)
	}
	for s := -1; s < n; s++ {
		var root int
		switch {
		case s < 0 && anchor < 0:
			continue
		case s < 0:
			root = anchor
		case placed[s]:
			continue
		default:
			root = pseudoPeripheral(s)
		}
		// Cuthill–McKee from root.
		head := len(order)
		order = append(order, root)
		placed[root] = true
		for q := head; q < len(order); q++ {
			from := len(order)
			for _, y := range g.nbrs(order[q]) {
				if !placed[y] {
					placed[y] = true
					order = append(order, int(y))
				}
			}
			slices.SortFunc(order[from:], byDegree)
		}
	}
	slices.Reverse(order)
	return order
}
