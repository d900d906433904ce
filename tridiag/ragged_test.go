package tridiag_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/tridiag"
)

// raggedLengths are 1, 2, 3 and g more lengths drawn from 1…4096, in a
// shuffled order.
func raggedLengths(r *rand.Rand, g int) []int {
	l := []int{1, 2, 3}
	for range g {
		l = append(l, 1+r.IntN(4096))
	}
	r.Shuffle(len(l), func(i, j int) { l[i], l[j] = l[j], l[i] })
	return l
}

// raggedSystems draws one system of each length. With mixed, system g is
// of kind g mod 4 as in mixedBatch: diagonally dominant (0, 2), random
// and not dominant (1), with a zero diagonal (3); otherwise every system
// is dominant.
func raggedSystems(r *rand.Rand, lengths []int, mixed bool) []system {
	sys := make([]system, len(lengths))
	for g, n := range lengths {
		k := g % 4
		switch {
		case !mixed || k == 0 || k == 2:
			sys[g] = randSystem(r, n, 4)
		case k == 1:
			sys[g] = randSystem(r, n, 0)
		default:
			sys[g] = randSystem(r, n, 0)
			clear(sys[g].b)
		}
	}
	return sys
}

// packRagged stores the systems one after another.
func packRagged[T tridiag.Float](sys []system) (a, b, c, d []T) {
	for _, s := range sys {
		for i := range s.b {
			a, b, c, d = append(a, T(s.a[i])), append(b, T(s.b[i])), append(c, T(s.c[i])), append(d, T(s.d[i]))
		}
	}
	return a, b, c, d
}

// bits returns the bit patterns of v, so that equal NaNs compare equal.
func bits[T tridiag.Float](v []T) []uint64 {
	out := make([]uint64, len(v))
	for i, x := range v {
		out[i] = math.Float64bits(float64(x))
	}
	return out
}

// alone is what a Plan of one system of its own length did: its solution,
// its failure (System 0) or nil, and its description after the solve.
type alone[T tridiag.Float] struct {
	x    []T
	fail *tridiag.SystemError
	desc string
}

// solveAlone solves every system with a Plan of its own length (SolveConst
// with the constants k when constant).
func solveAlone[T tridiag.Float](t *testing.T, dev tridiag.Device, sys []system, opts tridiag.Options, constant bool, k [3]T) []alone[T] {
	t.Helper()
	out := make([]alone[T], len(sys))
	for g, s := range sys {
		n := len(s.b)
		p, err := tridiag.NewPlan[T](dev, tridiag.Shape{N: n, G: 1}, opts)
		require.NoError(t, err)
		a, b, c, d := packRagged[T]([]system{s})
		x := make([]T, n)
		if constant {
			err = p.SolveConst(context.Background(), k[0], k[1], k[2], d, x)
		} else {
			err = p.Solve(context.Background(), a, b, c, d, x)
		}
		out[g] = alone[T]{x: x, desc: p.Describe()}
		if err != nil {
			var be *tridiag.BatchError
			require.ErrorAs(t, err, &be)
			require.Len(t, be.Failed, 1)
			out[g].fail = &be.Failed[0]
		}
		require.NoError(t, p.Close())
	}
	return out
}

// assertLikeAlone checks the ragged solution x and error err against the
// systems solved alone: the same bits, the same failures with the system's
// index.
func assertLikeAlone[T tridiag.Float](t *testing.T, name string, off []int, want []alone[T], x []T, err error) {
	t.Helper()
	var be *tridiag.BatchError
	if err != nil {
		require.ErrorAs(t, err, &be, name)
		assert.Equal(t, len(want), be.G, name)
	}
	var wantFailed []tridiag.SystemError
	for g, w := range want {
		require.Equal(t, bits(w.x), bits(x[off[g]:off[g+1]]), "%s: system %d of %d rows", name, g, off[g+1]-off[g])
		if w.fail != nil {
			f := *w.fail
			f.System = g
			wantFailed = append(wantFailed, f)
		}
	}
	if len(wantFailed) == 0 {
		require.NoError(t, err, name)
		return
	}
	require.NotNil(t, be, name)
	require.Len(t, be.Failed, len(wantFailed), name)
	for i, f := range wantFailed {
		got := be.Failed[i]
		assert.Equal(t, f.System, got.System, name)
		assert.Equal(t, f.Row, got.Row, "%s: system %d", name, f.System)
		assert.Equal(t, f.Err.Error(), got.Err.Error(), "%s: system %d", name, f.System)
		assert.Equal(t, f.Status, got.Status, "%s: system %d", name, f.System)
	}
}

// TestRaggedLikePlan: every algorithm of the CPU, both precisions, cyclic
// or not, on systems of lengths 1, 2, 3 and random ones up to 4096 of
// every kind (dominant, not dominant, breaking down): each system of the
// ragged batch gets the bits and the error a Plan of its length gives it.
func TestRaggedLikePlan(t *testing.T) {
	t.Run("float64", testRaggedLikePlan[float64])
	t.Run("float32", testRaggedLikePlan[float32])
}

func testRaggedLikePlan[T tridiag.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	dev := tridiag.NewCPU(3)
	for _, alg := range append(tridiag.Algorithms(), tridiag.Auto) {
		for _, cyclic := range []bool{false, true} {
			name := fmt.Sprintf("%s/cyclic=%v", alg, cyclic)
			lengths := raggedLengths(r, 9)
			sys := raggedSystems(r, lengths, true)
			opts := tridiag.Options{Algorithm: alg, Cyclic: cyclic}
			p, err := tridiag.NewRaggedPlan[T](dev, lengths, opts)
			require.NoError(t, err, name)
			assert.Equal(t, lengths, p.Lengths())
			off := p.Offsets()
			a, b, c, d := packRagged[T](sys)
			require.Equal(t, len(d), p.Len())
			x := make([]T, len(d))
			err = p.Solve(context.Background(), a, b, c, d, x)
			assertLikeAlone(t, name, off, solveAlone[T](t, dev, sys, opts, false, [3]T{}), x, err)

			// Constant coefficients: dominant, and a non-dominant set.
			for _, k := range [][3]T{{-1, 3, -1}, {1, 0.5, 1}} {
				cname := fmt.Sprintf("%s/const=%v", name, k)
				x := make([]T, len(d))
				err := p.SolveConst(context.Background(), k[0], k[1], k[2], d, x)
				assertLikeAlone(t, cname, off, solveAlone[T](t, dev, sys, opts, true, k), x, err)
			}
			require.NoError(t, p.Close())
		}
	}
}

// TestRaggedPivoting: Auto chooses per system as a Plan does, with every
// Pivoting, on systems that are not diagonally dominant, and Describe
// counts the systems that GTSV solved.
func TestRaggedPivoting(t *testing.T) {
	t.Run("float64", testRaggedPivoting[float64])
	t.Run("float32", testRaggedPivoting[float32])
}

func testRaggedPivoting[T tridiag.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	dev := tridiag.NewCPU(2)
	lengths := raggedLengths(r, 21)
	sys := raggedSystems(r, lengths, true)
	a, b, c, d := packRagged[T](sys)
	for _, cyclic := range []bool{false, true} {
		for _, piv := range []tridiag.Pivoting{tridiag.PivotAuto, tridiag.PivotNever, tridiag.PivotAlways} {
			name := fmt.Sprintf("%s/cyclic=%v", piv, cyclic)
			opts := tridiag.Options{Pivoting: piv, Cyclic: cyclic}
			p, err := tridiag.NewRaggedPlan[T](dev, lengths, opts)
			require.NoError(t, err)
			x := make([]T, len(d))
			err = p.Solve(context.Background(), a, b, c, d, x)
			want := solveAlone[T](t, dev, sys, opts, false, [3]T{})
			assertLikeAlone(t, name, p.Offsets(), want, x, err)
			if piv == tridiag.PivotAlways {
				assert.Equal(t, "gtsv", p.Describe())
				continue
			}
			gtsv := 0
			for _, w := range want {
				if strings.HasSuffix(w.desc, "last solve: gtsv for 1 of 1 systems") {
					gtsv++
				}
			}
			if piv == tridiag.PivotAuto {
				assert.Greater(t, gtsv, len(sys)/4, "%s: the systems that are not dominant take GTSV", name)
			}
			assert.True(t, strings.HasSuffix(p.Describe(), fmt.Sprintf("; last solve: gtsv for %d of %d systems", gtsv, len(sys))), "%s: %s", name, p.Describe())
			require.NoError(t, p.Close())
		}
	}
}

// TestRaggedBreakdown: a zero pivot in the Thomas algorithm and a singular
// system under GTSV are reported at their system and their row within
// it; the failed systems are NaN, the others solved.
func TestRaggedBreakdown(t *testing.T) {
	lengths := []int{5, 17, 1, 40, 9, 3}
	r := rand.New(rand.NewPCG(5, 6))
	sys := raggedSystems(r, lengths, false)
	// System 3, row 23: the pivot b − a·c/u is exactly 0.
	sys[3].a[23], sys[3].b[23] = 0, 0
	// System 1: diagonal, with b = 0 at row 7 (singular).
	for i := range sys[1].b {
		sys[1].a[i], sys[1].c[i] = 0, 0
	}
	sys[1].b[7] = 0
	a, b, c, d := packRagged[float64](sys)
	ctx := context.Background()

	p, err := tridiag.NewRaggedPlan[float64](nil, lengths, tridiag.Options{Algorithm: tridiag.Thomas})
	require.NoError(t, err)
	off := p.Offsets()
	x := make([]float64, len(d))
	err = p.Solve(ctx, a, b, c, d, x)
	var be *tridiag.BatchError
	require.ErrorAs(t, err, &be)
	require.Len(t, be.Failed, 2)
	assert.Equal(t, 1, be.Failed[0].System)
	assert.Equal(t, 7, be.Failed[0].Row)
	assert.Equal(t, 3, be.Failed[1].System)
	assert.Equal(t, 23, be.Failed[1].Row)
	assert.ErrorIs(t, err, tridiag.ErrZeroPivot)
	assert.Equal(t, []int{0, 8, 0, 24, 0, 0}, be.Status())
	assert.Contains(t, err.Error(), "system 3, row 23")
	for g := range lengths {
		xs := x[off[g]:off[g+1]]
		if g == 1 || g == 3 {
			for i, v := range xs {
				assert.True(t, math.IsNaN(v), "system %d, row %d of a failed system", g, i)
			}
			continue
		}
		s := sys[g]
		s.a[0], s.c[len(s.b)-1] = 0, 0
		assert.InDeltaSlice(t, oracle(s), xs, 1e-12, "system %d", g)
	}

	p, err = tridiag.NewRaggedPlan[float64](nil, lengths, tridiag.Options{Algorithm: tridiag.GTSV})
	require.NoError(t, err)
	err = p.Solve(ctx, a, b, c, d, x)
	require.ErrorAs(t, err, &be)
	require.Len(t, be.Failed, 1, "GTSV solves system 3")
	assert.Equal(t, 1, be.Failed[0].System)
	assert.Equal(t, 7, be.Failed[0].Row)
	assert.ErrorIs(t, err, tridiag.ErrSingular)
	s := sys[3]
	s.a[0], s.c[len(s.b)-1] = 0, 0
	assert.InDeltaSlice(t, oracle(s), x[off[3]:off[4]], 1e-12)
}

// TestRaggedBadInput: non-finite input is reported with the array, the
// system and the row within it; short arrays with ErrLength.
func TestRaggedBadInput(t *testing.T) {
	lengths := []int{3, 1, 8, 2, 6}
	r := rand.New(rand.NewPCG(7, 8))
	sys := raggedSystems(r, lengths, false)
	p, err := tridiag.NewRaggedPlan[float32](nil, lengths, tridiag.Options{})
	require.NoError(t, err)
	off := p.Offsets()
	ctx := context.Background()
	for _, tc := range []struct {
		arr  string
		g, i int
		v    float64
	}{{"a", 0, 0, math.NaN()}, {"b", 1, 0, math.Inf(1)}, {"c", 4, 2, math.NaN()}, {"d", 2, 7, math.Inf(-1)}, {"d", 4, 5, math.NaN()}} {
		a, b, c, d := packRagged[float32](sys)
		arrs := map[string][]float32{"a": a, "b": b, "c": c, "d": d}
		arrs[tc.arr][off[tc.g]+tc.i] = float32(tc.v)
		err := p.Solve(ctx, a, b, c, d, make([]float32, len(d)))
		require.ErrorIs(t, err, tridiag.ErrNonFinite)
		assert.Contains(t, err.Error(), fmt.Sprintf("%s of system %d, row %d is", tc.arr, tc.g, tc.i))

		q, err := tridiag.NewRaggedPlan[float32](nil, lengths, tridiag.Options{SkipFiniteCheck: true})
		require.NoError(t, err)
		assert.NotErrorIs(t, q.Solve(ctx, a, b, c, d, make([]float32, len(d))), tridiag.ErrNonFinite, "skipped")
	}
	a, b, c, d := packRagged[float32](sys)
	err = p.Solve(ctx, a, b[:len(b)-1], c, d, make([]float32, len(d)))
	require.ErrorIs(t, err, tridiag.ErrLength)
	assert.Contains(t, err.Error(), "b has 19 elements, the ragged batch of 5 systems needs 20")
	require.ErrorIs(t, p.SolveConst(ctx, 0, float32(math.NaN()), 0, d, d), tridiag.ErrNonFinite)

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, p.Solve(cctx, a, b, c, d, d), context.Canceled)
	require.NoError(t, p.Close())
	require.ErrorIs(t, p.Solve(ctx, a, b, c, d, d), tridiag.ErrClosed)
	assert.Equal(t, "auto", p.Describe(), "closed")
}

// TestRaggedInPlace: x = d gives the bits of x ≠ d, Check on or off.
func TestRaggedInPlace(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	lengths := raggedLengths(r, 13)
	sys := raggedSystems(r, lengths, true)
	for _, alg := range []tridiag.Algorithm{tridiag.Auto, tridiag.Thomas, tridiag.PartitionPivot} {
		for _, check := range []bool{false, true} {
			for _, cyclic := range []bool{false, true} {
				name := fmt.Sprintf("%s/check=%v/cyclic=%v", alg, check, cyclic)
				p, err := tridiag.NewRaggedPlan[float64](nil, lengths, tridiag.Options{Algorithm: alg, Check: check, Cyclic: cyclic})
				require.NoError(t, err)
				a, b, c, d := packRagged[float64](sys)
				x := make([]float64, len(d))
				errOut := p.Solve(context.Background(), a, b, c, d, x)
				errIn := p.Solve(context.Background(), a, b, c, d, d)
				assert.Equal(t, bits(x), bits(d), name)
				if errOut == nil {
					assert.NoError(t, errIn, name)
				} else {
					require.Error(t, errIn, name)
					assert.Equal(t, errOut.Error(), errIn.Error(), name)
				}
				require.NoError(t, p.Close())
			}
		}
	}
}

// TestRaggedCheck: Check and Options.Check measure each system as a Plan
// of its length does; a singular system (zero-flux diffusion) fails.
func TestRaggedCheck(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	lengths := raggedLengths(r, 7)
	sys := raggedSystems(r, lengths, false)
	sys[2] = neumann(r, lengths[2])
	sys[5] = neumann(r, lengths[5])
	ctx := context.Background()
	dev := tridiag.NewCPU(2)
	for _, cyclic := range []bool{false, true} {
		opts := tridiag.Options{Cyclic: cyclic}
		p, err := tridiag.NewRaggedPlan[float64](dev, lengths, opts)
		require.NoError(t, err)
		a, b, c, d := packRagged[float64](sys)
		x := make([]float64, len(d))
		solveErr := p.Solve(ctx, a, b, c, d, x)
		st, err := p.Check(a, b, c, d, x)
		require.Len(t, st, len(lengths))
		off := p.Offsets()
		var wantFailed []int
		for g, s := range sys {
			q, qerr := tridiag.NewPlan[float64](dev, tridiag.Shape{N: lengths[g], G: 1}, opts)
			require.NoError(t, qerr)
			qa, qb, qc, qd := packRagged[float64]([]system{s})
			want, _ := q.Check(qa, qb, qc, qd, x[off[g]:off[g+1]])
			assert.Equal(t, want[0], st[g], "cyclic=%v system %d", cyclic, g)
			if want[0].Failed() {
				wantFailed = append(wantFailed, g)
			}
		}
		require.NotEmpty(t, wantFailed)
		var be *tridiag.BatchError
		require.ErrorAs(t, err, &be)
		assert.Equal(t, wantFailed, be.Systems())

		// Options.Check: the solve's failures and the check's, merged.
		opts.Check = true
		pc, err := tridiag.NewRaggedPlan[float64](dev, lengths, opts)
		require.NoError(t, err)
		xc := make([]float64, len(d))
		err = pc.Solve(ctx, a, b, c, d, xc)
		assert.Equal(t, bits(x), bits(xc))
		require.ErrorAs(t, err, &be)
		for _, f := range be.Failed {
			assert.Equal(t, st[f.System].BackwardError, f.Status.BackwardError)
		}
		if solveErr == nil {
			assert.Equal(t, wantFailed, be.Systems())
		}
		stc, err := pc.CheckConst(-1, 3, -1, d, xc)
		require.Len(t, stc, len(lengths))
		require.Error(t, err, "x does not solve the constant systems")
	}
}

// TestNewRaggedPlanErrors: bad lengths name the system; bad options are
// NewPlan's; a device without ragged solvers is named.
func TestNewRaggedPlanErrors(t *testing.T) {
	_, err := tridiag.NewRaggedPlan[float64](nil, nil, tridiag.Options{})
	require.ErrorIs(t, err, tridiag.ErrShape)
	_, err = tridiag.NewRaggedPlan[float64](nil, []int{4, 2, 0, 5}, tridiag.Options{})
	require.ErrorIs(t, err, tridiag.ErrShape)
	assert.Contains(t, err.Error(), "system 2 of the ragged batch has length 0")
	_, err = tridiag.NewRaggedPlan[float64](nil, []int{4, -3}, tridiag.Options{})
	assert.Contains(t, err.Error(), "system 1 of the ragged batch has length -3")
	_, err = tridiag.NewRaggedPlan[float32](nil, []int{1, 1 << 61, 1 << 61, 3}, tridiag.Options{})
	require.ErrorIs(t, err, tridiag.ErrShape)
	assert.Contains(t, err.Error(), "systems 0…2 of the ragged batch hold 4611686018427387904 rows or more")

	_, err = tridiag.NewRaggedPlan[float64](nil, []int{4}, tridiag.Options{Algorithm: tridiag.Algorithm(42)})
	require.ErrorIs(t, err, tridiag.ErrOptions)
	_, err = tridiag.NewRaggedPlan[float64](nil, []int{4}, tridiag.Options{Algorithm: tridiag.Thomas, Pivoting: tridiag.PivotAlways})
	require.ErrorIs(t, err, tridiag.ErrOptions)
	_, err = tridiag.NewRaggedPlan[float64](nil, []int{4}, tridiag.Options{Algorithm: tridiag.TPR, SliceSize: 3})
	require.ErrorIs(t, err, tridiag.ErrOptions)

	dev := &specDevice{}
	_, err = tridiag.NewRaggedPlan[float32](dev, []int{4, 5}, tridiag.Options{})
	require.ErrorIs(t, err, tridiag.ErrOptions)
	assert.Contains(t, err.Error(), "ragged batch of 2 systems on spec recorder")
	assert.Empty(t, dev.got, "no solver of one length is built for it")

	_, err = tridiag.NewRaggedPlan[float32](otherDevice{}, []int{4, 5}, tridiag.Options{})
	require.ErrorIs(t, err, tridiag.ErrOptions)
	assert.Contains(t, err.Error(), "no tridiagonal solvers for device other")

	_, err = tridiag.NewRaggedPlan[float64](tridiag.NewCPU(2), []int{3, 1 << 40}, tridiag.Options{})
	require.ErrorIs(t, err, tridiag.ErrMemory)
}

// otherDevice is a device without a backend.
type otherDevice struct{}

func (otherDevice) Name() string { return "other" }

// raggedDevice records the specs of the ragged solvers it is asked for.
type raggedDevice struct{ got []tridiag.RaggedSpec }

func (d *raggedDevice) Name() string { return "ragged recorder" }

func (d *raggedDevice) NewSolver32(tridiag.Spec) (tridiag.Solver[float32], error) {
	return nil, errors.New("unused")
}

func (d *raggedDevice) NewSolver64(tridiag.Spec) (tridiag.Solver[float64], error) {
	return nil, errors.New("unused")
}

func (d *raggedDevice) NewRaggedSolver32(spec tridiag.RaggedSpec) (tridiag.Solver[float32], error) {
	d.got = append(d.got, spec)
	return nil, errors.New("recorded")
}

func (d *raggedDevice) NewRaggedSolver64(spec tridiag.RaggedSpec) (tridiag.Solver[float64], error) {
	d.got = append(d.got, spec)
	return nil, errors.New("recorded")
}

// TestRaggedBackend: a backend that implements RaggedBackend gets the
// lengths, their offsets and the options.
func TestRaggedBackend(t *testing.T) {
	dev := &raggedDevice{}
	opts := tridiag.Options{Cyclic: true, Pivoting: tridiag.PivotAlways}
	_, err := tridiag.NewRaggedPlan[float64](dev, []int{3, 1, 4}, opts)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ragged batch of 3 systems on ragged recorder: recorded")
	require.Len(t, dev.got, 1)
	assert.Equal(t, tridiag.RaggedSpec{Lengths: []int{3, 1, 4}, Offsets: []int{0, 3, 4, 8}, Options: opts}, dev.got[0])
}

// BenchmarkRagged times float32 solves of 512 diagonally dominant
// systems of lengths drawn from U(10, 4096) (rows/s count their rows
// only): as a ragged batch, padded with identity rows to the longest
// length in one batch, and, for comparison, a batch of one length with the
// same rows in all.
func BenchmarkRagged(b *testing.B) {
	const G = 512
	r := rand.New(rand.NewPCG(1, 1))
	lengths := make([]int, G)
	total, longest := 0, 0
	for g := range lengths {
		lengths[g] = 10 + r.IntN(4096-10+1)
		total += lengths[g]
		longest = max(longest, lengths[g])
	}
	sys := raggedSystems(r, lengths, false)
	uniform := total / G
	for _, alg := range []tridiag.Algorithm{tridiag.Auto, tridiag.Thomas, tridiag.PartitionPivot} {
		opts := tridiag.Options{Algorithm: alg, SkipFiniteCheck: true}
		b.Run(fmt.Sprintf("%s/ragged", alg), func(b *testing.B) {
			p, err := tridiag.NewRaggedPlan[float32](nil, lengths, opts)
			require.NoError(b, err)
			a, bb, c, d := packRagged[float32](sys)
			x := make([]float32, len(d))
			benchRows(b, total, func() error { return p.Solve(context.Background(), a, bb, c, d, x) })
		})
		b.Run(fmt.Sprintf("%s/padded", alg), func(b *testing.B) {
			padded := make([]system, G)
			for g, s := range sys {
				n := len(s.b)
				p := system{make([]float64, longest), make([]float64, longest), make([]float64, longest), make([]float64, longest)}
				copy(p.a, s.a)
				copy(p.b, s.b)
				copy(p.c[:n-1], s.c)
				for i := n; i < longest; i++ {
					p.b[i] = 1
				}
				padded[g] = p
			}
			shape := tridiag.Shape{N: longest, G: G}
			p, err := tridiag.NewPlan[float32](nil, shape, opts)
			require.NoError(b, err)
			a, bb, c, d := pack[float32](shape, padded)
			x := make([]float32, len(d))
			benchRows(b, total, func() error { return p.Solve(context.Background(), a, bb, c, d, x) })
		})
		b.Run(fmt.Sprintf("%s/uniform", alg), func(b *testing.B) {
			shape := tridiag.Shape{N: uniform, G: G}
			p, err := tridiag.NewPlan[float32](nil, shape, opts)
			require.NoError(b, err)
			a, bb, c, d := pack[float32](shape, raggedSystems(r, fill(G, uniform), false))
			x := make([]float32, len(d))
			benchRows(b, uniform*G, func() error { return p.Solve(context.Background(), a, bb, c, d, x) })
		})
	}
}

// fill returns g copies of n.
func fill(g, n int) []int {
	l := make([]int, g)
	for i := range l {
		l[i] = n
	}
	return l
}

// benchRows times solve, reporting rows (the systems' own) per second.
func benchRows(b *testing.B, rows int, solve func() error) {
	b.SetBytes(int64(rows * 20))
	for b.Loop() {
		if err := solve(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds()/1e6, "MRows/s")
}
