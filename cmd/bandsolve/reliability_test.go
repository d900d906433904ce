package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/internal/testfs"
	"github.com/bandsolve/bandsolve/npy"
)

// The command binary, built once without -race (the race detector's
// runtime reserves far more address space than the limits tried here).
var (
	binOnce sync.Once
	binPath string
	binErr  error
)

func commandBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the command (-short)")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("builds the command with the go command, which is not installed here (a GPU machine running test binaries)")
	}
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "bandsolve-bin")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "bandsolve")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v: %s", err, out)
		}
	})
	require.NoError(t, binErr)
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		_ = os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// runLimited runs the command binary in a shell whose address space is
// limited to 2 GiB (ulimit -v), and returns its exit status, stderr and
// run time.
func runLimited(t *testing.T, args ...string) (code int, stderr string, took time.Duration) {
	t.Helper()
	bin := commandBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	script := `ulimit -v 2097152 && exec "$0" "$@"`
	cmd := exec.CommandContext(ctx, "sh", append([]string{"-c", script, bin}, args...)...)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	start := time.Now()
	err := cmd.Run()
	took = time.Since(start)
	require.NoError(t, ctx.Err(), "the command ran past 2 minutes")
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		require.True(t, ok, "running %v: %v", args, err)
		code = ee.ExitCode()
	}
	return code, errOut.String(), took
}

// npyHeader returns the preamble of a .npy file declaring descr and
// shape, without data.
func npyHeader(descr string, shape ...int) []byte {
	dims := ""
	for _, d := range shape {
		dims += fmt.Sprintf("%d, ", d)
	}
	h := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, dims)
	h += strings.Repeat(" ", 63-(10+len(h))%64) + "\n"
	var buf bytes.Buffer
	buf.WriteString("\x93NUMPY\x01\x00")
	_ = binary.Write(&buf, binary.LittleEndian, uint16(len(h)))
	buf.WriteString(h)
	return buf.Bytes()
}

// sparseNPY writes a .npy header declaring shape and dtype, and extends
// the file to the size the data needs with a hole (no disk used).
func sparseNPY(t *testing.T, path, descr string, shape ...int) {
	t.Helper()
	pre := npyHeader(descr, shape...)
	require.NoError(t, os.WriteFile(path, pre, 0o644))
	count := int64(1)
	for _, d := range shape {
		count *= int64(d)
	}
	require.NoError(t, os.Truncate(path, int64(len(pre))+count*int64(descr[2]-'0')))
}

// Memory bombs get a one-line error, fast, in a process whose address
// space is limited to 2 GiB: never a Go "fatal error: out of memory".
func TestMemoryBombsUnderAddressSpaceLimit(t *testing.T) {
	dir := t.TempDir()
	bomb := filepath.Join(dir, "bomb.mtx")
	require.NoError(t, os.WriteFile(bomb, []byte("%%MatrixMarket matrix coordinate real general\n1000000000 1000000000 1\n1 1 1\n"), 0o644))
	fi, err := os.Stat(bomb)
	require.NoError(t, err)
	require.Equal(t, int64(76), fi.Size(), "the 76-byte bomb")
	declared := filepath.Join(dir, "declared.mtx")
	require.NoError(t, os.WriteFile(declared, []byte("%%MatrixMarket matrix coordinate real general\n1000000000 1000000000 1000000000\n1 1 1\n"), 0o644))
	big := filepath.Join(dir, "big.npy") // 8 GiB of float64, a hole on disk
	sparseNPY(t, big, "<f8", 1024, 1<<20)
	band := filepath.Join(dir, "band.npy") // (2K+1, N) = (33, 2^25): 8.25 GiB
	sparseNPY(t, band, "<f8", 33, 1<<25)

	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"76-byte Matrix Market bomb", []string{"banded", "-mtx", bomb},
			[]string{bomb + ": sparse: matrix is structurally singular: a 1000000000×1000000000 matrix with 1 stored entry has an empty row"}},
		{"declared entries beyond memory", []string{"banded", "-mtx", declared},
			[]string{declared + ": sparse: Matrix Market line 2: storing the 1000000000 declared entries of a 1000000000×1000000000 matrix needs 22.4 GiB, more than the", "(address-space limit RLIMIT_AS)"}},
		{"generated band beyond memory", []string{"banded", "-n", "2000000000", "-k", "16"},
			[]string{"-n 2000000000 -k 16: banded: 2 float64 bands of N=2000000000, K=16 needs 983 GiB, more than the"}},
		{"8 GiB .npy right-hand side", []string{"solve", "-const", "-1,4,-1", "-d", big, "-o", filepath.Join(dir, "x.npy")},
			[]string{"solving 1024 systems of 1048576 rows (2 float64 arrays) needs 16 GiB, more than the", "(address-space limit RLIMIT_AS)"}},
		{"8 GiB .npy band", []string{"banded", "-npy", band},
			[]string{band + ": banded: 2 float64 bands of N=33554432, K=16 needs 16.5 GiB, more than the"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, errOut, took := runLimited(t, c.args...)
			assert.Equal(t, 1, code, errOut)
			assert.Less(t, took, 10*time.Second)
			assert.NotContains(t, errOut, "fatal error")
			assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %q", errOut)
			for _, w := range c.want {
				assert.Contains(t, errOut, w)
			}
		})
	}
	assert.NoFileExists(t, filepath.Join(dir, "x.npy"))
}

// A write that fills the disk fails with a clear error and leaves the
// existing output file as it was; no temporary file is left behind.
func TestSolveDiskFull(t *testing.T) {
	out := testfs.Small(t, 64<<10)
	in := t.TempDir()
	xPath := filepath.Join(out, "x.npy")
	old := []float64{1, 2, 3}
	require.NoError(t, npy.WriteFile(xPath, []int{3}, old))
	before, err := os.ReadFile(xPath)
	require.NoError(t, err)

	bt := randomBatch(1000, 20, false, 3) // x: 160 kB of float64
	args := append([]string{"solve"}, bt.write(t, in, false)...)
	code, _, errOut := runCmd(t, append(args, "-o", xPath)...)
	assert.Equal(t, 1, code)
	assert.Equal(t, "bandsolve solve: "+xPath+": npy: writing data: no space left on device (the existing file is unchanged)\n", errOut)
	after, err := os.ReadFile(xPath)
	require.NoError(t, err)
	assert.Equal(t, before, after, "the old output is intact")
	es, err := os.ReadDir(out)
	require.NoError(t, err)
	require.Len(t, es, 1, "no temporary file left")

	// banded -o: the same.
	code, _, errOut = runCmd(t, "banded", "-n", "20000", "-k", "2", "-method", "direct", "-o", xPath)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, xPath+": npy: writing data: no space left on device (the existing file is unchanged)")
	after, err = os.ReadFile(xPath)
	require.NoError(t, err)
	assert.Equal(t, before, after)

	// stability -o.
	tbl := filepath.Join(out, "table.csv")
	require.NoError(t, os.WriteFile(tbl, []byte("old table\n"), 0o644))
	filler := filepath.Join(out, "filler")
	fill := make([]byte, 0, 64<<10)
	for len(fill) < cap(fill) {
		fill = append(fill, "filler "...)
	}
	_ = os.WriteFile(filler, fill, 0o644) // fails part way: the disk is full
	code, _, errOut = runCmd(t, "stability", "-n", "64", "-format", "csv", "-precision", "f64", "-algorithms", "gtsv", "-o", tbl)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "no space left on device")
	got, err := os.ReadFile(tbl)
	require.NoError(t, err)
	assert.Equal(t, "old table\n", string(got))
}

// -o naming an input, by its name, a hard link or a symbolic link, is
// refused before anything is read or written.
func TestOutputIsAnInput(t *testing.T) {
	dir := t.TempDir()
	bt := randomBatch(8, 2, false, 1)
	files := bt.write(t, dir, false)
	dPath := filepath.Join(dir, "d.npy")
	before, err := os.ReadFile(dPath)
	require.NoError(t, err)
	link := filepath.Join(dir, "link.npy")
	require.NoError(t, os.Link(dPath, link))
	sym := filepath.Join(dir, "sym.npy")
	require.NoError(t, os.Symlink("b.npy", sym))

	for _, out := range []string{dPath, link, sym, dir + "/./d.npy"} {
		code, _, errOut := runCmd(t, append(append([]string{"solve"}, files...), "-o", out)...)
		assert.Equal(t, 2, code, out)
		assert.Contains(t, errOut, "bandsolve solve: -o "+out+": output would overwrite an input", out)
	}
	code, _, errOut := runCmd(t, "solve", "-const", "1,4,1", "-d", dPath, "-o", link)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "output would overwrite an input (the same file as "+dPath+")")
	after, err := os.ReadFile(dPath)
	require.NoError(t, err)
	assert.Equal(t, before, after)

	// banded: -npy, -rhs and -mtx are inputs.
	n, k := 50, 2
	A := banded.Random[float64](n, k, 1.5, rand.New(rand.NewPCG(4, 5)))
	ab := filepath.Join(dir, "ab.npy")
	require.NoError(t, npy.WriteFile(ab, []int{2*k + 1, n}, A.Data))
	code, _, errOut = runCmd(t, "banded", "-npy", ab, "-o", ab)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "bandsolve banded: -o "+ab+": output would overwrite an input")
}

// dtypeOf reads the dtype of a .npy file.
func dtypeOf(t *testing.T, path string) string {
	t.Helper()
	h, err := npy.ReadFileHeader(path)
	require.NoError(t, err)
	return h.DType
}

// writeAs stores v at path in precision T.
func writeAs[T npy.Float](t *testing.T, path string, shape []int, v []float64) {
	t.Helper()
	w := make([]T, len(v))
	for i, f := range v {
		w[i] = T(f)
	}
	require.NoError(t, npy.WriteFile(path, shape, w))
}

// Float32 files are solved in float32 and x is written as float32; mixed
// dtypes give float64; -precision overrides.
func TestSolvePrecisionFollowsData(t *testing.T) {
	dir := t.TempDir()
	bt := randomBatch(200, 5, false, 9)
	shape := bt.shape(false)
	// The float32 inputs, and the same values as float64 (exactly).
	var f32, f64 []string
	for _, f := range []struct {
		name string
		v    []float64
	}{{"a", bt.a}, {"b", bt.b}, {"c", bt.c}, {"d", bt.d}} {
		for i := range f.v {
			f.v[i] = float64(float32(f.v[i]))
		}
		p32, p64 := filepath.Join(dir, f.name+"32.npy"), filepath.Join(dir, f.name+"64.npy")
		writeAs[float32](t, p32, shape, f.v)
		writeAs[float64](t, p64, shape, f.v)
		f32 = append(f32, "-"+f.name, p32)
		f64 = append(f64, "-"+f.name, p64)
	}
	solve := func(name string, files []string, extra ...string) (string, []float64, string) {
		t.Helper()
		out := filepath.Join(dir, name+".npy")
		args := append(append(append([]string{"solve"}, files...), "-o", out), extra...)
		code, _, errOut := runCmd(t, args...)
		require.Equal(t, 0, code, errOut)
		_, x := readX(t, out)
		return dtypeOf(t, out), x, errOut
	}
	dt64, x64, _ := solve("x64", f64)
	assert.Equal(t, "<f8", dt64)
	dt32, x32, summary := solve("x32", f32)
	assert.Equal(t, "<f4", dt32, "float32 in, float32 out")
	assert.Contains(t, summary, "precision=f32")
	// Accuracy at the float32 level: close to the float64 solution, but
	// not as close as a float64 solve.
	var worst float64
	for i := range x64 {
		worst = max(worst, math.Abs(x32[i]-x64[i])/max(1, math.Abs(x64[i])))
	}
	assert.Less(t, worst, 1e-5)
	assert.Greater(t, worst, 1e-12, "solved in float32, not float64 then rounded")
	assert.Less(t, bt.residual(x32, false, nil), 1e-5)

	// Mixed dtypes: float64.
	mixed := append(append([]string{}, f32[:6]...), f64[6:]...)
	dt, _, summary := solve("mixed", mixed)
	assert.Equal(t, "<f8", dt)
	assert.Contains(t, summary, "precision=f64")
	// -const with a float32 d: float32.
	dt, _, _ = solve("const32", f32[6:], "-const", "-1,4,-1")
	assert.Equal(t, "<f4", dt)
	// -precision overrides, either way.
	dt, _, _ = solve("forced64", f32, "-precision", "f64")
	assert.Equal(t, "<f8", dt)
	dt, _, summary = solve("forced32", f64, "-precision", "f32")
	assert.Equal(t, "<f4", dt)
	assert.Contains(t, summary, "precision=f32")
}

// banded -npy: a float32 band is solved in float32 (direct, pivot) or
// mixed (iterative), and x written as float32.
func TestBandedPrecisionFollowsData(t *testing.T) {
	dir := t.TempDir()
	n, k := 400, 3
	A := banded.Random[float64](n, k, 1.5, rand.New(rand.NewPCG(4, 5)))
	for i, v := range A.Data {
		A.Data[i] = float64(float32(v))
	}
	ab32, ab64 := filepath.Join(dir, "ab32.npy"), filepath.Join(dir, "ab64.npy")
	writeAs[float32](t, ab32, []int{2*k + 1, n}, A.Data)
	writeAs[float64](t, ab64, []int{2*k + 1, n}, A.Data)
	want := make([]float64, n)
	for i := range want {
		want[i] = float64(i%5) - 2
	}
	b := make([]float64, n)
	A.MulVec(want, b)
	rhs32, rhs64 := filepath.Join(dir, "b32.npy"), filepath.Join(dir, "b64.npy")
	writeAs[float32](t, rhs32, []int{n}, b)
	writeAs[float64](t, rhs64, []int{n}, b)

	cases := []struct {
		ab, rhs, method, prec, wantPrec, wantDType string
	}{
		{ab32, rhs32, "direct", "", "precision f32", "<f4"},
		{ab32, "", "pivot", "", "precision f32", "<f4"},
		{ab32, rhs32, "iterative", "", "precision mixed", "<f4"},
		{ab32, rhs64, "direct", "", "precision f64", "<f8"},
		{ab64, rhs64, "direct", "", "precision f64", "<f8"},
		{ab32, rhs32, "direct", "f64", "precision f64", "<f8"},
		{ab64, rhs64, "pivot", "f32", "precision f32", "<f4"},
	}
	for i, c := range cases {
		out := filepath.Join(dir, fmt.Sprintf("x%d.npy", i))
		args := []string{"banded", "-npy", c.ab, "-method", c.method, "-o", out, "-p", "2"}
		if c.rhs != "" {
			args = append(args, "-rhs", c.rhs)
		}
		if c.prec != "" {
			args = append(args, "-precision", c.prec)
		}
		if c.method == "iterative" {
			args = append(args, "-tol", "1e-6") // float32 data
		}
		code, stdout, errOut := runCmd(t, args...)
		require.Equal(t, 0, code, "%v: %s", args, errOut)
		assert.Contains(t, stdout, c.wantPrec, "%v", args)
		assert.Equal(t, c.wantDType, dtypeOf(t, out), "%v", args)
		tol := 1e-9
		if c.wantDType == "<f4" || c.rhs == rhs32 { // float32 solve, or b rounded to float32
			tol = 1e-4
		}
		if c.rhs == "" { // b = A·x̃ with x̃ from the seed
			assert.Less(t, reportValue(t, stdout, "relative error"), tol)
			continue
		}
		_, x := readX(t, out)
		for r := range want {
			require.InDelta(t, want[r], x[r], tol, "%v row %d", args, r)
		}
	}
}

// Matrix Market files that cannot hold a nonsingular matrix are refused
// before the CSR arrays are made, naming the shape or the empty row.
func TestBandedMTXStructure(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ body, want string }{
		{"3 4 4\n1 1 1\n2 2 1\n3 3 1\n1 4 1\n", "sparse: bad shape: the matrix is 3×4; a nonsingular matrix is square"},
		{"3 3 3\n1 1 1\n2 2 1\n2 3 1\n", "sparse: matrix is structurally singular: row 3 of the 3×3 matrix has no stored entry"},
		{"3 3 3\n1 1 1\n2 1 1\n3 3 1\n", "sparse: matrix is structurally singular: column 2 of the 3×3 matrix has no stored entry"},
		{"10 10 5\n1 1 1\n", "sparse: Matrix Market line 4: found 1 entries at end of input, 5 declared"},
	} {
		path := filepath.Join(dir, "a.mtx")
		require.NoError(t, os.WriteFile(path, []byte("%%MatrixMarket matrix coordinate real general\n"+c.body), 0o644))
		code, _, errOut := runCmd(t, "banded", "-mtx", path)
		assert.Equal(t, 1, code)
		assert.Equal(t, "bandsolve banded: "+path+": "+c.want+"\n", errOut)
	}
}
