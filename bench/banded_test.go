package bench

import (
	"bytes"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/banded"
)

func TestBandGridBanded(t *testing.T) {
	cs := BandGrid(GridBanded, nil, BandSweep{})
	// FP64: 3 N × 6 K × 4 d; FP32 only for the direct d = 1, 1.2.
	require.Len(t, cs, 3*6*4+3*6*2)
	seen := map[BandCase]bool{}
	prevN := 0
	for _, c := range cs {
		assert.False(t, seen[c], "duplicate %v", c)
		seen[c] = true
		assert.Equal(t, 1, c.G)
		assert.False(t, c.Batch())
		assert.GreaterOrEqual(t, c.N, prevN, "cases ordered by N")
		prevN = c.N
		if c.Precision == F32 {
			assert.GreaterOrEqual(t, c.D, Direct, "FP32 only for the direct solve: %v", c)
		}
		assert.Equal(t, c.D < 1, c.Iterative(), "%v", c)
	}
	assert.True(t, seen[BandCase{N: 1e6, K: 100, G: 1, D: 1, Precision: F64}])
	assert.True(t, seen[BandCase{N: 1e6, K: 100, G: 1, D: 1, Precision: F32}])
	assert.True(t, seen[BandCase{N: 1e4, K: 500, G: 1, D: 0.2, Precision: F64}])
	assert.False(t, seen[BandCase{N: 1e4, K: 500, G: 1, D: 0.2, Precision: F32}])

	only64 := BandGrid(GridBanded, map[string]bool{F64: true}, BandSweep{N: []int{1000}, K: []int{3, 4}, D: []float64{0.5}})
	assert.Equal(t, []BandCase{{N: 1000, K: 3, G: 1, D: 0.5, Precision: F64}, {N: 1000, K: 4, G: 1, D: 0.5, Precision: F64}}, only64)
	assert.Nil(t, BandGrid("paper", nil, BandSweep{}))
	assert.Nil(t, BandGrid("banded,nope", nil, BandSweep{}))
}

func TestBandGridPentadiag(t *testing.T) {
	cs := BandGrid(GridPentadiag, nil, BandSweep{N: []int{7}})
	require.Len(t, cs, 6)
	for _, c := range cs {
		assert.True(t, c.Batch())
		assert.Equal(t, 2, c.K)
		assert.Equal(t, int64(1<<24), c.Rows(), "the anchors' cases hold 2^24 rows")
		assert.Equal(t, 7*c.Rows()*c.ElemSize(), c.BytesMoved())
	}
	assert.Equal(t, "f32 N=256 K=2 G=65536", cs[0].String())
	assert.Len(t, BandGrid(GridPentadiag, map[string]bool{F64: true}, BandSweep{}), 3)
}

func TestIsBandGrid(t *testing.T) {
	assert.True(t, isBandGrid("banded"))
	assert.True(t, isBandGrid("banded, pentadiag"))
	assert.False(t, isBandGrid("paper"))
	assert.False(t, isBandGrid("banded,paper"))
}

func TestParseIntsFloats(t *testing.T) {
	v, err := parseInts("1e4, 10^6,500")
	require.NoError(t, err)
	assert.Equal(t, []int{10000, 1000000, 500}, v)
	for _, bad := range []string{"abc", "0", "1.5", "2^3", "-4"} {
		_, err := parseInts(bad)
		assert.Error(t, err, bad)
	}
	f, err := parseFloats("0.2,1,1.2")
	require.NoError(t, err)
	assert.Equal(t, []float64{0.2, 1, 1.2}, f)
	_, err = parseFloats("-1")
	assert.Error(t, err)
	v, err = parseInts("")
	require.NoError(t, err)
	assert.Empty(t, v)
}

func TestRandomBand(t *testing.T) {
	for _, d := range []float64{0.2, 1, 1.2} {
		a := randomBand(40000, 7, d, 3)
		assert.InDelta(t, d, banded.DiagonalDominance(a), 1e-12*d)
		b := randomBand(40000, 7, d, 3)
		assert.Equal(t, a.Data, b.Data, "same seed, same matrix")
		c := randomBand(40000, 7, d, 4)
		assert.NotEqual(t, a.Data, c.Data)
		// Entries outside the matrix stay zero.
		assert.Zero(t, a.Data[0], "a_{-7,0} is outside")
	}
}

func TestBandResidualAndCSR(t *testing.T) {
	a := randomBand(3000, 5, 0.6, 1)
	b := randomVec(3000, 2)
	f, err := banded.FactorPivot(a)
	require.NoError(t, err)
	x := append([]float64(nil), b...)
	f.Solve(x)
	assert.Less(t, bandResidual(a, b, x), 1e-13)
	assert.InDelta(t, 1, bandResidual(a, b, make([]float64, len(b))), 1e-15, "x = 0 leaves all of b")
	x[17] += 1
	assert.Greater(t, bandResidual(a, b, x), 1e-4)
	x[17] = math.NaN()
	assert.True(t, math.IsNaN(bandResidual(a, b, x)))

	rowPtr, col, val := bandCSR(a)
	require.Len(t, rowPtr, 3001)
	assert.Equal(t, int32(len(val)), rowPtr[3000])
	y := randomVec(3000, 9)
	want := make([]float64, 3000)
	a.MulVec(y, want)
	for i := 0; i < 3000; i++ {
		var s float64
		for p := rowPtr[i]; p < rowPtr[i+1]; p++ {
			if p > rowPtr[i] {
				require.Greater(t, col[p], col[p-1], "columns ascending")
			}
			s += val[p] * y[col[p]]
		}
		require.InDelta(t, want[i], s, 1e-12, "row %d", i)
	}
}

func TestPentaBatch(t *testing.T) {
	const n, g = 30, 3
	band, diags, rhs := pentaBatch(n, g, 5)
	// System q from the interleaved storage, solved on its own.
	x := make([]float64, n*g)
	for q := 0; q < g; q++ {
		m, err := banded.New[float64](n, 2)
		require.NoError(t, err)
		for i := range m.Data {
			m.Data[i] = band[i*g+q]
		}
		for i := 0; i < n; i++ {
			for o := -2; o <= 2; o++ {
				if j := i + o; j >= 0 && j < n {
					assert.Equal(t, diags[o+2][i*g+q], m.At(i, j), "diagonal %d row %d", o, i)
				}
			}
		}
		assert.Equal(t, 10.0, m.At(4, 4))
		assert.Equal(t, -4.0, m.At(4, 5))
		assert.Equal(t, 1.0, m.At(4, 2))
		f, err := banded.FactorPivot(m)
		require.NoError(t, err)
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = rhs[i*g+q]
		}
		f.Solve(xs)
		for i := range xs {
			x[i*g+q] = xs[i]
		}
	}
	assert.Less(t, pentaResidual(n, g, rhs, x), 1e-14)
	assert.InDelta(t, 1, pentaResidual(n, g, rhs, make([]float64, n*g)), 1e-15)
}

func TestSetSpeedups(t *testing.T) {
	c64 := BandCase{N: 1e6, K: 100, G: 1, D: 1, Precision: F64}
	c32 := c64
	c32.Precision = F32
	other := BandCase{N: 1e6, K: 200, G: 1, D: 1, Precision: F64}
	batch := BandCase{N: 256, K: 2, G: 65536, D: 1, Precision: F32}
	rs := []BandResult{
		{BandCase: c64, Solver: "gpu:spike", Total: 30 * time.Millisecond},
		{BandCase: c64, Solver: "cpu:gbsv", Total: 3 * time.Second},
		{BandCase: c64, Solver: "anchor:gbsv", Total: 1500 * time.Millisecond},
		{BandCase: c32, Solver: "gpu:spike", Total: 20 * time.Millisecond},
		{BandCase: other, Solver: "gpu:spike", Err: "K > limit (167 in FP64)"},
		{BandCase: other, Solver: "cpu:spike", Total: time.Second},
		{BandCase: other, Solver: "cpu:gbsv", Err: "skipped: estimated", Est: 12 * time.Second},
		{BandCase: batch, Solver: "gpu:bandbatch", Total: 100 * time.Microsecond},
		{BandCase: batch, Solver: "cusparse:gpsvInterleavedBatch", Total: 300 * time.Microsecond},
	}
	setSpeedups(rs)
	assert.InDelta(t, 100, rs[0].Speedup, 1e-9)
	assert.False(t, rs[0].SpeedupEst)
	assert.InDelta(t, 50, rs[0].VsAnchor, 1e-9)
	assert.Zero(t, rs[1].Speedup, "the reference has none")
	assert.Zero(t, rs[2].Speedup, "anchors have none")
	assert.InDelta(t, 150, rs[3].Speedup, 1e-9, "FP32 against the FP64 host LU")
	assert.InDelta(t, 75, rs[3].VsAnchor, 1e-9)
	assert.Zero(t, rs[4].Speedup, "no timing, no speed-up")
	assert.InDelta(t, 12, rs[5].Speedup, 1e-9)
	assert.True(t, rs[5].SpeedupEst)
	assert.InDelta(t, 3, rs[7].Speedup, 1e-9)
	assert.Zero(t, rs[8].Speedup)

	var tb bytes.Buffer
	require.NoError(t, WriteBandTable(&tb, rs))
	out := tb.String()
	assert.Contains(t, out, "K > limit (167 in FP64)")
	assert.Contains(t, out, "100×")
	assert.Contains(t, out, "~12.00×")
	assert.Contains(t, out, "3.00×")
	assert.Contains(t, out, "vs gpsv")
	var sb bytes.Buffer
	require.NoError(t, WriteBandSummary(&sb, rs))
	assert.Contains(t, sb.String(), "~12.0s (est.)")
	assert.Regexp(t, `f64 N=1000000 K=100 d=1\s+gpu:spike\s+30\.0ms`, sb.String())

	var cb bytes.Buffer
	require.NoError(t, WriteBandCSV(&cb, rs, "device X"))
	assert.True(t, strings.HasPrefix(cb.String(), "# device X\n"))
	cr := csv.NewReader(&cb)
	cr.Comment = '#'
	recs, err := cr.ReadAll()
	require.NoError(t, err)
	require.Len(t, recs, len(rs)+1)
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	assert.Equal(t, "30000.000", recs[1][col["total_us"]])
	assert.Equal(t, "100", recs[1][col["speedup"]])
	assert.Equal(t, "50", recs[1][col["speedup_vs_anchor"]])
	assert.Equal(t, "true", recs[6][col["speedup_estimated"]])
	assert.Equal(t, "12000000.000", recs[7][col["estimate_us"]])
	assert.Equal(t, "K > limit (167 in FP64)", recs[5][col["err"]])
	assert.Equal(t, "65536", recs[8][col["G"]])
}

func TestReadBandAnchors(t *testing.T) {
	in := `# comment
api,prec,N,G_or_K,time,MRows_per_s
gpsvInterleavedBatch,f32,256,G=65536,438.7us,38244
scipy.solve_banded(gbsv),f64,1000000,K=100,3.7149s,0.27
`
	rs, note, err := readBandAnchors(strings.NewReader(in))
	require.NoError(t, err)
	assert.Contains(t, note, "2")
	require.Len(t, rs, 2)
	assert.Equal(t, BandCase{N: 256, K: 2, G: 65536, D: 1, Precision: F32}, rs[0].BandCase)
	assert.Equal(t, 438700*time.Nanosecond, rs[0].Total)
	assert.Equal(t, "anchor:scipy.solve_banded(gbsv)", rs[1].Solver)
	assert.Equal(t, BandCase{N: 1e6, K: 100, G: 1, D: 1, Precision: F64}, rs[1].BandCase)
	single := BandCase{N: 1e6, K: 100, G: 1, D: 1, Precision: F64}
	assert.Len(t, anchorsFor(rs, single), 1)
	single.Precision = F32
	assert.Empty(t, anchorsFor(rs, single), "anchors go with the FP64 case only")
	single.D = 0.6
	single.Precision = F64
	assert.Empty(t, anchorsFor(rs, single))
	assert.Len(t, anchorsFor(rs, rs[0].BandCase), 1)

	_, _, err = readBandAnchors(strings.NewReader("api,prec,N,G,us,MRows_per_s\n"))
	assert.Error(t, err)
	_, _, err = readBandAnchors(strings.NewReader("api,prec,N,G_or_K,time\nx,f64,10,Q=3,1s\n"))
	assert.Error(t, err)
}

// TestBandAnchorsFile reads the banded anchors kept in the repository:
// every record is read, its time agrees with its MRows_per_s column, and
// the comment lines say where the numbers come from.
func TestBandAnchorsFile(t *testing.T) {
	const path = "anchors/banded-h200.csv"
	rs, note, err := ReadBandAnchors(path)
	require.NoError(t, err)
	assert.Equal(t, "10 banded anchors", note)
	require.Len(t, rs, 10)
	recs := anchorRecords(t, path)
	require.Len(t, recs, len(rs))
	for i, r := range rs {
		want, err := strconv.ParseFloat(recs[i][5], 64)
		require.NoError(t, err)
		assert.InDelta(t, want, r.MRows, max(0.006, want/100), "record %d (%s)", i+1, r.Solver)
	}
	assert.Equal(t, "anchor:scipy.solve_banded(gbsv)", rs[9].Solver)
	assert.Equal(t, BandCase{N: 1e6, K: 100, G: 1, D: 1, Precision: F64}, rs[9].BandCase)
	assert.Equal(t, BandCase{N: 256, K: 2, G: 65536, D: 1, Precision: F32}, rs[0].BandCase)
	prov := anchorComments(t, path)
	for _, want := range []string{"H200", "gpsvInterleavedBatch", "SciPy 1.18.1", "LAPACK gbsv", "median of 10", "bandsolve bench"} {
		assert.Contains(t, prov, want)
	}
}

// anchorRecords returns the records of an anchors file, its comment lines
// and header left out.
func anchorRecords(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	cr := csv.NewReader(f)
	cr.Comment = '#'
	recs, err := cr.ReadAll()
	require.NoError(t, err)
	require.NotEmpty(t, recs)
	return recs[1:]
}

// anchorComments returns the comment lines of an anchors file.
func anchorComments(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var b strings.Builder
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

func TestCostModel(t *testing.T) {
	var m costModel
	assert.Zero(t, m.est(1000, 10))
	m.observe(1000, 9, time.Second)
	assert.Equal(t, time.Second, m.est(1000, 9))
	assert.Equal(t, 40*time.Second, m.est(10000, 19))
	m.observe(10, 1, time.Hour) // smaller case: ignored
	assert.Equal(t, time.Second, m.est(1000, 9))
	br := bandRun{reps: 10, budget: time.Second}
	assert.Equal(t, 10, br.repsFor(time.Millisecond))
	assert.Equal(t, 4, br.repsFor(250*time.Millisecond))
	assert.Equal(t, 1, br.repsFor(time.Minute))
}

// TestBandedMainCPU runs a tiny banded grid through Main on the CPU: host
// solvers only, accurate solutions, CSV and the plot written.
func TestBandedMainCPU(t *testing.T) {
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "b.csv")
	var out, errb bytes.Buffer
	code := Main([]string{"-device", "cpu", "-grid", "banded", "-band-n", "3000", "-band-k", "2,12",
		"-band-d", "0.6,1", "-precision", "f64", "-reps", "2", "-warmup", "1", "-csv", csvPath, "-plots", dir, "-q"}, &out, &errb)
	require.Equal(t, 0, code, "stderr: %s", errb.String())
	s := out.String()
	assert.Contains(t, s, "GPU solvers not run")
	assert.Contains(t, s, "cpu:gbsv")
	assert.Contains(t, s, "cpu:spike")
	assert.Contains(t, s, "cpu:bicgstab2+spike32")
	assert.Empty(t, errb.String(), "-q prints no progress")
	f, err := os.Open(csvPath)
	require.NoError(t, err)
	defer f.Close()
	cr := csv.NewReader(f)
	cr.Comment = '#'
	recs, err := cr.ReadAll()
	require.NoError(t, err)
	require.Len(t, recs, 1+2*2*2, "two host solvers for each of 4 cases")
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for _, r := range recs[1:] {
		assert.Empty(t, r[col["err"]], "%v", r)
		res, err := strconv.ParseFloat(r[col["resid"]], 64)
		require.NoError(t, err)
		assert.Less(t, res, 1e-9, "%v", r)
		if strings.Contains(r[col["solver"]], "bicgstab") {
			it, err := strconv.Atoi(r[col["iterations"]])
			require.NoError(t, err)
			assert.Positive(t, it)
		}
	}
	_, err = os.Stat(filepath.Join(dir, "banded-d1.png"))
	assert.NoError(t, err)
}

// TestBandedHostCap: a cap below any estimate skips the host solvers with
// the reason and the estimate, and nothing else runs on the CPU device.
func TestBandedHostCap(t *testing.T) {
	var out, errb bytes.Buffer
	code := Main([]string{"-device", "cpu", "-grid", "banded", "-band-n", "2000", "-band-k", "3",
		"-band-d", "1", "-precision", "f64", "-host-cap", "1ns", "-q"}, &out, &errb)
	require.Equal(t, 0, code, "stderr: %s", errb.String())
	assert.Contains(t, out.String(), "skipped: estimated")
	assert.Contains(t, out.String(), "-host-cap 1ns")
}

func TestBandedFlags(t *testing.T) {
	var out, errb bytes.Buffer
	assert.Equal(t, 2, Main([]string{"-grid", "banded", "-band-n", "x"}, &out, &errb))
	assert.Contains(t, errb.String(), "-band-n")
	errb.Reset()
	assert.Equal(t, 2, Main([]string{"-grid", "bandedx"}, &out, &errb))
	assert.Contains(t, errb.String(), "pentadiag")
	out.Reset()
	assert.Equal(t, 0, Main([]string{"-grid", "banded", "-list"}, &out, &errb))
	assert.Equal(t, 108, strings.Count(out.String(), "\n"))
	assert.Contains(t, out.String(), "f64 N=1000000 K=500 d=0.2")
	if !gpuBuiltIn {
		errb.Reset()
		assert.Equal(t, 1, Main([]string{"-grid", "pentadiag", "-device", "cuda"}, &out, &errb))
		assert.Contains(t, errb.String(), "-tags cuda")
	}
}

func TestIterPartitions(t *testing.T) {
	assert.Equal(t, 488, iterPartitions(1e6, 2))
	assert.Equal(t, 312, iterPartitions(1e6, 200))
	assert.Equal(t, 1, iterPartitions(1000, 2))
	assert.Equal(t, 48, iterPartitions(1e5, 10))
}
