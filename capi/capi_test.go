package main

import (
	"bufio"
	"context"
	"debug/elf"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/banded"
	"github.com/bandsolve/bandsolve/tridiag"
)

// libDir holds the library built once for the package's tests.
var (
	libOnce sync.Once
	libDir  string
	libErr  error
)

// buildLib builds libbandsolve.so (this variant's build tags) into a
// temporary folder shared by the tests and returns the folder.
func buildLib(t *testing.T) string {
	t.Helper()
	libOnce.Do(func() {
		libDir, libErr = os.MkdirTemp("", "libbandsolve")
		if libErr != nil {
			return
		}
		args := []string{"build", "-buildmode=c-shared", "-o", filepath.Join(libDir, "libbandsolve.so")}
		if variant == "cuda" {
			args = append(args, "-tags", "cuda")
		}
		out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
		if err != nil {
			libErr = &buildError{err: err, out: string(out)}
		}
	})
	require.NoError(t, libErr)
	return libDir
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string {
	return "go build -buildmode=c-shared: " + e.err.Error() + "\n" + e.out
}

func TestMain(m *testing.M) {
	code := m.Run()
	if libDir != "" {
		_ = os.RemoveAll(libDir)
	}
	os.Exit(code)
}

// prototype is a function declaration of a C header: its return type and
// parameter types, normalised to the types cgo writes.
type prototype struct {
	ret    string
	params []string
}

var (
	protoRe   = regexp.MustCompile(`(?s)(?:^|[;}/\n])\s*(?:extern\s+)?([A-Za-z_][A-Za-z0-9_ ]*?\s*\**)\s*(bandsolve_[a-z0-9_]+)\s*\(([^)]*)\)\s*;`)
	paramName = regexp.MustCompile(`\s*\b[A-Za-z_][A-Za-z0-9_]*$`)
)

// normType maps the types of bandsolve.h to those of cgo's header.
func normType(s string) string {
	s = strings.Join(strings.Fields(strings.ReplaceAll(s, "*", " * ")), " ")
	s = strings.TrimPrefix(s, "const ")
	s = strings.NewReplacer("bandsolve_tridiag *", "uintptr_t *", "bandsolve_factors *", "uintptr_t *").Replace(s)
	switch s {
	case "bandsolve_tridiag", "bandsolve_factors":
		return "uintptr_t"
	case "bandsolve_status":
		return "int"
	case "unsigned":
		return "unsigned int"
	}
	return s
}

// prototypes reads the bandsolve_* declarations of a header.
func prototypes(t *testing.T, path string) map[string]prototype {
	t.Helper()
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	// Drop comments.
	text := regexp.MustCompile(`(?s)/\*.*?\*/`).ReplaceAllString(string(src), "")
	text = regexp.MustCompile(`//[^\n]*`).ReplaceAllString(text, "")
	out := map[string]prototype{}
	for _, m := range protoRe.FindAllStringSubmatch(text, -1) {
		var p prototype
		p.ret = normType(m[1])
		if ps := strings.TrimSpace(m[3]); ps != "void" && ps != "" {
			for _, q := range strings.Split(ps, ",") {
				q = strings.TrimSpace(q)
				if !strings.HasSuffix(q, "*") {
					q = paramName.ReplaceAllString(q, "")
				}
				p.params = append(p.params, normType(q))
			}
		}
		out[m[2]] = p
	}
	return out
}

func TestHeaderMatchesExports(t *testing.T) {
	dir := buildLib(t)
	want := prototypes(t, "bandsolve.h")
	got := prototypes(t, filepath.Join(dir, "libbandsolve.h"))
	require.NotEmpty(t, want)
	assert.Equal(t, sortedKeys(want), sortedKeys(got), "functions of bandsolve.h and of the library's exports")
	for name, w := range want {
		if g, ok := got[name]; ok {
			assert.Equal(t, w, g, "prototype of %s", name)
		}
	}
	f, err := elf.Open(filepath.Join(dir, "libbandsolve.so"))
	require.NoError(t, err)
	defer f.Close()
	syms, err := f.DynamicSymbols()
	require.NoError(t, err)
	exported := map[string]bool{}
	for _, s := range syms {
		if strings.HasPrefix(s.Name, "bandsolve_") && elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Section != elf.SHN_UNDEF {
			exported[s.Name] = true
		}
	}
	for name := range want {
		assert.True(t, exported[name], "%s is declared in bandsolve.h but not exported by the library", name)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	k := make([]string, 0, len(m))
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}

// runExample compiles testdata/example.c against the library and returns
// its records by name.
func runExample(t *testing.T) map[string][]string {
	t.Helper()
	cc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc is not installed: the C example cannot be built")
	}
	dir := buildLib(t)
	bin := filepath.Join(t.TempDir(), "example")
	out, err := exec.Command(cc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-I.", "-o", bin, "testdata/example.c",
		"-L"+dir, "-lbandsolve", "-Wl,-rpath,"+dir, "-lm").CombinedOutput()
	require.NoError(t, err, "gcc: %s", out)
	cmd := exec.Command(bin)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	require.NoError(t, err, "example: %s", stderr.String())
	rec := map[string][]string{}
	sc := bufio.NewScanner(strings.NewReader(string(stdout)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		name, rest, _ := strings.Cut(sc.Text(), " ")
		rec[name] = strings.Fields(rest)
		if strings.HasPrefix(name, "err.") || strings.HasPrefix(name, "lasterror.") {
			rec[name] = []string{rest}
		}
	}
	require.Contains(t, rec, "done", "the example did not finish: %s", stdout)
	return rec
}

// The inputs of example.c.
func coef(w, k int) float64 {
	switch w {
	case 0:
		return -1 + 0.125*float64(k%7)
	case 1:
		return 4 + 0.25*float64(k%5)
	}
	return -1.5 + 0.0625*float64(k%3)
}

func rhs(k int) float64 { return float64(k%11) - 5 }

func floats(t *testing.T, rec map[string][]string, name string) []float64 {
	t.Helper()
	require.Contains(t, rec, name)
	v := make([]float64, len(rec[name]))
	for i, s := range rec[name] {
		f, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err, "%s[%d]", name, i)
		v[i] = f
	}
	return v
}

func ints(t *testing.T, rec map[string][]string, name string) []int {
	t.Helper()
	require.Contains(t, rec, name)
	v := make([]int, len(rec[name]))
	for i, s := range rec[name] {
		n, err := strconv.Atoi(s)
		require.NoError(t, err, "%s[%d]", name, i)
		v[i] = n
	}
	return v
}

func arrays(l int, conv func(float64) float64) (a, b, c, d []float64) {
	a, b, c, d = make([]float64, l), make([]float64, l), make([]float64, l), make([]float64, l)
	for k := range l {
		a[k], b[k], c[k], d[k] = conv(coef(0, k)), conv(coef(1, k)), conv(coef(2, k)), conv(rhs(k))
	}
	return
}

func same(x float64) float64 { return x }

// assertClose compares the C solutions with Go's, NaN matching NaN.
func assertClose(t *testing.T, want, got []float64, tol float64, name string) {
	t.Helper()
	require.Len(t, got, len(want), name)
	for i := range want {
		if math.IsNaN(want[i]) {
			assert.True(t, math.IsNaN(got[i]), "%s[%d] = %v, want NaN", name, i, got[i])
			continue
		}
		assert.InDelta(t, want[i], got[i], tol*(1+math.Abs(want[i])), "%s[%d]", name, i)
	}
}

func TestCExample(t *testing.T) {
	rec := runExample(t)
	ctx := context.Background()
	assert.Equal(t, []string{"1", "1"}, rec["api"])
	assert.Equal(t, []string{strconv.Itoa(int(bandsolve_has_cuda()))}, rec["cuda"])

	t.Run("contiguous", func(t *testing.T) {
		const n, g = 7, 5
		a, b, c, d := arrays(n*g, same)
		p, err := tridiag.NewPlan[float64](nil, tridiag.Shape{N: n, G: g}, tridiag.Options{Algorithm: tridiag.GTSV})
		require.NoError(t, err)
		x := make([]float64, n*g)
		require.NoError(t, p.Solve(ctx, a, b, c, d, x))
		assert.Equal(t, []int{statusOK}, ints(t, rec, "st.contiguous"))
		assert.Equal(t, []string{"[]"}, rec["lasterror.ok"], "last error after a success")
		assertClose(t, x, floats(t, rec, "x.contiguous"), 1e-14, "x")
		assert.Equal(t, make([]int, g), ints(t, rec, "info.contiguous"))
		assert.Contains(t, strings.Join(rec["describe.contiguous"], " "), "gtsv")

		assert.Equal(t, []int{statusUnsupported}, ints(t, rec, "st.device_on_cpu"))
		assert.Equal(t, []int{-2, -2, -2, -2, -2}, ints(t, rec, "info.device_on_cpu"))

		assert.Equal(t, []int{statusNonFinite}, ints(t, rec, "st.nan"))
		assert.Contains(t, rec["err.nan"][0], "bandsolve_tridiag_solve: ")
		assert.Contains(t, rec["err.nan"][0], "d of system 2, row 3 is NaN")
		assert.Equal(t, []int{-2, -2, -2, -2, -2}, ints(t, rec, "info.nan"))

		assert.Equal(t, []int{statusArgument}, ints(t, rec, "st.null_b"))
		assert.Contains(t, rec["err.null_b"][0], "b is NULL")
	})

	t.Run("strided", func(t *testing.T) {
		const n, g, e = 6, 4, 5
		l := (n-1)*e + g
		a, b, c, d := arrays(l, func(v float64) float64 { return float64(float32(v)) })
		a32, b32, c32, d32 := make([]float32, l), make([]float32, l), make([]float32, l), make([]float32, l)
		for k := range l {
			a32[k], b32[k], c32[k], d32[k] = float32(a[k]), float32(b[k]), float32(c[k]), float32(d[k])
		}
		p, err := tridiag.NewPlan[float32](tridiag.NewCPU(2), tridiag.Shape{N: n, G: g, Layout: tridiag.Strided(e, 1)}, tridiag.Options{})
		require.NoError(t, err)
		require.NoError(t, p.Solve(ctx, a32, b32, c32, d32, d32))
		want := make([]float64, l)
		for k, v := range d32 {
			want[k] = float64(v)
		}
		// The padding column (index 4 of each row of 5) keeps its input.
		assert.Equal(t, rhs(4), want[4])
		assertClose(t, want, floats(t, rec, "x.strided"), 1e-7, "x")
	})

	t.Run("cyclic_const", func(t *testing.T) {
		const n, g = 8, 3
		d := make([]float64, n*g)
		for k := range d {
			d[k] = rhs(k)
		}
		p, err := tridiag.NewPlan[float64](nil, tridiag.Shape{N: n, G: g, Layout: tridiag.Interleaved(g)}, tridiag.Options{Cyclic: true})
		require.NoError(t, err)
		x := make([]float64, n*g)
		require.NoError(t, p.SolveConst(ctx, -1, 3, -0.5, d, x))
		assertClose(t, x, floats(t, rec, "x.cyclic_const"), 1e-14, "x")
	})

	t.Run("factors", func(t *testing.T) {
		const n, g, r = 5, 4, 2
		a, b, c, _ := arrays(n*g, same)
		d := make([]float64, r*n*g)
		for k := range d {
			d[k] = rhs(3*k + 1)
		}
		p, err := tridiag.NewPlan[float64](nil, tridiag.Shape{N: n, G: g}, tridiag.Options{Algorithm: tridiag.Thomas})
		require.NoError(t, err)
		f, err := p.Factor(ctx, a, b, c)
		require.NoError(t, err)
		x := make([]float64, r*n*g)
		require.NoError(t, f.SolveMany(ctx, r, d, x))
		assert.Equal(t, []int{statusOK}, ints(t, rec, "st.factor"))
		assert.Equal(t, []int{statusOK}, ints(t, rec, "st.factors_solve"))
		assertClose(t, x, floats(t, rec, "x.factors"), 1e-14, "x")

		// System 1 with b[0] = 0: Thomas without pivoting breaks down at
		// its row 0 (info 1), the others are solved.
		b[n] = 0
		q, err := tridiag.NewPlan[float64](nil, tridiag.Shape{N: n, G: g}, tridiag.Options{Algorithm: tridiag.Thomas, Pivoting: tridiag.PivotNever})
		require.NoError(t, err)
		err = q.Solve(ctx, a, b, c, d[:n*g], x[:n*g])
		require.Error(t, err)
		assert.Equal(t, []int{statusSystems}, ints(t, rec, "st.zero_pivot"))
		assert.Equal(t, []int{0, 1, 0, 0}, ints(t, rec, "info.zero_pivot"))
		assert.Contains(t, rec["err.zero_pivot"][0], "system 1, row 0")
		assertClose(t, x[:n*g], floats(t, rec, "x.zero_pivot"), 1e-14, "x")
		for i := n; i < 2*n; i++ {
			assert.True(t, math.IsNaN(x[i]), "Go's x of the failed system")
		}
	})

	t.Run("arguments", func(t *testing.T) {
		for _, c := range []struct{ name, text string }{
			{"n0", "N = 0"},
			{"overlap", "maps two rows"},
			{"algorithm", `unknown algorithm "gauss"`},
			{"precision", "unknown precision 7"},
			{"null_handle", "null plan handle"},
		} {
			assert.Equal(t, []int{statusArgument}, ints(t, rec, "st."+c.name), c.name)
			require.Contains(t, rec, "err."+c.name)
			assert.Contains(t, rec["err."+c.name][0], c.text, c.name)
		}
		assert.Equal(t, []string{"1"}, rec["handle.n0"], "no handle after a failed create")
		assert.Equal(t, []int{statusOK}, ints(t, rec, "st.null_destroy"))
		if variant == "cpu" {
			assert.Equal(t, []int{statusUnsupported}, ints(t, rec, "st.cuda_in_cpu"))
			assert.Contains(t, rec["err.cuda_in_cpu"][0], "-tags cuda")
		}
	})

	t.Run("banded", func(t *testing.T) {
		const n, kl, ku, g, nr = 6, 2, 1, 3, 2
		const rows = kl + ku + 1
		want := make([]float64, g*n*nr)
		var info []int
		for s := range g {
			m, err := banded.NewGeneral[float64](n, kl, ku)
			require.NoError(t, err)
			for r := range rows {
				for j := range n {
					if i := j + r - ku; i < 0 || i >= n {
						continue // outside the matrix: never read
					}
					k := s*rows*n + r*n + j
					switch {
					case s == 2 && j == 4:
						m.Data[r*n+j] = 0
					case r == ku:
						m.Data[r*n+j] = 5 + coef(1, k)
					case r < ku:
						m.Data[r*n+j] = coef(2, k)
					default:
						m.Data[r*n+j] = coef(0, k)
					}
				}
			}
			lu, err := banded.FactorPivotGeneral(m)
			if err != nil {
				require.ErrorIs(t, err, banded.ErrSingular)
				var re *banded.RowError
				require.ErrorAs(t, err, &re)
				info = append(info, re.Row+1)
				for i := range n * nr {
					want[s*n*nr+i] = math.NaN()
				}
				continue
			}
			info = append(info, 0)
			for r := range nr {
				col := make([]float64, n)
				for i := range n {
					col[i] = rhs(s*n*nr + i*nr + r)
				}
				lu.Solve(col)
				for i := range n {
					want[s*n*nr+i*nr+r] = col[i]
				}
			}
		}
		assert.Equal(t, []int{0, 0, 5}, info, "the Go reference: system 2 singular at row 4")
		assert.Equal(t, []int{statusSystems}, ints(t, rec, "st.banded"))
		assert.Equal(t, info, ints(t, rec, "info.banded"))
		assertClose(t, want, floats(t, rec, "x.banded"), 1e-14, "x")

		assert.Equal(t, []int{statusNonFinite}, ints(t, rec, "st.banded_inf"))
		assert.Contains(t, rec["err.banded_inf"][0], "b of system 1, row 3, column 1 is +Inf")
		assert.Equal(t, []int{-2, -2, -2}, ints(t, rec, "info.banded_inf"))
		assert.Equal(t, []int{statusArgument}, ints(t, rec, "st.banded_kl"))

		for _, c := range []struct{ name, text string }{
			{"banded_device_null", "b is 0 (a null device pointer)"},
			{"banded_device_ku", "upper bandwidth KU=6 must be < N=6"},
			{"banded_device_precision", "unknown precision 7"},
			{"banded_device_ordinal", "GPU ordinal -1"},
		} {
			assert.Equal(t, []int{statusArgument}, ints(t, rec, "st."+c.name), c.name)
			require.Contains(t, rec, "err."+c.name)
			assert.Contains(t, rec["err."+c.name][0], "bandsolve_solve_banded_device: ", c.name)
			assert.Contains(t, rec["err."+c.name][0], c.text, c.name)
		}
		assert.Equal(t, []int{-2, -2, -2}, ints(t, rec, "info.banded_device_null"))
		if variant == "cpu" {
			assert.Equal(t, []int{statusUnsupported}, ints(t, rec, "st.banded_device_cpu"))
			assert.Contains(t, rec["err.banded_device_cpu"][0], "bandsolve_solve_banded_device: ")
			assert.Contains(t, rec["err.banded_device_cpu"][0], "-tags cuda")
			assert.Equal(t, []int{-2, -2, -2}, ints(t, rec, "info.banded_device_cpu"))
		}
	})

	t.Run("solveh", func(t *testing.T) {
		// System 0: −x[i−1] + 4x[i] − x[i+1] = i + 1, by the Go Cholesky.
		const n = 5
		m, err := banded.New[float64](n, 1)
		require.NoError(t, err)
		for j := range n {
			m.Data[n+j] = 4
			if j+1 < n {
				m.Data[2*n+j] = -1
			}
		}
		f, err := banded.FactorCholesky(m)
		require.NoError(t, err)
		want := []float64{1, 2, 3, 4, 5}
		f.Solve(want)
		assert.Equal(t, []int{statusSystems}, ints(t, rec, "st.solveh"))
		assert.Equal(t, []int{0, 4}, ints(t, rec, "info.solveh"), "system 1: the pivot of row 3")
		x := floats(t, rec, "x.solveh")
		assertClose(t, want, x[:n], 1e-15, "x of system 0")
		for i, v := range x[n:] {
			assert.True(t, math.IsNaN(v), "x of system 1, row %d: %v", i, v)
		}
	})
}
