package banded

import (
	"fmt"
	"math/cmplx"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/npy"
)

// complexSciPyScript solves each case i:kl:ku of its arguments (ab<i>.npy
// and b<i>.npy, complex128, in the directory argv[1]) with
// scipy.linalg.solve_banded and factors it with LAPACK's zgbtrf, writing
// x<i>.npy (complex128) and piv<i>.npy (0-based, float64).
const complexSciPyScript = `
import sys
import numpy as np
from scipy.linalg import solve_banded, lapack
d = sys.argv[1]
for case in sys.argv[2:]:
    i, kl, ku = (int(v) for v in case.split(":"))
    ab = np.load(f"{d}/ab{i}.npy")
    b = np.load(f"{d}/b{i}.npy")
    assert ab.dtype == np.complex128 and b.dtype == np.complex128
    np.save(f"{d}/x{i}.npy", solve_banded((kl, ku), ab, b))
    work = np.zeros((2 * kl + ku + 1, ab.shape[1]), dtype=np.complex128)
    work[kl:] = ab
    lu, piv, info = lapack.zgbtrf(work, kl, ku)
    assert info == 0, info
    np.save(f"{d}/piv{i}.npy", piv.astype(np.float64))
`

// A complex General's Data is the ab of scipy.linalg.solve_banded, and
// its solutions and interchanges agree with SciPy's solve_banded and
// LAPACK's zgbtrf on complex data (complex128 exactly in the
// interchanges, to ε·κ̂ in the solutions; complex64 to its ε·κ̂).
// Skipped when python3 with NumPy and SciPy is not installed.
func TestComplexGeneralAgainstSciPy(t *testing.T) {
	py := python(t)
	dir := t.TempDir()
	rng := newRNG(4099)
	cases := [][4]int{ // N, KL, KU, right-hand sides
		{5, 1, 0, 1},
		{17, 2, 5, 1},
		{100, 5, 1, 3},
		{9, 0, 3, 2},
		{30, 3, 3, 1},
		{77, 7, 2, 2},
	}
	var as []*General[complex128]
	var bs [][]complex128
	args := []string{"-c", complexSciPyScript, dir}
	for i, c := range cases {
		n, kl, ku, nrhs := c[0], c[1], c[2], c[3]
		a := randomGeneralC[complex128](n, kl, ku, -1, rng)
		require.NoError(t, npy.WriteFile(filepath.Join(dir, fmt.Sprintf("ab%d.npy", i)), []int{kl + ku + 1, n}, a.Data))
		b := randVecC[complex128](n*nrhs, rng) // column-major (nrhs, N) for SolveMulti
		bT := make([]complex128, n*nrhs)       // (N, nrhs) for SciPy
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
		for j, p := range piv.Data {
			require.Equal(t, p, float64(f.Piv[j]), "%s: interchange of step %d", what, j)
		}
		want, err := npy.ReadFile[complex128](filepath.Join(dir, fmt.Sprintf("x%d.npy", i)))
		require.NoError(t, err)
		require.Equal(t, []int{n, nrhs}, want.Shape)
		cond, err := CondEstGeneral(a)
		require.NoError(t, err, what)

		x := append([]complex128(nil), bs[i]...)
		f.SolveMulti(x, nrhs)
		a64 := ConvertGeneralComplex[complex64](a)
		f64, err := FactorPivotGeneral(a64)
		require.NoError(t, err, what)
		x64 := make([]complex64, len(x))
		for q, v := range bs[i] {
			x64[q] = complex64(v)
		}
		f64.SolveMulti(x64, nrhs)
		var xn float64
		for _, v := range want.Data {
			xn = max(xn, cmplx.Abs(v))
		}
		for r := 0; r < n; r++ {
			for c := 0; c < nrhs; c++ {
				w := want.Data[r*nrhs+c]
				assert.LessOrEqual(t, cmplx.Abs(w-x[c*n+r]), 1e-13*cond*max(1, xn), "%s: x[%d, %d]", what, r, c)
				assert.LessOrEqual(t, cmplx.Abs(w-complex128(x64[c*n+r])), 1e-5*cond*max(1, xn), "%s: complex64 x[%d, %d]", what, r, c)
			}
		}
	}
}
