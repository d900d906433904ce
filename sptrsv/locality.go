package sptrsv

import (
	"fmt"
	"slices"
	"sync"
)

// DefaultCapacity is the capacity of AnalyzeLocality when
// LocalityOptions.Capacity is 0: 1024 rows, whose float64 x takes 8 KiB
// of a GPU block's shared memory.
const DefaultCapacity = 1024

// DefaultCapacityFloat32 is the capacity that gives float32 solves the
// shared memory of DefaultCapacity's float64 ones: 2048 rows, 8 KiB.
const DefaultCapacityFloat32 = 2048

// LocalityOptions are the parameters of Picciau et al.'s analysis.
type LocalityOptions struct {
	// Capacity is S (the paper's n_max): the most rows of one
	// sub-graph, those whose x a GPU block keeps in shared memory. 0
	// means DefaultCapacity; DefaultCapacityFloat32 suits float32
	// solves.
	Capacity int
}

// LocalityStats describe the partition and the schedule of a Locality:
// the terms of the paper's performance model (its equation 5).
type LocalityStats struct {
	N        int // order
	Capacity int // S, the most rows of a sub-graph

	Subgraphs int
	// Levels is the number of sub-graph levels: the kernel launches of
	// the GPU solve, one after another.
	Levels int
	// MaxSubgraphsPerLevel is the widest sub-graph level: the most
	// blocks of one launch.
	MaxSubgraphsPerLevel int
	// MinRows, MaxRows and MeanRows (N/Subgraphs) are the rows per
	// sub-graph.
	MinRows, MaxRows int
	MeanRows         float64

	// InternalEdges join two rows of one sub-graph (x read from shared
	// memory), ExternalEdges a row of an earlier sub-graph level to one
	// of the sub-graph (x read from global memory). Their sum is the
	// number of off-diagonal entries.
	InternalEdges, ExternalEdges int
	// Slots is the number of time slots of the internal edges, summed
	// over the sub-graphs, and MaxSlots the most of one sub-graph;
	// ExternalSlots and MaxExternalSlots count the external ones alike.
	Slots, MaxSlots                 int
	ExternalSlots, MaxExternalSlots int
	// CriticalSlots is the sum over the sub-graph levels of the most
	// slots (external and internal) of one of the level's sub-graphs:
	// the model's Σ_p max_g (n'_slots,g + n_slots,g) with τ = τ' = 1.
	CriticalSlots int
}

// LocalityPlan holds the partition and the schedule of a Locality in
// flat arrays that a GPU kernel reads as they are: one launch per
// sub-graph level, one block per sub-graph, the x of the sub-graph's rows
// in shared memory (x_loc, indexed by the row's local index). Sub-graphs
// are numbered level by level, rows position by position. All index
// arrays are int32; the value arrays are in the precision of the solve.
//
// Sub-graph g runs:
//
//	x_loc[p] = b[Rows[RowPtr[g]+p]]                 for every local row p
//	for s in ExtSlotPtr[g] .. ExtSlotPtr[g+1]−1:    external slots
//	    for e in ExtPtr[s] .. ExtPtr[s+1]−1:         in parallel
//	        x_loc[ExtDst[e]] −= ExtVal[e] · x[ExtCol[e]]
//	for s in StepPtr[g] .. StepPtr[g+1]−1:          steps
//	    for q in StepRowPtr[s] .. StepRowPtr[s+1]−1: in parallel
//	        x_loc[q−RowPtr[g]] /= Diag[q]            (rows now final)
//	    for e in EdgePtr[s] .. EdgePtr[s+1]−1:       in parallel (slot)
//	        x_loc[EdgeDst[e]] −= EdgeVal[e] · x_loc[EdgeSrc[e]]
//	x[Rows[RowPtr[g]+p]] = x_loc[p]                 for every local row p
//
// with a barrier (__syncthreads) after the loads, after every external
// slot, after every division and after every slot. No two edges of a
// slot (external or internal) write one row, and an internal edge reads
// a row only after its division, so the edges of a slot run in any
// order, in parallel, without atomics. ExtCol names rows of sub-graphs of
// earlier levels only, which earlier launches have written to x.
type LocalityPlan[T Float] struct {
	// N is the order.
	N int
	// LevelPtr (length Levels+1): the sub-graphs of level l are
	// LevelPtr[l] .. LevelPtr[l+1]−1.
	LevelPtr []int32
	// RowPtr (length Subgraphs+1) and Rows (length N): the rows of
	// sub-graph g are Rows[RowPtr[g]:RowPtr[g+1]]; the local index of
	// the row at position q is q − RowPtr[g]. Within a sub-graph the rows
	// are sorted by the step of their division, then by row.
	RowPtr, Rows []int32
	// Diag (length N): the divisor of the row at position q (its
	// diagonal entry; 1 with a unit diagonal).
	Diag []T
	// ExtSlotPtr (length Subgraphs+1): the external slots of sub-graph
	// g. ExtPtr (one more than the external slots): the external edges
	// of slot s are ExtPtr[s] .. ExtPtr[s+1]−1; edge e subtracts
	// ExtVal[e] · x[ExtCol[e]] (ExtCol a global row) from local row
	// ExtDst[e]. Slot k of a sub-graph holds the (k+1)-th external entry
	// (in column order) of each row that has one, sorted by ExtDst.
	ExtSlotPtr, ExtPtr, ExtCol, ExtDst []int32
	ExtVal                             []T
	// StepPtr (length Subgraphs+1): the steps of sub-graph g, one more
	// than its internal slots (the last step divides and has no edges).
	// StepRowPtr (one more than the steps): step s first divides the
	// rows at positions StepRowPtr[s] .. StepRowPtr[s+1]−1 (a range of
	// the sub-graph's positions, all of whose entries have been
	// subtracted), then applies its slot: the internal edges EdgePtr[s]
	// .. EdgePtr[s+1]−1, edge e subtracting EdgeVal[e] · x_loc[EdgeSrc[e]]
	// from x_loc[EdgeDst[e]] (both local indices), sorted by EdgeDst.
	StepPtr, StepRowPtr, EdgePtr, EdgeSrc, EdgeDst []int32
	EdgeVal                                        []T
}

// Locality is Picciau et al.'s analysis of a triangle: its rows cut into
// sub-graphs of at most Capacity rows, the sub-graphs in sub-graph
// levels (a sub-graph depends only on sub-graphs of earlier levels), and
// every entry given a time slot within its sub-graph. It is made by
// AnalyzeLocality, read-only afterwards, and used by SolveLocality and
// Plan; concurrent solves are safe.
type Locality struct {
	an       *Analysis
	capacity int
	sub      []int32 // the sub-graph of every row
	maxRows  int
	stats    LocalityStats

	plan   LocalityPlan[float64]
	once32 sync.Once
	plan32 *LocalityPlan[float32]
}

// AnalyzeLocality partitions the triangle of an into sub-graphs and
// schedules their entries in time slots after Picciau, Inggs, Wickerson,
// Kerrigan and Constantinides, "Balancing locality and concurrency:
// solving sparse triangular systems on GPUs" (HiPC 2016).
//
// The partitioning stage (the paper's Algorithm 3) works on each weakly
// connected component of the dependency graph. A component of at most S
// rows is packed whole into a sub-graph, together with the components
// that follow it in the order of the dependencies while they fit. A
// larger component of m rows gets n_split = ⌈m/S⌉ sub-graphs, numbered
// 1..n_split, and is walked level by level (the level sets of an): its
// roots (the rows of level 0), in row order (the sorting criterion κ),
// are dealt round-robin to sub-graphs 1..n_init, n_init = min(n_split,
// roots); every other row goes to the highest-numbered sub-graph p of
// the rows it depends on or, when p holds S rows, to the first one after
// p that has room (ASSOCIATE_SUBG, which the paper names without
// spelling out). Rows depend on rows of their own or of lower-numbered
// sub-graphs only, so the sub-graphs form a directed acyclic graph. An
// attempt fails when a row finds no room up to n_split, and the
// component is cut again with half the n_init, down to n_init = 1 (the
// sub-graphs fill one after another: there is always room). Of the
// attempts that succeed, the one with the fewest sub-graph levels is
// kept: the paper's analysis aims first at few sub-graph levels, the
// launches of its performance model (equation 5). The sub-graph levels
// are the level sets of the graph of the sub-graphs.
//
// The scheduling stage (the paper's Algorithms 4 and 5) gives every
// entry of a sub-graph a time slot. The k-th external entry of a row
// (its source in an earlier sub-graph) goes to external slot k. The
// internal entries are placed in the order of the dependencies: an entry
// from row j is ready at the step t_j at which x_j is final; the entries
// into row i are sorted by readiness and each takes the first slot at or
// after its readiness not taken by another entry into row i (the
// conflict fix: no two writes of one row in one slot); row i is final at
// step t_i = 1 + its last slot (0 without internal entries), when it is
// divided by its diagonal.
//
// The errors name the triangle: a nil Analysis or a negative capacity.
func AnalyzeLocality(an *Analysis, opts LocalityOptions) (*Locality, error) {
	if an == nil {
		return nil, fmt.Errorf("sptrsv: locality analysis of a nil Analysis")
	}
	s := opts.Capacity
	if s == 0 {
		s = DefaultCapacity
	}
	if s < 0 {
		return nil, fmt.Errorf("sptrsv: locality analysis of the %s triangle of order %d: capacity %d, want at least 1 row", an.triangle, an.n, opts.Capacity)
	}
	s = min(s, max(an.n, 1))
	loc := &Locality{an: an, capacity: s}
	nSub := loc.partition()
	loc.order(nSub)
	loc.schedule()
	return loc, nil
}

// depRow returns the t-th row in the order of the dependencies.
func (an *Analysis) depRow(t int) int {
	if an.triangle == Upper {
		return an.n - 1 - t
	}
	return t
}

// partition assigns every row to a sub-graph (provisional numbers, which
// run in a topological order of the sub-graph graph; some may be empty)
// and returns the number of provisional sub-graphs.
func (loc *Locality) partition() int {
	an := loc.an
	n, capacity := an.n, int32(loc.capacity)

	// Weakly connected components, with union–find, numbered in the
	// order of the dependencies of their first row.
	parent := make([]int32, n)
	for i := range parent {
		parent[i] = int32(i)
	}
	find := func(i int32) int32 {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for i := range n {
		for k := an.rowPtr[i]; k < an.rowPtr[i+1]; k++ {
			if j := an.col[k]; int(j) != i {
				a, b := find(int32(i)), find(j)
				if a != b {
					parent[max(a, b)] = min(a, b)
				}
			}
		}
	}
	comp := make([]int32, n)
	for i := range comp {
		comp[i] = -1
	}
	var compSize []int32
	for t := range n {
		i := an.depRow(t)
		r := find(int32(i))
		if comp[r] < 0 {
			comp[r] = int32(len(compSize))
			compSize = append(compSize, 0)
		}
		comp[i] = comp[r]
		compSize[comp[i]]++
	}
	nComp := len(compSize)

	// The rows of every component in level order (ascending rows within
	// a level): a stable counting sort of perm by component.
	compPtr := make([]int32, nComp+1)
	for c, s := range compSize {
		compPtr[c+1] = compPtr[c] + s
	}
	next := slices.Clone(compPtr[:nComp])
	verts := make([]int32, n)
	for _, i := range an.perm {
		c := comp[i]
		verts[next[c]] = i
		next[c]++
	}

	sub := make([]int32, n)
	nSub := int32(0)
	bin, binFill := int32(-1), int32(0)
	var fill, free, grouped, best []int32
	for c := range nComp {
		vs := verts[compPtr[c]:compPtr[c+1]]
		m := int32(len(vs))
		if m <= capacity {
			if bin < 0 || binFill+m > capacity {
				bin, binFill = nSub, 0
				nSub++
			}
			for _, v := range vs {
				sub[v] = bin
			}
			binFill += m
			continue
		}
		nSplit := (m + capacity - 1) / capacity
		roots := int32(0)
		for roots < m && an.level[vs[roots]] == 0 {
			roots++
		}
		if cap(fill) < int(nSplit) {
			fill = make([]int32, nSplit)
			free = make([]int32, nSplit+1)
		}
		fill, free = fill[:nSplit], free[:nSplit+1]
		// Every n_init of the halving sequence that finds room is a
		// feasible partition; the one with the fewest sub-graph levels
		// (the first of those) is kept.
		bestLevels := int32(-1)
		for nInit := min(nSplit, roots); nInit >= 1; nInit /= 2 {
			if !loc.assign(vs, roots, nInit, nSub, capacity, sub, fill, free) {
				continue
			}
			l := loc.componentLevels(vs, nSub, sub, fill, &grouped)
			if bestLevels < 0 || l < bestLevels {
				bestLevels = l
				best = best[:0]
				for _, v := range vs {
					best = append(best, sub[v])
				}
			}
			if l <= 2 {
				break // a component cut in two or more has two levels at least
			}
		}
		if bestLevels < 0 {
			panic("sptrsv: locality partition found no room with one initial sub-graph")
		}
		for t, v := range vs {
			sub[v] = best[t]
		}
		nSub += nSplit
	}
	loc.sub = sub
	return int(nSub)
}

// componentLevels returns the number of sub-graph levels of the
// component whose rows are vs, assigned to sub-graphs base ..
// base+len(count)−1 (numbered in a topological order); count is
// scratch (it holds the rows of every sub-graph on return), grouped
// scratch for the rows sorted by sub-graph.
func (loc *Locality) componentLevels(vs []int32, base int32, sub, count []int32, grouped *[]int32) int32 {
	an := loc.an
	nSplit := len(count)
	clear(count)
	for _, v := range vs {
		count[sub[v]-base]++
	}
	// count becomes the end of every sub-graph's rows in grouped, then,
	// after the fill, its start; the levels of the sub-graphs follow the
	// rows in grouped.
	for q := 1; q < nSplit; q++ {
		count[q] += count[q-1]
	}
	g := slices.Grow((*grouped)[:0], 2*len(vs))[:len(vs)+nSplit]
	*grouped = g
	rows, level := g[:len(vs)], g[len(vs):]
	for t := len(vs) - 1; t >= 0; t-- {
		v := vs[t]
		q := sub[v] - base
		count[q]--
		rows[count[q]] = v
	}
	nLevels := int32(0)
	for q := range nSplit {
		end := int32(len(vs))
		if q+1 < nSplit {
			end = count[q+1]
		}
		l := int32(0)
		for _, v := range rows[count[q]:end] {
			for k := an.rowPtr[v]; k < an.rowPtr[v+1]; k++ {
				if j := an.col[k]; j != v {
					if h := sub[j] - base; h != int32(q) {
						l = max(l, level[h]+1)
					}
				}
			}
		}
		level[q] = l
		if count[q] < end {
			nLevels = max(nLevels, l+1)
		}
	}
	return nLevels
}

// assign is one attempt of Algorithm 3 on the component whose rows are
// vs (level order, its roots first): the roots dealt round-robin to the
// first nInit sub-graphs, every other row to the highest sub-graph of its dependencies or
// the next one with room. The sub-graphs are base .. base+len(fill)−1.
// It reports false when a row finds no room.
func (loc *Locality) assign(vs []int32, roots, nInit, base, capacity int32, sub, fill, free []int32) bool {
	an := loc.an
	nSplit := int32(len(fill))
	for q := range fill {
		fill[q] = 0
	}
	for q := range free {
		free[q] = int32(q)
	}
	// room returns the first sub-graph at or after q that has room
	// (nSplit when none), compressing the path of full ones.
	room := func(q int32) int32 {
		r := q
		for free[r] != r {
			r = free[r]
		}
		for free[q] != r {
			q, free[q] = free[q], r
		}
		return r
	}
	for t, v := range vs {
		var p int32
		if int32(t) < roots {
			p = int32(t) % nInit
		} else {
			for k := an.rowPtr[v]; k < an.rowPtr[v+1]; k++ {
				if j := an.col[k]; j != v {
					p = max(p, sub[j]-base)
				}
			}
		}
		q := room(p)
		if q == nSplit {
			return false
		}
		sub[v] = base + q
		if fill[q]++; fill[q] == capacity {
			free[q] = q + 1
		}
	}
	return true
}

// order drops the empty provisional sub-graphs, finds the sub-graph
// levels and renumbers the sub-graphs level by level (provisional order
// within a level); it sets sub, RowPtr, Rows (ascending within a
// sub-graph, sorted again by schedule) and LevelPtr.
func (loc *Locality) order(nSub int) {
	an := loc.an
	n := an.n
	count := make([]int32, nSub+1)
	for _, g := range loc.sub {
		count[g+1]++
	}
	// Rows grouped by provisional sub-graph, ascending.
	ptr := make([]int32, nSub+1)
	for g := range nSub {
		ptr[g+1] = ptr[g] + count[g+1]
	}
	next := slices.Clone(ptr[:nSub])
	rows := make([]int32, n)
	for i, g := range loc.sub {
		rows[next[g]] = int32(i)
		next[g]++
	}
	// Sub-graph levels in provisional order, which is topological.
	level := make([]int32, nSub)
	nLevels := int32(0)
	for g := range nSub {
		if ptr[g] == ptr[g+1] {
			continue
		}
		l := int32(0)
		for _, v := range rows[ptr[g]:ptr[g+1]] {
			for k := an.rowPtr[v]; k < an.rowPtr[v+1]; k++ {
				if j := an.col[k]; j != v {
					if h := loc.sub[j]; h != int32(g) {
						l = max(l, level[h]+1)
					}
				}
			}
		}
		level[g] = l
		nLevels = max(nLevels, l+1)
	}
	// Renumber level by level.
	levelPtr := make([]int32, nLevels+1)
	for g := range nSub {
		if ptr[g] < ptr[g+1] {
			levelPtr[level[g]+1]++
		}
	}
	for l := range nLevels {
		levelPtr[l+1] += levelPtr[l]
	}
	nextID := slices.Clone(levelPtr[:nLevels])
	final := make([]int32, nSub)
	nFinal := int(levelPtr[nLevels])
	rowPtr := make([]int32, nFinal+1)
	for g := range nSub {
		if ptr[g] < ptr[g+1] {
			f := nextID[level[g]]
			nextID[level[g]]++
			final[g] = f
			rowPtr[f+1] = ptr[g+1] - ptr[g]
		}
	}
	for f := range nFinal {
		rowPtr[f+1] += rowPtr[f]
	}
	p := &loc.plan
	p.N = n
	p.LevelPtr = levelPtr
	p.RowPtr = rowPtr
	p.Rows = make([]int32, n)
	for g := range nSub {
		if ptr[g] < ptr[g+1] {
			f := final[g]
			copy(p.Rows[rowPtr[f]:rowPtr[f+1]], rows[ptr[g]:ptr[g+1]])
		}
	}
	for i, g := range loc.sub {
		loc.sub[i] = final[g]
	}
}

// schedule gives every entry of every sub-graph its slot (the paper's
// Algorithms 4 and 5), sorts the rows of every sub-graph by the step of
// their division and fills the slot arrays of the plan.
func (loc *Locality) schedule() {
	an := loc.an
	p := &loc.plan
	n := an.n
	nSub := len(p.RowPtr) - 1
	step := make([]int32, n)           // t_i: the step at which row i is final
	slot := make([]int32, len(an.col)) // the slot of every entry
	local := make([]int32, n)          // the local index of every row
	type ready struct{ t, k int32 }
	var in []ready
	var byStep, deps []int32
	var extCount, edgeCount []int32

	// The internal and external entries, counted to size the arrays.
	nInt, nExtAll := 0, 0
	for v := range n {
		for k := an.rowPtr[v]; k < an.rowPtr[v+1]; k++ {
			if j := an.col[k]; int(j) != v {
				if loc.sub[j] == loc.sub[v] {
					nInt++
				} else {
					nExtAll++
				}
			}
		}
	}
	p.Diag = make([]float64, n)
	p.ExtSlotPtr = make([]int32, nSub+1)
	p.ExtPtr = append(make([]int32, 0, nSub+1), 0)
	p.StepPtr = make([]int32, nSub+1)
	p.StepRowPtr = append(make([]int32, 0, 2*nSub+1), 0)
	p.EdgePtr = append(make([]int32, 0, 2*nSub+1), 0)
	p.EdgeSrc, p.EdgeDst, p.EdgeVal = make([]int32, nInt), make([]int32, nInt), make([]float64, nInt)
	p.ExtCol, p.ExtDst, p.ExtVal = make([]int32, nExtAll), make([]int32, nExtAll), make([]float64, nExtAll)
	st := &loc.stats
	for g := range nSub {
		lo, hi := p.RowPtr[g], p.RowPtr[g+1]
		rows := p.Rows[lo:hi]
		loc.maxRows = max(loc.maxRows, int(hi-lo))
		// Rows in the order of the dependencies (rows is ascending).
		deps = append(deps[:0], rows...)
		if an.triangle == Upper {
			slices.Reverse(deps)
		}
		g32 := int32(g)
		nSteps, nExt := int32(1), int32(0)
		for _, v := range deps {
			in = in[:0]
			e := int32(0)
			for k := an.rowPtr[v]; k < an.rowPtr[v+1]; k++ {
				j := an.col[k]
				if j == v {
					continue
				}
				if loc.sub[j] == g32 {
					in = append(in, ready{step[j], k})
				} else {
					slot[k] = e
					e++
				}
			}
			nExt = max(nExt, e)
			st.ExternalEdges += int(e)
			st.InternalEdges += len(in)
			slices.SortFunc(in, func(a, b ready) int {
				if a.t != b.t {
					return int(a.t - b.t)
				}
				return int(an.col[a.k] - an.col[b.k])
			})
			last := int32(-1)
			for _, r := range in {
				s := max(r.t, last+1)
				slot[r.k] = s
				last = s
			}
			step[v] = last + 1
			nSteps = max(nSteps, last+2)
		}
		// Rows by step of division (a counting sort; ascending rows
		// within a step), and their local indices.
		byStep = slices.Grow(byStep[:0], int(nSteps)+1)[:nSteps+1]
		clear(byStep)
		for _, v := range rows {
			byStep[step[v]+1]++
		}
		for s := range nSteps {
			byStep[s+1] += byStep[s]
		}
		sorted := deps // reused: rows by step
		for _, v := range rows {
			q := byStep[step[v]]
			sorted[q] = v
			local[v] = q
			byStep[step[v]]++
		}
		copy(rows, sorted)
		for q, v := range rows {
			p.Diag[lo+int32(q)] = an.diag[v]
		}
		// Steps: the divisions (ranges of positions) and the internal
		// edges of each slot, sorted by destination.
		base := int32(len(p.StepRowPtr) - 1)
		p.StepPtr[g+1] = base + nSteps
		q := lo
		for s := range nSteps {
			for q < hi && step[p.Rows[q]] == s {
				q++
			}
			p.StepRowPtr = append(p.StepRowPtr, q)
		}
		edgeCount = slices.Grow(edgeCount[:0], int(nSteps)+1)[:nSteps+1]
		clear(edgeCount)
		extCount = slices.Grow(extCount[:0], int(nExt)+1)[:nExt+1]
		clear(extCount)
		for _, v := range rows {
			for k := an.rowPtr[v]; k < an.rowPtr[v+1]; k++ {
				if j := an.col[k]; j != v {
					if loc.sub[j] == g32 {
						edgeCount[slot[k]+1]++
					} else {
						extCount[slot[k]+1]++
					}
				}
			}
		}
		e0 := p.EdgePtr[len(p.EdgePtr)-1]
		for s := range nSteps {
			edgeCount[s+1] += edgeCount[s]
			p.EdgePtr = append(p.EdgePtr, e0+edgeCount[s+1])
		}
		x0 := p.ExtPtr[len(p.ExtPtr)-1]
		p.ExtSlotPtr[g+1] = p.ExtSlotPtr[g] + nExt
		for s := range nExt {
			extCount[s+1] += extCount[s]
			p.ExtPtr = append(p.ExtPtr, x0+extCount[s+1])
		}
		for _, v := range rows {
			for k := an.rowPtr[v]; k < an.rowPtr[v+1]; k++ {
				j := an.col[k]
				if j == v {
					continue
				}
				if loc.sub[j] == g32 {
					d := e0 + edgeCount[slot[k]]
					edgeCount[slot[k]]++
					p.EdgeSrc[d], p.EdgeDst[d], p.EdgeVal[d] = local[j], local[v], an.val[k]
				} else {
					d := x0 + extCount[slot[k]]
					extCount[slot[k]]++
					p.ExtCol[d], p.ExtDst[d], p.ExtVal[d] = j, local[v], an.val[k]
				}
			}
		}
		st.Slots += int(nSteps - 1)
		st.MaxSlots = max(st.MaxSlots, int(nSteps-1))
		st.ExternalSlots += int(nExt)
		st.MaxExternalSlots = max(st.MaxExternalSlots, int(nExt))
	}
	loc.fillStats()
}

// fillStats completes the statistics from the plan.
func (loc *Locality) fillStats() {
	p := &loc.plan
	st := &loc.stats
	st.N = p.N
	st.Capacity = loc.capacity
	st.Subgraphs = len(p.RowPtr) - 1
	st.Levels = len(p.LevelPtr) - 1
	if st.Subgraphs == 0 {
		return
	}
	st.MinRows = p.N
	for g := range st.Subgraphs {
		r := int(p.RowPtr[g+1] - p.RowPtr[g])
		st.MinRows = min(st.MinRows, r)
		st.MaxRows = max(st.MaxRows, r)
	}
	st.MeanRows = float64(p.N) / float64(st.Subgraphs)
	for l := range st.Levels {
		lo, hi := p.LevelPtr[l], p.LevelPtr[l+1]
		st.MaxSubgraphsPerLevel = max(st.MaxSubgraphsPerLevel, int(hi-lo))
		crit := 0
		for g := lo; g < hi; g++ {
			s := int(p.ExtSlotPtr[g+1]-p.ExtSlotPtr[g]) + int(p.StepPtr[g+1]-p.StepPtr[g]) - 1
			crit = max(crit, s)
		}
		st.CriticalSlots += crit
	}
}

// Analysis is the level-set analysis the Locality was made from.
func (loc *Locality) Analysis() *Analysis { return loc.an }

// Capacity is S, the most rows of a sub-graph (the requested capacity,
// or the order when that is smaller).
func (loc *Locality) Capacity() int { return loc.capacity }

// Subgraph returns the sub-graph that holds row i.
func (loc *Locality) Subgraph(i int) int { return int(loc.sub[i]) }

// Stats returns the statistics of the partition and the schedule.
func (loc *Locality) Stats() LocalityStats { return loc.stats }

// LocalityArrays returns the flat arrays of loc with values in precision T (float32
// values are rounded once, at the first call). The arrays are shared:
// the caller must not modify them.
func LocalityArrays[T Float](loc *Locality) *LocalityPlan[T] {
	if isFloat32[T]() {
		loc.once32.Do(func() {
			p := loc.plan
			loc.plan32 = &LocalityPlan[float32]{N: p.N, LevelPtr: p.LevelPtr, RowPtr: p.RowPtr, Rows: p.Rows,
				Diag: toFloat32(p.Diag), ExtSlotPtr: p.ExtSlotPtr, ExtPtr: p.ExtPtr, ExtCol: p.ExtCol, ExtDst: p.ExtDst,
				ExtVal: toFloat32(p.ExtVal), StepPtr: p.StepPtr, StepRowPtr: p.StepRowPtr, EdgePtr: p.EdgePtr,
				EdgeSrc: p.EdgeSrc, EdgeDst: p.EdgeDst, EdgeVal: toFloat32(p.EdgeVal)}
		})
		return any(loc.plan32).(*LocalityPlan[T])
	}
	return any(&loc.plan).(*LocalityPlan[T])
}
