package main

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/npy"
	"github.com/bandsolve/bandsolve/sparse"
	"github.com/bandsolve/bandsolve/sptrsv"
	"github.com/bandsolve/bandsolve/sptrsv/suite"
)

// writeCSRMTX writes a to a Matrix Market file in dir and returns its path.
func writeCSRMTX(t *testing.T, dir, name string, a *sparse.CSR) string {
	t.Helper()
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, sparse.WriteMatrixMarket(f, a.ToCOO()))
	require.NoError(t, f.Close())
	return path
}

// powerLawLower is the small power-law lower triangle of the suite
// (2·10⁴ rows, 441 levels).
func powerLawLower(t *testing.T) *sparse.CSR {
	t.Helper()
	c, err := suite.Small().Lookup("power-law")
	require.NoError(t, err)
	return c.Build()
}

// randomRHS writes a random vector of length n as .npy of type T.
func randomRHS[T npy.Float](t *testing.T, dir, name string, n int) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, uint64(n)))
	b := make([]T, n)
	for i := range b {
		b[i] = T(2*rng.Float64() - 1)
	}
	path := filepath.Join(dir, name)
	require.NoError(t, npy.WriteFile(path, []int{n}, b))
	return path
}

// trsvX runs trsv with args and -o, requires success and returns x and the
// report.
func trsvX[T npy.Float](t *testing.T, dir string, args ...string) ([]T, string) {
	t.Helper()
	xPath := filepath.Join(dir, "x.npy")
	os.Remove(xPath)
	code, out, errOut := runCmd(t, append(append([]string{"trsv"}, args...), "-o", xPath)...)
	require.Equal(t, 0, code, "%v: %s\n%s", args, errOut, out)
	assert.Empty(t, errOut)
	x, err := npy.ReadFile[T](xPath)
	require.NoError(t, err, "%v", args)
	return x.Data, out
}

func TestTRSVAlgorithmsAgree(t *testing.T) {
	dir := t.TempDir()
	a := powerLawLower(t)
	mtx := writeCSRMTX(t, dir, "l.mtx", a)
	rhs := randomRHS[float64](t, dir, "b.npy", a.N)
	xs := map[string][]float64{}
	for _, alg := range []string{"auto", "sequential", "levelset", "syncfree", "syncfree-csr", "locality"} {
		x, out := trsvX[float64](t, dir, "-mtx", mtx, "-rhs", rhs, "-algorithm", alg, "-workers", "4")
		xs[alg] = x
		assert.Equal(t, 20000.0, reportValue(t, out, "n"))
		assert.Equal(t, 441.0, reportValue(t, out, "levels"))
		assert.LessOrEqual(t, reportValue(t, out, "relative residual"), 1e-15, "%s\n%s", alg, out)
		if alg == "auto" {
			assert.Contains(t, out, "auto → sequential (mean rows per level 45.35 < 16384)")
		}
	}
	assert.Equal(t, xs["sequential"], xs["levelset"], "the level-set solve gives the sequential solve's bits")
	assert.Equal(t, xs["sequential"], xs["auto"])
	assert.Equal(t, xs["sequential"], xs["syncfree-csr"], "the row-wise synchronization-free solve gives the sequential solve's bits")
	for i, v := range xs["sequential"] {
		require.InDelta(t, v, xs["syncfree"][i], 1e-12*math.Max(1, math.Abs(v)), "row %d", i)
		require.InDelta(t, v, xs["locality"][i], 1e-12*math.Max(1, math.Abs(v)), "row %d", i)
	}
}

func TestTRSVManufactured(t *testing.T) {
	dir := t.TempDir()
	a := powerLawLower(t)
	mtx := writeCSRMTX(t, dir, "l.mtx", a)
	code, out, errOut := runCmd(t, "trsv", "-mtx", mtx)
	require.Equal(t, 0, code, errOut)
	assert.LessOrEqual(t, reportValue(t, out, "error"), 1e-12, out)
	assert.Contains(t, out, "b = T·1")
	// A unit diagonal ignores the stored one.
	code, out, errOut = runCmd(t, "trsv", "-mtx", mtx, "-unit", "-algorithm", "levelset")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "unit diagonal")
	assert.Equal(t, float64(a.NNZ()-a.N), reportValue(t, out, "nnz"))
}

func TestTRSVUpper(t *testing.T) {
	dir := t.TempDir()
	u := powerLawLower(t).Transpose()
	mtx := writeCSRMTX(t, dir, "u.mtx", u)
	rhs := randomRHS[float64](t, dir, "b.npy", u.N)
	seq, out := trsvX[float64](t, dir, "-mtx", mtx, "-upper", "-rhs", rhs, "-algorithm", "sequential")
	assert.Contains(t, out, "upper, stored diagonal")
	assert.Equal(t, 441.0, reportValue(t, out, "levels"))
	lev, _ := trsvX[float64](t, dir, "-mtx", mtx, "-upper", "-rhs", rhs, "-algorithm", "levelset", "-workers", "3")
	assert.Equal(t, seq, lev)
	// The residual, here in the test.
	b, err := npy.ReadFile[float64](rhs)
	require.NoError(t, err)
	y := make([]float64, u.N)
	require.NoError(t, u.MulVec(seq, y))
	for i := range y {
		require.InDelta(t, b.Data[i], y[i], 1e-12, "row %d", i)
	}
	// Without -upper the same file is refused, naming an entry.
	code, _, errOut := runCmd(t, "trsv", "-mtx", mtx)
	assert.Equal(t, 1, code)
	assert.Regexp(t, `not lower triangular: entry \(\d+, \d+\)`, errOut)
}

func TestTRSVPart(t *testing.T) {
	dir := t.TempDir()
	l := powerLawLower(t)
	// A general matrix whose lower triangle is l: l plus the transpose of
	// its strict lower part, scaled.
	c := l.ToCOO()
	for i := range l.N {
		for k := l.RowPtr[i]; k < l.RowPtr[i+1]; k++ {
			if j := int(l.Col[k]); j < i {
				c.Add(j, i, 0.5*l.Val[k])
			}
		}
	}
	g, err := c.ToCSR()
	require.NoError(t, err)
	gPath := writeCSRMTX(t, dir, "g.mtx", g)
	lPath := writeCSRMTX(t, dir, "l.mtx", l)
	rhs := randomRHS[float64](t, dir, "b.npy", l.N)
	want, _ := trsvX[float64](t, dir, "-mtx", lPath, "-rhs", rhs)
	got, out := trsvX[float64](t, dir, "-mtx", gPath, "-part", "-rhs", rhs)
	assert.Equal(t, want, got)
	assert.Contains(t, out, "triangle of a general matrix")
	// The upper triangle of the general matrix.
	_, out = trsvX[float64](t, dir, "-mtx", gPath, "-part", "-upper", "-rhs", rhs)
	assert.Contains(t, out, "upper")
	// Without -part: refused, naming the entry.
	code, _, errOut := runCmd(t, "trsv", "-mtx", gPath)
	assert.Equal(t, 1, code)
	assert.Regexp(t, `g\.mtx: .*not lower triangular: entry \(\d+, \d+\) .*-part`, errOut)
}

func TestTRSVPrecision(t *testing.T) {
	dir := t.TempDir()
	a := powerLawLower(t)
	mtx := writeCSRMTX(t, dir, "l.mtx", a)
	r32 := randomRHS[float32](t, dir, "b32.npy", a.N)
	r64 := randomRHS[float64](t, dir, "b64.npy", a.N)
	// A float32 rhs is solved in float32 and x written as float32.
	x32, out := trsvX[float32](t, dir, "-mtx", mtx, "-rhs", r32)
	assert.Contains(t, out, "precision f32")
	assert.Less(t, reportValue(t, out, "relative residual"), 1e-6)
	lev32, _ := trsvX[float32](t, dir, "-mtx", mtx, "-rhs", r32, "-algorithm", "levelset")
	assert.Equal(t, x32, lev32)
	// -precision f64 widens it.
	_, out = trsvX[float64](t, dir, "-mtx", mtx, "-rhs", r32, "-precision", "f64")
	assert.Contains(t, out, "precision f64")
	// A float64 rhs in float64, or rounded by -precision f32.
	_, out = trsvX[float64](t, dir, "-mtx", mtx, "-rhs", r64)
	assert.Contains(t, out, "precision f64")
	_, out = trsvX[float32](t, dir, "-mtx", mtx, "-rhs", r64, "-precision", "f32", "-algorithm", "sequential")
	assert.Contains(t, out, "algorithm              sequential, precision f32")
}

func TestTRSVErrors(t *testing.T) {
	dir := t.TempDir()
	mtx := writeCSRMTX(t, dir, "l.mtx", powerLawLower(t))
	r32 := randomRHS[float32](t, dir, "b32.npy", 20000)
	short := randomRHS[float64](t, dir, "short.npy", 7)
	// A zero diagonal entry in row 1.
	c := sparse.NewCOO(3, 3, 4)
	c.Add(0, 0, 1)
	c.Add(1, 0, 1)
	c.Add(1, 1, 0)
	c.Add(2, 2, 1)
	z, err := c.ToCSR()
	require.NoError(t, err)
	zPath := writeCSRMTX(t, dir, "z.mtx", z)
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"trsv"}, 2, "missing -mtx"},
		{[]string{"trsv", "-mtx", mtx, "-algorithm", "cholesky"}, 2, `unknown algorithm "cholesky"`},
		{[]string{"trsv", "-mtx", mtx, "-algorithm", "sequential", "-device", "cuda"}, 2, "runs on the CPU only"},
		{[]string{"trsv", "-mtx", mtx, "-precision", "f16"}, 2, `unknown precision "f16"`},
		{[]string{"trsv", "-mtx", mtx, "-workers", "-1"}, 2, "-workers -1"},
		{[]string{"trsv", "-mtx", mtx, "-device", "cpu:2", "-workers", "3"}, 2, "disagree"},
		{[]string{"trsv", "-mtx", mtx, "-o", mtx}, 2, "-o "},
		{[]string{"trsv", "-mtx", mtx, "-rhs", short}, 1, "want (20000,)"},
		{[]string{"trsv", "-mtx", mtx, "-rhs", r32, "-algorithm", "syncfree", "-precision", "f32", "-device", "cuda:99"}, 1, `device "cuda:99"`},
		{[]string{"trsv", "-mtx", zPath}, 1, "row 1 has a zero diagonal entry"},
		{[]string{"trsv", "-mtx", filepath.Join(dir, "absent.mtx")}, 1, "-mtx: open"},
	}
	for _, tc := range cases {
		code, out, errOut := runCmd(t, tc.args...)
		assert.Equal(t, tc.code, code, "%v: %s", tc.args, errOut)
		assert.Contains(t, errOut, tc.want, "%v", tc.args)
		assert.Empty(t, out, "%v: nothing is solved", tc.args)
		assert.Equal(t, 1, strings.Count(errOut, "\n"), "%v: one line", tc.args)
	}
	// The unit diagonal needs no stored one.
	code, _, errOut := runCmd(t, "trsv", "-mtx", zPath, "-unit")
	assert.Equal(t, 0, code, errOut)
}

func TestTRSVOutputOnlyWhenAccurate(t *testing.T) {
	dir := t.TempDir()
	a := powerLawLower(t)
	mtx := writeCSRMTX(t, dir, "l.mtx", a)
	rhs := randomRHS[float64](t, dir, "b.npy", a.N)
	xPath := filepath.Join(dir, "x.npy")
	require.NoError(t, os.WriteFile(xPath, []byte("keep"), 0o644))
	// A tolerance no solve meets: exit 1, x not written.
	code, out, errOut := runCmd(t, "trsv", "-mtx", mtx, "-rhs", rhs, "-o", xPath, "-check-tol", "1e-300")
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "relative residual")
	assert.Contains(t, errOut, "accuracy check failed: backward error")
	assert.Contains(t, errOut, "not written (-force writes it anyway)")
	kept, err := os.ReadFile(xPath)
	require.NoError(t, err)
	assert.Equal(t, "keep", string(kept))
	// -force writes it, still exiting 1.
	code, _, errOut = runCmd(t, "trsv", "-mtx", mtx, "-rhs", rhs, "-o", xPath, "-check-tol", "1e-300", "-force")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "written anyway (-force)")
	x, err := npy.ReadFile[float64](xPath)
	require.NoError(t, err)
	assert.Len(t, x.Data, a.N)
	// No temporary file is left beside it.
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{"l.mtx", "b.npy", "x.npy"}, names)
}

func TestTRSVAuto(t *testing.T) {
	st := sptrsv.Stats{N: 1 << 20, Levels: 16, MeanRowsPerLevel: 1 << 16}
	alg, why := autoAlgorithm(st, 4)
	assert.Equal(t, "levelset", alg)
	assert.Contains(t, why, "≥ 16384")
	alg, _ = autoAlgorithm(st, 1)
	assert.Equal(t, "sequential", alg)
	st.MeanRowsPerLevel = 16383
	alg, why = autoAlgorithm(st, 4)
	assert.Equal(t, "sequential", alg)
	assert.Contains(t, why, "< 16384")
	// On a wide matrix the command runs and reports the level-set solve.
	dir := t.TempDir()
	a := suite.TwoLevel(40_000, suite.Seed)
	mtx := writeCSRMTX(t, dir, "w.mtx", a)
	code, out, errOut := runCmd(t, "trsv", "-mtx", mtx, "-workers", "2")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "auto → levelset (mean rows per level 2e+04 ≥ 16384)")
}

func TestTRSVHelp(t *testing.T) {
	code, out, errOut := runCmd(t, "help", "trsv")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "Usage: bandsolve trsv -mtx T.mtx")
	for _, f := range []string{"-mtx", "-upper", "-unit", "-part", "-rhs", "-o", "-algorithm", "-workers", "-precision", "-device", "-check-tol", "-force"} {
		assert.Regexp(t, `(?m)^  `+f+`( |$)`, out, "trsv flag %s", f)
	}
	for _, w := range []string{"Naumov", "Liu et al.", "syncfree-csr", "-device cuda", "16384"} {
		assert.Contains(t, out, w)
	}
	_, out, _ = runCmd(t, "help")
	assert.Contains(t, out, "trsv       solve a sparse triangular system")
}
