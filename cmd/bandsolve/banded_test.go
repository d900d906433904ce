package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/npy"
	"github.com/bandsolve/bandsolve/sparse"
)

// reportValue returns the number after name in a banded report.
func reportValue(t *testing.T, out, name string) float64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(name) + `\s+([-+0-9.eE]+)`).FindStringSubmatch(out)
	require.NotNil(t, m, "no %q in\n%s", name, out)
	v, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	return v
}

func TestBandedGenerated(t *testing.T) {
	cases := []struct {
		args    []string
		maxRes  float64
		iterate bool
	}{
		{[]string{"-n", "3001", "-k", "5", "-d", "1", "-method", "direct", "-p", "3"}, 1e-12, false},
		{[]string{"-n", "3001", "-k", "5", "-d", "1", "-method", "direct", "-p", "3", "-precision", "f32", "-ul", "2k"}, 1e-4, false},
		{[]string{"-n", "3001", "-k", "5", "-d", "0.5", "-method", "pivot"}, 1e-12, false},
		{[]string{"-n", "3001", "-k", "5", "-d", "0.4", "-p", "10", "-ul", "2k", "-tol", "1e-11"}, 1e-11, true},
		{[]string{"-n", "3001", "-k", "5", "-d", "0.4", "-p", "10", "-ul", "11", "-precision", "mixed", "-tol", "1e-11"}, 1e-11, true},
		{[]string{"-n", "3001", "-k", "5", "-d", "0.8", "-p", "10", "-precond", "block-jacobi", "-device", "cpu:2"}, 1e-10, true},
		{[]string{"-n", "2001", "-k", "3", "-d", "1.5", "-precond", "none"}, 1e-10, true},
	}
	for _, c := range cases {
		code, out, errOut := runCmd(t, append([]string{"banded"}, c.args...)...)
		require.Equal(t, 0, code, "%v: %s", c.args, errOut)
		assert.Empty(t, errOut)
		assert.Contains(t, out, "N                      "+c.args[1], "%v", c.args)
		assert.LessOrEqual(t, reportValue(t, out, "relative residual"), c.maxRes, "%v\n%s", c.args, out)
		assert.LessOrEqual(t, reportValue(t, out, "relative error"), 1e3*c.maxRes, "%v", c.args)
		if c.iterate {
			assert.Contains(t, out, "(converged)", "%v", c.args)
			assert.Positive(t, reportValue(t, out, "iterations"))
		}
	}
	// -p is reported.
	_, out, _ := runCmd(t, "banded", "-n", "3001", "-k", "5", "-method", "direct", "-p", "7")
	assert.Equal(t, 7.0, reportValue(t, out, "partitions"))
}

func TestBandedNPY(t *testing.T) {
	dir := t.TempDir()
	n, k := 500, 4
	A := banded.Random[float64](n, k, 1.2, rand.New(rand.NewPCG(1, 2)))
	// scipy solve_banded storage: the (2K+1, N) array is Band's Data; put
	// garbage in a corner that lies outside the matrix.
	ab := append([]float64(nil), A.Data...)
	ab[0] = 1e30 // a_{−K, 0}
	abPath := filepath.Join(dir, "ab.npy")
	require.NoError(t, npy.WriteFile(abPath, []int{2*k + 1, n}, ab))
	want := make([]float64, n)
	for i := range want {
		want[i] = float64(i%7) - 3
	}
	b := make([]float64, n)
	A.MulVec(want, b)
	bPath := filepath.Join(dir, "b.npy")
	require.NoError(t, npy.WriteFile(bPath, []int{n}, b))
	for _, m := range []string{"direct", "iterative", "pivot"} {
		xPath := filepath.Join(dir, "x-"+m+".npy")
		code, out, errOut := runCmd(t, "banded", "-npy", abPath, "-rhs", bPath, "-method", m, "-o", xPath, "-p", "2")
		require.Equal(t, 0, code, "%s: %s", m, errOut)
		assert.Contains(t, out, "K                      4")
		assert.NotContains(t, out, "relative error") // no manufactured solution
		x, err := npy.ReadFile[float64](xPath)
		require.NoError(t, err)
		require.Equal(t, []int{n}, x.Shape)
		for i := range want {
			require.InDelta(t, want[i], x.Data[i], 1e-9, "%s row %d", m, i)
		}
	}
	// Even number of rows.
	bad := filepath.Join(dir, "bad.npy")
	require.NoError(t, npy.WriteFile(bad, []int{4, n}, make([]float64, 4*n)))
	code, _, errOut := runCmd(t, "banded", "-npy", bad)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "(2K+1, N)")
	// Wrong right-hand side length.
	short := filepath.Join(dir, "short.npy")
	require.NoError(t, npy.WriteFile(short, []int{n - 1}, make([]float64, n-1)))
	code, _, errOut = runCmd(t, "banded", "-npy", abPath, "-rhs", short)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "want (500,)")
}

func TestBandedMTX(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 6))
	// A banded matrix (K = 6, 60% of the band filled, d = 1) whose rows and
	// columns are scattered by a random symmetric permutation.
	a, _ := sparse.ScrambleSymmetric(sparse.RandomBanded(1500, 6, 0.6, 1, rng), rng)
	path := filepath.Join(dir, "a.mtx")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, sparse.WriteMatrixMarket(f, a.ToCOO()))
	require.NoError(t, f.Close())

	code, out, errOut := runCmd(t, "banded", "-mtx", path, "-p", "2", "-tol", "1e-10")
	require.Equal(t, 0, code, errOut)
	t.Log("\n" + out)
	assert.Contains(t, out, "(converged)")
	assert.LessOrEqual(t, reportValue(t, out, "relative residual"), 1e-10)
	assert.LessOrEqual(t, reportValue(t, out, "relative error"), 1e-6)
	orig := reportValue(t, out, "bandwidth original")
	after := reportValue(t, out, "bandwidth RCM")
	assert.Greater(t, orig, 100.0, "the scrambled matrix has a wide band")
	assert.Less(t, after, orig/4, "RCM recovers a narrow band\n%s", out)
	assert.Equal(t, after, reportValue(t, out, "K"))

	// With drop-off the band is narrower and the iteration still converges
	// on the whole sparse operator.
	code, out, errOut = runCmd(t, "banded", "-mtx", path, "-delta", "0.9", "-p", "2", "-precision", "mixed")
	require.Equal(t, 0, code, errOut)
	t.Log("\n" + out)
	assert.LessOrEqual(t, reportValue(t, out, "bandwidth drop-off"), after)
	assert.LessOrEqual(t, reportValue(t, out, "relative residual"), 1e-10)
	// κ̂ of the whole matrix, from solves preconditioned by the band: the
	// same matrix as without drop-off, where the band is the matrix, so
	// the two estimates agree to the estimator's factor of 3.
	assert.Contains(t, out, "solves preconditioned by its band")
	withDrop := reportValue(t, out, "condition estimate")
	_, whole, _ := runCmd(t, "banded", "-mtx", path, "-p", "2", "-tol", "1e-10")
	full := reportValue(t, whole, "condition estimate")
	assert.Positive(t, withDrop)
	assert.InDelta(t, 1, withDrop/full, 2, "κ̂ %.4g with drop-off, %.4g without", withDrop, full)
}

func TestBandedUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-n", "10", "-k", "10"}, 2, "0 ≤ K < N"},
		{[]string{"-d", "-1"}, 2, "degree of dominance"},
		{[]string{"-method", "lu"}, 2, `unknown method "lu"`},
		{[]string{"-precond", "ilu"}, 2, `unknown preconditioner "ilu"`},
		{[]string{"-precond", "none", "-method", "direct"}, 2, "-method iterative only"},
		{[]string{"-precision", "f16"}, 2, `unknown precision "f16"`},
		{[]string{"-precision", "f32"}, 2, "use mixed"},
		{[]string{"-precision", "mixed", "-method", "pivot"}, 2, "applies to -method iterative"},
		{[]string{"-ul", "abc"}, 2, "-ul"},
		{[]string{"-n", "100", "-k", "5", "-ul", "5"}, 2, "must exceed K=5"},
		{[]string{"-tol", "0"}, 2, "-tol"},
		{[]string{"-delta", "0.5"}, 2, "-mtx only"},
		{[]string{"-npy", "a.npy", "-mtx", "b.mtx"}, 2, "at most one"},
		{[]string{"-device", "gpu"}, 2, "unknown device"},
		{[]string{"-device", "cuda", "-method", "pivot"}, 2, "CPU only"},
		{[]string{"-kl", "2", "-ku", "3"}, 2, "-kl and -ku apply to -npy only"},
		{[]string{"-npy", "a.npy", "-kl", "2"}, 2, "give both -kl and -ku"},
		{[]string{"-npy", "a.npy", "-ku", "2"}, 2, "give both -kl and -ku"},
		{[]string{"-npy", "a.npy", "-kl", "-1", "-ku", "2"}, 2, "want bandwidths ≥ 0"},
		{[]string{"-npy", "a.npy", "-kl", "1", "-ku", "2", "-method", "direct"}, 2, "-method direct needs equal bandwidths"},
		{[]string{"-npy", "a.npy", "-kl", "1", "-ku", "2", "-method", "iterative"}, 2, "is solved by -method pivot only"},
		{[]string{"-npy", "a.npy", "-kl", "3", "-ku", "0", "-device", "cuda"}, 2, "runs on the CPU only"},
		{[]string{"-npy", "a.npy", "-kl", "3", "-ku", "0", "-precision", "mixed"}, 2, "applies to -method iterative"},
		{[]string{"-n", "100", "-k", "5", "-p", "11", "-method", "direct"}, 1, "fewer than 2K=10"},
		{[]string{"-mtx", "/nonexistent.mtx"}, 1, "no such file"},
	}
	if !cudaBuilt {
		cases = append(cases, struct {
			args []string
			code int
			want string
		}{[]string{"-n", "100", "-k", "2", "-device", "cuda"}, 1, "not built into this binary"})
	}
	for _, c := range cases {
		code, _, errOut := runCmd(t, append([]string{"banded"}, c.args...)...)
		assert.Equal(t, c.code, code, "%v: %s", c.args, errOut)
		assert.Contains(t, errOut, c.want, "%v", c.args)
	}
}

// generalBand draws an N×N band with KL sub-diagonals and KU
// super-diagonals: entries from U(−1, 1) and diagonal entries of
// magnitude in [KL+KU+1, KL+KU+2) with random signs (well conditioned,
// but the sub-diagonals outweigh the diagonal in many columns, so
// partial pivoting interchanges rows).
func generalBand(n, kl, ku int, rng *rand.Rand) *banded.General[float64] {
	g, err := banded.NewGeneral[float64](n, kl, ku)
	if err != nil {
		panic(err)
	}
	for i := 0; i < n; i++ {
		for j := max(0, i-kl); j <= min(n-1, i+ku); j++ {
			g.Set(i, j, 2*rng.Float64()-1)
		}
		v := float64(kl+ku+1) + rng.Float64()
		if rng.IntN(2) == 0 {
			v = -v
		}
		g.Set(i, i, v)
	}
	return g
}

// -npy with -kl ≠ -ku: SciPy's (L+U+1, N) array is read as it is and
// solved by LU with partial pivoting (the default for KL ≠ KU), with the
// report of the other methods; garbage in the slots outside the matrix
// is ignored; bandwidths beyond N−1 are dropped.
func TestBandedNPYGeneral(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range [][3]int{{600, 2, 5}, {400, 6, 1}, {300, 0, 3}, {250, 4, 0}} {
		n, kl, ku := c[0], c[1], c[2]
		what := fmt.Sprintf("N=%d KL=%d KU=%d", n, kl, ku)
		g := generalBand(n, kl, ku, rng)
		ab := append([]float64(nil), g.Data...)
		if ku > 0 {
			ab[0] = 1e30 // a_{−KU, 0}
		}
		if kl > 0 {
			ab[len(ab)-1] = math.NaN() // a_{N−1+KL, N−1}
		}
		abPath := filepath.Join(dir, fmt.Sprintf("ab-%d-%d.npy", kl, ku))
		require.NoError(t, npy.WriteFile(abPath, []int{kl + ku + 1, n}, ab))
		want := make([]float64, n)
		for i := range want {
			want[i] = float64(i%11) - 5
		}
		b := make([]float64, n)
		g.MulVec(want, b)
		bPath := filepath.Join(dir, fmt.Sprintf("b-%d-%d.npy", kl, ku))
		require.NoError(t, npy.WriteFile(bPath, []int{n}, b))
		L, U := strconv.Itoa(kl), strconv.Itoa(ku)
		for _, extra := range [][]string{nil, {"-method", "pivot"}, {"-precision", "f32"}} {
			xPath := filepath.Join(dir, "x.npy")
			args := append([]string{"banded", "-npy", abPath, "-kl", L, "-ku", U, "-rhs", bPath, "-o", xPath}, extra...)
			code, out, errOut := runCmd(t, args...)
			require.Equal(t, 0, code, "%v: %s", args, errOut)
			assert.Empty(t, errOut)
			assert.Equal(t, float64(n), reportValue(t, out, "N"), what)
			assert.Equal(t, float64(kl), reportValue(t, out, "KL"), what)
			assert.Equal(t, float64(ku), reportValue(t, out, "KU"), what)
			assert.NotRegexp(t, `(?m)^  K\s`, out, "%s: no K line", what)
			assert.Contains(t, out, "banded LU with partial pivoting (the method for KL ≠ KU)", what)
			cond := reportValue(t, out, "condition estimate")
			assert.Greater(t, cond, 1.0, what)
			assert.Less(t, cond, 1e3, what)
			x, err := npy.ReadFile[float64](xPath)
			f32 := extra != nil && extra[1] == "f32"
			if f32 {
				require.Error(t, err, "%s: f32 writes float32", what)
				x32, err := npy.ReadFile[float32](xPath)
				require.NoError(t, err)
				x.Data = make([]float64, len(x32.Data))
				for i, v := range x32.Data {
					x.Data[i] = float64(v)
				}
				assert.LessOrEqual(t, reportValue(t, out, "backward error"), 1e-6, "%v", args)
			} else {
				require.NoError(t, err)
				assert.LessOrEqual(t, reportValue(t, out, "backward error"), 1e-15, "%v", args)
				assert.LessOrEqual(t, reportValue(t, out, "relative residual"), 1e-14, "%v", args)
			}
			tol := 1e-12
			if f32 {
				tol = 1e-4
			}
			for i := range want {
				require.InDelta(t, want[i], x.Data[i], tol*5, "%v row %d", args, i)
			}
		}
	}

	// The shape must be (L+U+1, N).
	abPath := filepath.Join(dir, "ab-2-5.npy")
	code, _, errOut := runCmd(t, "banded", "-npy", abPath, "-kl", "2", "-ku", "4")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "shape (8, 600); -kl 2 -ku 4 want (7, N)")

	// Bandwidths beyond N−1: rows of the array wholly outside the matrix.
	g := generalBand(4, 3, 1, rng)
	big := make([]float64, (6+1+1)*4) // -kl 6 -ku 1
	copy(big, g.Data)
	bigPath := filepath.Join(dir, "big.npy")
	require.NoError(t, npy.WriteFile(bigPath, []int{8, 4}, big))
	code, out, errOut := runCmd(t, "banded", "-npy", bigPath, "-kl", "6", "-ku", "1")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, 3.0, reportValue(t, out, "KL"))
	assert.Equal(t, 1.0, reportValue(t, out, "KU"))
	assert.LessOrEqual(t, reportValue(t, out, "relative error"), 1e-13)

	// -kl = -ku is the (2K+1, N) band: every method, K in the report.
	sym := generalBand(500, 3, 3, rng)
	symPath := filepath.Join(dir, "sym.npy")
	require.NoError(t, npy.WriteFile(symPath, []int{7, 500}, sym.Data))
	for _, m := range []string{"direct", "iterative", "pivot"} {
		code, out, errOut := runCmd(t, "banded", "-npy", symPath, "-kl", "3", "-ku", "3", "-method", m, "-p", "2")
		require.Equal(t, 0, code, "%s: %s", m, errOut)
		assert.Equal(t, 3.0, reportValue(t, out, "K"), m)
		assert.NotContains(t, out, "KL ≠ KU", m)
		assert.LessOrEqual(t, reportValue(t, out, "relative error"), 1e-10, m)
	}
}

// The solution of -kl ≠ -ku agrees with scipy.linalg.solve_banded on the
// same files (skipped without python3, NumPy and SciPy).
func TestBandedNPYGeneralVsSciPy(t *testing.T) {
	py, err := exec.LookPath("/usr/bin/python3")
	if err != nil {
		if py, err = exec.LookPath("python3"); err != nil {
			t.Skip("no python3")
		}
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 6))
	const n, kl, ku = 700, 4, 9
	g := generalBand(n, kl, ku, rng)
	abPath, bPath := filepath.Join(dir, "ab.npy"), filepath.Join(dir, "b.npy")
	require.NoError(t, npy.WriteFile(abPath, []int{kl + ku + 1, n}, g.Data))
	b := make([]float64, n)
	for i := range b {
		b[i] = 2*rng.Float64() - 1
	}
	require.NoError(t, npy.WriteFile(bPath, []int{n}, b))
	script := fmt.Sprintf(`
import numpy as np
from scipy.linalg import solve_banded
np.save(%q, solve_banded((%d, %d), np.load(%q), np.load(%q)))
`, filepath.Join(dir, "xs.npy"), kl, ku, abPath, bPath)
	out, err := exec.Command(py, "-c", script).CombinedOutput()
	if err != nil {
		if strings.Contains(string(out), "ModuleNotFoundError") {
			t.Skipf("%s has no NumPy or SciPy: %s", py, out)
		}
		require.NoError(t, err, "%s", out)
	}
	xPath := filepath.Join(dir, "x.npy")
	code, rep, errOut := runCmd(t, "banded", "-npy", abPath, "-kl", strconv.Itoa(kl), "-ku", strconv.Itoa(ku), "-rhs", bPath, "-o", xPath)
	require.Equal(t, 0, code, errOut)
	x, err := npy.ReadFile[float64](xPath)
	require.NoError(t, err)
	xs, err := npy.ReadFile[float64](filepath.Join(dir, "xs.npy"))
	require.NoError(t, err)
	cond := reportValue(t, rep, "condition estimate")
	for i := range x.Data {
		require.InDelta(t, xs.Data[i], x.Data[i], 1e-15*cond*10, "row %d", i)
	}
}

// The help names -kl and -ku and the storage they select.
func TestBandedHelpBandwidths(t *testing.T) {
	code, out, _ := runCmd(t, "banded", "-h")
	require.Equal(t, 0, code)
	for _, f := range []string{"-kl", "-ku", "-npy"} {
		assert.Regexp(t, `(?m)^  `+f+`( |$)`, out, "banded flag %s", f)
	}
	assert.Contains(t, out, "-npy AB.npy [-kl L -ku U]")
	assert.Contains(t, out, "scipy.linalg.solve_banded((L, U), ab, b)")
	assert.Contains(t, out, "L ≠ U is solved by -method pivot only")
}

// TestBandedCholesky: -method cholesky on a generated band (made
// symmetric) in both precisions, on a symmetric .npy band, and its
// refusals: a band that is not symmetric, one that is not positive
// definite (exit 1, the row named), the GPU.
func TestBandedCholesky(t *testing.T) {
	for _, prec := range []string{"f64", "f32"} {
		code, out, errOut := runCmd(t, "banded", "-n", "5001", "-k", "4", "-d", "1.05", "-method", "cholesky", "-precision", prec)
		require.Equal(t, 0, code, errOut)
		assert.Contains(t, out, "banded Cholesky (symmetric positive definite)")
		assert.Contains(t, out, "generated symmetric")
		tol := 1e-14
		if prec == "f32" {
			tol = 1e-6
		}
		assert.LessOrEqual(t, reportValue(t, out, "backward error"), tol, out)
	}

	dir := t.TempDir()
	n, k := 300, 3
	A := banded.RandomSymmetric[float64](n, k, 1.5, rand.New(rand.NewPCG(7, 7)))
	sym := filepath.Join(dir, "sym.npy")
	require.NoError(t, npy.WriteFile(sym, []int{2*k + 1, n}, A.Data))
	code, out, errOut := runCmd(t, "banded", "-npy", sym, "-method", "cholesky")
	require.Equal(t, 0, code, errOut)
	assert.LessOrEqual(t, reportValue(t, out, "backward error"), 1e-14, out)

	asym := append([]float64(nil), A.Data...)
	asym[(k-1)*n+20] += 0.5 // a_19,20
	path := filepath.Join(dir, "asym.npy")
	require.NoError(t, npy.WriteFile(path, []int{2*k + 1, n}, asym))
	code, _, errOut = runCmd(t, "banded", "-npy", path, "-method", "cholesky")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "not symmetric: a[20][19]")

	indef := append([]float64(nil), A.Data...)
	indef[k*n+42] = -indef[k*n+42] // a_42,42 < 0
	path = filepath.Join(dir, "indef.npy")
	require.NoError(t, npy.WriteFile(path, []int{2*k + 1, n}, indef))
	code, _, errOut = runCmd(t, "banded", "-npy", path, "-method", "cholesky")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "not positive definite at row 42")
	assert.Contains(t, errOut, "-method pivot")

	code, _, errOut = runCmd(t, "banded", "-n", "100", "-k", "2", "-method", "cholesky", "-device", "cuda")
	assert.Equal(t, 2, code)
	assert.NotEmpty(t, errOut)
}
