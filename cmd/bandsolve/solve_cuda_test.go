//go:build cuda

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/krylov/problems"
)

// TestSolveSummaryAutoCUDA checks that on the GPU the summary line names
// what Auto chose (the plan's description), for a small batch and a large
// single system.
func TestSolveSummaryAutoCUDA(t *testing.T) {
	for _, sz := range []struct{ n, g int }{{64, 8}, {1 << 16, 1}} {
		dir := t.TempDir()
		bt := randomBatch(sz.n, sz.g, false, 6)
		out := filepath.Join(dir, "x.npy")
		code, _, errOut := runCmd(t, append([]string{"solve", "-device", "cuda", "-o", out}, bt.write(t, dir, false)...)...)
		require.Equal(t, 0, code, errOut)
		assert.Regexp(t, regexp.MustCompile(` algorithm=auto \((thomas|gtsv|cr|pcr|wangmou|tpr|partition|batches)`), errOut)
		assert.NotContains(t, errOut, "algorithm=auto precision")
	}
}

// TestSolveAccuracyCheckCUDA: the accuracy verdict runs on the host after
// a GPU solve as after a CPU one: the periodic Poisson matrix (singular)
// and a batch of Neumann operators of which some are singular fail with
// exit status 1 and x is not written, for every algorithm, both
// precisions and both layouts; the non-singular batch passes.
func TestSolveAccuracyCheckCUDA(t *testing.T) {
	dir := t.TempDir()
	dPath := writeSinRHS(t, dir)
	failed := func(what, errOut, out string) {
		if strings.Contains(errOut, "systems failed") || strings.Contains(errOut, "singular matrix") {
			return // a breakdown the solver reports itself
		}
		assert.Contains(t, errOut, "accuracy check failed", what)
		assert.Contains(t, errOut, "ill-conditioned", what)
		assert.NoFileExists(t, out, what)
	}
	for _, alg := range allAlgorithms {
		for _, prec := range []string{"f64", "f32"} {
			what := "periodic Poisson " + alg + " " + prec
			out := filepath.Join(dir, "x-"+alg+prec+".npy")
			code, _, errOut := runCmd(t, "solve", "-device", "cuda", "-const", "-1,2,-1", "-cyclic", "-d", dPath, "-o", out, "-algorithm", alg, "-precision", prec)
			assert.Equal(t, exitFail, code, "%s: %s", what, errOut)
			failed(what, errOut, out)
		}
	}
	singular := map[int]bool{1: true, 3: true, 4: true}
	for _, interleaved := range []bool{false, true} {
		bt := neumannBatch(40, 6, interleaved, singular, 7)
		files := bt.write(t, dir, false)
		ok := neumannBatch(40, 6, interleaved, nil, 7)
		okDir := t.TempDir()
		okFiles := ok.write(t, okDir, false)
		if interleaved {
			files = append(files, "-layout", "interleaved")
			okFiles = append(okFiles, "-layout", "interleaved")
		}
		for _, alg := range allAlgorithms {
			for _, prec := range []string{"f64", "f32"} {
				what := fmt.Sprintf("Neumann interleaved=%v %s %s", interleaved, alg, prec)
				out := filepath.Join(dir, "x.npy")
				_ = os.Remove(out)
				code, _, errOut := runCmd(t, append([]string{"solve", "-device", "cuda", "-o", out, "-algorithm", alg, "-precision", prec}, files...)...)
				assert.Equal(t, exitFail, code, "%s: %s", what, errOut)
				if !strings.Contains(errOut, "systems failed") {
					assert.Contains(t, errOut, "accuracy check failed for 3 of 6 systems (systems 1, 3, 4)", what)
				}
				failed(what, errOut, out)
			}
		}
		code, _, errOut := runCmd(t, append([]string{"solve", "-device", "cuda", "-o", filepath.Join(okDir, "x.npy")}, okFiles...)...)
		assert.Equal(t, 0, code, errOut)
	}
}

// TestTRSVOnGPU: -device cuda solves with every GPU algorithm, both
// precisions, and gives the CPU's solution (bit for bit where one thread
// solves a row: levelset and syncfree-csr on this matrix of three entries
// a row).
func TestTRSVOnGPU(t *testing.T) {
	dir := t.TempDir()
	a := powerLawLower(t)
	mtx := writeCSRMTX(t, dir, "l.mtx", a)
	rhs := randomRHS[float64](t, dir, "b.npy", a.N)
	ref, _ := trsvX[float64](t, dir, "-mtx", mtx, "-rhs", rhs, "-algorithm", "sequential")
	for _, alg := range []string{"auto", "levelset", "syncfree", "syncfree-csr", "locality"} {
		x, out := trsvX[float64](t, dir, "-mtx", mtx, "-rhs", rhs, "-algorithm", alg, "-device", "cuda")
		assert.Contains(t, out, "bandsolve trsv on cuda:0")
		if alg == "auto" {
			assert.Contains(t, out, "auto → syncfree-csr (the GPU's rule")
		}
		if alg == "syncfree" || alg == "auto" || alg == "locality" { // atomics; a warp a row; the slots' order
			assert.InDeltaSlice(t, ref, x, 1e-12, alg)
		} else {
			assert.Equal(t, ref, x, alg)
		}
		assert.LessOrEqual(t, reportValue(t, out, "relative residual"), 1e-15, "%s\n%s", alg, out)
	}
	r32 := randomRHS[float32](t, dir, "b32.npy", a.N)
	ref32, _ := trsvX[float32](t, dir, "-mtx", mtx, "-rhs", r32, "-algorithm", "sequential")
	x32, _ := trsvX[float32](t, dir, "-mtx", mtx, "-rhs", r32, "-algorithm", "syncfree-csr", "-device", "cuda")
	assert.Equal(t, ref32, x32)
}

// TestIterateOnGPU: -device cuda iterates with every vector on the GPU and
// takes the CPU's iterations within one, with IC(0), ILU(0) and without a
// preconditioner; Jacobi is refused there.
func TestIterateOnGPU(t *testing.T) {
	dir := t.TempDir()
	p := writeCSRMTX(t, dir, "p.mtx", problems.Poisson2D(60))
	c := writeCSRMTX(t, dir, "c.mtx", problems.ConvectionDiffusion2D(60, 100))
	for _, args := range [][]string{{"-mtx", p}, {"-mtx", c}, {"-mtx", p, "-precond", "none"}, {"-mtx", c, "-trsv", "levelset"}} {
		code, cpu, errOut := runCmd(t, append([]string{"iterate"}, args...)...)
		require.Equal(t, 0, code, "%v: %s", args, errOut)
		code, out, errOut := runCmd(t, append([]string{"iterate", "-device", "cuda"}, args...)...)
		require.Equal(t, 0, code, "%v: %s", args, errOut)
		assert.Contains(t, out, "bandsolve iterate on cuda:0")
		assert.InDelta(t, reportValue(t, cpu, "iterations"), reportValue(t, out, "iterations"), 1, "%v", args)
		assert.LessOrEqual(t, reportValue(t, out, "relative residual"), 1e-8, "%v", args)
	}
	code, _, errOut := runCmd(t, "iterate", "-mtx", p, "-device", "cuda", "-precond", "jacobi")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "jacobi runs on the CPU only")
}
