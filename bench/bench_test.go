package bench

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/tridiag"
)

func TestGridPaper(t *testing.T) {
	cs := Grid("paper")
	require.Len(t, cs, 13*3*2)
	seen := map[Case]bool{}
	for _, c := range cs {
		assert.False(t, seen[c], "duplicate %v", c)
		seen[c] = true
		assert.Equal(t, Contiguous, c.Layout)
		assert.False(t, c.Constant)
		assert.Contains(t, []int{1, 8, 64}, c.G)
		assert.GreaterOrEqual(t, c.N, 1<<7)
		assert.LessOrEqual(t, c.N, 1<<19)
		assert.Equal(t, 0, c.N&(c.N-1), "N not a power of two")
	}
	for _, p := range []string{F32, F64} {
		for _, g := range []int{1, 8, 64} {
			assert.True(t, seen[Case{N: 1 << 7, G: g, Layout: Contiguous, Precision: p}])
			assert.True(t, seen[Case{N: 1 << 19, G: g, Layout: Contiguous, Precision: p}])
		}
	}
}

func TestGridOthers(t *testing.T) {
	batch := Grid("batch")
	require.Len(t, batch, 3*2*11*2)
	for _, c := range batch {
		r := c.Rows()
		assert.Contains(t, []int64{1 << 24, 1 << 25, 1 << 26}, r, "%v", c)
		assert.True(t, c.N >= 64 && c.N <= 65536, "%v", c)
		assert.Contains(t, []string{Contiguous, Interleaved}, c.Layout)
	}
	large := Grid("large")
	maxN := 0
	for _, c := range large {
		assert.Equal(t, 1, c.G)
		maxN = max(maxN, c.N)
	}
	assert.Equal(t, 1<<24, maxN)
	for _, c := range Grid("const") {
		assert.True(t, c.Constant, "%v", c)
	}
	layouts := map[string]bool{}
	for _, c := range Grid("layouts") {
		layouts[c.Layout] = true
		require.NoError(t, c.Shape().Validate(), "%v", c)
	}
	assert.Len(t, layouts, 3)
	all := Grid("all")
	seen := map[Case]bool{}
	for _, c := range all {
		assert.False(t, seen[c], "duplicate %v in all", c)
		seen[c] = true
	}
	for _, g := range []string{"paper", "batch", "large", "const", "layouts"} {
		for _, c := range Grid(g) {
			assert.True(t, seen[c], "%v of %s not in all", c, g)
		}
	}
	assert.NotEmpty(t, Grid("quick"))
	assert.Nil(t, Grid("nope"))
	assert.Nil(t, Grid("quick,nope"))
	assert.Len(t, Grid("large,large"), len(large))
	il := Grid("interleaved")
	require.Len(t, il, 22)
	for _, c := range il {
		assert.Equal(t, Interleaved, c.Layout)
		assert.Equal(t, 1<<24, c.N*c.G)
		assert.True(t, seen[c], "%v of interleaved not in all", c)
	}
	one := Grid("2048x8192")
	require.Len(t, one, 2)
	assert.Equal(t, Case{N: 2048, G: 8192, Layout: Contiguous, Precision: F32}, one[0])
	one = Grid("16384x1024:interleaved:const")
	require.Len(t, one, 2)
	assert.Equal(t, Case{N: 16384, G: 1024, Layout: Interleaved, Constant: true, Precision: F64}, one[1])
	assert.Equal(t, Strided, Grid("64x8:strided")[0].Layout)
	assert.Nil(t, Grid("64x8:diagonal"))
	assert.Nil(t, Grid("64x:interleaved"))
}

func TestBytesFormula(t *testing.T) {
	for _, tc := range []struct {
		c    Case
		want int64
	}{
		{Case{N: 1, G: 1, Precision: F32, Layout: Contiguous}, 20},
		{Case{N: 1, G: 1, Precision: F64, Layout: Contiguous}, 40},
		{Case{N: 1, G: 1, Precision: F32, Layout: Contiguous, Constant: true}, 8},
		{Case{N: 1, G: 1, Precision: F64, Layout: Contiguous, Constant: true}, 16},
	} {
		assert.Equal(t, tc.want, tc.c.BytesPerRow(), "%v", tc.c)
		big := tc.c
		big.N, big.G = 1000, 37
		assert.Equal(t, tc.want*37000, big.BytesMoved())
	}
	// The strided layout's halo is not traffic.
	s := Case{N: 256, G: 64, Precision: F32, Layout: Strided}
	assert.Equal(t, int64(20*256*64), s.BytesMoved())
	assert.Greater(t, s.Len(), 256*64)
	// Fractions: 4.166 TB/s copy bandwidth, FP32 limit 208 300 MRows/s.
	c := Case{N: 256, G: 65536, Precision: F32, Layout: Interleaved}
	mrows, frac := figures(c, 327700*time.Nanosecond, 4166e9)
	assert.InDelta(t, 51200, mrows, 5)
	assert.InDelta(t, 0.2458, frac, 0.001)
}

func sampleResults() []Result {
	c1 := Case{N: 1024, G: 8, Layout: Contiguous, Precision: F32}
	c2 := Case{N: 256, G: 65536, Layout: Interleaved, Precision: F64, Constant: true}
	return []Result{
		{Case: c1, Solver: "gpu:tpr", Median: 12345 * time.Nanosecond, Min: 12000 * time.Nanosecond, Max: 13001 * time.Nanosecond,
			MRows: 663.5912, Fraction: 0.0123456789, Resid: 1.25e-7, Note: "auto → tpr"},
		{Case: c1, Solver: "cusparse:gtsv2StridedBatch", Median: 30 * time.Microsecond, Min: 29 * time.Microsecond, Max: 31 * time.Microsecond,
			MRows: 273.0666, Fraction: 0.005, Resid: -1},
		{Case: c2, Solver: "gpu:cr", Err: "unsupported: cuda: algorithm cr has no GPU kernel yet", Resid: -1},
		{Case: c2, Solver: "cpu:auto", Median: 2 * time.Second, Min: 2 * time.Second, Max: 3 * time.Second,
			MRows: 8.388608, Fraction: 0.5, Resid: math.NaN(), Err: "tridiag: 1 of 65536 systems failed; system 3, row 2: x, \"quoted\""},
	}
}

func TestCSVRoundTrip(t *testing.T) {
	in := sampleResults()
	var buf bytes.Buffer
	require.NoError(t, WriteCSV(&buf, in, "device X\nsecond line", "copy 4166 GB/s"))
	assert.True(t, strings.HasPrefix(buf.String(), "# device X\n# second line\n# copy 4166 GB/s\nprecision,"))
	out, err := ReadCSV(&buf)
	require.NoError(t, err)
	require.Len(t, out, len(in))
	for i := range in {
		a, b := in[i], out[i]
		if math.IsNaN(a.Resid) {
			assert.True(t, math.IsNaN(b.Resid))
			a.Resid, b.Resid = 0, 0
		}
		assert.Equal(t, a, b)
	}
}

func TestCSVIncremental(t *testing.T) {
	var buf bytes.Buffer
	cw, err := NewCSVWriter(&buf, Provenance{})
	require.NoError(t, err)
	rs := sampleResults()
	require.NoError(t, cw.Write(rs[0]))
	n := buf.Len()
	assert.Positive(t, n, "flushed after the first write")
	require.NoError(t, cw.Write(rs[1:]...))
	out, err := ReadCSV(&buf)
	require.NoError(t, err)
	assert.Len(t, out, len(rs))
}

// column returns the rune offset of s in line, or −1.
func column(line, s string) int {
	i := strings.Index(line, s)
	if i < 0 {
		return -1
	}
	return len([]rune(line[:i]))
}

func TestTable(t *testing.T) {
	rs := sampleResults()
	var buf bytes.Buffer
	require.NoError(t, WriteTable(&buf, rs))
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	require.Len(t, lines, 1+len(rs))
	// Solver names start in one column; the right-aligned MRows/s column
	// ends in one column.
	start := column(lines[0], "solver")
	end := column(lines[0], "MRows/s") + len("MRows/s")
	for i, r := range rs {
		assert.Equal(t, start, column(lines[i+1], r.Solver), "line %q", lines[i+1])
		if r.OK() {
			m := fmtMRows(r.MRows)
			assert.Equal(t, end, column(lines[i+1], " "+m+" ")+1+len(m), "line %q", lines[i+1])
		}
	}
	assert.Contains(t, lines[1], "12.3µs")
	assert.Contains(t, lines[1], "664")
	assert.Contains(t, lines[1], "1.2%")
	assert.Contains(t, lines[1], "2.43×") // 663.6 / 273.1
	assert.Contains(t, lines[3], "unsupported")
	assert.Contains(t, lines[4], "NaN!")

	buf.Reset()
	require.NoError(t, WriteSummary(&buf, rs, "gpu"))
	assert.Contains(t, buf.String(), "gpu:tpr")
	assert.Contains(t, buf.String(), "cusparse:gtsv2StridedBatch")
	assert.Contains(t, buf.String(), "2.43×")
}

func TestFormatting(t *testing.T) {
	assert.Equal(t, "14.0µs", fmtDuration(14*time.Microsecond))
	assert.Equal(t, "838µs", fmtDuration(838*time.Microsecond))
	assert.Equal(t, "2.13ms", fmtDuration(2131400*time.Nanosecond))
	assert.Equal(t, "3.71s", fmtDuration(3714900*time.Microsecond))
	v, err := parseBytes("8G")
	require.NoError(t, err)
	assert.Equal(t, int64(8<<30), v)
	v, err = parseBytes("512MiB")
	require.NoError(t, err)
	assert.Equal(t, int64(512<<20), v)
	_, err = parseBytes("lots")
	assert.Error(t, err)
}

func plotResults() []Result {
	var rs []Result
	add := func(c Case, solver string, mrows float64) {
		t := time.Duration(float64(c.Rows()) / mrows / 1e6 * 1e9)
		r := Result{Case: c, Solver: solver, Median: t, Min: t, Max: t, Resid: -1}
		r.MRows, r.Fraction = figures(c, t, 4166e9)
		rs = append(rs, r)
	}
	for _, g := range []int{1, 8} {
		for k := 7; k <= 12; k++ {
			c := Case{N: 1 << k, G: g, Layout: Contiguous, Precision: F32}
			add(c, "gpu:tpr", float64(int(1)<<k)*float64(g)/10)
			add(c, "cusparse:gtsv2StridedBatch", float64(int(1)<<k)*float64(g)/40)
		}
	}
	for k := 6; k <= 10; k++ {
		c := Case{N: 1 << k, G: 1 << (24 - k), Layout: Interleaved, Precision: F64}
		add(c, "gpu:thomas", 30000/float64(k))
		add(c, "cusparse:gtsvInterleavedBatch/algo2", 20000/float64(k))
	}
	// A single point and a failure must not break anything.
	add(Case{N: 1 << 20, G: 1, Layout: Strided, Precision: F64}, "gpu:pcr", 5000)
	rs = append(rs, Result{Case: Case{N: 64, G: 8, Layout: Contiguous, Precision: F32}, Solver: "gpu:cr", Err: "unsupported", Resid: -1})
	return rs
}

func TestPlots(t *testing.T) {
	dir := t.TempDir()
	files, err := WritePlots(filepath.Join(dir, "plots"), plotResults())
	require.NoError(t, err)
	names := map[string]bool{}
	for _, f := range files {
		names[filepath.Base(f)] = true
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		assert.Greater(t, len(b), 1000, f)
		assert.True(t, bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")), "%s is not a PNG", f)
	}
	assert.True(t, names["mrows-f32-contiguous-G1.png"], "%v", names)
	assert.True(t, names["mrows-f32-contiguous-G8.png"], "%v", names)
	assert.True(t, names["mrows-f64-interleaved-NG2pow24.png"], "%v", names)
	assert.True(t, names["roofline-f32.png"], "%v", names)
	assert.True(t, names["roofline-f64.png"], "%v", names)
	assert.Len(t, files, 5)
}

func TestBackwardError(t *testing.T) {
	for _, c := range []Case{
		{N: 100, G: 7, Layout: Contiguous, Precision: F64},
		{N: 100, G: 7, Layout: Interleaved, Precision: F64},
		{N: 100, G: 7, Layout: Strided, Precision: F64},
		{N: 100, G: 7, Layout: Strided, Precision: F64, Constant: true},
	} {
		for _, m := range Matrices() {
			h, err := newHostData[float64](c, m, 3)
			require.NoError(t, err)
			p, err := tridiag.NewPlan[float64](nil, c.Shape(), tridiag.Options{Algorithm: tridiag.GTSV})
			require.NoError(t, err)
			x := make([]float64, c.Len())
			if c.Constant {
				require.NoError(t, p.SolveConst(context.Background(), h.ka, h.kb, h.kc, h.d, x))
			} else {
				require.NoError(t, p.Solve(context.Background(), h.a, h.b, h.c, h.d, x))
			}
			assert.Less(t, h.backwardError(x), 1e-13, "%v %s", c, m)
			x[c.TridiagLayout().Index(50, 3)] += 1
			assert.Greater(t, h.backwardError(x), 1e-3, "%v %s", c, m)
			x[c.TridiagLayout().Index(50, 3)] = math.NaN()
			assert.True(t, math.IsNaN(h.backwardError(x)))
		}
	}
}

func TestDataConventions(t *testing.T) {
	c := Case{N: 5, G: 3, Layout: Interleaved, Precision: F32, Constant: true}
	h, err := newHostData[float32](c, Toeplitz, 1)
	require.NoError(t, err)
	assert.Nil(t, h.a, "constant cases materialise coefficients on demand")
	a, b, cc := h.coeffs()
	l := c.TridiagLayout()
	for g := 0; g < c.G; g++ {
		assert.Zero(t, a[l.Index(0, g)])
		assert.Zero(t, cc[l.Index(c.N-1, g)])
		assert.Equal(t, float32(2), b[l.Index(2, g)])
		assert.Equal(t, float32(-1), a[l.Index(2, g)])
	}
}

const anchorSample = `# cuSPARSE on a test machine; device-to-device copy 4000 GB/s counting bytes read+written.
api,prec,N,G,us,MRows_per_s
gtsv2StridedBatch,f32,128,1,14.0,9
gtsvInterleavedBatch/algo2,f32,256,65536,327.7,51200
gtsv2(pivot),f64,16777216,1,2131.4,7871
`

// TestAnchorsFile reads the cuSPARSE anchors kept in the repository: every
// record is read, its time agrees with its MRows_per_s column, the copy
// bandwidth comes from the comment, and the comment lines say where the
// numbers come from.
func TestAnchorsFile(t *testing.T) {
	const path = "anchors/cusparse-h200.csv"
	m, note, err := ReadAnchors(path)
	require.NoError(t, err)
	assert.Equal(t, "82 anchors, their copy bandwidth 4166 GB/s", note)
	recs := anchorRecords(t, path)
	require.Len(t, recs, 82)
	n := 0
	for _, rs := range m {
		n += len(rs)
	}
	assert.Equal(t, len(recs), n)
	for i, rec := range recs {
		N, err1 := strconv.Atoi(rec[2])
		G, err2 := strconv.Atoi(rec[3])
		want, err3 := strconv.ParseFloat(rec[5], 64)
		require.NoError(t, errors.Join(err1, err2, err3), "record %d", i+1)
		layout := Contiguous
		if strings.Contains(rec[0], "Interleaved") {
			layout = Interleaved
		}
		prec, err := parsePrecision(rec[1])
		require.NoError(t, err, "record %d", i+1)
		c := Case{N: N, G: G, Layout: layout, Precision: prec}
		idx := slices.IndexFunc(m[c], func(r Result) bool { return r.Solver == "anchor:"+rec[0] })
		require.GreaterOrEqual(t, idx, 0, "record %d: %v", i+1, rec)
		assert.InDelta(t, want, m[c][idx].MRows, max(0.6, want/100), "record %d: %v", i+1, rec)
	}
	prov := anchorComments(t, path)
	for _, want := range []string{"cuSPARSE", "H200", "CUDA 13", "median of 10", "bandsolve bench"} {
		assert.Contains(t, prov, want)
	}
}

func TestAnchors(t *testing.T) {
	m, note, err := readAnchors(strings.NewReader(anchorSample))
	require.NoError(t, err)
	assert.Contains(t, note, "3 anchors")
	assert.Contains(t, note, "4000 GB/s")
	rs := m[Case{N: 256, G: 65536, Layout: Interleaved, Precision: F32}]
	require.Len(t, rs, 1)
	assert.Equal(t, "anchor:gtsvInterleavedBatch/algo2", rs[0].Solver)
	assert.InDelta(t, 51200, rs[0].MRows, 5)
	assert.InDelta(t, 51200e6*20/4000e9, rs[0].Fraction, 1e-3)
	assert.Len(t, m[Case{N: 1 << 24, G: 1, Layout: Contiguous, Precision: F64}], 1)
	_, _, err = readAnchors(strings.NewReader("api,prec,N,G_or_K,time,MRows_per_s\n"))
	assert.Error(t, err)
}

func TestMainCPU(t *testing.T) {
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "out.csv")
	plots := filepath.Join(dir, "plots")
	anchors := filepath.Join(dir, "anchors.csv")
	require.NoError(t, os.WriteFile(anchors, []byte(anchorSample), 0o644))
	var stdout, stderr bytes.Buffer
	code := Main([]string{"-device", "cpu", "-grid", "quick", "-reps", "2", "-warmup", "1",
		"-csv", csvPath, "-plots", plots, "-host-copy-bytes", "8M", "-anchors", anchors}, &stdout, &stderr)
	require.Equal(t, 0, code, "stderr: %s", stderr.String())
	f, err := os.Open(csvPath)
	require.NoError(t, err)
	defer f.Close()
	rs, err := ReadCSV(f)
	require.NoError(t, err)
	quick := Grid("quick")
	solvers := map[string]int{}
	for _, r := range rs {
		solvers[r.Solver]++
		if strings.HasPrefix(r.Solver, "cpu:") {
			assert.True(t, r.OK(), "%v %s: %s", r.Case, r.Solver, r.Err)
			assert.Positive(t, r.MRows)
			assert.Positive(t, r.Fraction)
			assert.GreaterOrEqual(t, r.Resid, 0.0)
			assert.Less(t, r.Resid, residLimit(r.Precision)*10, "%v %s", r.Case, r.Solver)
		}
	}
	for _, a := range append([]tridiag.Algorithm{tridiag.Auto}, tridiag.Algorithms()...) {
		assert.Equal(t, len(quick), solvers["cpu:"+a.String()], a.String())
	}
	assert.Positive(t, solvers["gonum:dgtsv"])
	assert.Equal(t, 1, solvers["anchor:gtsv2StridedBatch"])
	assert.Contains(t, stdout.String(), "best ours")
	assert.Contains(t, stderr.String(), "[1/")
	entries, err := os.ReadDir(plots)
	require.NoError(t, err)
	assert.NotEmpty(t, entries)
	for _, e := range entries {
		info, err := e.Info()
		require.NoError(t, err)
		assert.Positive(t, info.Size(), e.Name())
	}
}

func TestMainFlags(t *testing.T) {
	var out, errb bytes.Buffer
	assert.Equal(t, 2, Main([]string{"-grid", "nope"}, &out, &errb))
	assert.Equal(t, 2, Main([]string{"-device", "tpu"}, &out, &errb))
	assert.Equal(t, 2, Main([]string{"-algorithms", "magic"}, &out, &errb))
	assert.Equal(t, 2, Main([]string{"-peers", "mkl"}, &out, &errb))
	assert.Equal(t, 0, Main([]string{"-h"}, &out, &errb))
	out.Reset()
	assert.Equal(t, 0, Main([]string{"-list", "-grid", "paper", "-precision", "f64"}, &out, &errb))
	assert.Equal(t, 13*3, strings.Count(out.String(), "\n"))
	if !gpuBuiltIn {
		errb.Reset()
		assert.Equal(t, 1, Main([]string{"-device", "cuda", "-grid", "quick"}, &out, &errb))
		assert.Contains(t, errb.String(), "GPU not built in")
	}
}

// TestMainHelp checks the help text: -algorithms lists every algorithm it
// accepts, -anchors names the anchor files kept in the repository, and the
// text speaks of no dates.
func TestMainHelp(t *testing.T) {
	var out, errb bytes.Buffer
	require.Equal(t, 0, Main([]string{"-h"}, &out, &errb))
	help := errb.String()
	flagText := func(name string) string {
		i := strings.Index(help, "\n  -"+name+" ")
		require.GreaterOrEqual(t, i, 0, "no -%s in the help", name)
		rest := help[i+1:]
		if j := strings.Index(rest, "\n  -"); j >= 0 {
			rest = rest[:j]
		}
		return rest
	}
	algos := flagText("algorithms")
	for _, a := range append([]tridiag.Algorithm{tridiag.Auto}, tridiag.Algorithms()...) {
		assert.Contains(t, algos, a.String())
	}
	anchors := flagText("anchors")
	for _, f := range []string{"bench/anchors/cusparse-h200.csv", "bench/anchors/banded-h200.csv"} {
		assert.Contains(t, anchors, f)
		assert.FileExists(t, filepath.Join("..", f))
	}
	assert.NotRegexp(t, `20[0-9][0-9]-[01][0-9]-[0-3][0-9]`, help)
}

func BenchmarkCPUSolve(b *testing.B) {
	for _, c := range []Case{
		{N: 256, G: 4096, Layout: Contiguous, Precision: F64},
		{N: 256, G: 4096, Layout: Interleaved, Precision: F64},
		{N: 256, G: 4096, Layout: Contiguous, Precision: F32},
		{N: 1 << 18, G: 1, Layout: Contiguous, Precision: F64},
	} {
		for _, algo := range []tridiag.Algorithm{tridiag.Auto, tridiag.Thomas, tridiag.PCR, tridiag.TPR} {
			b.Run(c.String()+"/"+algo.String(), func(b *testing.B) {
				if c.Precision == F32 {
					benchCPU[float32](b, c, algo)
				} else {
					benchCPU[float64](b, c, algo)
				}
			})
		}
	}
}

func benchCPU[T tridiag.Float](b *testing.B, c Case, algo tridiag.Algorithm) {
	h, err := newHostData[T](c, Toeplitz, 1)
	require.NoError(b, err)
	p, err := tridiag.NewPlan[T](nil, c.Shape(), tridiag.Options{Algorithm: algo, SkipFiniteCheck: true})
	if err != nil {
		b.Skip(err)
	}
	defer p.Close()
	x := make([]T, c.Len())
	ctx := context.Background()
	b.SetBytes(c.BytesMoved())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := p.Solve(ctx, h.a, h.b, h.c, h.d, x); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(c.Rows())*float64(b.N)/b.Elapsed().Seconds()/1e6, "MRows/s")
}

func BenchmarkGonumDgtsv(b *testing.B) {
	c := Case{N: 256, G: 4096, Layout: Contiguous, Precision: F64}
	h, err := newHostData[float64](c, Toeplitz, 1)
	require.NoError(b, err)
	s := newGonumSolver(h)
	b.SetBytes(c.BytesMoved())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s.restore()
		b.StartTimer()
		if err := s.solve(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(c.Rows())*float64(b.N)/b.Elapsed().Seconds()/1e6, "MRows/s")
}

// TestDiffusionMatrix: the diffusion matrix's rows sum to 0 inside a system
// (weakly dominant), and on it the bench's flag tells PCR (whose backward
// error grows with N there) from the partition method and Thomas.
func TestDiffusionMatrix(t *testing.T) {
	c := Case{N: 1 << 16, G: 2, Layout: Contiguous, Precision: F32}
	h, err := newHostData[float32](c, Diffusion, 5)
	require.NoError(t, err)
	l := c.TridiagLayout()
	for _, i := range []int{1, 100, c.N - 2} {
		k := l.Index(i, 1)
		assert.InDelta(t, 0, float64(h.a[k]+h.b[k]+h.c[k]), 1e-6, "row %d", i)
		assert.Negative(t, h.a[k])
		assert.Negative(t, h.c[k])
	}
	resid := func(alg tridiag.Algorithm) float64 {
		p, err := tridiag.NewPlan[float32](nil, c.Shape(), tridiag.Options{Algorithm: alg})
		require.NoError(t, err)
		defer p.Close()
		x := make([]float32, c.Len())
		require.NoError(t, p.Solve(context.Background(), h.a, h.b, h.c, h.d, x))
		return h.backwardError(x)
	}
	assert.Less(t, resid(tridiag.Partition), residLimit(F32))
	assert.Less(t, resid(tridiag.Thomas), residLimit(F32))
	assert.Greater(t, resid(tridiag.PCR), residLimit(F32))
}

func TestSpeedups(t *testing.T) {
	c1 := Case{N: 128, G: 1, Layout: Contiguous, Precision: F32}
	c2 := Case{N: 256, G: 1, Layout: Contiguous, Precision: F32}
	c3 := Case{N: 128, G: 1, Layout: Contiguous, Precision: F64}
	rs := []Result{
		{Case: c1, Solver: "gpu:auto", MRows: 400, Median: time.Microsecond},
		{Case: c1, Solver: "gpu:tpr", MRows: 800, Median: time.Microsecond}, // same family: not a peer
		{Case: c1, Solver: "cusparse:gtsv2StridedBatch", MRows: 100, Median: time.Microsecond},
		{Case: c1, Solver: "cpu:auto", MRows: 1, Median: time.Microsecond}, // another side
		{Case: c2, Solver: "gpu:auto", MRows: 50, Median: time.Microsecond},
		{Case: c2, Solver: "cusparse:gtsv2StridedBatch", MRows: 200, Median: time.Microsecond},
		{Case: c3, Solver: "gpu:auto", MRows: 30, Median: time.Microsecond},
		{Case: c3, Solver: "cusparse:gtsv2StridedBatch", MRows: 10, Median: time.Microsecond},
		{Case: c3, Solver: "cusparse:gtsv2", Err: "failed"}, // not run
	}
	var buf bytes.Buffer
	require.NoError(t, WriteSpeedups(&buf, rs, "gpu:auto"))
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	require.Len(t, lines, 2, buf.String())
	// f32: 4× and 0.25×, geometric mean 1; f64: 3×.
	assert.Equal(t, "# gpu:auto over cusparse:gtsv2StridedBatch, f32: geometric-mean speed-up 1.00× (2 cases, 1 slower)", lines[0])
	assert.Equal(t, "# gpu:auto over cusparse:gtsv2StridedBatch, f64: geometric-mean speed-up 3.00× (1 cases, 0 slower)", lines[1])

	buf.Reset()
	require.NoError(t, WriteSpeedups(&buf, rs, "gpu:pcr"))
	assert.Empty(t, buf.String())
}

// TestDominantMatrixLeavesOutSPD: the dominant matrix is not symmetric,
// so -algorithms all leaves out ldlt (which would solve another matrix)
// there, and keeps it for the symmetric toeplitz and diffusion matrices.
func TestDominantMatrixLeavesOutSPD(t *testing.T) {
	for _, m := range Matrices() {
		cfg, err := parseFlags([]string{"-matrix", m, "-algorithms", "all", "-cpu-algorithms", "auto,ldlt"}, io.Discard)
		require.NoError(t, err, m)
		want := m != Dominant
		assert.Equal(t, want, slices.Contains(cfg.algos, tridiag.LDLT), m)
		assert.Equal(t, want, slices.Contains(cfg.cpuAlgos, tridiag.LDLT), m)
		assert.Contains(t, cfg.algos, tridiag.Thomas, m)
	}
}
