package tridiag_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/lapack/gonum"
	"gonum.org/v1/gonum/mat"

	"github.com/bandsolve/bandsolve/tridiag"
)

// system is one random system; dom is added to the diagonal.
type system struct{ a, b, c, d []float64 }

func randSystem(r *rand.Rand, n int, dom float64) system {
	s := system{make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)}
	for i := range n {
		s.a[i], s.b[i], s.c[i], s.d[i] = r.Float64()*2-1, r.Float64()*2-1+dom, r.Float64()*2-1, r.Float64()*2-1
	}
	return s
}

// symmetrize makes the system symmetric, as LDLT reads it: a[i] =
// c[i−1], and the corner a[0] = c[n−1].
func (s system) symmetrize() {
	n := len(s.b)
	s.a[0] = s.c[n-1]
	copy(s.a[1:], s.c[:n-1])
}

// oracle solves with gonum's LAPACK Dgtsv (a[0], c[n−1] dropped).
func oracle(s system) []float64 {
	n := len(s.b)
	dl := append([]float64(nil), s.a[1:]...)
	du := append([]float64(nil), s.c[:n-1]...)
	dd := append([]float64(nil), s.b...)
	x := append([]float64(nil), s.d...)
	if !(gonum.Implementation{}).Dgtsv(n, 1, dl, dd, du, x, 1) {
		panic("singular")
	}
	return x
}

// cyclicOracle solves the periodic system densely with gonum.
func cyclicOracle(s system) []float64 {
	n := len(s.b)
	A := mat.NewDense(n, n, nil)
	for i := range n {
		A.Set(i, i, A.At(i, i)+s.b[i])
		A.Set(i, (i+n-1)%n, A.At(i, (i+n-1)%n)+s.a[i])
		A.Set(i, (i+1)%n, A.At(i, (i+1)%n)+s.c[i])
	}
	var x mat.VecDense
	if err := x.SolveVec(A, mat.NewVecDense(n, append([]float64(nil), s.d...))); err != nil {
		panic(err)
	}
	return x.RawVector().Data
}

// pack lays systems out in shape's layout, NaN in the gaps.
func pack[T tridiag.Float](shape tridiag.Shape, sys []system) (a, b, c, d []T) {
	shape = shape.Normalize()
	L := shape.Len()
	mk := func() []T {
		v := make([]T, L)
		for i := range v {
			v[i] = T(math.NaN())
		}
		return v
	}
	a, b, c, d = mk(), mk(), mk(), mk()
	for g, s := range sys {
		for i := range s.b {
			k := shape.Layout.Index(i, g)
			a[k], b[k], c[k], d[k] = T(s.a[i]), T(s.b[i]), T(s.c[i]), T(s.d[i])
		}
	}
	return
}

func unpack[T tridiag.Float](shape tridiag.Shape, x []T, g int) []float64 {
	shape = shape.Normalize()
	out := make([]float64, shape.N)
	for i := range out {
		out[i] = float64(x[shape.Layout.Index(i, g)])
	}
	return out
}

func relDiff(x, ref []float64) float64 {
	var num, den float64
	for i := range x {
		num = math.Max(num, math.Abs(x[i]-ref[i]))
		den = math.Max(den, math.Abs(ref[i]))
	}
	return num / math.Max(den, 1e-300)
}

func layoutsFor(n, g int) map[string]tridiag.Layout {
	return map[string]tridiag.Layout{
		"contiguous":  tridiag.Contiguous(n),
		"interleaved": tridiag.Interleaved(g),
		"strided":     tridiag.Strided(3, 3*n+1),
		"zero":        {},
	}
}

func testEveryAlgorithm[T tridiag.Float](t *testing.T, tol float64) {
	r := rand.New(rand.NewPCG(11, 12))
	algs := append(tridiag.Algorithms(), tridiag.Auto)
	for _, alg := range algs {
		for _, sz := range []struct{ n, g int }{{1, 1}, {2, 3}, {3, 1}, {5, 7}, {17, 4}, {64, 9}, {100, 5}, {257, 2}, {1000, 3}, {1025, 1}} {
			for lname, l := range layoutsFor(sz.n, sz.g) {
				for _, cyclic := range []bool{false, true} {
					name := fmt.Sprintf("%s/N=%d/G=%d/%s/cyclic=%v", alg, sz.n, sz.g, lname, cyclic)
					sys := make([]system, sz.g)
					for g := range sys {
						sys[g] = randSystem(r, sz.n, 4)
						if alg.SPD() {
							sys[g].symmetrize()
						}
					}
					shape := tridiag.Shape{N: sz.n, G: sz.g, Layout: l}
					a, b, c, d := pack[T](shape, sys)
					// Round the systems to T for the oracle.
					for g := range sys {
						for i := range sys[g].b {
							sys[g].a[i], sys[g].b[i], sys[g].c[i], sys[g].d[i] = float64(T(sys[g].a[i])), float64(T(sys[g].b[i])), float64(T(sys[g].c[i])), float64(T(sys[g].d[i]))
						}
					}
					p, err := tridiag.NewPlan[T](nil, shape, tridiag.Options{Algorithm: alg, Cyclic: cyclic})
					require.NoError(t, err, name)
					x := make([]T, len(d))
					require.NoError(t, p.Solve(context.Background(), a, b, c, d, x), name)
					for g := range sys {
						var ref []float64
						if cyclic {
							ref = cyclicOracle(sys[g])
						} else {
							s := sys[g]
							s.a[0], s.c[len(s.c)-1] = 0, 0
							ref = oracle(s)
						}
						assert.LessOrEqual(t, relDiff(unpack(shape, x, g), ref), tol, "%s system %d", name, g)
					}
					// In place gives the same bits.
					require.NoError(t, p.Solve(context.Background(), a, b, c, d, d), name)
					assert.Equal(t, asBits(shape, x), asBits(shape, d), name)
					require.NoError(t, p.Close())
				}
			}
		}
	}
}

func asBits[T tridiag.Float](shape tridiag.Shape, x []T) []float64 {
	shape = shape.Normalize()
	var out []float64
	for g := 0; g < shape.G; g++ {
		out = append(out, unpack(shape, x, g)...)
	}
	return out
}

func TestEveryAlgorithmF64(t *testing.T) { testEveryAlgorithm[float64](t, 1e-11) }
func TestEveryAlgorithmF32(t *testing.T) { testEveryAlgorithm[float32](t, 1e-4) }

func TestConstantCoefficients(t *testing.T) {
	for _, alg := range append(tridiag.Algorithms(), tridiag.Auto) {
		for _, cyclic := range []bool{false, true} {
			n, g := 50, 6
			shape := tridiag.Shape{N: n, G: g, Layout: tridiag.Interleaved(g)}
			p, err := tridiag.NewPlan[float64](nil, shape, tridiag.Options{Algorithm: alg, Cyclic: cyclic})
			require.NoError(t, err)
			r := rand.New(rand.NewPCG(1, 2))
			ca := -1.0
			if alg.SPD() {
				ca = -0.5 // LDLT takes a = c
			}
			sys := make([]system, g)
			for k := range sys {
				sys[k] = randSystem(r, n, 0)
				for i := range n {
					sys[k].a[i], sys[k].b[i], sys[k].c[i] = ca, 2.5, -0.5
				}
			}
			_, _, _, d := pack[float64](shape, sys)
			x := make([]float64, len(d))
			require.NoError(t, p.SolveConst(context.Background(), -1, 2.5, -0.5, d, x))
			for k := range sys {
				var ref []float64
				if cyclic {
					ref = cyclicOracle(sys[k])
				} else {
					sys[k].a[0], sys[k].c[n-1] = 0, 0
					ref = oracle(sys[k])
				}
				assert.InDeltaSlice(t, ref, unpack(shape, x, k), 1e-12, "%s cyclic=%v", alg, cyclic)
			}
		}
	}
}

func TestBadInput(t *testing.T) {
	ctx := context.Background()
	_, err := tridiag.NewPlan[float64](nil, tridiag.Shape{N: 0, G: 1}, tridiag.Options{})
	require.ErrorIs(t, err, tridiag.ErrShape)
	_, err = tridiag.NewPlan[float64](nil, tridiag.Shape{N: 4, G: 4, Layout: tridiag.Strided(1, 2)}, tridiag.Options{})
	require.ErrorIs(t, err, tridiag.ErrShape, "overlapping rows")
	_, err = tridiag.NewPlan[float64](nil, tridiag.Shape{N: 4, G: 1}, tridiag.Options{Algorithm: tridiag.TPR, SliceSize: 6})
	require.ErrorIs(t, err, tridiag.ErrOptions)
	_, err = tridiag.NewPlan[float64](nil, tridiag.Shape{N: 4, G: 1}, tridiag.Options{Algorithm: 99})
	require.ErrorIs(t, err, tridiag.ErrOptions)
	for _, m := range []int{-16, 1000} {
		_, err = tridiag.NewPlan[float64](nil, tridiag.Shape{N: 4, G: 1}, tridiag.Options{SegmentRows: m})
		require.ErrorIs(t, err, tridiag.ErrOptions, "segment rows %d", m)
	}
	// The CPU device solves systems whole: SegmentRows changes nothing.
	sp, err := tridiag.NewPlan[float64](nil, tridiag.Shape{N: 4, G: 1}, tridiag.Options{Algorithm: tridiag.Partition, SegmentRows: 1024})
	require.NoError(t, err)
	require.NoError(t, sp.Close())

	p, err := tridiag.NewPlan[float64](nil, tridiag.Shape{N: 4, G: 3}, tridiag.Options{})
	require.NoError(t, err)
	v := func() []float64 { return []float64{1, 4, 1, 0, 1, 4, 1, 0, 1, 4, 1, 0} }
	err = p.Solve(ctx, v()[:11], v(), v(), v(), v())
	require.ErrorIs(t, err, tridiag.ErrLength)
	assert.Contains(t, err.Error(), "a has 11 elements")
	b := v()
	b[9] = math.NaN()
	err = p.Solve(ctx, v(), b, v(), v(), v())
	require.ErrorIs(t, err, tridiag.ErrNonFinite)
	assert.Contains(t, err.Error(), "b of system 2, row 1")
	err = p.SolveConst(ctx, 1, math.Inf(1), 1, v(), v())
	require.ErrorIs(t, err, tridiag.ErrNonFinite)
	require.NoError(t, p.Close())
	require.ErrorIs(t, p.Solve(ctx, v(), v(), v(), v(), v()), tridiag.ErrClosed)

	// Skipping the check: the NaN is not caught up front and flows into
	// the solution of its own system only.
	p, err = tridiag.NewPlan[float64](nil, tridiag.Shape{N: 4, G: 3}, tridiag.Options{Algorithm: tridiag.Thomas, SkipFiniteCheck: true})
	require.NoError(t, err)
	ones, fours := []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, []float64{4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4}
	fours[9] = math.NaN()
	x := make([]float64, 12)
	err = p.Solve(ctx, ones, fours, ones, ones, x)
	var be *tridiag.BatchError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, 2, be.Failed[0].System)
	assert.True(t, math.IsNaN(x[8]))
	assert.False(t, math.IsNaN(x[0]))
	assert.False(t, math.IsNaN(x[4]))
}

// TestBreakdownPerSystem: a zero pivot fails its own system only, with its
// row; GTSV and Auto solve the same batch.
func TestBreakdownPerSystem(t *testing.T) {
	ctx := context.Background()
	n, g := 8, 4
	r := rand.New(rand.NewPCG(3, 3))
	sys := make([]system, g)
	for k := range sys {
		sys[k] = randSystem(r, n, 4)
	}
	// System 2: b = 0 (solvable with pivoting when a, c ≠ 0, n even).
	for i := range n {
		sys[2].b[i] = 0
	}
	shape := tridiag.Shape{N: n, G: g}
	a, b, c, d := pack[float64](shape, sys)
	for _, alg := range []tridiag.Algorithm{tridiag.Thomas, tridiag.CR, tridiag.PCR, tridiag.WangMou, tridiag.TPR} {
		p, err := tridiag.NewPlan[float64](nil, shape, tridiag.Options{Algorithm: alg})
		require.NoError(t, err)
		x := make([]float64, len(d))
		err = p.Solve(ctx, a, b, c, d, x)
		var be *tridiag.BatchError
		require.ErrorAs(t, err, &be, alg.String())
		require.Len(t, be.Failed, 1)
		assert.Equal(t, 2, be.Failed[0].System)
		assert.GreaterOrEqual(t, be.Failed[0].Row, 0)
		assert.True(t, errors.Is(err, tridiag.ErrZeroPivot))
		assert.Equal(t, []int{0, 0, be.Failed[0].Row + 1, 0}, be.Status())
		assert.True(t, math.IsNaN(x[2*n]), "failed system is NaN")
		s0 := sys[0]
		s0.a[0], s0.c[n-1] = 0, 0
		assert.InDeltaSlice(t, oracle(s0), x[:n], 1e-12)
	}
	for _, alg := range []tridiag.Algorithm{tridiag.GTSV, tridiag.Auto} {
		p, err := tridiag.NewPlan[float64](nil, shape, tridiag.Options{Algorithm: alg})
		require.NoError(t, err)
		x := make([]float64, len(d))
		require.NoError(t, p.Solve(ctx, a, b, c, d, x), alg.String())
		s2 := sys[2]
		s2.a[0], s2.c[n-1] = 0, 0
		assert.InDeltaSlice(t, oracle(s2), x[2*n:3*n], 1e-12)
	}
	// A singular system: GTSV says so.
	sing := system{a: []float64{0, 1, 1}, b: []float64{1, 1, 2}, c: []float64{1, 0, 0}, d: []float64{1, 1, 1}}
	p, err := tridiag.NewPlan[float64](nil, tridiag.Shape{N: 3, G: 1}, tridiag.Options{Algorithm: tridiag.GTSV})
	require.NoError(t, err)
	err = p.Solve(ctx, sing.a, sing.b, sing.c, sing.d, make([]float64, 3))
	require.ErrorIs(t, err, tridiag.ErrSingular)
}

func TestContextCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p, err := tridiag.NewPlan[float64](nil, tridiag.Shape{N: 4, G: 1}, tridiag.Options{})
	require.NoError(t, err)
	v := []float64{1, 1, 1, 1}
	require.ErrorIs(t, p.Solve(ctx, v, v, v, v, make([]float64, 4)), context.Canceled)
}

func TestLayoutValidate(t *testing.T) {
	ok := []tridiag.Shape{
		{N: 5, G: 3}, {N: 5, G: 3, Layout: tridiag.Interleaved(3)}, {N: 4, G: 6, Layout: tridiag.Strided(6, 1)},
		{N: 4, G: 3, Layout: tridiag.Strided(2, 1)}, // i·2 + g: 0..2 vs 2..: overlaps? (0,2)=2,(1,0)=2
	}
	require.NoError(t, ok[0].Validate())
	require.NoError(t, ok[1].Validate())
	require.NoError(t, ok[2].Validate())
	require.ErrorIs(t, ok[3].Validate(), tridiag.ErrShape)
	assert.Equal(t, 15, ok[0].Len())
	assert.Equal(t, 15, ok[1].Len())
	// 2-D row-major ny×nx array, systems along y.
	ny, nx := 7, 5
	s := tridiag.Shape{N: ny, G: nx, Layout: tridiag.Strided(nx, 1)}
	require.NoError(t, s.Validate())
	assert.Equal(t, ny*nx, s.Len())
}

func TestGonumRoundTrip(t *testing.T) {
	tri := mat.NewTridiag(4, []float64{1, 2, 3}, []float64{4, 5, 6, 7}, []float64{8, 9, 10})
	a, b, c := tridiag.FromGonum(tri)
	assert.Equal(t, []float64{0, 1, 2, 3}, a)
	assert.Equal(t, []float64{4, 5, 6, 7}, b)
	assert.Equal(t, []float64{8, 9, 10, 0}, c)
	back, err := tridiag.ToGonum(a, b, c)
	require.NoError(t, err)
	assert.True(t, mat.Equal(tri, back))
	_, err = tridiag.ToGonum(a[:3], b, c)
	require.ErrorIs(t, err, tridiag.ErrLength)
}

func TestParseAlgorithm(t *testing.T) {
	for _, a := range append(tridiag.Algorithms(), tridiag.Auto) {
		got, err := tridiag.ParseAlgorithm(a.String())
		require.NoError(t, err)
		assert.Equal(t, a, got)
	}
	_, err := tridiag.ParseAlgorithm("lu")
	require.ErrorIs(t, err, tridiag.ErrOptions)
}

func BenchmarkCPUThomasContiguous(b *testing.B)  { benchCPU(b, tridiag.Thomas, 256, 4096, false) }
func BenchmarkCPUThomasInterleaved(b *testing.B) { benchCPU(b, tridiag.Thomas, 256, 4096, true) }

func benchCPU(b *testing.B, alg tridiag.Algorithm, n, g int, interleaved bool) {
	benchCPUOpts(b, tridiag.Options{Algorithm: alg}, n, g, interleaved)
}

// benchCPUOpts times float32 solves of g diagonally dominant systems of n
// rows on the default CPU device with opts (finite check skipped).
func benchCPUOpts(b *testing.B, opts tridiag.Options, n, g int, interleaved bool) {
	shape := tridiag.Shape{N: n, G: g}
	if interleaved {
		shape.Layout = tridiag.Interleaved(g)
	}
	sys := make([]system, g)
	r := rand.New(rand.NewPCG(1, 1))
	for k := range sys {
		sys[k] = randSystem(r, n, 4)
	}
	a, bb, c, d := pack[float32](shape, sys)
	x := make([]float32, len(d))
	opts.SkipFiniteCheck = true
	p, err := tridiag.NewPlan[float32](nil, shape, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(n * g * 20))
	for b.Loop() {
		if err := p.Solve(context.Background(), a, bb, c, d, x); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*g)*float64(b.N)/b.Elapsed().Seconds()/1e6, "MRows/s")
}

// TestPlanDescribe checks that a CPU plan names what it runs: Auto as
// Thomas with GTSV where Thomas's pivots grow or break down, every other algorithm by its
// name, cyclic plans alike; a closed plan names the algorithm it was made
// with.
func TestPlanDescribe(t *testing.T) {
	dev := tridiag.NewCPU(1)
	for _, cyclic := range []bool{false, true} {
		p, err := tridiag.NewPlan[float64](dev, tridiag.Shape{N: 8, G: 3}, tridiag.Options{Cyclic: cyclic})
		require.NoError(t, err)
		assert.Equal(t, "thomas, gtsv for the systems that fail its pivot growth test or break down", p.Describe(), "cyclic %v", cyclic)
		require.NoError(t, p.Close())
		assert.Equal(t, "auto", p.Describe(), "closed")
		for _, alg := range tridiag.Algorithms() {
			p, err := tridiag.NewPlan[float32](dev, tridiag.Shape{N: 8, G: 3}, tridiag.Options{Algorithm: alg, Cyclic: cyclic})
			require.NoError(t, err)
			assert.Equal(t, alg.String(), p.Describe())
			require.NoError(t, p.Close())
		}
	}
}

// A shape whose workspace no machine can hold is refused with an error,
// not a Go fatal error (N = 2^40 would need some 80 TB per worker).
func TestNewPlanRefusesHugeWorkspace(t *testing.T) {
	for _, alg := range []tridiag.Algorithm{tridiag.Auto, tridiag.Thomas, tridiag.GTSV, tridiag.CR, tridiag.PCR, tridiag.WangMou, tridiag.TPR, tridiag.Partition, tridiag.PartitionPivot, tridiag.LDLT} {
		_, err := tridiag.NewPlan[float64](tridiag.NewCPU(2), tridiag.Shape{N: 1 << 40, G: 1}, tridiag.Options{Algorithm: alg})
		require.ErrorIs(t, err, tridiag.ErrMemory, alg)
		assert.Contains(t, err.Error(), "tridiag: the float64 workspace of 1 workers for N=1099511627776", alg)
		assert.Contains(t, err.Error(), "more than the", alg)
	}
	_, err := tridiag.NewPlan[float32](tridiag.NewCPU(4), tridiag.Shape{N: 1 << 30, G: 1 << 30}, tridiag.Options{})
	require.ErrorIs(t, err, tridiag.ErrMemory)
	p, err := tridiag.NewPlan[float32](tridiag.NewCPU(4), tridiag.Shape{N: 1 << 10, G: 1 << 30}, tridiag.Options{})
	require.NoError(t, err, "a large batch of small systems needs a small workspace")
	require.NoError(t, p.Close())
}
