package main

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
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
