//go:build cudaemu

package partemu

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tridiag/partition"
	"github.com/bandsolve/bandsolve/tuning"
)

func bits[T Float](v T) uint64 {
	if is64[T]() {
		return math.Float64bits(float64(v))
	}
	return uint64(math.Float32bits(float32(v)))
}

func isNaN[T Float](v T) bool { return v != v }

// sameBits reports whether a and b agree bit for bit, or are both NaN
// when nanOK (a NaN's bits are the CPU's, not the GPU's); it reports the
// first difference.
func sameBits[T Float](t *testing.T, what string, got, want []T, nanOK bool) bool {
	t.Helper()
	require.Equal(t, len(want), len(got), what)
	for i := range want {
		if bits(got[i]) != bits(want[i]) && !(nanOK && isNaN(got[i]) && isNaN(want[i])) {
			t.Errorf("%s: entry %d: emulated %v (%#x), CPU %v (%#x)", what, i, got[i], bits(got[i]), want[i], bits(want[i]))
			return false
		}
	}
	return true
}

// system is one tridiagonal system (a[0] and c[n−1] ignored).
type system[T Float] struct{ a, b, c, d []T }

// randSystem returns a diagonally dominant system: a, c, d from U(−1,1), b
// from U(−1,1)+4; a[0] and c[n−1] are NaN (the solvers must not read them).
func randSystem[T Float](r *rand.Rand, n int) system[T] {
	s := system[T]{make([]T, n), make([]T, n), make([]T, n), make([]T, n)}
	u := func() T { return T(r.Float64()*2 - 1) }
	for i := range n {
		s.a[i], s.b[i], s.c[i], s.d[i] = u(), u()+4, u(), u()
	}
	s.a[0], s.c[n-1] = T(math.NaN()), T(math.NaN())
	return s
}

// randSystems is g systems of randSystem.
func randSystems[T Float](r *rand.Rand, n, g int) []system[T] {
	sys := make([]system[T], g)
	for s := range sys {
		sys[s] = randSystem[T](r, n)
	}
	return sys
}

// constSystem is the constant-coefficient system of a launch with Const.
func constSystem[T Float](k Coeffs[T], d []T) system[T] {
	n := len(d)
	s := system[T]{make([]T, n), make([]T, n), make([]T, n), d}
	for i := range n {
		s.a[i], s.b[i], s.c[i] = k.CA, k.CB, k.CC
	}
	return s
}

// layout places G systems of n rows: row i of system g at off + g·bs +
// i·es of arrays of size(n, G) elements, the rest junk.
type layout struct {
	name   string
	off    int
	es, bs func(n, g int) int64
	size   func(n, g int) int
}

func one(n, g int) int64 { return 1 }

var (
	contiguous = layout{"contiguous", 0, one, func(n, g int) int64 { return int64(n) },
		func(n, g int) int { return n * g }}
	// Shifted by one element: the 16-byte copies are not aligned.
	unaligned = layout{"unaligned", 1, one, func(n, g int) int64 { return int64(n) },
		func(n, g int) int { return n*g + 2 }}
	strided = layout{"strided", 0, func(n, g int) int64 { return 2 }, func(n, g int) int64 { return int64(2*n + 3) },
		func(n, g int) int { return (2*n+3)*g + 1 }}
	interleaved = layout{"interleaved", 0, func(n, g int) int64 { return int64(g) }, one,
		func(n, g int) int { return n * g }}
	// Interleaved, shifted by one element: rows of whole but unaligned
	// 16-byte units.
	interleavedUnaligned = layout{"interleaved-unaligned", 1, func(n, g int) int64 { return int64(g) }, one,
		func(n, g int) int { return n*g + 2 }}
)

// junk fills the parts of the batch arrays that no system owns.
func junk[T Float]() T { return T(-12345.5) }

// batch is a packed batch with its systems and layout.
type batch[T Float] struct {
	n, g   int
	lay    layout
	es, bs int64
	sys    []system[T]
	k      Coeffs[T]
	d      []T
	owned  []bool // the entries that belong to a system
	lanes  int    // launches of the lanes segment kernel: systems a block (0: the segment kernel)
}

func (b *batch[T]) at(g, i int) int { return b.lay.off + int(int64(g)*b.bs+int64(i)*b.es) }

// pack lays out the systems (constant coefficients when k.Const).
func pack[T Float](sys []system[T], lay layout, k Coeffs[T]) *batch[T] {
	n, g := len(sys[0].b), len(sys)
	b := &batch[T]{n: n, g: g, lay: lay, es: lay.es(n, g), bs: lay.bs(n, g), sys: sys, k: k}
	size := lay.size(n, g)
	fill := func() []T {
		s := make([]T, size)
		for i := range s {
			s[i] = T(math.NaN())
		}
		return s
	}
	b.d, b.owned = fill(), make([]bool, size)
	if !k.Const {
		b.k.A, b.k.B, b.k.C = fill(), fill(), fill()
	}
	for s, m := range sys {
		for i := range n {
			j := b.at(s, i)
			b.owned[j] = true
			b.d[j] = m.d[i]
			if !k.Const {
				b.k.A[j], b.k.B[j], b.k.C[j] = m.a[i], m.b[i], m.c[i]
			}
		}
	}
	return b
}

// newX returns an x array of the batch's size full of junk.
func (b *batch[T]) newX() []T {
	x := make([]T, len(b.d))
	for i := range x {
		x[i] = junk[T]()
	}
	return x
}

// rows returns system g's rows of x.
func (b *batch[T]) rows(x []T, g int) []T {
	out := make([]T, b.n)
	for i := range out {
		out[i] = x[b.at(g, i)]
	}
	return out
}

// launch runs the kernel on the batch, the arrays from the layout's offset.
func (b *batch[T]) launch(p Plan, mode int, x []T, status []int32, ws *Workspace[T], sc Options) error {
	k := b.k
	o := b.lay.off
	if !k.Const {
		k.A, k.B, k.C = k.A[o:], k.B[o:], k.C[o:]
	}
	return Launch(p, mode, k, b.d[o:], x[o:], status, ws, sc)
}

func (b *batch[T]) plan(m int) Plan {
	return Plan{N: b.n, G: b.g, M: m, ES: b.es, BS: b.bs, Lanes: b.lanes}
}

// twin is partition.SolveSegmented's result for one system, with the
// reduced system of the segments it solved and that solution.
type twin[T Float] struct {
	x                  []T
	row                int // the breakdown's row, or −1
	ra, rb, rc, rd, rx []T
}

// solveTwin solves s with SolveSegmented and the given reduced solver.
func solveTwin[T Float](t *testing.T, s system[T], m int, red partition.ReducedSolver[T]) twin[T] {
	n := len(s.b)
	w := twin[T]{x: make([]T, n), row: -1}
	capture := func(a, b, c, d, x []T) error {
		w.ra, w.rb, w.rc, w.rd = slices.Clone(a), slices.Clone(b), slices.Clone(c), slices.Clone(d)
		err := red(a, b, c, d, x)
		w.rx = slices.Clone(x)
		return err
	}
	err := partition.SolveSegmented(s.a, s.b, s.c, s.d, w.x, Chunk, m, nil, capture)
	if err != nil {
		var pe *tridiag.PivotError
		require.True(t, errors.As(err, &pe), "twin: %v", err)
		w.row = pe.Row
	}
	return w
}

// check compares one launch's x and status with the twins. A system that
// broke down must be NaN in every row; the last block of the system fills
// row i in thread i mod threads, so the threads that left rows are named.
func check[T Float](t *testing.T, what string, b *batch[T], x []T, status []int32, tw []twin[T], threads int) bool {
	t.Helper()
	ok := true
	anyBad := false
	for g := range b.g {
		got := b.rows(x, g)
		if tw[g].row >= 0 {
			anyBad = true
			ok = assert.Equal(t, int32(tw[g].row+1), status[g], "%s: system %d: status", what, g) && ok
			left, first := map[int]bool{}, -1
			for i, v := range got {
				if !isNaN(v) {
					left[i%threads] = true
					if first < 0 {
						first = i
					}
				}
			}
			if first >= 0 {
				th := slices.Sorted(maps.Keys(left))
				warps := map[int]bool{}
				for _, k := range th {
					warps[k/32] = true
				}
				t.Errorf("%s: system %d broke down at row %d but x[%d] = %v: the rows of %d of the %d threads "+
					"(warps %v) are not NaN, threads %v", what, g, tw[g].row, first, got[first], len(th), threads,
					slices.Sorted(maps.Keys(warps)), th)
				ok = false
			}
			continue
		}
		ok = assert.Zero(t, status[g], "%s: system %d: status", what, g) && ok
		ok = sameBits(t, fmt.Sprintf("%s: system %d: x", what, g), got, tw[g].x, false) && ok
	}
	wantFlag := int32(0)
	if anyBad {
		wantFlag = 1
	}
	ok = assert.Equal(t, wantFlag, status[b.g], "%s: status flag", what) && ok
	ok = assert.Zero(t, status[b.g+1], "%s: status[G+1] (no completion word)", what) && ok
	for i, v := range x {
		if !b.owned[i] && bits(v) != bits(junk[T]()) {
			t.Errorf("%s: x[%d] outside the systems changed to %v", what, i, v)
			return false
		}
	}
	return ok
}

// checkReduced compares the kernel's reduced rows of every system with
// the twin's (NaN for NaN in a system that broke down).
func checkReduced[T Float](t *testing.T, what string, ws *Workspace[T], q int, tw []twin[T]) bool {
	t.Helper()
	ok := true
	for g, w := range tw {
		r := func(s []T) []T { return s[g*2*q : (g+1)*2*q] }
		nanOK := w.row >= 0
		sys := fmt.Sprintf("%s: system %d: reduced ", what, g)
		ok = sameBits(t, sys+"a", r(ws.RA), w.ra, nanOK) && ok
		ok = sameBits(t, sys+"b", r(ws.RB), w.rb, nanOK) && ok
		ok = sameBits(t, sys+"c", r(ws.RC), w.rc, nanOK) && ok
		ok = sameBits(t, sys+"d", r(ws.RD), w.rd, nanOK) && ok
	}
	return ok
}

// checkCtl checks the control words after onepass one-pass launches and
// expand expand launches on one workspace: tickets, arrivals, finished
// blocks, flags, and every key cleared.
func checkCtl(t *testing.T, what string, ws []uint64, p Plan, onepass, expand int) {
	t.Helper()
	q, groups := p.Q(), p.Groups()
	assert.Equal(t, uint64(onepass*groups*q), ws[0], "%s: tickets", what)
	for s := range groups {
		c := ws[1+4*s : 5+4*s]
		assert.Equal(t, []uint64{uint64(onepass * q), uint64((onepass + expand) * q), uint64(onepass), 0}, c,
			"%s: group %d's control words (arrivals, finished, flag, key or unused)", what, s)
	}
	if p.Lanes > 0 {
		assert.Equal(t, make([]uint64, p.G), ws[1+4*groups:1+4*groups+p.G], "%s: the systems' keys", what)
	}
}

// twins solves every system of the batch with SolveSegmented and the
// reduced solver red (constant systems with their constants).
func (b *batch[T]) twins(t *testing.T, m int, red partition.ReducedSolver[T]) []twin[T] {
	tw := make([]twin[T], b.g)
	for g, s := range b.sys {
		if b.k.Const {
			s = constSystem(b.k, s.d)
		}
		tw[g] = solveTwin(t, s, m, red)
	}
	return tw
}

// runOnePass launches the one-pass kernel launches times on one workspace,
// with a completion word as the plans do, and checks every result against
// SolveSegmented with ReducedCR.
func runOnePass[T Float](t *testing.T, what string, b *batch[T], m int, sc Options, launches int) bool {
	t.Helper()
	p := b.plan(m)
	q := p.Q()
	tw := b.twins(t, m, partition.ReducedCR[T])
	ws := NewWorkspace[T](p)
	word := uint32(1)
	for l := range launches {
		w := fmt.Sprintf("%s launch %d", what, l)
		x := b.newX()
		status := make([]int32, b.g+2)
		sc.Seed += uint64(l)
		sc.Word, sc.Seq = &word, uint32(2*l+2)
		if !assert.NoError(t, b.launch(p, OnePass, x, status, ws, sc), w) {
			return false
		}
		assert.Equal(t, sc.Seq|uint32(status[b.g]), word, "%s: the completion word", w)
		if !check(t, w, b, x, status, tw, p.Threads()) || !checkReduced(t, w, ws, q, tw) {
			return false
		}
		for g := range b.g {
			if tw[g].row < 0 && !sameBits(t, fmt.Sprintf("%s: system %d: reduced x", w, g), ws.XR[g*2*q:(g+1)*2*q], tw[g].rx, false) {
				return false
			}
		}
		checkCtl(t, w, ws.Ctl, p, l+1, 0)
	}
	return true
}

// runThreePass launches REDUCE, solves the reduced systems with
// partition.Solve in chunks of 16 on the host (as the GPU's nested plan
// does), launches EXPAND, and checks against SolveSegmented with
// ReducedPartition(16); launches times on one workspace.
func runThreePass[T Float](t *testing.T, what string, b *batch[T], m int, sc Options, launches int) bool {
	t.Helper()
	p := b.plan(m)
	q := p.Q()
	tw := b.twins(t, m, partition.ReducedPartition[T](Chunk))
	ws := NewWorkspace[T](p)
	for l := range launches {
		w := fmt.Sprintf("%s launch %d", what, l)
		x := b.newX()
		status := make([]int32, b.g+2)
		sc.Seed += uint64(l)
		if !assert.NoError(t, b.launch(p, Reduce, x, status, ws, sc), w+" reduce") {
			return false
		}
		if !checkReduced(t, w+" reduce", ws, q, tw) {
			return false
		}
		assert.Equal(t, make([]int32, b.g+2), status, "%s reduce: status", w)
		for i, v := range x {
			if bits(v) != bits(junk[T]()) {
				t.Errorf("%s reduce: wrote x[%d]", w, i)
				return false
			}
		}
		// The nested solve of the 2Q-row systems, as the GPU's partition
		// plan does it: a failed system's status and NaN in its x.
		for g := range b.g {
			r := func(s []T) []T { return s[g*2*q : (g+1)*2*q] }
			if err := partition.Solve(r(ws.RA), r(ws.RB), r(ws.RC), r(ws.RD), r(ws.XR), Chunk, nil); err != nil {
				var pe *tridiag.PivotError
				require.True(t, errors.As(err, &pe), "%s: nested solve: %v", w, err)
				ws.Nst[g], ws.Nst[b.g] = int32(pe.Row+1), 1
				for i := range r(ws.XR) {
					ws.XR[g*2*q+i] = T(math.NaN())
				}
			}
		}
		if !assert.NoError(t, b.launch(p, Expand, x, status, ws, sc), w+" expand") {
			return false
		}
		if !check(t, w, b, x, status, tw, p.Threads()) {
			return false
		}
		assert.Equal(t, make([]int32, b.g+2), ws.Nst, "%s: the nested status is cleared", w)
		checkCtl(t, w, ws.Ctl, p, 0, l+1)
	}
	return true
}

type sizeCase struct {
	n, m, g int
	why     string
}

// sizes covers Q = 1 … 8 and 32, G = 1 … 4, blocks of 2 to 8 warps, sizes that are not multiples of
// the segment or the chunk, a last chunk of one row (n ≡ 1 mod 16), and
// last segments shorter than two chunks.
var sizes = []sizeCase{
	{2, 1024, 1, "two rows"},
	{1000, 1024, 2, "one short segment"},
	{1024, 1024, 3, "one full segment"},
	{1026, 1024, 2, "a last segment of two rows"},
	{1027, 1024, 1, "a last segment of three rows"},
	{1040, 1024, 2, "a last segment of one chunk"},
	{1041, 1024, 3, "a last segment of a chunk and one row"},
	{2048 + 700, 1024, 4, "Q = 3"},
	{4*1024 + 33, 1024, 2, "Q = 5, last chunk of one row"},
	{8*1024 - 7, 1024, 1, "Q = 8"},
	{2*1536 + 100, 1536, 2, "three warps"},
	{3*2048 + 1000, 2048, 3, "four warps, Q = 4"},
	{7*2048 + 17, 2048, 1, "four warps, Q = 8, last chunk of one row"},
	{8*2048 - 100, 2048, 4, "four warps, Q = 8, G = 4"},
	{3*2560 + 77, 2560, 2, "five warps"},
	{2*4096 + 1000, 4096, 2, "eight warps"},
	{31*1024 + 10, 1024, 1, "Q = 32: every lane of the warp's reduced solve"},
}

func testSizes[T Float](t *testing.T, three bool) {
	r := rand.New(rand.NewPCG(1, 2))
	for i, c := range sizes {
		require.True(t, partition.SegmentOK(c.n, c.m, Chunk), "%+v", c)
		sys := make([]system[T], c.g)
		for g := range sys {
			sys[g] = randSystem[T](r, c.n)
		}
		q := (c.n + c.m - 1) / c.m
		lays := []layout{contiguous, unaligned, strided, interleaved}
		lay := lays[i%len(lays)]
		b := pack(sys, lay, Coeffs[T]{})
		// The fewest resident blocks that guarantee progress, and all.
		for _, res := range []int{q, 0} {
			what := fmt.Sprintf("n=%d M=%d G=%d (%s) %s resident=%d", c.n, c.m, c.g, c.why, lay.name, res)
			sc := Options{Resident: res, Seed: uint64(100 + i)}
			if three {
				runThreePass(t, what, b, c.m, sc, 2)
			} else {
				runOnePass(t, what, b, c.m, sc, 3)
			}
			if c.g == 1 {
				break
			}
		}
	}
}

func TestOnePassF32(t *testing.T)   { testSizes[float32](t, false) }
func TestOnePassF64(t *testing.T)   { testSizes[float64](t, false) }
func TestThreePassF32(t *testing.T) { testSizes[float32](t, true) }
func TestThreePassF64(t *testing.T) { testSizes[float64](t, true) }

// testLayouts runs one size in every layout, with coefficient arrays and
// with constant coefficients, in both paths.
func testLayouts[T Float](t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	n, m, g := 3*1024+500, 1024, 3
	sys := randSystems[T](r, n, g)
	for _, lay := range []layout{contiguous, unaligned, strided, interleaved} {
		for _, k := range []Coeffs[T]{{}, {CA: -1, CB: T(2.5), CC: T(-0.75), Const: true}} {
			b := pack(sys, lay, k)
			what := fmt.Sprintf("%s const=%v", lay.name, k.Const)
			sc := Options{Resident: 5, Seed: 7}
			runOnePass(t, what, b, m, sc, 2)
			runThreePass(t, what, b, m, sc, 1)
		}
	}
}

func TestLayoutsF32(t *testing.T) { testLayouts[float32](t) }
func TestLayoutsF64(t *testing.T) { testLayouts[float64](t) }

// TestAliased solves with x = d.
func TestAliased(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	n, m, g := 2*1024+300, 1024, 2
	sys := []system[float64]{randSystem[float64](r, n), randSystem[float64](r, n)}
	b := pack(sys, contiguous, Coeffs[float64]{})
	tw := make([]twin[float64], g)
	for s := range sys {
		tw[s] = solveTwin(t, sys[s], m, partition.ReducedCR[float64])
	}
	x := slices.Clone(b.d)
	status := make([]int32, g+2)
	p := b.plan(m)
	require.NoError(t, Launch(p, OnePass, b.k, x, x, status, NewWorkspace[float64](p), Options{Resident: p.Q(), Seed: 9}))
	check(t, "aliased", b, x, status, tw, p.Threads())
}

// breakdowns plant zero pivots (a = b = 0 at the rows, c = 0 too when
// first) in systems of 3372 rows in segments of 1024 (Q = 4, the last
// segment 300 rows), chunks of 16; want is the first (stage, row) that
// breaks down, the row that SolveSegmented reports.
var breakdowns = []struct {
	rows  []int
	first bool
	want  int
	why   string
}{
	{[]int{1101}, false, 1101, "a chunk's interior in segment 1: Stage 1"},
	{[]int{2248, 1101}, false, 1101, "two segments: the smaller row"},
	{[]int{1154, 2249}, false, 1154, "Stage 1 rows in two segments"},
	{[]int{2192}, true, 2192, "a chunk's first row inside segment 2: its PCR"},
	{[]int{2192, 3362}, true, 3362, "Stage 1 (3362) before segment 2's PCR (2192)"},
	{[]int{0}, true, 0, "the very first row: the reduced system of the segments"},
	{[]int{2048}, true, 2048, "a segment's first row: the reduced system of the segments"},
	{[]int{2048, 3100}, true, 3100, "Stage 1 before the segments' system"},
	{[]int{2048, 1536}, true, 1536, "a chunk's first row (PCR of segment 1) before the segments' system"},
	{[]int{3371}, false, 3371, "the last row: the last chunk's last pivot"},
	{[]int{1023}, false, 1023, "a segment's last row: its chunk's last pivot"},
	{[]int{1041, 1042}, false, 1041, "two pivots of one chunk"},
	{[]int{3072 + 287}, true, 3359, "the last row of segment 3's second-last chunk"},
}

// testBreakdown plants each breakdown in one system of a batch of three
// (two of them in the last case) and checks status, NaN and the other
// systems, in both paths, every case on one workspace per path (so the
// control words carry over from broken solves).
func testBreakdown[T Float](t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	n, m, g := 3372, 1024, 3
	base := randSystems[T](r, n, g)
	clone := func(s system[T]) system[T] {
		return system[T]{slices.Clone(s.a), slices.Clone(s.b), slices.Clone(s.c), slices.Clone(s.d)}
	}
	plant := func(s *system[T], rows []int, first bool) {
		for _, i := range rows {
			s.a[i], s.b[i] = 0, 0
			if first {
				s.c[i] = 0
			}
		}
	}
	for i, c := range breakdowns {
		sys := []system[T]{clone(base[0]), clone(base[1]), clone(base[2])}
		bad := i % g
		plant(&sys[bad], c.rows, c.first)
		if i == len(breakdowns)-1 {
			plant(&sys[(bad+1)%g], breakdowns[0].rows, breakdowns[0].first)
		}
		// The twin reports the intended row.
		for _, red := range []partition.ReducedSolver[T]{partition.ReducedCR[T], partition.ReducedPartition[T](Chunk)} {
			w := solveTwin(t, sys[bad], m, red)
			require.Equal(t, c.want, w.row, "twin: rows %v (%s)", c.rows, c.why)
		}
		b := pack(sys, contiguous, Coeffs[T]{})
		what := fmt.Sprintf("rows %v in system %d (%s)", c.rows, bad, c.why)
		sc := Options{Resident: 4 + i%3, Seed: uint64(i)}
		runOnePass(t, what+" one pass", b, m, sc, 2)
		runThreePass(t, what+" three passes", b, m, sc, 2)
	}
}

func TestBreakdownF32(t *testing.T) { testBreakdown[float32](t) }
func TestBreakdownF64(t *testing.T) { testBreakdown[float64](t) }

// TestOverflow: a finite system whose solution overflows breaks down at its
// first non-finite row (stage 19).
func TestOverflow(t *testing.T) {
	t.Run("float32", func(t *testing.T) { testOverflow[float32](t, 1e-30, 1e10) })
	t.Run("float64", func(t *testing.T) { testOverflow[float64](t, 1e-300, 1e300) })
}

func testOverflow[T Float](t *testing.T, tiny, big T) {
	r := rand.New(rand.NewPCG(9, 10))
	n, m := 2*1024+500, 1024
	sys := []system[T]{randSystem[T](r, n), randSystem[T](r, n)}
	row := 1024 + 300
	s := &sys[1]
	s.a[row], s.c[row], s.b[row], s.d[row] = 0, 0, tiny, big
	w := solveTwin(t, *s, m, partition.ReducedCR[T])
	require.GreaterOrEqual(t, w.row, 0, "the twin reports the overflow")
	b := pack(sys, strided, Coeffs[T]{})
	runOnePass(t, "overflow", b, m, Options{Resident: 3, Seed: 3}, 2)
	runThreePass(t, "overflow", b, m, Options{Resident: 3, Seed: 3}, 1)
}

// TestSchedules runs one batch under many schedules: the fewest resident
// blocks that guarantee progress (Q), a few more, all, and seeds for the
// order in which blocks start.
func TestSchedules(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	n, m, g := 5*1024+300, 1024, 3
	sys := make([]system[float32], g)
	for s := range sys {
		sys[s] = randSystem[float32](r, n)
	}
	sys[1].a[2500], sys[1].b[2500] = 0, 0 // one system breaks down
	b := pack(sys, contiguous, Coeffs[float32]{})
	q := b.plan(m).Q()
	for _, res := range []int{q, q + 1, 2*q + 1, 0} {
		for seed := range uint64(8) {
			what := fmt.Sprintf("resident=%d seed=%d", res, seed)
			if !runOnePass(t, what, b, m, Options{Resident: res, Seed: seed}, 2) {
				return
			}
		}
	}
}

// TestNonFiniteEntry: an infinite diagonal entry b_j is a bad divisor
// (Stage 1 at row j, as in SolveSegmented), but its reciprocal is 0, so the
// kernel's own values stay finite: only the last block's NaN fill marks the
// system. Every row of the system must be NaN.
//
// This test fails: segment.cuh's last block of a system reads the
// breakdown key (sys[3]) in every thread, and thread 0 clears it right
// after its own part of the fill, with no barrier in between; the threads
// (warps) that read the key after the clear skip their rows, which keep
// finite values. The emulation runs the block's threads in a random
// order after the barrier, as the GPU may run its warps.
func TestNonFiniteEntry(t *testing.T) {
	t.Run("float32", testNonFiniteEntry[float32])
	t.Run("float64", testNonFiniteEntry[float64])
}

func testNonFiniteEntry[T Float](t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	n, m, g := 3372, 1024, 3
	sys := randSystems[T](r, n, g)
	sys[1].b[1101] = T(math.Inf(1))
	for _, red := range []partition.ReducedSolver[T]{partition.ReducedCR[T], partition.ReducedPartition[T](Chunk)} {
		require.Equal(t, 1101, solveTwin(t, sys[1], m, red).row, "twin")
	}
	b := pack(sys, contiguous, Coeffs[T]{})
	for seed := range uint64(3) {
		sc := Options{Resident: 4, Seed: seed}
		runOnePass(t, fmt.Sprintf("seed %d one pass", seed), b, m, sc, 1)
		runThreePass(t, fmt.Sprintf("seed %d three passes", seed), b, m, sc, 1)
	}
}

// TestDeadlock checks the emulation itself: with fewer resident blocks
// than segments the one-pass blocks wait for a block that can never start,
// which the emulation reports instead of hanging.
func TestDeadlock(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	n, m := 3*1024+10, 1024
	b := pack([]system[float32]{randSystem[float32](r, n)}, contiguous, Coeffs[float32]{})
	p := b.plan(m)
	err := Launch(p, OnePass, b.k, b.d, b.newX(), make([]int32, 3), NewWorkspace[float32](p), Options{Resident: p.Q() - 1})
	require.ErrorIs(t, err, ErrEmulation)
	assert.Contains(t, err.Error(), "deadlock")
	// The three-pass path has no waits.
	runThreePass(t, "one resident block", b, m, Options{Resident: 1, Seed: 1}, 1)
}

// TestSharedBytes: four arrays of M elements (M a multiple of 8 units) and
// the reserve, as the plans launch the kernel (tuning.SegmentSharedBytes).
func TestSharedBytes(t *testing.T) {
	assert.Equal(t, 4*1024*4+256, SharedBytes[float32](1024))
	assert.Equal(t, 4*2048*8+256, SharedBytes[float64](2048))
	assert.Equal(t, 4*1536*8+256, SharedBytes[float64](1536))
	for _, th := range tuning.SegmentThreads {
		m := th * Chunk
		assert.Equal(t, tuning.SegmentSharedBytes(m, 4), SharedBytes[float32](m), "M=%d", m)
		assert.Equal(t, tuning.SegmentSharedBytes(m, 8), SharedBytes[float64](m), "M=%d", m)
		assert.True(t, tuning.SegmentRowsOK(m), "M=%d", m)
	}
	assert.Equal(t, SharedExtra, SharedBytes[float64](Chunk*64)-4*Chunk*64*8)
}
