package tridiag_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tridiag/partition"
)

// csystem is one complex system, in complex128.
type csystem struct{ a, b, c, d []complex128 }

func newCSystem(n int) csystem {
	return csystem{make([]complex128, n), make([]complex128, n), make([]complex128, n), make([]complex128, n)}
}

func crand(r *rand.Rand) complex128 { return complex(r.Float64()*2-1, r.Float64()*2-1) }

// randCSystem has random entries in the unit square; dom is added to the
// diagonal (0: no dominance, pivoting needed).
func randCSystem(r *rand.Rand, n int, dom complex128) csystem {
	s := newCSystem(n)
	for i := range n {
		s.a[i], s.b[i], s.c[i], s.d[i] = crand(r), crand(r)+dom, crand(r), crand(r)
	}
	return s
}

// shiftedLaplacian is −u″ + iσ·u on n points: −1, 2 + iσ, −1 (the complex
// shifted Laplacian of Helmholtz preconditioners), dominant by modulus.
func shiftedLaplacian(r *rand.Rand, n int, sigma float64) csystem {
	s := newCSystem(n)
	for i := range n {
		s.a[i], s.b[i], s.c[i], s.d[i] = -1, complex(2, sigma), -1, crand(r)
	}
	return s
}

// helmholtz is −u″ − k²(x)·u with a little damping on n points: −1,
// 2 − (kh)²·(1 + ½ sin i) + iε, −1, indefinite for kh ≈ 1, where
// elimination without pivoting meets tiny pivots.
func helmholtz(r *rand.Rand, n int, kh, eps float64) csystem {
	s := newCSystem(n)
	for i := range n {
		k2 := kh * kh * (1 + 0.5*math.Sin(float64(i)))
		s.a[i], s.b[i], s.c[i], s.d[i] = -1, complex(2-k2, eps), -1, crand(r)
	}
	return s
}

// dense returns the n×n matrix of s (corners when cyclic, folded onto
// the off-diagonals or the diagonal for n ≤ 2 as the solve folds them).
func (s csystem) dense(cyclic bool) [][]complex128 {
	n := len(s.b)
	m := make([][]complex128, n)
	for i := range m {
		m[i] = make([]complex128, n)
	}
	for i := range n {
		m[i][i] += s.b[i]
		if i > 0 {
			m[i][i-1] += s.a[i]
		} else if cyclic {
			m[i][(n-1+n)%n] += s.a[i]
		}
		if i < n-1 {
			m[i][i+1] += s.c[i]
		} else if cyclic {
			m[i][0] += s.c[i]
		}
	}
	return m
}

// denseLU factors m in place by LU with partial pivoting by modulus and
// returns the row permutation; false when m is singular.
func denseLU(m [][]complex128) ([]int, bool) {
	n := len(m)
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	for k := range n {
		p := k
		for i := k + 1; i < n; i++ {
			if cmplx.Abs(m[i][k]) > cmplx.Abs(m[p][k]) {
				p = i
			}
		}
		if m[p][k] == 0 {
			return nil, false
		}
		m[k], m[p] = m[p], m[k]
		perm[k], perm[p] = perm[p], perm[k]
		for i := k + 1; i < n; i++ {
			f := m[i][k] / m[k][k]
			m[i][k] = f
			for j := k + 1; j < n; j++ {
				m[i][j] -= f * m[k][j]
			}
		}
	}
	return perm, true
}

// luSolve solves with the factors of denseLU.
func luSolve(m [][]complex128, perm []int, d []complex128) []complex128 {
	n := len(m)
	x := make([]complex128, n)
	for i := range n {
		x[i] = d[perm[i]]
		for j := range i {
			x[i] -= m[i][j] * x[j]
		}
	}
	for i := n - 1; i >= 0; i-- {
		for j := i + 1; j < n; j++ {
			x[i] -= m[i][j] * x[j]
		}
		x[i] /= m[i][i]
	}
	return x
}

// cref is the dense reference solution of s and κ∞(A) = ‖A‖∞·‖A⁻¹‖∞,
// both from a dense LU with partial pivoting in complex128.
func cref(t *testing.T, s csystem, cyclic bool) (x []complex128, kappa float64) {
	t.Helper()
	n := len(s.b)
	a := s.dense(cyclic)
	var an float64
	for _, row := range a {
		var r float64
		for _, v := range row {
			r += cmplx.Abs(v)
		}
		an = max(an, r)
	}
	perm, ok := denseLU(a)
	require.True(t, ok, "reference matrix is singular")
	inv := make([][]complex128, n) // columns of A⁻¹
	for j := range n {
		e := make([]complex128, n)
		e[j] = 1
		inv[j] = luSolve(a, perm, e)
	}
	var in float64
	for i := range n {
		var r float64
		for j := range n {
			r += cmplx.Abs(inv[j][i])
		}
		in = max(in, r)
	}
	return luSolve(a, perm, s.d), an * in
}

func cpack[T tridiag.Complex](shape tridiag.Shape, sys []csystem) (a, b, c, d []T) {
	l := shape.Normalize().Layout
	L := shape.Len()
	a, b, c, d = make([]T, L), make([]T, L), make([]T, L), make([]T, L)
	for g, s := range sys {
		for i := range s.b {
			k := l.Index(i, g)
			a[k], b[k], c[k], d[k] = T(s.a[i]), T(s.b[i]), T(s.c[i]), T(s.d[i])
		}
	}
	return a, b, c, d
}

func cunpack[T tridiag.Complex](shape tridiag.Shape, x []T, g int) []complex128 {
	l := shape.Normalize().Layout
	out := make([]complex128, shape.N)
	for i := range out {
		out[i] = complex128(x[l.Index(i, g)])
	}
	return out
}

// round makes s exactly representable in T, so that the reference solves
// the system the plan reads.
func (s csystem) round(f32 bool) csystem {
	if !f32 {
		return s
	}
	r := newCSystem(len(s.b))
	for i := range s.b {
		r.a[i], r.b[i], r.c[i], r.d[i] = complex128(complex64(s.a[i])), complex128(complex64(s.b[i])), complex128(complex64(s.c[i])), complex128(complex64(s.d[i]))
	}
	return r
}

func crelDiff(x, ref []complex128) float64 {
	var num, den float64
	for i := range x {
		num = max(num, cmplx.Abs(x[i]-ref[i]))
		den = max(den, cmplx.Abs(ref[i]))
	}
	return num / den
}

func clayouts(n, g int) map[string]tridiag.Layout {
	return map[string]tridiag.Layout{
		"contiguous":  tridiag.Contiguous(n),
		"interleaved": tridiag.Interleaved(g),
		"strided":     tridiag.Strided(g+2, 1), // gaps between rows
	}
}

// cfamilies are the test families of complex systems of n rows.
func cfamilies(r *rand.Rand, n int) map[string]csystem {
	return map[string]csystem{
		"random-dominant":    randCSystem(r, n, 4+1i),
		"random":             randCSystem(r, n, 0),
		"shifted-laplacian":  shiftedLaplacian(r, n, 0.5),
		"helmholtz-damped":   helmholtz(r, n, 1.2, 0.2),
		"helmholtz-indefin.": helmholtz(r, n, 1.0, 1e-3),
	}
}

// testComplexAgainstDense solves every family, in every layout, with
// alg, and compares each system with the dense reference: the error
// must stay within 200·κ∞·ε (n ε of a stable solve, with room).
func testComplexAgainstDense[T tridiag.Complex](t *testing.T, alg tridiag.Algorithm, cyclic bool) {
	eps := tridiag.Epsilon[T]()
	_, f32 := any(T(0)).(complex64)
	for _, n := range []int{1, 2, 3, 5, 17, 100, 257} {
		r := rand.New(rand.NewPCG(uint64(n), 28))
		fams := cfamilies(r, n)
		names := []string{"random-dominant", "random", "shifted-laplacian", "helmholtz-damped", "helmholtz-indefin."}
		sys := make([]csystem, len(names))
		for g, name := range names {
			sys[g] = fams[name].round(f32)
		}
		G := len(sys)
		refs := make([][]complex128, G)
		kappas := make([]float64, G)
		for g, s := range sys {
			refs[g], kappas[g] = cref(t, s, cyclic)
		}
		for lname, l := range clayouts(n, G) {
			shape := tridiag.Shape{N: n, G: G, Layout: l}
			p, err := tridiag.NewPlan[T](tridiag.NewCPU(2), shape, tridiag.Options{Algorithm: alg, Cyclic: cyclic})
			require.NoError(t, err)
			a, b, c, d := cpack[T](shape, sys)
			x := make([]T, len(d))
			require.NoError(t, p.Solve(context.Background(), a, b, c, d, x), "n=%d %s", n, lname)
			for g := range sys {
				e := crelDiff(cunpack(shape, x, g), refs[g])
				assert.LessOrEqual(t, e, 200*kappas[g]*eps+1e-300, "%s n=%d %s %s κ=%.2e", alg, n, lname, names[g], kappas[g])
			}
			require.NoError(t, p.Close())
		}
	}
}

func TestComplexGTSVAgainstDense(t *testing.T) {
	for _, cyclic := range []bool{false, true} {
		t.Run(fmt.Sprintf("cyclic=%v", cyclic), func(t *testing.T) {
			testComplexAgainstDense[complex128](t, tridiag.GTSV, cyclic)
			testComplexAgainstDense[complex64](t, tridiag.GTSV, cyclic)
		})
	}
}

func TestComplexAutoAgainstDense(t *testing.T) {
	for _, cyclic := range []bool{false, true} {
		t.Run(fmt.Sprintf("cyclic=%v", cyclic), func(t *testing.T) {
			testComplexAgainstDense[complex128](t, tridiag.Auto, cyclic)
			testComplexAgainstDense[complex64](t, tridiag.Auto, cyclic)
		})
	}
}

// Thomas is accurate on the dominant families.
func TestComplexThomasDominant(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 28))
	const n, G = 129, 6
	sys := make([]csystem, G)
	for g := range sys {
		if g%2 == 0 {
			sys[g] = randCSystem(r, n, 4-2i)
		} else {
			sys[g] = shiftedLaplacian(r, n, float64(g))
		}
	}
	for lname, l := range clayouts(n, G) {
		shape := tridiag.Shape{N: n, G: G, Layout: l}
		p, err := tridiag.NewPlan[complex128](nil, shape, tridiag.Options{Algorithm: tridiag.Thomas})
		require.NoError(t, err)
		a, b, c, d := cpack[complex128](shape, sys)
		x := make([]complex128, len(d))
		require.NoError(t, p.Solve(context.Background(), a, b, c, d, x))
		for g, s := range sys {
			ref, kappa := cref(t, s, false)
			assert.LessOrEqual(t, crelDiff(cunpack(shape, x, g), ref), 50*kappa*0x1p-52, "%s system %d", lname, g)
		}
	}
}

// The indefinite Helmholtz systems need pivoting: Thomas loses digits
// that GTSV keeps, and Auto sends them to GTSV, whose bits it returns;
// the dominant shifted Laplacians it leaves to Thomas, whose bits it
// returns.
func TestComplexAutoPivotsWhereNeeded(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 28))
	const n = 200
	var sys []csystem
	for range 4 {
		sys = append(sys, shiftedLaplacian(r, n, 1))
	}
	// Rows with a tiny diagonal: b = 1e-12 after a row of 1, so that the
	// second pivot of Thomas is tiny and its multiplier huge.
	for range 4 {
		s := randCSystem(r, n, 0)
		for i := 1; i < n; i += 7 {
			s.b[i] = complex(1e-12, 1e-12)
		}
		sys = append(sys, s)
	}
	G := len(sys)
	shape := tridiag.Shape{N: n, G: G}
	a, b, c, d := cpack[complex128](shape, sys)
	solve := func(alg tridiag.Algorithm) ([]complex128, *tridiag.Plan[complex128]) {
		p, err := tridiag.NewPlan[complex128](nil, shape, tridiag.Options{Algorithm: alg})
		require.NoError(t, err)
		x := make([]complex128, len(d))
		err = p.Solve(context.Background(), a, b, c, d, x)
		var be *tridiag.BatchError
		if err != nil {
			require.ErrorAs(t, err, &be)
		}
		return x, p
	}
	xt, _ := solve(tridiag.Thomas)
	xg, _ := solve(tridiag.GTSV)
	xa, pa := solve(tridiag.Auto)
	assert.Contains(t, pa.Describe(), "last solve: gtsv for 4 of 8 systems")
	worseThomas := 0
	for g, s := range sys {
		ref, _ := cref(t, s, false)
		eg := crelDiff(cunpack(shape, xg, g), ref)
		et := crelDiff(cunpack(shape, xt, g), ref)
		want := xt
		if g >= 4 {
			want = xg
			if !(et <= 10*eg) {
				worseThomas++
			}
		}
		assert.Equal(t, cunpack(shape, want, g), cunpack(shape, xa, g), "system %d", g)
	}
	assert.Positive(t, worseThomas, "Thomas should lose accuracy on the systems with tiny pivots")
}

// GTSVC takes the row with the larger |re| + |im|, as zgtsv does: with
// b[0] = 1+1i (Cabs1 2, modulus 1.41) and a[1] = 1.9 (Cabs1 and modulus
// 1.9), it keeps row 0, where a pivot by modulus would interchange; the
// solve is exact for this 2×2 system either way, and its bits tell the
// two apart.
func TestComplexGTSVPivotsByCabs1(t *testing.T) {
	a := []complex128{0, 1.9}
	b := []complex128{1 + 1i, 0.3 - 0.7i}
	c := []complex128{0.6 + 0.2i, 0}
	d := []complex128{1 - 2i, 0.5 + 0.25i}
	p, err := tridiag.NewPlan[complex128](nil, tridiag.Shape{N: 2, G: 1}, tridiag.Options{Algorithm: tridiag.GTSV})
	require.NoError(t, err)
	x := make([]complex128, 2)
	require.NoError(t, p.Solve(context.Background(), a, b, c, d, x))
	// No interchange: eliminate row 1 with f = a[1]/b[0].
	f := a[1] / b[0]
	u1 := b[1] - f*c[0]
	y1 := d[1] - f*d[0]
	x1 := y1 / u1
	x0 := (d[0] - c[0]*x1) / b[0]
	assert.Equal(t, []complex128{x0, x1}, x)
}

func TestComplexConstMatchesArrays(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 28))
	const n, G = 33, 5
	ca, cb, cc := complex64(-1+0.5i), complex64(0.2+0.1i), complex64(-1-0.25i) // indefinite: Auto pivots
	for _, cyclic := range []bool{false, true} {
		for lname, l := range clayouts(n, G) {
			shape := tridiag.Shape{N: n, G: G, Layout: l}
			p, err := tridiag.NewPlan[complex64](nil, shape, tridiag.Options{Cyclic: cyclic})
			require.NoError(t, err)
			L := shape.Len()
			a, b, c, d := make([]complex64, L), make([]complex64, L), make([]complex64, L), make([]complex64, L)
			for k := range L {
				a[k], b[k], c[k], d[k] = ca, cb, cc, complex64(crand(r))
			}
			x1, x2 := make([]complex64, L), make([]complex64, L)
			require.NoError(t, p.Solve(context.Background(), a, b, c, d, x1))
			require.NoError(t, p.SolveConst(context.Background(), ca, cb, cc, d, x2))
			for g := range G {
				assert.Equal(t, cunpack(shape, x1, g), cunpack(shape, x2, g), "%s cyclic=%v system %d", lname, cyclic, g)
			}
			st, err := p.CheckConst(ca, cb, cc, d, x2)
			require.NoError(t, err)
			for _, s := range st {
				assert.Less(t, s.BackwardError, 100*tridiag.Epsilon[complex64]())
			}
		}
	}
}

func TestComplexInPlace(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 28))
	const n, G = 40, 3
	sys := []csystem{randCSystem(r, n, 0), shiftedLaplacian(r, n, 2), randCSystem(r, n, 3)}
	shape := tridiag.Shape{N: n, G: G}
	for _, alg := range []tridiag.Algorithm{tridiag.Auto, tridiag.GTSV} {
		p, err := tridiag.NewPlan[complex128](nil, shape, tridiag.Options{Algorithm: alg, Check: true})
		require.NoError(t, err)
		a, b, c, d := cpack[complex128](shape, sys)
		x := make([]complex128, len(d))
		require.NoError(t, p.Solve(context.Background(), a, b, c, d, x))
		require.NoError(t, p.Solve(context.Background(), a, b, c, d, d))
		assert.Equal(t, x, d, "%s", alg)
	}
}

func TestComplexErrorsNameSystemAndRow(t *testing.T) {
	ctx := context.Background()
	const n, G = 6, 4
	shape := tridiag.Shape{N: n, G: G, Layout: tridiag.Interleaved(G)}
	fill := func() (a, b, c, d []complex128) {
		r := rand.New(rand.NewPCG(6, 28))
		sys := make([]csystem, G)
		for g := range sys {
			sys[g] = randCSystem(r, n, 5)
		}
		return cpack[complex128](shape, sys)
	}
	l := shape.Normalize().Layout

	t.Run("zero-pivot", func(t *testing.T) {
		p, err := tridiag.NewPlan[complex128](nil, shape, tridiag.Options{Algorithm: tridiag.Thomas})
		require.NoError(t, err)
		a, b, c, d := fill()
		// System 2: u[1] = b[1] − a[1]·c[0]/b[0] = 0.
		b[l.Index(0, 2)], c[l.Index(0, 2)] = 1+1i, 2
		a[l.Index(1, 2)], b[l.Index(1, 2)] = 1i, 1+1i
		x := make([]complex128, len(d))
		err = p.Solve(ctx, a, b, c, d, x)
		var be *tridiag.BatchError
		require.ErrorAs(t, err, &be)
		require.Len(t, be.Failed, 1)
		assert.Equal(t, 2, be.Failed[0].System)
		assert.Equal(t, 1, be.Failed[0].Row)
		assert.ErrorIs(t, err, tridiag.ErrZeroPivot)
		assert.Contains(t, err.Error(), "system 2, row 1")
		assert.True(t, cmplx.IsNaN(x[l.Index(3, 2)]))
		assert.False(t, cmplx.IsNaN(x[l.Index(3, 1)]))
	})
	t.Run("singular", func(t *testing.T) {
		p, err := tridiag.NewPlan[complex64](nil, shape, tridiag.Options{Algorithm: tridiag.GTSV})
		require.NoError(t, err)
		a, b, c, d := fill()
		a64, b64, c64, d64 := c64s(a), c64s(b), c64s(c), c64s(d)
		// System 3, column 0 all zero.
		b64[l.Index(0, 3)], a64[l.Index(1, 3)] = 0, 0
		err = p.Solve(ctx, a64, b64, c64, d64, make([]complex64, len(d)))
		var be *tridiag.BatchError
		require.ErrorAs(t, err, &be)
		assert.Equal(t, []int{3}, be.Systems())
		assert.ErrorIs(t, err, tridiag.ErrSingular)
		assert.Contains(t, err.Error(), "system 3, row 0")
	})
	for _, part := range []string{"real", "imaginary"} {
		t.Run("nan-"+part, func(t *testing.T) {
			p, err := tridiag.NewPlan[complex128](nil, shape, tridiag.Options{})
			require.NoError(t, err)
			a, b, c, d := fill()
			v := complex(math.NaN(), 1)
			if part == "imaginary" {
				v = complex(1, math.Inf(-1))
			}
			b[l.Index(4, 1)] = v
			err = p.Solve(ctx, a, b, c, d, d)
			require.ErrorIs(t, err, tridiag.ErrNonFinite)
			assert.Contains(t, err.Error(), "b of system 1, row 4")
			b[l.Index(4, 1)] = 3
			d[l.Index(5, 0)] = v
			err = p.Solve(ctx, a, b, c, d, d)
			require.ErrorIs(t, err, tridiag.ErrNonFinite)
			assert.Contains(t, err.Error(), "d of system 0, row 5")
			err = p.SolveConst(ctx, 1, v, 1, make([]complex128, len(d)), make([]complex128, len(d)))
			require.ErrorIs(t, err, tridiag.ErrNonFinite)
		})
	}
}

func c64s(v []complex128) []complex64 {
	out := make([]complex64, len(v))
	for i, z := range v {
		out[i] = complex64(z)
	}
	return out
}

func TestComplexRefusedOptions(t *testing.T) {
	shape := tridiag.Shape{N: 16, G: 2}
	for _, alg := range []tridiag.Algorithm{tridiag.CR, tridiag.PCR, tridiag.WangMou, tridiag.TPR, tridiag.PartitionPivot, tridiag.LDLT} {
		_, err := tridiag.NewPlan[complex64](nil, shape, tridiag.Options{Algorithm: alg})
		require.ErrorIs(t, err, tridiag.ErrOptions, "%s", alg)
		assert.Contains(t, err.Error(), "complex")
	}
	_, err := tridiag.NewPlan[complex128](realOnlyDevice{}, shape, tridiag.Options{})
	require.ErrorIs(t, err, tridiag.ErrOptions)
	assert.Contains(t, err.Error(), "real-only test device")
	// The same device's real plans are built as before.
	_, err = tridiag.NewPlan[float64](realOnlyDevice{}, shape, tridiag.Options{})
	assert.ErrorIs(t, err, errRealOnly)

	p, err := tridiag.NewPlan[complex128](nil, shape, tridiag.Options{})
	require.NoError(t, err)
	_, err = p.Factor(context.Background(), make([]complex128, 32), make([]complex128, 32), make([]complex128, 32))
	assert.ErrorIs(t, err, tridiag.ErrOptions)
}

var errRealOnly = errors.New("real-only test device builds no solver")

// realOnlyDevice is a device whose backend has no ComplexBackend.
type realOnlyDevice struct{}

func (realOnlyDevice) Name() string { return "real-only test device" }
func (realOnlyDevice) NewSolver32(tridiag.Spec) (tridiag.Solver[float32], error) {
	return nil, errRealOnly
}
func (realOnlyDevice) NewSolver64(tridiag.Spec) (tridiag.Solver[float64], error) {
	return nil, errRealOnly
}

// Check's κ̂ is a lower bound of the dense κ∞ within a factor of 10, and
// its backward error flags a perturbed solution.
func TestComplexCheck(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 28))
	for _, cyclic := range []bool{false, true} {
		const n = 60
		sys := []csystem{randCSystem(r, n, 0), shiftedLaplacian(r, n, 0.3), helmholtz(r, n, 1.1, 0.05), randCSystem(r, n, 3i)}
		G := len(sys)
		shape := tridiag.Shape{N: n, G: G, Layout: tridiag.Strided(G+1, 1)}
		p, err := tridiag.NewPlan[complex128](nil, shape, tridiag.Options{Cyclic: cyclic})
		require.NoError(t, err)
		a, b, c, d := cpack[complex128](shape, sys)
		x := make([]complex128, len(d))
		require.NoError(t, p.Solve(context.Background(), a, b, c, d, x))
		st, err := p.Check(a, b, c, d, x)
		require.NoError(t, err)
		for g, s := range sys {
			_, kappa := cref(t, s, cyclic)
			assert.LessOrEqual(t, st[g].Cond, kappa*(1+1e-8), "cyclic=%v system %d", cyclic, g)
			assert.GreaterOrEqual(t, st[g].Cond, kappa/10, "cyclic=%v system %d", cyclic, g)
			assert.Less(t, st[g].BackwardError, 10*tridiag.Epsilon[complex128](), "cyclic=%v system %d", cyclic, g)
		}
		l := shape.Normalize().Layout
		x[l.Index(7, 2)] += 1e-6i
		st, err = p.Check(a, b, c, d, x)
		var be *tridiag.BatchError
		require.ErrorAs(t, err, &be)
		assert.Equal(t, []int{2}, be.Systems())
		assert.True(t, st[2].Flags&tridiag.BackwardErrorTooLarge != 0)
	}
}

// Options.Check flags a singular periodic complex system: the
// Laplacian with the corners, shifted by 0 (its rows sum to 0).
func TestComplexCheckSingularCyclic(t *testing.T) {
	const n = 32
	shape := tridiag.Shape{N: n, G: 1}
	p, err := tridiag.NewPlan[complex128](nil, shape, tridiag.Options{Cyclic: true, Check: true})
	require.NoError(t, err)
	d := make([]complex128, n)
	for i := range d {
		d[i] = complex(math.Sin(float64(i)), 1)
	}
	err = p.SolveConst(context.Background(), -1i, 2i, -1i, d, make([]complex128, n))
	var be *tridiag.BatchError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, []int{0}, be.Systems())
}

func TestComplexSolveManyMatchesSolve(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 28))
	const n, G, nrhs = 21, 3, 4
	shape := tridiag.Shape{N: n, G: G, Layout: tridiag.Interleaved(G)}
	sys := []csystem{randCSystem(r, n, 0), shiftedLaplacian(r, n, 1), helmholtz(r, n, 1, 0.01)}
	a, b, c, _ := cpack[complex64](shape, sys)
	L := shape.Len()
	d := make([]complex64, nrhs*L)
	for i := range d {
		d[i] = complex64(crand(r))
	}
	p, err := tridiag.NewPlan[complex64](nil, shape, tridiag.Options{})
	require.NoError(t, err)
	x := make([]complex64, len(d))
	require.NoError(t, p.SolveMany(context.Background(), nrhs, a, b, c, d, x))
	for k := range nrhs {
		col := make([]complex64, L)
		require.NoError(t, p.Solve(context.Background(), a, b, c, d[k*L:(k+1)*L], col))
		assert.Equal(t, col, x[k*L:(k+1)*L], "column %d", k)
	}
}

// TestComplexPartitionCPU: the CPU's complex Partition plans give
// partition.SolveC's bits system by system, in every layout, and report
// its breakdowns with the system and row.
func TestComplexPartitionCPU(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	n, g := 37, 5
	for _, l := range []tridiag.Layout{tridiag.Contiguous(n), tridiag.Interleaved(g), tridiag.Strided(g+2, 1)} {
		shape := tridiag.Shape{N: n, G: g, Layout: l}
		m := shape.Len()
		a, b, c, d := make([]complex128, m), make([]complex128, m), make([]complex128, m), make([]complex128, m)
		for s := range g {
			for i := range n {
				k := l.Index(i, s)
				a[k], b[k], c[k], d[k] = crand(r), crand(r)+5, crand(r), crand(r)
			}
		}
		// System 3, row 20: a zero pivot.
		k := l.Index(20, 3)
		a[k], b[k] = 0, 0
		p, err := tridiag.NewPlan[complex128](nil, shape, tridiag.Options{Algorithm: tridiag.Partition})
		require.NoError(t, err)
		x := make([]complex128, m)
		err = p.Solve(context.Background(), a, b, c, d, x)
		var be *tridiag.BatchError
		require.ErrorAs(t, err, &be)
		require.Len(t, be.Failed, 1)
		assert.Equal(t, 3, be.Failed[0].System)
		assert.Equal(t, 20, be.Failed[0].Row)
		require.NoError(t, p.Close())
		for s := range g {
			if s == 3 {
				continue
			}
			sa, sb, sc, sd := make([]complex128, n), make([]complex128, n), make([]complex128, n), make([]complex128, n)
			for i := range n {
				k := l.Index(i, s)
				sa[i], sb[i], sc[i], sd[i] = a[k], b[k], c[k], d[k]
			}
			want := make([]complex128, n)
			require.NoError(t, partition.SolveC(sa, sb, sc, sd, want, partition.DefaultChunk(n), nil))
			for i := range n {
				require.Equal(t, want[i], x[l.Index(i, s)], "system %d row %d", s, i)
			}
		}
	}
}
