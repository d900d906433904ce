package sptrsv

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/sparse"
	"github.com/bandsolve/bandsolve/sptrsv/suite"
)

// unitScaled returns a copy of a with the off-diagonal entries of every
// row divided by its diagonal entry: with a unit diagonal, the triangle
// D⁻¹T of a diagonally dominant T, as well conditioned as T. The stored
// diagonal is set to 7, which a unit solve must ignore.
func unitScaled(a *sparse.CSR) *sparse.CSR {
	u := a.Clone()
	for i := range u.N {
		d := u.At(i, i)
		for k := u.RowPtr[i]; k < u.RowPtr[i+1]; k++ {
			if int(u.Col[k]) == i {
				u.Val[k] = 7
			} else {
				u.Val[k] /= d
			}
		}
	}
	return u
}

// localityCase is a triangle of the suite in one of its four forms.
type localityCase struct {
	name string
	a    *sparse.CSR
	opts Options
}

// localityCases returns every matrix of suite.Structures as a lower and
// an upper (transposed) triangle, with a stored and with a unit diagonal.
func localityCases() []localityCase {
	var cases []localityCase
	for _, c := range suite.Structures() {
		lower := c.Build()
		for _, tri := range []Triangle{Lower, Upper} {
			a := lower
			if tri == Upper {
				a = lower.Transpose()
			}
			for _, unit := range []bool{false, true} {
				m := a
				if unit {
					m = unitScaled(a)
				}
				cases = append(cases, localityCase{
					name: fmt.Sprintf("%s/%s/unit=%v", c.Name, tri, unit),
					a:    m,
					opts: Options{Triangle: tri, UnitDiagonal: unit, Workers: 3},
				})
			}
		}
	}
	return cases
}

// shuffled returns a level order that hands out the sub-graphs of every
// level in a random order.
func shuffled(rng *rand.Rand) levelOrder {
	return func(lo, hi int32) []int32 {
		ids := make([]int32, hi-lo)
		for k := range ids {
			ids[k] = lo + int32(k)
		}
		rng.Shuffle(len(ids), func(a, b int) { ids[a], ids[b] = ids[b], ids[a] })
		return ids
	}
}

// requireSameBits fails unless x and y are equal bit for bit.
func requireSameBits[T Float](t *testing.T, x, y []T, msg string) {
	t.Helper()
	for i := range x {
		if bits(x[i]) != bits(y[i]) {
			require.Failf(t, msg, "x[%d] = %v and %v", i, x[i], y[i])
		}
	}
}

func bits[T Float](v T) uint64 {
	if isFloat32[T]() {
		return uint64(math.Float32bits(float32(v)))
	}
	return math.Float64bits(float64(v))
}

func TestLocalitySuite(t *testing.T) {
	capacities := []int{1, 7, 64, 1024}
	if raceDetector {
		capacities = []int{64}
	}
	for _, c := range localityCases() {
		an, err := Analyze(c.a, c.opts)
		require.NoError(t, err, c.name)
		n := an.N()
		rng := rand.New(rand.NewPCG(uint64(n), 25))
		b := make([]float64, n)
		b32 := make([]float32, n)
		for i := range b {
			b32[i] = float32(2*rng.Float64() - 1)
			b[i] = float64(b32[i])
		}
		seq := make([]float64, n)
		require.NoError(t, SolveSequential(an, b, seq))
		seq32 := make([]float32, n)
		require.NoError(t, SolveSequential(an, b32, seq32))
		for _, s := range capacities {
			t.Run(fmt.Sprintf("%s/S=%d", c.name, s), func(t *testing.T) {
				loc, err := AnalyzeLocality(an, LocalityOptions{Capacity: s})
				require.NoError(t, err)
				requirePlan(t, an, loc, s)

				x := make([]float64, n)
				require.NoError(t, SolveLocality(context.Background(), loc, b, x))
				assert.LessOrEqual(t, relErr(x, seq), 1e-12, "float64 against the sequential solve")
				assert.Less(t, residual(c.a, c.opts.Triangle, c.opts.UnitDiagonal, x, b), 1e-14, "float64 residual")
				again := make([]float64, n)
				require.NoError(t, solveLocality(context.Background(), loc, b, again, shuffled(rng)))
				requireSameBits(t, x, again, "sub-graphs of a level in random order")
				requireSameBits(t, x, emulate(loc, b, rng), "GPU emulation of the plan")

				x32 := make([]float32, n)
				require.NoError(t, SolveLocality(context.Background(), loc, b32, x32))
				wide, wideSeq := make([]float64, n), make([]float64, n)
				for i := range x32 {
					wide[i], wideSeq[i] = float64(x32[i]), float64(seq32[i])
				}
				assert.LessOrEqual(t, relErr(wide, wideSeq), 2e-6, "float32 against the float32 sequential solve")
				assert.LessOrEqual(t, relErr(wide, seq), 2e-6, "float32 against the float64 sequential solve")
				again32 := make([]float32, n)
				require.NoError(t, solveLocality(context.Background(), loc, b32, again32, shuffled(rng)))
				requireSameBits(t, x32, again32, "float32, sub-graphs of a level in random order")
				requireSameBits(t, x32, emulate(loc, b32, rng), "float32 GPU emulation of the plan")
			})
		}
	}
}

// emulate runs the plan of loc as the GPU runs it, a CPU emulation
// independent of SolveLocality: the sub-graphs of each level in a random
// order, and every slot as one SIMD step, all its products read before
// any of its rows is written, the writes in a random order.
func emulate[T Float](loc *Locality, b []T, rng *rand.Rand) []T {
	p := LocalityArrays[T](loc)
	unit := loc.Analysis().UnitDiagonal()
	x := make([]T, p.N)
	type write struct {
		dst int32
		v   T
	}
	var ws []write
	apply := func(xl []T) {
		rng.Shuffle(len(ws), func(a, b int) { ws[a], ws[b] = ws[b], ws[a] })
		for _, w := range ws {
			xl[w.dst] -= w.v
		}
		ws = ws[:0]
	}
	for l := range len(p.LevelPtr) - 1 {
		lo, hi := p.LevelPtr[l], p.LevelPtr[l+1]
		for _, k := range rng.Perm(int(hi - lo)) {
			g := lo + int32(k)
			r0, r1 := p.RowPtr[g], p.RowPtr[g+1]
			xl := make([]T, r1-r0)
			for q := range xl {
				xl[q] = b[p.Rows[r0+int32(q)]]
			}
			for s := p.ExtSlotPtr[g]; s < p.ExtSlotPtr[g+1]; s++ {
				for e := p.ExtPtr[s]; e < p.ExtPtr[s+1]; e++ {
					ws = append(ws, write{p.ExtDst[e], p.ExtVal[e] * x[p.ExtCol[e]]})
				}
				apply(xl)
			}
			for s := p.StepPtr[g]; s < p.StepPtr[g+1]; s++ {
				if !unit {
					for q := p.StepRowPtr[s]; q < p.StepRowPtr[s+1]; q++ {
						xl[q-r0] /= p.Diag[q]
					}
				}
				for e := p.EdgePtr[s]; e < p.EdgePtr[s+1]; e++ {
					ws = append(ws, write{p.EdgeDst[e], p.EdgeVal[e] * xl[p.EdgeSrc[e]]})
				}
				apply(xl)
			}
			for q, v := range xl {
				x[p.Rows[r0+int32(q)]] = v
			}
		}
	}
	return x
}

// requirePlan checks the partition and the schedule of loc with
// planError and the statistics against the plan.
func requirePlan(t *testing.T, an *Analysis, loc *Locality, capacity int) {
	t.Helper()
	p := LocalityArrays[float64](loc)
	require.NoError(t, planError(an, p, loc.Subgraph, capacity))
	st := loc.Stats()
	require.Equal(t, len(p.RowPtr)-1, st.Subgraphs)
	require.Equal(t, len(p.LevelPtr)-1, st.Levels)
	internal := len(p.EdgeSrc)
	assert.Equal(t, internal, st.InternalEdges)
	assert.Equal(t, len(p.ExtCol), st.ExternalEdges)
	tr, _ := an.Triangular()
	offDiag := tr.NNZ()
	if !an.UnitDiagonal() {
		offDiag -= an.N()
	}
	assert.Equal(t, offDiag, st.InternalEdges+st.ExternalEdges)
	assert.Equal(t, len(p.StepRowPtr)-1-st.Subgraphs, st.Slots)
	assert.Equal(t, len(p.ExtPtr)-1, st.ExternalSlots)
	assert.LessOrEqual(t, st.MaxRows, capacity)
	assert.GreaterOrEqual(t, st.MinRows, min(1, an.N()))
	assert.LessOrEqual(t, st.Levels, st.Subgraphs)
	assert.GreaterOrEqual(t, st.CriticalSlots, st.MaxSlots)
	assert.GreaterOrEqual(t, st.CriticalSlots, st.MaxExternalSlots)
}

// planError checks a plan against the triangle of an and returns the
// first fault it finds: the sub-graphs must partition the rows in at
// most capacity rows each (subgraph(i) naming row i's); every
// off-diagonal entry must be an edge exactly once, internal when both
// rows are in one sub-graph, external (from a sub-graph of an earlier
// level) otherwise; no two edges of a slot may write one row; an
// internal edge must read a row divided at or before its step and write
// a row divided after it; the divisors must be the diagonal.
func planError(an *Analysis, p *LocalityPlan[float64], subgraph func(int) int, capacity int) error {
	n := an.N()
	nSub := len(p.RowPtr) - 1
	nLevels := len(p.LevelPtr) - 1
	switch {
	case p.N != n || len(p.Rows) != n || len(p.Diag) != n:
		return fmt.Errorf("order %d, %d rows, %d divisors for a triangle of order %d", p.N, len(p.Rows), len(p.Diag), n)
	case len(p.ExtSlotPtr) != nSub+1 || len(p.StepPtr) != nSub+1:
		return fmt.Errorf("%d sub-graphs with %d external slot pointers and %d step pointers", nSub, len(p.ExtSlotPtr), len(p.StepPtr))
	case n == 0:
		return nil
	case p.LevelPtr[0] != 0 || int(p.LevelPtr[nLevels]) != nSub || p.RowPtr[0] != 0 || int(p.RowPtr[nSub]) != n:
		return fmt.Errorf("the levels or rows do not cover the sub-graphs or rows")
	}
	levelOf := make([]int, nSub)
	for l := range nLevels {
		if p.LevelPtr[l] >= p.LevelPtr[l+1] {
			return fmt.Errorf("sub-graph level %d is empty", l)
		}
		for g := p.LevelPtr[l]; g < p.LevelPtr[l+1]; g++ {
			levelOf[g] = l
		}
	}
	// want[i]: row i's off-diagonal entries (column, value); got[i]: the
	// plan's edges into row i.
	type entry struct {
		col int32
		val float64
	}
	tr, _ := an.Triangular()
	want := make([][]entry, n)
	for i := range n {
		for k := tr.RowPtr[i]; k < tr.RowPtr[i+1]; k++ {
			if j := tr.Col[k]; int(j) != i {
				want[i] = append(want[i], entry{j, tr.Val[k]})
			}
		}
	}
	got := make([][]entry, n)
	seen := make([]bool, n)
	written := make([]int32, capacity) // the last slot (+1) that wrote a local row
	divided := make([]int32, capacity) // the step that divides a local row
	for g := range nSub {
		lo, hi := p.RowPtr[g], p.RowPtr[g+1]
		m := hi - lo
		if m < 1 || int(m) > capacity {
			return fmt.Errorf("sub-graph %d has %d rows, capacity %d", g, m, capacity)
		}
		for q := lo; q < hi; q++ {
			r := p.Rows[q]
			if seen[r] {
				return fmt.Errorf("row %d in two sub-graphs", r)
			}
			seen[r] = true
			if subgraph(int(r)) != g {
				return fmt.Errorf("row %d at a position of sub-graph %d is said to be in %d", r, g, subgraph(int(r)))
			}
			if p.Diag[q] != an.diag[r] {
				return fmt.Errorf("row %d: divisor %g, diagonal %g", r, p.Diag[q], an.diag[r])
			}
		}
		clear(written)
		mark := int32(0)
		for s := p.ExtSlotPtr[g]; s < p.ExtSlotPtr[g+1]; s++ {
			mark++
			if p.ExtPtr[s] >= p.ExtPtr[s+1] {
				return fmt.Errorf("sub-graph %d: empty external slot", g)
			}
			for e := p.ExtPtr[s]; e < p.ExtPtr[s+1]; e++ {
				d := p.ExtDst[e]
				if d < 0 || d >= m {
					return fmt.Errorf("sub-graph %d: external edge %d writes local row %d of %d", g, e, d, m)
				}
				if written[d] == mark {
					return fmt.Errorf("sub-graph %d, external slot %d: two writes of row %d", g, s-p.ExtSlotPtr[g], p.Rows[lo+d])
				}
				written[d] = mark
				src := p.ExtCol[e]
				if src < 0 || int(src) >= n || levelOf[subgraph(int(src))] >= levelOf[g] {
					return fmt.Errorf("external edge %d → %d from a sub-graph of no earlier level", src, p.Rows[lo+d])
				}
				got[p.Rows[lo+d]] = append(got[p.Rows[lo+d]], entry{src, p.ExtVal[e]})
			}
		}
		s0, s1 := p.StepPtr[g], p.StepPtr[g+1]
		if s0 >= s1 || p.StepRowPtr[s0] != lo || p.StepRowPtr[s1] != hi || p.EdgePtr[s1-1] != p.EdgePtr[s1] {
			return fmt.Errorf("sub-graph %d: steps %d..%d do not divide its rows, or its last step has edges", g, s0, s1)
		}
		for s := s0; s < s1; s++ {
			if p.StepRowPtr[s] > p.StepRowPtr[s+1] {
				return fmt.Errorf("sub-graph %d: step %d divides a negative range", g, s-s0)
			}
			for q := p.StepRowPtr[s]; q < p.StepRowPtr[s+1]; q++ {
				divided[q-lo] = s
			}
		}
		clear(written)
		for s := s0; s < s1; s++ {
			for e := p.EdgePtr[s]; e < p.EdgePtr[s+1]; e++ {
				src, dst := p.EdgeSrc[e], p.EdgeDst[e]
				switch {
				case src < 0 || src >= m || dst < 0 || dst >= m:
					return fmt.Errorf("sub-graph %d: edge %d joins local rows %d and %d of %d", g, e, src, dst, m)
				case written[dst] == s+1:
					return fmt.Errorf("sub-graph %d, slot %d: two writes of row %d", g, s-s0, p.Rows[lo+dst])
				case divided[src] > s:
					return fmt.Errorf("sub-graph %d, slot %d reads row %d before its division", g, s-s0, p.Rows[lo+src])
				case divided[dst] <= s:
					return fmt.Errorf("sub-graph %d, slot %d writes row %d after its division", g, s-s0, p.Rows[lo+dst])
				}
				written[dst] = s + 1
				got[p.Rows[lo+dst]] = append(got[p.Rows[lo+dst]], entry{p.Rows[lo+src], p.EdgeVal[e]})
			}
		}
	}
	for i := range n {
		if !seen[i] {
			return fmt.Errorf("row %d in no sub-graph", i)
		}
		slices.SortFunc(got[i], func(a, b entry) int { return int(a.col - b.col) })
		if !slices.Equal(want[i], got[i]) {
			return fmt.Errorf("row %d: entries %v, edges %v", i, want[i], got[i])
		}
	}
	return nil
}

// smallTriangle is the lower triangle of 5 rows in which rows 0, 1 and 2
// depend on none, row 3 on rows 0, 1, 2 and row 4 on rows 0 and 3.
func smallTriangle() *sparse.CSR {
	c := sparse.NewCOO(5, 5, 10)
	for _, e := range [][3]float64{{0, 0, 2}, {1, 1, 4}, {2, 2, 8}, {3, 0, 1}, {3, 1, 1}, {3, 2, 1}, {3, 3, 2}, {4, 0, -1}, {4, 3, 1}, {4, 4, 4}} {
		c.Add(int(e[0]), int(e[1]), e[2])
	}
	return must(c.ToCSR())
}

func TestLocalityScheduleByHand(t *testing.T) {
	an := must(Analyze(smallTriangle(), Options{}))
	// One sub-graph: the three entries into row 3 are ready at step 0 and
	// take slots 0, 1, 2; row 4's entry from row 0 takes slot 0, the one
	// from row 3 (final at step 3) slot 3; row 4 is final at step 4.
	loc := must(AnalyzeLocality(an, LocalityOptions{}))
	p := LocalityArrays[float64](loc)
	assert.Equal(t, 5, loc.Capacity(), "the capacity is at most the order")
	assert.Equal(t, []int32{0, 1}, p.LevelPtr)
	assert.Equal(t, []int32{0, 5}, p.RowPtr)
	assert.Equal(t, []int32{0, 1, 2, 3, 4}, p.Rows)
	assert.Equal(t, []int32{0, 5}, p.StepPtr)
	assert.Equal(t, []int32{0, 3, 3, 3, 4, 5}, p.StepRowPtr)
	assert.Equal(t, []int32{0, 2, 3, 4, 5, 5}, p.EdgePtr)
	assert.Equal(t, []int32{0, 0, 1, 2, 3}, p.EdgeSrc)
	assert.Equal(t, []int32{3, 4, 3, 3, 4}, p.EdgeDst)
	assert.Equal(t, []float64{1, -1, 1, 1, 1}, p.EdgeVal)
	assert.Equal(t, []int32{0, 0}, p.ExtSlotPtr)
	assert.Equal(t, LocalityStats{N: 5, Capacity: 5, Subgraphs: 1, Levels: 1, MaxSubgraphsPerLevel: 1,
		MinRows: 5, MaxRows: 5, MeanRows: 5, InternalEdges: 5, Slots: 4, MaxSlots: 4, CriticalSlots: 4}, loc.Stats())

	// Capacity 2: three initial sub-graphs {0}, {1}, {2, 3} leave row 4
	// (after sub-graph 3 of 3, full) no room; one initial sub-graph fills
	// {0, 1}, {2, 3}, {4}: a chain of three levels.
	loc = must(AnalyzeLocality(an, LocalityOptions{Capacity: 2}))
	p = LocalityArrays[float64](loc)
	assert.Equal(t, []int32{0, 1, 2, 3}, p.LevelPtr)
	assert.Equal(t, []int32{0, 2, 4, 5}, p.RowPtr)
	assert.Equal(t, []int32{0, 1, 2, 3, 4}, p.Rows)
	// Sub-graph 1: row 3's entries from rows 0 and 1 are external (slots
	// 0 and 1), the one from row 2 internal. Sub-graph 2: row 4's two
	// entries are external.
	assert.Equal(t, []int32{0, 0, 2, 4}, p.ExtSlotPtr)
	assert.Equal(t, []int32{0, 1, 2, 3, 4}, p.ExtPtr)
	assert.Equal(t, []int32{0, 1, 0, 3}, p.ExtCol)
	assert.Equal(t, []int32{1, 1, 0, 0}, p.ExtDst)
	assert.Equal(t, []int32{0, 1, 3, 4}, p.StepPtr)
	assert.Equal(t, []int32{0, 2, 3, 4, 5}, p.StepRowPtr)
	st := loc.Stats()
	assert.Equal(t, 3, st.Levels)
	assert.Equal(t, 1, st.InternalEdges)
	assert.Equal(t, 4, st.ExternalEdges)
	assert.Equal(t, 0+(2+1)+2, st.CriticalSlots)

	b := []float64{2, 4, 8, 5, 3}
	want := make([]float64, 5)
	require.NoError(t, SolveSequential(an, b, want))
	for _, s := range []int{1, 2, 3, 0} {
		loc := must(AnalyzeLocality(an, LocalityOptions{Capacity: s}))
		x := make([]float64, 5)
		require.NoError(t, SolveLocality(context.Background(), loc, b, x))
		assert.Equal(t, want, x, "capacity %d", s)
	}
}

// clonePlan copies the arrays of p that the faults below modify.
func clonePlan(p *LocalityPlan[float64]) *LocalityPlan[float64] {
	c := *p
	c.Rows, c.EdgeDst, c.EdgeSrc, c.ExtCol = slices.Clone(p.Rows), slices.Clone(p.EdgeDst), slices.Clone(p.EdgeSrc), slices.Clone(p.ExtCol)
	c.StepRowPtr, c.Diag = slices.Clone(p.StepRowPtr), slices.Clone(p.Diag)
	return &c
}

func TestPlanErrorFindsFaults(t *testing.T) {
	an := must(Analyze(smallTriangle(), Options{}))
	one := must(AnalyzeLocality(an, LocalityOptions{}))
	chain := must(AnalyzeLocality(an, LocalityOptions{Capacity: 2}))
	require.NoError(t, planError(an, LocalityArrays[float64](one), one.Subgraph, 5))
	require.NoError(t, planError(an, LocalityArrays[float64](chain), chain.Subgraph, 2))
	for _, f := range []struct {
		name, msg string
		loc       *Locality
		capacity  int
		fault     func(p *LocalityPlan[float64])
	}{
		// Slot 0 holds 0 → 3 and 0 → 4: both into row 3.
		{"two writes in a slot", "slot 0: two writes of row 3", one, 5, func(p *LocalityPlan[float64]) { p.EdgeDst[1] = 3 }},
		// Row 3 divided at step 0, before its entries.
		{"early division", "writes row 3 after its division", one, 5, func(p *LocalityPlan[float64]) { copy(p.StepRowPtr[1:4], []int32{4, 4, 4}) }},
		// Slot 3 reads row 2 in place of row 3: a valid slot, but
		// row 2 → row 4 is no entry.
		{"wrong edge", "row 4: entries [{0 -1} {3 1}], edges [{0 -1} {2 1}]", one, 5, func(p *LocalityPlan[float64]) { p.EdgeSrc[4] = 2 }},
		{"capacity", "has 5 rows, capacity 4", one, 4, func(*LocalityPlan[float64]) {}},
		{"divisor", "row 1: divisor 1, diagonal 4", one, 5, func(p *LocalityPlan[float64]) { p.Diag[1] = 1 }},
		// Row 4's external entry from row 3 named as one from row 4
		// itself, a sub-graph of the same level.
		{"external of the same level", "external edge 4 → 4", chain, 2, func(p *LocalityPlan[float64]) { p.ExtCol[3] = 4 }},
		{"row twice", "row 0 in two sub-graphs", chain, 2, func(p *LocalityPlan[float64]) { p.Rows[1] = 0 }},
	} {
		p := clonePlan(LocalityArrays[float64](f.loc))
		f.fault(p)
		err := planError(an, p, f.loc.Subgraph, f.capacity)
		require.Error(t, err, f.name)
		assert.Contains(t, err.Error(), f.msg, f.name)
	}
}

func TestLocalityComponents(t *testing.T) {
	// 40 disjoint bidiagonal chains of 5 rows: components of 5 rows are
	// packed whole, as many as fit, into one sub-graph level.
	const chains, length = 40, 5
	c := sparse.NewCOO(chains*length, chains*length, 0)
	for k := range chains {
		for r := range length {
			i := k*length + r
			if r > 0 {
				c.Add(i, i-1, -1)
			}
			c.Add(i, i, 2)
		}
	}
	an := must(Analyze(must(c.ToCSR()), Options{}))
	for _, s := range []int{5, 12, 64, 1000} {
		loc := must(AnalyzeLocality(an, LocalityOptions{Capacity: s}))
		st := loc.Stats()
		perSub := min(s/length, chains)
		assert.Equal(t, 1, st.Levels, "capacity %d", s)
		assert.Equal(t, (chains+perSub-1)/perSub, st.Subgraphs, "capacity %d", s)
		assert.Equal(t, 0, st.ExternalEdges, "capacity %d", s)
		assert.Equal(t, chains*(length-1), st.InternalEdges, "capacity %d", s)
		assert.Equal(t, length-1, st.MaxSlots, "capacity %d: the chains share their slots", s)
		for k := range chains {
			assert.Equal(t, loc.Subgraph(k*length), loc.Subgraph(k*length+length-1), "chain %d split", k)
		}
	}
}

func TestLocalityKeepsFewestLevels(t *testing.T) {
	// The two-level matrix: its large component (29,766 rows, 14,766
	// roots, n_split = 30) finds no room with n_init = 30; with 15 the
	// second level funnels into a chain of 16 sub-graph levels, with 7
	// (and 3, 1) there are 3, and the analysis keeps 3.
	cs, err := suite.Small().Lookup("two-level")
	require.NoError(t, err)
	an := must(Analyze(cs.Build(), Options{}))
	st := must(AnalyzeLocality(an, LocalityOptions{Capacity: 1024})).Stats()
	assert.Equal(t, 31, st.Subgraphs)
	assert.Equal(t, 3, st.Levels)
}

func TestLocalityDeterministic(t *testing.T) {
	cs, err := suite.Small().Lookup("power-law")
	require.NoError(t, err)
	a := cs.Build()
	b := make([]float64, a.N)
	for i := range b {
		b[i] = math.Sin(float64(i))
	}
	var first []float64
	for _, w := range []int{1, 2, 3, 8} {
		an := must(Analyze(a, Options{Workers: w}))
		loc := must(AnalyzeLocality(an, LocalityOptions{Capacity: 64}))
		for range 3 {
			x := make([]float64, a.N)
			require.NoError(t, SolveLocality(context.Background(), loc, b, x))
			if first == nil {
				first = x
			}
			requireSameBits(t, first, x, fmt.Sprintf("%d workers", w))
		}
	}
}

func TestLocalityInPlace(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, tri := range []Triangle{Lower, Upper} {
		a := randomTriangle(rng, 400, 0.02, tri, false)
		an := must(Analyze(a, Options{Triangle: tri, Workers: 4}))
		loc := must(AnalyzeLocality(an, LocalityOptions{Capacity: 16}))
		b := make([]float64, a.N)
		for i := range b {
			b[i] = rng.NormFloat64()
		}
		want := make([]float64, a.N)
		require.NoError(t, SolveLocality(context.Background(), loc, b, want))
		v := slices.Clone(b)
		require.NoError(t, SolveLocality(context.Background(), loc, v, v))
		requireSameBits(t, want, v, tri.String())
	}
}

func TestLocalityErrors(t *testing.T) {
	_, err := AnalyzeLocality(nil, LocalityOptions{})
	require.Error(t, err)
	an := must(Analyze(bidiagonal(10), Options{}))
	_, err = AnalyzeLocality(an, LocalityOptions{Capacity: -1})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "lower triangle of order 10: capacity -1")

	loc := must(AnalyzeLocality(an, LocalityOptions{Capacity: 3}))
	b, x := make([]float64, 10), make([]float64, 10)
	require.ErrorIs(t, SolveLocality(context.Background(), loc, b, x[:9]), ErrShape)
	require.Error(t, SolveLocality[float64](context.Background(), nil, b, x))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, SolveLocality(ctx, loc, b, x), context.Canceled)

	empty := must(Analyze(&sparse.CSR{RowPtr: []int32{0}}, Options{}))
	loc = must(AnalyzeLocality(empty, LocalityOptions{}))
	assert.Equal(t, LocalityStats{Capacity: 1}, loc.Stats())
	require.NoError(t, SolveLocality(context.Background(), loc, []float64{}, []float64{}))
}

func TestSyncFreeFloat32(t *testing.T) {
	for _, name := range []string{"lap2d-5pt-natural", "power-law", "dense-lower", "two-level"} {
		cs, err := suite.Small().Lookup(name)
		require.NoError(t, err)
		lower := cs.Build()
		for _, tri := range []Triangle{Lower, Upper} {
			a := lower
			if tri == Upper {
				a = lower.Transpose()
			}
			for _, w := range []int{1, 3} {
				an := must(Analyze(a, Options{Triangle: tri, Workers: w}))
				rng := rand.New(rand.NewPCG(11, uint64(w)))
				b32 := make([]float32, a.N)
				b64 := make([]float64, a.N)
				for i := range b32 {
					b32[i] = float32(2*rng.Float64() - 1)
					b64[i] = float64(b32[i])
				}
				x64 := make([]float64, a.N)
				require.NoError(t, SolveSequential(an, b64, x64))
				seq32, x32 := make([]float32, a.N), make([]float32, a.N)
				require.NoError(t, SolveSequential(an, b32, seq32))
				require.NoError(t, SolveSyncFree(context.Background(), an, b32, x32))
				wide, wideSeq := make([]float64, a.N), make([]float64, a.N)
				for i := range x32 {
					wide[i], wideSeq[i] = float64(x32[i]), float64(seq32[i])
				}
				msg := fmt.Sprintf("%s, %s, %d workers", name, tri, w)
				assert.LessOrEqual(t, relErr(wide, wideSeq), 2e-6, msg)
				e := relErr(wide, x64)
				assert.LessOrEqual(t, e, 2e-6, msg)
				assert.Greater(t, e, 0.0, "%s: the float32 solve runs in float32", msg)
			}
		}
	}
}
