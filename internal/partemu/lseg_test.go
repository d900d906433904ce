//go:build cudaemu

package partemu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/tridiag/partition"
	"github.com/bandsolve/bandsolve/tuning"
)

// lanesSizes covers the lanes segment kernel (lseg.cuh): Q = 1 … 5 and
// 32, groups of systems that the batch fills only in part (lanes without a
// system), sizes that are not multiples of the segment or the chunk, a
// last chunk of one row, last segments shorter than two chunks.
var lanesSizes = []sizeCase{
	{2, 128, 3, "two rows"},
	{100, 128, 17, "one short segment, a second group of one system"},
	{130, 128, 5, "a last segment of two rows"},
	{144, 128, 16, "a last segment of one chunk"},
	{145, 128, 9, "a last segment of a chunk and one row"},
	{3*128 + 33, 128, 20, "Q = 4, last chunk of one row"},
	{1000, 256, 40, "Q = 4, three groups"},
	{31*64 + 10, 64, 3, "Q = 32: every lane of the warps' reduced solves"},
}

// testLanesSizes runs every case with S systems a block in the
// interleaved layout (the one the plans give the kernel), and every third
// in another, one pass or three, against SolveSegmented bit for bit.
func testLanesSizes[T Float](t *testing.T, lanes int, three bool) {
	r := rand.New(rand.NewPCG(21, uint64(lanes)))
	others := []layout{contiguous, strided, unaligned}
	for i, c := range lanesSizes {
		require.True(t, partition.SegmentOK(c.n, c.m, Chunk), "%+v", c)
		if c.m/Chunk*lanes%32 != 0 {
			continue // blocks of whole warps
		}
		lays := []layout{interleaved}
		if i%3 == 0 {
			lays = append(lays, others[i/3%len(others)])
		}
		q := (c.n + c.m - 1) / c.m
		for _, lay := range lays {
			b := pack(randSystems[T](r, c.n, c.g), lay, Coeffs[T]{})
			b.lanes = lanes
			for _, res := range []int{q, 0} {
				what := fmt.Sprintf("n=%d M=%d G=%d S=%d (%s) %s resident=%d", c.n, c.m, c.g, lanes, c.why, lay.name, res)
				sc := Options{Resident: res, Seed: uint64(200 + i)}
				if three {
					runThreePass(t, what, b, c.m, sc, 2)
				} else {
					runOnePass(t, what, b, c.m, sc, 3)
				}
			}
		}
	}
}

func TestLanesSegmentsF32(t *testing.T) {
	for _, s := range []int{16, 8, 32} {
		t.Run(fmt.Sprintf("S=%d/one", s), func(t *testing.T) { testLanesSizes[float32](t, s, false) })
		t.Run(fmt.Sprintf("S=%d/three", s), func(t *testing.T) { testLanesSizes[float32](t, s, true) })
	}
}

func TestLanesSegmentsF64(t *testing.T) {
	for _, s := range []int{8, 16} {
		t.Run(fmt.Sprintf("S=%d/one", s), func(t *testing.T) { testLanesSizes[float64](t, s, false) })
		t.Run(fmt.Sprintf("S=%d/three", s), func(t *testing.T) { testLanesSizes[float64](t, s, true) })
	}
}

// TestLanesSegmentsConst: constant coefficients (d alone read), both paths.
func TestLanesSegmentsConst(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	n, m, g := 700, 128, 19
	sys := randSystems[float32](r, n, g)
	b := pack(sys, interleaved, Coeffs[float32]{CA: -0.4, CB: 1.001, CC: -0.6, Const: true})
	b.lanes = 16
	runOnePass(t, "constant one pass", b, m, Options{Resident: 6, Seed: 1}, 2)
	runThreePass(t, "constant three passes", b, m, Options{Resident: 2, Seed: 2}, 2)
}

// TestLanesSegmentsBreakdown plants breakdowns (a zero pivot of Stage 1,
// a zero row in a segment's cyclic reduction, the reduced system of the
// segments, an overflowing solution) in some systems of a group and checks
// status, NaN and the other systems of the group, both paths, on one
// workspace per path so that the keys carry over between launches.
func TestLanesSegmentsBreakdown(t *testing.T) {
	t.Run("float32", testLanesBreakdown[float32])
	t.Run("float64", testLanesBreakdown[float64])
}

func testLanesBreakdown[T Float](t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	n, m, g := 3*128+70, 128, 11
	lanes := 64 / sizeOf[T]()
	base := randSystems[T](r, n, g)
	clone := func() []system[T] {
		out := make([]system[T], g)
		for i, s := range base {
			out[i] = system[T]{slices.Clone(s.a), slices.Clone(s.b), slices.Clone(s.c), slices.Clone(s.d)}
		}
		return out
	}
	zero := func(s *system[T], rows ...int) {
		for _, i := range rows {
			s.a[i], s.b[i] = 0, 0
		}
	}
	cases := []struct {
		why  string
		bad  []int
		edit func(sys []system[T])
	}{
		{"a chunk pivot", []int{3}, func(sys []system[T]) { zero(&sys[3], 200) }},
		{"row 0 and a segment's first row", []int{0, 7}, func(sys []system[T]) {
			sys[0].b[0], sys[0].c[0] = 0, 0
			zero(&sys[7], 256)
			sys[7].c[256] = 0
		}},
		{"a non-finite diagonal", []int{10}, func(sys []system[T]) { sys[10].b[301] = T(math.Inf(1)) }},
		{"an overflowing solution", []int{5}, func(sys []system[T]) {
			s := &sys[5]
			tiny, big := 1e-30, 1e30
			if sizeOf[T]() == 8 {
				tiny, big = 1e-300, 1e300
			}
			s.a[150], s.c[150], s.b[150], s.d[150] = 0, 0, T(tiny), T(big)
		}},
	}
	for i, c := range cases {
		sys := clone()
		c.edit(sys)
		for _, k := range c.bad {
			for _, red := range []partition.ReducedSolver[T]{partition.ReducedCR[T], partition.ReducedPartition[T](Chunk)} {
				require.GreaterOrEqual(t, solveTwin(t, sys[k], m, red).row, 0, "twin of system %d (%s)", k, c.why)
			}
		}
		b := pack(sys, interleaved, Coeffs[T]{})
		b.lanes = lanes
		sc := Options{Resident: 4 + i%3, Seed: uint64(i)}
		runOnePass(t, c.why+" one pass", b, m, sc, 2)
		runThreePass(t, c.why+" three passes", b, m, sc, 2)
	}
}

// TestLanesSegmentsDeadlock: fewer resident blocks than segments deadlock
// in one pass (the emulation says so); Q suffice, whatever the order in
// which the scheduler starts blocks.
func TestLanesSegmentsDeadlock(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 28))
	n, m := 3*128+10, 128
	b := pack(randSystems[float32](r, n, 20), interleaved, Coeffs[float32]{})
	b.lanes = 16
	p := b.plan(m)
	err := Launch(p, OnePass, b.k, b.d, b.newX(), make([]int32, 22), NewWorkspace[float32](p), Options{Resident: p.Q() - 1})
	require.ErrorIs(t, err, ErrEmulation)
	assert.Contains(t, err.Error(), "deadlock")
	for seed := range uint64(6) {
		runOnePass(t, fmt.Sprintf("resident=Q seed=%d", seed), b, m, Options{Resident: p.Q(), Seed: seed}, 1)
	}
}

// TestLanesSharedBytes: the emulation's shared memory is the tuning's.
func TestLanesSharedBytes(t *testing.T) {
	for _, m := range []int{128, 256, 512} {
		for _, s := range []int{8, 16} {
			assert.Equal(t, tuning.LanesSegmentSharedBytes(m, 4, s), LanesSharedBytes[float32](m, s), "M=%d S=%d", m, s)
			assert.Equal(t, tuning.LanesSegmentSharedBytes(m, 8, s), LanesSharedBytes[float64](m, s), "M=%d S=%d", m, s)
		}
	}
}
