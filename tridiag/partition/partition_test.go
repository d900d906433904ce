package partition

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/bandsolve/bandsolve/tridiag/internal/tritest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/tridiag/internal/tri"
	"github.com/bandsolve/bandsolve/tridiag/pcr"
)

// sizes covers tiny n, powers of two, their neighbours and odd sizes up to
// 5000.
var sizes = []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 15, 16, 17, 23, 31, 32, 33, 47, 63, 64, 65, 100, 127, 128,
	129, 255, 256, 257, 333, 511, 512, 513, 1000, 1023, 1024, 1025, 2047, 2049, 3001, 4095, 4096, 4097, 5000}

var chunkSizes = []int{1, 2, 3, 4, 8, 16, 32}

const maxSize = 5000

func TestSizes(t *testing.T) {
	// levels: ⌊log2 R⌋ of cyclic reduction (Solve); steps: ⌈log2 R⌉ of PCR
	// (SolvePCR).
	for _, c := range []struct{ n, p, chunks, reduced, levels, steps int }{
		{0, 4, 0, 0, 0, 0}, {1, 1, 1, 1, 0, 0}, {1, 8, 1, 1, 0, 0}, {2, 8, 1, 2, 1, 1}, {8, 8, 1, 2, 1, 1},
		{9, 8, 2, 3, 1, 2}, {10, 8, 2, 4, 2, 2}, {16, 8, 2, 4, 2, 2}, {17, 8, 3, 5, 2, 3}, {7, 1, 7, 7, 2, 3},
		{7, 2, 4, 7, 2, 3}, {8, 2, 4, 8, 3, 3}, {64, 8, 8, 16, 4, 4}, {1024, 8, 128, 256, 8, 8},
		{4096, 4, 1024, 2048, 11, 11}, {1000, 3, 334, 667, 9, 10},
	} {
		assert.Equal(t, c.chunks, Chunks(c.n, c.p), "chunks n=%d p=%d", c.n, c.p)
		assert.Equal(t, c.reduced, ReducedSize(c.n, c.p), "reduced n=%d p=%d", c.n, c.p)
		assert.Equal(t, c.levels, Levels(c.n, c.p), "levels n=%d p=%d", c.n, c.p)
		assert.Equal(t, c.steps, Steps(c.n, c.p), "steps n=%d p=%d", c.n, c.p)
	}
}

func TestDefaultChunk(t *testing.T) {
	for n := 1; n <= 1<<15; n++ {
		p := DefaultChunk(n)
		require.GreaterOrEqual(t, p, 4, "n=%d", n)
		require.LessOrEqual(t, p, 16, "n=%d", n)
		// A GPU block of 1024 threads holds every chunk of one system up
		// to n = 16384, of 512 threads up to 8192.
		if n <= 16384 {
			require.LessOrEqual(t, Chunks(n, p), 1024, "n=%d", n)
		}
		if n <= 8192 {
			require.LessOrEqual(t, Chunks(n, p), 512, "n=%d", n)
		}
		if n > 1 {
			require.GreaterOrEqual(t, p, DefaultChunk(n-1), "n=%d: not monotone", n)
		}
	}
}

func TestSolve(t *testing.T) {
	t.Run("float32", testSolve[float32])
	t.Run("float64", testSolve[float64])
}

// testSolve compares Solve with tri.GTSV for every size and chunk size,
// checks that the inputs are unchanged, that x may alias d and that the
// workspace does not matter.
func testSolve[T tri.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	ws := NewWorkspace[T](maxSize)
	for _, n := range sizes {
		s := randSystem(r, n, 4)
		want := reference(t, s)
		a, b, c, d := tritest.Conv[T](s.a), tritest.Conv[T](s.b), tritest.Conv[T](s.c), tritest.Conv[T](s.d)
		a0, b0, c0, d0 := tritest.Clone(a), tritest.Clone(b), tritest.Clone(c), tritest.Clone(d)
		for _, p := range append(chunkSizes, n, n+5) {
			x := make([]T, n)
			require.NoError(t, Solve(a, b, c, d, x, p, ws), "n=%d p=%d", n, p)
			assert.LessOrEqual(t, tritest.RelErr(x, want), tol[T](), "n=%d p=%d", n, p)
			require.True(t, tritest.BitsEqual(a, a0) && tritest.BitsEqual(b, b0) && tritest.BitsEqual(c, c0) && tritest.BitsEqual(d, d0),
				"n=%d p=%d: inputs modified", n, p)

			// x aliasing d gives the same bits.
			dx := tritest.Clone(d)
			require.NoError(t, Solve(a, b, c, dx, dx, p, ws), "n=%d p=%d", n, p)
			assert.True(t, tritest.BitsEqual(dx, x), "n=%d p=%d: aliased result differs", n, p)

			// A workspace of exactly n rows, and a nil one, give the same bits.
			y := make([]T, n)
			require.NoError(t, Solve(a, b, c, d, y, p, NewWorkspace[T](n)))
			assert.True(t, tritest.BitsEqual(y, x), "n=%d p=%d: exact workspace differs", n, p)
			require.NoError(t, Solve(a, b, c, d, y, p, nil))
			assert.True(t, tritest.BitsEqual(y, x), "n=%d p=%d: nil workspace differs", n, p)
		}
	}
}

// TestWeakDominance: with |b| only slightly above |a| + |c| the method
// stays accurate (the reduced system is a Schur complement and inherits
// diagonal dominance).
func TestWeakDominance(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for _, n := range []int{100, 1000, 4096} {
		s := randSystem(r, n, 0)
		for i := range n {
			s.b[i] = math.Abs(s.a[i]) + math.Abs(s.c[i]) + 0.01
			if r.IntN(2) == 0 {
				s.b[i] = -s.b[i]
			}
		}
		want := reference(t, s)
		for _, p := range chunkSizes {
			x := make([]float64, n)
			require.NoError(t, Solve(s.a, s.b, s.c, s.d, x, p, nil))
			assert.LessOrEqual(t, tritest.RelErr(x, want), 1e-11, "n=%d p=%d", n, p)
		}
	}
}

// TestP1IsPCR: SolvePCR with p = 1 is PCR on the whole system (with
// reciprocals): it agrees with pcr.Solve to rounding.
func TestP1IsPCR(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	for _, n := range []int{1, 2, 3, 17, 100, 1025} {
		s := randSystem(r, n, 4)
		x, y := make([]float64, n), make([]float64, n)
		require.NoError(t, SolvePCR(s.a, s.b, s.c, s.d, x, 1, nil))
		require.NoError(t, pcr.Solve(s.a, s.b, s.c, s.d, y, nil))
		want := make([]float64, n)
		copy(want, y)
		assert.LessOrEqual(t, tritest.RelErr(x, want), 1e-14, "n=%d", n)
	}
}

// weakSystem returns an n-row weakly diagonally dominant float32 system
// with d from U(−1,1): the Poisson matrix (−1, 2, −1) or a variable
// diffusion coefficient k_{i+1/2} from U(0.5, 1.5) (a_i = −k_{i−1/2}, c_i =
// −k_{i+1/2}, b_i = k_{i−1/2} + k_{i+1/2}).
func weakSystem(r *rand.Rand, n int, variable bool) (a, b, c, d []float32) {
	a, b, c, d = make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
	kl := float32(1)
	for i := range n {
		kr := float32(1)
		if variable {
			kr = float32(0.5 + r.Float64())
		}
		a[i], b[i], c[i], d[i] = -kl, kl+kr, -kr, float32(2*r.Float64()-1)
		kl = kr
	}
	return a, b, c, d
}

// TestBackwardStable: on weakly dominant systems (condition ~n²) Solve's
// normwise backward error stays at a few unit roundoffs, as Thomas's does,
// for every size; SolvePCR's grows with the reduced system (the reason
// Stage 2 is cyclic reduction), which this test also checks, so that it
// would notice a Stage 2 that lost the property. It logs the errors of
// Solve, SolvePCR, Thomas and PCR on the whole system (pcr.Solve): the
// figures of the package documentation ("Stability") come from
// go test -run TestBackwardStable -v.
func TestBackwardStable(t *testing.T) {
	const u = 6e-8 // float32 unit roundoff
	for _, variable := range []bool{false, true} {
		for _, n := range []int{300, 4096, 1 << 16, 1 << 20} {
			r := rand.New(rand.NewPCG(9, uint64(n)))
			a, b, c, d := weakSystem(r, n, variable)
			x := make([]float32, n)
			require.NoError(t, Solve(a, b, c, d, x, 16, nil))
			eCR := tritest.BackwardError(a, b, c, d, x)
			assert.Less(t, eCR, 4*u, "n=%d variable=%v", n, variable)
			require.NoError(t, tri.Thomas(a, b, c, d, x, make([]float32, n)))
			eThomas := tritest.BackwardError(a, b, c, d, x)
			assert.Less(t, eThomas, 4*u, "Thomas n=%d variable=%v", n, variable)
			require.NoError(t, SolvePCR(a, b, c, d, x, 16, nil))
			ePCR := tritest.BackwardError(a, b, c, d, x)
			if n >= 4096 {
				assert.Greater(t, ePCR, 100*u, "PCR n=%d variable=%v", n, variable)
			}
			require.NoError(t, pcr.Solve(a, b, c, d, x, nil))
			ePlain := tritest.BackwardError(a, b, c, d, x)
			t.Logf("variable=%-5v n=%7d: Solve %.1e, SolvePCR %.1e, Thomas %.1e, pcr.Solve %.1e", variable, n, eCR, ePCR, eThomas, ePlain)
		}
	}
}

func TestBreakdown(t *testing.T) {
	t.Run("float32", testBreakdown[float32])
	t.Run("float64", testBreakdown[float64])
}

// testBreakdown plants zero pivots and checks the reported row: the
// smallest bad row of the first stage that meets one; x untouched.
func testBreakdown[T tri.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	n := 100
	base := randSystem(r, n, 4)
	type plant struct {
		rows []int // rows whose a and b are set to 0 (a zero pivot in Stage 1 when interior)
		p    int
		want int
	}
	for _, c := range []plant{
		{[]int{13}, 8, 13},          // interior row of chunk 1: Stage 1
		{[]int{23, 13}, 8, 13},      // two chunks: the smaller row
		{[]int{15}, 8, 15},          // last row of a chunk: its pivot is Stage 1 too
		{[]int{16, 45}, 8, 45},      // first row of chunk 2 is not divided in Stage 1: 45 (Stage 1) wins
		{[]int{16}, 8, 16},          // only a first row: F's B = 0 − 0·v = 0, PCR step 1
		{[]int{0}, 8, 0},            // the very first row
		{[]int{99}, 3, 99},          // the last chunk has one row (99 = 33·3): its F at PCR step 1
		{[]int{57}, 1, 57},          // p = 1: plain PCR
		{[]int{0, 41, 42}, 100, 41}, // one chunk: row 0 (F, PCR) loses to Stage 1's 41
	} {
		s := system{tritest.Clone(base.a), tritest.Clone(base.b), tritest.Clone(base.c), tritest.Clone(base.d)}
		for _, i := range c.rows {
			s.b[i] = 0
			s.a[i] = 0
			if i%c.p == 0 || c.p == 1 {
				s.c[i] = 0 // a first row: make F's B exactly 0
			}
		}
		a, b, cc, d := tritest.Conv[T](s.a), tritest.Conv[T](s.b), tritest.Conv[T](s.c), tritest.Conv[T](s.d)
		x := make([]T, n)
		for i := range x {
			x[i] = 42
		}
		err := Solve(a, b, cc, d, x, c.p, nil)
		var pe *tri.PivotError
		require.True(t, errors.As(err, &pe), "rows %v p=%d: %v", c.rows, c.p, err)
		assert.ErrorIs(t, err, tri.ErrZeroPivot)
		assert.Equal(t, c.want, pe.Row, "rows %v p=%d", c.rows, c.p)
		for i := range x {
			require.Equal(t, T(42), x[i], "x modified on error")
		}
	}
}

// TestNonFinite: an overflowing solution is returned without error (the
// caller checks), a non-finite divisor is a breakdown.
func TestNonFinite(t *testing.T) {
	a := []float32{0, 1, 1, 1}
	b := []float32{float32(math.Inf(1)), 2, 2, 2}
	c := []float32{0, 1, 1, 0}
	d := []float32{1, 1, 1, 1}
	x := make([]float32, 4)
	// Row 0 is F's B of the one chunk (p = 4): non-finite at PCR step 1.
	err := Solve(a, b, c, d, x, 4, nil)
	var pe *tri.PivotError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 0, pe.Row)
	// Row 2 is an interior pivot.
	b[0], b[2] = 2, float32(math.NaN())
	require.ErrorAs(t, Solve(a, b, c, d, x, 4, nil), &pe)
	assert.Equal(t, 2, pe.Row)
}

func TestPanics(t *testing.T) {
	v := []float64{1, 2, 3}
	assert.Panics(t, func() { _ = Solve(v, v, v, v, v, 0, nil) })
	assert.Panics(t, func() { _ = Solve(v, v, v, v[:2], v, 2, nil) })
	assert.Panics(t, func() { _ = Solve(v, v, v, v, v, 2, NewWorkspace[float64](2)) })
	assert.Panics(t, func() { NewWorkspace[float32](-1) })
	require.NoError(t, Solve([]float64{}, nil, nil, nil, nil, 3, nil))
	assert.Equal(t, 7, NewWorkspace[float32](7).Cap())
}
