package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/krylov/problems"
	"github.com/bandsolve/bandsolve/npy"
)

// TestIterateAuto: auto picks CG with IC(0) for the symmetric Poisson
// matrix and BiCGStab with ILU(0) for convection–diffusion; both meet the
// tolerance with b = A·1 and take fewer iterations than without a
// preconditioner.
func TestIterateAuto(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, file, want string
		args             []string
	}{
		{"poisson", "p.mtx", "cg, preconditioner ic0 (triangular solves", nil},
		{"convection-diffusion", "c.mtx", "bicgstab, preconditioner ilu0 (triangular solves", nil},
	} {
		a := problems.Poisson2D(40)
		if tc.name != "poisson" {
			a = problems.ConvectionDiffusion2D(40, 100)
		}
		mtx := writeCSRMTX(t, dir, tc.file, a)
		xPath := filepath.Join(dir, tc.name+".npy")
		code, out, errOut := runCmd(t, "iterate", "-mtx", mtx, "-o", xPath, "-bogus")
		require.Equal(t, 2, code, "an unknown flag is a usage error: %s", errOut)
		code, out, errOut = runCmd(t, "iterate", "-mtx", mtx, "-o", xPath)
		require.Equal(t, 0, code, errOut)
		assert.Contains(t, out, tc.want)
		assert.LessOrEqual(t, reportValue(t, out, "relative residual"), 1e-8)
		assert.LessOrEqual(t, reportValue(t, out, "error"), 1e-5)
		x, err := npy.ReadFile[float64](xPath)
		require.NoError(t, err)
		assert.InDelta(t, 1, x.Data[17], 1e-5)
		_, plain, _ := runCmd(t, "iterate", "-mtx", mtx, "-precond", "none")
		assert.Less(t, reportValue(t, out, "iterations"), reportValue(t, plain, "iterations"), tc.name)
	}
}

func TestIterateMethodsAndErrors(t *testing.T) {
	dir := t.TempDir()
	p := writeCSRMTX(t, dir, "p.mtx", problems.Poisson2D(30))
	c := writeCSRMTX(t, dir, "c.mtx", problems.ConvectionDiffusion2D(30, 100))
	for _, args := range [][]string{
		{"-mtx", p, "-method", "bicgstab2", "-precond", "jacobi"},
		{"-mtx", c, "-method", "bicgstab2", "-precond", "ilu0", "-trsv", "syncfree-csr"},
		{"-mtx", p, "-method", "cg", "-precond", "ic0", "-shift", "0.01", "-trsv", "levelset"},
	} {
		code, out, errOut := runCmd(t, append([]string{"iterate"}, args...)...)
		require.Equal(t, 0, code, "%v: %s", args, errOut)
		assert.LessOrEqual(t, reportValue(t, out, "relative residual"), 1e-8, "%v", args)
	}
	_, out, _ := runCmd(t, "iterate", "-mtx", p, "-shift", "0.01")
	assert.Contains(t, out, "shift 0.01·diag(A)")

	xPath := filepath.Join(dir, "x.npy")
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"iterate"}, 2, "missing -mtx"},
		{[]string{"iterate", "-mtx", p, "-method", "gmres"}, 2, `unknown method "gmres"`},
		{[]string{"iterate", "-mtx", p, "-precond", "amg"}, 2, `unknown preconditioner "amg"`},
		{[]string{"iterate", "-mtx", c, "-precond", "ic0"}, 2, "ic0 needs a symmetric A"},
		{[]string{"iterate", "-mtx", p, "-tol", "2"}, 2, "-tol 2"},
		{[]string{"iterate", "-mtx", p, "-trsv", "cholesky"}, 2, "-trsv"},
		{[]string{"iterate", "-mtx", p, "-o", p}, 2, "-o "},
		{[]string{"iterate", "-mtx", p, "-maxiter", "3", "-o", xPath}, 1, "tolerance 1.0e-08 not met"},
	}
	if !cudaBuilt {
		cases = append(cases, struct {
			args []string
			code int
			want string
		}{[]string{"iterate", "-mtx", p, "-device", "cuda"}, 1, "CUDA support is not built"})
	}
	for _, tc := range cases {
		code, _, errOut := runCmd(t, tc.args...)
		assert.Equal(t, tc.code, code, "%v: %s", tc.args, errOut)
		assert.Contains(t, errOut, tc.want, "%v", tc.args)
		assert.Equal(t, 1, strings.Count(errOut, "\n"), "%v: one line", tc.args)
	}
	_, err := os.Stat(xPath)
	assert.True(t, os.IsNotExist(err), "x is not written when the tolerance is not met")
	code, _, _ := runCmd(t, "iterate", "-mtx", p, "-maxiter", "3", "-o", xPath, "-force")
	assert.Equal(t, 1, code)
	_, err = os.Stat(xPath)
	assert.NoError(t, err, "-force writes x")
}
