package tritest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/tridiag/internal/tri"
)

// Solver is an implementation under test: one entry point of an algorithm
// package, with its option (a slice size, a chunk size, a number of steps;
// unused by solvers without one) and its workspace type W, a pointer whose
// zero value asks the solver for a temporary workspace of its own.
type Solver[T tri.Float, W any] struct {
	// Solve solves the system a, b, c, d of n = len(b) rows (a[0] and
	// c[n−1] ignored) into x with option opt and workspace ws.
	Solve func(a, b, c, d, x []T, opt int, ws W) error
	// NewWorkspace returns a workspace for systems of up to n rows solved
	// with option opt.
	NewWorkspace func(n, opt int) W
	// Opts returns the options to run on an n-row system; nil runs
	// option 0 alone.
	Opts func(n int) []int
	// Grows is set when Solve grows a workspace too small for the system;
	// otherwise Solve must panic on one.
	Grows bool
	// Tol bounds the relative forward error ‖x − x*‖₂/‖x*‖₂ on diagonally
	// dominant systems.
	Tol float64
	// PivotRow returns the row Solve names when b[k] is the only bad
	// divisor of an n-row system (zero with its row and column otherwise
	// empty, NaN or ±Inf); nil means k.
	PivotRow func(n, k, opt int) int
	// Stable is set when the normwise backward error stays below four
	// unit roundoffs on weakly diagonally dominant systems of up to 2^20
	// rows, as Thomas's does.
	Stable bool
	// Pivots is set when Solve pivots: a zero diagonal with random
	// off-diagonals, nonsingular for even n, must then be solved, and
	// only the singular odd orders break down.
	Pivots bool
}

func (s Solver[T, W]) opts(n int) []int {
	if s.Opts == nil {
		return []int{0}
	}
	return s.Opts(n)
}

func (s Solver[T, W]) pivotRow(n, k, opt int) int {
	if s.PivotRow == nil {
		return k
	}
	return s.PivotRow(n, k, opt)
}

// Test runs every check of the driver on s, each as a subtest:
//
//   - Solve: the forward error against the pivoting reference for every n
//     of Sizes and every option, on a random diagonally dominant system and
//     a Toeplitz one; the inputs are not modified; x aliasing d, a workspace
//     made for exactly n rows, one reused for every size and no workspace
//     all give the same bits;
//   - RandomSizes: 200 systems of random size up to 5000 and random option;
//   - IgnoredEntries: a[0] and c[n−1] are never read (0, NaN, ±1e30, ±Inf
//     give the same bits), for every n of Sizes up to 5000;
//   - Workspace: one workspace serving sizes in a shuffled order gives the
//     bits of a fresh one;
//   - NoAllocation: a call with a workspace made for it allocates nothing;
//   - Breakdown: a zero divisor (a zero row and column in a random system,
//     a zero in a diagonal matrix) or a NaN or ±Inf diagonal entry at row k
//     is a *tri.PivotError wrapping tri.ErrZeroPivot at PivotRow(n, k), and
//     x is not written; a zero diagonal (n ≥ 3) breaks down too, or, when
//     Pivots, for odd n only (even n are solved to the reference);
//   - NeverSilentNaN: systems with entries in {−1, 0, 1} either solve to
//     finite values or report a breakdown without writing x;
//   - Lengths: slices of different lengths (and, unless Grows, a workspace
//     too small) panic; n = 0 succeeds;
//   - BackwardStable (when Stable): the backward error bound on the Poisson
//     matrix and a variable diffusion coefficient.
func Test[T tri.Float, W any](t *testing.T, s Solver[T, W]) {
	for _, c := range checks[T, W]() {
		if c.name == "BackwardStable" && !s.Stable {
			continue
		}
		t.Run(c.name, func(t *testing.T) { c.run(t, s) })
	}
}

// Both runs Test on a solver's float32 and float64 instances, as the
// subtests "float32" and "float64".
func Both[W32, W64 any](t *testing.T, s32 Solver[float32, W32], s64 Solver[float64, W64]) {
	t.Run("float32", func(t *testing.T) { Test(t, s32) })
	t.Run("float64", func(t *testing.T) { Test(t, s64) })
}

type check[T tri.Float, W any] struct {
	name string
	run  func(testing.TB, Solver[T, W])
}

func checks[T tri.Float, W any]() []check[T, W] {
	return []check[T, W]{
		{"Solve", checkSolve[T, W]},
		{"RandomSizes", checkRandomSizes[T, W]},
		{"IgnoredEntries", checkIgnoredEntries[T, W]},
		{"Workspace", checkWorkspace[T, W]},
		{"NoAllocation", checkNoAllocation[T, W]},
		{"Breakdown", checkBreakdown[T, W]},
		{"NeverSilentNaN", checkNeverSilentNaN[T, W]},
		{"Lengths", checkLengths[T, W]},
		{"BackwardStable", checkBackwardStable[T, W]},
	}
}

// pool hands out the workspace reused by every call of a check: one of
// capacity max per option, or, for a solver whose workspace grows, a
// single one for every option that starts at one row.
type pool[T tri.Float, W any] struct {
	s    Solver[T, W]
	max  int
	ws   map[int]W
	one  W
	made bool
}

func newPool[T tri.Float, W any](s Solver[T, W], max int) *pool[T, W] {
	return &pool[T, W]{s: s, max: max, ws: map[int]W{}}
}

func (p *pool[T, W]) get(opt int) W {
	if p.s.Grows {
		if !p.made {
			p.one, p.made = p.s.NewWorkspace(1, opt), true
		}
		return p.one
	}
	w, ok := p.ws[opt]
	if !ok {
		w = p.s.NewWorkspace(p.max, opt)
		p.ws[opt] = w
	}
	return w
}

func maxSize() int {
	m := 0
	for _, n := range Sizes {
		m = max(m, n)
	}
	return m
}

func checkSolve[T tri.Float, W any](t testing.TB, s Solver[T, W]) {
	r := rand.New(rand.NewPCG(1, 1))
	p := newPool(s, maxSize())
	var none W
	for _, n := range Sizes {
		sys := RandSystem(r, n, 4)
		want := Reference(t, sys)
		a, b, c, d := As[T](sys)
		a0, b0, c0, d0 := As[T](sys)
		toeplitz := Toeplitz(r, n, 0.5, -2, -1)
		wantT := Reference(t, toeplitz)
		ta, tb, tc, td := As[T](toeplitz)
		for _, opt := range s.opts(n) {
			what := fmt.Sprintf("n=%d opt=%d", n, opt)
			x := make([]T, n)
			require.NoError(t, s.Solve(a, b, c, d, x, opt, p.get(opt)), what)
			assert.Less(t, RelErr(x, want), s.Tol, what)

			dx := Clone(d)
			require.NoError(t, s.Solve(a, b, c, dx, dx, opt, p.get(opt)), what)
			assert.True(t, SameBits(dx, x), "%s: x aliasing d differs", what)

			y := make([]T, n)
			require.NoError(t, s.Solve(a, b, c, d, y, opt, s.NewWorkspace(n, opt)), what)
			assert.True(t, SameBits(y, x), "%s: a workspace of n rows differs", what)
			y = make([]T, n)
			require.NoError(t, s.Solve(a, b, c, d, y, opt, none), what)
			assert.True(t, SameBits(y, x), "%s: no workspace differs", what)

			require.True(t, SameBits(a, a0) && SameBits(b, b0) && SameBits(c, c0) && SameBits(d, d0),
				"%s: inputs modified", what)

			require.NoError(t, s.Solve(ta, tb, tc, td, x, opt, p.get(opt)), "Toeplitz %s", what)
			assert.Less(t, RelErr(x, wantT), s.Tol, "Toeplitz %s", what)
		}
	}
}

func checkRandomSizes[T tri.Float, W any](t testing.TB, s Solver[T, W]) {
	r := rand.New(rand.NewPCG(2, 2))
	p := newPool(s, 5000)
	for range 200 {
		n := 1 + r.IntN(5000)
		opts := s.opts(n)
		opt := opts[r.IntN(len(opts))]
		sys := RandSystem(r, n, 4)
		want := Reference(t, sys)
		a, b, c, d := As[T](sys)
		x := make([]T, n)
		require.NoError(t, s.Solve(a, b, c, d, x, opt, p.get(opt)), "n=%d opt=%d", n, opt)
		require.Less(t, RelErr(x, want), s.Tol, "n=%d opt=%d", n, opt)
	}
}

func checkIgnoredEntries[T tri.Float, W any](t testing.TB, s Solver[T, W]) {
	r := rand.New(rand.NewPCG(3, 3))
	p := newPool(s, maxSize())
	inf := math.Inf(1)
	for _, n := range Sizes {
		if n > 5000 {
			continue
		}
		a, b, c, d := As[T](RandSystem(r, n, 4))
		for _, opt := range s.opts(n) {
			a[0], c[n-1] = 0, 0
			x := make([]T, n)
			require.NoError(t, s.Solve(a, b, c, d, x, opt, p.get(opt)), "n=%d opt=%d", n, opt)
			for _, v := range [][2]float64{{math.NaN(), math.NaN()}, {1e30, -1e30}, {inf, -inf}} {
				a[0], c[n-1] = T(v[0]), T(v[1])
				y := make([]T, n)
				require.NoError(t, s.Solve(a, b, c, d, y, opt, p.get(opt)), "n=%d opt=%d a[0]=%v", n, opt, v[0])
				assert.True(t, SameBits(x, y), "n=%d opt=%d: a[0]=%v, c[n−1]=%v change x", n, opt, v[0], v[1])
			}
		}
	}
}

func checkWorkspace[T tri.Float, W any](t testing.TB, s Solver[T, W]) {
	r := rand.New(rand.NewPCG(4, 4))
	p := newPool(s, maxSize())
	order := append(slices.Clone(Sizes), Sizes...)
	r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	for _, n := range order {
		opts := s.opts(n)
		opt := opts[r.IntN(len(opts))]
		a, b, c, d := As[T](RandSystem(r, n, 4))
		x, y := make([]T, n), make([]T, n)
		require.NoError(t, s.Solve(a, b, c, d, x, opt, p.get(opt)), "n=%d opt=%d", n, opt)
		require.NoError(t, s.Solve(a, b, c, d, y, opt, s.NewWorkspace(n, opt)), "n=%d opt=%d", n, opt)
		assert.True(t, SameBits(x, y), "n=%d opt=%d: the reused workspace differs", n, opt)
	}
}

func checkNoAllocation[T tri.Float, W any](t testing.TB, s Solver[T, W]) {
	r := rand.New(rand.NewPCG(5, 5))
	for _, n := range []int{1, 2, 100, 1025} {
		a, b, c, d := As[T](RandSystem(r, n, 4))
		x := make([]T, n)
		for _, opt := range s.opts(n) {
			ws := s.NewWorkspace(n, opt)
			var err error
			allocs := testing.AllocsPerRun(5, func() { err = s.Solve(a, b, c, d, x, opt, ws) })
			require.NoError(t, err, "n=%d opt=%d", n, opt)
			assert.Zero(t, allocs, "n=%d opt=%d: allocations per call", n, opt)
		}
	}
}

// breakdownRows are the rows k that checkBreakdown makes bad in an n-row
// system.
func breakdownRows(n int) []int {
	if n <= 100 {
		rows := make([]int, n)
		for k := range rows {
			rows[k] = k
		}
		return rows
	}
	return []int{0, 1, 2, n / 2, n - 2, n - 1}
}

func checkBreakdown[T tri.Float, W any](t testing.TB, s Solver[T, W]) {
	r := rand.New(rand.NewPCG(6, 6))
	p := newPool(s, 4097)
	// solve asserts that the system breaks down at row want (want < 0:
	// any row) and that x is not written.
	solve := func(sys System, opt, want int, what string) {
		t.Helper()
		n := len(sys.B)
		a, b, c, d := As[T](sys)
		x := Fill[T](n, 42)
		row := PivotRow(t, s.Solve(a, b, c, d, x, opt, p.get(opt)), what)
		if want >= 0 {
			assert.Equal(t, want, row, what)
		} else {
			assert.True(t, row >= 0 && row < n, "%s: row %d", what, row)
		}
		require.True(t, SameBits(x, Fill[T](n, 42)), "%s: x written on error", what)
	}
	for _, n := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 31, 32, 33, 100, 1000, 4097} {
		for _, k := range breakdownRows(n) {
			// A zero row and column k in a random system.
			isolated := RandSystem(r, n, 4)
			isolated.A[k], isolated.B[k], isolated.C[k] = 0, 0, 0
			if k > 0 {
				isolated.C[k-1] = 0
			}
			if k < n-1 {
				isolated.A[k+1] = 0
			}
			// A diagonal matrix with b[k] = 0.
			diag := NewSystem(n)
			for i := range n {
				diag.B[i], diag.D[i] = 2, 1
			}
			diag.B[k] = 0
			cases := []struct {
				name string
				sys  System
			}{{"isolated zero", isolated}, {"diagonal zero", diag}}
			for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
				sys := RandSystem(r, n, 4)
				sys.B[k] = v
				cases = append(cases, struct {
					name string
					sys  System
				}{fmt.Sprint(v), sys})
			}
			for _, c := range cases {
				for _, opt := range s.opts(n) {
					solve(c.sys, opt, s.pivotRow(n, k, opt), fmt.Sprintf("%s at row %d, n=%d opt=%d", c.name, k, n, opt))
				}
			}
		}
	}
	// A zero diagonal with random a, c: singular for odd n, and a zero
	// divisor for a solver that does not pivot.
	for _, n := range []int{3, 4, 5, 64, 1000, 4097} {
		sys := RandSystem(r, n, 0)
		clear(sys.B)
		for _, opt := range s.opts(n) {
			what := fmt.Sprintf("zero diagonal, n=%d opt=%d", n, opt)
			if s.Pivots && n%2 == 0 {
				a, b, c, d := As[T](sys)
				x := make([]T, n)
				require.NoError(t, s.Solve(a, b, c, d, x, opt, p.get(opt)), what)
				assert.Less(t, RelErr(x, Reference(t, sys)), s.Tol, what)
				continue
			}
			solve(sys, opt, -1, what)
		}
	}
}

func checkNeverSilentNaN[T tri.Float, W any](t testing.TB, s Solver[T, W]) {
	r := rand.New(rand.NewPCG(7, 7))
	pick := func() float64 { return float64(r.IntN(3) - 1) }
	p := newPool(s, 40)
	failures := 0
	for range 2000 {
		n := 1 + r.IntN(40)
		sys := NewSystem(n)
		for i := range n {
			sys.A[i], sys.B[i], sys.C[i], sys.D[i] = pick(), pick(), pick(), pick()
		}
		a, b, c, d := As[T](sys)
		for _, opt := range s.opts(n) {
			x := Fill[T](n, 42)
			err := s.Solve(a, b, c, d, x, opt, p.get(opt))
			if err == nil {
				require.True(t, AllFinite(x), "n=%d opt=%d: non-finite solution without an error\n%v", n, opt, sys)
				continue
			}
			row := PivotRow(t, err, "n=%d opt=%d", n, opt)
			require.True(t, row >= 0 && row < n, "n=%d opt=%d: row %d", n, opt, row)
			require.True(t, SameBits(x, Fill[T](n, 42)), "n=%d opt=%d: x written on error\n%v", n, opt, sys)
			failures++
		}
	}
	assert.Greater(t, failures, 100, "the check should meet many breakdowns")
}

func checkLengths[T tri.Float, W any](t testing.TB, s Solver[T, W]) {
	const n = 10
	var none W
	sys := RandSystem(rand.New(rand.NewPCG(8, 8)), n, 4)
	for _, opt := range s.opts(n) {
		a, b, c, d := As[T](sys)
		x := make([]T, n)
		for i, v := range [][4][]T{{a[:n-1], c, d, x}, {a, c[:n-1], d, x}, {a, c, d[:n-1], x}, {a, c, d, x[:n-1]}} {
			assert.Panics(t, func() { _ = s.Solve(v[0], b, v[1], v[2], v[3], opt, none) }, "opt=%d: slice %d short", opt, i)
		}
		if !s.Grows {
			assert.Panics(t, func() { _ = s.Solve(a, b, c, d, x, opt, s.NewWorkspace(n-1, opt)) }, "opt=%d: workspace too small", opt)
		}
		assert.NoError(t, s.Solve(nil, nil, nil, nil, nil, opt, none), "opt=%d: n = 0", opt)
		assert.NoError(t, s.Solve([]T{}, []T{}, []T{}, []T{}, []T{}, opt, s.NewWorkspace(0, opt)), "opt=%d: n = 0", opt)
	}
}

func checkBackwardStable[T tri.Float, W any](t testing.TB, s Solver[T, W]) {
	bound := 4 * UnitRoundoff[T]()
	for _, variable := range []bool{false, true} {
		for _, n := range []int{300, 4096, 1 << 16, 1 << 20} {
			a, b, c, d := As[T](WeakSystem(rand.New(rand.NewPCG(9, uint64(n))), n, variable))
			x := make([]T, n)
			for _, opt := range s.opts(n) {
				require.NoError(t, s.Solve(a, b, c, d, x, opt, s.NewWorkspace(n, opt)), "n=%d opt=%d", n, opt)
				assert.Less(t, BackwardError(a, b, c, d, x), bound, "n=%d opt=%d variable=%v", n, opt, variable)
			}
		}
	}
}

// Bench measures s.Solve on a diagonally dominant n-row system with
// option opt and a workspace made for it, reporting MRows/s.
func Bench[T tri.Float, W any](b *testing.B, s Solver[T, W], n, opt int) {
	a, bb, c, d := As[T](RandSystem(rand.New(rand.NewPCG(1, 2)), n, 4))
	x := make([]T, n)
	ws := s.NewWorkspace(n, opt)
	b.SetBytes(int64(5 * n * ElemSize[T]()))
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Solve(a, bb, c, d, x, opt, ws); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e6, "MRows/s")
}
