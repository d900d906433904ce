package bench

import (
	"bytes"
	"context"
	"math"
	"math/cmplx"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/tridiag"
)

func TestGridCasesPrecisions(t *testing.T) {
	for _, name := range []string{"quick", "batch", "layouts,const", "256x65536:interleaved"} {
		real := GridCases(name, map[string]bool{F32: true, F64: true})
		assert.Equal(t, Grid(name), real, "%s: the real precisions are Grid's cases in Grid's order", name)
		cx := GridCases(name, map[string]bool{C64: true, C128: true})
		require.Len(t, cx, len(real), name)
		for i, c := range cx {
			r := real[i]
			assert.True(t, c.Complex(), "%v", c)
			assert.Equal(t, []int{r.N, r.G}, []int{c.N, c.G})
			assert.Equal(t, r.Layout, c.Layout)
			assert.Equal(t, r.Constant, c.Constant)
			want := C64
			if r.Precision == F64 {
				want = C128
			}
			assert.Equal(t, want, c.Precision, "%v", c)
		}
		all := GridCases(name, map[string]bool{F32: true, F64: true, C64: true, C128: true})
		assert.Len(t, all, 2*len(real))
		assert.Equal(t, []string{F32, F64, C64, C128}, []string{all[0].Precision, all[1].Precision, all[2].Precision, all[3].Precision})
	}
	assert.Nil(t, GridCases("nope", map[string]bool{C64: true}))
	// The large-batch grid holds the sizes the complex targets name.
	seen := map[[2]int]bool{}
	for _, c := range GridCases("batch", map[string]bool{C64: true}) {
		seen[[2]int{c.N, c.G}] = true
	}
	for _, ng := range [][2]int{{256, 65536}, {4096, 4096}, {65536, 256}} {
		assert.True(t, seen[ng], "%v not in the batch grid", ng)
	}
}

func TestComplexBytesFormula(t *testing.T) {
	for _, tc := range []struct {
		prec          string
		elem, row, rc int64
	}{
		{C64, 8, 40, 16},
		{C128, 16, 80, 32},
		{F32, 4, 20, 8},
		{F64, 8, 40, 16},
	} {
		c := Case{N: 1000, G: 37, Layout: Interleaved, Precision: tc.prec}
		assert.Equal(t, tc.elem, c.ElemSize(), tc.prec)
		assert.Equal(t, tc.row, c.BytesPerRow(), tc.prec)
		assert.Equal(t, tc.row*37000, c.BytesMoved(), tc.prec)
		assert.Equal(t, 6*tc.elem*37000, c.Footprint(), tc.prec)
		c.Constant = true
		assert.Equal(t, tc.rc, c.BytesPerRow(), tc.prec)
	}
	// 3.0 TB/s copy bandwidth: the complex64 limit is 75 000 MRows/s, so
	// 16.7 M rows in 447 µs are 50% of it.
	c := Case{N: 256, G: 65536, Precision: C64, Layout: Interleaved}
	mrows, frac := figures(c, 447392*time.Nanosecond, 3e12)
	assert.InDelta(t, 37500, mrows, 5)
	assert.InDelta(t, 0.5, frac, 0.001)
	c.Precision = C128
	_, frac = figures(c, 447392*time.Nanosecond, 3e12)
	assert.InDelta(t, 1.0, frac, 0.002)
	assert.Equal(t, residLimit(F32), residLimit(C64))
	assert.Equal(t, residLimit(F64), residLimit(C128))
}

func TestParsePrecisions(t *testing.T) {
	for in, want := range map[string][]string{
		"f32,f64":              {F32, F64},
		"c64":                  {C64},
		"complex128, z":        {C128},
		"complex":              {C64, C128},
		"real,c":               {F32, F64, C64},
		"all":                  {F32, F64, C64, C128},
		"complex64,float64,s ": {F32, F64, C64},
	} {
		got, err := parsePrecisions(in)
		require.NoError(t, err, in)
		var keys []string
		for _, p := range Precisions() {
			if got[p] {
				keys = append(keys, p)
			}
		}
		assert.Equal(t, want, keys, in)
		assert.Len(t, got, len(want), in)
	}
	for _, bad := range []string{"", "c32", "f16,c64", " , "} {
		_, err := parsePrecisions(bad)
		assert.Error(t, err, bad)
	}
}

// TestComplexData checks the complex cases' data (boundary zeros, complex
// parts, the matrices newComplexData names) and their backward error: a
// GTSV solve on the CPU is within the precision's limit, a perturbed
// solution is not, a NaN is NaN.
func TestComplexData(t *testing.T) {
	t.Run("complex64", func(t *testing.T) { testComplexData[complex64](t, C64) })
	t.Run("complex128", func(t *testing.T) { testComplexData[complex128](t, C128) })
	_, err := newComplexData[complex64](Case{N: 4, G: 1, Layout: Contiguous, Precision: F32}, Toeplitz, 1)
	assert.Error(t, err, "complex data for a real case")
	_, err = newComplexData[complex64](Case{N: 4, G: 1, Layout: Contiguous, Precision: C64}, "hilbert", 1)
	assert.Error(t, err)
}

func testComplexData[T tridiag.Complex](t *testing.T, prec string) {
	for _, c := range []Case{
		{N: 100, G: 7, Layout: Contiguous, Precision: prec},
		{N: 100, G: 7, Layout: Interleaved, Precision: prec},
		{N: 100, G: 7, Layout: Strided, Precision: prec},
		{N: 100, G: 7, Layout: Interleaved, Precision: prec, Constant: true},
	} {
		for _, m := range Matrices() {
			h, err := newCaseData[T](c, m, 3)
			require.NoError(t, err)
			a, b, cc := h.coeffs()
			l := c.TridiagLayout()
			imag := 0
			for g := 0; g < c.G; g++ {
				assert.Zero(t, a[l.Index(0, g)], "%v %s", c, m)
				assert.Zero(t, cc[l.Index(c.N-1, g)], "%v %s", c, m)
				for i := 0; i < c.N; i++ {
					k := l.Index(i, g)
					if imagPart(h.d[k]) != 0 && imagPart(b[k])+imagPart(cc[k]) != 0 {
						imag++
					}
					if m == Toeplitz || c.Constant && m == Diffusion {
						assert.Equal(t, T(complex(2, 1)), b[k])
					}
					if m == Dominant && !c.Constant {
						assert.Equal(t, T(4), b[k])
						assert.LessOrEqual(t, cmplx.Abs(complex128(a[k]))+cmplx.Abs(complex128(cc[k])), 2*math.Sqrt2)
					}
					if m == Diffusion && !c.Constant && i > 0 {
						assert.Equal(t, a[k], cc[l.Index(i-1, g)], "the edge between rows %d and %d", i-1, i)
						if i < c.N-1 {
							assert.Equal(t, b[k], -a[k]-cc[k], "row %d: b = k_{i−1/2} + k_{i+1/2}", i)
						}
					}
				}
			}
			if m != Toeplitz || !c.Constant {
				assert.Greater(t, imag, c.N*c.G/2, "%v %s: the data is complex", c, m)
			}
			p, err := tridiag.NewPlan[T](tridiag.DefaultCPU(), c.Shape(), tridiag.Options{Algorithm: tridiag.GTSV})
			require.NoError(t, err)
			x := make([]T, c.Len())
			if c.Constant {
				require.NoError(t, p.SolveConst(context.Background(), h.ka, h.kb, h.kc, h.d, x))
			} else {
				require.NoError(t, p.Solve(context.Background(), h.a, h.b, h.c, h.d, x))
			}
			require.NoError(t, p.Close())
			assert.Less(t, h.backwardError(x), residLimit(prec), "%v %s", c, m)
			k := l.Index(50, 3)
			x[k] += T(complex(0, 1))
			assert.Greater(t, h.backwardError(x), 1e-3, "%v %s", c, m)
			x[k] = T(cmplx.NaN())
			assert.True(t, math.IsNaN(h.backwardError(x)))
		}
	}
}

func imagPart[T tridiag.Complex](v T) float64 { return imag(complex128(v)) }

// TestMainComplexCPU runs the complex cases of the quick grid on the CPU:
// every complex algorithm timed on every case, within the backward-error
// limit, with the complex byte model in the fraction.
func TestMainComplexCPU(t *testing.T) {
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "out.csv")
	var stdout, stderr bytes.Buffer
	code := Main([]string{"-device", "cpu", "-grid", "quick", "-precision", "complex", "-algorithms", "all", "-reps", "2", "-warmup", "1",
		"-csv", csvPath, "-host-copy-bytes", "8M", "-q"}, &stdout, &stderr)
	require.Equal(t, 0, code, "stderr: %s", stderr.String())
	f, err := os.Open(csvPath)
	require.NoError(t, err)
	defer f.Close()
	rs, err := ReadCSV(f)
	require.NoError(t, err)
	timed := map[string]int{}
	for _, r := range rs {
		require.True(t, r.Complex(), "%v", r.Case)
		if !r.OK() {
			assert.True(t, strings.HasPrefix(r.Err, "unsupported"), "%v %s: %s", r.Case, r.Solver, r.Err)
			continue
		}
		timed[r.Solver]++
		speed := float64(r.BytesMoved()) / r.Median.Seconds()
		// The CSV keeps the bandwidth in GB/s to 0.1: a slow host's is off
		// by up to 0.05 GB/s.
		tol := 0.01 + 0.05e9/r.Prov.Bandwidth
		assert.InEpsilon(t, speed, r.Fraction*r.Prov.Bandwidth, tol, "%v %s: fraction = bytes moved / time / bandwidth", r.Case, r.Solver)
		assert.GreaterOrEqual(t, r.Resid, 0.0)
		assert.Less(t, r.Resid, residLimit(r.Precision), "%v %s", r.Case, r.Solver)
	}
	n := len(Grid("quick")) // its sizes in c64 and c128, as Grid has them in f32 and f64
	for _, s := range []string{"cpu:auto", "cpu:thomas", "cpu:gtsv", "cpu:partition"} {
		assert.Equal(t, n, timed[s], s)
	}
	assert.Len(t, timed, 4, "only auto, thomas, gtsv and partition solve complex systems: %v", timed)
	assert.Contains(t, stdout.String(), "c128 interleaved N=256 G=256")
}
