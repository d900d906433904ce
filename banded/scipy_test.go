package banded

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/npy"
)

// sciPyScript solves and factors each case i:kl:ku of its arguments (the
// files ab<i>.npy and b<i>.npy in the directory argv[1]) with
// scipy.linalg.solve_banded and LAPACK's dgbtrf through SciPy, writing
// x<i>.npy, lu<i>.npy and piv<i>.npy (0-based, as float64).
const sciPyScript = `
import sys
import numpy as np
from scipy.linalg import solve_banded, lapack
d = sys.argv[1]
for case in sys.argv[2:]:
    i, kl, ku = (int(v) for v in case.split(":"))
    ab = np.load(f"{d}/ab{i}.npy")
    b = np.load(f"{d}/b{i}.npy")
    np.save(f"{d}/x{i}.npy", solve_banded((kl, ku), ab, b))
    work = np.zeros((2 * kl + ku + 1, ab.shape[1]))
    work[kl:] = ab
    lu, piv, info = lapack.dgbtrf(work, kl, ku)
    assert info == 0, info
    np.save(f"{d}/lu{i}.npy", lu)
    np.save(f"{d}/piv{i}.npy", piv.astype(np.float64))
`

// python returns the system python3 (or the first on PATH), or skips.
func python(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	t.Skip("no python3")
	return ""
}

// General's storage is SciPy's: an array written from Data is the ab of
// scipy.linalg.solve_banded((KL, KU), ab, b) as it is, and the solutions,
// the interchanges and the factors agree with SciPy's solve_banded and
// LAPACK's dgbtrf (whose 2·KL+KU+1-row factor layout PivotLU's Data
// follows). Skipped when python3 with NumPy and SciPy is not installed.
func TestGeneralAgainstSciPy(t *testing.T) {
	py := python(t)
	dir := t.TempDir()
	rng := newRNG(109)
	cases := [][4]int{ // N, KL, KU, right-hand sides
		{4, 1, 0, 1},
		{17, 2, 5, 1},
		{100, 5, 1, 3},
		{9, 0, 3, 2},
		{30, 3, 3, 1},
		{50, 7, 2, 2},
	}
	var as []*General[float64]
	var bs [][]float64
	args := []string{"-c", sciPyScript, dir}
	for i, c := range cases {
		n, kl, ku, nrhs := c[0], c[1], c[2], c[3]
		a := randomGeneral[float64](n, kl, ku, -1, rng)
		if i == 0 { // the matrix of TestGeneralPivotKnown
			a, _ = GeneralFromDense(4, []float64{1, 0, 0, 0, 3, 2, 0, 0, 0, 5, 1, 0, 0, 0, 4, 7})
		}
		require.NoError(t, npy.WriteFile(filepath.Join(dir, fmt.Sprintf("ab%d.npy", i)), []int{kl + ku + 1, n}, a.Data))
		// b is (N, nrhs) for SciPy, column-major (nrhs, N) for SolveMulti.
		b := randVec[float64](n*nrhs, rng)
		bT := make([]float64, n*nrhs)
		for r := 0; r < n; r++ {
			for c := 0; c < nrhs; c++ {
				bT[r*nrhs+c] = b[c*n+r]
			}
		}
		require.NoError(t, npy.WriteFile(filepath.Join(dir, fmt.Sprintf("b%d.npy", i)), []int{n, nrhs}, bT))
		as, bs = append(as, a), append(bs, b)
		args = append(args, fmt.Sprintf("%d:%d:%d", i, kl, ku))
	}
	out, err := exec.Command(py, args...).CombinedOutput()
	if err != nil {
		if strings.Contains(string(out), "ModuleNotFoundError") {
			t.Skipf("%s has no NumPy or SciPy: %s", py, out)
		}
		require.NoError(t, err, "%s", out)
	}
	for i, c := range cases {
		n, kl, ku, nrhs := c[0], c[1], c[2], c[3]
		what := fmt.Sprintf("N=%d KL=%d KU=%d", n, kl, ku)
		a := as[i]
		f, err := FactorPivotGeneral(a)
		require.NoError(t, err, what)

		piv := readNPY(t, dir, "piv", i)
		require.Equal(t, []int{n}, piv.Shape, what)
		for j, p := range piv.Data {
			require.Equal(t, p, float64(f.Piv[j]), "%s: interchange of step %d", what, j)
		}
		lu := readNPY(t, dir, "lu", i)
		require.Equal(t, []int{2*kl + ku + 1, n}, lu.Shape, what)
		scale := a.NormMax()
		for r := 0; r < 2*kl+ku+1; r++ {
			for j := 0; j < n; j++ {
				if i := j + r - kl - ku; i < 0 || i >= n {
					continue // outside the matrix
				}
				require.InDelta(t, lu.Data[r*n+j], f.Data[r*n+j], 1e-13*scale, "%s: factor row %d, column %d", what, r, j)
			}
		}

		x := append([]float64(nil), bs[i]...)
		f.SolveMulti(x, nrhs)
		want := readNPY(t, dir, "x", i)
		cond, err := CondEstGeneral(a)
		require.NoError(t, err, what)
		for r := 0; r < n; r++ {
			for c := 0; c < nrhs; c++ {
				assert.InDelta(t, want.Data[r*nrhs+c], x[c*n+r], 1e-13*cond*max(1, normInf(x)), "%s: x[%d, %d]", what, r, c)
			}
		}
	}
}

func readNPY(t *testing.T, dir, name string, i int) npy.Array[float64] {
	t.Helper()
	a, err := npy.ReadFile[float64](filepath.Join(dir, fmt.Sprintf("%s%d.npy", name, i)))
	if errors.Is(err, os.ErrNotExist) {
		t.Fatalf("SciPy wrote no %s%d.npy", name, i)
	}
	require.NoError(t, err)
	return a
}
