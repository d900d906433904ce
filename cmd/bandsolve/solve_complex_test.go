package main

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/npy"
)

// cbatch is a complex test batch of g systems of n rows, contiguous.
type cbatch struct {
	n, g       int
	a, b, c, d []complex128
}

// helmholtzBatch makes indefinite complex systems −1, 2 − k² + iε, −1
// with random complex right-hand sides: Thomas is unsafe on them.
func helmholtzBatch(n, g int, seed uint64) *cbatch {
	rng := rand.New(rand.NewPCG(seed, 28))
	L := n * g
	bt := &cbatch{n: n, g: g, a: make([]complex128, L), b: make([]complex128, L), c: make([]complex128, L), d: make([]complex128, L)}
	for k := range L {
		bt.a[k], bt.c[k] = -1, -1
		bt.b[k] = complex(2-1.3*rng.Float64(), 0.01)
		bt.d[k] = complex(2*rng.Float64()-1, 2*rng.Float64()-1)
	}
	return bt
}

// residual is max |A·x − d| over the rows, with cst (a, b, c) replacing
// the arrays when not nil.
func (bt *cbatch) residual(x []complex128, cst []complex128) float64 {
	var worst float64
	for g := range bt.g {
		for i := range bt.n {
			k := g*bt.n + i
			a, b, c := bt.a[k], bt.b[k], bt.c[k]
			if cst != nil {
				a, b, c = cst[0], cst[1], cst[2]
			}
			r := b*x[k] - bt.d[k]
			if i > 0 {
				r += a * x[k-1]
			}
			if i < bt.n-1 {
				r += c * x[k+1]
			}
			worst = max(worst, cmplx.Abs(r))
		}
	}
	return worst
}

func writeC[T npy.Element](t *testing.T, path string, shape []int, v []T) string {
	t.Helper()
	require.NoError(t, npy.WriteFile(path, shape, v))
	return path
}

func c64s(v []complex128) []complex64 {
	out := make([]complex64, len(v))
	for i, z := range v {
		out[i] = complex64(z)
	}
	return out
}

func TestSolveComplexFiles(t *testing.T) {
	bt := helmholtzBatch(37, 4, 1)
	shape := []int{bt.g, bt.n}
	for _, tc := range []struct {
		name, prec, dtype string
		c64               bool
		tol               float64
		extra             []string
	}{
		{"c16", "c128", "<c16", false, 1e-12, nil},
		{"c16 gtsv", "c128", "<c16", false, 1e-12, []string{"-algorithm", "gtsv"}},
		{"c8", "c64", "<c8", true, 1e-4, nil},
		{"c8 as c128", "c128", "<c16", true, 1e-12, []string{"-precision", "c128"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var files []string
			for _, f := range []struct {
				flag string
				v    []complex128
			}{{"-a", bt.a}, {"-b", bt.b}, {"-c", bt.c}, {"-d", bt.d}} {
				path := filepath.Join(dir, f.flag[1:]+".npy")
				if tc.c64 {
					writeC(t, path, shape, c64s(f.v))
				} else {
					writeC(t, path, shape, f.v)
				}
				files = append(files, f.flag, path)
			}
			out := filepath.Join(dir, "x.npy")
			code, _, errOut := runCmd(t, append(append([]string{"solve", "-o", out}, files...), tc.extra...)...)
			require.Equal(t, 0, code, errOut)
			assert.Contains(t, errOut, "precision="+tc.prec)
			h, err := npy.ReadFileHeader(out)
			require.NoError(t, err)
			assert.Equal(t, tc.dtype, h.DType)
			assert.Equal(t, shape, h.Shape)
			x, err := npy.ReadFile[complex128](out)
			if tc.dtype == "<c8" {
				x8, err8 := npy.ReadFile[complex64](out)
				require.NoError(t, err8)
				x.Data = make([]complex128, len(x8.Data))
				for i, z := range x8.Data {
					x.Data[i] = complex128(z)
				}
			} else {
				require.NoError(t, err)
			}
			ref := *bt
			if tc.c64 {
				ref.a, ref.b, ref.c, ref.d = widen(c64s(bt.a)), widen(c64s(bt.b)), widen(c64s(bt.c)), widen(c64s(bt.d))
			}
			assert.Less(t, ref.residual(x.Data, nil), tc.tol)
		})
	}
}

func widen(v []complex64) []complex128 {
	out := make([]complex128, len(v))
	for i, z := range v {
		out[i] = complex128(z)
	}
	return out
}

// Real coefficients with a complex d, and complex constants.
func TestSolveComplexMixedAndConst(t *testing.T) {
	dir := t.TempDir()
	bt := helmholtzBatch(20, 3, 2)
	shape := []int{bt.g, bt.n}
	re := func(v []complex128) []float64 {
		out := make([]float64, len(v))
		for i, z := range v {
			out[i] = real(z)
		}
		return out
	}
	ap := writeC(t, filepath.Join(dir, "a.npy"), shape, re(bt.a))
	bp := writeC(t, filepath.Join(dir, "b.npy"), shape, re(bt.b))
	cp := writeC(t, filepath.Join(dir, "c.npy"), shape, re(bt.c))
	dp := writeC(t, filepath.Join(dir, "d.npy"), shape, bt.d)
	out := filepath.Join(dir, "x.npy")
	code, _, errOut := runCmd(t, "solve", "-a", ap, "-b", bp, "-c", cp, "-d", dp, "-o", out)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "precision=c128")
	x, err := npy.ReadFile[complex128](out)
	require.NoError(t, err)
	ref := *bt
	for i := range ref.b {
		ref.b[i] = complex(real(ref.b[i]), 0)
	}
	assert.Less(t, ref.residual(x.Data, nil), 1e-12)

	// Complex constants with a real d: solved in complex128.
	rd := writeC(t, filepath.Join(dir, "rd.npy"), shape, re(bt.d))
	code, _, errOut = runCmd(t, "solve", "-const", "-1, 0.5+0.25j, -1", "-d", rd, "-o", out)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "precision=c128")
	x, err = npy.ReadFile[complex128](out)
	require.NoError(t, err)
	ref.d = make([]complex128, len(bt.d))
	for i, v := range re(bt.d) {
		ref.d[i] = complex(v, 0)
	}
	assert.Less(t, ref.residual(x.Data, []complex128{-1, 0.5 + 0.25i, -1}), 1e-12)
}

func TestSolveComplexErrors(t *testing.T) {
	dir := t.TempDir()
	bt := helmholtzBatch(6, 2, 3)
	shape := []int{bt.g, bt.n}
	bt.b[1*bt.n+3] = complex(1, math.NaN())
	ap := writeC(t, filepath.Join(dir, "a.npy"), shape, bt.a)
	bp := writeC(t, filepath.Join(dir, "b.npy"), shape, bt.b)
	cp := writeC(t, filepath.Join(dir, "c.npy"), shape, bt.c)
	dp := writeC(t, filepath.Join(dir, "d.npy"), shape, bt.d)
	out := filepath.Join(dir, "x.npy")
	code, _, errOut := runCmd(t, "solve", "-a", ap, "-b", bp, "-c", cp, "-d", dp, "-o", out)
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errOut, "system 1, row 3")

	code, _, errOut = runCmd(t, "solve", "-a", ap, "-b", bp, "-c", cp, "-d", dp, "-o", out, "-precision", "f64")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "complex input")

	code, _, errOut = runCmd(t, "solve", "-a", ap, "-b", bp, "-c", cp, "-d", dp, "-o", out, "-algorithm", "pcr")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errOut, "does not solve complex systems")
}
