package main

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/npy"
	"github.com/bandsolve/bandsolve/tridiag"
)

// batch is a test batch of g systems of n rows in one layout.
type batch struct {
	n, g        int
	interleaved bool
	a, b, c, d  []float64
}

func (bt *batch) idx(i, g int) int {
	if bt.interleaved {
		return i*bt.g + g
	}
	return g*bt.n + i
}

// shape is the .npy shape of the batch's arrays; g = 0 means 1-D.
func (bt *batch) shape(oneD bool) []int {
	switch {
	case oneD:
		return []int{bt.n}
	case bt.interleaved:
		return []int{bt.n, bt.g}
	}
	return []int{bt.g, bt.n}
}

// randomBatch makes diagonally dominant systems.
func randomBatch(n, g int, interleaved bool, seed uint64) *batch {
	rng := rand.New(rand.NewPCG(seed, 7))
	bt := &batch{n: n, g: g, interleaved: interleaved}
	bt.a, bt.b, bt.c, bt.d = make([]float64, n*g), make([]float64, n*g), make([]float64, n*g), make([]float64, n*g)
	for k := range bt.b {
		bt.a[k], bt.c[k], bt.d[k] = 2*rng.Float64()-1, 2*rng.Float64()-1, 2*rng.Float64()-1
		bt.b[k] = 3 + rng.Float64()
	}
	return bt
}

// symmetric makes the systems symmetric, as -spd reads them: a[i] =
// c[i−1], and the corner a[0] = c[N−1] when cyclic (else 0).
func (bt *batch) symmetric(cyclic bool) *batch {
	for g := 0; g < bt.g; g++ {
		for i := 0; i < bt.n; i++ {
			switch {
			case i > 0:
				bt.a[bt.idx(i, g)] = bt.c[bt.idx(i-1, g)]
			case cyclic:
				bt.a[bt.idx(0, g)] = bt.c[bt.idx(bt.n-1, g)]
			default:
				bt.a[bt.idx(0, g)] = 0
			}
		}
	}
	return bt
}

// residual returns max |A·x − d| of the batch's systems (cyclic: with the
// corners); constant coefficients replace a, b, c when cst is not nil.
func (bt *batch) residual(x []float64, cyclic bool, cst []float64) float64 {
	var worst float64
	n := bt.n
	for g := 0; g < bt.g; g++ {
		for i := 0; i < n; i++ {
			k := bt.idx(i, g)
			a, b, c := bt.a[k], bt.b[k], bt.c[k]
			if cst != nil {
				a, b, c = cst[0], cst[1], cst[2]
			}
			r := b*x[k] - bt.d[k]
			if i > 0 || cyclic {
				r += a * x[bt.idx((i+n-1)%n, g)]
			}
			if i < n-1 || cyclic {
				r += c * x[bt.idx((i+1)%n, g)]
			}
			if math.IsNaN(r) {
				return math.NaN()
			}
			worst = max(worst, math.Abs(r))
		}
	}
	return worst
}

// write stores the batch's arrays in dir and returns the solve flags.
func (bt *batch) write(t *testing.T, dir string, oneD bool) []string {
	t.Helper()
	sh := bt.shape(oneD)
	var args []string
	for _, f := range []struct {
		name string
		v    []float64
	}{{"a", bt.a}, {"b", bt.b}, {"c", bt.c}, {"d", bt.d}} {
		p := filepath.Join(dir, f.name+".npy")
		require.NoError(t, npy.WriteFile(p, sh, f.v))
		args = append(args, "-"+f.name, p)
	}
	return args
}

func readX(t *testing.T, path string) ([]int, []float64) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	shape, x, _, err := npy.ReadAny(f)
	require.NoError(t, err)
	return shape, x
}

func TestSolveRoundTrip(t *testing.T) {
	cases := []struct {
		name        string
		n, g        int
		oneD        bool
		interleaved bool
		extra       []string
		tol         float64
	}{
		{"1-D", 50, 1, true, false, nil, 1e-13},
		{"1-D f32", 50, 1, true, false, []string{"-precision", "f32"}, 1e-5},
		{"2-D contiguous", 33, 7, false, false, []string{"-algorithm", "thomas"}, 1e-13},
		{"2-D gtsv", 33, 7, false, false, []string{"-algorithm", "gtsv"}, 1e-13},
		{"2-D cr", 32, 5, false, false, []string{"-algorithm", "cr"}, 1e-13},
		{"2-D pcr", 32, 5, false, false, []string{"-algorithm", "pcr"}, 1e-13},
		{"2-D tpr", 64, 3, false, false, []string{"-algorithm", "tpr", "-slice", "8"}, 1e-13},
		{"2-D wangmou", 64, 3, false, false, []string{"-algorithm", "wangmou"}, 1e-13},
		{"2-D partition", 100, 3, false, false, []string{"-algorithm", "partition"}, 1e-13},
		{"interleaved", 33, 5, false, true, []string{"-layout", "interleaved"}, 1e-13},
		{"interleaved f32", 20, 9, false, true, []string{"-layout", "interleaved", "-precision", "f32"}, 1e-5},
		{"1-D interleaved", 10, 1, true, true, []string{"-layout", "interleaved"}, 1e-13},
		{"cyclic", 40, 3, false, false, []string{"-cyclic"}, 1e-13},
		{"cyclic interleaved", 40, 3, false, true, []string{"-cyclic", "-layout", "interleaved"}, 1e-13},
		{"cyclic n=2", 2, 3, false, false, []string{"-cyclic"}, 1e-13},
		{"cyclic n=1", 1, 2, false, false, []string{"-cyclic"}, 1e-13},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			bt := randomBatch(tc.n, tc.g, tc.interleaved, uint64(i))
			out := filepath.Join(dir, "x.npy")
			args := append([]string{"solve", "-o", out}, bt.write(t, dir, tc.oneD)...)
			code, stdout, errOut := runCmd(t, append(args, tc.extra...)...)
			require.Equal(t, 0, code, errOut)
			assert.Empty(t, stdout)
			assert.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
			assert.Contains(t, errOut, "bandsolve solve: ")
			assert.Contains(t, errOut, "max residual ‖Ax−d‖∞=")
			assert.Contains(t, errOut, "device=cpu")
			assert.Regexp(t, `N=\d+ G=\d+ `, errOut)
			shape, x := readX(t, out)
			assert.Equal(t, bt.shape(tc.oneD), shape)
			cyclic := strings.Contains(tc.name, "cyclic")
			assert.Less(t, bt.residual(x, cyclic, nil), tc.tol*10)
		})
	}
}

func TestSolveSummary(t *testing.T) {
	dir := t.TempDir()
	bt := randomBatch(16, 4, true, 1)
	out := filepath.Join(dir, "x.npy")
	code, _, errOut := runCmd(t, append([]string{"solve", "-o", out, "-layout", "interleaved", "-algorithm", "thomas"}, bt.write(t, dir, false)...)...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "N=16 G=4 layout=interleaved algorithm=thomas precision=f64 cyclic=false device=cpu")
	assert.Contains(t, errOut, "-> "+out)
}

// TestSolveSummaryAuto checks that the summary line names what Auto ran
// (on the CPU: Thomas, and GTSV for the systems that fail its pivot
// growth test, with the count), as -pivoting says, and names a chosen
// algorithm alone.
func TestSolveSummaryAuto(t *testing.T) {
	dir := t.TempDir()
	bt := randomBatch(16, 4, false, 2)
	// System 1 gets a zero diagonal: not dominant, solvable with pivoting.
	for i := 16; i < 32; i++ {
		bt.b[i] = 0
	}
	out := filepath.Join(dir, "x.npy")
	files := bt.write(t, dir, false)
	code, _, errOut := runCmd(t, append([]string{"solve", "-o", out}, files...)...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "N=16 G=4 layout=contiguous algorithm=auto (thomas, gtsv for the systems that fail its pivot growth test or break down; last solve: gtsv for 1 of 4 systems) precision=f64")
	code, _, errOut = runCmd(t, append([]string{"solve", "-o", out, "-pivoting", "never"}, files...)...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, " algorithm=auto (thomas, gtsv for the systems where thomas breaks down; last solve: gtsv for 1 of 4 systems) precision=f64")
	code, _, errOut = runCmd(t, append([]string{"solve", "-o", out, "-pivoting", "always"}, files...)...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, " algorithm=auto (gtsv) precision=f64")
	code, _, errOut = runCmd(t, append([]string{"solve", "-o", out, "-pivoting", "always", "-algorithm", "gtsv"}, files...)...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, " algorithm=gtsv precision=f64")
	dom := filepath.Join(dir, "dominant")
	require.NoError(t, os.Mkdir(dom, 0o755))
	code, _, errOut = runCmd(t, append([]string{"solve", "-o", out, "-algorithm", "partition"}, randomBatch(16, 4, false, 2).write(t, dom, false)...)...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, " algorithm=partition precision=f64")
}

// TestSolveHelpAlgorithms checks that solve -h lists every algorithm the
// command accepts, and accepts every algorithm it lists.
func TestSolveHelpAlgorithms(t *testing.T) {
	code, out, _ := runCmd(t, "solve", "-h")
	require.Equal(t, 0, code)
	m := regexp.MustCompile(`(?m)^  -algorithm string\n\s+algorithm: (.*) \(default "auto"\)$`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	listed := strings.FieldsFunc(strings.ReplaceAll(m[1], " or ", ", "), func(r rune) bool { return r == ',' || r == ' ' })
	want := []string{"auto"}
	for _, a := range tridiag.Algorithms() {
		want = append(want, a.String())
	}
	assert.ElementsMatch(t, want, listed)
	bt := randomBatch(40, 2, false, 4)
	dir := t.TempDir()
	files := bt.write(t, dir, false)
	sym := randomBatch(40, 2, false, 4).symmetric(false)
	symDir := filepath.Join(dir, "symmetric")
	require.NoError(t, os.Mkdir(symDir, 0o755))
	symFiles := sym.write(t, symDir, false)
	for _, name := range listed {
		f := files
		if a, err := tridiag.ParseAlgorithm(name); err == nil && a.SPD() {
			f = symFiles // ldlt solves symmetric systems only
		}
		code, _, errOut := runCmd(t, append([]string{"solve", "-o", filepath.Join(dir, "x.npy"), "-algorithm", name}, f...)...)
		assert.Equal(t, 0, code, "-algorithm %s: %s", name, errOut)
	}
	code, _, errOut := runCmd(t, append([]string{"solve", "-o", filepath.Join(dir, "x.npy"), "-algorithm", "magic"}, files...)...)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "want "+m[1])
}

func TestSolveConst(t *testing.T) {
	for _, cyclic := range []bool{false, true} {
		dir := t.TempDir()
		bt := randomBatch(25, 6, false, 3)
		dPath, out := filepath.Join(dir, "d.npy"), filepath.Join(dir, "x.npy")
		require.NoError(t, npy.WriteFile(dPath, []int{6, 25}, bt.d))
		args := []string{"solve", "-const", "-1, 4, -1.5", "-d", dPath, "-o", out}
		if cyclic {
			args = append(args, "-cyclic")
		}
		code, _, errOut := runCmd(t, args...)
		require.Equal(t, 0, code, errOut)
		shape, x := readX(t, out)
		assert.Equal(t, []int{6, 25}, shape)
		assert.Less(t, bt.residual(x, cyclic, []float64{-1, 4, -1.5}), 1e-12, "cyclic %v", cyclic)
	}
}

func TestSolveBreakdown(t *testing.T) {
	// System 1 starts with a zero pivot: Thomas fails on it, not on system 0;
	// Auto (Thomas, then GTSV) solves both.
	bt := randomBatch(8, 2, false, 5)
	bt.b[bt.idx(0, 1)] = 0
	dir := t.TempDir()
	out := filepath.Join(dir, "x.npy")
	files := bt.write(t, dir, false)
	code, _, errOut := runCmd(t, append([]string{"solve", "-o", out, "-algorithm", "thomas"}, files...)...)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, "1 of 2 systems failed")
	assert.Contains(t, errOut, "NaN")
	_, x := readX(t, out)
	sys0 := &batch{n: 8, g: 1, a: bt.a[:8], b: bt.b[:8], c: bt.c[:8], d: bt.d[:8]}
	assert.Less(t, sys0.residual(x[:8], false, nil), 1e-12)
	for _, v := range x[8:] {
		assert.True(t, math.IsNaN(v))
	}

	code, _, errOut = runCmd(t, append([]string{"solve", "-o", out}, files...)...)
	require.Equal(t, 0, code, errOut)
	_, x = readX(t, out)
	assert.Less(t, bt.residual(x, false, nil), 1e-12)
}

func TestSolveErrors(t *testing.T) {
	dir := t.TempDir()
	bt := randomBatch(5, 3, false, 9)
	files := bt.write(t, dir, false)
	out := filepath.Join(dir, "x.npy")
	wrong := filepath.Join(dir, "wrong.npy")
	require.NoError(t, npy.WriteFile(wrong, []int{3, 4}, make([]float64, 12)))
	cube := filepath.Join(dir, "cube.npy")
	require.NoError(t, npy.WriteFile(cube, []int{2, 2, 2}, make([]float64, 8)))
	empty := filepath.Join(dir, "empty.npy")
	require.NoError(t, npy.WriteFile(empty, []int{0, 4}, []float64{}))
	junk := filepath.Join(dir, "junk.npy")
	require.NoError(t, os.WriteFile(junk, []byte("not numpy at all"), 0o644))
	missing := filepath.Join(dir, "missing.npy")
	withFile := func(flag, path string) []string {
		args := []string{"solve", "-o", out}
		for i := 0; i < len(files); i += 2 {
			if files[i] == flag {
				args = append(args, flag, path)
			} else {
				args = append(args, files[i], files[i+1])
			}
		}
		return args
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"missing file", withFile("-b", missing), exitFail, []string{"missing.npy", "no such file"}},
		{"shape mismatch", withFile("-c", wrong), exitFail, []string{"wrong.npy: shape (3, 4) does not match the shape (3, 5)", "d.npy"}},
		{"3-D", withFile("-d", cube), exitFail, []string{"cube.npy: shape (2, 2, 2) has 3 dimensions"}},
		{"empty", withFile("-d", empty), exitFail, []string{"empty.npy: shape (0, 4) is empty"}},
		{"not npy", withFile("-a", junk), exitFail, []string{"junk.npy", "not a .npy file"}},
		{"unknown algorithm", append(withFile("", ""), "-algorithm", "magic"), exitUsage, []string{`unknown algorithm "magic"`}},
		{"unknown pivoting", append(withFile("", ""), "-pivoting", "sometimes"), exitUsage, []string{`unknown pivoting "sometimes"`, "auto, always or never"}},
		{"pivoting always without pivoting", append(withFile("", ""), "-pivoting", "always", "-algorithm", "thomas"), exitUsage, []string{"-pivoting always with -algorithm thomas, which does not pivot"}},
		{"unknown layout", append(withFile("", ""), "-layout", "diagonal"), exitUsage, []string{`unknown layout "diagonal"`}},
		{"unknown precision", append(withFile("", ""), "-precision", "f16"), exitUsage, []string{`unknown precision "f16"`}},
		{"bad slice", append(withFile("", ""), "-slice", "6"), exitUsage, []string{"power of two"}},
		{"unknown device", append(withFile("", ""), "-device", "tpu"), exitUsage, []string{`unknown device "tpu"`}},
		{"no d", []string{"solve", "-o", out, "-const", "1,2,1"}, exitUsage, []string{"missing -d"}},
		{"no o", []string{"solve", "-d", files[7], "-const", "1,2,1"}, exitUsage, []string{"missing -o"}},
		{"no b", []string{"solve", "-o", out, "-a", files[1], "-d", files[7]}, exitUsage, []string{"missing -b, -c"}},
		{"const and a", []string{"solve", "-o", out, "-a", files[1], "-d", files[7], "-const", "1,2,1"}, exitUsage, []string{"-const replaces -a"}},
		{"bad const", []string{"solve", "-o", out, "-d", files[7], "-const", "1,2"}, exitUsage, []string{"want three numbers"}},
		{"nan const", []string{"solve", "-o", out, "-d", files[7], "-const", "1,NaN,1"}, exitUsage, []string{`"NaN" is not a finite number`}},
		{"stray arg", append(withFile("", ""), "x.npy"), exitUsage, []string{`unexpected argument "x.npy"`}},
		{"bad out", append([]string{"solve", "-o", filepath.Join(dir, "no", "x.npy")}, files...), exitFail, []string{"no such file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, errOut := runCmd(t, tc.args...)
			assert.Equal(t, tc.code, code, errOut)
			assert.Empty(t, stdout)
			for _, w := range tc.want {
				assert.Contains(t, errOut, w)
			}
			assert.True(t, strings.HasPrefix(errOut, "bandsolve solve: "), errOut)
		})
	}
	// Non-finite input is reported, not solved.
	bt.b[4] = math.Inf(1)
	nf := filepath.Join(dir, "inf")
	require.NoError(t, os.Mkdir(nf, 0o755))
	code, _, errOut := runCmd(t, append([]string{"solve", "-o", out}, bt.write(t, nf, false)...)...)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, "non-finite")
}

func TestShapeString(t *testing.T) {
	assert.Equal(t, "()", shapeString(nil))
	assert.Equal(t, "(5,)", shapeString([]int{5}))
	assert.Equal(t, "(3, 4)", shapeString([]int{3, 4}))
}

// TestSolveTinyDiagonal: tridiag(1, 1e−8, 1) is well conditioned but
// Thomas's fill grows by 1e8. The default -pivoting auto solves it by
// gtsv and passes the accuracy check; -pivoting never runs Thomas, whose
// backward error the check reports (exit 1, x not written).
func TestSolveTinyDiagonal(t *testing.T) {
	dir := t.TempDir()
	bt := randomBatch(512, 1, false, 5)
	dPath, out := filepath.Join(dir, "d.npy"), filepath.Join(dir, "x.npy")
	require.NoError(t, npy.WriteFile(dPath, []int{512}, bt.d))
	args := []string{"solve", "-const", "1,1e-8,1", "-d", dPath, "-o", out}
	code, _, errOut := runCmd(t, args...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "last solve: gtsv for 1 of 1 systems")
	require.NoError(t, os.Remove(out))
	code, _, errOut = runCmd(t, append(args, "-pivoting", "never")...)
	assert.Equal(t, exitFail, code, errOut)
	assert.Contains(t, errOut, "accuracy check failed for 1 of 1 systems (system 0): backward error")
	assert.NoFileExists(t, out)
}
