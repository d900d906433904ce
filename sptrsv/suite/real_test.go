package suite

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/sparse"
	"github.com/bandsolve/bandsolve/sptrsv"
)

// realDir is the folder of the SuiteSparse matrices, relative to this
// package; scripts/fetch-suitesparse.sh fills it.
const realDir = "testdata/suitesparse"

const fetchHint = "run scripts/fetch-suitesparse.sh sptrsv/suite/testdata/suitesparse from the repository root"

// realSizes are the orders and entry counts (both triangles of a
// symmetric matrix) that SuiteSparse lists for the matrices.
var realSizes = map[string][2]int{
	"add32":   {4960, 23884},
	"g20":     {400, 1920},
	"g4":      {16, 64},
	"jgl009":  {9, 50},
	"lund_a":  {147, 2449},
	"pores_1": {30, 180},
	"utm300":  {300, 3155},
}

// realMatrices reads the matrices of realDir, skipping the test when
// there are none and logging the absent ones.
func realMatrices(t *testing.T) []RealMatrix {
	t.Helper()
	ms, absent, err := ReadReal(realDir)
	require.NoError(t, err)
	if len(ms) == 0 {
		t.Skipf("no SuiteSparse matrix in %s: %s", realDir, fetchHint)
	}
	if len(absent) > 0 {
		t.Logf("absent from %s (%s): %s", realDir, fetchHint, strings.Join(absent, ", "))
	}
	return ms
}

func TestReadRealSizes(t *testing.T) {
	for _, m := range realMatrices(t) {
		want, ok := realSizes[m.Name]
		require.True(t, ok, m.Name)
		require.NoError(t, m.A.Check())
		assert.Equal(t, want[0], m.A.N, "%s: n", m.Name)
		assert.Equal(t, want[1], m.A.NNZ(), "%s: nnz", m.Name)
		for _, i := range m.ZeroDiagonal {
			assert.Zero(t, m.A.At(i, i), "%s: row %d", m.Name, i)
		}
		zeros := 0
		for i := range m.A.N {
			if m.A.At(i, i) == 0 {
				zeros++
			}
		}
		assert.Len(t, m.ZeroDiagonal, zeros, m.Name)
	}
}

// TestRealLundBothFormats reads lund_a from its Harwell–Boeing and its
// Matrix Market file: the same matrix, bit for bit.
func TestRealLundBothFormats(t *testing.T) {
	read := func(name string, r func(f *os.File) (*sparse.COO, error)) *sparse.CSR {
		f, err := os.Open(filepath.Join(realDir, name))
		if os.IsNotExist(err) {
			t.Skipf("%s absent: %s", name, fetchHint)
		}
		require.NoError(t, err)
		defer f.Close()
		c, err := r(f)
		require.NoError(t, err)
		a, err := c.ToCSR()
		require.NoError(t, err)
		return a
	}
	hb := read("lund_a.rsa", func(f *os.File) (*sparse.COO, error) { return sparse.ReadHarwellBoeing(f) })
	mm := read("lund_a.mtx", func(f *os.File) (*sparse.COO, error) { return sparse.ReadMatrixMarket(f) })
	assert.Equal(t, mm, hb)
}

// realResidualTol bounds the normwise backward error of a triangular
// solve whose rows hold at most k entries: forward substitution is
// backward stable with |ΔT| ≤ γ_k|T|, γ_k = kε/(1 − kε).
func realResidualTol(k int, eps float64) float64 {
	return 4 * float64(k) * eps
}

// TestReal solves with every triangle of the SuiteSparse matrices: the
// level statistics of Analyze are the case's, the level-set solve gives
// the bits of the sequential one, the synchronization-free solve agrees,
// and the residuals are at the level of backward stability in float64
// and float32. A triangle with a zero or missing diagonal entry is
// refused by Analyze with the row, and solved with a unit diagonal
// instead.
func TestReal(t *testing.T) {
	s, absent, err := Real(realDir)
	require.NoError(t, err)
	if len(s) == 0 {
		t.Skipf("no SuiteSparse matrix in %s: %s", realDir, fetchHint)
	}
	if len(absent) > 0 {
		t.Logf("absent from %s (%s): %s", realDir, fetchHint, strings.Join(absent, ", "))
	}
	ms, _, err := ReadReal(realDir)
	require.NoError(t, err)
	zero := map[string][]int{}
	for _, m := range ms {
		zero[m.Name] = m.ZeroDiagonal
	}
	t.Logf("%-16s %6s %7s %7s %s", "case", "n", "nnz", "levels", "zero or missing diagonal")
	for _, c := range s {
		t.Run(c.Name, func(t *testing.T) {
			name, tri, ok := strings.Cut(c.Name, "/")
			require.True(t, ok)
			assert.Equal(t, tri, c.Triangle.String())
			a := c.Build()
			require.NoError(t, a.Check())
			assert.Equal(t, c.N, a.N)
			assert.Equal(t, c.NNZ, a.NNZ())
			assert.NotSame(t, a, c.Build(), "a fresh copy per Build")
			opts := sptrsv.Options{Triangle: sptrsv.Triangle(c.Triangle)}

			z := zero[name]
			t.Logf("%-16s %6d %7d %7d %v", c.Name, c.N, c.NNZ, c.Levels, z)
			if len(z) > 0 {
				_, err := sptrsv.Analyze(a, opts)
				require.ErrorIs(t, err, sptrsv.ErrSingular)
				assert.Contains(t, err.Error(), fmt.Sprintf("row %d has", z[0]))
				assert.Contains(t, c.Desc, fmt.Sprintf("the first in row %d", z[0]))
				opts.UnitDiagonal = true
			}
			an, err := sptrsv.Analyze(a, opts)
			require.NoError(t, err, "the whole matrix is the %s triangle", c.Triangle)
			st := an.Stats()
			assert.Equal(t, c.N, st.N)
			assert.Equal(t, c.Levels, st.Levels)
			if !opts.UnitDiagonal {
				assert.Equal(t, c.NNZ, st.NNZ)
			}

			rng := rand.New(rand.NewPCG(5, uint64(c.N)))
			b := make([]float64, c.N)
			for i := range b {
				b[i] = 2*rng.Float64() - 1
			}
			rowMax := 0
			for i := range a.N {
				rowMax = max(rowMax, int(a.RowPtr[i+1]-a.RowPtr[i])+1)
			}
			seq := make([]float64, c.N)
			require.NoError(t, sptrsv.SolveSequential(an, b, seq))
			res := realResidual(an, seq, b)
			t.Logf("%s: float64 residual %.2g", c.Name, res)
			require.False(t, math.IsNaN(res), "x is not finite")
			assert.LessOrEqual(t, res, realResidualTol(rowMax, 0x1p-53), "sequential residual")

			// The level-set solve, with the defaults and with every level
			// handed to four workers.
			par := opts
			par.Workers, par.SerialLevelRows = 4, -1
			anPar, err := sptrsv.Analyze(a, par)
			require.NoError(t, err)
			for _, an := range []*sptrsv.Analysis{an, anPar} {
				lev := make([]float64, c.N)
				require.NoError(t, sptrsv.Solve(context.Background(), an, b, lev))
				for i := range lev {
					require.Equal(t, math.Float64bits(seq[i]), math.Float64bits(lev[i]), "level-set x[%d] not bitwise equal to sequential", i)
				}
			}
			sf := make([]float64, c.N)
			require.NoError(t, sptrsv.SolveSyncFree(context.Background(), anPar, b, sf))
			assert.LessOrEqual(t, realResidual(an, sf, b), realResidualTol(rowMax, 0x1p-53), "sync-free residual")

			b32, x32 := make([]float32, c.N), make([]float32, c.N)
			for i, v := range b {
				b32[i] = float32(v)
			}
			require.NoError(t, sptrsv.Solve(context.Background(), an, b32, x32))
			x64, b64 := make([]float64, c.N), make([]float64, c.N)
			for i := range x32 {
				x64[i], b64[i] = float64(x32[i]), float64(b32[i])
			}
			res32 := realResidual(an, x64, b64)
			t.Logf("%s: float32 residual %.2g", c.Name, res32)
			require.False(t, math.IsNaN(res32), "float32 x is not finite")
			assert.LessOrEqual(t, res32, realResidualTol(rowMax, 0x1p-24), "float32 residual")
		})
	}
}

// realResidual is ‖b − T x‖∞ / (‖T‖∞‖x‖∞ + ‖b‖∞) for the triangle T of an
// (a unit diagonal counted as ones), in float64; NaN when x is not finite.
func realResidual(an *sptrsv.Analysis, x, b []float64) float64 {
	tr, diagPos := an.Triangular()
	var rmax, tnorm, xnorm, bnorm float64
	for i := range tr.N {
		if math.IsInf(x[i], 0) || math.IsNaN(x[i]) {
			return math.NaN()
		}
		r, rowSum := b[i], 0.0
		for k := tr.RowPtr[i]; k < tr.RowPtr[i+1]; k++ {
			r -= tr.Val[k] * x[tr.Col[k]]
			rowSum += math.Abs(tr.Val[k])
		}
		if diagPos[i] < 0 {
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

// smallHB is a 3×3 unsymmetric matrix in Harwell–Boeing form whose (2, 2)
// entry is missing:
//
//	2  1  0
//	0  0  3
//	4  5  6
const smallHB = `small test matrix                                                       SMALL3
             4             1             1             2             0
RUA                        3             3             6             0
(4I3)           (6I3)           (3E12.4)
  1  3  5  7
  1  3  1  3  2  3
  2.0000E+00  4.0000E+00  1.0000E+00
  5.0000E+00  3.0000E+00  6.0000E+00
`

func TestRealFromFolder(t *testing.T) {
	// Nothing present: every matrix absent, no error.
	empty := t.TempDir()
	s, absent, err := Real(empty)
	require.NoError(t, err)
	assert.Empty(t, s)
	require.Len(t, absent, len(RealNames()))
	assert.Equal(t, "add32 (big.rua or add32.rua or add32.mtx)", absent[0])
	for k, name := range RealNames() {
		assert.True(t, strings.HasPrefix(absent[k], name+" ("), absent[k])
	}

	// One file, under the name of g4.
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "g4.rua"), []byte(smallHB), 0o644))
	ms, absent, err := ReadReal(dir)
	require.NoError(t, err)
	require.Len(t, ms, 1)
	assert.Len(t, absent, len(RealNames())-1)
	assert.NotContains(t, strings.Join(absent, " "), "g4")
	assert.Equal(t, "g4.rua", ms[0].File)
	assert.Equal(t, []int{1}, ms[0].ZeroDiagonal)

	s, _, err = Real(dir)
	require.NoError(t, err)
	require.Equal(t, []string{"g4/lower", "g4/upper"}, s.Names())
	want := map[Triangle][][]float64{
		Lower: {{2, 0, 0}, {0, 0, 0}, {4, 5, 6}},
		Upper: {{2, 1, 0}, {0, 0, 3}, {0, 0, 6}},
	}
	for _, c := range s {
		a := c.Build()
		for i, row := range want[c.Triangle] {
			for j, v := range row {
				assert.Equal(t, v, a.At(i, j), "%s (%d, %d)", c.Name, i, j)
			}
		}
		assert.Equal(t, a.NNZ(), c.NNZ, c.Name)
		assert.Contains(t, c.Desc, "1 zero or missing diagonal entry, the first in row 1", c.Name)
		_, err := sptrsv.Analyze(a, sptrsv.Options{Triangle: sptrsv.Triangle(c.Triangle)})
		assert.EqualError(t, err, "sptrsv: singular triangle: row 1 has no diagonal entry")
	}
	// Lower: row 2 depends on rows 0 and 1 (levels 1, 1, 2); upper: row 1
	// on row 2, row 0 on row 1 (levels 3, 2, 1).
	assert.Equal(t, 2, s[0].Levels)
	assert.Equal(t, 3, s[1].Levels)

	// A bad file is an error naming it.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "utm300.rua"), []byte(strings.Replace(smallHB, "RUA", "CUA", 1)), 0o644))
	_, _, err = Real(dir)
	require.ErrorIs(t, err, sparse.ErrHarwellBoeing)
	assert.Contains(t, err.Error(), "suite: utm300: "+filepath.Join(dir, "utm300.rua")+": sparse: Harwell-Boeing line 3")
	require.NoError(t, os.Remove(filepath.Join(dir, "utm300.rua")))

	// Matrix Market by the extension; a rectangular matrix is refused.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pores_1.mtx"), []byte("%%MatrixMarket matrix coordinate real general\n2 3 1\n1 1 1\n"), 0o644))
	_, _, err = ReadReal(dir)
	require.ErrorIs(t, err, sparse.ErrShape)
	assert.Contains(t, err.Error(), "the matrix is 2×3, want a square one")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pores_1.mtx"), []byte("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 2 -1\n"), 0o644))
	ms, _, err = ReadReal(dir)
	require.NoError(t, err)
	require.Len(t, ms, 2)
	assert.Equal(t, "pores_1", ms[1].Name)
	assert.Empty(t, ms[1].ZeroDiagonal)
}

func TestTriangleMatchesSptrsv(t *testing.T) {
	assert.Equal(t, sptrsv.Lower, sptrsv.Triangle(Lower))
	assert.Equal(t, sptrsv.Upper, sptrsv.Triangle(Upper))
	assert.Equal(t, sptrsv.Lower.String(), Lower.String())
	assert.Equal(t, sptrsv.Upper.String(), Upper.String())
}

// TestUpperLevels reverses the rows and columns of lower triangles: the
// upper triangles they give have the same level sizes, and Analyze agrees.
func TestUpperLevels(t *testing.T) {
	for _, l := range []*sparse.CSR{FEMLike(30, Seed), PowerLaw(3000, 2.9, Seed), Laplacian2D(12, RCM)} {
		n := l.N
		rev := make([]int, n)
		for i := range rev {
			rev[i] = n - 1 - i
		}
		u, err := l.Permute(rev, rev)
		require.NoError(t, err)
		require.Equal(t, u, triangle(u, Upper), "an upper triangle")
		sizes := levelSizes(u, Upper)
		assert.Equal(t, LevelSizes(l), sizes)
		an, err := sptrsv.Analyze(u, sptrsv.Options{Triangle: sptrsv.Upper})
		require.NoError(t, err)
		assert.Equal(t, an.LevelSizes(), sizes)
		assert.Equal(t, []int{n}, levelSizes(u, Lower), "the lower triangle of u is its diagonal")
	}
}
