package sptrsv

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/bandsolve/bandsolve/sparse"
)

// randomTriangle returns an n×n triangle with each off-diagonal entry of
// the triangle present with probability density, values in [−1, 1), and
// a diagonal of 1 + the row's absolute sum (so the solve is well
// conditioned). With general, the other triangle gets entries too.
func randomTriangle(rng *rand.Rand, n int, density float64, tri Triangle, general bool) *sparse.CSR {
	c := sparse.NewCOO(n, n, 0)
	for i := range n {
		sum := 0.0
		for j := range n {
			if j == i || rng.Float64() >= density {
				continue
			}
			v := 2*rng.Float64() - 1
			inside := (tri == Lower) == (j < i)
			if inside {
				sum += math.Abs(v)
			} else if !general {
				continue
			}
			c.Add(i, j, v)
		}
		c.Add(i, i, (1+sum)*float64(1-2*rng.IntN(2)))
	}
	a, err := c.ToCSR()
	if err != nil {
		panic(err)
	}
	return a
}

// denseSolve solves with the triangle of a by gonum (the reference).
func denseSolve(t *testing.T, a *sparse.CSR, tri Triangle, unit bool, b []float64) []float64 {
	n := a.N
	kind := mat.Lower
	if tri == Upper {
		kind = mat.Upper
	}
	td := mat.NewTriDense(n, kind, nil)
	for i := range n {
		for k := a.RowPtr[i]; k < a.RowPtr[i+1]; k++ {
			j := int(a.Col[k])
			if (tri == Lower && j <= i) || (tri == Upper && j >= i) {
				td.SetTri(i, j, a.Val[k])
			}
		}
		if unit {
			td.SetTri(i, i, 1)
		}
	}
	var x mat.VecDense
	require.NoError(t, x.SolveVec(td, mat.NewVecDense(n, append([]float64(nil), b...))))
	return x.RawVector().Data
}

// relErr is ‖x − y‖∞ / ‖y‖∞.
func relErr(x, y []float64) float64 {
	var d, m float64
	for i := range x {
		d = max(d, math.Abs(x[i]-y[i]))
		m = max(m, math.Abs(y[i]))
	}
	return d / m
}

func TestSolveAgainstDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 7, 100, 333} {
		for _, density := range []float64{0.005, 0.05, 0.5} {
			for _, tri := range []Triangle{Lower, Upper} {
				for _, unit := range []bool{false, true} {
					for _, workers := range []int{1, 2, 3, 8} {
						name := fmt.Sprintf("n%d_d%g_%s_unit%v_w%d", n, density, tri, unit, workers)
						t.Run(name, func(t *testing.T) {
							a := randomTriangle(rng, n, density, tri, false)
							b := make([]float64, n)
							for i := range b {
								b[i] = 2*rng.Float64() - 1
							}
							want := denseSolve(t, a, tri, unit, b)
							// Every level to the workers, wide and narrow levels mixed, and the default threshold.
							for _, serial := range []int{-1, 3, 0} {
								an, err := Analyze(a, Options{Triangle: tri, UnitDiagonal: unit, Workers: workers, SerialLevelRows: serial})
								require.NoError(t, err)
								seq := make([]float64, n)
								require.NoError(t, SolveSequential(an, b, seq))
								assert.Less(t, relErr(seq, want), 1e-12, "sequential against dense")

								lev := make([]float64, n)
								require.NoError(t, Solve(context.Background(), an, b, lev))
								for i := range lev {
									require.Equal(t, math.Float64bits(seq[i]), math.Float64bits(lev[i]), "level-set x[%d] not bitwise equal to sequential", i)
								}

								sf := make([]float64, n)
								require.NoError(t, SolveSyncFree(context.Background(), an, b, sf))
								assert.Less(t, relErr(sf, seq), 1e-13, "sync-free against sequential")
								assert.Less(t, residual(a, tri, unit, sf, b), 1e-13, "sync-free residual")
							}
						})
					}
				}
			}
		}
	}
}

// residual is ‖b − T x‖∞ / (‖T‖∞‖x‖∞ + ‖b‖∞) for the triangle T of a.
func residual(a *sparse.CSR, tri Triangle, unit bool, x, b []float64) float64 {
	var rmax, tnorm, xnorm, bnorm float64
	for i := range a.N {
		r, rowSum := b[i], 0.0
		for k := a.RowPtr[i]; k < a.RowPtr[i+1]; k++ {
			j := int(a.Col[k])
			v := a.Val[k]
			if j == i && unit {
				v = 1
			} else if (tri == Lower && j > i) || (tri == Upper && j < i) {
				continue
			}
			r -= v * x[j]
			rowSum += math.Abs(v)
		}
		if unit && a.At(i, i) == 0 {
			r -= x[i]
			rowSum++
		}
		rmax = max(rmax, math.Abs(r))
		tnorm = max(tnorm, rowSum)
		xnorm = max(xnorm, math.Abs(x[i]))
		bnorm = max(bnorm, math.Abs(b[i]))
	}
	return rmax / (tnorm*xnorm + bnorm)
}

func TestTrianglePartOfGeneralMatrix(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	n := 150
	for _, tri := range []Triangle{Lower, Upper} {
		a := randomTriangle(rng, n, 0.1, tri, true)
		_, err := Analyze(a, Options{Triangle: tri})
		require.ErrorIs(t, err, ErrNotTriangular, "a general matrix is refused without TrianglePart")

		an, err := Analyze(a, Options{Triangle: tri, Part: TrianglePart})
		require.NoError(t, err)
		b := make([]float64, n)
		for i := range b {
			b[i] = float64(i%7) - 3
		}
		want := denseSolve(t, a, tri, false, b)
		x := make([]float64, n)
		require.NoError(t, Solve(context.Background(), an, b, x))
		assert.Less(t, relErr(x, want), 1e-12)
		tr, _ := an.Triangular()
		for i := range n {
			for k := tr.RowPtr[i]; k < tr.RowPtr[i+1]; k++ {
				j := int(tr.Col[k])
				assert.True(t, tri == Lower && j <= i || tri == Upper && j >= i, "entry (%d, %d) outside the %s triangle", i, j, tri)
			}
		}
	}
}

func TestSolveInPlace(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	a := randomTriangle(rng, 200, 0.05, Lower, false)
	an, err := Analyze(a, Options{Workers: 3, SerialLevelRows: -1})
	require.NoError(t, err)
	b := make([]float64, a.N)
	for i := range b {
		b[i] = rng.NormFloat64()
	}
	want := make([]float64, a.N)
	require.NoError(t, SolveSequential(an, b, want))
	for name, solve := range map[string]func([]float64) error{
		"sequential": func(v []float64) error { return SolveSequential(an, v, v) },
		"levelset":   func(v []float64) error { return Solve(context.Background(), an, v, v) },
		"syncfree":   func(v []float64) error { return SolveSyncFree(context.Background(), an, v, v) },
	} {
		v := append([]float64(nil), b...)
		require.NoError(t, solve(v), name)
		assert.Less(t, relErr(v, want), 1e-13, name)
	}
}

// TestSyncFreeManyWorkers solves the longest chains (a bidiagonal and a
// dense triangle: every component waits on the one before) with more
// workers than cores, so that waiting workers must yield for the solve
// to end.
func TestSyncFreeManyWorkers(t *testing.T) {
	dense := sparse.NewCOO(300, 300, 0)
	for i := range 300 {
		for j := range i {
			dense.Add(i, j, 1/float64(i+j+1))
		}
		dense.Add(i, i, 4)
	}
	for name, a := range map[string]*sparse.CSR{"bidiagonal": bidiagonal(5000), "dense": must(dense.ToCSR())} {
		for _, w := range []int{1, 2, 5, 16, 64} {
			an, err := Analyze(a, Options{Workers: w})
			require.NoError(t, err)
			b := make([]float64, a.N)
			for i := range b {
				b[i] = float64(i%5) + 1
			}
			want := make([]float64, a.N)
			require.NoError(t, SolveSequential(an, b, want))
			x := make([]float64, a.N)
			require.NoError(t, SolveSyncFree(context.Background(), an, b, x), "%s, %d workers", name, w)
			assert.Less(t, relErr(x, want), 1e-13, "%s, %d workers", name, w)
		}
	}
}

func TestCanceled(t *testing.T) {
	an, err := Analyze(bidiagonal(1000), Options{Workers: 4, SerialLevelRows: -1})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b, x := make([]float64, 1000), make([]float64, 1000)
	require.ErrorIs(t, Solve(ctx, an, b, x), context.Canceled)
	// A canceled sync-free solve stops; the components with no pending
	// dependency may still be solved, so only the error is checked when
	// the workers saw the cancelation.
	err = SolveSyncFree(ctx, an, b, x)
	if err != nil {
		require.ErrorIs(t, err, context.Canceled)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// bidiagonal is the lower bidiagonal matrix with 2 on the diagonal and −1
// below: n levels.
func bidiagonal(n int) *sparse.CSR {
	c := sparse.NewCOO(n, n, 2*n)
	for i := range n {
		if i > 0 {
			c.Add(i, i-1, -1)
		}
		c.Add(i, i, 2)
	}
	return must(c.ToCSR())
}

// laplacian2D is the 5-point Laplacian of an m×m grid in natural order.
func laplacian2D(m int) *sparse.CSR {
	n := m * m
	c := sparse.NewCOO(n, n, 5*n)
	for y := range m {
		for x := range m {
			i := y*m + x
			c.Add(i, i, 4)
			if x > 0 {
				c.Add(i, i-1, -1)
			}
			if x < m-1 {
				c.Add(i, i+1, -1)
			}
			if y > 0 {
				c.Add(i, i-m, -1)
			}
			if y < m-1 {
				c.Add(i, i+m, -1)
			}
		}
	}
	return must(c.ToCSR())
}

func TestLevelStatistics(t *testing.T) {
	diag := sparse.NewCOO(10, 10, 10)
	for i := range 10 {
		diag.Add(i, i, float64(i+1))
	}
	an, err := Analyze(must(diag.ToCSR()), Options{})
	require.NoError(t, err)
	assert.Equal(t, 1, an.Levels())
	assert.Equal(t, []int{10}, an.LevelSizes())
	assert.Equal(t, Stats{N: 10, NNZ: 10, Levels: 1, MaxRowsPerLevel: 10, MinRowsPerLevel: 10, MeanRowsPerLevel: 10}, an.Stats())

	an, err = Analyze(bidiagonal(37), Options{})
	require.NoError(t, err)
	assert.Equal(t, 37, an.Levels())
	assert.Equal(t, Stats{N: 37, NNZ: 73, Levels: 37, MaxRowsPerLevel: 1, MinRowsPerLevel: 1, MeanRowsPerLevel: 1}, an.Stats())
	assert.Equal(t, 1, an.InDegree(5))
	assert.Equal(t, 0, an.InDegree(0))

	for _, m := range []int{1, 2, 5, 31} {
		lap := laplacian2D(m)
		for _, tri := range []Triangle{Lower, Upper} {
			an, err := Analyze(lap, Options{Triangle: tri, Part: TrianglePart})
			require.NoError(t, err)
			assert.Equal(t, 2*m-1, an.Levels(), "%d×%d grid, %s", m, m, tri)
			// Level l of the lower triangle is the anti-diagonal x + y = l.
			sizes := an.LevelSizes()
			for l, s := range sizes {
				assert.Equal(t, min(l+1, 2*m-1-l), s, "level %d", l)
			}
			assert.Equal(t, m, an.Stats().MaxRowsPerLevel)
			if tri == Lower && m > 1 {
				assert.Equal(t, 2, an.Level(m+1), "row (1, 1)")
				assert.Equal(t, 0, an.Level(0))
			} else {
				assert.Equal(t, 0, an.Level(m*m-1))
			}
		}
	}
}

func TestAnalyzeErrors(t *testing.T) {
	lower := func(entries ...[3]float64) *sparse.CSR {
		c := sparse.NewCOO(4, 4, len(entries))
		for _, e := range entries {
			c.Add(int(e[0]), int(e[1]), e[2])
		}
		return must(c.ToCSR())
	}
	full := [][3]float64{{0, 0, 1}, {1, 0, 2}, {1, 1, 3}, {2, 2, 4}, {3, 1, 5}, {3, 3, 6}}

	_, err := Analyze(&sparse.CSR{N: 3, M: 4, RowPtr: make([]int32, 4)}, Options{})
	require.ErrorIs(t, err, ErrShape)
	assert.Contains(t, err.Error(), "3×4")

	_, err = Analyze(&sparse.CSR{N: 2, M: 2, RowPtr: []int32{0, 1, 2}, Col: []int32{1, 0}, Val: []float64{1}}, Options{})
	require.ErrorIs(t, err, ErrShape)

	_, err = Analyze(nil, Options{})
	require.ErrorIs(t, err, ErrShape)

	_, err = Analyze(lower(full...), Options{})
	require.NoError(t, err)

	_, err = Analyze(lower(append(full, [3]float64{1, 2, 7})...), Options{})
	require.ErrorIs(t, err, ErrNotTriangular)
	assert.Contains(t, err.Error(), "not lower triangular: entry (1, 2)")

	_, err = Analyze(lower(full...), Options{Triangle: Upper})
	require.ErrorIs(t, err, ErrNotTriangular)
	assert.Contains(t, err.Error(), "not upper triangular: entry (1, 0)")

	noDiag := [][3]float64{{0, 0, 1}, {1, 0, 2}, {1, 1, 3}, {3, 1, 5}, {3, 3, 6}}
	_, err = Analyze(lower(noDiag...), Options{})
	require.ErrorIs(t, err, ErrSingular)
	assert.Contains(t, err.Error(), "row 2 has no diagonal entry")
	an, err := Analyze(lower(noDiag...), Options{UnitDiagonal: true})
	require.NoError(t, err, "a unit diagonal need not be stored")
	b := []float64{1, 2, 3, 4}
	x := make([]float64, 4)
	require.NoError(t, SolveSequential(an, b, x))
	assert.Equal(t, []float64{1, 0, 3, 4}, x)

	zero := [][3]float64{{0, 0, 1}, {1, 0, 2}, {1, 1, 3}, {2, 2, 0}, {3, 3, 6}}
	_, err = Analyze(lower(zero...), Options{})
	require.ErrorIs(t, err, ErrSingular)
	assert.Contains(t, err.Error(), "row 2 has a zero diagonal entry")

	an, err = Analyze(lower(full...), Options{})
	require.NoError(t, err)
	require.ErrorIs(t, SolveSequential(an, b[:3], x), ErrShape)
	require.ErrorIs(t, Solve(context.Background(), an, b, x[:2]), ErrShape)
	require.ErrorIs(t, SolveSyncFree(context.Background(), an, b, x[:2]), ErrShape)
}

func TestSolveFloat32(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, tri := range []Triangle{Lower, Upper} {
		a := randomTriangle(rng, 500, 0.02, tri, false)
		an, err := Analyze(a, Options{Triangle: tri, Workers: 3, SerialLevelRows: 2})
		require.NoError(t, err)
		b64 := make([]float64, a.N)
		b32 := make([]float32, a.N)
		for i := range b64 {
			b32[i] = float32(2*rng.Float64() - 1)
			b64[i] = float64(b32[i])
		}
		x64 := make([]float64, a.N)
		require.NoError(t, SolveSequential(an, b64, x64))
		seq, lev := make([]float32, a.N), make([]float32, a.N)
		require.NoError(t, SolveSequential(an, b32, seq))
		require.NoError(t, Solve(context.Background(), an, b32, lev))
		wide := make([]float64, a.N)
		for i := range seq {
			require.Equal(t, math.Float32bits(seq[i]), math.Float32bits(lev[i]), "%s: x[%d]", tri, i)
			wide[i] = float64(seq[i])
		}
		err64 := relErr(wide, x64)
		assert.Less(t, err64, 1e-5, "%s: float32 against float64", tri)
		assert.Greater(t, err64, 0.0, "%s: the float32 solve runs in float32", tri)
	}
}
