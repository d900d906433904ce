package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/npy"
)

var allAlgorithms = []string{"auto", "thomas", "gtsv", "cr", "pcr", "wangmou", "tpr", "partition"}

// TestSolvePeriodicPoisson: the periodic Poisson matrix tridiag(−1, 2, −1)
// with corners is singular. Every algorithm returns some x, and the
// command exits 1 naming the system and κ̂, without writing x; -force
// writes it and still exits 1.
func TestSolvePeriodicPoisson(t *testing.T) {
	dir := t.TempDir()
	dPath := writeSinRHS(t, dir)
	for _, alg := range allAlgorithms {
		for _, prec := range []string{"f64", "f32"} {
			what := alg + " " + prec
			out := filepath.Join(dir, "x-"+alg+prec+".npy")
			code, _, errOut := runCmd(t, "solve", "-const", "-1,2,-1", "-cyclic", "-d", dPath, "-o", out, "-algorithm", alg, "-precision", prec)
			assert.Equal(t, exitFail, code, "%s: %s", what, errOut)
			lines := strings.Split(strings.TrimSpace(errOut), "\n")
			require.Len(t, lines, 2, "%s: a summary and one line of reason:\n%s", what, errOut)
			reason := lines[1]
			if !strings.Contains(reason, "singular matrix") { // the solver may see it first
				assert.Contains(t, reason, "accuracy check failed for 1 of 1 systems (system 0)", what)
				assert.Contains(t, reason, "κ̂·ε ≥ 1/2", what)
				assert.Contains(t, reason, "not written (-force writes it anyway)", what)
				assert.NoFileExists(t, out, what)
			}
		}
	}
	out := filepath.Join(dir, "x.npy")
	code, _, errOut := runCmd(t, "solve", "-const", "-1,2,-1", "-cyclic", "-d", dPath, "-o", out, "-force")
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, "written anyway (-force)")
	assert.FileExists(t, out)
	// Not singular: exit 0, and the summary reports the check.
	code, _, errOut = runCmd(t, "solve", "-const", "-1,2.5,-1", "-cyclic", "-d", dPath, "-o", out)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "max backward error=")
	assert.Contains(t, errOut, "max κ̂∞=")
}

// writeSinRHS writes d8.npy in dir, d_i = sin(i+1) for 8 rows (a right-hand
// side with a component along the periodic Poisson matrix's null space),
// and returns its path.
func writeSinRHS(t *testing.T, dir string) string {
	t.Helper()
	d := make([]float64, 8)
	for i := range d {
		d[i] = math.Sin(float64(i + 1))
	}
	path := filepath.Join(dir, "d8.npy")
	require.NoError(t, npy.WriteFile(path, []int{8}, d))
	return path
}

// neumannBatch is g systems of n rows: those in singular are Neumann
// diffusion operators with variable coefficients (rows summing to zero),
// the others the same plus 1 on the diagonal.
func neumannBatch(n, g int, interleaved bool, singular map[int]bool, seed uint64) *batch {
	rng := rand.New(rand.NewPCG(seed, 3))
	bt := &batch{n: n, g: g, interleaved: interleaved}
	bt.a, bt.b, bt.c, bt.d = make([]float64, n*g), make([]float64, n*g), make([]float64, n*g), make([]float64, n*g)
	for s := 0; s < g; s++ {
		k := make([]float64, n+1)
		for i := range k {
			k[i] = 0.5 + 3*rng.Float64()
		}
		for i := 0; i < n; i++ {
			j := bt.idx(i, s)
			bt.a[j], bt.c[j], bt.b[j] = -k[i], -k[i+1], k[i]+k[i+1]
			if i == 0 {
				bt.a[j], bt.b[j] = 0, k[1]
			}
			if i == n-1 {
				bt.c[j], bt.b[j] = 0, k[n-1]
			}
			if !singular[s] {
				bt.b[j]++
			}
			bt.d[j] = math.Sin(float64(i + 3*s))
		}
	}
	return bt
}

// TestSolveNeumann: variable-coefficient Neumann matrices are singular;
// every algorithm, layout and precision exits 1 naming exactly the
// singular systems of the batch.
func TestSolveNeumann(t *testing.T) {
	dir := t.TempDir()
	singular := map[int]bool{1: true, 3: true, 4: true}
	for _, interleaved := range []bool{false, true} {
		bt := neumannBatch(40, 6, interleaved, singular, 7)
		files := bt.write(t, dir, false)
		if interleaved {
			files = append(files, "-layout", "interleaved")
		}
		for _, alg := range allAlgorithms {
			for _, prec := range []string{"f64", "f32"} {
				what := fmt.Sprintf("interleaved=%v %s %s", interleaved, alg, prec)
				out := filepath.Join(dir, "x.npy")
				_ = os.Remove(out)
				code, _, errOut := runCmd(t, append([]string{"solve", "-o", out, "-algorithm", alg, "-precision", prec}, files...)...)
				assert.Equal(t, exitFail, code, "%s: %s", what, errOut)
				if strings.Contains(errOut, "systems failed") {
					continue // a breakdown reported by the solver itself
				}
				assert.Contains(t, errOut, "accuracy check failed for 3 of 6 systems (systems 1, 3, 4)", what)
				assert.Contains(t, errOut, "ill-conditioned", what)
				assert.NoFileExists(t, out, what)
			}
		}
		// The non-singular systems alone pass.
		ok := neumannBatch(40, 6, interleaved, nil, 7)
		files = ok.write(t, dir, false)
		if interleaved {
			files = append(files, "-layout", "interleaved")
		}
		code, _, errOut := runCmd(t, append([]string{"solve", "-o", filepath.Join(dir, "x.npy")}, files...)...)
		assert.Equal(t, 0, code, errOut)
	}
}

// TestSolveTolFlag: a solution good to 1e-10 relative fails the f64
// default (2.2e-13) only through -tol; bad -tol values are usage errors.
func TestSolveTolFlag(t *testing.T) {
	dir := t.TempDir()
	bt := randomBatch(30, 4, false, 3)
	files := bt.write(t, dir, false)
	out := filepath.Join(dir, "x.npy")
	code, _, errOut := runCmd(t, append([]string{"solve", "-o", out, "-tol", "1e-20"}, files...)...)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, "accuracy check failed for 4 of 4 systems (systems 0, 1, 2, 3)")
	assert.Contains(t, errOut, "above the tolerance 1.00e-20")
	code, _, errOut = runCmd(t, append([]string{"solve", "-o", out, "-tol", "1e-12"}, files...)...)
	assert.Equal(t, 0, code, errOut)
	for _, bad := range []string{"-1", "1", "NaN"} {
		code, _, errOut = runCmd(t, append([]string{"solve", "-o", out, "-tol", bad}, files...)...)
		assert.Equal(t, exitUsage, code, bad)
		assert.Contains(t, errOut, "-tol", bad)
	}
	_, help, _ := runCmd(t, "solve", "-h")
	assert.Contains(t, help, "-force")
	assert.Contains(t, help, "NOT")
}

// writeMTX writes a dense matrix as a Matrix Market coordinate file.
func writeMTX(t *testing.T, path string, a [][]float64) {
	t.Helper()
	var sb strings.Builder
	nnz := 0
	for _, row := range a {
		for _, v := range row {
			if v != 0 {
				nnz++
			}
		}
	}
	fmt.Fprintf(&sb, "%%%%MatrixMarket matrix coordinate real general\n%d %d %d\n", len(a), len(a), nnz)
	for i, row := range a {
		for j, v := range row {
			if v != 0 {
				fmt.Fprintf(&sb, "%d %d %g\n", i+1, j+1, v)
			}
		}
	}
	require.NoError(t, os.WriteFile(path, []byte(sb.String()), 0o644))
}

// TestBandedSingularMTX: [[1 2] [2 4]] is singular. -method direct boosts
// a pivot; the command exits 1 (κ̂ = ∞) with the reason, and writes no
// x; so do the other methods, each in its own way.
func TestBandedSingularMTX(t *testing.T) {
	dir := t.TempDir()
	mtx := filepath.Join(dir, "a.mtx")
	writeMTX(t, mtx, [][]float64{{1, 2}, {2, 4}})
	rhs := filepath.Join(dir, "b.npy")
	require.NoError(t, npy.WriteFile(rhs, []int{2}, []float64{1, 1}))
	out := filepath.Join(dir, "x.npy")
	for _, extra := range [][]string{nil, {"-rhs", rhs}} {
		args := append([]string{"banded", "-mtx", mtx, "-method", "direct", "-o", out}, extra...)
		code, stdout, errOut := runCmd(t, args...)
		assert.Equal(t, exitFail, code, "%v: %s", extra, errOut)
		assert.Contains(t, stdout, "boosted pivots         1")
		assert.Contains(t, errOut, "accuracy check failed: ill-conditioned (κ̂ = +Inf, singular to working precision")
		assert.Contains(t, errOut, "not written")
		assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %s", errOut)
		assert.NoFileExists(t, out)
	}
	code, _, errOut := runCmd(t, "banded", "-mtx", mtx, "-method", "pivot", "-rhs", rhs)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, "singular matrix")
	code, _, errOut = runCmd(t, "banded", "-mtx", mtx, "-method", "iterative", "-rhs", rhs, "-o", out)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, "ill-conditioned")
	assert.NoFileExists(t, out)
	code, _, _ = runCmd(t, "banded", "-mtx", mtx, "-method", "direct", "-rhs", rhs, "-o", out, "-force")
	assert.Equal(t, exitFail, code)
	assert.FileExists(t, out)
}

// zeroLeadingBand writes a random band (degree of dominance d) whose
// leading pivot is zero, in scipy solve_banded storage.
func zeroLeadingBand(t *testing.T, dir string, n, k int, d float64, seed uint64) string {
	t.Helper()
	A := banded.Random[float64](n, k, d, rand.New(rand.NewPCG(seed, 1)))
	A.Set(0, 0, 0)
	path := filepath.Join(dir, fmt.Sprintf("ab-%d-%d.npy", n, k))
	require.NoError(t, npy.WriteFile(path, []int{2*k + 1, n}, A.Data))
	return path
}

// TestBandedZeroLeadingPivot: a band with a zero leading pivot is boosted
// by -method direct; the solution is refined to the tolerance (the plain
// solve has a relative residual of 1e-3), and with -refine off the
// command says that the backward error is too large.
func TestBandedZeroLeadingPivot(t *testing.T) {
	dir := t.TempDir()
	ab := zeroLeadingBand(t, dir, 500, 3, 1, 1)
	for _, mode := range []string{"always", "boosted"} {
		code, out, errOut := runCmd(t, "banded", "-npy", ab, "-method", "direct", "-refine", mode)
		require.Equal(t, 0, code, "%s: %s", mode, errOut)
		assert.Contains(t, out, "boosted pivots         1")
		assert.Regexp(t, `refinement\s+\d+ steps \+ \d+ BiCG steps`, out)
		assert.LessOrEqual(t, reportValue(t, out, "backward error"), 2.3e-13)
		assert.LessOrEqual(t, reportValue(t, out, "relative error"), 1e-12)
	}
	code, out, errOut := runCmd(t, "banded", "-npy", ab, "-method", "direct", "-refine", "off")
	assert.Equal(t, exitFail, code)
	assert.Greater(t, reportValue(t, out, "relative residual"), 1e-6)
	assert.Contains(t, errOut, "accuracy check failed: backward error")
	assert.Contains(t, errOut, "above the tolerance 2.22e-13")
	code, _, errOut = runCmd(t, "banded", "-npy", ab, "-refine", "sometimes")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "-refine")
}

// TestBandedFP32NonDominant: float32 truncated SPIKE on a band that is
// not diagonally dominant (K = 10, d = 0.5) with a boosted leading pivot:
// refined against the float64 matrix, the solution is accurate; without
// refinement it is off by 1e-2 and the command fails. With a zero
// diagonal (d = 0) elimination without pivoting boosts five pivots and
// grows so much that the factors do not precondition A: refinement
// stops, and the command says so, with the backward error reached
// (LU with partial pivoting solves it: κ̂ ≈ 1e6).
func TestBandedFP32NonDominant(t *testing.T) {
	dir := t.TempDir()
	ab := zeroLeadingBand(t, dir, 5000, 10, 0.5, 2)
	code, out, errOut := runCmd(t, "banded", "-npy", ab, "-method", "direct", "-precision", "f32")
	require.Equal(t, 0, code, errOut)
	assert.LessOrEqual(t, reportValue(t, out, "backward error"), 1.2e-4)
	assert.LessOrEqual(t, reportValue(t, out, "relative error"), 1e-4)
	code, out, errOut = runCmd(t, "banded", "-npy", ab, "-method", "direct", "-precision", "f32", "-refine", "off")
	assert.Equal(t, exitFail, code)
	assert.Greater(t, reportValue(t, out, "relative error"), 1e-3)
	assert.Contains(t, errOut, "backward error")

	code, out, errOut = runCmd(t, "banded", "-n", "20000", "-k", "10", "-d", "0", "-method", "direct", "-precision", "f32")
	assert.Equal(t, exitFail, code)
	assert.Positive(t, reportValue(t, out, "boosted pivots"))
	assert.Contains(t, errOut, "refinement did not reach the tolerance: backward error")
	assert.Contains(t, errOut, "-method pivot")
	code, out, errOut = runCmd(t, "banded", "-n", "20000", "-k", "10", "-d", "0", "-method", "pivot", "-precision", "f32")
	require.Equal(t, 0, code, errOut)
	assert.Less(t, reportValue(t, out, "condition estimate"), 4e6)
}
